//! Formats built from the models' own special tokens: `DeepSeek` V3 / V3.1
//! (`deepseek_v3`) and Kimi K2 (`kimi_k2`).

use super::read::{excerpt, leading_json, marker_end, object_args, unclosed};
use super::scan::StartPattern;
use super::types::{Block, End, EndState, TextCall, TextCallFormat};

const DS_CALLS: &str = "<｜tool▁calls▁begin｜>";
const DS_CALLS_END: &str = "<｜tool▁calls▁end｜>";
const DS_CALL: &str = "<｜tool▁call▁begin｜>";
const DS_CALL_END: &str = "<｜tool▁call▁end｜>";
const DS_SEP: &str = "<｜tool▁sep｜>";

/// The pieces between each `begin` and `end` of `body`; an unended last one is
/// reported as `Err` with its text.
fn segments<'a>(body: &'a str, begin: &str, end: &str) -> Vec<Result<&'a str, &'a str>> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(at) = rest.find(begin) {
        let after = &rest[at + begin.len()..];
        match after.find(end) {
            Some(e) => {
                out.push(Ok(&after[..e]));
                rest = &after[e + end.len()..];
            }
            None => {
                out.push(Err(after));
                break;
            }
        }
    }
    out
}

/// Arguments JSON of a call named `name`.
fn args_call(format: &str, name: &str, args: &str) -> Result<TextCall, String> {
    let name = name.trim();
    if name.is_empty() {
        return Err(format!("{format}: a call with an empty name"));
    }
    let args = args.trim();
    let value = if args.is_empty() {
        None
    } else {
        match leading_json(args) {
            Ok((v, _)) => Some(v),
            Err(e) => {
                return Err(format!(
                    "{format}: the arguments of `{name}` are not valid JSON ({e}): `{}`",
                    excerpt(args)
                ));
            }
        }
    };
    object_args(value.as_ref())
        .map(|a| TextCall::new(name, a))
        .map_err(|e| format!("{format}: call `{name}`: {e}"))
}

/// Reads a list of segments into calls and notes.
fn collect(
    format: &str,
    segs: Vec<Result<&str, &str>>,
    read: impl Fn(&str) -> Result<TextCall, String>,
) -> Block {
    let mut calls = Vec::new();
    let mut notes = Vec::new();
    for seg in segs {
        match seg {
            Ok(s) => match read(s) {
                Ok(c) => calls.push(c),
                Err(e) => notes.push(e),
            },
            Err(s) => notes.push(format!("{format}: a call was not closed: `{}`", excerpt(s))),
        }
    }
    if calls.is_empty() {
        if notes.is_empty() {
            notes.push(format!("{format}: a tool-call section with no call in it"));
        }
        return Block::Malformed(notes.join("; "));
    }
    Block::Calls(calls, notes)
}

/// `DeepSeek` V3 / R1: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME`
/// then the arguments in a ```` ```json ```` block, `<｜tool▁call▁end｜>` …
/// `<｜tool▁calls▁end｜>`; V3.1: `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>`.
#[derive(Debug, Default, Clone, Copy)]
pub struct DeepSeekV3;

fn deepseek_call(seg: &str) -> Result<TextCall, String> {
    let Some((head, tail)) = seg.split_once(DS_SEP) else {
        return Err(format!(
            "deepseek_v3: a call without `<｜tool▁sep｜>`: `{}`",
            excerpt(seg)
        ));
    };
    if let Some(fence) = tail.find("```json") {
        // V3: type before the separator, then the name, then a fenced JSON block.
        let name = tail[..fence].trim();
        let json = &tail[fence + "```json".len()..];
        let json = json.rfind("```").map_or(json, |e| &json[..e]);
        return args_call("deepseek_v3", name, json);
    }
    args_call("deepseek_v3", head, tail)
}

impl TextCallFormat for DeepSeekV3 {
    fn name(&self) -> &'static str {
        "deepseek_v3"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[
            StartPattern::Marker(DS_CALLS),
            StartPattern::Marker(DS_CALL),
        ]
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        if kind == 0 {
            marker_end(block, DS_CALLS.len(), DS_CALLS_END, state)
        } else {
            marker_end(block, DS_CALL.len(), DS_CALL_END, state)
        }
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        if !closed {
            let end = if kind == 0 { DS_CALLS_END } else { DS_CALL_END };
            return Block::Malformed(unclosed("deepseek_v3", end, block));
        }
        collect(
            "deepseek_v3",
            segments(block, DS_CALL, DS_CALL_END),
            deepseek_call,
        )
    }
}

const KIMI_SECTION: &str = "<|tool_calls_section_begin|>";
const KIMI_SECTION_END: &str = "<|tool_calls_section_end|>";
const KIMI_SECTION_1: &str = "<|tool_call_section_begin|>";
const KIMI_SECTION_1_END: &str = "<|tool_call_section_end|>";
const KIMI_CALL: &str = "<|tool_call_begin|>";
const KIMI_CALL_END: &str = "<|tool_call_end|>";
const KIMI_ARGS: &str = "<|tool_call_argument_begin|>";

/// Kimi K2: `<|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{…}<|tool_call_end|>…<|tool_calls_section_end|>`
/// (the singular `tool_call_section` spelling too). The call id
/// (`functions.NAME:N`) is kept in [`TextCall::id`].
#[derive(Debug, Default, Clone, Copy)]
pub struct KimiK2;

fn kimi_call(seg: &str) -> Result<TextCall, String> {
    let Some((id, args)) = seg.split_once(KIMI_ARGS) else {
        return Err(format!(
            "kimi_k2: a call without `<|tool_call_argument_begin|>`: `{}`",
            excerpt(seg)
        ));
    };
    let id = id.trim();
    let name = id.strip_prefix("functions.").unwrap_or(id);
    let name = match name.rsplit_once(':') {
        Some((n, idx)) if idx.bytes().all(|b| b.is_ascii_digit()) => n,
        _ => name,
    };
    let mut call = args_call("kimi_k2", name, args)?;
    call.id = Some(id.to_owned());
    Ok(call)
}

impl TextCallFormat for KimiK2 {
    fn name(&self) -> &'static str {
        "kimi_k2"
    }
    fn starts(&self) -> &'static [StartPattern] {
        &[
            StartPattern::Marker(KIMI_SECTION),
            StartPattern::Marker(KIMI_SECTION_1),
        ]
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        if kind == 0 {
            marker_end(block, KIMI_SECTION.len(), KIMI_SECTION_END, state)
        } else {
            marker_end(block, KIMI_SECTION_1.len(), KIMI_SECTION_1_END, state)
        }
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        if !closed {
            let end = if kind == 0 {
                KIMI_SECTION_END
            } else {
                KIMI_SECTION_1_END
            };
            return Block::Malformed(unclosed("kimi_k2", end, block));
        }
        collect(
            "kimi_k2",
            segments(block, KIMI_CALL, KIMI_CALL_END),
            kimi_call,
        )
    }
}
