//! The shapes every format shares: a call read from text, what a whole
//! parse returns, the pieces a streamed parse yields, the tool schemas used
//! for checking, and the [`TextCallFormat`] trait each format implements.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::scan::{StartPattern, ValueEnd};

/// One tool call read from a model's text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TextCall {
    /// The tool's name as the model wrote it.
    pub name: String,
    /// The arguments: always a JSON object (`{}` when the model wrote none).
    pub arguments: Map<String, Value>,
    /// The call's id when the format carries one (Kimi K2's
    /// `functions.NAME:N`); not part of `tool parse`'s output.
    #[serde(skip)]
    pub id: Option<String>,
}

impl TextCall {
    /// A call with no id.
    pub fn new(name: impl Into<String>, arguments: Map<String, Value>) -> Self {
        Self {
            name: name.into(),
            arguments,
            id: None,
        }
    }
}

/// What [`parse`](super::parse) returns for a whole text: the shape `tool
/// parse` prints.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Parsed {
    /// The text around the calls, markup removed, trimmed at both ends
    /// (empty for a text made only of calls). Malformed markup stays here, as written.
    pub content: String,
    /// The calls, in the order written.
    pub calls: Vec<TextCall>,
    /// Model-readable notes: malformed markup, calls to unknown tools,
    /// markup cut by the end of the text. Empty when all was well-formed.
    pub notes: Vec<String>,
}

/// What a streamed parse yields, in text order.
#[derive(Debug, Clone, PartialEq)]
pub enum Piece {
    /// Text for the user (never part of call markup).
    Text(String),
    /// A complete call.
    Call(TextCall),
    /// A note (see [`Parsed::notes`]).
    Note(String),
}

/// A tool as `tool parse --tools` and the agent know it: the canonical
/// `{"name", "description", "parameters"}` shape, `parameters` a JSON Schema
/// object. Used to check call names and to coerce argument types.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSchema {
    /// The tool's name.
    pub name: String,
    /// What it does (rendered into prompts).
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (`{"type": "object", "properties": …}`).
    #[serde(default = "empty_object")]
    pub parameters: Value,
}

fn empty_object() -> Value {
    Value::Object(Map::new())
}

/// How a block of markup read.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    /// Calls (possibly none), with notes about parts that were not well-formed.
    Calls(Vec<TextCall>, Vec<String>),
    /// Not call markup after all (a bare JSON object that is not a call):
    /// the text stays content, with no note.
    NotCalls,
    /// Markup that could not be read: the text stays content, with this note.
    Malformed(String),
}

/// Where the end of a block is, as [`TextCallFormat::find_end`] reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum End {
    /// The block ends before this byte offset.
    At(usize),
    /// Not yet: more text is needed.
    More,
}

/// A format's scanning state for the block being read (kept by the parser
/// between chunks, fresh for each block).
#[derive(Debug, Default, Clone)]
pub struct EndState {
    /// Bytes of the block already searched for an end marker.
    pub searched: usize,
    /// The bracketed-value scanner, for formats whose block is a JSON value.
    pub value: Option<ValueEnd>,
    /// Values read so far (Llama 3 JSON's `;`-separated calls).
    pub count: usize,
}

/// One text tool-call format: how its markup starts, where a block ends,
/// and how a block reads as calls. The streamed parser
/// ([`StreamParser`](super::StreamParser)) drives any format the same way, so
/// whole and streamed parses agree by construction.
pub trait TextCallFormat: Send + Sync + std::fmt::Debug {
    /// The format's name as vLLM spells its parser (`hermes`, `mistral`, …).
    fn name(&self) -> &'static str;

    /// The patterns that start a block; a pattern's index is its `kind`.
    fn starts(&self) -> &'static [StartPattern];

    /// Where the block that pattern `kind` started ends in `block` (which
    /// begins at the pattern).
    fn find_end(&self, block: &str, kind: usize, state: &mut EndState) -> End;

    /// Reads a block. `closed` is false when the text ended before the block's
    /// end (the format decides whether what came is usable).
    fn parse_block(&self, block: &str, kind: usize, closed: bool) -> Block;
}
