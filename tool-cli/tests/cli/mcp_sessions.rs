//! Issue 23 item 5: `tool serve --http` keeps one context per client: one
//! read ledger and one set of loaded tools per MCP session (2025-11-25), and
//! per client-supplied trace (`params._meta.traceparent`, W3C Trace Context)
//! in the stateless 2026-07-28 era. Before, every client shared the base
//! context: session B overwrote a file only session A had read, and A's
//! `tool_search select:` showed up in B's `tools/list`.

use std::io::{Read, Write};

use serde_json::{Map, Value, json};
use tool_core::ToolContext;
use tool_mcp::{McpToolSource, ProtocolEra};

use crate::support::{Served, TempDir, tool};

/// A `tool serve --http 127.0.0.1:0` child on `ws` (state in `state`),
/// killed when dropped; `url` is its endpoint.
pub(crate) fn serve(ws: &TempDir, state: &TempDir, extra: &[&str]) -> Served {
    let mut cmd = tool();
    cmd.env("XDG_STATE_HOME", state.path())
        .args(["serve", "--http", "127.0.0.1:0", "--workspace", ws.arg()])
        .args(extra);
    Served::start(cmd)
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_http_session_has_its_own_ledger_and_loaded_tools() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("a.txt"), "original\n").expect("write");
    // `edit_file` deferred: a session loads it with tool_search.
    let server = serve(
        &ws,
        &state,
        &["--trace-id", "t-serve", "--defer", "edit_file"],
    );
    // Sessions are of 2025-11-25 (the client's default, `auto`, would
    // settle on the stateless 2026-07-28 era with this server).
    let a = McpToolSource::http(server.url.clone())
        .with_era(ProtocolEra::Initialize)
        .connect()
        .await
        .expect("session A");
    let b = McpToolSource::http(server.url.clone())
        .with_era(ProtocolEra::Initialize)
        .connect()
        .await
        .expect("session B");
    let ctx = ToolContext::new();
    let read = a
        .call("read_file", args(json!({"file_path": "a.txt"})), &ctx)
        .await;
    assert!(read.error.is_none(), "{read:?}");
    // B never read a.txt: its overwrite is refused, the file unchanged.
    let b_write = b
        .call(
            "write_file",
            args(json!({"file_path": "a.txt", "content": "from B\n"})),
            &ctx,
        )
        .await;
    let message = b_write.error.map(|e| e.message).unwrap_or_default();
    assert!(message.contains("You must read file"), "{message}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).expect("read"),
        "original\n"
    );
    // A did: its write goes through.
    let a_write = a
        .call(
            "write_file",
            args(json!({"file_path": "a.txt", "content": "from A\n"})),
            &ctx,
        )
        .await;
    assert!(a_write.error.is_none(), "{a_write:?}");
    // A loads edit_file; only A's list shows it.
    let loaded = a
        .call(
            "tool_search",
            args(json!({"query": "select:edit_file"})),
            &ctx,
        )
        .await;
    assert!(loaded.error.is_none(), "{loaded:?}");
    let names = |tools: Vec<tool_mcp::rmcp::model::Tool>| -> Vec<String> {
        tools.into_iter().map(|t| t.name.to_string()).collect()
    };
    let a_names = names(a.remote_tools().await.expect("A's list"));
    let b_names = names(b.remote_tools().await.expect("B's list"));
    assert!(a_names.contains(&"edit_file".to_owned()), "{a_names:?}");
    assert!(!b_names.contains(&"edit_file".to_owned()), "{b_names:?}");
    a.close();
    b.close();
}

/// One stateless-era (2026-07-28) `tools/call` over raw HTTP, with
/// `traceparent` in `_meta` when given; returns the result object.
pub(crate) fn stateless_call(
    url: &str,
    id: u32,
    name: &str,
    arguments: &Value,
    trace: Option<&str>,
) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    if let Some(t) = trace {
        meta["traceparent"] = json!(t);
    }
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": meta},
    })
    .to_string();
    let authority = url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_owned();
    let mut stream = std::net::TcpStream::connect(&authority).expect("connects");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {name}\r\nConnection: close\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sends");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let data = response
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .or_else(|| response.lines().rev().find(|l| l.starts_with('{')))
        .unwrap_or_else(|| panic!("no JSON-RPC answer in {response:?}"));
    let answer: Value = serde_json::from_str(data).expect("JSON-RPC");
    answer["result"].clone()
}

#[test]
fn stateless_requests_share_a_ledger_only_within_one_traceparent() {
    let (ws, state) = (TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("a.txt"), "original\n").expect("write");
    let server = serve(&ws, &state, &[]);
    let t1 = "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
    let t2 = "00-1bf7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
    let read = stateless_call(
        &server.url,
        1,
        "read_file",
        &json!({"file_path": "a.txt"}),
        Some(t1),
    );
    assert_eq!(read["isError"], false, "{read}");
    let write = |id, trace| {
        stateless_call(
            &server.url,
            id,
            "write_file",
            &json!({"file_path": "a.txt", "content": format!("from {id}\n")}),
            trace,
        )
    };
    // Another trace, no trace, a malformed one: none read the file.
    for (id, trace) in [(2, Some(t2)), (3, None), (4, Some("00-xyz-01"))] {
        let refused = write(id, trace);
        assert_eq!(refused["isError"], true, "{trace:?}: {refused}");
        assert!(
            refused.to_string().contains("You must read file"),
            "{refused}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).expect("read"),
        "original\n"
    );
    // The trace that read it, in a later request: allowed.
    let allowed = write(5, Some(t1));
    assert_eq!(allowed["isError"], false, "{allowed}");
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).expect("read"),
        "from 5\n"
    );
}
