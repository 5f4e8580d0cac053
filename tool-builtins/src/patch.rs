//! `apply_patch`: add, delete, update and move files with one patch in the
//! Codex grammar, verified in full before anything is written.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path/new.txt
//! +first line
//! *** Delete File: path/old.txt
//! *** Update File: path/file.py
//! *** Move to: path/renamed.py
//! @@ def anchor():
//!  context line
//! -removed line
//! +added line
//! *** End of File
//! *** End Patch
//! ```
//!
//! Parsing is lenient about whitespace around header lines and about a
//! heredoc wrapper (`<<'EOF'` ... `EOF`) that models copy from shell habits.
//! Context lines are matched exactly first, then under Unicode
//! Normalization Form C (a decomposed `e` + U+0301 equals U+00E9), then
//! ignoring trailing whitespace, then ignoring surrounding whitespace, then
//! with typographic punctuation folded to ASCII. When any but the exact pass
//! placed a chunk, the output ends with one "Note: ..." line naming the
//! file and what was overlooked ([`Strategy::note`]).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use tool_core::{ErrorKind, ToolContext, ToolResult, tool};

use std::io::Read as _;

use rustix::fs::FileType;

use crate::edit::run_blocking;
use crate::fs::beneath::{Beneath, Missing};
use crate::fs::target::{DirLock, lock_dirs};
use crate::fsutil::{self, Before, LineEnding, TextFile};
use crate::ledger::{ContentHasher, FileLedger};
use crate::replace::Strategy;
use crate::workspace::{PathError, Workspace, workspace_of};

const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const EOF_MARK: &str = "*** End of File";

/// One file operation of a patch.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Hunk {
    Add {
        path: String,
        contents: String,
    },
    Delete {
        path: String,
    },
    Update {
        path: String,
        move_to: Option<String>,
        chunks: Vec<Chunk>,
    },
}

/// One `@@` section of an update.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Chunk {
    /// The text after `@@`: a line to find before the chunk's lines.
    context: Option<String>,
    old_lines: Vec<String>,
    new_lines: Vec<String>,
    /// Per new line, for a context line its index in `old_lines`: the
    /// file's own text of that line is kept, whatever pass matched it.
    context_of: Vec<Option<usize>>,
    /// `*** End of File`: the old lines end the file.
    end_of_file: bool,
}

/// Apply a patch that adds, deletes, updates or moves files.
///
/// The patch uses this format (paths relative to the workspace root):
///
/// ```text
/// *** Begin Patch
/// *** Add File: <path>
/// +<each line of the new file>
/// *** Delete File: <path>
/// *** Update File: <path>
/// *** Move to: <new path>        (optional)
/// @@ <a line just before the change, to locate it>   (optional)
///  <context line>
/// -<removed line>
/// +<added line>
/// *** End Patch
/// ```
///
/// Every change is checked before any file is written: if one part does not
/// apply, nothing changes.
///
/// # Arguments
/// * `patch` - The full patch text, from `*** Begin Patch` to `*** End Patch`.
#[tool(kind = "write", tags = ["fs", "edit"], destructive)]
pub async fn apply_patch(context: &ToolContext, patch: String) -> ToolResult {
    let hunks = match parse(&patch) {
        Ok(h) => h,
        Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e),
    };
    if hunks.is_empty() {
        return ToolResult::failed(
            "The patch has no file operations (add, delete or update). No files were modified.",
        );
    }
    let ws = match workspace_of(context) {
        Ok(ws) => ws,
        Err(r) => return r,
    };
    let mut paths = Vec::new();
    for h in &hunks {
        let (p, m) = match h {
            Hunk::Add { path, .. } | Hunk::Delete { path } => (path, None),
            Hunk::Update { path, move_to, .. } => (path, move_to.as_ref()),
        };
        for raw in std::iter::once(p).chain(m) {
            match ws.resolve(raw) {
                Ok(resolved) => paths.push(resolved),
                Err(e) => return e.to_result(),
            }
        }
    }
    let ledger = context.state::<FileLedger>();
    let _locks = match &ledger {
        Some(l) => l.lock_many(&paths).await,
        None => Vec::new(),
    };
    let ctx = context.clone();
    run_blocking(move || {
        let ledger = ledger.as_deref();
        let mut files = match Files::open(&ws, &hunks) {
            Ok(f) => f,
            Err(e) => return ToolResult::failed(e),
        };
        match plan(&mut files, ledger, &hunks) {
            Ok(plan) => execute(&ctx, ledger, &mut files, &plan),
            Err(e) => ToolResult::failed(e),
        }
    })
    .await
}

// ---------------------------------------------------------------------------
// Parsing

/// Removes a heredoc wrapper (`<<EOF`, `<<'EOF'`, `<<"EOF"`, optionally after
/// a command such as `apply_patch`) when its terminator closes the text.
fn strip_heredoc(lines: &[&str]) -> Option<(usize, usize)> {
    let first = lines.first()?.trim();
    let opener = &first[first.find("<<")? + 2..];
    let word = opener.trim().trim_matches(|c| c == '\'' || c == '"');
    if word.is_empty() || !word.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    let last = lines.len().checked_sub(1)?;
    (last > 0 && lines[last].trim() == word).then_some((1, last))
}

fn parse(patch: &str) -> Result<Vec<Hunk>, String> {
    let text = fsutil::normalize_newlines(patch);
    let text = text.trim();
    let all: Vec<&str> = text.split('\n').collect();
    let (from, to) = strip_heredoc(&all).unwrap_or((0, all.len()));
    let lines = &all[from..to];
    if lines.first().map(|l| l.trim()) != Some(BEGIN) {
        return Err(format!("The first line of the patch must be '{BEGIN}'"));
    }
    if lines.len() < 2 || lines.last().map(|l| l.trim()) != Some(END) {
        return Err(format!("The last line of the patch must be '{END}'"));
    }
    let body = &lines[1..lines.len() - 1];
    // Line numbers in messages count from the patch's first line (1 = Begin Patch).
    let line_no = |i: usize| i + 2;
    let mut hunks = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let header = body[i].trim();
        if header.is_empty() {
            i += 1;
            continue;
        }
        if let Some(path) = header.strip_prefix(ADD) {
            let mut contents = String::new();
            i += 1;
            while i < body.len() {
                let Some(l) = body[i].strip_prefix('+') else {
                    break;
                };
                contents.push_str(l);
                contents.push('\n');
                i += 1;
            }
            hunks.push(Hunk::Add {
                path: path.trim().to_owned(),
                contents,
            });
        } else if let Some(path) = header.strip_prefix(DELETE) {
            hunks.push(Hunk::Delete {
                path: path.trim().to_owned(),
            });
            i += 1;
        } else if let Some(path) = header.strip_prefix(UPDATE) {
            let path = path.trim().to_owned();
            let start = i;
            i += 1;
            let move_to = match body.get(i).and_then(|l| l.trim().strip_prefix(MOVE)) {
                Some(m) => {
                    i += 1;
                    Some(m.trim().to_owned())
                }
                None => None,
            };
            let (chunks, next) = parse_chunks(body, i, &line_no)?;
            if chunks.is_empty() {
                return Err(format!(
                    "invalid hunk at line {}, Update file hunk for path '{path}' is empty",
                    line_no(start)
                ));
            }
            i = next;
            hunks.push(Hunk::Update {
                path,
                move_to,
                chunks,
            });
        } else {
            return Err(format!(
                "invalid hunk at line {}, '{header}' is not a valid hunk header. \
                 Valid hunk headers: '*** Add File: {{path}}', '*** Delete File: {{path}}', '*** Update File: {{path}}'",
                line_no(i)
            ));
        }
    }
    Ok(hunks)
}

/// Whether `line` starts the next file operation (ends an update's chunks).
fn is_header(line: &str) -> bool {
    let t = line.trim();
    t.starts_with(ADD) || t.starts_with(DELETE) || t.starts_with(UPDATE) || t == END
}

fn parse_chunks(
    body: &[&str],
    mut i: usize,
    line_no: &dyn Fn(usize) -> usize,
) -> Result<(Vec<Chunk>, usize), String> {
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut current: Option<Chunk> = None;
    let mut current_start = i;
    let close = |c: Option<Chunk>, start: usize, chunks: &mut Vec<Chunk>| -> Result<(), String> {
        if let Some(c) = c {
            if c.old_lines.is_empty() && c.new_lines.is_empty() {
                return Err(format!(
                    "invalid hunk at line {}, Update hunk does not contain any lines",
                    line_no(start)
                ));
            }
            chunks.push(c);
        }
        Ok(())
    };
    while i < body.len() {
        let line = body[i];
        if is_header(line) {
            break;
        }
        let trimmed = line.trim();
        if trimmed == "@@" || trimmed.starts_with("@@ ") {
            close(current.take(), current_start, &mut chunks)?;
            let ctx = trimmed.strip_prefix("@@").unwrap_or("").trim();
            current = Some(Chunk {
                context: (!ctx.is_empty()).then(|| ctx.to_owned()),
                ..Chunk::default()
            });
            current_start = i;
            i += 1;
            continue;
        }
        if trimmed == EOF_MARK {
            let c = current.get_or_insert_with(Chunk::default);
            c.end_of_file = true;
            close(current.take(), current_start, &mut chunks)?;
            i += 1;
            continue;
        }
        let c = current.get_or_insert_with(|| {
            current_start = i;
            Chunk::default()
        });
        match line.chars().next() {
            Some(' ') | None => {
                let l = line.get(1..).unwrap_or("");
                c.context_of.push(Some(c.old_lines.len()));
                c.old_lines.push(l.to_owned());
                c.new_lines.push(l.to_owned());
            }
            Some('-') => c.old_lines.push(line[1..].to_owned()),
            Some('+') => {
                c.context_of.push(None);
                c.new_lines.push(line[1..].to_owned());
            }
            Some(_) => {
                return Err(format!(
                    "invalid hunk at line {}, Unexpected line found in update hunk: '{line}'. \
                     Every line should start with ' ' (context line), '+' (added line), or '-' (removed line)",
                    line_no(i)
                ));
            }
        }
        i += 1;
    }
    close(current, current_start, &mut chunks)?;
    Ok((chunks, i))
}

// ---------------------------------------------------------------------------
// Planning: every hunk checked in memory

/// What will be written: per file, the state before and the bytes after (`None` deletes).
struct Op {
    path: PathBuf,
    /// The path as the patch gave it (the key of [`Files`]).
    raw: String,
    before: Before,
    after: Option<Vec<u8>>,
}

/// The verified plan of a patch.
struct Plan {
    ops: Vec<Op>,
    summary: Vec<String>,
    files: Vec<serde_json::Value>,
    /// The unified diffs of every file, at most [`fsutil::DIFF_LIMIT`] bytes.
    diff: String,
    /// A diff was cut (at the limit of one file's or of the whole).
    diff_truncated: bool,
    /// Per updated file whose chunks matched only leniently: its path and
    /// the lenient strategies, in order, without repeats.
    lenient: Vec<(String, Vec<Strategy>)>,
}

/// The content a path has in the plan so far: `Some(None)` when deleted, `None` when untouched.
type Overlay = HashMap<PathBuf, Option<Vec<u8>>>;

/// The files a patch names, each resolved beneath the workspace, with the
/// folders that hold them locked for the whole plan-and-write (see
/// [`crate::fs::target`]): what the plan read is what the write replaces.
struct Files {
    ws: tool_core::State<Workspace>,
    /// Model path → its resolution; `None` when a folder on the way is
    /// missing (it is created when the file is written).
    slots: HashMap<String, Option<Beneath>>,
    _locks: Vec<DirLock>,
}

impl Files {
    fn open(ws: &tool_core::State<Workspace>, hunks: &[Hunk]) -> Result<Self, String> {
        let mut slots = HashMap::new();
        for h in hunks {
            let (p, m) = match h {
                Hunk::Add { path, .. } | Hunk::Delete { path } => (path, None),
                Hunk::Update { path, move_to, .. } => (path, move_to.as_ref()),
            };
            for raw in std::iter::once(p).chain(m) {
                if slots.contains_key(raw) {
                    continue;
                }
                let slot = match ws.beneath(raw, Missing::AllowLast) {
                    Ok(b) => Some(b),
                    Err(PathError::NotFound { .. }) => {
                        // A new folder: refused like any path if it leads outside.
                        ws.resolve(raw).map_err(|e| e.to_string())?;
                        None
                    }
                    Err(e) => return Err(e.to_string()),
                };
                slots.insert(raw.clone(), slot);
            }
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
    fn path(&self, raw: &str) -> Result<PathBuf, String> {
        match self.slots.get(raw) {
            Some(Some(b)) => Ok(b.path.clone()),
            _ => self.ws.resolve(raw).map_err(|e| e.to_string()),
        }
    }

    /// What kind of entry is there now (not following a symlink): `None` when nothing.
    fn kind(&self, raw: &str) -> Result<Option<FileType>, String> {
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
    fn read(&self, raw: &str) -> Result<Option<Vec<u8>>, std::io::Error> {
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
    fn writable(&self, raw: &str) -> Result<(), String> {
        match self.slots.get(raw) {
            Some(Some(b)) => match b
                .stat_now()
                .ok()
                .flatten()
                .filter(|st| FileType::from_raw_mode(st.st_mode) == FileType::RegularFile)
                .and_then(|st| {
                    crate::fs::target::read_only(b, &b.path.display().to_string(), st.st_mode)
                }) {
                Some(message) => Err(message),
                None => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// Writes `bytes` as the file `raw` (creating missing folders), keeping an old file's mode.
    fn write(
        &mut self,
        raw: &str,
        bytes: &[u8],
        ledger: Option<&FileLedger>,
    ) -> std::io::Result<()> {
        if !matches!(self.slots.get(raw), Some(Some(_))) {
            let b = self
                .ws
                .beneath(raw, Missing::CreateParents)
                .map_err(|e| std::io::Error::other(e.to_string()))?;
            self.slots.insert(raw.to_owned(), Some(b));
        }
        let Some(Some(b)) = self.slots.get(raw) else {
            return Err(std::io::Error::other("the path could not be resolved"));
        };
        let name = b
            .name
            .as_deref()
            .ok_or_else(|| std::io::Error::other("the workspace root is not a file"))?;
        let mode = b.stat_now()?.map(|s| s.st_mode);
        crate::fs::atomic::write_at(b.parent_fd()?, name, bytes, mode)?;
        if let Some(l) = ledger {
            crate::fs::target::record(l, b, bytes);
        }
        Ok(())
    }

    /// Removes the file `raw` (gone already is fine).
    fn remove(&self, raw: &str, ledger: Option<&FileLedger>) -> std::io::Result<()> {
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

/// The read-before-write rule for a file the patch replaces, deletes or
/// moves: read in this context, and still holding what was read.
fn check_read(ledger: Option<&FileLedger>, path: &Path, bytes: &[u8]) -> Result<(), String> {
    match ledger {
        Some(l) => l
            .check_content(path, ContentHasher::hash(bytes))
            .map_err(|e| e.to_string()),
        None => Err(format!(
            "You must read file {} before overwriting it. Use read_file first.",
            path.display()
        )),
    }
}

fn plan(files: &mut Files, ledger: Option<&FileLedger>, hunks: &[Hunk]) -> Result<Plan, String> {
    let mut overlay: Overlay = HashMap::new();
    let mut order: Vec<(PathBuf, String)> = Vec::new();
    let mut originals: HashMap<PathBuf, Before> = HashMap::new();
    let mut summary = Vec::new();
    let mut plan_files = Vec::new();
    let mut diff = String::new();
    let mut diff_truncated = false;
    let mut lenient = Vec::new();
    // What the path holds in the plan so far (the overlay, else the disk).
    let current = |files: &Files, overlay: &Overlay, raw: &str, abs: &Path| match overlay.get(abs) {
        Some(c) => Ok(c.clone()),
        None => files.read(raw),
    };
    let touch = |files: &Files,
                 originals: &mut HashMap<PathBuf, Before>,
                 order: &mut Vec<(PathBuf, String)>,
                 raw: &str,
                 abs: &Path| {
        if !originals.contains_key(abs) {
            let before = match files.read(raw) {
                Ok(content) => Before {
                    existed: content.is_some(),
                    content,
                },
                Err(_) => Before {
                    content: None,
                    existed: true,
                },
            };
            originals.insert(abs.to_path_buf(), before);
            order.push((abs.to_path_buf(), raw.to_owned()));
        }
    };
    for h in hunks {
        match h {
            Hunk::Add { path, contents } => {
                let abs = files.path(path)?;
                let on_disk = !overlay.contains_key(&abs);
                if on_disk {
                    match files.kind(path)? {
                        None => {}
                        Some(FileType::Directory) => {
                            return Err(format!(
                                "Failed to write file {path}: a folder of that name exists"
                            ));
                        }
                        Some(FileType::RegularFile) => {
                            return Err(format!(
                                "Failed to add file {path}: it already exists. Add File only \
                                 creates new files; to change it, read it and use Update File \
                                 (or Delete File first). No files were modified."
                            ));
                        }
                        Some(_) => {
                            return Err(format!(
                                "Failed to write file {path}: not a regular file (a device, socket or pipe)"
                            ));
                        }
                    }
                } else if matches!(overlay.get(&abs), Some(Some(_))) {
                    return Err(format!(
                        "Failed to add file {path}: the patch already adds or changes it. \
                         Give each file one operation. No files were modified."
                    ));
                }
                let fd = fsutil::Diff::compute(path, "", contents);
                diff.push_str(&fd.unified);
                diff_truncated |= fd.truncated;
                let (a, d) = (fd.additions, fd.deletions);
                plan_files
                    .push(json!({"path": path, "kind": "add", "additions": a, "deletions": d}));
                touch(files, &mut originals, &mut order, path, &abs);
                overlay.insert(abs, Some(contents.as_bytes().to_vec()));
                summary.push(format!("A {path}"));
            }
            Hunk::Delete { path } => {
                let abs = files.path(path)?;
                if !overlay.contains_key(&abs) && files.kind(path)? == Some(FileType::Directory) {
                    return Err(format!("Failed to delete file {path}: it is a directory"));
                }
                files.writable(path)?;
                let on_disk = !overlay.contains_key(&abs);
                let old = match current(files, &overlay, path, &abs) {
                    Ok(Some(b)) => b,
                    Ok(None) => {
                        return Err(format!(
                            "Failed to delete file {path}: No such file or directory"
                        ));
                    }
                    Err(e) => return Err(format!("Failed to delete file {path}: {e}")),
                };
                if on_disk {
                    check_read(ledger, &abs, &old)
                        .map_err(|e| format!("Failed to delete file {path}: {e}"))?;
                }
                let old_text = String::from_utf8_lossy(&old).into_owned();
                let fd = fsutil::Diff::compute(path, &old_text, "");
                diff.push_str(&fd.unified);
                diff_truncated |= fd.truncated;
                plan_files.push(json!({"path": path, "kind": "delete", "additions": 0, "deletions": old_text.lines().count()}));
                touch(files, &mut originals, &mut order, path, &abs);
                overlay.insert(abs, None);
                summary.push(format!("D {path}"));
            }
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let abs = files.path(path)?;
                let on_disk = !overlay.contains_key(&abs);
                let old = match current(files, &overlay, path, &abs) {
                    Ok(Some(b)) => b,
                    Ok(None) => {
                        return Err(format!(
                            "Failed to read file to update {path}: No such file or directory (os error 2)"
                        ));
                    }
                    Err(e) => return Err(format!("Failed to read file to update {path}: {e}")),
                };
                files.writable(path)?;
                let file = TextFile::decode(&old)
                    .map_err(|e| format!("Failed to read file to update {path}: {e}"))?;
                let normalized = fsutil::normalize_newlines(&file.text);
                let (new_lf, strategies) = apply_chunks(&normalized, chunks, path)?;
                if !strategies.is_empty() {
                    lenient.push((path.clone(), strategies));
                }
                let new_text = match file.line_ending {
                    LineEnding::Lf => new_lf.clone(),
                    LineEnding::CrLf => LineEnding::CrLf.apply(&new_lf),
                };
                let bytes = file
                    .encode(&new_text)
                    .map_err(|e| format!("Failed to write file {path}: {e}"))?;
                // Checked once the chunks are known to apply, so that a wrong
                // context line is reported as such.
                if on_disk {
                    check_read(ledger, &abs, &old)
                        .map_err(|e| format!("Failed to update file {path}: {e}"))?;
                }
                let shown = move_to.as_deref().unwrap_or(path);
                let fd = fsutil::Diff::compute(shown, &normalized, &new_lf);
                diff.push_str(&fd.unified);
                diff_truncated |= fd.truncated;
                let (a, d) = (fd.additions, fd.deletions);
                match move_to {
                    Some(dest) => {
                        let dest_abs = files.path(dest)?;
                        let dest_on_disk = dest_abs != abs && !overlay.contains_key(&dest_abs);
                        if dest_on_disk {
                            match files.kind(dest)? {
                                None | Some(FileType::RegularFile) => {}
                                Some(FileType::Directory) => {
                                    return Err(format!(
                                        "Failed to move file {path} to {dest}: a folder of that name exists"
                                    ));
                                }
                                Some(_) => {
                                    return Err(format!(
                                        "Failed to move file {path} to {dest}: not a regular file (a device, socket or pipe)"
                                    ));
                                }
                            }
                            files.writable(dest)?;
                            // Moving onto an existing file replaces it: like any
                            // overwrite, that needs a read of it in this context.
                            if let Some(existing) = files
                                .read(dest)
                                .map_err(|e| format!("Failed to move file {path} to {dest}: {e}"))?
                            {
                                check_read(ledger, &dest_abs, &existing).map_err(|e| {
                                    format!(
                                        "Failed to move file {path} to {dest}: the destination already exists. {e}"
                                    )
                                })?;
                            }
                        }
                        touch(files, &mut originals, &mut order, path, &abs);
                        touch(files, &mut originals, &mut order, dest, &dest_abs);
                        if dest_abs != abs {
                            overlay.insert(abs, None);
                        }
                        overlay.insert(dest_abs, Some(bytes));
                        plan_files.push(json!({"path": dest, "from": path, "kind": "move", "additions": a, "deletions": d}));
                    }
                    None => {
                        touch(files, &mut originals, &mut order, path, &abs);
                        overlay.insert(abs, Some(bytes));
                        plan_files.push(
                            json!({"path": path, "kind": "update", "additions": a, "deletions": d}),
                        );
                    }
                }
                summary.push(format!("M {shown}"));
            }
        }
    }
    let ops = order
        .into_iter()
        .filter_map(|(p, raw)| {
            let after = overlay.remove(&p)?;
            let before = originals.remove(&p)?;
            Some(Op {
                path: p,
                raw,
                before,
                after,
            })
        })
        .collect();
    Ok(Plan {
        ops,
        summary,
        files: plan_files,
        diff_truncated: fsutil::cap_diff(&mut diff, fsutil::DIFF_LIMIT) || diff_truncated,
        diff,
        lenient,
    })
}

/// Applies the chunks of one update to `text` (`\n` line breaks); the
/// result ends with a line break unless it is empty (every line removed). Also gives the lenient strategies that
/// placed chunks (see [`seek`]), in order, without repeats.
fn apply_chunks(
    text: &str,
    chunks: &[Chunk],
    path: &str,
) -> Result<(String, Vec<Strategy>), String> {
    let mut lenient: Vec<Strategy> = Vec::new();
    let mut lines: Vec<&str> = text.split('\n').collect();
    if lines.last() == Some(&"") {
        lines.pop();
    }
    let mut replacements: Vec<(usize, usize, Vec<String>)> = Vec::new();
    let mut at = 0usize;
    for chunk in chunks {
        if let Some(ctx) = &chunk.context {
            let Some((idx, _)) = seek(&lines, std::slice::from_ref(ctx), at, false) else {
                return Err(format!("Failed to find context '{ctx}' in {path}"));
            };
            at = idx + 1;
        }
        if chunk.old_lines.is_empty() {
            // A pure addition goes right after its anchor, or at the end without one.
            let idx = if chunk.context.is_some() && !chunk.end_of_file {
                at
            } else {
                lines.len()
            };
            replacements.push((idx, 0, chunk.new_lines.clone()));
            continue;
        }
        let mut pattern: &[String] = &chunk.old_lines;
        let mut new_lines: &[String] = &chunk.new_lines;
        let mut found = seek(&lines, pattern, at, chunk.end_of_file);
        if found.is_none() && pattern.last().is_some_and(String::is_empty) {
            // A trailing empty context line often stands for the file's final break.
            pattern = &pattern[..pattern.len() - 1];
            if new_lines.last().is_some_and(String::is_empty) {
                new_lines = &new_lines[..new_lines.len() - 1];
            }
            found = seek(&lines, pattern, at, chunk.end_of_file);
        }
        let Some((idx, strategy)) = found else {
            return Err(format!(
                "Failed to find expected lines in {path}:\n{}",
                chunk.old_lines.join("\n")
            ));
        };
        if strategy != Strategy::Exact && !lenient.contains(&strategy) {
            lenient.push(strategy);
        }
        // Context lines keep the file's own text (its whitespace, its Unicode form).
        let new: Vec<String> = new_lines
            .iter()
            .zip(&chunk.context_of)
            .map(|(l, k)| match k {
                Some(k) if *k < pattern.len() => lines[idx + k].to_owned(),
                _ => l.clone(),
            })
            .collect();
        replacements.push((idx, pattern.len(), new));
        at = idx + pattern.len();
    }
    replacements.sort_by_key(|r| r.0);
    let mut out: Vec<String> = lines.iter().map(|s| (*s).to_owned()).collect();
    for (start, len, new) in replacements.into_iter().rev() {
        out.splice(start..start + len, new);
    }
    let mut s = out.join("\n");
    // Every line ends with a break; a patch that removes every line leaves an
    // empty file, not one holding a lone line break (found by the
    // `a_patch_from_a_real_diff_gives_the_new_file` property).
    if !out.is_empty() {
        s.push('\n');
    }
    Ok((s, lenient))
}

/// One way of comparing a file line with a patch line.
type LineEq = fn(&str, &str) -> bool;

/// Where `pattern` occurs in `lines` at or after `start`, and the strategy
/// of the pass that found it: exact, then canonically equal under NFC, then
/// ignoring trailing whitespace, then ignoring surrounding whitespace (both
/// [`Strategy::LineTrimmed`]), then with typographic punctuation folded
/// ([`Strategy::UnicodeNormalized`]). With `eof`, a match ending the file is
/// tried first.
fn seek(lines: &[&str], pattern: &[String], start: usize, eof: bool) -> Option<(usize, Strategy)> {
    if pattern.is_empty() {
        return Some((start, Strategy::Exact));
    }
    if pattern.len() > lines.len() {
        return None;
    }
    let last_start = lines.len() - pattern.len();
    let passes: [(LineEq, Strategy); 5] = [
        (|a, b| a == b, Strategy::Exact),
        (nfc_eq, Strategy::CanonicalNfc),
        (|a, b| a.trim_end() == b.trim_end(), Strategy::LineTrimmed),
        (|a, b| a.trim() == b.trim(), Strategy::LineTrimmed),
        (
            |a, b| fold(a.trim()) == fold(b.trim()),
            Strategy::UnicodeNormalized,
        ),
    ];
    for (eq, strategy) in passes {
        let matches_at = |i: usize| pattern.iter().enumerate().all(|(k, p)| eq(lines[i + k], p));
        if eof && last_start >= start && matches_at(last_start) {
            return Some((last_start, strategy));
        }
        if let Some(i) = (start..=last_start).find(|&i| matches_at(i)) {
            return Some((i, strategy));
        }
    }
    None
}

/// Whether two lines are canonically equal (equal in Unicode Normalization
/// Form C); lines already in NFC (all ASCII lines) are compared as they are.
fn nfc_eq(a: &str, b: &str) -> bool {
    use unicode_normalization::{UnicodeNormalization, is_nfc};
    if is_nfc(a) && is_nfc(b) {
        return a == b;
    }
    a.nfc().eq(b.nfc())
}

/// The one model-visible line about chunks placed only leniently, `None`
/// when every chunk matched exactly: "Note: in a.py the patch's lines
/// matched after normalising Unicode (NFC)."
fn lenient_note(lenient: &[(String, Vec<Strategy>)]) -> Option<String> {
    let parts: Vec<String> = lenient
        .iter()
        .map(|(path, strategies)| {
            let how: Vec<&str> = strategies.iter().filter_map(|s| s.note()).collect();
            format!("in {path} the patch's lines matched {}", how.join(" and "))
        })
        .collect();
    (!parts.is_empty()).then(|| format!("Note: {}.", parts.join("; ")))
}

/// Typographic quotes, dashes and spaces in ASCII form.
fn fold(s: &str) -> String {
    s.chars()
        .map(|c| match c {
            '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
            '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' => '"',
            '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
            '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
            c => c,
        })
        .collect()
}

// ---------------------------------------------------------------------------
// Writing

fn execute(
    ctx: &ToolContext,
    ledger: Option<&FileLedger>,
    files: &mut Files,
    plan: &Plan,
) -> ToolResult {
    let mut done: Vec<&Op> = Vec::new();
    for op in &plan.ops {
        let r = match &op.after {
            Some(bytes) => files.write(&op.raw, bytes, ledger),
            None => files.remove(&op.raw, ledger),
        };
        if let Err(e) = r {
            // Put back what was already written, newest first.
            for prev in done.iter().rev() {
                let _ = match (&prev.before.content, prev.before.existed) {
                    (Some(old), _) => files.write(&prev.raw, old, ledger),
                    (None, false) => files.remove(&prev.raw, ledger),
                    (None, true) => Ok(()),
                };
            }
            return ToolResult::failed(format!(
                "Failed to write {}: {e}. No files were modified.",
                op.path.display()
            ));
        }
        done.push(op);
    }
    for op in &plan.ops {
        fsutil::record_change(ctx, &op.path, op.before.clone(), op.after.as_deref());
    }
    let mut out = String::from("Success. Updated the following files:\n");
    for line in &plan.summary {
        out.push_str(line);
        out.push('\n');
    }
    if let Some(note) = lenient_note(&plan.lenient) {
        out.push_str(&note);
        out.push('\n');
    }
    let result = ToolResult::ok(out)
        .with_metadata("files", plan.files.clone())
        .with_metadata("diff", plan.diff.clone());
    if plan.diff_truncated {
        result.with_metadata("diff_truncated", true)
    } else {
        result
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::FileTypeExt;

    /// A workspace holding `files`, each read in the context (as a model
    /// reads before it patches).
    fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
        let (d, ctx) = crate::test_support::workspace_with(files);
        let paths: Vec<_> = files
            .iter()
            .map(|(p, _)| fs::canonicalize(d.path().join(p)).unwrap())
            .collect();
        crate::edit::prime(&ctx, &paths);
        (d, ctx)
    }

    /// A workspace holding `files`, none of them read.
    fn unread(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
        crate::test_support::workspace_with(files)
    }

    async fn run(ctx: &ToolContext, patch: &str) -> ToolResult {
        apply_patch(ctx, patch.to_owned()).await
    }

    fn read(d: &tempfile::TempDir, p: &str) -> String {
        fs::read_to_string(d.path().join(p)).unwrap()
    }

    fn err(r: &ToolResult) -> String {
        r.error
            .as_ref()
            .map(|e| e.message.clone())
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn add_update_delete_summary() {
        let (d, ctx) = setup(&[
            ("multi.txt", "line1\nline2\nline3\nline4\n"),
            ("gone.txt", "bye\n"),
        ]);
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Add File: bar.md\n+This is a new file\n*** Update File: multi.txt\n@@\n-line2\n+changed2\n@@\n-line4\n+changed4\n*** Delete File: gone.txt\n*** End Patch\n",
        )
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(
            r.output,
            "Success. Updated the following files:\nA bar.md\nM multi.txt\nD gone.txt\n"
        );
        assert_eq!(read(&d, "bar.md"), "This is a new file\n");
        assert_eq!(read(&d, "multi.txt"), "line1\nchanged2\nline3\nchanged4\n");
        assert!(!d.path().join("gone.txt").exists());
    }

    #[tokio::test]
    async fn move_creates_folders_and_removes_the_source() {
        let (d, ctx) = setup(&[("old/name.txt", "old content\n")]);
        let r = run(&ctx, "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content\n*** End Patch").await;
        assert!(r.is_ok(), "{r:?}");
        assert!(r.output.contains("M renamed/dir/name.txt"));
        assert_eq!(read(&d, "renamed/dir/name.txt"), "new content\n");
        assert!(!d.path().join("old/name.txt").exists());
    }

    #[tokio::test]
    async fn nothing_is_written_when_one_hunk_fails() {
        let (d, ctx) = setup(&[("a.txt", "a\n")]);
        let r = run(&ctx, "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Update File: a.txt\n@@\n-a\n+b\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch").await;
        assert!(
            err(&r).starts_with("Failed to read file to update missing.txt"),
            "{r:?}"
        );
        assert!(!d.path().join("created.txt").exists());
        assert_eq!(read(&d, "a.txt"), "a\n");
    }

    #[tokio::test]
    async fn grammar_errors() {
        let (_d, ctx) = setup(&[("foo.txt", "stays\n")]);
        let cases = [
            (
                "bad",
                "The first line of the patch must be '*** Begin Patch'",
            ),
            (
                "*** Begin Patch\n*** Add File: x\n+y",
                "The last line of the patch must be '*** End Patch'",
            ),
            ("*** Begin Patch\n*** End Patch\n", "No files were modified"),
            (
                "*** Begin Patch\n*** Update File: foo.txt\n*** End Patch\n",
                "invalid hunk at line 2, Update file hunk for path 'foo.txt' is empty",
            ),
            (
                "*** Begin Patch\n*** Frobnicate File: foo.txt\n*** End Patch\n",
                "invalid hunk at line 2, '*** Frobnicate File: foo.txt' is not a valid hunk header",
            ),
            (
                "*** Begin Patch\n*** Update File: foo.txt\n@@\nxstays\n*** End Patch\n",
                "Unexpected line found in update hunk: 'xstays'",
            ),
            (
                "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch\n",
                "Failed to delete file missing.txt",
            ),
            (
                "*** Begin Patch\n*** Update File: foo.txt\n@@ def missing():\n-stays\n+x\n*** End Patch\n",
                "Failed to find context 'def missing():' in foo.txt",
            ),
            (
                "*** Begin Patch\n*** Update File: foo.txt\n@@\n-nothere\n+x\n*** End Patch\n",
                "Failed to find expected lines in foo.txt:\nnothere",
            ),
            (
                "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch\n",
                "outside the workspace",
            ),
        ];
        for (patch, want) in cases {
            let r = run(&ctx, patch).await;
            assert!(err(&r).contains(want), "{patch:?}: {r:?}");
        }
    }

    #[tokio::test]
    async fn lenient_matching_passes() {
        let (d, ctx) = setup(&[
            ("t.txt", "foo   \nbar\n"),
            ("i.txt", "    indented\nend\n"),
            ("q.py", "print(\u{201C}hi\u{201D})\nx = 1 \u{2013} 2\n"),
        ]);
        let r = run(&ctx, "*** Begin Patch\n*** Update File: t.txt\n@@\n-foo\n+FOO\n bar\n*** Update File: i.txt\n@@\n-indented\n+flat\n end\n*** Update File: q.py\n@@\n-print(\"hi\")\n-x = 1 - 2\n+print(\"bye\")\n+x = 3\n*** End Patch").await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "t.txt"), "FOO\nbar\n");
        assert_eq!(read(&d, "i.txt"), "flat\nend\n");
        assert_eq!(read(&d, "q.py"), "print(\"bye\")\nx = 3\n");
    }

    #[tokio::test]
    async fn additions_go_after_their_anchor_or_at_the_end() {
        let (d, ctx) = setup(&[
            (
                "a.py",
                "class A:\n    def f(self):\n        pass\n\nclass B:\n    pass\n",
            ),
            ("input.txt", "line1\nline2\n"),
            ("f.txt", "import foo\n"),
        ]);
        let r = run(&ctx, "*** Begin Patch\n*** Update File: a.py\n@@ class A:\n+    def g(self):\n+        return 1\n*** Update File: input.txt\n@@\n+added line 1\n+added line 2\n*** Update File: f.txt\n import foo\n+bar\n*** End Patch\n").await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(
            read(&d, "a.py"),
            "class A:\n    def g(self):\n        return 1\n    def f(self):\n        pass\n\nclass B:\n    pass\n"
        );
        assert_eq!(
            read(&d, "input.txt"),
            "line1\nline2\nadded line 1\nadded line 2\n"
        );
        assert_eq!(read(&d, "f.txt"), "import foo\nbar\n");
    }

    #[tokio::test]
    async fn heredoc_wrapper_and_indented_headers() {
        let (d, ctx) = setup(&[("foo.txt", "old\n")]);
        let r = run(&ctx, "<<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+hi\n  *** Update File: foo.txt  \n@@\n-old\n+new\n*** End Patch\nEOF\n").await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "h.txt"), "hi\n");
        assert_eq!(read(&d, "foo.txt"), "new\n");
    }

    #[tokio::test]
    async fn crlf_and_bom_are_kept() {
        let (d, ctx) = setup(&[("w.txt", "\u{feff}one\r\ntwo\r\n")]);
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+TWO\n+three\n*** End Patch",
        )
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "w.txt"), "\u{feff}one\r\nTWO\r\nthree\r\n");
    }

    #[tokio::test]
    async fn directories_are_never_deleted_and_add_never_overwrites() {
        let (d, ctx) = setup(&[("dir/foo.txt", "keep\n"), ("dup.txt", "old\n")]);
        let r = run(&ctx, "*** Begin Patch\n*** Delete File: dir\n*** End Patch").await;
        assert!(err(&r).contains("Failed to delete file dir"));
        assert_eq!(read(&d, "dir/foo.txt"), "keep\n");
        // Add File on an existing file is an error even after a read (Codex's semantics).
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Add File: dup.txt\n+new content\n*** End Patch",
        )
        .await;
        assert!(
            err(&r).contains("Failed to add file dup.txt: it already exists"),
            "{r:?}"
        );
        assert_eq!(read(&d, "dup.txt"), "old\n");
    }

    #[tokio::test]
    async fn unread_files_are_never_replaced_deleted_or_updated() {
        let files = [
            ("a.txt", "one\n"),
            ("b.txt", "two\n"),
            ("sub/c.txt", "three\n"),
        ];
        for patch in [
            "*** Begin Patch\n*** Add File: a.txt\n+owned\n*** End Patch",
            "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch",
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+owned\n*** End Patch",
            "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Delete File: sub/c.txt\n*** End Patch",
            "*** Begin Patch\n*** Update File: sub/../b.txt\n@@\n-two\n+owned\n*** End Patch",
            "*** Begin Patch\n*** Add File: x.txt\n+1\n*** Add File: x.txt\n+2\n*** End Patch",
            "*** Begin Patch\n*** Add File: a.txt\n+1\n*** Add File: a.txt\n+2\n*** End Patch",
        ] {
            let (d, ctx) = unread(&files);
            let r = run(&ctx, patch).await;
            let msg = err(&r);
            assert!(
                msg.contains("You must read file")
                    || msg.contains("already exists")
                    || msg.contains("already adds or changes it"),
                "{patch}: {msg}"
            );
            for (p, content) in files {
                assert_eq!(read(&d, p), content, "{patch}");
            }
            assert!(!d.path().join("new.txt").exists() && !d.path().join("x.txt").exists());
        }
    }

    #[tokio::test]
    async fn a_file_changed_since_its_read_is_not_patched() {
        let (d, ctx) = setup(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
        fs::write(d.path().join("a.txt"), "ONE\n").unwrap();
        fs::write(d.path().join("b.txt"), "TWO\n").unwrap();
        for patch in [
            "*** Begin Patch\n*** Update File: a.txt\n@@\n-ONE\n+x\n*** End Patch",
            "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch",
        ] {
            let r = run(&ctx, patch).await;
            assert!(
                err(&r).contains("has been modified since it was last read"),
                "{r:?}"
            );
        }
        assert_eq!(read(&d, "a.txt"), "ONE\n");
        assert_eq!(read(&d, "b.txt"), "TWO\n");
        // Delete then Add of one path in one patch is a replacement the patch states itself.
        let (d, ctx) = setup(&[("c.txt", "old\n")]);
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Delete File: c.txt\n*** Add File: c.txt\n+new\n*** End Patch",
        )
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "c.txt"), "new\n");
    }

    #[tokio::test]
    async fn read_only_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let (d, ctx) = setup(&[("locked.txt", "a\n"), ("free.txt", "b\n")]);
        let locked = d.path().join("locked.txt");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o444)).unwrap();
        for patch in [
            "*** Begin Patch\n*** Update File: free.txt\n@@\n-b\n+c\n*** Update File: locked.txt\n@@\n-a\n+z\n*** End Patch",
            "*** Begin Patch\n*** Delete File: locked.txt\n*** End Patch",
            "*** Begin Patch\n*** Update File: free.txt\n*** Move to: locked.txt\n@@\n-b\n+c\n*** End Patch",
            "*** Begin Patch\n*** Update File: locked.txt\n*** Move to: other.txt\n@@\n-a\n+z\n*** End Patch",
        ] {
            let r = run(&ctx, patch).await;
            assert!(
                err(&r).contains("is read-only (mode 0444)"),
                "{patch}: {r:?}"
            );
            assert_eq!(read(&d, "locked.txt"), "a\n");
            assert_eq!(read(&d, "free.txt"), "b\n");
            assert!(!d.path().join("other.txt").exists());
        }
    }

    #[tokio::test]
    async fn pipes_are_refused_without_blocking() {
        let (d, ctx) = setup(&[("a.txt", "a\n")]);
        let fifo = d.path().join("pipe");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            return; // no mkfifo on this machine
        }
        for patch in [
            "*** Begin Patch\n*** Add File: pipe\n+x\n*** End Patch",
            "*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch",
            "*** Begin Patch\n*** Delete File: pipe\n*** End Patch",
            "*** Begin Patch\n*** Update File: a.txt\n*** Move to: pipe\n@@\n-a\n+b\n*** End Patch",
        ] {
            let r = tokio::time::timeout(std::time::Duration::from_secs(10), run(&ctx, patch))
                .await
                .expect("apply_patch blocked on a pipe");
            assert!(err(&r).contains("not a regular file"), "{patch}: {r:?}");
            assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
            assert_eq!(read(&d, "a.txt"), "a\n");
        }
    }

    #[tokio::test]
    async fn moving_onto_an_unread_file_is_refused() {
        let (d, ctx) = unread(&[("src.txt", "a\n"), ("dest.txt", "precious\n")]);
        crate::edit::prime(&ctx, &[fs::canonicalize(d.path().join("src.txt")).unwrap()]);
        let patch = "*** Begin Patch\n*** Update File: src.txt\n*** Move to: dest.txt\n@@\n-a\n+b\n*** End Patch";
        let r = run(&ctx, patch).await;
        let msg = err(&r);
        assert!(
            msg.starts_with("Failed to move file src.txt to dest.txt: the destination already exists. You must read file"),
            "{msg}"
        );
        assert_eq!(read(&d, "dest.txt"), "precious\n");
        assert_eq!(read(&d, "src.txt"), "a\n");
        // After a read of the destination the move goes ahead.
        crate::edit::prime(
            &ctx,
            &[fs::canonicalize(d.path().join("dest.txt")).unwrap()],
        );
        let r = run(&ctx, patch).await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "dest.txt"), "b\n");
        assert!(!d.path().join("src.txt").exists());
        // A destination the same patch deletes first needs no second read.
        fs::write(d.path().join("x.txt"), "x\n").unwrap();
        fs::write(d.path().join("y.txt"), "y\n").unwrap();
        crate::edit::prime(
            &ctx,
            &[
                fs::canonicalize(d.path().join("x.txt")).unwrap(),
                fs::canonicalize(d.path().join("y.txt")).unwrap(),
            ],
        );
        let r = run(&ctx, "*** Begin Patch\n*** Delete File: y.txt\n*** Update File: x.txt\n*** Move to: y.txt\n@@\n-x\n+z\n*** End Patch").await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "y.txt"), "z\n");
    }

    #[tokio::test]
    async fn large_diffs_are_capped_in_metadata() {
        let (d, ctx) = setup(&[]);
        let body: String = (0..10_000).map(|i| format!("+line number {i}\n")).collect();
        let mut patch = String::from("*** Begin Patch\n");
        for f in ["a.txt", "b.txt"] {
            patch.push_str(&format!("*** Add File: {f}\n{body}"));
        }
        patch.push_str("*** End Patch");
        let r = run(&ctx, &patch).await;
        assert!(r.is_ok(), "{r:?}");
        let diff = r.metadata["diff"].as_str().unwrap();
        assert!(diff.len() <= fsutil::DIFF_LIMIT + 100, "{}", diff.len());
        assert!(
            diff.contains("more lines not shown"),
            "{}",
            &diff[diff.len() - 200..]
        );
        assert_eq!(r.metadata["diff_truncated"], true);
        assert_eq!(r.metadata["files"][1]["additions"], 10_000);
        assert_eq!(read(&d, "b.txt").lines().count(), 10_000);
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Add File: c.txt\n+x\n*** End Patch",
        )
        .await;
        assert!(r.metadata.get("diff_truncated").is_none(), "{r:?}");
    }

    #[tokio::test]
    async fn end_of_file_anchors_at_the_end() {
        let (d, ctx) = setup(&[("e.txt", "x\ny\nx\n")]);
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Update File: e.txt\n@@\n-x\n+z\n*** End of File\n*** End Patch",
        )
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "e.txt"), "x\ny\nz\n");
    }

    #[tokio::test]
    async fn canonically_equal_unicode_matches_and_context_keeps_the_files_form() {
        // The issue's input for apply_patch: a decomposed file, a precomposed patch.
        let (d, ctx) = setup(&[
            ("n.py", "name = \"cafe\u{301}\"\nother = 1\n"),
            ("k.txt", "\u{1112}\u{1161}\u{11ab} = 1\nnext\n"),
            ("w.txt", "Zo\u{eb}\r\nkeep\r\n"),
        ]);
        let r = run(&ctx, "*** Begin Patch\n*** Update File: n.py\n@@\n-name = \"caf\u{e9}\"\n+name = \"caf\u{e9} au lait\"\n other = 1\n*** End Patch").await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(
            read(&d, "n.py"),
            "name = \"caf\u{e9} au lait\"\nother = 1\n"
        );
        assert_eq!(
            r.output,
            "Success. Updated the following files:\nM n.py\nNote: in n.py the patch's lines matched after normalising Unicode (NFC).\n"
        );
        // A precomposed context line keeps the file's decomposed bytes; the
        // added line is written as given.
        let r = run(&ctx, "*** Begin Patch\n*** Update File: k.txt\n@@\n \u{d55c} = 1\n-next\n+\u{d55c}\n*** End Patch").await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(
            read(&d, "k.txt"),
            "\u{1112}\u{1161}\u{11ab} = 1\n\u{d55c}\n"
        );
        // A decomposed patch against a precomposed CRLF file.
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Update File: w.txt\n@@\n-Zoe\u{308}\n+Zoe\n keep\n*** End Patch",
        )
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(read(&d, "w.txt"), "Zoe\r\nkeep\r\n");
        // Canonically different text is still not found.
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Update File: w.txt\n@@\n-Zo\u{e8}\n+x\n*** End Patch",
        )
        .await;
        assert!(err(&r).contains("Failed to find expected lines"), "{r:?}");
    }

    #[tokio::test]
    async fn lenient_passes_get_one_note_and_context_keeps_its_whitespace() {
        let (d, ctx) = setup(&[
            ("t.txt", "foo   \nbar  \n"),
            ("q.py", "print(\u{201C}hi\u{201D})\n"),
            ("x.txt", "exact\n"),
        ]);
        let r = run(&ctx, "*** Begin Patch\n*** Update File: t.txt\n@@\n-foo\n+FOO\n bar\n*** Update File: q.py\n@@\n-print(\"hi\")\n+print(\"bye\")\n*** Update File: x.txt\n@@\n-exact\n+still exact\n*** End Patch").await;
        assert!(r.is_ok(), "{r:?}");
        // The context line `bar  ` keeps its trailing spaces.
        assert_eq!(read(&d, "t.txt"), "FOO\nbar  \n");
        assert_eq!(read(&d, "q.py"), "print(\"bye\")\n");
        let notes: Vec<&str> = r
            .output
            .lines()
            .filter(|l| l.starts_with("Note:"))
            .collect();
        assert_eq!(
            notes,
            [
                "Note: in t.txt the patch's lines matched after ignoring whitespace at the start and end of lines; in q.py the patch's lines matched after treating typographic quotes, dashes and spaces as their ASCII forms."
            ]
        );
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Update File: x.txt\n@@\n-still exact\n+exact\n*** End Patch",
        )
        .await;
        assert!(!r.output.contains("Note:"), "{r:?}");
    }
}
