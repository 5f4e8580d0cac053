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

use tool_core::{ErrorKind, ToolContext, ToolResult};

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
}

impl FileLedger {
    /// An empty ledger: no file has been read.
    pub fn new() -> Self {
        Self::default()
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

    /// The stamp of the last read of `path`, if any.
    pub fn get(&self, path: &Path) -> Option<Stamp> {
        self.stamps().get(path).copied()
    }

    /// Forgets `path` (e.g. after deleting it).
    pub fn forget(&self, path: &Path) {
        self.stamps().remove(path);
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

impl LedgerError {
    /// The error as a tool result (kind `failed`).
    pub fn to_result(&self) -> ToolResult {
        ToolResult::error(ErrorKind::Failed, self.to_string())
    }
}

/// The ledger of the context, or the `missing_context` error result a write
/// tool returns when the host did not set one.
///
/// # Errors
/// A `missing_context` result naming what to add.
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's final result; it is returned at once"
)]
pub fn ledger_of(ctx: &ToolContext) -> Result<tool_core::State<FileLedger>, ToolResult> {
    ctx.state::<FileLedger>().ok_or_else(|| {
        ToolResult::error(
            ErrorKind::MissingContext,
            "The file tools need a read-before-write ledger: the host must add one with \
             `ToolContext::with_state(FileLedger::new())` (or build the context with \
             `tool_builtins::context(root)`).",
        )
    })
}

/// `2024-05-01T12:34:56.789Z` for a time (UTC, milliseconds).
pub(crate) fn iso8601(t: SystemTime) -> String {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = d.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    let (y, m, day) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        d.subsec_millis()
    )
}

/// Proleptic Gregorian date of a day count since 1970-01-01 (the well-known
/// era-based conversion: 400-year eras of 146 097 days, years starting in March).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn touch(path: &Path, secs_ahead: u64) {
        let t = SystemTime::now() + Duration::from_secs(secs_ahead);
        let f = std::fs::File::options().write(true).open(path).unwrap();
        f.set_modified(t).unwrap();
    }

    #[test]
    fn unread_files_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "x").unwrap();
        let e = FileLedger::new().check(&p).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "You must read file {} before overwriting it. Use read_file first.",
                p.display()
            )
        );
    }

    #[test]
    fn size_change_is_a_modification() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "x").unwrap();
        let l = FileLedger::new();
        l.record_bytes(&p, b"x").unwrap();
        std::fs::write(&p, "xy").unwrap();
        touch(&p, 5);
        let e = l.check(&p).unwrap_err().to_string();
        assert!(
            e.contains("has been modified since it was last read"),
            "{e}"
        );
        assert!(e.contains("read (or wrote) at 20"), "{e}");
    }

    #[test]
    fn same_size_and_mtime_with_other_content_is_modified() {
        // Two writes inside one timestamp tick keep mtime and size: only the hash tells.
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "line 1\nline 2\n").unwrap();
        let l = FileLedger::new();
        l.record_bytes(&p, b"line 1\nline 2\n").unwrap();
        let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
        std::fs::write(&p, "line 1\nLINE 2\n").unwrap();
        let f = std::fs::File::options().write(true).open(&p).unwrap();
        f.set_modified(mtime).unwrap();
        assert!(matches!(l.check(&p), Err(LedgerError::Modified { .. })));
        assert!(
            l.check_content(&p, ContentHasher::hash(b"line 1\nline 2\n"))
                .is_ok()
        );
        for other in [&b""[..], b"line 1\n", b"line 1\nline 2\n\n"] {
            assert!(l.check_content(&p, ContentHasher::hash(other)).is_err());
        }
    }

    #[test]
    fn mtime_only_change_with_same_content_passes() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        std::fs::write(&p, "abc").unwrap();
        let l = FileLedger::new();
        l.record_bytes(&p, b"abc").unwrap();
        touch(&p, 5);
        assert!(l.check(&p).is_ok());
        // Same size, different content, new mtime: modified.
        std::fs::write(&p, "abd").unwrap();
        touch(&p, 10);
        assert!(l.check(&p).is_err());
    }

    #[test]
    fn hashing_is_chunking_independent() {
        let mut h = ContentHasher::new();
        h.update(b"hel");
        h.update(b"lo");
        assert_eq!(h.finish(), ContentHasher::hash(b"hello"));
    }

    #[test]
    fn dates_format_as_iso8601() {
        assert_eq!(iso8601(UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let t = UNIX_EPOCH + Duration::from_millis(1_709_251_200_123); // 2024-03-01
        assert_eq!(iso8601(t), "2024-03-01T00:00:00.123Z");
    }

    #[tokio::test]
    async fn locks_serialise_per_file() {
        let l = Arc::new(FileLedger::new());
        let p = PathBuf::from("/x/y");
        let g = l.lock(&p).await;
        let l2 = Arc::clone(&l);
        let p2 = p.clone();
        let waiter = tokio::spawn(async move {
            let _g = l2.lock(&p2).await;
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!waiter.is_finished());
        // Another path is not blocked.
        let _other = l.lock(Path::new("/x/z")).await;
        drop(g);
        waiter.await.unwrap();
    }
}
