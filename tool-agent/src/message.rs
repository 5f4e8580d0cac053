//! The provider-neutral conversation an agent keeps, and the request and
//! events a [`ModelClient`](crate::ModelClient) exchanges for one turn.
//!
//! Tool calls are tool-core's [`ToolCall`]s and results its [`ToolResult`]s;
//! each client writes them in its provider's shape with
//! [`tool_core::format`] (`render_result`, the tool-list renderings), so
//! there is one set of provider types, in tool-core.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_core::format::ToolCall;
use tool_core::{ErrorKind, Rendering, ToolArgs, ToolResult, meta};

/// One message of a conversation.
///
/// Serialises as `{"role": "user", "content": …}`,
/// `{"role": "assistant", "content": …, "tool_calls": [{"id", "name", "arguments"}]}`
/// and `{"role": "tool", "turn": n, "results": [{"call": …, "result": …}]}`
/// (the form of the trace store's JSON Lines).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// A user message (the task, or a message placed before it).
    User {
        /// The text.
        content: String,
    },
    /// What the model answered on one turn: its text and its tool calls.
    Assistant {
        /// The text (empty when the model only called tools).
        #[serde(default)]
        content: String,
        /// The calls, in the order the model made them.
        #[serde(default, with = "calls_serde")]
        tool_calls: Vec<ToolCall>,
    },
    /// The results of one turn's calls, in call order.
    Tool {
        /// The turn the results were produced on (1-based: the number of the
        /// request whose answer made the calls), for the two-layer memory
        /// rule ([`rendering_for`]).
        turn: u64,
        /// Each call with its result.
        results: Vec<ToolOutcome>,
    },
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User {
            content: content.into(),
        }
    }

    /// An assistant message without calls.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::Assistant {
            content: content.into(),
            tool_calls: Vec::new(),
        }
    }
}

/// One executed call and its result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolOutcome {
    /// The call as the model made it.
    #[serde(with = "call_serde")]
    pub call: ToolCall,
    /// What the tool returned.
    pub result: ToolResult,
}

/// The text of the result put in for a call that never ran
/// ([`repair_dangling_calls`]).
pub const NOT_RUN_MESSAGE: &str = "This call was not run: the conversation was interrupted before its result was recorded. Call the tool again if its result is still needed.";

/// Gives every tool call of an assistant message that has no result a
/// result saying it was not run, so that the next request is accepted:
/// OpenAI, Anthropic and Gemini all refuse a conversation in which a tool
/// call is not answered by a tool result (002 #161: a run interrupted
/// between the model's answer and the tools' results, a trace stored
/// half-way, a history edited by hand).
///
/// A call counts as answered when a [`Message::Tool`] among the messages
/// right after its assistant message (before the next user or assistant
/// message) holds a result with the call's id. The missing results
/// ([`ErrorKind::Cancelled`], text [`NOT_RUN_MESSAGE`], metadata
/// [`meta::NOT_RUN`] `true`) are added, in call order, to the first such
/// tool message, or to a new one placed right after the assistant message,
/// numbered one turn after the last tool message before it. Nothing else is
/// changed. Returns the number of results added. [`Agent::run_conversation`](crate::Agent::run_conversation)
/// calls it on the messages it is given.
pub fn repair_dangling_calls(messages: &mut Vec<Message>) -> usize {
    let mut added = 0;
    let mut last_turn = 0;
    let mut i = 0;
    while i < messages.len() {
        let calls = match &messages[i] {
            Message::Tool { turn, .. } => {
                last_turn = last_turn.max(*turn);
                i += 1;
                continue;
            }
            Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => tool_calls,
            _ => {
                i += 1;
                continue;
            }
        };
        let answered: std::collections::HashSet<&str> = messages[i + 1..]
            .iter()
            .map_while(|m| match m {
                Message::Tool { results, .. } => Some(results),
                _ => None,
            })
            .flatten()
            .map(|o| o.call.id.as_str())
            .collect();
        let missing: Vec<ToolOutcome> = calls
            .iter()
            .filter(|c| !answered.contains(c.id.as_str()))
            .map(|call| ToolOutcome {
                call: call.clone(),
                result: ToolResult::error(ErrorKind::Cancelled, NOT_RUN_MESSAGE)
                    .with_metadata(meta::NOT_RUN, true),
            })
            .collect();
        if !missing.is_empty() {
            added += missing.len();
            if let Some(Message::Tool { results, .. }) = messages.get_mut(i + 1) {
                results.extend(missing);
            } else {
                messages.insert(
                    i + 1,
                    Message::Tool {
                        turn: last_turn + 1,
                        results: missing,
                    },
                );
            }
        }
        i += 1;
    }
    added
}

/// How a result of turn `result_turn` is shown in a request for
/// `current_turn`. The results of turn `n` (the calls the model made in its
/// answer to request `n`) first reach the model in request `n + 1`: that
/// request shows them in full ([`Rendering::First`]: the output, for a
/// [`with_summary`](tool_core::ToolResult::with_summary) result `# title`,
/// output and `Summary:` line), every later request by [`Rendering::Later`]
/// (an output-once result's long-term memory only). The two-layer memory of
/// the design (000 对话历史示例).
///
/// (Until this rule counted the request that answers the results, request
/// `n + 1` already showed an output-once result by its memory, so the
/// model never saw the output itself.)
pub fn rendering_for(result_turn: u64, current_turn: u64) -> Rendering {
    if current_turn <= result_turn.saturating_add(1) {
        Rendering::First
    } else {
        Rendering::Later
    }
}

/// The provider items of one [`Message::Tool`] in a request at turn
/// `current_turn`: each outcome rendered by tool-core's `render_result` for
/// `format`, whole or short by [`rendering_for`] (one message per result
/// for OpenAI Chat, one item for Responses, one block for Anthropic).
pub(crate) fn rendered_results(
    results: &[ToolOutcome],
    format: tool_core::format::Format,
    result_turn: u64,
    current_turn: u64,
) -> Vec<serde_json::Value> {
    let rendering = rendering_for(result_turn, current_turn);
    results
        .iter()
        .flat_map(|r| tool_core::format::render_result(&r.call, &r.result, format, rendering))
        .collect()
}

/// The arguments of `call` as JSON text (what OpenAI-style APIs echo back).
pub(crate) fn arguments_text(call: &ToolCall) -> String {
    match &call.arguments {
        ToolArgs::Text(t) if t.trim().is_empty() => "{}".to_owned(),
        ToolArgs::Text(t) => t.clone(),
        ToolArgs::Value(v) => v.to_string(),
    }
}

/// The arguments of `call` as a JSON object (what Anthropic and Gemini echo
/// back): text that parses to an object, else the text under `"_raw"` so
/// nothing the model sent is dropped.
pub(crate) fn arguments_object(call: &ToolCall) -> Value {
    match &call.arguments {
        ToolArgs::Value(v @ Value::Object(_)) => v.clone(),
        ToolArgs::Text(t) if t.trim().is_empty() => Value::Object(Map::new()),
        ToolArgs::Text(t) => match serde_json::from_str::<Value>(t) {
            Ok(v @ Value::Object(_)) => v,
            _ => serde_json::json!({ "_raw": t }),
        },
        ToolArgs::Value(other) => serde_json::json!({ "_raw": other }),
    }
}

/// Which tool the model must call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ToolChoice {
    /// The model decides (`"auto"`). The default.
    #[default]
    Auto,
    /// No tool calls (`"none"`).
    None,
    /// At least one call, any tool (OpenAI `"required"`, Anthropic `"any"`).
    Required,
    /// Exactly this tool (OpenAI `{"type": "function", …}`, Anthropic
    /// `{"type": "tool", "name"}`). Small local models need it: the server
    /// compiles the tool's schema into a grammar.
    Tool(String),
}

/// Token counts reported by the provider for one response (0 when not reported).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Usage {
    /// Prompt tokens (OpenAI `prompt_tokens` / `input_tokens`, Anthropic `input_tokens`).
    pub input_tokens: u64,
    /// Generated tokens (`completion_tokens` / `output_tokens`).
    pub output_tokens: u64,
}

impl Usage {
    /// Input plus output.
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// Adds `other` to these counts.
    pub fn add(&mut self, other: Usage) {
        self.input_tokens += other.input_tokens;
        self.output_tokens += other.output_tokens;
    }
}

/// What a client sends for one turn.
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ModelRequest<'a> {
    /// The system prompt.
    pub system: Option<&'a str>,
    /// The conversation so far (never empty: it holds at least the task).
    pub messages: &'a [Message],
    /// The tool list rendered for the client's [`format`](crate::ModelClient::format)
    /// (`ToolRegistry::schemas_in`): a JSON array (Gemini: its wrapper).
    pub tools: &'a Value,
    /// Which tool the model must call on this turn.
    pub tool_choice: &'a ToolChoice,
    /// This turn's number (1-based): results of earlier turns are rendered
    /// by [`rendering_for`].
    pub turn: u64,
    /// Cap on generated tokens, when set.
    pub max_output_tokens: Option<u32>,
}

impl<'a> ModelRequest<'a> {
    /// A request for `turn` with the auto tool choice and no system prompt.
    pub fn new(messages: &'a [Message], tools: &'a Value, tool_choice: &'a ToolChoice) -> Self {
        Self {
            system: None,
            messages,
            tools,
            tool_choice,
            turn: 1,
            max_output_tokens: None,
        }
    }

    /// Sets the system prompt.
    pub fn with_system(mut self, system: Option<&'a str>) -> Self {
        self.system = system;
        self
    }

    /// Sets the turn number.
    pub fn with_turn(mut self, turn: u64) -> Self {
        self.turn = turn;
        self
    }

    /// Sets the output-token cap.
    pub fn with_max_output_tokens(mut self, max: Option<u32>) -> Self {
        self.max_output_tokens = max;
        self
    }
}

/// The most characters kept of a [`StreamEvent::ResponseInfo`] value (a
/// provider's response id or model name; real ones are under 100).
pub const RESPONSE_INFO_MAX_CHARS: usize = 256;

/// One event of a model's answer, in the order it arrived.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum StreamEvent {
    /// A piece of the answer's text, for display.
    TextDelta(String),
    /// A tool call, yielded as soon as its last fragment arrived.
    ToolCall(ToolCall),
    /// Token counts (may come more than once; they add up).
    Usage(Usage),
    /// Which response this is, as the provider named it: its `id` (OpenAI
    /// `chatcmpl-…` / `resp_…`, Anthropic `msg_…`, Gemini `responseId`) and
    /// the `model` that answered (OpenAI and Anthropic `model`, Gemini
    /// `modelVersion`), which may differ from the model asked for (an alias
    /// resolved to a dated version). Sent at most once per answer, before
    /// [`StreamEvent::Finished`], when the provider gave either; each value
    /// is clipped to [`RESPONSE_INFO_MAX_CHARS`] characters. The agent loop
    /// records them on the `chat` span as `gen_ai.response.id` and
    /// `gen_ai.response.model`.
    ResponseInfo {
        /// The response's id, when the provider gave one.
        id: Option<String>,
        /// The model that answered, when the provider said.
        model: Option<String>,
    },
    /// The end marker arrived; `stop_reason` as the provider wrote it
    /// (`stop`, `tool_calls`, `end_turn`, `STOP`, …).
    Finished {
        /// The provider's stop reason.
        stop_reason: Option<String>,
    },
}

/// The wire form of a [`ToolCall`] in stored traces: `{"id", "name",
/// "arguments"}`, arguments as text when the model sent text.
mod call_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use serde_json::Value;
    use tool_core::ToolArgs;
    use tool_core::format::ToolCall;

    #[derive(Serialize, Deserialize)]
    pub(super) struct Wire {
        id: String,
        name: String,
        #[serde(default)]
        arguments: Value,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        generated_id: bool,
    }

    impl From<&ToolCall> for Wire {
        fn from(c: &ToolCall) -> Self {
            Self {
                id: c.id.clone(),
                name: c.name.clone(),
                arguments: match &c.arguments {
                    ToolArgs::Text(t) => Value::String(t.clone()),
                    ToolArgs::Value(v) => v.clone(),
                },
                generated_id: c.generated_id,
            }
        }
    }

    impl From<Wire> for ToolCall {
        fn from(w: Wire) -> Self {
            let arguments = match w.arguments {
                Value::String(t) => ToolArgs::Text(t),
                other => ToolArgs::Value(other),
            };
            let mut call = ToolCall::new(w.id, w.name, arguments);
            call.generated_id = w.generated_id;
            call
        }
    }

    pub(super) fn serialize<S: Serializer>(c: &ToolCall, s: S) -> Result<S::Ok, S::Error> {
        Wire::from(c).serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<ToolCall, D::Error> {
        Wire::deserialize(d).map(ToolCall::from)
    }
}

mod calls_serde {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use tool_core::format::ToolCall;

    use super::call_serde::Wire;

    pub(super) fn serialize<S: Serializer>(c: &[ToolCall], s: S) -> Result<S::Ok, S::Error> {
        c.iter().map(Wire::from).collect::<Vec<_>>().serialize(s)
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<ToolCall>, D::Error> {
        Vec::<Wire>::deserialize(d).map(|v| v.into_iter().map(ToolCall::from).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_round_trip_through_json() {
        let messages = vec![
            Message::user("read a.txt"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![ToolCall::new("c1", "read_file", "{\"path\":\"a.txt\"}")],
            },
            Message::Tool {
                turn: 1,
                results: vec![ToolOutcome {
                    call: ToolCall::new("c1", "read_file", json!({"path": "a.txt"})),
                    result: ToolResult::ok("hello"),
                }],
            },
        ];
        let text = serde_json::to_string(&messages).unwrap();
        let back: Vec<Message> = serde_json::from_str(&text).unwrap();
        assert_eq!(back, messages);
        let v: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(v[1]["tool_calls"][0]["arguments"], "{\"path\":\"a.txt\"}");
        assert_eq!(v[2]["results"][0]["call"]["arguments"]["path"], "a.txt");
    }

    #[test]
    fn arguments_keep_what_the_model_sent() {
        let call = ToolCall::new("c", "f", "not json");
        assert_eq!(arguments_object(&call), json!({"_raw": "not json"}));
        assert_eq!(arguments_text(&ToolCall::new("c", "f", "")), "{}");
        // Results of turn 1 are answered by request 2 (in full), then short.
        assert_eq!(rendering_for(1, 2), Rendering::First);
        assert_eq!(rendering_for(1, 3), Rendering::Later);
        assert_eq!(rendering_for(2, 2), Rendering::First);
        assert_eq!(rendering_for(u64::MAX, 1), Rendering::First);
    }
}
