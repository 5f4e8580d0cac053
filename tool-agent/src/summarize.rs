//! [`Summarizer`]: large tool results summarised by a model, the full text
//! saved to a spill file whose path the model reads.

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use tool_core::layer::{LayerCall, LayerFuture, Next, ToolLayer};
use tool_core::meta;
use tool_core::truncate::{self, Truncation};
use tool_rules::text::{Clip, clip};

use crate::client::ModelClient;
use crate::complete::complete;

/// Output size above which a result is summarised by default: 16 KiB.
pub const DEFAULT_SUMMARY_THRESHOLD: usize = 16 * 1024;

/// Most bytes of output the summarising model reads: 96 KiB (head and tail
/// of a longer output, with a marker line between).
pub const MAX_SUMMARY_INPUT: usize = 96 * 1024;

/// Characters of summary kept: 4000.
pub const MAX_SUMMARY_CHARS: usize = 4000;

/// How long the summariser waits for the model by default: 60 s.
pub const DEFAULT_SUMMARY_TIMEOUT: Duration = Duration::from_secs(60);

const SYSTEM: &str = "You summarise the output of a tool for an AI agent that called it. \
Keep what the agent needs to act: facts, numbers, names, paths, line numbers, errors and warnings, \
in the output's own words where possible. Do not add advice or commentary. At most 300 words.";

/// A middleware layer: a successful result whose output is larger than the
/// threshold is replaced by a model's summary, followed by one line giving
/// the size of the full output and the spill file that holds it
/// (`metadata["summarized"]`, `metadata["output_path"]`). The output it
/// sees is already masked (secret values are placeholders), so neither the
/// model nor the file gets a secret value. When the model fails, does not
/// answer in time or answers nothing, the result is left as it was (the
/// registry's head-and-tail budget then applies) with a note saying so.
/// Error results are never summarised.
///
/// ```
/// use tool_agent::{ScriptedClient, ScriptedTurn, summarize::Summarizer};
/// use tool_core::ToolRegistry;
/// let model = ScriptedClient::new([ScriptedTurn::text("3 tests failed: a, b, c.")]);
/// let tools = ToolRegistry::new().with_layer(Summarizer::new(model).threshold(8 * 1024));
/// # let _ = tools;
/// ```
#[derive(Clone)]
pub struct Summarizer {
    client: Arc<dyn ModelClient>,
    threshold: usize,
    timeout: Duration,
    spill: Truncation,
    tools: Option<Vec<String>>,
}

impl std::fmt::Debug for Summarizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Summarizer")
            .field("model", &self.client.model())
            .field("threshold", &self.threshold)
            .field("timeout", &self.timeout)
            .field("tools", &self.tools)
            .finish_non_exhaustive()
    }
}

impl Summarizer {
    /// Summaries by `client` above [`DEFAULT_SUMMARY_THRESHOLD`] bytes, for
    /// every tool, waiting [`DEFAULT_SUMMARY_TIMEOUT`]; full texts go to the
    /// default spill folder.
    pub fn new(client: impl ModelClient + 'static) -> Self {
        Self::new_shared(Arc::new(client))
    }

    /// As [`new`](Self::new), with a client shared elsewhere.
    pub fn new_shared(client: Arc<dyn ModelClient>) -> Self {
        Self {
            client,
            threshold: DEFAULT_SUMMARY_THRESHOLD,
            timeout: DEFAULT_SUMMARY_TIMEOUT,
            spill: Truncation::new(),
            tools: None,
        }
    }

    /// Summarises outputs larger than `bytes`.
    #[must_use]
    pub fn threshold(mut self, bytes: usize) -> Self {
        self.threshold = bytes;
        self
    }

    /// How long to wait for the model.
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Where full texts are saved (its spill folder and caps).
    #[must_use]
    pub fn spill(mut self, truncation: Truncation) -> Self {
        self.spill = truncation;
        self
    }

    /// Summarises only the results of these tools (by default every tool's).
    #[must_use]
    pub fn only(mut self, tools: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.tools = Some(tools.into_iter().map(Into::into).collect());
        self
    }

    fn applies_to(&self, tool: &str) -> bool {
        self.tools
            .as_ref()
            .is_none_or(|t| t.iter().any(|n| n == tool))
    }

    /// Asks the model for a summary of `output` from `tool`.
    async fn summary(&self, tool: &str, output: &str) -> Result<String, String> {
        let input = Truncation::new()
            .max_bytes(MAX_SUMMARY_INPUT)
            .max_lines(usize::MAX)
            .spill(false);
        let shown = truncate::truncate(output, &input).text;
        let prompt = format!(
            "The output of the tool `{tool}`:\n<<<\n{}\n>>>\nSummarise it.",
            shown.trim_end()
        );
        let asked = complete(self.client.as_ref(), SYSTEM, prompt, Some(800));
        match tokio::time::timeout(self.timeout, asked).await {
            Err(_) => Err(format!(
                "the summarising model did not answer within {}s",
                self.timeout.as_secs_f32()
            )),
            Ok(Err(e)) => Err(format!(
                "the summarising model failed ({})",
                clip(&e.to_string(), Clip::chars(200))
            )),
            Ok(Ok(text)) if text.trim().is_empty() => {
                Err("the summarising model answered nothing".to_owned())
            }
            Ok(Ok(text)) => Ok(clip(text.trim(), Clip::chars(MAX_SUMMARY_CHARS)).into_owned()),
        }
    }
}

impl ToolLayer for Summarizer {
    fn name(&self) -> &str {
        "summarizer"
    }

    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            let tool = call.tool().to_owned();
            let mut result = next.run(call).await;
            if result.is_error() || result.output.len() <= self.threshold || !self.applies_to(&tool)
            {
                return result;
            }
            let summary = match self.summary(&tool, &result.output).await {
                Ok(s) => s,
                Err(why) => {
                    result.add_note(format!(
                        "{why}, so the output is shown cut instead of summarised"
                    ));
                    return result;
                }
            };
            let opts = self.spill.clone().for_trace(next.context().trace_id());
            let bytes = result.output.len();
            let lines = truncate::count_lines(result.output.as_bytes());
            let saved = match truncate::spill_to_file(&opts, result.output.as_bytes()) {
                Ok(path) => path,
                Err(e) => {
                    result.add_note(format!(
                        "the full output could not be saved ({e}), so it is shown cut instead of summarised"
                    ));
                    return result;
                }
            };
            let path = saved.display().to_string();
            result.output = format!(
                "{summary}\n\n[A model's summary of {bytes} bytes ({lines} lines) of output; the full text is in {path}: read it for details.]"
            );
            result
                .metadata
                .insert(meta::SUMMARIZED.to_owned(), Value::Bool(true));
            result
                .metadata
                .insert(meta::OUTPUT_PATH.to_owned(), Value::String(path));
            result
        })
    }
}
