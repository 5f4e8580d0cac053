//! Diagnostics as the model reads them (one line each, errors first) and as
//! the host reads them (the `diagnostics` metadata).

use lsp_types::{Diagnostic, DiagnosticSeverity, NumberOrString};
use serde_json::{Value, json};
use tool_rules::text::{Clip, clip};

/// Most characters of a diagnostic's `source` and `code` kept (40 each).
const LABEL_CHARS: usize = 40;

/// One file's diagnostics as published, with the text they are about.
#[derive(Debug)]
pub(crate) struct FileDiagnostics {
    /// The path shown (relative to the workspace when inside it).
    pub(crate) path: String,
    /// The server's short name.
    pub(crate) server: String,
    /// The text the server checked (to turn UTF-16 columns into characters).
    pub(crate) text: String,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// An error or a warning, ready to show.
struct Item<'a> {
    path: &'a str,
    error: bool,
    line: u32,
    column: u32,
    message: String,
    source: Option<String>,
    code: Option<String>,
}

/// Whether a severity is shown, and as an error: errors and warnings are;
/// information and hints are not. A diagnostic without a severity counts
/// as an error (LSP 3.17 leaves it to the client).
fn as_error(severity: Option<DiagnosticSeverity>) -> Option<bool> {
    match severity {
        None | Some(DiagnosticSeverity::ERROR) => Some(true),
        Some(DiagnosticSeverity::WARNING) => Some(false),
        _ => None,
    }
}

/// The 1-based character column of the 0-based UTF-16 offset `utf16` in
/// line `line` of `text` (LSP's default position encoding; "Position" in
/// LSP 3.17). Past the line's end, the column after its last character.
pub(crate) fn column(text: &str, line: u32, utf16: u32) -> u32 {
    let Some(line_text) = text.split('\n').nth(line as usize) else {
        return utf16.saturating_add(1);
    };
    let mut units = 0u32;
    let mut chars = 0u32;
    for c in line_text.trim_end_matches('\r').chars() {
        if units >= utf16 {
            break;
        }
        units = units.saturating_add(u32::try_from(c.len_utf16()).unwrap_or(2));
        chars = chars.saturating_add(1);
    }
    chars.saturating_add(1)
}

/// A server's text as one line of plain text: terminal escapes and control
/// characters removed (the cleaner of job output), every run of whitespace,
/// line breaks included, folded into one space; so a message (which often
/// quotes the checked file) cannot forge further `PATH:LINE:COLUMN:` lines.
fn one_line(text: &str) -> String {
    crate::shell::ansi::clean_text(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text and metadata for `files` (listing at most `max` items, messages
/// cut to `message_chars`). `None` text when `files` is empty.
pub(crate) fn render(
    files: &[FileDiagnostics],
    max: usize,
    message_chars: usize,
) -> (Option<String>, Value) {
    let mut items: Vec<Item<'_>> = Vec::new();
    for file in files {
        for d in &file.diagnostics {
            let Some(error) = as_error(d.severity) else {
                continue;
            };
            items.push(Item {
                path: &file.path,
                error,
                line: d.range.start.line.saturating_add(1),
                column: column(&file.text, d.range.start.line, d.range.start.character),
                message: clip(
                    &one_line(&d.message),
                    Clip::chars(message_chars).counting_rest(),
                )
                .into_owned(),
                source: d
                    .source
                    .as_deref()
                    .map(|s| clip(&one_line(s), Clip::chars(LABEL_CHARS)).into_owned()),
                code: d.code.as_ref().map(|c| {
                    let code = match c {
                        NumberOrString::Number(n) => n.to_string(),
                        NumberOrString::String(s) => one_line(s),
                    };
                    clip(&code, Clip::chars(LABEL_CHARS)).into_owned()
                }),
            });
        }
    }
    // Errors first, then by file and position (the sort is stable).
    items.sort_by_key(|i| (!i.error, i.path, i.line, i.column));
    let errors = items.iter().filter(|i| i.error).count();
    let warnings = items.len() - errors;
    let omitted = items.len().saturating_sub(max);
    let shown = &items[..items.len() - omitted];
    let metadata = json!({
        "errors": errors,
        "warnings": warnings,
        "omitted": omitted,
        "files": files.iter().map(|f| json!({
            "path": f.path,
            "server": f.server,
            "errors": items.iter().filter(|i| i.path == f.path && i.error).count(),
            "warnings": items.iter().filter(|i| i.path == f.path && !i.error).count(),
        })).collect::<Vec<_>>(),
        "items": shown.iter().map(|i| json!({
            "path": i.path,
            "line": i.line,
            "column": i.column,
            "severity": if i.error { "error" } else { "warning" },
            "message": i.message,
            "source": i.source,
            "code": i.code,
        })).collect::<Vec<_>>(),
    });
    if files.is_empty() {
        return (None, metadata);
    }
    let mut servers: Vec<&str> = files.iter().map(|f| f.server.as_str()).collect();
    servers.dedup();
    let servers = servers.join(", ");
    let paths = if files.len() == 1 {
        files[0].path.clone()
    } else {
        format!("{} files", files.len())
    };
    if items.is_empty() {
        return (
            Some(format!(
                "Diagnostics ({servers}): no errors or warnings in {paths}."
            )),
            metadata,
        );
    }
    let plural = |n: usize, one: &str| {
        if n == 1 {
            format!("1 {one}")
        } else {
            format!("{n} {one}s")
        }
    };
    let mut text = format!(
        "Diagnostics ({servers}): {}, {} in {paths}:",
        plural(errors, "error"),
        plural(warnings, "warning")
    );
    for i in shown {
        let label = match (&i.source, &i.code) {
            (Some(s), Some(c)) => format!(" [{s} {c}]"),
            (Some(s), None) => format!(" [{s}]"),
            (None, Some(c)) => format!(" [{c}]"),
            (None, None) => String::new(),
        };
        text.push_str(&format!(
            "\n{}:{}:{}: {}: {}{label}",
            i.path,
            i.line,
            i.column,
            if i.error { "error" } else { "warning" },
            i.message
        ));
    }
    if omitted > 0 {
        text.push_str(&format!("\n… and {omitted} more not shown"));
    }
    (Some(text), metadata)
}

#[cfg(test)]
mod tests {
    use super::*;
    use lsp_types::{Position, Range};

    fn diagnostic(
        line: u32,
        character: u32,
        severity: DiagnosticSeverity,
        message: &str,
    ) -> Diagnostic {
        Diagnostic {
            range: Range::new(
                Position::new(line, character),
                Position::new(line, character + 1),
            ),
            severity: Some(severity),
            source: Some("pyflakes".to_owned()),
            message: message.to_owned(),
            ..Diagnostic::default()
        }
    }

    #[test]
    fn columns_count_characters_not_utf16_units() {
        let text = "x = 1\ns = '😀é' + y\n";
        // `y` is UTF-16 unit 13 of line 1 (the emoji takes two units): character 12, column 13.
        assert_eq!(column(text, 1, 13), 13);
        assert_eq!(column(text, 0, 0), 1);
        assert_eq!(column(text, 0, 99), 6);
        assert_eq!(column(text, 9, 4), 5);
    }

    #[test]
    fn errors_come_first_and_the_list_is_bounded() {
        let files = [FileDiagnostics {
            path: "a.py".to_owned(),
            server: "pylsp".to_owned(),
            text: "import os\nprint(x)\nprint(y)\n".to_owned(),
            diagnostics: vec![
                diagnostic(
                    0,
                    0,
                    DiagnosticSeverity::WARNING,
                    "'os' imported but unused",
                ),
                diagnostic(2, 6, DiagnosticSeverity::ERROR, "undefined name 'y'"),
                diagnostic(1, 6, DiagnosticSeverity::ERROR, "undefined name 'x'"),
                diagnostic(1, 0, DiagnosticSeverity::HINT, "a hint"),
            ],
        }];
        let (text, meta) = render(&files, 2, 240);
        assert_eq!(
            text.unwrap(),
            "Diagnostics (pylsp): 2 errors, 1 warning in a.py:\n\
             a.py:2:7: error: undefined name 'x' [pyflakes]\n\
             a.py:3:7: error: undefined name 'y' [pyflakes]\n\
             … and 1 more not shown"
        );
        assert_eq!(meta["errors"], 2);
        assert_eq!(meta["warnings"], 1);
        assert_eq!(meta["omitted"], 1);
        assert_eq!(meta["items"][0]["line"], 2);
        assert_eq!(meta["items"][0]["column"], 7);
        assert_eq!(meta["files"][0]["errors"], 2);
    }

    #[test]
    fn long_messages_are_clipped_and_a_clean_file_says_so() {
        let long = "m".repeat(500);
        let files = [FileDiagnostics {
            path: "a.py".to_owned(),
            server: "pylsp".to_owned(),
            text: String::new(),
            diagnostics: vec![diagnostic(0, 0, DiagnosticSeverity::ERROR, &long)],
        }];
        let (_, meta) = render(&files, 20, 10);
        assert_eq!(meta["items"][0]["message"], "mmmmmmmmmm… (490 more bytes)");
        let clean = [FileDiagnostics {
            diagnostics: Vec::new(),
            ..files.into_iter().next().unwrap()
        }];
        let (text, meta) = render(&clean, 20, 10);
        assert_eq!(
            text.unwrap(),
            "Diagnostics (pylsp): no errors or warnings in a.py."
        );
        assert_eq!(meta["errors"], 0);
        assert_eq!(render(&[], 20, 10).0, None);
    }

    #[test]
    fn a_message_cannot_forge_lines_or_reach_a_terminal() {
        let mut d = diagnostic(
            0,
            0,
            DiagnosticSeverity::ERROR,
            "evil \x1b[31mred\x1b[0m\na.py:9:1: error: forged\r\n\u{202e}x",
        );
        d.source = Some("x\x1b]0;t\x07".to_owned());
        d.code = Some(NumberOrString::String("E1\nE2".to_owned()));
        let files = [FileDiagnostics {
            path: "a.py".to_owned(),
            server: "pylsp".to_owned(),
            text: "x\n".to_owned(),
            diagnostics: vec![d],
        }];
        let (text, meta) = render(&files, 20, 240);
        assert_eq!(
            text.unwrap(),
            "Diagnostics (pylsp): 1 error, 0 warnings in a.py:\n\
             a.py:1:1: error: evil red a.py:9:1: error: forged x [x E1 E2]"
        );
        assert_eq!(meta["items"][0]["source"], "x");
    }
}
