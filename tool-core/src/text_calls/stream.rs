//! The parser: any [`TextCallFormat`] driven over text that arrives in
//! pieces, with the checks against the tool list. A whole text is one piece
//! ([`parse`]), so whole and streamed parses are the same code.

use serde_json::Value;
use tool_rules::suggest;

use super::auto::Auto;
use super::coerce::coerce;
use super::json_formats::{Granite, Hermes, Llama3Json, Mistral, Xlam};
use super::pythonic::Pythonic;
use super::read::excerpt;
use super::scan::{Start, find_one};
use super::token_formats::{DeepSeekV3, KimiK2};
use super::types::{Block, End, EndState, Parsed, Piece, TextCall, TextCallFormat, ToolSchema};
use super::xml_formats::{Glm45, Qwen3Coder};

/// Longest block of call markup read (bytes). A block still open past this
/// is released as text with a note, so a model that opens a marker and
/// never closes it holds back at most this much.
pub const MAX_BLOCK_BYTES: usize = 4 << 20;

/// Most notes kept per answer; later ones are counted in one last note.
pub const MAX_NOTES: usize = 32;

/// Longest run of whitespace held back (bytes): trailing whitespace is kept
/// until text follows it, so that whitespace around calls never becomes
/// content on its own.
const MAX_HELD_WHITESPACE: usize = 64 << 10;

/// The names [`format_named`] knows, as vLLM spells its parsers, `auto` last.
pub const FORMAT_NAMES: &[&str] = &[
    "hermes",
    "mistral",
    "llama3_json",
    "pythonic",
    "deepseek_v3",
    "qwen3_coder",
    "kimi_k2",
    "granite",
    "xlam",
    "glm45",
    "auto",
];

/// The format called `name` (one of [`FORMAT_NAMES`]).
///
/// # Errors
/// An unknown name: the message names the closest one (through
/// `tool_rules::suggest`) or lists them all.
pub fn format_named(name: &str) -> Result<&'static dyn TextCallFormat, String> {
    Ok(match name {
        "hermes" => &Hermes,
        "mistral" => &Mistral,
        "llama3_json" => &Llama3Json,
        "pythonic" => &Pythonic,
        "deepseek_v3" => &DeepSeekV3,
        "qwen3_coder" => &Qwen3Coder,
        "kimi_k2" => &KimiK2,
        "granite" => &Granite,
        "xlam" => &Xlam,
        "glm45" => &Glm45,
        "auto" => &Auto,
        other => {
            return Err(suggest::unknown_message(
                "text tool-call format",
                other,
                FORMAT_NAMES,
            ));
        }
    })
}

/// Reads `text` whole: the content around the calls, the calls, the notes.
/// `tools`, when given, checks call names and coerces argument types.
///
/// ```
/// use tool_core::text_calls::{format_named, parse};
///
/// let format = format_named("hermes").unwrap();
/// let out = parse(format, "Checking.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>", None);
/// assert_eq!(out.content, "Checking.");
/// assert_eq!(out.calls[0].name, "read_file");
/// assert_eq!(out.calls[0].arguments["path"], "a.txt");
/// assert!(out.notes.is_empty());
/// ```
pub fn parse(format: &dyn TextCallFormat, text: &str, tools: Option<&[ToolSchema]>) -> Parsed {
    let mut parser = StreamParser::new(format, tools.map(<[ToolSchema]>::to_vec));
    let mut pieces = parser.feed(text);
    pieces.extend(parser.finish());
    collect(pieces)
}

/// Gathers streamed pieces into a [`Parsed`].
pub fn collect(pieces: impl IntoIterator<Item = Piece>) -> Parsed {
    let mut out = Parsed::default();
    for p in pieces {
        match p {
            Piece::Text(t) => out.content.push_str(&t),
            Piece::Call(c) => out.calls.push(c),
            Piece::Note(n) => out.notes.push(n),
        }
    }
    out
}

/// What the last scan for one start pattern found (absolute offsets in the
/// buffer), so that each byte is scanned for each pattern about once.
#[derive(Debug, Clone, Copy, Default)]
struct Seen {
    /// Its next match, at or after the cursor when still valid.
    hit: Option<usize>,
    /// Where scanning resumes when there is no valid hit: the start of a
    /// match cut by the buffer's end, else the buffer's end when last scanned.
    resume: usize,
}

/// What is dropped from the text after a block of calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum AfterCalls {
    No,
    /// Whitespace, one `;`, whitespace.
    Separator,
    /// Whitespace (the `;` was seen).
    Whitespace,
}

#[derive(Debug)]
enum Mode {
    Text,
    Block { kind: usize, state: EndState },
}

/// A streamed parse: [`feed`](Self::feed) text as it arrives, then
/// [`finish`](Self::finish). Each call is yielded when its markup is
/// complete; text is yielded at once, except a tail that could be the start
/// of a marker (at most the longest marker, or 64 bytes of a bare pattern)
/// and trailing whitespace (at most 64 KiB); markup is never yielded as text
/// unless it proved malformed (then with a note). Memory: the open block, at
/// most [`MAX_BLOCK_BYTES`]. Time: linear in the input.
#[derive(Debug)]
pub struct StreamParser<'f> {
    format: &'f dyn TextCallFormat,
    tools: Option<Vec<ToolSchema>>,
    /// Unreleased input from `start` on (bytes before it are consumed and
    /// dropped at the end of each `feed`).
    buf: String,
    start: usize,
    seen: Vec<Seen>,
    mode: Mode,
    /// Whitespace after the last text yielded, held until more text comes.
    held: String,
    /// Some non-whitespace text was yielded (leading whitespace is dropped).
    spoke: bool,
    /// A block of calls just closed: a `;` separator (Llama 3) and the
    /// whitespace around it are dropped.
    after_calls: AfterCalls,
    notes: usize,
}

impl<'f> StreamParser<'f> {
    /// A parser for `format`, checking against `tools` when given.
    pub fn new(format: &'f dyn TextCallFormat, tools: Option<Vec<ToolSchema>>) -> Self {
        Self {
            format,
            tools,
            buf: String::new(),
            start: 0,
            seen: vec![Seen::default(); format.starts().len()],
            mode: Mode::Text,
            held: String::new(),
            spoke: false,
            after_calls: AfterCalls::No,
            notes: 0,
        }
    }

    /// The format being read.
    pub fn format(&self) -> &'f dyn TextCallFormat {
        self.format
    }

    /// Reads the next piece of text; returns what it completed.
    pub fn feed(&mut self, chunk: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        self.buf.push_str(chunk);
        loop {
            match &mut self.mode {
                Mode::Text => match self.next_start() {
                    Start::None => {
                        let text = self.take(self.buf.len());
                        self.text(&text, &mut out);
                        break;
                    }
                    Start::Maybe(pos) => {
                        let text = self.take(self.start + pos);
                        self.text(&text, &mut out);
                        break;
                    }
                    Start::At { pos, kind } => {
                        let text = self.take(self.start + pos);
                        self.text(&text, &mut out);
                        self.mode = Mode::Block {
                            kind,
                            state: EndState::default(),
                        };
                    }
                },
                Mode::Block { kind, state } => {
                    let kind = *kind;
                    let open = &self.buf[self.start..];
                    match self.format.find_end(open, kind, state) {
                        End::At(end) => {
                            let end = end.clamp(1, open.len());
                            let block = self.take(self.start + end);
                            self.mode = Mode::Text;
                            let read = self.format.parse_block(&block, kind, true);
                            self.block(&block, read, &mut out);
                        }
                        End::More if open.len() > MAX_BLOCK_BYTES => {
                            let block = self.take(self.buf.len());
                            self.mode = Mode::Text;
                            let note = format!(
                                "{}: call markup longer than {MAX_BLOCK_BYTES} bytes without an end; kept as text: `{}`",
                                self.format.name(),
                                excerpt(&block)
                            );
                            self.block(&block, Block::Malformed(note), &mut out);
                            break;
                        }
                        End::More => break,
                    }
                }
            }
        }
        self.compact();
        out
    }

    /// The text ended: reads what is held (an open block as unclosed).
    pub fn finish(&mut self) -> Vec<Piece> {
        let mut out = Vec::new();
        let rest = self.take(self.buf.len());
        self.compact();
        match std::mem::replace(&mut self.mode, Mode::Text) {
            Mode::Text => self.text(&rest, &mut out),
            Mode::Block { kind, .. } => {
                let read = self.format.parse_block(&rest, kind, false);
                self.block(&rest, read, &mut out);
            }
        }
        self.held.clear();
        out
    }

    /// The buffer from the cursor to the absolute offset `to`; the cursor moves there.
    fn take(&mut self, to: usize) -> String {
        let mut to = to.clamp(self.start, self.buf.len());
        // A format may end a malformed block one byte past where it stopped
        // reading; never inside a character.
        while !self.buf.is_char_boundary(to) {
            to += 1;
        }
        let s = self.buf[self.start..to].to_owned();
        self.start = to;
        s
    }

    /// Drops the consumed bytes, shifting the scan cache with them.
    fn compact(&mut self) {
        let n = self.start;
        if n == 0 {
            return;
        }
        self.buf.drain(..n);
        self.start = 0;
        for s in &mut self.seen {
            s.hit = s.hit.and_then(|h| h.checked_sub(n));
            s.resume = s.resume.saturating_sub(n);
        }
    }

    /// The earliest start pattern at or after the cursor (offsets relative to
    /// it), each pattern rescanned only from where its last scan stopped.
    fn next_start(&mut self) -> Start {
        let mut best: Option<(usize, usize)> = None;
        let mut maybe: Option<usize> = None;
        for (kind, pattern) in self.format.starts().iter().enumerate() {
            let seen = &mut self.seen[kind];
            if seen.hit.is_some_and(|h| h < self.start) {
                seen.hit = None;
            }
            if seen.hit.is_none() {
                let from = seen.resume.max(self.start).min(self.buf.len());
                let (at, partial) = find_one(&self.buf[from..], *pattern);
                seen.hit = at.map(|a| a + from);
                // After a hit, a later scan continues just past it (the
                // bytes after it were not all searched).
                seen.resume = match (at, partial) {
                    (Some(a), _) => a + from + 1,
                    (None, Some(p)) => p + from,
                    (None, None) => self.buf.len(),
                };
            }
            match seen.hit {
                Some(h) if best.is_none_or(|(b, _)| h < b) => best = Some((h, kind)),
                Some(_) => {}
                None if seen.resume < self.buf.len() && seen.resume >= self.start => {
                    maybe = Some(maybe.map_or(seen.resume, |m| m.min(seen.resume)));
                }
                None => {}
            }
        }
        let rel = |p: usize| p - self.start;
        match (best, maybe) {
            (Some((pos, _)), Some(m)) if m < pos => Start::Maybe(rel(m)),
            (Some((pos, kind)), _) => Start::At {
                pos: rel(pos),
                kind,
            },
            (None, Some(m)) => Start::Maybe(rel(m)),
            (None, None) => Start::None,
        }
    }

    /// Yields text, holding trailing whitespace (see [`StreamParser`]).
    fn text(&mut self, text: &str, out: &mut Vec<Piece>) {
        let mut text = text;
        if self.after_calls != AfterCalls::No {
            let mut t = text.trim_start();
            if self.after_calls == AfterCalls::Separator {
                if let Some(rest) = t.strip_prefix(';') {
                    self.after_calls = AfterCalls::Whitespace;
                    t = rest.trim_start();
                } else if !t.is_empty() {
                    self.after_calls = AfterCalls::No;
                }
            }
            if t.is_empty() {
                return;
            }
            self.after_calls = AfterCalls::No;
            text = t;
        }
        let body = text.trim_end();
        let trailing = &text[body.len()..];
        if !body.is_empty() {
            let body = if self.spoke { body } else { body.trim_start() };
            let mut piece = std::mem::take(&mut self.held);
            piece.push_str(body);
            if !piece.is_empty() {
                out.push(Piece::Text(piece));
                self.spoke = true;
            }
        }
        if self.spoke {
            self.held.push_str(trailing);
            if self.held.len() > MAX_HELD_WHITESPACE {
                out.push(Piece::Text(std::mem::take(&mut self.held)));
            }
        }
    }

    fn block(&mut self, raw: &str, read: Block, out: &mut Vec<Piece>) {
        match read {
            Block::Calls(calls, notes) => {
                for c in calls {
                    let c = self.checked(c, out);
                    out.push(Piece::Call(c));
                }
                for n in notes {
                    self.note(n, out);
                }
                self.after_calls = AfterCalls::Separator;
            }
            Block::NotCalls => self.text(raw, out),
            Block::Malformed(note) => {
                self.text(raw, out);
                self.note(format!("{note}; it was not run"), out);
            }
        }
    }

    fn note(&mut self, note: String, out: &mut Vec<Piece>) {
        self.notes += 1;
        if self.notes <= MAX_NOTES {
            out.push(Piece::Note(note));
        } else if self.notes == MAX_NOTES + 1 {
            out.push(Piece::Note(format!(
                "more than {MAX_NOTES} notes; the rest are left out"
            )));
        }
    }

    /// Checks a call against the tools: coerces its arguments, notes an unknown name.
    fn checked(&mut self, mut call: TextCall, out: &mut Vec<Piece>) -> TextCall {
        let Some(tools) = &self.tools else {
            return call;
        };
        match tools.iter().find(|t| t.name == call.name) {
            Some(tool) => coerce(&mut call.arguments, &tool.parameters),
            None => {
                let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
                let close = suggest::ranked(&call.name, names.iter().copied(), 3);
                let hint = if close.is_empty() {
                    String::new()
                } else {
                    format!("; did you mean {}?", suggest::one_of(&close))
                };
                let note = format!(
                    "`{}` is not one of the tools offered{hint} (the call is kept as written)",
                    call.name
                );
                self.note(note, out);
            }
        }
        call
    }
}

/// The tools of a JSON array of canonical schemas (`[{"name", "description",
/// "parameters"}]`), as `tool parse --tools` reads them.
///
/// # Errors
/// Not an array of objects with a string `name`: the message says which item.
pub fn tools_from_json(value: &Value) -> Result<Vec<ToolSchema>, String> {
    let Value::Array(items) = value else {
        return Err("the tool list must be a JSON array of {\"name\", \"description\", \"parameters\"} objects".to_owned());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            serde_json::from_value::<ToolSchema>(item.clone())
                .map_err(|e| format!("tool {i} of the list: {e}"))
        })
        .collect()
}
