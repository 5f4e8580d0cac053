//! `tool serve` and `--mcp-config`: the binary as an MCP server (stdio and
//! HTTP) talked to with tool-mcp's client, and as a client of an MCP server
//! named in a `.mcp.json` (here `tool serve` itself, in another folder).

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use serde_json::{Map, Value, json};
use tool_core::ToolContext;
use tool_mcp::{McpToolSource, ProtocolEra};

use crate::support::{BIN, TempDir, code, one_json_line, run, stderr, stdout, tool, write_private};

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

/// `read_images` over MCP: the composed grid reaches tool-mcp's client as
/// an MCP image content block (read back into the result's images).
/// Review 23 F1 through `tool serve`: a skills folder given as a relative
/// path is read-only for `bash_command` in the sandbox of the served tools,
/// as for `tool call` (the path is made absolute once, at start).
#[tokio::test]
async fn serve_keeps_a_relative_skills_folder_read_only() {
    let dir = TempDir::new();
    let skill = dir.path().join(".skills/x/SKILL.md");
    let original = "---\nname: x\ndescription: Original.\n---\nBody.\n";
    std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
    std::fs::write(&skill, original).unwrap();
    // The same folder, spelled relative to this process's folder.
    let cwd = std::env::current_dir().unwrap();
    let relative = format!(
        "{}{}",
        "../".repeat(cwd.components().count() - 1),
        dir.path()
            .join(".skills")
            .display()
            .to_string()
            .trim_start_matches('/')
    );
    let conn = McpToolSource::stdio(
        BIN,
        [
            "--skills-dir",
            relative.as_str(),
            "serve",
            "--workspace",
            dir.arg(),
        ],
        [("TRACE_ID", "")],
    )
    .named("files")
    .connect()
    .await
    .expect("connects");
    let r = conn
        .call(
            "bash_command",
            args(json!({"command": "echo A >> .skills/x/SKILL.md; echo rc=$?"})),
            &ToolContext::new(),
        )
        .await;
    let probe = run(["call", "--json", "bash_command", r#"{"command": "true"}"#]);
    if one_json_line(&probe)["metadata"]["sandbox"]["tier"] != "full" {
        eprintln!(
            "skipped: no full sandbox tier here (Landlock cannot make a folder inside the workspace read-only)"
        );
        conn.close();
        return;
    }
    assert!(
        r.output.contains("Read-only file system") && r.output.contains("rc=1"),
        "{r:?}"
    );
    assert_eq!(std::fs::read_to_string(&skill).unwrap(), original, "{r:?}");
    conn.close();
}

#[tokio::test]
async fn serve_returns_read_images_as_an_image_content_block() {
    let dir = TempDir::new();
    let png = crate::call::tool_cli_png();
    std::fs::write(dir.path().join("a.png"), &png).expect("write a.png");
    std::fs::write(dir.path().join("b.png"), &png).expect("write b.png");
    let conn = McpToolSource::stdio(BIN, ["serve", "--workspace", dir.arg()], [("TRACE_ID", "")])
        .named("files")
        .connect()
        .await
        .expect("connects");
    let r = conn
        .call(
            "read_images",
            args(json!({"paths": ["*.png"]})),
            &ToolContext::new(),
        )
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.images.len(), 1, "{r:?}");
    assert_eq!(r.images[0].media_type, "image/png");
    assert!(r.images[0].data.starts_with("iVBORw0KGgo"), "PNG base64");
    assert!(
        r.output
            .contains("Composed 2 images into one 1024×516 px grid"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("1: a.png (") && r.output.contains("2: b.png ("),
        "{}",
        r.output
    );
    conn.close();
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
            .ends_with(&format!("match) over stdio, workspace {}", dir.arg())),
        "{line:?}"
    );
    // The count is what `tools/list` offers without a page URL: what `tool
    // list` lists (every tool) but the URL-scoped fixture, which is counted
    // apart (issue 24, item 9).
    let listed = run(["list", "--workspace", dir.arg()]);
    let listed = stdout(&listed)
        .lines()
        .filter(|l| !l.starts_with('#'))
        .count();
    assert!(
        line.contains(&format!(
            "with {} tools (and 1 more offered only on page URLs their patterns match) over",
            listed - 1
        )),
        "{line:?}, {listed} listed"
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
    let mut cmd = tool();
    cmd.args(["serve", "--http", "127.0.0.1:0", "--workspace", dir.arg()]);
    let served = crate::support::Served::start(cmd);
    assert!(served.url.ends_with("/mcp"), "{}", served.url);
    let conn = McpToolSource::http(served.url.clone())
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

/// A stdio MCP server starts without the secret-looking variables `tool`
/// was started with (cross-cutting §7), yet with every variable its
/// `.mcp.json` entry passes on purpose, secret-looking or not.
#[test]
fn stdio_mcp_servers_get_no_secret_variables_unless_configured() {
    let served = workspace_with_notes();
    let here = TempDir::new();
    let seen = here.path().join("server-env.txt");
    let script = format!(
        "env > '{}'; exec '{BIN}' serve --workspace '{}'",
        seen.display(),
        served.arg()
    );
    let config = json!({"mcpServers": {"files": {
        "command": "sh",
        "args": ["-c", script],
        "env": {"RUST_LOG": "off", "GIVEN_API_TOKEN": "given-on-purpose-1"}
    }}});
    let path = here.path().join(".mcp.json");
    std::fs::write(&path, config.to_string()).expect("write .mcp.json");
    let out = tool()
        .args(["--mcp-config", path.to_str().expect("UTF-8"), "list"])
        .env("GITHUB_TOKEN_2", "ghtwo-mcp-1")
        .env("SECRET_V2", "secretv2-mcp-2")
        .env("DATABASE_URL", "postgres://u:dbpw-mcp-3@h/db")
        .env("HARMLESS_NAME", "visible-mcp-4")
        .output()
        .expect("runs");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("files__read_file"),
        "{}",
        stdout(&out)
    );
    let env = std::fs::read_to_string(&seen).expect("the server wrote its environment");
    assert!(env.contains("HARMLESS_NAME=visible-mcp-4"), "{env}");
    assert!(env.contains("GIVEN_API_TOKEN=given-on-purpose-1"), "{env}");
    for secret in ["ghtwo-mcp-1", "secretv2-mcp-2", "dbpw-mcp-3"] {
        assert!(!env.contains(secret), "{secret} reached the server: {env}");
    }
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
    write_private(&empty, "\n");
    let short = dir.path().join("short");
    write_private(&short, "abc123\n");
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

/// Runs `tool serve ARGS` and waits at most `limit` for it to exit; a
/// program still running then is killed and the test fails.
fn serve_exits_within(args: &[&str], limit: std::time::Duration) -> std::process::Output {
    let dir = TempDir::new();
    let mut child = tool()
        .args(["serve", "--workspace", dir.arg()])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tool binary starts");
    let start = std::time::Instant::now();
    loop {
        if child.try_wait().expect("try_wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "`tool serve {args:?}` still ran after {limit:?}: {}",
                stderr(&out)
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn token_file_is_read_bounded_and_only_from_a_regular_file() {
    let dir = TempDir::new();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    // A long first line: before the bound it was taken whole as the token
    // and the server started.
    let big = dir.path().join("big");
    write_private(&big, &"a".repeat(1 << 20));
    let limit = std::time::Duration::from_secs(20);
    for (file, expected) in [
        (fifo.to_str().unwrap(), "not a regular file"),
        (big.to_str().unwrap(), "larger than 4096 bytes"),
        ("/dev/zero", "not a regular file"),
    ] {
        let out = serve_exits_within(&["--http", "127.0.0.1:0", "--token-file", file], limit);
        assert_eq!(code(&out), 2, "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(expected), "{file}: {}", stderr(&out));
        assert!(stderr(&out).contains(file), "{file}: {}", stderr(&out));
    }
    // 4096 bytes exactly is still read: the token on the first line, then padding.
    let edge = dir.path().join("edge");
    let mut text = "0123456789abcdef0123\n".to_owned();
    text.push_str(&"#".repeat(4096 - text.len()));
    write_private(&edge, &text);
    let out = serve_exits_within(
        &[
            "--http",
            "0.0.0.0:0",
            "--token-file",
            edge.to_str().unwrap(),
        ],
        limit,
    );
    // Accepted as a token: the refusal is about the address, not the file.
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("refusing to serve on"),
        "{}",
        stderr(&out)
    );
    assert!(!stderr(&out).contains("edge"), "{}", stderr(&out));
    // A token others may read is refused, unread, saying how to fix it:
    // anyone who can read it can run every tool served.
    let open = dir.path().join("open");
    write_private(&open, "0123456789abcdef0123\n");
    for mode in [0o644, 0o640, 0o602] {
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(mode))
            .expect("chmod");
        let out = serve_exits_within(
            &[
                "--http",
                "127.0.0.1:0",
                "--token-file",
                open.to_str().unwrap(),
            ],
            limit,
        );
        assert_eq!(code(&out), 2, "{mode:o}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains(&format!("mode {mode:03o}")), "{err}");
        assert!(err.contains("chmod 600"), "{err}");
        assert!(!err.contains("0123456789abcdef0123"), "{err}");
    }
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
    // The background index's one log line may come before or after the
    // banner (it says whether the workspace gets an index); it is not one
    // of the lines this test counts.
    while stderr_lines.len() < 1 + usize::from(warning_expected) {
        let mut line = String::new();
        reader.read_line(&mut line).expect("a stderr line");
        if !line.starts_with("agent-tools index (") {
            stderr_lines.push(line);
        }
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
        write_private(&file, &format!("{token}\n"));
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

// ---------------------------------------------------------------------------
// `tool serve` over stdio: every request gets one answer; signals stop it.

/// A `tool serve` child spoken to line by line; answers are read on a thread
/// so that a missing answer fails the test instead of hanging it.
struct StdioChild {
    child: std::process::Child,
    stdin: Option<std::process::ChildStdin>,
    answers: std::sync::mpsc::Receiver<String>,
}

impl Drop for StdioChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl StdioChild {
    /// Starts `tool serve --workspace DIR EXTRA...` and does the 2025-11-25 handshake.
    fn start(dir: &TempDir, extra: &[&str]) -> Self {
        Self::start_in(tool(), dir, extra)
    }

    /// [`start`](Self::start) from `command` (a `tool()` with its environment).
    fn start_in(mut command: std::process::Command, dir: &TempDir, extra: &[&str]) -> Self {
        let mut child = command
            .args(["serve", "--workspace", dir.arg()])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("tool serve starts");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, answers) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut me = Self {
            stdin: child.stdin.take(),
            child,
            answers,
        };
        me.send(INITIALIZE.as_bytes());
        let init = me.answer();
        assert_eq!(init["id"], 1, "{init}");
        assert!(init["result"]["protocolVersion"].is_string(), "{init}");
        me.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        me
    }

    fn send(&mut self, line: &[u8]) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line).expect("write");
        stdin.write_all(b"\n").expect("write");
        stdin.flush().expect("flush");
    }

    /// The next answer, within 20 s.
    fn answer(&self) -> Value {
        let line = self
            .answers
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("an answer within 20 s");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"))
    }

    /// No further answer within `wait`.
    fn assert_silent(&self, wait: std::time::Duration) {
        if let Ok(line) = self.answers.recv_timeout(wait) {
            panic!("unexpected answer {line}");
        }
    }
}

#[test]
fn stdio_answers_every_bad_request_once_with_its_id_and_goes_on() {
    let dir = TempDir::new();
    let mut server = StdioChild::start(&dir, &[]);
    let big = |id: &str| {
        let mut line =
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"read_file","arguments":{{"file_path":""#)
                .into_bytes();
        line.resize(line.len() + 16 * 1024 * 1024 + 10, b'a');
        line.extend_from_slice(br#""}}}"#);
        line
    };
    let mut cases: Vec<(Vec<u8>, i64, Value)> = vec![
        // The issue's inputs.
        (big("11"), -32600, json!(11)),
        (b"this is not JSON".to_vec(), -32700, Value::Null),
        (br#"{"jsonrpc":"2.0","id":12,"method":"ping","params":"x"}"#.to_vec(), -32600, json!(12)),
        (br#"{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"arguments":{}}}"#.to_vec(), -32602, json!(13)),
        (br#"{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"read_file","arguments":"{\"file_path\":\"a\"}"}}"#.to_vec(), -32602, json!(14)),
        (br#"{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"read_file","arguments":["a"]}}"#.to_vec(), -32602, json!(15)),
        (br#"{"jsonrpc":"2.0","id":16,"method":"logging/setLevel","params":{"level":"verbose"}}"#.to_vec(), -32602, json!(16)),
        // More of each kind.
        (big(r#""big-string-id""#), -32600, json!("big-string-id")),
        (b"{\"jsonrpc\":\"2.0\",\"id\":17,".to_vec(), -32700, Value::Null),
        (b"\xff\xfe\x00garbage".to_vec(), -32700, Value::Null),
        (br#"[{"jsonrpc":"2.0","id":18,"method":"ping"}]"#.to_vec(), -32600, Value::Null),
        (br#"{"jsonrpc":"1.0","id":19,"method":"ping"}"#.to_vec(), -32600, json!(19)),
        (br#"{"jsonrpc":"2.0","id":20,"method":"tools/list","params":[1]}"#.to_vec(), -32600, json!(20)),
        (br#"{"jsonrpc":"2.0","id":"s21","method":"tools/call","params":{"name":7}}"#.to_vec(), -32602, json!("s21")),
        (br#"{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"read_file","arguments":5}}"#.to_vec(), -32602, json!(22)),
        (br#"{"jsonrpc":"2.0","id":23,"method":"logging/setLevel","params":{}}"#.to_vec(), -32602, json!(23)),
        (br#"{"jsonrpc":"2.0","id":24,"method":"logging/setLevel","params":{"level":3}}"#.to_vec(), -32602, json!(24)),
        (br#"{"jsonrpc":"2.0","id":25,"method":"tools/list","params":{"cursor":5}}"#.to_vec(), -32602, json!(25)),
    ];
    // An oversize line whose id comes after the params cannot be matched: id null.
    let mut late = br#"{"jsonrpc":"2.0","method":"ping","params":{"pad":""#.to_vec();
    late.resize(late.len() + 17 * 1024 * 1024, b'b');
    late.extend_from_slice(br#""},"id":26}"#);
    cases.push((late, -32600, Value::Null));
    for (line, expected_code, expected_id) in cases {
        let shown = String::from_utf8_lossy(&line[..line.len().min(80)]).into_owned();
        server.send(&line);
        let answer = server.answer();
        assert_eq!(answer["jsonrpc"], "2.0", "{shown}: {answer}");
        assert_eq!(answer["error"]["code"], expected_code, "{shown}: {answer}");
        assert_eq!(answer["id"], expected_id, "{shown}: {answer}");
        assert!(
            answer["error"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{answer}"
        );
        if line.len() > 16 * 1024 * 1024 {
            assert!(
                answer["error"]["message"]
                    .as_str()
                    .unwrap()
                    .contains("16 MiB"),
                "{answer}"
            );
        }
    }
    // The logging level is advertised and a good one is accepted.
    server.send(
        br#"{"jsonrpc":"2.0","id":30,"method":"logging/setLevel","params":{"level":"warning"}}"#,
    );
    let answer = server.answer();
    assert_eq!(answer["id"], 30, "{answer}");
    assert_eq!(answer["result"], json!({}), "{answer}");
    // Notifications, valid or not, and blank lines get no answer.
    server.send(
        br#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#,
    );
    server.send(b"");
    server.send(b"   ");
    server.assert_silent(std::time::Duration::from_millis(300));
    // Serving goes on: a real call after all that.
    std::fs::write(dir.path().join("after.txt"), "still serving\n").expect("write");
    server.send(br#"{"jsonrpc":"2.0","id":31,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":"after.txt"}}}"#);
    let answer = server.answer();
    assert_eq!(answer["id"], 31, "{answer}");
    assert!(
        answer["result"]["content"]
            .to_string()
            .contains("still serving"),
        "{answer}"
    );
    server.assert_silent(std::time::Duration::from_millis(200));
}

/// Whether process `pid` is gone (no /proc entry, or a zombie nobody reaped yet).
fn process_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .and_then(|rest| rest.split_whitespace().next())
            .is_some_and(|state| state == "Z" || state == "X"),
    }
}

/// Starts a `bash_command` that records its pid in `pid` and runs `command`
/// (whose process is that pid) on a served stdio server, and waits for the pid.
fn running_command(dir: &TempDir, command: &str) -> (StdioChild, u32) {
    // Unsandboxed: `$$` must be the host's pid of the shell (the sandbox's
    // own PID namespace numbers it 2); tool-sandbox's tests cover the
    // sandboxed case.
    let mut server = StdioChild::start(dir, &["--approve", "all", "--sandbox", "off"]);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash_command",
        "arguments": {"command": format!("echo $$ > pid; {command}")}
    }});
    server.send(call.to_string().as_bytes());
    let pid_file = dir.path().join("pid");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        if let Some(pid) = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return (server, pid);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the command never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn signal(pid: u32, name: &str) {
    let status = std::process::Command::new("kill")
        .args([format!("-{name}"), pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
}

/// Waits up to `limit` for the server to exit; its status.
fn exits_within(server: &mut StdioChild, limit: std::time::Duration) -> std::process::ExitStatus {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = server.child.try_wait().expect("try_wait") {
            return status;
        }
        assert!(
            start.elapsed() < limit,
            "tool serve still running {limit:?} after the signal"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_signal_stops_the_server_and_the_command_it_runs() {
    // The issue's case (SIGTERM, `sleep 100`), the other two signals, a
    // command that ignores SIGTERM, and one whose shell waits on a child.
    let cases = [
        ("TERM", "exec sleep 100"),
        ("INT", "exec sleep 100"),
        ("HUP", "exec sleep 100"),
        ("TERM", "trap '' TERM; while true; do sleep 1; done"),
        ("TERM", "sleep 100; echo done"),
    ];
    for (name, command) in cases {
        let dir = TempDir::new();
        let (mut server, pid) = running_command(&dir, command);
        assert!(!process_gone(pid), "{command}: not started");
        signal(server.child.id(), name);
        let status = exits_within(&mut server, std::time::Duration::from_secs(5));
        assert!(
            status.code() == Some(0) || status.code() == Some(143),
            "SIG{name}: exit {status:?}"
        );
        // The running call was answered before the server went.
        let answer = server.answer();
        assert_eq!(answer["id"], 2, "{answer}");
        assert_eq!(answer["result"]["isError"], true, "{answer}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while !process_gone(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "SIG{name}, `{command}`: process {pid} outlived the server"
            );
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

#[tokio::test]
async fn a_signal_stops_the_http_server_and_the_command_it_runs() {
    for name in ["TERM", "INT"] {
        // Unsandboxed: `$$` must be the host's pid (see `running_command`).
        let mut server = serve_http(
            &[
                "--http",
                "127.0.0.1:0",
                "--approve",
                "all",
                "--sandbox",
                "off",
            ],
            false,
        );
        let workspace = server._dir.path().to_owned();
        let conn = McpToolSource::http(format!("http://127.0.0.1:{}/mcp", server.port))
            .named("web")
            .connect()
            .await
            .expect("connects over HTTP");
        let call = tokio::spawn(async move {
            conn.call(
                "bash_command",
                args(json!({"command": "echo $$ > pid; exec sleep 100"})),
                &ToolContext::new(),
            )
            .await
        });
        let pid_file = workspace.join("pid");
        let mut pid = None;
        for _ in 0..500 {
            pid = std::fs::read_to_string(&pid_file)
                .ok()
                .and_then(|t| t.trim().parse::<u32>().ok());
            if pid.is_some() {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let pid = pid.expect("the command started");
        signal(server.child.id(), name);
        let start = std::time::Instant::now();
        let status = loop {
            if let Some(status) = server.child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(
                start.elapsed() < std::time::Duration::from_secs(5),
                "SIG{name}: tool serve --http still running"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        };
        assert_eq!(status.code(), Some(0), "SIG{name}: {status:?}");
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
        while !process_gone(pid) {
            assert!(
                std::time::Instant::now() < deadline,
                "SIG{name}: process {pid} outlived the HTTP server"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        // The cancelled call was answered before the server went.
        let result = tokio::time::timeout(std::time::Duration::from_secs(5), call)
            .await
            .expect("the call is answered")
            .expect("the call task ends");
        assert!(result.is_error(), "{result:?}");
        assert!(
            result
                .error
                .as_ref()
                .is_some_and(|e| e.message.contains("cancelled")),
            "{result:?}"
        );
    }
}

#[test]
fn stdio_over_a_socketpair_serves_and_stops_at_once_on_sigterm() {
    // Node.js clients (libuv) give a server socketpairs, not pipes, as stdio.
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    let dir = TempDir::new();
    let (ours, theirs) = UnixStream::pair().expect("socketpair");
    let theirs_out = theirs.try_clone().expect("clone");
    let mut child = tool()
        // Unsandboxed: `$$` must be the host's pid (see `running_command`).
        .args([
            "serve",
            "--workspace",
            dir.arg(),
            "--approve",
            "all",
            "--sandbox",
            "off",
        ])
        .stdin(Stdio::from(std::os::fd::OwnedFd::from(theirs)))
        .stdout(Stdio::from(std::os::fd::OwnedFd::from(theirs_out)))
        .stderr(Stdio::null())
        .spawn()
        .expect("tool serve starts");
    ours.set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .expect("timeout");
    let mut writer = ours.try_clone().expect("clone");
    let mut reader = BufReader::new(ours);
    let mut ask = |line: &str| {
        writer.write_all(line.as_bytes()).expect("write");
        writer.write_all(b"\n").expect("write");
    };
    ask(INITIALIZE);
    ask(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    ask(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"bash_command","arguments":{"command":"echo $$ > pid; exec sleep 100"}}}"#,
    );
    let mut read = || {
        let mut line = String::new();
        reader.read_line(&mut line).expect("an answer");
        serde_json::from_str::<Value>(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
    };
    assert_eq!(read()["id"], 1);
    let list = read();
    assert_eq!(list["id"], 2, "{list}");
    assert!(list.to_string().contains("bash_command"), "{list}");
    let pid_file = dir.path().join("pid");
    let mut pid = None;
    for _ in 0..1000 {
        pid = std::fs::read_to_string(&pid_file)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok());
        if pid.is_some() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let pid = pid.expect("the command started");
    signal(child.id(), "TERM");
    let start = std::time::Instant::now();
    let answer = read();
    assert_eq!(answer["id"], 3, "{answer}");
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        // Well under the 4 s a blocking stdin read would hold the exit up.
        assert!(
            start.elapsed() < std::time::Duration::from_secs(2),
            "tool serve still running"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    assert_eq!(status.code(), Some(0));
    assert!(process_gone(pid), "process {pid} outlived the server");
}

/// The pattern that used to overflow the stack (and so abort the whole
/// server) comes back over MCP as a tool error, and the server answers the
/// next call.
#[tokio::test]
async fn a_stack_overflowing_glob_is_an_argument_error_over_mcp() {
    let dir = workspace_with_notes();
    let conn = McpToolSource::stdio(BIN, ["serve", "--workspace", dir.arg()], [("TRACE_ID", "")])
        .named("files")
        .connect()
        .await
        .expect("connect");
    let nested = format!("{}a{}", "{".repeat(15_000), "}".repeat(15_000));
    for (tool, arguments) in [
        ("glob_files", json!({"pattern": nested})),
        ("grep_content", json!({"pattern": "x", "include": nested})),
        ("list_dir", json!({"ignore": [nested]})),
        ("grep_content", json!({"pattern": "(".repeat(20_000)})),
    ] {
        let r = conn.call(tool, args(arguments), &ToolContext::new()).await;
        assert!(r.is_error(), "{tool}: {r:?}");
        let message = r
            .error
            .as_ref()
            .map(|e| e.message.clone())
            .unwrap_or_default();
        assert!(
            message.contains("limit") || message.contains("Invalid"),
            "{tool}: {message}"
        );
        assert!(
            message.len() < 2_000,
            "{tool}: the pattern is not echoed whole"
        );
    }
    let read = conn
        .call(
            "grep_content",
            args(json!({"pattern": "needle"})),
            &ToolContext::new(),
        )
        .await;
    assert!(
        read.output.contains("notes.txt"),
        "the server still answers: {read:?}"
    );
    conn.close();
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
    // Each call reads a different number of lines: an identical read-only
    // call would be answered from the batch's read cache (30 s), server or
    // no server, had the client not yet seen the server die.
    let mut asked = 0;
    let mut ask = |tool_name: &str| -> Value {
        asked += 1;
        let line = json!({
            "name": tool_name,
            "arguments": {"file_path": "notes.txt", "limit": 10 + asked}
        });
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

/// Without a token a loopback server serves only its own user: another
/// local user (here `nobody`, through `setpriv`) gets 403, not a shell.
#[test]
fn a_loopback_server_without_a_token_refuses_other_local_users() {
    let setpriv = std::path::Path::new("/usr/bin/setpriv");
    let curl = std::path::Path::new("/usr/bin/curl");
    if !rustix::process::geteuid().is_root() || !setpriv.exists() || !curl.exists() {
        eprintln!("skipped: needs root, /usr/bin/setpriv and /usr/bin/curl");
        return;
    }
    let server = serve_http(&["--http", "127.0.0.1:0"], false);
    let url = format!("http://127.0.0.1:{}/mcp", server.port);
    let as_user = |uid: &str| {
        let out = std::process::Command::new(setpriv)
            .args([
                "--reuid",
                uid,
                "--regid",
                uid,
                "--clear-groups",
                "/usr/bin/curl",
                "-s",
            ])
            .args(["-o", "/dev/null", "-w", "%{http_code}", "-X", "POST", &url])
            .args(["-H", "Content-Type: application/json"])
            .args(["-H", "Accept: application/json, text/event-stream"])
            .args(["-d", INITIALIZE])
            .output()
            .expect("setpriv runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    assert_eq!(as_user("65534"), "403", "another user is refused");
    assert_eq!(as_user("0"), "200", "the server's own user is served");
    // The same user's own client (this test process) is served too.
    let connect = format!("127.0.0.1:{}", server.port);
    assert_eq!(post(&connect, "localhost", &[], INITIALIZE).0, 200);
}

#[test]
fn serve_refusals_name_serve_options() {
    // A client without elicitation: the refusal names `serve --approve all`,
    // not "run it on a terminal"; a URL-scoped tool names `serve --page-url`.
    let dir = TempDir::new();
    let mut server = StdioChild::start(&dir, &[]);
    server.send(br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"cli_fixture_confirm_write","arguments":{}}}"#);
    let answer = server.answer();
    let text = answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(text.contains("`tool serve --approve all`"), "{answer}");
    assert!(!text.contains("on a terminal"), "{answer}");
}

/// Review 27 F15: a background job started through `tool serve` ran on to
/// its 1 h cap after the client left, out of every session's reach.
#[test]
fn a_served_sessions_background_jobs_end_with_the_server() {
    let dir = TempDir::new();
    let state = TempDir::new();
    let mut command = tool();
    command.env("XDG_STATE_HOME", state.path());
    // Unsandboxed: `$$` is then the host's pid of the shell.
    let mut server = StdioChild::start_in(command, &dir, &["--approve", "all", "--sandbox", "off"]);
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "bash_command",
        "arguments": {"command": "echo $$ > pid; exec sleep 300", "run_in_background": true}
    }});
    server.send(call.to_string().as_bytes());
    let answer = server.answer();
    assert!(
        answer["result"]["content"]
            .to_string()
            .contains("Started background job"),
        "{answer}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let pid: u32 = loop {
        if let Some(pid) = std::fs::read_to_string(dir.path().join("pid"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break pid;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the job never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(!process_gone(pid));
    // The client goes away: the server ends, and the job with it.
    server.stdin = None;
    let status = exits_within(&mut server, std::time::Duration::from_secs(15));
    assert!(status.success(), "{status:?}");
    let gone = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !process_gone(pid) {
        assert!(
            std::time::Instant::now() < gone,
            "the job's sleep {pid} still runs"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Starts `BIN serve --http 127.0.0.1:0 ARGS` with `env`; the child and
/// its port (from the banner), and the stderr lines read up to the banner.
fn serve_http_with(
    bin: &str,
    args: &[&str],
    env: &[(&str, &std::path::Path)],
) -> (std::process::Child, u16, Vec<String>) {
    let mut command = std::process::Command::new(bin);
    command
        .env_remove("TRACE_ID")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args);
    for (name, value) in env {
        command.env(name, value);
    }
    let mut child = command.spawn().expect("serve starts");
    let mut reader = BufReader::new(child.stderr.take().expect("piped stderr"));
    let mut lines = Vec::new();
    let port = loop {
        let mut line = String::new();
        if reader.read_line(&mut line).expect("a stderr line") == 0 {
            panic!("serve ended before its banner: {lines:?}");
        }
        let port = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .and_then(|url| {
                url.trim_end_matches(',')
                    .trim_end_matches("/mcp")
                    .rsplit(':')
                    .next()
            })
            .and_then(|p| p.parse::<u16>().ok());
        lines.push(line);
        if let Some(port) = port {
            break port;
        }
    };
    (child, port, lines)
}

/// One 2026-07-28 request to `127.0.0.1:port/mcp` from a client that
/// declares form elicitation and the tasks extension: the JSON-RPC answer.
fn rpc_2026(port: u16, method: &str, mut params: Value) -> Value {
    use std::io::Read;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities":
            {"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}},
        "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "1"},
    });
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}).to_string();
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).expect("connects");
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .expect("timeout");
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{name}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).expect("sends");
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    let body = response.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    body.lines()
        .filter_map(|line| {
            let line = line.trim();
            serde_json::from_str::<Value>(line.strip_prefix("data:").map_or(line, str::trim)).ok()
        })
        .find(|m| m.get("id") == Some(&json!(1)))
        .unwrap_or_else(|| panic!("no answer in {response}"))
}

/// Polls `tasks/get` until task `id` leaves `working` (at most 20 s).
fn task_until_not_working(port: u16, id: &str) -> Value {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let state = rpc_2026(port, "tasks/get", json!({"taskId": id}))["result"].clone();
        if state["status"] != "working" || std::time::Instant::now() > until {
            return state;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// Review 26, F10: what `serve --input-before-task TOOL` changes, through
/// the binary. The stock `tool` serves no tool with task support, so the
/// flag only warns there; a program built on tool-cli with a task tool
/// (the fixtures binary's `cli_fixture_confirm_task`, which asks whether to
/// proceed) answers a task call at once with a task that waits in
/// `input_required` without the flag, and with it asks in an
/// input-required result first and creates the task only once answered.
#[test]
fn input_before_task_asks_a_task_tools_first_input_before_its_task() {
    // `serve --help` says what the flag changes, and that a program whose
    // tools have no task support (the stock `tool`) gives it nothing.
    let help = std::process::Command::new(crate::support::TOOL)
        .args(["serve", "--help"])
        .output()
        .expect("tool runs");
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for said in [
        "Affects only calls from 2026-07-28 clients that declare the tasks extension, and only \
         tools with task support",
        "A name that is not a served tool with task support is not affected (a warning at \
         start says so); when no served tool has task support the flag does nothing.",
    ] {
        assert!(help.contains(said), "{said:?} not in: {help}");
    }

    let (ws, state) = (TempDir::new(), TempDir::new());
    let (mut stock, _, lines) = serve_http_with(
        crate::support::TOOL,
        &[
            "--workspace",
            ws.arg(),
            "--input-before-task",
            "bash_command",
        ],
        &[("XDG_STATE_HOME", state.path())],
    );
    let _ = stock.kill();
    let _ = stock.wait();
    assert!(
        lines.iter().any(|l| l.contains(
            "--input-before-task bash_command: no served tool of that name has task support"
        )),
        "{lines:?}"
    );

    let tool_name = "cli_fixture_confirm_task";
    let yes = json!({"proceed": {"action": "accept", "content": {"proceed": true}}});
    for before in [false, true] {
        let flag: &[&str] = if before {
            &["--input-before-task", tool_name]
        } else {
            &[]
        };
        let (mut child, port, lines) = serve_http_with(
            BIN,
            &[&["--workspace", ws.arg()], flag].concat(),
            &[
                ("XDG_STATE_HOME", state.path()),
                ("TOOL_FIXTURES_TASKS", std::path::Path::new("1")),
            ],
        );
        assert!(!lines.iter().any(|l| l.contains("warning")), "{lines:?}");
        let call = json!({"name": tool_name, "arguments": {}});
        let first = rpc_2026(port, "tools/call", call.clone());
        let task = if before {
            // Asked first, no task yet.
            let result = &first["result"];
            assert_eq!(result["resultType"], "input_required", "{first}");
            assert_eq!(
                result["inputRequests"]["proceed"]["params"]["message"], "Proceed?",
                "{first}"
            );
            assert!(result.get("taskId").is_none(), "{first}");
            let mut again = call.clone();
            again["inputResponses"] = yes.clone();
            again["requestState"] = result["requestState"].clone();
            let created = rpc_2026(port, "tools/call", again);
            assert_eq!(created["result"]["resultType"], "task", "{created}");
            created["result"]["taskId"]
                .as_str()
                .expect("a task")
                .to_owned()
        } else {
            // A task at once, waiting for the answer.
            assert_eq!(first["result"]["resultType"], "task", "{first}");
            let id = first["result"]["taskId"]
                .as_str()
                .expect("a task")
                .to_owned();
            let parked = task_until_not_working(port, &id);
            assert_eq!(parked["status"], "input_required", "{parked}");
            assert!(parked["inputRequests"]["proceed"].is_object(), "{parked}");
            let ack = rpc_2026(
                port,
                "tasks/update",
                json!({"taskId": id, "inputResponses": yes}),
            );
            assert!(ack.get("error").is_none(), "{ack}");
            id
        };
        let done = task_until_not_working(port, &task);
        assert_eq!(done["status"], "completed", "before {before}: {done}");
        assert_eq!(done["result"]["content"][0]["text"], "proceeded", "{done}");
        let _ = child.kill();
        let _ = child.wait();
    }
}
