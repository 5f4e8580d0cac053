//! Indexed search: a gram signature index of the workspace's text files that lets
//! `grep_content` read only the files that can hold a match, and
//! `glob_files` answer from its file list, with results byte-identical to
//! a scan.
//!
//! # How a search uses it
//! A long-running host (`tool serve`, an agent loop) builds a
//! [`ContentIndex`] and puts it in the context
//! (`ctx.with_state(index.clone())`). `grep_content` then turns its pattern
//! into a query of required grams (substrings of 3 and 7 bytes, see
//! `grams`); the index answers with the pieces of files that may hold
//! them, and those go through the same grep engine as a scan
//! ([`crate::search::grep`]): same order, line numbers, notes and caps.
//! The index keeps one *signature* per piece of a file (a piece ends at
//! the first line end past [`IndexConfig::piece_bytes`], 4 KiB): a Bloom
//! filter of 8192 bits into which each gram of the piece sets one bit,
//! stored transposed, one row per bit with one bit per piece (`sigs`). A
//! query ANDs the rows of its grams (and ORs alternatives): a bit set by
//! another gram only adds a candidate, never hides one. Of a large file
//! only the pieces that may hold every gram a match needs are searched,
//! numbered from each piece's first line, which the index records with the
//! piece; when the file's size or modification time is no longer the one
//! recorded, all of it is searched. A stored index is reused after a
//! restart only for files whose size, modification and status change
//! times (nanoseconds), device and inode are the ones recorded: `ctime`
//! cannot be set back from user space, so an edit that keeps the size and
//! restores the modification time (`cp -p`, `rsync -t`, `touch -r`) is
//! read again. A pattern that prunes nothing (`.`, `\w+`, one or two
//! characters) scans, as does every search the index cannot answer exactly
//! (while it builds, below its size threshold, a search folder that the
//! ignore files hide, a line cap under 64 KiB, a watcher that failed).
//! No result mentions the index; what it does goes to the host's log
//! (standard error), each kind of event once.
//!
//! # Never stale
//! The file list is made by the scan's own walker under the scan's rules
//! (`.gitignore`, hidden files in, `.git` out, symlinks only inside the
//! workspace). An inotify watcher is started before that walk; every change
//! it reports, and every path the host names through
//! [`ContentIndex::note_changed`], is applied before the next search
//! ([`ContentIndex::drain`], which first waits for the watcher's queue to
//! pass a sentinel so that a command that just wrote files is seen).
//! Changed files are read again and their old pieces retired; a change to
//! an ignore file (`.gitignore`, `.ignore`, `.rgignore`, anything in
//! `.git`) or an overflowed kernel queue re-walks the whole list. Files
//! whose grams cannot be trusted are always searched: reached through a
//! symbolic link or with several hard links (a change may be reported under
//! another name), larger than [`IndexConfig::max_file_bytes`], starting with
//! a byte-order mark (the grep engine transcodes UTF-16), or with a line
//! longer than 64 KiB (the engine's line cap notes must appear). Binary
//! files (a NUL byte anywhere: the engine skips them whole) are listed for
//! `glob_files` but never searched.
//!
//! On network or shared file systems (NFS, SMB, FUSE mounts, a workspace
//! several hosts write), inotify sees only this machine's changes: build no
//! index there (`IndexConfig::default().with_watch(false)` makes
//! [`ContentIndex::build`] refuse) and let `grep_content` scan.
//!
//! # Bounds
//! No index below [`IndexConfig::min_bytes`] of files (default 16 MiB: a
//! scan of that is a few milliseconds). On disk the index takes 1 KiB per
//! piece id, about 29 % of the text it covers (a file reserves one id per
//! 4 KiB of its size; `docs/benchmarks.md`), and is refused before it is
//! written past [`IndexConfig::max_disk_bytes`] (default 1 GiB); in memory
//! a serving process holds the file table, each row's count (32 KiB) and
//! each row's checksum (32 KiB per shard), and reads the rows a query needs with positioned reads (one per shard
//! of 64 Ki pieces: 8 KiB). A build reads the files of one shard at a time
//! on every thread, each hashing every gram of a piece's lines (taken as
//! one run, so the grams across its line ends are added too, bits no
//! query asks for) with one multiply-shift into the piece's signature and
//! turning the signatures of 64 pieces into row words with a 64 x 64 bit
//! transpose, with no sort and no table of grams; it holds the rows of the
//! shard being built (64 MiB, fresh pages the kernel zeroes as the
//! threads first touch them, then zeroed by the encoding that reads them)
//! and at most 64 MiB of the previous shard's rows, encoded as stored, which a writing thread
//! of its own writes (direct writes, which wait for the disk) while the
//! next shard is read; it writes the index without an fsync (a file
//! damaged by a crash fails its checksums and is rebuilt). Changes
//! since the build are held in memory up to [`IndexConfig::max_delta_bytes`]
//! (default 64 MiB); past that the index is rebuilt in the background (a
//! real build: every file read, the stored index not reused, the result
//! stored) and searches scan meanwhile; a restart whose changed files pass
//! the cap builds anew as well. A state folder inside the workspace gets
//! no index ([`ContentIndex::refusal`]): the index file and the watcher's
//! sentinels would be files of the workspace.
//!
//! # Crates
//! - `roaring` (sets of pieces in memory): compressed bitmaps whose
//!   containers adapt to dense and sparse sets: the rows of files changed
//!   since the build, the retired, binary and always-searched pieces, and
//!   a query's answer. The stored rows are plain bit arrays (a row is as
//!   dense as a Bloom filter's bits: a third to a half set), written by
//!   this module; the technique is the signature file / `BitFunnel` one.
//! - `regex-syntax` (query planning): the HIR of the very parser `grep-regex`
//!   uses, so the query is derived from what the engine will match.
//! - `inotify` (watching): the maintained binding `notify` itself uses on
//!   Linux, asked for changes only (`watch` says why not `notify`); it
//!   reports queue overflow and watch-limit errors.
//!
//! - `crc32fast` (checksums of the stored index): CRC-32 of the file table
//!   (checked on load) and of every row of every shard (checked each time
//!   the row is read); already in the lock file (through `flate2`),
//!   hardware-accelerated. A mismatch logs "corrupt index file ...;
//!   rebuilding" once and the index is built anew (`store`).
//!
//! Memory maps (`memmap2`) were not needed: positioned reads of the few
//! rows a query touches are as fast and need no `unsafe`.

mod grams;
mod sigs;
mod store;
mod watch;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::io::Read as _;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::SystemTime;

use ignore::{ParallelVisitor, ParallelVisitorBuilder, WalkState};
use roaring::RoaringBitmap;

use crate::fs::workspace::{HiddenAreas, Workspace};
use grams::Query;
use sigs::{Gram, Params, ShardRows, Signature, Transposer};
use store::Rows;
use watch::{Queue, Watcher};

/// Default smallest total size of the workspace's files worth an index: 16 MiB.
pub const DEFAULT_MIN_BYTES: u64 = 16 << 20;
/// Default largest index on disk: 1 GiB.
pub const DEFAULT_MAX_DISK_BYTES: u64 = 1 << 30;
/// Default most memory for files changed since the build: 64 MiB.
pub const DEFAULT_MAX_DELTA_BYTES: u64 = 64 << 20;
/// Default largest file whose grams are indexed: 1 GiB (larger ones are always searched; files are read in 256 KiB pieces, so the size costs no memory).
pub const DEFAULT_MAX_FILE_BYTES: u64 = 1 << 30;
/// Lines longer than this (in bytes) make a file always searched: 64 KiB.
/// A search whose line cap ([`crate::SearchConfig::max_line_bytes`]) is
/// below it scans.
pub const LONG_LINE_BYTES: usize = 64 << 10;
/// Default size of a file's pieces: 4 KiB (see [`IndexConfig::piece_bytes`]).
pub const DEFAULT_PIECE_BYTES: u64 = 4 << 10;
/// Most rows of one AND read: the 24 least set (the rest add little pruning).
const MAX_AND_ROWS: usize = 24;
/// Ignore files whose change re-walks the file list.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".rgignore"];

/// Settings of a [`ContentIndex`].
///
/// ```
/// use tool_builtins::search::index::IndexConfig;
///
/// let config = IndexConfig::default().with_min_bytes(0).with_watch(false);
/// assert_eq!(config.min_bytes, 0);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct IndexConfig {
    /// No index when the files total fewer bytes (a scan is as fast). Default [`DEFAULT_MIN_BYTES`].
    pub min_bytes: u64,
    /// Largest index on disk, in bytes; a bigger one is not kept and searches scan. Default [`DEFAULT_MAX_DISK_BYTES`].
    pub max_disk_bytes: u64,
    /// Most memory for the rows of files changed since the build, in bytes
    /// (estimated); past it the index is rebuilt. Default [`DEFAULT_MAX_DELTA_BYTES`].
    pub max_delta_bytes: u64,
    /// Largest file whose grams are indexed, in bytes. Default [`DEFAULT_MAX_FILE_BYTES`].
    pub max_file_bytes: u64,
    /// The folder of persistent state; `None` uses [`tool_core::state::state_dir`]. Default `None`.
    pub state_dir: Option<PathBuf>,
    /// Keep the index on disk and reuse it across restarts. Default `true`.
    pub persist: bool,
    /// Watch the workspace for outside changes. Without watching the index
    /// cannot see them, so [`ContentIndex::build`] gives an index only
    /// for a caller who says so with [`IndexConfig::with_trusted_writes`].
    /// Default `true`.
    pub watch: bool,
    /// Every change goes through [`ContentIndex::note_changed`] (tests, a
    /// host that owns the folder): serve from the index without a watcher. Default `false`.
    pub trusted_writes: bool,
    /// Threads that read files while building; 0 picks one per core (at most 12). Default 0.
    pub threads: usize,
    /// A file's text is indexed in pieces: a piece ends at the first line end
    /// at or past this many bytes (at least 1). Signatures are per piece, so a
    /// search reads only the pieces of a large file that hold every gram it
    /// needs, not the whole file. Smaller pieces prune more and make a
    /// larger index. Default [`DEFAULT_PIECE_BYTES`].
    pub piece_bytes: u64,
}

impl Default for IndexConfig {
    fn default() -> Self {
        Self {
            min_bytes: DEFAULT_MIN_BYTES,
            max_disk_bytes: DEFAULT_MAX_DISK_BYTES,
            max_delta_bytes: DEFAULT_MAX_DELTA_BYTES,
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            state_dir: None,
            persist: true,
            watch: true,
            trusted_writes: false,
            threads: 0,
            piece_bytes: DEFAULT_PIECE_BYTES,
        }
    }
}

impl IndexConfig {
    /// Sets the size threshold ([`IndexConfig::min_bytes`]).
    #[must_use]
    pub fn with_min_bytes(mut self, bytes: u64) -> Self {
        self.min_bytes = bytes;
        self
    }

    /// Sets the disk cap ([`IndexConfig::max_disk_bytes`]).
    #[must_use]
    pub fn with_max_disk_bytes(mut self, bytes: u64) -> Self {
        self.max_disk_bytes = bytes;
        self
    }

    /// Sets the memory cap of changes ([`IndexConfig::max_delta_bytes`]).
    #[must_use]
    pub fn with_max_delta_bytes(mut self, bytes: u64) -> Self {
        self.max_delta_bytes = bytes;
        self
    }

    /// Sets the state folder ([`IndexConfig::state_dir`]).
    #[must_use]
    pub fn with_state_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.state_dir = Some(dir.into());
        self
    }

    /// Turns persistence on or off ([`IndexConfig::persist`]).
    #[must_use]
    pub fn with_persist(mut self, persist: bool) -> Self {
        self.persist = persist;
        self
    }

    /// Turns watching on or off ([`IndexConfig::watch`]).
    #[must_use]
    pub fn with_watch(mut self, watch: bool) -> Self {
        self.watch = watch;
        self
    }

    /// Serves without a watcher, trusting [`ContentIndex::note_changed`]
    /// to hear of every change ([`IndexConfig::trusted_writes`]).
    #[must_use]
    pub fn with_trusted_writes(mut self, trusted: bool) -> Self {
        self.trusted_writes = trusted;
        self
    }

    /// Sets the build threads ([`IndexConfig::threads`]).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Sets the piece size ([`IndexConfig::piece_bytes`]; 0 is taken as 1).
    #[must_use]
    pub fn with_piece_bytes(mut self, bytes: u64) -> Self {
        self.piece_bytes = bytes.max(1);
        self
    }

    /// Posting ids given to a file of `size` bytes: one per started piece, at least one.
    fn slots(&self, size: u64) -> u32 {
        u32::try_from(size.div_ceil(self.piece_bytes.max(1)).max(1)).unwrap_or(u32::MAX)
    }

    fn thread_count(&self) -> usize {
        if self.threads > 0 {
            return self.threads;
        }
        std::thread::available_parallelism().map_or(1, |n| n.get().min(12))
    }
}

/// What an index is doing, for `tool index status` and the log.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum IndexStatus {
    /// Not built yet: searches scan.
    NotBuilt,
    /// Being built: searches scan.
    Building,
    /// The workspace's files total `bytes`, under the `threshold`: searches scan.
    BelowThreshold {
        /// Bytes of the files that would be indexed.
        bytes: u64,
        /// [`IndexConfig::min_bytes`].
        threshold: u64,
    },
    /// The index cannot be used; the reason says why. Searches scan.
    Off {
        /// What went wrong, for a person.
        reason: String,
    },
    /// Searches use the index.
    Ready {
        /// Files listed (text and binary).
        files: usize,
        /// Their total size, in bytes.
        source_bytes: u64,
        /// The index file's size, in bytes (0 when held in memory only).
        disk_bytes: u64,
        /// Files changed since the build (held in memory).
        changed_files: usize,
        /// Seconds the last build (or reuse) took.
        build_seconds: f64,
        /// Of those, seconds spent reading the changed files again (a reuse; 0 for a build).
        reread_seconds: f64,
        /// Whether the index on disk was reused instead of read anew.
        reused: bool,
    },
}

impl std::fmt::Display for IndexStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::NotBuilt => write!(f, "not built (searches scan)"),
            Self::Building => write!(f, "building (searches scan meanwhile)"),
            Self::BelowThreshold { bytes, threshold } => write!(
                f,
                "no index: the files total {} MiB, under the {} MiB threshold (a scan is as fast)",
                bytes >> 20,
                threshold >> 20
            ),
            Self::Off { reason } => write!(f, "off: {reason} (searches scan)"),
            Self::Ready {
                files,
                source_bytes,
                disk_bytes,
                changed_files,
                build_seconds,
                reread_seconds,
                reused,
            } => write!(
                f,
                "ready: {files} files, {:.1} MiB of text, index {:.1} MiB on disk ({:.1} %), \
                 {changed_files} changed since the build, {} in {build_seconds:.2} s{}",
                *source_bytes as f64 / 1048576.0,
                *disk_bytes as f64 / 1048576.0,
                if *source_bytes > 0 {
                    *disk_bytes as f64 * 100.0 / *source_bytes as f64
                } else {
                    0.0
                },
                if *reused { "reused" } else { "built" },
                if *reused && *changed_files > 0 {
                    format!(" ({reread_seconds:.2} s of it reading the changed files again)")
                } else {
                    String::new()
                }
            ),
        }
    }
}

/// How a listed file is searched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// Its grams are indexed.
    Text = 0,
    /// It holds a NUL byte: the grep engine skips it.
    Binary = 1,
    /// Always searched (see the module docs for why a file is).
    Always = 2,
}

/// One listed file.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub(crate) path: PathBuf,
    pub(crate) size: u64,
    /// Modification time: seconds and nanoseconds since 1970.
    pub(crate) mtime: (i64, u32),
    /// Status change time, as `mtime` (it cannot be set back from user
    /// space, so an edit that restores the size and `mtime` still shows),
    /// and the device and inode numbers (a file replaced by another).
    pub(crate) ctime: (i64, u32),
    pub(crate) dev: u64,
    pub(crate) ino: u64,
    pub(crate) kind: Kind,
    /// The posting id of the file's first piece; its pieces have the ids
    /// `first..first + slots` in order (ids past its last piece stay unused).
    pub(crate) first: u32,
    /// Posting ids reserved for the file ([`IndexConfig::slots`] of its size when listed).
    pub(crate) slots: u32,
    /// Where each piece after the first starts: byte offset, and the
    /// (1-based) number of its first line. Empty for a file of one piece.
    pub(crate) pieces: Vec<(u64, u64)>,
}

impl Entry {
    /// The ids reserved for the file.
    fn ids(&self) -> std::ops::Range<u32> {
        self.first..self.first.saturating_add(self.slots)
    }

    /// Whether `f` is this file as it was read: same size, times, device
    /// and inode, and not newly volatile.
    fn unchanged(&self, f: &Walked) -> bool {
        self.size == f.size
            && self.mtime == f.mtime
            && self.ctime == f.ctime
            && (self.dev, self.ino) == (f.dev, f.ino)
            && (self.kind == Kind::Always) >= f.volatile()
    }

    fn modified(&self) -> Option<SystemTime> {
        let secs = u64::try_from(self.mtime.0).ok()?;
        SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, self.mtime.1))
    }
}

/// What the build threads found of each file: its place in the listing,
/// kind and piece starts.
type BuildParts = Vec<(usize, Kind, Vec<(u64, u64)>)>;

/// A file `grep_content` must search, and which parts of it.
#[derive(Debug, Clone)]
pub(crate) struct Candidate {
    pub(crate) path: PathBuf,
    /// The pieces that can hold a match, ascending (consecutive ones
    /// joined into one); empty: the whole file.
    pub(crate) parts: Vec<Part>,
    /// The size and modification time (seconds, nanoseconds) the pieces
    /// were read at: they apply only while the file still has them.
    pub(crate) size: u64,
    pub(crate) mtime: (i64, u32),
}

/// One piece of a file: bytes `start..end`, whose first line is number `line` (1-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Part {
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) line: u64,
}

/// A usable index.
struct Ready {
    /// Every file ever listed, ascending by [`Entry::first`]; retired ones' ids are in `dead`.
    entries: Vec<Entry>,
    /// One past each entry's last id (`first + slots`), ascending: what a
    /// search for the entry of an id reads (compact, so it stays in cache).
    ends: Vec<u32>,
    /// Live files by path: their place in `entries`.
    live: BTreeMap<PathBuf, u32>,
    /// Posting ids of retired files.
    dead: RoaringBitmap,
    /// Posting ids of files always searched, and of binary files.
    always: RoaringBitmap,
    binary: RoaringBitmap,
    /// The id the next file read gets.
    next_id: u32,
    /// A changed file found no id left: the index must be rebuilt.
    exhausted: bool,
    /// The signature rows of the build.
    base: Rows,
    /// Rows of files read since the build: row to the ids that set it.
    delta: HashMap<u32, RoaringBitmap>,
    delta_postings: u64,
    changed_files: usize,
    /// Linked folders the walk entered: (link path, canonical target).
    links: Vec<(PathBuf, PathBuf)>,
    disk_bytes: u64,
    build_seconds: f64,
    /// Of `build_seconds`, the time spent reading changed files again (a reuse).
    reread_seconds: f64,
    reused: bool,
    /// Device and inode of the files read again since the last
    /// [`Ready::apply`] that have other links ([`Ready::trust_no_other_link`]).
    linked_inodes: Vec<(u64, u64)>,
}

enum Phase {
    NotBuilt,
    Building,
    Small { bytes: u64 },
    Off(String),
    Ready(Box<Ready>),
}

struct Inner {
    ws: Workspace,
    config: IndexConfig,
    phase: Mutex<Phase>,
    queue: Arc<Queue>,
    watcher: Mutex<Option<Watcher>>,
    building: AtomicBool,
    /// The next build reads every file anew (never reuses the stored
    /// index): set when changes passed the cap or the stored rows were corrupt.
    fresh: AtomicBool,
    /// The next build reuses the stored index only when no file changed
    /// since it was built ([`ContentIndex::update`]).
    strict: AtomicBool,
    /// Searches and listings answered from the index.
    answered: AtomicUsize,
    /// Bumped whenever what the index knows changes (a build or rebuild
    /// installed, changes read again): see [`ContentIndex::current_version`].
    version: AtomicU64,
    logged: Mutex<HashSet<&'static str>>,
}

/// A gram signature index of one workspace, shared by every search of a
/// long-running host. Cheap to clone (one shared state).
///
/// ```no_run
/// use tool_builtins::Workspace;
/// use tool_builtins::search::index::{ContentIndex, IndexConfig};
/// use tool_core::ToolContext;
///
/// let ws = Workspace::new("/path/to/repo").unwrap();
/// let index = ContentIndex::new(&ws, IndexConfig::default());
/// index.build_in_background();
/// let ctx = ToolContext::new().with_state(ws).with_state(index.clone());
/// // grep_content and glob_files in `ctx` now use the index once it is ready.
/// ```
#[derive(Clone)]
pub struct ContentIndex {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for ContentIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ContentIndex")
            .field("root", &self.inner.ws.root())
            .field("status", &self.status())
            .finish()
    }
}

impl ContentIndex {
    /// An index of `ws`, not built yet (searches scan until
    /// [`ContentIndex::build`] or [`ContentIndex::build_in_background`]).
    pub fn new(ws: &Workspace, config: IndexConfig) -> Self {
        Self {
            inner: Arc::new(Inner {
                ws: ws.clone(),
                config,
                phase: Mutex::new(Phase::NotBuilt),
                queue: Arc::new(Queue::default()),
                watcher: Mutex::new(None),
                building: AtomicBool::new(false),
                fresh: AtomicBool::new(false),
                strict: AtomicBool::new(false),
                answered: AtomicUsize::new(0),
                version: AtomicU64::new(0),
                logged: Mutex::new(HashSet::new()),
            }),
        }
    }

    /// The state folder: the configured one, else the user's
    /// (`tool_core::state::state_dir`); `None` when there is neither.
    fn state_dir(&self) -> Option<PathBuf> {
        self.inner
            .config
            .state_dir
            .clone()
            .or_else(tool_core::state::state_dir)
    }

    /// The file the index is kept in: `<state>/index/<hash of the root>/grams.idx`;
    /// `None` when there is no state folder.
    pub fn location(&self) -> Option<PathBuf> {
        let state = self.state_dir()?;
        Some(store::location(&state, self.inner.ws.root()))
    }

    /// Why no index can be kept for this workspace at all, or `None`: the
    /// state folder lies inside the workspace, so the index file, its
    /// temporary files and the watcher's sentinels would be files of the
    /// workspace (listed, searched and watched). Searches then scan.
    pub fn refusal(&self) -> Option<String> {
        let state = self.state_dir()?;
        let resolved = resolve_existing(&state);
        resolved.starts_with(self.inner.ws.root()).then(|| {
            format!(
                "the state folder {state:?} is inside the workspace, so no index is kept there \
                 (set XDG_STATE_HOME to a folder outside it)"
            )
        })
    }

    /// What the index is doing now.
    pub fn status(&self) -> IndexStatus {
        match &*self.phase() {
            Phase::NotBuilt => IndexStatus::NotBuilt,
            Phase::Building => IndexStatus::Building,
            Phase::Small { bytes } => IndexStatus::BelowThreshold {
                bytes: *bytes,
                threshold: self.inner.config.min_bytes,
            },
            Phase::Off(reason) => IndexStatus::Off {
                reason: reason.clone(),
            },
            Phase::Ready(r) => IndexStatus::Ready {
                files: r.live.len(),
                source_bytes: r.live.values().map(|&ix| r.entries[ix as usize].size).sum(),
                disk_bytes: r.disk_bytes,
                changed_files: r.changed_files,
                build_seconds: r.build_seconds,
                reread_seconds: r.reread_seconds,
                reused: r.reused,
            },
        }
    }

    /// How many searches (`grep_content`) and listings (`glob_files`) this
    /// index has answered; the others scanned or walked.
    pub fn answered(&self) -> usize {
        self.inner.answered.load(Ordering::Relaxed)
    }

    /// What is stored on disk for this workspace, without building:
    /// the number of files and the file's size, or `None`.
    ///
    /// # Errors
    /// A corrupt or unreadable index file.
    pub fn stored(&self) -> std::io::Result<Option<(usize, u64)>> {
        let Some(path) = self.location() else {
            return Ok(None);
        };
        if !path.exists() {
            return Ok(None);
        }
        let size = std::fs::metadata(&path)?.len();
        let loaded = store::load(&path, self.inner.ws.root()).map_err(|e| {
            std::io::Error::new(
                e.kind(),
                format!(
                    "{e} ({}); the next build (`tool index build`, `tool serve`) writes it anew",
                    path.display()
                ),
            )
        })?;
        Ok(loaded.map(|(entries, _)| (entries.len(), size)))
    }

    /// Deletes the index on disk (`grams.idx` and a temporary file a
    /// build left) and forgets the one in memory (searches scan until the
    /// next build). Running hosts' sentinel folders next to it are left
    /// alone; the workspace's folder of the state folder is removed only
    /// when nothing else is in it. `true` when an index file was deleted.
    ///
    /// # Errors
    /// The file could not be deleted.
    pub fn drop_index(&self) -> std::io::Result<bool> {
        *self.phase() = Phase::NotBuilt;
        let Some(path) = self.location() else {
            return Ok(false);
        };
        let _ = std::fs::remove_file(path.with_extension("tmp"));
        let deleted = match std::fs::remove_file(&path) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        remove_if_empty(&path);
        Ok(deleted)
    }

    /// Builds the index as [`ContentIndex::build`] does, but brings the
    /// stored index up to date: when any file changed since it was stored,
    /// every file is read anew and the index written again (`tool index
    /// build`). A stored index of unchanged files is reused as it is.
    pub fn update(&self) -> IndexStatus {
        self.inner.strict.store(true, Ordering::Release);
        self.build()
    }

    /// Builds the index in a background thread (a no-op while one builds).
    pub fn build_in_background(&self) -> std::thread::JoinHandle<IndexStatus> {
        let this = self.clone();
        std::thread::spawn(move || this.build())
    }

    /// Builds the index now: starts the watcher, walks the workspace, reuses
    /// the stored index when its files are unchanged (by path, size and
    /// modification time) or reads every text file, and stores the result.
    /// Returns the status reached ([`IndexStatus::Ready`], or why not).
    /// While another build runs it returns [`IndexStatus::Building`] at once.
    pub fn build(&self) -> IndexStatus {
        if self.inner.building.swap(true, Ordering::AcqRel) {
            return IndexStatus::Building;
        }
        let started = std::time::Instant::now();
        *self.phase() = Phase::Building;
        let phase = match self.build_phase(started) {
            Ok(phase) => phase,
            Err(reason) => {
                self.log_once("off", &reason);
                Phase::Off(reason)
            }
        };
        if !matches!(phase, Phase::Ready(_)) {
            // No index to keep current: no watcher, no sentinel folder left.
            drop(
                self.inner
                    .watcher
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .take(),
            );
            if let Some(path) = self.location() {
                remove_if_empty(&path);
            }
        }
        *self.phase() = phase;
        self.inner.version.fetch_add(1, Ordering::AcqRel);
        self.inner.building.store(false, Ordering::Release);
        let status = self.status();
        if let IndexStatus::Ready { .. } = status {
            // Changes made during the build.
            self.drain();
        }
        self.log(&status.to_string());
        status
    }

    fn build_phase(&self, started: std::time::Instant) -> Result<Phase, String> {
        let config = &self.inner.config;
        if let Some(reason) = self.refusal() {
            return Err(reason);
        }
        if config.watch {
            self.start_watcher()?;
        } else if !config.trusted_writes {
            return Err("watching is off, so outside changes would go unseen".to_owned());
        }
        // Changes before the walk are in it.
        self.inner.queue.lock().paths.clear();
        let ws = &self.inner.ws;
        let listing = list(ws, ws.root(), true, config.thread_count());
        if listing.inaccessible {
            return Err("some folders of the workspace are unreadable".to_owned());
        }
        let bytes: u64 = listing.files.iter().map(|f| f.size).sum();
        if bytes < config.min_bytes {
            return Ok(Phase::Small { bytes });
        }
        let location = if config.persist {
            self.location()
        } else {
            None
        };
        let fresh = self.inner.fresh.swap(false, Ordering::AcqRel);
        let strict = self.inner.strict.swap(false, Ordering::AcqRel);
        if let Some(path) = location.as_ref().filter(|_| !fresh) {
            if let Some(ready) = self.reuse(path, &listing, started, strict) {
                return Ok(Phase::Ready(Box::new(ready)));
            }
        }
        let params = Params::current();
        let Some(path) = location else {
            let ids = self.ids_of(&listing)?;
            let bytes = store::rows_bytes(params, ids);
            if bytes > config.max_disk_bytes {
                return Err(format!(
                    "the index would take {} MiB, over the cap of {} MiB (IndexConfig::max_disk_bytes)",
                    bytes >> 20,
                    config.max_disk_bytes >> 20
                ));
            }
            let mut shards = MemoryShards {
                params,
                ids,
                shards: Vec::new(),
                current: Mutex::default(),
            };
            let mut ready = self.full_build(listing, params, &mut shards)?;
            ready.base = Rows::memory(params, ids, shards.shards);
            ready.build_seconds = started.elapsed().as_secs_f64();
            return Ok(Phase::Ready(Box::new(ready)));
        };
        let ids = self.ids_of(&listing)?;
        let stored = (|| {
            if let Some(parent) = path.parent() {
                watch::make_private_dir(parent)?;
            }
            let mut writer = store::Writer::create(&path, params, ids, config.max_disk_bytes)?;
            let ready = self
                .full_build(listing, params, &mut writer)
                .map_err(std::io::Error::other)?;
            let (size, rows) = writer.finish(ws.root(), &ready.entries)?;
            Ok::<_, std::io::Error>((ready, size, rows))
        })();
        let (mut ready, size, rows) =
            stored.map_err(|e| format!("cannot store the index at {path:?}: {e}"))?;
        ready.base = rows;
        ready.disk_bytes = size;
        ready.build_seconds = started.elapsed().as_secs_f64();
        Ok(Phase::Ready(Box::new(ready)))
    }

    fn start_watcher(&self) -> Result<(), String> {
        let mut watcher = self
            .inner
            .watcher
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if watcher.is_some() {
            return Ok(());
        }
        let state = self
            .inner
            .config
            .state_dir
            .clone()
            .or_else(tool_core::state::state_dir)
            .ok_or("no state folder for the watcher's sentinels (set XDG_STATE_HOME or HOME)")?;
        let sentinels = store::location(&state, self.inner.ws.root())
            .with_file_name(format!("sentinels-{}", std::process::id()));
        watch::make_private_dir(&sentinels).map_err(|e| {
            format!("the state folder is not writable (cannot create {sentinels:?}: {e})")
        })?;
        let started = Watcher::start(
            self.inner.ws.root(),
            &sentinels,
            Arc::clone(&self.inner.queue),
        )
        .map_err(|e| format!("file watching failed ({e})"))?;
        *watcher = Some(started);
        Ok(())
    }

    /// The stored index when it indexes these very files (same paths,
    /// sizes and times) but for a few, which are read again; `None` (build
    /// anew) when too many changed, when the changed files read again pass
    /// [`IndexConfig::max_delta_bytes`] (a reuse would be rebuilt at once),
    /// or, when `strict`, when any file changed.
    fn reuse(
        &self,
        path: &Path,
        listing: &Listing,
        started: std::time::Instant,
        strict: bool,
    ) -> Option<Ready> {
        let (entries, disk) = match store::load(path, self.inner.ws.root()) {
            Ok(Some(found)) => found,
            Ok(None) => return None,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::NotFound {
                    // "corrupt index file: the checksum ... does not match (path); rebuilding"
                    self.log_once("load", &format!("{e} ({path:?}); rebuilding"));
                }
                return None;
            }
        };
        let stored: HashMap<&Path, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.path.as_path(), i))
            .collect();
        let mut changed = Vec::new();
        let mut kept = HashSet::new();
        for f in &listing.files {
            match stored.get(f.path.as_path()) {
                Some(&i) if entries[i].unchanged(f) => {
                    kept.insert(i);
                }
                _ => changed.push(f.clone()),
            }
        }
        if changed.len() > 64.max(listing.files.len() / 10)
            || (strict && (!changed.is_empty() || kept.len() != entries.len()))
        {
            return None;
        }
        let disk_bytes = std::fs::metadata(path).map_or(0, |m| m.len());
        let mut ready = Ready::new(entries, disk, listing.links.clone());
        for ix in 0..ready.entries.len() {
            if kept.contains(&ix) {
                #[allow(clippy::cast_possible_truncation, reason = "stored files fit u32")]
                ready.live.insert(ready.entries[ix].path.clone(), ix as u32);
            } else {
                ready.dead.insert_range(ready.entries[ix].ids());
            }
        }
        let mut reader = FileReader::new(ready.base.params);
        let reread = std::time::Instant::now();
        for f in changed {
            ready.add(&self.inner.ws, &self.inner.config, f, &mut reader);
            if ready.exhausted || ready.delta_bytes() > self.inner.config.max_delta_bytes {
                self.log_once(
                    "reuse-over",
                    "the files changed since the stored build pass IndexConfig::max_delta_bytes; building anew",
                );
                return None;
            }
        }
        ready.trust_no_other_link();
        ready.disk_bytes = disk_bytes;
        ready.reused = true;
        ready.reread_seconds = reread.elapsed().as_secs_f64();
        ready.build_seconds = started.elapsed().as_secs_f64();
        Some(ready)
    }

    /// The piece ids a full build of `listing` gives out.
    fn ids_of(&self, listing: &Listing) -> Result<u32, String> {
        let mut next = 0u32;
        for f in &listing.files {
            next = next
                .checked_add(self.inner.config.slots(f.size))
                .filter(|&n| n < u32::MAX)
                .ok_or("more than 4 billion pieces (raise IndexConfig::piece_bytes)")?;
        }
        Ok(next)
    }

    /// Reads every listed file in parallel: the file table, and the
    /// signature rows, handed to `sink` shard by shard (ids ascending; see
    /// `sigs`). A shard's rows are the only ones held at a time.
    fn full_build(
        &self,
        listing: Listing,
        params: Params,
        sink: &mut dyn ShardSink,
    ) -> Result<Ready, String> {
        let files = listing.files;
        let config = &self.inner.config;
        // Each file's first id: its pieces' ids follow.
        let mut firsts = Vec::with_capacity(files.len());
        let mut next = 0u32;
        for f in &files {
            firsts.push(next);
            next = next
                .checked_add(config.slots(f.size))
                .filter(|&n| n < u32::MAX)
                .ok_or("more than 4 billion pieces (raise IndexConfig::piece_bytes)")?;
        }
        let ids = next;
        // Units of consecutive files, about UNIT_BYTES each: a thread reads
        // one at a time; each with the ids of its files.
        let mut units: Vec<(std::ops::Range<usize>, std::ops::Range<u32>)> = Vec::new();
        let (mut start, mut bytes) = (0usize, 0u64);
        for (ix, f) in files.iter().enumerate() {
            bytes += f.size;
            if bytes >= UNIT_BYTES || ix + 1 == files.len() {
                let end_id = firsts[ix] + config.slots(f.size);
                units.push((start..ix + 1, firsts[start]..end_id));
                (start, bytes) = (ix + 1, 0);
            }
        }
        let results: Mutex<BuildParts> = Mutex::default();
        let (files_ref, firsts) = (&files, &firsts);
        // Once built, a shard's rows are encoded as stored by every thread
        // at once (each its range of rows) into buffers that a writing
        // thread writes while the next shard is read (direct writes wait
        // for the disk); the shard's memory is reused.
        let pool = sigs::BufferPool::new(
            sigs::encoded_bytes(sigs::shard_blocks(sigs::SHARD_IDS, 0)),
            WRITE_BUFFERS,
        );
        let (to_writer, writes) = std::sync::mpsc::channel::<Write>();
        let built: Result<(), String> = std::thread::scope(|outer| {
            let pool = &pool;
            let writer = outer.spawn(move || write_shards(&writes, sink, pool));
            let mut memory: Option<ShardRows> = None;
            let mut parts: Vec<sigs::EncodedRows> = Vec::new();
            let mut failed = None;
            for s in 0..sigs::shard_count(ids) {
                let first_id = s * sigs::SHARD_IDS;
                let end_id = ids.min(first_id + sigs::SHARD_IDS);
                let shard = match memory.take() {
                    Some(done) => done.reset(params, first_id, end_id),
                    None => ShardRows::new(params, first_id, end_id),
                };
                // The units with pieces in the shard (a file across its end is
                // read again for the next shard).
                let mut todo: Vec<&(std::ops::Range<usize>, std::ops::Range<u32>)> = units
                    .iter()
                    .filter(|(_, r)| r.start < shard.end && r.end > shard.first)
                    .collect();
                // Largest first (a unit of one large file), so that no thread
                // is left with a large one at the end.
                todo.sort_by_key(|(_, r)| std::cmp::Reverse(r.end - r.start));
                let next = AtomicUsize::new(0);
                let threads = config.thread_count().min(todo.len().max(1));
                let (todo, shard_ref, results) = (&todo, &shard, &results);
                std::thread::scope(|scope| {
                    for _ in 0..threads {
                        scope.spawn(|| {
                            let mut kinds = Vec::new();
                            let mut reader = FileReader::new(params);
                            let mut t = Transposer::new(params);
                            loop {
                                let unit = next.fetch_add(1, Ordering::Relaxed);
                                let Some((range, ids)) = todo.get(unit) else {
                                    break;
                                };
                                t.own(ids.clone(), shard_ref);
                                for ix in range.clone() {
                                    let (f, first) = (&files_ref[ix], firsts[ix]);
                                    let slots = config.slots(f.size);
                                    if first >= shard_ref.end || first + slots <= shard_ref.first {
                                        continue;
                                    }
                                    // Rows of a file found binary or always searched
                                    // midway are harmless: `binary` and `always` hold its ids.
                                    let kind = reader.read(
                                        &self.inner.ws,
                                        config,
                                        f,
                                        slots,
                                        &mut |piece, sig| {
                                            let id = first + piece;
                                            if shard_ref.holds(id) {
                                                t.add(id, sig, shard_ref);
                                            }
                                        },
                                    );
                                    if shard_ref.holds(first) {
                                        kinds.push((ix, kind, std::mem::take(&mut reader.pieces)));
                                    }
                                }
                            }
                            t.flush(shard_ref);
                            results
                                .lock()
                                .unwrap_or_else(PoisonError::into_inner)
                                .append(&mut kinds);
                        });
                    }
                });
                let threads = config.thread_count().max(1);
                parts.resize_with(threads, sigs::EncodedRows::default);
                let (bits, per) = (
                    params.bits(),
                    params.bits().div_ceil(threads).div_ceil(64) * 64,
                );
                let encoded: std::io::Result<()> = std::thread::scope(|scope| {
                    let handles: Vec<_> = parts
                        .iter_mut()
                        .enumerate()
                        .map(|(i, part)| {
                            let (shard, to_writer) = (&shard, to_writer.clone());
                            let rows = (i * per).min(bits)..((i + 1) * per).min(bits);
                            scope.spawn(move || {
                                shard.encode(rows, part, &mut |first, buf| {
                                    let rows = std::mem::replace(buf, pool.take());
                                    to_writer.send(Write::Rows(s, first, rows)).map_err(|_| {
                                        std::io::Error::other("the writing thread stopped")
                                    })
                                })
                            })
                        })
                        .collect();
                    handles.into_iter().try_for_each(|h| {
                        h.join().unwrap_or_else(|_| {
                            Err(std::io::Error::other("an encoding thread panicked"))
                        })
                    })
                });
                let handed = encoded.and_then(|()| {
                    let summary = parts.iter().map(sigs::EncodedRows::summary).collect();
                    to_writer
                        .send(Write::Shard(summary))
                        .map_err(|_| std::io::Error::other("the writing thread stopped"))
                });
                if let Err(e) = handed {
                    failed = Some(e);
                    break;
                }
                memory = Some(shard);
            }
            drop(to_writer);
            let written = writer
                .join()
                .unwrap_or_else(|_| Err(std::io::Error::other("the writing thread panicked")));
            // The writer's own error first: an encoding thread only learns
            // that it stopped.
            written
                .and(failed.map_or(Ok(()), Err))
                .map_err(|e| format!("cannot build the index: {e}"))
        });
        built?;
        let part_kinds = results.into_inner().unwrap_or_else(PoisonError::into_inner);
        let mut kinds: Vec<(Kind, Vec<(u64, u64)>)> = vec![(Kind::Text, Vec::new()); files.len()];
        for (ix, kind, pieces) in part_kinds {
            kinds[ix] = (kind, pieces);
        }
        let entries: Vec<Entry> = files
            .into_iter()
            .zip(kinds)
            .zip(firsts.iter())
            .map(|((f, (kind, pieces)), &first)| Entry {
                slots: config.slots(f.size),
                path: f.path,
                size: f.size,
                mtime: f.mtime,
                ctime: f.ctime,
                dev: f.dev,
                ino: f.ino,
                kind,
                first,
                pieces,
            })
            .collect();
        let mut ready = Ready::new(entries, Rows::empty(params), listing.links);
        // In path order already: built in bulk, with no search per insert.
        #[allow(clippy::cast_possible_truncation, reason = "fewer files than ids")]
        let live = ready
            .entries
            .iter()
            .enumerate()
            .map(|(ix, e)| (e.path.clone(), ix as u32));
        ready.live = live.collect();
        Ok(ready)
    }

    /// Tells the index that `paths` (files or folders, absolute) changed,
    /// were created, deleted or renamed: they are read again before the
    /// next search. The host's write path calls this before a tool returns;
    /// anything may call it. Paths outside the workspace are ignored.
    pub fn note_changed<P: AsRef<Path>>(&self, paths: impl IntoIterator<Item = P>) {
        let root = self.inner.ws.root();
        let mut pending = self.inner.queue.lock();
        for p in paths {
            let p = p.as_ref();
            let p = if p.is_absolute() {
                p.to_path_buf()
            } else {
                root.join(p)
            };
            if p.starts_with(root) {
                pending.add(p);
            }
        }
    }

    /// The same as [`ContentIndex::note_changed`] (the name write hooks use;
    /// the file tools reach it through the [`AfterWrite`](crate::fs::AfterWrite)
    /// impl below once the index is added with
    /// [`AfterWriteHooks::add`](crate::fs::AfterWriteHooks::add)).
    pub fn invalidate<P: AsRef<Path>>(&self, paths: impl IntoIterator<Item = P>) {
        self.note_changed(paths);
    }

    /// Applies every pending change: first waits until the watcher has
    /// queued all changes made before this call, then reads the changed
    /// files again. `true` when the index is ready and current; `false`
    /// when searches must scan (not built, building, off, or the watcher
    /// did not answer: said once in the log).
    pub fn drain(&self) -> bool {
        if !matches!(&*self.phase(), Phase::Ready(_)) {
            return false;
        }
        if self.inner.config.watch {
            let passed = {
                let watcher = self
                    .inner
                    .watcher
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                let Some(watcher) = watcher.as_ref() else {
                    return false;
                };
                watcher.barrier()
            };
            if !passed {
                let failed = self.inner.queue.lock().failed.clone();
                if let Some(reason) = failed {
                    let reason = format!("file watching failed ({reason})");
                    self.log_once("watch", &format!("{reason}; searches scan"));
                    *self.phase() = Phase::Off(reason);
                } else {
                    self.log_once(
                        "barrier",
                        "the file watcher did not answer within 2 s; this search scans",
                    );
                }
                return false;
            }
        }
        let (paths, rescan) = {
            let mut pending = self.inner.queue.lock();
            (
                std::mem::take(&mut pending.paths),
                std::mem::take(&mut pending.rescan),
            )
        };
        let mut phase = self.phase();
        let Phase::Ready(ready) = &mut *phase else {
            return false;
        };
        if !paths.is_empty() || rescan {
            ready.apply(&self.inner.ws, &self.inner.config, paths, rescan);
            self.inner.version.fetch_add(1, Ordering::AcqRel);
        }
        let over = ready.exhausted || ready.delta_bytes() > self.inner.config.max_delta_bytes;
        drop(phase);
        if over {
            self.log_once(
                "delta",
                "changes since the build passed IndexConfig::max_delta_bytes (or used up the posting ids); rebuilding in the background",
            );
            // A real build, stored: reusing would find the same changes.
            self.inner.fresh.store(true, Ordering::Release);
            *self.phase() = Phase::Building;
            drop(self.build_in_background());
            return false;
        }
        true
    }

    /// After [`ContentIndex::drain`]: a number that changes whenever a file
    /// of the workspace may have changed since it was last returned (a
    /// change the host noted or the watcher reported, a build installed),
    /// or `None` when the index cannot vouch for the whole workspace (not
    /// built, building, off, the watcher silent: searches scan; no watcher
    /// and no [`IndexConfig::with_trusted_writes`]). The read
    /// cache uses it to reuse a folder search's answer only while nothing
    /// in the folder changed (`fs::read_cache`).
    pub fn current_version(&self) -> Option<u64> {
        let config = &self.inner.config;
        if !(config.watch || config.trusted_writes) || !self.drain() {
            return None;
        }
        Some(self.inner.version.load(Ordering::Acquire))
    }

    /// The files under `dir` that can hold a match of `pattern` (compiled
    /// with `crlf` as `grep_content` compiles it), each with the pieces
    /// to search, after draining pending changes; `None` when the search must scan.
    pub(crate) fn candidates(
        &self,
        dir: &Path,
        pattern: &str,
        crlf: bool,
        max_line_bytes: usize,
    ) -> Option<Vec<Candidate>> {
        if max_line_bytes < LONG_LINE_BYTES || !self.covers(dir) {
            return None;
        }
        let query = grams::query_of(pattern, crlf)?;
        if query.is_all() || !self.drain() {
            return None;
        }
        let phase = self.phase();
        let Phase::Ready(ready) = &*phase else {
            return None;
        };
        let found = match ready.eval(&query) {
            Ok(Some(found)) => found,
            Ok(None) => return None,
            Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                // A row whose checksum does not match: built anew (not reused).
                drop(phase);
                let at = self
                    .location()
                    .map_or_else(String::new, |p| format!(" ({p:?})"));
                self.log_once("corrupt", &format!("{e}{at}; rebuilding"));
                self.inner.fresh.store(true, Ordering::Release);
                *self.phase() = Phase::Building;
                drop(self.build_in_background());
                return None;
            }
            Err(e) => {
                drop(phase);
                self.log_once(
                    "read",
                    &format!("cannot read the index ({e}); searches scan"),
                );
                *self.phase() = Phase::Off(format!("cannot read the index: {e}"));
                return None;
            }
        };
        self.inner.answered.fetch_add(1, Ordering::Relaxed);
        let mut ids = found | &ready.always;
        ids -= &ready.dead;
        ids -= &ready.binary;
        Some(ready.candidates(&ids, dir, dir == self.inner.ws.root()))
    }

    /// The files under `dir` with their modification times, after draining
    /// pending changes; `None` when the listing must walk.
    pub(crate) fn files_under(&self, dir: &Path) -> Option<Vec<(PathBuf, Option<SystemTime>)>> {
        if !self.covers(dir) || !self.drain() {
            return None;
        }
        let phase = self.phase();
        let Phase::Ready(ready) = &*phase else {
            return None;
        };
        self.inner.answered.fetch_add(1, Ordering::Relaxed);
        Some(
            ready
                .live
                .range(dir.to_path_buf()..)
                .take_while(|(p, _)| p.starts_with(dir))
                .map(|(p, &id)| {
                    let e = &ready.entries[id as usize];
                    // A linked file's time is its target's, which may change unseen.
                    let modified = if e.kind == Kind::Always {
                        std::fs::metadata(p).and_then(|m| m.modified()).ok()
                    } else {
                        e.modified()
                    };
                    (p.clone(), modified)
                })
                .collect(),
        )
    }

    /// Whether a walk of `dir` sees exactly the indexed files under it:
    /// inside the root, not hidden by the ignore files (such a folder is
    /// searched with ignore files off), not in a private folder.
    fn covers(&self, dir: &Path) -> bool {
        let ws = &self.inner.ws;
        dir.starts_with(ws.root())
            && !crate::fs::workspace::hidden_folders()
                .iter()
                .any(|h| dir.starts_with(h))
            && !crate::search::explicitly_ignored(ws, dir)
    }

    fn phase(&self) -> std::sync::MutexGuard<'_, Phase> {
        self.inner
            .phase
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    fn log(&self, message: &str) {
        use std::io::Write;
        let _ = writeln!(
            std::io::stderr(),
            "agent-tools index ({:?}): {message}",
            self.inner.ws.root()
        );
    }

    /// Logs `message` the first time `key` comes up.
    fn log_once(&self, key: &'static str, message: &str) {
        let first = self
            .inner
            .logged
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key);
        if first {
            self.log(message);
        }
    }
}

impl Ready {
    fn new(entries: Vec<Entry>, base: Rows, links: Vec<(PathBuf, PathBuf)>) -> Self {
        let mut always = RoaringBitmap::new();
        let mut binary = RoaringBitmap::new();
        let mut next_id = 0;
        let ends = entries.iter().map(|e| e.ids().end).collect();
        for e in &entries {
            match e.kind {
                Kind::Always => {
                    always.insert_range(e.ids());
                }
                Kind::Binary => {
                    binary.insert_range(e.ids());
                }
                Kind::Text => {}
            }
            next_id = e.ids().end;
        }
        // Ids past the last file's (none in a file this build wrote) stay unused.
        let next_id = next_id.max(base.ids);
        Self {
            entries,
            ends,
            live: BTreeMap::new(),
            dead: RoaringBitmap::new(),
            always,
            binary,
            next_id,
            exhausted: false,
            base,
            delta: HashMap::new(),
            delta_postings: 0,
            changed_files: 0,
            links,
            disk_bytes: 0,
            build_seconds: 0.0,
            reread_seconds: 0.0,
            reused: false,
            linked_inodes: Vec::new(),
        }
    }

    /// Estimated memory of the changes: 2 bytes per id of a row, 64 per row.
    fn delta_bytes(&self) -> u64 {
        self.delta_postings * 2 + self.delta.len() as u64 * 64
    }

    /// The ids matching `query`; `None` for all.
    fn eval(&self, query: &Query) -> std::io::Result<Option<RoaringBitmap>> {
        Ok(self.eval_words(query)?.map(|words| {
            let mut found = RoaringBitmap::new();
            for (i, &w) in words.iter().enumerate() {
                let mut w = w;
                while w != 0 {
                    #[allow(clippy::cast_possible_truncation, reason = "ids fit u32")]
                    found.insert(i as u32 * 64 + w.trailing_zeros());
                    w &= w - 1;
                }
            }
            found
        }))
    }

    /// Words of one bit per id (`0..next_id`) that a query's rows leave set.
    fn words(&self) -> usize {
        (self.next_id as usize).div_ceil(64)
    }

    /// The ids with row `row` set: the build's, and changed files'.
    fn row(&self, row: u32) -> std::io::Result<Vec<u64>> {
        let mut words = vec![0u64; self.words()];
        self.base.row(row, &mut words)?;
        if let Some(ids) = self.delta.get(&row) {
            for id in ids {
                if let Some(w) = words.get_mut(id as usize / 64) {
                    *w |= 1 << (id % 64);
                }
            }
        }
        Ok(words)
    }

    /// [`Ready::eval`] as words (see [`Ready::words`]).
    fn eval_words(&self, query: &Query) -> std::io::Result<Option<Vec<u64>>> {
        Ok(match query {
            Query::All => None,
            Query::Gram(_) => self.eval_words(&Query::And(vec![query.clone()]))?,
            Query::Or(parts) => {
                let mut found = vec![0u64; self.words()];
                for p in parts {
                    match self.eval_words(p)? {
                        Some(b) => found.iter_mut().zip(&b).for_each(|(f, b)| *f |= b),
                        None => return Ok(None),
                    }
                }
                Some(found)
            }
            Query::And(parts) => {
                // Every row of every gram must be set: the least set rows first.
                let params = self.base.params;
                let mut rows: Vec<u32> = parts
                    .iter()
                    .filter_map(|p| match p {
                        Query::Gram(g) => Some(*g),
                        _ => None,
                    })
                    .flat_map(|g: Gram| params.rows(g).collect::<Vec<_>>())
                    .collect();
                rows.sort_unstable();
                rows.dedup();
                rows.sort_by_key(|&r| self.base.weight(r));
                let mut found: Option<Vec<u64>> = None;
                let and = |found: Option<Vec<u64>>, b: Vec<u64>| match found {
                    Some(mut f) => {
                        f.iter_mut().zip(&b).for_each(|(f, b)| *f &= b);
                        f
                    }
                    None => b,
                };
                for r in rows.into_iter().take(MAX_AND_ROWS) {
                    found = Some(and(found, self.row(r)?));
                    if found.as_ref().is_some_and(|f| f.iter().all(|&w| w == 0)) {
                        return Ok(found);
                    }
                }
                for p in parts.iter().filter(|p| !matches!(p, Query::Gram(_))) {
                    if let Some(b) = self.eval_words(p)? {
                        found = Some(and(found, b));
                    }
                }
                found
            }
        })
    }

    /// The files of the posting ids `ids` (live ones, not binary) under
    /// `dir`, each with the pieces to search: none (the whole file) when it
    /// is always searched, has one piece, or every piece is named.
    fn candidates(&self, ids: &RoaringBitmap, dir: &Path, whole_tree: bool) -> Vec<Candidate> {
        let mut out: Vec<Candidate> = Vec::new();
        // The file being gathered (its place in `entries`, and whether it
        // is under `dir`) and the pieces of it named.
        let mut current: Option<(usize, bool)> = None;
        let mut named: Vec<u32> = Vec::new();
        let flush = |current: Option<(usize, bool)>, named: &[u32], out: &mut Vec<Candidate>| {
            let Some((ix, true)) = current else { return };
            let e = &self.entries[ix];
            let whole = e.kind != Kind::Text
                || e.pieces.is_empty()
                || named.len() > e.pieces.len()
                || named.last().is_some_and(|&k| k as usize > e.pieces.len());
            let mut parts: Vec<Part> = Vec::new();
            if !whole {
                for &k in named {
                    let k = k as usize;
                    let (start, line) = if k == 0 { (0, 1) } else { e.pieces[k - 1] };
                    let end = e.pieces.get(k).map_or(e.size, |&(s, _)| s);
                    // Consecutive pieces are searched as one.
                    match parts.last_mut() {
                        Some(last) if last.end == start => last.end = end,
                        _ => parts.push(Part { start, end, line }),
                    }
                }
            }
            out.push(Candidate {
                path: e.path.clone(),
                parts,
                size: e.size,
                mtime: e.mtime,
            });
        };
        // Ids ascend, and so do the files' ranges: each search for a file
        // starts past the last one, in the compact `ends`.
        let mut from = 0usize;
        for id in ids {
            if let Some((ix, _)) = current {
                let e = &self.entries[ix];
                if e.ids().contains(&id) {
                    named.push(id - e.first);
                    continue;
                }
            }
            let ix = from + self.ends[from..].partition_point(|&end| end <= id);
            from = ix;
            let Some(e) = self.entries.get(ix).filter(|e| e.ids().contains(&id)) else {
                continue;
            };
            flush(current.take(), &named, &mut out);
            named.clear();
            named.push(id - e.first);
            current = Some((ix, whole_tree || e.path.starts_with(dir)));
        }
        flush(current, &named, &mut out);
        out
    }

    /// Retires the file at `path` (its pieces no longer count).
    fn retire(&mut self, path: &Path) {
        if let Some(ix) = self.live.remove(path) {
            let ids = self.entries[ix as usize].ids();
            self.dead.insert_range(ids);
        }
    }

    /// Lists `f` anew under a fresh id, reading its grams.
    fn add(&mut self, ws: &Workspace, config: &IndexConfig, f: Walked, reader: &mut FileReader) {
        self.retire(&f.path);
        if f.shared {
            self.linked_inodes.push((f.dev, f.ino));
        }
        let slots = config.slots(f.size);
        let (Ok(ix), Some(next)) = (
            u32::try_from(self.entries.len()),
            self.next_id.checked_add(slots).filter(|&n| n < u32::MAX),
        ) else {
            // Out of ids (after billions of changes): rebuild.
            self.exhausted = true;
            return;
        };
        let first = self.next_id;
        self.next_id = next;
        let (delta, postings) = (&mut self.delta, &mut self.delta_postings);
        // Rows of a file found binary or always searched midway are
        // harmless: `binary` and `always` hold its ids.
        let kind = reader.read(ws, config, &f, slots, &mut |piece, sig| {
            for r in sig.ones() {
                delta.entry(r).or_default().insert(first + piece);
            }
            *postings += sig.count();
        });
        let entry = Entry {
            path: f.path,
            size: f.size,
            mtime: f.mtime,
            ctime: f.ctime,
            dev: f.dev,
            ino: f.ino,
            kind,
            first,
            slots,
            pieces: std::mem::take(&mut reader.pieces),
        };
        match kind {
            Kind::Always => self.always.insert_range(entry.ids()),
            Kind::Binary => self.binary.insert_range(entry.ids()),
            Kind::Text => 0,
        };
        self.live.insert(entry.path.clone(), ix);
        self.ends.push(entry.ids().end);
        self.entries.push(entry);
        self.changed_files += 1;
    }

    /// Applies changed `paths` (or, with `rescan`, checks every file).
    fn apply(
        &mut self,
        ws: &Workspace,
        config: &IndexConfig,
        paths: HashSet<PathBuf>,
        rescan: bool,
    ) {
        self.apply_paths(ws, config, paths, rescan);
        self.trust_no_other_link();
    }

    /// Every listed path of a file that was found to have other links while
    /// changes were applied is searched whole from now on (`always`): a
    /// write through one link is reported under that link's path only (the
    /// watcher hears of the path written through), so what the index read
    /// under the other paths can no longer be trusted. One pass over the
    /// listed files, only when such a file was read.
    fn trust_no_other_link(&mut self) {
        if self.linked_inodes.is_empty() {
            return;
        }
        let inodes: HashSet<(u64, u64)> = self.linked_inodes.drain(..).collect();
        let siblings: Vec<u32> = self
            .live
            .values()
            .copied()
            .filter(|&ix| {
                let e = &self.entries[ix as usize];
                e.kind == Kind::Text && inodes.contains(&(e.dev, e.ino))
            })
            .collect();
        for ix in siblings {
            let e = &mut self.entries[ix as usize];
            e.kind = Kind::Always;
            self.always.insert_range(e.ids());
        }
    }

    /// [`Ready::apply`] but for the files of other links.
    fn apply_paths(
        &mut self,
        ws: &Workspace,
        config: &IndexConfig,
        paths: HashSet<PathBuf>,
        rescan: bool,
    ) {
        let mut paths = paths;
        // A change below a linked folder's target shows under the link too.
        let mapped: Vec<PathBuf> = paths
            .iter()
            .flat_map(|p| {
                self.links.iter().filter_map(move |(link, target)| {
                    p.strip_prefix(target).ok().map(|rest| link.join(rest))
                })
            })
            .collect();
        paths.extend(mapped);
        // Inside `.git` only the folder itself and `info/exclude` matter
        // to the file list (git writes its own files at every command).
        paths.retain(|p| {
            let rel = p.strip_prefix(ws.root()).unwrap_or(p);
            !rel.components().any(|c| c.as_os_str() == ".git")
                || p.file_name().is_some_and(|n| n == ".git")
                || p.ends_with("info/exclude")
        });
        let relist = rescan
            || paths.iter().any(|p| {
                let rel = p.strip_prefix(ws.root()).unwrap_or(p);
                rel.components().any(|c| c.as_os_str() == ".git")
                    || p.file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| IGNORE_FILES.contains(&n))
                    || std::fs::symlink_metadata(p).is_ok_and(|m| m.is_symlink() && p.is_dir())
            });
        let mut reader = FileReader::new(self.base.params);
        if relist {
            let listing = list(ws, ws.root(), true, config.thread_count());
            self.links = listing.links;
            let mut now: HashSet<&Path> = HashSet::new();
            for f in &listing.files {
                now.insert(f.path.as_path());
            }
            let gone: Vec<PathBuf> = self
                .live
                .keys()
                .filter(|p| !now.contains(p.as_path()))
                .cloned()
                .collect();
            for p in gone {
                self.retire(&p);
            }
            for f in listing.files {
                let same = self
                    .live
                    .get(&f.path)
                    .is_some_and(|&id| self.entries[id as usize].unchanged(&f));
                if !same || paths.contains(&f.path) {
                    self.add(ws, config, f, &mut reader);
                }
            }
            return;
        }
        // Whether a folder's new files can be listed, once per folder.
        let mut folders: HashMap<PathBuf, bool> = HashMap::new();
        for p in paths {
            // Listed files at or below `p`: checked again.
            let below: Vec<PathBuf> = self
                .live
                .range(p.clone()..)
                .take_while(|(q, _)| q.starts_with(&p))
                .map(|(q, _)| q.clone())
                .collect();
            for q in below {
                match walked(&q, self.is_linked(&q)) {
                    Some(f) => self.add(ws, config, f, &mut reader),
                    None => self.retire(&q),
                }
            }
            let Ok(meta) = std::fs::metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                if crate::search::explicitly_ignored(ws, &p) || !admissible(ws, &p) {
                    continue;
                }
                let listing = list(ws, &p, true, 1);
                for f in listing.files {
                    if !self.live.contains_key(&f.path) {
                        let linked = f.linked || self.is_linked(&f.path);
                        self.add(ws, config, Walked { linked, ..f }, &mut reader);
                    }
                }
            } else if meta.is_file()
                && !self.live.contains_key(&p)
                && p.parent().is_none_or(|dir| {
                    *folders
                        .entry(dir.to_path_buf())
                        .or_insert_with(|| dir == ws.root() || admissible(ws, dir))
                })
                && admissible(ws, &p)
            {
                if let Some(f) = walked(&p, self.is_linked(&p)) {
                    self.add(ws, config, f, &mut reader);
                }
            }
        }
    }

    fn is_linked(&self, path: &Path) -> bool {
        self.links.iter().any(|(link, _)| path.starts_with(link))
    }
}

/// `path` with its longest existing ancestor resolved (symbolic links,
/// `..`); the rest, not yet created, appended as it is.
fn resolve_existing(path: &Path) -> PathBuf {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(found) = std::fs::canonicalize(at) {
            return rest.iter().rev().fold(found, |p, c| p.join(c));
        }
        match (at.parent(), at.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                at = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// Removes the folder of the index file `path` when it is empty.
fn remove_if_empty(path: &Path) {
    if let Some(dir) = path.parent() {
        // Fails (and is meant to) while anything is in it.
        let _ = std::fs::remove_dir(dir);
    }
}

/// Whether the walk from the root would list `path` (a new file or
/// folder): below the root, no `.git` on the way, not hidden by the ignore
/// files, no private tree on the way, a symbolic link only to inside.
fn admissible(ws: &Workspace, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(ws.root()) else {
        return false;
    };
    if rel.components().any(|c| c.as_os_str() == ".git") {
        return false;
    }
    let hidden = crate::fs::workspace::hidden_folders();
    let mut at = ws.root().to_path_buf();
    for c in rel.components() {
        at.push(c);
        if crate::fs::workspace::looks_private_tree(&at) || hidden.iter().any(|h| at.starts_with(h))
        {
            return false;
        }
        if std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_symlink())
            && !std::fs::canonicalize(&at).is_ok_and(|t| ws.contains(&t))
        {
            return false;
        }
    }
    !crate::search::explicitly_ignored(ws, path)
}

/// A file as the walk found it.
#[derive(Debug, Clone)]
struct Walked {
    path: PathBuf,
    size: u64,
    mtime: (i64, u32),
    /// Status change time, device and inode ([`Entry::ctime`]).
    ctime: (i64, u32),
    dev: u64,
    ino: u64,
    /// Reached through a symbolic link (itself one, or below a linked folder).
    linked: bool,
    /// Has several hard links.
    shared: bool,
}

impl Walked {
    /// Whether the file's grams cannot be trusted between searches.
    fn volatile(&self) -> bool {
        self.linked || self.shared
    }
}

/// The file at `path` now, or `None` when it is no longer a regular file.
fn walked(path: &Path, linked: bool) -> Option<Walked> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let is_link = std::fs::symlink_metadata(path).is_ok_and(|m| m.is_symlink());
    Some(from_meta(path.to_path_buf(), &meta, linked || is_link))
}

fn from_meta(path: PathBuf, meta: &std::fs::Metadata, linked: bool) -> Walked {
    Walked {
        path,
        size: meta.len(),
        mtime: (meta.mtime(), u32::try_from(meta.mtime_nsec()).unwrap_or(0)),
        ctime: (meta.ctime(), u32::try_from(meta.ctime_nsec()).unwrap_or(0)),
        dev: meta.dev(),
        ino: meta.ino(),
        linked,
        shared: meta.nlink() > 1,
    }
}

/// Where a build puts the rows of each shard it builds.
trait ShardSink: Send + Sync {
    /// Stores `bytes`, whole rows of shard `shard` from row `first` (each
    /// its words as little-endian bytes); the threads of a build call it
    /// for the rows of one shard at once.
    fn rows(&self, shard: u32, first: usize, bytes: &[u8]) -> std::io::Result<()>;
    /// Takes the finished shard: each part's row checksums and counts, in
    /// row order.
    fn shard(&mut self, parts: &[sigs::EncodedRows]) -> std::io::Result<()>;
}

/// What a build hands its writing thread ([`write_shards`]): rows of a
/// shard (shard, first row, their bytes), or a shard's summary once all
/// its rows were handed on.
enum Write {
    Rows(u32, usize, sigs::AlignedBuf),
    Shard(Vec<sigs::EncodedRows>),
}

/// Encoded row buffers a build holds at most beyond its threads' own
/// (4 MiB each for full shards): one shard's worth, so that the disk
/// writes one shard while the next is read.
const WRITE_BUFFERS: usize = 16;

/// The writing thread of a build: writes what `writes` brings, in order,
/// into `sink`, and gives each buffer back to `pool`; stops at the first
/// error. Closes the pool when it ends, so that no encoding thread waits
/// for a buffer that never comes.
///
/// # Errors
/// The first error of the sink.
fn write_shards(
    writes: &std::sync::mpsc::Receiver<Write>,
    sink: &mut dyn ShardSink,
    pool: &sigs::BufferPool,
) -> std::io::Result<()> {
    struct Close<'a>(&'a sigs::BufferPool);
    impl Drop for Close<'_> {
        fn drop(&mut self) {
            self.0.close();
        }
    }
    let _close = Close(pool);
    for write in writes {
        let done = match write {
            Write::Rows(shard, first, buf) => {
                let done = sink.rows(shard, first, buf.bytes());
                pool.give(buf);
                done
            }
            Write::Shard(parts) => sink.shard(&parts),
        };
        // On an error nothing more is written: the encoding threads' sends
        // fail from now on, and a take no longer waits (the pool is closed).
        done?;
    }
    Ok(())
}

/// The index file: rows written at their place, then recorded.
impl ShardSink for store::Writer {
    fn rows(&self, shard: u32, first: usize, bytes: &[u8]) -> std::io::Result<()> {
        self.write_rows(shard, first, bytes)
    }

    fn shard(&mut self, parts: &[sigs::EncodedRows]) -> std::io::Result<()> {
        store::Writer::shard(self, parts)
    }
}

/// Rows kept in memory (an index not stored): each shard's words, row
/// after row; the shard being built is gathered in `current`.
struct MemoryShards {
    params: Params,
    ids: u32,
    shards: Vec<Vec<u64>>,
    current: Mutex<Vec<u64>>,
}

impl ShardSink for MemoryShards {
    fn rows(&self, shard: u32, first: usize, bytes: &[u8]) -> std::io::Result<()> {
        let blocks = sigs::shard_blocks(self.ids, shard);
        let mut current = self.current.lock().unwrap_or_else(PoisonError::into_inner);
        current.resize(blocks * self.params.bits(), 0);
        let words = current
            .get_mut(first * blocks..first * blocks + bytes.len() / 8)
            .ok_or_else(|| std::io::Error::other("rows out of the shard"))?;
        for (w, v) in words.iter_mut().zip(sigs::le_words(bytes)) {
            *w = v;
        }
        Ok(())
    }

    fn shard(&mut self, _: &[sigs::EncodedRows]) -> std::io::Result<()> {
        let current = self
            .current
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        self.shards.push(std::mem::take(current));
        Ok(())
    }
}

/// Text a build thread reads at a time (a *unit* of consecutive files): 4 MiB.
const UNIT_BYTES: u64 = 4 << 20;

/// Size of the pieces a file is read in while indexing: 256 KiB.
const READ_CHUNK: usize = 256 << 10;

/// Reads files for the index, keeping its buffers from file to file.
struct FileReader {
    /// The signature of the piece being read.
    sig: Signature,
    /// Where each piece after the first of the last file read starts:
    /// byte offset and line number ([`Entry::pieces`]).
    pieces: Vec<(u64, u64)>,
    buf: Vec<u8>,
    /// Whole lines to extract grams from: the end of the previous piece's
    /// last line, then the lines the current read completes.
    lines: Vec<u8>,
    /// The folders no file is opened in, looked up when the reader was made
    /// (its build's walk had started).
    hidden: HiddenAreas,
}

/// Where a [`FileReader`] is in the file it reads.
struct Cursor {
    /// The piece being read (0-based) and the ids reserved for the file.
    piece: u32,
    slots: u32,
    /// Bytes of the piece so far.
    piece_bytes: u64,
    /// Bytes of whole lines read so far, and their number.
    offset: u64,
    lines: u64,
    /// [`IndexConfig::piece_bytes`].
    piece_size: u64,
}

impl FileReader {
    fn new(params: Params) -> Self {
        Self {
            sig: Signature::new(params),
            pieces: Vec::new(),
            buf: Vec::new(),
            lines: Vec::new(),
            hidden: HiddenAreas::now(),
        }
    }

    /// Reads `f` in pieces, handing the signature of each of its pieces
    /// to `emit` (piece number from 0, signature) as the piece ends; a piece
    /// ends at the first line end at or past [`IndexConfig::piece_bytes`]
    /// bytes, and the last of the `slots` pieces runs to the end of the file.
    /// Records where the pieces start in `self.pieces`; returns how the file
    /// is searched (some pieces may have been emitted before a NUL byte or a
    /// long line turned it binary or always searched). Memory stays at one
    /// read (256 KiB) and one line (at most [`LONG_LINE_BYTES`]) whatever the file's size.
    fn read(
        &mut self,
        ws: &Workspace,
        config: &IndexConfig,
        f: &Walked,
        slots: u32,
        emit: &mut dyn FnMut(u32, &Signature),
    ) -> Kind {
        self.sig.clear();
        self.lines.clear();
        self.pieces.clear();
        if f.volatile() || f.size > config.max_file_bytes {
            return Kind::Always;
        }
        let Ok(file) = ws.open_walked(&f.path, &[], &self.hidden) else {
            return Kind::Always;
        };
        // The size listed: a file that grew since is read again when the
        // watcher reports it, and the pieces never start past the size kept.
        let mut file = file.take(f.size);
        self.buf.resize(READ_CHUNK, 0);
        let (mut first, mut total) = (true, 0u64);
        let mut kind = Kind::Text;
        let mut at = Cursor {
            piece: 0,
            slots: slots.max(1),
            piece_bytes: 0,
            offset: 0,
            lines: 0,
            piece_size: config.piece_bytes.max(1),
        };
        loop {
            let n = match file.read(&mut self.buf) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(_) => return Kind::Always,
            };
            let piece = &self.buf[..n];
            total += n as u64;
            if total > config.max_file_bytes {
                return Kind::Always;
            }
            if first
                && (piece.starts_with(b"\xEF\xBB")
                    || piece.starts_with(b"\xFF\xFE")
                    || piece.starts_with(b"\xFE\xFF"))
            {
                // A byte-order mark (or the start of one): the engine may transcode.
                return Kind::Always;
            }
            first = false;
            if memchr::memchr(0, piece).is_some() {
                return Kind::Binary;
            }
            if kind != Kind::Text {
                continue;
            }
            // Folded once here; lines are cut from the read itself, and
            // only a line across two reads is gathered in `self.lines`.
            let Self {
                buf,
                lines,
                sig,
                pieces,
                ..
            } = self;
            let chunk = &mut buf[..n];
            chunk.make_ascii_lowercase();
            let Some(last) = memchr::memrchr(b'\n', chunk) else {
                if lines.len() + n > LONG_LINE_BYTES - 2 {
                    kind = Kind::Always;
                } else {
                    lines.extend_from_slice(chunk);
                }
                continue;
            };
            // The lines the read completes: the one gathered so far ended
            // by the read's first line end, then those up to its last one
            // (none when that was the only one).
            let text = &chunk[..last];
            let mut rest = Some(text);
            if !lines.is_empty() {
                let end = memchr::memchr(b'\n', text).unwrap_or(last);
                lines.extend_from_slice(&text[..end]);
                let fits = Self::take_lines(lines, sig, pieces, &mut at, emit);
                lines.clear();
                if !fits {
                    kind = Kind::Always;
                    continue;
                }
                rest = text.get(end + 1..);
            }
            if let Some(rest) = rest {
                if !Self::take_lines(rest, sig, pieces, &mut at, emit) {
                    kind = Kind::Always;
                    continue;
                }
            }
            let tail = &chunk[last + 1..];
            if tail.len() > LONG_LINE_BYTES - 2 {
                kind = Kind::Always;
            } else {
                lines.extend_from_slice(tail);
            }
        }
        if kind == Kind::Text {
            if !self.lines.is_empty()
                && !Self::take_lines(&self.lines, &mut self.sig, &mut self.pieces, &mut at, emit)
            {
                kind = Kind::Always;
            }
            if kind == Kind::Text {
                self.sig.pack();
                emit(at.piece, &self.sig);
            }
        }
        // A file with a long line is read to its end all the same: a NUL after
        // it still makes it binary, which the engine skips whole.
        kind
    }

    /// Adds the grams of `text` (whole lines, folded, each followed by a
    /// `\n` in the file but the last) to the current piece, ending pieces at
    /// line ends as they fill. False, at once, for a line over
    /// [`LONG_LINE_BYTES`]` - 2` bytes (the file is then always searched).
    ///
    /// The lines of one piece are hashed as one run, `\n`s included
    /// ([`Signature::add_text`]): a gram across a line end only sets a bit
    /// no query asks for, and the run costs a line search per piece, not
    /// per line.
    fn take_lines(
        text: &[u8],
        sig: &mut Signature,
        pieces: &mut Vec<(u64, u64)>,
        at: &mut Cursor,
        emit: &mut dyn FnMut(u32, &Signature),
    ) -> bool {
        if !lines_within(text, LONG_LINE_BYTES - 2) {
            return false;
        }
        let mut rest = Some(text);
        while let Some(run) = rest {
            let last_piece = at.piece + 1 >= at.slots;
            if at.piece_bytes >= at.piece_size && !last_piece {
                sig.pack();
                emit(at.piece, sig);
                sig.clear_packed();
                at.piece += 1;
                at.piece_bytes = 0;
                pieces.push((at.offset, at.lines + 1));
            }
            // The piece takes lines until its bytes (each line's and its
            // `\n`) reach the piece size: up to the first line end at or
            // past the bytes it still needs, less one.
            let need = usize::try_from(at.piece_size.saturating_sub(at.piece_bytes).max(1))
                .unwrap_or(usize::MAX);
            let end = if last_piece {
                None
            } else {
                run.get(need - 1..)
                    .and_then(|tail| memchr::memchr(b'\n', tail))
                    .map(|i| need - 1 + i)
            };
            let (taken, next) = match end {
                Some(i) => (&run[..i], run.get(i + 1..)),
                None => (run, None),
            };
            sig.add_text(taken);
            let lines = memchr::memchr_iter(b'\n', taken).count() as u64 + 1;
            let len = taken.len() as u64 + 1;
            at.offset += len;
            at.piece_bytes += len;
            at.lines += lines;
            rest = next;
        }
        true
    }
}

/// Whether every line of `text` (the runs between `\n`s) is at most `max`
/// bytes long: a search backwards for the last line end in each window of
/// `max + 1` bytes, so a text of short lines costs a few steps per `max`
/// bytes.
fn lines_within(text: &[u8], max: usize) -> bool {
    let mut start = 0;
    while text.len() - start > max {
        match memchr::memrchr(b'\n', &text[start..=start + max]) {
            Some(i) => start += i + 1,
            None => return false,
        }
    }
    true
}

/// The files a walk of `base` lists, as `grep_content` walks it.
struct Listing {
    files: Vec<Walked>,
    links: Vec<(PathBuf, PathBuf)>,
    inaccessible: bool,
}

fn list(ws: &Workspace, base: &Path, honour_ignores: bool, threads: usize) -> Listing {
    let files = Mutex::new(Vec::new());
    let links = Mutex::new(Vec::new());
    let inaccessible = AtomicBool::new(false);
    let mut builder = ListBuilder {
        files: &files,
        links: &links,
        inaccessible: &inaccessible,
    };
    crate::search::walker(ws, base, honour_ignores, threads)
        .build_parallel()
        .visit(&mut builder);
    let links: Vec<(PathBuf, PathBuf)> = links.into_inner().unwrap_or_else(PoisonError::into_inner);
    let mut files: Vec<Walked> = files.into_inner().unwrap_or_else(PoisonError::into_inner);
    if !links.is_empty() {
        for f in &mut files {
            if links.iter().any(|(link, _)| f.path.starts_with(link)) {
                f.linked = true;
            }
        }
    }
    files.sort_unstable_by(|a, b| path_order(&a.path, &b.path));
    Listing {
        files,
        links,
        inaccessible: inaccessible.into_inner(),
    }
}

/// `Path`'s order (component by component) computed on the bytes: a
/// walked path is normal (no `//`, `.` or trailing `/`), so comparing the
/// bytes with `/` read as the lowest gives the same order, faster (a
/// build sorts every file it lists).
fn path_order(a: &Path, b: &Path) -> std::cmp::Ordering {
    let (a, b) = (a.as_os_str().as_bytes(), b.as_os_str().as_bytes());
    // The common start, eight bytes at a time, then the first difference.
    let n = a.len().min(b.len());
    let mut i = 0;
    while i + 8 <= n && a[i..i + 8] == b[i..i + 8] {
        i += 8;
    }
    while i < n && a[i] == b[i] {
        i += 1;
    }
    let slash_lowest = |c: u8| if c == b'/' { 0 } else { c };
    match (a.get(i), b.get(i)) {
        (Some(&x), Some(&y)) => slash_lowest(x).cmp(&slash_lowest(y)),
        _ => a.len().cmp(&b.len()),
    }
}

struct ListBuilder<'a> {
    files: &'a Mutex<Vec<Walked>>,
    links: &'a Mutex<Vec<(PathBuf, PathBuf)>>,
    inaccessible: &'a AtomicBool,
}

impl<'s> ParallelVisitorBuilder<'s> for ListBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(ListVisitor {
            files: self.files,
            links: self.links,
            inaccessible: self.inaccessible,
            local: Vec::new(),
        })
    }
}

struct ListVisitor<'a> {
    files: &'a Mutex<Vec<Walked>>,
    links: &'a Mutex<Vec<(PathBuf, PathBuf)>>,
    inaccessible: &'a AtomicBool,
    local: Vec<Walked>,
}

impl ParallelVisitor for ListVisitor<'_> {
    fn visit(&mut self, entry: Result<ignore::DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) => {
                let Some(t) = entry.file_type() else {
                    return WalkState::Continue;
                };
                if t.is_file() {
                    if let Ok(meta) = entry.metadata() {
                        let linked = entry.path_is_symlink();
                        self.local.push(from_meta(entry.into_path(), &meta, linked));
                    }
                } else if t.is_dir() && entry.path_is_symlink() && entry.depth() > 0 {
                    if let Ok(target) = std::fs::canonicalize(entry.path()) {
                        self.links
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .push((entry.into_path(), target));
                    }
                }
            }
            Err(e) => {
                if e.io_error()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::PermissionDenied)
                {
                    self.inaccessible.store(true, Ordering::Relaxed);
                }
            }
        }
        WalkState::Continue
    }
}

impl Drop for ListVisitor<'_> {
    fn drop(&mut self) {
        self.files
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .append(&mut self.local);
    }
}

/// The index as a write hook: every path a file tool changed (both ends of
/// a rename) is noted with [`ContentIndex::note_changed`], so the next
/// search reads it again even without a watcher (an index built with
/// [`IndexConfig::with_trusted_writes`]). Adds nothing to the result.
impl crate::fs::AfterWrite for ContentIndex {
    fn changed(
        &self,
        _ctx: &tool_core::ToolContext,
        paths: &[crate::fs::ChangedPath],
    ) -> Option<String> {
        self.note_changed(paths.iter().flat_map(|p| match p {
            crate::fs::ChangedPath::Renamed { from, to } => vec![from.as_path(), to.as_path()],
            other => vec![other.path()],
        }));
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `take_lines` against the rule it keeps, taken line by line: a piece
    /// ends at the first line end at or past the piece size (the last slot
    /// takes the rest), its start's offset and line number are recorded,
    /// and every gram of each of its lines is in its signature. Tiny piece
    /// sizes and texts dense in line ends, handed over in one to three
    /// parts as reads do.
    #[test]
    fn pieces_end_where_the_line_by_line_rule_ends_them() {
        let params = sigs::PARAMS;
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng % n
        };
        for round in 0..3000 {
            let len = next(240) as usize;
            let text: Vec<u8> = (0..len)
                .map(|_| match next(6) {
                    0 | 1 => b'\n',
                    2 => b' ',
                    _ => b'a' + next(4) as u8,
                })
                .collect();
            let piece_size = 1 + next(16);
            let slots = 1 + next(6) as u32;
            // The reference: line by line.
            let mut want_pieces = Vec::new();
            let mut want_lines: Vec<Vec<&[u8]>> = vec![Vec::new()];
            let (mut piece, mut bytes, mut offset, mut lines) = (0u32, 0u64, 0u64, 0u64);
            for line in text.split(|&b| b == b'\n') {
                if bytes >= piece_size && piece + 1 < slots {
                    piece += 1;
                    bytes = 0;
                    want_pieces.push((offset, lines + 1));
                    want_lines.push(Vec::new());
                }
                want_lines[piece as usize].push(line);
                let n = line.len() as u64 + 1;
                offset += n;
                bytes += n;
                lines += 1;
            }
            // The same text in parts cut after line ends.
            let ends: Vec<usize> = text
                .iter()
                .enumerate()
                .filter(|&(_, &b)| b == b'\n')
                .map(|(i, _)| i)
                .collect();
            let parts = if ends.is_empty() { 0 } else { next(3) };
            let mut cuts: Vec<usize> = (0..parts)
                .map(|_| ends[next(ends.len() as u64) as usize])
                .collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut sig = Signature::new(params);
            let mut pieces = Vec::new();
            let mut at = Cursor {
                piece: 0,
                slots,
                piece_bytes: 0,
                offset: 0,
                lines: 0,
                piece_size,
            };
            let mut emitted: Vec<(u32, Vec<u32>)> = Vec::new();
            let mut start = 0;
            for end in cuts.iter().copied().chain(std::iter::once(text.len())) {
                let part = &text[start..end];
                let fits =
                    FileReader::take_lines(part, &mut sig, &mut pieces, &mut at, &mut |p, s| {
                        emitted.push((p, s.ones().collect()));
                    });
                assert!(fits, "round {round}");
                start = end + 1;
            }
            sig.pack();
            emitted.push((at.piece, sig.ones().collect()));
            assert_eq!(
                pieces, want_pieces,
                "round {round}: {text:?} size {piece_size} slots {slots}"
            );
            assert_eq!(
                (at.piece, at.offset, at.lines),
                (piece, offset, lines),
                "round {round}"
            );
            let got: Vec<u32> = emitted.iter().map(|(p, _)| *p).collect();
            assert_eq!(got, (0..=piece).collect::<Vec<_>>(), "round {round}");
            for ((p, ones), lines) in emitted.iter().zip(&want_lines) {
                let mut want = Signature::new(params);
                for line in lines {
                    want.add_text(line);
                }
                want.pack();
                for r in want.ones() {
                    assert!(ones.contains(&r), "round {round}: piece {p} lacks row {r}");
                }
            }
        }
    }

    #[test]
    fn a_line_over_the_limit_is_found_wherever_it_lies() {
        assert!(lines_within(b"", 3));
        assert!(lines_within(b"abc", 3));
        assert!(!lines_within(b"abcd", 3));
        assert!(lines_within(b"abc\nabc\n\nabc", 3));
        assert!(!lines_within(b"abc\nabcd\nabc", 3));
        assert!(!lines_within(b"abc\nab\nabcd", 3));
        assert!(lines_within(b"\n\n\n\n\n\n\n", 0));
        assert!(!lines_within(b"\n\na\n", 0));
    }

    /// A sink that takes `ok` writes, then fails.
    struct Failing {
        ok: std::sync::atomic::AtomicUsize,
        shards: usize,
    }

    impl ShardSink for Failing {
        fn rows(&self, _: u32, _: usize, _: &[u8]) -> std::io::Result<()> {
            let left = self.ok.load(Ordering::SeqCst);
            if left == 0 {
                return Err(std::io::Error::other("disk full"));
            }
            self.ok.store(left - 1, Ordering::SeqCst);
            Ok(())
        }

        fn shard(&mut self, _: &[sigs::EncodedRows]) -> std::io::Result<()> {
            self.shards += 1;
            Ok(())
        }
    }

    /// The writing thread records a shard only after its rows, stops at
    /// the sink's first error (which it returns) and closes the pool, so
    /// that an encoding thread that still takes buffers never waits.
    #[test]
    fn the_writer_stops_at_the_first_error_and_frees_the_encoders() {
        let pool = sigs::BufferPool::new(sigs::ALIGN, 3);
        let (send, writes) = std::sync::mpsc::channel();
        let mut sink = Failing {
            ok: std::sync::atomic::AtomicUsize::new(2),
            shards: 0,
        };
        for first in 0..2 {
            send.send(Write::Rows(0, first, pool.take())).unwrap();
        }
        send.send(Write::Shard(Vec::new())).unwrap();
        send.send(Write::Rows(1, 0, pool.take())).unwrap();
        send.send(Write::Shard(Vec::new())).unwrap();
        let err = write_shards(&writes, &mut sink, &pool).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(sink.shards, 1, "the second shard is not recorded");
        // The two written buffers came back, the failed one's did not:
        // a fourth take would wait past the limit, but the pool is closed.
        let taken: Vec<_> = (0..4).map(|_| pool.take()).collect();
        assert_eq!(taken.len(), 4);
        drop(writes);
        assert!(send.send(Write::Shard(Vec::new())).is_err());
    }

    #[test]
    fn the_listing_order_is_the_order_of_paths() {
        let names = [
            "/w/a",
            "/w/a/b",
            "/w/a-b",
            "/w/a.b",
            "/w/a/b/c",
            "/w/ab",
            "/w/a b",
            "/w/A",
            "/w/a/-",
            "/w/a/.x",
            "/w/\u{e9}",
            "/w/a\u{e9}/b",
            "/w/b",
            "/w/a/b-c/d",
            "/w/a/b/d",
        ];
        let mut by_bytes: Vec<&Path> = names.iter().map(Path::new).collect();
        let mut by_path = by_bytes.clone();
        by_bytes.sort_by(|a, b| path_order(a, b));
        by_path.sort();
        assert_eq!(by_bytes, by_path);
    }

    /// Measurement, not a test: candidates of the bench's selective
    /// patterns on `$CORPUS` (`cargo test --release --lib candidate_counts -- --ignored --nocapture`).
    #[test]
    #[ignore = "needs $CORPUS"]
    fn candidate_counts() {
        let Some(corpus) = std::env::var_os("CORPUS") else {
            return;
        };
        let ws = Workspace::new(std::path::Path::new(&corpus)).unwrap();
        let index = ContentIndex::new(
            &ws,
            IndexConfig::default()
                .with_persist(false)
                .with_watch(false)
                .with_trusted_writes(true)
                .with_piece_bytes(
                    std::env::var("PIECE")
                        .ok()
                        .and_then(|v| v.parse().ok())
                        .unwrap_or(4096),
                ),
        );
        let t = std::time::Instant::now();
        let status = index.build();
        println!("{:?} {status}", Params::current());
        println!("build {:.2} s", t.elapsed().as_secs_f64());
        let patterns: Vec<&str> = include_str!("../../../benches/selective_patterns.txt")
            .lines()
            .filter(|l| !l.is_empty())
            .collect();
        let (mut files, mut bytes) = (Vec::new(), Vec::new());
        for p in patterns {
            let t = std::time::Instant::now();
            let c = index
                .candidates(ws.root(), p, false, 1 << 20)
                .unwrap_or_default();
            let el = t.elapsed();
            let b: u64 = c
                .iter()
                .map(|c| {
                    if c.parts.is_empty() {
                        c.size
                    } else {
                        c.parts.iter().map(|p| p.end - p.start).sum()
                    }
                })
                .sum();
            println!(
                "{p:24} files {:6} bytes {:10} in {:.2} ms",
                c.len(),
                b,
                el.as_secs_f64() * 1e3
            );
            files.push(c.len());
            bytes.push(b);
        }
        files.sort_unstable();
        bytes.sort_unstable();
        println!(
            "total files {} (median {}), bytes {} MiB (median {} KiB)",
            files.iter().sum::<usize>(),
            files[10],
            bytes.iter().sum::<u64>() >> 20,
            bytes[10] >> 10
        );
    }

    /// A workspace of one file of `lines` numbered lines, the one named
    /// `needle` holding `needle_marker`, indexed in pieces of `piece` bytes.
    fn indexed(
        lines: usize,
        needle: usize,
        piece: u64,
    ) -> (tempfile::TempDir, ContentIndex, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let mut text = String::new();
        for n in 1..=lines {
            if n == needle {
                text.push_str(&format!("line {n} holds needle_marker here\n"));
            } else {
                text.push_str(&format!("line {n} of plain text\n"));
            }
        }
        let file = root.join("big.txt");
        std::fs::write(&file, &text).unwrap();
        let ws = Workspace::new(&root).unwrap();
        let index = ContentIndex::new(
            &ws,
            IndexConfig::default()
                .with_min_bytes(0)
                .with_persist(false)
                .with_watch(false)
                .with_trusted_writes(true)
                .with_piece_bytes(piece),
        );
        assert!(matches!(index.build(), IndexStatus::Ready { .. }));
        (dir, index, file)
    }

    #[test]
    fn a_large_file_is_searched_only_in_the_pieces_that_can_match() {
        let (_dir, index, file) = indexed(400, 300, 256);
        let root = file.parent().unwrap().to_path_buf();
        let found = index
            .candidates(&root, "needle_marker", true, LONG_LINE_BYTES)
            .unwrap();
        assert_eq!(found.len(), 1);
        let c = &found[0];
        assert_eq!(c.path, file);
        assert_eq!(c.parts.len(), 1, "{:?}", c.parts);
        let text = std::fs::read(&file).unwrap();
        let part = c.parts[0];
        let piece = &text[part.start as usize..part.end as usize];
        // The piece starts at a line start, holds the match, and is numbered right.
        assert!(part.start == 0 || text[part.start as usize - 1] == b'\n');
        assert_eq!(
            text[..part.start as usize]
                .iter()
                .filter(|&&b| b == b'\n')
                .count() as u64
                + 1,
            part.line
        );
        assert!(piece.windows(13).any(|w| w == b"needle_marker"));
        assert!(piece.len() < 600, "{}", piece.len());
        // Each piece is at least the piece size but the last.
        let Phase::Ready(ready) = &*index.phase() else {
            panic!("not ready");
        };
        let e = &ready.entries[0];
        assert!(e.pieces.len() >= 20, "{}", e.pieces.len());
        assert!(e.pieces.len() < e.slots as usize);
        let mut prev = 0;
        for &(start, _) in &e.pieces {
            assert!(start - prev >= 256, "{start} after {prev}");
            prev = start;
        }
    }

    #[test]
    fn a_file_of_one_piece_or_every_piece_named_is_searched_whole() {
        let (_dir, index, file) = indexed(400, 300, 1 << 20);
        let root = file.parent().unwrap().to_path_buf();
        let found = index
            .candidates(&root, "needle_marker", true, LONG_LINE_BYTES)
            .unwrap();
        assert_eq!(found.len(), 1);
        assert!(found[0].parts.is_empty());
        // `plain text` is in every piece.
        let (_dir, index, file) = indexed(400, 300, 256);
        let found = index
            .candidates(file.parent().unwrap(), "plain text", true, LONG_LINE_BYTES)
            .unwrap();
        assert!(found[0].parts.is_empty(), "{:?}", found[0].parts);
    }
}
