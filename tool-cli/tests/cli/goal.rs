//! The `goal` built-in from the command line: listed by `tool list`, and
//! the goal tree of a trace outlives one `tool call`.

use serde_json::{Value, json};

use crate::support::{TempDir, code, stdout, tool};

fn call(ws: &TempDir, state: &TempDir, trace: &str, args: &Value) -> Value {
    let out = tool()
        .env("XDG_STATE_HOME", state.path())
        .args(["--workspace", ws.arg(), "--trace-id", trace])
        .args(["call", "goal", &args.to_string()])
        .output()
        .expect("tool runs");
    serde_json::from_slice(&out.stdout).expect("one JSON result")
}

#[test]
fn goal_is_listed_and_its_tree_survives_across_processes() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let listed = tool()
        .args(["--workspace", ws.arg(), "list"])
        .output()
        .expect("tool runs");
    assert_eq!(code(&listed), 0);
    let line = stdout(&listed)
        .lines()
        .find(|l| l.starts_with("goal "))
        .map(str::to_owned)
        .expect("goal is listed");
    assert_eq!(line.split_whitespace().nth(1), Some("write"), "{line}");

    let added = call(
        &ws,
        &state,
        "t-goal-1",
        &json!({"action": "add", "description": "Ship 1.0", "criteria": ["CHANGELOG dated"]}),
    );
    assert!(added["error"].is_null(), "{added}");
    call(
        &ws,
        &state,
        "t-goal-1",
        &json!({"action": "add", "description": "Tag the release", "parent": "1"}),
    );
    let updated = call(
        &ws,
        &state,
        "t-goal-1",
        &json!({"action": "update", "id": "1.1", "status": "in_progress"}),
    );
    assert!(updated["error"].is_null(), "{updated}");
    let list = call(&ws, &state, "t-goal-1", &json!({"action": "list"}));
    assert_eq!(
        list["output"],
        "Goals (0 of 2 completed):\n[ ] 1 Ship 1.0\n    criteria: CHANGELOG dated\n  [>] 1.1 Tag \
         the release"
    );
    assert_eq!(list["metadata"]["goals"][1]["status"], "in_progress");
    let other = call(&ws, &state, "t-goal-2", &json!({"action": "list"}));
    assert_eq!(other["output"], "The goal tree is empty.");
    let bad = call(
        &ws,
        &state,
        "t-goal-1",
        &json!({"action": "update", "id": "2", "status": "completed"}),
    );
    assert_eq!(bad["error"]["kind"], "invalid_arguments", "{bad}");
}
