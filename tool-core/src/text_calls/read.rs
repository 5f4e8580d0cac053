//! Reading calls out of JSON and finding ends of marked blocks: the pieces
//! several formats share.

use serde_json::{Map, Value};
use tool_rules::text::{Clip, clip};

use super::scan::{ValueEnd, ValueScan, find_from};
use super::types::{Block, End, EndState, TextCall};

/// Longest excerpt of markup a note quotes (characters).
const EXCERPT_CHARS: usize = 120;

/// `text` as a note quotes it: one line, at most [`EXCERPT_CHARS`] characters.
pub(crate) fn excerpt(text: &str) -> String {
    let one_line = text.trim().replace(['\n', '\r'], " ");
    clip(&one_line, Clip::chars(EXCERPT_CHARS)).into_owned()
}

/// The first JSON value at the start of `text` (after whitespace), and the
/// byte offset where it ends; what follows it is left unread.
pub(crate) fn leading_json(text: &str) -> Result<(Value, usize), serde_json::Error> {
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(v)) => Ok((v, values.byte_offset())),
        Some(Err(e)) => Err(e),
        None => Err(serde::de::Error::custom("no JSON value")),
    }
}

/// Arguments as a JSON object: an object as is, a JSON text of an object
/// (some models quote their arguments) read, absent or `null` as `{}`.
pub(crate) fn object_args(value: Option<&Value>) -> Result<Map<String, Value>, String> {
    match value {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m.clone()),
        Some(Value::String(s)) if s.trim().is_empty() => Ok(Map::new()),
        Some(Value::String(s)) => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err(format!(
                "the arguments are a string, not a JSON object: `{}`",
                excerpt(s)
            )),
        },
        Some(other) => Err(format!(
            "the arguments are {}, not a JSON object",
            kind_of(other)
        )),
    }
}

fn kind_of(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// One call object: `{"name", "arguments"}` (or `"parameters"`, Llama 3's
/// word), also wrapped as `{"type": "function", "function": {…}}`.
/// `Ok(None)` when the object has no string `name` (not a call).
pub(crate) fn call_from_object(obj: &Map<String, Value>) -> Result<Option<TextCall>, String> {
    let obj = match obj.get("function") {
        Some(Value::Object(f)) if !obj.contains_key("name") => f,
        _ => obj,
    };
    let Some(name) = obj.get("name").and_then(Value::as_str) else {
        return Ok(None);
    };
    let name = name.trim();
    if name.is_empty() {
        return Err("a call with an empty `name`".to_owned());
    }
    let args = obj.get("arguments").or_else(|| obj.get("parameters"));
    let arguments = object_args(args).map_err(|e| format!("call `{name}`: {e}"))?;
    Ok(Some(TextCall::new(name, arguments)))
}

/// Calls from a JSON value: one call object or an array of them.
/// [`Block::NotCalls`] when the value has no call shape at all.
pub(crate) fn calls_from_value(value: &Value) -> Block {
    let items: Vec<&Value> = match value {
        Value::Array(a) => a.iter().collect(),
        v => vec![v],
    };
    if items.is_empty() {
        return Block::NotCalls;
    }
    let mut calls = Vec::new();
    let mut notes = Vec::new();
    for item in items {
        let Value::Object(obj) = item else {
            return Block::NotCalls;
        };
        match call_from_object(obj) {
            Ok(Some(call)) => calls.push(call),
            Ok(None) if calls.is_empty() && notes.is_empty() => return Block::NotCalls,
            Ok(None) => notes.push(format!(
                "an item of the call list has no `name`: `{}`",
                excerpt(&item.to_string())
            )),
            Err(e) => notes.push(e),
        }
    }
    if calls.is_empty() {
        return Block::Malformed(notes.join("; "));
    }
    Block::Calls(calls, notes)
}

/// Calls from JSON text (after any marker): the whole trimmed text must be
/// one JSON value. `marked`: a marker announced calls, so JSON without a
/// call shape is malformed; unmarked (a bare object found in text), such
/// JSON stays text, with no note.
pub(crate) fn calls_from_json_text(text: &str, what: &str, marked: bool) -> Block {
    let t = text.trim();
    if t.is_empty() {
        return Block::Malformed(format!("{what} with nothing in it"));
    }
    match serde_json::from_str::<Value>(t) {
        Ok(v) => match calls_from_value(&v) {
            Block::NotCalls if !marked => Block::NotCalls,
            Block::NotCalls => Block::Malformed(format!(
                "{what} holds JSON that is not a call (`{{\"name\": …, \"arguments\": {{…}}}}`): `{}`",
                excerpt(t)
            )),
            other => other,
        },
        Err(e) => Block::Malformed(format!("{what} is not valid JSON ({e}): `{}`", excerpt(t))),
    }
}

/// The end of a block that closes with `end` (searched after the `skip`
/// bytes of its start marker).
pub(crate) fn marker_end(block: &str, skip: usize, end: &str, state: &mut EndState) -> End {
    let found = find_from(block, end, skip, state.searched);
    state.searched = block.len();
    match found {
        Some(at) => End::At(at + end.len()),
        None => End::More,
    }
}

/// The end of a block that is a bracketed value starting at byte `from`
/// (after a marker): the value's end, or the whole buffer when what follows
/// the marker is not a bracketed value (the block then reads as malformed).
pub(crate) fn value_end(block: &str, from: usize, python: bool, state: &mut EndState) -> End {
    let scanner = state.value.get_or_insert_with(|| ValueEnd::at(from));
    match scanner.scan(block, python) {
        ValueScan::End(at) => End::At(at),
        ValueScan::More => End::More,
        ValueScan::Invalid(at) => End::At((at + 1).min(block.len()).max(from)),
    }
}

/// The text between `start` and `end` markers of a block (the end marker
/// optional: an unclosed block runs to its end).
pub(crate) fn inner<'a>(block: &'a str, start: &str, end: &str) -> &'a str {
    let body = block.strip_prefix(start).unwrap_or(block);
    body.strip_suffix(end).unwrap_or(body)
}

/// The note for a block the text ended inside.
pub(crate) fn unclosed(format: &str, end: &str, block: &str) -> String {
    format!(
        "{format} call markup was not closed with `{end}` before the text ended: `{}`",
        excerpt(block)
    )
}
