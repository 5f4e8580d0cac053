//! Tasks that wait for input (SEP-2663 with SEP-2322) on a real server:
//! `McpServer::serve_http` on a loopback port, spoken to in raw 2026-07-28
//! JSON-RPC over HTTP/1.1, with a real job registry in a temporary folder.
//! A task's tool asks (through `tool_mcp::input`, or a question through its
//! asker), the task parks in `input_required` with the request on
//! `tasks/get`, and `tasks/update` answers it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_core::governance::asking::{self, Asked};
use tool_core::jobs::JobRegistry;
use tool_core::state::FileStore;
use tool_core::{Question, ToolContext, ToolRegistry, tool};
use tool_mcp::McpServer;
use tool_mcp::input::{self, InputRequest};
use tool_mcp::rmcp::model::ElicitationSchema;

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn name_form() -> InputRequest {
    let schema = ElicitationSchema::builder()
        .required_string_property("name", |s| s)
        .build()
        .expect("a valid form");
    InputRequest::form("What is your name?", schema)
}

/// Ask the person's name (key `user_name`), then greet them.
#[tool(task_support = "optional")]
async fn ask_name(context: &ToolContext) -> Result<String, String> {
    let answer = input::ask_one(context, "user_name", name_form())
        .await
        .map_err(|e| e.to_string())?;
    let name = answer
        .form_field("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    Ok(format!("Hello, {name}!"))
}

/// Ask the person's name before the task exists (served with
/// `with_input_before_task`), then greet them from the task.
#[tool(task_support = "required")]
async fn name_then_task(context: &ToolContext) -> Result<String, String> {
    let answer = input::ask_one(context, "user_name", name_form())
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let name = answer
        .form_field("name")
        .and_then(Value::as_str)
        .unwrap_or("?")
        .to_owned();
    Ok(format!("Hello, {name}!"))
}

/// Ask a question with two choices through the context's asker, waiting
/// at most `timeout_ms`.
///
/// # Arguments
/// * `timeout_ms` - The question's timeout.
#[tool(task_support = "optional")]
async fn ask_colour(context: &ToolContext, timeout_ms: u64) -> String {
    let question = Question::new("Favourite colour?")
        .with_choices(["red", "blue"])
        .with_timeout(Duration::from_millis(timeout_ms));
    match asking::ask(context, question).await {
        Asked::Answered(colour) => format!("colour: {colour}"),
        Asked::TimedOut { .. } => "no answer in time".to_owned(),
        other => format!("not answered: {other:?}"),
    }
}

fn declared(name: &str) -> tool_core::Tool {
    ToolRegistry::global()
        .get(name)
        .cloned()
        .unwrap_or_else(|| panic!("#[tool] {name} is registered"))
}

struct Server {
    addr: SocketAddr,
    stop: tokio_util::sync::CancellationToken,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn server() -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let jobs = JobRegistry::new(
        Arc::new(FileStore::new(dir.path().join("state"))),
        dir.path().join("jobs"),
    );
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).expect("workspace");
    let mut registry = ToolRegistry::new();
    for name in ["ask_name", "name_then_task", "ask_colour"] {
        registry.register(declared(name)).expect("register");
    }
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(registry)
        .with_context(ToolContext::new().with_state(jobs))
        .with_task_workspace(&workspace)
        .with_input_before_task(["name_then_task"])
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .expect("the server starts");
    Server {
        addr,
        stop,
        _dir: dir,
    }
}

/// One 2026-07-28 request from a client that declared the tasks extension
/// and form elicitation: the JSON-RPC response of id 1.
async fn rpc(addr: SocketAddr, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {"form": {}}, "extensions": {TASKS: {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "task-input-test", "version": "1"},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{name}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut response))
        .await
        .expect("an answer within 60 s")
        .expect("read");
    let text = String::from_utf8_lossy(&response).into_owned();
    let (_, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    body.lines()
        .filter_map(|line| {
            let line = line.trim();
            let json = line.strip_prefix("data:").map_or(line, str::trim);
            serde_json::from_str::<Value>(json).ok()
        })
        .find(|m| m.get("id") == Some(&json!(1)))
        .unwrap_or_else(|| panic!("no response of id 1 in: {text}"))
}

async fn get(addr: SocketAddr, task: &str) -> Value {
    let response = rpc(addr, "tasks/get", json!({"taskId": task})).await;
    response["result"].clone()
}

/// Polls `tasks/get` every 25 ms until the task's status is not one of
/// `passing` (at most 30 s).
async fn until_not(addr: SocketAddr, task: &str, passing: &[&str]) -> Value {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        let state = get(addr, task).await;
        let status = state["status"].as_str().unwrap_or_default();
        if !passing.contains(&status) || Instant::now() > until {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

async fn start(addr: SocketAddr, tool: &str, arguments: Value) -> String {
    let created = rpc(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    created["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned()
}

async fn update(addr: SocketAddr, task: &str, responses: Value) -> Value {
    rpc(
        addr,
        "tasks/update",
        json!({"taskId": task, "inputResponses": responses}),
    )
    .await
}

#[tokio::test]
async fn a_task_parks_in_input_required_and_tasks_update_resumes_it() {
    let server = server().await;
    let task = start(server.addr, "ask_name", json!({})).await;
    let parked = until_not(server.addr, &task, &["working"]).await;
    assert_eq!(parked["status"], "input_required", "{parked}");
    assert_eq!(parked["resultType"], "complete", "{parked}");
    let asked = &parked["inputRequests"]["user_name"];
    assert_eq!(asked["method"], "elicitation/create", "{parked}");
    assert_eq!(asked["params"]["message"], "What is your name?");
    assert_eq!(
        asked["params"]["requestedSchema"]["required"],
        json!(["name"])
    );

    let ack = update(
        server.addr,
        &task,
        json!({"user_name": {"action": "accept", "content": {"name": "Ada"}}}),
    )
    .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = until_not(server.addr, &task, &["working", "input_required"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Ada!",
        "{done}"
    );
    assert!(done.get("inputRequests").is_none(), "{done}");
}

#[tokio::test]
async fn a_wrong_or_missing_response_is_refused_and_the_task_keeps_waiting() {
    let server = server().await;
    let task = start(server.addr, "ask_name", json!({})).await;
    let parked = until_not(server.addr, &task, &["working"]).await;
    assert_eq!(parked["status"], "input_required", "{parked}");

    // Not an answer to a form: refused, nothing applied.
    let refused = update(server.addr, &task, json!({"user_name": "Ada"})).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("`user_name` is not an answer to a elicitation/create request"),
        "{message}"
    );
    // No inputResponses at all: refused.
    let missing = rpc(server.addr, "tasks/update", json!({"taskId": task})).await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    // A key nobody asked for is ignored: an ack, still waiting.
    let ignored = update(server.addr, &task, json!({"other": {"action": "accept"}})).await;
    assert_eq!(ignored["result"]["resultType"], "complete", "{ignored}");
    let still = get(server.addr, &task).await;
    assert_eq!(still["status"], "input_required", "{still}");
    assert!(still["inputRequests"]["user_name"].is_object(), "{still}");
    // Review 26, F11: an answer that does not fit the form (a number for
    // the text field, the required field left out): refused, naming the
    // rule, and the request stays pending.
    for (content, why) in [
        (json!({"name": 42}), "`name` must be a string; 42 is not"),
        (json!({}), "`name` is required"),
    ] {
        let misfit = update(
            server.addr,
            &task,
            json!({"user_name": {"action": "accept", "content": content}}),
        )
        .await;
        assert_eq!(misfit["error"]["code"], -32602, "{misfit}");
        let message = misfit["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("`user_name` does not fit its form: {why}")),
            "{message}"
        );
        let still = get(server.addr, &task).await;
        assert_eq!(still["status"], "input_required", "{still}");
    }

    let ack = update(
        server.addr,
        &task,
        json!({"user_name": {"action": "accept", "content": {"name": "Bo"}}}),
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let done = until_not(server.addr, &task, &["working", "input_required"]).await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Bo!", "{done}");
}

#[tokio::test]
async fn cancelling_a_task_that_waits_for_input_ends_the_wait() {
    let server = server().await;
    let task = start(server.addr, "ask_name", json!({})).await;
    let parked = until_not(server.addr, &task, &["working"]).await;
    assert_eq!(parked["status"], "input_required", "{parked}");
    let started = Instant::now();
    let ack = rpc(server.addr, "tasks/cancel", json!({"taskId": task})).await;
    assert_eq!(ack["result"]["resultType"], "complete", "{ack}");
    let ended = until_not(server.addr, &task, &["working", "input_required"]).await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
    assert!(ended.get("inputRequests").is_none(), "{ended}");
    // The wait ended with the cancellation, not after a grace period.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // An answer after the end is ignored.
    let late = update(
        server.addr,
        &task,
        json!({"user_name": {"action": "accept", "content": {"name": "Late"}}}),
    )
    .await;
    assert_eq!(late["result"]["resultType"], "complete", "{late}");
}

#[tokio::test]
async fn a_question_to_the_person_becomes_the_tasks_input_request() {
    let server = server().await;
    let task = start(server.addr, "ask_colour", json!({"timeout_ms": 60_000})).await;
    let parked = until_not(server.addr, &task, &["working"]).await;
    assert_eq!(parked["status"], "input_required", "{parked}");
    let asked = &parked["inputRequests"]["question-1"];
    assert_eq!(asked["method"], "elicitation/create", "{parked}");
    assert_eq!(asked["params"]["message"], "Favourite colour?");
    assert_eq!(
        asked["params"]["requestedSchema"]["properties"]["answer"]["enum"],
        json!(["red", "blue"])
    );
    update(
        server.addr,
        &task,
        json!({"question-1": {"action": "accept", "content": {"answer": "blue"}}}),
    )
    .await;
    let done = until_not(server.addr, &task, &["working", "input_required"]).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "colour: blue",
        "{done}"
    );

    // The question's own timeout ends the wait and withdraws the request.
    let task = start(server.addr, "ask_colour", json!({"timeout_ms": 300})).await;
    let done = until_not(server.addr, &task, &["working", "input_required"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "no answer in time",
        "{done}"
    );
}

#[tokio::test]
async fn input_gathered_before_the_task_reaches_its_result() {
    let server = server().await;
    let first = rpc(
        server.addr,
        "tools/call",
        json!({"name": "name_then_task", "arguments": {}}),
    )
    .await;
    let first = &first["result"];
    assert_eq!(first["resultType"], "input_required", "{first}");
    assert!(first.get("taskId").is_none(), "{first}");
    assert_eq!(
        first["inputRequests"]["user_name"]["method"],
        "elicitation/create"
    );
    let state = first["requestState"].as_str().expect("a requestState");

    let second = rpc(
        server.addr,
        "tools/call",
        json!({"name": "name_then_task", "arguments": {},
               "inputResponses": {"user_name": {"action": "accept", "content": {"name": "Alice"}}},
               "requestState": state}),
    )
    .await;
    let second = &second["result"];
    assert_eq!(second["resultType"], "task", "{second}");
    assert!(second.get("requestState").is_none(), "{second}");
    assert!(second.get("inputRequests").is_none(), "{second}");
    let task = second["taskId"].as_str().expect("a task id");
    let done = until_not(server.addr, task, &["working", "input_required"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Alice!",
        "{done}"
    );
}
