//! [`McpToolSource`] / [`McpConnection`]: an MCP server's tools imported as local runtime tools.
//!
//! Why one file of this size: it is one concern, the client side of one
//! server (start, handshake, import of its tools as local tools, their calls,
//! approvals and list changes); naming is `names.rs`, configuration `config.rs`,
//! framing `framing.rs`.
#![allow(
    deprecated,
    reason = "roots and log messages are deprecated from 2026-07-28 (SEP-2577), still part of 2025-11-25, which most servers speak"
)]

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CancelledNotificationParam, ClientConfig,
    ClientRequest, ContentBlock, ElicitResult, ElicitationCapability, FormElicitationCapability,
    InputRequest, InputRequiredResult, InputResponses, PaginatedRequestParams,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, ResourceContents,
    ServerNotification, ServerResult, SubscriptionFilter, Tool as McpTool,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, PeerRequestOptions, RunningService,
    ServiceError,
};
use rmcp::{ClientHandler, Peer, RoleClient};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tool_core::{
    Attachment, DisplayName, ErrorKind as ToolErrorKind, Image, OnConflict, Tool, ToolContext,
    ToolRegistry, ToolResult, ToolSpec, meta,
};

use crate::error::{Error, ErrorKind};
use crate::headers::{HeaderConfig, Hidden};
use crate::names::{local_tool_name, sanitize_server};
use crate::requests::Sampler;
use tool_core::{LiveRegistry, NamePattern};
use tool_rules::text::{Clip, clip};

/// How long a request may wait for its answer unless [`McpToolSource::with_timeout`] says otherwise.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How long starting a server and its handshake may take unless
/// [`McpToolSource::with_connect_timeout`] says otherwise: 15 s. A server
/// that never answers `initialize` fails fast instead of holding up the host.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// How long a server started on first use ([`import_mcp_servers_lazily`](crate::import_mcp_servers_lazily))
/// may sit idle (no call in flight) before it is stopped, unless
/// [`McpToolSource::with_idle_timeout`] or `.mcp.json`'s `"idleTimeout"` says
/// otherwise: 10 minutes. It is started again on its next call.
pub const DEFAULT_SERVER_IDLE_TIMEOUT: Duration = Duration::from_secs(600);

/// Which protocol era (lifecycle) the client opens a connection with;
/// `.mcp.json`'s per-server `"protocol"` key and the CLI's `--mcp-protocol`.
///
/// The two eras are not compatible on the wire: a 2025-11-25 server may not
/// know `server/discover`, and a server that speaks only 2026-07-28 answers
/// `initialize` with an error (`-32022` unsupported protocol version, or
/// `-32601` method not found). [`Auto`](Self::Auto), the default, follows the
/// 2026-07-28 specification's backward-compatibility guidance for clients:
/// send `server/discover` first and fall back to `initialize` on the same
/// connection when the server answers it with a JSON-RPC error other than a
/// 2026-07-28 rejection (or not at all within rmcp's 10 s probe timeout).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ProtocolEra {
    /// `server/discover` first, `initialize` when the server is of the
    /// 2025-11-25 era (`"auto"`). The default.
    #[default]
    Auto,
    /// MCP 2025-11-25 only: `initialize` handshake, then a session
    /// (`"2025-11-25"`). A server that speaks only 2026-07-28 refuses it.
    Initialize,
    /// MCP 2026-07-28 only: `server/discover`, then self-contained requests
    /// (`"2026-07-28"`). A 2025-11-25 server refuses it.
    Discover,
}

impl ProtocolEra {
    /// The spelling of `.mcp.json`'s `"protocol"` key and `--mcp-protocol`:
    /// `auto`, `2025-11-25` or `2026-07-28`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Initialize => "2025-11-25",
            Self::Discover => "2026-07-28",
        }
    }
}

impl std::fmt::Display for ProtocolEra {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for ProtocolEra {
    type Err = Error;

    /// Parses `auto`, `2025-11-25` or `2026-07-28` (exactly).
    ///
    /// # Errors
    /// [`ErrorKind::Config`] naming the accepted values.
    fn from_str(s: &str) -> Result<Self, Error> {
        match s {
            "auto" => Ok(Self::Auto),
            "2025-11-25" => Ok(Self::Initialize),
            "2026-07-28" => Ok(Self::Discover),
            other => Err(Error::new(
                ErrorKind::Config,
                format!(
                    "unknown MCP protocol `{}`: use \"auto\" (the default: 2026-07-28's \
                     server/discover, else 2025-11-25's initialize), \"2025-11-25\" or \"2026-07-28\"",
                    clip(other, Clip::chars(40))
                ),
            )),
        }
    }
}

#[derive(Clone)]
enum Endpoint {
    Stdio {
        command: String,
        args: Vec<String>,
        env: BTreeMap<String, String>,
    },
    Http {
        url: String,
    },
}

impl std::fmt::Debug for Endpoint {
    /// The command, arguments and URL; `env` values are not shown (they may
    /// be keys handed to the server on purpose).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Stdio { command, args, env } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .finish(),
            Self::Http { url } => f.debug_struct("Http").field("url", url).finish(),
        }
    }
}

/// Where an MCP server is and how to talk to it; [`connect`](Self::connect) opens it.
///
/// ```no_run
/// use tool_mcp::{LiveRegistry, McpToolSource};
/// # async fn demo() -> Result<(), tool_mcp::Error> {
/// let registry = LiveRegistry::new(tool_core::ToolRegistry::new());
/// let files = McpToolSource::stdio("tool", ["serve"], [("RUST_LOG", "warn")])
///     .named("files")
///     .connect()
///     .await?;
/// let names = files.import_into(&registry).await?; // ["files__read_file", ...]
/// # let _ = names; Ok(()) }
/// ```
#[derive(Debug, Clone)]
pub struct McpToolSource {
    endpoint: Endpoint,
    name: Option<String>,
    timeout: Duration,
    connect_timeout: Duration,
    era: ProtocolEra,
    /// `true` once [`McpToolSource::with_era`] chose the era (a config's
    /// `"protocol"` key): [`McpToolSource::with_default_era`] then keeps it.
    era_chosen: bool,
    filter: ToolFilter,
    /// `url` servers: headers and bearer token (values hidden from `Debug`).
    auth: Box<HeaderConfig>,
    /// `url` servers: OAuth ([`McpToolSource::with_oauth`]).
    oauth: Option<Box<crate::auth::OAuth>>,
    /// `clientInfo` (name, version); `None`: the program's name.
    client_info: Option<Box<(String, String)>>,
    /// The roots offered to the server (`roots/list`); `None`: no roots capability.
    roots: Option<Arc<[rmcp::model::Root]>>,
    /// Stdio servers: whether and how the process is sandboxed.
    sandbox: SandboxSetting,
    /// The model that answers the server's sampling requests; `None`: no
    /// `sampling` capability.
    sampler: Option<Arc<dyn Sampler>>,
    /// [`McpToolSource::with_idle_timeout`], in milliseconds (saturating;
    /// eight bytes keep the config entry enum small).
    idle_timeout_ms: u64,
    /// [`McpToolSource::with_task_calls`]: remote tools always called as tasks.
    task_calls: Vec<String>,
}

/// Whether a stdio server runs in the kernel sandbox (see
/// [`McpToolSource::with_sandbox`]).
#[derive(Debug, Clone, Default)]
enum SandboxSetting {
    /// Nothing said: unsandboxed unless [`McpToolSource::with_default_sandbox`] turns it on.
    #[default]
    Unset,
    /// `"sandbox": false`: never sandboxed.
    Off,
    /// `"sandbox": true` or an object: sandboxed, on the host's base policy
    /// once [`McpToolSource::with_default_sandbox`] gives it (else the default policy).
    Requested(Box<crate::sandbox::SandboxRequest>),
    /// A policy and workspace chosen in full.
    Set(Box<(tool_core::SandboxPolicy, std::path::PathBuf)>),
}

/// Which of a server's tools are imported: `include` (when set) and
/// `exclude` hold name patterns ([`NamePattern`]: exact names, or `*`
/// wildcards) matched against the server's own tool names; exclusion wins
/// (Gemini CLI's `includeTools` / `excludeTools`).
#[derive(Debug, Clone, Default)]
struct ToolFilter {
    include: Option<Vec<NamePattern>>,
    exclude: Vec<NamePattern>,
}

impl ToolFilter {
    fn admits(&self, remote_name: &str) -> bool {
        self.include
            .as_ref()
            .is_none_or(|i| i.iter().any(|p| p.matches(remote_name)))
            && !self.exclude.iter().any(|p| p.matches(remote_name))
    }
}

impl McpToolSource {
    /// A server started as a child process (`command args...`), spoken to
    /// over its stdin and stdout. Its stderr is passed through to ours.
    ///
    /// Its environment is this process's without the secret-looking
    /// variables ([`tool_core::governance::secret_env::scrub_env`]:
    /// `GITHUB_TOKEN`, `DB_PASSWORD`, a URL with `user:password@`, ...),
    /// plus every variable of `env`, which is passed as given even when it
    /// looks like a secret: listing a variable there is how a configuration
    /// hands a server a key on purpose (`.mcp.json`'s `"env"`).
    pub fn stdio<A, K, V>(
        command: impl Into<String>,
        args: impl IntoIterator<Item = A>,
        env: impl IntoIterator<Item = (K, V)>,
    ) -> Self
    where
        A: Into<String>,
        K: Into<String>,
        V: Into<String>,
    {
        Self::with_endpoint(Endpoint::Stdio {
            command: command.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: env.into_iter().map(|(k, v)| (k.into(), v.into())).collect(),
        })
    }

    /// A server at a Streamable HTTP endpoint (`http://127.0.0.1:8080/mcp`).
    /// `https://` needs this crate's `tls` feature.
    pub fn http(url: impl Into<String>) -> Self {
        Self::with_endpoint(Endpoint::Http { url: url.into() })
    }

    fn with_endpoint(endpoint: Endpoint) -> Self {
        Self {
            endpoint,
            name: None,
            timeout: DEFAULT_REQUEST_TIMEOUT,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            era: ProtocolEra::default(),
            era_chosen: false,
            filter: ToolFilter::default(),
            auth: Box::default(),
            oauth: None,
            client_info: None,
            roots: None,
            sandbox: SandboxSetting::Unset,
            sampler: None,
            idle_timeout_ms: DEFAULT_SERVER_IDLE_TIMEOUT.as_secs() * 1000,
            task_calls: Vec::new(),
        }
    }

    /// Runs this stdio server in the kernel sandbox `bash_command` runs in
    /// (`tool-sandbox`), with `policy` and `workspace` (the folder it may
    /// write, and its working folder); its stdin and stdout (the MCP
    /// messages) and stderr pass through. The policy's allowed hosts are
    /// served through the sandbox's proxy while the server runs (full tier
    /// only); after it ended, the workspace's `.git` is checked as after a
    /// `bash_command` call. Overrides the configuration's `"sandbox"`.
    /// [`connect`](Self::connect) fails with the sandbox's own message
    /// when the kernel lacks a layer the policy needs (see SECURITY.md), and
    /// for a `url` server. A policy whose mode is `off` runs the server
    /// unsandboxed.
    #[must_use]
    pub fn with_sandbox(
        mut self,
        policy: tool_core::SandboxPolicy,
        workspace: impl Into<std::path::PathBuf>,
    ) -> Self {
        self.sandbox = SandboxSetting::Set(Box::new((policy, workspace.into())));
        self
    }

    /// Resolves the configuration's `"sandbox"` against the host's policy
    /// (the CLI's `--sandbox*`, `--allow-net` options), as
    /// [`with_default_era`](Self::with_default_era) does for the era:
    /// `"sandbox": true` runs the server in `base` with `workspace`; an
    /// object adds its `write` and `hide` paths and `allowNet` patterns to
    /// `base` and may name its own `workspace`; `"sandbox": false` keeps the
    /// server unsandboxed; without the key the server is sandboxed with
    /// `base` when `on` (the CLI's `--mcp-sandbox`). A choice made with
    /// [`with_sandbox`](Self::with_sandbox) stays. `url` servers are left
    /// as they are.
    #[must_use]
    pub fn with_default_sandbox(
        mut self,
        base: &tool_core::SandboxPolicy,
        workspace: &std::path::Path,
        on: bool,
    ) -> Self {
        if matches!(self.endpoint, Endpoint::Http { .. }) {
            return self;
        }
        self.sandbox = match std::mem::take(&mut self.sandbox) {
            SandboxSetting::Unset if on => SandboxSetting::Set(Box::new(
                crate::sandbox::SandboxRequest::default().apply(base, workspace),
            )),
            SandboxSetting::Requested(request) => {
                SandboxSetting::Set(Box::new(request.apply(base, workspace)))
            }
            other => other,
        };
        self
    }

    /// The URL of a `url` server (`None` for a stdio server).
    pub fn url(&self) -> Option<&str> {
        match &self.endpoint {
            Endpoint::Http { url } => Some(url),
            Endpoint::Stdio { .. } => None,
        }
    }

    /// Whether this is a `url` server.
    pub(crate) fn is_http(&self) -> bool {
        matches!(self.endpoint, Endpoint::Http { .. })
    }

    /// The `"sandbox"` of a configuration entry (`None`: `false`).
    pub(crate) fn with_sandbox_request(
        mut self,
        request: Option<crate::sandbox::SandboxRequest>,
    ) -> Self {
        self.sandbox = match request {
            Some(r) => SandboxSetting::Requested(Box::new(r)),
            None => SandboxSetting::Off,
        };
        self
    }

    /// The sandbox policy and workspace the server will be started with,
    /// if it is sandboxed and they are known (after
    /// [`with_sandbox`](Self::with_sandbox) or
    /// [`with_default_sandbox`](Self::with_default_sandbox); an entry's
    /// `"sandbox"` alone is resolved on the default policy and the current
    /// folder when connecting).
    pub fn sandbox(&self) -> Option<(&tool_core::SandboxPolicy, &std::path::Path)> {
        match &self.sandbox {
            SandboxSetting::Set(set) if !set.0.is_off() => Some((&set.0, set.1.as_path())),
            _ => None,
        }
    }

    /// Imports only the server's tools whose name (the server's own, before
    /// the `<server>__` prefix) matches one of `patterns` ([`NamePattern`]s:
    /// exact names or `*` wildcards); `.mcp.json`'s `includeTools`. The
    /// others are not listed or registered.
    #[must_use]
    pub fn include_tools(
        mut self,
        patterns: impl IntoIterator<Item = impl Into<NamePattern>>,
    ) -> Self {
        self.filter.include = Some(patterns.into_iter().map(Into::into).collect());
        self
    }

    /// Leaves out the server's tools whose name matches one of `patterns`,
    /// also when [`include_tools`](Self::include_tools) names them;
    /// `.mcp.json`'s `excludeTools`.
    #[must_use]
    pub fn exclude_tools(
        mut self,
        patterns: impl IntoIterator<Item = impl Into<NamePattern>>,
    ) -> Self {
        self.filter
            .exclude
            .extend(patterns.into_iter().map(Into::into));
        self
    }

    /// How long starting the server and the handshake may take (default
    /// [`DEFAULT_CONNECT_TIMEOUT`]).
    #[must_use]
    pub fn with_connect_timeout(mut self, timeout: Duration) -> Self {
        self.connect_timeout = timeout;
        self
    }

    /// How long the server may sit idle (no call in flight since the last
    /// one ended) before it is stopped, when it was imported lazily
    /// ([`import_mcp_servers_lazily`](crate::import_mcp_servers_lazily));
    /// its next call starts it again. Default [`DEFAULT_SERVER_IDLE_TIMEOUT`];
    /// [`Duration::ZERO`] keeps it running until the program ends.
    /// `.mcp.json`'s `"idleTimeout"` (seconds). A connection opened with
    /// [`connect`](Self::connect) is never stopped for idleness.
    #[must_use]
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout_ms = u64::try_from(idle.as_millis()).unwrap_or(u64::MAX);
        self
    }

    /// The idle time after which a lazily imported server is stopped
    /// ([`with_idle_timeout`](Self::with_idle_timeout); zero: never).
    pub fn idle_timeout(&self) -> Duration {
        Duration::from_millis(self.idle_timeout_ms)
    }

    /// SHA-256 over everything of this source that may change the tool list
    /// it yields: name, command, arguments, environment (values included),
    /// URL, header names and value templates (`${VAR}` unresolved), the
    /// tool filter and the era. A cached tool list is kept under it, so a
    /// changed configuration entry is a cache miss. Nothing of it is stored
    /// in clear.
    pub(crate) fn fingerprint(&self) -> [u8; 32] {
        use sha2::Digest;
        let mut h = sha2::Sha256::new();
        let mut put = |part: &str| {
            h.update((part.len() as u64).to_le_bytes());
            h.update(part.as_bytes());
        };
        put("tool-mcp tool list v1");
        put(self.name.as_deref().unwrap_or_default());
        match &self.endpoint {
            Endpoint::Stdio { command, args, env } => {
                put("stdio");
                put(command);
                for arg in args {
                    put(arg);
                }
                put("env");
                for (k, v) in env {
                    put(k);
                    put(v);
                }
            }
            Endpoint::Http { url } => {
                put("http");
                put(url);
                for (name, value) in &self.auth.headers {
                    put(name);
                    put(&value.0);
                }
                put(if self.auth.bearer.is_some() {
                    "bearer"
                } else {
                    ""
                });
            }
        }
        put("include");
        for p in self.filter.include.iter().flatten() {
            put(p.as_str());
        }
        put("exclude");
        for p in &self.filter.exclude {
            put(p.as_str());
        }
        put(self.era.as_str());
        h.finalize().into()
    }

    /// The `<server>` part of imported tool names (default: the server's own
    /// `serverInfo.name`). Characters outside `[a-zA-Z0-9-]` become `_`.
    #[must_use]
    pub fn named(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// The timeout of every request to this server, `tools/call` included
    /// (default [`DEFAULT_REQUEST_TIMEOUT`]). A call that runs out is cancelled
    /// on the server (`notifications/cancelled`, or `tasks/cancel` for a task)
    /// and fails with a timeout error. A call made with a context whose
    /// timeout is set ([`ToolContext::with_timeout`], `tool call --timeout`)
    /// is bounded by that one instead, and a call run by an executor ends
    /// before the executor's deadline ([`ToolContext::deadline`], less
    /// [`CANCEL_MARGIN`](crate::CANCEL_MARGIN)) whichever it is.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Calls these remote tools (the server's own names) as tasks
    /// (`task_call.rs`) although the server does not require it: for
    /// tools whose task support is `optional` that may run longer than one
    /// request should wait. Default: none; every other tool is called
    /// plainly until the server refuses a plain call of it (task support
    /// `required`), and as a task from then on. The task still runs within
    /// the call's timeout ([`with_timeout`](Self::with_timeout)), counted
    /// from the call's start.
    #[must_use]
    pub fn with_task_calls<I, S>(mut self, tools: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.task_calls.extend(tools.into_iter().map(Into::into));
        self
    }

    /// The protocol era to open the connection with (default
    /// [`ProtocolEra::Auto`]: `server/discover`, else `initialize`);
    /// `.mcp.json`'s `"protocol"` key.
    #[must_use]
    pub fn with_era(mut self, era: ProtocolEra) -> Self {
        self.era = era;
        self.era_chosen = true;
        self
    }

    /// The era to use unless [`with_era`](Self::with_era) chose one (the
    /// CLI's `--mcp-protocol` under the entries' own `"protocol"` keys).
    #[must_use]
    pub fn with_default_era(mut self, era: ProtocolEra) -> Self {
        if !self.era_chosen {
            self.era = era;
        }
        self
    }

    /// The era the connection will be opened with.
    pub fn era(&self) -> ProtocolEra {
        self.era
    }

    /// Sends `name: value` with every HTTP request to this `url` server
    /// (`.mcp.json`'s `"headers"`); a second call with the same name adds a
    /// second header line. Each `${VAR}` in `value` is replaced by this
    /// process's environment variable `VAR` when connecting (Claude Code's
    /// syntax; the server never sees the variable, only the value), so a
    /// configuration file needs no secret in it. Values are never printed:
    /// `Debug` shows `***` and errors name the header, not its value.
    ///
    /// Limits: at most [`MAX_HEADERS`](crate::MAX_HEADERS) headers, each value
    /// at most [`MAX_HEADER_VALUE_BYTES`](crate::MAX_HEADER_VALUE_BYTES) after
    /// resolution; the transport's own headers (`Accept`, `Content-Type`,
    /// `Mcp-Session-Id`, `Mcp-Protocol-Version`, `Last-Event-ID`) cannot be set.
    /// [`connect`](Self::connect) checks all this; a stdio server refuses
    /// headers.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.auth.headers.push((name.into(), Hidden(value.into())));
        self
    }

    /// Sends `Authorization: Bearer <token>` with every HTTP request to this
    /// `url` server, as `tool serve --http --token-file` expects. `token` is
    /// the token alone, without `Bearer `; `${VAR}` is resolved as in
    /// [`with_header`](Self::with_header). Never printed.
    #[must_use]
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.auth.bearer = Some(Hidden(token.into()));
        self
    }

    /// OAuth 2.1 for this `url` server ([`OAuth`](crate::OAuth)): on a 401
    /// the client discovers the server's authorization server, obtains a
    /// token (from the settings' cache, by refresh, or by a new
    /// authorization through the settings' login) and sends it with every
    /// request. A bearer token set with [`with_bearer_token`](Self::with_bearer_token)
    /// wins over it. Ignored by stdio servers.
    #[must_use]
    pub fn with_oauth(mut self, oauth: crate::auth::OAuth) -> Self {
        self.oauth = Some(Box::new(oauth));
        self
    }

    /// The OAuth settings ([`with_oauth`](Self::with_oauth)), if any.
    pub fn oauth(&self) -> Option<&crate::auth::OAuth> {
        self.oauth.as_deref()
    }

    /// The `clientInfo` the server is told (name and version). Default: the
    /// running program's executable file name (`tool`, or your own program
    /// made with `tool_cli::Cli`) and this crate's version, as
    /// [`McpServer`](crate::McpServer) names itself.
    #[must_use]
    pub fn with_client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = Some(Box::new((name.into(), version.into())));
        self
    }

    /// Offers `folders` to the server as its roots (`roots/list`, and the
    /// `roots/list` input requests of 2026-07-28), as `file://` URIs, and
    /// declares the `roots` capability; without this call the client declares
    /// none and offers none. The CLI offers the workspace (`--workspace`).
    /// Relative paths are taken as they are (give absolute ones); a path
    /// that is not UTF-8 is left out.
    #[must_use]
    pub fn with_roots<P: AsRef<std::path::Path>>(
        mut self,
        folders: impl IntoIterator<Item = P>,
    ) -> Self {
        let roots: Vec<_> = folders
            .into_iter()
            .filter_map(|folder| {
                let path = folder.as_ref();
                let text = path.to_str()?;
                let mut root = rmcp::model::Root::new(format!("file://{text}"));
                if let Some(name) = path.file_name().and_then(|n| n.to_str()) {
                    root = root.with_name(name);
                }
                Some(root)
            })
            .collect();
        self.roots = Some(roots.into());
        self
    }

    /// Lends the server a model: its `sampling/createMessage` requests (and
    /// the sampling input requests of 2026-07-28) are answered by `sampler`,
    /// and the client declares the `sampling` capability. Without this call
    /// the client declares none and refuses such requests. Limits:
    /// [`MAX_SAMPLING_MESSAGES`](crate::MAX_SAMPLING_MESSAGES),
    /// [`MAX_SAMPLING_CHARS`](crate::MAX_SAMPLING_CHARS) and
    /// [`MAX_SAMPLING_TOKENS`](crate::MAX_SAMPLING_TOKENS).
    #[must_use]
    pub fn with_sampler(mut self, sampler: impl Sampler) -> Self {
        self.sampler = Some(Arc::new(sampler));
        self
    }

    /// As [`with_sampler`](Self::with_sampler), for a sampler already shared.
    #[must_use]
    pub fn with_shared_sampler(mut self, sampler: Arc<dyn Sampler>) -> Self {
        self.sampler = Some(sampler);
        self
    }

    /// The name given with [`named`](Self::named), if any.
    pub fn name(&self) -> Option<&str> {
        self.name.as_deref()
    }

    /// A short description for messages: the command or the URL.
    pub(crate) fn describe(&self) -> String {
        match &self.endpoint {
            Endpoint::Stdio { command, args, .. } => std::iter::once(command.as_str())
                .chain(args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" "),
            Endpoint::Http { url } => url.clone(),
        }
    }

    /// Starts (or reaches) the server and performs the handshake.
    ///
    /// # Errors
    /// [`ErrorKind::Connect`] when the process cannot be started, the URL is
    /// unusable, or the handshake fails or times out.
    pub async fn connect(self) -> Result<McpConnection, Error> {
        let what = self.describe();
        let label = match &self.name {
            Some(name) => format!("`{name}` ({what})"),
            None => format!("`{what}`"),
        };
        let connect_err = |e: &dyn std::fmt::Display| {
            let text = e.to_string();
            // rmcp says "Auth required" for a 401 answer.
            let hint = if text.contains("OAuth authorization required") {
                " (the server wants an OAuth login and no cached token is usable: run \
                 `tool mcp login NAME`, or give the source an OAuth login)"
            } else if text.contains("Auth required") {
                if self.auth.bearer.is_some() || !self.auth.headers.is_empty() {
                    " (HTTP 401: the server refused the credentials sent; check the token)"
                } else {
                    " (HTTP 401: the server requires authorization; give the entry \
                     \"headers\": {\"Authorization\": \"Bearer ${VAR}\"} with VAR an environment \
                     variable holding the token, or McpToolSource::with_bearer_token)"
                }
            } else {
                ""
            };
            Error::new(
                ErrorKind::Connect,
                format!("MCP server {label}: {text}{hint}"),
            )
        };
        let shared = Arc::new(Shared {
            roots: self.roots.clone(),
            sampler: self.sampler.clone(),
            ..Shared::default()
        });
        if let Some(name) = &self.name {
            let _ = shared.server_label.set(sanitize_server(name));
        }
        let handler = Handler {
            shared: Arc::clone(&shared),
            client_info: self.client_info.as_deref().cloned().unwrap_or_else(|| {
                (
                    crate::server::program_name().unwrap_or_else(|| "tool-mcp".to_owned()),
                    env!("CARGO_PKG_VERSION").to_owned(),
                )
            }),
            roots: self.roots.clone(),
        };
        let _ = shared
            .capabilities
            .set(ClientHandler::get_info(&handler).capabilities);
        let lifecycle = match self.era {
            ProtocolEra::Initialize => ClientLifecycleMode::Initialize,
            ProtocolEra::Discover => ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
            ProtocolEra::Auto => ClientLifecycleMode::Auto {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
                legacy_version: Some(ProtocolVersion::V_2025_11_25),
            },
        };
        let handshake = async {
            match &self.endpoint {
                Endpoint::Stdio { command, args, env } => {
                    if !self.auth.headers.is_empty() || self.auth.bearer.is_some() {
                        return Err(Error::new(
                            ErrorKind::Config,
                            format!(
                                "MCP server {label}: headers and bearer tokens are for `url` \
                                 servers; hand a stdio server a key through its `env`"
                            ),
                        ));
                    }
                    let mut cmd = std::process::Command::new(command);
                    // Children see no secret-looking variable of this
                    // process unless the configuration passes it on purpose
                    // (cross-cutting §7); this process keeps its own.
                    let (inherited, _withheld) =
                        tool_core::governance::secret_env::scrub_env(std::env::vars_os());
                    cmd.args(args).env_clear().envs(inherited).envs(env);
                    let sandbox = match &self.sandbox {
                        SandboxSetting::Set(set) => Some((set.0.clone(), set.1.clone())),
                        SandboxSetting::Requested(request) => {
                            let here = std::env::current_dir().map_err(|e| connect_err(&e))?;
                            Some(request.apply(&tool_core::SandboxPolicy::default(), &here))
                        }
                        SandboxSetting::Unset | SandboxSetting::Off => None,
                    }
                    .filter(|(policy, _)| !policy.is_off());
                    let (cmd, mut hold) = match sandbox {
                        Some((policy, workspace)) => {
                            // Preparing reads the mount table and scans
                            // the workspace: off the runtime's threads.
                            let name = label.clone();
                            tokio::task::spawn_blocking(move || {
                                crate::sandbox::confine(&mut cmd, &policy, &workspace, &name)
                                    .map(|hold| (cmd, Some(hold)))
                            })
                            .await
                            .map_err(|e| connect_err(&e))?
                            .map_err(|e| connect_err(&format!("the sandbox: {e}")))?
                        }
                        None => (cmd, None),
                    };
                    let (transport, _stderr) = rmcp::transport::TokioChildProcess::builder(
                        tokio::process::Command::from(cmd),
                    )
                    .stderr(std::process::Stdio::inherit())
                    .spawn()
                    .map_err(|e| connect_err(&e))?;
                    if let Some(hold) = &mut hold {
                        hold.started(transport.id());
                    }
                    handler
                        .serve_with_lifecycle(InOrder::new(transport, &shared), lifecycle)
                        .await
                        .map(|running| (running, hold))
                        .map_err(|e| connect_err(&e))
                }
                Endpoint::Http { url } => {
                    let config = self
                        .auth
                        .transport_config(url, |name| std::env::var(name).ok())
                        .map_err(|e| {
                            Error::new(ErrorKind::Config, format!("MCP server {label}: {e}"))
                        })?;
                    if matches!(
                        self.sandbox,
                        SandboxSetting::Set(_) | SandboxSetting::Requested(_)
                    ) {
                        return Err(Error::new(
                            ErrorKind::Config,
                            format!(
                                "MCP server {label}: a sandbox applies to servers this program \
                                 starts (`command`), not to `url` servers"
                            ),
                        ));
                    }
                    if let Some(oauth) = self
                        .oauth
                        .as_deref()
                        .filter(|_| !self.auth.sets_authorization())
                    {
                        let client = oauth
                            .resolved(|name| std::env::var(name).ok())
                            .and_then(|oauth| crate::auth::OAuthHttpClient::new(url, oauth))
                            .map_err(|e| {
                                Error::new(ErrorKind::Config, format!("MCP server {label}: {e}"))
                            })?;
                        let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                            client, config,
                        );
                        return handler
                            .serve_with_lifecycle(InOrder::new(transport, &shared), lifecycle)
                            .await
                            .map(|running| (running, None))
                            .map_err(|e| connect_err(&e));
                    }
                    // Legacy HTTP+SSE (2024-11-05): for a `/sse` URL, and
                    // when Streamable HTTP's POST gets a 4xx answer.
                    let legacy = |first: Option<String>| {
                        let (handler, config) = (handler.clone(), config.clone());
                        let shared = Arc::clone(&shared);
                        async move {
                            let sse = crate::legacy_sse::LegacySse::connect(
                                url,
                                &config.custom_headers,
                                config.auth_header.as_deref(),
                            )
                            .await
                            .map_err(|e| match &first {
                                Some(first) => connect_err(&format!(
                                    "{first} (and as a legacy HTTP+SSE server: {e})"
                                )),
                                None => connect_err(&e),
                            })?;
                            handler
                                .serve_with_lifecycle(
                                    InOrder::new(sse, &shared),
                                    ClientLifecycleMode::Initialize,
                                )
                                .await
                                .map(|running| (running, None))
                                .map_err(|e| connect_err(&e))
                        }
                    };
                    if crate::legacy_sse::is_sse_url(url) {
                        return legacy(None).await;
                    }
                    let client =
                        crate::method_header::McpHttpClient::new().map_err(|e| connect_err(&e))?;
                    let transport = rmcp::transport::StreamableHttpClientTransport::with_client(
                        client,
                        config.clone(),
                    );
                    match handler
                        .clone()
                        .serve_with_lifecycle(InOrder::new(transport, &shared), lifecycle)
                        .await
                    {
                        Ok(running) => Ok((running, None)),
                        Err(e) if crate::legacy_sse::is_fallback_cue(&e.to_string()) => {
                            legacy(Some(e.to_string())).await
                        }
                        Err(e) => Err(connect_err(&e)),
                    }
                }
            }
        };
        // A login waits for a person: its own timeout comes on top.
        let connect_timeout = self.connect_timeout
            + self
                .oauth
                .as_ref()
                .map_or(Duration::ZERO, |o| o.login_timeout());
        let (running, hold) = tokio::time::timeout(connect_timeout, handshake)
            .await
            .map_err(|_| {
                connect_err(&format!(
                    "no answer to the handshake within {connect_timeout:?}"
                ))
            })??;
        // The era the handshake settled on: a version without `initialize`
        // (2026-07-28 and later) means the stateless lifecycle.
        let era = match running.peer().peer_info() {
            Some(info) if !info.protocol_version.has_initialize() => ProtocolEra::Discover,
            _ => ProtocolEra::Initialize,
        };
        let server_name = self.name.clone().unwrap_or_else(|| {
            running
                .peer()
                .peer_info()
                .and_then(|i| i.server_info.as_ref().map(|s| s.name.clone()))
                .unwrap_or_else(|| "mcp".to_owned())
        });
        let _ = shared.server_label.set(sanitize_server(&server_name));
        Ok(McpConnection::start(
            (running, hold),
            shared,
            sanitize_server(&server_name),
            what,
            self.timeout,
            era,
            self.filter,
            self.task_calls,
        ))
    }
}

/// State shared between the connection and rmcp's client handler.
#[derive(Default)]
struct Shared {
    progress: Mutex<ProgressRoutes>,
    /// Woken by `notifications/tools/list_changed`.
    list_changed: Notify,
    /// The `<server>` name, for log lines (set once known).
    server_label: std::sync::OnceLock<String>,
    /// [`McpToolSource::with_roots`], for `roots/list` input requests.
    roots: Option<Arc<[rmcp::model::Root]>>,
    /// [`McpToolSource::with_sampler`].
    sampler: Option<Arc<dyn Sampler>>,
    /// The calls in flight (newest last): whose hooks answer a server's
    /// elicitation request, which carries no link to its call on the wire.
    calls: Mutex<Vec<InFlight>>,
    /// The id of the next [`InFlight`].
    next_call: std::sync::atomic::AtomicU64,
    /// The client's capabilities (what it declared), for the `_meta` of task requests.
    capabilities: std::sync::OnceLock<rmcp::model::ClientCapabilities>,
}

/// One `tools/call` in flight: its context and what it calls.
struct InFlight {
    id: u64,
    ctx: ToolContext,
    remote: String,
    args: Map<String, Value>,
}

impl Shared {
    /// Records a call in flight until the guard is dropped.
    fn enter(
        self: &Arc<Self>,
        ctx: &ToolContext,
        remote: &str,
        args: &Map<String, Value>,
    ) -> CallGuard {
        let id = self
            .next_call
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(InFlight {
                id,
                ctx: ctx.clone(),
                remote: remote.to_owned(),
                args: args.clone(),
            });
        CallGuard {
            shared: Arc::clone(self),
            id,
        }
    }

    /// The newest call in flight: its context, remote tool name and arguments.
    fn newest_call(&self) -> Option<(ToolContext, String, Map<String, Value>)> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last()
            .map(|c| (c.ctx.clone(), c.remote.clone(), c.args.clone()))
    }

    fn server(&self) -> &str {
        self.server_label.get().map_or("?", String::as_str)
    }

    /// Stops routing the progress of `token`'s call (its reports and the
    /// early ones kept for it are dropped); nothing without a token.
    fn forget_progress(&self, token: Option<&ProgressToken>) {
        if let Some(token) = token {
            self.progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .forget(token);
        }
    }
}

/// Removes its call from [`Shared::calls`] when dropped.
struct CallGuard {
    shared: Arc<Shared>,
    id: u64,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.shared
            .calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|c| c.id != self.id);
    }
}

/// A transport that hands progress notifications to their calls as they
/// are read, in order with the responses.
///
/// rmcp runs each incoming notification's handler in a task of its own but
/// hands a response to its waiting request at once, so the last progress
/// report of a call could reach the call after its result, when the call
/// had already stopped listening: it was lost (issue 26: "2 of 3 arrive"
/// through a re-export). Delivered here, on the single reading path, every
/// report precedes the result it came before on the wire.
struct InOrder<T> {
    inner: T,
    shared: Arc<Shared>,
}

impl<T> InOrder<T> {
    fn new(inner: T, shared: &Arc<Shared>) -> Self {
        Self {
            inner,
            shared: Arc::clone(shared),
        }
    }
}

impl<T: rmcp::transport::Transport<RoleClient>> rmcp::transport::Transport<RoleClient>
    for InOrder<T>
{
    type Error = T::Error;

    fn send(
        &mut self,
        item: rmcp::service::TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<rmcp::service::RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await;
        if let Some(rmcp::model::JsonRpcMessage::Notification(n)) = &message
            && let ServerNotification::ProgressNotification(p) = &n.notification
        {
            self.shared
                .progress
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .deliver(p.params.clone());
        }
        message
    }

    fn close(&mut self) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// Where progress notifications go. rmcp picks each request's progress token
/// itself and we learn it only once the request is sent, so a report that
/// arrives before the call registered its context waits in `early`.
#[derive(Default)]
struct ProgressRoutes {
    /// Progress token → the context of the call that sent it.
    contexts: HashMap<ProgressToken, ToolContext>,
    /// Reports for tokens not (yet) registered; bounded.
    early: HashMap<ProgressToken, Vec<ProgressNotificationParam>>,
}

/// Most tokens whose early reports are kept (reports of calls that did not
/// ask for progress are dropped when the call ends, or beyond this).
const MAX_EARLY_TOKENS: usize = 256;

impl ProgressRoutes {
    fn deliver(&mut self, params: ProgressNotificationParam) {
        if let Some(ctx) = self.contexts.get(&params.progress_token) {
            report(ctx, &params);
        } else if self.early.len() < MAX_EARLY_TOKENS
            || self.early.contains_key(&params.progress_token)
        {
            self.early
                .entry(params.progress_token.clone())
                .or_default()
                .push(params);
        }
    }

    fn register(&mut self, token: ProgressToken, ctx: ToolContext) {
        for params in self.early.remove(&token).unwrap_or_default() {
            report(&ctx, &params);
        }
        self.contexts.insert(token, ctx);
    }

    fn forget(&mut self, token: &ProgressToken) {
        self.contexts.remove(token);
        self.early.remove(token);
    }
}

fn report(ctx: &ToolContext, params: &ProgressNotificationParam) {
    ctx.report_progress(params.progress, params.total, params.message.as_deref());
}

#[derive(Clone)]
struct Handler {
    shared: Arc<Shared>,
    /// `clientInfo`: name and version.
    client_info: (String, String),
    /// [`McpToolSource::with_roots`].
    roots: Option<Arc<[rmcp::model::Root]>>,
}

impl ClientHandler for Handler {
    /// The client declares form elicitation in both eras (answered through
    /// the calling context's approver and asker, [`crate::requests`]),
    /// `sampling` with a [`Sampler`], `roots` with roots, and names itself.
    fn get_info(&self) -> ClientConfig {
        let mut config = ClientConfig::default();
        let (name, version) = &self.client_info;
        config.client_info = rmcp::model::Implementation::new(name.clone(), version.clone());
        if self.roots.is_some() {
            config.capabilities.roots = Some(rmcp::model::RootsCapabilities::default());
        }
        config.capabilities.elicitation =
            Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
        if self.shared.sampler.is_some() {
            config.capabilities.sampling = Some(rmcp::model::SamplingCapability::default());
        }
        config
    }

    // Progress is delivered by the transport (`InOrder`), not here.

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.shared.list_changed.notify_one();
    }

    /// Answered by the source's [`Sampler`]; without one, or over the
    /// limits, an `invalid params` error naming the reason.
    async fn create_message(
        &self,
        params: rmcp::model::CreateMessageRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::CreateMessageResult, rmcp::ErrorData> {
        let params = serde_json::to_value(params).unwrap_or(Value::Null);
        let answer =
            crate::requests::sample(self.shared.sampler.as_ref(), self.shared.server(), &params)
                .await
                .map_err(|e| rmcp::ErrorData::invalid_params(e, None))?;
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
    }

    /// Answered through the hooks of the newest call in flight on this
    /// connection (the request names no call on the wire): a confirmation
    /// by its approver, any other form by its asker
    /// ([`crate::requests`]); with no call in flight, declined.
    async fn create_elicitation(
        &self,
        request: rmcp::model::ElicitRequestParams,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let params = serde_json::to_value(request).unwrap_or(Value::Null);
        let server = self.shared.server().to_owned();
        let answer = match self.shared.newest_call() {
            Some((ctx, remote, args)) => {
                let origin = crate::requests::Origin {
                    tool: local_tool_name(&server, &remote),
                    args: &args,
                };
                crate::requests::elicit(&ctx, &server, &params, Some(origin)).await
            }
            None => crate::requests::elicit_answer("decline", None),
        };
        serde_json::from_value(answer)
            .map_err(|e| rmcp::ErrorData::internal_error(e.to_string(), None))
    }

    /// The roots given with [`McpToolSource::with_roots`] (none without).
    async fn list_roots(
        &self,
        _context: rmcp::service::RequestContext<RoleClient>,
    ) -> Result<rmcp::model::ListRootsResult, rmcp::ErrorData> {
        Ok(rmcp::model::ListRootsResult::new(
            self.roots.as_deref().map(<[_]>::to_vec).unwrap_or_default(),
        ))
    }

    /// A server's log message goes to `tracing` (target `tool_mcp::server_log`,
    /// field `server`, the MCP level mapped to the nearest `tracing` level),
    /// its data clipped to 2 000 characters.
    async fn on_logging_message(
        &self,
        params: rmcp::model::LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        use rmcp::model::LoggingLevel as L;
        let text = match &params.data {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        };
        let data = clip(&text, Clip::chars(2000));
        let logger = params.logger.as_deref().unwrap_or("");
        let server = self.shared.server_label.get().map_or("?", String::as_str);
        match params.level {
            L::Debug => tracing::debug!(target: "tool_mcp::server_log", server, logger, "{data}"),
            L::Info | L::Notice => {
                tracing::info!(target: "tool_mcp::server_log", server, logger, "{data}");
            }
            L::Warning => tracing::warn!(target: "tool_mcp::server_log", server, logger, "{data}"),
            _ => tracing::error!(target: "tool_mcp::server_log", server, logger, "{data}"),
        }
    }
}

/// An open connection to one MCP server. Its tools become local runtime
/// tools with [`register_into`](Self::register_into) (a plain registry, a
/// snapshot) or [`import_into`](Self::import_into) (a [`LiveRegistry`], kept
/// up to date when the server's list changes).
///
/// Imported tools are named `<server>__<tool>` ([`local_tool_name`]); the
/// original name is used on the wire. They are of kind `other`, never
/// `read_only` or `idempotent`, whatever the server's annotations claim;
/// `destructive` and `open_world` are on unless the server says `false`
/// (MCP's defaults), so that a re-export never claims less risk than the
/// origin. Remote descriptions and hints are untrusted text, kept (the hints
/// in each result's `metadata["mcp"]` and in
/// [`remote_tools`](Self::remote_tools)) but never used for local
/// permissions. A remote `outputSchema` is kept as the tool's output schema.
///
/// Cheap to clone. The connection closes when the last clone and the last
/// imported tool are dropped.
#[derive(Clone)]
pub struct McpConnection {
    inner: Arc<Inner>,
}

struct Inner {
    peer: Peer<RoleClient>,
    stop: CancellationToken,
    closed: CancellationToken,
    shared: Arc<Shared>,
    server: String,
    endpoint: String,
    timeout: Duration,
    era: ProtocolEra,
    /// The source's `include_tools` / `exclude_tools`.
    filter: ToolFilter,
    /// Local names this connection has put into a live registry.
    imported: Mutex<Vec<String>>,
    /// Remote tools called as tasks: the source's
    /// [`with_task_calls`](McpToolSource::with_task_calls), and those whose
    /// plain call the server refused for want of a task.
    task_tools: Mutex<std::collections::HashSet<String>>,
}

impl std::fmt::Debug for McpConnection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpConnection")
            .field("server", &self.inner.server)
            .field("endpoint", &self.inner.endpoint)
            .field("closed", &self.is_closed())
            .finish_non_exhaustive()
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl McpConnection {
    /// `started`: the running service, and the sandbox of its server
    /// process (kept until the service ended, then dropped off the runtime).
    #[allow(
        clippy::too_many_arguments,
        reason = "the parts of one connection, each used once"
    )]
    fn start(
        started: (
            RunningService<RoleClient, Handler>,
            Option<crate::sandbox::SandboxHold>,
        ),
        shared: Arc<Shared>,
        server: String,
        endpoint: String,
        timeout: Duration,
        era: ProtocolEra,
        filter: ToolFilter,
        task_calls: Vec<String>,
    ) -> Self {
        let (running, sandbox) = started;
        let peer = running.peer().clone();
        let stop = CancellationToken::new();
        let closed = CancellationToken::new();
        let service_stop = running.cancellation_token();
        {
            let stop = stop.clone();
            let closed = closed.clone();
            tokio::spawn(async move {
                tokio::select! {
                    _ = running.waiting() => {}
                    () = stop.cancelled() => service_stop.cancel(),
                }
                closed.cancel();
                // A sandboxed server: once its process ended, its proxy stops
                // and the workspace's `.git` is checked (waiting is blocking).
                if let Some(hold) = sandbox {
                    let _ = tokio::task::spawn_blocking(move || drop(hold)).await;
                }
            });
        }
        Self {
            inner: Arc::new(Inner {
                peer,
                stop,
                closed,
                shared,
                server,
                endpoint,
                timeout,
                era,
                filter,
                imported: Mutex::new(Vec::new()),
                task_tools: Mutex::new(task_calls.into_iter().collect()),
            }),
        }
    }

    /// The `<server>` prefix of this connection's local tool names.
    pub fn server_name(&self) -> &str {
        &self.inner.server
    }

    /// The era the handshake settled on: [`ProtocolEra::Discover`] or
    /// [`ProtocolEra::Initialize`], never `Auto`.
    pub fn era(&self) -> ProtocolEra {
        self.inner.era
    }

    /// `true` once the server is gone (exited, closed its streams, or the
    /// connection was closed).
    pub fn is_closed(&self) -> bool {
        self.inner.closed.is_cancelled()
    }

    /// Closes the connection (a stdio server's process is ended). Calls in
    /// flight fail with a connection-closed error; tools it imported into a
    /// [`LiveRegistry`] are removed from it (see [`import_into`](Self::import_into)).
    pub fn close(&self) {
        self.inner.stop.cancel();
    }

    /// Resolves once the connection is closed ([`is_closed`](Self::is_closed)
    /// turns `true`): the server exited, closed its streams, or
    /// [`close`](Self::close) was called. The future holds no reference to
    /// the connection, so waiting on it keeps nothing open.
    pub fn closed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        self.inner.closed.clone().cancelled_owned()
    }

    /// Calls the server's tool `tool` (its name on the wire) directly, outside
    /// any registry, with the request timeout, progress forwarding to `ctx`
    /// and cancellation through `ctx`'s token. Never fails: problems are error
    /// results, with `metadata["mcp_error"]` set to the [`ErrorKind`] name
    /// when the request itself failed (`protocol` for an unknown tool,
    /// `timeout`, `connection_closed`).
    pub async fn call(
        &self,
        tool: &str,
        args: Map<String, Value>,
        ctx: &ToolContext,
    ) -> ToolResult {
        Arc::clone(&self.inner)
            .call(tool.to_owned(), args, ctx.clone())
            .await
    }

    /// Every tool the server lists now, all pages, as the server describes
    /// them (those the source's [`include_tools`](McpToolSource::include_tools)
    /// and [`exclude_tools`](McpToolSource::exclude_tools) admit).
    ///
    /// # Errors
    /// [`ErrorKind::Timeout`], [`ErrorKind::ConnectionClosed`] or [`ErrorKind::Protocol`].
    pub async fn remote_tools(&self) -> Result<Vec<McpTool>, Error> {
        self.inner.list_all().await
    }

    /// The server's tools as local runtime tools (see the type's docs).
    ///
    /// # Errors
    /// As [`remote_tools`](Self::remote_tools); [`ErrorKind::Registry`] when a
    /// remote tool cannot be expressed as a local tool.
    pub async fn tools(&self) -> Result<Vec<Tool>, Error> {
        let remote = self.remote_tools().await?;
        remote
            .iter()
            .map(|t| runtime_tool(&self.inner, t))
            .collect()
    }

    /// Adds the server's tools to `registry` once. Nothing is added when any
    /// name is taken (never a silent overwrite).
    ///
    /// # Errors
    /// As [`tools`](Self::tools); [`ErrorKind::Registry`] naming every collision.
    pub async fn register_into(&self, registry: &mut ToolRegistry) -> Result<Vec<String>, Error> {
        let tools = self.tools().await?;
        add_all(registry, tools)
    }

    /// Adds the server's tools to `registry` and keeps them current: on
    /// `notifications/tools/list_changed` this server's tools are replaced by
    /// its new list (a new tool whose name is taken by a tool of someone else
    /// is left out, with a warning through `tracing`). Nothing is added when
    /// any name is taken now.
    ///
    /// When the connection closes (the server exits or closes its streams,
    /// or [`close`](Self::close) is called) its tools are removed from
    /// `registry` and the server is recorded there as unavailable
    /// ([`LiveRegistry::unavailable`]) with the reason; there is no
    /// automatic reconnect. A successful import clears an earlier
    /// unavailable record of the same `<server>` name.
    ///
    /// # Errors
    /// As [`register_into`](Self::register_into).
    pub async fn import_into(&self, registry: &LiveRegistry) -> Result<Vec<String>, Error> {
        let tools = self.tools().await?;
        let names = registry.update(|r| add_all(r, tools))?;
        *self
            .inner
            .imported
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = names.clone();
        registry.clear_unavailable(&self.inner.server);
        self.watch_list_changes(registry.clone()).await;
        Ok(names)
    }

    /// Starts the task that re-imports on list changes. On a 2026-07-28
    /// connection list changes come through `subscriptions/listen`.
    async fn watch_list_changes(&self, registry: LiveRegistry) {
        let weak: Weak<Inner> = Arc::downgrade(&self.inner);
        let shared = Arc::clone(&self.inner.shared);
        let closed = self.inner.closed.clone();
        self.subscribe_list_changes().await;
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = shared.list_changed.notified() => {}
                    () = closed.cancelled() => {
                        // No `Inner` left means no tool of ours is in the registry.
                        if let Some(inner) = weak.upgrade() {
                            inner.retire_from(&registry);
                        }
                        return;
                    }
                }
                let Some(inner) = weak.upgrade() else { return };
                match inner.list_all().await {
                    Ok(remote) => inner.replace_in(&registry, &remote),
                    Err(e) => {
                        tracing::warn!(
                            "re-listing the tools of MCP server `{}`: {e}",
                            inner.server
                        );
                    }
                }
            }
        });
    }
}

impl McpConnection {
    /// On a 2026-07-28 connection, opens the `subscriptions/listen` stream
    /// that carries list changes; a 2025-11-25 server sends them unasked.
    pub(crate) async fn subscribe_list_changes(&self) {
        if self.inner.era == ProtocolEra::Discover {
            let filter = SubscriptionFilter::builder().tools_list_changed().build();
            if let Ok(mut subscription) = self.inner.peer.listen(filter).await {
                let shared = Arc::clone(&self.inner.shared);
                tokio::spawn(async move {
                    while let Ok(Some(n)) = subscription.next().await {
                        if matches!(n, ServerNotification::ToolListChangedNotification(_)) {
                            shared.list_changed.notify_one();
                        }
                    }
                });
            }
        }
    }

    /// Whether `other` is this very connection (a clone of it).
    pub(crate) fn same_as(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Resolves at the server's next `notifications/tools/list_changed`
    /// (one kept if it came while nobody waited). For one waiter only: the
    /// connection's own [`import_into`](Self::import_into) watcher is the
    /// other user, and the two are never used on the same connection.
    pub(crate) fn list_changed(&self) -> impl std::future::Future<Output = ()> + Send + 'static {
        let shared = Arc::clone(&self.inner.shared);
        async move { shared.list_changed.notified().await }
    }
}

fn add_all(registry: &mut ToolRegistry, tools: Vec<Tool>) -> Result<Vec<String>, Error> {
    let taken: Vec<String> = tools
        .iter()
        .filter(|t| registry.contains(t.name()))
        .map(|t| t.name().to_owned())
        .collect();
    if !taken.is_empty() {
        return Err(Error::new(
            ErrorKind::Registry,
            format!(
                "imported MCP tool names already taken: {}",
                taken.join(", ")
            ),
        ));
    }
    let mut names = Vec::with_capacity(tools.len());
    for tool in tools {
        names.push(tool.name().to_owned());
        registry
            .register_with(tool, OnConflict::Error)
            .map_err(|e| Error::new(ErrorKind::Registry, e.to_string()))?;
    }
    Ok(names)
}

impl Inner {
    async fn list_all(&self) -> Result<Vec<McpTool>, Error> {
        let mut tools = Vec::new();
        let mut cursor = None;
        loop {
            let params = PaginatedRequestParams::default().with_cursor(cursor);
            let page = tokio::select! {
                r = tokio::time::timeout(self.timeout, self.peer.list_tools(Some(params))) => r,
                () = self.closed.cancelled() => return Err(self.closed_error()),
            };
            let page = page
                .map_err(|_| {
                    Error::new(
                        ErrorKind::Timeout,
                        format!(
                            "MCP server `{}`: tools/list got no answer within {:?}",
                            self.server, self.timeout
                        ),
                    )
                })?
                .map_err(|e| self.service_error("tools/list", &e))?;
            tools.extend(
                page.tools
                    .into_iter()
                    .filter(|t| self.filter.admits(&t.name)),
            );
            match page.next_cursor {
                Some(next) if !next.is_empty() => cursor = Some(next),
                _ => return Ok(tools),
            }
        }
    }

    fn closed_error(&self) -> Error {
        Error::new(
            ErrorKind::ConnectionClosed,
            format!(
                "connection closed: MCP server `{}` ({}) is gone",
                self.server, self.endpoint
            ),
        )
    }

    fn service_error(&self, what: &str, e: &ServiceError) -> Error {
        match e {
            ServiceError::TransportClosed | ServiceError::TransportSend(_) => self.closed_error(),
            ServiceError::Timeout { timeout } => Error::new(
                ErrorKind::Timeout,
                format!(
                    "MCP server `{}`: {what} got no answer within {timeout:?}",
                    self.server
                ),
            ),
            other => Error::new(
                ErrorKind::Protocol,
                format!("MCP server `{}`: {what} failed: {other}", self.server),
            ),
        }
    }

    /// The connection is closed: removes this connection's tools from
    /// `registry` and records the server there as unavailable.
    fn retire_from(&self, registry: &LiveRegistry) {
        let mut imported = self.imported.lock().unwrap_or_else(PoisonError::into_inner);
        let names = std::mem::take(&mut *imported);
        let why = if self.stop.is_cancelled() {
            "the connection was closed by this program"
        } else {
            "the server exited or closed its connection"
        };
        // The reason first, then the removal: whoever sees the tools gone
        // also finds why.
        registry.mark_unavailable(
            &self.server,
            &format!(
                "MCP server `{}` ({}): {why}; its {} tools are removed",
                self.server,
                self.endpoint,
                names.len()
            ),
        );
        let _ = registry.update(|r| {
            for name in &names {
                r.remove(name);
            }
            Ok::<_, std::convert::Infallible>(())
        });
        drop(imported);
    }

    /// Replaces this connection's tools in `registry` by `remote`.
    fn replace_in(self: &Arc<Self>, registry: &LiveRegistry, remote: &[McpTool]) {
        let mut imported = self.imported.lock().unwrap_or_else(PoisonError::into_inner);
        let previous = imported.clone();
        let result = registry.update(|r| {
            for name in &previous {
                r.remove(name);
            }
            let mut names = Vec::new();
            for tool in remote {
                match runtime_tool(self, tool) {
                    Ok(tool) if r.contains(tool.name()) => tracing::warn!(
                        "MCP server `{}`: tool `{}` left out, the name is taken",
                        self.server,
                        tool.name()
                    ),
                    Ok(tool) => {
                        names.push(tool.name().to_owned());
                        let _ = r.register_with(tool, OnConflict::Skip);
                    }
                    Err(e) => tracing::warn!("{e}"),
                }
            }
            Ok::<_, Error>(names)
        });
        if let Ok(names) = result {
            *imported = names;
        }
    }

    /// Calls remote tool `remote` (its wire name): plainly, or as a task
    /// ([`crate::task_call`]) when the source asks for it or the server
    /// refuses a plain call for want of one.
    async fn call(
        self: Arc<Self>,
        remote: String,
        args: Map<String, Value>,
        ctx: ToolContext,
    ) -> ToolResult {
        let _in_flight = self.shared.enter(&ctx, &remote, &args);
        // The caller's timeout bounds the call (review 26, F1).
        let deadline = crate::cancel::call_deadline(&ctx, self.timeout);
        let mut as_task = self.is_task_tool(&remote);
        let mut params = CallToolRequestParams::new(remote.clone()).with_arguments(args.clone());
        // 2026-07-28: an input-required result (a confirmation) is answered
        // through `ctx`'s approver and the call retried, a few rounds at most.
        for _round in 0..MAX_INPUT_ROUNDS {
            match Arc::clone(&self)
                .call_once(&remote, params.clone(), &ctx, as_task, deadline)
                .await
            {
                Ok(InputRound::Asked(asked)) => {
                    let (responses, state) = (
                        answer_input(
                            &self.shared,
                            &self.server,
                            &remote,
                            &args,
                            asked.input_requests.unwrap_or_default(),
                            &ctx,
                        )
                        .await,
                        asked.request_state,
                    );
                    params.input_responses = Some(responses);
                    params.request_state = state;
                }
                Ok(InputRound::Task(created, token)) => {
                    // Dropped before the task ended (the executor's
                    // timeout): `tasks/cancel` all the same.
                    let mut guard = crate::cancel::CancelOnDrop::task(
                        &self.peer,
                        created.id.clone(),
                        self.task_meta(),
                    );
                    let result = self.follow(&remote, &args, created, &ctx, deadline).await;
                    guard.disarm();
                    self.shared.forget_progress(token.as_ref());
                    return result;
                }
                Ok(InputRound::NeedsTask) => {
                    as_task = true;
                    self.task_tools
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .insert(remote.clone());
                }
                Ok(InputRound::Done(result)) => return result,
                Err(result) => return result,
            }
        }
        ToolResult::error(
            ToolErrorKind::Failed,
            format!(
                "MCP server `{}` still asked for input after {MAX_INPUT_ROUNDS} rounds of tools/call",
                self.server
            ),
        )
    }

    /// Whether `remote` is called as a task.
    fn is_task_tool(&self, remote: &str) -> bool {
        self.task_tools
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(remote)
    }

    /// Which tasks the server speaks: the extension when it advertises it,
    /// else the 2025-11-25 utility in a session (rmcp keeps no trace of
    /// that capability, so it is assumed); `None` in a 2026-07-28
    /// connection without the extension.
    fn task_flavour(&self) -> Option<crate::task_call::Flavour> {
        let extension = self
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.supports_tasks());
        if extension {
            Some(crate::task_call::Flavour::Extension)
        } else if self.era == ProtocolEra::Initialize {
            Some(crate::task_call::Flavour::Utility)
        } else {
            None
        }
    }

    /// The `_meta` of task requests: the capabilities with the extension.
    fn task_meta(&self) -> rmcp::model::RequestMetaObject {
        crate::task_call::task_meta(&self.shared.capabilities.get().cloned().unwrap_or_default())
    }

    /// Follows task `created` of a call of `remote` to its end.
    async fn follow(
        &self,
        remote: &str,
        args: &Map<String, Value>,
        created: crate::task_call::Created,
        ctx: &ToolContext,
        deadline: tokio::time::Instant,
    ) -> ToolResult {
        let follow = crate::task_call::Follow {
            peer: &self.peer,
            closed: &self.closed,
            server: &self.server,
            meta: self.task_meta(),
            deadline,
            timeout: crate::cancel::left(deadline),
            cancel_by: ctx.deadline(),
        };
        let answer =
            |requests| answer_input(&self.shared, &self.server, remote, args, requests, ctx);
        let id = created.id.clone();
        let mut result = match follow.run(created, ctx, answer).await {
            crate::task_call::Ended::Result(result) => self.to_tool_result(remote, result),
            crate::task_call::Ended::Error(result) => {
                result.with_metadata(meta::MCP, json!({"server": self.server, "tool": remote}))
            }
        };
        if let Some(mcp) = result.metadata.get_mut(meta::MCP) {
            mcp["task"] = Value::String(id);
        }
        result
    }

    /// One `tools/call` request, answered by `deadline` (else cancelled on
    /// the server); `as_task`: as a task of the server's flavour.
    async fn call_once(
        self: Arc<Self>,
        remote: &str,
        params: CallToolRequestParams,
        ctx: &ToolContext,
        as_task: bool,
        deadline: tokio::time::Instant,
    ) -> Result<InputRound, ToolResult> {
        let time_left = crate::cancel::left(deadline);
        let mut options = PeerRequestOptions::with_timeout(time_left);
        let flavour = as_task.then(|| self.task_flavour()).flatten();
        let request = match flavour {
            Some(crate::task_call::Flavour::Utility) => {
                // The utility's task lives at most its TTL: the call's
                // time left and a minute to fetch the result.
                crate::task_call::utility_call(&params, time_left + Duration::from_secs(60))
            }
            Some(crate::task_call::Flavour::Extension) => {
                options = options.with_meta(self.task_meta());
                ClientRequest::CallToolRequest(CallToolRequest::new(params))
            }
            None => ClientRequest::CallToolRequest(CallToolRequest::new(params)),
        };
        let mut token = None;
        let mut refusal = None;
        let outcome = async {
            let handle = tokio::select! {
                h = self.peer.send_cancellable_request(request, options) => h,
                () = self.closed.cancelled() => return Err(self.closed_error()),
            }
            .map_err(|e| self.service_error("tools/call", &e))?;
            let id = handle.id.clone();
            token = Some(handle.progress_token.clone());
            if ctx.reports_progress() {
                self.shared
                    .progress
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .register(handle.progress_token.clone(), ctx.clone());
            }
            // rmcp cancels on its own timeout; a drop before any end
            // (the executor's timeout) cancels through the guard.
            let mut guard = crate::cancel::CancelOnDrop::request(&self.peer, id.clone());
            let answer = tokio::select! {
                r = handle.await_response() => r.map_err(|e| {
                    let session = self.era == ProtocolEra::Initialize;
                    if !as_task && crate::task_call::refused_for_tasks(&e, session) {
                        refusal = Some(());
                    }
                    self.service_error("tools/call", &e)
                }).map(Some),
                () = self.closed.cancelled() => Err(self.closed_error()),
                () = ctx.cancellation_token().cancelled() => {
                    let param = CancelledNotificationParam::new(
                        Some(id),
                        Some("cancelled by the caller".to_owned()),
                    );
                    let _ = self.peer.notify_cancelled(param).await;
                    Ok(None)
                }
            };
            guard.disarm();
            answer
        }
        .await;
        // A task keeps its progress route until it ends.
        if let Ok(Some(answer)) = &outcome
            && let Some(created) = crate::task_call::created(answer)
        {
            return Ok(InputRound::Task(created, token));
        }
        self.shared.forget_progress(token.as_ref());
        let session = self.era == ProtocolEra::Initialize;
        let refused_in_result = matches!(
            &outcome,
            Ok(Some(ServerResult::CallToolResult(r)))
                if !as_task && session && crate::task_call::refusal_result(r)
        );
        if (refusal.is_some() || refused_in_result) && self.task_flavour().is_some() {
            return Ok(InputRound::NeedsTask);
        }
        Err(match outcome {
            Ok(Some(ServerResult::CallToolResult(result))) => {
                return Ok(InputRound::Done(self.to_tool_result(remote, result)));
            }
            Ok(Some(ServerResult::InputRequiredResult(asked))) => {
                return Ok(InputRound::Asked(asked));
            }
            Ok(Some(_)) => ToolResult::error(
                ToolErrorKind::Failed,
                format!(
                    "MCP server `{}` answered tools/call with something else than a result",
                    self.server
                ),
            ),
            Ok(None) => ToolResult::error(ToolErrorKind::Cancelled, "the call was cancelled"),
            Err(e) => {
                let kind = match e.kind() {
                    ErrorKind::Timeout => ToolErrorKind::Timeout,
                    _ => ToolErrorKind::Failed,
                };
                ToolResult::error(kind, e.message().to_owned())
                    .with_metadata(meta::MCP_ERROR, e.kind().as_str())
            }
        })
    }

    /// The remote result as a local one. Text blocks (and text resources)
    /// make the output; images, audio and blob resources become images and
    /// attachments; a `resource_link` becomes a readable line of the output
    /// (`Resource link: NAME <URI> (MIME): DESCRIPTION`) and an entry of
    /// `metadata["mcp"]["resource_links"]` (`uri`, `name`, `title`,
    /// `mimeType`, `description`, `size` as the server gave them); every
    /// block's `annotations` (`audience`, `priority`, `lastModified`) are
    /// kept in `metadata["mcp"]["content_annotations"]` as `{"index",
    /// "type", "annotations"}`, `index` counting the result's blocks from 0.
    fn to_tool_result(&self, remote: &str, result: rmcp::model::CallToolResult) -> ToolResult {
        let mut texts = Vec::new();
        let mut images = Vec::new();
        let mut attachments = Vec::new();
        let mut links = Vec::new();
        let mut annotations = Vec::new();
        for (index, block) in result.content.iter().enumerate() {
            let wire = serde_json::to_value(block).unwrap_or(Value::Null);
            if let Some(a) = wire.get("annotations").filter(|a| a.is_object()) {
                annotations.push(json!({
                    "index": index,
                    "type": wire.get("type").cloned().unwrap_or(Value::Null),
                    "annotations": a,
                }));
            }
            match block {
                ContentBlock::Text(t) => texts.push(t.text.clone()),
                ContentBlock::Image(i) => {
                    images.push(Image::new(i.mime_type.clone(), i.data.clone()));
                }
                // The server's rendering of an inline attachment, read back.
                ContentBlock::Audio(a) => attachments.push(Attachment::inline(
                    "audio",
                    a.mime_type.clone(),
                    a.data.clone(),
                )),
                ContentBlock::Resource(r) => match &r.resource {
                    ResourceContents::BlobResourceContents {
                        uri,
                        mime_type,
                        blob,
                        ..
                    } => attachments.push(Attachment::inline(
                        uri.strip_prefix("attachment:///").unwrap_or(uri),
                        mime_type.as_deref().unwrap_or("application/octet-stream"),
                        blob.clone(),
                    )),
                    ResourceContents::TextResourceContents { text, .. } => {
                        texts.push(text.clone());
                    }
                    other => texts.push(serde_json::to_string(other).unwrap_or_default()),
                },
                ContentBlock::ResourceLink(_) => {
                    texts.push(resource_link_line(&wire));
                    let mut link = Map::new();
                    for key in ["uri", "name", "title", "mimeType", "description", "size"] {
                        if let Some(v) = wire.get(key) {
                            link.insert(key.to_owned(), v.clone());
                        }
                    }
                    links.push(Value::Object(link));
                }
                // A block kind newer than this client: its JSON.
                _ => texts.push(wire.to_string()),
            }
        }
        let mut text = texts.join("\n");
        if text.is_empty()
            && let Some(structured) = &result.structured_content
        {
            text = structured.to_string();
        }
        let mut out = if result.is_error == Some(true) {
            ToolResult::error(ToolErrorKind::Failed, text)
        } else {
            ToolResult::ok(text)
        };
        for image in images {
            out = out.with_image(image);
        }
        for attachment in attachments {
            out = out.with_attachment(attachment);
        }
        if let Some(structured) = result.structured_content {
            out = out.with_metadata(meta::STRUCTURED, structured);
        }
        let mut mcp = json!({"server": self.server, "tool": remote});
        if !links.is_empty() {
            mcp["resource_links"] = Value::Array(links);
        }
        if !annotations.is_empty() {
            mcp["content_annotations"] = Value::Array(annotations);
        }
        out.with_metadata(meta::MCP, mcp)
    }
}

/// The readable line of a `resource_link` block (its JSON):
/// `Resource link: NAME <URI> (MIME): DESCRIPTION`, each part clipped, the
/// mime type and description only when given.
fn resource_link_line(link: &Value) -> String {
    let field = |key: &str, max: usize| {
        link.get(key)
            .and_then(Value::as_str)
            .map(|s| clip(s, Clip::chars(max)).into_owned())
    };
    let mut line = format!(
        "Resource link: {} <{}>",
        field("title", 200)
            .or_else(|| field("name", 200))
            .unwrap_or_default(),
        field("uri", 2000).unwrap_or_default()
    );
    if let Some(mime) = field("mimeType", 100) {
        line.push_str(&format!(" ({mime})"));
    }
    if let Some(description) = field("description", 500) {
        line.push_str(": ");
        line.push_str(&description);
    }
    line
}

/// A remote tool as a local runtime tool.
fn runtime_tool(inner: &Arc<Inner>, remote: &McpTool) -> Result<Tool, Error> {
    let (spec, hints) = remote_spec(&inner.server, remote);
    let strong = Arc::clone(inner);
    let wire_name = remote.name.to_string();
    Tool::new(spec, move |args: Map<String, Value>, ctx: ToolContext| {
        let inner = Arc::clone(&strong);
        let wire_name = wire_name.clone();
        let hints = hints.clone();
        async move {
            let mut result = inner.call(wire_name, args, ctx).await;
            with_hints(&mut result, hints);
            result
        }
    })
    // The server checks the arguments against its whole schema.
    .map(Tool::without_schema_check)
    .map_err(|e| {
        Error::new(
            ErrorKind::Registry,
            format!("MCP server `{}`: {e}", inner.server),
        )
    })
}

/// Puts a remote tool's annotations (`hints`, from [`remote_spec`]) into a
/// result's `metadata["mcp"]["annotations"]`.
pub(crate) fn with_hints(result: &mut ToolResult, hints: Value) {
    if let Some(mcp) = result.metadata.get_mut("mcp") {
        mcp["annotations"] = hints;
    }
}

/// The local spec of remote tool `remote` of `<server>` `server` (no
/// timeout of its own), and its annotations as JSON (`null` when it has
/// none).
pub(crate) fn remote_spec(server: &str, remote: &McpTool) -> (ToolSpec, Value) {
    let local = local_tool_name(server, &remote.name);
    let description = remote
        .description
        .as_deref()
        .filter(|d| !d.trim().is_empty())
        .map_or_else(
            || format!("Tool `{}` of MCP server `{}`.", remote.name, server),
            str::to_owned,
        );
    let mut parameters = Value::Object((*remote.input_schema).clone());
    if parameters.get("type").is_none() {
        parameters["type"] = json!("object");
    }
    let mut spec = ToolSpec::new(local, description, parameters);
    // Remote hints are untrusted: kind stays `other`, and no flag says the
    // tool is safer than the server says or than MCP's defaults imply
    // (`readOnlyHint` false, `destructiveHint` true, `idempotentHint` false,
    // `openWorldHint` true when absent; specification 2025-11-25, "Tool
    // annotations"). So `read_only` and `idempotent` stay off whatever the
    // server claims (they would loosen local approvals), and `destructive`
    // and `open_world` are on unless the server says `false`: what a
    // re-export (`tool --mcp-config F serve`) publishes is never less
    // cautious than the origin. `destructive` and `open_world` grant nothing
    // locally.
    let hint = |get: fn(&rmcp::model::ToolAnnotations) -> Option<bool>| {
        remote.annotations.as_ref().and_then(get)
    };
    spec.flags.destructive = hint(|a| a.destructive_hint).unwrap_or(true);
    spec.flags.open_world = hint(|a| a.open_world_hint).unwrap_or(true);
    // The structured result keeps its declared shape (the result's
    // `structuredContent` travels as `metadata["structured"]`).
    spec.output_schema = remote
        .output_schema
        .as_ref()
        .map(|schema| Value::Object((**schema).clone()));
    // No timeout of its own (review 26, F1): the caller's (`--timeout`,
    // the context's) or the registry's bounds the call, which ends a
    // little earlier on its own to cancel on the server (`cancel.rs`); the
    // source's request timeout bounds it when the caller sets none.
    if let Some(title) = remote
        .title
        .clone()
        .or_else(|| remote.annotations.as_ref().and_then(|a| a.title.clone()))
    {
        spec.display.insert(
            "en".to_owned(),
            DisplayName {
                name: Some(title),
                params: BTreeMap::new(),
            },
        );
    }
    let hints = remote
        .annotations
        .as_ref()
        .and_then(|a| serde_json::to_value(a).ok())
        .unwrap_or(Value::Null);
    (spec, hints)
}

/// Most `tools/call` rounds one call drives when the server keeps asking for input.
const MAX_INPUT_ROUNDS: usize = 4;

/// What one `tools/call` request came back with.
enum InputRound {
    /// The final result.
    Done(ToolResult),
    /// An input-required result (2026-07-28).
    Asked(InputRequiredResult),
    /// A task the server created, and the progress token of its call
    /// (still routed to the caller).
    Task(crate::task_call::Created, Option<ProgressToken>),
    /// The server refused a plain call: the tool must be called as a task.
    NeedsTask,
}

/// Answers the input requests of an input-required result or of a task
/// in `input_required` (at most [`crate::input::MAX_INPUT_REQUESTS`] of
/// them; the rest stay unanswered): `roots/list` with the source's
/// roots, sampling with its [`Sampler`], elicitation through `ctx`'s hooks
/// ([`crate::requests::elicit`]: a confirmation for the local tool by the
/// approver, whose editable parameters are the form's other fields; any
/// other form by the asker). A request that cannot be answered is declined
/// (elicitation) or left out (sampling without a model); roots without
/// roots given are an empty list.
async fn answer_input(
    shared: &Shared,
    server: &str,
    remote: &str,
    args: &Map<String, Value>,
    requests: rmcp::model::InputRequests,
    ctx: &ToolContext,
) -> InputResponses {
    let mut responses = InputResponses::new();
    for (key, request) in requests.into_iter().take(crate::input::MAX_INPUT_REQUESTS) {
        let params = serde_json::to_value(&request)
            .ok()
            .and_then(|v| v.get("params").cloned())
            .unwrap_or(Value::Null);
        let answer = match &request {
            // Without roots given, an empty list (the server asked anyway).
            InputRequest::ListRoots(_) => serde_json::to_value(rmcp::model::ListRootsResult::new(
                shared
                    .roots
                    .as_deref()
                    .map(<[_]>::to_vec)
                    .unwrap_or_default(),
            ))
            .unwrap_or(Value::Null),
            InputRequest::CreateMessage(_) => {
                match crate::requests::sample(shared.sampler.as_ref(), server, &params).await {
                    Ok(answer) => answer,
                    Err(e) => {
                        tracing::warn!("MCP server `{server}`: sampling request not answered: {e}");
                        continue;
                    }
                }
            }
            InputRequest::Elicitation(_) => {
                let origin = crate::requests::Origin {
                    tool: local_tool_name(server, remote),
                    args,
                };
                crate::requests::elicit(ctx, server, &params, Some(origin)).await
            }
            _ => continue,
        };
        responses.insert(key, answer);
    }
    responses
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_resource_link_reads_as_a_line() {
        let link = json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt",
            "mimeType": "text/plain", "description": "the notes"});
        assert_eq!(
            resource_link_line(&link),
            "Resource link: a.txt <file:///a.txt> (text/plain): the notes"
        );
        let titled = json!({"uri": "x:1", "name": "n", "title": "The Title"});
        assert_eq!(
            resource_link_line(&titled),
            "Resource link: The Title <x:1>"
        );
    }
}
