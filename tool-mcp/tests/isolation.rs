//! Each server of an `.mcp.json` isolated from the others: a missing binary,
//! a command that exits at once, a server that dies after the handshake and
//! a disabled entry cost only their own tools, are reported with the
//! server's name, and never hang a call.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::{ToolContext, ToolRegistry};
use tool_mcp::{
    ErrorKind, ImportOutcome, ImportReport, LiveRegistry, MAX_REASON_LEN, McpServerEntry,
    McpToolSource, import_mcp_servers, parse_mcp_config, parse_mcp_config_entries, read_mcp_config,
};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

/// A fresh folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "tool-mcp-isolation-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path)
    }

    fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
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

fn good() -> Value {
    json!({"command": FIXTURE, "env": {"RUST_LOG": "off"}})
}

/// `sh -c` that writes its pid to `pid_file`, then becomes the fixture.
fn killable(pid_file: &Path) -> Value {
    json!({
        "command": "sh",
        "args": ["-c", format!("echo $$ > '{}'; exec '{FIXTURE}'", pid_file.display())],
        "env": {"RUST_LOG": "off"}
    })
}

fn config(servers: &Value) -> Vec<McpServerEntry> {
    parse_mcp_config_entries(&json!({ "mcpServers": servers }).to_string()).unwrap()
}

fn report<'a>(reports: &'a [ImportReport], name: &str) -> &'a ImportReport {
    reports
        .iter()
        .find(|r| r.name == name)
        .unwrap_or_else(|| panic!("no report for {name}: {reports:?}"))
}

fn unavailable_reason(reports: &[ImportReport], name: &str) -> String {
    match &report(reports, name).outcome {
        ImportOutcome::Unavailable(reason) => reason.clone(),
        other => panic!("{name} should be unavailable, is {other:?}"),
    }
}

fn error_text(result: &tool_core::ToolResult) -> String {
    result
        .error
        .as_ref()
        .map(|e| e.message.clone())
        .unwrap_or_default()
}

async fn echo(registry: &ToolRegistry, tool: &str, text: &str) -> tool_core::ToolResult {
    registry
        .execute(tool, json!({"text": text}), &ToolContext::new())
        .await
}

/// The issue's inputs: a good server next to a missing binary and `false`;
/// plus an invalid entry, a server that prints garbage and exits, and a
/// disabled entry that would leave a mark if it were started.
#[tokio::test]
async fn broken_servers_cost_only_their_own_tools() {
    let dir = TempDir::new();
    let marker = dir.path().join("started");
    let live = LiveRegistry::new(ToolRegistry::new());
    let reports = import_mcp_servers(
        config(&json!({
            "good": good(),
            "ghost": {"command": "/nonexistent/mcp-server"},
            "quitter": {"command": "false"},
            "garbage": {"command": "sh", "args": ["-c", "echo not-json; exit 0"]},
            "shapeless": {"args": ["no command, no url"]},
            "off": {
                "command": "sh",
                "args": ["-c", format!("touch '{}'", marker.display())],
                "disabled": true
            }
        })),
        &live,
    )
    .await;
    assert_eq!(reports.len(), 6, "{reports:?}");
    let ImportOutcome::Imported { tools, .. } = &report(&reports, "good").outcome else {
        panic!("good is imported: {reports:?}");
    };
    assert!(tools.contains(&"good__echo".to_owned()), "{tools:?}");
    let snapshot = live.snapshot();
    assert_eq!(
        echo(&snapshot, "good__echo", "still works").await.output,
        "still works"
    );
    assert!(snapshot.names().iter().all(|n| n.starts_with("good__")));

    let ghost = unavailable_reason(&reports, "ghost");
    assert!(ghost.contains("MCP server `ghost`"), "{ghost}");
    assert!(ghost.contains("/nonexistent/mcp-server"), "{ghost}");
    let quitter = unavailable_reason(&reports, "quitter");
    assert!(
        quitter.contains("MCP server `quitter` (false)"),
        "{quitter}"
    );
    let garbage = unavailable_reason(&reports, "garbage");
    assert!(garbage.contains("MCP server `garbage`"), "{garbage}");
    let shapeless = unavailable_reason(&reports, "shapeless");
    assert!(shapeless.contains("server `shapeless`"), "{shapeless}");
    assert!(
        shapeless.contains("exactly one of `command` and `url`"),
        "{shapeless}"
    );
    assert!(matches!(
        report(&reports, "off").outcome,
        ImportOutcome::Disabled
    ));
    assert!(!marker.exists(), "a disabled server is never started");

    // The registry knows why each is missing, and says so for their tool names.
    let unavailable = live.unavailable();
    let names: Vec<&str> = unavailable.keys().map(String::as_str).collect();
    assert_eq!(names, ["garbage", "ghost", "quitter", "shapeless"]);
    assert_eq!(unavailable["ghost"], ghost);
    let (server, reason) = live.unavailable_server_of("ghost__echo").unwrap();
    assert_eq!(
        (server.as_str(), reason.as_str()),
        ("ghost", ghost.as_str())
    );
    assert_eq!(live.unavailable_server_of("good__echo"), None);
    assert_eq!(live.unavailable_server_of("off__echo"), None);
}

/// The issue's (c): a server killed by pid after the handshake. Its tools
/// leave the live registry, a call through an older snapshot fails at once
/// naming it, and the good server goes on.
#[tokio::test]
async fn a_server_killed_after_the_handshake_loses_its_tools() {
    let dir = TempDir::new();
    let pid_file = dir.path().join("pid");
    let live = LiveRegistry::new(ToolRegistry::new());
    let mut changes = live.subscribe();
    let reports = import_mcp_servers(
        config(&json!({"good": good(), "dying": killable(&pid_file)})),
        &live,
    )
    .await;
    let ImportOutcome::Imported { connection, .. } = &report(&reports, "dying").outcome else {
        panic!("dying is imported first: {reports:?}");
    };
    let before = live.snapshot();
    assert_eq!(echo(&before, "dying__echo", "alive").await.output, "alive");
    changes.mark_unchanged();

    let pid = std::fs::read_to_string(&pid_file).unwrap();
    let killed = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .unwrap();
    assert!(killed.success());

    assert!(
        wait_for(|| !live.snapshot().contains("dying__echo")).await,
        "the dead server's tools stay listed: {:?}",
        live.snapshot().names()
    );
    assert!(connection.is_closed());
    assert!(changes.has_changed().unwrap(), "subscribers are woken");
    let now = live.snapshot();
    assert!(
        now.names().iter().all(|n| n.starts_with("good__")),
        "{:?}",
        now.names()
    );
    assert_eq!(
        echo(&now, "good__echo", "unharmed").await.output,
        "unharmed"
    );

    // A caller that still holds the old snapshot gets a clear error, at once.
    let started = Instant::now();
    let late = echo(&before, "dying__echo", "anyone?").await;
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert!(late.is_error());
    assert_eq!(late.metadata["mcp_error"], "connection_closed", "{late:?}");
    assert!(error_text(&late).contains("MCP server `dying`"), "{late:?}");

    let reason = &live.unavailable()["dying"];
    assert!(reason.contains("MCP server `dying`"), "{reason}");
    assert!(
        reason.contains("exited or closed its connection"),
        "{reason}"
    );
    let (server, _) = live.unavailable_server_of("dying__echo").unwrap();
    assert_eq!(server, "dying");
}

/// More deaths of the kind: the server exits by itself (the fixture's `die`
/// tool), it is killed while a call is in flight, and the connection is
/// closed by its owner. Each time only that server's tools go.
#[tokio::test]
async fn servers_that_go_away_in_other_ways_lose_their_tools_too() {
    let dir = TempDir::new();
    let pid_file = dir.path().join("pid");
    let live = LiveRegistry::new(ToolRegistry::new());
    let reports = import_mcp_servers(
        config(&json!({
            "good": good(),
            "suicidal": good(),
            "busy": killable(&pid_file),
            "closed": good()
        })),
        &live,
    )
    .await;
    assert!(
        reports
            .iter()
            .all(|r| matches!(r.outcome, ImportOutcome::Imported { .. })),
        "{reports:?}"
    );
    let snapshot = live.snapshot();

    // Exits by itself.
    let died = snapshot
        .execute("suicidal__die", json!({}), &ToolContext::new())
        .await;
    assert!(died.is_error(), "{died:?}");
    assert!(wait_for(|| !live.snapshot().contains("suicidal__echo")).await);

    // Killed while a slow call waits for its answer: the call fails fast.
    let ctx = ToolContext::new();
    let started = Instant::now();
    let (slow, ()) = tokio::join!(
        snapshot.execute("busy__slow", json!({"millis": 30_000}), &ctx),
        async {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let pid = std::fs::read_to_string(&pid_file).unwrap();
            let _ = std::process::Command::new("kill")
                .args(["-9", pid.trim()])
                .status();
        }
    );
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(slow.metadata["mcp_error"], "connection_closed", "{slow:?}");
    assert!(error_text(&slow).contains("MCP server `busy`"), "{slow:?}");
    assert!(wait_for(|| !live.snapshot().contains("busy__echo")).await);

    // Closed on purpose.
    let ImportOutcome::Imported { connection, .. } = &report(&reports, "closed").outcome else {
        unreachable!("checked above")
    };
    connection.close();
    assert!(wait_for(|| !live.snapshot().contains("closed__echo")).await);
    assert!(
        live.unavailable()["closed"].contains("closed by this program"),
        "{:?}",
        live.unavailable()
    );

    let left = live.snapshot();
    assert!(
        left.names().iter().all(|n| n.starts_with("good__")),
        "{:?}",
        left.names()
    );
    assert_eq!(
        echo(&left, "good__echo", "last one").await.output,
        "last one"
    );
    let names: Vec<String> = live.unavailable().into_keys().collect();
    assert_eq!(names, ["busy", "closed", "suicidal"]);
}

/// A server that takes a name already imported is unavailable, the first
/// keeps its tools; a server that never answers is unavailable after its
/// connect timeout while the others are imported concurrently.
#[tokio::test]
async fn collisions_and_silent_servers_are_isolated_too() {
    let live = LiveRegistry::new(ToolRegistry::new());
    let mut entries = config(&json!({"a.b": good(), "a_b": good()}));
    entries.push(McpServerEntry::Enabled(
        McpToolSource::stdio("sleep", ["30"], std::iter::empty::<(String, String)>())
            .named("silent")
            .with_connect_timeout(Duration::from_millis(500)),
    ));
    let started = Instant::now();
    let reports = import_mcp_servers(entries, &live).await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert!(matches!(
        report(&reports, "a.b").outcome,
        ImportOutcome::Imported { .. }
    ));
    let taken = unavailable_reason(&reports, "a_b");
    assert!(taken.contains("MCP server `a_b`"), "{taken}");
    assert!(taken.contains("already taken"), "{taken}");
    let silent = unavailable_reason(&reports, "silent");
    assert!(silent.contains("no answer to the handshake"), "{silent}");
    assert_eq!(
        echo(&live.snapshot(), "a_b__echo", "first one wins")
            .await
            .output,
        "first one wins"
    );
}

#[test]
fn disabled_entries_are_left_out_and_bad_ones_named() {
    // `disabled: true` is not started; `false` (or absent) is.
    let sources = parse_mcp_config(
        r#"{"mcpServers": {
            "on": {"command": "a"},
            "off": {"command": "b", "disabled": true},
            "explicit": {"command": "c", "disabled": false},
            "remote-off": {"url": "http://127.0.0.1:1/mcp", "disabled": true}
        }}"#,
    )
    .unwrap();
    let names: Vec<&str> = sources.iter().filter_map(McpToolSource::name).collect();
    assert_eq!(names, ["explicit", "on"]);
    // A disabled entry needs no valid server description.
    let entries = parse_mcp_config_entries(
        r#"{"mcpServers": {"draft": {"disabled": true}, "half": {"args": 5, "disabled": true}, "typo": {"command": "x", "disabled": "yes"},
            "both": {"command": "x", "url": "http://127.0.0.1:1/mcp"}, "scalar": 3}}"#,
    )
    .unwrap();
    let by_name = |n: &str| entries.iter().find(|e| e.name() == n).unwrap();
    assert!(matches!(by_name("draft"), McpServerEntry::Disabled { .. }));
    assert!(matches!(by_name("half"), McpServerEntry::Disabled { .. }));
    for (name, says) in [
        ("typo", "expected a boolean"),
        ("both", "exactly one of"),
        ("scalar", "expected struct"),
    ] {
        let McpServerEntry::Invalid { error, .. } = by_name(name) else {
            panic!("{name} is invalid: {:?}", by_name(name));
        };
        assert_eq!(error.kind(), ErrorKind::Config);
        assert!(
            error.message().contains(&format!("server `{name}`")),
            "{error}"
        );
        assert!(error.message().contains(says), "{error}");
    }
    // The strict reader still fails on the first bad entry.
    let err = parse_mcp_config(r#"{"mcpServers": {"ok": {"command": "a"}, "bad": {}}}"#)
        .err()
        .unwrap();
    assert!(err.message().contains("server `bad`"), "{err}");
}

#[test]
fn read_mcp_config_names_the_file_in_entry_errors() {
    let dir = TempDir::new();
    let path = dir.path().join(".mcp.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"bad": {"url": 5}, "ok": {"command": "a"}}}"#,
    )
    .unwrap();
    let entries = read_mcp_config(&path).unwrap();
    let McpServerEntry::Invalid { error, .. } = &entries[0] else {
        panic!("{entries:?}");
    };
    assert!(
        error.message().starts_with(&path.display().to_string()),
        "{error}"
    );
    assert!(matches!(entries[1], McpServerEntry::Enabled(_)));
    let missing = read_mcp_config(&dir.path().join("nope.json"))
        .err()
        .unwrap();
    assert_eq!(missing.kind(), ErrorKind::Config);
    assert!(missing.message().contains("nope.json"), "{missing}");
}

#[test]
fn unavailable_records_are_bounded_and_matched_by_prefix() {
    let live = LiveRegistry::new(ToolRegistry::new());
    live.mark_unavailable("a", "short");
    live.mark_unavailable("ab", &"é".repeat(MAX_REASON_LEN));
    let long = &live.unavailable()["ab"];
    assert!(
        long.len() <= MAX_REASON_LEN && long.ends_with("..."),
        "{}",
        long.len()
    );
    // `ab__x` belongs to `ab`, not to `a`; `a_x` and `a` belong to nobody.
    assert_eq!(live.unavailable_server_of("ab__x").unwrap().0, "ab");
    assert_eq!(live.unavailable_server_of("a__x").unwrap().0, "a");
    assert_eq!(live.unavailable_server_of("a_x"), None);
    assert_eq!(live.unavailable_server_of("a"), None);
    live.clear_unavailable("a");
    assert_eq!(live.unavailable_server_of("a__x"), None);
    for i in 0..tool_mcp::MAX_UNAVAILABLE + 10 {
        live.mark_unavailable(&format!("s{i}"), "gone");
    }
    assert_eq!(live.unavailable().len(), tool_mcp::MAX_UNAVAILABLE);
}

#[tokio::test]
async fn a_server_imported_again_is_no_longer_unavailable() {
    let live = LiveRegistry::new(ToolRegistry::new());
    let first = McpToolSource::stdio(FIXTURE, Vec::<String>::new(), [("RUST_LOG", "off")])
        .named("fx")
        .connect()
        .await
        .unwrap();
    first.import_into(&live).await.unwrap();
    first.close();
    assert!(wait_for(|| live.unavailable().contains_key("fx")).await);
    assert!(!live.snapshot().contains("fx__echo"));
    let second = McpToolSource::stdio(FIXTURE, Vec::<String>::new(), [("RUST_LOG", "off")])
        .named("fx")
        .connect()
        .await
        .unwrap();
    second.import_into(&live).await.unwrap();
    assert!(live.unavailable().is_empty(), "{:?}", live.unavailable());
    assert_eq!(
        echo(&live.snapshot(), "fx__echo", "back").await.output,
        "back"
    );
}
