//! Durable agent runs on Restate (stub docs; replaced below).

mod agent;
mod types;

pub use agent::{DEFAULT_MAX_TURNS, DurableAgent, MODEL_ATTEMPTS};
/// The Restate SDK this crate is built on (pinned), for binding the
/// workflow to an endpoint: `restate_sdk::prelude::{Endpoint, HttpServer}`.
pub use restate_sdk;
pub use types::{
    Approval, OutcomeDecision, Pending, PendingKind, Reply, RunRequest, RunStop, RunSummary,
    Settlement, StepClass, StepEvent,
};
