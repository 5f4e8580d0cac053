//! Two-layer memory: a result's full output on the turn it was produced,
//! only its `long_term_memory` on later turns when `include_output_only_once`
//! is set. Keeps a 10 000-character page extraction from being re-sent to the
//! model on every following turn.

use crate::result::{MemoryLayout, SUMMARY_PREFIX, ToolResult};

/// Which rendering of a result a conversation needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rendering {
    /// The turn the result was produced on: the full output.
    First,
    /// Any later turn: the long-term memory when the output is shown once.
    Later,
}

/// Shown on later turns for an output-once result that has no long-term memory.
pub const OMITTED_OUTPUT: &str = "[output shown once and omitted from history]";

impl ToolResult {
    /// The model text of this result for `rendering` (see [`Rendering`]).
    /// Errors always render in full, so the model can still act on them; the
    /// [notes](ToolResult::notes) follow the text in both renderings. The
    /// [`MemoryLayout`] decides the shape: in the `Summary` layout the
    /// first rendering is `# title`, output, `Summary: memory` and a later
    /// one `Summary: memory` ([`ToolResult::with_summary`]).
    pub fn render(&self, rendering: Rendering) -> String {
        if rendering == Rendering::Later && self.include_output_only_once && self.error.is_none() {
            let memory = match (&self.long_term_memory, self.memory_layout) {
                (Some(m), MemoryLayout::Summary) => format!("{SUMMARY_PREFIX}{m}"),
                (Some(m), _) => m.clone(),
                (None, _) => OMITTED_OUTPUT.to_owned(),
            };
            return self.with_notes_after(memory);
        }
        self.model_text()
    }
}

/// The tool results of a conversation, each tagged with the turn it was produced on.
///
/// ```
/// use tool_core::{ToolHistory, ToolResult};
///
/// let mut history = ToolHistory::new();
/// history.push(1, "call_1", ToolResult::ok("x".repeat(10_000)).with_long_term_memory("read page: 10k chars").output_once());
/// assert_eq!(history.render(1)[0].1.len(), 10_000);
/// assert_eq!(history.render(2)[0].1, "read page: 10k chars");
/// ```
#[derive(Debug, Clone, Default)]
pub struct ToolHistory {
    entries: Vec<(u64, String, ToolResult)>,
}

impl ToolHistory {
    /// An empty history.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records `result` of tool call `call_id`, produced on `turn`.
    pub fn push(&mut self, turn: u64, call_id: impl Into<String>, result: ToolResult) {
        self.entries.push((turn, call_id.into(), result));
    }

    /// Every result as `(call_id, text)` for a prompt built on `current_turn`:
    /// results of that turn in full, older ones by [`Rendering::Later`].
    pub fn render(&self, current_turn: u64) -> Vec<(String, String)> {
        self.entries
            .iter()
            .map(|(turn, id, r)| {
                let rendering = if *turn >= current_turn {
                    Rendering::First
                } else {
                    Rendering::Later
                };
                (id.clone(), r.render(rendering))
            })
            .collect()
    }

    /// Number of results.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// `true` when empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// The design's history example (000 对话历史示例), as our own data.
    fn extracted() -> ToolResult {
        ToolResult::ok("P".repeat(10_000))
            .with_title("Extracted page data")
            .with_summary("Extracted 10000 chars from amazon.com")
    }

    #[test]
    fn the_summary_layout_shows_title_output_and_summary_once() {
        let r = extracted();
        let first = r.render(Rendering::First);
        let (head, rest) = first.split_once("\n\n").unwrap();
        assert_eq!(head, "# Extracted page data");
        let (body, summary) = rest.rsplit_once("\n\n").unwrap();
        assert_eq!(body, "P".repeat(10_000));
        assert_eq!(summary, "Summary: Extracted 10000 chars from amazon.com");
        assert_eq!(
            r.render(Rendering::Later),
            "Summary: Extracted 10000 chars from amazon.com"
        );
        // Through the history: full on its own turn, only the memory on the next two.
        let mut history = ToolHistory::new();
        history.push(1, "call_1", r);
        assert_eq!(history.render(1)[0].1, first);
        for turn in [2, 3] {
            assert_eq!(
                history.render(turn)[0],
                (
                    "call_1".to_owned(),
                    "Summary: Extracted 10000 chars from amazon.com".to_owned()
                )
            );
        }
    }

    #[test]
    fn the_summary_layout_with_notes_errors_and_no_title() {
        let r = ToolResult::ok("rows: 3")
            .with_summary("listed 3 rows")
            .with_note("argument `limit` was read as 3");
        assert_eq!(
            r.render(Rendering::First),
            "rows: 3\n\nSummary: listed 3 rows\n\nNote: argument `limit` was read as 3"
        );
        assert_eq!(
            r.render(Rendering::Later),
            "Summary: listed 3 rows\n\nNote: argument `limit` was read as 3"
        );
        // An error stays whole on every turn.
        let failed = ToolResult::error(ErrorKind::Failed, "page gone")
            .with_title("Extract")
            .with_summary("extraction failed");
        let text = "# Extract\n\nError: page gone\n\nSummary: extraction failed";
        assert_eq!(failed.render(Rendering::First), text);
        assert_eq!(failed.render(Rendering::Later), text);
        // The plain layout is unchanged: no title, no prefix.
        let plain = ToolResult::ok("x")
            .with_title("T")
            .with_long_term_memory("m")
            .output_once();
        assert_eq!(
            (
                plain.render(Rendering::First),
                plain.render(Rendering::Later)
            ),
            ("x".to_owned(), "m".to_owned())
        );
    }

    #[test]
    fn the_layout_survives_serialisation_and_is_absent_when_plain() {
        let v = serde_json::to_value(extracted()).unwrap();
        assert_eq!(v["memory_layout"], "summary");
        let back: ToolResult = serde_json::from_value(v).unwrap();
        assert_eq!(back.memory_layout, MemoryLayout::Summary);
        let plain = serde_json::to_value(ToolResult::ok("x")).unwrap();
        assert!(plain.get("memory_layout").is_none(), "{plain}");
    }
}
