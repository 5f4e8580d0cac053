//! `bash_command` with allowed hosts (issue 22): the sandbox's proxy serves
//! them, judged by the world — what host listeners on 127.0.0.1 received —
//! and by the call's `network` metadata. Real processes throughout: `curl`
//! and python's `urllib` inside the full tier, the proxy on the host.

use crate::util::*;
use tool_builtins::*;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::sync::{Arc, Mutex};

use tool_core::{NetworkPolicy, SandboxPolicy, SandboxTier, ToolContext, ToolResult};

const BODY: &str = "allowed-body";

/// A host listener on 127.0.0.1 that answers every HTTP request with
/// [`BODY`] and records each request line.
fn http_server() -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let lines = Arc::clone(&seen);
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            let mut head = Vec::new();
            let mut byte = [0u8; 1];
            while !head.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1 {
                head.push(byte[0]);
            }
            let text = String::from_utf8_lossy(&head).into_owned();
            lines
                .lock()
                .unwrap()
                .push(text.lines().next().unwrap_or_default().to_owned());
            let _ = write!(
                conn,
                "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{BODY}",
                BODY.len()
            );
        }
    });
    (port, seen)
}

/// A host listener nobody may reach: non-blocking, so `accept` tells
/// whether a connection ever arrived.
fn forbidden_listener() -> (TcpListener, u16) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    (listener, port)
}

fn assert_never_reached(listener: &TcpListener) {
    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the refused listener was reached: {other:?}"),
    }
}

fn run(dir: &Path, command: &str, network: NetworkPolicy) -> ToolResult {
    let policy = SandboxPolicy::default()
        .with_tier(SandboxTier::Full)
        .with_network(network);
    let ctx = ToolContext::new()
        .with_state(Workspace::new(dir).unwrap())
        .with_state(BashConfig::default().with_sandbox(policy));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(bash_command(
            command.to_owned(),
            None,
            None,
            None,
            None,
            &ctx,
        ))
        .into_tool_result()
}

/// Loopback is a special address: the tests allow it explicitly
/// (cross-cutting §5).
fn allowing(ports: &[u16]) -> NetworkPolicy {
    NetworkPolicy::from_patterns(ports.iter().map(|p| format!("127.0.0.1:{p}")))
        .unwrap()
        .allow_private(true)
}

#[test]
fn an_allowed_host_is_reached_through_the_proxy_and_another_is_refused() {
    let (ws, _) = workspace_with::<&[u8]>(&[]);
    let (allowed, seen) = http_server();
    let (forbidden, refused) = forbidden_listener();
    let command = format!(
        "curl -sS -m 10 http://127.0.0.1:{allowed}/curl; echo; \
         python3 -c \"import urllib.request; print(urllib.request.urlopen('http://127.0.0.1:{allowed}/urllib', timeout=10).read().decode())\"; \
         curl -sS -m 10 http://127.0.0.1:{refused}/nope; echo; \
         echo \"proxy=$HTTP_PROXY https=$https_proxy all=$ALL_PROXY\""
    );
    let r = run(ws.path(), &command, allowing(&[allowed]));
    let mut lines = seen.lock().unwrap().clone();
    lines.sort();
    assert_eq!(
        lines,
        ["GET /curl HTTP/1.1", "GET /urllib HTTP/1.1"],
        "{}",
        r.output
    );
    assert_never_reached(&forbidden);
    assert_eq!(r.output.matches(BODY).count(), 2, "{}", r.output);
    assert!(
        r.output.contains(
            "proxy=http://127.0.0.1:3128 https=http://127.0.0.1:3128 all=http://127.0.0.1:3128"
        ),
        "{}",
        r.output
    );
    let network = &r.metadata["network"];
    assert_eq!(
        network["contacted"],
        serde_json::json!([format!("127.0.0.1:{allowed}")])
    );
    assert_eq!(
        network["refused"],
        serde_json::json!([format!("127.0.0.1:{refused}")])
    );
    // One note names the refused host and how a person allows it.
    let note = r
        .notes
        .iter()
        .find(|n| n.contains("refused"))
        .unwrap_or_else(|| panic!("{:?}", r.notes));
    assert!(
        note.contains(&format!("`--allow-net 127.0.0.1:{refused}`")),
        "{note}"
    );
    // The forwarder (a child of the namespace's first process) neither kept
    // the output pipe open nor counted as a process left behind: regression
    // for the first wiring, which waited for the drain deadline and then
    // reported "background processes stopped".
    assert_eq!(r.metadata.get("stopped_background"), None, "{}", r.output);
    assert!(
        !r.output.contains("left running in the background"),
        "{}",
        r.output
    );
    assert!(
        !r.notes.iter().any(|n| n.contains("not served")),
        "{:?}",
        r.notes
    );
}

#[test]
fn connect_tunnels_to_an_allowed_host_only() {
    let (ws, _) = workspace_with::<&[u8]>(&[]);
    let (allowed, seen) = http_server();
    let (forbidden, refused) = forbidden_listener();
    // `curl -p` sends `CONNECT host:port` to the proxy, then plain HTTP
    // through the tunnel (no TLS needed to show the tunnel carries bytes).
    let command = format!(
        "curl -sS -m 10 -p -x \"$HTTPS_PROXY\" http://127.0.0.1:{allowed}/tunnel; echo; \
         curl -sS -m 10 -p -x \"$HTTPS_PROXY\" http://127.0.0.1:{refused}/tunnel; echo \"exit=$?\""
    );
    let r = run(ws.path(), &command, allowing(&[allowed]));
    assert_eq!(
        seen.lock().unwrap().clone(),
        ["GET /tunnel HTTP/1.1"],
        "{}",
        r.output
    );
    assert_never_reached(&forbidden);
    assert!(r.output.contains(BODY), "{}", r.output);
    // curl reports the proxy's 403 to CONNECT as exit 56.
    assert!(r.output.contains("exit=56"), "{}", r.output);
    let network = &r.metadata["network"];
    assert_eq!(
        network["contacted"],
        serde_json::json!([format!("127.0.0.1:{allowed}")])
    );
    assert_eq!(
        network["refused"],
        serde_json::json!([format!("127.0.0.1:{refused}")])
    );
}

#[test]
fn git_over_ssh_is_refused_with_a_note_to_use_https() {
    if which("ssh").is_none() {
        eprintln!("skipped: no ssh client");
        return;
    }
    let (ws, _) = workspace_with::<&[u8]>(&[]);
    let r = run(
        ws.path(),
        "git clone -q git@github.com:rust-lang/rust.git /tmp/r",
        NetworkPolicy::from_patterns(["github.com"]).unwrap(),
    );
    assert_eq!(r.metadata["exit_code"], 128, "{}", r.output);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("git over SSH") && n.contains("https://")),
        "{:?}",
        r.notes
    );
    // Nothing went through the proxy.
    assert_eq!(r.metadata["network"]["contacted"], serde_json::json!([]));
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|d| Path::new(d).join(program))
        .find(|p| p.is_file())
}

#[test]
fn the_no_namespaces_tier_says_it_does_not_serve_the_allowlist() {
    let (ws, _) = workspace_with::<&[u8]>(&[]);
    let (allowed, seen) = http_server();
    let policy = SandboxPolicy::default()
        .with_tier(SandboxTier::NoNamespaces)
        .with_network(allowing(&[allowed]));
    let ctx = ToolContext::new()
        .with_state(Workspace::new(ws.path()).unwrap())
        .with_state(BashConfig::default().with_sandbox(policy));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let r = runtime
        .block_on(bash_command(
            format!("curl -sS -m 5 http://127.0.0.1:{allowed}/ns; echo \"[$HTTP_PROXY]\""),
            None,
            None,
            None,
            None,
            &ctx,
        ))
        .into_tool_result();
    assert!(seen.lock().unwrap().is_empty(), "{}", r.output);
    assert!(
        r.output.contains("[]"),
        "no proxy variable is set: {}",
        r.output
    );
    assert_eq!(r.metadata.get("network"), None);
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains("served in the full sandbox tier only")),
        "{:?}",
        r.notes
    );
}
