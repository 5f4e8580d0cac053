//! Check commands ([`CheckCommand`]): the fallback for files no language
//! server serves. One process per changed file, run in the workspace root
//! inside the `bash_command` sandbox without network (or as a plain child
//! with the sandbox off), secret-looking variables withheld, stdin empty,
//! killed at its timeout; its output read into diagnostics.
//!
//! # Reading the output
//! stdout and stderr, the first [`MAX_OUTPUT_BYTES`] of each, are read line
//! by line. A line `PATH:LINE:COLUMN: MESSAGE` or `PATH:LINE: MESSAGE`
//! whose `PATH` is the file checked (as given, or absolute) is one
//! diagnostic; a message starting `warning` (any case, then `:` or a space)
//! is a warning, every other one an error (`error:` is dropped from the
//! front). When no line reads so and the command failed (non-zero exit),
//! its output is kept raw, cut to [`RAW_CHARS`] characters, in a note.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};
use tool_core::SandboxPolicy;

use super::config::CheckCommand;

/// Most bytes read from each of a check command's stdout and stderr (64 KiB).
pub const MAX_OUTPUT_BYTES: usize = 64 * 1024;

/// Most characters of unparsed output kept in a note (2 000).
pub const RAW_CHARS: usize = 2_000;

/// What one check run gave.
#[derive(Debug)]
pub(crate) struct Checked {
    /// The diagnostics read from its output.
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// A note for the result (a failure, a timeout, raw output), if any.
    pub(crate) note: Option<String>,
}

/// Runs `check` on `file` (relative to `root`, whose text is `text`).
pub(crate) fn run(
    check: &CheckCommand,
    root: &Path,
    file: &str,
    text: &str,
    sandbox: Option<&SandboxPolicy>,
) -> Checked {
    let name = check.name();
    let failed = |why: String| Checked {
        diagnostics: Vec::new(),
        note: Some(format!(
            "No diagnostics for {file} ({name}): {why}. The write itself succeeded."
        )),
    };
    let Some(program) = check.command.first() else {
        return failed("the check command is empty".to_owned());
    };
    let mut command = Command::new(program);
    command
        .args(check.args_for(file))
        .current_dir(root)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_clear()
        .envs(tool_core::governance::secret_env::scrub_env(std::env::vars_os()).0);
    let prepared = match sandbox {
        Some(policy) => {
            let mut policy = policy.clone();
            policy.network = tool_core::NetworkPolicy::deny_all();
            match tool_sandbox::Sandbox::prepare(&policy, root, Some(root)) {
                Ok(p) => {
                    let p = Arc::new(p);
                    p.apply(&mut command);
                    Some(p)
                }
                Err(e) => return failed(format!("the sandbox could not be prepared: {e}")),
            }
        }
        None => None,
    };
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return failed(format!(
                "the check command `{program}` was not found (is it installed and on PATH?)"
            ));
        }
        Err(e) => {
            return failed(format!(
                "the check command `{program}` could not start: {e}"
            ));
        }
    };
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    for stream in [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    {
        let tx = tx.clone();
        // Reads to the end (so the command never blocks on a full pipe),
        // keeping the first MAX_OUTPUT_BYTES.
        let _ = std::thread::Builder::new()
            .name("check-output".into())
            .spawn(move || {
                let mut kept = Vec::new();
                let mut buf = [0_u8; 8192];
                let mut stream = stream;
                loop {
                    match stream.read(&mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(n) => {
                            let room = MAX_OUTPUT_BYTES.saturating_sub(kept.len());
                            kept.extend_from_slice(&buf[..n.min(room)]);
                        }
                    }
                }
                let _ = tx.send(kept);
            });
    }
    drop(tx);
    let deadline = Instant::now() + check.timeout;
    let mut timed_out = false;
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() >= deadline => {
                timed_out = true;
                let _ = child.kill();
                break child.wait().ok();
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(_) => break None,
        }
    };
    if let Some(sandbox) = &prepared {
        use std::os::unix::process::ExitStatusExt;
        let _ = sandbox.finish(
            status.and_then(|s| s.code()),
            status.and_then(|s| s.signal()),
            "",
        );
    }
    // The output the readers have; a process the command left behind that
    // holds a pipe open is not waited for past a short grace.
    let mut output = Vec::new();
    let grace = Instant::now() + Duration::from_millis(500);
    for _ in 0..2 {
        let left = grace.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(bytes) => {
                output.extend_from_slice(&bytes);
                output.push(b'\n');
            }
            Err(_) => break,
        }
    }
    let output = String::from_utf8_lossy(&output);
    if timed_out {
        return failed(format!(
            "the check command did not end within {} s and was stopped",
            check.timeout.as_secs_f64()
        ));
    }
    let absolute = root.join(file);
    let absolute = absolute.to_string_lossy();
    let diagnostics: Vec<Diagnostic> = output
        .lines()
        .filter_map(|line| parse_line(line, &[file, absolute.as_ref()], text))
        .collect();
    let success = status.is_some_and(|s| s.success());
    let note = (diagnostics.is_empty() && !success).then(|| {
        let raw = output.trim();
        let code = status
            .and_then(|s| s.code())
            .map_or_else(|| "a signal".to_owned(), |c| format!("exit code {c}"));
        if raw.is_empty() {
            format!("`{name}` failed on {file} ({code}) and printed nothing.")
        } else {
            format!(
                "`{name}` failed on {file} ({code}):\n{}",
                tool_rules::text::clip(raw, tool_rules::text::Clip::chars(RAW_CHARS))
            )
        }
    });
    Checked { diagnostics, note }
}

/// One `PATH:LINE[:COLUMN]: MESSAGE` line about one of `paths`, as an LSP
/// diagnostic (0-based line, UTF-16 column from `text`).
fn parse_line(line: &str, paths: &[&str], text: &str) -> Option<Diagnostic> {
    let rest = paths
        .iter()
        .find_map(|p| line.strip_prefix(p)?.strip_prefix(':'))?;
    let (line_no, rest) = rest.split_once(':')?;
    let line_no: u32 = line_no.trim().parse().ok().filter(|n| *n > 0)?;
    let (column, message) = match rest.split_once(':') {
        Some((c, m)) if c.trim().parse::<u32>().is_ok_and(|c| c > 0) => {
            (c.trim().parse::<u32>().unwrap_or(1), m)
        }
        _ => (1, rest),
    };
    let message = message.trim();
    if message.is_empty() {
        return None;
    }
    let lower = message.to_ascii_lowercase();
    let (severity, message) = if lower.starts_with("warning:") || lower.starts_with("warning ") {
        (DiagnosticSeverity::WARNING, message[8..].trim())
    } else if lower.starts_with("error:") {
        (DiagnosticSeverity::ERROR, message[6..].trim())
    } else {
        (DiagnosticSeverity::ERROR, message)
    };
    let line0 = line_no - 1;
    let character = utf16_column(text, line0, column);
    let at = Position::new(line0, character);
    Some(Diagnostic {
        range: Range::new(at, at),
        severity: Some(severity),
        message: message.to_owned(),
        ..Diagnostic::default()
    })
}

/// The 0-based UTF-16 offset of the 1-based character column `column` in
/// line `line` of `text` (the column as is past the text).
fn utf16_column(text: &str, line: u32, column: u32) -> u32 {
    let Some(line_text) = text.split('\n').nth(line as usize) else {
        return column - 1;
    };
    let mut units = 0_u32;
    let mut chars = line_text.chars();
    for _ in 1..column {
        match chars.next() {
            Some(c) => units += u32::try_from(c.len_utf16()).unwrap_or(2),
            None => units += 1,
        }
    }
    units
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_about_the_file_become_diagnostics_and_others_are_skipped() {
        let text = "é = 1\nprint(x)\n";
        let d = parse_line("a.py:2:7: undefined name 'x'", &["a.py"], text).unwrap();
        assert_eq!((d.range.start.line, d.range.start.character), (1, 6));
        assert_eq!(d.severity, Some(DiagnosticSeverity::ERROR));
        assert_eq!(d.message, "undefined name 'x'");
        let d = parse_line("a.py:1:3: warning: odd", &["a.py"], text).unwrap();
        // 'é' is one UTF-16 unit; column 3 is offset 2.
        assert_eq!(d.range.start.character, 2);
        assert_eq!(
            (d.severity, d.message.as_str()),
            (Some(DiagnosticSeverity::WARNING), "odd")
        );
        let d = parse_line("/w/a.py:2: error: no column", &["a.py", "/w/a.py"], text).unwrap();
        assert_eq!((d.range.start.line, d.range.start.character), (1, 0));
        assert_eq!(d.message, "no column");
        assert!(parse_line("b.py:2:7: other file", &["a.py"], text).is_none());
        assert!(parse_line("a.py: no line", &["a.py"], text).is_none());
        assert!(parse_line("a.py:0:1: zero", &["a.py"], text).is_none());
    }
}
