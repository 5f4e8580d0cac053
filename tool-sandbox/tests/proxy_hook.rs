//! The network hook on real processes (full tier): the forwarder process
//! the namespace's first process forks keeps nothing of its parent's but
//! its listeners, and `curl` inside reaches an allowed host through it.

#![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tool_core::{NetworkPolicy, SandboxPolicy, SandboxTier};
use tool_sandbox::{ProxyHook, ProxyLimits, ProxyServer, Sandbox};

/// `(pid, ppid)` of every process, from `/proc/<pid>/stat`.
fn processes() -> Vec<(i32, i32)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry.file_name().to_str().and_then(|n| n.parse().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        if let Some(ppid) = rest.split_whitespace().nth(1).and_then(|p| p.parse().ok()) {
            out.push((pid, ppid));
        }
    }
    out
}

/// The host pid of the process below `root` that is pid 2 in its own PID
/// namespace: the forwarder, the first child of the namespace's first
/// process.
fn forwarder_below(root: i32) -> Option<i32> {
    let procs = processes();
    let mut below = vec![root];
    let mut i = 0;
    while i < below.len() {
        let parent = below[i];
        below.extend(procs.iter().filter(|p| p.1 == parent).map(|p| p.0));
        i += 1;
    }
    below.into_iter().find(|pid| {
        std::fs::read_to_string(format!("/proc/{pid}/status"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find(|l| l.starts_with("NSpid:"))
                    .map(|l| l.split_whitespace().last() == Some("2"))
            })
            .unwrap_or(false)
    })
}

fn prepared(ws: &Path, proxy: &ProxyServer) -> Arc<Sandbox> {
    let policy = SandboxPolicy::default().with_tier(SandboxTier::Full);
    Arc::new(
        Sandbox::prepare_with_proxy(
            &policy,
            ws,
            Some(ws),
            Some(ProxyHook::new(proxy.socket_path())),
        )
        .unwrap(),
    )
}

#[test]
fn the_forwarder_keeps_only_its_listeners() {
    let ws = tempfile::tempdir().unwrap();
    let proxy = ProxyServer::start(
        NetworkPolicy::from_patterns(["example.com"]).unwrap(),
        ProxyLimits::default(),
        None,
    )
    .unwrap();
    let sb = prepared(ws.path(), &proxy);
    let mut c = Command::new("/bin/sh");
    c.args(["-c", "sleep 20"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    sb.apply(&mut c);
    let mut child = c.spawn().unwrap();
    let root = i32::try_from(child.id()).unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    let forwarder = loop {
        if let Some(pid) = forwarder_below(root) {
            break pid;
        }
        assert!(Instant::now() < until, "no forwarder process appeared");
        std::thread::sleep(Duration::from_millis(20));
    };
    // Its descriptors, read from the host (root reads any /proc/<pid>/fd).
    let mut fds: Vec<(i32, String)> = Vec::new();
    for entry in std::fs::read_dir(format!("/proc/{forwarder}/fd"))
        .unwrap()
        .flatten()
    {
        let fd: i32 = entry.file_name().to_str().unwrap().parse().unwrap();
        let target = std::fs::read_link(entry.path())
            .map(|p| p.to_string_lossy().into_owned())
            .unwrap_or_default();
        fds.push((fd, target));
    }
    fds.sort();
    child.kill().unwrap();
    child.wait().unwrap();
    let stdio: Vec<&str> = fds.iter().take(3).map(|(_, t)| t.as_str()).collect();
    assert_eq!(stdio, ["/dev/null"; 3], "{fds:?}");
    let rest: Vec<&(i32, String)> = fds.iter().skip(3).collect();
    assert!(
        (1..=2).contains(&rest.len()) && rest.iter().all(|(_, t)| t.starts_with("socket:")),
        "the forwarder holds more than its listeners: {fds:?}"
    );
}

#[test]
fn curl_reaches_an_allowed_host_through_the_hook() {
    let ws = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        let (mut conn, _) = listener.accept().unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
            head.push(byte[0]);
        }
        conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
            .unwrap();
        String::from_utf8_lossy(&head)
            .lines()
            .next()
            .unwrap()
            .to_owned()
    });
    let proxy = ProxyServer::start(
        NetworkPolicy::from_patterns([format!("127.0.0.1:{port}")])
            .unwrap()
            .allow_private(true),
        ProxyLimits::default(),
        None,
    )
    .unwrap();
    let sb = prepared(ws.path(), &proxy);
    let hook = ProxyHook::new(proxy.socket_path());
    let mut c = Command::new("curl");
    c.args(["-sS", "-m", "10", &format!("http://127.0.0.1:{port}/hook")])
        .env_clear()
        .envs(hook.env().vars())
        .stdin(Stdio::null());
    sb.apply(&mut c);
    let out = c.output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "hello",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(server.join().unwrap(), "GET /hook HTTP/1.1");
    assert_eq!(proxy.shutdown().contacted, [format!("127.0.0.1:{port}")]);
}
