//! Integration tests of tool-core and the `#[tool]` macro, as one test binary.

#[path = "integration/containment.rs"]
mod containment;
#[path = "integration/errors.rs"]
mod errors;
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
