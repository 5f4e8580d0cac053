//! Two-layer memory: a result's full output on the turn it was produced,
//! only its `long_term_memory` on later turns when `include_output_only_once`
//! is set. Keeps a 10 000-character page extraction from being re-sent to the
//! model on every following turn.

use crate::result::ToolResult;

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
    /// [notes](ToolResult::notes) follow the text in both renderings.
    pub fn render(&self, rendering: Rendering) -> String {
        if rendering == Rendering::Later && self.include_output_only_once && self.error.is_none() {
            let memory = self
                .long_term_memory
                .clone()
                .unwrap_or_else(|| OMITTED_OUTPUT.to_owned());
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
