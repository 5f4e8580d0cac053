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

// ---------------------------------------------------------------------------
// `tool serve --http`: who may connect.

/// `tool serve ARGS`, run to its end (for options it refuses).
fn serve_refused(args: &[&str]) -> std::process::Output {
    let dir = TempDir::new();
    let mut all = vec!["serve", "--workspace", dir.arg()];
    all.extend_from_slice(args);
    run(all)
}

#[test]
fn serve_http_refuses_non_loopback_addresses_without_allow_remote() {
    for addr in ["0.0.0.0:0", "[::]:0", "192.0.2.7:8080", "[2001:db8::1]:80"] {
        let out = serve_refused(&["--http", addr]);
        assert_eq!(code(&out), 2, "{addr}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("refusing to serve on"), "{addr}: {err}");
        assert!(err.contains("not a loopback address"), "{addr}: {err}");
        assert!(
            err.contains("--allow-remote") && err.contains("--token-file"),
            "the message says how to allow it: {err}"
        );
        assert!(stdout(&out).is_empty());
    }
}

#[test]
fn allow_remote_needs_a_good_token() {
    let dir = TempDir::new();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").expect("write");
    let short = dir.path().join("short");
    std::fs::write(&short, "abc123\n").expect("write");
    let spaced = "a token with spaces in it";
    let missing = dir.path().join("missing");
    let cases: [(Vec<&str>, &str); 5] = [
        (
            vec!["--http", "0.0.0.0:0", "--allow-remote"],
            "needs a bearer token",
        ),
        (
            vec!["--http", "[::]:0", "--allow-remote"],
            "needs a bearer token",
        ),
        (
            vec![
                "--http",
                "0.0.0.0:0",
                "--allow-remote",
                "--token-file",
                empty.to_str().unwrap(),
            ],
            "the file is empty",
        ),
        (
            vec![
                "--http",
                "0.0.0.0:0",
                "--allow-remote",
                "--token-file",
                short.to_str().unwrap(),
            ],
            "at least 16",
        ),
        (
            vec!["--http", "0.0.0.0:0", "--allow-remote", "--token", spaced],
            "spaces",
        ),
    ];
    for (args, expected) in cases {
        let out = serve_refused(&args);
        assert_eq!(code(&out), 2, "{args:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(expected),
            "{args:?}: {}",
            stderr(&out)
        );
    }
    let out = serve_refused(&[
        "--http",
        "0.0.0.0:0",
        "--allow-remote",
        "--token-file",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("missing"), "{}", stderr(&out));
    // The remote options belong to --http.
    let out = serve_refused(&["--allow-remote", "--token", "0123456789abcdef0123"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(stderr(&out).contains("--http"), "{}", stderr(&out));
}

/// A `tool serve --http` child, killed when dropped.
struct HttpChild {
    child: std::process::Child,
    port: u16,
    stderr_lines: Vec<String>,
    _dir: TempDir,
}

impl Drop for HttpChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `tool serve --http ARGS...` and reads the banner (and the warning
/// line when `warning_expected`).
fn serve_http(args: &[&str], warning_expected: bool) -> HttpChild {
    let dir = workspace_with_notes();
    let mut child = tool()
        .args(["serve", "--workspace", dir.arg()])
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tool serve starts");
    let mut reader = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut stderr_lines = Vec::new();
    for _ in 0..(1 + usize::from(warning_expected)) {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a stderr line");
        stderr_lines.push(line);
    }
    let url = stderr_lines[0]
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap_or_else(|| panic!("no URL in {stderr_lines:?}"))
        .trim_end_matches(',')
        .to_owned();
    let port = url
        .trim_end_matches("/mcp")
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {url}"));
    HttpChild {
        child,
        port,
        stderr_lines,
        _dir: dir,
    }
}

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

/// One HTTP/1.1 POST of `body` to `/mcp` at `connect`, with `headers`;
/// returns the status and the raw response head.
fn post(connect: &str, host: &str, headers: &[&str], body: &str) -> (u16, String) {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(connect).expect("connects");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .expect("timeout");
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nConnection: close\r\n\
         Content-Length: {}\r\n",
        body.len()
    );
    for h in headers {
        request.push_str(h);
        request.push_str("\r\n");
    }
    request.push_str("\r\n");
    request.push_str(body);
    stream.write_all(request.as_bytes()).expect("sends");
    // The head is enough (an SSE body may stay open).
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => break,
        }
    }
    let head = String::from_utf8_lossy(&head).into_owned();
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, head)
}

#[test]
fn remote_access_needs_the_bearer_token_on_every_request() {
    let token = "s3cret-token-0123456789abcdef";
    for (bind, connect_host) in [("0.0.0.0:0", "127.0.0.1"), ("[::]:0", "[::1]")] {
        let dir = TempDir::new();
        let file = dir.path().join("token");
        std::fs::write(&file, format!("{token}\n")).expect("write token");
        let server = serve_http(
            &[
                "--http",
                bind,
                "--allow-remote",
                "--token-file",
                file.to_str().unwrap(),
            ],
            true,
        );
        assert!(
            server.stderr_lines[1].starts_with("warning: tool serve: remote access is on"),
            "{:?}",
            server.stderr_lines
        );
        let connect = format!("{connect_host}:{}", server.port);
        let right = format!("Authorization: Bearer {token}");
        let cases: [(&[&str], u16); 7] = [
            (&[], 401),
            (&["Authorization: Bearer wrong-token-0123456789abcdef"], 401),
            (&["Authorization: Bearer s3cret-token-0123456789abcde"], 401),
            (&["Authorization: Basic czNjcmV0"], 401),
            (&[right.as_str()], 200),
            (
                &["Authorization: bearer s3cret-token-0123456789abcdef"],
                200,
            ),
            (
                &["Authorization: Bearer  s3cret-token-0123456789abcdef "],
                200,
            ),
        ];
        for (headers, expected) in cases {
            let (status, head) = post(&connect, "localhost", headers, INITIALIZE);
            assert_eq!(status, expected, "{bind} {headers:?}: {head}");
            if expected == 401 {
                assert!(
                    head.to_ascii_lowercase()
                        .contains("www-authenticate: bearer"),
                    "{head}"
                );
            }
        }
        // With remote access the Host header is whatever name clients use.
        let (status, head) = post(
            &connect,
            "mcp.example.org:8443",
            &[right.as_str()],
            INITIALIZE,
        );
        assert_eq!(status, 200, "{head}");
        // A foreign browser Origin is still refused, token or not.
        let (status, head) = post(
            &connect,
            "localhost",
            &[right.as_str(), "Origin: https://evil.example"],
            INITIALIZE,
        );
        assert_eq!(status, 403, "{head}");
    }
}

#[test]
fn loopback_http_works_without_a_token_and_checks_one_when_given() {
    let server = serve_http(&["--http", "127.0.0.1:0"], false);
    let connect = format!("127.0.0.1:{}", server.port);
    let (status, head) = post(&connect, "localhost", &[], INITIALIZE);
    assert_eq!(status, 200, "{head}");
    // A foreign Host is refused on loopback access (DNS rebinding).
    let (status, head) = post(&connect, "evil.example", &[], INITIALIZE);
    assert_eq!(status, 403, "{head}");
    drop(server);

    let token = "loopback-token-0123456789";
    let server = serve_http(&["--http", "127.0.0.1:0", "--token", token], false);
    let connect = format!("127.0.0.1:{}", server.port);
    assert_eq!(post(&connect, "localhost", &[], INITIALIZE).0, 401);
    let right = format!("Authorization: Bearer {token}");
    assert_eq!(
        post(&connect, "localhost", &[right.as_str()], INITIALIZE).0,
        200
    );
    drop(server);

    let server = serve_http(&["--http", "[::1]:0"], false);
    let connect = format!("[::1]:{}", server.port);
    assert_eq!(post(&connect, "localhost", &[], INITIALIZE).0, 200);
}
