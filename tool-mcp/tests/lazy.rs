//! Lazy start (issue 26): tools registered from a cached list without
//! starting the server, a start on the first call, a stop after the idle
//! time and a restart on the next call, the cache refreshed on
//! `list_changed` and made stale by a changed entry. Real fixture server
//! processes, found through an environment marker in `/proc`.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::ToolContext;
use tool_mcp::{
    ImportOutcome, LazyServer, LiveRegistry, McpServerEntry, McpToolSource, ToolListCache,
    import_mcp_servers_lazily,
};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

/// A fixture server whose environment carries `marker`.
fn fixture(marker: &str) -> McpToolSource {
    McpToolSource::stdio(
        FIXTURE,
        Vec::<String>::new(),
        [("RUST_LOG", "off"), ("LAZY_TEST_MARKER", marker)],
    )
    .named("fx")
}

/// How many live processes have `LAZY_TEST_MARKER=marker` in their environment.
fn running(marker: &str) -> usize {
    let needle = format!("LAZY_TEST_MARKER={marker}");
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return 0;
    };
    dir.filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            // A zombie keeps no environment: it is not running.
            let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or_default().trim_start();
            !state.starts_with('Z')
                && std::fs::read(e.path().join("environ"))
                    .unwrap_or_default()
                    .split(|b| *b == 0)
                    .any(|kv| kv == needle.as_bytes())
        })
        .count()
}

fn unique(tag: &str) -> String {
    format!("{tag}-{}-{:?}", std::process::id(), Instant::now())
}

async fn wait_until(what: &str, mut check: impl FnMut() -> bool) {
    let start = Instant::now();
    while !check() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "waited 60 s for {what}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn import(
    source: McpToolSource,
    cache: &ToolListCache,
) -> (LiveRegistry, LazyServer, Vec<String>) {
    let live = LiveRegistry::new(tool_core::ToolRegistry::new());
    let mut reports =
        import_mcp_servers_lazily(vec![McpServerEntry::Enabled(source)], &live, Some(cache)).await;
    match reports.remove(0).outcome {
        ImportOutcome::Lazy { server, tools } => (live, server, tools),
        other => panic!("not imported lazily: {other:?}"),
    }
}

async fn echo(live: &LiveRegistry, text: &str) -> tool_core::ToolResult {
    call(live, "fx__echo", json!({"text": text})).await
}

async fn call(live: &LiveRegistry, name: &str, args: Value) -> tool_core::ToolResult {
    live.snapshot()
        .execute(name, args, &ToolContext::new())
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cached_list_registers_tools_without_starting_the_server() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ToolListCache::new(dir.path().join("cache"));
    let marker = unique("cached");

    // First import: no list cached, so the server is started and listed.
    let (live, server, tools) = import(fixture(&marker), &cache).await;
    assert!(tools.contains(&"fx__echo".to_owned()), "{tools:?}");
    assert!(server.is_running());
    assert_eq!(server.starts(), 1);
    assert_eq!(running(&marker), 1);
    let file = cache.path_for(&fixture(&marker));
    assert_private(&file);
    let cached: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("cache file")).expect("json");
    assert_eq!(cached["version"], 1);
    assert_eq!(cached["listHash"].as_str().map(str::len), Some(64));
    assert!(
        cached["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == "echo"),
        "{cached}"
    );
    server.stop();
    wait_until("the first server to exit", || running(&marker) == 0).await;
    drop(live);

    // Second import: the list is fresh, nothing starts.
    let (live, server, tools2) = import(fixture(&marker), &cache).await;
    assert_eq!(tools2, tools);
    assert!(!server.is_running());
    assert_eq!(server.starts(), 0);
    assert_eq!(running(&marker), 0);
    // The first call starts it.
    let result = echo(&live, "hello").await;
    assert!(!result.is_error(), "{result:?}");
    assert!(result.output.contains("hello"), "{result:?}");
    assert_eq!(server.starts(), 1);
    assert_eq!(running(&marker), 1);
    server.stop();
    wait_until("the second server to exit", || running(&marker) == 0).await;

    // A changed entry (another environment) is a cache miss: started again.
    let changed = fixture(&marker).include_tools(["echo"]);
    let (_live, server, tools3) = import(changed, &cache).await;
    assert_eq!(tools3, vec!["fx__echo".to_owned()]);
    assert_eq!(server.starts(), 1);
    server.stop();
    wait_until("the third server to exit", || running(&marker) == 0).await;

    // A TTL of zero makes every list stale.
    let (_live, server, _) =
        import(fixture(&marker), &cache.clone().with_ttl(Duration::ZERO)).await;
    assert_eq!(server.starts(), 1);
    server.stop();
    wait_until("the fourth server to exit", || running(&marker) == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrupt_cache_file_counts_as_missing() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ToolListCache::new(dir.path());
    let marker = unique("corrupt");
    let (_live, server, _) = import(fixture(&marker), &cache).await;
    server.stop();
    let file = cache.path_for(&fixture(&marker));
    let mut doc: Value =
        serde_json::from_slice(&std::fs::read(&file).expect("read")).expect("json");
    doc["tools"][0]["description"] = json!("changed behind the hash's back");
    std::fs::write(&file, doc.to_string()).expect("write");
    assert!(cache.load(&fixture(&marker)).is_none());
    std::fs::write(&file, "not json").expect("write");
    assert!(cache.load(&fixture(&marker)).is_none());
    let (_live, server, _) = import(fixture(&marker), &cache).await;
    assert_eq!(server.starts(), 1, "a bad file is refetched");
    assert!(cache.load(&fixture(&marker)).is_some(), "and rewritten");
    server.stop();
    wait_until("the servers to exit", || running(&marker) == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_server_is_stopped_and_the_next_call_starts_it_again() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ToolListCache::new(dir.path());
    let marker = unique("idle");
    let source = fixture(&marker).with_idle_timeout(Duration::from_millis(300));
    let (live, server, _) = import(source, &cache).await;
    assert_eq!(running(&marker), 1);
    // Idle since the import: stopped, the process really gone.
    wait_until("the idle server to exit", || running(&marker) == 0).await;
    assert!(!server.is_running());
    assert!(live.unavailable().is_empty(), "{:?}", live.unavailable());
    assert!(live.snapshot().get("fx__echo").is_some(), "its tools stay");
    // The next call starts it again and works.
    let result = echo(&live, "again").await;
    assert!(result.output.contains("again"), "{result:?}");
    assert_eq!(server.starts(), 2);
    wait_until("the restarted server to exit", || running(&marker) == 0).await;
    let result = echo(&live, "third").await;
    assert!(result.output.contains("third"), "{result:?}");
    assert_eq!(server.starts(), 3);
    server.stop();
    wait_until("the last server to exit", || running(&marker) == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_busy_with_a_call_is_not_stopped_for_idleness() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ToolListCache::new(dir.path());
    let marker = unique("busy");
    let source = fixture(&marker).with_idle_timeout(Duration::from_millis(200));
    let (live, server, _) = import(source, &cache).await;
    let result = call(&live, "fx__slow", json!({"millis": 1500})).await;
    assert!(
        !result.is_error(),
        "a call longer than the idle time ends: {result:?}"
    );
    assert_eq!(server.starts(), 1);
    wait_until("the server to exit after the call", || {
        running(&marker) == 0
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_change_refreshes_the_registry_and_the_cache() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ToolListCache::new(dir.path());
    let marker = unique("changed");
    let (live, server, _) = import(fixture(&marker), &cache).await;
    let result = call(&live, "fx__add_tool", json!({"name": "fresh"})).await;
    assert!(!result.is_error(), "{result:?}");
    wait_until("the new tool in the registry", || {
        live.snapshot().get("fx__added_fresh").is_some()
    })
    .await;
    let cached = cache.load(&fixture(&marker)).expect("a fresh list");
    assert!(
        cached.iter().any(|t| t.name == "added_fresh"),
        "the cache has the new list"
    );
    server.stop();
    wait_until("the server to exit", || running(&marker) == 0).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_dies_loses_its_tools_and_is_not_restarted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ToolListCache::new(dir.path());
    let marker = unique("dies");
    let (live, server, _) = import(fixture(&marker), &cache).await;
    // A snapshot taken before the death keeps the tools (`tool batch` holds
    // one for its whole run).
    let before = live.snapshot();
    // A reader spinning on another thread never sees the tools gone without
    // the reason (the reason is recorded first).
    let watcher = {
        let live = live.clone();
        std::thread::spawn(move || {
            let start = Instant::now();
            loop {
                let gone = live.snapshot().get("fx__echo").is_none();
                let why = live.unavailable();
                if gone {
                    return why.contains_key("fx");
                }
                if start.elapsed() > Duration::from_secs(60) {
                    return false;
                }
                std::hint::spin_loop();
            }
        })
    };
    let _ = call(&live, "fx__die", json!({})).await;
    wait_until("the tools to be removed", || {
        live.snapshot().get("fx__echo").is_none()
    })
    .await;
    assert!(
        watcher.join().expect("watcher thread"),
        "the tools were seen removed before the reason was recorded"
    );
    let why = live.unavailable();
    assert!(why["fx"].contains("exited"), "{why:?}");
    assert_eq!(server.starts(), 1);
    wait_until("the process to be gone", || running(&marker) == 0).await;
    // Not restarted: calling another of its tools finds it gone.
    let again = call(&live, "fx__echo", json!({"text": "x"})).await;
    assert!(again.is_error(), "{again:?}");
    assert_eq!(server.starts(), 1);
    // Nor through the older snapshot, which still has the tool: the call is
    // told the server is gone, however long after the removal it comes.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let stale = before
        .execute("fx__echo", json!({"text": "y"}), &ToolContext::new())
        .await;
    assert!(stale.is_error(), "{stale:?}");
    let message = stale
        .error
        .as_ref()
        .map(|e| e.message.as_str())
        .unwrap_or_default();
    assert!(
        message.contains("MCP server `fx`") && message.contains("is gone"),
        "{stale:?}"
    );
    assert_eq!(server.starts(), 1);
    assert_eq!(running(&marker), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_is_unavailable_without_a_cache() {
    let dir = tempfile::tempdir().expect("temp dir");
    let cache = ToolListCache::new(dir.path());
    let live = LiveRegistry::new(tool_core::ToolRegistry::new());
    let missing = McpToolSource::stdio(
        dir.path().join("no-such-server").display().to_string(),
        Vec::<String>::new(),
        Vec::<(String, String)>::new(),
    )
    .named("gone");
    let reports =
        import_mcp_servers_lazily(vec![McpServerEntry::Enabled(missing)], &live, Some(&cache))
            .await;
    assert!(
        matches!(&reports[0].outcome, ImportOutcome::Unavailable(why) if why.contains("gone")),
        "{:?}",
        reports[0].outcome
    );
    assert!(live.unavailable().contains_key("gone"));
    assert_eq!(
        std::fs::read_dir(dir.path())
            .map(Iterator::count)
            .unwrap_or(0),
        0,
        "nothing cached"
    );
}

fn assert_private(file: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(file)
        .expect("cache file")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    let dir = file.parent().expect("parent");
    let mode = std::fs::metadata(dir)
        .expect("cache dir")
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "{}", dir.display());
}

#[test]
fn idle_timeout_is_read_from_the_config_in_seconds() {
    let sources = tool_mcp::parse_mcp_config(
        r#"{"mcpServers": {
            "a": {"command": "x", "idleTimeout": 2.5},
            "b": {"command": "x", "idleTimeout": 0},
            "c": {"command": "x"}
        }}"#,
    )
    .expect("a valid config");
    assert_eq!(sources[0].idle_timeout(), Duration::from_millis(2500));
    assert_eq!(sources[1].idle_timeout(), Duration::ZERO);
    assert_eq!(
        sources[2].idle_timeout(),
        tool_mcp::DEFAULT_SERVER_IDLE_TIMEOUT
    );
    for bad in ["-1", "\"soon\"", "1e9"] {
        let text =
            format!(r#"{{"mcpServers": {{"a": {{"command": "x", "idleTimeout": {bad}}}}}}}"#);
        let err = tool_mcp::parse_mcp_config(&text).expect_err(bad);
        assert!(err.to_string().contains("server `a`"), "{bad}: {err}");
    }
}
