//! [`FileLedger`]: the read-before-write rule and per-file locks of one context.
//!
//! A model may overwrite or edit an existing file only after reading it in the
//! same context, and only while the file is as it was read: a file changed on
//! disk since (another program, a person) is refused until read again. That
//! keeps a model from writing over work it has not seen. A successful write
//! counts as a fresh read.
//!
//! "Changed" means a different content hash: an editor that rewrites a file
//! unchanged only moves its mtime, and that is not a change, while two writes
//! within the filesystem's timestamp granularity can keep both mtime and size,
//! so neither is trusted. The tools compare hashes under a folder lock (see
//! the write path in `fs::target`), so the check and the replace are one step
//! across threads and processes: of two writers that read the same version,
//! the second is refused with the "modified since it was last read" error.
//!
//! The ledger also hands out one async lock per file, so two edits of the same
//! file in one context queue without holding blocking threads.

use std::collections::HashMap;
use std::fmt;
use std::fs::Metadata;
use std::hash::Hasher;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{SystemTime, UNIX_EPOCH};

use tool_core::state::{FileStore, StateKey, StateStore};
use tool_core::{ErrorKind, ToolContext, ToolError};

/// What the ledger remembers of one read (or write) of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    /// The file's modification time at the read, when the platform reports one.
    pub modified: Option<SystemTime>,
    /// The file's size in bytes at the read.
    pub len: u64,
    /// Hash of the file's bytes at the read ([`ContentHasher`]).
    pub hash: u64,
    /// When the read happened.
    pub read_at: SystemTime,
}

impl Stamp {
    /// A stamp from the file's metadata and the hash of the bytes read.
    pub fn new(meta: &Metadata, hash: u64) -> Self {
        Self {
            modified: meta.modified().ok(),
            len: meta.len(),
            hash,
            read_at: SystemTime::now(),
        }
    }
}

/// Streaming hash of file content, for [`Stamp::hash`]. Feeding the bytes in
/// any chunking gives the same result.
#[derive(Debug, Default)]
pub struct ContentHasher(std::collections::hash_map::DefaultHasher);

impl ContentHasher {
    /// A fresh hasher.
    pub fn new() -> Self {
        Self::default()
    }

    /// Feeds the next bytes.
    pub fn update(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
    }

    /// The hash of everything fed.
    pub fn finish(&self) -> u64 {
        self.0.finish()
    }

    /// The hash of `bytes` in one go.
    pub fn hash(bytes: &[u8]) -> u64 {
        let mut h = Self::new();
        h.update(bytes);
        h.finish()
    }
}

/// The guard of a per-file lock (see [`FileLedger::lock`]); the lock is held until it drops.
pub type FileLock = tokio::sync::OwnedMutexGuard<()>;

/// The read-before-write ledger of one context, with per-file locks.
///
/// Store one per agent session with [`ToolContext::with_state`]; clones of the
/// context share it. Paths are the canonical paths from
/// [`Workspace::resolve`](crate::Workspace::resolve).
///
/// ```
/// use tool_builtins::FileLedger;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("a.txt");
/// std::fs::write(&path, "hello")?;
/// let ledger = FileLedger::new();
/// assert!(ledger.check(&path).unwrap_err().to_string().contains("You must read file"));
/// ledger.record_bytes(&path, b"hello")?;
/// assert!(ledger.check(&path).is_ok());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Default)]
pub struct FileLedger {
    stamps: Mutex<HashMap<PathBuf, Stamp>>,
    locks: Mutex<HashMap<PathBuf, Weak<tokio::sync::Mutex<()>>>>,
    /// The state that processes sharing a trace id share, when persistent.
    shared: Option<Shared>,
}

/// Where a persistent ledger keeps its stamps.
#[derive(Debug, Clone)]
struct Shared {
    store: Arc<dyn StateStore>,
    key: StateKey,
}

impl FileLedger {
    /// An empty ledger: no file has been read.
    pub fn new() -> Self {
        Self::default()
    }

    /// A ledger whose stamps also live in `store` under `key` (space
    /// [`STATE_SPACE`], owner the trace id, workspace the canonical root),
    /// so that separate processes of one session (`tool call --trace-id T`
    /// run again and again, or several `tool batch` with one trace id)
    /// share what was read, and nothing else does: another trace, or the
    /// same trace id in another workspace, starts empty.
    ///
    /// Each record is one field of the key's map: the file's canonical path
    /// maps to its content hash, size and the time of the last read or
    /// write (a write appends one entry to the store's log; nothing is
    /// rewritten). Entries expire after the store's lifetime (one day by
    /// default). The hash is Rust's `SipHash-1-3` with fixed keys
    /// (`DefaultHasher::new`), recorded in each entry as `hasher`; an entry
    /// of a build whose hasher differs is ignored. An entry that cannot be
    /// read (a store error) counts as absent, so the next write asks for a
    /// read again, never the other way round; a read that cannot be
    /// recorded fails with the store's error ([`FileLedger::try_record`]).
    pub fn in_store(store: Arc<dyn StateStore>, key: StateKey) -> Self {
        Self {
            shared: Some(Shared { store, key }),
            ..Self::default()
        }
    }

    /// [`FileLedger::in_store`] in the per-user [`FileStore`] at
    /// [`tool_core::state::state_dir`] for trace `trace_id` in `workspace`
    /// (the canonical root). One `FileStore` per process is shared by every
    /// ledger made here.
    ///
    /// # Errors
    /// [`LedgerError::Store`] when there is no home folder to keep state in,
    /// or the trace id or workspace breaks [`StateKey::new`]'s rules.
    pub fn for_trace(trace_id: &str, workspace: &Path) -> Result<Self, LedgerError> {
        let store = shared_store().ok_or_else(|| LedgerError::Store {
            message: "no folder for persistent state: set XDG_STATE_HOME or HOME to an \
                      absolute path"
                .to_owned(),
        })?;
        let key =
            StateKey::new(STATE_SPACE, trace_id, workspace).map_err(|e| LedgerError::Store {
                message: e.to_string(),
            })?;
        Ok(Self::in_store(store, key))
    }

    /// A fresh, empty ledger that shares this one's store, under `owner`
    /// in place of this one's owner (an MCP session's own ledger: see
    /// [`crate::for_trace`]); an in-memory ledger gives an in-memory one.
    #[must_use]
    pub fn for_owner(&self, owner: &str) -> Self {
        match &self.shared {
            Some(shared) => StateKey::new(STATE_SPACE, owner, shared.key.workspace()).map_or_else(
                |_| Self::new(),
                |key| Self::in_store(shared.store.clone(), key),
            ),
            None => Self::new(),
        }
    }

    /// The key of a persistent ledger's state.
    pub fn state_key(&self) -> Option<&StateKey> {
        self.shared.as_ref().map(|s| &s.key)
    }

    fn stamps(&self) -> MutexGuard<'_, HashMap<PathBuf, Stamp>> {
        // A panic while holding the lock leaves the map consistent (single inserts), so recover.
        self.stamps
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a read (or write) of `path`: in this process always, in the
    /// shared store when persistent, best effort (a store error only means
    /// that another process asks for a read again; see [`FileLedger::try_record`]).
    pub fn record(&self, path: &Path, stamp: Stamp) {
        let _ = self.try_record(path, stamp);
    }

    /// Records a read (or write) of `path`, reporting a shared store that
    /// refused it (full, damaged, not this trace's): `read_file` fails
    /// with that error rather than answer with a read that a later process
    /// of the trace would not know of. This process keeps the stamp either way.
    ///
    /// # Errors
    /// [`LedgerError::Store`] with the store's message.
    pub fn try_record(&self, path: &Path, stamp: Stamp) -> Result<(), LedgerError> {
        self.stamps().insert(path.to_path_buf(), stamp);
        let Some(shared) = &self.shared else {
            return Ok(());
        };
        let field = path.to_string_lossy();
        shared
            .store
            .put(&shared.key, &field, &encode(&stamp))
            .map_err(|e| LedgerError::Store {
                message: format!(
                    "The read of {} could not be recorded for later calls of this session: {e}",
                    path.display()
                ),
            })
    }

    /// Records that `path` now holds `bytes` (stats the file for mtime and size).
    ///
    /// # Errors
    /// The error of reading the file's metadata.
    pub fn record_bytes(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let meta = std::fs::metadata(path)?;
        self.record(path, Stamp::new(&meta, ContentHasher::hash(bytes)));
        Ok(())
    }

    /// The stamp of the last read of `path`, if any (for a persistent
    /// ledger, the newest of this process's and the store's). A store that
    /// cannot be read (a Redis server that does not answer) gives none at
    /// all, this process's stamp included; [`FileLedger::try_get`] reports
    /// that error instead.
    pub fn get(&self, path: &Path) -> Option<Stamp> {
        self.try_get(path).ok().flatten()
    }

    /// The stamp of the last read of `path`, if any, as [`FileLedger::get`],
    /// reporting a shared store that cannot be read: the write tools refuse
    /// the call with that error (naming the store) rather than ask for a
    /// read that would fail the same way.
    ///
    /// # Errors
    /// [`LedgerError::Store`] naming the file, with the store's message.
    pub fn try_get(&self, path: &Path) -> Result<Option<Stamp>, LedgerError> {
        let own = self.stamps().get(path).copied();
        let shared = match &self.shared {
            None => None,
            Some(shared) => shared
                .store
                .get(&shared.key, &path.to_string_lossy())
                .map_err(|e| unchecked(path, &e))?
                .and_then(|v| decode(&v)),
        };
        Ok(match (own, shared) {
            // Compared at the store's precision (milliseconds): a stamp
            // recorded by another process in the same millisecond as ours is
            // the later write (every record is also written to the store).
            (Some(a), Some(b)) => Some(if millis(b.read_at) >= millis(a.read_at) {
                b
            } else {
                a
            }),
            (a, b) => a.or(b),
        })
    }

    /// Checks, before a file that does not exist yet is written, that the
    /// write can be recorded: for a persistent ledger the store answers
    /// (the path's entry is read); an in-memory ledger always can. Without
    /// it a new file would be written while the record that lets the next
    /// edit go through is lost (review 32 F2).
    ///
    /// # Errors
    /// [`LedgerError::Store`] naming the file, with the store's message.
    pub fn check_new(&self, path: &Path) -> Result<(), LedgerError> {
        match &self.shared {
            None => Ok(()),
            Some(shared) => shared
                .store
                .get(&shared.key, &path.to_string_lossy())
                .map(|_| ())
                .map_err(|e| unchecked(path, &e)),
        }
    }

    /// Forgets `path` (e.g. after deleting it).
    pub fn forget(&self, path: &Path) {
        self.stamps().remove(path);
        if let Some(shared) = &self.shared {
            let _ = shared.store.delete(&shared.key, &path.to_string_lossy());
        }
    }

    /// Checks that the existing file `path` may be written: it was read in
    /// this context and its content has not changed since (its bytes are
    /// hashed now and compared with the read's hash). For hosts; the tools
    /// check under their folder lock with [`FileLedger::check_content`].
    ///
    /// # Errors
    /// [`LedgerError::NotRead`], [`LedgerError::Modified`],
    /// [`LedgerError::Store`] when a persistent ledger's store cannot be
    /// read, or [`LedgerError::Io`] when the file cannot be read.
    pub fn check(&self, path: &Path) -> Result<(), LedgerError> {
        if self.try_get(path)?.is_none() {
            return Err(LedgerError::NotRead {
                path: path.to_path_buf(),
            });
        }
        let current = hash_file(path).map_err(|source| LedgerError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        self.check_content(path, current)
    }

    /// Checks that the file `path`, which now holds bytes hashing to
    /// `current` ([`ContentHasher`]), may be written: it was read (or
    /// written) in this context and its content is what was read then. This
    /// is the check the write path makes under its folder lock, on the bytes
    /// it just read; modification times play no part.
    ///
    /// # Errors
    /// [`LedgerError::NotRead`] or [`LedgerError::Modified`];
    /// [`LedgerError::Store`] when a persistent ledger's store cannot be
    /// read (nothing may be written then).
    pub fn check_content(&self, path: &Path, current: u64) -> Result<(), LedgerError> {
        let Some(stamp) = self.try_get(path)? else {
            return Err(LedgerError::NotRead {
                path: path.to_path_buf(),
            });
        };
        if stamp.hash == current {
            return Ok(());
        }
        Err(LedgerError::Modified {
            path: path.to_path_buf(),
            read_at: stamp.read_at,
            modified: None,
        })
    }

    /// Takes the lock of `path`, waiting while another call holds it.
    pub async fn lock(&self, path: &Path) -> FileLock {
        let mutex = {
            let mut locks = self
                .locks
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if locks.len() > 256 {
                locks.retain(|_, w| w.strong_count() > 0);
            }
            if let Some(m) = locks.get(path).and_then(Weak::upgrade) {
                m
            } else {
                let m = Arc::new(tokio::sync::Mutex::new(()));
                locks.insert(path.to_path_buf(), Arc::downgrade(&m));
                m
            }
        };
        mutex.lock_owned().await
    }

    /// Takes the locks of several paths in a fixed (sorted) order, so two
    /// calls locking overlapping sets cannot deadlock.
    pub async fn lock_many(&self, paths: &[PathBuf]) -> Vec<FileLock> {
        let mut sorted: Vec<&PathBuf> = paths.iter().collect();
        sorted.sort();
        sorted.dedup();
        let mut guards = Vec::with_capacity(sorted.len());
        for p in sorted {
            guards.push(self.lock(p).await);
        }
        guards
    }
}

/// Hashes a file's content in bounded memory.
///
/// # Errors
/// Any read error.
pub fn hash_file(path: &Path) -> io::Result<u64> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = ContentHasher::new();
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            return Ok(hasher.finish());
        }
        hasher.update(&buf[..n]);
    }
}

/// Why the ledger refused a write.
#[derive(Debug)]
#[non_exhaustive]
pub enum LedgerError {
    /// The file was never read in this context.
    NotRead {
        /// The file.
        path: PathBuf,
    },
    /// The file changed on disk after it was read.
    Modified {
        /// The file.
        path: PathBuf,
        /// When it was last read (or written) in this context.
        read_at: SystemTime,
        /// Its modification time now.
        modified: Option<SystemTime>,
    },
    /// The shared state store refused the record (full, damaged, another
    /// trace's) or cannot be reached; the message names the store and says
    /// what to do.
    Store {
        /// The store's message, with the file named.
        message: String,
    },
    /// The file could not be inspected.
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl fmt::Display for LedgerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotRead { path } => write!(
                f,
                "You must read file {} before overwriting it. Use read_file first.",
                path.display()
            ),
            Self::Modified { path, read_at, .. } => {
                write!(
                    f,
                    "File {} has been modified since it was last read: its content is no longer \
                     what this session read (or wrote) at {}. Another program or agent changed \
                     it; nothing was written.\n\n\
                     Read the file again with read_file before changing it.",
                    path.display(),
                    iso8601(*read_at)
                )
            }
            Self::Store { message } => f.write_str(message),
            Self::Io { path, source } => {
                write!(f, "Cannot inspect file {}: {source}", path.display())
            }
        }
    }
}

impl std::error::Error for LedgerError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The ledger of the context, or the `missing_context` error result a write
/// tool returns when the host did not set one.
///
/// # Errors
/// A `missing_context` result naming what to add.
pub fn ledger_of(ctx: &ToolContext) -> Result<tool_core::State<FileLedger>, ToolError> {
    ctx.state::<FileLedger>().ok_or_else(|| {
        ToolError::new(
            ErrorKind::MissingContext,
            "The file tools need a read-before-write ledger: the host must add one with \
             `ToolContext::with_state(FileLedger::new())` (or build the context with \
             `tool_builtins::context(root)`).",
        )
    })
}

/// How long a persistent ledger remembers a read: one day (the store's
/// [`DEFAULT_LIFETIME`](tool_core::state::DEFAULT_LIFETIME)).
pub const PERSISTED_FOR: std::time::Duration = tool_core::state::DEFAULT_LIFETIME;

/// The [`StateKey`] space of read ledgers: `ledger`.
pub const STATE_SPACE: &str = "ledger";

/// The hasher the stamps' hashes come from; an entry naming another is ignored.
const HASHER: &str = "std-siphash13-v1";

/// The process's one [`FileStore`] at [`tool_core::state::state_dir`]
/// (shared, so its parse cache serves every ledger of the process).
fn shared_store() -> Option<Arc<dyn StateStore>> {
    static STORE: std::sync::OnceLock<Option<Arc<dyn StateStore>>> = std::sync::OnceLock::new();
    STORE
        .get_or_init(|| {
            tool_core::state::state_dir()
                .map(|dir| Arc::new(FileStore::new(dir)) as Arc<dyn StateStore>)
        })
        .clone()
}

/// The refusal of a write whose ledger record cannot be read or kept.
fn unchecked(path: &Path, e: &tool_core::state::StateError) -> LedgerError {
    LedgerError::Store {
        message: format!(
            "Nothing was written to {}: this session's read-before-write records cannot be \
             checked or kept, because {e}",
            path.display()
        ),
    }
}

fn millis(t: SystemTime) -> u64 {
    u64::try_from(t.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(0)
}

fn encode(stamp: &Stamp) -> String {
    serde_json::json!({
        "hasher": HASHER,
        "hash": format!("{:016x}", stamp.hash),
        "len": stamp.len,
        "read_at_ms": millis(stamp.read_at),
        "modified_ms": stamp.modified.map(millis),
    })
    .to_string()
}

fn decode(text: &str) -> Option<Stamp> {
    let v: serde_json::Value = serde_json::from_str(text).ok()?;
    if v["hasher"] != HASHER {
        return None;
    }
    let time = |ms: u64| UNIX_EPOCH + std::time::Duration::from_millis(ms);
    Some(Stamp {
        hash: v["hash"]
            .as_str()
            .and_then(|h| u64::from_str_radix(h, 16).ok())?,
        len: v["len"].as_u64()?,
        read_at: v["read_at_ms"].as_u64().map(time)?,
        modified: v["modified_ms"].as_u64().map(time),
    })
}

/// `2024-05-01T12:34:56.789Z` for a time (RFC 3339, UTC, milliseconds;
/// `humantime`'s formatter).
pub(crate) fn iso8601(t: SystemTime) -> String {
    humantime::format_rfc3339_millis(t).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, UNIX_EPOCH};
    #[test]
    fn dates_format_as_iso8601() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_200_123); // 2024-03-01
        assert_eq!(iso8601(t), "2024-03-01T00:00:00.123Z");
    }
}
