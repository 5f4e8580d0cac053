//! The MCP tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) on
//! the server: the protocol rendering of the one job registry
//! ([`tool_core::jobs`], cross-cutting §3), not a registry of its own.
//!
//! # Model
//! - **Which calls**: a `tools/call` of a tool whose spec says
//!   [`TaskSupport::Optional`] or [`TaskSupport::Required`]
//!   (`#[tool(task_support = "optional")]`,
//!   [`ToolSpec::with_task_support`](tool_core::ToolSpec::with_task_support)),
//!   from a client that declared the extension (at `initialize`, or per
//!   request in `_meta["io.modelcontextprotocol/clientCapabilities"]`),
//!   answers at once with a `CreateTaskResult` (`resultType: "task"`). The
//!   same call from a client without the extension runs inside the call
//!   (`optional`) or is refused with `-32021` naming the extension
//!   (`required`).
//! - **A task is a job**: started with [`JobRegistry::start_local`] under
//!   kind [`TASK_JOB_KIND`] and the key of the client's trace (the session's
//!   trace id; in 2026-07-28 the `traceparent`'s, else the server's base
//!   trace) in the server's workspace; its id is the job id (`job-<32 hex>`),
//!   so `job_output` / `job_kill` see it too. The tool's final
//!   `CallToolResult` (or the JSON-RPC error) is the job's output; the job's
//!   end is the task's status: exited → `completed` (a tool's own failure is
//!   `completed` with `isError: true`), failed → `failed` (a panic or a
//!   protocol error, with `error`), killed → `cancelled`, expired or lost →
//!   `failed`. A running task whose tool waits for input (2026-07-28) is
//!   `input_required`, its requests inlined ([`crate::task_input`]).
//! - **Bounds** ([`TaskLimits`]): at most `max_live` running tasks per
//!   client (8) and `max_total` in all (32), counted by the server itself
//!   (the next call is refused with `-32600` and a message naming the cap
//!   and how to free a slot). A client is what it cannot mint freely
//!   (review 26, F8): its MCP session (2025-11-25; the server makes the
//!   id), else (the stateless era) the bearer token it authenticated with,
//!   else its IP address, else (stdio) the one client of the process;
//!   never a `traceparent`, which a client may change per request. A
//!   result of at most
//!   `max_result_bytes` serialised (1 MiB, never more than the registry's
//!   output ring; a bigger one makes the task `failed` with a message
//!   naming the size), and a TTL (`ttlMs`, 1 h): a task runs at most that
//!   long (then it fails as expired) and is answered that long after its
//!   creation, after which `tasks/get` says it is unknown. The registry's
//!   own caps hold as well (16 running jobs, 64 records per trace: the
//!   oldest ended ones are forgotten first).
//! - **Advertised** (`capabilities.extensions["io.modelcontextprotocol/tasks"]`)
//!   while a served tool has task support; without one, `tasks/*` answer `-32601`.
//! - **Methods**: `tasks/get` (status, and the inlined `result` or `error`
//!   once terminal), `tasks/cancel` (an empty ack; the tool's cancellation
//!   token is cancelled and, as for any job, a command it runs is stopped),
//!   `tasks/update` (an empty ack; the responses answer the task's pending
//!   input requests, see [`crate::task_input`]). `tasks/result` and `tasks/list` are
//!   not part of the extension and answer `-32601`. An unknown task id is
//!   `-32602`. rmcp gates the three methods on the extension (`-32021`) and
//!   checks the `Mcp-Name` header against `taskId`.
//!
//! Dependency: `chrono` (already in the tree through rmcp) writes the
//! ISO 8601 `createdAt` / `lastUpdatedAt` timestamps.

use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResult, ClientCapabilities, CreateTaskResult, DetailedTask, ErrorCode, GetTaskResult,
    InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde_json::{Map, Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tool_core::ErrorKind as ToolErrorKind;
use tool_core::jobs::{JobEnd, JobPeek, JobRegistry, JobStatus, JobView};
use tool_core::state::StateKey;
use tool_core::{TaskSupport, ToolContext, ToolRegistry};

use crate::task_input::{TaskApprover, TaskAsker, TaskInput};

/// The job kind of MCP tasks in the job registry: `mcp-task`.
pub const TASK_JOB_KIND: &str = "mcp-task";
/// Running tasks one client may have at once unless [`TaskLimits`] says
/// otherwise: 8.
pub const DEFAULT_MAX_LIVE_TASKS: usize = 8;
/// Running tasks of all clients of one server at once unless
/// [`TaskLimits`] says otherwise: 32.
pub const DEFAULT_MAX_TOTAL_TASKS: usize = 32;
/// Largest serialised task result kept unless [`TaskLimits`] says otherwise: 1 MiB.
pub const DEFAULT_MAX_RESULT_BYTES: usize = 1 << 20;
/// A task's time to live unless [`TaskLimits`] says otherwise: 1 h.
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);
/// The polling interval suggested to clients (`pollIntervalMs`) unless
/// [`TaskLimits`] says otherwise: 500 ms.
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// How long a cancelled or expired task's tool gets to stop after its
/// cancellation token is cancelled before its end is recorded anyway: 5 s.
pub const CANCEL_GRACE: Duration = Duration::from_secs(5);

/// The bounds of a server's tasks ([`McpServer::with_task_limits`](crate::McpServer::with_task_limits)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct TaskLimits {
    /// Running tasks per client ([`DEFAULT_MAX_LIVE_TASKS`]; at least 1);
    /// the module docs say what one client is.
    pub max_live: usize,
    /// Running tasks of all clients ([`DEFAULT_MAX_TOTAL_TASKS`]; at least 1).
    pub max_total: usize,
    /// Largest serialised result, in bytes ([`DEFAULT_MAX_RESULT_BYTES`]);
    /// capped at the job registry's output ring.
    pub max_result_bytes: usize,
    /// Time to live from creation ([`DEFAULT_TASK_TTL`]): the longest a task
    /// runs and how long it is answered; capped at the job registry's job lifetime.
    pub ttl: Duration,
    /// Suggested polling interval ([`DEFAULT_POLL_INTERVAL`]).
    pub poll_interval: Duration,
}

impl Default for TaskLimits {
    fn default() -> Self {
        Self {
            max_live: DEFAULT_MAX_LIVE_TASKS,
            max_total: DEFAULT_MAX_TOTAL_TASKS,
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
        }
    }
}

impl TaskLimits {
    /// Limits of `max_live` running tasks per client, results of at most
    /// `max_result_bytes` and a time to live of `ttl`; the polling interval
    /// as the default.
    pub fn new(max_live: usize, max_result_bytes: usize, ttl: Duration) -> Self {
        Self {
            max_live,
            max_result_bytes,
            ttl,
            ..Self::default()
        }
    }
}

impl TaskLimits {
    /// These limits with at most `max_total` running tasks of all clients.
    #[must_use]
    pub fn with_max_total(mut self, max_total: usize) -> Self {
        self.max_total = max_total;
        self
    }
}

/// Who a task belongs to for the caps: see the module docs.
pub(crate) fn client_of(
    request: &rmcp::service::RequestContext<rmcp::RoleServer>,
    session: Option<&str>,
) -> String {
    if let Some(session) = session {
        return format!("session {session}");
    }
    let Some(parts) = request.extensions.get::<http::request::Parts>() else {
        return "stdio".to_owned();
    };
    // Only a token the server checked names a client: on a server without
    // one, any `Authorization` header would do.
    if let Some(crate::http::Authenticated(digest)) = parts.extensions.get() {
        let hex: String = digest[..16].iter().map(|b| format!("{b:02x}")).collect();
        return format!("token {hex}");
    }
    match parts
        .extensions
        .get::<axum::extract::ConnectInfo<std::net::SocketAddr>>()
    {
        Some(peer) => format!("address {}", peer.0.ip()),
        None => "unknown".to_owned(),
    }
}

/// The running tasks of a server, per client and in all (the caps of
/// [`TaskLimits`]); shared by every session of the server.
#[derive(Debug, Default)]
pub(crate) struct TaskSlots {
    counts: std::sync::Mutex<(std::collections::HashMap<String, usize>, usize)>,
}

/// A running task's place in [`TaskSlots`], given back when dropped.
pub(crate) struct Slot {
    slots: Arc<TaskSlots>,
    client: String,
}

impl TaskSlots {
    /// A slot for a new task of `client`.
    ///
    /// # Errors
    /// `-32600` naming the cap when the client or the server is at its cap.
    fn take(self: &Arc<Self>, client: &str, limits: &TaskLimits) -> Result<Slot, ErrorData> {
        let mut counts = self
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (per_client, total) = &mut *counts;
        let mine = per_client.get(client).copied().unwrap_or(0);
        let (max_live, max_total) = (limits.max_live.max(1), limits.max_total.max(1));
        if mine >= max_live {
            return Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{mine} tasks of this client are running, the most one client may run at \
                     once ({max_live}); no task was started. Cancel one with tasks/cancel, or \
                     wait for one to finish (tasks/get), then call again."
                ),
                Some(json!({"maxLiveTasks": max_live})),
            ));
        }
        if *total >= max_total {
            return Err(ErrorData::new(
                ErrorCode::INVALID_REQUEST,
                format!(
                    "{total} tasks are running on this server, the most it runs at once for all \
                     its clients ({max_total}); no task was started. Wait for tasks to finish, \
                     then call again."
                ),
                Some(json!({"maxTotalTasks": max_total})),
            ));
        }
        *per_client.entry(client.to_owned()).or_insert(0) += 1;
        *total += 1;
        Ok(Slot {
            slots: Arc::clone(self),
            client: client.to_owned(),
        })
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = self
            .slots
            .counts
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let (per_client, total) = &mut *counts;
        *total = total.saturating_sub(1);
        if let Some(mine) = per_client.get_mut(&self.client) {
            *mine = mine.saturating_sub(1);
            if *mine == 0 {
                per_client.remove(&self.client);
            }
        }
    }
}

/// The task settings of a server: limits and the workspace that keys its jobs.
#[derive(Debug, Clone, Default)]
pub(crate) struct TaskConfig {
    pub(crate) limits: TaskLimits,
    /// The running tasks, per client and in all.
    pub(crate) slots: Arc<TaskSlots>,
    /// The workspace of the job keys; `None`: the context's `workspace`
    /// value when it is an absolute path, else the current directory.
    pub(crate) workspace: Option<PathBuf>,
    /// Tools whose first input is gathered before the task is created.
    pub(crate) input_before_task: std::collections::BTreeSet<String>,
}

/// How a `tools/call` runs.
pub(crate) enum Dispatch {
    /// Inside the call.
    Sync,
    /// As a task.
    Task,
}

/// How a call of a tool with `support` runs for a client that did
/// (`declared`) or did not declare the tasks extension.
///
/// # Errors
/// `-32021` naming the extension for a `required` tool and a client without it.
pub(crate) fn dispatch(support: TaskSupport, declared: bool) -> Result<Dispatch, ErrorData> {
    match (support, declared) {
        (TaskSupport::Forbidden, _) | (TaskSupport::Optional, false) => Ok(Dispatch::Sync),
        (TaskSupport::Optional | TaskSupport::Required, true) => Ok(Dispatch::Task),
        (TaskSupport::Required, false) => Err(ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        )),
    }
}

/// Whether a tool of `registry` has task support: the server then
/// advertises the extension (and answers `tasks/*`; else `-32601`).
pub(crate) fn any_task_tool(registry: &ToolRegistry) -> bool {
    registry
        .specs()
        .any(|spec| spec.task_support != TaskSupport::Forbidden)
}

fn internal(message: impl Into<String>) -> ErrorData {
    ErrorData::internal_error(message.into(), None)
}

/// `-32602` for a task id this client does not have.
fn unknown_task(id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!(
            "No task `{}` for this client: it never existed, belongs to another client, or \
             its time to live ran out. Task ids are the `taskId` of the tools/call that \
             created the task.",
            tool_rules::text::clip(id, tool_rules::text::Clip::chars(64))
        ),
        None,
    )
}

/// The registry and the key of the client whose context is `ctx`.
fn registry_and_key(
    ctx: &ToolContext,
    config: &TaskConfig,
) -> Result<(JobRegistry, StateKey), ErrorData> {
    let jobs = JobRegistry::of_context(ctx).map_err(|e| internal(e.message))?;
    // The configured folder, else the context's `workspace` value (what
    // `tool serve` sets, so that `job_output` of the same trace sees the
    // tasks), else the current directory.
    let from_context = ctx
        .value_str("workspace")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute());
    let workspace = match config.workspace.clone().or(from_context) {
        Some(w) => w,
        None => std::env::current_dir()
            .map_err(|e| internal(format!("tasks need a workspace folder: {e}")))?,
    };
    let key =
        JobRegistry::key(ctx.trace_id(), Path::new(&workspace)).map_err(|e| internal(e.message))?;
    Ok((jobs, key))
}

/// Milliseconds since the Unix epoch as ISO 8601 UTC with milliseconds.
fn iso8601(ms: u64) -> String {
    let ms = i64::try_from(ms).unwrap_or(i64::MAX);
    chrono::DateTime::<chrono::Utc>::from_timestamp_millis(ms)
        .unwrap_or_default()
        .to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

/// Whole milliseconds of `d`, at least 1.
fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

fn effective_ttl(limits: &TaskLimits, jobs: &JobRegistry) -> Duration {
    limits
        .ttl
        .min(jobs.limits().lifetime)
        .max(Duration::from_secs(1))
}

fn effective_result_bytes(limits: &TaskLimits, jobs: &JobRegistry) -> usize {
    let ring = usize::try_from(jobs.limits().output_bytes).unwrap_or(usize::MAX);
    limits.max_result_bytes.min(ring).max(1)
}

/// The base task fields of a job.
fn task_of(view: &JobView, updated_ms: u64, ttl: Duration, limits: &TaskLimits) -> Task {
    Task::new(
        view.record.id.clone(),
        TaskStatus::Working,
        iso8601(view.record.started_ms),
        iso8601(updated_ms.max(view.record.started_ms)),
    )
    .with_ttl_ms(millis(ttl))
    .with_poll_interval_ms(millis(limits.poll_interval))
}

/// Renders a tool's result for MCP (the server's rendering, passed in so that
/// this module does not depend on the server's).
pub(crate) type Render = fn(&str, &tool_core::ToolResult) -> Result<CallToolResult, ErrorData>;

/// How a task's run ended, as its job records it.
enum Outcome {
    /// The tool returned (its own failures included): the result.
    Completed(CallToolResult),
    /// A protocol-level failure (a panic, an unrenderable result): the error.
    Failed(ErrorData),
    /// `tasks/cancel` or the server stopping.
    Cancelled,
    /// The time to live ran out while it ran.
    Expired,
}

/// A tool's run, to be supervised as a task.
type Run = Pin<Box<dyn Future<Output = Outcome> + Send>>;

/// Gives a task's context its input side ([`crate::task_input`]): the
/// tool's input requests, and (when the client answers forms) its questions
/// and confirmations, become the task's input requests.
pub(crate) fn with_input(ctx: ToolContext, input: &Arc<TaskInput>) -> ToolContext {
    let cancel = ctx.cancellation_token().clone();
    let channel: Arc<dyn crate::input::TaskChannel> = Arc::new(Arc::clone(input));
    let mut ctx = ctx.with_state(channel);
    if input.supports(crate::input::InputKind::Elicitation) {
        ctx = ctx
            .with_asker(TaskAsker::new(Arc::clone(input), cancel.clone()))
            .with_approver(TaskApprover::new(Arc::clone(input), cancel));
    }
    ctx
}

/// Starts a call of tool `name` as a task: registers the job (so that
/// `tasks/get` resolves before the answer leaves), runs the tool in the
/// background under `ctx` (whose cancellation token the task cancels), and
/// returns the `CreateTaskResult`. With `input` (2026-07-28; `ctx` made
/// with [`with_input`]) the task can wait for input.
///
/// # Errors
/// `-32600` at the live-task cap; `-32603` when the job registry cannot be
/// used (no state folder, a store failure).
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one call, each used once"
)]
pub(crate) async fn start(
    registry: Arc<ToolRegistry>,
    name: String,
    arguments: Map<String, Value>,
    ctx: ToolContext,
    config: &TaskConfig,
    tracker: &TaskTracker,
    render: Render,
    input: Option<Arc<TaskInput>>,
    client: &str,
) -> Result<CreateTaskResult, ErrorData> {
    let (jobs, key) = registry_and_key(&ctx, config)?;
    let slot = config.slots.take(client, &config.limits)?;
    let cancel = ctx.cancellation_token().clone();
    let run: Run = Box::pin(run_tool(registry, name.clone(), arguments, ctx, render));
    launch(jobs, key, name, run, cancel, config, tracker, input, slot).await
}

/// A call of a tool that gathers its first input before it becomes a task
/// ([`McpServer::with_input_before_task`](crate::McpServer::with_input_before_task)):
/// the tool runs inside the call with the round of `prepared` (2026-07-28
/// input-required rounds, SEP-2322). When it asks for what the round lacks,
/// the call ends with an input-required result and no task; once its first
/// ask has every answer, it asks a person, or it ends, the task is created
/// (SEP-2663: `CreateTaskResult` on the final round) and the run goes on
/// as the task.
///
/// # Errors
/// As [`start`], and as [`input_required::Sealer::asked`](crate::input_required::Sealer::asked).
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one call, each used once"
)]
pub(crate) async fn start_after_input(
    registry: Arc<ToolRegistry>,
    name: String,
    arguments: Map<String, Value>,
    prepared: crate::input_required::Prepared,
    config: &TaskConfig,
    tracker: &TaskTracker,
    render: Render,
    input: Arc<TaskInput>,
    escalated: oneshot::Receiver<()>,
    client: &str,
) -> Result<rmcp::model::CallToolResponse, ErrorData> {
    let crate::input_required::Prepared {
        ctx, stop, sealer, ..
    } = prepared;
    let (jobs, key) = registry_and_key(&ctx, config)?;
    let cancel = ctx.cancellation_token().clone();
    let mut run: Run = Box::pin(run_tool(registry, name.clone(), arguments, ctx, render));
    /// How the phase before the task ended.
    enum Phase {
        Asked(crate::input::Stop),
        Escalated,
        Ended(Outcome),
    }
    let phase = tokio::select! {
        biased;
        Ok(asked) = stop => Phase::Asked(asked),
        Ok(()) = escalated => Phase::Escalated,
        outcome = &mut run => Phase::Ended(outcome),
    };
    match phase {
        Phase::Asked(asked) => {
            return sealer.asked(asked).map(rmcp::model::CallToolResponse::from);
        }
        Phase::Escalated => {}
        Phase::Ended(outcome) => run = Box::pin(std::future::ready(outcome)),
    }
    let slot = config.slots.take(client, &config.limits)?;
    launch(
        jobs,
        key,
        name,
        run,
        cancel,
        config,
        tracker,
        Some(input),
        slot,
    )
    .await
    .map(rmcp::model::CallToolResponse::from)
}

/// Registers the job of `run` (holding `slot`, one of the client's running
/// tasks, until it ends) and supervises it in the background until it
/// ends, is cancelled or expires.
#[allow(
    clippy::too_many_arguments,
    reason = "the parts of one task, each used once"
)]
async fn launch(
    jobs: JobRegistry,
    key: StateKey,
    name: String,
    run: Run,
    cancel: CancellationToken,
    config: &TaskConfig,
    tracker: &TaskTracker,
    input: Option<Arc<TaskInput>>,
    slot: Slot,
) -> Result<CreateTaskResult, ErrorData> {
    let limits = config.limits;
    let ttl = effective_ttl(&limits, &jobs);
    let result_bytes = effective_result_bytes(&limits, &jobs);
    let (job, job_token, view) = {
        let jobs = jobs.clone();
        let key = key.clone();
        let name = name.clone();
        tool_core::run_blocking(move || {
            let (job, token) = jobs
                .start_local(&key, TASK_JOB_KIND, &name)
                .map_err(|e| ErrorData::new(ErrorCode::INVALID_REQUEST, e.message, None))?;
            let view = jobs.view(&key, job.id()).map_err(|e| internal(e.message))?;
            Ok((job, token, view))
        })
        .await
        .map_err(|e| internal(e.message))??
    };
    let created = CreateTaskResult::new(task_of(&view, view.record.started_ms, ttl, &limits));
    let id = job.id().to_owned();
    if let Some(input) = &input {
        input.register(&id);
    }
    tracker.spawn(async move {
        let mut run = run;
        let outcome = tokio::select! {
            outcome = &mut run => outcome,
            () = job_token.cancelled() => {
                cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut run).await;
                Outcome::Cancelled
            }
            () = tokio::time::sleep(ttl) => {
                cancel.cancel();
                let _ = tokio::time::timeout(CANCEL_GRACE, &mut run).await;
                Outcome::Expired
            }
        };
        // The server stopping cancels the tool too: the task is cancelled,
        // not completed with a "cancelled" tool result.
        let outcome = match outcome {
            Outcome::Completed(_) if cancel.is_cancelled() => Outcome::Cancelled,
            other => other,
        };
        // The tool has ended: its slot is free before its end is visible.
        drop(slot);
        let recorded = tool_core::run_blocking(move || record(&job, &name, outcome, result_bytes))
            .await
            .map_err(|e| e.message)
            .and_then(|r| r.map_err(|e| e.to_string()));
        if let Err(e) = recorded {
            tracing::warn!("task {id}: its end could not be recorded: {e}");
        }
        JobRegistry::forget_local(&id);
        TaskInput::unregister(&id);
        drop(input);
    });
    Ok(created)
}

/// Runs the tool and sorts its end: a panic (contained by the registry) is
/// a protocol-level failure, anything else the tool returned is a result.
async fn run_tool(
    registry: Arc<ToolRegistry>,
    name: String,
    arguments: Map<String, Value>,
    ctx: ToolContext,
    render: Render,
) -> Outcome {
    let result = registry
        .execute(&name, Value::Object(arguments), &ctx)
        .await;
    if let Some(error) = result
        .error
        .as_ref()
        .filter(|e| e.kind == ToolErrorKind::Panicked)
    {
        return Outcome::Failed(internal(error.message.clone()));
    }
    match render(&name, &result) {
        Ok(rendered) => Outcome::Completed(rendered),
        Err(e) => Outcome::Failed(e),
    }
}

/// Writes the outcome into the job's output and records its end.
fn record(
    job: &tool_core::jobs::Job,
    name: &str,
    outcome: Outcome,
    max_bytes: usize,
) -> std::io::Result<()> {
    let mut writer = job.writer()?;
    let error_json = |e: &ErrorData| {
        serde_json::to_vec(&json!({"code": e.code.0, "message": e.message, "data": e.data}))
            .unwrap_or_default()
    };
    match outcome {
        Outcome::Completed(result) => {
            let bytes = serde_json::to_vec(&result).unwrap_or_default();
            if bytes.len() > max_bytes {
                let e = internal(format!(
                    "The result of `{name}` is {} bytes, over the task result limit of \
                     {max_bytes} bytes; it was not kept. Ask the tool for less (a narrower \
                     query, a smaller range).",
                    bytes.len()
                ));
                writer.write(&error_json(&e))?;
                writer.finish(JobEnd::Failed, e.code.0)
            } else {
                writer.write(&bytes)?;
                writer.finish(JobEnd::Exited, 0)
            }
        }
        Outcome::Failed(e) => {
            writer.write(&error_json(&e))?;
            writer.finish(JobEnd::Failed, e.code.0)
        }
        Outcome::Cancelled => writer.finish(JobEnd::Killed, 0),
        Outcome::Expired => writer.finish(JobEnd::Expired, 0),
    }
}

/// The job `id` of this client as an MCP task: it must be a task job,
/// answered within its time to live.
fn peek_task(
    jobs: &JobRegistry,
    key: &StateKey,
    id: &str,
    limits: &TaskLimits,
) -> Result<JobPeek, ErrorData> {
    // The stored result is read whole: the limit plus room for its JSON.
    let max = effective_result_bytes(limits, jobs).saturating_add(1024);
    let peek = jobs.peek(key, id, max).map_err(|e| match e.kind {
        ToolErrorKind::InvalidArguments => unknown_task(id),
        _ => internal(e.message),
    })?;
    let ttl_ms = millis(effective_ttl(limits, jobs));
    let now = u64::try_from(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis(),
    )
    .unwrap_or(u64::MAX);
    let expired = now.saturating_sub(peek.view.record.started_ms) > ttl_ms
        && peek.view.status != JobStatus::Running;
    if peek.view.record.kind != TASK_JOB_KIND || expired {
        return Err(unknown_task(id));
    }
    Ok(peek)
}

fn object(bytes: &[u8]) -> Option<JsonObject> {
    match serde_json::from_slice::<Value>(bytes).ok()? {
        Value::Object(map) => Some(map),
        _ => None,
    }
}

/// `tasks/get`: the task's state, with the result or error once it ended.
///
/// # Errors
/// `-32602` for an unknown task; `-32603` when the registry cannot be read.
pub(crate) async fn get(
    ctx: &ToolContext,
    config: &TaskConfig,
    id: String,
) -> Result<GetTaskResult, ErrorData> {
    let (jobs, key) = registry_and_key(ctx, config)?;
    let limits = config.limits;
    let ttl = effective_ttl(&limits, &jobs);
    let peek = {
        let jobs = jobs.clone();
        tool_core::run_blocking(move || peek_task(&jobs, &key, &id, &limits))
            .await
            .map_err(|e| internal(e.message))??
    };
    let task = task_of(&peek.view, peek.updated_ms, ttl, &limits);
    let failed = |message: String| {
        let mut error = JsonObject::new();
        error.insert("code".into(), json!(ErrorCode::INTERNAL_ERROR.0));
        error.insert("message".into(), json!(message));
        TaskPayload::Failed { error }
    };
    let payload = match peek.view.status {
        JobStatus::Running => match crate::task_input::pending_requests(&peek.view.record.id) {
            Some(input_requests) => TaskPayload::InputRequired { input_requests },
            None => TaskPayload::Working,
        },
        JobStatus::Exited => match object(&peek.bytes).filter(|_| peek.dropped == 0) {
            Some(result) => TaskPayload::Completed { result },
            None => failed("The task's stored result is unreadable.".to_owned()),
        },
        JobStatus::Failed => match object(&peek.bytes).filter(|_| peek.dropped == 0) {
            Some(error) => TaskPayload::Failed { error },
            None => failed("The task failed.".to_owned()),
        },
        JobStatus::Killed => TaskPayload::Cancelled,
        JobStatus::Expired => failed(format!(
            "The task ran past its time to live ({} ms) and was stopped.",
            millis(ttl)
        )),
        JobStatus::Lost | JobStatus::HostExited => failed(
            "The process that ran the task ended before the task did (a server restart?)."
                .to_owned(),
        ),
    };
    Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
}

/// `tasks/cancel`: stops a running task (its tool's cancellation token is
/// cancelled; the end is recorded within [`CANCEL_GRACE`]); an ended task
/// is left as it is. Either way an empty ack.
///
/// # Errors
/// `-32602` for an unknown task; `-32603` when the registry cannot be used
/// or the task runs in another live process.
pub(crate) async fn cancel(
    ctx: &ToolContext,
    config: &TaskConfig,
    id: String,
) -> Result<(), ErrorData> {
    let (jobs, key) = registry_and_key(ctx, config)?;
    let limits = config.limits;
    tool_core::run_blocking(move || {
        let peek = peek_task(&jobs, &key, &id, &limits)?;
        if peek.view.status == JobStatus::Running {
            jobs.kill(&key, &id).map_err(|e| internal(e.message))?;
        }
        Ok(())
    })
    .await
    .map_err(|e| internal(e.message))?
}

/// `tasks/update`: hands the responses to the task's pending input
/// requests ([`crate::task_input`]); keys it does not wait for, and every
/// response to a task that waits for nothing, are ignored (SEP-2322). An
/// empty ack; the task's new state shows on the next `tasks/get`.
///
/// # Errors
/// `-32602` for an unknown task, or a response that is not an answer to
/// its request (nothing applied then); `-32603` when the registry cannot
/// be read.
pub(crate) async fn update(
    ctx: &ToolContext,
    config: &TaskConfig,
    id: String,
    responses: InputResponses,
) -> Result<(), ErrorData> {
    let (jobs, key) = registry_and_key(ctx, config)?;
    let limits = config.limits;
    let lookup = id.clone();
    let running = tool_core::run_blocking(move || {
        peek_task(&jobs, &key, &lookup, &limits).map(|p| p.view.status == JobStatus::Running)
    })
    .await
    .map_err(|e| internal(e.message))??;
    if running {
        crate::task_input::update(&id, &responses)?;
    }
    Ok(())
}

/// The cancellation token of a task's run: a child of the server's, so that
/// a stopping server cancels its tasks too.
pub(crate) fn task_token(server_stop: &CancellationToken) -> CancellationToken {
    server_stop.child_token()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_cap_each_client_and_the_total_and_come_back_when_dropped() {
        let slots = Arc::new(TaskSlots::default());
        let limits = TaskLimits::default().with_max_total(3);
        let limits = TaskLimits {
            max_live: 2,
            ..limits
        };
        let a1 = slots.take("a", &limits).expect("a 1");
        let _a2 = slots.take("a", &limits).expect("a 2");
        let refused = slots.take("a", &limits).err().expect("a 3 refused");
        assert!(refused.message.contains("one client may run at once (2)"));
        let _b1 = slots.take("b", &limits).expect("b 1");
        let refused = slots.take("b", &limits).err().expect("b 2 refused");
        assert!(
            refused.message.contains("for all its clients (3)"),
            "{refused:?}"
        );
        drop(a1);
        let _b2 = slots.take("b", &limits).expect("a slot came back");
    }

    #[test]
    fn timestamps_are_iso8601_utc_with_milliseconds() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_700_000_000_123), "2023-11-14T22:13:20.123Z");
    }

    #[test]
    fn dispatch_follows_the_tools_task_support_and_the_clients_extension() {
        assert!(matches!(
            dispatch(TaskSupport::Forbidden, true),
            Ok(Dispatch::Sync)
        ));
        assert!(matches!(
            dispatch(TaskSupport::Optional, false),
            Ok(Dispatch::Sync)
        ));
        assert!(matches!(
            dispatch(TaskSupport::Optional, true),
            Ok(Dispatch::Task)
        ));
        assert!(matches!(
            dispatch(TaskSupport::Required, true),
            Ok(Dispatch::Task)
        ));
        let refused = dispatch(TaskSupport::Required, false).err().unwrap();
        assert_eq!(refused.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        let data = refused.data.unwrap();
        assert!(
            data["requiredCapabilities"]["extensions"]["io.modelcontextprotocol/tasks"].is_object(),
            "{data}"
        );
    }
}
