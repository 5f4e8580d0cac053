//! Integration tests of tool-core and the `#[tool]` macro, as one test binary.
#![allow(
    clippy::unwrap_used,
    reason = "a failed unwrap is a failed test, with its location"
)]

#[path = "integration/containment.rs"]
mod containment;
#[path = "integration/errors.rs"]
mod errors;
#[path = "integration/flatten.rs"]
mod flatten;
#[path = "integration/governance.rs"]
mod governance;
#[path = "integration/hidden.rs"]
mod hidden;
#[path = "integration/injection.rs"]
mod injection;
#[path = "integration/registry.rs"]
mod registry;
#[path = "integration/runtime_api.rs"]
mod runtime_api;
#[path = "integration/schema.rs"]
mod schema;
