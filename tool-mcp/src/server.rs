//! [`McpServer`]: a [`RegistryView`] of a [`LiveRegistry`] served over MCP
//! (rmcp's [`ServerHandler`], by hand).
//!
//! Why one file of this size: it is one concern, the server side of the
//! protocol for a view (tools/list paging, calls, sessions and their loaded
//! tools, notifications); HTTP access control is `http.rs`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse, Implementation,
    ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProtocolVersion, ReadResourceRequestParams,
    ReadResourceResponse, ResultType, ServerCapabilities, ServerConfig, SubscribeRequestParams,
    SubscriptionFilter, Tool as McpTool, UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, Peer, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use tool_core::format::{Format, ToolCall, render_result};
use tool_core::view::{InlineSchemas, SearchSession};
use tool_core::{Progress, RegistryView, Rendering, ToolContext, ToolRegistry};

use crate::approval;
use crate::catalog::{Catalog, MAX_SUBSCRIPTIONS};
use crate::catalog_wire::{self, Subscriptions};
use crate::error::{Error, ErrorKind};
use crate::framing::FramedTransport;
use crate::http::{self, HttpAccess};
use crate::stdio;
use crate::task_input::TaskInput;
use crate::{input, input_required};
use tool_core::LiveRegistry;

/// Tools per `tools/list` page unless [`McpServer::with_page_size`] says otherwise.
pub const DEFAULT_PAGE_SIZE: usize = 100;

/// How long a server that is told to stop (or whose client went away) waits
/// for the tool calls still running to end after cancelling them: 4 s, so
/// that a `bash_command` can stop its command (`SIGTERM`, then `SIGKILL`
/// after its 2 s grace) and the process exits within 5 s of the signal.
pub const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(4);

/// Cursor prefix: a page cursor is `after:<name of the last tool sent>`, so
/// paging stays deterministic (name order) even when the list changes between pages.
const CURSOR_PREFIX: &str = "after:";

/// How often a session's `list_changed` task looks whether its session has
/// ended (1 s): what an ended session holds is freed at most this late.
const SESSION_END_POLL: Duration = Duration::from_secs(1);

/// Numbers the sessions of this process, for their [`SearchSession`] names.
static SESSIONS: AtomicU64 = AtomicU64::new(0);

/// An MCP server over a view of a tool registry: `tools/list` (paginated),
/// `tools/call` through [`ToolRegistry::execute`] with a context per request,
/// progress, cancellation, confirmation by elicitation, and
/// `notifications/tools/list_changed`.
///
/// It speaks both protocol eras rmcp 3.x implements: 2025-11-25
/// (`initialize`, sessions) and 2026-07-28 (stateless, `server/discover`,
/// `subscriptions/listen` for list changes).
///
/// # Views and deferred tools
///
/// Only the tools of the [`RegistryView`] are listed and callable (a call
/// to another is "unknown tool"). When the view defers tools, `tools/list`
/// shows the always-loaded tools and `tool_search`, then the tools loaded
/// in this session in load order (paging follows that order), and a
/// session gets `notifications/tools/list_changed` when its loaded set
/// grows. Each session has a trace id of its own (`<base trace
/// id>-mcp-session-<n>-<32 hex>`, else `mcp-session-<n>-<32 hex>`) that keys its loads, and a
/// context of its own through [`with_session_setup`](Self::with_session_setup)
/// (its own read ledger in `tool serve`). In the stateless era
/// (2026-07-28) there is no session: `tool_search` answers with the
/// matches' full definitions ([`InlineSchemas`]) and calls to deferred
/// tools of the view are accepted by name.
///
/// Cheap to clone; clones serve the same view.
#[derive(Clone)]
pub struct McpServer {
    view: RegistryView,
    /// The session this handler serves (initialize era), set per connection.
    session: Option<Arc<str>>,
    /// The context of that session: the base context under the session's
    /// own trace id, through the [session setup](McpServer::with_session_setup).
    session_context: Option<ToolContext>,
    /// The resources this session subscribed to (initialize era).
    subscriptions: Subscriptions,
    /// Dropped with the session's last handler: stops its background jobs.
    session_end: Option<Arc<SessionEnd>>,
    config: Arc<Config>,
    calls: Calls,
}

/// What a session leaves behind when it ends (its client's `DELETE`, its
/// idle timeout, the server stopping): the background jobs it started
/// still running are stopped, since no later request can name the
/// session's trace (its id holds 128 random bits) to read or kill them.
struct SessionEnd {
    context: ToolContext,
    owner: String,
}

impl Drop for SessionEnd {
    fn drop(&mut self) {
        let Ok(jobs) = tool_core::jobs::JobRegistry::of_context(&self.context) else {
            return;
        };
        let owner = std::mem::take(&mut self.owner);
        // A kill may wait for its job's writer (`jobs::KILL_WAIT`): never on
        // a runtime worker.
        let stop = move || {
            let stopped = jobs.stop_owner_started_here(&owner);
            if stopped > 0 {
                tracing::info!(session = %owner, stopped, "MCP session ended: its background jobs were stopped");
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(handle) => {
                handle.spawn_blocking(stop);
            }
            Err(_) => stop(),
        }
    }
}

/// The tool calls of one serving run: cancelled together when it stops,
/// and waited for.
#[derive(Clone, Default)]
struct Calls {
    stop: CancellationToken,
    tracker: TaskTracker,
}

impl Calls {
    fn under(shutdown: &CancellationToken) -> Self {
        Self {
            stop: shutdown.child_token(),
            tracker: TaskTracker::new(),
        }
    }

    /// Cancels every call still running and waits for them to end, until
    /// `deadline` at most.
    async fn finish(&self, deadline: tokio::time::Instant) {
        self.stop.cancel();
        self.tracker.close();
        if tokio::time::timeout_at(deadline, self.tracker.wait())
            .await
            .is_err()
        {
            tracing::warn!(
                "{} tool call(s) still running after the shutdown timeout",
                self.tracker.len()
            );
        }
    }
}

/// Makes the context of one client's state from the base context: see
/// [`McpServer::with_session_setup`].
type SessionSetup = Arc<dyn Fn(ToolContext, ClientScope<'_>) -> ToolContext + Send + Sync>;

/// Whose state a context made by a [session setup](McpServer::with_session_setup) holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientScope<'a> {
    /// One MCP session of the initialize era (2025-11-25), named by the
    /// session's trace id (`<base trace id>-mcp-session-<n>-<32 hex>`, or
    /// `mcp-session-<n>-<32 hex>`); the context lives as long as the session.
    Session(&'a str),
    /// A stateless-era (2026-07-28) request whose `params._meta.traceparent`
    /// (W3C Trace Context, MCP SEP-414) names a trace: every request of that
    /// trace gets a context for `mcp-trace-<32 hex trace-id>`, so state must
    /// outlive the request (a persistent store).
    Trace(&'a str),
    /// A stateless-era request without a valid `traceparent`: its context
    /// serves this one request and shares nothing. It is marked
    /// [`AnonymousCaller`](tool_core::jobs::AnonymousCaller): the base trace
    /// it keeps is every such client's, so a background job it starts is
    /// reached only through the job's id (128 random bits) and `job_list`
    /// lists nothing.
    Request,
}

/// The running program's name: the file name of its executable (as the
/// first command-line argument names it), without a `.exe` suffix.
pub(crate) fn program_name() -> Option<String> {
    let arg0 = std::env::args_os().next()?;
    let stem = std::path::Path::new(&arg0)
        .file_stem()?
        .to_str()?
        .to_owned();
    (!stem.is_empty()).then_some(stem)
}

#[derive(Clone)]
struct Config {
    context: ToolContext,
    session_setup: Option<SessionSetup>,
    page_size: usize,
    name: String,
    version: String,
    instructions: Option<String>,
    http_limits: http::HttpLimits,
    health: Option<http::HealthCheck>,
    catalog: Catalog,
    tasks: crate::tasks::TaskConfig,
}

impl McpServer {
    /// Serves `view` (a [`RegistryView`], or a [`LiveRegistry`] or
    /// [`ToolRegistry`] for all its tools) with an empty base context, pages
    /// of [`DEFAULT_PAGE_SIZE`] and, as server info, the program's name (the
    /// file name of the running executable, `shop-server` for
    /// `/usr/bin/shop-server`; `tool-mcp` only when it cannot be read) with
    /// this crate's version. A library cannot read its program's version:
    /// give both with [`with_server_info`](Self::with_server_info)
    /// (`env!("CARGO_PKG_NAME")`, `env!("CARGO_PKG_VERSION")` in the binary).
    pub fn new(view: impl Into<RegistryView>) -> Self {
        Self {
            view: view.into(),
            session: None,
            session_context: None,
            session_end: None,
            subscriptions: Subscriptions::default(),
            config: Arc::new(Config {
                context: ToolContext::new(),
                session_setup: None,
                page_size: DEFAULT_PAGE_SIZE,
                name: program_name().unwrap_or_else(|| env!("CARGO_PKG_NAME").to_owned()),
                version: env!("CARGO_PKG_VERSION").to_owned(),
                instructions: None,
                http_limits: http::HttpLimits::default(),
                health: None,
                catalog: Catalog::new(),
                tasks: crate::tasks::TaskConfig::default(),
            }),
            calls: Calls::default(),
        }
    }

    fn config_mut(&mut self) -> &mut Config {
        Arc::make_mut(&mut self.config)
    }

    /// The context every call starts from (workspace, approver, secrets, ...).
    /// Each request gets a copy with its own cancellation token and progress sink.
    #[must_use]
    pub fn with_context(mut self, context: ToolContext) -> Self {
        self.config_mut().context = context;
        self
    }

    /// How a client's own context is made from the base context: called
    /// once per MCP session (initialize era) with [`ClientScope::Session`],
    /// and per stateless-era request with [`ClientScope::Trace`] or
    /// [`ClientScope::Request`]. The context passed in already carries the
    /// client's own trace id (so its loaded tools and spill folder are its
    /// own); the setup replaces per-client state the base holds, such as a
    /// read ledger (`tool_builtins::for_session` / `for_trace`), so that
    /// what one client did never counts for another. Without a setup, the
    /// state in the base context is shared by every client.
    #[must_use]
    pub fn with_session_setup(
        mut self,
        setup: impl Fn(ToolContext, ClientScope<'_>) -> ToolContext + Send + Sync + 'static,
    ) -> Self {
        self.config_mut().session_setup = Some(Arc::new(setup));
        self
    }

    /// Tools per `tools/list` page (at least 1).
    #[must_use]
    pub fn with_page_size(mut self, page_size: usize) -> Self {
        self.config_mut().page_size = page_size.max(1);
        self
    }

    /// The `serverInfo` name and version.
    #[must_use]
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        let config = self.config_mut();
        config.name = name.into();
        config.version = version.into();
        self
    }

    /// Instructions sent to clients at initialisation.
    #[must_use]
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.config_mut().instructions = Some(instructions.into());
        self
    }

    /// Session, header and body limits of
    /// [`serve_http_with`](Self::serve_http_with) (defaults:
    /// [`HttpLimits::default`](crate::HttpLimits)).
    #[must_use]
    pub fn with_http_limits(mut self, limits: http::HttpLimits) -> Self {
        self.config_mut().http_limits = limits;
        self
    }

    /// What `GET /health` of [`serve_http_with`](Self::serve_http_with)
    /// asks before it answers `200 ok`: `check` runs on the blocking pool
    /// (it may do network I/O, such as a state store's probe), at most
    /// once per [`HEALTH_CACHE`](crate::HEALTH_CACHE) whatever the number of
    /// requests, and its answer is `503 unavailable` when it returns
    /// `false`, panics or takes longer than
    /// [`HEALTH_TIMEOUT`](crate::HEALTH_TIMEOUT). Without a check, a server
    /// that answers HTTP answers `200 ok`.
    #[must_use]
    pub fn with_health_check(mut self, check: impl Fn() -> bool + Send + Sync + 'static) -> Self {
        self.config_mut().health = Some(Arc::new(check));
        self
    }

    /// The prompts, resources and resource templates served beside the
    /// tools (default: an empty [`Catalog`]; the `prompts` and `resources`
    /// capabilities are declared either way, with empty lists). The
    /// catalog is shared: entries added to it later reach every client,
    /// with `list_changed` notifications.
    #[must_use]
    pub fn with_catalog(mut self, catalog: Catalog) -> Self {
        self.config_mut().catalog = catalog;
        self
    }

    /// The bounds of the tasks this server runs for tools with task support
    /// (default [`TaskLimits::default`](crate::tasks::TaskLimits): 8 running per
    /// client, 1 MiB results, 1 h time to live). See the tasks extension in
    /// the crate docs.
    #[must_use]
    pub fn with_task_limits(mut self, limits: crate::tasks::TaskLimits) -> Self {
        self.config_mut().tasks.limits = limits;
        self
    }

    /// The workspace folder whose job registry keys hold this server's
    /// tasks (default: the base context's `workspace` value when it is an
    /// absolute path, as `tool serve` sets it, else the current directory
    /// when a task starts): the workspace root lets `job_output` /
    /// `job_kill` of the same trace see the tasks.
    #[must_use]
    pub fn with_task_workspace(mut self, workspace: impl Into<std::path::PathBuf>) -> Self {
        self.config_mut().tasks.workspace = Some(workspace.into());
        self
    }

    /// Tools (by name; task support optional or required) whose first input
    /// is gathered before their task is created, in the 2026-07-28 era:
    /// the call runs the tool inside the `tools/call` as input-required
    /// rounds (SEP-2322) and answers with the task (`CreateTaskResult`)
    /// once the tool's first ask has every answer, it asks a person, or it
    /// ends; later input requests park the task in `input_required`. Other
    /// task tools become a task at once and every input request parks the
    /// task. Default: none.
    #[must_use]
    pub fn with_input_before_task<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.config_mut()
            .tasks
            .input_before_task
            .extend(tools.into_iter().map(Into::into));
        self
    }

    /// The catalog served.
    pub fn catalog(&self) -> &Catalog {
        &self.config.catalog
    }

    /// The live registry served (through [`view`](Self::view)).
    pub fn registry(&self) -> &LiveRegistry {
        self.view.live()
    }

    /// The view served.
    pub fn view(&self) -> &RegistryView {
        &self.view
    }

    /// This handler for a new session: its own trace id
    /// (`<base trace id>-mcp-session-<n>-<32 hex>`, else
    /// `mcp-session-<n>-<32 hex>`: the hex is 128 random bits, so no client
    /// can name another session's trace), which
    /// names its loaded tools ([`SearchSession`]) and its spill folder, and
    /// its own context from the [session setup](Self::with_session_setup).
    fn for_new_session(&self) -> Self {
        let mut s = self.clone();
        let n = SESSIONS.fetch_add(1, Ordering::Relaxed);
        let id = match self.config.context.trace_id() {
            Some(trace) => format!("{trace}-mcp-session-{n}-{}", session_secret()),
            None => format!("mcp-session-{n}-{}", session_secret()),
        };
        let ctx = self.config.context.clone().with_trace_id(id.clone());
        s.session_context = Some(match &self.config.session_setup {
            Some(setup) => setup(ctx, ClientScope::Session(&id)),
            None => ctx,
        });
        s.session_end = s.session_context.clone().map(|context| {
            let owner = context.trace_id().unwrap_or(&id).to_owned();
            Arc::new(SessionEnd { context, owner })
        });
        s.session = Some(Arc::from(id));
        s.subscriptions = Subscriptions::default();
        s
    }

    /// The key of this session's loaded tools: the session's own trace id,
    /// else (a handler not made per session) the base context's.
    fn session_key(&self) -> Option<String> {
        self.session
            .as_deref()
            .map(str::to_owned)
            .or_else(|| self.config.context.trace_id().map(str::to_owned))
    }

    /// The context a stateless-era request starts from: per client trace
    /// (`params._meta.traceparent`) or per request, through the session setup.
    fn stateless_context(&self, request: &RequestContext<RoleServer>) -> ToolContext {
        let base = self.config.context.clone();
        let trace = request
            .meta
            .get("traceparent")
            .and_then(Value::as_str)
            .and_then(trace_id_of_traceparent);
        match (trace, &self.config.session_setup) {
            (Some(trace), Some(setup)) => {
                let id = format!("mcp-trace-{trace}");
                setup(base.with_trace_id(id.clone()), ClientScope::Trace(&id))
            }
            (Some(trace), None) => base.with_trace_id(format!("mcp-trace-{trace}")),
            // No identity a later request could present: every such client
            // shares the base trace, so its jobs are reached by their ids
            // alone and never listed (review 27 F13).
            (None, Some(setup)) => {
                setup(base, ClientScope::Request).with_state(tool_core::jobs::AnonymousCaller)
            }
            (None, None) => base.with_state(tool_core::jobs::AnonymousCaller),
        }
    }

    /// Serves one client over this process's stdin and stdout until the
    /// client closes stdin or the process gets `SIGTERM`, `SIGINT` or
    /// `SIGHUP` ([`shutdown_signal`]); then the calls still running are
    /// cancelled and waited for up to [`SHUTDOWN_TIMEOUT`], and it returns
    /// `Ok`.
    ///
    /// Stdout is protected first ([`stdio::protect_stdout`]): the original
    /// stdout is kept for protocol bytes and fd 1 is pointed at stderr, so
    /// nothing a tool prints can corrupt the stream. Messages are checked as
    /// [`serve_transport`](Self::serve_transport) describes.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the streams or the signal handlers cannot be
    /// set up, [`ErrorKind::Connect`] when the client's handshake fails.
    pub async fn serve_stdio(self) -> Result<(), Error> {
        let shutdown = shutdown_signal()?;
        self.serve_stdio_until(shutdown).await
    }

    /// [`serve_stdio`](Self::serve_stdio), stopping when `shutdown` is
    /// cancelled instead of on signals.
    ///
    /// # Errors
    /// As [`serve_stdio`](Self::serve_stdio).
    pub async fn serve_stdio_until(self, shutdown: CancellationToken) -> Result<(), Error> {
        let (reader, writer) = stdio::protected_stdio()?;
        self.serve_transport_until((reader, writer), shutdown).await
    }

    /// Serves one client over any byte stream pair (a socket, an in-memory
    /// duplex in tests) until it closes.
    ///
    /// Messages are newline-delimited JSON-RPC, at most
    /// [`MAX_MESSAGE_BYTES`](crate::framing::MAX_MESSAGE_BYTES) each, and every request
    /// gets exactly one answer: lines that are not JSON get `-32700` (`id:
    /// null`), malformed messages `-32600` with their `id`, bad params of
    /// `tools/call`, `tools/list` or `logging/setLevel` `-32602`, oversize
    /// messages `-32600`
    /// (the id when it is in their first 64 KiB); serving goes on after each.
    ///
    /// # Errors
    /// [`ErrorKind::Connect`] when the client's handshake fails.
    pub async fn serve_transport<R, W>(self, transport: (R, W)) -> Result<(), Error>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        self.serve_transport_until(transport, CancellationToken::new())
            .await
    }

    /// [`serve_transport`](Self::serve_transport) until the client closes or
    /// `shutdown` is cancelled. Either way, the tool calls still running are
    /// then cancelled (a `bash_command` stops its command) and waited for up
    /// to [`SHUTDOWN_TIMEOUT`].
    ///
    /// # Errors
    /// [`ErrorKind::Connect`] when the client's handshake fails,
    /// [`ErrorKind::Io`] when the session task fails.
    pub async fn serve_transport_until<R, W>(
        mut self,
        transport: (R, W),
        shutdown: CancellationToken,
    ) -> Result<(), Error>
    where
        R: tokio::io::AsyncRead + Send + Unpin + 'static,
        W: tokio::io::AsyncWrite + Send + Unpin + 'static,
    {
        self.calls = Calls::under(&shutdown);
        self = self.for_new_session();
        let calls = self.calls.clone();
        let transport = FramedTransport::new(transport.0, transport.1);
        let running = tokio::select! {
            running = self.serve(transport) => running.map_err(|e| {
                Error::new(ErrorKind::Connect, format!("MCP handshake failed: {e}"))
            })?,
            () = shutdown.cancelled() => return Ok(()),
        };
        let session = running.cancellation_token();
        let waiting = running.waiting();
        tokio::pin!(waiting);
        let ended = tokio::select! {
            ended = &mut waiting => Some(ended),
            () = shutdown.cancelled() => None,
        };
        let deadline = tokio::time::Instant::now() + SHUTDOWN_TIMEOUT;
        let ended = match ended {
            Some(ended) => Some(ended),
            None => {
                calls.stop.cancel();
                session.cancel();
                tokio::time::timeout_at(deadline, &mut waiting).await.ok()
            }
        };
        calls.finish(deadline).await;
        match ended {
            Some(Err(e)) => Err(Error::new(
                ErrorKind::Io,
                format!("MCP session ended abnormally: {e}"),
            )),
            _ => Ok(()),
        }
    }

    /// Serves Streamable HTTP at `http://<addr>/mcp` to loopback clients
    /// until `shutdown` is cancelled: [`serve_http_with`](Self::serve_http_with)
    /// with [`HttpAccess::loopback`]. `addr` must be a loopback address.
    ///
    /// # Errors
    /// As [`serve_http_with`](Self::serve_http_with).
    pub async fn serve_http(
        self,
        addr: SocketAddr,
        shutdown: CancellationToken,
    ) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), Error> {
        self.serve_http_with(addr, HttpAccess::loopback(), shutdown)
            .await
    }

    /// Serves Streamable HTTP at `http://<addr>/mcp` until `shutdown` is
    /// cancelled, to the clients `access` lets in. Returns once listening,
    /// with the bound address (port 0 picks a free one) and the server task.
    /// When `shutdown` is cancelled, calls still running are cancelled and
    /// the task ends within [`SHUTDOWN_TIMEOUT`] plus a moment.
    ///
    /// `GET /health` needs no token and tells nothing but `200 ok` or `503
    /// unavailable` (see [`with_health_check`](Self::with_health_check)):
    /// what a load balancer's HTTP check asks. It is not subject to the
    /// checks below.
    ///
    /// Every other request goes through, in this order: the bearer token when
    /// `access` has one (`401` with `WWW-Authenticate: Bearer` without it or
    /// with a wrong one); for POST bodies, the message checks of
    /// [`serve_transport`](Self::serve_transport) (`413` over
    /// [`MAX_MESSAGE_BYTES`](crate::framing::MAX_MESSAGE_BYTES), `400` with the JSON-RPC
    /// error for `-32700`/`-32600`, `200` with it for `-32602`); then rmcp's
    /// DNS-rebinding protection: on loopback access the `Host` header must
    /// name a loopback host, and a browser `Origin`, when present, must be a
    /// loopback origin. With remote access the `Host` check is off (clients
    /// reach the server under names it cannot know; the token, which a
    /// rebinding page does not have, is the protection) and the `Origin`
    /// check stays.
    ///
    /// The limits of [`with_http_limits`](Self::with_http_limits) hold
    /// throughout: sessions idle past `idle_timeout` are closed (`404`
    /// afterwards), an `initialize` past `max_sessions` gets `503` with
    /// `Retry-After`, a connection whose headers take longer than
    /// `header_timeout` is closed and a POST body slower than
    /// `body_timeout` gets `408`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] when `addr` is not a loopback address and
    /// `access` does not allow remote clients; [`ErrorKind::Io`] when the
    /// address cannot be bound.
    pub async fn serve_http_with(
        mut self,
        addr: SocketAddr,
        access: HttpAccess,
        shutdown: CancellationToken,
    ) -> Result<(SocketAddr, tokio::task::JoinHandle<()>), Error> {
        use rmcp::transport::streamable_http_server::{
            StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
        };
        let limits = self.config.http_limits;
        access.permits(addr)?;
        // Sessions and the listener stop after the calls have ended, so that
        // the answers of cancelled calls still reach their clients.
        let sessions = CancellationToken::new();
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot listen on {addr}: {e}")))?;
        let bound = listener
            .local_addr()
            .map_err(|e| Error::new(ErrorKind::Io, format!("cannot listen on {addr}: {e}")))?;
        let mut config = StreamableHttpServerConfig::default()
            .with_allowed_origins([
                "http://localhost:*",
                "http://127.0.0.1:*",
                "http://[::1]:*",
                "https://localhost:*",
            ])
            .with_max_request_body_bytes(crate::framing::MAX_MESSAGE_BYTES)
            .with_cancellation_token(sessions.clone());
        config = if access.is_remote() {
            config.disable_allowed_hosts()
        } else {
            config.with_allowed_hosts(["localhost", "127.0.0.1", "::1"])
        };
        self.calls = Calls::under(&shutdown);
        let calls = self.calls.clone();
        let health = http::Health::new(self.config.health.clone());
        // rmcp closes a session idle for `keep_alive`; the manager is shared
        // with the session cap, which counts its sessions.
        let mut manager = LocalSessionManager::default();
        manager.session_config.keep_alive = Some(limits.idle_timeout);
        let manager = Arc::new(manager);
        let service: StreamableHttpService<McpServer, LocalSessionManager> =
            StreamableHttpService::new(
                move || Ok(self.for_new_session()),
                Arc::clone(&manager),
                config,
            );
        let router = http::router(
            axum::Router::new().nest_service("/mcp", service),
            &access,
            limits,
            manager,
        )
        .merge(http::health_route(health));
        let task = tokio::spawn(async move {
            let serving = http::serve_connections(listener, router, limits, sessions.clone());
            tokio::pin!(serving);
            let ended = tokio::select! {
                _ = &mut serving => true,
                () = shutdown.cancelled() => false,
            };
            let deadline = tokio::time::Instant::now() + SHUTDOWN_TIMEOUT;
            calls.finish(deadline).await;
            if !ended {
                // A moment for the last answers to be written out.
                tokio::time::sleep(Duration::from_millis(50)).await;
                sessions.cancel();
                // Open streams may hold the graceful shutdown up.
                let _ = tokio::time::timeout_at(deadline, &mut serving).await;
            }
        });
        Ok((bound, task))
    }

    /// One page of the rendered tool list: the view's list for this
    /// session (`stateless`: the list a new session starts with).
    fn page(&self, cursor: Option<&str>, stateless: bool) -> Result<ListToolsResult, ErrorData> {
        let after =
            match cursor {
                None => None,
                Some(c) => Some(c.strip_prefix(CURSOR_PREFIX).ok_or_else(|| {
                    ErrorData::invalid_params(format!("invalid cursor `{c}`"), None)
                })?),
            };
        let rendered = if stateless {
            self.view.schemas_new_session(Format::Mcp)
        } else {
            self.view
                .schemas_for(Format::Mcp, self.session_key().as_deref())
        };
        let rendered = match rendered {
            Ok(list) => list,
            Err(e) => {
                for error in e.errors() {
                    tracing::warn!("tool left out of tools/list: {error}");
                }
                e.partial().clone()
            }
        };
        // As `execute` does: a tool with URL patterns is offered only when
        // the server's page URL (its base context's `page_url`) matches one;
        // listing it elsewhere would offer a tool that can never run here.
        let registry = self.view.registry();
        let page_url = self.config.context.page_url();
        let all: Vec<&Value> = rendered
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .filter(|t| {
                t.get("name")
                    .and_then(Value::as_str)
                    .and_then(|name| registry.get(name))
                    .is_none_or(|tool| tool.available_on(page_url))
            })
            .collect();
        // After the named tool; one that has left the list since falls back
        // to name order among the always-loaded tools, which come first.
        let start = after.map_or(0, |name| {
            all.iter()
                .position(|t| t.get("name").and_then(Value::as_str) == Some(name))
                .map_or_else(
                    || all.partition_point(|t| t.get("name").and_then(Value::as_str) <= Some(name)),
                    |at| at + 1,
                )
        });
        let end = (start + self.config.page_size).min(all.len());
        let mut tools = Vec::with_capacity(end.saturating_sub(start));
        for value in all.get(start..end).unwrap_or_default() {
            let tool: McpTool = serde_json::from_value((*value).clone()).map_err(|e| {
                ErrorData::internal_error(format!("rendered tool is not an MCP tool: {e}"), None)
            })?;
            tools.push(tool);
        }
        let next = (end < all.len())
            .then(|| tools.last().map(|t| format!("{CURSOR_PREFIX}{}", t.name)))
            .flatten();
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        Ok(result)
    }

    /// The context of one `tools/call`: the base context with the call's
    /// cancellation token `cancel`, the client's [`Peer`] as state, a progress sink
    /// when the client sent a progress token, and an elicitation approver
    /// when the client can answer one.
    fn call_context(
        &self,
        request: &RequestContext<RoleServer>,
        cancel: CancellationToken,
    ) -> ToolContext {
        let mut ctx = self
            .client_context(request)
            .with_cancellation_token(cancel)
            .with_state::<Peer<RoleServer>>(request.peer.clone())
            .with_state(crate::client_request::McpRequest::of(
                request,
                approval::is_stateless_era(request),
            ));
        if approval::is_stateless_era(request) {
            ctx = ctx.with_state(InlineSchemas(Format::Mcp));
        } else {
            // A tool's input requests go to this session's client.
            ctx = ctx.with_state(input::SessionRoute(request.peer.clone()));
            if let Some(key) = self.session_key() {
                ctx = ctx.with_state(SearchSession(key));
            }
        }
        if let Some(token) = request.meta.get_progress_token() {
            let peer = request.peer.clone();
            // The forwarding task starts with the first report (most calls
            // report none); one task per call keeps the reports in order, and
            // it ends when the call's context (holding the sender) is dropped.
            let sender = std::sync::OnceLock::<mpsc::UnboundedSender<Progress>>::new();
            let flush = Arc::new(ProgressFlush::default());
            ctx = ctx.with_state(Arc::clone(&flush));
            ctx = ctx.with_progress_sink(move |p: Progress| {
                let flush = Arc::clone(&flush);
                let tx = sender.get_or_init(|| {
                    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
                    let peer = peer.clone();
                    let token = token.clone();
                    let flush = Arc::clone(&flush);
                    tokio::spawn(async move {
                        while let Some(p) = rx.recv().await {
                            let mut param =
                                ProgressNotificationParam::new(token.clone(), p.progress);
                            if let Some(total) = p.total {
                                param = param.with_total(total);
                            }
                            if let Some(message) = p.message {
                                param = param.with_message(message);
                            }
                            let sent = peer.notify_progress(param).await;
                            flush.done();
                            if sent.is_err() {
                                break;
                            }
                        }
                        // A closed peer: nothing more will be sent.
                        flush.close();
                    });
                    tx
                });
                flush
                    .pending
                    .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                if tx.send(p).is_err() {
                    flush.done();
                }
            });
        }
        if let Some(approver) = approval::ElicitationApprover::for_request(request, &ctx) {
            ctx = ctx.with_approver(approver);
        }
        // `ask_user` and any other question: to the person behind the
        // client when it can be asked (else the context's asker stays).
        if let Some(asker) = crate::asking::ElicitationAsker::for_request(request, &ctx) {
            ctx = ctx.with_asker(asker);
        } else if let Some(none) = crate::asking::NoElicitation::for_request(request, &ctx) {
            ctx = ctx.with_asker(none);
        }
        ctx
    }

    /// The context of the client of `request`: its session's, else (the
    /// stateless era) its trace's or the request's own.
    fn client_context(&self, request: &RequestContext<RoleServer>) -> ToolContext {
        if approval::is_stateless_era(request) {
            self.stateless_context(request)
        } else {
            self.session_context
                .clone()
                .unwrap_or_else(|| self.config.context.clone())
        }
    }

    /// One `tools/call`, with `cancel` as its cancellation token.
    async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        cancel: CancellationToken,
    ) -> Result<CallToolResponse, ErrorData> {
        let registry = self.view.registry();
        let name = request.name.to_string();
        // MCP 2025-11-25, "Server Features › Tools › Error Handling": an
        // unknown tool is a protocol error; failures of a known tool
        // (including bad arguments) are results with `isError: true`.
        if !registry.contains(&name) {
            return Err(ErrorData::invalid_params(
                unknown_tool_message(&registry, &name, self.config.context.page_url()),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        // The tasks extension (SEP-2663): a tool with task support answers
        // with a task for a client that declared the extension.
        let support = registry.get(&name).map(|t| t.spec().task_support);
        let declared = context
            .client_capabilities()
            .is_some_and(|c| c.supports_tasks());
        if let crate::tasks::Dispatch::Task =
            crate::tasks::dispatch(support.unwrap_or_default(), declared)?
        {
            let token = crate::tasks::task_token(&self.calls.stop);
            let ctx = self.call_context(&context, token);
            // Whose task it is, for the caps: never what a client mints
            // per request (review 26, F8).
            let session = if approval::is_stateless_era(&context) {
                None
            } else {
                self.session.as_deref()
            };
            let client = crate::tasks::client_of(&context, session);
            // 2026-07-28: the task's input requests (the tool's, its
            // questions and confirmations) wait for tasks/update.
            if !approval::is_stateless_era(&context) {
                return crate::tasks::start(
                    registry,
                    name,
                    arguments,
                    ctx,
                    &self.config.tasks,
                    &self.calls.tracker,
                    to_call_tool_result,
                    None,
                    &client,
                )
                .await
                .map(CallToolResponse::from);
            }
            let capabilities = context.client_capabilities();
            if !self.config.tasks.input_before_task.contains(&name) {
                let input = Arc::new(TaskInput::new(capabilities.as_ref(), None));
                let ctx = crate::tasks::with_input(ctx, &input);
                return crate::tasks::start(
                    registry,
                    name,
                    arguments,
                    ctx,
                    &self.config.tasks,
                    &self.calls.tracker,
                    to_call_tool_result,
                    Some(input),
                    &client,
                )
                .await
                .map(CallToolResponse::from);
            }
            let (escalate, escalated) = tokio::sync::oneshot::channel();
            let input = Arc::new(TaskInput::new(capabilities.as_ref(), Some(escalate)));
            let ctx = crate::tasks::with_input(ctx, &input);
            let prepared = input_required::prepare(
                "tools/call",
                &name,
                &arguments,
                ctx,
                &context,
                request.input_responses.as_ref(),
                request.request_state.as_deref(),
            )?;
            return crate::tasks::start_after_input(
                registry,
                name,
                arguments,
                prepared,
                &self.config.tasks,
                &self.calls.tracker,
                to_call_tool_result,
                input,
                escalated,
                &client,
            )
            .await;
        }
        let ctx = self.call_context(&context, cancel);
        let flush = ctx.state::<Arc<ProgressFlush>>().map(|f| Arc::clone(&f));
        let response = async {
            // 2026-07-28: a tool's input requests and its confirmation as
            // input-required results (the confirmation when the client can
            // answer one, else the base context's approver decides).
            if approval::is_stateless_era(&context) {
                let confirm_by_client = approval::client_answers_input_requests(&context);
                let (name, arguments) = (&name, &arguments);
                let outcome = input_required::round(
                    "tools/call",
                    name,
                    arguments,
                    ctx,
                    &context,
                    request.input_responses.as_ref(),
                    request.request_state.as_deref(),
                    |ctx, responses, state| async move {
                        if !confirm_by_client {
                            return execute(registry, name.clone(), arguments.clone(), ctx)
                                .await
                                .map(CallToolResponse::from);
                        }
                        approval::call_with_input_required(
                            name,
                            arguments,
                            ctx,
                            responses.as_ref(),
                            state.as_deref(),
                            |ctx| execute(registry, name.clone(), arguments.clone(), ctx),
                        )
                        .await
                    },
                )
                .await?;
                return Ok(match outcome {
                    input_required::Outcome::Done(response) => response,
                    input_required::Outcome::Asked(asked) => CallToolResponse::from(asked),
                });
            }
            execute(registry, name.clone(), arguments.clone(), ctx)
                .await
                .map(CallToolResponse::from)
        }
        .await;
        // The call's progress reports go out before its result (issue 26:
        // the last one could follow the result, and clients drop those).
        if let Some(flush) = flush {
            flush.drained(PROGRESS_FLUSH_TIMEOUT).await;
        }
        response
    }
}

/// How long a call's result waits for its progress reports to be sent (5 s).
const PROGRESS_FLUSH_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

/// A call's progress reports not sent yet; its result waits for them.
#[derive(Default)]
struct ProgressFlush {
    /// Reports handed to the forwarding task and not sent yet.
    pending: std::sync::atomic::AtomicUsize,
    /// The forwarding task ended (the peer is gone): nothing to wait for.
    closed: std::sync::atomic::AtomicBool,
    /// Woken after each report sent.
    sent: tokio::sync::Notify,
}

impl ProgressFlush {
    /// One report was sent (or dropped).
    fn done(&self) {
        self.pending
            .fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        self.sent.notify_waiters();
    }

    /// The forwarding task ended.
    fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.sent.notify_waiters();
    }

    /// Waits until every report handed over was sent, at most `limit`.
    async fn drained(&self, limit: std::time::Duration) {
        let wait = async {
            loop {
                let notified = self.sent.notified();
                if self.pending.load(std::sync::atomic::Ordering::SeqCst) == 0
                    || self.closed.load(std::sync::atomic::Ordering::SeqCst)
                {
                    return;
                }
                notified.await;
            }
        };
        let _ = tokio::time::timeout(limit, wait).await;
    }
}

/// The trace-id field of a W3C Trace Context `traceparent` value
/// (`00-<32 hex trace-id>-<16 hex parent-id>-<2 hex flags>`, Trace Context
/// Level 1 §3.2): 32 lowercase hex digits, not all zeros, under a version
/// other than `ff`; `None` for anything else (the request then shares nothing).
fn trace_id_of_traceparent(value: &str) -> Option<&str> {
    let mut parts = value.split('-');
    let (version, trace, parent, flags) =
        (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let hex = |s: &str, n: usize| {
        s.len() == n
            && s.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    let valid = hex(version, 2)
        && version != "ff"
        && hex(trace, 32)
        && trace.bytes().any(|b| b != b'0')
        && hex(parent, 16)
        && hex(flags, 2)
        && (version != "00" || parts.next().is_none());
    valid.then_some(trace)
}

/// Renders a tool result as a `CallToolResult` with tool-core's MCP rendering
/// (text, images, the inline attachments as audio or embedded resources,
/// `structuredContent`).
pub(crate) fn to_call_tool_result(
    name: &str,
    result: &tool_core::ToolResult,
) -> Result<CallToolResult, ErrorData> {
    // A result that stands for a protocol error (a client capability missing).
    if let Some(error) = crate::client_request::protocol_error_of(result) {
        return Err(error);
    }
    // The MCP rendering reads only the result; the call is named for the
    // signature's sake, without copying the arguments.
    let call = ToolCall::new("", name, Value::Null);
    let rendered = render_result(&call, result, Format::Mcp, Rendering::First);
    let value = rendered.into_iter().next().unwrap_or(Value::Null);
    let mut call_result: CallToolResult = serde_json::from_value(value).map_err(|e| {
        ErrorData::internal_error(
            format!("rendered result is not a CallToolResult: {e}"),
            None,
        )
    })?;
    // 2026-07-28 requires `resultType`; rmcp strips it again for older peers.
    call_result.result_type = Some(ResultType::COMPLETE);
    Ok(call_result)
}

async fn execute(
    registry: Arc<ToolRegistry>,
    name: String,
    arguments: Map<String, Value>,
    ctx: ToolContext,
) -> Result<CallToolResult, ErrorData> {
    let result = registry
        .execute(&name, Value::Object(arguments), &ctx)
        .await;
    to_call_tool_result(&name, &result)
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> ServerConfig {
        #[allow(
            deprecated,
            reason = "logging is deprecated from 2026-07-28 (SEP-2577), still part of 2025-11-25"
        )]
        let mut config = ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_logging()
                .enable_completions()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_subscribe()
                .enable_resources_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new(
            self.config.name.clone(),
            self.config.version.clone(),
        ));
        if let Some(instructions) = &self.config.instructions {
            config = config.with_instructions(instructions.clone());
        }
        // The tasks extension (SEP-2663) while a served tool has task support.
        if crate::tasks::any_task_tool(&self.view.registry()) {
            config.capabilities.extensions = ServerCapabilities::builder()
                .enable_tasks()
                .build()
                .extensions;
        }
        config
    }

    /// The called tool's definition for rmcp's `Mcp-Param-*` header checks
    /// (SEP-2243), for tools of the view that declare `x-mcp-header`
    /// parameters; `None` for the others (nothing to check).
    fn get_tool(&self, name: &str) -> Option<McpTool> {
        let registry = self.view.registry();
        crate::mcp_header::tool_for_validation(registry.get(name)?.spec())
    }

    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS)
    }

    /// `logging/setLevel` is accepted: tools send log messages themselves,
    /// through the [`Peer`] in their context.
    #[allow(
        deprecated,
        reason = "logging is deprecated from 2026-07-28 (SEP-2577), still part of 2025-11-25"
    )]
    async fn set_level(
        &self,
        _request: rmcp::model::SetLevelRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        Ok(())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.page(
            request.as_ref().and_then(|r| r.cursor.as_deref()),
            approval::is_stateless_era(&context),
        )
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The call's token is cancelled by the client (its request's token)
        // and by the server stopping; either way the call is not dropped but
        // left to stop (a command is killed and reaped) and the server waits
        // for it through the tracker.
        let cancel = self.calls.stop.child_token();
        let request_ct = context.ct.clone();
        let work = self.call(request, context, cancel.clone());
        self.calls
            .tracker
            .track_future(async move {
                tokio::pin!(work);
                tokio::select! {
                    result = &mut work => result,
                    () = request_ct.cancelled() => {
                        cancel.cancel();
                        work.await
                    }
                }
            })
            .await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(catalog_wire::list_prompts(&self.config.catalog))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        // A prompt made with `Prompt::with_context` may ask for input, as a tool does.
        let ctx = if approval::is_stateless_era(&context) {
            self.stateless_context(&context)
        } else {
            self.session_context
                .clone()
                .unwrap_or_else(|| self.config.context.clone())
        };
        input_required::get_prompt(&self.config.catalog, request, ctx, &context).await
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(catalog_wire::list_resources(&self.config.catalog))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(catalog_wire::list_templates(&self.config.catalog))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        catalog_wire::read_resource(&self.config.catalog, &request)
            .await
            .map(ReadResourceResponse::from)
    }

    #[allow(
        deprecated,
        reason = "resources/subscribe is the 2025-11-25 way; 2026-07-28 clients use subscriptions/listen (served too)"
    )]
    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions
            .subscribe(&self.config.catalog, &request.uri)
    }

    #[allow(
        deprecated,
        reason = "resources/unsubscribe is the 2025-11-25 way; 2026-07-28 clients end their subscriptions/listen"
    )]
    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscriptions.unsubscribe(&request.uri);
        Ok(())
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        catalog_wire::complete(&self.config.catalog, &request)
    }

    async fn get_task(
        &self,
        request: rmcp::model::GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetTaskResult, ErrorData> {
        let ctx = self.client_context(&context);
        crate::tasks::get(&ctx, &self.config.tasks, request.task_id).await
    }

    async fn cancel_task(
        &self,
        request: rmcp::model::CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let ctx = self.client_context(&context);
        crate::tasks::cancel(&ctx, &self.config.tasks, request.task_id).await
    }

    async fn update_task(
        &self,
        request: rmcp::model::UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let ctx = self.client_context(&context);
        crate::tasks::update(
            &ctx,
            &self.config.tasks,
            request.task_id,
            request.input_responses,
        )
        .await
    }

    /// A method no handler serves: `-32601` "Method not found: NAME".
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        // A tasks method whose params did not parse (rmcp then hands it
        // here): the params are wrong, not the method.
        if matches!(
            request.method.as_str(),
            "tasks/get" | "tasks/cancel" | "tasks/update"
        ) && crate::tasks::any_task_tool(&self.view.registry())
        {
            return Err(ErrorData::invalid_params(
                format!(
                    "{} needs `taskId` (a string){}",
                    request.method,
                    if request.method == "tasks/update" {
                        " and `inputResponses` (an object of answers by key)"
                    } else {
                        ""
                    }
                ),
                None,
            ));
        }
        Err(method_not_found(&request.method))
    }

    async fn on_initialized(&self, context: NotificationContext<RoleServer>) {
        // Sessions of the initialize era get list_changed on the session's
        // own channel; 2026-07-28 clients subscribe with subscriptions/listen.
        // The task ends with the session: rmcp offers no future for a
        // peer's end, so it looks every SESSION_END_POLL (a task waiting
        // only for a registry change would outlive the session, holding its
        // peer: memory that grew with every session a client opened).
        let peer = context.peer.clone();
        catalog_wire::forward_changes(
            &self.config.catalog,
            peer.clone(),
            self.subscriptions.clone(),
            SESSION_END_POLL,
        );
        let mut changes = self.view.live().subscribe();
        // Loads of tool_search in any session wake this task; it notifies
        // only when this session's loaded set grew.
        let mut loads = self.view.subscribe_loads();
        let view = self.view.clone();
        let key = self.session_key();
        // A view keeping its loaded sets in a state store reads them over the
        // network or from a file: off the runtime's threads.
        let count = |view: RegistryView, key: Option<String>| async move {
            if view.has_state_store() {
                tokio::task::spawn_blocking(move || view.loaded(key.as_deref()).len())
                    .await
                    .unwrap_or(0)
            } else {
                view.loaded(key.as_deref()).len()
            }
        };
        tokio::spawn(async move {
            let mut poll = tokio::time::interval(SESSION_END_POLL);
            let mut loaded = count(view.clone(), key.clone()).await;
            loop {
                tokio::select! {
                    changed = changes.changed() => {
                        if changed.is_err() || peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                    }
                    changed = loads.changed() => {
                        if changed.is_err() {
                            break;
                        }
                        let now = count(view.clone(), key.clone()).await;
                        if now > loaded && peer.notify_tool_list_changed().await.is_err() {
                            break;
                        }
                        loaded = now;
                    }
                    _ = poll.tick() => {
                        if peer.is_transport_closed() {
                            break;
                        }
                    }
                }
            }
        });
    }

    /// List changes of tools, prompts and resources, and updates of the
    /// requested resources that exist (at most [`MAX_SUBSCRIPTIONS`]).
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        let catalog = &self.config.catalog;
        let uris: Vec<String> = requested
            .resource_subscriptions
            .iter()
            .flatten()
            .filter(|uri| uri.len() <= crate::catalog::MAX_URI_BYTES && catalog.knows_uri(uri))
            .take(MAX_SUBSCRIPTIONS)
            .cloned()
            .collect();
        Some(
            SubscriptionFilter::builder()
                .tools_list_changed()
                .prompts_list_changed()
                .resources_list_changed()
                .resource_subscriptions(uris)
                .build(),
        )
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let mut changes = self.view.live().subscribe();
        let mut catalog_changes = self.config.catalog.subscribe_changes();
        let mut updates = self.config.catalog.subscribe_updates();
        let mut seen = *catalog_changes.borrow_and_update();
        let accepted = context.accepted().clone();
        let subscribed = |uri: &str| {
            accepted
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| u == uri))
        };
        let wants = |flag: Option<bool>| flag == Some(true);
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                changed = changes.changed() => {
                    if changed.is_err() || context.sink().notify_tool_list_changed().await.is_err() {
                        return Ok(());
                    }
                }
                changed = catalog_changes.changed() => {
                    if changed.is_err() {
                        return Ok(());
                    }
                    let now = *catalog_changes.borrow_and_update();
                    if now.prompts != seen.prompts
                        && wants(accepted.prompts_list_changed)
                        && context.sink().notify_prompt_list_changed().await.is_err()
                    {
                        return Ok(());
                    }
                    if now.resources != seen.resources
                        && wants(accepted.resources_list_changed)
                        && context.sink().notify_resource_list_changed().await.is_err()
                    {
                        return Ok(());
                    }
                    seen = now;
                }
                uri = updates.recv() => match uri {
                    Ok(uri) => {
                        if subscribed(&uri) && context.sink().notify_resource_updated(uri).await.is_err() {
                            return Ok(());
                        }
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(_)) => {}
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return Ok(()),
                },
            }
        }
    }
}

/// `-32601` for `method`: "Method not found: NAME" (the name clipped to 100
/// characters), as the other MCP SDKs word it. (A method a protocol era
/// lacks, such as `ping` in 2026-07-28, is refused by rmcp before any
/// handler runs, with the bare method name as its message.)
fn method_not_found(method: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!(
            "Method not found: {}",
            tool_rules::text::clip(method, tool_rules::text::Clip::chars(100))
        ),
        None,
    )
}

/// A token cancelled at the first `SIGTERM`, `SIGINT` or `SIGHUP` this
/// process gets (the Python MCP SDK, among others, stops a stdio server with
/// `SIGTERM`; a closed terminal sends `SIGHUP`). Call it inside a Tokio
/// runtime; once called, these signals no longer end the process by
/// themselves: the server that holds the token stops and returns.
///
/// # Errors
/// [`ErrorKind::Io`] when a signal handler cannot be installed.
pub fn shutdown_signal() -> Result<CancellationToken, Error> {
    use tokio::signal::unix::{SignalKind, signal};
    let install = |kind: SignalKind| {
        signal(kind).map_err(|e| {
            Error::new(
                ErrorKind::Io,
                format!("cannot install a signal handler: {e}"),
            )
        })
    };
    let mut term = install(SignalKind::terminate())?;
    let mut int = install(SignalKind::interrupt())?;
    let mut hup = install(SignalKind::hangup())?;
    let token = CancellationToken::new();
    let cancel = token.clone();
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
            _ = hup.recv() => "SIGHUP",
        };
        tracing::info!("{name}: stopping the server");
        cancel.cancel();
    });
    Ok(token)
}

/// 32 lowercase hex digits (128 bits) from the operating system's random
/// source (`getrandom`), ending a session's trace id. Should the source
/// fail, from the standard library's randomly keyed hasher over the time
/// and a counter: still unpredictable to a client.
fn session_secret() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut bytes = [0_u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        static COUNTER: AtomicU64 = AtomicU64::new(0);
        for half in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
            if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
                hasher.write_u128(now.as_nanos());
            }
            half.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The message of an unknown tool's protocol error: up to three close names
/// ("did you mean"), else the names offered on the server's page when there
/// are at most 30, as `execute` tells a model (third new-user review, M5).
/// The name is cut to 64 characters: a client controls it.
fn unknown_tool_message(registry: &ToolRegistry, name: &str, page: Option<&str>) -> String {
    let offered = |n: &&str| registry.get(n).is_some_and(|t| t.available_on(page));
    let shown: String = name.chars().take(64).collect();
    let close: Vec<String> = registry
        .suggest(name)
        .into_iter()
        .filter(offered)
        .map(|n| format!("`{n}`"))
        .collect();
    if !close.is_empty() {
        return format!(
            "unknown tool: {shown}. Did you mean {}?",
            close.join(" or ")
        );
    }
    let names = registry.tool_names(page);
    if names.len() <= 30 {
        format!(
            "unknown tool: {shown}. Available tools: {}.",
            names.join(", ")
        )
    } else {
        format!("unknown tool: {shown}. See tools/list for the tools offered.")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review 23 F12: session trace ids were `…-mcp-session-<n>`, so a client
    /// could name every other session's trace; now each ends in 128 random
    /// bits.
    #[test]
    fn session_trace_ids_end_in_128_random_bits() {
        let server = McpServer::new(tool_core::ToolRegistry::new());
        let ids: Vec<String> = (0..3)
            .map(|_| server.for_new_session().session.unwrap().to_string())
            .collect();
        for id in &ids {
            let (head, secret) = id.rsplit_once('-').unwrap();
            assert!(head.starts_with("mcp-session-"), "{id}");
            assert_eq!(secret.len(), 32, "{id}");
            assert!(secret.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        }
        assert_ne!(ids[0].rsplit_once('-'), ids[1].rsplit_once('-'));
        assert_ne!(
            ids[1].rsplit_once('-').unwrap().1,
            ids[2].rsplit_once('-').unwrap().1
        );
    }
}
