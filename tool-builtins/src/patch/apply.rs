//! Applying parsed hunks: every hunk planned in memory against the files as
//! they are under the folder locks (context lines located by the passes of
//! [`super`]'s docs). The write orchestrator (`fs/target.rs`'s
//! `change_set`) then writes every file, and on a failure puts back the
//! files already written.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::json;
use tool_core::meta;

use rustix::fs::FileType;

use crate::fs::changes::Before;
use crate::fs::ledger::{ContentHasher, FileLedger};
use crate::fs::lines::LineEnding;
use crate::fs::replace::Strategy;
use crate::fs::target::{SetOp, SetPlan, WriteSet};
use crate::fs::text::TextFile;

use super::parse::{Chunk, Hunk};

/// The verified plan of a patch.
pub(super) struct Plan {
    /// Per file, the state before and the bytes after (`None` deletes).
    ops: Vec<SetOp>,
    /// The moves (old physical path, new one).
    moves: Vec<(PathBuf, PathBuf)>,
    summary: Vec<String>,
    files: Vec<serde_json::Value>,
    /// The unified diffs of every file, at most [`crate::fs::diff::DIFF_LIMIT`] bytes.
    diff: String,
    /// A diff was cut (at the limit of one file's or of the whole).
    diff_truncated: bool,
    /// Per updated file whose chunks matched only leniently: its path and
    /// the lenient strategies, in order, without repeats.
    lenient: Vec<(String, Vec<Strategy>)>,
}

/// The content a path has in the plan so far: `Some(None)` when deleted, `None` when untouched.
type Overlay = HashMap<PathBuf, Option<Vec<u8>>>;

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

pub(super) fn plan(
    files: &mut WriteSet,
    ledger: Option<&FileLedger>,
    hunks: &[Hunk],
) -> Result<Plan, String> {
    let mut overlay: Overlay = HashMap::new();
    let mut order: Vec<(PathBuf, String)> = Vec::new();
    let mut originals: HashMap<PathBuf, Before> = HashMap::new();
    let mut summary = Vec::new();
    let mut plan_files = Vec::new();
    let mut diff = String::new();
    let mut diff_truncated = false;
    let mut lenient = Vec::new();
    let mut moves = Vec::new();
    // What the path holds in the plan so far (the overlay, else the disk).
    let current =
        |files: &WriteSet, overlay: &Overlay, raw: &str, abs: &Path| match overlay.get(abs) {
            Some(c) => Ok(c.clone()),
            None => files.read(raw),
        };
    let touch = |files: &WriteSet,
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
                let fd = crate::fs::diff::Diff::compute(path, "", contents);
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
                let fd = crate::fs::diff::Diff::compute(path, &old_text, "");
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
                let normalized = crate::fs::lines::normalize_newlines(&file.text);
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
                let fd = crate::fs::diff::Diff::compute(shown, &normalized, &new_lf);
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
                            moves.push((abs.clone(), dest_abs.clone()));
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
            Some(SetOp {
                path: p,
                raw,
                before,
                after,
            })
        })
        .collect();
    Ok(Plan {
        ops,
        moves,
        summary,
        files: plan_files,
        diff_truncated: crate::fs::diff::cap_diff(&mut diff, crate::fs::diff::DIFF_LIMIT)
            || diff_truncated,
        diff,
        lenient,
    })
}

/// Applies the chunks of one update to `text` (`\n` line breaks); the
/// result ends with a line break unless it is empty (every line removed). Also gives the lenient strategies that
/// placed chunks (see [`seek`]), in order, without repeats.
pub(super) fn apply_chunks(
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
pub(super) fn seek(
    lines: &[&str],
    pattern: &[String],
    start: usize,
    eof: bool,
) -> Option<(usize, Strategy)> {
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
pub(super) fn nfc_eq(a: &str, b: &str) -> bool {
    use unicode_normalization::{UnicodeNormalization, is_nfc};
    if is_nfc(a) && is_nfc(b) {
        return a == b;
    }
    a.nfc().eq(b.nfc())
}

/// The one model-visible line about chunks placed only leniently, `None`
/// when every chunk matched exactly: "Note: in a.py the patch's lines
/// matched after normalising Unicode (NFC)."
pub(super) fn lenient_note(lenient: &[(String, Vec<Strategy>)]) -> Option<String> {
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
pub(super) fn fold(s: &str) -> String {
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

// Reporting

/// The plan as the write orchestrator takes it: the ops, the moves, and
/// the report of a successful write (the summary lines, a note about
/// lenient matches, `files`, `diff`, `diff_truncated`).
pub(super) fn into_set_plan(plan: Plan) -> SetPlan {
    let mut out = String::from("Success. Updated the following files:\n");
    for line in &plan.summary {
        out.push_str(line);
        out.push('\n');
    }
    if let Some(note) = lenient_note(&plan.lenient) {
        out.push_str(&note);
        out.push('\n');
    }
    let mut metadata = vec![
        (meta::FILES, serde_json::Value::from(plan.files)),
        (meta::DIFF, plan.diff.into()),
    ];
    if plan.diff_truncated {
        metadata.push((meta::DIFF_TRUNCATED, true.into()));
    }
    SetPlan {
        ops: plan.ops,
        moves: plan.moves,
        output: out,
        metadata,
    }
}
