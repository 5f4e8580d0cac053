//! Execution governance: everything between "the model chose a tool" and
//! "the result goes back into the conversation" that a production agent needs.
//!
//! Each behaviour sits behind a `#[tool]` option or a context setting, and a
//! call that uses none of them pays only a few branch checks:
//! - [`url_pattern`]: `url_patterns` scoping;
//! - [`secrets`]: `<secret>key</secret>` substitution and masking, TOTP;
//! - [`approval`]: `requires_confirmation` / `editable_params`: the request, the decision, policies;
//! - [`confirm`]: the approval gate every caller asks through;
//! - [`ask`]: the [`Asker`](ask::Asker) hook, questions for a person with a timeout and default;
//! - [`breaker`]: the refusal circuit breaker (after N refusals in a trace, a person decides);
//! - [`asking`]: the gate every question goes through (timeout, default, cancellation);
//! - [`network`]: which hosts network traffic may reach (sandbox proxy, web tools);
//! - [`secret_env`]: which environment variables look like secrets and are kept from children;
//! - [`sandbox`]: what a sandboxed command may touch (files, limits, network);
//! - [`stats`]: statistics and lifecycle events.

pub mod approval;
pub mod ask;
pub mod asking;
pub mod breaker;
pub mod confirm;
pub mod network;
pub mod sandbox;
pub mod secret_env;
pub mod secrets;
pub mod stats;
pub mod url_pattern;
