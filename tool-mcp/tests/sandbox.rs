//! Stdio servers in the kernel sandbox (`"sandbox"` in `.mcp.json`,
//! `McpToolSource::with_sandbox`): the fixture server, started sandboxed in
//! each tier, still lists and calls its tools over stdin/stdout, and its
//! file tools (which check nothing themselves) cannot write outside its
//! workspace or read a hidden secret — judged by the files on the host
//! afterwards, not by what the server says.

#![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use std::path::Path;

use serde_json::{Map, Value, json};
use tool_core::{SandboxPolicy, SandboxTier, ToolContext};
use tool_mcp::{McpServerEntry, McpToolSource, parse_mcp_config_entries};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// A folder outside `/tmp` (the sandbox replaces `/tmp`, so a path there
/// would test less): under the target folder.
fn outside_tmp() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap()
}

fn enabled(text: &str) -> McpToolSource {
    match parse_mcp_config_entries(text).unwrap().remove(0) {
        McpServerEntry::Enabled(source) => source,
        other => panic!("not enabled: {other:?}"),
    }
}

fn invalid(text: &str) -> String {
    match parse_mcp_config_entries(text).unwrap().remove(0) {
        McpServerEntry::Invalid { error, .. } => error.to_string(),
        other => panic!("not invalid: {other:?}"),
    }
}

#[tokio::test]
async fn a_sandboxed_server_serves_its_tools_and_stays_confined() {
    for tier in [SandboxTier::Full, SandboxTier::NoNamespaces] {
        let ws = tempfile::tempdir().unwrap();
        let outside = outside_tmp();
        let host_tmp = tempfile::tempdir().unwrap();
        let secret_dir = outside_tmp();
        let secret = format!("s3cret-{}-{tier:?}", std::process::id());
        std::fs::write(secret_dir.path().join("key"), &secret).unwrap();
        let policy = SandboxPolicy::default()
            .with_tier(tier)
            .hidden(secret_dir.path());
        let conn = McpToolSource::stdio(FIXTURE, ["--files"], [("RUST_LOG", "off")])
            .named("fx")
            .with_sandbox(policy, ws.path())
            .connect()
            .await
            .unwrap_or_else(|e| panic!("{tier:?}: {e}"));
        let names: Vec<String> = conn
            .remote_tools()
            .await
            .unwrap()
            .into_iter()
            .map(|t| t.name.to_string())
            .collect();
        assert!(names.contains(&"echo".to_owned()), "{tier:?}: {names:?}");
        let ctx = ToolContext::new();
        let echo = conn
            .call("echo", args(json!({"text": "through the sandbox"})), &ctx)
            .await;
        assert_eq!(echo.output, "through the sandbox", "{tier:?}");
        let write = |path: &Path| args(json!({"path": path.to_str().unwrap(), "text": "planted"}));
        let inside = ws.path().join("inside.txt");
        let r = conn.call("fixture_write_file", write(&inside), &ctx).await;
        assert!(!r.is_error(), "{tier:?}: {}", r.output);
        let out_file = outside.path().join("outside.txt");
        let tmp_file = host_tmp.path().join("outside.txt");
        conn.call("fixture_write_file", write(&out_file), &ctx)
            .await;
        conn.call("fixture_write_file", write(&tmp_file), &ctx)
            .await;
        let read = conn
            .call(
                "fixture_read_file",
                args(json!({"path": secret_dir.path().join("key").to_str().unwrap()})),
                &ctx,
            )
            .await;
        conn.close();
        conn.closed().await;
        // The world afterwards.
        assert_eq!(
            std::fs::read_to_string(&inside).unwrap(),
            "planted",
            "{tier:?}"
        );
        assert!(!out_file.exists(), "{tier:?}: wrote outside the workspace");
        if tier == SandboxTier::Full {
            // The no-namespaces tier leaves host /tmp writable (SECURITY.md).
            assert!(!tmp_file.exists(), "{tier:?}: wrote the host's /tmp");
        }
        assert!(
            !read.output.contains(&secret),
            "{tier:?}: read the hidden secret: {}",
            read.output
        );
        assert!(read.is_error(), "{tier:?}: {}", read.output);
    }
}

#[tokio::test]
async fn an_unsandboxed_server_is_not_confined() {
    // The control: the same calls without a sandbox do reach the files, so
    // the test above fails when the sandbox is not applied.
    let outside = outside_tmp();
    let conn = McpToolSource::stdio(FIXTURE, ["--files"], [("RUST_LOG", "off")])
        .named("fx")
        .connect()
        .await
        .unwrap();
    let out_file = outside.path().join("outside.txt");
    let r = conn
        .call(
            "fixture_write_file",
            args(json!({"path": out_file.to_str().unwrap(), "text": "x"})),
            &ToolContext::new(),
        )
        .await;
    conn.close();
    assert!(!r.is_error(), "{}", r.output);
    assert!(out_file.exists());
}

#[test]
fn the_sandbox_key_is_parsed_and_resolved_against_the_hosts_policy() {
    let ws = Path::new("/srv/ws");
    let base = SandboxPolicy::default().writable("/srv/cache");
    // `true`: the host's policy and workspace.
    let on = enabled(r#"{"mcpServers": {"a": {"command": "srv", "sandbox": true}}}"#);
    assert!(on.sandbox().is_none(), "resolved before the host's policy");
    let on = on.with_default_sandbox(&base, ws, false);
    let (policy, workspace) = on.sandbox().unwrap();
    assert_eq!(workspace, ws);
    assert_eq!(policy.writable, base.writable);
    // An object adds to it and may name its own workspace.
    let obj = enabled(
        r#"{"mcpServers": {"a": {"command": "srv", "sandbox": {
            "write": ["/srv/out"], "hide": ["/srv/keys"],
            "allowNet": ["*.crates.io"], "workspace": "/srv/other"}}}}"#,
    )
    .with_default_sandbox(&base, ws, false);
    let (policy, workspace) = obj.sandbox().unwrap();
    assert_eq!(workspace, Path::new("/srv/other"));
    assert!(policy.writable.iter().any(|p| p == Path::new("/srv/out")));
    assert!(policy.writable.iter().any(|p| p == Path::new("/srv/cache")));
    assert!(policy.hidden.iter().any(|p| p == Path::new("/srv/keys")));
    assert_eq!(policy.network.patterns().len(), 1);
    // No key: sandboxed only when the host turns it on (--mcp-sandbox) ...
    let plain = r#"{"mcpServers": {"a": {"command": "srv"}}}"#;
    assert!(
        enabled(plain)
            .with_default_sandbox(&base, ws, false)
            .sandbox()
            .is_none()
    );
    assert!(
        enabled(plain)
            .with_default_sandbox(&base, ws, true)
            .sandbox()
            .is_some()
    );
    // ... and `false` keeps a server out of it.
    let off = enabled(r#"{"mcpServers": {"a": {"command": "srv", "sandbox": false}}}"#);
    assert!(
        off.with_default_sandbox(&base, ws, true)
            .sandbox()
            .is_none()
    );
    // Mistakes are the entry's error, naming the key.
    let e = invalid(r#"{"mcpServers": {"a": {"command": "srv", "sandbox": {"writable": []}}}}"#);
    assert!(e.contains("server `a`") && e.contains("writable"), "{e}");
    let e = invalid(r#"{"mcpServers": {"a": {"command": "srv", "sandbox": 1}}}"#);
    assert!(e.contains("`sandbox` is true, false or an object"), "{e}");
    let e = invalid(
        r#"{"mcpServers": {"a": {"command": "srv", "sandbox": {"allowNet": ["http://"]}}}}"#,
    );
    assert!(e.contains("sandbox.allowNet"), "{e}");
    let e = invalid(r#"{"mcpServers": {"a": {"url": "http://127.0.0.1:1/mcp", "sandbox": true}}}"#);
    assert!(e.contains("not to `url` servers"), "{e}");
}
