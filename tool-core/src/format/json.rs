//! The canonical form ([`Format::Json`]): tools as `{"name", "description",
//! "parameters"}` with the JSON Schema 2020-12 they were built with, calls
//! as `{"id"?, "name", "arguments"}`, results as `{"id", "name", "content",
//! "is_error"}` plus `"media"` when the result has images or files. No
//! lowering: this is the form the others are lowered from.

use serde_json::{Map, Value, json};

use super::Format;
use super::call::{ToolCall, arguments_of, field_str};
use super::error::CallParseError;
use super::provider::{Looser, Provider};
use super::reply::Reply;
use super::walk::child_path;

/// The canonical form's table entry.
pub(crate) static JSON: Provider = Provider {
    slug: "json",
    title: "canonical JSON Schema",
    parameters_pointer: "/parameters",
    plain: None,
    strict: None,
    render_tool: |spec, _, _| spec.canonical_schema(),
    looser: Looser::None,
    tool_list: Value::Array,
    parse_calls: parse_json,
    render_result: |call, reply, _| vec![result(call, reply)],
    unrolled: None,
};

fn parse_json(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let format = Format::Json;
    let one = |call: &Value, index: usize, path: &str| -> Result<ToolCall, CallParseError> {
        let name = field_str(call, "name", path, format)?;
        let arguments = call
            .get("arguments")
            .cloned()
            .unwrap_or(Value::Object(Map::new()));
        Ok(match call.get("id").and_then(Value::as_str) {
            Some(id) => ToolCall::new(id, name, arguments_of(Some(&arguments))),
            None => ToolCall::with_generated_id(index, name, arguments),
        })
    };
    match payload {
        Value::Array(calls) => calls
            .iter()
            .enumerate()
            .map(|(i, c)| one(c, i, &child_path("", &i.to_string())))
            .collect(),
        _ => one(payload, 0, "").map(|c| vec![c]),
    }
}

/// `{"id", "name", "content", "is_error"}`, and, when the result carries
/// images or files, `"media"`: every one of them, in order (images first),
/// nothing dropped and no size limit (the host decides what to do with
/// them): `{"type": "image", "mime_type", "data"}` for an image,
/// `{"type": "file", "name", "mime_type", "data"}` for an inline file and
/// `{"type": "file", "name", "mime_type", "path"}` for a file on disk; `data`
/// is base64 as the tool gave it.
fn result(call: &ToolCall, reply: &Reply<'_>) -> Value {
    let mut result = json!({
        "id": call.id,
        "name": call.name,
        "content": reply.text,
        "is_error": reply.is_error,
    });
    let mut media: Vec<Value> = reply
        .images
        .iter()
        .map(|i| json!({"type": "image", "mime_type": i.media_type, "data": i.data}))
        .collect();
    media.extend(reply.attachments.iter().filter_map(|a| {
        let mut file = json!({"type": "file", "name": a.name, "mime_type": a.media_type});
        match (&a.data, &a.path) {
            (Some(data), _) => file["data"] = Value::String(data.clone()),
            (None, Some(path)) => file["path"] = Value::String(path.clone()),
            (None, None) => return None,
        }
        Some(file)
    }));
    if !media.is_empty() {
        result["media"] = Value::Array(media);
    }
    result
}
