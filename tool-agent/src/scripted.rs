//! A model that plays back prepared answers: the unit tests' and the
//! benchmark's client.

use std::collections::VecDeque;
use std::sync::{Mutex, PoisonError};

use tool_core::Format;
use tool_core::format::ToolCall;

use crate::client::{EventStream, ModelClient, SendFuture};
use crate::error::ModelError;
use crate::message::{Message, ModelRequest, StreamEvent, ToolChoice};

/// One prepared answer: its events, or the error the request fails with.
#[derive(Debug, Clone)]
pub enum ScriptedTurn {
    /// These events, streamed in order (a `Finished` is added when missing).
    Events(Vec<StreamEvent>),
    /// The request fails with this error.
    Fail(ModelError),
}

impl ScriptedTurn {
    /// An answer with text only.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Events(vec![StreamEvent::TextDelta(text.into())])
    }

    /// An answer with these calls only.
    pub fn calls(calls: impl IntoIterator<Item = ToolCall>) -> Self {
        Self::Events(calls.into_iter().map(StreamEvent::ToolCall).collect())
    }
}

/// What the scripted client saw of one request.
#[derive(Debug, Clone, PartialEq)]
pub struct SeenRequest {
    /// The turn number.
    pub turn: u64,
    /// The system prompt.
    pub system: Option<String>,
    /// The number of messages.
    pub messages: usize,
    /// The last message.
    pub last: Option<Message>,
    /// The number of tools offered.
    pub tools: usize,
    /// The tool names offered (Json format: `name` of each).
    pub tool_names: Vec<String>,
    /// The tool choice.
    pub tool_choice: ToolChoice,
}

/// Plays back [`ScriptedTurn`]s, one per request, and records each request;
/// when the script is used up, answers `"(script ended)"`. Renders tools as
/// [`Format::Json`]. Recording can be turned off for benchmarks.
#[derive(Debug)]
pub struct ScriptedClient {
    turns: Mutex<VecDeque<ScriptedTurn>>,
    seen: Mutex<Vec<SeenRequest>>,
    record: bool,
}

impl ScriptedClient {
    /// A client playing `turns` in order.
    pub fn new(turns: impl IntoIterator<Item = ScriptedTurn>) -> Self {
        Self {
            turns: Mutex::new(turns.into_iter().collect()),
            seen: Mutex::new(Vec::new()),
            record: true,
        }
    }

    /// Stops recording requests ([`seen`](Self::seen) stays empty).
    pub fn without_recording(mut self) -> Self {
        self.record = false;
        self
    }

    /// The requests seen so far.
    pub fn seen(&self) -> Vec<SeenRequest> {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

impl ModelClient for ScriptedClient {
    fn format(&self) -> Format {
        Format::Json
    }

    fn model(&self) -> &str {
        "scripted"
    }

    fn send<'a>(&'a self, request: ModelRequest<'a>) -> SendFuture<'a> {
        if self.record {
            let tool_names = request
                .tools
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t.get("name").and_then(|n| n.as_str()).map(str::to_owned))
                .collect::<Vec<_>>();
            self.seen
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(SeenRequest {
                    turn: request.turn,
                    system: request.system.map(str::to_owned),
                    messages: request.messages.len(),
                    last: request.messages.last().cloned(),
                    tools: tool_names.len(),
                    tool_names,
                    tool_choice: request.tool_choice.clone(),
                });
        }
        let next = self
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop_front()
            .unwrap_or_else(|| ScriptedTurn::text("(script ended)"));
        Box::pin(async move {
            match next {
                ScriptedTurn::Fail(e) => Err(e),
                ScriptedTurn::Events(mut events) => {
                    if !matches!(events.last(), Some(StreamEvent::Finished { .. })) {
                        events.push(StreamEvent::Finished { stop_reason: None });
                    }
                    let stream: EventStream<'a> =
                        Box::pin(futures_util::stream::iter(events.into_iter().map(Ok)));
                    Ok(stream)
                }
            }
        })
    }
}
