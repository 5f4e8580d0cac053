//! What an HTTP session holds on the server is freed when it ends (issue 17,
//! found by `benches/load`: the server's RSS grew by about 16 KiB with every
//! session a client opened and closed, because the session's `list_changed`
//! task waited only for a registry change and kept the session's peer).

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_core::{Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
use tool_mcp::{LiveRegistry, McpServer, McpToolSource, ProtocolEra};

/// A registry with `echo(text)` and `slow` (sleeps 5 s).
fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let object = json!({"type": "object", "properties": {"text": {"type": "string"}}});
    let echo = Tool::new(
        ToolSpec::new("echo", "Echo a text.", object.clone()),
        |args: Map<String, Value>, _ctx: ToolContext| async move {
            ToolResult::ok(args["text"].as_str().unwrap_or_default().to_owned())
        },
    )
    .expect("test setup");
    let slow = Tool::new(
        ToolSpec::new("slow", "Sleep 5 s.", object),
        |_args: Map<String, Value>, _ctx: ToolContext| async move {
            tokio::time::sleep(Duration::from_secs(5)).await;
            ToolResult::ok("slept")
        },
    )
    .expect("test setup");
    registry.register(echo).expect("test setup");
    registry.register(slow).expect("test setup");
    registry
}

/// Waits up to 10 s for `live` to have `want` subscribers; returns the last count.
async fn settle(live: &LiveRegistry, want: usize) -> usize {
    let deadline = Instant::now() + Duration::from_secs(10);
    while live.subscribers() != want && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    live.subscribers()
}

async fn server() -> (LiveRegistry, String, tokio_util::sync::CancellationToken) {
    let live = LiveRegistry::new(registry());
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live.clone())
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .expect("test setup");
    (live, format!("http://{addr}/mcp"), stop)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closed_sessions_leave_nothing_subscribed() {
    let (live, url, stop) = server().await;
    let baseline = live.subscribers();
    for sessions in [1, 5, 20] {
        let mut conns = Vec::new();
        for _ in 0..sessions {
            let conn = McpToolSource::http(url.clone())
                .with_era(ProtocolEra::Initialize)
                .connect()
                .await
                .expect("test setup");
            let mut args = Map::new();
            args.insert("text".into(), json!("hi"));
            assert_eq!(
                conn.call("echo", args, &ToolContext::new()).await.output,
                "hi"
            );
            conns.push(conn);
        }
        assert_eq!(
            settle(&live, baseline + sessions).await,
            baseline + sessions,
            "one subscriber per open session"
        );
        for conn in conns {
            conn.close();
            conn.closed().await;
        }
        assert_eq!(
            settle(&live, baseline).await,
            baseline,
            "{sessions} closed sessions still hold their list_changed tasks"
        );
    }
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_closed_mid_call_leave_nothing_subscribed() {
    let (live, url, stop) = server().await;
    let baseline = live.subscribers();
    for _ in 0..10 {
        let conn = McpToolSource::http(url.clone())
            .with_era(ProtocolEra::Initialize)
            .connect()
            .await
            .expect("test setup");
        let ctx = ToolContext::new();
        let call = conn.call("slow", Map::new(), &ctx);
        assert!(
            tokio::time::timeout(Duration::from_millis(20), call)
                .await
                .is_err(),
            "the slow call is still running when the client goes"
        );
        conn.close();
    }
    assert_eq!(settle(&live, baseline).await, baseline);
    stop.cancel();
}
