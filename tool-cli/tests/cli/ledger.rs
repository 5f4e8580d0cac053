//! The read-before-write ledger of a trace id outlives one `tool call`: a
//! read in one process lets the next process with that trace id edit.

use serde_json::json;

use crate::support::{TempDir, tool};

fn call(
    ws: &TempDir,
    state: &TempDir,
    trace: Option<&str>,
    name: &str,
    args: &serde_json::Value,
) -> serde_json::Value {
    let mut cmd = tool();
    cmd.env("XDG_STATE_HOME", state.path())
        .args(["--workspace", ws.arg()]);
    if let Some(t) = trace {
        cmd.args(["--trace-id", t]);
    }
    let out = cmd
        .args(["call", name, &args.to_string()])
        .output()
        .expect("tool runs");
    serde_json::from_slice(&out.stdout).expect("one JSON result")
}

#[test]
fn a_read_in_one_call_lets_the_next_call_of_the_trace_edit() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("notes.md"), "line one\nline two\n").expect("write");
    let read = call(
        &ws,
        &state,
        Some("t-ledger-1"),
        "read_file",
        &json!({"file_path": "notes.md"}),
    );
    assert!(read["error"].is_null(), "{read}");
    let edit = call(
        &ws,
        &state,
        Some("t-ledger-1"),
        "edit_file",
        &json!({
        "file_path": "notes.md", "old_string": "line two", "new_string": "line 2"}),
    );
    assert!(edit["error"].is_null(), "{edit}");
    // multi_edit, as in the README, after the edit (which counts as a read).
    let multi = call(
        &ws,
        &state,
        Some("t-ledger-1"),
        "multi_edit",
        &json!({
        "file_path": "notes.md",
        "edits": [{"old_string": "line one", "new_string": "line 1"}]}),
    );
    assert!(multi["error"].is_null(), "{multi}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("notes.md")).expect("read"),
        "line 1\nline 2\n"
    );
    let logs: Vec<String> = std::fs::read_dir(state.path().join("agent-tools/ledger"))
        .expect("the ledger folder")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert!(
        logs[0].starts_with("t-ledger-1-"),
        "one log per trace and workspace: {logs:?}"
    );
    // One line per read or write after the header: appended, not rewritten.
    let text = std::fs::read_to_string(state.path().join("agent-tools/ledger").join(&logs[0]))
        .expect("the log");
    assert_eq!(text.lines().count(), 4, "{text}");
}

/// Issue 23 item 4: the state folder inside the workspace (workspace =
/// home) is refused by every file tool, so one trace can neither read
/// another's ledger nor forge its own.
#[test]
fn the_state_folder_is_refused_when_the_workspace_contains_it() {
    let ws = TempDir::new();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").expect("write");
    let state_home = ws.path().join(".local/state");
    std::fs::create_dir_all(&state_home).expect("state home");
    let run = |trace: &str, name: &str, args: serde_json::Value| {
        let out = tool()
            .env("XDG_STATE_HOME", &state_home)
            .args(["--workspace", ws.arg(), "--trace-id", trace, "call", name])
            .arg(args.to_string())
            .output()
            .expect("tool runs");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON result")
    };
    let read = run("victim", "read_file", json!({"file_path": "a.txt"}));
    assert!(read["error"].is_null(), "{read}");
    let ledger = ".local/state/agent-tools/ledger";
    let names: Vec<String> = std::fs::read_dir(ws.path().join(ledger))
        .expect("the victim's ledger exists")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    let victim_log = format!("{ledger}/{}", names[0]);
    for (name, args) in [
        ("read_file", json!({"file_path": victim_log})),
        ("grep_content", json!({"pattern": "a.txt", "path": ledger})),
        (
            "write_file",
            json!({"file_path": format!("{ledger}/thief.log"), "content": "x"}),
        ),
        (
            "write_file",
            json!({"file_path": ".local/state/agent-tools/new/x", "content": "x"}),
        ),
    ] {
        let out = run("thief", name, args.clone());
        let message = out["error"]["message"].as_str().unwrap_or_default();
        assert_eq!(out["error"]["kind"], "denied", "{name} {args}: {out}");
        assert!(message.contains("private folders"), "{name}: {message}");
    }
    // Walks of the workspace do not list the ledgers either.
    let listed = run("thief", "glob_files", json!({"pattern": "**/*.log"}));
    assert!(!listed.to_string().contains("victim"), "{listed}");
    assert!(!ws.path().join(ledger).join("thief.log").exists());
    assert!(!ws.path().join(".local/state/agent-tools/new").exists());
}

/// Issue 23 item 4: a ledger is bound to its workspace: the same trace id
/// in a workspace that contains the first does not inherit its reads.
#[test]
fn a_trace_in_another_workspace_starts_with_an_empty_ledger() {
    let (outer, state) = (TempDir::new(), TempDir::new());
    let inner = outer.path().join("inner");
    std::fs::create_dir(&inner).expect("inner");
    std::fs::write(inner.join("f.txt"), "one\n").expect("write");
    let run = |ws: &std::path::Path, name: &str, args: serde_json::Value| {
        let out = tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--workspace")
            .arg(ws)
            .args(["--trace-id", "t-bound", "call", name])
            .arg(args.to_string())
            .output()
            .expect("tool runs");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON result")
    };
    let read = run(&inner, "read_file", json!({"file_path": "f.txt"}));
    assert!(read["error"].is_null(), "{read}");
    let edit = run(
        outer.path(),
        "edit_file",
        json!({"file_path": "inner/f.txt", "old_string": "one", "new_string": "two"}),
    );
    let message = edit["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("You must read file"), "{edit}");
    assert_eq!(
        std::fs::read_to_string(inner.join("f.txt")).expect("read"),
        "one\n"
    );
}

#[test]
fn other_traces_and_changed_files_still_need_a_read() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("a.txt"), "alpha\n").expect("write");
    let read = call(
        &ws,
        &state,
        Some("t-ledger-2"),
        "read_file",
        &json!({"file_path": "a.txt"}),
    );
    assert!(read["error"].is_null(), "{read}");
    for trace in [Some("t-ledger-other"), None] {
        let edit = call(
            &ws,
            &state,
            trace,
            "edit_file",
            &json!({
            "file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}),
        );
        let message = edit["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(message.contains("You must read file"), "{trace:?}: {edit}");
    }
    // Changed on disk after the read: the shared stamp no longer matches.
    std::fs::write(ws.path().join("a.txt"), "ALPHA\n").expect("write");
    let edit = call(
        &ws,
        &state,
        Some("t-ledger-2"),
        "edit_file",
        &json!({
        "file_path": "a.txt", "old_string": "ALPHA", "new_string": "beta"}),
    );
    let message = edit["error"]["message"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(
        message.contains("has been modified since it was last read"),
        "{edit}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).expect("read"),
        "ALPHA\n"
    );
}

/// Review 23 F2: walks (`grep_content`, `glob_files`, `list_dir`) judge a
/// followed symlink by its target, so a link inside the workspace (made by
/// the shell or shipped in a repository) does not lead them into the state
/// folder; and a state tree of another configuration (another
/// `XDG_STATE_HOME`) is skipped by its layout.
#[test]
fn walks_do_not_follow_symlinks_into_the_state_folder() {
    let ws = TempDir::new();
    std::fs::write(ws.path().join("a.txt"), "alpha\n").expect("write");
    let state_home = ws.path().join(".local/state");
    std::fs::create_dir_all(&state_home).expect("state home");
    let run = |trace: &str, state: &std::path::Path, name: &str, args: serde_json::Value| {
        let out = tool()
            .env("XDG_STATE_HOME", state)
            .args(["--workspace", ws.arg(), "--trace-id", trace, "call", name])
            .arg(args.to_string())
            .output()
            .expect("tool runs");
        serde_json::from_slice::<serde_json::Value>(&out.stdout).expect("one JSON result")
    };
    let read = run(
        "victim",
        &state_home,
        "read_file",
        json!({"file_path": "a.txt"}),
    );
    assert!(read["error"].is_null(), "{read}");
    std::os::unix::fs::symlink(".local/state/agent-tools", ws.path().join("sneaky"))
        .expect("symlink");
    std::os::unix::fs::symlink(".local", ws.path().join("loc")).expect("symlink");
    let other_state = TempDir::new();
    for state in [state_home.as_path(), other_state.path()] {
        for (name, args) in [
            ("grep_content", json!({"pattern": "hash"})),
            (
                "grep_content",
                json!({"pattern": "a.txt", "output_mode": "files_with_matches"}),
            ),
            ("glob_files", json!({"pattern": "**/*"})),
            ("list_dir", json!({"path": "sneaky"})),
            ("list_dir", json!({})),
        ] {
            let out = run("thief", state, name, args.clone());
            let text = out.to_string();
            assert!(
                !text.contains("victim") && !text.contains("ledger/"),
                "{name} {args} (state {}): {text}",
                state.display()
            );
        }
    }
}
