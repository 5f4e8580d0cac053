//! Issue 26, the client half: importing servers with `--mcp-config`.
//! Bearer tokens: this project's own `tool serve --http --token-file`
//! imported with `"headers": {"Authorization": "Bearer ${VAR}"}`.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::support::{TempDir, code, one_json_line, stderr, stdout, tool};

use crate::mcp_sessions::serve;

const TOKEN: &str = "0123456789abcdef0123456789abcdef";

#[test]
fn a_token_protected_server_is_imported_with_a_bearer_header_and_named_without() {
    let (ws, state, here) = (TempDir::new(), TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("a.txt"), "behind the token\n").expect("write");
    let token_file = here.path().join("token");
    crate::support::write_private(&token_file, &format!("{TOKEN}\n"));
    let token_arg = token_file.to_str().expect("utf-8 path");
    let server = serve(&ws, &state, &["--token-file", token_arg]);

    let config = |headers: &str| {
        let path = here.path().join("mcp.json");
        std::fs::write(
            &path,
            format!(
                r#"{{"mcpServers": {{"guarded": {{"url": "{}"{headers}}}}}}}"#,
                server.url
            ),
        )
        .expect("write config");
        path
    };
    let call = |config: &std::path::Path| {
        tool()
            .env("XDG_STATE_HOME", state.path())
            .env("GUARD_TOKEN", TOKEN)
            .arg("--mcp-config")
            .arg(config)
            .args(["--workspace", here.arg(), "call", "guarded__read_file"])
            .args(["--file-path", "a.txt"])
            .output()
            .expect("tool runs")
    };

    // With the header, `${GUARD_TOKEN}` resolved in the importing program.
    let with = call(&config(
        r#", "headers": {"Authorization": "Bearer ${GUARD_TOKEN}"}"#,
    ));
    assert_eq!(code(&with), 0, "{}", stderr(&with));
    let result = one_json_line(&with);
    assert!(
        result["output"]
            .as_str()
            .unwrap_or_default()
            .contains("behind the token"),
        "{result}"
    );
    // The token is never printed.
    assert!(!stdout(&with).contains(TOKEN) && !stderr(&with).contains(TOKEN));

    // Without it: a clear error naming the server and what to add.
    let without = call(&config(""));
    assert_ne!(code(&without), 0);
    let err = stderr(&without);
    assert!(err.contains("MCP server `guarded`"), "{err}");
    assert!(
        err.contains("HTTP 401") && err.contains("Authorization"),
        "{err}"
    );

    // A wrong token: refused, said so, the token not shown.
    let wrong = call(&config(
        r#", "headers": {"Authorization": "Bearer wrong-token-0000000000"}"#,
    ));
    let err = stderr(&wrong);
    assert_ne!(code(&wrong), 0);
    assert!(err.contains("refused the credentials"), "{err}");
    assert!(!err.contains("wrong-token"), "{err}");

    // An unset variable: named, and the server never contacted with a half header.
    let unset = call(&config(
        r#", "headers": {"Authorization": "Bearer ${NO_SUCH_VAR_26}"}"#,
    ));
    let err = stderr(&unset);
    assert!(err.contains("`NO_SUCH_VAR_26` is not set"), "{err}");
}

const ERA_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tool-mcp/tests/data/era_server.py"
);

#[test]
fn a_call_starts_only_the_server_of_its_tool() {
    let (ws, state, here) = (TempDir::new(), TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("a.txt"), "built-in\n").expect("write");
    let marker = here.path().join("started");
    let config = here.path().join("mcp.json");
    let marker_arg = marker.to_str().expect("utf-8 path");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            // Leaves a mark when started, then exits (so it is unavailable).
            "marker": {"command": "sh", "args": ["-c", format!("touch '{marker_arg}'; exit 1")]},
            "old": {"command": "python3", "args": [ERA_SERVER, "2025-11-25"]},
        }})
        .to_string(),
    )
    .expect("write config");
    let call = |words: &[&str]| {
        tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--mcp-config")
            .arg(&config)
            .args(["--workspace", ws.arg(), "call"])
            .args(words)
            .output()
            .expect("tool runs")
    };

    // A built-in: no server started, no warning about any.
    let builtin = call(&["read_file", "--file-path", "a.txt"]);
    assert_eq!(code(&builtin), 0, "{}", stderr(&builtin));
    assert!(!marker.exists(), "a built-in call started a server");
    assert!(
        !stderr(&builtin).contains("MCP server"),
        "{}",
        stderr(&builtin)
    );

    // Another server's tool: only that server.
    let other = call(&["old__which_era"]);
    assert_eq!(code(&other), 0, "{}", stderr(&other));
    assert!(
        stdout(&other).contains("handshake initialize"),
        "{}",
        stdout(&other)
    );
    assert!(!marker.exists(), "a call of `old`'s tool started `marker`");

    // Its own tool: started (and, exiting at once, named as unavailable).
    let own = call(&["marker__anything"]);
    assert!(
        marker.exists(),
        "the server of the called tool was not started"
    );
    assert_ne!(code(&own), 0);
    assert!(
        stderr(&own).contains("MCP server `marker`"),
        "{}",
        stderr(&own)
    );
}

/// `--mcp-sandbox` runs the configured servers in `bash_command`'s sandbox:
/// a server that writes one file in the workspace and one beside it leaves
/// only the first (judged by the files afterwards); `"sandbox": false`
/// keeps an entry out, and without the option nothing is sandboxed.
#[test]
fn mcp_sandbox_confines_the_servers_this_program_starts() {
    let (ws, state, here) = (TempDir::new(), TempDir::new(), TempDir::new());
    let config = here.path().join("mcp.json");
    let script = |tag: &str| {
        format!(
            "touch '{ws}/{tag}-inside' '{here}/{tag}-outside'; exit 1",
            ws = ws.arg(),
            here = here.path().to_str().expect("utf-8 path")
        )
    };
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {
            "boxed": {"command": "sh", "args": ["-c", script("boxed")]},
            "free": {"command": "sh", "args": ["-c", script("free")], "sandbox": false},
        }})
        .to_string(),
    )
    .expect("write config");
    let call = |extra: &[&str], tool_name: &str| {
        tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--mcp-config")
            .arg(&config)
            .args(extra)
            .args(["--workspace", ws.arg(), "call", tool_name])
            .output()
            .expect("tool runs")
    };
    let inside = |tag: &str| ws.path().join(format!("{tag}-inside"));
    let outside = |tag: &str| here.path().join(format!("{tag}-outside"));

    let boxed = call(&["--mcp-sandbox"], "boxed__anything");
    assert_ne!(code(&boxed), 0);
    assert!(inside("boxed").exists(), "{}", stderr(&boxed));
    assert!(
        !outside("boxed").exists(),
        "a sandboxed server wrote outside"
    );

    let free = call(&["--mcp-sandbox"], "free__anything");
    assert_ne!(code(&free), 0);
    assert!(inside("free").exists() && outside("free").exists());

    std::fs::remove_file(inside("boxed")).expect("remove");
    let plain = call(&[], "boxed__anything");
    assert_ne!(code(&plain), 0);
    assert!(inside("boxed").exists() && outside("boxed").exists());
}

/// `tool mcp login / logout NAME`: the cache entry of the server's URL in
/// the private state folder is deleted by `logout`; `login` on a server that
/// asks for no authorization caches nothing and says so; bad names and
/// command servers are usage errors.
#[test]
fn mcp_login_and_logout_manage_the_token_cache() {
    let (ws, state, here) = (TempDir::new(), TempDir::new(), TempDir::new());
    let server = serve(&ws, &state, &[]);
    let path = here.path().join("mcp.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"mcpServers": {{"open": {{"url": "{}", "oauth": true}},
                 "local": {{"command": "true"}}}}}}"#,
            server.url
        ),
    )
    .expect("write config");
    let mcp = |args: &[&str]| {
        tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--mcp-config")
            .arg(&path)
            .arg("mcp")
            .args(args)
            .output()
            .expect("tool runs")
    };
    // A cached entry (as a login leaves it) is deleted by logout.
    let cache = tool_mcp::TokenCache::new(state.path().join("agent-tools/mcp-oauth"));
    let key = tool_mcp::TokenCache::key(&server.url, &tool_mcp::OAuth::new()).expect("key");
    let file = cache.path_for(&key);
    std::fs::create_dir_all(cache.dir()).expect("mkdir");
    std::fs::write(&file, "{}").expect("write entry");
    let out = mcp(&["logout", "open"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Logged out of `open`"),
        "{}",
        stdout(&out)
    );
    assert!(!file.exists());
    let out = mcp(&["logout", "open"]);
    assert!(
        stdout(&out).contains("had no cached token"),
        "{}",
        stdout(&out)
    );

    // A server without authorization: login connects, lists, caches nothing.
    let out = mcp(&["login", "open"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).contains("did not ask for authorization") && stdout(&out).contains("tools"),
        "{}",
        stdout(&out)
    );
    assert!(!file.exists());

    let out = mcp(&["login", "nowhere"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("no server `nowhere`") && stderr(&out).contains("local, open"),
        "{}",
        stderr(&out)
    );
    let out = mcp(&["login", "local"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("`command` server"),
        "{}",
        stderr(&out)
    );
}

/// Lazy start for `list` and `schema`: the first `list` starts the server
/// (no cached tool list yet) and caches its list in the private state
/// folder; later `list`, `schema` and built-in calls start nothing; a call
/// of its tool starts it; a changed entry starts it again for `list`.
#[test]
fn list_and_schema_start_only_servers_without_a_fresh_cached_list() {
    let (ws, state, here) = (TempDir::new(), TempDir::new(), TempDir::new());
    std::fs::write(ws.path().join("a.txt"), "needle\n").expect("write");
    let starts = here.path().join("starts");
    let config = here.path().join("mcp.json");
    let write_config = |extra: &str| {
        let script = format!(
            "echo start >> '{}'; exec '{}' serve --workspace '{}'",
            starts.display(),
            crate::support::BIN,
            ws.arg()
        );
        std::fs::write(
            &config,
            serde_json::json!({"mcpServers": {
                "srv": {"command": "sh", "args": ["-c", script, extra], "env": {"RUST_LOG": "off"}},
            }})
            .to_string(),
        )
        .expect("write config");
    };
    let count = || {
        std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let run = |words: &[&str]| {
        tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--mcp-config")
            .arg(&config)
            .args(["--workspace", ws.arg()])
            .args(words)
            .output()
            .expect("tool runs")
    };
    write_config("first");
    let first = run(&["list"]);
    assert_eq!(code(&first), 0, "{}", stderr(&first));
    assert!(
        stdout(&first).contains("srv__read_file"),
        "{}",
        stdout(&first)
    );
    assert_eq!(count(), 1, "the first list starts the server");
    let cache = state.path().join("agent-tools/mcp-tools");
    let files: Vec<_> = std::fs::read_dir(&cache)
        .expect("the cache folder")
        .filter_map(Result::ok)
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");

    let again = run(&["list"]);
    assert_eq!(code(&again), 0, "{}", stderr(&again));
    assert_eq!(
        stdout(&again),
        stdout(&first),
        "the cached list lists the same"
    );
    let schema = run(&["schema", "srv__read_file"]);
    assert_eq!(code(&schema), 0, "{}", stderr(&schema));
    assert!(
        stdout(&schema).contains("srv__read_file"),
        "{}",
        stdout(&schema)
    );
    let builtin = run(&["call", "read_file", "--file-path", "a.txt"]);
    assert_eq!(code(&builtin), 0, "{}", stderr(&builtin));
    assert_eq!(
        count(),
        1,
        "list, schema and a built-in call started nothing"
    );

    // `serve`'s tools/list over stdio: the cached list, no start either.
    let mut served = tool()
        .env("XDG_STATE_HOME", state.path())
        .arg("--mcp-config")
        .arg(&config)
        .args(["--workspace", ws.arg(), "serve"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tool serve starts");
    {
        use std::io::Write;
        let mut input = served.stdin.take().expect("piped stdin");
        for message in [
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "test", "version": "1"}}}),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
        ] {
            writeln!(input, "{message}").expect("serve reads");
        }
        let mut lines = BufReader::new(served.stdout.take().expect("piped stdout")).lines();
        let listed = lines
            .find_map(|line| {
                let line = line.ok()?;
                let value: serde_json::Value = serde_json::from_str(&line).ok()?;
                (value["id"] == 2).then_some(value)
            })
            .expect("a tools/list answer");
        drop(input);
        let names: Vec<&str> = listed["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .filter_map(|t| t["name"].as_str())
            .collect();
        assert!(names.contains(&"srv__read_file"), "{names:?}");
    }
    let status = served.wait().expect("serve ends at end of input");
    assert!(status.success(), "{status:?}");
    assert_eq!(count(), 1, "serve's tools/list started nothing");

    let used = run(&["call", "srv__read_file", "--file-path", "a.txt"]);
    assert_eq!(code(&used), 0, "{}", stderr(&used));
    assert!(stdout(&used).contains("needle"), "{}", stdout(&used));
    assert_eq!(count(), 2, "a call of its tool starts it");

    write_config("second");
    let changed = run(&["list"]);
    assert_eq!(code(&changed), 0, "{}", stderr(&changed));
    assert_eq!(count(), 3, "a changed entry makes the cached list stale");
}

const SLOW_SERVER: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../tool-mcp/tests/data/slow_server.py"
);

/// An `.mcp.json` in `here` naming the slow server as `slow`, which records
/// what reaches it in `record`.
fn slow_config(here: &TempDir, record: &std::path::Path) -> std::path::PathBuf {
    let config = here.path().join("slow.json");
    std::fs::write(
        &config,
        serde_json::json!({"mcpServers": {"slow": {
            "command": "python3",
            "args": [SLOW_SERVER, record.to_str().expect("utf-8 path")],
        }}})
        .to_string(),
    )
    .expect("write config");
    config
}

/// The record's text once it has a line starting with `prefix`, waiting
/// at most `limit`; what it has at the end otherwise.
fn record_with(record: &std::path::Path, prefix: &str, limit: Duration) -> String {
    let until = Instant::now() + limit;
    loop {
        let text = std::fs::read_to_string(record).unwrap_or_default();
        if text.lines().any(|l| l.starts_with(prefix)) || Instant::now() >= until {
            return text;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Review 26, F1: `tool call --timeout 2` bounds a call of an imported tool
/// (before, imported tools had a fixed 60 s), and the call is cancelled on
/// the server: `notifications/cancelled` for a plain call, `tasks/cancel`
/// for a task-augmented one (the server records what reaches it).
#[test]
fn the_callers_timeout_bounds_an_imported_call_and_cancels_it_on_the_server() {
    for (name, cancelled) in [
        ("slow__wait_plain", "cancelled "),
        ("slow__wait_task", "tasks/cancel task-1"),
    ] {
        let (state, here) = (TempDir::new(), TempDir::new());
        let record = here.path().join("record");
        let config = slow_config(&here, &record);
        let started = Instant::now();
        let out = tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--mcp-config")
            .arg(&config)
            .args(["--timeout", "2", "call", name])
            .output()
            .expect("tool runs");
        let took = started.elapsed();
        assert!(took < Duration::from_secs(10), "{name} took {took:?}");
        assert_ne!(code(&out), 0);
        let result = one_json_line(&out);
        assert_eq!(result["error"]["kind"], "timeout", "{name}: {result}");
        let seen = record_with(&record, cancelled, Duration::from_secs(3));
        assert!(
            seen.lines().any(|l| l.starts_with(cancelled)),
            "{name}: the server saw {seen:?}"
        );
    }
}

/// Review 26, F2: Ctrl-C (SIGINT) during `tool call` of an imported tool
/// cancels the call on its server before the program exits with status
/// 130: `notifications/cancelled` for a plain call, `tasks/cancel` for a
/// task (the server records what reaches it), within about 2 s.
#[test]
fn ctrl_c_cancels_an_imported_call_on_its_server_before_exiting() {
    for (name, running, cancelled) in [
        ("slow__wait_plain", "started wait_plain", "cancelled "),
        ("slow__wait_task", "task task-1", "tasks/cancel task-1"),
    ] {
        let (state, here) = (TempDir::new(), TempDir::new());
        let record = here.path().join("record");
        let config = slow_config(&here, &record);
        let mut child = tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--mcp-config")
            .arg(&config)
            .args(["call", name])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tool call starts");
        let seen = record_with(&record, running, Duration::from_secs(20));
        assert!(
            seen.lines().any(|l| l.starts_with(running)),
            "{name}: the call never reached the server: {seen:?}"
        );
        let interrupted = Instant::now();
        let kill = std::process::Command::new("kill")
            .args(["-INT", &child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(kill.success());
        let status = loop {
            if let Some(status) = child.try_wait().expect("try_wait") {
                break status;
            }
            assert!(
                interrupted.elapsed() < Duration::from_secs(5),
                "{name}: still running 5 s after Ctrl-C"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(status.code(), Some(130), "{name}: {status:?}");
        let seen = record_with(&record, cancelled, Duration::from_secs(2));
        assert!(
            seen.lines().any(|l| l.starts_with(cancelled)),
            "{name}: the server saw {seen:?}"
        );
    }
}
