//! A [`RegistryView`] with deferred tools served over Streamable HTTP and
//! used with tool-mcp's client: `tools/list` shows the loaded tools and
//! `tool_search`, a load sends `notifications/tools/list_changed` to that
//! session only, and the stateless era gets definitions inline.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_core::{RegistryView, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
use tool_mcp::{LiveRegistry, McpServer, McpToolSource, ProtocolEra};

fn tool(name: &str, description: &str) -> Tool {
    let spec = ToolSpec::new(name, description, json!({"type": "object"}));
    let owned = name.to_owned();
    Tool::new(spec, move |_: Map<String, Value>, _| {
        let owned = owned.clone();
        async move { ToolResult::ok(format!("ran {owned}")) }
    })
    .unwrap()
}

fn view() -> RegistryView {
    let mut r = ToolRegistry::new();
    r.register(tool("shout", "Upper-case a text.")).unwrap();
    r.register(tool("create_invoice", "Create an invoice for a customer."))
        .unwrap();
    r.register(tool("refund_payment", "Refund a card payment."))
        .unwrap();
    r.register(tool("hidden", "Outside the view.")).unwrap();
    RegistryView::new(LiveRegistry::new(r))
        .without(&["hidden"])
        .defer(["*"])
        .keep_loaded(["shout"])
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

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[tokio::test]
async fn loads_grow_the_session_list_and_send_list_changed() {
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(view())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let url = format!("http://{addr}/mcp");
    let connect = |name: &'static str| {
        McpToolSource::http(url.clone())
            .named(name)
            .with_era(ProtocolEra::Initialize)
            .connect()
    };
    let conn = connect("pay").await.unwrap();
    let other = connect("other").await.unwrap();
    let local = LiveRegistry::new(ToolRegistry::new());
    conn.import_into(&local).await.unwrap();
    let names =
        |c: Vec<rmcp::model::Tool>| c.iter().map(|t| t.name.to_string()).collect::<Vec<_>>();
    assert_eq!(
        names(conn.remote_tools().await.unwrap()),
        ["shout", "tool_search"]
    );
    assert_eq!(local.snapshot().names(), ["pay__shout", "pay__tool_search"]);

    let found = local
        .snapshot()
        .execute(
            "pay__tool_search",
            json!({"query": "refund a payment"}),
            &ToolContext::new(),
        )
        .await;
    assert!(
        found.output.contains("- refund_payment (loaded now)"),
        "{}",
        found.output
    );
    assert!(
        wait_for(|| local.snapshot().contains("pay__refund_payment")).await,
        "no list_changed after the load"
    );
    assert_eq!(
        names(conn.remote_tools().await.unwrap()),
        ["shout", "tool_search", "refund_payment"],
        "loaded tools come after the always-loaded ones"
    );
    let ran = local
        .snapshot()
        .execute("pay__refund_payment", json!({}), &ToolContext::new())
        .await;
    assert_eq!(ran.output, "ran refund_payment");
    // The other session loaded nothing.
    assert_eq!(
        names(other.remote_tools().await.unwrap()),
        ["shout", "tool_search"]
    );
    // A tool outside the view is unknown to the server.
    let hidden = conn.call("hidden", Map::new(), &ToolContext::new()).await;
    assert_eq!(hidden.metadata["mcp_error"], "protocol", "{hidden:?}");
    stop.cancel();
}

#[tokio::test]
async fn the_stateless_era_gets_definitions_inline() {
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(view())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let conn = McpToolSource::http(format!("http://{addr}/mcp"))
        .named("pay")
        .with_era(ProtocolEra::Discover)
        .connect()
        .await
        .unwrap();
    let listed: Vec<String> = conn
        .remote_tools()
        .await
        .unwrap()
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert_eq!(listed, ["shout", "tool_search"]);
    let found = conn
        .call(
            "tool_search",
            args(json!({"query": "select:create_invoice"})),
            &ToolContext::new(),
        )
        .await;
    assert!(
        found.output.contains("create_invoice (definition below)"),
        "{}",
        found.output
    );
    assert!(found.output.contains("\"inputSchema\""), "{}", found.output);
    // Accepted by name, although never listed.
    let ran = conn
        .call("create_invoice", Map::new(), &ToolContext::new())
        .await;
    assert_eq!(ran.output, "ran create_invoice");
    let listed_after = conn.remote_tools().await.unwrap().len();
    assert_eq!(listed_after, 2, "nothing is loaded without a session");
    stop.cancel();
}
