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

use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use rustix::fs::{FileType, FlockOperation};
use tool_core::{ToolContext, ToolResult};

use super::beneath::{Beneath, Missing};
use crate::fs::changes::Before;
use crate::fs::ledger::{ContentHasher, FileLedger, LedgerError, Stamp};
use crate::fs::workspace::Workspace;

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
    #[allow(
        clippy::result_large_err,
        reason = "the Err is the call's final ToolResult, returned as is"
    )]
    pub(crate) fn new(ctx: &ToolContext, file_path: &str) -> Result<Self, ToolResult> {
        let ws = crate::fs::workspace::workspace_of(ctx)?;
        let ledger = crate::fs::ledger::ledger_of(ctx)?;
        if file_path.ends_with('/') && !file_path.trim().is_empty() {
            return Err(ToolResult::error(
                tool_core::ErrorKind::InvalidArguments,
                format!(
                    "{} ends with `/`, so it names a folder; give the path of a file.",
                    crate::fs::clip(file_path)
                ),
            ));
        }
        let path = ws.resolve(file_path).map_err(|e| e.to_result())?;
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

    /// Resolves the path beneath the workspace again (creating missing
    /// folders when `create_parents`), locks its folder and reads what is
    /// there now. Blocking: call it on a blocking thread.
    ///
    /// # Errors
    /// The model-facing message: outside the workspace, a folder or special
    /// file in the way, a read-only file, a lock that stays taken, an I/O error.
    pub(crate) fn open(&self, verb: &str, create_parents: bool) -> Result<Locked, String> {
        let missing = if create_parents {
            Missing::CreateParents
        } else {
            Missing::AllowLast
        };
        let beneath = self
            .ws
            .beneath(&self.model_path, missing)
            .map_err(|e| e.to_string())?;
        Locked::new(beneath, verb)
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
        let name = self.beneath.name.as_deref().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "the workspace root is not a file",
            )
        })?;
        super::atomic::write_at(self.beneath.parent_fd()?, name, bytes, self.mode)?;
        if let Some(l) = ledger {
            record(l, &self.beneath, bytes);
        }
        crate::fs::changes::record_change(ctx, &self.path, before, Some(bytes));
        Ok(())
    }
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
