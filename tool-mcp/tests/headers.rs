//! `url` servers' headers and bearer tokens (issue 26): an in-process server
//! behind a bearer token ([`HttpAccess::with_token`]) imported with
//! [`McpToolSource::with_bearer_token`] and with an `Authorization` header.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use serde_json::{Map, json};
use tool_core::{Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
use tool_mcp::{ErrorKind, HttpAccess, McpServer, McpToolSource};

const TOKEN: &str = "fedcba9876543210fedcba9876543210";

#[tokio::test]
async fn bearer_tokens_open_a_guarded_server_and_their_absence_is_named() {
    let mut tools = ToolRegistry::new();
    let spec = ToolSpec::new(
        "hello",
        "Say hello.",
        json!({"type": "object", "properties": {}}),
    );
    tools
        .register(
            Tool::new(spec, |_args: Map<String, serde_json::Value>, _ctx| async {
                ToolResult::ok("hello")
            })
            .unwrap(),
        )
        .unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let access = HttpAccess::loopback().with_token(TOKEN).unwrap();
    let (addr, _task) = McpServer::new(tools)
        .serve_http_with(([127, 0, 0, 1], 0).into(), access, stop.clone())
        .await
        .unwrap();
    let url = format!("http://{addr}/mcp");

    let by_api = McpToolSource::http(&url)
        .named("guarded")
        .with_bearer_token(TOKEN)
        .connect()
        .await
        .unwrap();
    let said = by_api.call("hello", Map::new(), &ToolContext::new()).await;
    assert_eq!(said.output, "hello");

    // The value inline: `${VAR}` resolution is covered by tool-cli's test
    // (setting a variable in a threaded test process is unsafe).
    let by_header = McpToolSource::http(&url)
        .named("guarded")
        .with_header("Authorization", format!("Bearer {TOKEN}"))
        .connect()
        .await
        .unwrap();
    assert_eq!(
        by_header
            .call("hello", Map::new(), &ToolContext::new())
            .await
            .output,
        "hello"
    );

    let err = McpToolSource::http(&url)
        .named("guarded")
        .connect()
        .await
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Connect);
    assert!(err.message().contains("MCP server `guarded`"), "{err}");
    assert!(err.message().contains("HTTP 401"), "{err}");

    // Headers on a stdio server are a configuration error, not ignored.
    let err = McpToolSource::stdio(
        "true",
        std::iter::empty::<&str>(),
        std::iter::empty::<(&str, &str)>(),
    )
    .with_bearer_token(TOKEN)
    .connect()
    .await
    .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::Config, "{err}");
    // The source's Debug never shows the token.
    let shown = format!("{:?}", McpToolSource::http(&url).with_bearer_token(TOKEN));
    assert!(!shown.contains(TOKEN), "{shown}");
    stop.cancel();
}
