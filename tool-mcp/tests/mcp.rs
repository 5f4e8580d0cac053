//! Our client against our server: the fixture server over stdio (both
//! protocol eras) and an in-process server over Streamable HTTP.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_core::{
    ErrorKind as ToolErrorKind, Progress, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec,
};
use tool_mcp::{ErrorKind, LiveRegistry, McpConnection, McpServer, McpToolSource, ProtocolEra};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

fn fixture(args: &[&str]) -> McpToolSource {
    McpToolSource::stdio(FIXTURE, args.iter().copied(), [("RUST_LOG", "off")]).named("fx")
}

async fn connect(args: &[&str], era: ProtocolEra) -> McpConnection {
    fixture(args)
        .with_era(era)
        .connect()
        .await
        .expect("fixture connects")
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

async fn wait_for(mut check: impl FnMut() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(10) {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn stdio_import_and_call_in_both_eras() {
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let conn = connect(&[], era).await;
        let live = LiveRegistry::new(ToolRegistry::new());
        let names = conn.import_into(&live).await.expect("import");
        assert!(names.contains(&"fx__echo".to_owned()), "{era:?}: {names:?}");
        let registry = live.snapshot();
        let spec = registry.get("fx__echo").expect("imported").spec();
        // Remote hints never become local permissions.
        assert_eq!(spec.kind, tool_core::ToolKind::Other);
        assert!(!spec.flags.read_only && !spec.flags.idempotent);
        let result = registry
            .execute("fx__echo", json!({"text": "hello"}), &ToolContext::new())
            .await;
        assert_eq!(result.output, "hello", "{era:?}");
        assert_eq!(result.metadata["mcp"]["tool"], "echo");
        assert_eq!(result.metadata["mcp"]["annotations"]["readOnlyHint"], true);
        // A tool printing to stdout does not corrupt the stream.
        let noisy = registry
            .execute("fx__noisy", json!({}), &ToolContext::new())
            .await;
        assert_eq!(noisy.output, "quiet on the wire");
        let image = registry
            .execute("fx__test_image_content", json!({}), &ToolContext::new())
            .await;
        assert_eq!(image.images.len(), 1);
        assert_eq!(image.images[0].media_type, "image/png");
        // Inline attachments travel as audio content and embedded resources.
        let audio = registry
            .execute("fx__test_audio_content", json!({}), &ToolContext::new())
            .await;
        assert_eq!(audio.attachments.len(), 1, "{audio:?}");
        assert_eq!(audio.attachments[0].media_type, "audio/wav");
        let mixed = registry
            .execute(
                "fx__test_multiple_content_types",
                json!({}),
                &ToolContext::new(),
            )
            .await;
        assert_eq!(mixed.images.len(), 1, "{mixed:?}");
        assert_eq!(mixed.attachments.len(), 1, "{mixed:?}");
        assert_eq!(mixed.attachments[0].name, "test://embedded-resource");
        assert_eq!(mixed.attachments[0].media_type, "text/plain");
    }
}

#[tokio::test]
async fn pagination_lists_every_page_in_order() {
    let conn = connect(
        &["--extra", "45", "--page-size", "7"],
        ProtocolEra::Initialize,
    )
    .await;
    let remote = conn.remote_tools().await.expect("list");
    let names: Vec<String> = remote.iter().map(|t| t.name.to_string()).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted, "deterministic name order");
    assert_eq!(
        names.iter().filter(|n| n.starts_with("filler_")).count(),
        45
    );
    sorted.dedup();
    assert_eq!(sorted.len(), names.len(), "no tool twice across pages");
}

#[tokio::test]
async fn tool_errors_are_results_and_unknown_tools_protocol_errors() {
    let conn = connect(&[], ProtocolEra::Initialize).await;
    let ctx = ToolContext::new();
    let failed = conn.call("test_error_handling", Map::new(), &ctx).await;
    assert!(failed.is_error());
    assert!(
        failed
            .error
            .as_ref()
            .is_some_and(|e| e.message.contains("intentionally"))
    );
    assert!(
        failed.metadata.get("mcp_error").is_none(),
        "isError result, not a protocol error"
    );
    let bad = conn.call("echo", args(json!({"text": 5})), &ctx).await;
    assert!(bad.is_error());
    assert!(
        bad.error
            .as_ref()
            .is_some_and(|e| e.message.contains("parameter `text`"))
    );
    let unknown = conn.call("no_such_tool", Map::new(), &ctx).await;
    assert!(unknown.is_error());
    assert_eq!(unknown.metadata["mcp_error"], "protocol");
    assert!(
        unknown
            .error
            .as_ref()
            .is_some_and(|e| e.message.contains("unknown tool"))
    );
}

#[tokio::test]
async fn progress_reaches_the_callers_context() {
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let conn = connect(&[], era).await;
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&seen);
        let ctx = ToolContext::new().with_progress_sink(move |p: Progress| {
            sink.lock().unwrap().push(p.progress);
        });
        let result = conn.call("test_tool_with_progress", Map::new(), &ctx).await;
        assert_eq!(result.output, "progress done");
        assert!(
            wait_for(|| seen.lock().unwrap().len() == 3).await,
            "{era:?}: {:?}",
            seen.lock().unwrap()
        );
        assert_eq!(*seen.lock().unwrap(), vec![0.0, 50.0, 100.0]);
    }
}

#[tokio::test]
async fn cancellation_stops_the_call_and_the_server_goes_on() {
    let conn = connect(&[], ProtocolEra::Initialize).await;
    let token = tokio_util::sync::CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation_token(token.clone());
    let start = Instant::now();
    let cancel = async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        token.cancel();
    };
    let (result, ()) = tokio::join!(
        conn.call("slow", args(json!({"millis": 20_000})), &ctx),
        cancel
    );
    assert_eq!(result.error.map(|e| e.kind), Some(ToolErrorKind::Cancelled));
    assert!(start.elapsed() < Duration::from_secs(5));
    let after = conn
        .call(
            "echo",
            args(json!({"text": "still here"})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(after.output, "still here");
}

#[tokio::test]
async fn list_changed_replaces_the_servers_tools() {
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let conn = connect(&[], era).await;
        let live = LiveRegistry::new(ToolRegistry::new());
        conn.import_into(&live).await.expect("import");
        assert!(!live.snapshot().contains("fx__added_x"));
        let added = live
            .snapshot()
            .execute("fx__add_tool", json!({"name": "x"}), &ToolContext::new())
            .await;
        assert_eq!(added.output, "added", "{added:?}");
        assert!(
            wait_for(|| live.snapshot().contains("fx__added_x")).await,
            "{era:?}: list_changed did not bring the new tool"
        );
        assert!(live.snapshot().contains("fx__echo"));
    }
}

#[tokio::test]
async fn server_death_fails_pending_calls_at_once() {
    let conn = connect(&[], ProtocolEra::Initialize).await;
    let ctx = ToolContext::new();
    let start = Instant::now();
    let (slow, _die) = tokio::join!(
        conn.call("slow", args(json!({"millis": 30_000})), &ctx),
        async {
            tokio::time::sleep(Duration::from_millis(200)).await;
            conn.call("die", Map::new(), &ctx).await
        }
    );
    assert!(slow.is_error());
    assert_eq!(slow.metadata["mcp_error"], "connection_closed", "{slow:?}");
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "{:?}",
        start.elapsed()
    );
    assert!(wait_for(|| conn.is_closed()).await);
    let later = conn.call("echo", args(json!({"text": "x"})), &ctx).await;
    assert_eq!(later.metadata["mcp_error"], "connection_closed");
}

#[tokio::test]
async fn requests_time_out() {
    let conn = fixture(&[])
        .with_timeout(Duration::from_millis(300))
        .connect()
        .await
        .expect("connect");
    let start = Instant::now();
    let result = conn
        .call("slow", args(json!({"millis": 10_000})), &ToolContext::new())
        .await;
    assert_eq!(result.error.map(|e| e.kind), Some(ToolErrorKind::Timeout));
    assert_eq!(result.metadata["mcp_error"], "timeout");
    assert!(start.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn name_collisions_never_overwrite() {
    let live = LiveRegistry::new(ToolRegistry::new());
    let first = connect(&[], ProtocolEra::Initialize).await;
    let before = first.import_into(&live).await.expect("first import");
    let second = connect(&[], ProtocolEra::Initialize).await;
    let err = second.import_into(&live).await.expect_err("same names");
    assert_eq!(err.kind(), ErrorKind::Registry);
    assert!(err.message().contains("fx__echo"), "{err}");
    assert_eq!(
        live.snapshot().len(),
        before.len(),
        "nothing added on conflict"
    );
    // Under another server name both live side by side.
    let third = fixture(&[]).named("fx2").connect().await.expect("connect");
    third.import_into(&live).await.expect("distinct prefix");
    assert_eq!(live.snapshot().len(), 2 * before.len());
}

fn http_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let spec = ToolSpec::new(
        "shout",
        "Upper-case a text.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    let shout = Tool::new(
        spec,
        |args: Map<String, Value>, ctx: ToolContext| async move {
            ctx.report_progress(1.0, Some(1.0), None);
            ToolResult::ok(args["text"].as_str().unwrap_or_default().to_uppercase())
        },
    )
    .unwrap();
    registry.register(shout).unwrap();
    registry
}

#[tokio::test]
async fn http_both_eras_and_list_changed() {
    let live = LiveRegistry::new(http_registry());
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live.clone())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let local = LiveRegistry::new(ToolRegistry::new());
        let conn = McpToolSource::http(format!("http://{addr}/mcp"))
            .named("web")
            .with_era(era)
            .connect()
            .await
            .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        conn.import_into(&local).await.unwrap();
        let result = local
            .snapshot()
            .execute("web__shout", json!({"text": "hi"}), &ToolContext::new())
            .await;
        assert_eq!(result.output, "HI", "{era:?}");
        let unknown = conn.call("nope", Map::new(), &ToolContext::new()).await;
        assert_eq!(unknown.metadata["mcp_error"], "protocol");
        // A change on the server side reaches this client.
        let name = format!("late_{era:?}").to_lowercase();
        let spec = ToolSpec::new(name.clone(), "Late.", json!({"type": "object"}));
        let tool = Tool::new(spec, |_a: Map<String, Value>, _c| async {
            ToolResult::ok("late")
        })
        .unwrap();
        live.update(|r| r.register(tool)).unwrap();
        let local_name = format!("web__{name}");
        assert!(
            wait_for(|| local.snapshot().contains(&local_name)).await,
            "{era:?}: no list_changed over HTTP"
        );
    }
    stop.cancel();
}

#[tokio::test]
async fn http_rejects_foreign_host_and_origin() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(http_registry())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    for (host, origin, expect_forbidden) in [
        ("evil.example", None, true),
        ("127.0.0.1", Some("http://evil.example"), true),
        ("127.0.0.1", Some("http://localhost:3000"), false),
    ] {
        let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
        let origin = origin
            .map(|o| format!("Origin: {o}\r\n"))
            .unwrap_or_default();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\n{origin}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).await.unwrap();
        let mut response = Vec::new();
        let _ =
            tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut response)).await;
        let status = String::from_utf8_lossy(&response)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned();
        assert_eq!(
            status.contains("403"),
            expect_forbidden,
            "{host} {origin}: {status}"
        );
    }
    stop.cancel();
}

/// A server whose `save_note` needs confirmation, `text` being editable.
fn confirmation_registry(runs: Arc<Mutex<Vec<Value>>>) -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let spec = ToolSpec::new(
        "save_note",
        "Save a note.",
        json!({"type": "object", "properties": {
            "path": {"type": "string"}, "text": {"type": "string"}
        }, "required": ["path", "text"]}),
    )
    .requires_confirmation(&["text"]);
    let tool = Tool::new(spec, move |args: Map<String, Value>, _ctx| {
        let runs = Arc::clone(&runs);
        async move {
            runs.lock().unwrap().push(Value::Object(args.clone()));
            ToolResult::ok(format!("saved {} to {}", args["text"], args["path"]))
        }
    })
    .unwrap();
    registry.register(tool).unwrap();
    registry
}

#[tokio::test]
async fn confirmation_through_input_required_in_2026() {
    use tool_core::{ApprovalDecision, ApprovalRequest};
    let runs = Arc::new(Mutex::new(Vec::new()));
    let stop = tokio_util::sync::CancellationToken::new();
    // No approver on the server: without the client, every call is denied.
    let (addr, _task) = McpServer::new(confirmation_registry(Arc::clone(&runs)))
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let connect = |era| {
        McpToolSource::http(format!("http://{addr}/mcp"))
            .named("notes")
            .with_era(era)
            .connect()
    };
    let conn = connect(ProtocolEra::Discover).await.unwrap();
    let call_args = args(json!({"path": "a.txt", "text": "draft"}));
    let asked = Arc::new(Mutex::new(Vec::<ApprovalRequest>::new()));
    let with = |decision: ApprovalDecision| {
        let asked = Arc::clone(&asked);
        ToolContext::new().with_approver(move |r: ApprovalRequest| {
            asked.lock().unwrap().push(r);
            let decision = decision.clone();
            async move { decision }
        })
    };

    // Approve: the call runs as sent, once.
    let approved = conn
        .call(
            "save_note",
            call_args.clone(),
            &with(ApprovalDecision::Approve),
        )
        .await;
    assert!(approved.error.is_none(), "{approved:?}");
    assert_eq!(approved.output, r#"saved "draft" to "a.txt""#);
    {
        let asked = asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].tool, "notes__save_note");
        assert_eq!(asked[0].arguments, call_args);
        assert_eq!(asked[0].editable_params, ["text"]);
    }
    assert_eq!(runs.lock().unwrap().len(), 1);

    // Approve with an edit of the editable parameter: the edited call runs.
    let edited = conn
        .call(
            "save_note",
            call_args.clone(),
            &with(ApprovalDecision::ApproveWithEdits(args(
                json!({"path": "a.txt", "text": "final"}),
            ))),
        )
        .await;
    assert!(edited.error.is_none(), "{edited:?}");
    // The serving side tells the model about the edit; the note arrives in the text.
    assert_eq!(
        edited.output,
        "saved \"final\" to \"a.txt\"\n\nNote: the person approving this call edited it first (`text` set to \"final\"); it ran with the edited arguments"
    );
    assert_eq!(runs.lock().unwrap()[1]["text"], "final");

    // An edit of anything else is refused by the approval gate (as in the
    // local pipeline): the form is declined and nothing runs.
    let before_sneaky = runs.lock().unwrap().len();
    let sneaky = conn
        .call(
            "save_note",
            call_args.clone(),
            &with(ApprovalDecision::ApproveWithEdits(args(
                json!({"path": "/etc/passwd", "text": "final"}),
            ))),
        )
        .await;
    assert!(
        sneaky
            .error
            .as_ref()
            .is_some_and(|e| e.message.contains("did not approve")),
        "{sneaky:?}"
    );
    assert_eq!(runs.lock().unwrap().len(), before_sneaky);

    // Deny: the tool does not run and the model reads why.
    let before = runs.lock().unwrap().len();
    let denied = conn
        .call(
            "save_note",
            call_args.clone(),
            &with(ApprovalDecision::Deny("no".into())),
        )
        .await;
    // (An imported tool's error is `failed`; the server's message says why.)
    let message = |r: &ToolResult| {
        r.error
            .as_ref()
            .map(|e| e.message.clone())
            .unwrap_or_default()
    };
    assert!(message(&denied).contains("did not approve"), "{denied:?}");
    // No approver on the client side: declined, not run.
    let unanswered = conn
        .call("save_note", call_args.clone(), &ToolContext::new())
        .await;
    assert!(
        message(&unanswered).contains("did not approve"),
        "{unanswered:?}"
    );
    assert_eq!(runs.lock().unwrap().len(), before);

    // A 2025-11-25 session of this client declares elicitation too (issue
    // 26): the server's `elicitation/create` reaches the caller's approver.
    let asked_before = asked.lock().unwrap().len();
    let session = connect(ProtocolEra::Initialize).await.unwrap();
    let approved_again = session
        .call(
            "save_note",
            call_args.clone(),
            &with(ApprovalDecision::Approve),
        )
        .await;
    assert!(approved_again.error.is_none(), "{approved_again:?}");
    assert_eq!(asked.lock().unwrap().len(), asked_before + 1);
    assert_eq!(asked.lock().unwrap()[asked_before].tool, "notes__save_note");
    assert_eq!(runs.lock().unwrap().len(), before + 1);
    // No approver on the client side: declined there, not run.
    let unanswered = session
        .call("save_note", call_args, &ToolContext::new())
        .await;
    assert!(
        message(&unanswered).contains("did not approve"),
        "{unanswered:?}"
    );
    assert_eq!(runs.lock().unwrap().len(), before + 1);
    stop.cancel();
}

#[tokio::test]
async fn a_server_that_never_answers_the_handshake_fails_fast_and_is_named() {
    let started = Instant::now();
    let err = McpToolSource::stdio("sleep", ["30"], std::iter::empty::<(String, String)>())
        .named("silent")
        .with_connect_timeout(Duration::from_millis(300))
        .connect()
        .await
        .expect_err("no handshake, no connection");
    assert_eq!(err.kind(), ErrorKind::Connect);
    let text = err.to_string();
    assert!(text.contains("MCP server `silent` (sleep 30)"), "{text}");
    assert!(text.contains("no answer to the handshake"), "{text}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

/// One raw HTTP/1.1 POST of `body` to `/mcp` at `addr`: the status and the body.
async fn raw_post(addr: std::net::SocketAddr, body: &[u8]) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    // The server may answer (413) before reading a huge body; a failed write is fine then.
    let _ = stream.write_all(body).await;
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_owned())
        .unwrap_or_default();
    (status, body)
}

#[tokio::test]
async fn http_answers_bad_messages_with_a_status_and_a_jsonrpc_error() {
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(http_registry())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let mut huge = br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"shout","arguments":{"text":""#.to_vec();
    huge.resize(huge.len() + tool_mcp::MAX_MESSAGE_BYTES, b'a');
    huge.extend_from_slice(br#""}}}"#);
    let cases: Vec<(Vec<u8>, u16, i64, Value)> = vec![
        (b"not json".to_vec(), 400, -32700, Value::Null),
        (b"{\"jsonrpc\":\"2.0\",\"id\":1".to_vec(), 400, -32700, Value::Null),
        (br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":"x"}"#.to_vec(), 400, -32600, json!(2)),
        (br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{}}"#.to_vec(), 200, -32602, json!(3)),
        (br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"shout","arguments":"x"}}"#.to_vec(), 200, -32602, json!(4)),
        (br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"shout","arguments":[]}}"#.to_vec(), 200, -32602, json!(5)),
        (br#"{"jsonrpc":"2.0","id":6,"method":"logging/setLevel","params":{"level":"loud"}}"#.to_vec(), 200, -32602, json!(6)),
        (br#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#.to_vec(), 400, -32600, Value::Null),
        (br#"{"jsonrpc":"2.0","id":true,"method":"ping"}"#.to_vec(), 400, -32600, Value::Null),
        (huge, 413, -32600, Value::Null),
    ];
    for (body, status, code, id) in cases {
        let shown = String::from_utf8_lossy(&body[..body.len().min(60)]).into_owned();
        let (got_status, got_body) = raw_post(addr, &body).await;
        assert_eq!(got_status, status, "{shown}: {got_body}");
        let answer: Value =
            serde_json::from_str(&got_body).unwrap_or_else(|e| panic!("{shown}: {e}: {got_body}"));
        assert_eq!(answer["error"]["code"], code, "{shown}: {answer}");
        assert_eq!(answer["id"], id, "{shown}: {answer}");
    }
    // A good request still works afterwards.
    let (status, body) = raw_post(
        addr,
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("protocolVersion"), "{body}");
    stop.cancel();
}

#[tokio::test]
async fn http_access_refuses_remote_addresses_without_a_token() {
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.1:80"] {
        let stop = tokio_util::sync::CancellationToken::new();
        let err = McpServer::new(http_registry())
            .serve_http(addr.parse().unwrap(), stop)
            .await
            .err()
            .unwrap_or_else(|| panic!("{addr} served"));
        assert_eq!(err.kind(), ErrorKind::Config, "{addr}: {err}");
        assert!(err.message().contains("not a loopback address"), "{err}");
    }
    for bad in [
        "",
        "short",
        "has a space in the token",
        "tab\tin-the-token-abcdef",
    ] {
        let err = tool_mcp::HttpAccess::remote(bad).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Config, "{bad:?}");
    }
    let access = tool_mcp::HttpAccess::remote("0123456789abcdef").unwrap();
    assert!(access.is_remote() && access.has_token());
    assert!(
        !format!("{access:?}").contains("0123"),
        "Debug hides the token"
    );
    let stop = tokio_util::sync::CancellationToken::new();
    let (bound, _task) = McpServer::new(http_registry())
        .serve_http_with("0.0.0.0:0".parse().unwrap(), access, stop.clone())
        .await
        .unwrap();
    assert!(bound.ip().is_unspecified());
    let (status, _) = raw_post(
        std::net::SocketAddr::from(([127, 0, 0, 1], bound.port())),
        br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
    )
    .await;
    assert_eq!(status, 401);
    stop.cancel();
}

#[tokio::test]
async fn shutdown_cancels_running_calls_answers_them_and_returns() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let started = Arc::new(tokio::sync::Notify::new());
    let mut registry = ToolRegistry::new();
    let spec = ToolSpec::new("hang", "Never ends.", json!({"type": "object"}));
    let notify = started.clone();
    registry
        .register(
            Tool::new(spec, move |_a: Map<String, Value>, _c: ToolContext| {
                let notify = notify.clone();
                async move {
                    notify.notify_one();
                    std::future::pending::<ToolResult>().await
                }
            })
            .unwrap(),
        )
        .unwrap();
    let (client, server_side) = tokio::io::duplex(1 << 16);
    let (server_read, server_write) = tokio::io::split(server_side);
    let stop = tokio_util::sync::CancellationToken::new();
    let serving = tokio::spawn(
        McpServer::new(registry).serve_transport_until((server_read, server_write), stop.clone()),
    );
    let (client_read, mut client_write) = tokio::io::split(client);
    let mut lines = tokio::io::BufReader::new(client_read).lines();
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{}}}"#,
    ] {
        client_write.write_all(message.as_bytes()).await.unwrap();
        client_write.write_all(b"\n").await.unwrap();
    }
    let init: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(init["id"], 1);
    tokio::time::timeout(Duration::from_secs(10), started.notified())
        .await
        .expect("the call started");
    let at = Instant::now();
    stop.cancel();
    let outcome = tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("serve_transport_until returns within 5 s")
        .unwrap();
    assert!(outcome.is_ok(), "{outcome:?}");
    assert!(
        at.elapsed() < tool_mcp::SHUTDOWN_TIMEOUT,
        "{:?}",
        at.elapsed()
    );
    let answer: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(answer["id"], 2, "{answer}");
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    assert!(answer.to_string().contains("cancelled"), "{answer}");
}

/// A `#[toolset]`: its tools are bound to the instance the server holds.
#[derive(Default)]
struct Tally(Mutex<u64>);

#[tool_core::toolset]
impl Tally {
    /// Add `by` to the tally and return the new total.
    ///
    /// # Arguments
    /// * `by` - How much to add.
    #[tool(name = "tally_add", idempotent = false)]
    fn add(&self, by: u64) -> String {
        let mut total = self.0.lock().unwrap();
        *total += by;
        total.to_string()
    }

    /// Add `by`, `times` times (a whole-argument struct).
    #[tool(name = "tally_step", idempotent = false)]
    fn step(&self, #[arg(flatten)] step: TallyStep) -> String {
        let mut total = self.0.lock().unwrap();
        *total += step.by * step.times.unwrap_or(1);
        total.to_string()
    }
}

/// The arguments of `tally_step`, flattened into its parameters.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct TallyStep {
    /// How much to add each time.
    by: u64,
    /// How many times (default once).
    times: Option<u64>,
}

#[tokio::test]
async fn toolset_tools_are_served_and_share_their_instance() {
    let tally = Arc::new(Tally::default());
    let mut registry = ToolRegistry::new();
    registry.add_toolset(Arc::clone(&tally)).unwrap();
    let live = LiveRegistry::new(registry);
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let local = LiveRegistry::new(ToolRegistry::new());
    let conn = McpToolSource::http(format!("http://{addr}/mcp"))
        .named("t")
        .connect()
        .await
        .unwrap();
    conn.import_into(&local).await.unwrap();
    let spec = local.snapshot().get("t__tally_add").unwrap().spec().clone();
    assert_eq!(
        spec.description,
        "Add `by` to the tally and return the new total."
    );
    for (by, total) in [(2, "2"), (3, "5")] {
        let result = local
            .snapshot()
            .execute("t__tally_add", json!({ "by": by }), &ToolContext::new())
            .await;
        assert_eq!(result.output, total);
    }
    assert_eq!(*tally.0.lock().unwrap(), 5);
    // A flattened struct's fields are the served tool's parameters.
    let step = local
        .snapshot()
        .get("t__tally_step")
        .unwrap()
        .spec()
        .clone();
    let names: Vec<&String> = step.parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(names, ["by", "times"], "{}", step.parameters);
    assert_eq!(step.parameters["required"], json!(["by"]));
    assert_eq!(
        step.parameters["properties"]["by"]["description"],
        "How much to add each time."
    );
    let result = local
        .snapshot()
        .execute(
            "t__tally_step",
            json!({"by": 2, "times": 3}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(result.output, "11");
    let result = local
        .snapshot()
        .execute("t__tally_step", json!({"times": 3}), &ToolContext::new())
        .await;
    let error = result.error.expect("a missing field is an error");
    assert!(error.message.contains("`by`"), "{}", error.message);
    stop.cancel();
}
