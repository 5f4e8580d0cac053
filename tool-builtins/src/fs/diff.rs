//! Unified diffs for the metadata of every write, cut at a byte cap.
//!
//! `similar` diffs the lines and writes the hunk headers and lines (its own
//! `UnifiedHunkHeader` and change display); this module adds what it lacks:
//! the common prefix and suffix are skipped before diffing (so a small edit
//! of a huge file costs a scan, not a diff of every line, with the skipped
//! lines added back to the hunk positions), and the text is cut at a byte
//! cap with a note of what was left out.

use similar::udiff::UnifiedHunkHeader;
use similar::{ChangeTag, DiffOp};

/// Lines of context around each change in a unified diff.
const DIFF_CONTEXT: usize = 3;

/// Bytes of unified diff a tool keeps in its metadata (64 KiB): a rewrite
/// of a huge file must not put the whole file, twice, into every result.
pub const DIFF_LIMIT: usize = 64 * 1024;

/// Cuts `unified` to at most `limit` bytes on a line boundary and appends a
/// note saying how many lines were left out; `true` when it cut.
pub fn cap_diff(unified: &mut String, limit: usize) -> bool {
    if unified.len() <= limit {
        return false;
    }
    let keep = unified.as_bytes()[..limit]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let omitted = memchr::memchr_iter(b'\n', &unified.as_bytes()[keep..]).count()
        + usize::from(!unified.ends_with('\n'));
    unified.truncate(keep);
    unified.push_str(&truncation_note(omitted, limit));
    true
}

fn truncation_note(omitted_lines: usize, limit: usize) -> String {
    format!(
        "... (diff truncated to {} KiB: {omitted_lines} more lines not shown)\n",
        limit / 1024
    )
}

/// A unified diff and its line counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    /// The unified diff text (`---`/`+++` header, `@@` hunks); empty when nothing changed.
    pub unified: String,
    /// Lines added.
    pub additions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// `unified` was cut at [`DIFF_LIMIT`] (a note at its end says so);
    /// `additions` and `deletions` still count every line.
    pub truncated: bool,
}

impl Diff {
    /// Diffs `old` → `new` line by line, three lines of context, headed with `path`.
    ///
    /// The common prefix and suffix are skipped before `similar` runs, so a
    /// small edit of a huge file costs a scan of it, not a diff of every line.
    /// The text is cut at [`DIFF_LIMIT`] bytes (see [`Diff::compute_with_limit`]).
    pub fn compute(path: &str, old: &str, new: &str) -> Self {
        Self::compute_with_limit(path, old, new, DIFF_LIMIT)
    }

    /// [`Diff::compute`] keeping at most `limit` bytes of unified text, cut on
    /// a line boundary, plus a note with the number of lines left out. Lines
    /// past the limit are counted, never stored.
    pub fn compute_with_limit(path: &str, old: &str, new: &str, limit: usize) -> Self {
        let (start, old_end, new_end) = changed_region(old, new);
        let first_line = memchr::memchr_iter(b'\n', &old.as_bytes()[..start]).count();
        let diff = similar::TextDiff::from_lines(&old[start..old_end], &new[start..new_end]);
        let mut additions = 0;
        let mut deletions = 0;
        let mut unified = String::new();
        let mut omitted = 0usize;
        let mut first_group = true;
        // Appends one line (or a line and its "no newline" marker) while it fits.
        let mut push = |unified: &mut String, line: &str, lines: usize| {
            if omitted == 0 && unified.len() + line.len() <= limit {
                unified.push_str(line);
            } else {
                omitted += lines;
            }
        };
        for group in diff.grouped_ops(DIFF_CONTEXT) {
            if group.is_empty() {
                continue;
            }
            if first_group {
                first_group = false;
                push(&mut unified, &format!("--- {path}\n+++ {path}\n"), 2);
            }
            // similar's own hunk header, for the ops moved to the lines
            // they have in the whole text (the skipped prefix added back).
            let shifted: Vec<DiffOp> = group.iter().map(|op| shift(*op, first_line)).collect();
            push(
                &mut unified,
                &format!("{}\n", UnifiedHunkHeader::new(&shifted)),
                1,
            );
            for op in &group {
                for change in diff.iter_changes(op) {
                    match change.tag() {
                        ChangeTag::Equal => {}
                        ChangeTag::Delete => deletions += 1,
                        ChangeTag::Insert => additions += 1,
                    }
                    // similar's line form: sign, text, and a newline when the
                    // text had none (then the unified-diff marker follows).
                    let mut line = format!("{}{change}", change.tag());
                    let mut lines = 1;
                    if change.missing_newline() {
                        line.push_str("\\ No newline at end of file\n");
                        lines = 2;
                    }
                    push(&mut unified, &line, lines);
                }
            }
        }
        let truncated = omitted > 0;
        if truncated {
            unified.push_str(&truncation_note(omitted, limit));
        }
        Self {
            unified,
            additions,
            deletions,
            truncated,
        }
    }
}

/// `op` moved down by `lines` lines in both texts.
fn shift(op: DiffOp, lines: usize) -> DiffOp {
    match op {
        DiffOp::Equal {
            old_index,
            new_index,
            len,
        } => DiffOp::Equal {
            old_index: old_index + lines,
            new_index: new_index + lines,
            len,
        },
        DiffOp::Delete {
            old_index,
            old_len,
            new_index,
        } => DiffOp::Delete {
            old_index: old_index + lines,
            old_len,
            new_index: new_index + lines,
        },
        DiffOp::Insert {
            old_index,
            new_index,
            new_len,
        } => DiffOp::Insert {
            old_index: old_index + lines,
            new_index: new_index + lines,
            new_len,
        },
        DiffOp::Replace {
            old_index,
            old_len,
            new_index,
            new_len,
        } => DiffOp::Replace {
            old_index: old_index + lines,
            old_len,
            new_index: new_index + lines,
            new_len,
        },
    }
}

/// The byte range that differs between `old` and `new`, widened to whole
/// lines plus [`DIFF_CONTEXT`] lines on each side: `(start, old_end, new_end)`,
/// `start` being the same in both.
fn changed_region(old: &str, new: &str) -> (usize, usize, usize) {
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let same = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    // Back to the start of the line, then DIFF_CONTEXT more lines.
    let mut start = ob[..same]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    for _ in 0..DIFF_CONTEXT {
        if start == 0 {
            break;
        }
        start = ob[..start - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
    }
    let max_suffix = (ob.len() - same).min(nb.len() - same);
    let mut suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    // The suffix must start a line in both texts: inside the common part,
    // move to just after its first line break.
    let at_line_start = |bytes: &[u8], pos: usize| pos == 0 || bytes[pos - 1] == b'\n';
    if suffix > 0 && !(at_line_start(ob, ob.len() - suffix) && at_line_start(nb, nb.len() - suffix))
    {
        let from = ob.len() - suffix;
        suffix = ob[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(0, |i| suffix - i - 1);
    }
    // Give back DIFF_CONTEXT lines of the suffix as context.
    let mut old_end = ob.len() - suffix;
    for _ in 0..DIFF_CONTEXT {
        if old_end == ob.len() {
            break;
        }
        old_end = ob[old_end..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(ob.len(), |i| old_end + i + 1);
    }
    let new_end = nb.len() - (ob.len() - old_end);
    (start, old_end, new_end)
}

/// A unified diff of `old` → `new` with three lines of context, headed with `path`.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    Diff::compute(path, old, new).unified
}

/// Lines added and removed between `old` and `new`.
pub fn diff_stats(old: &str, new: &str) -> (usize, usize) {
    let d = Diff::compute("", old, new);
    (d.additions, d.deletions)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diffs_of_small_edits_in_large_texts_match_a_full_diff() {
        let old: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let cases = [
            old.replace("line 1000\n", "line 1000 changed\n"),
            old.replace("line 0\n", ""),
            old.replace("line 1999\n", "line 1999\nextra"),
            old.replace("line 5\n", "a\nb\n").replace("line 1990\n", ""),
            String::new(),
            old.clone(),
        ];
        for new in cases {
            let full = similar::TextDiff::from_lines(old.as_str(), new.as_str())
                .unified_diff()
                .context_radius(3)
                .header("f", "f")
                .to_string();
            let ours = Diff::compute("f", &old, &new);
            assert_eq!(ours.unified, full, "for {:?}", &new[..new.len().min(40)]);
        }
        // One-line hunks as similar writes them (`-1 +1`, no `,1`), and a
        // missing final newline.
        for (old, new) in [("a\n", "b\n"), ("a", "b"), ("x\na\n", "x\nb")] {
            let full = similar::TextDiff::from_lines(old, new)
                .unified_diff()
                .context_radius(3)
                .header("f", "f")
                .to_string();
            assert_eq!(
                Diff::compute("f", old, new).unified,
                full,
                "{old:?} -> {new:?}"
            );
        }
        assert!(
            Diff::compute("f", "a\n", "b\n")
                .unified
                .contains("@@ -1 +1 @@")
        );
        let d = Diff::compute("f", "", "a\nb\n");
        assert_eq!((d.additions, d.deletions), (2, 0));
        assert!(d.unified.contains("@@ -0,0 +1,2 @@"), "{}", d.unified);
    }

    #[test]
    fn large_diffs_are_cut_on_a_line_boundary() {
        let new: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let d = Diff::compute("f", "", &new);
        assert!(d.truncated);
        assert_eq!((d.additions, d.deletions), (20_000, 0));
        assert!(d.unified.len() <= DIFF_LIMIT + 100, "{}", d.unified.len());
        let (body, note) = d.unified.rsplit_once("... (diff truncated").unwrap();
        assert!(body.ends_with('\n'));
        let shown = body.lines().filter(|l| l.starts_with('+')).count() - 1; // minus "+++"
        assert!(
            note.contains(&format!(" {} more lines not shown", 20_000 - shown)),
            "{note}"
        );
        assert!(!Diff::compute("f", "a\n", "b\n").truncated);

        let mut text = "one\ntwo\nthree\n".to_owned();
        assert!(cap_diff(&mut text, 9));
        assert_eq!(
            text,
            "one\ntwo\n... (diff truncated to 0 KiB: 1 more lines not shown)\n"
        );
        let mut short = "x\n".to_owned();
        assert!(!cap_diff(&mut short, 9));
    }

    #[test]
    fn diffs() {
        let d = unified_diff("f.txt", "a\nb\n", "a\nc\n");
        assert!(d.contains("-b\n+c\n"), "{d}");
        assert_eq!(diff_stats("a\nb\n", "a\nc\nd\n"), (2, 1));
    }
}
