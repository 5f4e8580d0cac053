//! The client side of MCP tasks: an imported tool's call that the server
//! runs as a task is followed to its end, and its result is the call's.
//!
//! # Which calls are tasks
//! - A remote tool the host names with
//!   [`McpToolSource::with_task_calls`](crate::McpToolSource::with_task_calls)
//!   is always called as a task; any other tool is called plainly (the
//!   default, also for tools whose task support is `optional`).
//! - A tool whose task support is `required` refuses a plain call: with
//!   `-32021` naming the tasks extension (SEP-2663), or in a 2025-11-25
//!   session with `-32601` (the 2025-11-25 tasks utility, SEP-1686: "servers
//!   MUST return -32601 if a client does not" call a `required` tool as a
//!   task). The client then calls it again as a task at once, and as a task
//!   from then on. (rmcp 3.11's `Tool` keeps no `execution.taskSupport`, so
//!   the refusal is how the client learns it.)
//!
//! # The two flavours
//! - **Extension** (`io.modelcontextprotocol/tasks`, SEP-2663; a server
//!   that advertises it, in either era, this crate's own server among
//!   them): the task call carries the extension in the request's
//!   `_meta["io.modelcontextprotocol/clientCapabilities"]` (the session's
//!   capabilities do not declare it, so plain calls stay plain); the answer
//!   is a `CreateTaskResult` (`resultType: "task"`). `tasks/get` is polled
//!   until the task ends, and its inlined `result` (or `error`) is the
//!   call's; a task in `input_required` has its `inputRequests` answered
//!   through the same hooks as an input-required `tools/call` (roots,
//!   sampling by the source's sampler, elicitation by the calling context's
//!   approver or asker) and sent with `tasks/update`.
//! - **2025-11-25 tasks utility** (SEP-1686, e.g. the TypeScript SDK's
//!   servers): the task call adds `"task": {"ttl": ms}` to `tools/call`; the
//!   answer is `{"task": {...}}`. `tasks/get` is polled until the task is
//!   terminal or `input_required`, then `tasks/result` fetches the result
//!   (the server sends the requests of an `input_required` task over that
//!   request, answered as any server request of the call).
//!
//! # Bounds (a remote peer controls the pace and the size)
//! - The whole task (creation, polls, input, result) runs within the
//!   call's timeout (the caller's, else
//!   [`McpToolSource::with_timeout`](crate::McpToolSource::with_timeout); see
//!   `cancel.rs`) counted from the call's start; running out, or the
//!   caller's cancellation, sends `tasks/cancel` (waiting at most
//!   [`TASK_CANCEL_TIMEOUT`] for its ack, and never past the executor's
//!   deadline) and ends the call as a timeout or cancelled; a call dropped
//!   while its task runs sends it too.
//! - Polls follow the server's `pollInterval`(`Ms`), clamped to
//!   [`MIN_TASK_POLL_INTERVAL`]..=[`MAX_TASK_POLL_INTERVAL`]
//!   ([`DEFAULT_TASK_POLL_INTERVAL`] when it gives none), at most
//!   [`MAX_TASK_POLLS`] per task; at most [`MAX_TASK_INPUT_ROUNDS`] rounds of
//!   input are answered per task; a result over [`MAX_TASK_RESULT_BYTES`]
//!   (serialised) is refused. Each bound ends the call with an error that
//!   names it, after `tasks/cancel`.
//! - Progress notifications of the task's `tools/call` reach the caller
//!   until the task ends.

use std::collections::BTreeSet;
use std::time::Duration;

use rmcp::model::{
    CallToolResult, CancelTaskParams, CancelTaskRequest, ClientRequest, CustomRequest, ErrorCode,
    GetTaskParams, GetTaskRequest, InputRequests, RequestMetaObject, ServerResult, TaskPayload,
    UpdateTaskParams, UpdateTaskRequest,
};
use rmcp::service::{PeerRequestOptions, ServiceError};
use serde_json::{Map, Value, json};
use tokio::time::Instant;
use tool_core::{ErrorKind as ToolErrorKind, ToolContext, ToolResult, meta};
use tool_rules::text::{Clip, clip};

/// Fewest time between two `tasks/get` polls, whatever the server
/// suggests: 100 ms.
pub const MIN_TASK_POLL_INTERVAL: Duration = Duration::from_millis(100);
/// Most time between two polls, whatever the server suggests: 5 s (the
/// end of a task is seen at most this late).
pub const MAX_TASK_POLL_INTERVAL: Duration = Duration::from_secs(5);
/// Time between polls when the server suggests none: 500 ms.
pub const DEFAULT_TASK_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Most `tasks/get` polls of one task: 3 000.
pub const MAX_TASK_POLLS: u32 = 3_000;
/// Most rounds of input (an `input_required` status answered) per task: 16.
pub const MAX_TASK_INPUT_ROUNDS: u32 = 16;
/// Largest task result (a `CallToolResult`, serialised) accepted: 4 MiB.
pub const MAX_TASK_RESULT_BYTES: usize = 4 << 20;
/// How long `tasks/cancel` may wait for its ack: 5 s.
pub const TASK_CANCEL_TIMEOUT: Duration = Duration::from_secs(5);

/// Which protocol a server's tasks follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flavour {
    /// The tasks extension (SEP-2663).
    Extension,
    /// The 2025-11-25 tasks utility (SEP-1686).
    Utility,
}

/// A task the server created for a `tools/call`.
#[derive(Debug, Clone)]
pub(crate) struct Created {
    pub(crate) id: String,
    pub(crate) flavour: Flavour,
    /// The server's suggested polling interval, if any.
    pub(crate) poll: Option<Duration>,
}

/// The task a `tools/call` answer created, if it is one: a
/// `CreateTaskResult` of the extension, or the utility's `{"task": {...}}`.
pub(crate) fn created(result: &ServerResult) -> Option<Created> {
    match result {
        ServerResult::CreateTaskResult(c) => Some(Created {
            id: c.task.task_id.clone(),
            flavour: Flavour::Extension,
            poll: c.task.poll_interval_ms.map(Duration::from_millis),
        }),
        ServerResult::CustomResult(custom) => {
            let task = custom.0.get("task")?;
            let id = task.get("taskId")?.as_str()?;
            Some(Created {
                id: id.to_owned(),
                flavour: Flavour::Utility,
                poll: task
                    .get("pollInterval")
                    .and_then(Value::as_u64)
                    .map(Duration::from_millis),
            })
        }
        _ => None,
    }
}

/// Whether `error` (the answer to a plain `tools/call`) says the tool must
/// be called as a task: `-32021` whose data names the tasks extension, or
/// (`session`: a 2025-11-25 session) `-32601`.
pub(crate) fn refused_for_tasks(error: &ServiceError, session: bool) -> bool {
    let ServiceError::McpError(e) = error else {
        return false;
    };
    if e.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
        return e.data.as_ref().is_some_and(|d| {
            d.pointer("/requiredCapabilities/extensions")
                .and_then(Value::as_object)
                .is_some_and(|x| x.contains_key(rmcp::model::TASKS_EXTENSION_ID))
        });
    }
    session && e.code == ErrorCode::METHOD_NOT_FOUND
}

/// Whether a plain call's result is the 2025-11-25 refusal of a tool that
/// must be called as a task, reported as a tool error: the TypeScript SDK's
/// servers turn the `-32601` of the specification into an `isError` result
/// whose one text block reads `MCP error -32601: Tool NAME requires task
/// augmentation (taskSupport: 'required')`. Only an error result of one
/// short text naming both `-32601` and task augmentation counts.
pub(crate) fn refusal_result(result: &CallToolResult) -> bool {
    if result.is_error != Some(true) || result.content.len() != 1 {
        return false;
    }
    result.content[0].as_text().is_some_and(|t| {
        t.text.len() <= 500
            && t.text.contains("-32601")
            && t.text.to_ascii_lowercase().contains("task augmentation")
    })
}

/// The `_meta` of a task request: the client's capabilities with the
/// tasks extension declared.
pub(crate) fn task_meta(capabilities: &rmcp::model::ClientCapabilities) -> RequestMetaObject {
    let mut capabilities = capabilities.clone();
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), Map::new());
    let mut meta = RequestMetaObject::new();
    meta.set_client_capabilities(capabilities);
    meta
}

/// The `tools/call` of the 2025-11-25 tasks utility: `params` with
/// `"task": {"ttl": ttl_ms}`, as a request rmcp sends as it is.
pub(crate) fn utility_call(
    params: &rmcp::model::CallToolRequestParams,
    ttl: Duration,
) -> ClientRequest {
    let mut wire = serde_json::to_value(params).unwrap_or_else(|_| json!({}));
    if let Value::Object(map) = &mut wire {
        // rmcp puts the request's own `_meta` (progress token) back in.
        map.remove("_meta");
        map.insert(
            "task".to_owned(),
            json!({"ttl": u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX)}),
        );
    }
    ClientRequest::CustomRequest(CustomRequest::new("tools/call", Some(wire)))
}

/// The polling interval to use: the server's suggestion clamped, else the default.
pub(crate) fn poll_interval(suggested: Option<Duration>) -> Duration {
    suggested.map_or(DEFAULT_TASK_POLL_INTERVAL, |d| {
        d.clamp(MIN_TASK_POLL_INTERVAL, MAX_TASK_POLL_INTERVAL)
    })
}

/// A completed task's result (JSON) as a `CallToolResult`, within
/// [`MAX_TASK_RESULT_BYTES`].
///
/// # Errors
/// The message of a result over the limit or not a `CallToolResult`.
pub(crate) fn call_result(result: Value) -> Result<CallToolResult, String> {
    let size = serde_json::to_vec(&result).map_or(usize::MAX, |b| b.len());
    if size > MAX_TASK_RESULT_BYTES {
        return Err(format!(
            "the task's result is {size} bytes, over the client's limit of \
             {MAX_TASK_RESULT_BYTES} bytes; it was not kept"
        ));
    }
    serde_json::from_value(result)
        .map_err(|e| format!("the task's result is not a tools/call result: {e}"))
}

/// The text of a failed task's JSON-RPC `error`: `message (code N)`.
pub(crate) fn failure_text(error: &Map<String, Value>) -> String {
    let message = error
        .get("message")
        .and_then(Value::as_str)
        .unwrap_or("no message");
    match error.get("code").and_then(Value::as_i64) {
        Some(code) => format!("{} (code {code})", clip(message, Clip::chars(2000))),
        None => clip(message, Clip::chars(2000)).into_owned(),
    }
}

/// The state of one followed task, as far as the client needs it.
pub(crate) enum Seen {
    /// Still running; poll again after the interval (the server's, if given).
    Working(Option<Duration>),
    /// The extension's `input_required`: the requests to answer.
    Input(InputRequests),
    /// The utility's `input_required` or a terminal status: fetch the
    /// result with `tasks/result`.
    Fetch,
    /// The result.
    Done(CallToolResult),
    /// The task failed: the message.
    Failed(String),
    /// The server cancelled it.
    Cancelled,
}

/// Reads a `tasks/get` answer of `flavour`.
pub(crate) fn seen(flavour: Flavour, answer: ServerResult) -> Seen {
    match (flavour, answer) {
        (Flavour::Extension, ServerResult::GetTaskResult(got)) => {
            let poll = got.task.task.poll_interval_ms.map(Duration::from_millis);
            match got.task.payload {
                TaskPayload::Working => Seen::Working(poll),
                TaskPayload::InputRequired { input_requests } => Seen::Input(input_requests),
                TaskPayload::Completed { result } => match call_result(Value::Object(result)) {
                    Ok(result) => Seen::Done(result),
                    Err(e) => Seen::Failed(e),
                },
                TaskPayload::Failed { error } => Seen::Failed(failure_text(&error)),
                TaskPayload::Cancelled => Seen::Cancelled,
                _ => Seen::Working(poll),
            }
        }
        (Flavour::Extension, _) => {
            Seen::Failed("tasks/get answered with something else than a task".to_owned())
        }
        (Flavour::Utility, answer) => {
            // The utility's task is flat (`ttl`, `pollInterval`); rmcp may
            // read it as the extension's shape, which keeps the status.
            let wire = serde_json::to_value(&answer).unwrap_or(Value::Null);
            let poll = wire
                .get("pollInterval")
                .or_else(|| wire.get("pollIntervalMs"))
                .and_then(Value::as_u64)
                .map(Duration::from_millis);
            match wire.get("status").and_then(Value::as_str) {
                Some("working") => Seen::Working(poll),
                Some("input_required" | "completed" | "failed") => Seen::Fetch,
                Some("cancelled") => Seen::Cancelled,
                Some(other) => Seen::Failed(format!(
                    "tasks/get gave the unknown status `{}`",
                    clip(other, Clip::chars(40))
                )),
                None => {
                    Seen::Failed("tasks/get answered with something else than a task".to_owned())
                }
            }
        }
    }
}

/// How a followed task ended for the caller.
pub(crate) enum Ended {
    /// Its result.
    Result(CallToolResult),
    /// An error result for the caller (failed, cancelled, timed out, a bound hit).
    Error(ToolResult),
}

/// What following a task needs of the connection.
pub(crate) struct Follow<'a> {
    pub(crate) peer: &'a rmcp::Peer<rmcp::RoleClient>,
    pub(crate) closed: &'a tokio_util::sync::CancellationToken,
    pub(crate) server: &'a str,
    /// The capabilities with the extension, for every tasks request's `_meta`.
    pub(crate) meta: RequestMetaObject,
    pub(crate) deadline: Instant,
    /// The call's time when it started following (for messages).
    pub(crate) timeout: Duration,
    /// When the executor stops the call ([`ToolContext::deadline`]): a
    /// `tasks/cancel` waits for its ack at most until then.
    pub(crate) cancel_by: Option<Instant>,
}

impl Follow<'_> {
    fn error(&self, kind: ToolErrorKind, text: String, what: &str) -> Ended {
        Ended::Error(ToolResult::error(kind, text).with_metadata(meta::MCP_ERROR, what))
    }

    fn options(&self) -> PeerRequestOptions {
        let left = self.deadline.saturating_duration_since(Instant::now());
        PeerRequestOptions::with_timeout(left.max(Duration::from_millis(1)))
            .with_meta(self.meta.clone())
    }

    /// Sends one tasks request within the deadline, the caller's
    /// cancellation and the connection's life.
    async fn request(
        &self,
        request: ClientRequest,
        ctx: &ToolContext,
    ) -> Result<ServerResult, Interrupted> {
        let send = async {
            let handle = self
                .peer
                .send_cancellable_request(request, self.options())
                .await?;
            handle.await_response().await
        };
        tokio::select! {
            r = send => r.map_err(Interrupted::Service),
            () = self.closed.cancelled() => Err(Interrupted::Closed),
            () = ctx.cancellation_token().cancelled() => Err(Interrupted::Cancelled),
            () = tokio::time::sleep_until(self.deadline) => Err(Interrupted::Deadline),
        }
    }

    /// `tasks/cancel`, waiting at most [`TASK_CANCEL_TIMEOUT`]; failures
    /// only logged (the task ends on the server by its TTL anyway).
    async fn cancel(&self, id: &str) {
        let request = ClientRequest::CancelTaskRequest(CancelTaskRequest::new(
            CancelTaskParams::new(id.to_owned()),
        ));
        let wait = self.cancel_by.map_or(TASK_CANCEL_TIMEOUT, |by| {
            by.saturating_duration_since(Instant::now())
                .clamp(Duration::from_millis(1), TASK_CANCEL_TIMEOUT)
        });
        let options = PeerRequestOptions::with_timeout(wait).with_meta(self.meta.clone());
        // Queued first (then it is sent whatever happens to this call),
        // then its ack awaited.
        let handle = match self.peer.send_cancellable_request(request, options).await {
            Ok(handle) => handle,
            Err(e) => {
                tracing::warn!(
                    "MCP server `{}`: tasks/cancel of `{}` failed: {e}",
                    self.server,
                    clip(id, Clip::chars(80))
                );
                return;
            }
        };
        match tokio::time::timeout(wait, handle.await_response()).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => tracing::warn!(
                "MCP server `{}`: tasks/cancel of `{}` failed: {e}",
                self.server,
                clip(id, Clip::chars(80))
            ),
            Err(_) => tracing::warn!(
                "MCP server `{}`: tasks/cancel of `{}` got no answer within {wait:?}",
                self.server,
                clip(id, Clip::chars(80))
            ),
        }
    }

    /// Ends the call on an interruption: cancels the task on the server
    /// unless the connection is gone.
    async fn interrupted(&self, id: &str, why: Interrupted, what: &str) -> Ended {
        match why {
            Interrupted::Closed => self.error(
                ToolErrorKind::Failed,
                format!(
                    "MCP server `{}`: the connection closed while task `{}` ran",
                    self.server,
                    clip(id, Clip::chars(80))
                ),
                "connection_closed",
            ),
            Interrupted::Cancelled => {
                self.cancel(id).await;
                Ended::Error(ToolResult::error(
                    ToolErrorKind::Cancelled,
                    "the call was cancelled (its task was cancelled on the server)",
                ))
            }
            Interrupted::Deadline => {
                self.cancel(id).await;
                self.error(
                    ToolErrorKind::Timeout,
                    format!(
                        "MCP server `{}`: task `{}` did not end within the call's timeout of \
                         {:?}; it was cancelled on the server",
                        self.server,
                        clip(id, Clip::chars(80)),
                        self.timeout
                    ),
                    "timeout",
                )
            }
            Interrupted::Service(e) => {
                self.cancel(id).await;
                self.error(
                    ToolErrorKind::Failed,
                    format!("MCP server `{}`: {what} failed: {e}", self.server),
                    "protocol",
                )
            }
        }
    }

    /// Polls task `created` until it ends; `answer` answers an extension
    /// task's input requests (the keys not answered before).
    pub(crate) async fn run<A, F>(&self, created: Created, ctx: &ToolContext, answer: A) -> Ended
    where
        A: Fn(InputRequests) -> F,
        F: std::future::Future<Output = rmcp::model::InputResponses>,
    {
        let id = created.id.clone();
        let mut interval = poll_interval(created.poll);
        let mut answered = BTreeSet::new();
        let mut rounds = 0u32;
        for _poll in 0..MAX_TASK_POLLS {
            let wait = async {
                tokio::time::sleep(interval).await;
            };
            tokio::select! {
                () = wait => {}
                () = self.closed.cancelled() => return self.interrupted(&id, Interrupted::Closed, "").await,
                () = ctx.cancellation_token().cancelled() => {
                    return self.interrupted(&id, Interrupted::Cancelled, "").await;
                }
                () = tokio::time::sleep_until(self.deadline) => {
                    return self.interrupted(&id, Interrupted::Deadline, "").await;
                }
            }
            let get =
                ClientRequest::GetTaskRequest(GetTaskRequest::new(GetTaskParams::new(id.clone())));
            let got = match self.request(get, ctx).await {
                Ok(got) => got,
                Err(why) => return self.interrupted(&id, why, "tasks/get").await,
            };
            match seen(created.flavour, got) {
                Seen::Working(poll) => {
                    if poll.is_some() {
                        interval = poll_interval(poll);
                    }
                }
                Seen::Input(requests) => {
                    let fresh: InputRequests = requests
                        .into_iter()
                        .filter(|(key, _)| !answered.contains(key))
                        .collect();
                    if fresh.is_empty() {
                        continue;
                    }
                    rounds += 1;
                    if rounds > MAX_TASK_INPUT_ROUNDS {
                        self.cancel(&id).await;
                        return self.error(
                            ToolErrorKind::Failed,
                            format!(
                                "MCP server `{}`: task `{}` asked for input more than \
                                 {MAX_TASK_INPUT_ROUNDS} times; it was cancelled",
                                self.server,
                                clip(&id, Clip::chars(80))
                            ),
                            "protocol",
                        );
                    }
                    answered.extend(fresh.keys().cloned());
                    let responses = answer(fresh).await;
                    let update = ClientRequest::UpdateTaskRequest(UpdateTaskRequest::new(
                        UpdateTaskParams::new(id.clone(), responses),
                    ));
                    if let Err(why) = self.request(update, ctx).await {
                        return self.interrupted(&id, why, "tasks/update").await;
                    }
                }
                Seen::Fetch => return self.fetch(&id, ctx).await,
                Seen::Done(result) => return Ended::Result(result),
                Seen::Failed(message) => {
                    return self.error(
                        ToolErrorKind::Failed,
                        format!(
                            "MCP server `{}`: task `{}` failed: {message}",
                            self.server,
                            clip(&id, Clip::chars(80))
                        ),
                        "protocol",
                    );
                }
                Seen::Cancelled => {
                    return Ended::Error(ToolResult::error(
                        ToolErrorKind::Cancelled,
                        format!(
                            "MCP server `{}` cancelled task `{}`",
                            self.server,
                            clip(&id, Clip::chars(80))
                        ),
                    ));
                }
            }
        }
        self.cancel(&id).await;
        self.error(
            ToolErrorKind::Timeout,
            format!(
                "MCP server `{}`: task `{}` still ran after {MAX_TASK_POLLS} polls; it was cancelled",
                self.server,
                clip(&id, Clip::chars(80))
            ),
            "timeout",
        )
    }

    /// The utility's `tasks/result`: waits for the end (answering the
    /// server's requests of the task meanwhile) and returns the result.
    async fn fetch(&self, id: &str, ctx: &ToolContext) -> Ended {
        let request = ClientRequest::CustomRequest(CustomRequest::new(
            "tasks/result",
            Some(json!({"taskId": id})),
        ));
        match self.request(request, ctx).await {
            Ok(ServerResult::CallToolResult(result)) => {
                let wire = serde_json::to_value(&result).unwrap_or(Value::Null);
                match call_result(wire) {
                    Ok(result) => Ended::Result(result),
                    Err(e) => self.error(
                        ToolErrorKind::Failed,
                        format!("MCP server `{}`: {e}", self.server),
                        "protocol",
                    ),
                }
            }
            Ok(_) => self.error(
                ToolErrorKind::Failed,
                format!(
                    "MCP server `{}` answered tasks/result with something else than a tool result",
                    self.server
                ),
                "protocol",
            ),
            Err(Interrupted::Service(ServiceError::McpError(e))) => self.error(
                ToolErrorKind::Failed,
                format!(
                    "MCP server `{}`: task `{}` failed: {} (code {})",
                    self.server,
                    clip(id, Clip::chars(80)),
                    clip(&e.message, Clip::chars(2000)),
                    e.code.0
                ),
                "protocol",
            ),
            Err(why) => self.interrupted(id, why, "tasks/result").await,
        }
    }
}

/// Why a tasks request did not get its answer.
pub(crate) enum Interrupted {
    Service(ServiceError),
    Closed,
    Cancelled,
    Deadline,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_poll_interval_is_the_servers_within_bounds() {
        assert_eq!(poll_interval(None), DEFAULT_TASK_POLL_INTERVAL);
        assert_eq!(poll_interval(Some(Duration::ZERO)), MIN_TASK_POLL_INTERVAL);
        assert_eq!(
            poll_interval(Some(Duration::from_secs(3600))),
            MAX_TASK_POLL_INTERVAL
        );
        assert_eq!(
            poll_interval(Some(Duration::from_millis(1000))),
            Duration::from_millis(1000)
        );
    }

    #[test]
    fn both_flavours_of_created_tasks_are_recognised() {
        let utility: ServerResult = serde_json::from_value(json!({"task": {
            "taskId": "t-1", "status": "working", "createdAt": "2026-01-01T00:00:00Z",
            "lastUpdatedAt": "2026-01-01T00:00:00Z", "ttl": 300000, "pollInterval": 1000}}))
        .unwrap();
        let c = created(&utility).unwrap();
        assert_eq!((c.id.as_str(), c.flavour), ("t-1", Flavour::Utility));
        assert_eq!(c.poll, Some(Duration::from_millis(1000)));
        let extension: ServerResult = serde_json::from_value(json!({
            "resultType": "task", "taskId": "job-1", "status": "working",
            "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttlMs": 1000, "pollIntervalMs": 250}))
        .unwrap();
        let c = created(&extension).unwrap();
        assert_eq!((c.id.as_str(), c.flavour), ("job-1", Flavour::Extension));
        assert_eq!(c.poll, Some(Duration::from_millis(250)));
        let plain: ServerResult =
            serde_json::from_value(json!({"content": [{"type": "text", "text": "hi"}]})).unwrap();
        assert!(created(&plain).is_none());
    }

    #[test]
    fn the_typescript_sdks_refusal_result_is_recognised() {
        let result = |text: &str, is_error: bool| {
            let mut r: CallToolResult = serde_json::from_value(
                json!({"content": [{"type": "text", "text": text}], "isError": is_error}),
            )
            .unwrap();
            r.is_error = Some(is_error);
            r
        };
        let refusal = "MCP error -32601: Tool simulate-research-query requires task augmentation \
                       (taskSupport: 'required')";
        assert!(refusal_result(&result(refusal, true)));
        assert!(!refusal_result(&result(refusal, false)));
        assert!(!refusal_result(&result(
            "MCP error -32601: no such thing",
            true
        )));
    }

    #[test]
    fn a_result_over_the_limit_is_refused() {
        let big = json!({"content": [{"type": "text", "text": "x".repeat(MAX_TASK_RESULT_BYTES)}]});
        let e = call_result(big).err().unwrap();
        assert!(e.contains("over the client's limit"), "{e}");
        let ok = call_result(json!({"content": [{"type": "text", "text": "hi"}]})).unwrap();
        assert_eq!(ok.content.len(), 1);
    }

    #[test]
    fn the_utility_statuses_are_read() {
        let get = |status: &str| {
            let answer: ServerResult = serde_json::from_value(json!({
                "taskId": "t", "status": status, "createdAt": "x", "lastUpdatedAt": "x",
                "ttl": 1, "pollInterval": 2000}))
            .unwrap();
            seen(Flavour::Utility, answer)
        };
        assert!(matches!(get("working"), Seen::Working(_)));
        assert!(matches!(get("input_required"), Seen::Fetch));
        assert!(matches!(get("completed"), Seen::Fetch));
        assert!(matches!(get("cancelled"), Seen::Cancelled));
    }
}
