//! Edits from separate `tool` processes on one workspace: the ledger's
//! "unchanged since read" check and the replace are one step across
//! processes, so no edit that reports success is lost.

use std::io::Write;
use std::process::Stdio;

use serde_json::{Value, json};

use crate::support::{TempDir, tool};

/// The batch input of agent `i`: read `f.txt`, then edit its line `i`.
fn read_then_edit(i: usize) -> String {
    [
        json!({"name": "read_file", "arguments": {"file_path": "f.txt"}}),
        json!({"name": "edit_file", "arguments": {
            "file_path": "f.txt",
            "old_string": format!("line {i}\n"),
            "new_string": format!("LINE {i} edited by agent {i}\n"),
        }}),
    ]
    .map(|v| v.to_string())
    .join("\n")
}

/// Runs `agents` `tool batch` processes at once; agent `i` reads `f.txt`
/// and then edits line `i`. Returns each agent's edit result.
fn race(dir: &TempDir, agents: usize) -> Vec<Value> {
    let children: Vec<_> = (0..agents)
        .map(|i| {
            let mut child = tool()
                .args(["batch", "--workspace", dir.arg()])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("tool batch starts");
            let input = read_then_edit(i);
            child
                .stdin
                .take()
                .expect("stdin")
                .write_all(input.as_bytes())
                .expect("write stdin");
            child
        })
        .collect();
    children
        .into_iter()
        .map(|child| {
            let out = child.wait_with_output().expect("tool batch ends");
            let text = String::from_utf8(out.stdout).expect("UTF-8");
            let last = text.lines().last().expect("two result lines");
            serde_json::from_str(last).expect("JSON result")
        })
        .collect()
}

#[test]
fn twenty_processes_editing_one_file_lose_no_update() {
    let dir = TempDir::new();
    let agents = 20;
    let original: String = (0..agents).map(|i| format!("line {i}\n")).collect();
    std::fs::write(dir.path().join("f.txt"), &original).expect("write f.txt");
    let results = race(&dir, agents);
    let after = std::fs::read_to_string(dir.path().join("f.txt")).expect("read f.txt");
    let (mut applied, mut refused, mut lost) = (0, 0, 0);
    for (i, r) in results.iter().enumerate() {
        let edited = after.contains(&format!("LINE {i} edited by agent {i}\n"));
        if r["error"].is_null() {
            assert_eq!(r["output"], "Edit applied successfully.", "{r}");
            applied += 1;
            if !edited {
                lost += 1;
            }
        } else {
            let message = r["error"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains("has been modified since it was last read"),
                "agent {i}: {message}"
            );
            assert!(!edited, "agent {i} was refused but its edit is in the file");
            assert!(after.contains(&format!("line {i}\n")));
            refused += 1;
        }
    }
    assert_eq!(lost, 0, "applied {applied}, refused {refused}, lost {lost}");
    assert!(applied >= 1, "at least the first writer wins");
    assert_eq!(applied + refused, agents);
    assert_eq!(after.lines().count(), agents, "no line lost or doubled");
}

#[test]
fn the_loser_of_a_race_can_read_again_and_succeed() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("f.txt"), "line 0\nline 1\n").expect("write f.txt");
    let results = race(&dir, 2);
    let after = std::fs::read_to_string(dir.path().join("f.txt")).expect("read f.txt");
    for (i, r) in results.iter().enumerate() {
        if !r["error"].is_null() {
            // The refused agent reads the new content and edits again: it lands.
            let input = read_then_edit(i);
            let out = crate::support::run_with_stdin(&["batch", "--workspace", dir.arg()], &input);
            let text = String::from_utf8(out.stdout).expect("UTF-8");
            let last: Value =
                serde_json::from_str(text.lines().last().expect("line")).expect("JSON");
            assert!(last["error"].is_null(), "{last}");
        }
    }
    let after_retry = std::fs::read_to_string(dir.path().join("f.txt")).expect("read f.txt");
    assert_eq!(
        after_retry, "LINE 0 edited by agent 0\nLINE 1 edited by agent 1\n",
        "before the retry: {after:?}"
    );
}
