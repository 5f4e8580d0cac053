//! `tool serve` and `--mcp-config`: the binary as an MCP server (stdio and
//! HTTP) talked to with tool-mcp's client, and as a client of an MCP server
//! named in a `.mcp.json` (here `tool serve` itself, in another folder).

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use serde_json::{Map, Value, json};
use tool_core::ToolContext;
use tool_mcp::{McpToolSource, ProtocolEra};

use crate::support::{BIN, TempDir, code, one_json_line, run, stderr, stdout, tool};

const BANNER: &str = "tool serve: MCP server (protocol 2025-11-25 and 2026-07-28) with ";

fn workspace_with_notes() -> TempDir {
    let dir = TempDir::new();
    std::fs::write(
        dir.path().join("notes.txt"),
        "first line\nneedle in a haystack\n",
    )
    .expect("write notes.txt");
    dir
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

#[tokio::test]
async fn serve_over_stdio_lists_and_calls_read_file_in_both_eras() {
    let dir = workspace_with_notes();
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let conn =
            McpToolSource::stdio(BIN, ["serve", "--workspace", dir.arg()], [("TRACE_ID", "")])
                .named("files")
                .with_era(era)
                .connect()
                .await
                .unwrap_or_else(|e| panic!("{era:?}: {e}"));
        let names: Vec<String> = conn
            .remote_tools()
            .await
            .expect("tools/list")
            .iter()
            .map(|t| t.name.to_string())
            .collect();
        assert!(
            names.contains(&"read_file".to_owned()),
            "{era:?}: {names:?}"
        );
        let read = conn
            .call(
                "read_file",
                args(json!({"file_path": "notes.txt"})),
                &ToolContext::new(),
            )
            .await;
        assert!(read.is_ok(), "{era:?}: {read:?}");
        assert!(read.output.contains("needle in a haystack"), "{read:?}");
        // Bad arguments are a tool error the model can correct, not a protocol error.
        let bad = conn
            .call(
                "read_file",
                args(json!({"file_path": 42})),
                &ToolContext::new(),
            )
            .await;
        assert!(bad.is_error());
        assert!(bad.metadata.get("mcp_error").is_none(), "{bad:?}");
        conn.close();
    }
}

#[test]
fn serve_prints_one_banner_line_on_stderr_and_nothing_on_stdout() {
    let dir = TempDir::new();
    let mut child = tool()
        .args(["serve", "--workspace", dir.arg()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tool serve starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("piped stderr"))
        .read_line(&mut line)
        .expect("a banner line");
    assert!(line.starts_with(BANNER), "{line:?}");
    assert!(
        line.trim_end()
            .ends_with(&format!("tools over stdio, workspace {}", dir.arg())),
        "{line:?}"
    );
    // Closing stdin ends the server (before a handshake, with an error on
    // stderr); it wrote nothing of its own to stdout, the protocol stream.
    drop(child.stdin.take());
    let out = child.wait_with_output().expect("tool serve ends");
    assert!(
        out.stdout.is_empty(),
        "{:?}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[tokio::test]
async fn serve_over_http_announces_its_address_and_answers() {
    let dir = workspace_with_notes();
    let mut child = tool()
        .args(["serve", "--http", "127.0.0.1:0", "--workspace", dir.arg()])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tool serve starts");
    let mut line = String::new();
    BufReader::new(child.stderr.take().expect("piped stderr"))
        .read_line(&mut line)
        .expect("a banner line");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {line:?}"))
        .trim_end_matches(',')
        .to_owned();
    assert!(url.ends_with("/mcp"), "{line:?}");
    let conn = McpToolSource::http(url)
        .named("web")
        .connect()
        .await
        .expect("connects over HTTP");
    let read = conn
        .call(
            "read_file",
            args(json!({"file_path": "notes.txt"})),
            &ToolContext::new(),
        )
        .await;
    assert!(read.output.contains("needle in a haystack"), "{read:?}");
    conn.close();
    let _ = child.kill();
    let _ = child.wait();
}

/// A `.mcp.json` whose one server, `files`, is `tool serve` on `served`.
fn mcp_config(dir: &TempDir, served: &TempDir) -> String {
    let config = json!({"mcpServers": {"files": {
        "command": BIN,
        "args": ["serve", "--workspace", served.arg()],
        "env": {"RUST_LOG": "off"}
    }}});
    let path = dir.path().join(".mcp.json");
    std::fs::write(&path, config.to_string()).expect("write .mcp.json");
    path.to_str().expect("UTF-8 path").to_owned()
}

#[test]
fn mcp_config_tools_are_listed_next_to_the_builtins() {
    let served = workspace_with_notes();
    let here = TempDir::new();
    let config = mcp_config(&here, &served);
    let out = run(["--mcp-config", config.as_str(), "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let listed = stdout(&out);
    let names: Vec<&str> = listed
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"read_file"), "built-ins stay: {names:?}");
    assert!(names.contains(&"files__read_file"), "imported: {names:?}");
    assert!(
        names.contains(&"files__grep_content"),
        "imported: {names:?}"
    );
    // Imported tools are kind `other`, whatever the server's hints say.
    let line = listed
        .lines()
        .find(|l| l.starts_with("files__read_file "))
        .expect("listed");
    assert_eq!(line.split_whitespace().nth(1), Some("other"), "{line}");
}

#[test]
fn mcp_config_call_reaches_the_remote_tool() {
    let served = workspace_with_notes();
    let here = TempDir::new();
    let config = mcp_config(&here, &served);
    let out = run([
        "--mcp-config",
        config.as_str(),
        "--workspace",
        here.arg(),
        "call",
        "files__read_file",
        r#"{"file_path": "notes.txt"}"#,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    assert_eq!(v["tool"], "files__read_file");
    // The file lives only in the served folder: the call went through the server.
    let output = v["output"].as_str().expect("output text");
    assert!(output.contains("needle in a haystack"), "{v}");
    assert_eq!(v["metadata"]["mcp"]["server"], "files");
    assert_eq!(v["metadata"]["mcp"]["tool"], "read_file");
}

#[test]
fn mcp_config_that_cannot_start_is_a_usage_error_naming_the_server() {
    let here = TempDir::new();
    let path = here.path().join(".mcp.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}}"#,
    )
    .expect("write");
    let out = run(["--mcp-config", path.to_str().expect("UTF-8"), "list"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent/mcp-server"),
        "{}",
        stderr(&out)
    );
}
