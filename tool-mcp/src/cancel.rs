//! The bounds of one call of an imported tool (review 26, F1 and F2): when
//! it must end, and the cancellation its server gets when it ends early.
//!
//! - **Deadline** ([`call_deadline`]): the caller's timeout bounds the call.
//!   Run by an executor, a handler's context carries the instant the
//!   executor stops the call ([`ToolContext::deadline`]: the tool's
//!   timeout, else the context's `--timeout`, else the registry's per-call
//!   default). The call gives up [`CANCEL_MARGIN`] (at most a tenth of its
//!   time) before it, so that it can still tell the server. Without a
//!   timeout set on the context, the source's request timeout
//!   ([`McpToolSource::with_timeout`](crate::McpToolSource::with_timeout))
//!   bounds it too; a context's own timeout replaces the source's.
//! - **Cancellation**: a plain call that runs out or whose caller cancels
//!   sends `notifications/cancelled`; a task-augmented one `tasks/cancel`
//!   (`task_call.rs`). When the call's future is dropped before either
//!   (an executor's timeout, a caller that gave up), [`CancelOnDrop`]
//!   sends the same from a spawned task; a program about to exit waits for
//!   those with [`settle_cancellations`] (`tool call` on Ctrl-C).

use std::time::Duration;

use rmcp::model::{
    CancelTaskParams, CancelTaskRequest, CancelledNotificationParam, ClientRequest, RequestId,
    RequestMetaObject,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient};
use tokio::time::Instant;
use tool_core::ToolContext;

/// How long before the executor's deadline a call of an imported tool
/// gives up on its own, to cancel on the server and answer with its own
/// timeout result: 250 ms, and at most a tenth of the call's time.
pub const CANCEL_MARGIN: Duration = Duration::from_millis(250);

/// When a call started now under `ctx` must end: see the module docs.
/// `source_timeout`: the source's request timeout.
pub(crate) fn call_deadline(ctx: &ToolContext, source_timeout: Duration) -> Instant {
    let now = Instant::now();
    let own = now + source_timeout;
    let Some(outer) = ctx.deadline() else {
        return own;
    };
    let budget = outer.saturating_duration_since(now);
    let early = outer
        .checked_sub(CANCEL_MARGIN.min(budget / 10))
        .unwrap_or(outer);
    if ctx.timeout().is_some() {
        early
    } else {
        early.min(own)
    }
}

/// The cancellations [`CancelOnDrop`] spawned that have not ended.
fn in_flight() -> &'static tokio_util::task::TaskTracker {
    static TRACKER: std::sync::OnceLock<tokio_util::task::TaskTracker> = std::sync::OnceLock::new();
    TRACKER.get_or_init(tokio_util::task::TaskTracker::new)
}

/// Waits until the cancellations this process still sends to MCP servers
/// for calls of imported tools that were dropped unfinished
/// (`notifications/cancelled`, `tasks/cancel` and its ack, each bounded by
/// [`TASK_CANCEL_TIMEOUT`](crate::TASK_CANCEL_TIMEOUT)) have been sent, or
/// `within` passed; `true` when none is left. For a program about to exit
/// after an interrupted call (`tool call` waits up to 2 s on Ctrl-C); it
/// returns at once when there are none.
pub async fn settle_cancellations(within: Duration) -> bool {
    let tracker = in_flight();
    tracker.close();
    let settled = tokio::time::timeout(within, tracker.wait()).await.is_ok();
    tracker.reopen();
    settled
}

/// The time left until `deadline`, at least 1 ms (rmcp's request options
/// take a duration).
pub(crate) fn left(deadline: Instant) -> Duration {
    deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1))
}

/// What is cancelled if the guard is dropped armed.
enum Pending {
    /// A request: `notifications/cancelled` naming it.
    Request(RequestId),
    /// A task: `tasks/cancel`, with the `_meta` of the connection's task requests.
    Task(String, Box<RequestMetaObject>),
}

/// Sends the server the cancellation of a request or task when dropped
/// while armed (see the module docs); [`disarm`](Self::disarm) once the
/// request or task ended or was cancelled. Needs a Tokio runtime at drop
/// (without one nothing is sent).
pub(crate) struct CancelOnDrop {
    peer: Peer<RoleClient>,
    pending: Option<Pending>,
}

impl CancelOnDrop {
    /// Armed for request `id`.
    pub(crate) fn request(peer: &Peer<RoleClient>, id: RequestId) -> Self {
        Self {
            peer: peer.clone(),
            pending: Some(Pending::Request(id)),
        }
    }

    /// Armed for task `id`.
    pub(crate) fn task(peer: &Peer<RoleClient>, id: String, meta: RequestMetaObject) -> Self {
        Self {
            peer: peer.clone(),
            pending: Some(Pending::Task(id, Box::new(meta))),
        }
    }

    /// Nothing to cancel any more.
    pub(crate) fn disarm(&mut self) {
        self.pending = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(pending) = self.pending.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let peer = self.peer.clone();
        in_flight().spawn_on(
            async move {
                match pending {
                    Pending::Request(id) => {
                        let param = CancelledNotificationParam::new(
                            Some(id),
                            Some("the caller stopped waiting".to_owned()),
                        );
                        let _ = peer.notify_cancelled(param).await;
                    }
                    Pending::Task(id, meta) => {
                        let request = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(
                            CancelTaskParams::new(id),
                        ));
                        let timeout = crate::task_call::TASK_CANCEL_TIMEOUT;
                        let options = PeerRequestOptions::with_timeout(timeout).with_meta(*meta);
                        if let Ok(handle) = peer.send_cancellable_request(request, options).await {
                            let _ = tokio::time::timeout(timeout, handle.await_response()).await;
                        }
                    }
                }
            },
            &runtime,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `deadline` is `expected` after `start`, within 50 ms.
    fn near(start: Instant, deadline: Instant, expected: Duration) {
        let got = deadline.saturating_duration_since(start);
        assert!(
            got >= expected && got <= expected + Duration::from_millis(50),
            "{got:?}, expected {expected:?}"
        );
    }

    #[tokio::test]
    async fn the_callers_timeout_bounds_the_call() {
        let source = Duration::from_secs(60);
        let now = Instant::now();
        // No executor: the source's timeout.
        near(now, call_deadline(&ToolContext::new(), source), source);
        // The caller's --timeout 2: 2 s less the margin (a tenth of it).
        let ctx = ToolContext::new()
            .with_timeout(Duration::from_secs(2))
            .with_deadline(now + Duration::from_secs(2));
        near(
            now,
            call_deadline(&ctx, source),
            Duration::from_millis(1800),
        );
        // A caller's longer timeout replaces the source's.
        let ctx = ToolContext::new()
            .with_timeout(Duration::from_secs(300))
            .with_deadline(now + Duration::from_secs(300));
        near(
            now,
            call_deadline(&ctx, source),
            Duration::from_secs(300) - CANCEL_MARGIN,
        );
        // The registry's default (no context timeout): the earlier one.
        let ctx = ToolContext::new().with_deadline(now + Duration::from_secs(120));
        near(now, call_deadline(&ctx, source), source);
        let ctx = ToolContext::new().with_deadline(now + Duration::from_secs(5));
        near(
            now,
            call_deadline(&ctx, source),
            Duration::from_secs(5) - CANCEL_MARGIN,
        );
    }
}
