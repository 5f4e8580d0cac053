//! The one write path of every tool that changes files: resolve beneath the
//! workspace → lock the folder → check the read-before-write ledger against
//! the bytes on disk → refuse binary, decode → the tool's own change →
//! encode → write atomically → record the new content → report the change
//! (diff, metadata) → the host's [write hooks](super::after_write).
//!
//! Two entries, one frame: [`change`] for the tools that change one file
//! (`write_file`, `edit_file`, `multi_edit`: the tool passes a closure from
//! the current text to the new text, run once, and is otherwise only its
//! own logic) and [`change_set`] for `apply_patch` (several files, planned
//! together under all their folder locks, written all or nothing).
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
use serde_json::Value;
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, meta};

use super::after_write::{AfterWriteHooks, ChangedPath};
use super::beneath::{Beneath, Missing};
use super::diff::Diff;
use crate::fs::changes::Before;
use crate::fs::ledger::{ContentHasher, FileLedger, LedgerError, Stamp};
use crate::fs::lines::LineEnding;
use crate::fs::text::{TextFile, UTF8_BOM};
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

/// How [`change`] opens the file and hands it to the tool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Open {
    /// The verb of messages ("Cannot edit …").
    verb: &'static str,
    /// Create missing parent folders (`write_file`, an edit that creates).
    create_parents: bool,
    /// A missing file is "File not found" (an edit of an existing file).
    must_exist: bool,
    /// Decode the file as text (refusing binary) and encode the new text
    /// back in its encoding; otherwise the new text is written verbatim as
    /// UTF-8 (keeping a UTF-8 byte order mark the file had).
    decode: bool,
}

impl Open {
    /// `edit_file` and `multi_edit`: decoded text; `creating` when the
    /// first edit has an empty `old_string` (a missing file and its folders
    /// are created), else the file must exist.
    pub(crate) fn edit(creating: bool) -> Self {
        Self {
            verb: "edit",
            create_parents: creating,
            must_exist: !creating,
            decode: true,
        }
    }

    /// `write_file`: any file (binary too) is replaced by the text as given;
    /// parent folders are created.
    pub(crate) fn write() -> Self {
        Self {
            verb: "write",
            create_parents: true,
            must_exist: false,
            decode: false,
        }
    }
}

/// The file as [`change`] hands it to the tool's closure, read and decoded
/// under the folder lock.
#[derive(Debug)]
pub(crate) struct Current<'a> {
    /// The text now: decoded (line endings as in the file, no byte order
    /// mark); for [`Open::write`] the bytes read as UTF-8 (lossily). Empty
    /// when there is no file.
    pub(crate) text: &'a str,
    /// Whether a file is there.
    pub(crate) exists: bool,
    /// The file's line-ending style (`Lf` for a new file).
    pub(crate) line_ending: LineEnding,
}

/// What the tool's closure gives back to [`change`]: the new text and how
/// to report it.
#[derive(Debug)]
pub(crate) struct NewText {
    /// The whole new text of the file (encoded by [`change`]).
    pub(crate) text: String,
    /// The result's output.
    pub(crate) output: String,
    /// The tool's own metadata, placed after [`meta::FILEPATH`].
    pub(crate) extra: Vec<(&'static str, Value)>,
}

/// Changes one file: the frame of every one-file writer.
///
/// In order: the workspace and the ledger of `ctx` → the in-process queue
/// of the path (calls of one process on one file wait their turn instead of
/// polling the folder lock) → on a blocking thread: resolve `file_path`
/// beneath the workspace **once** → `flock` its folder → read what is there
/// → the read-before-write check → binary refusal and decoding (per
/// `opts`) → `change(current)`, called once → encode → atomic write →
/// ledger record and snapshot hook → diff and metadata (`diff`,
/// `additions`, `deletions`, `filepath`, the closure's `extra`,
/// `diff_truncated`, `encoding` for a file that is not UTF-8) → folder
/// unlocked → the [`after_write`](super::after_write) hooks → the result,
/// titled with the path relative to the workspace.
///
/// # Errors
/// The model-facing error: no workspace or ledger (`missing_context`), a
/// path ending in `/` (`invalid_arguments`), a path refused by the workspace
/// (its [`PathError`] kind), a folder, special file or read-only file in
/// the way, a lock that stays taken (`failed`), not read first or changed
/// since ([`LedgerError`]), a missing file when `opts` needs one, a binary
/// or undecodable file, the closure's own error, text the file's encoding
/// cannot hold (`failed`). A failed write is the `failed` result "Cannot
/// write PATH: ERROR" (with the title); the old file is then untouched.
pub(crate) async fn change<F>(
    ctx: &ToolContext,
    file_path: &str,
    opts: Open,
    change: F,
) -> Result<ToolResult, ToolError>
where
    F: FnOnce(Current<'_>) -> Result<NewText, ToolError> + Send + 'static,
{
    if file_path.ends_with('/') && !file_path.trim().is_empty() {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "{} ends with `/`, so it names a folder; give the path of a file.",
                tool_rules::text::clip(file_path, crate::fs::MESSAGE_VALUE).into_owned()
            ),
        ));
    }
    // One visit to the workspace (the state and the queue's key), one to
    // the ledger (the state and the queue).
    let ws = crate::fs::workspace::workspace_of(ctx)?;
    let key = ws.absolute(file_path);
    let ledger = crate::fs::ledger::ledger_of(ctx)?;
    // Only a queue: the folder's flock, taken after the one resolution, is
    // what excludes other writers (other spellings of the path included).
    let queue = ledger.lock(&key).await;
    let model_path = file_path.to_owned();
    let work_ctx = ctx.clone();
    let (title, outcome) = tool_core::run_blocking(move || {
        change_blocking(&work_ctx, &ws, &ledger, &model_path, opts, change)
    })
    .await?;
    // The next call on this file need not wait for this one's hooks.
    drop(queue);
    let result = match outcome {
        Ok((result, changed)) => after_write(ctx, result, changed).await,
        Err(e) => ToolResult::from(e),
    };
    Ok(match title {
        Some(t) => result.with_title(t),
        None => result,
    })
}

/// A write's result and the paths it changed (none when the write failed).
type Written = (ToolResult, Vec<ChangedPath>);

/// The blocking part of [`change`]: the title (once the path resolved) and
/// the result with the paths it changed.
fn change_blocking<F>(
    ctx: &ToolContext,
    ws: &Workspace,
    ledger: &FileLedger,
    model_path: &str,
    opts: Open,
    change: F,
) -> (Option<String>, Result<Written, ToolError>)
where
    F: FnOnce(Current<'_>) -> Result<NewText, ToolError>,
{
    let beneath = match resolve_once(ws, model_path, opts.create_parents) {
        Ok(b) => b,
        Err(e) => return (None, Err(e)),
    };
    let title = ws.relative(&beneath.path).display().to_string();
    (
        Some(title),
        change_locked(ctx, ledger, beneath, opts, change),
    )
}

/// The one resolution of a one-file write: the file's folder must exist
/// (`AllowLast`); when it does not and `create_parents`, the path is first
/// planned without creating anything (so a refused path, e.g. `..` out of
/// a missing folder, creates no folder) and then resolved creating them.
fn resolve_once(
    ws: &Workspace,
    model_path: &str,
    create_parents: bool,
) -> Result<Beneath, ToolError> {
    match ws.beneath_for_write(model_path, Missing::AllowLast) {
        Err(PathError::NotFound { .. }) if create_parents => {
            ws.beneath_for_write(model_path, Missing::Plan)?;
            Ok(ws.beneath_for_write(model_path, Missing::CreateParents)?)
        }
        r => Ok(r?),
    }
}

/// [`change`] from the resolved path on, under the folder lock.
fn change_locked<F>(
    ctx: &ToolContext,
    ledger: &FileLedger,
    beneath: Beneath,
    opts: Open,
    change: F,
) -> Result<Written, ToolError>
where
    F: FnOnce(Current<'_>) -> Result<NewText, ToolError>,
{
    let failed = |m: String| ToolError::new(ErrorKind::Failed, m);
    let mut locked = Locked::new(beneath, opts.verb).map_err(failed)?;
    // A file changed since it was read: the read cache may hold its old text.
    locked
        .check(ledger)
        .inspect_err(|_| tool_core::read_cache::ReadCache::invalidate_context(ctx))?;
    let shown = locked.path.display().to_string();
    let exists = locked.exists();
    if !exists && opts.must_exist {
        return Err(failed(format!("File not found: {shown}")));
    }
    let old = locked.existing.take();
    let file = match (&old, opts.decode) {
        (None, _) => TextFile {
            text: String::new(),
            bom: false,
            encoding: encoding_rs::UTF_8,
            line_ending: LineEnding::Lf,
        },
        (Some(bytes), true) => match TextFile::decode_unless_binary(bytes) {
            Ok(Some(file)) => file,
            Ok(None) => return Err(failed(format!("Cannot {} binary file: {shown}", opts.verb))),
            Err(e) => return Err(failed(format!("Cannot {} {shown}: {e}.", opts.verb))),
        },
        (Some(bytes), false) => {
            let text =
                String::from_utf8_lossy(bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes)).into_owned();
            TextFile {
                line_ending: LineEnding::detect(&text),
                text,
                bom: bytes.starts_with(UTF8_BOM),
                encoding: encoding_rs::UTF_8,
            }
        }
    };
    let new = change(Current {
        text: &file.text,
        exists,
        line_ending: file.line_ending,
    })?;
    let bytes = if opts.decode {
        file.encode(&new.text)
            .map_err(|e| failed(format!("Cannot write {shown}: {e}.")))?
    } else {
        verbatim(&file, &new.text)
    };
    // The old bytes reach a snapshot hook only (`record_change` drops them
    // when the context has none).
    let before = Before {
        content: old,
        existed: exists,
    };
    let unrecorded = match locked.commit(ctx, Some(ledger), before, &bytes) {
        Ok(unrecorded) => unrecorded,
        Err(e) => {
            return Ok((
                ToolResult::failed(format!("Cannot write {shown}: {e}")),
                Vec::new(),
            ));
        }
    };
    let diff = Diff::compute(&shown, &file.text, &new.text);
    let mut result = ToolResult::ok(new.output)
        .with_metadata(meta::DIFF, diff.unified)
        .with_metadata(meta::ADDITIONS, diff.additions)
        .with_metadata(meta::DELETIONS, diff.deletions)
        .with_metadata(meta::FILEPATH, shown);
    for (key, value) in new.extra {
        result = result.with_metadata(key, value);
    }
    if diff.truncated {
        result = result.with_metadata(meta::DIFF_TRUNCATED, true);
    }
    if opts.decode && !file.is_utf8() {
        result = result.with_metadata(meta::ENCODING, file.encoding.name());
    }
    if let Some(note) = unrecorded {
        result.add_note(note);
    }
    let path = locked.path.clone();
    let changed = if exists {
        ChangedPath::Modified(path)
    } else {
        ChangedPath::Created(path)
    };
    Ok((result, vec![changed]))
}

/// `write_file`'s bytes: `text` as UTF-8, verbatim, after the UTF-8 byte
/// order mark the file had (the mark is not content: `read_file` never
/// shows it), unless `text` starts with one itself.
fn verbatim(file: &TextFile, text: &str) -> Vec<u8> {
    let keep_bom = file.bom && !text.starts_with('\u{feff}');
    let mut bytes = Vec::with_capacity(text.len() + 3);
    if keep_bom {
        bytes.extend_from_slice(UTF8_BOM);
    }
    bytes.extend_from_slice(text.as_bytes());
    bytes
}

/// Runs the context's write hooks on `changed` (on a blocking thread) and
/// appends their texts to `result`'s output. Nothing happens for a failed
/// result or when nothing changed.
async fn after_write(
    ctx: &ToolContext,
    result: ToolResult,
    changed: Vec<ChangedPath>,
) -> ToolResult {
    if !changed.is_empty() {
        // What the trace's read cache holds may describe the old files.
        tool_core::read_cache::ReadCache::invalidate_context(ctx);
    }
    let hooks = AfterWriteHooks::of(ctx);
    if hooks.is_empty() || changed.is_empty() || !result.is_ok() {
        return result;
    }
    let hook_ctx = ctx.clone();
    let (reports, panicked) = tool_core::run_blocking(move || hooks.run(&hook_ctx, &changed))
        .await
        .unwrap_or_else(|_| (Vec::new(), true));
    let mut result = result;
    for report in reports {
        if let Some(text) = report.text {
            if !result.output.is_empty() {
                result.output.push_str("\n\n");
            }
            result.output.push_str(&text);
        }
        for (key, value) in report.metadata {
            result = result.with_metadata(key, value);
        }
        for note in report.notes {
            result.add_note(note);
        }
    }
    if panicked {
        result.add_note("a write hook of the host failed; the write itself succeeded");
    }
    result
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
    /// The model-facing message: a folder, symbolic link or special file in
    /// the way, a read-only file, a lock that stays taken, an I/O error.
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
    /// file was read in this context and still holds what was read; for a
    /// file to create, that its write can be recorded
    /// ([`FileLedger::check_new`]).
    ///
    /// # Errors
    /// [`LedgerError::NotRead`] or [`LedgerError::Modified`];
    /// [`LedgerError::Store`] when a persistent ledger's store cannot be
    /// read (nothing is written then).
    pub(crate) fn check(&self, ledger: &FileLedger) -> Result<(), LedgerError> {
        match &self.existing {
            None => ledger.check_new(&self.path),
            Some(bytes) => ledger.check_content(&self.path, ContentHasher::hash(bytes)),
        }
    }

    /// Replaces the file with `bytes` (keeping its mode), records the new
    /// content in `ledger` as a fresh read, and reports the change to the
    /// snapshot hook. The folder stays locked until `self` drops. Returns
    /// the note for the result when the file was written and its record
    /// could not be kept ([`replace_file`]).
    ///
    /// # Errors
    /// The I/O error of the write; the old file is then untouched.
    pub(crate) fn commit(
        &self,
        ctx: &ToolContext,
        ledger: Option<&FileLedger>,
        before: Before,
        bytes: &[u8],
    ) -> io::Result<Option<String>> {
        let unrecorded = replace_file(&self.beneath, bytes, self.mode, ledger)?;
        crate::fs::changes::record_change(ctx, &self.path, before, Some(bytes));
        Ok(unrecorded)
    }
}

/// Replaces the file at `beneath` with `bytes` atomically (mode `mode`, or
/// the default for a new file) and records in `ledger` that it now holds
/// them. The callers checked just before, under the folder lock, that the
/// ledger's store answers; should it fail between that check and this
/// record, the file is written all the same and the note for the result
/// (the file written, its record not kept, read it again) is returned.
///
/// # Errors
/// `InvalidInput` for the workspace root itself; the I/O error of the write.
pub(crate) fn replace_file(
    beneath: &Beneath,
    bytes: &[u8],
    mode: Option<u32>,
    ledger: Option<&FileLedger>,
) -> io::Result<Option<String>> {
    let name = beneath.name.as_deref().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            "the workspace root is not a file",
        )
    })?;
    super::atomic::write_at(beneath.parent_fd()?, name, bytes, mode)?;
    Ok(ledger
        .and_then(|l| record(l, beneath, bytes).err())
        .map(|e| {
            format!(
                "{} was written, but this session's record of it could not be kept ({e}); read it \
             again with read_file before changing it.",
                beneath.path.display()
            )
        }))
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
    /// The model-facing error of a path the workspace refuses (its
    /// [`PathError`] kind), or of a lock that cannot be taken (`failed`).
    pub(crate) fn open<'p>(
        ws: &tool_core::State<Workspace>,
        paths: impl IntoIterator<Item = &'p String>,
    ) -> Result<Self, ToolError> {
        let mut slots = HashMap::new();
        for raw in paths {
            if slots.contains_key(raw) {
                continue;
            }
            let slot = match ws.beneath_for_write(raw, Missing::AllowLast) {
                Ok(b) => Some(b),
                Err(PathError::NotFound { .. }) => {
                    // A new folder: refused like any path if it leads outside.
                    ws.resolve_for_write(raw)?;
                    None
                }
                Err(e) => return Err(e.into()),
            };
            slots.insert(raw.clone(), slot);
        }
        let dirs = slots
            .values()
            .flatten()
            .map(Beneath::open_parent_dir)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| {
                ToolError::new(
                    ErrorKind::Failed,
                    format!("Cannot lock the folders of the patch: {e}"),
                )
            })?;
        let locks = lock_dirs(dirs).map_err(|e| {
            ToolError::new(ErrorKind::Failed, format!("Cannot apply the patch: {e}"))
        })?;
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

    /// Writes `bytes` as the file `raw` (creating missing folders), keeping
    /// an old file's mode; the note of [`replace_file`] when its record
    /// could not be kept.
    pub(crate) fn write(
        &mut self,
        raw: &str,
        bytes: &[u8],
        ledger: Option<&FileLedger>,
    ) -> std::io::Result<Option<String>> {
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

impl WriteSet {
    /// Writes every op in order (a `None` after removes the file); when one
    /// fails, puts back the ones already written, newest first, and gives
    /// the `failed` message "Failed to write PATH: ERROR. No files were
    /// modified.". On success each change goes to the snapshot hook, and
    /// the notes of the writes whose records could not be kept are returned.
    ///
    /// Before anything is written, a persistent ledger's store must answer
    /// when the plan creates a file (the plan checked the files it replaces
    /// against the store already): otherwise nothing is written and the
    /// store's error is returned.
    fn commit(
        &mut self,
        ctx: &ToolContext,
        ledger: Option<&FileLedger>,
        ops: &[SetOp],
    ) -> Result<Vec<String>, String> {
        if let (Some(l), Some(new)) = (
            ledger,
            ops.iter()
                .find(|op| op.after.is_some() && !op.before.existed),
        ) {
            l.check_new(&new.path).map_err(|e| e.to_string())?;
        }
        let mut done: Vec<&SetOp> = Vec::new();
        let mut notes = Vec::new();
        for op in ops {
            let r = match &op.after {
                Some(bytes) => self.write(&op.raw, bytes, ledger),
                None => self.remove(&op.raw, ledger).map(|()| None),
            };
            match r {
                Ok(note) => notes.extend(note),
                Err(e) => {
                    for prev in done.iter().rev() {
                        // Best effort: the error reported is the first one.
                        let _ = match (&prev.before.content, prev.before.existed) {
                            (Some(old), _) => self.write(&prev.raw, old, ledger).map(|_| ()),
                            (None, false) => self.remove(&prev.raw, ledger),
                            (None, true) => Ok(()),
                        };
                    }
                    return Err(format!(
                        "Failed to write {}: {e}. No files were modified.",
                        op.path.display()
                    ));
                }
            }
            done.push(op);
        }
        for op in ops {
            crate::fs::changes::record_change(
                ctx,
                &op.path,
                op.before.clone(),
                op.after.as_deref(),
            );
        }
        Ok(notes)
    }
}

/// One file of a [`SetPlan`]: its state before and its bytes after.
#[derive(Debug)]
pub(crate) struct SetOp {
    /// The physical path.
    pub(crate) path: PathBuf,
    /// The path as the tool's input gave it (the key of [`WriteSet`]).
    pub(crate) raw: String,
    /// What it held before (for the rollback and the snapshot hook).
    pub(crate) before: Before,
    /// The bytes after; `None` removes the file.
    pub(crate) after: Option<Vec<u8>>,
}

/// What the planning closure of [`change_set`] gives back: the writes, in
/// order, and the report.
#[derive(Debug, Default)]
pub(crate) struct SetPlan {
    /// The files to write or remove, each once.
    pub(crate) ops: Vec<SetOp>,
    /// The moves among `ops` (old physical path, new one), reported to the
    /// write hooks as renames.
    pub(crate) moves: Vec<(PathBuf, PathBuf)>,
    /// The result's output.
    pub(crate) output: String,
    /// The result's metadata, in order.
    pub(crate) metadata: Vec<(&'static str, Value)>,
}

/// Changes several files all or nothing: the frame of `apply_patch`.
///
/// In order: the workspace (and the ledger, when the context has one) →
/// the in-process queues of the paths → on a blocking thread: every path of
/// `raw_paths` resolved once and the folders that hold them locked
/// ([`WriteSet::open`]) → `plan(files, ledger)` (the tool's own logic:
/// reads, checks and new contents, nothing written) → every op written,
/// rolled back on a failure → snapshot hook → folders unlocked → the
/// [`after_write`](super::after_write) hooks (created, modified, deleted
/// and renamed paths) → the result.
///
/// # Errors
/// No workspace (`missing_context`); a path the workspace refuses; a lock
/// that stays taken; the plan's own error. A failed write is the `failed`
/// result of [`WriteSet`]'s commit, every file as it was.
pub(crate) async fn change_set<F>(
    ctx: &ToolContext,
    raw_paths: Vec<String>,
    plan: F,
) -> Result<ToolResult, ToolError>
where
    F: FnOnce(&mut WriteSet, Option<&FileLedger>) -> Result<SetPlan, ToolError> + Send + 'static,
{
    let ws = crate::fs::workspace::workspace_of(ctx)?;
    let ledger = ctx.state::<FileLedger>();
    let keys: Vec<PathBuf> = raw_paths.iter().map(|p| ws.absolute(p)).collect();
    let queues = match &ledger {
        Some(l) => l.lock_many(&keys).await,
        None => Vec::new(),
    };
    let work_ctx = ctx.clone();
    let outcome = tool_core::run_blocking(move || -> Result<_, ToolError> {
        let ledger = ledger.as_deref();
        let mut files = WriteSet::open(&ws, &raw_paths)?;
        let plan = plan(&mut files, ledger)?;
        let notes = match files.commit(&work_ctx, ledger, &plan.ops) {
            Ok(notes) => notes,
            Err(message) => return Ok((ToolResult::failed(message), Vec::new())),
        };
        let mut result = ToolResult::ok(plan.output);
        for (key, value) in plan.metadata {
            result = result.with_metadata(key, value);
        }
        for note in notes {
            result.add_note(note);
        }
        Ok((result, changed_paths(&plan.ops, &plan.moves)))
    })
    .await??;
    drop(queues);
    let (result, changed) = outcome;
    Ok(after_write(ctx, result, changed).await)
}

/// The paths `ops` changed, in their order; a move (`from` removed, `to`
/// written) is one [`ChangedPath::Renamed`] in `from`'s place.
fn changed_paths(ops: &[SetOp], moves: &[(PathBuf, PathBuf)]) -> Vec<ChangedPath> {
    let mut changed: Vec<ChangedPath> = ops
        .iter()
        .filter_map(|op| match (op.before.existed, op.after.is_some()) {
            (true, true) => Some(ChangedPath::Modified(op.path.clone())),
            (false, true) => Some(ChangedPath::Created(op.path.clone())),
            (true, false) => Some(ChangedPath::Deleted(op.path.clone())),
            (false, false) => None,
        })
        .collect();
    for (from, to) in moves {
        let gone = changed
            .iter()
            .position(|c| matches!(c, ChangedPath::Deleted(p) if p == from));
        let written = changed.iter().position(
            |c| matches!(c, ChangedPath::Created(p) | ChangedPath::Modified(p) if p == to),
        );
        if let (Some(g), Some(w)) = (gone, written) {
            changed[g] = ChangedPath::Renamed {
                from: from.clone(),
                to: to.clone(),
            };
            changed.remove(w);
        }
    }
    changed
}

/// Records in `ledger` that the file at `beneath` now holds `bytes`.
///
/// # Errors
/// [`LedgerError::Store`] when a persistent ledger's store refused the
/// record (this process keeps it either way).
pub(crate) fn record(
    ledger: &FileLedger,
    beneath: &Beneath,
    bytes: &[u8],
) -> Result<(), LedgerError> {
    let stat = beneath.stat_now().ok().flatten();
    ledger.try_record(
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
    )
}

/// [`read_only_at`](crate::fs::atomic::read_only_at) for the file at
/// `beneath`, through its folder handle.
fn read_only(beneath: &Beneath, shown: &str, st_mode: u32) -> Option<String> {
    crate::fs::atomic::read_only_at(
        beneath.parent_fd().ok(),
        beneath.name_or_dot(),
        st_mode,
        shown,
    )
}
