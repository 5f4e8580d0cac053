//! Bounds of `serve_http_with` (issue 23 item 11): sessions expire when
//! idle, a session cap answers `503` with `Retry-After`, slow headers close
//! the connection and a slow body gets `408`. Before these, 3 000 idle
//! sessions held +369 MiB and still answered after 90 s, and connections
//! sending one header line every 5 s were never closed.
//!
//! Real sockets and raw HTTP/1.1, so that what a client sees (status,
//! headers, a closed connection) is what is asserted.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tool_core::ToolRegistry;
use tool_mcp::{HttpLimits, McpServer};

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
const PING: &str = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;

async fn server(limits: HttpLimits) -> (SocketAddr, tokio_util::sync::CancellationToken) {
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(ToolRegistry::new())
        .with_http_limits(limits)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .expect("the server starts");
    (addr, stop)
}

/// A POST of `body` to `/mcp` on its own connection: (status, head, body).
async fn post(addr: SocketAddr, session: Option<&str>, body: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let session = session
        .map(|s| format!("Mcp-Session-Id: {s}\r\nMCP-Protocol-Version: 2025-11-25\r\n"))
        .unwrap_or_default();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n{session}Content-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// A `DELETE` of session `session`: the status.
async fn delete(addr: SocketAddr, session: &str) -> u16 {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request = format!(
        "DELETE /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nMcp-Session-Id: {session}\r\n\
         MCP-Protocol-Version: 2025-11-25\r\nConnection: close\r\n\r\n"
    );
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response)).await;
    String::from_utf8_lossy(&response)
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

#[tokio::test]
async fn ending_a_session_answers_200_and_the_session_is_gone() {
    let (addr, stop) = server(HttpLimits::default()).await;
    let session = open(addr).await;
    let (status, _, _) = post(addr, Some(&session), PING).await;
    assert_eq!(status, 200);
    // The Python SDK accepts 200 or 204 only; rmcp answers 202 on its own.
    assert_eq!(delete(addr, &session).await, 200);
    let (status, head, _) = post(addr, Some(&session), PING).await;
    assert_eq!(status, 404, "{head}");
    stop.cancel();
}

/// The value of header `name` (lowercase) in `head`.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .map(str::trim)
}

/// Opens a session; its id.
async fn open(addr: SocketAddr) -> String {
    let (status, head, body) = post(addr, None, INITIALIZE).await;
    assert_eq!(status, 200, "{head}\n{body}");
    header(&head, "mcp-session-id")
        .expect("a session id")
        .to_owned()
}

#[test]
fn the_defaults_are_the_documented_ones() {
    let limits = HttpLimits::default();
    assert_eq!(limits.idle_timeout, Duration::from_secs(300));
    assert_eq!(limits.max_sessions, 256);
    assert_eq!(limits.header_timeout, Duration::from_secs(10));
    assert_eq!(limits.body_timeout, Duration::from_secs(30));
    assert_eq!(limits.retry_after_secs(), 60);
    assert_eq!(tool_mcp::DEFAULT_MAX_SESSIONS, 256);
    // Nothing is a limit of zero.
    let zero = HttpLimits::default()
        .with_max_sessions(0)
        .with_idle_timeout(Duration::ZERO);
    assert_eq!(zero.max_sessions, 1);
    assert_eq!(zero.idle_timeout, Duration::from_millis(1));
    assert_eq!(zero.retry_after_secs(), 1);
    assert_eq!(
        HttpLimits::default()
            .with_idle_timeout(Duration::from_secs(7))
            .retry_after_secs(),
        7
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn past_the_cap_a_new_client_gets_503_and_idle_sessions_expire() {
    let idle = Duration::from_secs(2);
    let (addr, stop) = server(
        HttpLimits::default()
            .with_max_sessions(2)
            .with_idle_timeout(idle),
    )
    .await;
    let quiet = open(addr).await;
    let busy = open(addr).await;
    assert_ne!(quiet, busy);

    let (status, head, body) = post(addr, None, INITIALIZE).await;
    assert_eq!(status, 503, "{head}\n{body}");
    assert_eq!(header(&head, "retry-after"), Some("2"), "{head}");
    assert!(body.contains("limit of 2 MCP sessions"), "{body}");

    // One session keeps talking, the other says nothing past the idle time.
    let start = Instant::now();
    while start.elapsed() < idle * 2 + Duration::from_millis(500) {
        let (status, head, body) = post(addr, Some(&busy), PING).await;
        assert_eq!(
            status, 200,
            "the busy session still answers: {head}\n{body}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    let (status, head, _) = post(addr, Some(&quiet), PING).await;
    assert_eq!(status, 404, "the idle session has expired: {head}");
    // Its slot is free again.
    let again = open(addr).await;
    assert_ne!(again, quiet);
    let (status, _, _) = post(addr, None, INITIALIZE).await;
    assert_eq!(status, 503, "two open again: busy and the new one");
    stop.cancel();
}

/// Writes `head_lines` slowly; how long until the server closed the
/// connection (`None`: still open after `give_up`).
async fn closed_after(addr: SocketAddr, pause: Duration, give_up: Duration) -> Option<Duration> {
    // Timed from before the connect: the server's clock starts at its accept,
    // which a loaded machine may run before this task resumes after connect.
    let start = Instant::now();
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let (mut read, mut write) = stream.into_split();
    let writer = tokio::spawn(async move {
        let _ = write
            .write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            .await;
        for n in 0.. {
            tokio::time::sleep(pause).await;
            if write
                .write_all(format!("X-Slow-{n}: a\r\n").as_bytes())
                .await
                .is_err()
            {
                break;
            }
        }
    });
    let mut buf = [0_u8; 1024];
    let closed = loop {
        match tokio::time::timeout_at((start + give_up).into(), read.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => break Some(start.elapsed()),
            Ok(Ok(_)) => {}
            Err(_) => break None,
        }
    };
    writer.abort();
    closed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_headers_close_the_connection() {
    let limit = Duration::from_secs(1);
    let (addr, stop) = server(HttpLimits::default().with_header_timeout(limit)).await;
    // One header line every 300 ms: each arrives in time, the whole never does.
    let closed = closed_after(addr, Duration::from_millis(300), Duration::from_secs(8)).await;
    let closed = closed.expect("the server closed the slow connection");
    assert!(closed >= limit, "not before the limit: {closed:?}");
    // A connection that sends nothing at all is closed as well.
    let mut idle = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let start = Instant::now();
    let mut buf = [0_u8; 64];
    let read = tokio::time::timeout(Duration::from_secs(8), idle.read(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(0) | Err(_))),
        "closed, not left open: {read:?}"
    );
    assert!(start.elapsed() >= limit);
    // The server still serves.
    let (status, _, _) = post(addr, None, INITIALIZE).await;
    assert_eq!(status, 200);
    stop.cancel();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_body_gets_408() {
    let limit = Duration::from_secs(1);
    let (addr, stop) = server(HttpLimits::default().with_body_timeout(limit)).await;
    // Taken before anything is sent: the server's clock starts once it has
    // read the headers, which under load can be before `write_all` returns.
    let start = Instant::now();
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream
        .write_all(
            b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n\
              Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"",
        )
        .await
        .expect("write");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(8), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response);
    assert!(text.starts_with("HTTP/1.1 408"), "{text}");
    assert!(text.contains("did not arrive within 1000 ms"), "{text}");
    assert!(start.elapsed() >= limit);
    stop.cancel();
}

/// A `GET` of `path` with `headers` (each ending in `\r\n`): (status, head, body).
async fn get(addr: SocketAddr, path: &str, headers: &str) -> (u16, String, String) {
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    let request =
        format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}Connection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, head.to_ascii_lowercase(), body.to_owned())
}

/// `GET /health` (issue 32, a load balancer's HTTP check): `200 ok`
/// without a token on a server that requires one for `/mcp`, `503
/// unavailable` while the health check fails, nothing else told, and the
/// check runs at most once per `HEALTH_CACHE` however many ask.
#[tokio::test]
async fn health_answers_without_a_token_and_follows_the_check() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let up = Arc::new(AtomicBool::new(true));
    let checks = Arc::new(AtomicUsize::new(0));
    let (flag, count) = (Arc::clone(&up), Arc::clone(&checks));
    let stop = tokio_util::sync::CancellationToken::new();
    let token = "health-test-token-0123456789";
    let access = tool_mcp::HttpAccess::loopback().with_token(token).unwrap();
    let (addr, _task) = McpServer::new(ToolRegistry::new())
        .with_health_check(move || {
            count.fetch_add(1, Ordering::SeqCst);
            flag.load(Ordering::SeqCst)
        })
        .serve_http_with(([127, 0, 0, 1], 0).into(), access, stop.clone())
        .await
        .expect("the server starts");

    let (status, head, body) = get(addr, "/health", "").await;
    assert_eq!((status, body.as_str()), (200, "ok\n"), "{head}");
    assert!(head.contains("cache-control: no-store"), "{head}");
    // /mcp still needs the token.
    let (status, _, _) = get(addr, "/mcp", "").await;
    assert_eq!(status, 401);
    // Ten more at once within HEALTH_CACHE: answered from the last check.
    let started = Instant::now();
    let many: Vec<_> = (0..10).map(|_| get(addr, "/health", "")).collect();
    for (status, _, _) in futures_join(many).await {
        assert_eq!(status, 200);
    }
    // One check per HEALTH_CACHE at most (a slow, loaded machine may span several).
    let windows = started.elapsed().as_millis() / tool_mcp::HEALTH_CACHE.as_millis() + 1;
    let ran = checks.load(Ordering::SeqCst);
    assert!(
        ran as u128 <= 1 + windows && ran < 11,
        "{ran} checks for 11 requests"
    );

    up.store(false, Ordering::SeqCst);
    tokio::time::sleep(tool_mcp::HEALTH_CACHE + Duration::from_millis(50)).await;
    let (status, head, body) = get(addr, "/health", "").await;
    assert_eq!((status, body.as_str()), (503, "unavailable\n"), "{head}");
    up.store(true, Ordering::SeqCst);
    tokio::time::sleep(tool_mcp::HEALTH_CACHE + Duration::from_millis(50)).await;
    assert_eq!(get(addr, "/health", "").await.0, 200);
    stop.cancel();

    // Without a check: 200 from any server that answers HTTP.
    let (addr, stop) = server(HttpLimits::default()).await;
    assert_eq!(get(addr, "/health", "").await.0, 200);
    stop.cancel();
}

/// Awaits every future, in order.
async fn futures_join<F>(futures: Vec<F>) -> Vec<F::Output>
where
    F: std::future::Future + Send + 'static,
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.into_iter().map(tokio::spawn).collect();
    let mut out = Vec::new();
    for h in handles {
        out.push(h.await.expect("the task ends"));
    }
    out
}
