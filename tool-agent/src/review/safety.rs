//! [`SafetyCheck`]: the reviewer beside a read-only call.

use std::collections::BTreeMap;

use serde_json::Map;
use tool_core::ApprovalRequest;
use tool_core::governance::breaker::RefusalBreaker;
use tool_core::governance::confirm::{self, Confirmation};
use tool_core::layer::{LayerCall, LayerFuture, Next, ToolLayer};

use super::{Reviewer, Verdict};

/// A middleware layer that asks a [`Reviewer`] about each call of a
/// `read_only` tool *while* the call runs, so a read pays no review latency
/// when the reviewer agrees. When the reviewer says no before the call
/// ended, the call is cancelled (its future dropped, which stops an async
/// tool at its next await and abandons a blocking one's result); when it
/// says no after, the result is discarded. Either way the model reads the
/// refusal and its reason (kind `denied`, `metadata["refused_by"]` =
/// `safety_check`). Calls of other tools pass through untouched: they go
/// through the approval gate before they run, where a [`Reviewer`] can be
/// the approver.
///
/// ```
/// use tool_agent::review::{Reviewer, SafetyCheck};
/// use tool_agent::{ScriptedClient, ScriptedTurn};
/// use tool_core::ToolRegistry;
/// let reviewer = Reviewer::new(ScriptedClient::new([ScriptedTurn::text("ALLOW")]));
/// let tools = ToolRegistry::new().with_layer(SafetyCheck::new(reviewer));
/// # let _ = tools;
/// ```
///
/// With a [`RefusalBreaker`] ([`with_breaker`](Self::with_breaker)), its
/// refusals count toward the breaker's refusals of the trace, and once the
/// breaker is open a read waits for the breaker's person (its approval
/// hook) before it runs instead of being reviewed beside it, through the
/// same approval gate as the pipeline's approval step
/// ([`confirm::ask_approver`]): the context's approval timeout and default,
/// its cancellation token, and a panicking person as a failed approval.
#[derive(Debug, Clone)]
pub struct SafetyCheck {
    reviewer: Reviewer,
    breaker: Option<RefusalBreaker>,
}

impl SafetyCheck {
    /// A check asking `reviewer`, counting its refusals nowhere.
    pub fn new(reviewer: Reviewer) -> Self {
        Self {
            reviewer,
            breaker: None,
        }
    }

    /// Counts this check's refusals in `breaker` (a clone sharing its
    /// counts: give the one that wraps the approval gate's reviewer), so
    /// after its `n` refusals of a trace, from the gate and this check
    /// together, every further call of the trace goes to the person, reads
    /// included.
    #[must_use]
    pub fn with_breaker(mut self, breaker: &RefusalBreaker) -> Self {
        self.breaker = Some(breaker.clone());
        self
    }
}

impl ToolLayer for SafetyCheck {
    fn name(&self) -> &str {
        "safety_check"
    }

    fn call<'a>(&'a self, call: LayerCall, mut next: Next<'a>) -> LayerFuture<'a> {
        Box::pin(async move {
            let spec = next.spec();
            if !spec.flags.read_only {
                return next.run(call).await;
            }
            let request = ApprovalRequest {
                tool: spec.name.clone(),
                kind: spec.kind,
                display: BTreeMap::new(),
                arguments: call.arguments().clone(),
                editable_params: Vec::new(),
                trace_id: next.context().trace_id().map(str::to_owned),
                injected: Map::new(),
                editable_schemas: Map::new(),
                defaults: Map::new(),
            };
            let trace = request.trace_id.clone();
            if let Some(breaker) = &self.breaker
                && breaker.is_open(trace.as_deref())
            {
                // The same gate as the pipeline's approval step: the
                // context's approval timeout and default, its cancellation,
                // a panicking person contained.
                let decision = confirm::ask_approver(next.context(), breaker, request).await;
                return match decision {
                    Confirmation::Denied(reason) => call.refuse(self.name(), &reason),
                    Confirmation::Edited { .. } => call.refuse(
                        self.name(),
                        "the approver changed a call that has no editable parameters",
                    ),
                    other => match other.refusal(&spec.name) {
                        Some(refused) => refused,
                        None => next.run(call).await,
                    },
                };
            }
            let review = self
                .reviewer
                .review_masked(&request, next.context().secrets());
            let run = next.run(call.clone());
            tokio::pin!(review, run);
            // When the reviewer refuses first, `run` is dropped on return:
            // the call is cancelled.
            let reason = tokio::select! {
                verdict = &mut review => match verdict {
                    Verdict::Allow => return run.await,
                    Verdict::Deny(reason) => reason,
                },
                result = &mut run => match review.await {
                    Verdict::Allow => return result,
                    Verdict::Deny(reason) => reason,
                },
            };
            if let Some(breaker) = &self.breaker {
                breaker.record_refusal(trace.as_deref());
            }
            call.refuse(self.name(), &format!("the reviewer refused: {reason}"))
        })
    }
}
