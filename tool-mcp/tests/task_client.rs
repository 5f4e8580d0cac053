//! The client side of MCP tasks (issue 26): tools of this repo's fixture
//! server (a real process, with its job registry in a temporary state
//! folder) imported through `McpToolSource` and called as tasks, in both
//! protocol eras: a `required` tool's plain call is refused and redone as a
//! task; an `optional` one is a task when the host asks; success, failure,
//! input asked by a running task, and cancellation / timeout, which send
//! `tasks/cancel` (seen on the server: the tool's cancellation).

#![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tool_core::{Answer, ErrorKind, LiveRegistry, Question, ToolContext, ToolRegistry};
use tool_mcp::{McpToolSource, ProtocolEra};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A caller whose person answers `true` to a yes/no question and `Ada` to
/// anything else; the questions are recorded.
fn caller(questions: &Arc<Mutex<Vec<String>>>) -> ToolContext {
    let seen = Arc::clone(questions);
    ToolContext::new().with_asker(move |q: Question| {
        seen.lock().unwrap().push(q.question.clone());
        let answer = if q.choices.iter().any(|c| c == "true") {
            "true"
        } else {
            "Ada"
        };
        async move { Answer::Answered(answer.to_owned()) }
    })
}

/// The task id a result came from (`metadata["mcp"]["task"]`), if any.
fn task_of(result: &tool_core::ToolResult) -> Option<String> {
    result.metadata["mcp"]["task"].as_str().map(str::to_owned)
}

#[tokio::test]
async fn task_tools_of_the_fixture_run_as_tasks_through_the_imported_tools_in_both_eras() {
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let state = tempfile::tempdir().unwrap();
        let state_dir = state.path().to_string_lossy().into_owned();
        let conn = McpToolSource::stdio(
            FIXTURE,
            std::iter::empty::<&str>(),
            [("RUST_LOG", "off"), ("XDG_STATE_HOME", state_dir.as_str())],
        )
        .named("fx")
        .with_era(era)
        .with_timeout(Duration::from_secs(30))
        .with_task_calls(["slow_compute", "confirm_delete"])
        .connect()
        .await
        .unwrap();
        let live = LiveRegistry::new(ToolRegistry::new());
        conn.import_into(&live).await.unwrap();
        let registry = live.snapshot();
        let questions = Arc::new(Mutex::new(Vec::new()));
        let ctx = caller(&questions);
        let run = |name: &str, arguments: Value| {
            let registry = Arc::clone(&registry);
            let ctx = ctx.clone();
            let name = format!("fx__{name}");
            async move { registry.execute(&name, arguments, &ctx).await }
        };

        // Success: an optional tool the host asked to call as a task.
        let done = run("slow_compute", json!({"seconds": 1, "label": "x"})).await;
        assert!(done.error.is_none(), "{era}: {done:?}");
        assert_eq!(done.output, "Computed for 1 s (x)", "{era}");
        assert!(
            task_of(&done).is_some_and(|t| t.starts_with("job-")),
            "{era}: {done:?}"
        );
        // A tool without task support stays a plain call.
        let plain = run("greet", json!({"name": "Bo"})).await;
        assert_eq!(plain.output, "Hello, Bo!", "{era}");
        assert_eq!(task_of(&plain), None, "{era}");

        // Failure: a required tool (the plain call is refused, the task
        // made at once) that ends with a tool error...
        let failed = run("failing_job", json!({})).await;
        let error = failed.error.as_ref().expect("an error result");
        assert_eq!(error.kind, ErrorKind::Failed, "{era}: {failed:?}");
        assert!(
            error.message.contains("failing_job always fails"),
            "{era}: {failed:?}"
        );
        assert!(task_of(&failed).is_some(), "{era}: {failed:?}");
        // ... and one whose task fails (a panic: the task's JSON-RPC error).
        let broken = run("protocol_error_job", json!({})).await;
        let error = broken.error.as_ref().expect("an error result");
        assert!(
            error
                .message
                .contains("failed: The tool `protocol_error_job` crashed")
                && error.message.contains("(code -32603)"),
            "{era}: {broken:?}"
        );
        assert_eq!(broken.metadata["mcp_error"], "protocol", "{era}");

        // Input asked by a running task: a task's input requests
        // (2026-07-28, tasks/update) or a server request of the session
        // (2025-11-25), answered by the caller's asker either way.
        let confirmed = run("confirm_delete", json!({"filename": "a.txt"})).await;
        assert!(confirmed.error.is_none(), "{era}: {confirmed:?}");
        assert_eq!(confirmed.output, "Deleted a.txt", "{era}");
        assert!(task_of(&confirmed).is_some(), "{era}");
        // A required tool that gathers its first input before the task exists.
        let greeted = run("test_tool_with_task", json!({})).await;
        assert!(greeted.error.is_none(), "{era}: {greeted:?}");
        assert_eq!(greeted.output, "Hello, Ada!", "{era}");
        let asked = questions.lock().unwrap().clone();
        assert!(
            asked.iter().any(|q| q.contains("Delete a.txt?")),
            "{era}: {asked:?}"
        );
        assert!(
            asked.iter().any(|q| q.contains("What is your name?")),
            "{era}: {asked:?}"
        );
        conn.close();
    }
}

/// The fixture over HTTP with its stderr read line by line; the URL.
async fn http_fixture(
    state: &std::path::Path,
) -> (
    tokio::process::Child,
    String,
    tokio::sync::mpsc::UnboundedReceiver<String>,
) {
    let mut child = tokio::process::Command::new(FIXTURE)
        .args(["--http", "127.0.0.1:0"])
        .env("RUST_LOG", "off")
        .env("XDG_STATE_HOME", state)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let url = loop {
        let line = tokio::time::timeout(Duration::from_secs(30), rx.recv())
            .await
            .unwrap()
            .expect("the fixture says where it listens");
        if let Some(addr) = line.strip_prefix("tool-mcp-fixture: listening on ") {
            break addr.to_owned();
        }
    };
    (child, url, rx)
}

/// Waits up to 10 s for `needle` on the fixture's stderr.
async fn wait_for_line(
    rx: &mut tokio::sync::mpsc::UnboundedReceiver<String>,
    needle: &str,
) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(line)) if line.contains(needle) => return true,
            Ok(Some(_)) => {}
            _ => return false,
        }
    }
}

#[tokio::test]
async fn a_cancelled_or_timed_out_task_call_cancels_the_task_on_the_server() {
    for era in [ProtocolEra::Discover, ProtocolEra::Initialize] {
        let state = tempfile::tempdir().unwrap();
        let (mut child, url, mut stderr) = http_fixture(state.path()).await;
        // 2025-11-25: a short timeout; 2026-07-28: the caller cancels.
        let timeout = match era {
            ProtocolEra::Initialize => Duration::from_secs(2),
            _ => Duration::from_secs(60),
        };
        let conn = McpToolSource::http(url)
            .named("fx")
            .with_era(era)
            .with_timeout(timeout)
            .with_task_calls(["slow_compute"])
            .connect()
            .await
            .unwrap();
        let ctx = ToolContext::new();
        let token = ctx.cancellation_token().clone();
        if era == ProtocolEra::Discover {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(1500)).await;
                token.cancel();
            });
        }
        let started = Instant::now();
        let result = conn
            .call("slow_compute", args(json!({"seconds": 120})), &ctx)
            .await;
        let error = result.error.as_ref().expect("an error result");
        let expected = match era {
            ProtocolEra::Initialize => ErrorKind::Timeout,
            _ => ErrorKind::Cancelled,
        };
        assert_eq!(error.kind, expected, "{era}: {result:?}");
        assert!(
            started.elapsed() < Duration::from_secs(15),
            "{era}: took {:?}",
            started.elapsed()
        );
        // tasks/cancel reached the server: the tool's run was cancelled.
        assert!(
            wait_for_line(&mut stderr, "slow_compute was cancelled").await,
            "{era}: the server's tool was not cancelled"
        );
        conn.close();
        let _ = child.kill().await;
    }
}
