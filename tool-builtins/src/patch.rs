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

use crate::edit::run_blocking;
use crate::fsutil::{self, Before, LineEnding, TextFile};
use crate::ledger::FileLedger;
use crate::replace::Strategy;
use crate::workspace::{Workspace, workspace_of};

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
#[tool(kind = "write", destructive)]
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
        match plan(&ws, ledger, &hunks) {
            Ok(plan) => execute(&ctx, ledger, &plan),
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

fn current(overlay: &Overlay, path: &Path) -> Result<Option<Vec<u8>>, std::io::Error> {
    match overlay.get(path) {
        Some(c) => Ok(c.clone()),
        // Never open a pipe or device: reading it could block forever.
        None if path.exists() && !path.is_file() => Err(std::io::Error::other(
            "not a regular file (a directory, device, socket or pipe)",
        )),
        None => match std::fs::read(path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        },
    }
}

fn plan(ws: &Workspace, ledger: Option<&FileLedger>, hunks: &[Hunk]) -> Result<Plan, String> {
    let mut overlay: Overlay = HashMap::new();
    let mut order: Vec<PathBuf> = Vec::new();
    let mut originals: HashMap<PathBuf, Before> = HashMap::new();
    let mut summary = Vec::new();
    let mut files = Vec::new();
    let mut diff = String::new();
    let mut diff_truncated = false;
    let mut lenient = Vec::new();
    let resolve = |p: &str| ws.resolve(p).map_err(|e| e.to_string());
    // A read-only file is never replaced, deleted or moved away.
    let writable = |abs: &Path| fsutil::read_only(abs).map_or(Ok(()), Err);
    // Never capture (read) or replace a pipe or device: reading could block forever.
    let special = |overlay: &Overlay, abs: &Path| {
        !overlay.contains_key(abs) && abs.exists() && !abs.is_file() && !abs.is_dir()
    };
    let mut touch = |path: &Path, order: &mut Vec<PathBuf>| {
        if !originals.contains_key(path) {
            originals.insert(path.to_path_buf(), Before::capture(path));
            order.push(path.to_path_buf());
        }
    };
    for h in hunks {
        match h {
            Hunk::Add { path, contents } => {
                let abs = resolve(path)?;
                if abs.is_dir() {
                    return Err(format!(
                        "Failed to write file {path}: a folder of that name exists"
                    ));
                }
                if special(&overlay, &abs) {
                    return Err(format!(
                        "Failed to write file {path}: not a regular file (a device, socket or pipe)"
                    ));
                }
                writable(&abs)?;
                let old = current(&overlay, &abs).unwrap_or(None);
                let old_text = old
                    .as_deref()
                    .map(|b| String::from_utf8_lossy(b).into_owned())
                    .unwrap_or_default();
                let fd = fsutil::Diff::compute(path, &old_text, contents);
                diff.push_str(&fd.unified);
                diff_truncated |= fd.truncated;
                let (a, d) = (fd.additions, fd.deletions);
                files.push(json!({"path": path, "kind": "add", "additions": a, "deletions": d}));
                touch(&abs, &mut order);
                overlay.insert(abs, Some(contents.as_bytes().to_vec()));
                summary.push(format!("A {path}"));
            }
            Hunk::Delete { path } => {
                let abs = resolve(path)?;
                if abs.is_dir() {
                    return Err(format!("Failed to delete file {path}: it is a directory"));
                }
                writable(&abs)?;
                let old = match current(&overlay, &abs) {
                    Ok(Some(b)) => b,
                    Ok(None) => {
                        return Err(format!(
                            "Failed to delete file {path}: No such file or directory"
                        ));
                    }
                    Err(e) => return Err(format!("Failed to delete file {path}: {e}")),
                };
                let old_text = String::from_utf8_lossy(&old).into_owned();
                let fd = fsutil::Diff::compute(path, &old_text, "");
                diff.push_str(&fd.unified);
                diff_truncated |= fd.truncated;
                files.push(json!({"path": path, "kind": "delete", "additions": 0, "deletions": old_text.lines().count()}));
                touch(&abs, &mut order);
                overlay.insert(abs, None);
                summary.push(format!("D {path}"));
            }
            Hunk::Update {
                path,
                move_to,
                chunks,
            } => {
                let abs = resolve(path)?;
                let old = match current(&overlay, &abs) {
                    Ok(Some(b)) if !abs.is_dir() => b,
                    Ok(_) => {
                        return Err(format!(
                            "Failed to read file to update {path}: No such file or directory (os error 2)"
                        ));
                    }
                    Err(e) => return Err(format!("Failed to read file to update {path}: {e}")),
                };
                writable(&abs)?;
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
                let shown = move_to.as_deref().unwrap_or(path);
                let fd = fsutil::Diff::compute(shown, &normalized, &new_lf);
                diff.push_str(&fd.unified);
                diff_truncated |= fd.truncated;
                let (a, d) = (fd.additions, fd.deletions);
                match move_to {
                    Some(dest) => {
                        let dest_abs = resolve(dest)?;
                        if dest_abs.is_dir() {
                            return Err(format!(
                                "Failed to move file {path} to {dest}: a folder of that name exists"
                            ));
                        }
                        if special(&overlay, &dest_abs) {
                            return Err(format!(
                                "Failed to move file {path} to {dest}: not a regular file (a device, socket or pipe)"
                            ));
                        }
                        writable(&dest_abs)?;
                        // Moving onto an existing file replaces it: like any
                        // overwrite, that needs a read of it in this context.
                        if dest_abs != abs && !overlay.contains_key(&dest_abs) && dest_abs.exists()
                        {
                            let read = match ledger {
                                Some(l) => l.check(&dest_abs).map_err(|e| e.to_string()),
                                None => Err(format!(
                                    "You must read file {} before overwriting it. Use read_file first.",
                                    dest_abs.display()
                                )),
                            };
                            if let Err(e) = read {
                                return Err(format!(
                                    "Failed to move file {path} to {dest}: the destination already exists. {e}"
                                ));
                            }
                        }
                        touch(&abs, &mut order);
                        touch(&dest_abs, &mut order);
                        if dest_abs != abs {
                            overlay.insert(abs, None);
                        }
                        overlay.insert(dest_abs, Some(bytes));
                        files.push(json!({"path": dest, "from": path, "kind": "move", "additions": a, "deletions": d}));
                    }
                    None => {
                        touch(&abs, &mut order);
                        overlay.insert(abs, Some(bytes));
                        files.push(
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
        .filter_map(|p| {
            let after = overlay.remove(&p)?;
            let before = originals.remove(&p)?;
            Some(Op {
                path: p,
                before,
                after,
            })
        })
        .collect();
    Ok(Plan {
        ops,
        summary,
        files,
        diff_truncated: fsutil::cap_diff(&mut diff, fsutil::DIFF_LIMIT) || diff_truncated,
        diff,
        lenient,
    })
}

/// Applies the chunks of one update to `text` (`\n` line breaks); the
/// result ends with a line break. Also gives the lenient strategies that
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
    s.push('\n');
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

fn execute(ctx: &ToolContext, ledger: Option<&FileLedger>, plan: &Plan) -> ToolResult {
    let mut done: Vec<&Op> = Vec::new();
    for op in &plan.ops {
        let r = match &op.after {
            Some(bytes) => fsutil::write_atomic(&op.path, bytes),
            None => match std::fs::remove_file(&op.path) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
                r => r,
            },
        };
        if let Err(e) = r {
            // Put back what was already written, newest first.
            for prev in done.iter().rev() {
                let _ = match (&prev.before.content, prev.before.existed) {
                    (Some(old), _) => fsutil::write_atomic(&prev.path, old),
                    (None, false) => std::fs::remove_file(&prev.path),
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
        if let Some(l) = ledger {
            match &op.after {
                Some(bytes) => {
                    let _ = l.record_bytes(&op.path, bytes);
                }
                None => l.forget(&op.path),
            }
        }
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

    fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
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
    async fn directories_are_never_deleted_and_add_overwrites() {
        let (d, ctx) = setup(&[("dir/foo.txt", "keep\n"), ("dup.txt", "old\n")]);
        let r = run(&ctx, "*** Begin Patch\n*** Delete File: dir\n*** End Patch").await;
        assert!(err(&r).contains("Failed to delete file dir"));
        assert_eq!(read(&d, "dir/foo.txt"), "keep\n");
        let r = run(
            &ctx,
            "*** Begin Patch\n*** Add File: dup.txt\n+new content\n*** End Patch",
        )
        .await;
        assert!(r.is_ok());
        assert_eq!(read(&d, "dup.txt"), "new content\n");
    }

    #[tokio::test]
    async fn read_only_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let (d, ctx) = setup(&[("locked.txt", "a\n"), ("free.txt", "b\n")]);
        let locked = d.path().join("locked.txt");
        fs::set_permissions(&locked, fs::Permissions::from_mode(0o444)).unwrap();
        for patch in [
            "*** Begin Patch\n*** Update File: free.txt\n@@\n-b\n+c\n*** Update File: locked.txt\n@@\n-a\n+z\n*** End Patch",
            "*** Begin Patch\n*** Add File: locked.txt\n+z\n*** End Patch",
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
        let (d, ctx) = setup(&[("src.txt", "a\n"), ("dest.txt", "precious\n")]);
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
        // A destination the same patch deletes first needs no read.
        fs::write(d.path().join("x.txt"), "x\n").unwrap();
        fs::write(d.path().join("y.txt"), "y\n").unwrap();
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
