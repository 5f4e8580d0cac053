//! `edit_file`: replace a string in a file, found by the strategies of [`crate::fs::replace`].

use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, meta, tool};

use crate::fs::lines::LineEnding;
use crate::fs::lines::NewlineMap;
use crate::fs::replace::{self, Strategy};
use crate::fs::target::{self, Current, NewText, Open};

/// "No changes to apply" message.
pub const IDENTICAL: &str = "No changes to apply: old_string and new_string are identical.";
/// "No changes to apply" when every `old_string` differs from its
/// `new_string` but the file would not change: a loose match whose text
/// already equals `new_string` (`old_string` `"a "` matching the line `a`,
/// `new_string` `"a"`), or later edits of a `multi_edit` undoing earlier ones.
pub const UNCHANGED: &str = "No changes to apply: the edit leaves the file as it is (old_string matched \
     text that already equals new_string, e.g. loosely, ignoring whitespace; or later edits undo earlier \
     ones). The file was not changed.";
/// How the message for an ambiguous `old_string` starts (it goes on with the count and lines).
pub const MULTIPLE: &str = "Found multiple matches for old_string";
/// The refusal of an empty `old_string` on a file that has content.
pub const EMPTY_OLD_ON_EXISTING: &str = "old_string is empty, which creates a new file, but this file already exists and has content. \
     To replace the whole file use write_file; to add or change text, give a non-empty old_string \
     (for example the last line) and repeat it in new_string. The file was not changed.";
/// The success output of `edit_file` and `multi_edit`.
pub const APPLIED: &str = "Edit applied successfully.";

/// Replace `old_string` with `new_string` in a file.
///
/// The file must have been read with `read_file` first (creating a file
/// with an empty `old_string` needs no read). `old_string` must identify one
/// place in the file; give more surrounding lines when it is not unique, or
/// set `replace_all` to change every occurrence. Line endings are matched
/// loosely and the file keeps its own style; `new_string` is written as
/// given. When `old_string` matched only loosely (whitespace, indentation,
/// Unicode form, escapes) the output says so on a "Note:" line, and lines
/// indented differently from `old_string` get `new_string` re-indented to
/// the file's indentation. An empty `old_string` creates a new file with
/// `new_string` as content; it is refused on a file that has content (use
/// `write_file` to replace a whole file).
///
/// # Arguments
/// * `file_path` - Path of the file to edit (relative to the workspace root, or absolute).
/// * `old_string` - The text to replace; empty only to create a new file.
/// * `new_string` - The replacement text; must differ from `old_string`.
/// * `replace_all` - Replace every occurrence of `old_string` (default false).
///
/// # Examples
/// ```json
/// {"file_path": "src/main.rs", "old_string": "let retries = 3;", "new_string": "let retries = 5;"}
/// {"file_path": "src/lib.rs", "old_string": "old_name", "new_string": "new_name", "replace_all": true}
/// ```
#[tool(kind = "write", tags = ["fs", "edit"])]
pub async fn edit_file(
    context: &ToolContext,
    file_path: String,
    old_string: String,
    new_string: String,
    #[arg(default = false)] replace_all: bool,
) -> Result<ToolResult, ToolError> {
    if old_string == new_string {
        return Err(ToolError::new(ErrorKind::InvalidArguments, IDENTICAL));
    }
    edit(
        context,
        &file_path,
        vec![EditSpec {
            old_string,
            new_string,
            replace_all,
        }],
        Vec::new(),
    )
    .await
}

/// `edit_file` and `multi_edit`: [`plan_edits`] through the write
/// orchestrator ([`target::change`]), with `extra` metadata after the
/// strategies.
pub(crate) async fn edit(
    ctx: &ToolContext,
    file_path: &str,
    edits: Vec<EditSpec>,
    extra: Vec<(&'static str, serde_json::Value)>,
) -> Result<ToolResult, ToolError> {
    // Checked before the file is opened: an edit that changes nothing is
    // refused as such, read or not.
    if let Some(i) = edits.iter().position(|e| e.old_string == e.new_string) {
        return Err(edit_failed(edits.len(), i, IDENTICAL));
    }
    let creating = edits.first().is_some_and(|e| e.old_string.is_empty());
    target::change(ctx, file_path, Open::edit(creating), move |current| {
        let mut new = plan_edits(&current, &edits)?;
        new.extra.extend(extra);
        Ok(new)
    })
    .await
}

/// One replacement, as `edit_file` takes it and `multi_edit` lists them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EditSpec {
    pub(crate) old_string: String,
    pub(crate) new_string: String,
    pub(crate) replace_all: bool,
}

/// Applies `edits` in order, in memory, to the file's current text; the
/// orchestrator writes only when all succeed. An empty first `old_string`
/// creates the file, or fills an existing empty one; on a file with content
/// any empty `old_string` is refused ([`EMPTY_OLD_ON_EXISTING`]) before
/// anything is matched.
///
/// # Errors
/// The `failed` error of the first edit that does not apply (prefixed
/// "Edit N of M failed: " when there are several), or [`UNCHANGED`].
pub(crate) fn plan_edits(current: &Current<'_>, edits: &[EditSpec]) -> Result<NewText, ToolError> {
    let multi = edits.len() > 1;
    let fail = |i: usize, msg: &str| edit_failed(edits.len(), i, msg);
    let exists = current.exists;
    if exists && !current.text.is_empty() {
        // An empty old_string means "create"; on a file with content it
        // would silently replace everything.
        if let Some(i) = edits.iter().position(|e| e.old_string.is_empty()) {
            return Err(fail(i, EMPTY_OLD_ON_EXISTING));
        }
    }
    let mut text = std::borrow::Cow::Borrowed(current.text);
    let mut strategies = Vec::with_capacity(edits.len());
    let mut notes = Vec::with_capacity(edits.len());
    for (i, e) in edits.iter().enumerate() {
        if e.old_string.is_empty() {
            if i > 0 {
                return Err(fail(
                    i,
                    "old_string is empty; only the first edit may create the file.",
                ));
            }
            text = std::borrow::Cow::Owned(if exists {
                current.line_ending.apply(&e.new_string)
            } else {
                e.new_string.clone()
            });
            strategies.push("create");
            notes.push(None);
            continue;
        }
        match apply_edit(&text, current.line_ending, e) {
            Ok(applied) => {
                text = std::borrow::Cow::Owned(applied.text);
                strategies.push(applied.strategy.name());
                notes.push(applied.note);
            }
            Err(msg) => return Err(fail(i, &msg)),
        }
    }
    if exists && text == current.text {
        return Err(ToolError::new(ErrorKind::Failed, UNCHANGED));
    }
    let mut extra = Vec::with_capacity(2);
    if multi {
        extra.push((meta::STRATEGIES, strategies.clone().into()));
    }
    if let Some(last) = strategies.last() {
        extra.push((meta::STRATEGY, (*last).into()));
    }
    Ok(NewText {
        text: text.into_owned(),
        output: applied_output(&notes),
        extra,
    })
}

/// The `failed` error of edit `i` of `count`: `msg`, prefixed
/// "Edit I of N failed: " when there are several.
fn edit_failed(count: usize, i: usize, msg: &str) -> ToolError {
    let message = if count > 1 {
        format!("Edit {} of {count} failed: {msg}", i + 1)
    } else {
        msg.to_owned()
    };
    ToolError::new(ErrorKind::Failed, message)
}

/// One replacement applied in memory by [`apply_edit`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Applied {
    /// The whole text after the replacement, in the file's line endings.
    pub(crate) text: String,
    /// The strategy that located `old_string`.
    pub(crate) strategy: Strategy,
    /// The model-facing note of a lenient match ([`replace::Plan::note`]).
    pub(crate) note: Option<String>,
}

/// Applies one replacement to `text` (in the file's own line endings):
/// matching runs on `\n`-normalised text, the spans are mapped back, and
/// `new_string` (re-indented when a lenient match needs it, see
/// [`replace::plan`]) goes in with the file's line-ending style. Text
/// outside the spans is untouched.
///
/// # Errors
/// The model-facing message: [`IDENTICAL`], or a [`replace::MatchError`]'s.
pub(crate) fn apply_edit(
    text: &str,
    style: LineEnding,
    edit: &EditSpec,
) -> Result<Applied, String> {
    let normalized = crate::fs::lines::normalize_newlines(text);
    let find = crate::fs::lines::normalize_newlines(&edit.old_string);
    let new = crate::fs::lines::normalize_newlines(&edit.new_string);
    if find == new {
        return Err(IDENTICAL.to_owned());
    }
    let plan =
        replace::plan(&normalized, &find, &new, edit.replace_all).map_err(|e| e.to_string())?;
    let map = NewlineMap::new(text);
    let mut out = String::with_capacity(text.len() + new.len());
    let mut at = 0;
    for r in &plan.replacements {
        let start = map.to_original(r.span.start);
        let end = map.to_original(r.span.end);
        out.push_str(&text[at..start]);
        out.push_str(&style.apply(&r.text));
        at = end;
    }
    out.push_str(&text[at..]);
    Ok(Applied {
        text: out,
        strategy: plan.strategy,
        note: plan.note(),
    })
}

/// The model-facing output of a successful edit: [`APPLIED`], and on a
/// second line the note about lenient matches when there is one.
pub(crate) fn applied_output(notes: &[Option<String>]) -> String {
    match replace::note_line(notes) {
        Some(line) => format!("{APPLIED}\n{line}"),
        None => APPLIED.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random mixes of CRLF and LF lines: a two-line `old_string` written
    /// with `\n` replaces exactly its span (whatever break joins its lines),
    /// and every byte outside stays as it was.
    #[test]
    fn apply_edit_touches_only_the_span() {
        let mut seed = 0x1234_5678_9abc_def0_u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            usize::try_from(seed % 1000).unwrap()
        };
        for round in 0..300 {
            let n = next() % 20 + 3;
            let target = next() % (n - 1) + 1;
            let mut text = String::new();
            let mut span = 0..0;
            for i in 0..n {
                let line = if i == target {
                    format!("MARK{round} here")
                } else {
                    format!("l{i} {}", "\u{e9}".repeat(next() % 3))
                };
                if i == target - 1 {
                    span.start = text.len();
                }
                text.push_str(&line);
                if i == target {
                    span.end = text.len();
                }
                text.push_str(if next() % 2 == 0 { "\r\n" } else { "\n" });
            }
            let style = LineEnding::detect(&text);
            let prev_line = text[span.start..span.end]
                .lines()
                .next()
                .unwrap()
                .to_owned();
            let e = EditSpec {
                old_string: format!("{prev_line}\nMARK{round} here"),
                new_string: "a\nb".into(),
                replace_all: false,
            };
            let applied = apply_edit(&text, style, &e).unwrap();
            let out = applied.text;
            assert_eq!(applied.strategy, Strategy::Exact);
            assert_eq!(applied.note, None);
            let expected = format!(
                "{}{}{}",
                &text[..span.start],
                style.apply("a\nb"),
                &text[span.end..]
            );
            assert_eq!(out, expected, "round {round}: {text:?}");
        }
    }
}
