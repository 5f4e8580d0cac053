//! Integration and trybuild ui tests of the workspace (test targets under `tests/tests/`).
