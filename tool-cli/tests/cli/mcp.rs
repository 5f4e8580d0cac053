//! `tool serve` and `--mcp-config`: the binary as an MCP server (stdio and
//! HTTP) talked to with tool-mcp's client, and as a client of an MCP server
//! named in a `.mcp.json` (here `tool serve` itself, in another folder).

use std::io::{BufRead, BufReader, Write};
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
fn mcp_config_that_cannot_start_is_reported_naming_the_server() {
    let here = TempDir::new();
    let path = here.path().join(".mcp.json");
    std::fs::write(
        &path,
        r#"{"mcpServers": {"ghost": {"command": "/nonexistent/mcp-server"}}}"#,
    )
    .expect("write");
    let out = run(["--mcp-config", path.to_str().expect("UTF-8"), "list"]);
    // One server that cannot start no longer fails the command (the built-ins are listed).
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent/mcp-server"),
        "{}",
        stderr(&out)
    );
}

/// Writes `{"mcpServers": servers}` to `dir/.mcp.json`; returns its path.
fn write_config(dir: &TempDir, servers: &Value) -> String {
    let path = dir.path().join(".mcp.json");
    std::fs::write(&path, json!({ "mcpServers": servers }).to_string()).expect("write .mcp.json");
    path.to_str().expect("UTF-8 path").to_owned()
}

/// `tool serve` on `served`, as a `.mcp.json` entry.
fn served_entry(served: &TempDir) -> Value {
    json!({"command": BIN, "args": ["serve", "--workspace", served.arg()], "env": {"RUST_LOG": "off"}})
}

/// The issue's config: one good server, a missing binary and `false`; plus
/// an invalid entry, a server that prints garbage and exits, and a disabled
/// entry that would leave a mark if it were started.
fn config_with_broken_servers(here: &TempDir, served: &TempDir) -> String {
    let marker = here.path().join("disabled-started");
    write_config(
        here,
        &json!({
            "files": served_entry(served),
            "ghost": {"command": "/nonexistent/mcp-server"},
            "quitter": {"command": "false"},
            "garbage": {"command": "sh", "args": ["-c", "echo not-json"]},
            "shapeless": {"args": ["neither command nor url"]},
            "off": {
                "command": "sh",
                "args": ["-c", format!("touch '{}'", marker.display())],
                "disabled": true
            }
        }),
    )
}

#[test]
fn mcp_config_broken_servers_do_not_fail_list_and_are_reported() {
    let served = workspace_with_notes();
    let here = TempDir::new();
    let config = config_with_broken_servers(&here, &served);
    let out = run(["--mcp-config", config.as_str(), "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let listed = stdout(&out);
    let names: Vec<&str> = listed
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert!(names.contains(&"files__read_file"), "{listed}");
    assert!(names.contains(&"read_file"), "{listed}");
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("ghost__") || n.starts_with("off__")),
        "{listed}"
    );
    // One `#` line per unavailable server in the listing, one warning each on stderr.
    let notes: Vec<&str> = listed.lines().filter(|l| l.starts_with('#')).collect();
    assert_eq!(notes.len(), 4, "{notes:?}");
    let err = stderr(&out);
    for server in ["garbage", "ghost", "quitter", "shapeless"] {
        let prefix = format!("# unavailable: {server}: ");
        assert!(
            notes.iter().any(|l| l.starts_with(&prefix)),
            "{server}: {notes:?}"
        );
        let warning = format!("warning: MCP server `{server}` is unavailable: ");
        assert!(err.contains(&warning), "{server}: {err}");
    }
    assert!(
        notes.iter().any(|l| l.contains("/nonexistent/mcp-server")),
        "the reason says what failed: {notes:?}"
    );
    assert!(
        !err.contains("`off`"),
        "a disabled server is not reported: {err}"
    );
    assert!(
        !here.path().join("disabled-started").exists(),
        "a disabled server is never started"
    );
    // `--json` stays one JSON document; the warnings are on stderr.
    let out = run(["--mcp-config", config.as_str(), "list", "--json"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let specs: Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert!(
        specs
            .as_array()
            .expect("array")
            .iter()
            .any(|s| s["name"] == "files__read_file")
    );
    assert!(
        stderr(&out).contains("MCP server `ghost`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn mcp_config_broken_servers_do_not_fail_calls_and_their_tools_are_named() {
    let served = workspace_with_notes();
    let here = TempDir::new();
    let config = config_with_broken_servers(&here, &served);
    let out = run([
        "--mcp-config",
        config.as_str(),
        "call",
        "files__read_file",
        r#"{"file_path": "notes.txt"}"#,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    assert!(
        v["output"]
            .as_str()
            .unwrap_or_default()
            .contains("needle in a haystack"),
        "{v}"
    );
    // A tool of a server that did not start: a usage error naming the server and why.
    for (tool_name, server, why) in [
        ("ghost__read_file", "ghost", "/nonexistent/mcp-server"),
        ("quitter__anything", "quitter", "(false)"),
        (
            "shapeless__x",
            "shapeless",
            "exactly one of `command` and `url`",
        ),
    ] {
        let out = run(["--mcp-config", config.as_str(), "call", tool_name, "{}"]);
        assert_eq!(code(&out), 2, "{tool_name}: {}", stderr(&out));
        let err = stderr(&out);
        let says =
            format!("tool `{tool_name}` is not available: MCP server `{server}` is unavailable");
        assert!(err.contains(&says), "{err}");
        assert!(err.contains(why), "{err}");
    }
}

#[test]
fn mcp_config_of_only_missing_servers_still_serves_the_builtins() {
    let here = TempDir::new();
    let config = write_config(
        &here,
        &json!({
            "ghost": {"command": "/nonexistent/mcp-server"},
            "later": {"command": "/nonexistent/other", "disabled": true}
        }),
    );
    let out = run(["--mcp-config", config.as_str(), "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).lines().any(|l| l.starts_with("read_file ")),
        "{}",
        stdout(&out)
    );
    assert!(
        stderr(&out).contains("/nonexistent/mcp-server"),
        "{}",
        stderr(&out)
    );
    assert!(
        !stderr(&out).contains("/nonexistent/other"),
        "{}",
        stderr(&out)
    );
}

/// The issue's (c) through the binary: a shell that execs `tool serve` and
/// is killed by pid in the middle of a batch. Calls to its tools then fail
/// at once naming it, the good server's calls go on, stderr reports it.
#[test]
fn mcp_config_server_killed_mid_batch_is_reported_and_the_rest_goes_on() {
    let served = workspace_with_notes();
    let here = TempDir::new();
    let pid_file = here.path().join("pid");
    let config = write_config(
        &here,
        &json!({
            "files": served_entry(&served),
            "dying": {
                "command": "sh",
                "args": ["-c", format!(
                    "echo $$ > '{}'; exec '{BIN}' serve --workspace '{}'",
                    pid_file.display(),
                    served.arg()
                )],
                "env": {"RUST_LOG": "off"}
            }
        }),
    );
    let mut child = tool()
        .args(["--mcp-config", config.as_str(), "batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tool batch starts");
    let mut input = child.stdin.take().expect("piped stdin");
    let mut output = BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut ask = |tool_name: &str| -> Value {
        let line = json!({"name": tool_name, "arguments": {"file_path": "notes.txt"}});
        writeln!(input, "{line}").expect("batch reads");
        input.flush().expect("flush");
        let mut answer = String::new();
        output.read_line(&mut answer).expect("a result line");
        serde_json::from_str(&answer).unwrap_or_else(|e| panic!("{e}: {answer:?}"))
    };
    let alive = ask("dying__read_file");
    assert!(
        alive["output"]
            .as_str()
            .unwrap_or_default()
            .contains("needle"),
        "{alive}"
    );
    let pid = std::fs::read_to_string(&pid_file).expect("the shell wrote its pid");
    let killed = std::process::Command::new("kill")
        .args(["-9", pid.trim()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let started = std::time::Instant::now();
    let dead = ask("dying__read_file");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(dead["error"]["kind"], "failed", "{dead}");
    let message = dead["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("MCP server `dying`"), "{dead}");
    let good = ask("files__read_file");
    assert!(
        good["output"]
            .as_str()
            .unwrap_or_default()
            .contains("needle"),
        "{good}"
    );
    drop(input);
    let out = child.wait_with_output().expect("tool batch ends");
    assert_eq!(out.status.code(), Some(0));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("warning: MCP server `dying` is unavailable: "),
        "{err}"
    );
    assert!(!err.contains("`files`"), "{err}");
}
