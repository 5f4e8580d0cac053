//! The forwarder in a real, new network namespace: `curl` inside reaches an
//! allowed loopback server of the host through the forwarder and the host
//! proxy's Unix socket, and a host the policy does not allow is refused
//! without a byte reaching it.
//!
//! The test re-runs this test binary in a child that enters
//! `CLONE_NEWUSER | CLONE_NEWNET` between `fork` and `exec` (where the
//! process is single-threaded, as `unshare` of a user namespace requires)
//! and brings loopback up there; the child's part is the ignored test
//! `netns_child`.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};

use tool_core::NetworkPolicy;
use tool_sandbox::{Forwarder, ProxyLimits, ProxyServer, bring_up_loopback};

const BODY: &str = "allowed-body";

/// A host loopback server that answers every request with [`BODY`] and
/// records the request lines it got.
fn allowed_server() -> (u16, Arc<Mutex<Vec<String>>>) {
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

#[allow(unsafe_code, reason = "pre_exec: unshare between fork and exec")]
fn in_new_network_namespace(cmd: &mut Command) {
    // SAFETY: the hook makes only system calls (unshare, socket, ioctl,
    // close), all async-signal-safe, in the single-threaded forked child.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNET) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            bring_up_loopback()
        });
    }
}

#[test]
fn curl_in_a_network_namespace_reaches_allowed_hosts_only() {
    let (allowed_port, seen) = allowed_server();
    let refused = TcpListener::bind("127.0.0.1:0").unwrap();
    refused.set_nonblocking(true).unwrap();
    let refused_port = refused.local_addr().unwrap().port();
    let policy = NetworkPolicy::from_patterns([format!("127.0.0.1:{allowed_port}")])
        .unwrap()
        .allow_private(true);
    let proxy = ProxyServer::start(policy, ProxyLimits::default(), None).unwrap();

    let mut child = Command::new(std::env::current_exe().unwrap());
    child
        .args([
            "--ignored",
            "--exact",
            "netns_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env("NETNS_PROXY_SOCKET", proxy.socket_path())
        .env("NETNS_ALLOWED_PORT", allowed_port.to_string())
        .env("NETNS_REFUSED_PORT", refused_port.to_string());
    in_new_network_namespace(&mut child);
    let out = child
        .output()
        .expect("the namespace child could not start (user namespaces blocked?)");
    let report = proxy.shutdown();
    assert!(
        out.status.success(),
        "child failed\n--- stdout\n{}\n--- stderr\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("test netns_child ... ok"),
        "the child test did not run: {}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The world afterwards: the allowed server got the three requests, the
    // refused listener no connection at all.
    let mut lines = seen.lock().unwrap().clone();
    lines.sort();
    assert_eq!(
        lines,
        [
            "GET /plain HTTP/1.1",
            "GET /tunnel HTTP/1.1",
            "GET /v6 HTTP/1.1"
        ]
    );
    match refused.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        other => panic!("the refused host was reached: {other:?}"),
    }
    assert_eq!(report.contacted, [format!("127.0.0.1:{allowed_port}")]);
    assert_eq!(report.refused, [format!("127.0.0.1:{refused_port}")]);
}

fn env_port(name: &str) -> u16 {
    std::env::var(name).unwrap().parse().unwrap()
}

/// Runs `curl` with the forwarder's proxy variables; returns (exit success,
/// stdout, stderr).
fn curl(vars: &[(&'static str, String)], args: &[&str]) -> (bool, String, String) {
    let out = Command::new("curl")
        .args(["-sS", "--max-time", "20", "-w", "\n%{http_code}"])
        .args(args)
        .env_clear()
        .envs(vars.iter().map(|(k, v)| (*k, v.as_str())))
        .output()
        .expect("curl is needed for this test (apt-get install curl)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
#[ignore = "the namespace side of curl_in_a_network_namespace_reaches_allowed_hosts_only, run by it"]
fn netns_child() {
    let socket = PathBuf::from(std::env::var_os("NETNS_PROXY_SOCKET").unwrap());
    let allowed = env_port("NETNS_ALLOWED_PORT");
    let refused = env_port("NETNS_REFUSED_PORT");

    // Inside, the host's loopback servers are out of reach directly.
    assert!(TcpStream::connect(("127.0.0.1", allowed)).is_err());

    let fwd = Forwarder::bind(0, &socket).unwrap();
    let port = fwd.port();
    let vars = fwd.env().vars();
    let serves_v6 = fwd.serves_ipv6();
    std::thread::spawn(move || fwd.serve());

    // Plain HTTP, through HTTP_PROXY.
    let (ok, out, err) = curl(&vars, &[&format!("http://127.0.0.1:{allowed}/plain")]);
    assert!(ok, "{err}");
    assert_eq!(out, format!("{BODY}\n200"));

    // A CONNECT tunnel (as HTTPS uses), forced with --proxytunnel.
    let (ok, out, err) = curl(
        &vars,
        &[
            "--proxytunnel",
            &format!("http://127.0.0.1:{allowed}/tunnel"),
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out, format!("{BODY}\n200"));

    // The IPv6 listener of the forwarder.
    assert!(serves_v6, "[::1] is not served in the namespace");
    let (ok, out, err) = curl(
        &[],
        &[
            "--proxy",
            &format!("http://[::1]:{port}"),
            &format!("http://127.0.0.1:{allowed}/v6"),
        ],
    );
    assert!(ok, "{err}");
    assert_eq!(out, format!("{BODY}\n200"));

    // A host the policy does not allow: 403 with the note, both ways.
    let (_, out, _) = curl(&vars, &[&format!("http://127.0.0.1:{refused}/x")]);
    assert!(out.ends_with("\n403"), "{out}");
    assert!(
        out.contains(&format!("`--allow-net 127.0.0.1:{refused}`")),
        "{out}"
    );
    let (ok, _, err) = curl(
        &vars,
        &["--proxytunnel", &format!("http://127.0.0.1:{refused}/x")],
    );
    assert!(!ok);
    assert!(err.contains("403"), "{err}");
}
