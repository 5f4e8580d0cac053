//! Era negotiation of the client (issue 26): `server/discover` first, then
//! `initialize`, against real servers that speak one era only
//! (`tests/data/era_server.py`) and against the fixture server (both eras).

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use serde_json::Map;
use tool_core::{ToolContext, ToolRegistry};
use tool_mcp::{ErrorKind, LiveRegistry, McpServerEntry, McpToolSource, ProtocolEra};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");
const ERA_SERVER: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/era_server.py");

fn era_server(speaks: &str) -> McpToolSource {
    McpToolSource::stdio(
        "python3",
        [ERA_SERVER, speaks],
        std::iter::empty::<(&str, &str)>(),
    )
    .named("old")
}

async fn which_era(source: McpToolSource) -> (ProtocolEra, String) {
    let conn = source.connect().await.expect("connects");
    let result = conn
        .call("which_era", Map::new(), &ToolContext::new())
        .await;
    assert!(!result.is_error(), "{result:?}");
    (conn.era(), result.output)
}

#[tokio::test]
async fn auto_falls_back_to_initialize_for_a_2025_server() {
    let (era, said) = which_era(era_server("2025-11-25")).await;
    assert_eq!(era, ProtocolEra::Initialize);
    assert_eq!(said, "era 2025-11-25, handshake initialize");
}

#[tokio::test]
async fn auto_imports_a_server_that_speaks_only_2026_07_28() {
    let (era, said) = which_era(era_server("2026-07-28")).await;
    assert_eq!(era, ProtocolEra::Discover);
    assert_eq!(said, "era 2026-07-28, handshake server/discover");
    // And through a registry, as `--mcp-config` imports it.
    let conn = era_server("2026-07-28").connect().await.unwrap();
    let live = LiveRegistry::new(ToolRegistry::new());
    assert_eq!(
        conn.import_into(&live).await.unwrap(),
        [
            "old__which_era",
            "old__client_name",
            "old__roots",
            "old__weather"
        ]
    );
}

#[tokio::test]
async fn a_pinned_era_the_server_lacks_fails_naming_the_server() {
    for (pinned, speaks) in [
        (ProtocolEra::Initialize, "2026-07-28"),
        (ProtocolEra::Discover, "2025-11-25"),
    ] {
        let err = era_server(speaks)
            .with_era(pinned)
            .connect()
            .await
            .unwrap_err();
        assert_eq!(err.kind(), ErrorKind::Connect, "{pinned}: {err}");
        assert!(
            err.message().contains("MCP server `old`"),
            "{pinned}: {err}"
        );
    }
    // Pinned to the era the server speaks, it connects.
    let (era, _) = which_era(era_server("2026-07-28").with_era(ProtocolEra::Discover)).await;
    assert_eq!(era, ProtocolEra::Discover);
}

#[tokio::test]
async fn auto_picks_2026_07_28_on_a_server_of_both_eras() {
    let fixture = McpToolSource::stdio(FIXTURE, std::iter::empty::<&str>(), [("RUST_LOG", "off")]);
    let conn = fixture.connect().await.unwrap();
    assert_eq!(conn.era(), ProtocolEra::Discover);
}

#[test]
fn the_protocol_key_chooses_the_era_and_the_cli_default_yields_to_it() {
    let entries = tool_mcp::parse_mcp_config_entries(
        r#"{"mcpServers": {
            "a": {"command": "x", "protocol": "2025-11-25"},
            "b": {"command": "x", "protocol": "2026-07-28"},
            "c": {"command": "x", "protocol": "auto"},
            "d": {"command": "x"},
            "e": {"command": "x", "protocol": "2025-06-18"}
        }}"#,
    )
    .unwrap();
    let eras: Vec<_> = entries
        .into_iter()
        .map(|entry| match entry {
            McpServerEntry::Enabled(s) => Ok(s.with_default_era(ProtocolEra::Initialize).era()),
            McpServerEntry::Invalid { error, .. } => Err(error.to_string()),
            other => Err(format!("{other:?}")),
        })
        .collect();
    assert_eq!(eras[0], Ok(ProtocolEra::Initialize));
    assert_eq!(eras[1], Ok(ProtocolEra::Discover));
    assert_eq!(eras[2], Ok(ProtocolEra::Auto));
    // No key: the default given (the CLI's --mcp-protocol) applies.
    assert_eq!(eras[3], Ok(ProtocolEra::Initialize));
    let err = eras[4].clone().unwrap_err();
    assert!(
        err.contains("server `e`") && err.contains("`protocol`") && err.contains("2025-06-18"),
        "{err}"
    );
    assert_eq!(McpToolSource::http("http://x").era(), ProtocolEra::Auto);
}

#[tokio::test]
async fn roots_are_offered_only_when_given_in_both_eras() {
    for era in ["2025-11-25", "2026-07-28"] {
        let given = era_server(era)
            .with_roots(["/work/project"])
            .connect()
            .await
            .unwrap();
        let said = given.call("roots", Map::new(), &ToolContext::new()).await;
        assert_eq!(said.output, "file:///work/project", "{era}: {said:?}");
        let none = era_server(era).connect().await.unwrap();
        let said = none.call("roots", Map::new(), &ToolContext::new()).await;
        assert_eq!(said.output, "no roots", "{era}: {said:?}");
    }
}
