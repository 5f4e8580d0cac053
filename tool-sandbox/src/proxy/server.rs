//! The host side: an HTTP/1.1 proxy on a Unix socket that checks every
//! request against a [`NetworkPolicy`].

use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixListener, UnixStream};
use tokio::sync::{Semaphore, oneshot};
use tool_core::NetworkPolicy;
use tool_core::governance::network::{NetworkRefusal, Target};
use url::Url;

use super::report::{NetworkReport, Recorder};

/// The socket's file name inside the proxy's private directory.
pub const PROXY_SOCKET_NAME: &str = "proxy.sock";

/// Bounds of the proxy. Every field bounds something the sandboxed command
/// (which a model drives) controls. Defaults suit package managers
/// (`cargo fetch`, `npm install`, `pip download`): they never hit them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyLimits {
    /// Largest request head (request line plus headers, with their line
    /// ends), in bytes. Default 16 KiB (16 384). A larger one is answered
    /// `431 Request Header Fields Too Large`.
    pub max_head_bytes: usize,
    /// Most header fields in one request. Default 100. More are answered
    /// `431`.
    pub max_headers: usize,
    /// Most connections served at once. Default 64. A connection over it is
    /// answered `503 Service Unavailable` and closed.
    pub max_connections: usize,
    /// Time a client has to send its whole request head. Default 10 s. A
    /// slower one is answered `408 Request Timeout` and closed.
    pub head_timeout: Duration,
    /// Time for resolving the host and opening the TCP connection. Default
    /// 15 s. Over it: `504 Gateway Timeout`.
    pub connect_timeout: Duration,
    /// An open connection (tunnel or forwarded request) with no byte moving
    /// in either direction for this long is closed. Default 120 s.
    pub idle_timeout: Duration,
    /// Bytes one connection may carry, both directions together; `None`
    /// (the default) for no limit. Over it the connection is closed.
    pub max_connection_bytes: Option<u64>,
}

impl Default for ProxyLimits {
    fn default() -> Self {
        Self {
            max_head_bytes: 16 * 1024,
            max_headers: 100,
            max_connections: 64,
            head_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(15),
            idle_timeout: Duration::from_secs(120),
            max_connection_bytes: None,
        }
    }
}

/// A running proxy: its socket path, its report so far, and a way to stop
/// it. Stopping (or dropping) it closes every connection and removes its
/// private directory.
#[derive(Debug)]
pub struct ProxyServer {
    dir: Option<tempfile::TempDir>,
    socket: PathBuf,
    recorder: Arc<Recorder>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

struct Shared {
    policy: Arc<NetworkPolicy>,
    limits: ProxyLimits,
    recorder: Arc<Recorder>,
}

impl ProxyServer {
    /// Starts a proxy for `policy` on its own thread (with a single-threaded
    /// tokio runtime, so it works from sync and async callers alike).
    ///
    /// The socket is `<dir>/proxy.sock` ([`PROXY_SOCKET_NAME`]), where
    /// `<dir>` is a new directory of mode 0700 created in `parent` (the
    /// system temporary directory when `None`); the socket itself is made
    /// mode 0600. It exists when this returns.
    ///
    /// # Errors
    /// Creating the directory, binding the socket, setting its mode, or
    /// starting the thread or runtime.
    pub fn start(
        policy: NetworkPolicy,
        limits: ProxyLimits,
        parent: Option<&Path>,
    ) -> io::Result<Self> {
        let mut builder = tempfile::Builder::new();
        builder
            .prefix("agent-tools-net-")
            .permissions(std::fs::Permissions::from_mode(0o700));
        let dir = match parent {
            Some(p) => builder.tempdir_in(p)?,
            None => builder.tempdir()?,
        };
        let socket = dir.path().join(PROXY_SOCKET_NAME);
        let std_listener = std::os::unix::net::UnixListener::bind(&socket)?;
        std::fs::set_permissions(&socket, std::fs::Permissions::from_mode(0o600))?;
        std_listener.set_nonblocking(true)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            // Name lookups run on blocking threads; a lookup that outlives its
            // connect timeout keeps its thread, so bound them.
            .max_blocking_threads(limits.max_connections.max(1))
            .enable_io()
            .enable_time()
            .build()?;
        let recorder = Arc::new(Recorder::default());
        let shared = Arc::new(Shared {
            policy: Arc::new(policy),
            limits,
            recorder: Arc::clone(&recorder),
        });
        let listener = {
            let _in_runtime = runtime.enter();
            UnixListener::from_std(std_listener)?
        };
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name("sandbox-proxy".into())
            .spawn(move || {
                runtime.block_on(async move {
                    tokio::select! {
                        () = accept_loop(listener, shared) => {}
                        _ = stopped => {}
                    }
                });
                // Cancels every connection task; a name lookup still running
                // on a blocking thread is left to finish alone rather than
                // delay the call's end.
                runtime.shutdown_timeout(Duration::from_millis(100));
            })?;
        Ok(Self {
            dir: Some(dir),
            socket,
            recorder,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The Unix socket the proxy listens on (bind it into the sandbox).
    pub fn socket_path(&self) -> &Path {
        &self.socket
    }

    /// What has been contacted and refused so far.
    pub fn report(&self) -> NetworkReport {
        self.recorder.snapshot()
    }

    /// Stops the proxy (closing open connections), removes its directory and
    /// returns the final report.
    pub fn shutdown(mut self) -> NetworkReport {
        self.stop_now();
        self.recorder.snapshot()
    }

    fn stop_now(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        if let Some(dir) = self.dir.take() {
            let _ = dir.close();
        }
    }
}

impl Drop for ProxyServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

async fn accept_loop(listener: UnixListener, shared: Arc<Shared>) {
    let slots = Arc::new(Semaphore::new(
        shared.limits.max_connections.min(Semaphore::MAX_PERMITS),
    ));
    loop {
        let Ok((mut stream, _)) = listener.accept().await else {
            // Out of descriptors or similar: wait a little rather than spin.
            tokio::time::sleep(Duration::from_millis(50)).await;
            continue;
        };
        let shared = Arc::clone(&shared);
        match Arc::clone(&slots).try_acquire_owned() {
            Ok(permit) => {
                tokio::spawn(async move {
                    handle(stream, &shared).await;
                    drop(permit);
                });
            }
            Err(_) => {
                let limit = shared.limits.max_connections;
                tokio::spawn(async move {
                    let body = format!(
                        "agent-tools sandbox proxy: too many connections at once (limit {limit}); \
                         retry with fewer parallel downloads\n"
                    );
                    let write = respond(&mut stream, 503, "Service Unavailable", &body);
                    let _ = tokio::time::timeout(Duration::from_secs(1), write).await;
                });
            }
        }
    }
}

/// A parsed request head.
struct Head {
    method: String,
    target: String,
    headers: Vec<(String, Vec<u8>)>,
    /// The minor version of `HTTP/1.x` (0 or 1), kept when forwarding: an
    /// HTTP/1.0 client cannot read a chunked HTTP/1.1 answer.
    minor_version: u8,
    /// Bytes of the head, so that what follows it (a body, a TLS hello sent
    /// early) is forwarded too.
    len: usize,
}

enum HeadError {
    TooLarge,
    TooManyHeaders,
    Malformed(httparse::Error),
    Closed,
    Io,
}

/// Reads until a whole head parses, at most `max_head_bytes`.
async fn read_head(
    stream: &mut UnixStream,
    limits: &ProxyLimits,
    buf: &mut Vec<u8>,
) -> Result<Head, HeadError> {
    let mut chunk = [0u8; 4096];
    loop {
        let n = stream.read(&mut chunk).await.map_err(|_| HeadError::Io)?;
        if n == 0 {
            return Err(HeadError::Closed);
        }
        buf.extend_from_slice(&chunk[..n]);
        let mut headers = vec![httparse::EMPTY_HEADER; limits.max_headers];
        let mut req = httparse::Request::new(&mut headers);
        let parsed = req.parse(buf);
        match parsed {
            Ok(httparse::Status::Complete(len)) if len <= limits.max_head_bytes => {
                return Ok(Head {
                    method: req.method.unwrap_or_default().to_owned(),
                    target: req.path.unwrap_or_default().to_owned(),
                    headers: req
                        .headers
                        .iter()
                        .map(|h| (h.name.to_owned(), h.value.to_vec()))
                        .collect(),
                    minor_version: req.version.unwrap_or(1),
                    len,
                });
            }
            Ok(httparse::Status::Complete(_)) => return Err(HeadError::TooLarge),
            Ok(httparse::Status::Partial) if buf.len() >= limits.max_head_bytes => {
                return Err(HeadError::TooLarge);
            }
            Ok(httparse::Status::Partial) => {}
            Err(httparse::Error::TooManyHeaders) => return Err(HeadError::TooManyHeaders),
            Err(e) => return Err(HeadError::Malformed(e)),
        }
    }
}

async fn respond(stream: &mut UnixStream, code: u16, reason: &str, body: &str) -> io::Result<()> {
    let text = format!(
        "HTTP/1.1 {code} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(text.as_bytes()).await?;
    stream.shutdown().await?;
    linger(stream).await;
    Ok(())
}

/// Reads and discards what the client is still sending (at most 1 MiB, for
/// at most 2 s) before the socket closes: closing a socket with unread input
/// resets the connection, and the client would lose the answer just sent.
async fn linger(stream: &mut UnixStream) {
    let drain = async {
        let mut buf = [0u8; 8192];
        let mut left: usize = 1024 * 1024;
        while left > 0 {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
}

async fn handle(mut client: UnixStream, shared: &Shared) {
    let limits = &shared.limits;
    let mut buf = Vec::with_capacity(4096);
    let head = match tokio::time::timeout(
        limits.head_timeout,
        read_head(&mut client, limits, &mut buf),
    )
    .await
    {
        Err(_) => {
            let body = format!(
                "agent-tools sandbox proxy: the request head did not arrive within {} s\n",
                limits.head_timeout.as_secs_f64()
            );
            let _ = respond(&mut client, 408, "Request Timeout", &body).await;
            return;
        }
        Ok(Err(HeadError::TooLarge)) => {
            let body = format!(
                "agent-tools sandbox proxy: the request head is over {} bytes\n",
                limits.max_head_bytes
            );
            let _ = respond(&mut client, 431, "Request Header Fields Too Large", &body).await;
            return;
        }
        Ok(Err(HeadError::TooManyHeaders)) => {
            let body = format!(
                "agent-tools sandbox proxy: the request has more than {} header fields\n",
                limits.max_headers
            );
            let _ = respond(&mut client, 431, "Request Header Fields Too Large", &body).await;
            return;
        }
        Ok(Err(HeadError::Malformed(e))) => {
            let body = format!("agent-tools sandbox proxy: malformed HTTP request ({e})\n");
            let _ = respond(&mut client, 400, "Bad Request", &body).await;
            return;
        }
        Ok(Err(HeadError::Closed | HeadError::Io)) => return,
        Ok(Ok(head)) => head,
    };
    let rest = buf.get(head.len..).unwrap_or_default().to_vec();
    if head.method.eq_ignore_ascii_case("CONNECT") {
        tunnel(client, shared, &head, &rest).await;
    } else {
        forward(client, shared, &head, &rest).await;
    }
}

/// `host:port` of a CONNECT target (`example.com:443`, `[::1]:443`).
fn split_authority(authority: &str) -> Option<(&str, u16)> {
    let (host, port) = authority.rsplit_once(':')?;
    let port = port.parse().ok()?;
    let host = match host.strip_prefix('[') {
        Some(v6) => v6.strip_suffix(']')?,
        None => host,
    };
    Some((host, port))
}

async fn refuse(client: &mut UnixStream, shared: &Shared, refusal: &NetworkRefusal) {
    let line = refusal.to_string();
    let key = if refusal.host().is_empty() {
        "(over-long host name)".to_owned()
    } else {
        refusal.authority()
    };
    shared.recorder.refused(key, line.clone());
    let body = format!("agent-tools sandbox: {line}\n");
    let _ = respond(client, 403, "Forbidden", &body).await;
}

/// Resolves once (on a blocking thread), vets, and connects to one of the
/// vetted addresses: the name is never looked up again.
/// Why no upstream connection was made.
enum ConnectError {
    /// The address vetting (or the lookup) refused the host.
    Refused(NetworkRefusal),
    /// Every vetted address failed to connect.
    Io(io::Error),
}

async fn connect(client: &mut UnixStream, shared: &Shared, target: Target) -> Option<TcpStream> {
    let policy = Arc::clone(&shared.policy);
    let lookup_target = target.clone();
    let attempt = async move {
        let addrs = tokio::task::spawn_blocking(move || policy.resolve_target(&lookup_target))
            .await
            .map_err(|e| ConnectError::Io(io::Error::other(e)))?
            .map_err(ConnectError::Refused)?;
        let mut last = io::Error::other("no address");
        for addr in addrs {
            match TcpStream::connect(addr).await {
                Ok(stream) => return Ok(stream),
                Err(e) => last = e,
            }
        }
        Err(ConnectError::Io(last))
    };
    match tokio::time::timeout(shared.limits.connect_timeout, attempt).await {
        Ok(Ok(stream)) => {
            shared.recorder.contacted(target.to_string());
            Some(stream)
        }
        Ok(Err(ConnectError::Refused(refusal))) => {
            refuse(client, shared, &refusal).await;
            None
        }
        Ok(Err(ConnectError::Io(e))) => {
            let body = format!("agent-tools sandbox proxy: could not connect to {target}: {e}\n");
            let _ = respond(client, 502, "Bad Gateway", &body).await;
            None
        }
        Err(_) => {
            let body = format!(
                "agent-tools sandbox proxy: connecting to {target} took over {} s\n",
                shared.limits.connect_timeout.as_secs_f64()
            );
            let _ = respond(client, 504, "Gateway Timeout", &body).await;
            None
        }
    }
}

/// `CONNECT host:port`: checked, then tunnelled byte for byte (TLS is not
/// intercepted).
async fn tunnel(mut client: UnixStream, shared: &Shared, head: &Head, rest: &[u8]) {
    let Some((host, port)) = split_authority(&head.target) else {
        let body = "agent-tools sandbox proxy: CONNECT needs a `host:port` target\n";
        let _ = respond(&mut client, 400, "Bad Request", body).await;
        return;
    };
    let target = match shared.policy.check_host(host, port) {
        Ok(t) => t,
        Err(refusal) => return refuse(&mut client, shared, &refusal).await,
    };
    let Some(mut upstream) = connect(&mut client, shared, target).await else {
        return;
    };
    if client
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .await
        .is_err()
        || upstream.write_all(rest).await.is_err()
    {
        return;
    }
    pipe(client, upstream, &shared.limits).await;
}

/// Hop-by-hop and proxy headers not passed on; `Host` and `Connection` are
/// set by the proxy.
fn dropped_header(name: &str) -> bool {
    [
        "host",
        "connection",
        "proxy-connection",
        "proxy-authorization",
        "keep-alive",
        "te",
        "trailer",
        "upgrade",
    ]
    .iter()
    .any(|h| name.eq_ignore_ascii_case(h))
}

/// An absolute-form request (`GET http://host/path HTTP/1.1`): checked,
/// rewritten to origin form with `Host` from the URL (so a forged `Host`
/// header cannot reach another site behind the same address) and
/// `Connection: close`, then forwarded.
async fn forward(mut client: UnixStream, shared: &Shared, head: &Head, rest: &[u8]) {
    let url = match Url::parse(&head.target) {
        Ok(u) if u.scheme() == "http" => u,
        Ok(u) if u.scheme() == "https" => {
            let body = "agent-tools sandbox proxy: https:// URLs go through CONNECT \
                        (set HTTPS_PROXY), the proxy does not open TLS itself\n";
            let _ = respond(&mut client, 400, "Bad Request", body).await;
            return;
        }
        _ => {
            let body = "agent-tools sandbox proxy: this is an HTTP proxy; send an absolute \
                        http:// URL or CONNECT host:port (set HTTP_PROXY/HTTPS_PROXY)\n";
            let _ = respond(&mut client, 400, "Bad Request", body).await;
            return;
        }
    };
    let target = match shared.policy.check_url(&url) {
        Ok(t) => t,
        Err(refusal) => return refuse(&mut client, shared, &refusal).await,
    };
    let Some(mut upstream) = connect(&mut client, shared, target).await else {
        return;
    };
    let mut out = Vec::with_capacity(head.len + 64);
    out.extend_from_slice(head.method.as_bytes());
    out.push(b' ');
    out.extend_from_slice(url.path().as_bytes());
    if let Some(q) = url.query() {
        out.push(b'?');
        out.extend_from_slice(q.as_bytes());
    }
    out.extend_from_slice(format!(" HTTP/1.{}\r\nHost: ", head.minor_version).as_bytes());
    let host = &url[url::Position::BeforeHost..url::Position::AfterPort];
    out.extend_from_slice(host.as_bytes());
    out.extend_from_slice(b"\r\nConnection: close\r\n");
    for (name, value) in &head.headers {
        if !dropped_header(name) {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(rest);
    if upstream.write_all(&out).await.is_err() {
        return;
    }
    pipe(client, upstream, &shared.limits).await;
}

/// When bytes last moved, and how many have, for one connection.
struct Activity {
    start: Instant,
    last_ms: AtomicU64,
    bytes: AtomicU64,
    cap: Option<u64>,
}

impl Activity {
    fn touch(&self, n: usize) -> io::Result<()> {
        let ms = u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(ms, Ordering::Relaxed);
        let total = self.bytes.fetch_add(n as u64, Ordering::Relaxed) + n as u64;
        match self.cap {
            Some(cap) if total > cap => Err(io::Error::other("byte limit reached")),
            _ => Ok(()),
        }
    }

    fn idle_for(&self) -> Duration {
        let last = Duration::from_millis(self.last_ms.load(Ordering::Relaxed));
        self.start.elapsed().saturating_sub(last)
    }
}

/// Copies both ways until both sides close, the connection idles for
/// `idle_timeout`, or it passes `max_connection_bytes`.
async fn pipe(client: UnixStream, upstream: TcpStream, limits: &ProxyLimits) {
    let activity = Activity {
        start: Instant::now(),
        last_ms: AtomicU64::new(0),
        bytes: AtomicU64::new(0),
        cap: limits.max_connection_bytes,
    };
    let (cr, cw) = client.into_split();
    let (ur, uw) = upstream.into_split();
    let idle = limits.idle_timeout;
    let _ = tokio::try_join!(
        one_way(cr, uw, idle, &activity),
        one_way(ur, cw, idle, &activity)
    );
}

async fn one_way<R, W>(mut r: R, mut w: W, idle: Duration, activity: &Activity) -> io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match tokio::time::timeout(idle, r.read(&mut buf)).await {
            Err(_) if activity.idle_for() >= idle => {
                return Err(io::Error::new(io::ErrorKind::TimedOut, "idle"));
            }
            Err(_) => continue,
            Ok(read) => read?,
        };
        if n == 0 {
            let _ = w.shutdown().await;
            return Ok(());
        }
        activity.touch(n)?;
        tokio::time::timeout(idle, w.write_all(&buf[..n]))
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "idle"))??;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_targets_split() {
        assert_eq!(split_authority("a.test:443"), Some(("a.test", 443)));
        assert_eq!(split_authority("[::1]:8080"), Some(("::1", 8080)));
        assert_eq!(split_authority("a.test"), None);
        assert_eq!(split_authority("a.test:99999"), None);
        assert_eq!(split_authority("[::1:80"), None);
    }
}
