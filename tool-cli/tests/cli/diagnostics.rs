//! Diagnostics after edits from the command line: `tool --lsp py=pylsp call
//! edit_file …` appends the real server's errors to the result (pylsp from
//! `$AGENT_TOOLS_PYLSP`, installed by `scripts/test`; `AGENT_TOOLS_SKIP_LSP=1`
//! skips), and leaves no server running after the process; bad `--lsp`
//! entries are usage errors.

use serde_json::{Value, json};

use crate::support::{TempDir, code, stderr, tool};

fn pylsp() -> Option<String> {
    if let Ok(path) = std::env::var("AGENT_TOOLS_PYLSP") {
        return Some(path);
    }
    if std::env::var("AGENT_TOOLS_SKIP_LSP").as_deref() == Ok("1") {
        eprintln!("skipped: AGENT_TOOLS_SKIP_LSP=1");
        return None;
    }
    panic!(
        "AGENT_TOOLS_PYLSP is not set: run scripts/test (it installs python-lsp-server into \
         target/lsp-venv), or set AGENT_TOOLS_PYLSP=/path/to/pylsp, or AGENT_TOOLS_SKIP_LSP=1 to \
         skip the language-server tests"
    );
}

fn call(ws: &TempDir, state: &TempDir, lsp: &[&str], name: &str, args: &Value) -> Value {
    let out = tool()
        .env("XDG_STATE_HOME", state.path())
        .args([
            "--workspace",
            ws.arg(),
            "--trace-id",
            "t-lsp",
            "--lsp-wait",
            "20",
        ])
        .args(lsp)
        .args(["call", name, &args.to_string()])
        .output()
        .expect("tool runs");
    serde_json::from_slice(&out.stdout).expect("one JSON result")
}

/// The pids of running processes whose command line contains `needle`.
/// Live processes whose command line holds `needle` (a needle no other test uses).
fn running_anywhere(needle: &str) -> Vec<String> {
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        if String::from_utf8_lossy(&cmdline).contains(needle) && !stat.contains(") Z ") {
            pids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    pids
}

/// Live processes whose command line holds `needle` and whose working
/// folder is `cwd` (other tests run language servers at the same time, each
/// in its own workspace).
fn running(needle: &str, cwd: &std::path::Path) -> Vec<String> {
    let cwd = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let mut pids = Vec::new();
    for entry in std::fs::read_dir("/proc").expect("/proc").flatten() {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let here = std::fs::read_link(entry.path().join("cwd")).is_ok_and(|c| c == cwd);
        if here && String::from_utf8_lossy(&cmdline).contains(needle) && !stat.contains(") Z ") {
            pids.push(entry.file_name().to_string_lossy().into_owned());
        }
    }
    pids
}

#[test]
fn edit_file_with_lsp_on_reports_the_undefined_name_then_none() {
    let Some(pylsp) = pylsp() else { return };
    let (ws, state) = (TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("app.py"), "x = 1\nprint(x)\n").expect("write");
    let lsp = format!("py,pyi={pylsp}");
    let lsp = ["--lsp", lsp.as_str()];
    let read = call(
        &ws,
        &state,
        &lsp,
        "read_file",
        &json!({"file_path": "app.py"}),
    );
    assert!(read["error"].is_null(), "{read}");
    let edit = json!({"file_path": "app.py", "old_string": "print(x)", "new_string": "print(y)"});
    let broke = call(&ws, &state, &lsp, "edit_file", &edit);
    assert_eq!(
        broke["output"],
        "Edit applied successfully.\n\n\
         Diagnostics (pylsp): 1 error, 0 warnings in app.py:\n\
         app.py:2:7: error: undefined name 'y' [pyflakes]",
        "{broke}"
    );
    assert_eq!(
        broke["metadata"]["diagnostics"]["items"][0]["message"],
        "undefined name 'y'"
    );
    let fix = json!({"file_path": "app.py", "old_string": "print(y)", "new_string": "print(x)"});
    let fixed = call(&ws, &state, &lsp, "edit_file", &fix);
    assert_eq!(
        fixed["output"],
        "Edit applied successfully.\n\nDiagnostics (pylsp): no errors or warnings in app.py.",
        "{fixed}"
    );
    assert_eq!(fixed["metadata"]["diagnostics"]["errors"], 0);
    // Each `tool` process stopped the server it started.
    assert_eq!(running(&pylsp, ws.path()), Vec::<String>::new());
    // Without --lsp the result is as it always was.
    let edit = json!({"file_path": "app.py", "old_string": "print(x)", "new_string": "print(z)"});
    let plain = call(&ws, &state, &[], "edit_file", &edit);
    assert_eq!(plain["output"], "Edit applied successfully.", "{plain}");
    assert!(plain["metadata"].get("diagnostics").is_none(), "{plain}");
}

#[test]
fn a_missing_server_is_a_note_and_bad_entries_are_usage_errors() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let lsp = ["--lsp", "py=/nonexistent/bin/pylsp", "--sandbox", "off"];
    let wrote = call(
        &ws,
        &state,
        &lsp,
        "write_file",
        &json!({"file_path": "new.py", "content": "print(q)\n"}),
    );
    assert!(wrote["error"].is_null(), "{wrote}");
    assert_eq!(wrote["output"], "Wrote file successfully.");
    assert_eq!(
        wrote["notes"],
        json!([
            "No diagnostics for new.py (pylsp): the language server `/nonexistent/bin/pylsp` \
                was not found (is it installed and on PATH?). The write itself succeeded."
        ])
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("new.py")).expect("written"),
        "print(q)\n"
    );
    for (entry, message) in [
        (
            "pylsp",
            "`pylsp` names no file extensions; write EXT[,EXT...]=COMMAND [ARG...], e.g. py,pyi=pylsp",
        ),
        (
            "*.py=pylsp",
            "`*.py` is not a file extension (no `/`, `*` or spaces; `py`, not `*.py`)",
        ),
        ("py=", "`py=` names no command after `=`"),
    ] {
        let out = tool()
            .args(["--workspace", ws.arg(), "--lsp", entry, "list"])
            .output()
            .expect("tool runs");
        assert_eq!(code(&out), 2, "{entry}");
        assert!(stderr(&out).contains(message), "{entry}: {}", stderr(&out));
    }
    let out = tool()
        .args(["--lsp-wait", "61", "list"])
        .output()
        .expect("tool runs");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`61` seconds is longer than the 60 s --lsp-wait allows"),
        "{}",
        stderr(&out)
    );
}

/// `--lsp-config FILE` with a check command (a real `sh -n`, run inside the
/// sandbox) for `.sh` files, which no server serves: its
/// `FILE: LINE: MESSAGE` line becomes the diagnostics section.
#[test]
fn a_configured_check_command_reports_a_syntax_error_then_none() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let config = check_config(&state, "sh", &["sh", "-n", "{file}"], 30);
    let opts = ["--lsp-config", config.as_str()];
    let broken = call(
        &ws,
        &state,
        &opts,
        "write_file",
        &json!({"file_path": "run.sh", "content": "echo hi\nif true; then\necho x\n"}),
    );
    assert!(broken["error"].is_null(), "{broken}");
    let output = broken["output"].as_str().expect("output");
    assert!(
        output.starts_with(
            "Wrote file successfully.\n\nDiagnostics (sh): 1 error, 0 warnings in run.sh:\nrun.sh:4:1: error: Syntax error:"
        ),
        "{broken}"
    );
    assert!(output.contains("expecting \"fi\""), "{broken}");
    assert_eq!(broken["metadata"]["diagnostics"]["errors"], 1, "{broken}");
    assert_eq!(broken["metadata"]["diagnostics"]["items"][0]["line"], 4);
    let fixed = call(
        &ws,
        &state,
        &opts,
        "write_file",
        &json!({"file_path": "run.sh", "content": "echo hi\nif true; then\necho x\nfi\n"}),
    );
    assert_eq!(
        fixed["output"],
        "Wrote file successfully.\n\nDiagnostics (sh): no errors or warnings in run.sh.",
        "{fixed}"
    );
    // Files of other extensions get nothing.
    let other = call(
        &ws,
        &state,
        &opts,
        "write_file",
        &json!({"file_path": "notes.md", "content": "# x\n"}),
    );
    assert_eq!(other["output"], "Wrote file successfully.", "{other}");
}

/// A check command that never ends is stopped at its timeout; the write stands.
#[test]
fn a_check_command_past_its_timeout_is_stopped_and_the_write_stands() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let config = check_config(&state, "txt", &["sh", "-c", "sleep 600", "{file}"], 1);
    let wrote = call(
        &ws,
        &state,
        &["--lsp-config", config.as_str()],
        "write_file",
        &json!({"file_path": "a.txt", "content": "x\n"}),
    );
    assert!(wrote["error"].is_null(), "{wrote}");
    assert_eq!(
        wrote["notes"],
        json!([
            "No diagnostics for a.txt (sh): the check command did not end within 1 s and was \
             stopped. The write itself succeeded."
        ]),
        "{wrote}"
    );
    assert_eq!(wrote["output"], "Wrote file successfully.", "{wrote}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).expect("written"),
        "x\n"
    );
    assert_eq!(running_anywhere("sleep 600"), Vec::<String>::new());
}

#[test]
fn a_bad_lsp_config_file_is_a_usage_error_naming_the_entry() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let config = state.path().join("diagnostics.json");
    std::fs::write(
        &config,
        r#"{"checks": [{"extensions": ["*.sh"], "check": ["sh"]}]}"#,
    )
    .expect("config");
    let out = tool()
        .args(["--workspace", ws.arg(), "--lsp-config"])
        .arg(&config)
        .args(["call", "read_file", r#"{"file_path": "x"}"#])
        .output()
        .expect("tool runs");
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("checks[0]: `*.sh` is not a file extension"),
        "{}",
        stderr(&out)
    );
}

/// Writes a diagnostics config with one check command for `.ext` files.
fn check_config(state: &TempDir, ext: &str, check: &[&str], timeout_secs: u64) -> String {
    let config = state.path().join("diagnostics.json");
    std::fs::write(
        &config,
        json!({"checks": [{"extensions": [ext], "check": check, "timeout_secs": timeout_secs}]})
            .to_string(),
    )
    .expect("config");
    config.to_string_lossy().into_owned()
}

/// A check command that leaves a process behind (here a `sleep` holding the
/// output pipe) is read and its whole process tree stopped, as
/// `bash_command`'s are: nothing of it outlives the call.
#[test]
fn a_check_commands_leftover_processes_are_stopped() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let config = check_config(
        &state,
        "txt",
        &[
            "sh",
            "-c",
            "sleep 731 & echo \"$1:1: error: left a sleeper\"",
            "sh",
        ],
        30,
    );
    let wrote = call(
        &ws,
        &state,
        &["--lsp-config", config.as_str()],
        "write_file",
        &json!({"file_path": "a.txt", "content": "x\n"}),
    );
    assert!(wrote["error"].is_null(), "{wrote}");
    assert_eq!(
        wrote["output"],
        "Wrote file successfully.\n\nDiagnostics (sh): 1 error, 0 warnings in a.txt:\na.txt:1:1: error: left a sleeper",
        "{wrote}"
    );
    assert_eq!(running_anywhere("sleep 731"), Vec::<String>::new());
}

/// The file name reaches the check command as one argument, never as shell
/// syntax: a model-chosen name holding `$(…)` and `;` runs nothing.
#[test]
fn a_file_name_with_shell_syntax_is_one_argument_to_the_check_command() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let config = check_config(&state, "sh", &["sh", "-n", "{file}"], 30);
    let name = "x$(touch pwned);touch pwned2.sh";
    let wrote = call(
        &ws,
        &state,
        &["--lsp-config", config.as_str()],
        "write_file",
        &json!({"file_path": name, "content": "echo ok\n"}),
    );
    assert!(wrote["error"].is_null(), "{wrote}");
    assert_eq!(
        wrote["output"],
        format!("Wrote file successfully.\n\nDiagnostics (sh): no errors or warnings in {name}."),
        "{wrote}"
    );
    assert!(!ws.path().join("pwned").exists());
    assert!(!ws.path().join("pwned2.sh").exists());
}

/// A check program that is not installed is a note naming it; the write stands.
#[test]
fn a_missing_check_program_is_a_note_naming_it() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let config = check_config(&state, "txt", &["no-such-checker-4711", "{file}"], 30);
    let wrote = call(
        &ws,
        &state,
        &["--lsp-config", config.as_str()],
        "write_file",
        &json!({"file_path": "a.txt", "content": "x\n"}),
    );
    assert!(wrote["error"].is_null(), "{wrote}");
    assert_eq!(
        wrote["notes"],
        json!([
            "No diagnostics for a.txt (no-such-checker-4711): the check command \
             `no-such-checker-4711` was not found (is it installed and on PATH?). The write \
             itself succeeded."
        ]),
        "{wrote}"
    );
    assert_eq!(wrote["output"], "Wrote file successfully.", "{wrote}");
}
