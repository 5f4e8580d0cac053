//! Check commands ([`CheckCommand`]): the fallback for files no language
//! server serves. One process per changed file, run in the workspace root
//! by the shell's own runner (`crate::shell::run`: a supervisor that stops
//! the whole process tree at the timeout, the `bash_command` sandbox without
//! network, or a plain child with the sandbox off), secret-looking variables
//! withheld, stdin empty; its output read into diagnostics.
//!
//! The program and its arguments are quoted for `sh` (the `shlex` crate,
//! already in the build through other dependencies: quoting is not this
//! project's business) and run with `exec`, so no argument is ever read
//! as shell syntax.
//!
//! # Reading the output
//! stdout and stderr together, at most [`MAX_OUTPUT_BYTES`] (head and tail
//! when longer), are read line by line. A line `PATH:LINE:COLUMN: MESSAGE`
//! or `PATH:LINE: MESSAGE` whose `PATH` is the file checked (as given, or
//! absolute) is one diagnostic; a message starting `warning` (any case,
//! then `:` or a space) is a warning, every other one an error (`error:` is
//! dropped from the front). When no line reads so and the command failed
//! (non-zero exit), its output is kept raw, cut to [`RAW_CHARS`]
//! characters, in a note.

use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};
use tool_core::SandboxPolicy;
use tool_core::truncate::Truncation;

use super::config::CheckCommand;
use crate::shell::run::{RunSpec, Stop};

/// Most bytes of a check command's output read (stdout and stderr
/// together; 128 KiB, head and tail when it printed more).
pub const MAX_OUTPUT_BYTES: usize = 128 * 1024;

/// Most characters of unparsed output kept in a note (2 000).
pub const RAW_CHARS: usize = 2_000;

/// How long the command's leftover processes may keep printing after it
/// exited, and how long they get between `SIGTERM` and `SIGKILL`.
const GRACE: Duration = Duration::from_millis(500);

/// The shell exit code for "command not found" (POSIX).
const NOT_FOUND: i32 = 127;

/// The shell exit code for "found but could not be run" (POSIX).
const NOT_EXECUTABLE: i32 = 126;

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
    let mut argv = vec![program.clone()];
    argv.extend(check.args_for(file));
    let Ok(quoted) = shlex::try_join(argv.iter().map(String::as_str)) else {
        return failed("the check command or the file name holds a NUL byte".to_owned());
    };
    let sandbox = match sandbox {
        Some(policy) => {
            let mut policy = policy.clone();
            policy.network = tool_core::NetworkPolicy::deny_all();
            match tool_sandbox::Sandbox::prepare(&policy, root, Some(root)) {
                Ok(p) => Some(Arc::new(p)),
                Err(e) => return failed(format!("the sandbox could not be prepared: {e}")),
            }
        }
        None => None,
    };
    let spec = RunSpec {
        shell: PathBuf::from("/bin/sh"),
        command: format!("exec {quoted}"),
        workdir: root.to_path_buf(),
        workdir_fd: None,
        env: tool_core::governance::secret_env::scrub_env(std::env::vars_os()).0,
        timeout: check.timeout,
        drain: GRACE,
        kill_grace: GRACE,
        truncation: Truncation::new()
            .max_bytes(MAX_OUTPUT_BYTES)
            .max_lines(usize::MAX)
            .spill(false),
        masker: None,
        sandbox: sandbox.clone(),
    };
    let outcome = match crate::shell::run::run(&spec, &|| false) {
        Ok(o) => o,
        Err(e) => {
            return failed(format!(
                "the check command `{program}` could not start: {e}"
            ));
        }
    };
    let (code, signal) = (
        outcome.status.and_then(|s| s.code()),
        outcome.status.and_then(|s| s.signal()),
    );
    if let Some(sandbox) = &sandbox {
        let _ = sandbox.finish(code, signal, &outcome.output.text);
    }
    if outcome.stop == Some(Stop::Timeout) {
        return failed(format!(
            "the check command did not end within {} s and was stopped",
            check.timeout.as_secs_f64()
        ));
    }
    match code {
        Some(NOT_FOUND) => {
            return failed(format!(
                "the check command `{program}` was not found (is it installed and on PATH?)"
            ));
        }
        Some(NOT_EXECUTABLE) => {
            return failed(format!(
                "the check command `{program}` could not start (is it an executable file?)"
            ));
        }
        _ => {}
    }
    let output = outcome.output.text;
    let absolute = root.join(file);
    let absolute = absolute.to_string_lossy();
    let diagnostics: Vec<Diagnostic> = output
        .lines()
        .filter_map(|line| parse_line(line, &[file, absolute.as_ref()], text))
        .collect();
    let success = code == Some(0);
    let note = (diagnostics.is_empty() && !success).then(|| {
        let raw = output.trim();
        let code = code.map_or_else(|| "a signal".to_owned(), |c| format!("exit code {c}"));
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
