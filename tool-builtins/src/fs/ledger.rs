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
use std::time::SystemTime;

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
    /// The state file that processes sharing a trace id share, when persistent.
    file: Option<PathBuf>,
}

impl FileLedger {
    /// An empty ledger: no file has been read.
    pub fn new() -> Self {
        Self::default()
    }

    /// A ledger whose stamps also live in the state file `path`, so that
    /// separate processes of one session (`tool call --trace-id T` run
    /// again and again, or several `tool batch` with one trace id) share what
    /// was read. The file holds, per file, the content hash, size and time
    /// of the last read or write; it is created `0600` (its folder `0700`),
    /// locked with `flock` for every read-modify-write, and entries older
    /// than [`PERSISTED_FOR`] are dropped. A missing, unreadable or corrupt
    /// file counts as empty: the next write then asks for a read again,
    /// never the other way round. The hash is Rust's `SipHash-1-3` with fixed
    /// keys (`DefaultHasher::new`), recorded in the file as `hasher`; a file
    /// written by a build whose hasher differs is ignored.
    pub fn persistent(path: impl Into<PathBuf>) -> Self {
        Self {
            file: Some(path.into()),
            ..Self::default()
        }
    }

    /// The state file of a persistent ledger.
    pub fn state_file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    fn stamps(&self) -> MutexGuard<'_, HashMap<PathBuf, Stamp>> {
        // A panic while holding the lock leaves the map consistent (single inserts), so recover.
        self.stamps
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Records a read (or write) of `path`.
    pub fn record(&self, path: &Path, stamp: Stamp) {
        self.stamps().insert(path.to_path_buf(), stamp);
        if let Some(file) = &self.file {
            // Best effort: a state file that cannot be written only means
            // another process will ask for a read again.
            let _ = persisted::update(file, |map| {
                map.insert(path.to_path_buf(), stamp);
            });
        }
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
    /// ledger, the newest of this process's and the state file's).
    pub fn get(&self, path: &Path) -> Option<Stamp> {
        let own = self.stamps().get(path).copied();
        let shared = self
            .file
            .as_deref()
            .and_then(|f| persisted::load(f).ok())
            .and_then(|map| map.get(path).copied());
        match (own, shared) {
            (Some(a), Some(b)) => Some(if b.read_at > a.read_at { b } else { a }),
            (a, b) => a.or(b),
        }
    }

    /// Forgets `path` (e.g. after deleting it).
    pub fn forget(&self, path: &Path) {
        self.stamps().remove(path);
        if let Some(file) = &self.file {
            let _ = persisted::update(file, |map| {
                map.remove(path);
            });
        }
    }

    /// Checks that the existing file `path` may be written: it was read in
    /// this context and its content has not changed since (its bytes are
    /// hashed now and compared with the read's hash). For hosts; the tools
    /// check under their folder lock with [`FileLedger::check_content`].
    ///
    /// # Errors
    /// [`LedgerError::NotRead`], [`LedgerError::Modified`], or
    /// [`LedgerError::Io`] when the file cannot be read.
    pub fn check(&self, path: &Path) -> Result<(), LedgerError> {
        if self.get(path).is_none() {
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
    /// [`LedgerError::NotRead`] or [`LedgerError::Modified`].
    pub fn check_content(&self, path: &Path, current: u64) -> Result<(), LedgerError> {
        let Some(stamp) = self.get(path) else {
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

/// How long a persistent ledger remembers a read: one day.
pub const PERSISTED_FOR: std::time::Duration = std::time::Duration::from_secs(24 * 3600);

/// The state file of [`FileLedger::persistent`] ledgers.
mod persisted {
    use std::collections::HashMap;
    use std::io::{self, Read, Seek, Write};
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    use std::path::{Path, PathBuf};
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde_json::{Value, json};

    use super::{PERSISTED_FOR, Stamp};

    /// The hasher the stamps' hashes come from; a file naming another is ignored.
    const HASHER: &str = "std-siphash13-v1";

    /// Largest state file read (16 MiB): a bigger one is ignored as corrupt.
    const MAX_BYTES: u64 = 16 * 1024 * 1024;

    fn millis(t: SystemTime) -> u64 {
        u64::try_from(t.duration_since(UNIX_EPOCH).unwrap_or_default().as_millis()).unwrap_or(0)
    }

    fn time(ms: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_millis(ms)
    }

    fn parse(text: &str) -> HashMap<PathBuf, Stamp> {
        let Ok(v) = serde_json::from_str::<Value>(text) else {
            return HashMap::new();
        };
        if v["hasher"] != HASHER {
            return HashMap::new();
        }
        let now = SystemTime::now();
        let mut map = HashMap::new();
        for (path, e) in v["files"].as_object().into_iter().flatten() {
            let (Some(hash), Some(len), Some(read_at)) = (
                e["hash"]
                    .as_str()
                    .and_then(|h| u64::from_str_radix(h, 16).ok()),
                e["len"].as_u64(),
                e["read_at_ms"].as_u64().map(time),
            ) else {
                continue;
            };
            if now.duration_since(read_at).unwrap_or_default() > PERSISTED_FOR {
                continue;
            }
            let modified = e["modified_ms"].as_u64().map(time);
            map.insert(
                PathBuf::from(path),
                Stamp {
                    modified,
                    len,
                    hash,
                    read_at,
                },
            );
        }
        map
    }

    fn render(map: &HashMap<PathBuf, Stamp>) -> String {
        let files: serde_json::Map<String, Value> = map
            .iter()
            .map(|(p, s)| {
                (
                    p.to_string_lossy().into_owned(),
                    json!({
                        "hash": format!("{:016x}", s.hash),
                        "len": s.len,
                        "read_at_ms": millis(s.read_at),
                        "modified_ms": s.modified.map(millis),
                    }),
                )
            })
            .collect();
        json!({"version": 1, "hasher": HASHER, "files": files}).to_string()
    }

    fn open(file: &Path) -> io::Result<std::fs::File> {
        if let Some(dir) = file.parent() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)?;
        }
        std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(file)
    }

    fn read_all(f: &mut std::fs::File) -> io::Result<String> {
        let mut text = String::new();
        f.rewind()?;
        f.take(MAX_BYTES).read_to_string(&mut text)?;
        Ok(text)
    }

    /// The stamps in `file` (shared lock while reading).
    pub(super) fn load(file: &Path) -> io::Result<HashMap<PathBuf, Stamp>> {
        let mut f = open(file)?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockShared)?;
        Ok(parse(&read_all(&mut f).unwrap_or_default()))
    }

    /// Changes the stamps in `file` under an exclusive lock.
    pub(super) fn update(
        file: &Path,
        change: impl FnOnce(&mut HashMap<PathBuf, Stamp>),
    ) -> io::Result<()> {
        let mut f = open(file)?;
        rustix::fs::flock(&f, rustix::fs::FlockOperation::LockExclusive)?;
        let mut map = parse(&read_all(&mut f).unwrap_or_default());
        change(&mut map);
        let text = render(&map);
        f.set_len(0)?;
        f.rewind()?;
        f.write_all(text.as_bytes())?;
        f.sync_data()
    }
}

/// The state file of the persistent ledger of trace `trace_id`:
/// `$XDG_STATE_HOME/agent-tools/ledger/<trace folder name>.json` (else
/// `~/.local/state/...`), the name made safe as spill folders' are
/// ([`tool_core::truncate::trace_folder_name`]). `None` without a home.
pub fn state_file_for(trace_id: &str) -> Option<PathBuf> {
    let base = std::env::var_os("XDG_STATE_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| {
            std::env::var_os("HOME")
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
                .map(|h| h.join(".local/state"))
        })?;
    let name = tool_core::truncate::trace_folder_name(Some(trace_id));
    Some(base.join("agent-tools/ledger").join(format!("{name}.json")))
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
