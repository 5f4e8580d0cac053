//! The task list (`todo_write` / `todo_read`) of a trace outlives one `tool
//! call`: each process of the trace sees the list the last one wrote.

use serde_json::{Value, json};

use crate::support::{TempDir, tool};

fn call(ws: &TempDir, state: &TempDir, trace: &str, name: &str, args: &Value) -> Value {
    let out = tool()
        .env("XDG_STATE_HOME", state.path())
        .args(["--workspace", ws.arg(), "--trace-id", trace])
        .args(["call", name, &args.to_string()])
        .output()
        .expect("tool runs");
    serde_json::from_slice(&out.stdout).expect("one JSON result")
}

#[test]
fn the_task_list_of_a_trace_survives_across_processes_and_stays_in_its_trace() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    let list = json!({"todos": [
        {"content": "Write the parser", "status": "completed"},
        {"content": "Run the tests", "status": "in_progress", "activeForm": "Running the tests"},
        {"content": "Update the README", "status": "pending"}
    ]});
    let wrote = call(&ws, &state, "t-todo-1", "todo_write", &list);
    assert!(wrote["error"].is_null(), "{wrote}");
    let expected = "Tasks (1 of 3 done):\n[x] Write the parser\n[>] Run the tests (Running the \
                    tests)\n[ ] Update the README";
    assert_eq!(wrote["output"], expected);
    let read = call(&ws, &state, "t-todo-1", "todo_read", &json!({}));
    assert_eq!(read["output"], expected, "{read}");
    assert_eq!(
        read["metadata"]["todos"][1]["active_form"],
        "Running the tests"
    );
    let other = call(&ws, &state, "t-todo-2", "todo_read", &json!({}));
    assert_eq!(other["output"], "The task list is empty.", "{other}");
    // Two in progress: refused, and the stored list is unchanged.
    let bad = call(
        &ws,
        &state,
        "t-todo-1",
        "todo_write",
        &json!({"todos": [
            {"content": "a", "status": "in_progress"},
            {"content": "b", "status": "in_progress"}
        ]}),
    );
    assert_eq!(bad["error"]["kind"], "invalid_arguments", "{bad}");
    assert!(
        bad["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most one may be"),
        "{bad}"
    );
    let again = call(&ws, &state, "t-todo-1", "todo_read", &json!({}));
    assert_eq!(again["output"], expected);
}
