//! `auto`: every format at once (see [`Auto`]).

use super::json_formats::{Granite, Hermes, Llama3Json, Mistral, Xlam};
use super::pythonic::Pythonic;
use super::scan::StartPattern;
use super::token_formats::{DeepSeekV3, KimiK2};
use super::types::{Block, End, EndState, TextCallFormat};
use super::xml_formats::{Qwen3Coder, glm_call, qwen3_functions};

/// `auto`: every format's markers at once, the format chosen per block.
///
/// The confidence rule: a marker that belongs to one format (`DeepSeek`'s and
/// Kimi's tokens, `[TOOL_CALLS]`, `<|tool_call|>`, `<|python_start|>`,
/// `<|python_tag|>`, `<function=`) is certain; `<tool_call>`, shared by
/// several, is read by what follows it (JSON → `hermes`, `<function=` →
/// `qwen3_coder`, a name → `glm45`); a bare shape with no marker (a
/// `{"name": …}` object, a `[{…}]` list, a `[f(…)]` list, a ```` ```json ````
/// block) counts only when it reads completely as calls, and otherwise stays
/// text with no note, since prose and code hold such shapes too.
#[derive(Debug, Default, Clone, Copy)]
pub struct Auto;

/// Which format reads a block that a pattern of [`PATTERNS`] started.
#[derive(Debug, Clone, Copy)]
enum Reader {
    /// The format and its own pattern number; `bare`: no marker, so a
    /// failed read is text.
    Format(&'static dyn TextCallFormat, usize, bool),
    /// `<tool_call>`: read by what follows.
    SharedToolCall,
}

const PATTERNS: &[StartPattern] = &[
    StartPattern::Marker("<｜tool▁calls▁begin｜>"),
    StartPattern::Marker("<｜tool▁call▁begin｜>"),
    StartPattern::Marker("<|tool_calls_section_begin|>"),
    StartPattern::Marker("<|tool_call_section_begin|>"),
    StartPattern::Marker("[TOOL_CALLS]"),
    StartPattern::Marker("<|tool_call|>"),
    StartPattern::Marker("<|python_start|>"),
    StartPattern::Marker("<|python_tag|>"),
    StartPattern::Marker("<tool_call>"),
    StartPattern::Marker("<function="),
    StartPattern::Marker("```json"),
    StartPattern::NameObject,
    StartPattern::ObjectArray,
    StartPattern::CallList,
];

const READERS: &[Reader] = &[
    Reader::Format(&DeepSeekV3, 0, false),
    Reader::Format(&DeepSeekV3, 1, false),
    Reader::Format(&KimiK2, 0, false),
    Reader::Format(&KimiK2, 1, false),
    Reader::Format(&Mistral, 0, false),
    Reader::Format(&Granite, 0, false),
    Reader::Format(&Pythonic, 0, false),
    Reader::Format(&Llama3Json, 0, false),
    Reader::SharedToolCall,
    Reader::Format(&Qwen3Coder, 1, false),
    Reader::Format(&Xlam, 2, true),
    Reader::Format(&Llama3Json, 1, true),
    Reader::Format(&Xlam, 3, true),
    Reader::Format(&Pythonic, 1, true),
];

impl Auto {
    fn reader(kind: usize) -> Reader {
        READERS.get(kind).copied().unwrap_or(Reader::SharedToolCall)
    }
}

impl TextCallFormat for Auto {
    fn name(&self) -> &'static str {
        "auto"
    }
    fn starts(&self) -> &'static [StartPattern] {
        PATTERNS
    }
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End {
        match Self::reader(kind) {
            Reader::Format(f, k, _) => f.find_end(block, k, state),
            Reader::SharedToolCall => Hermes.find_end(block, 0, state),
        }
    }
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block {
        match Self::reader(kind) {
            Reader::Format(f, k, bare) => match f.parse_block(block, k, closed) {
                Block::Malformed(_) if bare => Block::NotCalls,
                other => other,
            },
            Reader::SharedToolCall => {
                let body = block.strip_prefix("<tool_call>").unwrap_or(block);
                let body = body.strip_suffix("</tool_call>").unwrap_or(body);
                let t = body.trim_start();
                if t.starts_with(['{', '[']) || !closed {
                    Hermes.parse_block(block, 0, closed)
                } else if t.starts_with("<function=") {
                    qwen3_functions(body)
                } else {
                    glm_call(body)
                }
            }
        }
    }
}
