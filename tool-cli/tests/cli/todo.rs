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

/// `ask_user` on a terminal (a pseudo-terminal made by util-linux's
/// `script`) shows the question and numbered choices and takes the answer
/// typed; without a terminal it says no person is present.
#[test]
fn ask_user_asks_the_person_at_the_terminal_or_says_nobody_is_there() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    }
    let args = json!({"question": "Which database?", "choices": ["sqlite", "postgres"],
                      "default": "sqlite", "timeout": 30});
    let on_terminal = |answer: &str| {
        let inner = format!("{} call --json ask_user '{}'", crate::support::BIN, args);
        let mut cmd = std::process::Command::new("script");
        cmd.args(["-qec", &inner, "/dev/null"])
            .env_remove("TRACE_ID")
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        let out = crate::support::feed(&mut cmd, answer);
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let text = on_terminal("2\n");
    assert!(text.contains("The agent asks: Which database?"), "{text}");
    assert!(text.contains("2) postgres"), "{text}");
    assert!(text.contains("The user answered: postgres"), "{text}");
    // An empty line takes the caller's default.
    let text = on_terminal("\n");
    assert!(text.contains("The user answered: sqlite"), "{text}");
    // A question that carries terminal escapes is shown with them escaped.
    let hostile = json!({"question": "Hi \u{1b}]0;pwned\u{7} \u{1b}[2J \u{202e}rtl",
                         "choices": ["\u{1b}[31mred"], "timeout": 30});
    let inner = format!("{} call --json ask_user '{}'", crate::support::BIN, hostile);
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &inner, "/dev/null"])
        .env_remove("TRACE_ID")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let out = crate::support::feed(&mut cmd, "1\n");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("The agent asks: Hi \\x1b]0;pwned\\x07 \\x1b[2J \\u{202e}rtl"),
        "{text}"
    );
    assert!(text.contains("1) \\x1b[31mred"), "{text}");
    let prompt = text.split("The user answered").next().unwrap_or("");
    assert!(!prompt.contains('\u{1b}'), "{text}");
    // No terminal: a refusal saying nobody is there.
    let out = tool()
        .args(["call", "ask_user", &args.to_string()])
        .output()
        .expect("tool runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["error"]["kind"], "denied", "{v}");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .starts_with("No person is present"),
        "{v}"
    );
}
