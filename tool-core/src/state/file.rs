//! [`FileStore`]: the embedded [`StateStore`] backend, one append-only log
//! file per [`StateKey`], compacted under a lock.
//!
//! # Layout
//! `<dir>/<space>/<owner>-<hash>.log` with its lock file beside it
//! (`.lock`): `<owner>` is the owner made safe for a file name
//! ([`trace_folder_name`](crate::truncate::trace_folder_name)) and `<hash>`
//! 16 hex digits of FNV-1a over space, owner and workspace, so one trace id
//! used in two workspaces has two files. Folders are created `0700`, files
//! `0600`; a folder, log or lock file that is a symbolic link, belongs to
//! another user or is open to group or others is refused
//! ([`StateErrorKind::Mismatch`]).
//!
//! # The log
//! Line 1 names the key: `{"agent_tools_state":1,"space":…,"owner":…,"workspace":…,"generation":…}`;
//! a log whose first line names another key (a copied or colliding file) is
//! refused, never read. `generation` (16 random hex digits, new for every
//! file written: a new log, each compaction) tells one file from the next
//! at the same path, even when the file system gives the new file the
//! inode number the old one had (which it does at once on ext4 and tmpfs):
//! a reader whose cached header differs from the file's first line parses
//! the file from the start. Logs written without one are read as before. Each later line is one write, `{"at":MS,"k":FIELD,"v":VALUE}`
//! (`"v":null` removes), `at` in milliseconds since the Unix epoch. A write
//! appends one line under an exclusive `flock` of the lock file; a read
//! takes the shared lock and parses only the lines appended since this
//! process last looked (the store keeps the parsed map and the offset per
//! key, and starts over when the log is another file than before, as after
//! another process compacted it). So a read or a write costs the lines new
//! since the last call, not the whole log: the cost of one more ledger
//! entry stays flat as a trace reads thousands of files.
//!
//! A crash in the middle of an append leaves a last line without its
//! newline: readers ignore it and the next writer cuts it off. A damaged
//! line elsewhere makes the whole key [`StateErrorKind::Corrupt`], with the
//! file named: the store does not guess.
//!
//! # Compaction and bounds
//! When the log passes 4 KiB and holds more than four times the bytes of
//! its live entries, or when the next line would cross
//! [`FileStoreLimits::max_log_bytes`], the writer rewrites it under the
//! exclusive lock with only the live, unexpired entries (a new file renamed
//! over the old, so a reader sees the old or the new whole). When even the
//! compacted log, or the entry count, would cross a bound, the write is
//! refused with [`StateErrorKind::Full`] and nothing is dropped: the store
//! refuses rather than forgets.
//!
//! Appends are not `fsync`ed (a compaction is): after a power cut the last
//! writes may be missing, which the users of the store must treat as "not
//! recorded" (the read ledger then asks for a read again, the safe
//! direction). The hash is a name, not a secret: the first line decides.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::FlockOperation;
use serde_json::{Value, json};

use super::{DEFAULT_LIFETIME, StateError, StateErrorKind, StateKey, StateStore};

/// Version written in (and required of) a log's first line.
const FORMAT_VERSION: u64 = 1;

/// Most keys whose parsed logs one `FileStore` keeps in memory (256); the
/// least recently used is dropped from the cache (not from the disk) past it.
const CACHED_KEYS: usize = 256;

/// A log is compacted once it is larger than this (4 KiB) and four times
/// its live entries' bytes. The floor keeps a log of a few entries from
/// being rewritten (and `fsync`ed) every few appends; above it a log never
/// holds more than four times its live bytes plus one line (review 23 F6:
/// the floor was 1 MiB, so 3 001 lines held 2 live entries).
const COMPACT_AFTER_BYTES: u64 = 4 * 1024;

/// The bounds of a [`FileStore`], per key. The defaults hold a read ledger
/// of 65 536 files with room to spare.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FileStoreLimits {
    /// Most live fields in one key's map (default 65 536).
    pub max_entries: usize,
    /// Largest log file, in bytes, after compaction (default 32 MiB).
    pub max_log_bytes: u64,
    /// Longest field, in bytes (default 4096: a Linux path).
    pub max_field_bytes: usize,
    /// Longest value, in bytes (default 64 KiB).
    pub max_value_bytes: usize,
    /// Most keys (logs) per space in the folder (default 10 000): a new key
    /// that would pass it first removes logs unwritten for longer than the
    /// lifetime, then the least recently written logs, until it fits; new
    /// keys are never refused, so a client naming ever new traces cannot
    /// starve the others (review 23 F5: refusing let any loopback client
    /// block every new trace for a day). An evicted trace forgets its state,
    /// which for the read ledger is the safe direction (files must be read
    /// again before an edit). The count is taken and the log created under
    /// a folder lock (`<space>/.keys.lock`), so concurrent creators never
    /// pass the bound.
    pub max_keys: usize,
}

impl Default for FileStoreLimits {
    fn default() -> Self {
        Self {
            max_entries: 65_536,
            max_log_bytes: 32 * 1024 * 1024,
            max_field_bytes: 4096,
            max_value_bytes: 64 * 1024,
            max_keys: 10_000,
        }
    }
}

impl FileStoreLimits {
    /// The defaults with `max_entries` and `max_log_bytes` replaced (for
    /// hosts that want a smaller store, and for tests of the bounds).
    pub fn new(max_entries: usize, max_log_bytes: u64) -> Self {
        Self {
            max_entries,
            max_log_bytes,
            ..Self::default()
        }
    }
}

/// The embedded [`StateStore`]: one append-only log per key under a folder
/// (see the [module docs](self) for the format, locking and bounds).
///
/// Processes sharing the folder share the state; within a process, share
/// one `FileStore` (it caches what it parsed).
#[derive(Debug)]
pub struct FileStore {
    dir: PathBuf,
    limits: FileStoreLimits,
    lifetime: Duration,
    cache: Mutex<Cache>,
}

/// The parsed logs of the keys this process used, at most [`CACHED_KEYS`].
#[derive(Debug, Default)]
struct Cache {
    keys: HashMap<StateKey, Parsed>,
    clock: u64,
}

impl Cache {
    /// The entry of `key`, making room first when the cache is full.
    fn entry(&mut self, key: &StateKey) -> &mut Parsed {
        self.clock += 1;
        if !self.keys.contains_key(key) && self.keys.len() >= CACHED_KEYS {
            let oldest = self
                .keys
                .iter()
                .min_by_key(|(_, p)| p.used)
                .map(|(k, _)| k.clone());
            if let Some(oldest) = oldest {
                self.keys.remove(&oldest);
            }
        }
        let parsed = self.keys.entry(key.clone()).or_default();
        parsed.used = self.clock;
        parsed
    }
}

/// What this process has parsed of one key's log.
#[derive(Debug, Default)]
struct Parsed {
    /// `(device, inode)` of the log parsed; another means start over.
    id: Option<(u64, u64)>,
    /// The first line of the log parsed (empty: not read yet); another
    /// first line in a file of the same inode means start over.
    header: Vec<u8>,
    /// Bytes of the log parsed so far (whole lines only).
    offset: u64,
    map: BTreeMap<String, Entry>,
    /// Bytes the live entries' lines take.
    live_bytes: u64,
    /// When this process last used the key (a counter), for the cache's bound.
    used: u64,
}

#[derive(Debug, Clone)]
struct Entry {
    value: String,
    at_ms: u64,
    line_bytes: u64,
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis(),
    )
    .unwrap_or(u64::MAX)
}

/// FNV-1a, 64 bits: a stable name for a key's file (not a secret, not a
/// check: the log's first line is).
fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for part in parts {
        for byte in part.iter().chain(&[0u8]) {
            hash ^= u64::from(*byte);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    hash
}

impl FileStore {
    /// A store in `dir` (created `0700` at the first write), with the
    /// default [`FileStoreLimits`] and [`DEFAULT_LIFETIME`]. The usual
    /// `dir` is [`state_dir`](super::state_dir).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self {
            dir: dir.into(),
            limits: FileStoreLimits::default(),
            lifetime: DEFAULT_LIFETIME,
            cache: Mutex::new(Cache::default()),
        }
    }

    /// The store with other bounds.
    #[must_use]
    pub fn with_limits(mut self, limits: FileStoreLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The store with another value lifetime.
    #[must_use]
    pub fn with_lifetime(mut self, lifetime: Duration) -> Self {
        self.lifetime = lifetime;
        self
    }

    /// The folder the store keeps its files in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The log file of `key` (it may not exist yet).
    pub fn log_path(&self, key: &StateKey) -> PathBuf {
        let mut name = crate::truncate::trace_folder_name(Some(key.owner()))
            .chars()
            .take(64)
            .collect::<String>();
        let hash = fnv1a(&[
            key.space().as_bytes(),
            key.owner().as_bytes(),
            key.workspace().as_os_str().as_encoded_bytes(),
        ]);
        name.push_str(&format!("-{hash:016x}.log"));
        self.dir.join(key.space()).join(name)
    }

    fn lifetime_ms(&self) -> u64 {
        u64::try_from(self.lifetime.as_millis()).unwrap_or(u64::MAX)
    }

    fn live(&self, entry: &Entry, now: u64) -> bool {
        now.saturating_sub(entry.at_ms) <= self.lifetime_ms()
    }

    /// Runs `f` on `key`'s freshly parsed map under the lock of its log
    /// (`exclusive` for writes, which also get the open log).
    fn with_key<T>(
        &self,
        key: &StateKey,
        exclusive: bool,
        f: impl FnOnce(&Self, &mut Parsed, Option<&mut File>, &Path) -> Result<T, StateError>,
    ) -> Result<T, StateError> {
        let log = self.log_path(key);
        let folder = log.parent().unwrap_or(&self.dir).to_path_buf();
        if exclusive {
            for dir in [&self.dir, &folder] {
                crate::truncate::ensure_private_dir(dir).map_err(|e| dir_error(dir, e))?;
            }
        } else if std::fs::symlink_metadata(&log).is_err() {
            // Nothing written yet for this key (or no folder): empty.
            let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
            let parsed = cache.entry(key);
            *parsed = Parsed::default();
            return f(self, parsed, None, &log);
        } else {
            for dir in [&self.dir, &folder] {
                crate::truncate::check_private_dir(dir).map_err(|e| dir_error(dir, e))?;
            }
        }
        let lock_path = log.with_extension("lock");
        let lock = open_private(&lock_path, true, false)?;
        let op = if exclusive {
            FlockOperation::LockExclusive
        } else {
            FlockOperation::LockShared
        };
        rustix::fs::flock(&lock, op).map_err(|e| StateError::io("lock", &lock_path, e.into()))?;
        // Held until the new log exists, so the count stays within bounds.
        let _room = if exclusive && std::fs::symlink_metadata(&log).is_err() {
            Some(self.make_room(&folder, &log)?)
        } else {
            None
        };
        let mut cache = self.cache.lock().unwrap_or_else(PoisonError::into_inner);
        let parsed = cache.entry(key);
        let mut file = match open_private(&log, exclusive, exclusive) {
            Ok(file) => file,
            Err(e) if !exclusive && e.kind() == StateErrorKind::Io => {
                // Removed between the look and the lock: empty.
                *parsed = Parsed::default();
                return f(self, parsed, None, &log);
            }
            Err(e) => return Err(e),
        };
        self.refresh(key, parsed, &mut file, &log, exclusive)?;
        let out = f(self, parsed, Some(&mut file), &log);
        drop(lock);
        out
    }

    /// Before a new key's log (`log`) is created in `folder`: takes the
    /// folder's key lock (returned; hold it until the log exists) and, when
    /// the folder holds [`FileStoreLimits::max_keys`] logs, removes logs
    /// unwritten for longer than the lifetime, then the least recently
    /// written ones, until one more fits.
    fn make_room(&self, folder: &Path, log: &Path) -> Result<File, StateError> {
        let lock_path = folder.join(".keys.lock");
        let lock = open_private(&lock_path, true, false)?;
        rustix::fs::flock(&lock, FlockOperation::LockExclusive)
            .map_err(|e| StateError::io("lock", &lock_path, e.into()))?;
        let mut found: Vec<(PathBuf, Option<SystemTime>)> = std::fs::read_dir(folder)
            .map(|read| {
                read.filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| p.extension().is_some_and(|x| x == "log") && p != log)
                    .map(|p| {
                        let modified = std::fs::symlink_metadata(&p)
                            .and_then(|m| m.modified())
                            .ok();
                        (p, modified)
                    })
                    .collect()
            })
            .unwrap_or_default();
        if found.len() < self.limits.max_keys {
            return Ok(lock);
        }
        // Oldest first (unknown times count as oldest); expired ones are
        // among the oldest, so one pass removes them first.
        found.sort_by_key(|(_, modified)| *modified);
        let excess = found.len() + 1 - self.limits.max_keys.max(1);
        for (path, _) in found.iter().take(excess) {
            let _ = std::fs::remove_file(path);
            let _ = std::fs::remove_file(path.with_extension("lock"));
        }
        Ok(lock)
    }

    /// Brings `parsed` up to date with the log `file`: from the start when
    /// it is another file than last time, else from the last offset.
    fn refresh(
        &self,
        key: &StateKey,
        parsed: &mut Parsed,
        file: &mut File,
        log: &Path,
        exclusive: bool,
    ) -> Result<(), StateError> {
        let meta = file
            .metadata()
            .map_err(|e| StateError::io("inspect", log, e))?;
        let id = (meta.dev(), meta.ino());
        // The same inode number may be another file (a compaction by another
        // process freed it and a later one got it): compare the first line.
        let replaced =
            parsed.id == Some(id) && !parsed.header.is_empty() && meta.len() >= parsed.offset && {
                let mut first = vec![0; parsed.header.len()];
                std::os::unix::fs::FileExt::read_exact_at(&*file, &mut first, 0).is_err()
                    || first != parsed.header
            };
        if replaced || parsed.id != Some(id) || meta.len() < parsed.offset {
            *parsed = Parsed {
                id: Some(id),
                used: parsed.used,
                ..Parsed::default()
            };
        }
        if meta.len() == 0 {
            if exclusive {
                let header = header_line(key);
                file.write_all(header.as_bytes())
                    .map_err(|e| StateError::io("write", log, e))?;
                parsed.offset = header.len() as u64;
                parsed.header = header.into_bytes();
            }
            return Ok(());
        }
        if meta.len() == parsed.offset {
            return Ok(());
        }
        file.seek(SeekFrom::Start(parsed.offset))
            .map_err(|e| StateError::io("read", log, e))?;
        let mut bytes =
            Vec::with_capacity(usize::try_from(meta.len() - parsed.offset).unwrap_or(0));
        Read::by_ref(file)
            .take(self.limits.max_log_bytes.saturating_mul(2))
            .read_to_end(&mut bytes)
            .map_err(|e| StateError::io("read", log, e))?;
        let whole = bytes.iter().rposition(|b| *b == b'\n').map_or(0, |i| i + 1);
        let mut at = 0;
        for line in bytes[..whole].split_inclusive(|b| *b == b'\n') {
            let start = parsed.offset + at as u64;
            at += line.len();
            if start == 0 {
                check_header(key, line, log)?;
                parsed.header = line.to_vec();
                continue;
            }
            apply(parsed, line, log, start)?;
        }
        parsed.offset += whole as u64;
        if whole < bytes.len() && exclusive {
            // A crash cut the last append short: drop the fragment.
            file.set_len(parsed.offset)
                .map_err(|e| StateError::io("repair", log, e))?;
        }
        Ok(())
    }

    /// Appends the write of `field` (`None` removes it) to the open log,
    /// compacting first when due and refusing when a bound would be crossed.
    fn append(
        &self,
        parsed: &mut Parsed,
        file: &mut File,
        log: &Path,
        key: &StateKey,
        field: &str,
        value: Option<&str>,
    ) -> Result<(), StateError> {
        let now = now_ms();
        let line = format!("{}\n", json!({"at": now, "k": field, "v": value}));
        let line_bytes = line.len() as u64;
        let is_new = parsed.map.get(field).is_none_or(|e| !self.live(e, now));
        if value.is_some() && is_new {
            let live = parsed.map.values().filter(|e| self.live(e, now)).count();
            if live >= self.limits.max_entries {
                return Err(StateError::new(
                    StateErrorKind::Full,
                    format!(
                        "the {} state of `{}` holds {live} entries, the most it may ({}); \
                         nothing was written and nothing was forgotten. Start a new trace id \
                         (or wait for entries to expire, {} h after their last write).",
                        key.space(),
                        key.owner(),
                        self.limits.max_entries,
                        self.lifetime.as_secs() / 3600
                    ),
                ));
            }
        }
        let due = parsed.offset > COMPACT_AFTER_BYTES
            && parsed.offset > parsed.live_bytes.saturating_mul(4);
        if due || parsed.offset + line_bytes > self.limits.max_log_bytes {
            self.compact(parsed, file, log, key, now)?;
        }
        if parsed.offset + line_bytes > self.limits.max_log_bytes {
            return Err(StateError::new(
                StateErrorKind::Full,
                format!(
                    "the {} state of `{}` would pass its {} bytes with this write (its live \
                     entries take {} bytes); nothing was written and nothing was forgotten. \
                     Start a new trace id.",
                    key.space(),
                    key.owner(),
                    self.limits.max_log_bytes,
                    parsed.live_bytes
                ),
            ));
        }
        file.seek(SeekFrom::Start(parsed.offset))
            .and_then(|_| file.write_all(line.as_bytes()))
            .map_err(|e| StateError::io("write", log, e))?;
        let start = parsed.offset;
        apply(parsed, line.as_bytes(), log, start)?;
        parsed.offset += line_bytes;
        Ok(())
    }

    /// Rewrites the log with its live entries only (a new file renamed over it).
    fn compact(
        &self,
        parsed: &mut Parsed,
        file: &mut File,
        log: &Path,
        key: &StateKey,
        now: u64,
    ) -> Result<(), StateError> {
        let mut text = header_line(key);
        let header = text.as_bytes().to_vec();
        let mut kept = BTreeMap::new();
        let mut live_bytes = 0;
        for (field, entry) in &parsed.map {
            if !self.live(entry, now) {
                continue;
            }
            let line = format!(
                "{}\n",
                json!({"at": entry.at_ms, "k": field, "v": entry.value})
            );
            live_bytes += line.len() as u64;
            text.push_str(&line);
            kept.insert(
                field.clone(),
                Entry {
                    line_bytes: line.len() as u64,
                    ..entry.clone()
                },
            );
        }
        let tmp = log.with_extension("log.tmp");
        let _ = std::fs::remove_file(&tmp);
        let mut out = open_private(&tmp, true, true)?;
        out.write_all(text.as_bytes())
            .and_then(|()| out.sync_data())
            .map_err(|e| StateError::io("compact", &tmp, e))?;
        std::fs::rename(&tmp, log).map_err(|e| StateError::io("compact", log, e))?;
        let meta = out
            .metadata()
            .map_err(|e| StateError::io("inspect", log, e))?;
        *file = out;
        *parsed = Parsed {
            id: Some((meta.dev(), meta.ino())),
            header,
            offset: text.len() as u64,
            map: kept,
            live_bytes,
            used: parsed.used,
        };
        Ok(())
    }

    fn check_field(&self, field: &str, value: Option<&str>) -> Result<(), StateError> {
        if field.is_empty() || field.len() > self.limits.max_field_bytes {
            return Err(StateError::invalid(format!(
                "a state field is 1 to {} bytes; this one is {} bytes",
                self.limits.max_field_bytes,
                field.len()
            )));
        }
        if let Some(v) = value
            && v.len() > self.limits.max_value_bytes
        {
            return Err(StateError::invalid(format!(
                "a state value is at most {} bytes; this one is {} bytes",
                self.limits.max_value_bytes,
                v.len()
            )));
        }
        Ok(())
    }

    fn current(&self, parsed: &Parsed, field: &str) -> Option<String> {
        let now = now_ms();
        parsed
            .map
            .get(field)
            .filter(|e| self.live(e, now))
            .map(|e| e.value.clone())
    }
}

impl StateStore for FileStore {
    fn get(&self, key: &StateKey, field: &str) -> Result<Option<String>, StateError> {
        self.with_key(key, false, |s, parsed, _, _| Ok(s.current(parsed, field)))
    }

    fn put(&self, key: &StateKey, field: &str, value: &str) -> Result<(), StateError> {
        self.check_field(field, Some(value))?;
        self.with_key(key, true, |s, parsed, file, log| match file {
            Some(file) => s.append(parsed, file, log, key, field, Some(value)),
            None => Ok(()),
        })
    }

    fn delete(&self, key: &StateKey, field: &str) -> Result<(), StateError> {
        self.check_field(field, None)?;
        self.with_key(key, true, |s, parsed, file, log| match file {
            Some(file) if parsed.map.contains_key(field) => {
                s.append(parsed, file, log, key, field, None)
            }
            _ => Ok(()),
        })
    }

    fn compare_and_set(
        &self,
        key: &StateKey,
        field: &str,
        expected: Option<&str>,
        new: Option<&str>,
    ) -> Result<bool, StateError> {
        self.check_field(field, new)?;
        self.with_key(key, true, |s, parsed, file, log| {
            if s.current(parsed, field).as_deref() != expected {
                return Ok(false);
            }
            if let Some(file) = file {
                if new.is_some() || parsed.map.contains_key(field) {
                    s.append(parsed, file, log, key, field, new)?;
                }
            }
            Ok(true)
        })
    }

    fn entries(&self, key: &StateKey) -> Result<Vec<(String, String)>, StateError> {
        self.with_key(key, false, |s, parsed, _, _| {
            let now = now_ms();
            Ok(parsed
                .map
                .iter()
                .filter(|(_, e)| s.live(e, now))
                .map(|(k, e)| (k.clone(), e.value.clone()))
                .collect())
        })
    }

    fn lifetime(&self) -> Duration {
        self.lifetime
    }
}

/// The first line of a new log of `key`, with a fresh random `generation`.
fn header_line(key: &StateKey) -> String {
    let mut nonce = [0u8; 8];
    if getrandom::fill(&mut nonce).is_err() {
        // No entropy source: the clock and the process still tell files apart.
        let t = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos() as u64;
        nonce = (t ^ u64::from(std::process::id()).rotate_left(40)).to_le_bytes();
    }
    let generation: String = nonce.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}\n",
        json!({
            "agent_tools_state": FORMAT_VERSION,
            "space": key.space(),
            "owner": key.owner(),
            "workspace": key.workspace().to_string_lossy(),
            "generation": generation,
        })
    )
}

fn check_header(key: &StateKey, line: &[u8], log: &Path) -> Result<(), StateError> {
    let found: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
    if found["agent_tools_state"] == FORMAT_VERSION
        && found["space"] == key.space()
        && found["owner"] == key.owner()
        && found["workspace"] == *key.workspace().to_string_lossy()
    {
        return Ok(());
    }
    if found["agent_tools_state"] != FORMAT_VERSION {
        return Err(StateError::new(
            StateErrorKind::Corrupt,
            format!(
                "the state file {} does not start with a version-{FORMAT_VERSION} header; \
                 remove it to start this trace's {} state over",
                log.display(),
                key.space()
            ),
        ));
    }
    Err(StateError::new(
        StateErrorKind::Mismatch,
        format!(
            "refusing the state file {}: it belongs to owner `{}` in workspace {}, not to `{}` \
             in {} (a copied or stray file); remove it",
            log.display(),
            found["owner"].as_str().unwrap_or("?"),
            found["workspace"].as_str().unwrap_or("?"),
            key.owner(),
            key.workspace().display()
        ),
    ))
}

/// Applies one log line (starting at byte `start` of the log) to `parsed`.
fn apply(parsed: &mut Parsed, line: &[u8], log: &Path, start: u64) -> Result<(), StateError> {
    let corrupt = || {
        StateError::new(
            StateErrorKind::Corrupt,
            format!(
                "the state file {} is damaged at byte {start}; remove it to start this \
                 trace's state over",
                log.display()
            ),
        )
    };
    let record: Value = serde_json::from_slice(line).map_err(|_| corrupt())?;
    let (Some(at_ms), Some(field)) = (record["at"].as_u64(), record["k"].as_str()) else {
        return Err(corrupt());
    };
    if let Some(old) = parsed.map.remove(field) {
        parsed.live_bytes = parsed.live_bytes.saturating_sub(old.line_bytes);
    }
    match &record["v"] {
        Value::Null => {}
        Value::String(value) => {
            let line_bytes = line.len() as u64;
            parsed.live_bytes += line_bytes;
            parsed.map.insert(
                field.to_owned(),
                Entry {
                    value: value.clone(),
                    at_ms,
                    line_bytes,
                },
            );
        }
        _ => return Err(corrupt()),
    }
    Ok(())
}

/// Opens a state file without following a symbolic link, creating it `0600`
/// when `create`; refuses one that is not a regular file of this user
/// closed to group and others.
fn open_private(path: &Path, create: bool, write: bool) -> Result<File, StateError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(write || create)
        .create(create)
        .truncate(false)
        .mode(0o600)
        .custom_flags((rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::CLOEXEC).bits() as i32)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(rustix::io::Errno::LOOP.raw_os_error()) {
                StateError::new(
                    StateErrorKind::Mismatch,
                    format!(
                        "refusing the state file {}: it is a symbolic link; remove it",
                        path.display()
                    ),
                )
            } else {
                StateError::io("open", path, e)
            }
        })?;
    let meta = file
        .metadata()
        .map_err(|e| StateError::io("inspect", path, e))?;
    let uid = rustix::process::geteuid().as_raw();
    if !meta.is_file() || meta.uid() != uid || meta.mode() & 0o077 != 0 {
        return Err(StateError::new(
            StateErrorKind::Mismatch,
            format!(
                "refusing the state file {}: it must be a regular file of user {uid} with mode \
                 0600 (it is {}, user {}, mode {:04o}); remove it",
                path.display(),
                if meta.is_file() {
                    "a file"
                } else {
                    "not a regular file"
                },
                meta.uid(),
                meta.mode() & 0o7777
            ),
        ));
    }
    Ok(file)
}

fn dir_error(dir: &Path, e: std::io::Error) -> StateError {
    if e.kind() == std::io::ErrorKind::PermissionDenied {
        StateError::new(StateErrorKind::Mismatch, e.to_string())
    } else {
        StateError::io("use the folder of", dir, e)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(owner: &str) -> StateKey {
        StateKey::new("ledger", owner, "/ws").unwrap()
    }

    #[test]
    fn values_persist_across_stores_and_appends_are_incremental() {
        let dir = tempfile::tempdir().unwrap();
        let a = FileStore::new(dir.path().join("s"));
        let b = FileStore::new(dir.path().join("s"));
        a.put(&key("t"), "f1", "one").unwrap();
        assert_eq!(b.get(&key("t"), "f1").unwrap().as_deref(), Some("one"));
        b.put(&key("t"), "f1", "two").unwrap();
        b.put(&key("t"), "f2", "x").unwrap();
        assert_eq!(a.get(&key("t"), "f1").unwrap().as_deref(), Some("two"));
        a.delete(&key("t"), "f2").unwrap();
        assert_eq!(
            b.entries(&key("t")).unwrap(),
            [("f1".to_owned(), "two".to_owned())]
        );
        // Header plus four writes: one line each, nothing rewritten.
        let text = std::fs::read_to_string(a.log_path(&key("t"))).unwrap();
        assert_eq!(text.lines().count(), 5, "{text}");
    }

    #[test]
    fn full_store_refuses_and_keeps_everything() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStore::new(dir.path().join("s")).with_limits(FileStoreLimits::new(3, 1 << 20));
        for f in ["a", "b", "c"] {
            s.put(&key("t"), f, "v").unwrap();
        }
        let err = s.put(&key("t"), "d", "v").unwrap_err();
        assert_eq!(err.kind(), StateErrorKind::Full);
        assert!(err.to_string().contains("holds 3 entries"), "{err}");
        // Overwriting an existing field is still fine; all three are kept.
        s.put(&key("t"), "a", "w").unwrap();
        assert_eq!(
            FileStore::new(dir.path().join("s"))
                .entries(&key("t"))
                .unwrap()
                .len(),
            3
        );
    }

    #[test]
    fn log_is_compacted_under_its_byte_bound_then_refuses() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStore::new(dir.path().join("s")).with_limits(FileStoreLimits::new(1000, 2000));
        for i in 0..200 {
            s.put(&key("t"), "same", &format!("value {i}")).unwrap();
        }
        let log = s.log_path(&key("t"));
        assert!(std::fs::metadata(&log).unwrap().len() <= 2000);
        assert_eq!(
            FileStore::new(dir.path().join("s"))
                .get(&key("t"), "same")
                .unwrap()
                .as_deref(),
            Some("value 199")
        );
        let big = "x".repeat(1500);
        let mut refused = None;
        for i in 0..10 {
            if let Err(e) = s.put(&key("t"), &format!("f{i}"), &big) {
                refused = Some((i, e));
                break;
            }
        }
        let (i, e) = refused.expect("the byte bound is reached");
        assert_eq!(e.kind(), StateErrorKind::Full, "{e}");
        // Header, `same` and one 1500-byte value fit in 2000 bytes; two do not.
        assert_eq!(i, 1);
        assert!(s.get(&key("t"), "f0").unwrap().is_some());
        assert_eq!(
            s.get(&key("t"), "same").unwrap().as_deref(),
            Some("value 199")
        );
    }

    /// Two stores on one folder (two processes) taking turns on one key
    /// whose log is compacted every few writes: each compaction frees an
    /// inode number the next one often gets again, so a store that knew
    /// files by inode alone read the new log from its old offset
    /// ("damaged at byte N"). Each must read the other's last write.
    #[test]
    fn stores_in_turn_read_each_others_compacted_logs() {
        let dir = tempfile::tempdir().unwrap();
        let stores = [
            FileStore::new(dir.path().join("s")),
            FileStore::new(dir.path().join("s")),
        ];
        let k = key("shared");
        let mut last: Option<String> = None;
        let mut i = 0;
        for turn in 0..120 {
            // Turns of 1 to 13 writes: several compactions in one turn.
            let store = &stores[turn % 2];
            for _ in 0..=turn % 13 {
                let seen = store.get(&k, "f").unwrap();
                assert_eq!(seen, last, "write {i}");
                // A value of 0 to 800 bytes: compactions come often.
                let value = format!("{i:04}-{}", "x".repeat(20 * (i % 40)));
                assert!(
                    store
                        .compare_and_set(&k, "f", last.as_deref(), Some(&value))
                        .unwrap()
                );
                last = Some(value);
                i += 1;
            }
        }
    }

    #[test]
    fn a_log_of_another_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStore::new(dir.path().join("s"));
        s.put(&key("victim"), "f", "secret").unwrap();
        std::fs::copy(s.log_path(&key("victim")), s.log_path(&key("thief"))).unwrap();
        let err = FileStore::new(dir.path().join("s"))
            .get(&key("thief"), "f")
            .unwrap_err();
        assert_eq!(err.kind(), StateErrorKind::Mismatch);
        assert!(
            err.to_string().contains("belongs to owner `victim`"),
            "{err}"
        );
        // Same owner, other workspace: another file, empty.
        let elsewhere = StateKey::new("ledger", "victim", "/other").unwrap();
        assert_eq!(s.get(&elsewhere, "f").unwrap(), None);
    }

    #[test]
    fn a_torn_last_line_is_ignored_and_cut_by_the_next_write() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStore::new(dir.path().join("s"));
        s.put(&key("t"), "a", "1").unwrap();
        let log = s.log_path(&key("t"));
        let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        f.write_all(br#"{"at":1,"k":"b","#).unwrap();
        let fresh = FileStore::new(dir.path().join("s"));
        assert_eq!(fresh.get(&key("t"), "a").unwrap().as_deref(), Some("1"));
        fresh.put(&key("t"), "c", "3").unwrap();
        assert_eq!(
            FileStore::new(dir.path().join("s"))
                .entries(&key("t"))
                .unwrap()
                .len(),
            2
        );
        // A damaged middle line is an error, not an empty store.
        std::fs::write(&log, format!("{}garbage\n", header_line(&key("t")))).unwrap();
        let err = FileStore::new(dir.path().join("s"))
            .get(&key("t"), "a")
            .unwrap_err();
        assert_eq!(err.kind(), StateErrorKind::Corrupt, "{err}");
    }

    #[test]
    fn new_keys_past_the_bound_evict_the_least_recently_written() {
        let dir = tempfile::tempdir().unwrap();
        let limits = FileStoreLimits {
            max_keys: 3,
            ..FileStoreLimits::default()
        };
        let s = FileStore::new(dir.path().join("s")).with_limits(limits);
        let logs = || {
            std::fs::read_dir(dir.path().join("s/ledger"))
                .unwrap()
                .filter(|e| {
                    e.as_ref()
                        .unwrap()
                        .path()
                        .extension()
                        .is_some_and(|x| x == "log")
                })
                .count()
        };
        for owner in ["a", "b", "c"] {
            s.put(&key(owner), "f", "1").unwrap();
            // Distinct modification times (coarse file systems).
            std::thread::sleep(Duration::from_millis(20));
        }
        // `a` written again: now `b` is the least recently written.
        s.put(&key("a"), "g", "2").unwrap();
        std::thread::sleep(Duration::from_millis(20));
        // Review 23 F5: a flood of new keys never refuses and never passes
        // the bound; the most recently written survive.
        for i in 0..20 {
            s.put(&key(&format!("flood{i}")), "f", "1").unwrap();
            assert!(logs() <= 3, "{} logs after flood{i}", logs());
        }
        assert_eq!(logs(), 3);
        let fresh = FileStore::new(dir.path().join("s")).with_limits(limits);
        assert!(fresh.entries(&key("b")).unwrap().is_empty());
        assert_eq!(fresh.entries(&key("flood19")).unwrap().len(), 1);
    }

    #[test]
    fn a_log_is_compacted_at_four_times_its_live_entries() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStore::new(dir.path().join("s"));
        for i in 0..3000 {
            s.put(
                &key("t"),
                if i % 2 == 0 { "a" } else { "b" },
                &i.to_string(),
            )
            .unwrap();
        }
        let log = s.log_path(&key("t"));
        let lines = std::fs::read_to_string(&log).unwrap().lines().count();
        // Review 23 F6: 3 001 lines for 2 live entries before; now at most
        // the 4 KiB floor's worth of ~40-byte lines.
        assert!(lines < 4096 / 30, "{lines} lines for 2 live entries");
        assert_eq!(s.get(&key("t"), "b").unwrap().as_deref(), Some("2999"));
        let reopened = FileStore::new(dir.path().join("s"));
        assert_eq!(
            reopened.get(&key("t"), "a").unwrap().as_deref(),
            Some("2998")
        );
    }

    #[test]
    fn expired_values_read_as_absent_and_compare_and_set_sees_them_so() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileStore::new(dir.path().join("s")).with_lifetime(Duration::ZERO);
        s.put(&key("t"), "a", "1").unwrap();
        std::thread::sleep(Duration::from_millis(5));
        assert_eq!(s.get(&key("t"), "a").unwrap(), None);
        assert!(s.compare_and_set(&key("t"), "a", None, Some("2")).unwrap());
    }
}
