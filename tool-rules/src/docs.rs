//! The argument sections of a tool's doc comment, read once for both sides:
//! `tool-core` takes each parameter's description from them at registration,
//! and the `#[tool]` macro refuses, at compile time, an entry that names no
//! parameter (the rename drift: `query` renamed `terms`, the doc still says
//! `query`, and `terms` ends up undocumented).
//!
//! Recognised sections (lines of the doc text, fenced code blocks skipped):
//! - rustdoc `# Arguments` (any heading level; also `# Parameters`, `# Args`,
//!   `# Params`) with list items `` * `name` - text `` (`-` bullets and `:`
//!   separators also work); the section ends at the next heading;
//! - Google style `Args:` (also `Arguments:`, `Parameters:`, `Params:`) with
//!   indented `name: text` or `name (type): text` items; the section ends at
//!   the first line that is not indented (a blank line followed by one).
//!
//! Lines of an item that follow its first line continue its text.
//!
//! ```
//! use tool_rules::docs::arg_sections;
//!
//! let doc = "Search notes.\n\n# Arguments\n* `query` - Words to look for\n  (any case).\n\n# Errors\nNone.";
//! let lines: Vec<&str> = doc.lines().collect();
//! let sections = arg_sections(&lines);
//! assert_eq!((sections[0].start, sections[0].end), (2, 6));
//! let first = &sections[0].items[0];
//! assert_eq!((first.line, first.name.as_str()), (3, "query"));
//! assert_eq!(first.text, "Words to look for (any case).");
//!
//! let google = ["Search notes.", "", "Args:", "    limit (int): At most this many.", "Returns the notes."];
//! let sections = arg_sections(&google);
//! assert_eq!((sections[0].start, sections[0].end), (2, 4));
//! assert_eq!(sections[0].items[0].name, "limit");
//! ```

/// One documented parameter: `` * `name` - text `` or `name: text`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgItem {
    /// The index of the item's first line in the lines given to [`arg_sections`] (0-based).
    pub line: usize,
    /// The parameter name as written (backticks and a leading `*` removed).
    pub name: String,
    /// The description, continuation lines joined with one space, trimmed.
    pub text: String,
}

/// One argument section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgSection {
    /// The index of its heading line (`# Arguments`, `Args:`).
    pub start: usize,
    /// One past its last line: the caller resumes reading there.
    pub end: usize,
    /// The entries, in order (a name written twice appears twice).
    pub items: Vec<ArgItem>,
}

/// The argument sections of a doc text split into `lines`, in order. Never
/// fails: lines that are no item continue the previous item (or are dropped
/// before the first one).
#[must_use]
pub fn arg_sections(lines: &[&str]) -> Vec<ArgSection> {
    let mut sections = Vec::new();
    let mut in_fence = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence {
            i += 1;
            continue;
        }
        if heading(line).as_deref().is_some_and(is_args_heading) {
            let start = i;
            let mut items: Vec<ArgItem> = Vec::new();
            i += 1;
            while i < lines.len() && heading(lines[i]).is_none() {
                match rustdoc_item(lines[i]) {
                    Some((name, text)) => items.push(ArgItem {
                        line: i,
                        name,
                        text,
                    }),
                    None => continue_item(&mut items, lines[i]),
                }
                i += 1;
            }
            sections.push(ArgSection {
                start,
                end: i,
                items,
            });
            continue;
        }
        if google_header(line).is_some_and(|w| is_args_heading(&w)) {
            let start = i;
            let mut items: Vec<ArgItem> = Vec::new();
            let mut item_indent: Option<usize> = None;
            i += 1;
            while i < lines.len() {
                let l = lines[i];
                if l.trim().is_empty() {
                    // A blank line ends the section unless indented items follow.
                    if lines.get(i + 1).is_some_and(|n| n.starts_with([' ', '\t'])) {
                        i += 1;
                        continue;
                    }
                    break;
                }
                if !l.starts_with([' ', '\t']) {
                    break;
                }
                let indent = l.len() - l.trim_start().len();
                let is_item_level = item_indent.is_none_or(|first| indent <= first);
                match google_item(l) {
                    Some((name, text)) if is_item_level => {
                        item_indent.get_or_insert(indent);
                        items.push(ArgItem {
                            line: i,
                            name,
                            text,
                        });
                    }
                    _ => continue_item(&mut items, l),
                }
                i += 1;
            }
            sections.push(ArgSection {
                start,
                end: i,
                items,
            });
            continue;
        }
        i += 1;
    }
    sections
}

/// A Markdown heading line (`# Title`, any level): its title, lower-cased.
#[must_use]
pub fn heading(line: &str) -> Option<String> {
    let t = line.trim_start();
    let rest = t.trim_start_matches('#');
    if rest.len() == t.len() || !rest.starts_with(' ') {
        return None;
    }
    Some(rest.trim().to_ascii_lowercase())
}

/// Whether a heading title (lower-cased) opens an argument section.
fn is_args_heading(title: &str) -> bool {
    matches!(title, "arguments" | "args" | "parameters" | "params")
}

/// A Google-style section header such as `Args:` or `Returns:` (one or two
/// unindented words, then `:`): the words, lower-cased.
#[must_use]
pub fn google_header(line: &str) -> Option<String> {
    if line.starts_with([' ', '\t']) {
        return None;
    }
    let t = line.trim_end();
    let word = t.strip_suffix(':')?;
    if word.is_empty() || word.contains(':') || word.split_whitespace().count() > 2 {
        return None;
    }
    Some(word.to_ascii_lowercase())
}

/// A rustdoc list item: `` * `name` - text ``, `- name: text`, …
fn rustdoc_item(line: &str) -> Option<(String, String)> {
    let t = line.trim_start();
    let rest = t
        .strip_prefix("* ")
        .or_else(|| t.strip_prefix("- "))?
        .trim_start();
    let (name, after) = if let Some(r) = rest.strip_prefix('`') {
        let end = r.find('`')?;
        (&r[..end], &r[end + 1..])
    } else {
        let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))?;
        (&rest[..end], &rest[end..])
    };
    if name.is_empty() {
        return None;
    }
    let after = after.trim_start();
    let text = after
        .strip_prefix("--")
        .or_else(|| after.strip_prefix('-'))
        .or_else(|| after.strip_prefix(':'))
        .or_else(|| after.strip_prefix('—'))
        .unwrap_or(after);
    Some((name.to_owned(), text.trim().to_owned()))
}

/// A Google-style item: `name: text` or `name (type): text`.
fn google_item(line: &str) -> Option<(String, String)> {
    let t = line.trim_start();
    let colon = t.find(':')?;
    let head = t[..colon].trim();
    let name = head.split_whitespace().next()?;
    let name = name.trim_matches('`').trim_start_matches('*');
    if name.is_empty() || !name.chars().all(|c| c.is_alphanumeric() || c == '_') {
        return None;
    }
    Some((name.to_owned(), t[colon + 1..].trim().to_owned()))
}

/// Appends a continuation line to the last item's text.
fn continue_item(items: &mut [ArgItem], line: &str) {
    let add = line.trim();
    if let Some(last) = items.last_mut()
        && !add.is_empty()
    {
        if !last.text.is_empty() {
            last.text.push(' ');
        }
        last.text.push_str(add);
    }
}
