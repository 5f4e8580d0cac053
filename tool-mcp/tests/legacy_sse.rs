//! The legacy HTTP+SSE transport (2024-11-05) against a legacy server the
//! test starts: an axum server that answers `GET` with an event stream whose
//! first event names the message endpoint, takes JSON-RPC by `POST` there
//! (202) and sends every answer on the stream. Reached through a `/sse` URL,
//! and by fallback from a URL whose `POST` is answered 405.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tool_core::ToolContext;
use tool_mcp::{LiveRegistry, McpToolSource};

/// A posted method and its `Authorization` header.
type Seen = (String, Option<String>);

#[derive(Clone, Default)]
struct Legacy {
    sessions: Arc<Mutex<HashMap<String, mpsc::Sender<String>>>>,
    /// Every method posted, in order, with its `Authorization` header.
    seen: Arc<Mutex<Vec<Seen>>>,
}

async fn open_stream(State(state): State<Legacy>) -> Response {
    let (tx, rx) = mpsc::channel::<String>(16);
    let id = format!("s{}", state.sessions.lock().expect("lock").len() + 1);
    state.sessions.lock().expect("lock").insert(id.clone(), tx);
    let first = format!("event: endpoint\ndata: /messages?session_id={id}\n\n");
    let stream = futures_util::stream::unfold((Some(first), rx), |(first, mut rx)| async move {
        let chunk = match first {
            Some(first) => Some(first),
            None => rx.recv().await,
        };
        chunk.map(|chunk| (Ok::<_, std::convert::Infallible>(chunk), (None, rx)))
    });
    Response::builder()
        .header(header::CONTENT_TYPE, "text/event-stream")
        .body(Body::from_stream(stream))
        .expect("a response")
}

fn answer(message: &Value) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message["method"].as_str().unwrap_or_default();
    let result = match method {
        "initialize" => json!({
            "protocolVersion": "2024-11-05",
            "capabilities": {"tools": {}},
            "serverInfo": {"name": "legacy-test", "version": "0.1"}
        }),
        "tools/list" => json!({"tools": [{
            "name": "shout",
            "description": "Upper-cases its text.",
            "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}}
        }]}),
        "tools/call" => {
            let text = message["params"]["arguments"]["text"]
                .as_str()
                .unwrap_or_default()
                .to_uppercase();
            json!({"content": [{"type": "text", "text": text}]})
        }
        other => {
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32601, "message": format!("Method not found: {other}")
            }}));
        }
    };
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

async fn post_message(
    State(state): State<Legacy>,
    uri: Uri,
    headers: HeaderMap,
    body: String,
) -> Response {
    let Some(tx) = uri
        .query()
        .and_then(|q| q.strip_prefix("session_id="))
        .and_then(|id| state.sessions.lock().expect("lock").get(id).cloned())
    else {
        return (StatusCode::NOT_FOUND, "no such session").into_response();
    };
    let Ok(message) = serde_json::from_str::<Value>(&body) else {
        return (StatusCode::BAD_REQUEST, "not JSON").into_response();
    };
    let auth = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    state.seen.lock().expect("lock").push((
        message["method"].as_str().unwrap_or("(answer)").to_owned(),
        auth,
    ));
    if let Some(reply) = answer(&message) {
        let _ = tx.send(format!("event: message\ndata: {reply}\n\n")).await;
    }
    StatusCode::ACCEPTED.into_response()
}

/// A legacy server on a free loopback port: the stream at `/sse` and at
/// `/mcp` (where a `POST` gets 405, as on a server that predates
/// Streamable HTTP), messages at `/messages`.
async fn start() -> (String, Legacy) {
    let state = Legacy::default();
    let app = Router::new()
        .route("/sse", get(open_stream))
        .route(
            "/mcp",
            get(open_stream).post(|| async { StatusCode::METHOD_NOT_ALLOWED }),
        )
        .route("/messages", axum::routing::post(post_message))
        .with_state(state.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    (format!("http://{addr}"), state)
}

async fn shout_through(source: McpToolSource) -> (String, Vec<String>) {
    let conn = source.named("old").connect().await.expect("connects");
    let live = LiveRegistry::new(tool_core::ToolRegistry::new());
    let names = conn.import_into(&live).await.expect("imports");
    let result = live
        .snapshot()
        .execute("old__shout", json!({"text": "quiet"}), &ToolContext::new())
        .await;
    assert!(!result.is_error(), "{result:?}");
    conn.close();
    (result.output, names)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_url_ending_in_sse_speaks_the_legacy_transport() {
    let (base, state) = start().await;
    let (output, names) = shout_through(
        McpToolSource::http(format!("{base}/sse")).with_bearer_token("legacy-secret"),
    )
    .await;
    assert_eq!(names, vec!["old__shout".to_owned()]);
    assert_eq!(output, "QUIET");
    let seen = state.seen.lock().expect("lock").clone();
    let methods: Vec<&str> = seen.iter().map(|(m, _)| m.as_str()).collect();
    assert_eq!(
        methods,
        [
            "initialize",
            "notifications/initialized",
            "tools/list",
            "tools/call"
        ]
    );
    assert!(
        seen.iter()
            .all(|(_, auth)| auth.as_deref() == Some("Bearer legacy-secret")),
        "{seen:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_405_to_the_post_falls_back_to_the_legacy_transport() {
    let (base, state) = start().await;
    let (output, _) = shout_through(McpToolSource::http(format!("{base}/mcp"))).await;
    assert_eq!(output, "QUIET");
    let seen = state.seen.lock().expect("lock").clone();
    assert_eq!(seen[0].0, "initialize", "{seen:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neither_transport_names_both_failures() {
    // A server with no MCP at all: 404 to the POST and to the GET.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let _ = axum::serve(listener, Router::new()).await;
    });
    let err = McpToolSource::http(format!("http://{addr}/mcp"))
        .named("none")
        .connect()
        .await
        .expect_err("no MCP server there");
    let text = err.to_string();
    assert!(text.contains("MCP server `none`"), "{text}");
    assert!(text.contains("legacy HTTP+SSE GET answered 404"), "{text}");
}
