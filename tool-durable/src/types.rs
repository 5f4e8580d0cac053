//! The JSON shapes a durable run takes, answers and shows a person (through
//! Restate's HTTP ingress), and the step events a worker observes.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_agent::{Message, Usage};
use tool_core::ApprovalDecision;

/// The input of a run (`POST /DurableAgent/{run id}/run`): the task, as the
/// first user message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunRequest {
    /// The task.
    pub task: String,
}

impl RunRequest {
    /// A run of `task`.
    pub fn new(task: impl Into<String>) -> Self {
        Self { task: task.into() }
    }
}

/// Why a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RunStop {
    /// The model answered without tool calls.
    Answered,
    /// The turn limit was reached while the model still called tools.
    MaxTurns,
}

/// What a run produced (the `run` handler's answer).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunSummary {
    /// The last text the model wrote.
    pub text: String,
    /// Model requests made (journaled; replays do not count again).
    pub turns: u64,
    /// Tool calls answered.
    pub tool_calls: usize,
    /// `tool: message` of each call whose result is an error.
    pub tool_errors: Vec<String>,
    /// Tokens the provider reported over the run.
    pub usage: Usage,
    /// Why the run ended.
    pub stop: RunStop,
    /// The whole conversation, the task first.
    pub messages: Vec<Message>,
}

/// What a pending prompt asks of a person.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum PendingKind {
    /// May this call run? Resolve with the `approve` handler.
    Approval,
    /// The model asks the person (`ask_user` and any tool of kind `ask` or
    /// tagged `person`). Resolve with the `answer` handler.
    Question {
        /// The question.
        question: String,
        /// Answers to pick from (empty: free answer).
        choices: Vec<String>,
    },
    /// A non-idempotent call began on a worker that died before its
    /// outcome was journaled: it may or may not have taken effect. Resolve
    /// with the `settle` handler.
    UnknownOutcome,
}

/// A prompt a run waits on (the `pending` handler lists them).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Pending {
    /// The step key the resolution names: `t{turn}.{n}` (the n-th call,
    /// from 1, of the model's answer on `turn`).
    pub key: String,
    /// The model's call id.
    pub call_id: String,
    /// The tool.
    pub tool: String,
    /// The call's arguments as the model sent them (a JSON object, or the
    /// raw text when they did not parse).
    pub arguments: Value,
    /// Which run of the call this is about, from 1: for an unknown outcome,
    /// the attempt whose outcome is unknown (the model's call is attempt 1,
    /// each `rerun` a person decides the next one, and each is asked about
    /// on its own); 1 for approvals and questions.
    pub attempt: u32,
    /// What is asked.
    #[serde(flatten)]
    pub kind: PendingKind,
}

/// The `approve` handler's input: `{"key": "t2.1", "decision": "Approve"}`,
/// `{"key": …, "decision": {"Deny": "reason"}}` or
/// `{"key": …, "decision": {"ApproveWithEdits": {…}}}` (only the tool's
/// editable parameters may change).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Approval {
    /// The pending prompt's key.
    pub key: String,
    /// The decision.
    pub decision: ApprovalDecision,
}

/// The `answer` handler's input: `{"key": "t3.1", "answer": "PostgreSQL"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reply {
    /// The pending prompt's key.
    pub key: String,
    /// The person's answer, given to the model as the call's result.
    pub answer: String,
}

/// What a person decides about a call whose outcome is unknown.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "decision", rename_all = "snake_case")]
#[non_exhaustive]
pub enum OutcomeDecision {
    /// Run the call again (the person checked it had no effect, or a
    /// repeat is harmless).
    Rerun,
    /// Do not run it; give the model `result` as its result (e.g. what
    /// the person found it did).
    Skip {
        /// The result text the model reads.
        result: String,
        /// Whether the model reads it as an error.
        #[serde(default)]
        is_error: bool,
    },
}

/// The `settle` handler's input:
/// `{"key": "t3.1", "attempt": 1, "decision": "rerun"}` or
/// `{"key": "t3.1", "attempt": 1, "decision": "skip", "result": "appended", "is_error": false}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Settlement {
    /// The pending prompt's key.
    pub key: String,
    /// The attempt decided on, as [`Pending::attempt`] lists it. Optional
    /// (absent: the attempt pending now), but worth sending: a decision
    /// naming an attempt that was already settled is refused (409) instead
    /// of being taken for a later attempt the person has not seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// The decision.
    #[serde(flatten)]
    pub decision: OutcomeDecision,
}

/// How a call is journaled, from its tool's spec.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StepClass {
    /// Read-only (kind `read` or flagged read-only), or an unknown tool
    /// (nothing runs): one journaled step, run again if the worker died
    /// before its outcome was journaled.
    Idempotent,
    /// Any other kind (`write`, `exec`, `network`, `other`): a journaled
    /// intent, then the effect; an intent without an outcome is never
    /// run again by itself but becomes an [`PendingKind::UnknownOutcome`].
    Effect,
    /// A question for a person: a durable promise, no tool runs.
    Question,
}

/// One tool call's outcome became known (it was journaled, or replayed from
/// the journal): what [`DurableAgent::on_step`](crate::DurableAgent::on_step)
/// observers see, in call order.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StepEvent<'a> {
    /// The run's key (the workflow id).
    pub run: &'a str,
    /// The step key, `t{turn}.{n}`.
    pub key: &'a str,
    /// The call's position in the run, from 1.
    pub index: usize,
    /// The tool.
    pub tool: &'a str,
    /// How it was journaled.
    pub class: StepClass,
    /// `true` when this worker read the outcome from the journal (the
    /// call ran, or was decided, on an earlier attempt).
    pub replayed: bool,
}

/// What the `approve`, `answer` and `settle` handlers resolve a promise
/// with: the person's value and the id of the invocation that resolved it,
/// so each resolver can tell whether its value was the one taken.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Resolution {
    /// The resolving invocation's id.
    pub by: String,
    /// The person's decision or answer.
    pub value: Value,
}

/// The journaled outcome of an effect step.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Effect {
    /// The tool ran on this attempt; its result.
    Done(Box<tool_core::ToolResult>),
    /// The intent was journaled on an earlier attempt and the outcome was
    /// not: the tool was not run again.
    Unknown,
}

/// The arguments as JSON for a person to read.
pub(crate) fn arguments_json(args: &tool_core::ToolArgs) -> Value {
    match args {
        tool_core::ToolArgs::Value(v) => v.clone(),
        tool_core::ToolArgs::Text(t) => serde_json::from_str::<Map<String, Value>>(t)
            .map_or_else(|_| Value::String(t.clone()), Value::Object),
    }
}
