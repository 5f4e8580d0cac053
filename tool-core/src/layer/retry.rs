//! [`Retry`]: a layer that runs a failed call again, a bounded number of times.

use crate::result::{ErrorKind, ToolResult};

use super::{LayerCall, LayerFuture, MAX_RUNS_PER_LAYER, Next, ToolLayer};

/// Runs a call again when it ends with an error of one of the retried
/// kinds (by default `timeout` and `failed`), up to `max_attempts` runs in
/// all (at most [`MAX_RUNS_PER_LAYER`]). Only tools marked `read_only` or
/// `idempotent` are retried unless [`any_tool`](Self::any_tool) says
/// otherwise: running a write twice is not a retry's decision. A result that
/// needed more than one run carries a note saying how many.
///
/// ```
/// use tool_core::layer::Retry;
/// use tool_core::{ErrorKind, ToolRegistry};
/// let tools = ToolRegistry::new().with_layer(Retry::new(3).on([ErrorKind::Timeout]));
/// # let _ = tools;
/// ```
#[derive(Debug, Clone)]
pub struct Retry {
    max_attempts: u32,
    kinds: Vec<ErrorKind>,
    any_tool: bool,
}

impl Retry {
    /// Up to `max_attempts` runs, retrying `timeout` and `failed` results
    /// of read-only or idempotent tools.
    ///
    /// `max_attempts` is clamped to 1..=[`MAX_RUNS_PER_LAYER`] (8): a layer
    /// cannot run the rest of the stack more often than that, so `Retry::new(20)`
    /// makes at most 8 runs and `Retry::new(0)` one. A value out of range is
    /// logged (a `tracing` warning, target `tool_core`) and
    /// [`max_attempts`](Self::max_attempts) tells the number used.
    pub fn new(max_attempts: u32) -> Self {
        let clamped = max_attempts.clamp(1, MAX_RUNS_PER_LAYER);
        if clamped != max_attempts {
            tracing::warn!(
                target: "tool_core",
                asked = max_attempts,
                used = clamped,
                "Retry::new: the number of runs is limited to 1..={MAX_RUNS_PER_LAYER}; using {clamped}"
            );
        }
        Self {
            max_attempts: clamped,
            kinds: vec![ErrorKind::Timeout, ErrorKind::Failed],
            any_tool: false,
        }
    }

    /// Retries results of these error kinds instead.
    #[must_use]
    pub fn on(mut self, kinds: impl IntoIterator<Item = ErrorKind>) -> Self {
        self.kinds = kinds.into_iter().collect();
        self
    }

    /// Retries every tool, also those not marked `read_only` or `idempotent`.
    #[must_use]
    pub fn any_tool(mut self) -> Self {
        self.any_tool = true;
        self
    }

    /// The number of runs at most (after clamping).
    pub fn max_attempts(&self) -> u32 {
        self.max_attempts
    }

    fn retries(&self, result: &ToolResult) -> bool {
        result
            .error
            .as_ref()
            .is_some_and(|e| self.kinds.contains(&e.kind))
    }
}

impl ToolLayer for Retry {
    fn name(&self) -> &str {
        "retry"
    }

    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            let flags = &next.spec().flags;
            let max = if self.any_tool || flags.read_only || flags.idempotent {
                self.max_attempts
            } else {
                1
            };
            let mut result = next.run(call.clone()).await;
            while self.retries(&result) && next.runs() < max && !next.context().is_cancelled() {
                result = next.run(call.clone()).await;
            }
            if next.runs() > 1 {
                result.add_note(format!(
                    "the middleware `retry` ran this call {} times",
                    next.runs()
                ));
            }
            result
        })
    }
}
