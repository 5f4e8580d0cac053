//! [`ToolCall`]: one tool call read from a provider's answer.

use serde_json::{Map, Value};

use super::Format;
use super::error::CallParseError;
use super::walk::child_path;
use crate::args::ToolArgs;

/// One tool call requested by a model, whatever the provider.
///
/// Read from a provider payload with [`ToolCall::parse`] (or built with
/// [`ToolCall::new`]), run with
/// [`ToolRegistry::execute_call`](crate::ToolRegistry::execute_call), answered
/// with [`render_result`](super::render_result) under the same `id`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ToolCall {
    /// The provider's call id (OpenAI `tool_calls[].id` / Responses `call_id`,
    /// Anthropic `tool_use.id`, Gemini `functionCall.id`, MCP JSON-RPC id),
    /// or a generated one when the provider sent none (see [`generated_id`](Self::generated_id)).
    pub id: String,
    /// The tool name the model asked for.
    pub name: String,
    /// The arguments: raw JSON text (OpenAI sends a string) or a parsed value.
    pub arguments: ToolArgs,
    /// `true` when the provider sent no id and [`id`](Self::id) was generated:
    /// `call_<16 hex digits>`, a hash of the call's position, name and
    /// arguments, so parsing the same answer twice gives the same ids. Such
    /// ids are never sent back to the provider.
    pub generated_id: bool,
}

impl ToolCall {
    /// A call with a provider-given id.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<ToolArgs>,
    ) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
            generated_id: false,
        }
    }

    /// A call without a provider id: the id is generated from `index` (the
    /// call's position in the answer), the name and the arguments, stably.
    pub fn with_generated_id(index: usize, name: impl Into<String>, arguments: Value) -> Self {
        let name = name.into();
        Self {
            id: stable_id(index, &name, &arguments),
            name,
            arguments: ToolArgs::Value(arguments),
            generated_id: true,
        }
    }

    /// Reads every tool call in a provider payload. Accepted shapes, per format:
    ///
    /// - [`Format::OpenAiChat`]: a chat completion (first choice), an assistant
    ///   message, its `tool_calls` array, or one tool call.
    /// - [`Format::OpenAiResponses`]: a response (its `output`), an item list,
    ///   or one `function_call` item; other items (messages, reasoning) are skipped.
    /// - [`Format::Anthropic`]: a message, its `content` array, or one
    ///   `tool_use` block; other blocks are skipped.
    /// - [`Format::Gemini`] and [`Format::GeminiJsonSchema`]: a
    ///   `generateContent` response (first candidate), a `Content`, its
    ///   `parts`, or one part; parts without `functionCall` are skipped.
    /// - [`Format::Mcp`]: a `tools/call` JSON-RPC request or its `params`.
    /// - [`Format::Json`]: `{"id"?, "name", "arguments"}` or a list of them.
    ///
    /// A payload with no calls gives an empty list.
    ///
    /// # Errors
    /// [`CallParseError`] with the JSON path of a call that lacks its name or
    /// id, or of a payload of another shape.
    pub fn parse(format: Format, payload: &Value) -> Result<Vec<Self>, CallParseError> {
        (format.provider().0.parse_calls)(payload)
    }
}

/// `call_` + 16 hex digits of FNV-1a (64 bit) over position, name and the
/// compact JSON of the arguments (object keys sorted, so equal calls hash equally).
fn stable_id(index: usize, name: &str, arguments: &Value) -> String {
    const OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
    const PRIME: u64 = 0x0000_0100_0000_01b3;
    let text = format!("{index}\u{0}{name}\u{0}{}", canonical(arguments));
    let hash = text
        .bytes()
        .fold(OFFSET, |h, b| (h ^ u64::from(b)).wrapping_mul(PRIME));
    format!("call_{hash:016x}")
}

/// JSON text with object keys sorted at every depth, so an id does not depend on key order.
fn canonical(v: &Value) -> String {
    match v {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{}:{}", Value::String(k.clone()), canonical(v)))
                .collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(canonical).collect::<Vec<_>>().join(",")
        ),
        other => other.to_string(),
    }
}

/// The string field `key` of `obj`.
pub(crate) fn field_str(
    obj: &Value,
    key: &str,
    path: &str,
    format: Format,
) -> Result<String, CallParseError> {
    match obj.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(Value::Number(n)) if key == "id" => Ok(n.to_string()),
        Some(other) => Err(CallParseError::new(
            format,
            &child_path(path, key),
            format!("expected a string, found {other}"),
        )),
        None => Err(CallParseError::new(
            format,
            &child_path(path, key),
            format!("missing `{key}`"),
        )),
    }
}

/// The array at `value` (`None` for absent or `null`).
pub(crate) fn list_at<'a>(
    value: Option<&'a Value>,
    path: &str,
    format: Format,
) -> Result<Option<&'a Vec<Value>>, CallParseError> {
    match value {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(CallParseError::new(
            format,
            path,
            format!("expected an array, found {other}"),
        )),
    }
}

/// Arguments as sent: JSON text stays text (parsed, with a model-readable
/// error, at execution); an absent value is an empty object.
pub(crate) fn arguments_of(value: Option<&Value>) -> ToolArgs {
    match value {
        None | Some(Value::Null) => ToolArgs::Value(Value::Object(Map::new())),
        Some(Value::String(text)) => ToolArgs::Text(text.clone()),
        Some(other) => ToolArgs::Value(other.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generated_ids_are_stable_and_distinct() {
        let a = ToolCall::with_generated_id(0, "f", json!({"b": 1, "a": 2}));
        let b = ToolCall::with_generated_id(0, "f", json!({"a": 2, "b": 1}));
        let c = ToolCall::with_generated_id(1, "f", json!({"a": 2, "b": 1}));
        assert_eq!(a.id, b.id);
        assert_ne!(a.id, c.id);
        assert!(a.generated_id);
        assert_eq!(a.id.len(), "call_".len() + 16);
    }
}
