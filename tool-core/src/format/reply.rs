//! What a [`ToolResult`] shows the model on a given turn (the two-layer
//! memory rule), shared by every provider's result rendering.

use serde_json::Value;

use crate::registry::history::Rendering;
use crate::result::{Attachment, Image, ToolResult};

/// Text shown for a result with neither output nor images.
pub(crate) const NO_OUTPUT: &str = "(no output)";

/// The model-visible content of a result on one turn.
#[derive(Debug)]
pub(crate) struct Reply<'a> {
    /// The text (may be empty when there are images).
    pub(crate) text: String,
    /// The images to show.
    pub(crate) images: &'a [Image],
    /// The attachments (inline ones are sent where the provider takes them).
    pub(crate) attachments: &'a [Attachment],
    /// The call failed.
    pub(crate) is_error: bool,
    /// The error message, when failed.
    pub(crate) error: Option<&'a str>,
    /// Structured output (`metadata["structured"]`), on full renderings only.
    pub(crate) structured: Option<&'a Value>,
    /// The output text alone (no error, no notes), on full renderings; the
    /// memory with the notes otherwise.
    pub(crate) output: String,
    /// The notes' lines ([`ToolResult::notes_text`]) on full renderings, for
    /// formats that place text pieces separately (Gemini); already part of `text`.
    pub(crate) notes: Option<String>,
}

/// Applies the two-layer memory rule ([`ToolResult::render`]) to `result`
/// for `rendering`; images, attachments and structured output go with the full rendering only.
pub(crate) fn reply(result: &ToolResult, rendering: Rendering) -> Reply<'_> {
    let summary_only =
        rendering == Rendering::Later && result.include_output_only_once && result.error.is_none();
    let text = result.render(rendering);
    if summary_only {
        return Reply {
            output: text.clone(),
            text,
            images: &[],
            attachments: &[],
            is_error: false,
            error: None,
            structured: None,
            notes: None,
        };
    }
    Reply {
        text,
        images: &result.images,
        attachments: &result.attachments,
        is_error: result.is_error(),
        error: result.error.as_ref().map(|e| e.message.as_str()),
        structured: result.metadata.get("structured"),
        output: result.output.clone(),
        notes: result.notes_text(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_once_results_show_memory_later() {
        let r = ToolResult::ok("the full page")
            .with_long_term_memory("read page 1")
            .output_once()
            .with_image(Image::new("image/png", "AAAA"));
        let first = reply(&r, Rendering::First);
        assert_eq!(first.text, "the full page");
        assert_eq!(first.images.len(), 1);
        let later = reply(&r, Rendering::Later);
        assert_eq!(later.text, "read page 1");
        assert!(later.images.is_empty());
        let plain = ToolResult::ok("x").with_long_term_memory("m");
        assert_eq!(reply(&plain, Rendering::Later).text, "x");
        let no_memory = ToolResult::ok("x").output_once();
        assert_eq!(
            reply(&no_memory, Rendering::Later).text,
            crate::registry::history::OMITTED_OUTPUT
        );
    }

    #[test]
    fn notes_follow_the_text_on_every_turn() {
        let r = ToolResult::ok("page")
            .with_long_term_memory("read page")
            .output_once()
            .with_note("argument `n` was read as 2");
        let first = reply(&r, Rendering::First);
        assert_eq!(first.text, "page\n\nNote: argument `n` was read as 2");
        assert_eq!(first.output, "page");
        assert_eq!(
            first.notes.as_deref(),
            Some("Note: argument `n` was read as 2")
        );
        let later = reply(&r, Rendering::Later);
        assert_eq!(later.text, "read page\n\nNote: argument `n` was read as 2");
        assert_eq!(later.output, later.text);
        assert_eq!(later.notes, None, "already in the output");
    }
}
