//! [`StateStore`]: the one place per-trace and per-session state is kept
//! (cross-cutting decision §2): the file tools' read ledger today; task
//! lists, the job registry and MCP session data later, and a Redis/Valkey
//! backend for shared deployments beside the embedded [`FileStore`]
//! (`RedisStore`, feature `redis`: Redis 7 or Valkey, see `redis_store`).
//!
//! ```
//! use std::sync::Arc;
//! use tool_core::state::{FileStore, StateKey, StateStore};
//!
//! let dir = tempfile::tempdir()?;
//! let store: Arc<dyn StateStore> = Arc::new(FileStore::new(dir.path().join("state")));
//! let key = StateKey::new("ledger", "trace-1", "/work/project")?;
//! store.put(&key, "/work/project/a.txt", "v1")?;
//! assert_eq!(store.get(&key, "/work/project/a.txt")?.as_deref(), Some("v1"));
//! // Compare-and-set: replaces only what the caller last saw.
//! assert!(!store.compare_and_set(&key, "/work/project/a.txt", Some("v0"), Some("v2"))?);
//! assert!(store.compare_and_set(&key, "/work/project/a.txt", Some("v1"), Some("v2"))?);
//! // Another owner, or the same owner in another workspace, sees nothing.
//! let other = StateKey::new("ledger", "trace-2", "/work/project")?;
//! assert_eq!(store.get(&other, "/work/project/a.txt")?, None);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Model
//! A [`StateKey`] names one small map: its *space* (what kind of state:
//! `ledger`, later `tasks`, `jobs`), its *owner* (the trace id, or MCP
//! session, the state belongs to) and its *workspace* (the canonical root
//! folder the owner works in). Every key carries owner and workspace, so
//! one trace never sees another's state, and a trace id reused in another
//! project starts empty. Inside a map, *fields* (a file path, a task id)
//! hold text *values* (callers serialise their own records, usually JSON).
//!
//! Operations are `get`, `put`, `delete`, `compare_and_set` (the atomic
//! step a registry needs across processes) and `entries`. Each value lives
//! for the store's [`lifetime`](StateStore::lifetime) after its last write
//! (default [`DEFAULT_LIFETIME`], one day); an expired value reads as
//! absent. That is the only forgetting: a store that is full refuses the
//! write with [`StateErrorKind::Full`] and keeps everything it had.
//!
//! # Sync, on purpose
//! The trait is synchronous. Its first users run on blocking threads
//! already (the file tools do their I/O in `spawn_blocking`), the file
//! backend's `flock` blocks, and a Redis backend can use a synchronous
//! client or `block_in_place`. Async callers wrap a call in
//! [`run_blocking`](crate::result::into_result::run_blocking) or `spawn_blocking`.
//!
//! # Where it lives
//! [`state_dir`]: `$XDG_STATE_HOME/agent-tools` (else
//! `~/.local/state/agent-tools`), the XDG Base Directory specification's
//! place for "state data that should persist between (application)
//! restarts". The file tools refuse that folder like the private runtime
//! folder (cross-cutting §6).

pub mod file;
#[cfg(feature = "redis")]
pub mod redis_store;

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use file::{FileStore, FileStoreLimits};
#[cfg(feature = "redis")]
pub use redis_store::{RedisStore, RedisStoreLimits};

/// How long a value lives after its last write unless the store is built
/// with another lifetime: one day (24 h).
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(24 * 3600);

/// Longest space name, in bytes (32).
pub const MAX_SPACE_BYTES: usize = 32;
/// Longest owner (trace or session id), in bytes (256).
pub const MAX_OWNER_BYTES: usize = 256;
/// Longest workspace path, in bytes (4096, Linux's `PATH_MAX`).
pub const MAX_WORKSPACE_BYTES: usize = 4096;

/// The per-user folder of persistent state: `$XDG_STATE_HOME/agent-tools`
/// when `XDG_STATE_HOME` is an absolute path, else
/// `$HOME/.local/state/agent-tools` (the XDG Base Directory
/// specification's default); `None` when neither variable gives an
/// absolute path. A path only: nothing is created or checked.
pub fn state_dir() -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let base =
        absolute("XDG_STATE_HOME").or_else(|| absolute("HOME").map(|h| h.join(".local/state")))?;
    Some(base.join("agent-tools"))
}

/// The process's one per-user [`FileStore`] at [`state_dir`] (shared, so
/// its parse cache serves every user in the process); `None` when there is
/// no state folder.
pub fn shared_store() -> Option<std::sync::Arc<dyn StateStore>> {
    static STORE: std::sync::OnceLock<Option<std::sync::Arc<dyn StateStore>>> =
        std::sync::OnceLock::new();
    STORE
        .get_or_init(|| {
            state_dir().map(|dir| {
                std::sync::Arc::new(FileStore::new(dir)) as std::sync::Arc<dyn StateStore>
            })
        })
        .clone()
}

/// The context's store (`ToolContext::with_state(Arc<dyn StateStore>)`),
/// else [`shared_store`]. Task lists and jobs use it.
pub fn store_of(ctx: &crate::tool::context::ToolContext) -> Option<std::sync::Arc<dyn StateStore>> {
    match ctx.state::<std::sync::Arc<dyn StateStore>>() {
        Some(store) => Some((*store).clone()),
        None => shared_store(),
    }
}

/// The name of one map of state: space, owner and workspace.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StateKey {
    space: String,
    owner: String,
    workspace: PathBuf,
}

impl StateKey {
    /// The key of `space`'s state (`ledger`, `tasks`, ...: 1 to
    /// [`MAX_SPACE_BYTES`] of ASCII letters, digits, `-` and `_`) for
    /// `owner` (a trace or session id: 1 to [`MAX_OWNER_BYTES`] bytes, any
    /// text) in `workspace` (an absolute path of at most
    /// [`MAX_WORKSPACE_BYTES`] bytes, canonical as the caller has it).
    ///
    /// # Errors
    /// [`StateErrorKind::Invalid`] naming the part that breaks its rule.
    pub fn new(
        space: impl Into<String>,
        owner: impl Into<String>,
        workspace: impl AsRef<Path>,
    ) -> Result<Self, StateError> {
        let (space, owner) = (space.into(), owner.into());
        let workspace = workspace.as_ref().to_path_buf();
        if space.is_empty()
            || space.len() > MAX_SPACE_BYTES
            || !space
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(StateError::invalid(format!(
                "a state space is 1 to {MAX_SPACE_BYTES} ASCII letters, digits, `-` or `_`; \
                 this one is {} bytes with other characters or none",
                space.len()
            )));
        }
        if owner.is_empty() || owner.len() > MAX_OWNER_BYTES {
            return Err(StateError::invalid(format!(
                "a state owner (trace or session id) is 1 to {MAX_OWNER_BYTES} bytes; this one \
                 is {} bytes",
                owner.len()
            )));
        }
        if !workspace.is_absolute() || workspace.as_os_str().len() > MAX_WORKSPACE_BYTES {
            return Err(StateError::invalid(format!(
                "a state key's workspace is an absolute path of at most {MAX_WORKSPACE_BYTES} \
                 bytes; this one is {} bytes{}",
                workspace.as_os_str().len(),
                if workspace.is_absolute() {
                    ""
                } else {
                    " and relative"
                }
            )));
        }
        Ok(Self {
            space,
            owner,
            workspace,
        })
    }

    /// The space (`ledger`, ...).
    pub fn space(&self) -> &str {
        &self.space
    }

    /// The owner: the trace or session id.
    pub fn owner(&self) -> &str {
        &self.owner
    }

    /// The workspace root.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }
}

/// Per-trace and per-session state: small maps of text values named by
/// [`StateKey`]s (see the [module docs](self) for the model, lifetime and
/// why the trait is synchronous).
///
/// Implementations are shared across threads (`Send + Sync`) and, for
/// persistent backends, across processes: every operation is atomic with
/// respect to every other on the same key, in any process.
pub trait StateStore: Send + Sync + fmt::Debug {
    /// The value of `field` in `key`'s map; `None` when absent or expired.
    ///
    /// # Errors
    /// The backend's error ([`StateErrorKind::Io`], [`StateErrorKind::Corrupt`],
    /// [`StateErrorKind::Mismatch`]).
    fn get(&self, key: &StateKey, field: &str) -> Result<Option<String>, StateError>;

    /// Sets `field` to `value` (its lifetime starts again).
    ///
    /// # Errors
    /// As [`get`](Self::get), and [`StateErrorKind::Full`] /
    /// [`StateErrorKind::Invalid`] when a bound would be crossed: nothing is
    /// written then.
    fn put(&self, key: &StateKey, field: &str, value: &str) -> Result<(), StateError>;

    /// Removes `field` (no error when absent).
    ///
    /// # Errors
    /// As [`put`](Self::put).
    fn delete(&self, key: &StateKey, field: &str) -> Result<(), StateError>;

    /// Sets `field` to `new` (`None` removes it) only when it now holds
    /// `expected` (`None`: absent or expired); `Ok(false)` when it held
    /// something else and nothing was changed.
    ///
    /// # Errors
    /// As [`put`](Self::put).
    fn compare_and_set(
        &self,
        key: &StateKey,
        field: &str,
        expected: Option<&str>,
        new: Option<&str>,
    ) -> Result<bool, StateError>;

    /// Every live field and value of `key`'s map, in field order.
    ///
    /// # Errors
    /// As [`get`](Self::get).
    fn entries(&self, key: &StateKey) -> Result<Vec<(String, String)>, StateError>;

    /// How long a value lives after its last write.
    fn lifetime(&self) -> Duration;

    /// Whether the backend can serve calls now, for a start check and a
    /// readiness check such as `tool serve`'s `GET /health`: a server
    /// backend writes and reads one short-lived value of its own under its
    /// prefix with its credentials (`RedisStore::ping`), so a client the
    /// server lets connect but not use the prefix fails here. The default
    /// (the embedded file store) has nothing to ask and answers `Ok`.
    ///
    /// # Errors
    /// [`StateErrorKind::Io`] when the backend cannot be reached or refuses
    /// this client; [`StateErrorKind::Corrupt`] when it does not keep what
    /// was written.
    fn ping(&self) -> Result<(), StateError> {
        Ok(())
    }

    /// The store's clock, in milliseconds since the Unix epoch: a server
    /// backend's (Redis `TIME`), so that the machines sharing a store
    /// compare times on one clock (how long ago a host's job mirror was
    /// written, [`crate::jobs`]); this machine's for the embedded file
    /// store (the default).
    ///
    /// # Errors
    /// [`StateErrorKind::Io`] when the backend cannot be reached.
    fn now_ms(&self) -> Result<u64, StateError> {
        Ok(u64::try_from(
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_millis(),
        )
        .unwrap_or(u64::MAX))
    }
}

/// What kind of failure a [`StateError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum StateErrorKind {
    /// A bound would be crossed (entries, bytes): the write was refused and
    /// nothing was forgotten to make room.
    Full,
    /// A key, field or value breaks a rule (length, characters).
    Invalid,
    /// The stored state belongs to another owner or workspace, or to
    /// another user, or is not a private file: refused, not read.
    Mismatch,
    /// The stored state cannot be parsed.
    Corrupt,
    /// The backend could not be reached (file system, network).
    Io,
}

/// A failed [`StateStore`] operation: its [`kind`](Self::kind) and a
/// message that says what to do.
#[derive(Debug)]
pub struct StateError {
    kind: StateErrorKind,
    message: String,
    source: Option<std::io::Error>,
}

impl StateError {
    /// An error of `kind` with `message` (one or two sentences, the fix included).
    pub fn new(kind: StateErrorKind, message: impl Into<String>) -> Self {
        Self {
            kind,
            message: message.into(),
            source: None,
        }
    }

    fn invalid(message: String) -> Self {
        Self::new(StateErrorKind::Invalid, message)
    }

    fn io(what: &str, path: &Path, source: std::io::Error) -> Self {
        Self {
            kind: StateErrorKind::Io,
            message: format!("cannot {what} the state file {}: {source}", path.display()),
            source: Some(source),
        }
    }

    /// The kind.
    pub fn kind(&self) -> StateErrorKind {
        self.kind
    }
}

impl fmt::Display for StateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for StateError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source
            .as_ref()
            .map(|e| e as &(dyn std::error::Error + 'static))
    }
}
