//! Formats whose calls are XML-like tags with text values: Qwen3-Coder
//! (`qwen3_coder`) and GLM-4.5 / 4.6 (`glm45`). Values are text; a schema
//! (when given) turns them into numbers, booleans, objects (see `coerce`).

use serde_json::{Map, Value};

use super::read::{excerpt, inner, marker_end, unclosed};
use super::scan::StartPattern;
use super::types::{Block, End, EndState, TextCall, TextCallFormat};

const TOOL_CALL: &str = "<tool_call>";
const TOOL_CALL_END: &str = "</tool_call>";
const FUNCTION: &str = "<function=";
const FUNCTION_END: &str = "</function>";
const PARAMETER: &str = "<parameter=";
const PARAMETER_END: &str = "</parameter>";

/// Qwen3-Coder: `<tool_call><function=NAME><parameter=KEY>value</parameter>…</function></tool_call>`,
/// values as text (one newline on each side of a value is layout, dropped).
/// A bare `<function=…>…</function>` is read too; a parameter without
/// `</parameter>` runs to the next parameter or `</function>` (as vLLM reads it).
#[derive(Debug, Default, Clone, Copy)]
pub struct Qwen3Coder;

/// One layout newline off each end of a tag's value.
fn layout_trimmed(v: &str) -> &str {
    let v = v
        .strip_prefix("\r\n")
        .or_else(|| v.strip_prefix('\n'))
        .unwrap_or(v);
    v.strip_suffix("\r\n")
        .or_else(|| v.strip_suffix('\n'))
        .unwrap_or(v)
}

/// The calls of a Qwen3-Coder body (the text inside `<tool_call>`).
pub(crate) fn qwen3_functions(body: &str) -> Block {
    let mut calls = Vec::new();
    let mut notes = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find(FUNCTION) {
        let after = &rest[at + FUNCTION.len()..];
        let Some(close) = after.find('>') else {
            notes.push(format!(
                "qwen3_coder: `<function=` without `>`: `{}`",
                excerpt(after)
            ));
            break;
        };
        let name = after[..close].trim();
        let body_start = &after[close + 1..];
        let (fbody, next) = match body_start.find(FUNCTION_END) {
            Some(e) => (&body_start[..e], &body_start[e + FUNCTION_END.len()..]),
            None => (body_start, ""),
        };
        if name.is_empty() {
            notes.push("qwen3_coder: a function with an empty name".to_owned());
        } else {
            calls.push(TextCall::new(name, qwen3_parameters(fbody)));
        }
        rest = next;
    }
    if calls.is_empty() {
        let why = if notes.is_empty() {
            format!(
                "qwen3_coder: no `<function=NAME>` in the call: `{}`",
                excerpt(body)
            )
        } else {
            notes.join("; ")
        };
        return Block::Malformed(why);
    }
    Block::Calls(calls, notes)
}

fn qwen3_parameters(fbody: &str) -> Map<String, Value> {
    let mut args = Map::new();
    let mut rest = fbody;
    while let Some(at) = rest.find(PARAMETER) {
        let after = &rest[at + PARAMETER.len()..];
        let Some(close) = after.find('>') else { break };
        let key = after[..close].trim().to_owned();
        let value_start = &after[close + 1..];
        let end = [value_start.find(PARAMETER_END), value_start.find(PARAMETER)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(value_start.len());
        let value = layout_trimmed(&value_start[..end]);
        args.insert(key, Value::String(value.to_owned()));
        rest = &value_start[end..];
        rest = rest.strip_prefix(PARAMETER_END).unwrap_or(rest);
    }
    args
}

impl TextCallFormat for Qwen3Coder {
    fn name(&self) -> &'static str {
        "qwen3_coder"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[
            StartPattern::Marker(TOOL_CALL),
            StartPattern::Marker(FUNCTION),
        ]
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        if kind == 0 {
            marker_end(block, TOOL_CALL.len(), TOOL_CALL_END, state)
        } else {
            marker_end(block, FUNCTION.len(), FUNCTION_END, state)
        }
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        let end = if kind == 0 {
            TOOL_CALL_END
        } else {
            FUNCTION_END
        };
        if !closed {
            return Block::Malformed(unclosed("qwen3_coder", end, block));
        }
        let body = if kind == 0 {
            inner(block, TOOL_CALL, TOOL_CALL_END)
        } else {
            block
        };
        qwen3_functions(body)
    }
}

/// GLM-4.5 / 4.6 / 4.7: `<tool_call>NAME<arg_key>KEY</arg_key><arg_value>value</arg_value>…</tool_call>`
/// (newlines between the tags optional), values as text.
#[derive(Debug, Default, Clone, Copy)]
pub struct Glm45;

const ARG_KEY: &str = "<arg_key>";
const ARG_KEY_END: &str = "</arg_key>";
const ARG_VALUE: &str = "<arg_value>";
const ARG_VALUE_END: &str = "</arg_value>";

/// The call of a GLM body (the text inside `<tool_call>`).
pub(crate) fn glm_call(body: &str) -> Block {
    let name_end = body.find(ARG_KEY).unwrap_or(body.len());
    let name = body[..name_end].trim();
    if name.is_empty() || name.contains(['<', '>', '{', ' ']) {
        return Block::Malformed(format!(
            "glm45: a <tool_call> must open with the tool's name: `{}`",
            excerpt(body)
        ));
    }
    let mut args = Map::new();
    let mut rest = &body[name_end..];
    while !rest.trim().is_empty() {
        let r = rest.trim_start();
        let Some(k) = r.strip_prefix(ARG_KEY) else {
            return Block::Malformed(format!(
                "glm45: expected `<arg_key>` in call `{name}`: `{}`",
                excerpt(r)
            ));
        };
        let Some(ke) = k.find(ARG_KEY_END) else {
            return Block::Malformed(format!(
                "glm45: `<arg_key>` without `</arg_key>` in call `{name}`"
            ));
        };
        let key = k[..ke].trim();
        if key.contains('<') {
            return Block::Malformed(format!(
                "glm45: an argument name runs into other tags in call `{name}`: `{}`",
                excerpt(key)
            ));
        }
        let v = k[ke + ARG_KEY_END.len()..].trim_start();
        let Some(v) = v.strip_prefix(ARG_VALUE) else {
            return Block::Malformed(format!(
                "glm45: argument `{key}` of call `{name}` has no `<arg_value>`"
            ));
        };
        let Some(ve) = v.find(ARG_VALUE_END) else {
            return Block::Malformed(format!(
                "glm45: `<arg_value>` without `</arg_value>` in call `{name}`"
            ));
        };
        args.insert(key.to_owned(), Value::String(v[..ve].to_owned()));
        rest = &v[ve + ARG_VALUE_END.len()..];
    }
    Block::Calls(vec![TextCall::new(name, args)], Vec::new())
}

impl TextCallFormat for Glm45 {
    fn name(&self) -> &'static str {
        "glm45"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[StartPattern::Marker(TOOL_CALL)]
    }
    fn find_end(&self, block: &str, _kind: usize, state: &mut EndState) -> End {
        marker_end(block, TOOL_CALL.len(), TOOL_CALL_END, state)
    }
    fn parse_block(&self, block: &str, _kind: usize, closed: bool) -> Block {
        if !closed {
            return Block::Malformed(unclosed("glm45", TOOL_CALL_END, block));
        }
        glm_call(inner(block, TOOL_CALL, TOOL_CALL_END))
    }
}
