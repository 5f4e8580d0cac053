//! The one write path of every tool that changes files: resolve beneath the
//! workspace → lock the folder → check the read-before-write ledger against
//! the bytes on disk → write atomically → record the new content → report
//! the change.
//!
//! **Locking.** The folder that holds the file is locked with `flock`
//! (exclusive) for the whole check-and-replace. The lock is on the folder,
//! not on the file, because an atomic write replaces the file's inode: a lock
//! on the old inode would not stop a second writer who opened the new one.
//! `flock` locks belong to an open file description, so two calls in one
//! process exclude each other just as two processes do (`tool batch`
//! processes, `tool serve` processes, agents in one host). Folders are
//! locked in (device, inode) order, so calls that lock several cannot
//! deadlock; a lock that stays taken for [`LOCK_WAIT`] gives up with an
//! error instead of hanging. Programs that do not take the lock (an editor)
//! are still caught by the content check, up to the short window between
//! the check and the rename.
//!
//! **The ledger check** compares a hash of the bytes read under the lock
//! with the hash recorded when the model read the file; modification times
//! are not trusted (a second write within the filesystem's timestamp
//! granularity keeps the mtime, and an edit can keep the size).

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustix::fs::{FileType, FlockOperation};
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult};

use super::beneath::{Beneath, Missing};
use super::diff::Diff;
use crate::fs::changes::Before;
use crate::fs::ledger::{ContentHasher, FileLedger, LedgerError, Stamp};
use crate::fs::workspace::{PathError, Workspace};

/// Longest wait for another writer's folder lock: 10 seconds.
pub(crate) const LOCK_WAIT: Duration = Duration::from_secs(10);

/// An exclusive `flock` on a folder, released on drop.
#[derive(Debug)]
pub(crate) struct DirLock {
    _fd: OwnedFd,
}

/// Locks the folders `dirs` (readable folder handles) in (device, inode)
/// order, each once, waiting at most [`LOCK_WAIT`] in all.
///
/// # Errors
/// `WouldBlock` with a message when a lock stays taken; any error of `flock`.
pub(crate) fn lock_dirs(dirs: Vec<OwnedFd>) -> io::Result<Vec<DirLock>> {
    let mut keyed = Vec::with_capacity(dirs.len());
    for fd in dirs {
        let st = rustix::fs::fstat(&fd)?;
        keyed.push(((st.st_dev, st.st_ino), fd));
    }
    keyed.sort_by_key(|(k, _)| *k);
    keyed.dedup_by_key(|(k, _)| *k);
    let deadline = Instant::now() + LOCK_WAIT;
    let mut locks = Vec::with_capacity(keyed.len());
    for (_, fd) in keyed {
        let mut pause = Duration::from_millis(1);
        loop {
            match rustix::fs::flock(&fd, FlockOperation::NonBlockingLockExclusive) {
                Ok(()) => break,
                Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => {
                    if Instant::now() >= deadline {
                        return Err(io::Error::new(
                            io::ErrorKind::WouldBlock,
                            format!(
                                "another writer held the folder's lock for more than {} s; \
                                 nothing was written, try again",
                                LOCK_WAIT.as_secs()
                            ),
                        ));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                Err(e) => return Err(e.into()),
            }
        }
        locks.push(DirLock { _fd: fd });
    }
    Ok(locks)
}

/// What a tool that changes one file needs from its context: the workspace,
/// the ledger and the file's planned path (for the title and messages).
pub(crate) struct WriteTarget {
    pub(crate) ws: tool_core::State<Workspace>,
    pub(crate) ledger: tool_core::State<FileLedger>,
    /// Where the path resolves now (not yet opened; see [`WriteTarget::open`]).
    pub(crate) path: PathBuf,
    model_path: String,
}

impl WriteTarget {
    /// Looks up the workspace and the ledger and resolves `file_path` inside the workspace.
    ///
    /// # Errors
    /// The model-facing result for a missing workspace or ledger, or a path outside the workspace.
    pub(crate) fn new(ctx: &ToolContext, file_path: &str) -> Result<Self, ToolError> {
        let ws = crate::fs::workspace::workspace_of(ctx)?;
        let ledger = crate::fs::ledger::ledger_of(ctx)?;
        if file_path.ends_with('/') && !file_path.trim().is_empty() {
            return Err(ToolError::new(
                ErrorKind::InvalidArguments,
                format!(
                    "{} ends with `/`, so it names a folder; give the path of a file.",
                    tool_rules::text::clip(file_path, crate::fs::MESSAGE_VALUE).into_owned()
                ),
            ));
        }
        let path = ws.resolve_for_write(file_path)?;
        Ok(Self {
            ws,
            ledger,
            path,
            model_path: file_path.to_owned(),
        })
    }

    /// The title of the call: the path relative to the workspace root.
    pub(crate) fn title(&self) -> String {
        self.ws.relative(&self.path).display().to_string()
    }

    /// The preamble and frame of every one-file write: resolves `file_path`
    /// ([`WriteTarget::new`]), takes the ledger's in-process lock of the
    /// path, runs `work` on a blocking thread (where it opens, checks and
    /// commits through [`WriteTarget::open`]) and titles the result with
    /// the path relative to the workspace.
    pub(crate) async fn run(
        ctx: &ToolContext,
        file_path: &str,
        work: impl FnOnce(&ToolContext, &WriteTarget) -> Result<ToolResult, ToolError> + Send + 'static,
    ) -> Result<ToolResult, ToolError> {
        let target = Self::new(ctx, file_path)?;
        let _lock = target.ledger.lock(&target.path).await;
        let ctx = ctx.clone();
        let title = target.title();
        let result = tool_core::run_blocking(move || work(&ctx, &target))
            .await
            .and_then(|r| r)
            .unwrap_or_else(ToolResult::from);
        Ok(result.with_title(title))
    }

    /// Resolves the path beneath the workspace again (creating missing
    /// folders when `create_parents`), locks its folder and reads what is
    /// there now. Blocking: call it on a blocking thread.
    ///
    /// Then applies the read-before-write rule to those bytes
    /// ([`Locked::check`]).
    ///
    /// # Errors
    /// The model-facing result: outside the workspace, a folder or special
    /// file in the way, a read-only file, a lock that stays taken, an I/O
    /// error (all `failed`); a file not read first or changed since
    /// ([`LedgerError`]'s kinds).
    pub(crate) fn open(&self, verb: &str, create_parents: bool) -> Result<Locked, ToolError> {
        let missing = if create_parents {
            Missing::CreateParents
        } else {
            Missing::AllowLast
        };
        let beneath = self
            .ws
            .beneath_for_write(&self.model_path, missing)
            .map_err(|e| ToolError::new(ErrorKind::Failed, e.to_string()))?;
        let locked =
            Locked::new(beneath, verb).map_err(|m| ToolError::new(ErrorKind::Failed, m))?;
        locked.check(&self.ledger)?;
        Ok(locked)
    }
}

/// A file with its folder locked: what it holds now, ready to be replaced.
#[derive(Debug)]
pub(crate) struct Locked {
    beneath: Beneath,
    _lock: Vec<DirLock>,
    /// The physical path.
    pub(crate) path: PathBuf,
    /// The file's bytes now; `None` when there is no file (one to create).
    pub(crate) existing: Option<Vec<u8>>,
    /// The file's mode bits now, kept by the write.
    mode: Option<u32>,
}

impl Locked {
    /// Locks the folder of `beneath` and reads the file there (a regular file, or nothing).
    ///
    /// # Errors
    /// As [`WriteTarget::open`].
    pub(crate) fn new(beneath: Beneath, verb: &str) -> Result<Self, String> {
        let shown = beneath.path.display().to_string();
        let io = |e: io::Error| format!("Cannot {verb} {shown}: {e}");
        let lock = lock_dirs(vec![beneath.open_parent_dir().map_err(io)?]).map_err(io)?;
        // What is there now, under the lock (the walk's view may be stale).
        let stat = beneath.stat_now().map_err(io)?;
        let (existing, mode) = match stat.map(|s| (FileType::from_raw_mode(s.st_mode), s)) {
            None => (None, None),
            Some((FileType::Directory, _)) => {
                return Err(format!("Path is a directory, not a file: {shown}"));
            }
            Some((FileType::Symlink, _)) => {
                return Err(format!(
                    "Cannot {verb} {shown}: it was replaced by a symbolic link while being \
                     written; nothing was changed. Try again."
                ));
            }
            Some((FileType::RegularFile, st)) => {
                if let Some(message) = read_only(&beneath, &shown, st.st_mode) {
                    return Err(message);
                }
                let mut bytes = Vec::new();
                beneath
                    .open_file()
                    .and_then(|mut f| f.read_to_end(&mut bytes))
                    .map_err(io)?;
                (Some(bytes), Some(st.st_mode))
            }
            Some(_) => {
                return Err(format!(
                    "Cannot {verb} {shown}: it is not a regular file (a device, socket or pipe)."
                ));
            }
        };
        Ok(Self {
            path: beneath.path.clone(),
            beneath,
            _lock: lock,
            existing,
            mode,
        })
    }

    /// Whether a file is there.
    pub(crate) fn exists(&self) -> bool {
        self.existing.is_some()
    }

    /// The read-before-write rule, on the bytes read under the lock: the
    /// file was read in this context and still holds what was read.
    ///
    /// # Errors
    /// [`LedgerError::NotRead`] or [`LedgerError::Modified`].
    pub(crate) fn check(&self, ledger: &FileLedger) -> Result<(), LedgerError> {
        match &self.existing {
            None => Ok(()),
            Some(bytes) => ledger.check_content(&self.path, ContentHasher::hash(bytes)),
        }
    }

    /// Replaces the file with `bytes` (keeping its mode), records the new
    /// content in `ledger` as a fresh read, and reports the change to the
    /// snapshot hook. The folder stays locked until `self` drops.
    ///
    /// # Errors
    /// The I/O error of the write; the old file is then untouched.
    pub(crate) fn commit(
        &self,
        ctx: &ToolContext,
        ledger: Option<&FileLedger>,
        before: Before,
        bytes: &[u8],
    ) -> io::Result<()> {
        replace_file(&self.beneath, bytes, self.mode, ledger)?;
        crate::fs::changes::record_change(ctx, &self.path, before, Some(bytes));
        Ok(())
    }
}

impl Locked {
    /// Commits `bytes` ([`Locked::commit`], recording the read in `ledger`)
    /// and reports it: `output` with the metadata every file-changing tool
    /// gives: `diff` (unified, `old_text` → `new_text`, cut at
    /// [`DIFF_LIMIT`](crate::fs::diff::DIFF_LIMIT) bytes with
    /// `diff_truncated: true`), `additions`, `deletions` and `filepath`,
    /// with `extra` (the tool's own keys) after `filepath`.
    ///
    /// A failed write is the `failed` result "Cannot write PATH: ERROR";
    /// the old file is then untouched.
    pub(crate) fn write_reporting(
        &self,
        ctx: &ToolContext,
        ledger: &FileLedger,
        before: Before,
        bytes: &[u8],
        report: Report<'_>,
    ) -> ToolResult {
        let Report {
            old_text,
            new_text,
            output,
            extra,
        } = report;
        let shown = self.path.display().to_string();
        if let Err(e) = self.commit(ctx, Some(ledger), before, bytes) {
            return ToolResult::failed(format!("Cannot write {shown}: {e}"));
        }
        let diff = Diff::compute(&shown, old_text, new_text);
        let mut result = ToolResult::ok(output)
            .with_metadata("diff", diff.unified)
            .with_metadata("additions", diff.additions)
            .with_metadata("deletions", diff.deletions)
            .with_metadata("filepath", shown);
        for (key, value) in extra {
            result = result.with_metadata(*key, value.clone());
        }
        if diff.truncated {
            result.with_metadata("diff_truncated", true)
        } else {
            result
        }
    }
}

/// Replaces the file at `beneath` with `bytes` atomically (mode `mode`, or
/// the default for a new file) and records in `ledger` that it now holds them.
///
/// # Errors
/// `InvalidInput` for the workspace root itself; the I/O error of the write.
pub(crate) fn replace_file(
    beneath: &Beneath,
    bytes: &[u8],
    mode: Option<u32>,
    ledger: Option<&FileLedger>,
) -> io::Result<()> {
    let name = beneath.name.as_deref().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the workspace root is not a file",
        )
    })?;
    super::atomic::write_at(beneath.parent_fd()?, name, bytes, mode)?;
    if let Some(l) = ledger {
        record(l, beneath, bytes);
    }
    Ok(())
}

/// The several-file form of [`WriteTarget`], for `apply_patch`: the files
/// a patch names, each resolved beneath the workspace, with the folders
/// that hold them locked (in the one order of [`lock_dirs`]) for the whole
/// plan-and-write: what the plan read is what the write replaces. Writes go
/// through the same [`replace_file`] as [`Locked::commit`].
pub(crate) struct WriteSet {
    ws: tool_core::State<Workspace>,
    /// Model path → its resolution; `None` when a folder on the way is
    /// missing (it is created when the file is written).
    slots: HashMap<String, Option<Beneath>>,
    _locks: Vec<DirLock>,
}

impl WriteSet {
    /// Resolves every model path of `paths` (repeats are fine) and locks their folders.
    ///
    /// # Errors
    /// The model-facing message of a path outside the workspace, or of a lock
    /// that cannot be taken.
    pub(crate) fn open<'p>(
        ws: &tool_core::State<Workspace>,
        paths: impl IntoIterator<Item = &'p String>,
    ) -> Result<Self, String> {
        let mut slots = HashMap::new();
        for raw in paths {
            if slots.contains_key(raw) {
                continue;
            }
            let slot = match ws.beneath_for_write(raw, Missing::AllowLast) {
                Ok(b) => Some(b),
                Err(PathError::NotFound { .. }) => {
                    // A new folder: refused like any path if it leads outside.
                    ws.resolve_for_write(raw).map_err(|e| e.to_string())?;
                    None
                }
                Err(e) => return Err(e.to_string()),
            };
            slots.insert(raw.clone(), slot);
        }
        let dirs = slots
            .values()
            .flatten()
            .map(Beneath::open_parent_dir)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| format!("Cannot lock the folders of the patch: {e}"))?;
        let locks = lock_dirs(dirs).map_err(|e| format!("Cannot apply the patch: {e}"))?;
        Ok(Self {
            ws: ws.clone(),
            slots,
            _locks: locks,
        })
    }

    /// The physical path of a model path (as the plan keys it).
    pub(crate) fn path(&self, raw: &str) -> Result<PathBuf, String> {
        match self.slots.get(raw) {
            Some(Some(b)) => Ok(b.path.clone()),
            _ => self.ws.resolve_for_write(raw).map_err(|e| e.to_string()),
        }
    }

    /// What kind of entry is there now (not following a symlink): `None` when nothing.
    pub(crate) fn kind(&self, raw: &str) -> Result<Option<FileType>, String> {
        match self.slots.get(raw) {
            Some(Some(b)) => b
                .stat_now()
                .map(|s| s.map(|s| FileType::from_raw_mode(s.st_mode)))
                .map_err(|e| e.to_string()),
            _ => Ok(None),
        }
    }

    /// The bytes on disk now; `None` when there is no file. Never opens a
    /// pipe or device (reading could block forever).
    pub(crate) fn read(&self, raw: &str) -> Result<Option<Vec<u8>>, std::io::Error> {
        let Some(Some(b)) = self.slots.get(raw) else {
            return Ok(None);
        };
        match b.stat_now()?.map(|s| FileType::from_raw_mode(s.st_mode)) {
            None => Ok(None),
            Some(FileType::RegularFile) => {
                let mut bytes = Vec::new();
                b.open_file()?.read_to_end(&mut bytes)?;
                Ok(Some(bytes))
            }
            Some(_) => Err(std::io::Error::other(
                "not a regular file (a directory, device, socket or pipe)",
            )),
        }
    }

    /// The model-facing refusal when the file there must not be changed (read-only).
    pub(crate) fn writable(&self, raw: &str) -> Result<(), String> {
        match self.slots.get(raw) {
            Some(Some(b)) => match b
                .stat_now()
                .ok()
                .flatten()
                .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
                .and_then(|st| read_only(b, &b.path.display().to_string(), st.st_mode))
            {
                Some(message) => Err(message),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// Writes `bytes` as the file `raw` (creating missing folders), keeping an old file's mode.
    pub(crate) fn write(
        &mut self,
        raw: &str,
        bytes: &[u8],
        ledger: Option<&FileLedger>,
    ) -> std::io::Result<()> {
        if !matches!(self.slots.get(raw), Some(Some(_))) {
            let b = self
                .ws
                .beneath_for_write(raw, Missing::CreateParents)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            self.slots.insert(raw.to_owned(), Some(b));
        }
        let Some(Some(b)) = self.slots.get(raw) else {
            return Err(std::io::Error::other("the path could not be resolved"));
        };
        let mode = b.stat_now()?.map(|s| s.st_mode);
        replace_file(b, bytes, mode, ledger)
    }

    /// Removes the file `raw` (gone already is fine).
    pub(crate) fn remove(&self, raw: &str, ledger: Option<&FileLedger>) -> std::io::Result<()> {
        let Some(Some(b)) = self.slots.get(raw) else {
            return Ok(());
        };
        let name = b
            .name
            .as_deref()
            .ok_or_else(|| std::io::Error::other("the workspace root is not a file"))?;
        match rustix::fs::unlinkat(b.parent_fd()?, name, rustix::fs::AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => {}
            Err(e) => return Err(e.into()),
        }
        if let Some(l) = ledger {
            l.forget(&b.path);
        }
        Ok(())
    }
}

/// What [`Locked::write_reporting`] reports besides the write itself.
#[derive(Clone, Copy)]
pub(crate) struct Report<'a> {
    /// The text before, for the diff.
    pub(crate) old_text: &'a str,
    /// The text after, for the diff.
    pub(crate) new_text: &'a str,
    /// The result's output.
    pub(crate) output: &'a str,
    /// The tool's own metadata keys, placed after `filepath`.
    pub(crate) extra: &'a [(&'a str, serde_json::Value)],
}

/// Records in `ledger` that the file at `beneath` now holds `bytes`.
pub(crate) fn record(ledger: &FileLedger, beneath: &Beneath, bytes: &[u8]) {
    let stat = beneath.stat_now().ok().flatten();
    ledger.record(
        &beneath.path,
        Stamp {
            modified: stat.and_then(|s| {
                let secs = u64::try_from(s.st_mtime).ok()?;
                let nanos = u32::try_from(s.st_mtime_nsec).ok()?;
                std::time::UNIX_EPOCH.checked_add(Duration::new(secs, nanos))
            }),
            len: bytes.len() as u64,
            hash: ContentHasher::hash(bytes),
            read_at: std::time::SystemTime::now(),
        },
    );
}

/// The model-facing refusal for an existing regular file that must not be
/// changed in place, `None` when it may be.
///
/// A file is read-only when its mode has no write bit at all (`0444`: the
/// owner marked it so, and root must not ignore that either) or when this
/// process could not open it for writing (`access(W_OK)`). An atomic write
/// renames a new file over the old one, which only needs the folder to be
/// writable, so without this check a read-only file would be replaced.
pub(crate) fn read_only(beneath: &Beneath, shown: &str, st_mode: u32) -> Option<String> {
    let mode = st_mode & 0o777;
    let accessible = beneath.parent_fd().is_ok_and(|dir| {
        rustix::fs::accessat(
            dir,
            beneath.name_or_dot(),
            rustix::fs::Access::WRITE_OK,
            rustix::fs::AtFlags::SYMLINK_NOFOLLOW,
        )
        .is_ok()
    });
    (mode & 0o222 == 0 || !accessible).then(|| crate::fs::atomic::read_only_message(shown, mode))
}
