//! Durable agent runs on [Restate](https://restate.dev): the agent loop as a
//! Restate workflow in which every model call and every tool call is a
//! journaled step, so a worker killed mid-run is replaced by another that
//! resumes from the journal without repeating completed steps.
//!
//! ```no_run
//! use serde_json::{Map, Value, json};
//! use tool_agent::OpenAiChatClient;
//! use tool_core::{Tool, ToolKind, ToolRegistry, ToolResult, ToolSpec};
//! use tool_durable::DurableAgent;
//! use tool_durable::restate_sdk::prelude::{Endpoint, HttpServer};
//!
//! # #[tokio::main] async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let mut tools = ToolRegistry::new();
//! // A read-only tool: its step may be run again after a crash.
//! let spec = ToolSpec::new("clock", "The time.", json!({"type": "object", "properties": {}}))
//!     .with_kind(ToolKind::Read);
//! tools.register(Tool::new(spec, |_: Map<String, Value>, _| async { ToolResult::ok("12:00") })?)?;
//!
//! let model = OpenAiChatClient::new("qwen3").base_url("http://127.0.0.1:8000/v1");
//! let agent = DurableAgent::new(model, tools).system("You tell the time.");
//! // Serve the workflow; register http://127.0.0.1:9080 with the Restate server
//! // (`scripts/durable register URL`), then start a run through its ingress
//! // (the ingress wants JSON bodies marked as such):
//! //   curl -X POST $INGRESS/DurableAgent/run-1/run/send \
//! //       -H 'content-type: application/json' -d '{"task": "What time is it?"}'
//! //   curl $INGRESS/restate/workflow/DurableAgent/run-1/attach      # the RunSummary
//! HttpServer::new(Endpoint::builder().bind(agent).build())
//!     .listen_and_serve("127.0.0.1:9080".parse()?)
//!     .await;
//! # Ok(()) }
//! ```
//!
//! # Steps and what a crash does to each
//! A run (workflow id = run key = trace id of its tool calls) journals:
//! - `model t{turn}`: the model's answer (text, calls, usage). A request in
//!   flight when the worker died is sent again; a journaled answer never is,
//!   so the model sees each tool result once. Failed requests are retried
//!   ([`MODEL_ATTEMPTS`] in all) before the run fails.
//! - Each call, by its tool's [`StepClass`]
//!   ([`DurableAgent::classify`]):
//!   - idempotent (kind `read`, or flagged read-only; unknown tools): one
//!     step `tool t{turn}.{n}`, run again if its outcome was not journaled;
//!   - effect (`write`, `exec`, `network`, `other`): step `begin …` (the
//!     intent), then `tool …` (the effect and its result). A replay that
//!     finds the intent without an outcome does **not** run the tool: it
//!     journals "unknown", lists the call under the run's `pending` handler
//!     ([`PendingKind::UnknownOutcome`]) and waits on a durable promise until a
//!     person `settle`s it: [`OutcomeDecision::Rerun`] (through the same
//!     protocol again) or [`OutcomeDecision::Skip`] with the result the model
//!     reads. Each attempt has its own promise (`outcome:t3.1`, then
//!     `outcome:t3.1#2`, …) and is listed with its [`Pending::attempt`]: a
//!     rerun whose outcome is unknown too is asked about again, never run
//!     again on the strength of the earlier decision;
//!   - question (kind `ask`, or tagged `person`, e.g. `ask_user`): no code
//!     runs; a durable promise the person resolves with `answer`.
//! - Approvals: a call of a tool marked `requires_confirmation`, or of a
//!   kind the [`context`](DurableAgent::context) confirms, waits on a
//!   promise resolved with `approve` ([`Approval`], tool-core's
//!   `ApprovalDecision`: approve, deny with a reason, approve with edits of
//!   the editable parameters); the tool then runs through tool-core's own
//!   approval gate with that journaled decision.
//!
//! Promises wait as long as it takes (the invocation is suspended, no
//! worker is held); there is no timeout or default answer as in
//! tool-core's in-process asker. The handlers that resolve them refuse a
//! key the run never asked (404), and a prompt already resolved by another
//! request, concurrent ones included (409, "already …"): of two people
//! answering at once, one is taken and the other is told so. A settlement
//! naming an attempt already settled is refused (409) too.
//!
//! # Limits
//! - Calls of one answer run one after another.
//! - A run's step sequence must not change while it is in flight: changing
//!   a tool's kind, its confirmation, or the registry between a crash and
//!   the resume makes the replay diverge, and Restate stops the run with a
//!   journal mismatch. Deploy such changes as a new deployment: the new
//!   worker at a new address, registered there (`scripts/durable register
//!   NEW_URL`), the old worker kept up until its runs end (Restate keeps
//!   in-flight runs on the deployment they started on). Replacing the
//!   deployment at the same address (`--force`) sends those runs to the
//!   new code.
//! - "Unknown" means the intent was journaled and the outcome was not: a
//!   worker that lost its connection to the server after the intent but
//!   before running the tool also lands there (the person checks and
//!   reruns).
//! - Workers must be reachable at the address registered with the server
//!   (several behind one address, or a load balancer); Restate retries a
//!   run whose worker died against the same deployment.
//! - Deferred tools (`tool_search`) are not loaded per run: the tool list
//!   is the registry's, rendered once per run.
//!
//! # Why restate-sdk
//! The issue asks for an existing durable-execution engine rather than our
//! own journal. Restate runs as one self-contained server (npm package
//! `@restatedev/restate-server`, no database or JVM beside it, as
//! Temporal needs) and its official Rust SDK is maintained by the server's
//! authors; workflows, durable promises and shared handlers map one-to-one
//! onto runs, person prompts and their resolution through the HTTP ingress.
//! Pinned to `=0.13.0` (default features off, `http_server` only): the SDK
//! is pre-1.0 and its API changed in 0.13 (impl-block macros), and 0.13 is
//! what the test ran against Restate server 1.7.12. The crate is optional:
//! no default crate of the workspace depends on it, so the embedded default
//! stays free of it (its build adds hyper's server side, the SDK's shared
//! core and its schema macros).
//!
//! `tests/restate.sh` is the end-to-end test: a real server, a scripted
//! model, a worker killed (`SIGKILL`) after call 3, one inside a non-idempotent
//! call, and one inside the rerun a person decided; `examples/worker.rs` is
//! its worker (any OpenAI-compatible model: `--model`, `--model-url`,
//! `OPENAI_API_KEY`).

mod agent;
mod types;

pub use agent::{DEFAULT_MAX_TURNS, DurableAgent, MODEL_ATTEMPTS};
/// The Restate SDK this crate is built on (pinned `=0.13.0`), for binding
/// the workflow to an endpoint: `restate_sdk::prelude::{Endpoint, HttpServer}`.
pub use restate_sdk;
pub use types::{
    Approval, OutcomeDecision, Pending, PendingKind, Reply, RunRequest, RunStop, RunSummary,
    Settlement, StepClass, StepEvent,
};
