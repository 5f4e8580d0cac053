//! Doc comment → tool description, per-parameter descriptions and input examples.
//!
//! Runs at registration (not in the macro) so that `#[doc = include_str!(..)]`
//! docs are parsed exactly like literal ones.
//!
//! Recognised sections:
//! - rustdoc `# Arguments` (any heading level; also `# Parameters`, `# Args`)
//!   with list items `` * `name` - text `` (`-` bullets and `:` separators also work);
//! - Google style `Args:` (also `Arguments:`, `Parameters:`) with indented
//!   `name: text` or `name (type): text` items;
//! - `# Examples` whose content is JSON objects (fenced blocks, one object per
//!   line, or an array of objects): they become input examples.
//!
//! Argument sections and JSON example sections are removed from the
//! description; every other section stays. The argument sections are read by
//! [`tool_rules::docs::arg_sections`], the rules the `#[tool]` macro checks
//! entries against at compile time.

use std::collections::BTreeMap;

use serde_json::Value;

/// The parsed parts of a tool's doc comment.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct ParsedDoc {
    /// The description without argument and example sections, trimmed.
    pub(crate) description: String,
    /// Parameter name → description, from the argument sections.
    pub(crate) params: BTreeMap<String, String>,
    /// JSON argument objects from a `# Examples` section.
    pub(crate) examples: Vec<Value>,
}

use tool_rules::docs::{arg_sections, google_header, heading};

/// Parses JSON examples out of a section body; `None` when it holds anything else.
fn parse_examples(body: &[&str]) -> Option<Vec<Value>> {
    let mut out = Vec::new();
    let mut fence: Option<String> = None;
    let mut loose = String::new();
    let flush = |text: &str, out: &mut Vec<Value>| -> Option<()> {
        let text = text.trim();
        if text.is_empty() {
            return Some(());
        }
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => out.push(Value::Object(m)),
            Ok(Value::Array(items)) if items.iter().all(Value::is_object) => out.extend(items),
            _ => {
                // One object per line.
                for l in text.lines().filter(|l| !l.trim().is_empty()) {
                    match serde_json::from_str::<Value>(l.trim()) {
                        Ok(v @ Value::Object(_)) => out.push(v),
                        _ => return None,
                    }
                }
            }
        }
        Some(())
    };
    for line in body {
        let t = line.trim();
        if let Some(buf) = fence.as_mut() {
            if t.starts_with("```") {
                let text = std::mem::take(buf);
                fence = None;
                flush(&text, &mut out)?;
            } else {
                buf.push_str(line);
                buf.push('\n');
            }
        } else if let Some(lang) = t.strip_prefix("```") {
            if !(lang.is_empty() || lang.eq_ignore_ascii_case("json")) {
                return None;
            }
            flush(&std::mem::take(&mut loose), &mut out)?;
            fence = Some(String::new());
        } else {
            loose.push_str(line);
            loose.push('\n');
        }
    }
    if fence.is_some() {
        return None;
    }
    flush(&loose, &mut out)?;
    (!out.is_empty()).then_some(out)
}

/// Splits a raw doc text into description, parameter docs and examples.
pub(crate) fn parse(doc: &str) -> ParsedDoc {
    let lines: Vec<&str> = doc.lines().collect();
    // The argument sections (`# Arguments`, `Args:`), read by the rules the
    // macro also checks them with.
    let sections = arg_sections(&lines);
    let mut params = BTreeMap::new();
    let mut examples = Vec::new();
    let mut kept: Vec<&str> = Vec::new();
    let mut in_fence = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if let Some(section) = sections.iter().find(|s| s.start == i) {
            for item in &section.items {
                params.insert(item.name.clone(), item.text.clone());
            }
            i = section.end;
            continue;
        }
        let head = if in_fence { None } else { heading(line) };
        if head.as_deref() == Some("examples") || head.as_deref() == Some("example") {
            let start = i + 1;
            let mut end = start;
            let mut fenced = false;
            while end < lines.len() {
                if lines[end].trim_start().starts_with("```") {
                    fenced = !fenced;
                }
                if !fenced && heading(lines[end]).is_some() {
                    break;
                }
                end += 1;
            }
            if let Some(found) = parse_examples(&lines[start..end]) {
                examples.extend(found);
                i = end;
                continue;
            }
        }
        kept.push(line);
        i += 1;
    }
    ParsedDoc {
        description: tidy(&kept),
        params,
        examples,
    }
}

/// Joins lines into the description: blank edges trimmed, runs of blank
/// lines collapsed to one, and the hard-wrapped lines of a prose paragraph
/// joined with spaces (as Markdown renders them). Headings, list items,
/// tables, quotes, indented lines and code fences keep their own lines.
fn tidy(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut blank_run = 0;
    let mut in_fence = false;
    let mut prev_prose = false;
    for line in lines {
        let line = line.trim_end();
        let fence = line.trim_start().starts_with("```");
        if line.is_empty() && !in_fence {
            blank_run += 1;
            prev_prose = false;
            continue;
        }
        let prose = !in_fence && !fence && is_prose(line);
        if !out.is_empty() {
            if blank_run > 0 {
                out.push_str("\n\n");
            } else if prev_prose && prose {
                out.push(' ');
            } else {
                out.push('\n');
            }
        }
        blank_run = 0;
        out.push_str(if prev_prose && prose {
            line.trim_start()
        } else {
            line
        });
        if fence {
            in_fence = !in_fence;
        }
        prev_prose = prose;
    }
    out
}

/// A line of running text (not a heading, list item, table row, quote,
/// indented block or section header such as `Returns:`).
fn is_prose(line: &str) -> bool {
    if line.starts_with([' ', '\t']) {
        return false;
    }
    let t = line.trim_start();
    let ordered = t.split_once(['.', ')']).is_some_and(|(n, rest)| {
        !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && rest.starts_with(' ')
    });
    !(t.starts_with(['#', '*', '-', '+', '|', '>']) || ordered || google_header(line).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rustdoc_arguments_section_is_extracted_and_removed() {
        let doc = "Save knowledge.\n\nUse it for durable facts.\n\n# Arguments\n* `task` - What the agent was doing.\n* `content` - The knowledge,\n  one or two sentences.\n\n# Returns\nThe saved id.";
        let p = parse(doc);
        assert_eq!(
            p.description,
            "Save knowledge.\n\nUse it for durable facts.\n\n# Returns\nThe saved id."
        );
        assert_eq!(p.params["task"], "What the agent was doing.");
        assert_eq!(p.params["content"], "The knowledge, one or two sentences.");
    }

    #[test]
    fn google_args_section() {
        let doc = "Search notes.\n\nArgs:\n    query: Words to look for.\n    limit (int): Max results,\n        at most 50.\n\nReturns:\n    Matching notes.";
        let p = parse(doc);
        assert_eq!(p.params["query"], "Words to look for.");
        assert_eq!(p.params["limit"], "Max results, at most 50.");
        assert_eq!(
            p.description,
            "Search notes.\n\nReturns:\n    Matching notes."
        );
    }

    #[test]
    fn json_examples_become_input_examples() {
        let doc = "Do it.\n\n# Examples\n```json\n{\"query\": \"rust\"}\n```\n{\"query\": \"go\", \"limit\": 2}\n\n# Errors\nNone.";
        let p = parse(doc);
        assert_eq!(
            p.examples,
            vec![json!({"query": "rust"}), json!({"query": "go", "limit": 2})]
        );
        assert_eq!(p.description, "Do it.\n\n# Errors\nNone.");
    }

    #[test]
    fn non_json_examples_stay_in_description() {
        let doc = "Do it.\n\n# Examples\n```\nlet x = 1;\n```";
        let p = parse(doc);
        assert!(p.examples.is_empty());
        assert!(p.description.contains("let x = 1;"));
    }

    #[test]
    fn prose_paragraphs_are_reflowed_but_structure_is_kept() {
        let doc = "Read a file\nfrom the workspace.\n\nNotes:\n- first\n- second\nline after list\n\n```\nkeep\nthese\n```\n    indented\n    block";
        assert_eq!(
            parse(doc).description,
            "Read a file from the workspace.\n\nNotes:\n- first\n- second\nline after list\n\n```\nkeep\nthese\n```\n    indented\n    block"
        );
    }

    #[test]
    fn headings_inside_code_fences_are_text() {
        let doc = "Run.\n```\n# Arguments\n```\nEnd.";
        let p = parse(doc);
        assert!(p.params.is_empty());
        assert!(p.description.contains("# Arguments"));
    }
}
