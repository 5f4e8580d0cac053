//! The MCP tasks extension (SEP-2663) and the per-request client facts
//! (SEP-2575) on a real server: `McpServer::serve_http` on a loopback port,
//! spoken to in raw 2026-07-28 JSON-RPC over HTTP/1.1, with a real job
//! registry in a temporary folder and tools that run real processes.

#![allow(
    deprecated,
    reason = "per-request log levels and sampling are deprecated from 2026-07-28 (SEP-2577), still part of it"
)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_core::jobs::{JobRegistry, JobStatus};
use tool_core::state::FileStore;
use tool_core::{TaskSupport, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec, tool};
use tool_mcp::{McpServer, TaskLimits};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// Wait for `millis`, then answer `done after <millis> ms`.
///
/// # Arguments
/// * `millis` - How long to wait.
#[tool(task_support = "optional")]
async fn wait_then_answer(millis: u64) -> String {
    tokio::time::sleep(Duration::from_millis(millis.min(60_000))).await;
    format!("done after {millis} ms")
}

/// A tool only a client with the tasks extension may call.
#[tool(task_support = "required")]
fn only_as_task() -> String {
    "ran as a task".to_owned()
}

/// Runs `sleep 120` as a child process, writes its pid to `pid_file`, and
/// kills it when the call is cancelled.
fn sleeper() -> Tool {
    let spec = ToolSpec::new(
        "sleeper",
        "Run sleep 120 until cancelled.",
        json!({"type": "object", "properties": {"pid_file": {"type": "string"}}, "required": ["pid_file"]}),
    )
    .with_task_support(TaskSupport::Optional);
    Tool::new(
        spec,
        |args: serde_json::Map<String, Value>, ctx: ToolContext| async move {
            let Some(pid_file) = args.get("pid_file").and_then(Value::as_str) else {
                return ToolResult::failed("pid_file missing");
            };
            let mut child = match tokio::process::Command::new("sleep")
                .arg("120")
                .kill_on_drop(true)
                .spawn()
            {
                Ok(child) => child,
                Err(e) => return ToolResult::failed(e.to_string()),
            };
            let pid = child.id().unwrap_or(0);
            if let Err(e) = std::fs::write(pid_file, pid.to_string()) {
                return ToolResult::failed(e.to_string());
            }
            tokio::select! {
                status = child.wait() => ToolResult::ok(format!("sleep ended: {status:?}")),
                () = ctx.cancellation_token().cancelled() => {
                    let _ = child.kill().await;
                    ToolResult::failed("cancelled")
                }
            }
        },
    )
    .expect("valid tool")
}

/// Answers `bytes` bytes of `x`.
fn big() -> Tool {
    let spec = ToolSpec::new(
        "big",
        "Answer many bytes.",
        json!({"type": "object", "properties": {"bytes": {"type": "integer"}}, "required": ["bytes"]}),
    )
    .with_task_support(TaskSupport::Optional);
    Tool::new(
        spec,
        |args: serde_json::Map<String, Value>, _ctx: ToolContext| async move {
            let n = args.get("bytes").and_then(Value::as_u64).unwrap_or(0);
            ToolResult::ok("x".repeat(usize::try_from(n.min(1 << 20)).unwrap_or(0)))
        },
    )
    .expect("valid tool")
}

/// The `#[tool]` of this file named `name`.
fn declared(name: &str) -> Tool {
    ToolRegistry::global()
        .get(name)
        .cloned()
        .unwrap_or_else(|| panic!("#[tool] {name} is registered"))
}

struct Server {
    addr: SocketAddr,
    stop: tokio_util::sync::CancellationToken,
    jobs: JobRegistry,
    workspace: PathBuf,
    _dir: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn server(limits: TaskLimits) -> Server {
    let dir = tempfile::tempdir().expect("tempdir");
    let jobs = JobRegistry::new(
        Arc::new(FileStore::new(dir.path().join("state"))),
        dir.path().join("jobs"),
    );
    let workspace = dir.path().join("ws");
    std::fs::create_dir(&workspace).expect("workspace");
    let mut registry = ToolRegistry::new();
    registry
        .register(declared("wait_then_answer"))
        .expect("register");
    registry
        .register(declared("only_as_task"))
        .expect("register");
    registry.register(sleeper()).expect("register");
    registry.register(big()).expect("register");
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(registry)
        .with_context(ToolContext::new().with_state(jobs.clone()))
        .with_task_limits(limits)
        .with_task_workspace(&workspace)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .expect("the server starts");
    Server {
        addr,
        stop,
        jobs,
        workspace,
        _dir: dir,
    }
}

/// One 2026-07-28 request (`params._meta` carries the version and the
/// client's capabilities, with the tasks extension when `tasks`): the
/// HTTP status and the JSON-RPC response of id 1.
async fn rpc(addr: SocketAddr, method: &str, params: Value, tasks: bool) -> (u16, Value) {
    rpc_from(None, addr, method, params, tasks).await
}

/// [`rpc`] from the local address `from` (another loopback address is
/// another client for the server's task caps).
async fn rpc_from(
    from: Option<std::net::IpAddr>,
    addr: SocketAddr,
    method: &str,
    mut params: Value,
    tasks: bool,
) -> (u16, Value) {
    let capabilities = if tasks {
        json!({"extensions": {TASKS: {}}})
    } else {
        json!({})
    };
    let extra = params.get("_meta").cloned();
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
        "io.modelcontextprotocol/clientInfo": {"name": "tasks-test", "version": "1"},
    });
    for (k, v) in extra
        .as_ref()
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        params["_meta"][k] = v.clone();
    }
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
    let mut stream = match from {
        None => tokio::net::TcpStream::connect(addr).await.expect("connect"),
        Some(ip) => {
            let socket = tokio::net::TcpSocket::new_v4().expect("socket");
            socket.bind(SocketAddr::new(ip, 0)).expect("bind");
            socket.connect(addr).await.expect("connect")
        }
    };
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), stream.read_to_end(&mut response))
        .await
        .expect("an answer within 60 s")
        .expect("read");
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // A JSON body, or server-sent events (possibly chunked): the message with id 1.
    let messages = messages_of(body);
    let message = messages
        .iter()
        .find(|m| m.get("id") == Some(&json!(1)))
        .cloned()
        .unwrap_or_else(|| panic!("no response of id 1 in: {text}"));
    LAST_STREAM.with(|last| *last.borrow_mut() = messages);
    (status, message)
}

thread_local! {
    /// Every message of the last [`rpc`]'s response stream, in order.
    static LAST_STREAM: std::cell::RefCell<Vec<Value>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The JSON-RPC messages of a response body: one JSON document, or
/// server-sent events (possibly chunked).
fn messages_of(body: &str) -> Vec<Value> {
    body.lines()
        .filter_map(|line| {
            let line = line.trim();
            let json = line.strip_prefix("data:").map_or(line, str::trim);
            serde_json::from_str::<Value>(json).ok()
        })
        .collect()
}

async fn call(addr: SocketAddr, tool: &str, arguments: Value, tasks: bool) -> (u16, Value) {
    rpc(
        addr,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
        tasks,
    )
    .await
}

async fn get(addr: SocketAddr, task: &str) -> Value {
    let (status, response) = rpc(addr, "tasks/get", json!({"taskId": task}), true).await;
    assert_eq!(status, 200, "{response}");
    response["result"].clone()
}

/// Polls `tasks/get` every 50 ms until the task leaves `working` (at most 60 s).
async fn settled(addr: SocketAddr, task: &str) -> Value {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let state = get(addr, task).await;
        if state["status"] != "working" || Instant::now() > until {
            return state;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

fn is_iso8601(value: &Value) -> bool {
    value.as_str().is_some_and(|s| {
        s.len() == 24 && s.ends_with('Z') && s.as_bytes()[10] == b'T' && s.as_bytes()[4] == b'-'
    })
}

#[tokio::test]
async fn a_task_runs_in_the_background_and_tasks_get_returns_its_result() {
    let server = server(TaskLimits::default()).await;
    let (status, created) = call(
        server.addr,
        "wait_then_answer",
        json!({"millis": 300}),
        true,
    )
    .await;
    assert_eq!(status, 200, "{created}");
    let created = &created["result"];
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    let id = created["taskId"].as_str().expect("taskId").to_owned();
    assert!(tool_core::jobs::is_job_id(&id), "{id}");
    assert!(is_iso8601(&created["createdAt"]), "{created}");
    assert_eq!(created["ttlMs"], 3_600_000);
    assert_eq!(created["pollIntervalMs"], 500);
    assert!(created.get("result").is_none() && created.get("task").is_none());

    // The task is a job of the one registry, under the client's key.
    let key = JobRegistry::key(None, &server.workspace).expect("key");
    let job = server.jobs.view(&key, &id).expect("the task is a job");
    assert_eq!(job.record.kind, tool_mcp::TASK_JOB_KIND);
    assert_eq!(job.record.title, "wait_then_answer");

    let done = settled(server.addr, &id).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["resultType"], "complete");
    assert_eq!(done["taskId"], id.as_str());
    assert_eq!(done["result"]["content"][0]["text"], "done after 300 ms");
    assert_ne!(done["result"]["isError"], true);
    // Read again: the same result (a result is kept, not consumed).
    assert_eq!(get(server.addr, &id).await["result"], done["result"]);
    assert_eq!(
        server.jobs.view(&key, &id).expect("job").status,
        JobStatus::Exited
    );
}

#[tokio::test]
async fn cancelling_a_running_task_stops_its_process() {
    let server = server(TaskLimits::default()).await;
    let pid_file = server.workspace.join("pid");
    let (_, created) = call(
        server.addr,
        "sleeper",
        json!({"pid_file": pid_file.to_str().expect("utf-8")}),
        true,
    )
    .await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let pid = wait_for_pid(&pid_file).await;
    assert!(Path::new(&format!("/proc/{pid}")).exists(), "sleep runs");
    assert_eq!(get(server.addr, &id).await["status"], "working");

    let (status, ack) = rpc(server.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(status, 200, "{ack}");
    assert_eq!(ack["result"], json!({"resultType": "complete"}));
    let after = settled(server.addr, &id).await;
    assert_eq!(after["status"], "cancelled", "{after}");
    assert!(after.get("result").is_none(), "{after}");
    // The child was killed and reaped: its /proc entry is gone.
    let until = Instant::now() + Duration::from_secs(30);
    while Path::new(&format!("/proc/{pid}")).exists() && Instant::now() < until {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "sleep {pid} still runs after tasks/cancel"
    );
    // Cancelling again is the same empty ack.
    let (_, again) = rpc(server.addr, "tasks/cancel", json!({"taskId": id}), true).await;
    assert_eq!(again["result"], json!({"resultType": "complete"}));
}

async fn wait_for_pid(path: &Path) -> u32 {
    let until = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return pid;
        }
        assert!(Instant::now() < until, "the tool never started sleep");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Review 26, F8: a client cannot escape the per-client task cap by
/// sending a new `traceparent` with each call (the stateless era names a
/// client by its checked token, else its address), and the server's total
/// is capped across clients (another loopback address is another client).
#[tokio::test]
async fn new_traceparents_do_not_escape_the_task_cap_and_the_total_is_capped() {
    let server =
        server(TaskLimits::new(2, 1 << 20, Duration::from_secs(600)).with_max_total(3)).await;
    let call_from = |from: Option<std::net::IpAddr>, n: u32| {
        let params = json!({"name": "wait_then_answer", "arguments": {"millis": 30_000},
            "_meta": {"traceparent": format!("00-{n:032x}-{n:016x}-01")}});
        rpc_from(from, server.addr, "tools/call", params, true)
    };
    for n in 1..=2 {
        let (_, created) = call_from(None, n).await;
        assert!(created["result"]["taskId"].is_string(), "{created}");
    }
    let (status, refused) = call_from(None, 3).await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("the most one client may run at once (2)"),
        "{message}"
    );

    // Another client (another address): its first task is the server's
    // third, its second one too many for the server.
    let other = Some(std::net::IpAddr::from([127, 0, 0, 2]));
    let (_, created) = call_from(other, 4).await;
    assert!(created["result"]["taskId"].is_string(), "{created}");
    let (_, refused) = call_from(other, 5).await;
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().expect("message");
    assert!(message.contains("for all its clients (3)"), "{message}");
}

#[tokio::test]
async fn the_live_task_cap_and_the_result_size_limit_refuse_with_clear_errors() {
    let server = server(TaskLimits::new(1, 512, Duration::from_secs(600))).await;
    let pid_file = server.workspace.join("pid");
    let (_, first) = call(
        server.addr,
        "sleeper",
        json!({"pid_file": pid_file.to_str().expect("utf-8")}),
        true,
    )
    .await;
    let first = first["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    assert_eq!(first.len(), 36, "job- and 128 random bits: {first}");
    // A second running task is one too many.
    let (status, refused) = call(server.addr, "wait_then_answer", json!({"millis": 1}), true).await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    let message = refused["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("the most one client may run at once (1)")
            && message.contains("tasks/cancel"),
        "{message}"
    );
    rpc(server.addr, "tasks/cancel", json!({"taskId": first}), true).await;
    assert_eq!(settled(server.addr, &first).await["status"], "cancelled");

    // A result over 512 bytes is not kept: the task fails, naming the sizes.
    let (_, created) = call(server.addr, "big", json!({"bytes": 2000}), true).await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let failed = settled(server.addr, &id).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(failed.get("result").is_none());
    assert_eq!(failed["error"]["code"], -32603);
    let message = failed["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("over the task result limit of 512 bytes") && message.contains("`big`"),
        "{message}"
    );
    // A small one is kept.
    let (_, created) = call(server.addr, "big", json!({"bytes": 10}), true).await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    let done = settled(server.addr, &id).await;
    assert_eq!(done["result"]["content"][0]["text"], "xxxxxxxxxx", "{done}");
}

#[tokio::test]
async fn without_the_extension_optional_tools_run_inside_the_call_and_required_ones_are_refused() {
    let server = server(TaskLimits::default()).await;
    let (status, sync) = call(
        server.addr,
        "wait_then_answer",
        json!({"millis": 10}),
        false,
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(sync["result"]["resultType"], "complete", "{sync}");
    assert_eq!(sync["result"]["content"][0]["text"], "done after 10 ms");
    assert!(sync["result"].get("taskId").is_none());

    let (status, refused) = call(server.addr, "only_as_task", json!({}), false).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], -32021);
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(),
        "{refused}"
    );
    let (status, gated) = rpc(
        server.addr,
        "tasks/get",
        json!({"taskId": "job-0000000000000000"}),
        false,
    )
    .await;
    assert_eq!(
        (status, &gated["error"]["code"]),
        (400, &json!(-32021)),
        "{gated}"
    );

    // With the extension the required tool runs as a task.
    let (_, created) = call(server.addr, "only_as_task", json!({}), true).await;
    let id = created["result"]["taskId"]
        .as_str()
        .expect("a task")
        .to_owned();
    assert_eq!(
        settled(server.addr, &id).await["result"]["content"][0]["text"],
        "ran as a task"
    );

    // Unknown ids and removed methods.
    let (_, unknown) = rpc(
        server.addr,
        "tasks/get",
        json!({"taskId": "job-0123456789abcdef"}),
        true,
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    assert!(
        unknown["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("No task `job-0123456789abcdef`")),
        "{unknown}"
    );
    let (_, unknown) = rpc(
        server.addr,
        "tasks/cancel",
        json!({"taskId": "not a job id"}),
        true,
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    let (_, removed) = rpc(server.addr, "tasks/list", json!({}), true).await;
    assert_eq!(removed["error"]["code"], -32601, "{removed}");
    let (_, discover) = rpc(server.addr, "server/discover", json!({}), true).await;
    assert!(
        discover["result"]["capabilities"]["extensions"][TASKS].is_object(),
        "{discover}"
    );
}

/// Log `notice` and `debug`; answer how many were sent.
#[tool]
async fn log_twice(context: &ToolContext) -> String {
    use tool_mcp::client_request::{LogLevel, log};
    let notice = log(context, LogLevel::Notice, json!("a notice")).await;
    let debug = log(context, LogLevel::Debug, json!("a debug line")).await;
    format!("notice sent: {notice}, debug sent: {debug}")
}

/// Needs sampling.
#[tool]
fn needs_sampling(context: &ToolContext) -> ToolResult {
    use tool_mcp::client_request;
    use tool_mcp::rmcp::model::ClientCapabilities;
    if client_request::client_capabilities(context).is_some_and(|c| c.sampling.is_some()) {
        return ToolResult::ok("sampling declared");
    }
    client_request::missing_client_capability(
        &ClientCapabilities::builder().enable_sampling().build(),
    )
}

#[tokio::test(flavor = "current_thread")]
async fn logs_follow_the_requests_log_level_and_a_missing_capability_is_32021() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut registry = ToolRegistry::new();
    registry.register(declared("log_twice")).expect("register");
    registry
        .register(declared("needs_sampling"))
        .expect("register");
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(registry)
        .with_task_workspace(dir.path())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .expect("the server starts");
    let logs = || {
        LAST_STREAM.with(|s| {
            s.borrow()
                .iter()
                .filter(|m| m["method"] == "notifications/message")
                .map(|m| m["params"]["data"].clone())
                .collect::<Vec<_>>()
        })
    };
    // No level asked for: no log at all.
    let (_, quiet) = call(addr, "log_twice", json!({}), false).await;
    assert_eq!(
        quiet["result"]["content"][0]["text"],
        "notice sent: false, debug sent: false"
    );
    assert!(logs().is_empty());
    // `info`: the notice only.
    let (_, loud) = rpc(
        addr,
        "tools/call",
        json!({"name": "log_twice", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "info"}}),
        false,
    )
    .await;
    assert_eq!(
        loud["result"]["content"][0]["text"],
        "notice sent: true, debug sent: false"
    );
    assert_eq!(logs(), vec![json!("a notice")]);

    let (status, refused) = call(addr, "needs_sampling", json!({}), false).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], -32021);
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    stop.cancel();
}

#[test]
fn task_support_is_declared_by_the_attribute_and_the_builder() {
    assert_eq!(
        declared("wait_then_answer").spec().task_support,
        TaskSupport::Optional
    );
    assert_eq!(
        declared("only_as_task").spec().task_support,
        TaskSupport::Required
    );
    assert_eq!(sleeper().spec().task_support, TaskSupport::Optional);
    let plain = ToolSpec::new("p", "d", json!({"type": "object"}));
    assert_eq!(plain.task_support, TaskSupport::Forbidden);
    // Forbidden is left out of the JSON; the others are written.
    assert!(
        serde_json::to_value(&plain)
            .unwrap()
            .get("task_support")
            .is_none()
    );
    let json = serde_json::to_value(sleeper().spec()).unwrap();
    assert_eq!(json["task_support"], "optional");
}
