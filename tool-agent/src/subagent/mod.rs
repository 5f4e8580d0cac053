//! Sub-agents: the `agent` and `evaluate` tools.
