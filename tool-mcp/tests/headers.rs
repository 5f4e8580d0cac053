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

/// `Mcp-Method: initialize` goes with the `initialize` request (and with
/// no other): the client's requests seen through a recording TCP relay in
/// front of a real in-process server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_carries_an_mcp_method_header() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let stop = tokio_util::sync::CancellationToken::new();
    let (upstream, _task) = McpServer::new(ToolRegistry::new())
        .serve_http_with(
            ([127, 0, 0, 1], 0).into(),
            HttpAccess::loopback(),
            stop.clone(),
        )
        .await
        .unwrap();
    let relay = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let relay_addr = relay.local_addr().unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
    let record = std::sync::Arc::clone(&seen);
    tokio::spawn(async move {
        while let Ok((client, _)) = relay.accept().await {
            let record = std::sync::Arc::clone(&record);
            tokio::spawn(async move {
                let server = tokio::net::TcpStream::connect(upstream).await.unwrap();
                let (mut client_read, mut client_write) = client.into_split();
                let (mut server_read, mut server_write) = server.into_split();
                let up = async move {
                    let mut buf = vec![0u8; 16 * 1024];
                    while let Ok(n) = client_read.read(&mut buf).await {
                        if n == 0 || server_write.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                        record.lock().unwrap().extend_from_slice(&buf[..n]);
                    }
                    let _ = server_write.shutdown().await;
                };
                let down = async move {
                    let _ = tokio::io::copy(&mut server_read, &mut client_write).await;
                };
                tokio::join!(up, down);
            });
        }
    });
    let conn = McpToolSource::http(format!("http://{relay_addr}/mcp"))
        .with_era(tool_mcp::ProtocolEra::Initialize)
        .connect()
        .await
        .unwrap();
    conn.remote_tools().await.unwrap();
    conn.close();
    stop.cancel();
    let text = String::from_utf8_lossy(&seen.lock().unwrap()).to_lowercase();
    let requests: Vec<&str> = text.split("post /mcp").skip(1).collect();
    let initialize: Vec<&&str> = requests
        .iter()
        .filter(|r| r.contains("\"method\":\"initialize\""))
        .collect();
    assert_eq!(initialize.len(), 1, "{text}");
    assert!(
        initialize[0].contains("\r\nmcp-method: initialize\r\n"),
        "{text}"
    );
    assert!(
        requests
            .iter()
            .filter(|r| r.contains("mcp-method: initialize"))
            .all(|r| r.contains("\"method\":\"initialize\"")),
        "only initialize says so: {text}"
    );
    assert!(
        requests
            .iter()
            .any(|r| r.contains("\"method\":\"tools/list\"")),
        "{text}"
    );
}
