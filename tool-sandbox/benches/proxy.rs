//! What the network proxy costs: starting and stopping it per call, and one
//! request through it next to the same request sent directly.
//!
//! `cargo bench -p tool-sandbox --bench proxy`. Loopback server, no DNS.

#![allow(
    clippy::unwrap_used,
    missing_docs,
    reason = "benchmark: a failed unwrap is the failure report; criterion's macros make undocumented items"
)]

use std::hint::black_box;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::os::unix::net::UnixStream;

use criterion::{Criterion, criterion_group, criterion_main};
use tool_core::NetworkPolicy;
use tool_sandbox::{ProxyLimits, ProxyServer};

const ANSWER: &[u8] = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok";

/// A loopback server answering each connection once (HTTP), or echoing
/// until the peer closes when `echo`.
fn server(echo: bool) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for conn in listener.incoming() {
            let Ok(mut conn) = conn else { return };
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                if echo {
                    while let Ok(n @ 1..) = conn.read(&mut buf) {
                        if conn.write_all(&buf[..n]).is_err() {
                            return;
                        }
                    }
                } else {
                    let mut head = Vec::new();
                    while !head.ends_with(b"\r\n\r\n") {
                        match conn.read(&mut buf) {
                            Ok(n @ 1..) => head.extend_from_slice(&buf[..n]),
                            _ => return,
                        }
                    }
                    let _ = conn.write_all(ANSWER);
                }
            });
        }
    });
    port
}

fn policy(port: u16) -> NetworkPolicy {
    NetworkPolicy::from_patterns([format!("127.0.0.1:{port}")])
        .unwrap()
        .allow_private(true)
}

fn read_all(mut s: impl Read) -> usize {
    let mut out = Vec::new();
    s.read_to_end(&mut out).unwrap();
    out.len()
}

fn bench(c: &mut Criterion) {
    let http = server(false);
    let echo = server(true);

    c.bench_function("proxy/start_and_shutdown", |b| {
        b.iter(|| {
            let p = ProxyServer::start(policy(http), ProxyLimits::default(), None).unwrap();
            black_box(p.shutdown())
        });
    });

    let request = format!("GET /x HTTP/1.1\r\nHost: 127.0.0.1:{http}\r\n\r\n");
    c.bench_function("proxy/get_direct", |b| {
        b.iter(|| {
            let mut s = TcpStream::connect(("127.0.0.1", http)).unwrap();
            s.write_all(request.as_bytes()).unwrap();
            black_box(read_all(s))
        });
    });

    let p = ProxyServer::start(policy(http), ProxyLimits::default(), None).unwrap();
    let proxied = format!("GET http://127.0.0.1:{http}/x HTTP/1.1\r\n\r\n");
    c.bench_function("proxy/get_through_proxy", |b| {
        b.iter(|| {
            let mut s = UnixStream::connect(p.socket_path()).unwrap();
            s.write_all(proxied.as_bytes()).unwrap();
            black_box(read_all(s))
        });
    });
    drop(p);

    let p = ProxyServer::start(policy(echo), ProxyLimits::default(), None).unwrap();
    let connect = format!("CONNECT 127.0.0.1:{echo} HTTP/1.1\r\n\r\nping");
    let expected = b"HTTP/1.1 200 Connection Established\r\n\r\nping".len();
    c.bench_function("proxy/connect_and_one_exchange", |b| {
        b.iter(|| {
            let mut s = UnixStream::connect(p.socket_path()).unwrap();
            s.write_all(connect.as_bytes()).unwrap();
            let mut got = vec![0u8; expected];
            s.read_exact(&mut got).unwrap();
            black_box(got)
        });
    });
    drop(p);

    let many: Vec<String> = (0..256).map(|i| format!("*.host{i}.test")).collect();
    let big = NetworkPolicy::from_patterns(&many).unwrap();
    c.bench_function("policy/check_host_256_patterns_miss", |b| {
        b.iter(|| {
            black_box(
                big.check_host(black_box("registry.npmjs.org"), 443)
                    .is_err(),
            )
        });
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
