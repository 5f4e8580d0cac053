//! Re-exporting imported tools (issue 26): `tool --mcp-config F serve` in
//! small — a server's tools imported into a registry that [`McpServer`]
//! serves again — never claims less risk than the origin, keeps
//! `outputSchema` and `structuredContent`; and the client names this program.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use serde_json::{Map, Value, json};
use tool_core::{ToolContext, ToolRegistry};
use tool_mcp::{LiveRegistry, McpServer, McpToolSource};

const ERA_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/era_server.py");

fn origin(era: &str) -> McpToolSource {
    McpToolSource::stdio(
        "python3",
        [ERA_SERVER, era],
        std::iter::empty::<(&str, &str)>(),
    )
    .named("origin")
}

#[tokio::test]
async fn a_reexport_keeps_hints_cautious_and_the_output_schema() {
    let imported = origin("2025-11-25").connect().await.unwrap();
    let live = LiveRegistry::new(ToolRegistry::new());
    imported.import_into(&live).await.unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let again = McpToolSource::http(format!("http://{addr}/mcp"))
        .connect()
        .await
        .unwrap();
    let tools = again.remote_tools().await.unwrap();
    let annotations = |name: &str| -> Value {
        let tool = tools.iter().find(|t| t.name == name).unwrap();
        serde_json::to_value(tool.annotations.as_ref().unwrap()).unwrap()
    };
    // No annotations at the origin: MCP's defaults (destructive, open world).
    let plain = annotations("origin__which_era");
    assert_eq!(plain["destructiveHint"], true, "{plain}");
    assert_eq!(plain["openWorldHint"], true, "{plain}");
    assert_eq!(plain["readOnlyHint"], false, "{plain}");
    // Stated ones: `false` kept where the origin says it, the read-only and
    // idempotent claims not taken over (they would loosen local approvals).
    let weather = annotations("origin__weather");
    assert_eq!(weather["destructiveHint"], false, "{weather}");
    assert_eq!(weather["openWorldHint"], true, "{weather}");
    assert_eq!(weather["readOnlyHint"], false, "{weather}");
    assert_eq!(weather["idempotentHint"], false, "{weather}");
    // The output schema and the structured result travel through.
    let tool = tools.iter().find(|t| t.name == "origin__weather").unwrap();
    let schema = Value::Object((**tool.output_schema.as_ref().unwrap()).clone());
    assert_eq!(
        schema["properties"]["celsius"]["type"], "number",
        "{schema}"
    );
    let result = again
        .call("origin__weather", Map::new(), &ToolContext::new())
        .await;
    assert_eq!(result.output, "21.5 C");
    assert_eq!(result.metadata["structured"], json!({"celsius": 21.5}));
    stop.cancel();
}

#[tokio::test]
async fn client_info_names_this_program_in_both_eras() {
    for era in ["2025-11-25", "2026-07-28"] {
        let conn = origin(era).connect().await.unwrap();
        let said = conn
            .call("client_name", Map::new(), &ToolContext::new())
            .await;
        // The test binary's own name (`reexport-<hash>`), never "rmcp".
        assert!(said.output.starts_with("reexport"), "{era}: {said:?}");
        let named = origin(era)
            .with_client_info("my-host", "1.2.3")
            .connect()
            .await
            .unwrap();
        let said = named
            .call("client_name", Map::new(), &ToolContext::new())
            .await;
        assert_eq!(said.output, "my-host", "{era}");
    }
}

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

/// Issue 26 reports the last of three progress notifications lost through a
/// re-export. Through `McpServer` over HTTP with this client upstream all
/// three arrive, in order, before the result (five rounds per era); the
/// report's path (another upstream client) is not reproduced here. A guard.
#[tokio::test]
async fn progress_passes_through_a_reexport_without_loss() {
    use std::sync::{Arc, Mutex};
    let fixture = McpToolSource::stdio(FIXTURE, std::iter::empty::<&str>(), [("RUST_LOG", "off")])
        .named("fx");
    let imported = fixture.connect().await.unwrap();
    let live = LiveRegistry::new(ToolRegistry::new());
    imported.import_into(&live).await.unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    for era in [
        tool_mcp::ProtocolEra::Initialize,
        tool_mcp::ProtocolEra::Discover,
    ] {
        let upstream = McpToolSource::http(format!("http://{addr}/mcp"))
            .with_era(era)
            .connect()
            .await
            .unwrap();
        for round in 0..5 {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&seen);
            let ctx = ToolContext::new().with_progress_sink(move |p: tool_core::Progress| {
                sink.lock().unwrap().push(p.progress);
            });
            let result = upstream
                .call("fx__test_tool_with_progress", Map::new(), &ctx)
                .await;
            assert_eq!(result.output, "progress done");
            // Every report arrives before the result does.
            assert_eq!(
                *seen.lock().unwrap(),
                vec![0.0, 50.0, 100.0],
                "{era:?} round {round}"
            );
        }
    }
    stop.cancel();
}
