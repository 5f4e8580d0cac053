//! `tool serve --state` against a real `redis-server` (feature `redis`;
//! skipped loudly when none is installed): review 32's findings on the
//! shared state store. Every test name starts with `serve_state`, the
//! filter of CI's Redis step.
//!
//! - F2: with the store unreachable, every call that changes state is
//!   refused naming the store, and nothing is written to the workspace.
//! - F3 / F4: the start check and `GET /health` write and read under the
//!   deployment's prefix with its ACL user; no user part of the URL is
//!   ever printed.
//! - F1: background jobs are one registry across replicas: started on one,
//!   listed, read and killed on another; a job whose replica died reads as
//!   lost; none starts while the store is down.
//! - F9: `--state-max-keys` caps the keys a deployment creates.
//!
//! The replicas are `tool serve --http` processes on one workspace, each
//! with its own `XDG_STATE_HOME` (as on separate machines), spoken to in
//! the stateless MCP era with one `traceparent`, as clients behind a load
//! balancer do.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{Served, TempDir, tool};

/// The password of the test's ACL user `agent`.
const PASSWORD: &str = "Pa55-redis-not-for-logs";
/// One trace for every call of a test (W3C traceparent).
const TRACE: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free loopback port")
}

/// A redis-server child on a loopback port with ACL user `agent` (all
/// keys, all commands) and the default user off; killed on drop.
struct Redis {
    child: Child,
    port: u16,
    _dir: TempDir,
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Redis {
    /// Starts one with `users` (more `--user ...` rules), or `None` with a
    /// loud message when no redis-server is installed.
    fn start(users: &[&str]) -> Option<Self> {
        let Some(bin) = std::env::var_os("REDIS_SERVER")
            .map(PathBuf::from)
            .or_else(|| {
                std::env::split_paths(&std::env::var_os("PATH")?)
                    .map(|d| d.join("redis-server"))
                    .find(|p| p.is_file())
            })
        else {
            eprintln!(
                "\n!!! SKIPPED: no redis-server (apt-get install redis-server); the \
                 `tool serve --state` tests did not run !!!\n"
            );
            return None;
        };
        let dir = TempDir::new();
        let port = free_port();
        let child = Command::new(bin)
            .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
            .arg("--dir")
            .arg(dir.path())
            .args(["--save", "", "--appendonly", "no"])
            .args(["--user", "default", "off"])
            .args([
                "--user",
                "agent",
                "on",
                &format!(">{PASSWORD}"),
                "~*",
                "+@all",
            ])
            .args(users)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("redis-server starts");
        let redis = Self {
            child,
            port,
            _dir: dir,
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while redis.command(&["PING"]) != "+PONG" {
            assert!(Instant::now() < deadline, "redis-server did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(redis)
    }

    /// The URL of `user` with `password`.
    fn url_of(&self, user: &str, password: &str) -> String {
        format!("redis://{user}:{password}@127.0.0.1:{}/0", self.port)
    }

    /// Runs one command as `agent` (RESP over TCP); its first reply line
    /// (empty when the server does not answer).
    fn command(&self, args: &[&str]) -> String {
        let Ok(mut conn) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return String::new();
        };
        let _ = conn.set_read_timeout(Some(Duration::from_secs(5)));
        let encode = |args: &[&str]| {
            let mut out = format!("*{}\r\n", args.len());
            for a in args {
                out.push_str(&format!("${}\r\n{a}\r\n", a.len()));
            }
            out
        };
        let request = encode(&["AUTH", "agent", PASSWORD]) + &encode(args);
        if conn.write_all(request.as_bytes()).is_err() {
            return String::new();
        }
        let mut reader = BufReader::new(conn);
        let mut lines = [String::new(), String::new()];
        for line in &mut lines {
            if reader.read_line(line).is_err() {
                return String::new();
            }
        }
        lines[1].trim_end().to_owned()
    }

    /// Kills the server now.
    fn kill(&mut self) {
        self.child.kill().expect("kill redis-server");
        self.child.wait().expect("reap redis-server");
    }
}

/// A private file (mode 600) holding `text`.
fn private_file(dir: &Path, name: &str, text: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, format!("{text}\n")).expect("write");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).expect("chmod");
    path
}

/// One `tool serve --http` replica, killed on drop.
struct Replica {
    /// The child; `served.url` is `http://127.0.0.1:PORT/mcp`.
    served: Served,
    _state: TempDir,
}

impl Replica {
    /// Serves `ws` with the store URL of `state_file`, key prefix `prefix`,
    /// its own state folder, the sandbox off, and `extra` options.
    fn start(ws: &TempDir, state_file: &Path, prefix: &str, extra: &[&str]) -> Self {
        let state = TempDir::new();
        let mut cmd = tool();
        cmd.env("XDG_STATE_HOME", state.path())
            .args(["serve", "--http", "127.0.0.1:0", "--workspace", ws.arg()])
            .args(["--no-index", "--sandbox", "off", "--state-file"])
            .arg(state_file)
            .args(["--state-prefix", prefix])
            .args(extra);
        Self {
            served: Served::start(cmd),
            _state: state,
        }
    }

    /// `GET /health`'s status code.
    async fn health(&self) -> u16 {
        let url = self.served.url.replace("/mcp", "/health");
        reqwest::get(url)
            .await
            .map(|r| r.status().as_u16())
            .unwrap_or(0)
    }

    /// `tools/call` of `name` in the stateless era, trace [`TRACE`]: the
    /// result (`isError`, `content`, ...).
    async fn call(&self, name: &str, arguments: Value) -> Value {
        let body = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "state-test", "version": "1"},
                "traceparent": TRACE,
            }},
        });
        let response = reqwest::Client::new()
            .post(&self.served.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2026-07-28")
            .header("mcp-method", "tools/call")
            .header("mcp-name", name)
            .body(body.to_string())
            .send()
            .await
            .expect("the replica answers");
        let text = response.text().await.expect("a body");
        let message = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim)
            .chain(std::iter::once(text.trim()))
            .filter_map(|d| serde_json::from_str::<Value>(d).ok())
            .find(|m| m.get("result").is_some() || m.get("error").is_some())
            .unwrap_or_else(|| panic!("no JSON-RPC answer in {text:?}"));
        assert!(message.get("error").is_none(), "{message}");
        message["result"].clone()
    }
}

/// The text blocks of a result, joined.
fn text(result: &Value) -> String {
    result["content"]
        .as_array()
        .map(|blocks| {
            blocks
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn is_error(result: &Value) -> bool {
    result["isError"] == true
}

/// A workspace, a folder for the secrets, and the state file of `url`.
fn setup(url: &str) -> (TempDir, TempDir, PathBuf) {
    let ws = TempDir::new();
    let secrets = TempDir::new();
    let state_file = private_file(secrets.path(), "redis-url", url);
    (ws, secrets, state_file)
}

/// Review 32 F2: with Redis down, `write_file` of a new file and
/// `apply_patch` Add File changed the workspace and answered success, and
/// `edit_file` of a file read before blamed a missing read ("Use
/// `read_file` first"), so a model would loop on `read_file`. Every call that records or
/// checks the read ledger is now refused naming the store, writing nothing;
/// `todo_write` gives no size advice; a background job does not start
/// (F1); `GET /health` answers 503.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_state_store_down_refuses_every_state_change_and_writes_nothing() {
    let Some(mut redis) = Redis::start(&[]) else {
        return;
    };
    let (ws, _secrets, state_file) = setup(&redis.url_of("agent", PASSWORD));
    std::fs::write(ws.path().join("a.txt"), "one\n").expect("write");
    let replica = Replica::start(&ws, &state_file, "solo", &[]);
    assert_eq!(replica.health().await, 200);
    let read = replica
        .call("read_file", json!({"file_path": "a.txt"}))
        .await;
    assert!(!is_error(&read), "{read}");
    redis.kill();

    let refused = |what: &str, result: &Value| {
        let t = text(result);
        assert!(is_error(result), "{what}: {result}");
        assert!(t.contains("cannot be reached"), "{what}: {t}");
        assert!(t.contains("redis://***@127.0.0.1:"), "{what}: {t}");
        assert!(!t.contains("Use read_file first"), "{what}: {t}");
        assert!(
            !t.contains(PASSWORD) && !t.contains("agent:"),
            "{what}: {t}"
        );
    };
    let r = replica
        .call(
            "write_file",
            json!({"file_path": "new.txt", "content": "x\n"}),
        )
        .await;
    refused("write_file of a new file", &r);
    assert!(text(&r).contains("Nothing was written"), "{r}");
    let r = replica
        .call(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Add File: p.txt\n+added\n*** End Patch\n"}),
        )
        .await;
    refused("apply_patch Add File", &r);
    let r = replica
        .call(
            "edit_file",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        )
        .await;
    refused("edit_file of a file read before", &r);
    let r = replica
        .call(
            "write_file",
            json!({"file_path": "a.txt", "content": "over\n"}),
        )
        .await;
    refused("write_file over a file read before", &r);
    let r = replica
        .call(
            "apply_patch",
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n-one\n+two\n*** End Patch\n"}),
        )
        .await;
    refused("apply_patch Update File", &r);
    assert!(!ws.path().join("new.txt").exists());
    assert!(!ws.path().join("p.txt").exists());
    assert_eq!(
        std::fs::read_to_string(ws.path().join("a.txt")).unwrap(),
        "one\n"
    );

    let r = replica
        .call(
            "todo_write",
            json!({"todos": [{"content": "x", "status": "pending"}]}),
        )
        .await;
    refused("todo_write", &r);
    assert!(!text(&r).contains("Shorten"), "{r}");
    let r = replica
        .call(
            "bash_command",
            json!({"command": "echo started > job.txt", "run_in_background": true}),
        )
        .await;
    refused("a background job", &r);
    std::thread::sleep(Duration::from_millis(300));
    assert!(!ws.path().join("job.txt").exists(), "the job ran");
    assert_eq!(replica.health().await, 503);
}

/// The SECURITY.md least-privilege ACL user, limited to `team-a:*`.
fn team_a_user(password: &str) -> Vec<String> {
    let mut rules: Vec<String> = ["--user", "teama", "on"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    rules.push(format!(">{password}"));
    rules.push("~team-a:*".to_owned());
    rules.push("+ping".to_owned());
    rules.extend(
        tool_core::state::redis_store::ACL_COMMANDS
            .split_whitespace()
            .map(str::to_owned),
    );
    rules
}

/// Review 32 F3 and F4: a `--state-prefix` the ACL user may not use passed
/// the start check (a `PING`) and `GET /health`, and every call then failed
/// with NOPERM; a password written as `redis://PASSWORD@host` was printed
/// in the start error. The start check now writes and reads under the
/// prefix with the configured user (status 2, the prefix named), so does
/// `/health` (503 once the user loses the prefix), and no message shows
/// any of the URL's user part. `--state-max-keys` bounds the keys (F9).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_state_checks_its_prefix_with_the_acl_user_at_start_and_in_health() {
    const TEAM_PASSWORD: &str = "t3am-a-Pa55-xyz";
    let rules = team_a_user(TEAM_PASSWORD);
    let rules: Vec<&str> = rules.iter().map(String::as_str).collect();
    let Some(redis) = Redis::start(&rules) else {
        return;
    };
    let team_url = redis.url_of("teama", TEAM_PASSWORD);
    let serve = |url: &str, prefix: &str| {
        crate::support::run([
            "serve",
            "--no-index",
            "--state",
            url,
            "--state-prefix",
            prefix,
        ])
    };
    let out = serve(&team_url, "team-b");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("NOPERM"), "{stderr}");
    assert!(stderr.contains("prefix `team-b`"), "{stderr}");
    assert!(!stderr.contains(TEAM_PASSWORD), "{stderr}");
    // The right prefix starts (stdin closed: it ends after the banner).
    let out = serve(&team_url, "team-a");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("over stdio"), "{stderr}");

    // F4: a password without its `:` is read as a user name: never shown.
    let secret = "s3cretPW-without-colon";
    let out = serve(
        &format!("redis://{secret}@127.0.0.1:{}/0", redis.port),
        "team-a",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(!stderr.contains(secret), "{stderr}");
    assert!(stderr.contains("redis://***@127.0.0.1:"), "{stderr}");

    // /health follows what the user may do on the prefix.
    let (ws, _secrets, state_file) = setup(&team_url);
    std::fs::write(ws.path().join("a.txt"), "one\n").expect("write");
    let replica = Replica::start(&ws, &state_file, "team-a", &["--state-max-keys", "2"]);
    assert_eq!(replica.health().await, 200);
    // F9: the probe's key and one trace's ledger fill the cap of 2; a call
    // that would create another key is refused, naming the cap.
    let r = replica
        .call("read_file", json!({"file_path": "a.txt"}))
        .await;
    assert!(!is_error(&r), "{r}");
    let r = replica.call("todo_read", json!({})).await;
    assert!(!is_error(&r), "reads create nothing: {r}");
    let r = replica
        .call(
            "todo_write",
            json!({"todos": [{"content": "x", "status": "pending"}]}),
        )
        .await;
    assert!(is_error(&r), "{r}");
    assert!(text(&r).contains("--state-max-keys"), "{r}");
    assert_eq!(
        replica.health().await,
        200,
        "a full deployment still serves"
    );

    assert_eq!(
        redis.command(&["ACL", "SETUSER", "teama", "resetkeys", "~team-z:*"]),
        "+OK"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(replica.health().await, 503);
    assert_eq!(
        redis.command(&["ACL", "SETUSER", "teama", "resetkeys", "~team-a:*"]),
        "+OK"
    );
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(replica.health().await, 200);
}

/// The job id in a start result's text ("Started background job ID: ...").
fn job_id(result: &Value) -> String {
    let t = text(result);
    t.split_whitespace()
        .find(|w| w.starts_with("job-"))
        .map(|w| w.trim_end_matches(':').to_owned())
        .unwrap_or_else(|| panic!("no job id in {t:?}"))
}

/// Calls `job_output` on `replica` until the job is no longer running (at
/// most `within`); every text returned, joined, and the last result.
async fn read_to_end(replica: &Replica, id: &str, within: Duration) -> (String, Value) {
    let until = Instant::now() + within;
    let mut seen = String::new();
    loop {
        let r = replica
            .call("job_output", json!({"job_id": id, "wait": 2}))
            .await;
        assert!(!is_error(&r), "{r}");
        seen.push_str(&text(&r));
        seen.push('\n');
        if !text(&r).lines().any(|l| l.ends_with(": running")) {
            return (seen, r);
        }
        assert!(Instant::now() < until, "still running: {seen}");
    }
}

/// Review 32 F1: the job registry was per replica (each replica's state
/// folder): through a load balancer `job_list` and `job_output` alternated
/// between the job and "no job". A job now runs on the replica that started
/// it, which mirrors it into the store: the other replica lists it, reads
/// its output to the end, and kills another; a job whose replica was
/// killed (`SIGKILL`) reads as lost there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_state_jobs_are_one_registry_across_replicas() {
    let Some(_redis) = Redis::start(&[]) else {
        return;
    };
    let (ws, _secrets, state_file) = setup(&_redis.url_of("agent", PASSWORD));
    let mut a = Replica::start(&ws, &state_file, "jobs", &[]);
    let b = Replica::start(&ws, &state_file, "jobs", &[]);

    let started = a
        .call(
            "bash_command",
            json!({"command": "echo first-line; sleep 2; echo bg-done", "run_in_background": true}),
        )
        .await;
    assert!(!is_error(&started), "{started}");
    let id = job_id(&started);
    let listed = b.call("job_list", json!({})).await;
    assert!(text(&listed).contains(&id), "{listed}");
    let (seen, last) = read_to_end(&b, &id, Duration::from_secs(30)).await;
    assert!(
        seen.contains("first-line") && seen.contains("bg-done"),
        "{seen}"
    );
    assert!(text(&last).contains("exited with code 0"), "{last}");
    // What B read is read: A has nothing new, and the same status.
    let on_a = a.call("job_output", json!({"job_id": id})).await;
    assert!(text(&on_a).contains("(no new output)"), "{on_a}");
    assert!(text(&on_a).contains("exited with code 0"), "{on_a}");

    // A job started on A, killed from B.
    let long = a
        .call(
            "bash_command",
            json!({"command": "echo tick; sleep 120", "run_in_background": true}),
        )
        .await;
    let long_id = job_id(&long);
    let killed = b.call("job_kill", json!({"job_id": long_id})).await;
    assert!(!is_error(&killed), "{killed}");
    assert!(text(&killed).contains("killed"), "{killed}");
    let listed = a.call("job_list", json!({})).await;
    let line = text(&listed)
        .lines()
        .find(|l| l.contains(&long_id))
        .unwrap_or_default()
        .to_owned();
    assert!(line.contains("killed"), "{listed}");

    // A replica SIGKILLed with a running job: the other reads it as lost
    // once the replica's mirror went silent.
    let orphan = a
        .call(
            "bash_command",
            json!({"command": "sleep 120", "run_in_background": true}),
        )
        .await;
    let orphan_id = job_id(&orphan);
    a.served.child.kill().expect("SIGKILL replica A");
    a.served.child.wait().expect("reap replica A");
    let (_, last) = read_to_end(&b, &orphan_id, Duration::from_secs(30)).await;
    assert!(text(&last).contains("lost"), "{last}");
    assert!(text(&last).contains("replica"), "{last}");
}
