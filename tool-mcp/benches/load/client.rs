//! The load client of `benches/load`: `sessions` MCP sessions (rmcp's client
//! through [`McpToolSource::http`]) against one `tool serve --http` server for
//! `seconds`, each in its own folder `s<i>/` of the served workspace, calling
//! `read_file`, `grep_content` and `edit_file` (after a read) in turn and
//! checking every answer's content against what the session knows the file
//! holds; next to them, clients that disconnect mid-call and raw HTTP posts
//! that are malformed or oversized, each of which must get its 4xx answer.
//! The server's RSS (`VmRSS` of `/proc/PID/status`) is sampled every second,
//! during the load and for `settle` after it.
//!
//! Shared by the bench (`benches/load/main.rs`) and the small CI run in
//! `tool-cli/tests/cli/load.rs` (included there by path).
//!
//! Bounds: loopback addresses only, at most [`MAX_SESSIONS`] sessions and
//! [`MAX_SECONDS`] seconds, every call with a [`CALL_TIMEOUT`].

#![allow(dead_code, unreachable_pub)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_core::ToolContext;
use tool_mcp::{McpConnection, McpToolSource, ProtocolEra};

/// Most sessions one run may open (2 000).
pub const MAX_SESSIONS: usize = 2000;
/// Longest load one run may apply (3 600 s).
pub const MAX_SECONDS: f64 = 3600.0;
/// Timeout of every call (30 s); a call that runs out is a wrong answer.
pub const CALL_TIMEOUT: Duration = Duration::from_secs(30);
/// Data lines of each session's file.
const LINES: usize = 40;
/// Wrong answers kept word for word (the rest are counted).
const KEPT: usize = 20;

/// What to run.
#[derive(Debug, Clone)]
pub struct Config {
    /// The server's address (loopback).
    pub addr: SocketAddr,
    /// The served workspace (the client writes each session's folder first).
    pub workspace: PathBuf,
    /// Concurrent MCP sessions.
    pub sessions: usize,
    /// Seconds of load.
    pub seconds: f64,
    /// The server's process id, for RSS samples.
    pub server_pid: Option<u32>,
    /// Seconds of RSS samples after the load.
    pub settle: u64,
    /// Clients that disconnect mid-call (next to the sessions; at most
    /// [`MAX_SESSIONS`]).
    pub disconnectors: usize,
    /// How they disconnect.
    pub disconnect: Disconnect,
}

/// How a disconnecting client goes away.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disconnect {
    /// Half of the time each way below.
    Both,
    /// An rmcp session closed 0-5 ms into a call.
    Session,
    /// Half a raw POST, then the socket closes.
    Raw,
}

/// One second of the run.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// Seconds since the load started.
    pub at: f64,
    /// The server's RSS, in KiB (0 when unknown).
    pub rss_kib: u64,
    /// Session calls answered in the second before.
    pub calls: u64,
}

/// What the run found.
#[derive(Debug, Default)]
pub struct Report {
    /// Session calls answered (and checked).
    pub calls: u64,
    /// Wrong answers (wrong content, error results, timeouts), counted.
    pub wrong: u64,
    /// The first [`KEPT`] wrong answers.
    pub wrong_kept: Vec<String>,
    /// Latency of every session call, in microseconds, sorted.
    pub latencies_us: Vec<u64>,
    /// Calls abandoned mid-flight by a disconnecting client.
    pub disconnects: u64,
    /// Raw malformed or oversized posts sent.
    pub raw_sent: u64,
    /// Raw posts that did not get the expected answer.
    pub raw_wrong: u64,
    /// How often each raw case got each status.
    pub raw_statuses: Vec<((&'static str, u16), u64)>,
    /// RSS and throughput once a second, load and settle.
    pub samples: Vec<Sample>,
    /// RSS before the load, in KiB.
    pub rss_before_kib: u64,
    /// RSS when the load ended, in KiB.
    pub rss_end_kib: u64,
    /// RSS after the settle time, in KiB.
    pub rss_after_kib: u64,
    /// A fresh session got a correct answer after the load.
    pub answers_after: bool,
    /// Seconds the load ran.
    pub elapsed: f64,
}

impl Report {
    /// The `q` quantile (0..=1) of the latencies, in milliseconds.
    pub fn quantile_ms(&self, q: f64) -> f64 {
        if self.latencies_us.is_empty() {
            return 0.0;
        }
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            clippy::cast_precision_loss
        )]
        let i = ((self.latencies_us.len() - 1) as f64 * q).round() as usize;
        self.latencies_us.get(i).copied().unwrap_or_default() as f64 / 1000.0
    }

    /// Whether the RSS after the settle time is at most 5 % (and 2 MiB)
    /// above the RSS when the load ended: no growth once the load stops.
    pub fn rss_stable(&self) -> bool {
        self.rss_after_kib <= self.rss_end_kib + (self.rss_end_kib / 20).max(2048)
    }

    /// A multi-line summary.
    pub fn summary(&self, cfg: &Config) -> String {
        let mut s = format!(
            "load: {} sessions x {:.0} s (held {:.1} s): {} calls ({:.0}/s), wrong {}, p50 {:.2} ms, p99 {:.2} ms, max {:.2} ms\n\
             disconnects mid-call {}, raw malformed/oversized posts {} (wrong answers {})\n\
             RSS before {} KiB, end of load {} KiB, after {} s settle {} KiB; answers after the load: {}\n",
            cfg.sessions,
            cfg.seconds,
            self.elapsed,
            self.calls,
            self.calls as f64 / self.elapsed.max(0.001),
            self.wrong,
            self.quantile_ms(0.5),
            self.quantile_ms(0.99),
            self.quantile_ms(1.0),
            self.disconnects,
            self.raw_sent,
            self.raw_wrong,
            self.rss_before_kib,
            self.rss_end_kib,
            cfg.settle,
            self.rss_after_kib,
            self.answers_after,
        );
        for ((what, code), n) in &self.raw_statuses {
            s.push_str(&format!("  raw {what}: {code} x {n}\n"));
        }
        s.push_str("  t(s)  RSS(KiB)  calls/s\n");
        for x in &self.samples {
            s.push_str(&format!("{:6.0} {:9} {:8}\n", x.at, x.rss_kib, x.calls));
        }
        for w in &self.wrong_kept {
            s.push_str(&format!("wrong: {w}\n"));
        }
        s
    }
}

/// `VmRSS` of process `pid`, in KiB.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Counters shared by the workers.
#[derive(Default)]
struct Shared {
    calls: AtomicU64,
    wrong: AtomicU64,
    wrong_kept: Mutex<Vec<String>>,
    latencies: Mutex<Vec<u64>>,
    disconnects: AtomicU64,
    raw_sent: AtomicU64,
    raw_wrong: AtomicU64,
    raw_statuses: Mutex<std::collections::BTreeMap<(&'static str, u16), u64>>,
}

impl Shared {
    fn wrong(&self, what: String) {
        self.wrong.fetch_add(1, Ordering::Relaxed);
        if let Ok(mut kept) = self.wrong_kept.lock()
            && kept.len() < KEPT
        {
            kept.push(what);
        }
    }
}

fn url(addr: SocketAddr) -> String {
    format!("http://{addr}/mcp")
}

fn args(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The data line `j` of session `i`.
pub fn data_line(i: usize, j: usize) -> String {
    format!("s{i} line {j} marker-{i}-{j}")
}

/// Writes session `i`'s folder and file; returns the file's path for the tools.
pub fn seed(workspace: &Path, i: usize) -> std::io::Result<String> {
    let dir = workspace.join(format!("s{i}"));
    std::fs::create_dir_all(&dir)?;
    let mut text: String = (0..LINES)
        .map(|j| format!("{}\n", data_line(i, j)))
        .collect();
    text.push_str("counter: 0\n");
    std::fs::write(dir.join("data.txt"), text)?;
    Ok(format!("s{i}/data.txt"))
}

/// Checks a `read_file` answer for session `i` with the counter at `counter`.
pub fn check_read(i: usize, counter: u64, r: &tool_core::ToolResult) -> Result<(), String> {
    if let Some(e) = &r.error {
        return Err(format!("read_file error: {}", e.message));
    }
    for j in 0..LINES {
        let want = format!("{}: {}\n", j + 1, data_line(i, j));
        if !r.output.contains(&want) {
            return Err(format!("read_file lacks {want:?}: {:?}", clip(&r.output)));
        }
    }
    let want = format!("{}: counter: {counter}\n", LINES + 1);
    if !r.output.contains(&want) {
        return Err(format!("read_file lacks {want:?}: {:?}", clip(&r.output)));
    }
    if r.output.matches("marker-").count() != LINES
        || !r.output.contains(&format!("total {} lines", LINES + 1))
    {
        return Err(format!("read_file has other lines: {:?}", clip(&r.output)));
    }
    Ok(())
}

/// Checks a `grep_content` answer for `marker-<i>-` in session `i`'s folder.
pub fn check_grep(i: usize, r: &tool_core::ToolResult) -> Result<(), String> {
    if let Some(e) = &r.error {
        return Err(format!("grep_content error: {}", e.message));
    }
    if !r.output.starts_with(&format!("Found {LINES} matches")) {
        return Err(format!("grep_content count: {:?}", clip(&r.output)));
    }
    for j in 0..LINES {
        let want = format!("Line {}: {}", j + 1, data_line(i, j));
        if !r.output.lines().any(|l| l.trim() == want) {
            return Err(format!(
                "grep_content lacks {want:?}: {:?}",
                clip(&r.output)
            ));
        }
    }
    if r.output.matches("marker-").count() != LINES {
        return Err(format!(
            "grep_content has other lines: {:?}",
            clip(&r.output)
        ));
    }
    Ok(())
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

/// One timed call; a timeout or closed connection shows as an error result.
async fn timed(
    shared: &Shared,
    conn: &McpConnection,
    tool: &str,
    arguments: Value,
) -> tool_core::ToolResult {
    let start = Instant::now();
    let r = conn.call(tool, args(arguments), &ToolContext::new()).await;
    #[allow(clippy::cast_possible_truncation)]
    let us = start.elapsed().as_micros() as u64;
    shared.calls.fetch_add(1, Ordering::Relaxed);
    if let Ok(mut l) = shared.latencies.lock() {
        l.push(us);
    }
    r
}

/// Session `i`: read, grep, read + edit, in turn, until `deadline`.
async fn session(cfg: Arc<Config>, i: usize, deadline: Instant, shared: Arc<Shared>) {
    let file = match seed(&cfg.workspace, i) {
        Ok(f) => f,
        Err(e) => return shared.wrong(format!("session {i}: cannot seed its folder: {e}")),
    };
    let conn = match McpToolSource::http(url(cfg.addr))
        .named(format!("load{i}"))
        .with_timeout(CALL_TIMEOUT)
        .with_connect_timeout(CALL_TIMEOUT)
        // Sessions: one ledger per session (read then edit in one session).
        .with_era(ProtocolEra::Initialize)
        .connect()
        .await
    {
        Ok(c) => c,
        Err(e) => return shared.wrong(format!("session {i}: connect: {e}")),
    };
    let mut counter = 0u64;
    let mut step = 0u64;
    // At least one call per session, however loaded the machine is.
    while step == 0 || Instant::now() < deadline {
        let checked = match step % 3 {
            0 => {
                let r = timed(&shared, &conn, "read_file", json!({"file_path": file})).await;
                check_read(i, counter, &r)
            }
            1 => {
                let r = timed(
                    &shared,
                    &conn,
                    "grep_content",
                    json!({"pattern": format!("marker-{i}-"), "path": format!("s{i}")}),
                )
                .await;
                check_grep(i, &r)
            }
            _ => {
                let r = timed(&shared, &conn, "read_file", json!({"file_path": file})).await;
                match check_read(i, counter, &r) {
                    Err(e) => Err(e),
                    Ok(()) => {
                        let r = timed(
                            &shared,
                            &conn,
                            "edit_file",
                            json!({"file_path": file,
                                "old_string": format!("counter: {counter}\n"),
                                "new_string": format!("counter: {}\n", counter + 1)}),
                        )
                        .await;
                        match (&r.error, r.output.as_str()) {
                            (None, "Edit applied successfully.") => {
                                counter += 1;
                                Ok(())
                            }
                            (Some(e), _) => Err(format!("edit_file error: {}", e.message)),
                            (None, other) => Err(format!("edit_file answer: {other:?}")),
                        }
                    }
                }
            }
        };
        if let Err(e) = checked {
            shared.wrong(format!("session {i} step {step}: {e}"));
            // The session's view may be off now; re-learn the counter from disk.
            if let Ok(text) = std::fs::read_to_string(cfg.workspace.join(&file))
                && let Some(n) = text
                    .lines()
                    .find_map(|l| l.strip_prefix("counter: "))
                    .and_then(|n| n.parse().ok())
            {
                counter = n;
            }
        }
        step += 1;
    }
    conn.close();
}

/// A small deterministic generator (xorshift64).
fn next(seed: &mut u64) -> u64 {
    *seed ^= *seed << 13;
    *seed ^= *seed >> 7;
    *seed ^= *seed << 17;
    *seed
}

/// A client that opens a session, starts a call and goes away before the
/// answer (a timeout of 0-5 ms), or writes half a request over raw TCP and
/// closes the socket, until `deadline`.
async fn disconnector(cfg: Arc<Config>, n: usize, deadline: Instant, shared: Arc<Shared>) {
    let mut seed = 0x9E37_79B9_7F4A_7C15_u64 ^ (n as u64 + 1);
    let file = match seed_file(&cfg.workspace, n) {
        Ok(f) => f,
        Err(e) => return shared.wrong(format!("disconnector {n}: {e}")),
    };
    // At least one round, however loaded the machine is.
    let mut first = true;
    while std::mem::take(&mut first) || Instant::now() < deadline {
        let coin = next(&mut seed) % 2 == 0;
        if cfg.disconnect == Disconnect::Session || (cfg.disconnect == Disconnect::Both && coin) {
            let Ok(conn) = McpToolSource::http(url(cfg.addr))
                .named(format!("drop{n}"))
                .with_connect_timeout(CALL_TIMEOUT)
                .with_era(ProtocolEra::Initialize)
                .connect()
                .await
            else {
                shared.wrong(format!("disconnector {n}: connect failed"));
                continue;
            };
            let wait = Duration::from_micros(next(&mut seed) % 5000);
            let ctx = ToolContext::new();
            let call = conn.call(
                "grep_content",
                args(json!({"pattern": "marker-", "path": file})),
                &ctx,
            );
            if tokio::time::timeout(wait, call).await.is_err() {
                shared.disconnects.fetch_add(1, Ordering::Relaxed);
            }
            conn.close();
            drop(conn);
        } else {
            // Half a tools/call body, then the socket closes.
            if let Ok(mut s) = tokio::net::TcpStream::connect(cfg.addr).await {
                let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                    "params": {"name": "read_file", "arguments": {"file_path": file}}})
                .to_string();
                let head = format!(
                    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
                     Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
                    body.len()
                );
                let _ = s.write_all(head.as_bytes()).await;
                let _ = s.write_all(&body.as_bytes()[..body.len() / 2]).await;
                shared.disconnects.fetch_add(1, Ordering::Relaxed);
            }
        }
        tokio::time::sleep(Duration::from_millis(next(&mut seed) % 20)).await;
    }
}

fn seed_file(workspace: &Path, n: usize) -> std::io::Result<String> {
    let dir = workspace.join(format!("drop{n}"));
    std::fs::create_dir_all(&dir)?;
    std::fs::write(dir.join("d.txt"), "marker-x\n".repeat(1000))?;
    Ok(format!("drop{n}"))
}

/// A raw post and the status it must get.
struct Raw {
    what: &'static str,
    head: String,
    body: Vec<u8>,
    /// Acceptable statuses.
    want: &'static [u16],
    /// Send only the head (the server must answer without the body).
    head_only: bool,
}

fn raw_cases() -> Vec<Raw> {
    let post = |ctype: &str, len: usize| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: {ctype}\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {len}\r\nConnection: close\r\n\r\n"
        )
    };
    let json_body = |b: &[u8]| Raw {
        what: "",
        head: post("application/json", b.len()),
        body: b.to_vec(),
        want: &[400],
        head_only: false,
    };
    let oversized = tool_mcp::MAX_MESSAGE_BYTES + 1;
    let mut big = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{"file_path":""#.to_vec();
    big.resize(oversized, b'a');
    vec![
        Raw { what: "truncated JSON", ..json_body(br#"{"jsonrpc": "2.0", "id": 1, "method": "#) },
        Raw { what: "not JSON", ..json_body(b"\xff\xfe garbage \x00") },
        Raw { what: "JSON, not JSON-RPC", ..json_body(br#"{"hello": "world"}"#) },
        Raw { what: "a bare number", ..json_body(b"42") },
        Raw {
            what: "tools/call without a session",
            want: &[400, 404, 422],
            ..json_body(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_file","arguments":{}}}"#)
        },
        Raw {
            what: "declared oversized",
            head: post("application/json", oversized),
            body: Vec::new(),
            want: &[413],
            head_only: true,
        },
        Raw {
            what: "oversized body",
            head: post("application/json", big.len()),
            body: big,
            want: &[413],
            head_only: false,
        },
        Raw {
            what: "wrong content type",
            head: post("text/plain", 2),
            body: b"{}".to_vec(),
            want: &[400, 406, 415],
            head_only: false,
        },
    ]
}

/// Sends one raw post; the status line's code, or why there was none.
async fn send_raw(addr: SocketAddr, raw: &Raw) -> Result<u16, String> {
    let mut s = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    s.write_all(raw.head.as_bytes())
        .await
        .map_err(|e| format!("write: {e}"))?;
    if !raw.head_only {
        // The server may answer (413) and close before the whole body is in.
        let _ = s.write_all(&raw.body).await;
    }
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        match tokio::time::timeout(CALL_TIMEOUT, s.read(&mut chunk)).await {
            Err(_) => return Err("no answer in time".to_owned()),
            Ok(Ok(0)) => break,
            Ok(Ok(n)) => {
                buf.extend_from_slice(&chunk[..n]);
                if buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Ok(Err(e)) if buf.is_empty() => return Err(format!("read: {e}")),
            Ok(Err(_)) => break,
        }
    }
    let text = String::from_utf8_lossy(&buf);
    text.split_whitespace()
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or_else(|| format!("no status line in {:?}", clip(&text)))
}

/// Raw malformed and oversized posts, one case after another, until
/// `deadline` and at least until every case was sent once.
async fn raw_poster(cfg: Arc<Config>, deadline: Instant, shared: Arc<Shared>) {
    let cases = raw_cases();
    let mut n = 0usize;
    // Every case at least once, however loaded the machine is.
    while n < cases.len() || Instant::now() < deadline {
        let Some(raw) = cases.get(n % cases.len()) else {
            return;
        };
        n += 1;
        shared.raw_sent.fetch_add(1, Ordering::Relaxed);
        let sent = send_raw(cfg.addr, raw).await;
        if let (Ok(code), Ok(mut seen)) = (&sent, shared.raw_statuses.lock()) {
            *seen.entry((raw.what, *code)).or_default() += 1;
        }
        match sent {
            Ok(code) if raw.want.contains(&code) => {}
            Ok(code) => {
                shared.raw_wrong.fetch_add(1, Ordering::Relaxed);
                shared.wrong(format!(
                    "raw post ({}): status {code}, want {:?}",
                    raw.what, raw.want
                ));
            }
            Err(e) => {
                shared.raw_wrong.fetch_add(1, Ordering::Relaxed);
                shared.wrong(format!("raw post ({}): {e}", raw.what));
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Runs the load `cfg` describes; the report holds every figure.
///
/// # Errors
/// A configuration outside the bounds (not loopback, too many sessions or seconds).
pub async fn run(cfg: Config) -> Result<Report, String> {
    if !cfg.addr.ip().is_loopback() {
        return Err(format!(
            "{}: the load client only talks to loopback addresses",
            cfg.addr
        ));
    }
    if cfg.sessions == 0 || cfg.sessions > MAX_SESSIONS {
        return Err(format!("sessions must be 1..={MAX_SESSIONS}"));
    }
    if cfg.disconnectors > MAX_SESSIONS {
        return Err(format!("disconnectors must be 0..={MAX_SESSIONS}"));
    }
    if !(cfg.seconds > 0.0 && cfg.seconds <= MAX_SECONDS) {
        return Err(format!("seconds must be in (0, {MAX_SECONDS}]"));
    }
    let cfg = Arc::new(cfg);
    let shared = Arc::new(Shared::default());
    let rss = || cfg.server_pid.and_then(rss_kib).unwrap_or(0);
    let mut report = Report {
        rss_before_kib: rss(),
        ..Report::default()
    };
    let start = Instant::now();
    let deadline = start + Duration::from_secs_f64(cfg.seconds);
    let mut workers = tokio::task::JoinSet::new();
    for i in 0..cfg.sessions {
        workers.spawn(session(Arc::clone(&cfg), i, deadline, Arc::clone(&shared)));
    }
    for n in 0..cfg.disconnectors {
        workers.spawn(disconnector(
            Arc::clone(&cfg),
            n,
            deadline,
            Arc::clone(&shared),
        ));
    }
    workers.spawn(raw_poster(Arc::clone(&cfg), deadline, Arc::clone(&shared)));
    // Samples once a second until every worker has ended (bounded: each call
    // has its timeout), then for the settle time.
    let mut last_calls = 0;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    let hard_stop = deadline + CALL_TIMEOUT * 2;
    loop {
        tokio::select! {
            joined = workers.join_next() => {
                if joined.is_none() { break; }
                if let Some(Err(e)) = joined { shared.wrong(format!("a worker failed: {e}")); }
            }
            _ = tick.tick() => {
                let calls = shared.calls.load(Ordering::Relaxed);
                report.samples.push(Sample { at: start.elapsed().as_secs_f64(), rss_kib: rss(), calls: calls - last_calls });
                last_calls = calls;
                if Instant::now() > hard_stop {
                    shared.wrong("workers still running long after the deadline (hang?)".to_owned());
                    workers.abort_all();
                }
            }
        }
    }
    report.elapsed = start.elapsed().as_secs_f64();
    report.rss_end_kib = rss();
    for _ in 0..cfg.settle {
        tick.tick().await;
        report.samples.push(Sample {
            at: start.elapsed().as_secs_f64(),
            rss_kib: rss(),
            calls: 0,
        });
    }
    report.rss_after_kib = rss();
    // Still answering: a fresh session reads a fresh file.
    let probe = cfg.sessions;
    report.answers_after = match (
        seed(&cfg.workspace, probe),
        McpToolSource::http(url(cfg.addr))
            .with_timeout(CALL_TIMEOUT)
            .with_era(ProtocolEra::Initialize)
            .connect()
            .await,
    ) {
        (Ok(file), Ok(conn)) => {
            let r = conn
                .call(
                    "read_file",
                    args(json!({"file_path": file})),
                    &ToolContext::new(),
                )
                .await;
            let ok = check_read(probe, 0, &r);
            conn.close();
            if let Err(e) = &ok {
                shared.wrong(format!("after the load: {e}"));
            }
            ok.is_ok()
        }
        (Err(e), _) => {
            shared.wrong(format!("after the load: cannot seed: {e}"));
            false
        }
        (_, Err(e)) => {
            shared.wrong(format!("after the load: connect: {e}"));
            false
        }
    };
    report.calls = shared.calls.load(Ordering::Relaxed);
    report.wrong = shared.wrong.load(Ordering::Relaxed);
    report.disconnects = shared.disconnects.load(Ordering::Relaxed);
    report.raw_sent = shared.raw_sent.load(Ordering::Relaxed);
    report.raw_wrong = shared.raw_wrong.load(Ordering::Relaxed);
    report.raw_statuses = shared
        .raw_statuses
        .lock()
        .map(|m| m.iter().map(|(k, v)| (*k, *v)).collect())
        .unwrap_or_default();
    report.wrong_kept = shared
        .wrong_kept
        .lock()
        .map(|k| k.clone())
        .unwrap_or_default();
    report.latencies_us = shared
        .latencies
        .lock()
        .map(|l| l.clone())
        .unwrap_or_default();
    report.latencies_us.sort_unstable();
    Ok(report)
}
