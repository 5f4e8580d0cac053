//! [`ResultViews`]: how much of a tool's result the model reads, chosen per
//! tool by the host ([`ResultView::Full`], [`Brief`](ResultView::Brief),
//! [`Minimal`](ResultView::Minimal)).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::result::{ToolResult, meta};
use crate::truncate::{self, Truncation};

use super::{LayerCall, LayerFuture, Next, ToolLayer};

/// Byte budget of a [`ResultView::Brief`] output: 2 KiB.
pub const BRIEF_BYTES: usize = 2 * 1024;

/// Line budget of a [`ResultView::Brief`] output: 40 lines.
pub const BRIEF_LINES: usize = 40;

/// How much of a successful result the model reads. Errors are always shown
/// whole (the model needs them to act); every view keeps the notes and the
/// metadata.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultView {
    /// The output as the tool returned it (then the registry's output budget). The default.
    #[default]
    Full,
    /// Head and tail within [`BRIEF_BYTES`] and [`BRIEF_LINES`], the full
    /// text saved to a spill file named in the marker line and in
    /// `metadata["output_path"]`.
    Brief,
    /// One line: that the call succeeded, the size of its output, and the
    /// spill file holding it (images and attachments are dropped and
    /// counted). For tools whose effect matters more than their text (a
    /// write, a formatter).
    Minimal,
}

impl ResultView {
    /// The view's name as metadata shows it (`full`, `brief`, `minimal`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::Brief => "brief",
            Self::Minimal => "minimal",
        }
    }
}

/// A layer applying a [`ResultView`] per tool (tools not named get the
/// default view, [`ResultView::Full`] unless set). Full texts go to spill
/// files under its [`Truncation`]'s spill folder (by default the registry
/// default's), in the folder of the call's trace.
///
/// ```
/// use tool_core::layer::{ResultView, ResultViews};
/// use tool_core::ToolRegistry;
/// let tools = ToolRegistry::new().with_layer(
///     ResultViews::new().view("write_file", ResultView::Minimal).view("grep_content", ResultView::Brief),
/// );
/// # let _ = tools;
/// ```
#[derive(Debug, Clone, Default)]
pub struct ResultViews {
    views: BTreeMap<String, ResultView>,
    default: ResultView,
    spill: Truncation,
}

impl ResultViews {
    /// Every tool [`ResultView::Full`] until set.
    pub fn new() -> Self {
        Self::default()
    }

    /// The view of the tool `tool`.
    #[must_use]
    pub fn view(mut self, tool: impl Into<String>, view: ResultView) -> Self {
        self.views.insert(tool.into(), view);
        self
    }

    /// The view of tools not named with [`view`](Self::view).
    #[must_use]
    pub fn default_view(mut self, view: ResultView) -> Self {
        self.default = view;
        self
    }

    /// Where full texts are spilled (its spill folder and caps; its byte and
    /// line budgets are not used).
    #[must_use]
    pub fn spill(mut self, truncation: Truncation) -> Self {
        self.spill = truncation;
        self
    }

    /// The view `tool` gets.
    pub fn view_of(&self, tool: &str) -> ResultView {
        self.views.get(tool).copied().unwrap_or(self.default)
    }

    fn apply(&self, view: ResultView, result: &mut ToolResult, trace_id: Option<&str>) {
        if view == ResultView::Full || result.is_error() {
            return;
        }
        result
            .metadata
            .insert(meta::RESULT_VIEW.to_owned(), Value::from(view.as_str()));
        let opts = self.spill.clone().for_trace(trace_id);
        match view {
            ResultView::Full => {}
            ResultView::Brief => {
                let opts = opts.max_bytes(BRIEF_BYTES).max_lines(BRIEF_LINES);
                let cut = truncate::truncate(&result.output, &opts);
                if cut.truncated {
                    result.output = cut.text;
                    result
                        .metadata
                        .insert(meta::TRUNCATED.to_owned(), Value::Bool(true));
                    if let Some(path) = cut.spill_path {
                        result.metadata.insert(
                            meta::OUTPUT_PATH.to_owned(),
                            Value::String(path.display().to_string()),
                        );
                    }
                }
            }
            ResultView::Minimal => {
                let bytes = result.output.len();
                let lines = truncate::count_lines(result.output.as_bytes());
                let mut line = format!("Done ({bytes} bytes, {lines} lines of output");
                if bytes > 0 {
                    match truncate::spill_to_file(&opts, result.output.as_bytes()) {
                        Ok(path) => {
                            line.push_str(&format!("; saved to {}", path.display()));
                            result.metadata.insert(
                                meta::OUTPUT_PATH.to_owned(),
                                Value::String(path.display().to_string()),
                            );
                        }
                        Err(e) => line.push_str(&format!("; not saved: {e}")),
                    }
                }
                let dropped = result.images.len() + result.attachments.len();
                if dropped > 0 {
                    line.push_str(&format!("; {dropped} images or attachments not shown"));
                    result.images.clear();
                    result.attachments.clear();
                }
                line.push_str(").");
                result.output = line;
            }
        }
    }
}

impl ToolLayer for ResultViews {
    fn name(&self) -> &str {
        "result_views"
    }

    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            let view = self.view_of(call.tool());
            let mut result = next.run(call).await;
            self.apply(view, &mut result, next.context().trace_id());
            result
        })
    }
}
