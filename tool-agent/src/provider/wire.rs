//! Small readers every provider folder uses on its chunks and whole
//! answers: a chunk's JSON, an error object's text, a token count, and the
//! common tail of a whole (non-streamed) answer.

use serde_json::Value;
use tool_core::Format;

use crate::error::{ModelError, body_excerpt};
use crate::message::{RESPONSE_INFO_MAX_CHARS, StreamEvent, Usage};

/// Parses one chunk's JSON, or says which provider's chunk was not JSON.
pub(crate) fn parse_chunk(provider: &str, data: &str) -> Result<Value, ModelError> {
    serde_json::from_str(data).map_err(|e| {
        ModelError::malformed(format!(
            "{provider} stream chunk is not JSON ({e}): {}",
            body_excerpt(data)
        ))
    })
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

/// The [`StreamEvent::ResponseInfo`] of an answer whose id and model are
/// `id` and `model` (each clipped to [`RESPONSE_INFO_MAX_CHARS`]
/// characters; empty strings count as absent), or `None` when it has neither.
pub(crate) fn response_info(id: Option<&str>, model: Option<&str>) -> Option<StreamEvent> {
    let keep = |v: Option<&str>| {
        v.filter(|v| !v.is_empty())
            .map(|v| v.chars().take(RESPONSE_INFO_MAX_CHARS).collect::<String>())
    };
    let (id, model) = (keep(id), keep(model));
    (id.is_some() || model.is_some()).then_some(StreamEvent::ResponseInfo { id, model })
}

/// Where a provider's whole (not streamed) answer keeps what every answer
/// has besides its text.
pub(crate) struct WholeShape {
    /// The format whose `ToolCall::parse` reads the calls.
    pub(crate) format: Format,
    /// JSON pointers of the input and output token counts inside `usage`.
    pub(crate) usage: [&'static str; 2],
    /// JSON pointer of the stop reason in the body.
    pub(crate) stop_reason: &'static str,
    /// JSON pointers of the response's id and the answering model's name.
    pub(crate) response: [&'static str; 2],
}

/// The events of a whole answer `body`: the `text` events given, then the
/// calls found in `calls_in` (the body or the part of it holding them), the
/// usage and the end, as `shape` says where they are.
///
/// # Errors
/// `malformed` when the calls cannot be parsed.
pub(crate) fn whole_answer(
    body: &Value,
    calls_in: &Value,
    mut events: Vec<StreamEvent>,
    shape: &WholeShape,
) -> Result<Vec<StreamEvent>, ModelError> {
    let calls = tool_core::format::ToolCall::parse(shape.format, calls_in)
        .map_err(|e| ModelError::malformed(e.to_string()))?;
    events.extend(calls.into_iter().map(StreamEvent::ToolCall));
    let at = |pointer: &str| body.pointer(pointer).and_then(Value::as_str);
    events.extend(response_info(at(shape.response[0]), at(shape.response[1])));
    if let Some(u) = body.get("usage") {
        events.push(StreamEvent::Usage(Usage {
            input_tokens: count(u, shape.usage[0]),
            output_tokens: count(u, shape.usage[1]),
        }));
    }
    events.push(StreamEvent::Finished {
        stop_reason: body
            .pointer(shape.stop_reason)
            .and_then(Value::as_str)
            .map(str::to_owned),
    });
    Ok(events)
}
