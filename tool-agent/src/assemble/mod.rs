//! Streamed tool-call assembly: provider stream chunks in, [`StreamEvent`]s
//! out, each tool call yielded as soon as its last fragment arrived.
//!
//! One state machine per provider, all behind [`Assembler`]: feed each SSE
//! event (`event:` name and `data:` text) with [`Assembler::feed`], then call
//! [`Assembler::finish`] when the transport ends. The shapes follow the
//! providers' streaming references:
//!
//! | provider | a call is complete when | end marker |
//! | --- | --- | --- |
//! | OpenAI Chat Completions ([`OpenAiChatAssembler`]) | a fragment for a later `index` starts, or `finish_reason` arrives | `data: [DONE]` (or a `finish_reason`) |
//! | OpenAI Responses ([`ResponsesAssembler`]) | `response.function_call_arguments.done` (or the item's `response.output_item.done`) | `response.completed` |
//! | Anthropic Messages ([`AnthropicAssembler`]) | the block's `content_block_stop`; an empty `partial_json` is `{}` | `message_stop` |
//! | Gemini `streamGenerateContent?alt=sse` ([`GeminiAssembler`]) | at once: each chunk carries whole `functionCall` parts | a candidate `finishReason` |
//!
//! A transport that ends before the end marker is a
//! [`Truncated`](crate::ModelErrorKind::Truncated) error naming the call
//! that was open; a chunk that is not in the documented shape is
//! [`Malformed`](crate::ModelErrorKind::Malformed). Completed calls are read
//! with tool-core's [`ToolCall::parse`](tool_core::format::ToolCall::parse)
//! from the provider's own call shape, so ids and arguments are handled as
//! for whole answers.
//!
//! ```
//! use tool_agent::assemble::{Assembler, OpenAiChatAssembler};
//! use tool_agent::StreamEvent;
//!
//! let mut asm = OpenAiChatAssembler::new();
//! let mut out = Vec::new();
//! for data in [
//!     r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
//!     r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
//!     r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]}"#,
//!     r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
//!     "[DONE]",
//! ] {
//!     asm.feed(None, data, &mut out)?;
//! }
//! asm.finish(&mut out)?;
//! let StreamEvent::ToolCall(call) = &out[0] else { panic!() };
//! assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "read_file"));
//! # Ok::<(), tool_agent::ModelError>(())
//! ```

use serde_json::Value;

use crate::error::ModelError;
use crate::message::StreamEvent;

mod anthropic;
mod gemini;
mod openai_chat;
mod responses;

pub use anthropic::AnthropicAssembler;
pub use gemini::GeminiAssembler;
pub use openai_chat::OpenAiChatAssembler;
pub use responses::ResponsesAssembler;

/// A provider's stream state machine (see the [module docs](self)).
pub trait Assembler: Send {
    /// Reads one SSE event: its `event:` name (if any) and its `data:`
    /// text, appending what it completes to `out`.
    ///
    /// # Errors
    /// [`Malformed`](crate::ModelErrorKind::Malformed) for data outside the
    /// provider's documented shape, [`Provider`](crate::ModelErrorKind::Provider)
    /// for an error event.
    fn feed(
        &mut self,
        event: Option<&str>,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError>;

    /// The transport ended: flushes what is complete.
    ///
    /// # Errors
    /// [`Truncated`](crate::ModelErrorKind::Truncated) when the end marker
    /// never came, naming the call that was open.
    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError>;

    /// `true` once the end marker arrived.
    fn is_done(&self) -> bool;
}

/// The events of an SSE byte stream read through `assembler`: what the
/// HTTP clients do with a response body, for recordings, other transports
/// and benchmarks. The stream ends after the last event, or with the
/// assembler's error ([`Assembler::finish`] runs when the bytes end; a
/// transport error mid-call becomes [`Truncated`](crate::ModelErrorKind::Truncated)
/// naming the call).
///
/// ```
/// use futures_util::StreamExt;
/// use tool_agent::assemble::{from_sse, AnthropicAssembler};
/// use tool_agent::StreamEvent;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let sse = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"clock\",\"input\":{}}}\n\n\
///            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n\
///            event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
/// let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(sse))]);
/// let events: Vec<_> = from_sse(chunks, AnthropicAssembler::new()).collect().await;
/// let Ok(StreamEvent::ToolCall(call)) = &events[0] else { panic!("{events:?}") };
/// assert_eq!(call.arguments, serde_json::json!({}).into(), "an empty partial_json is {{}}");
/// let err = events[1].as_ref().unwrap_err();
/// assert!(err.to_string().contains("before its end marker"), "{err}");
/// # });
/// ```
pub fn from_sse<'a, S, E, A>(bytes: S, assembler: A) -> crate::EventStream<'a>
where
    S: futures_util::Stream<Item = Result<bytes::Bytes, E>> + Send + 'a,
    E: std::error::Error + Send + Sync + 'static,
    A: Assembler + 'a,
{
    let sse = sse_stream::SseStream::from_bytes_stream(bytes);
    crate::client::events_from_sse(Box::pin(sse), assembler)
}

/// Parses one chunk's JSON, or says which provider's chunk was not JSON.
pub(crate) fn parse_chunk(provider: &str, data: &str) -> Result<Value, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        ModelError::malformed(format!(
            "{provider} stream chunk is not JSON ({e}): {}",
            crate::error::clip(data)
        ))
    })
}

/// `` `name` (id …) `` for error messages about one call.
pub(crate) fn describe_call(name: Option<&str>, id: Option<&str>) -> String {
    match (name, id) {
        (Some(n), Some(i)) => format!("`{n}` (id {i})"),
        (Some(n), None) => format!("`{n}`"),
        (None, Some(i)) => format!("with id {i}"),
        (None, None) => "without name or id".to_owned(),
    }
}

/// The `message` of an `{"error": {...}}` object, or the object as text.
pub(crate) fn error_text(error: &Value) -> String {
    match error.get("message").and_then(Value::as_str) {
        Some(m) => match error.get("type").or_else(|| error.get("code")) {
            Some(Value::String(t)) => format!("{t}: {m}"),
            _ => m.to_owned(),
        },
        None => error.to_string(),
    }
}

/// A `u64` at `pointer`, or 0.
pub(crate) fn count(v: &Value, pointer: &str) -> u64 {
    v.pointer(pointer).and_then(Value::as_u64).unwrap_or(0)
}
