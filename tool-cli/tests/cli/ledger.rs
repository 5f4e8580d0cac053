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
    let file = state.path().join("agent-tools/ledger/t-ledger-1.json");
    assert!(file.is_file(), "the state file is kept for later calls");
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
