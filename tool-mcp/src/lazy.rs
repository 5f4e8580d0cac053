//! Lazy start of imported MCP servers (issue 26): a server's tools are
//! registered from its cached tool list ([`ToolListCache`]) without starting
//! it; the server starts on the first call of one of its tools
//! ([`LazyServer`]) and stops again after [`McpToolSource::idle_timeout`].
//!
//! The cache is one JSON file per configuration entry in the private state
//! folder (`$XDG_STATE_HOME/agent-tools/mcp-tools/`, cross-cutting §6),
//! named after the SHA-256 of everything in the entry that may change the
//! list ([`McpToolSource`]'s fingerprint), holding the list, when it was
//! fetched and the list's own SHA-256. It is written with `0600` permissions
//! (the folder `0700`) through a temporary file and a rename, so a reader
//! never sees half a file.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rmcp::model::Tool as McpTool;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tool_core::{
    ErrorKind as ToolErrorKind, LiveRegistry, OnConflict, Tool, ToolContext, ToolResult, meta,
};

use crate::client::{McpConnection, McpToolSource, remote_spec, with_hints};
use crate::error::{Error, ErrorKind};
use crate::names::sanitize_server;

/// How long a cached tool list is used before the server is asked again
/// unless [`ToolListCache::with_ttl`] says otherwise: one day.
pub const DEFAULT_CACHE_TTL: Duration = Duration::from_secs(24 * 3600);

/// Largest cache file read (8 MiB); a larger one counts as missing.
pub const MAX_CACHE_BYTES: u64 = 8 << 20;

/// Where lazily imported servers' tool lists are kept between runs.
///
/// A cached list is *stale*, and the server is started to list its tools
/// again, when any of these holds: there is no file for the entry's
/// fingerprint (a new entry, or a changed `command`, `args`, `env`, `url`,
/// `headers`, `includeTools`, `excludeTools` or `protocol`: the fingerprint
/// covers them all); the file is older than the TTL (default
/// [`DEFAULT_CACHE_TTL`]) or dated in the future; it is larger than
/// [`MAX_CACHE_BYTES`], unreadable, of another format version, or its
/// list does not match the SHA-256 stored with it. A server that announces
/// `notifications/tools/list_changed` while running has its list fetched
/// and written again at once.
#[derive(Debug, Clone)]
pub struct ToolListCache {
    dir: PathBuf,
    ttl: Duration,
}

/// The on-disk form of one cached list.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct CacheFile {
    version: u32,
    /// Seconds since the Unix epoch when the list was fetched.
    fetched_at: u64,
    /// Hex SHA-256 of `tools` as JSON.
    list_hash: String,
    tools: Vec<McpTool>,
}

const CACHE_VERSION: u32 = 1;

impl ToolListCache {
    /// A cache in `dir` (created, `0700`, on the first write) with the
    /// default TTL.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            ttl: DEFAULT_CACHE_TTL,
        }
    }

    /// The cache in the per-user private state folder:
    /// [`tool_core::state::state_dir`]`/mcp-tools`; `None` when there is no
    /// state folder (neither `XDG_STATE_HOME` nor `HOME` is absolute).
    pub fn in_state_dir() -> Option<Self> {
        tool_core::state::state_dir().map(|dir| Self::new(dir.join("mcp-tools")))
    }

    /// The same cache with lists used for at most `ttl` after they were
    /// fetched ([`Duration::ZERO`]: never used, always refetched).
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The cache's folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file holding `source`'s list.
    pub fn path_for(&self, source: &McpToolSource) -> PathBuf {
        self.dir
            .join(format!("{}.json", hex(&source.fingerprint()[..16])))
    }

    /// `source`'s cached tool list when it is fresh (see the type's docs);
    /// `None` when it is missing or stale.
    pub fn load(&self, source: &McpToolSource) -> Option<Vec<McpTool>> {
        let path = self.path_for(source);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() || meta.len() > MAX_CACHE_BYTES {
            return None;
        }
        let text = std::fs::read(&path).ok()?;
        let file: CacheFile = serde_json::from_slice(&text).ok()?;
        let now = now_secs();
        let fresh = file.version == CACHE_VERSION
            && file.fetched_at <= now.saturating_add(60)
            && now.saturating_sub(file.fetched_at) < self.ttl.as_secs()
            && list_hash(&file.tools) == file.list_hash;
        fresh.then_some(file.tools)
    }

    /// Writes `tools` as `source`'s list, fetched now.
    ///
    /// # Errors
    /// [`ErrorKind::Io`] when the folder or file cannot be written.
    pub fn store(&self, source: &McpToolSource, tools: &[McpTool]) -> Result<(), Error> {
        use std::io::Write;
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        let io = |what: &str, e: std::io::Error| {
            Error::new(
                ErrorKind::Io,
                format!("MCP tool-list cache: {what} {}: {e}", self.dir.display()),
            )
        };
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&self.dir)
            .map_err(|e| io("cannot create", e))?;
        let file = CacheFile {
            version: CACHE_VERSION,
            fetched_at: now_secs(),
            list_hash: list_hash(tools),
            tools: tools.to_vec(),
        };
        let bytes = serde_json::to_vec(&file)
            .map_err(|e| io("cannot encode a list for", std::io::Error::other(e)))?;
        let path = self.path_for(source);
        let tmp = path.with_extension(format!("{}.tmp", std::process::id()));
        let written = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&tmp)
            .and_then(|mut f| f.write_all(&bytes).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::rename(&tmp, &path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(io("cannot write in", e));
        }
        Ok(())
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

/// Hex SHA-256 of a tool list as JSON.
fn list_hash(tools: &[McpTool]) -> String {
    use sha2::Digest;
    let json = serde_json::to_vec(tools).unwrap_or_default();
    hex(&sha2::Sha256::digest(json))
}

/// A server imported lazily: its tools are in the registry, it runs only
/// from the first call of one of them until it has been idle for
/// [`McpToolSource::idle_timeout`]. Cheap to clone.
///
/// Its tools hold the handle and the handle holds the registry they are in
/// (to replace them on a list change), so a handle lives as long as its
/// tools stay registered; a running server is ended by its idle time, by
/// [`stop`](Self::stop), or with the program.
#[derive(Clone)]
pub struct LazyServer {
    inner: Arc<LazyInner>,
}

struct LazyInner {
    source: McpToolSource,
    server: String,
    cache: Option<ToolListCache>,
    registry: LiveRegistry,
    /// Held while starting, so concurrent first calls start one process.
    starting: tokio::sync::Mutex<()>,
    current: Mutex<Option<McpConnection>>,
    /// Calls in flight.
    busy: AtomicUsize,
    /// When the last call ended (or the server started).
    last_used: Mutex<Instant>,
    starts: AtomicU64,
    /// The local names of its tools now in the registry.
    names: Mutex<Vec<String>>,
}

impl std::fmt::Debug for LazyServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyServer")
            .field("server", &self.inner.server)
            .field("running", &self.is_running())
            .field("starts", &self.starts())
            .finish_non_exhaustive()
    }
}

impl LazyServer {
    /// A handle for `source` (named `name` when it has no name of its own),
    /// whose tools go into `registry` and whose lists go into `cache`.
    pub(crate) fn new(
        source: McpToolSource,
        name: &str,
        registry: &LiveRegistry,
        cache: Option<&ToolListCache>,
    ) -> Self {
        Self {
            inner: Arc::new(LazyInner {
                server: sanitize_server(source.name().unwrap_or(name)),
                source,
                cache: cache.cloned(),
                registry: registry.clone(),
                starting: tokio::sync::Mutex::new(()),
                current: Mutex::new(None),
                busy: AtomicUsize::new(0),
                last_used: Mutex::new(Instant::now()),
                starts: AtomicU64::new(0),
                names: Mutex::new(Vec::new()),
            }),
        }
    }

    /// The cached list when fresh.
    pub(crate) fn cached_list(&self) -> Option<Vec<McpTool>> {
        self.inner.cache.as_ref()?.load(&self.inner.source)
    }

    /// Starts the server and fetches (and caches) its list.
    ///
    /// # Errors
    /// As [`McpToolSource::connect`] and [`McpConnection::remote_tools`].
    pub(crate) async fn start_and_list(self) -> Result<Vec<McpTool>, Error> {
        let conn = self.connection().await?;
        let list = conn.remote_tools().await?;
        if let Some(cache) = &self.inner.cache
            && let Err(e) = cache.store(&self.inner.source, &list)
        {
            tracing::warn!("{e}");
        }
        Ok(list)
    }

    /// The `<server>` prefix of its tools' local names.
    pub fn server_name(&self) -> &str {
        &self.inner.server
    }

    /// Whether the server runs now.
    pub fn is_running(&self) -> bool {
        self.current().is_some_and(|c| !c.is_closed())
    }

    /// How many times the server was started so far.
    pub fn starts(&self) -> u64 {
        self.inner.starts.load(Ordering::Relaxed)
    }

    /// Stops the server if it runs (its tools stay; the next call starts it again).
    pub fn stop(&self) {
        if let Some(conn) = self.inner.lock_current().take() {
            conn.close();
        }
    }

    fn current(&self) -> Option<McpConnection> {
        self.inner.lock_current().clone()
    }

    /// The running connection, starting the server when it does not run.
    ///
    /// # Errors
    /// As [`McpToolSource::connect`].
    pub async fn connection(&self) -> Result<McpConnection, Error> {
        let running = |this: &Self| match this.current() {
            // A connection this program stops is taken out first: one
            // still here but closed died on its own (see `watch_exit`).
            Some(conn) if conn.is_closed() => Err(Error::new(
                ErrorKind::ConnectionClosed,
                format!(
                    "connection closed: MCP server `{}` ({}) is gone",
                    this.inner.server,
                    this.inner.source.describe()
                ),
            )),
            other => Ok(other),
        };
        if let Some(conn) = running(self)? {
            return Ok(conn);
        }
        let _starting = self.inner.starting.lock().await;
        if let Some(conn) = running(self)? {
            return Ok(conn);
        }
        let conn = self.inner.source.clone().connect().await?;
        self.adopt(conn.clone()).await;
        Ok(conn)
    }

    /// Makes `conn` the running connection: counts the start, and watches
    /// it for list changes and idleness.
    async fn adopt(&self, conn: McpConnection) {
        self.inner.starts.fetch_add(1, Ordering::Relaxed);
        *self
            .inner
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        *self.inner.lock_current() = Some(conn.clone());
        conn.subscribe_list_changes().await;
        let weak = Arc::downgrade(&self.inner);
        tokio::spawn(watch_lists(weak.clone(), conn.clone()));
        tokio::spawn(watch_exit(weak.clone(), conn.clone()));
        let idle = self.inner.source.idle_timeout();
        if !idle.is_zero() {
            tokio::spawn(watch_idle(weak, conn, idle));
        }
    }

    /// Calls remote tool `wire` (its name on the server), starting the
    /// server first when needed.
    async fn call(&self, wire: &str, args: Map<String, Value>, ctx: &ToolContext) -> ToolResult {
        let _busy = Busy::enter(&self.inner);
        match self.connection().await {
            Ok(conn) => conn.call(wire, args, ctx).await,
            Err(e) => ToolResult::error(ToolErrorKind::Failed, e.message().to_owned())
                .with_metadata(meta::MCP_ERROR, e.kind().as_str()),
        }
    }

    /// Replaces its tools in the registry by local tools for `remote`
    /// (a name taken by someone else's tool is left out, with a warning).
    ///
    /// # Errors
    /// [`ErrorKind::Registry`] when `strict` and a name is taken (nothing is
    /// added then).
    pub(crate) fn install(&self, remote: &[McpTool], strict: bool) -> Result<Vec<String>, Error> {
        let mut names = self
            .inner
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let previous = names.clone();
        let tools: Vec<Tool> = remote
            .iter()
            .filter_map(|t| match self.lazy_tool(t) {
                Ok(tool) => Some(tool),
                Err(e) => {
                    tracing::warn!("{e}");
                    None
                }
            })
            .collect();
        let added = self.inner.registry.update(|r| {
            for name in &previous {
                r.remove(name);
            }
            let taken: Vec<&str> = tools
                .iter()
                .map(Tool::name)
                .filter(|n| r.contains(n))
                .collect();
            if strict && !taken.is_empty() {
                return Err(Error::new(
                    ErrorKind::Registry,
                    format!(
                        "imported MCP tool names already taken: {}",
                        taken.join(", ")
                    ),
                ));
            }
            let mut added = Vec::new();
            for tool in tools {
                if r.contains(tool.name()) {
                    tracing::warn!(
                        "MCP server `{}`: tool `{}` left out, the name is taken",
                        self.inner.server,
                        tool.name()
                    );
                    continue;
                }
                added.push(tool.name().to_owned());
                let _ = r.register_with(tool, OnConflict::Skip);
            }
            Ok(added)
        })?;
        names.clone_from(&added);
        Ok(added)
    }

    /// A remote tool as a local tool whose call goes through this handle.
    fn lazy_tool(&self, remote: &McpTool) -> Result<Tool, Error> {
        // The caller's or the registry's timeout bounds the call, the
        // server's start included (`cancel.rs`).
        let (spec, hints) = remote_spec(&self.inner.server, remote);
        // The tool holds the handle (which holds the registry): the handle
        // lives as long as one of its tools, like an eager connection.
        let handle = self.clone();
        let wire = remote.name.to_string();
        Tool::new(spec, move |args: Map<String, Value>, ctx: ToolContext| {
            let handle = handle.clone();
            let wire = wire.clone();
            let hints = hints.clone();
            async move {
                let mut result = handle.call(&wire, args, &ctx).await;
                with_hints(&mut result, hints);
                result
            }
        })
        // The server checks the arguments against its whole schema.
        .map(Tool::without_schema_check)
        .map_err(|e| {
            Error::new(
                ErrorKind::Registry,
                format!("MCP server `{}`: {e}", self.inner.server),
            )
        })
    }
}

impl LazyInner {
    fn lock_current(&self) -> std::sync::MutexGuard<'_, Option<McpConnection>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A call in flight: counted while alive, and its end is the last use.
struct Busy(Arc<LazyInner>);

impl Busy {
    fn enter(inner: &Arc<LazyInner>) -> Self {
        inner.busy.fetch_add(1, Ordering::SeqCst);
        Self(Arc::clone(inner))
    }
}

impl Drop for Busy {
    fn drop(&mut self) {
        *self
            .0
            .last_used
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Instant::now();
        self.0.busy.fetch_sub(1, Ordering::SeqCst);
    }
}

/// While `conn` runs: on each list change, fetch the list, cache it and
/// put it in the registry.
async fn watch_lists(weak: Weak<LazyInner>, conn: McpConnection) {
    loop {
        tokio::select! {
            () = conn.list_changed() => {}
            () = conn.closed() => return,
        }
        let Some(inner) = weak.upgrade() else { return };
        match conn.remote_tools().await {
            Ok(list) => {
                if let Some(cache) = &inner.cache
                    && let Err(e) = cache.store(&inner.source, &list)
                {
                    tracing::warn!("{e}");
                }
                let _ = LazyServer { inner }.install(&list, false);
            }
            Err(e) => tracing::warn!("re-listing the tools of MCP server `{}`: {e}", inner.server),
        }
    }
}

/// When `conn` ends without this program stopping it (the server exited
/// or closed its streams), its tools are removed and the server is recorded
/// as unavailable, as for an eager import: a crashing server is not
/// restarted call after call. A server stopped for idleness or by
/// [`LazyServer::stop`] keeps its tools and starts again on the next call.
async fn watch_exit(weak: Weak<LazyInner>, conn: McpConnection) {
    conn.closed().await;
    let Some(inner) = weak.upgrade() else { return };
    // The closed connection stays current: a call meanwhile, or later
    // through an older snapshot of the registry, is told the server is gone
    // (`connection`), where an empty slot would start the server again.
    if !inner
        .lock_current()
        .as_ref()
        .is_some_and(|c| c.same_as(&conn))
    {
        return;
    }
    let names = std::mem::take(&mut *inner.names.lock().unwrap_or_else(PoisonError::into_inner));
    // The reason first, then the removal: whoever sees the tools gone also
    // finds why (a caller of a removed tool is told the server exited, never
    // "unknown tool").
    inner.registry.mark_unavailable(
        &inner.server,
        &format!(
            "MCP server `{}` ({}): the server exited or closed its connection; its {} tools are removed",
            inner.server,
            inner.source.describe(),
            names.len()
        ),
    );
    let _ = inner.registry.update(|r| {
        for name in &names {
            r.remove(name);
        }
        Ok::<_, std::convert::Infallible>(())
    });
    // The closed connection stays in the slot for good: a registry
    // snapshot taken before the removal (`tool batch` holds one for its
    // whole run) still has the tools, and a call through it must be told
    // the server is gone, not start it again. Only `stop` empties the slot.
}

/// Stops `conn` once no call was in flight for `idle`.
async fn watch_idle(weak: Weak<LazyInner>, conn: McpConnection, idle: Duration) {
    loop {
        let wait = {
            let Some(inner) = weak.upgrade() else { return };
            if inner.busy.load(Ordering::SeqCst) > 0 {
                idle
            } else {
                let since = inner
                    .last_used
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .elapsed();
                idle.saturating_sub(since)
            }
        };
        if wait.is_zero() {
            if let Some(inner) = weak.upgrade() {
                let mut current = inner.lock_current();
                // A call counts itself busy before it reads `current`
                // (under this lock), so checked again here none can be
                // handed the connection being stopped.
                if inner.busy.load(Ordering::SeqCst) > 0 {
                    continue;
                }
                if current.as_ref().is_some_and(|c| c.same_as(&conn)) {
                    *current = None;
                }
            }
            tracing::debug!(
                "stopping MCP server `{}`: idle for {idle:?}",
                conn.server_name()
            );
            conn.close();
            return;
        }
        tokio::select! {
            () = tokio::time::sleep(wait) => {}
            () = conn.closed() => return,
        }
    }
}
