//! Formats whose calls are JSON: Hermes / Qwen 2.5 (`hermes`), Llama 3.x
//! JSON (`llama3_json`), Mistral (`mistral`), IBM Granite (`granite`) and
//! Salesforce xLAM (`xlam`). Shapes as the models' chat templates write them
//! and vLLM's parsers of the same names read them.

use serde_json::Value;

use super::read::{
    calls_from_json_text, calls_from_value, excerpt, inner, leading_json, marker_end, object_args,
    unclosed, value_end,
};
use super::scan::StartPattern;
use super::types::{Block, End, EndState, TextCall, TextCallFormat};

const TOOL_CALL: &str = "<tool_call>";
const TOOL_CALL_END: &str = "</tool_call>";
const TOOL_CALLS: &str = "[TOOL_CALLS]";

/// Hermes 2 Pro / Qwen 2.5 / Qwen 3: `<tool_call>{"name": …, "arguments": {…}}</tool_call>`,
/// one block per call. A block the text ends inside is read when its JSON is
/// whole (as vLLM's `hermes` parser does), with a note.
#[derive(Debug, Default, Clone, Copy)]
pub struct Hermes;

impl TextCallFormat for Hermes {
    fn name(&self) -> &'static str {
        "hermes"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[StartPattern::Marker(TOOL_CALL)]
    }
    fn find_end(&self, block: &str, _kind: usize, state: &mut EndState) -> End {
        marker_end(block, TOOL_CALL.len(), TOOL_CALL_END, state)
    }
    fn parse_block(&self, block: &str, _kind: usize, closed: bool) -> Block {
        let body = inner(block, TOOL_CALL, TOOL_CALL_END);
        let read = calls_from_json_text(body, "a <tool_call> block", true);
        if closed {
            return read;
        }
        match read {
            Block::Calls(calls, mut notes) => {
                notes.push(unclosed("hermes", TOOL_CALL_END, block));
                Block::Calls(calls, notes)
            }
            _ => Block::Malformed(unclosed("hermes", TOOL_CALL_END, block)),
        }
    }
}

/// Llama 3.1 / 3.2 / 3.3 JSON tool calls: `{"name": …, "parameters": {…}}`
/// (`"arguments"` also read), optionally after `<|python_tag|>`, several
/// separated by `;`. A bare object is found anywhere in the text; one that is
/// not a call stays text.
#[derive(Debug, Default, Clone, Copy)]
pub struct Llama3Json;

const PYTHON_TAG: &str = "<|python_tag|>";

impl TextCallFormat for Llama3Json {
    fn name(&self) -> &'static str {
        "llama3_json"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[StartPattern::Marker(PYTHON_TAG), StartPattern::NameObject]
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        let from = if kind == 0 { PYTHON_TAG.len() } else { 0 };
        value_end(block, from, false, state)
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        let body = if kind == 0 {
            &block[PYTHON_TAG.len()..]
        } else {
            block
        };
        if !closed {
            return Block::Malformed(format!(
                "llama3_json: the JSON call was cut by the end of the text: `{}`",
                excerpt(block)
            ));
        }
        calls_from_json_text(body, "llama3_json call", kind == 0)
    }
}

/// Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}, …]` (v0.3 tokenizers),
/// or `[TOOL_CALLS]name{…}` / `[TOOL_CALLS]name[ARGS]{…}` (v11 and later, one
/// marker per call, an optional `[CALL_ID]id` before `[ARGS]`).
#[derive(Debug, Default, Clone, Copy)]
pub struct Mistral;

/// Longest tool name or call id read between Mistral's markers (bytes).
const MAX_NAME: usize = 256;

/// Where the JSON of a v11 call starts in `body` (after `[TOOL_CALLS]`):
/// `Ok(Some(at))`, `Ok(None)` when more text is needed, `Err(at)` when
/// the text is not a v11 call (up to `at`).
fn v11_args_start(body: &str) -> Result<Option<usize>, usize> {
    let b = body.as_bytes();
    let name = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
        .count();
    if name > MAX_NAME {
        return Err(name);
    }
    let mut at = name;
    for marker in ["[CALL_ID]", "[ARGS]"] {
        let rest = &body[at..];
        if rest.len() < marker.len() && marker.starts_with(rest) {
            return Ok(None);
        }
        if rest.starts_with(marker) {
            at += marker.len();
            if marker == "[CALL_ID]" {
                let id = body[at..]
                    .bytes()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
                    .count();
                if id > MAX_NAME {
                    return Err(at);
                }
                at += id;
            }
        }
    }
    match b.get(at) {
        None => Ok(None),
        Some(b'{') if name > 0 => Ok(Some(at)),
        Some(_) => Err(at.max(1)),
    }
}

impl TextCallFormat for Mistral {
    fn name(&self) -> &'static str {
        "mistral"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[StartPattern::Marker(TOOL_CALLS)]
    }
    fn find_end(&self, block: &str, _kind: usize, state: &mut EndState) -> End {
        let body = &block[TOOL_CALLS.len()..];
        let ws = body.len() - body.trim_start().len();
        let Some(&first) = body.as_bytes().get(ws) else {
            return End::More;
        };
        if matches!(first, b'[' | b'{') {
            return value_end(block, TOOL_CALLS.len(), false, state);
        }
        match v11_args_start(body) {
            Ok(Some(at)) => value_end(block, TOOL_CALLS.len() + at, false, state),
            Ok(None) => End::More,
            Err(at) => End::At(TOOL_CALLS.len() + at),
        }
    }
    fn parse_block(&self, block: &str, _kind: usize, closed: bool) -> Block {
        let body = &block[TOOL_CALLS.len()..];
        if !closed {
            return Block::Malformed(format!(
                "mistral: the call after [TOOL_CALLS] was cut by the end of the text: `{}`",
                excerpt(block)
            ));
        }
        let trimmed = body.trim_start();
        if trimmed.starts_with(['[', '{']) {
            return calls_from_json_text(trimmed, "the JSON after [TOOL_CALLS]", true);
        }
        match v11_args_start(body) {
            Ok(Some(at)) => {
                let name_len = body
                    .bytes()
                    .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
                    .count();
                let name = &body[..name_len];
                match leading_json(&body[at..]) {
                    Ok((value, _)) => match object_args(Some(&value)) {
                        Ok(args) => Block::Calls(vec![TextCall::new(name, args)], Vec::new()),
                        Err(e) => Block::Malformed(format!("mistral: call `{name}`: {e}")),
                    },
                    Err(e) => Block::Malformed(format!(
                        "mistral: the arguments of `{name}` are not valid JSON ({e}): `{}`",
                        excerpt(&body[at..])
                    )),
                }
            }
            _ => Block::Malformed(format!(
                "mistral: [TOOL_CALLS] is followed by neither a JSON list of calls nor `name{{arguments}}`: `{}`",
                excerpt(block)
            )),
        }
    }
}

/// IBM Granite 3.x / 4: `<|tool_call|>[{"name": …, "arguments": {…}}]`
/// (3.0), `<tool_call>[…]` (3.1 and later), or the bare JSON list.
#[derive(Debug, Default, Clone, Copy)]
pub struct Granite;

const GRANITE_MARK: &str = "<|tool_call|>";

impl TextCallFormat for Granite {
    fn name(&self) -> &'static str {
        "granite"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[
            StartPattern::Marker(GRANITE_MARK),
            StartPattern::Marker(TOOL_CALL),
            StartPattern::ObjectArray,
        ]
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        let from = [GRANITE_MARK.len(), TOOL_CALL.len(), 0][kind.min(2)];
        value_end(block, from, false, state)
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        let from = [GRANITE_MARK.len(), TOOL_CALL.len(), 0][kind.min(2)];
        if !closed {
            return Block::Malformed(format!(
                "granite: the call list was cut by the end of the text: `{}`",
                excerpt(block)
            ));
        }
        calls_from_json_text(&block[from..], "granite call list", kind < 2)
    }
}

/// Salesforce xLAM: a JSON list of `{"name", "arguments"}` objects, bare,
/// in a ```` ```json ```` block, after `[TOOL_CALLS]`, or inside
/// `<tool_call>…</tool_call>`; a single bare call object too.
#[derive(Debug, Default, Clone, Copy)]
pub struct Xlam;

const FENCE: &str = "```json";
const FENCE_END: &str = "```";

impl TextCallFormat for Xlam {
    fn name(&self) -> &'static str {
        "xlam"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[
            StartPattern::Marker(TOOL_CALLS),
            StartPattern::Marker(TOOL_CALL),
            StartPattern::Marker(FENCE),
            StartPattern::ObjectArray,
            StartPattern::NameObject,
        ]
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        match kind {
            0 => value_end(block, TOOL_CALLS.len(), false, state),
            1 => marker_end(block, TOOL_CALL.len(), TOOL_CALL_END, state),
            2 => marker_end(block, FENCE.len(), FENCE_END, state),
            _ => value_end(block, 0, false, state),
        }
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        if !closed {
            return Block::Malformed(format!(
                "xlam: the call list was cut by the end of the text: `{}`",
                excerpt(block)
            ));
        }
        match kind {
            0 => calls_from_json_text(
                &block[TOOL_CALLS.len()..],
                "the JSON after [TOOL_CALLS]",
                true,
            ),
            1 => calls_from_json_text(
                inner(block, TOOL_CALL, TOOL_CALL_END),
                "a <tool_call> block",
                true,
            ),
            // A fenced JSON block that is not a call list is an ordinary code block.
            2 => match serde_json::from_str::<Value>(inner(block, FENCE, FENCE_END).trim()) {
                Ok(v) => calls_from_value(&v),
                Err(_) => Block::NotCalls,
            },
            _ => calls_from_json_text(block, "xlam call list", false),
        }
    }
}
