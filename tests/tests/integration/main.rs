//! Integration tests of tool-core and the `#[tool]` macro, as one test binary.
#![allow(
    clippy::unwrap_used,
    reason = "a failed unwrap is a failed test, with its location"
)]

mod containment;
mod errors;
mod flatten;
mod governance;
mod hidden;
mod injection;
mod registry;
mod runtime_api;
mod schema;
