//! [`RefusalBreaker`]: after a number of refusals in one trace, calls go to a
//! person instead of the first approver (a reviewer model, a policy), so an
//! agent whose calls keep being refused does not loop against the same
//! refusal (issue 30; cross-cutting §4: still only the [`Approver`] hook).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};

use super::approval::{ApprovalDecision, ApprovalRequest, Approver};
use crate::tool::future::BoxFuture;

/// Most traces a [`RefusalBreaker`] counts at once: 1024. Beyond it the
/// trace counted longest ago is forgotten (its count starts again).
pub const MAX_TRACKED_TRACES: usize = 1024;

/// An [`Approver`] that asks `first` until it has refused `after` calls of a
/// trace (the context's trace id; calls without one count together), then
/// sends every further call of that trace to `person`, the approval hook of
/// a person (deny when there is none: the breaker never approves by itself).
/// A refusal is a [`Deny`](ApprovalDecision::Deny), or an approval the gate
/// stopped waiting for after the context's approval timeout
/// ([`Approver::timed_out`]). A trace stays open until [`reset`](Self::reset).
///
/// ```
/// use tool_core::governance::breaker::RefusalBreaker;
/// use tool_core::{ApprovalDecision, ApprovalRequest};
/// let breaker = RefusalBreaker::new(
///     |_r: ApprovalRequest| async { ApprovalDecision::Deny("no".into()) },
///     3,
/// )
/// .escalate_to(|_r: ApprovalRequest| async { ApprovalDecision::Approve });
/// # let _ = breaker;
/// ```
#[derive(Clone)]
pub struct RefusalBreaker {
    first: Arc<dyn Approver>,
    person: Option<Arc<dyn Approver>>,
    after: u32,
    counts: Arc<Mutex<Counts>>,
}

#[derive(Default)]
struct Counts {
    by_trace: HashMap<String, u32>,
    order: VecDeque<String>,
}

impl std::fmt::Debug for RefusalBreaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RefusalBreaker")
            .field("after", &self.after)
            .field("person", &self.person.is_some())
            .finish_non_exhaustive()
    }
}

impl RefusalBreaker {
    /// Asks `first` until it refused `after` calls of a trace (at least 1).
    pub fn new(first: impl Approver, after: u32) -> Self {
        Self::new_shared(Arc::new(first), after)
    }

    /// As [`new`](Self::new), with an approver shared elsewhere.
    pub fn new_shared(first: Arc<dyn Approver>, after: u32) -> Self {
        Self {
            first,
            person: None,
            after: after.max(1),
            counts: Arc::default(),
        }
    }

    /// Where calls go once the breaker is open: a person's approver.
    #[must_use]
    pub fn escalate_to(mut self, person: impl Approver) -> Self {
        self.person = Some(Arc::new(person));
        self
    }

    /// As [`escalate_to`](Self::escalate_to), with an approver shared elsewhere.
    #[must_use]
    pub fn escalate_to_shared(mut self, person: Arc<dyn Approver>) -> Self {
        self.person = Some(person);
        self
    }

    /// The refusals counted for `trace_id` so far.
    pub fn refusals(&self, trace_id: Option<&str>) -> u32 {
        let counts = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        counts
            .by_trace
            .get(trace_id.unwrap_or(""))
            .copied()
            .unwrap_or(0)
    }

    /// Counts a refusal made elsewhere for `trace_id` (calls without one
    /// count together): a refusal is a refusal whichever check made it, so a
    /// check beside the approval gate (the reviewer's parallel safety check)
    /// counts its refusals here and calls escalate after `after` of them in
    /// all. Clones of a breaker share the counts.
    pub fn record_refusal(&self, trace_id: Option<&str>) {
        Self::count_refusal(&self.counts, trace_id.unwrap_or_default().to_owned());
    }

    /// Forgets the refusals counted for `trace_id` (calls without one:
    /// `None`), closing the breaker for that trace: its calls go to the
    /// first approver again (a host does after the person dealt with it).
    pub fn reset(&self, trace_id: Option<&str>) {
        let trace = trace_id.unwrap_or_default();
        let mut c = self.counts.lock().unwrap_or_else(PoisonError::into_inner);
        c.by_trace.remove(trace);
        c.order.retain(|t| t != trace);
    }

    /// Whether calls of `trace_id` go to the person now: `after` refusals
    /// were counted for it.
    pub fn is_open(&self, trace_id: Option<&str>) -> bool {
        self.refusals(trace_id) >= self.after
    }

    fn count_refusal(counts: &Mutex<Counts>, trace: String) {
        let mut c = counts.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = c.by_trace.get_mut(&trace) {
            *n = n.saturating_add(1);
            return;
        }
        if c.order.len() >= MAX_TRACKED_TRACES
            && let Some(oldest) = c.order.pop_front()
        {
            c.by_trace.remove(&oldest);
        }
        c.order.push_back(trace.clone());
        c.by_trace.insert(trace, 1);
    }
}

impl Approver for RefusalBreaker {
    /// An approval the gate gave up waiting for counts as a refusal of its
    /// trace (a reviewer that never answers within the context's approval
    /// timeout still opens the breaker); the approver asked is told too.
    fn timed_out(&self, request: &ApprovalRequest) {
        let trace = request.trace_id.as_deref();
        match &self.person {
            Some(person) if self.is_open(trace) => person.timed_out(request),
            _ => self.first.timed_out(request),
        }
        self.record_refusal(trace);
    }

    fn approve(&self, request: ApprovalRequest) -> BoxFuture<ApprovalDecision> {
        let trace = request.trace_id.clone().unwrap_or_default();
        let refused = self.refusals(request.trace_id.as_deref());
        if refused >= self.after {
            return match &self.person {
                Some(person) => person.approve(request),
                None => {
                    let reason = format!(
                        "{refused} calls in this run were refused already, so this one needs a person, and none is available"
                    );
                    Box::pin(async move { ApprovalDecision::Deny(reason) })
                }
            };
        }
        let decision = self.first.approve(request);
        let counts = Arc::clone(&self.counts);
        Box::pin(async move {
            let decision = decision.await;
            if matches!(decision, ApprovalDecision::Deny(_)) {
                Self::count_refusal(&counts, trace);
            }
            decision
        })
    }
}
