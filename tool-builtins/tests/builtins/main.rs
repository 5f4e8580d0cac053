//! Black-box tests of the built-in tools: real files in temporary folders,
//! the Tokio runtime, real processes; every tool called through its public
//! fn or the registry, as a host calls it. One test binary of modules
//! (ripgrep's `tests/tests.rs` layout); shared setup is in [`util`].
//! Unit tests of private functions stay next to them in `src/`.
//!
//! A new tool's tests go in a new module here, named after the tool.

#![allow(
    clippy::unwrap_used,
    reason = "a test binary: a failed unwrap is a failed test (helpers outside #[test] fns too)"
)]

mod after_write;
mod atomic;
mod bash;
mod bash_approval;
mod bash_network;
mod bash_registry;
mod bash_sandbox;
mod diagnostics;
mod edit;
mod glob;
mod glob_registry;
mod goal;
mod grep;
mod instructions;
mod ledger;
mod list;
mod multi_edit;
mod patch;
mod read;
mod read_cache;
mod read_images;
mod read_images_edges;
mod registry;
mod todo;
mod util;
mod workspace;
mod write;
