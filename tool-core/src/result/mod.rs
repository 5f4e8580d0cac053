//! [`ToolResult`]: what a tool call returns to the agent loop.

pub(crate) mod image_file;
pub(crate) mod into_result;
pub mod meta;

pub use image_file::ImageFileError;

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The outcome of one tool call, as the agent loop and the model see it.
///
/// A result is either a success (`error` is `None`) or a failure carrying a
/// [`ToolError`]; in both cases `output` may hold text (partial output on
/// failure is allowed and kept).
///
/// Two-layer memory: the first time a result is rendered into a conversation
/// the model sees `output` in full; when [`include_output_only_once`](Self::include_output_only_once)
/// is set, later renderings show only [`long_term_memory`](Self::long_term_memory)
/// (a short summary), which keeps large extractions from filling the context
/// window turn after turn.
///
/// Notes: when the framework or a tool changed what the model sent (an
/// argument repaired, an edit made by the person approving the call, a lenient
/// match), it says so in [`notes`](Self::notes) ([`with_note`](Self::with_note)).
/// Every rendering the model sees ([`model_text`](Self::model_text), so every
/// provider's result message and the MCP result) ends with one line
/// `Note: <text>` per note, after the output and any error, so the model
/// learns that its input was read differently from how it wrote it.
///
/// Serialises to JSON with every field present (`null`/empty where unset), so
/// hosts in other languages can read it without special cases.
///
/// ```
/// use tool_core::{ToolResult, ErrorKind};
///
/// let ok = ToolResult::ok("3 notes found")
///     .with_title("search_notes")
///     .with_long_term_memory("searched notes for 'rust'")
///     .with_metadata("count", 3);
/// assert!(ok.is_ok());
/// assert_eq!(ok.metadata["count"], 3);
///
/// let err = ToolResult::error(ErrorKind::InvalidArguments, "`limit` must be positive");
/// assert_eq!(err.error.as_ref().unwrap().kind, ErrorKind::InvalidArguments);
///
/// let noted = ToolResult::ok("line 1")
///     .with_note("argument `limit` was given as the string \"5\" and read as the number 5");
/// assert_eq!(
///     noted.model_text(),
///     "line 1\n\nNote: argument `limit` was given as the string \"5\" and read as the number 5"
/// );
/// assert_eq!(noted.output, "line 1", "the output itself is unchanged");
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ToolResult {
    /// Short human-readable title for UIs (e.g. the file that was read).
    /// Sent to the model only in the [`MemoryLayout::Summary`] layout, as a
    /// `# title` line.
    pub title: Option<String>,
    /// The text the model sees. Empty when the tool produced nothing.
    pub output: String,
    /// A short summary that replaces `output` on later turns when
    /// `include_output_only_once` is set (and is kept in long-term memory).
    pub long_term_memory: Option<String>,
    /// Render `output` only on the turn it was produced; afterwards render
    /// `long_term_memory` instead. Default `false`.
    pub include_output_only_once: bool,
    /// `Some` when the call failed. The model sees the message.
    pub error: Option<ToolError>,
    /// Images for the model (e.g. a screenshot), in order.
    pub images: Vec<Image>,
    /// Files produced by the tool (e.g. a spilled full output), in order.
    pub attachments: Vec<Attachment>,
    /// Free-form structured data for the host (diffs, counts, notes from the
    /// pipeline such as `ignored_hidden_params`). Not sent to the model by default.
    pub metadata: Map<String, Value>,
    /// Model-visible notes on how the input was changed or read (see the type
    /// docs), in the order they were added; each one line of at most
    /// [`NOTE_LIMIT`] characters. Rendered after the output as `Note: <text>`
    /// lines, at most [`NOTES_SHOWN`] of them.
    pub notes: Vec<String>,
    /// How the output and the long-term memory are laid out for the model
    /// ([`MemoryLayout`]); [`with_summary`](Self::with_summary) sets
    /// [`MemoryLayout::Summary`]. Serialised only when not the default.
    #[serde(skip_serializing_if = "MemoryLayout::is_plain")]
    pub memory_layout: MemoryLayout,
}

/// How a result's output and [`long_term_memory`](ToolResult::long_term_memory)
/// reach the model (the two-layer memory). Either way, errors are shown in
/// full on every turn and the notes follow the text.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum MemoryLayout {
    /// The output alone on its turn; on later turns the memory alone when
    /// the output is shown once. The default, and what the built-in tools
    /// use: their memories are written for later turns ("shown on an
    /// earlier turn …").
    #[default]
    Plain,
    /// The design's history layout (000 对话历史示例): on its turn `# {title}`
    /// (when there is a title), the output and `Summary: {memory}`, blank
    /// lines between; on later turns only `Summary: {memory}` when the
    /// output is shown once. Without a memory it is [`Plain`](Self::Plain).
    Summary,
}

impl MemoryLayout {
    /// `true` for [`Plain`](Self::Plain) (serde's `skip_serializing_if`).
    #[allow(
        clippy::trivially_copy_pass_by_ref,
        reason = "serde's skip_serializing_if passes a reference"
    )]
    pub fn is_plain(&self) -> bool {
        *self == Self::Plain
    }
}

/// The prefix of the memory line in the [`MemoryLayout::Summary`] layout.
pub const SUMMARY_PREFIX: &str = "Summary: ";

/// Longest note kept by [`ToolResult::with_note`], in characters; a longer one is cut and ends with `…`.
pub const NOTE_LIMIT: usize = 300;

/// Most notes rendered for the model; beyond it one line says how many more were left out.
pub const NOTES_SHOWN: usize = 8;

impl ToolResult {
    /// A successful result whose model-visible text is `output`.
    pub fn ok(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            ..Self::default()
        }
    }

    /// A failed result of the given kind; `message` is what the model reads,
    /// so say what was wrong and how to fix it.
    pub fn error(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            error: Some(ToolError::new(kind, message)),
            ..Self::default()
        }
    }

    /// A failed result of kind [`ErrorKind::Failed`] (the tool ran and reported failure).
    pub fn failed(message: impl Into<String>) -> Self {
        Self::error(ErrorKind::Failed, message)
    }

    /// `true` when the call succeeded (`error` is `None`).
    pub fn is_ok(&self) -> bool {
        self.error.is_none()
    }

    /// The exit status of the command a command tool ran (`bash_command`,
    /// and `job_output` for a finished background job), read from
    /// `metadata["exit_code"]` ([`meta::EXIT_CODE`]): `Some(0)` for success,
    /// `Some(n)` for a command that exited with `n`. `None` when the tool runs
    /// no command, the command is still running, or a signal ended it (the
    /// signal is in the output), and for a value outside `i32`.
    ///
    /// ```
    /// use tool_core::{meta, ToolResult};
    ///
    /// let r = ToolResult::ok("").with_metadata(meta::EXIT_CODE, 2);
    /// assert_eq!(r.exit_code(), Some(2));
    /// assert_eq!(ToolResult::ok("").exit_code(), None);
    /// ```
    pub fn exit_code(&self) -> Option<i32> {
        self.metadata
            .get(meta::EXIT_CODE)
            .and_then(Value::as_i64)
            .and_then(|n| i32::try_from(n).ok())
    }

    /// `true` when the call failed.
    pub fn is_error(&self) -> bool {
        self.error.is_some()
    }

    /// Sets the UI title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Replaces the model-visible output (kept on error results as partial output).
    #[must_use]
    pub fn with_output(mut self, output: impl Into<String>) -> Self {
        self.output = output.into();
        self
    }

    /// Sets the long-term memory summary (see the type docs on two-layer memory).
    #[must_use]
    pub fn with_long_term_memory(mut self, memory: impl Into<String>) -> Self {
        self.long_term_memory = Some(memory.into());
        self
    }

    /// Marks the output as shown once: later turns see only `long_term_memory`.
    #[must_use]
    pub fn output_once(mut self) -> Self {
        self.include_output_only_once = true;
        self
    }

    /// The design's two-layer memory in one step: `summary` becomes the
    /// long-term memory, the output is shown once, and the layout is
    /// [`MemoryLayout::Summary`]: on its turn the model reads `# title`
    /// (when [`with_title`](Self::with_title) set one), the output and
    /// `Summary: {summary}`; on later turns only `Summary: {summary}`.
    ///
    /// ```
    /// use tool_core::{Rendering, ToolResult};
    ///
    /// let r = ToolResult::ok("<10 000 chars of page data>")
    ///     .with_title("Extracted page data")
    ///     .with_summary("Extracted 10000 chars from amazon.com");
    /// assert_eq!(
    ///     r.render(Rendering::First),
    ///     "# Extracted page data\n\n<10 000 chars of page data>\n\nSummary: Extracted 10000 chars from amazon.com"
    /// );
    /// assert_eq!(r.render(Rendering::Later), "Summary: Extracted 10000 chars from amazon.com");
    /// ```
    #[must_use]
    pub fn with_summary(mut self, summary: impl Into<String>) -> Self {
        self.long_term_memory = Some(summary.into());
        self.include_output_only_once = true;
        self.memory_layout = MemoryLayout::Summary;
        self
    }

    /// Appends an image.
    #[must_use]
    pub fn with_image(mut self, image: Image) -> Self {
        self.images.push(image);
        self
    }

    /// Appends an attachment.
    #[must_use]
    pub fn with_attachment(mut self, attachment: Attachment) -> Self {
        self.attachments.push(attachment);
        self
    }

    /// Sets `metadata[key]` to `value` (anything convertible to JSON), replacing an earlier value.
    ///
    /// `key` is a [`MetaKey`](meta::MetaKey): a [`meta`] constant, or
    /// [`MetaKey::custom`](meta::MetaKey::custom) for a key of the tool's own
    /// (a string literal or a `String` also converts).
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<meta::MetaKey>, value: impl Into<Value>) -> Self {
        self.metadata.insert(key.into().into_string(), value.into());
        self
    }

    /// Adds a model-visible note saying how the input was changed or read,
    /// e.g. ``argument `limit` was given as the string "5" and read as the number 5``.
    /// Write it as a short clause without the `Note:` prefix (the rendering adds
    /// it). Line breaks and runs of white space become one space; the note is
    /// cut to [`NOTE_LIMIT`] characters; an empty note is ignored.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.add_note(note);
        self
    }

    /// [`with_note`](Self::with_note) through a reference, for code that holds
    /// a result it does not own (the execution pipeline, a host's hook).
    pub fn add_note(&mut self, note: impl Into<String>) {
        let note = one_line(&note.into());
        if !note.is_empty() {
            self.notes.push(note);
        }
    }

    /// The notes as rendered for the model: one `Note: <text>` line each (at
    /// most [`NOTES_SHOWN`], then one line counting the rest), joined by `\n`;
    /// `None` when there are none.
    pub fn notes_text(&self) -> Option<String> {
        if self.notes.is_empty() {
            return None;
        }
        let mut lines: Vec<String> = self
            .notes
            .iter()
            .take(NOTES_SHOWN)
            .map(|n| format!("Note: {n}"))
            .collect();
        let rest = self.notes.len().saturating_sub(NOTES_SHOWN);
        if rest > 0 {
            lines.push(format!(
                "Note: {rest} more change{} to the input not listed here.",
                if rest == 1 { "" } else { "s" }
            ));
        }
        Some(lines.join("\n"))
    }

    /// `text` followed by the [notes](Self::notes_text), after a blank line
    /// (or the notes alone when `text` is empty).
    pub fn with_notes_after(&self, text: String) -> String {
        match self.notes_text() {
            None => text,
            Some(notes) if text.is_empty() => notes,
            Some(notes) => format!("{text}\n\n{notes}"),
        }
    }

    /// The text a model should see for this result on the turn it was produced:
    /// the output, for a failure the error message after any partial output,
    /// then the [notes](Self::notes_text).
    ///
    /// In the [`MemoryLayout::Summary`] layout with a memory, the text is
    /// `# {title}` (when set), that text and `Summary: {memory}`, blank lines between.
    pub fn model_text(&self) -> String {
        let text = match &self.error {
            None => self.output.clone(),
            Some(e) if self.output.is_empty() => format!("Error: {}", e.message),
            Some(e) => format!("{}\n\nError: {}", self.output, e.message),
        };
        let text = match (&self.long_term_memory, self.memory_layout) {
            (Some(memory), MemoryLayout::Summary) => {
                let mut parts = Vec::with_capacity(3);
                if let Some(title) = &self.title {
                    parts.push(format!("# {title}"));
                }
                if !text.is_empty() {
                    parts.push(text);
                }
                parts.push(format!("{SUMMARY_PREFIX}{memory}"));
                parts.join("\n\n")
            }
            _ => text,
        };
        self.with_notes_after(text)
    }
}

/// `text` on one line (white-space runs → one space, trimmed), cut to [`NOTE_LIMIT`] characters.
fn one_line(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match joined.char_indices().nth(NOTE_LIMIT) {
        None => joined,
        Some((cut, _)) => {
            let mut s = joined[..cut].trim_end().to_owned();
            s.push('…');
            s
        }
    }
}

/// Why a tool call failed: a machine-readable [`ErrorKind`] and a message for the model.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolError {
    /// The class of failure, for hosts that retry or re-plan by kind.
    pub kind: ErrorKind,
    /// Model-readable explanation: what was wrong and what to do instead.
    pub message: String,
}

impl ToolError {
    /// Builds an error of `kind` with `message`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
        }
    }
}

impl fmt::Display for ToolError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

impl std::error::Error for ToolError {}

/// Classes of tool-call failure. Serialised in `snake_case` (`"invalid_arguments"`).
///
/// Non-exhaustive: match with a wildcard arm; new kinds arrive with new pipeline stages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// The arguments were not valid JSON, had a wrong type, missed a required
    /// parameter or named an unknown one. The model should correct and retry.
    InvalidArguments,
    /// No tool of that name is registered.
    UnknownTool,
    /// A person or policy refused the call.
    Denied,
    /// The call ran past its timeout and was cancelled.
    Timeout,
    /// The tool panicked; the panic was contained.
    Panicked,
    /// The call was cancelled through the context's cancellation token.
    Cancelled,
    /// A value the framework should have supplied (context value, state, secret) is missing.
    MissingContext,
    /// The tool ran and reported a failure.
    Failed,
}

impl ErrorKind {
    /// The `snake_case` name, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::InvalidArguments => "invalid_arguments",
            Self::UnknownTool => "unknown_tool",
            Self::Denied => "denied",
            Self::Timeout => "timeout",
            Self::Panicked => "panicked",
            Self::Cancelled => "cancelled",
            Self::MissingContext => "missing_context",
            Self::Failed => "failed",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An image returned to the model, base64-encoded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// IANA media type, e.g. `image/png`.
    pub media_type: String,
    /// Standard base64 (RFC 4648 §4, with padding) of the image bytes.
    pub data: String,
    /// The file the image was read from, when there is one: named in the
    /// note that replaces an image a provider's size limit keeps out
    /// (`tool_core::format::render_result`). `None` for a composed image.
    #[serde(default)]
    pub path: Option<String>,
}

impl Image {
    /// An image from its media type and base64 data.
    pub fn new(media_type: impl Into<String>, base64_data: impl Into<String>) -> Self {
        Self {
            media_type: media_type.into(),
            data: base64_data.into(),
            path: None,
        }
    }

    /// Records the file the image was read from.
    #[must_use]
    pub fn with_path(mut self, path: impl Into<String>) -> Self {
        self.path = Some(path.into());
        self
    }
}

/// A file produced by a tool: by path on disk, or inline (base64).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Attachment {
    /// Display name, e.g. `output.log`.
    pub name: String,
    /// IANA media type; `application/octet-stream` when unknown.
    pub media_type: String,
    /// Absolute path of the file, when it lives on disk.
    pub path: Option<String>,
    /// Standard base64 of the content, when carried inline.
    pub data: Option<String>,
}

impl Attachment {
    /// An attachment that refers to a file on disk.
    pub fn file(
        name: impl Into<String>,
        media_type: impl Into<String>,
        path: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            media_type: media_type.into(),
            path: Some(path.into()),
            data: None,
        }
    }

    /// An attachment carried inline as base64.
    pub fn inline(
        name: impl Into<String>,
        media_type: impl Into<String>,
        base64_data: impl Into<String>,
    ) -> Self {
        Self {
            name: name.into(),
            media_type: media_type.into(),
            path: None,
            data: Some(base64_data.into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_round_trip_keeps_every_field() {
        let r = ToolResult::ok("out")
            .with_title("t")
            .with_long_term_memory("mem")
            .output_once()
            .with_image(Image::new("image/png", "AAAA"))
            .with_attachment(Attachment::file("a.log", "text/plain", "/tmp/a.log"))
            .with_metadata("n", 2)
            .with_note("argument `n` was read as 2");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(
            v["notes"],
            serde_json::json!(["argument `n` was read as 2"])
        );
        assert_eq!(v["include_output_only_once"], true);
        assert_eq!(v["error"], Value::Null);
        let back: ToolResult = serde_json::from_value(v).unwrap();
        assert_eq!(back, r);
    }

    #[test]
    fn error_kind_serialises_snake_case() {
        let r = ToolResult::error(ErrorKind::InvalidArguments, "bad");
        let v = serde_json::to_value(&r).unwrap();
        assert_eq!(v["error"]["kind"], "invalid_arguments");
        assert_eq!(r.model_text(), "Error: bad");
        let partial = r.with_output("partial");
        assert_eq!(partial.model_text(), "partial\n\nError: bad");
    }

    #[test]
    fn notes_are_one_line_each_after_output_and_error() {
        let r = ToolResult::ok("out").with_note("first\n  second\tline");
        assert_eq!(r.notes, ["first second line"]);
        assert_eq!(r.model_text(), "out\n\nNote: first second line");
        assert_eq!(
            ToolResult::ok("").with_note("n").model_text(),
            "Note: n",
            "no blank line before notes when there is no output"
        );
        let e = ToolResult::failed("bad")
            .with_output("partial")
            .with_note("a")
            .with_note("b");
        assert_eq!(e.model_text(), "partial\n\nError: bad\n\nNote: a\nNote: b");
        assert_eq!(ToolResult::ok("x").with_note("  \n ").notes.len(), 0);
        assert_eq!(ToolResult::ok("x").model_text(), "x");
    }

    #[test]
    fn notes_are_bounded() {
        let long = ToolResult::ok("").with_note("é".repeat(NOTE_LIMIT + 50));
        assert_eq!(long.notes[0].chars().count(), NOTE_LIMIT + 1);
        assert!(long.notes[0].ends_with('…'));
        let mut many = ToolResult::ok("x");
        for i in 0..NOTES_SHOWN + 3 {
            many.add_note(format!("n{i}"));
        }
        let text = many.notes_text().unwrap();
        assert_eq!(text.lines().count(), NOTES_SHOWN + 1);
        assert!(
            text.ends_with("Note: 3 more changes to the input not listed here."),
            "{text}"
        );
        let old: ToolResult = serde_json::from_str(r#"{"output": "o"}"#).unwrap();
        assert!(
            old.notes.is_empty(),
            "results serialised before notes existed still read"
        );
    }
}
