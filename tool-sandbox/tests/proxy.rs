//! The filtering proxy against real loopback servers, spoken to through its
//! real Unix socket. Each refusal is judged by the world: the listener of a
//! refused host must see no connection at all.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use tool_core::NetworkPolicy;
use tool_sandbox::{ProxyLimits, ProxyServer};

/// A loopback server that records every request head it gets and answers
/// each connection with `answer`, or echoes bytes back when `answer` is
/// `None`.
struct Server {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
    _thread: JoinHandle<()>,
}

impl Server {
    fn start(answer: Option<&'static str>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let accept = listener.try_clone().unwrap();
        let seen = Arc::clone(&heads);
        let thread = std::thread::spawn(move || {
            for conn in accept.incoming() {
                let Ok(mut conn) = conn else { return };
                let seen = Arc::clone(&seen);
                std::thread::spawn(move || match answer {
                    Some(answer) => {
                        let mut buf = Vec::new();
                        let mut byte = [0u8; 1];
                        while !buf.ends_with(b"\r\n\r\n") && conn.read(&mut byte).unwrap_or(0) == 1
                        {
                            buf.push(byte[0]);
                        }
                        seen.lock()
                            .unwrap()
                            .push(String::from_utf8_lossy(&buf).into_owned());
                        let _ = conn.write_all(answer.as_bytes());
                    }
                    None => {
                        seen.lock().unwrap().push("(echo)".into());
                        let mut back = conn.try_clone().unwrap();
                        let _ = std::io::copy(&mut conn, &mut back);
                    }
                });
            }
        });
        Self {
            port,
            heads,
            _thread: thread,
        }
    }

    /// A listener that is never served: any connection stays queued, so
    /// `accepted()` tells whether anything reached it.
    fn silent() -> TcpListener {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.set_nonblocking(true).unwrap();
        l
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }
}

/// Whether any connection reached a silent listener.
fn reached(l: &TcpListener) -> bool {
    match l.accept() {
        Ok(_) => true,
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => false,
        Err(e) => panic!("{e}"),
    }
}

const HELLO: &str = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello";

fn loopback_policy(patterns: &[String]) -> NetworkPolicy {
    NetworkPolicy::from_patterns(patterns)
        .unwrap()
        .allow_private(true)
}

fn proxy(policy: NetworkPolicy) -> ProxyServer {
    ProxyServer::start(policy, ProxyLimits::default(), None).unwrap()
}

/// Sends `request` through the proxy's socket and reads the whole answer.
fn exchange(proxy: &ProxyServer, request: &[u8]) -> String {
    let mut s = UnixStream::connect(proxy.socket_path()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(request).unwrap();
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn allowed_plain_http_is_forwarded_with_its_host_from_the_url() {
    let server = Server::start(Some(HELLO));
    let port = server.port;
    let p = proxy(loopback_policy(&[format!("127.0.0.1:{port}")]));
    let req = format!(
        "GET http://127.0.0.1:{port}/a/b?q=1 HTTP/1.1\r\nHost: evil.test\r\n\
         Proxy-Authorization: Basic eDp5\r\nUser-Agent: t\r\n\r\n"
    );
    let answer = exchange(&p, req.as_bytes());
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.ends_with("\r\n\r\nhello"), "{answer}");
    assert_eq!(
        server.heads(),
        [format!(
            "GET /a/b?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\nUser-Agent: t\r\n\r\n"
        )]
    );
    let report = p.shutdown();
    assert_eq!(report.contacted, [format!("127.0.0.1:{port}")]);
    assert!(report.refused.is_empty());
}

#[test]
fn http_1_0_requests_stay_http_1_0() {
    let server = Server::start(Some(HELLO));
    let port = server.port;
    let p = proxy(loopback_policy(&[format!("127.0.0.1:{port}")]));
    let answer = exchange(
        &p,
        format!("GET http://127.0.0.1:{port}/ HTTP/1.0\r\n\r\n").as_bytes(),
    );
    assert!(answer.ends_with("hello"), "{answer}");
    assert_eq!(
        server.heads(),
        [format!(
            "GET / HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )]
    );
}

#[test]
fn refused_hosts_get_403_and_no_byte_reaches_them() {
    let allowed = Server::start(Some(HELLO));
    let other = Server::silent();
    let other_port = other.local_addr().unwrap().port();
    let p = proxy(loopback_policy(&[format!("127.0.0.1:{}", allowed.port)]));

    let answer = exchange(
        &p,
        format!("CONNECT 127.0.0.1:{other_port} HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(
        answer.ends_with(&format!(
            "agent-tools sandbox: network access to 127.0.0.1:{other_port} refused: no allowed host \
             pattern matches it; a person can allow it with `--allow-net 127.0.0.1:{other_port}` \
             together with `--allow-net-private` (it is a loopback or private address)\n"
        )),
        "{answer}"
    );
    let answer = exchange(
        &p,
        format!("GET http://127.0.0.1:{other_port}/x HTTP/1.1\r\n\r\n").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(!reached(&other), "a refused host was contacted");

    let report = p.shutdown();
    assert_eq!(report.refused, [format!("127.0.0.1:{other_port}")]);
    assert!(report.contacted.is_empty());
}

#[test]
fn loopback_is_refused_without_allow_private_even_when_the_pattern_matches() {
    let target = Server::silent();
    let port = target.local_addr().unwrap().port();
    let policy =
        NetworkPolicy::from_patterns([format!("127.0.0.1:{port}"), format!("localhost:{port}")])
            .unwrap();
    let p = proxy(policy);
    for host in ["127.0.0.1", "localhost"] {
        let answer = exchange(
            &p,
            format!("CONNECT {host}:{port} HTTP/1.1\r\n\r\n").as_bytes(),
        );
        assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
        assert!(
            answer.contains("a loopback address (127.0.0.0/8"),
            "{answer}"
        );
    }
    assert!(!reached(&target));
}

#[test]
fn git_over_ssh_is_refused_with_a_note() {
    let p = proxy(NetworkPolicy::from_patterns(["github.com"]).unwrap());
    let answer = exchange(&p, b"CONNECT github.com:22 HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(answer.contains("port 22 is SSH"), "{answer}");
    assert!(
        answer.contains("git remote set-url origin https://github.com/OWNER/REPO.git"),
        "{answer}"
    );
    assert_eq!(p.report().refused, ["github.com:22"]);
}

#[test]
fn connect_tunnels_carry_bytes_both_ways() {
    let echo = Server::start(None);
    let p = proxy(loopback_policy(&[format!("127.0.0.1:{}", echo.port)]));
    let mut s = UnixStream::connect(p.socket_path()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // Bytes sent right behind the head (as a TLS client may) arrive too.
    let mut first = format!(
        "CONNECT 127.0.0.1:{} HTTP/1.1\r\nHost: x\r\n\r\n",
        echo.port
    )
    .into_bytes();
    first.extend_from_slice(b"early:");
    s.write_all(&first).unwrap();
    let established = b"HTTP/1.1 200 Connection Established\r\n\r\n";
    let mut head = vec![0u8; established.len()];
    s.read_exact(&mut head).unwrap();
    assert_eq!(head, established);

    // 1 MiB of varied bytes, written by one thread while this one reads.
    let payload: Vec<u8> = (0..1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    let mut writer = s.try_clone().unwrap();
    let sent = payload.clone();
    let w = std::thread::spawn(move || writer.write_all(&sent).unwrap());
    let mut back = vec![0u8; 6 + payload.len()];
    s.read_exact(&mut back).unwrap();
    w.join().unwrap();
    assert_eq!(&back[..6], b"early:");
    assert!(back[6..] == payload[..], "the tunnel altered bytes");
    drop(s);
    assert_eq!(p.shutdown().contacted, [format!("127.0.0.1:{}", echo.port)]);
}

#[test]
fn oversized_heads_are_refused_before_any_connection() {
    let target = Server::silent();
    let port = target.local_addr().unwrap().port();
    let p = proxy(loopback_policy(&[format!("127.0.0.1:{port}")]));
    let big = format!(
        "GET http://127.0.0.1:{port}/ HTTP/1.1\r\nX-Big: {}\r\n\r\n",
        "a".repeat(20 * 1024)
    );
    let answer = exchange(&p, big.as_bytes());
    assert!(
        answer.starts_with("HTTP/1.1 431 Request Header Fields Too Large\r\n"),
        "{answer}"
    );
    assert!(answer.contains("over 16384 bytes"), "{answer}");

    let many: String = (0..101).map(|i| format!("X-{i}: v\r\n")).collect();
    let answer = exchange(
        &p,
        format!("GET http://127.0.0.1:{port}/ HTTP/1.1\r\n{many}\r\n").as_bytes(),
    );
    assert!(answer.starts_with("HTTP/1.1 431 "), "{answer}");
    assert!(answer.contains("more than 100 header fields"), "{answer}");

    let answer = exchange(&p, b"NOT HTTP AT ALL\r\n\r\n");
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    let answer = exchange(&p, b"GET /origin-form HTTP/1.1\r\nHost: x\r\n\r\n");
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(!reached(&target));
}

#[test]
fn slow_clients_are_timed_out() {
    let target = Server::silent();
    let port = target.local_addr().unwrap().port();
    let limits = ProxyLimits {
        head_timeout: Duration::from_millis(300),
        ..ProxyLimits::default()
    };
    let p = ProxyServer::start(
        loopback_policy(&[format!("127.0.0.1:{port}")]),
        limits,
        None,
    )
    .unwrap();
    let mut s = UnixStream::connect(p.socket_path()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // Half a request line, then nothing.
    s.write_all(format!("GET http://127.0.0.1:{port}/").as_bytes())
        .unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{out}");
    assert!(out.contains("did not arrive within 0.3 s"), "{out}");
    assert!(!reached(&target));
}

#[test]
fn idle_tunnels_are_closed() {
    let echo = Server::start(None);
    let limits = ProxyLimits {
        idle_timeout: Duration::from_millis(300),
        ..ProxyLimits::default()
    };
    let p = ProxyServer::start(
        loopback_policy(&[format!("127.0.0.1:{}", echo.port)]),
        limits,
        None,
    )
    .unwrap();
    let mut s = UnixStream::connect(p.socket_path()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\nping", echo.port).as_bytes())
        .unwrap();
    // The answer, the echo, then end of stream once idle (not a read timeout).
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    assert_eq!(out, b"HTTP/1.1 200 Connection Established\r\n\r\nping");
}

#[test]
fn bytes_per_connection_can_be_capped() {
    let echo = Server::start(None);
    let limits = ProxyLimits {
        max_connection_bytes: Some(64 * 1024),
        ..ProxyLimits::default()
    };
    let p = ProxyServer::start(
        loopback_policy(&[format!("127.0.0.1:{}", echo.port)]),
        limits,
        None,
    )
    .unwrap();
    let mut s = UnixStream::connect(p.socket_path()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    s.write_all(format!("CONNECT 127.0.0.1:{} HTTP/1.1\r\n\r\n", echo.port).as_bytes())
        .unwrap();
    let mut writer = s.try_clone().unwrap();
    let w = std::thread::spawn(move || {
        let chunk = [7u8; 4096];
        for _ in 0..256 {
            if writer.write_all(&chunk).is_err() {
                break;
            }
        }
    });
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    w.join().unwrap();
    let body = out.len() - "HTTP/1.1 200 Connection Established\r\n\r\n".len();
    assert!(
        body <= 64 * 1024,
        "{body} bytes came back through a 64 KiB cap"
    );
}

#[test]
fn concurrent_connections_are_bounded() {
    let limits = ProxyLimits {
        max_connections: 2,
        ..ProxyLimits::default()
    };
    let p = ProxyServer::start(NetworkPolicy::deny_all(), limits, None).unwrap();
    // Two connections that hold their slot (half a head each).
    let held: Vec<UnixStream> = (0..2)
        .map(|_| {
            let mut s = UnixStream::connect(p.socket_path()).unwrap();
            s.write_all(b"GET http://x.test/").unwrap();
            s
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let answer = exchange(&p, b"GET http://x.test/ HTTP/1.1\r\n\r\n");
    assert!(
        answer.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{answer}"
    );
    assert!(answer.contains("(limit 2)"), "{answer}");
    drop(held);
}

#[test]
fn the_socket_is_private_and_removed_on_shutdown() {
    let p = proxy(NetworkPolicy::deny_all());
    let socket = p.socket_path().to_owned();
    let dir = socket.parent().unwrap().to_owned();
    assert_eq!(
        std::fs::metadata(&socket).unwrap().permissions().mode() & 0o777,
        0o600
    );
    assert_eq!(
        std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
    let report = p.shutdown();
    assert!(report.is_empty());
    assert!(!dir.exists(), "{} left behind", dir.display());
    assert!(UnixStream::connect(&socket).is_err());
}

/// A sanity check of the test's own oracle: the silent listener does see a
/// direct connection.
#[test]
fn the_silent_listener_detects_connections() {
    let l = Server::silent();
    let _c = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    assert!(reached(&l));
}
