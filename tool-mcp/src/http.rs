//! Who may use the HTTP server ([`HttpAccess`]), and the layers in front of
//! rmcp's Streamable HTTP service: the bearer token, then the message checks.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use tokio_util::sync::CancellationToken;

use crate::error::{Error, ErrorKind};
use crate::framing::{self, Checked, MAX_MESSAGE_BYTES};

/// Shortest bearer token accepted, in bytes (16): a token is a password
/// anyone on the network may try.
pub const MIN_TOKEN_LEN: usize = 16;

/// How long a Streamable HTTP session may stay unused before it is closed
/// (5 minutes): [`HttpLimits::idle_timeout`]'s default.
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);
/// How many Streamable HTTP sessions may be open at once (256):
/// [`HttpLimits::max_sessions`]'s default.
pub const DEFAULT_MAX_SESSIONS: usize = 256;
/// How long a client has to send a request's line and headers (10 s):
/// [`HttpLimits::header_timeout`]'s default.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client has to send a POST body once its headers are in
/// (30 s): [`HttpLimits::body_timeout`]'s default.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The longest `Retry-After` a refused new session is told (60 s).
pub const MAX_RETRY_AFTER: Duration = Duration::from_secs(60);

/// What one client of a server started with
/// [`McpServer::serve_http_with`](crate::McpServer::serve_http_with) may hold
/// and how long it may take; set with
/// [`McpServer::with_http_limits`](crate::McpServer::with_http_limits).
/// Every field is set by `Default` to the constant of the same name
/// (`DEFAULT_*`); the `with_*` methods change one.
///
/// - `idle_timeout`: a session (`Mcp-Session-Id`, 2025-11-25 era) that gets
///   no message for this long is closed and its state dropped; its client's
///   next request gets `404`, upon which the MCP spec has it start a new
///   session. Default [`DEFAULT_IDLE_TIMEOUT`] (5 min).
/// - `max_sessions`: open sessions at most; an `initialize` past it gets
///   `503 Service Unavailable` with `Retry-After` (seconds: the idle
///   timeout, at most [`MAX_RETRY_AFTER`]) and opens nothing. Default
///   [`DEFAULT_MAX_SESSIONS`] (256; about 120 KiB each, so ~30 MiB).
/// - `header_timeout`: the request line and headers must have arrived this
///   long after the server starts waiting for them (a new connection, or
///   an idle kept-alive one); otherwise the connection is closed. Default
///   [`DEFAULT_HEADER_TIMEOUT`] (10 s).
/// - `body_timeout`: a POST body must have arrived this long after its
///   headers; otherwise the answer is `408 Request Timeout` and the
///   connection is closed. Default [`DEFAULT_BODY_TIMEOUT`] (30 s).
///
/// Zero durations and a zero session count are raised to 1 (ms or
/// session): a limit of nothing would refuse every client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpLimits {
    /// Idle time after which a session is closed.
    pub idle_timeout: Duration,
    /// Open sessions at most.
    pub max_sessions: usize,
    /// Time allowed for a request's line and headers.
    pub header_timeout: Duration,
    /// Time allowed for a POST body after its headers.
    pub body_timeout: Duration,
}

impl Default for HttpLimits {
    fn default() -> Self {
        Self {
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            max_sessions: DEFAULT_MAX_SESSIONS,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
        }
    }
}

impl HttpLimits {
    /// These limits with sessions closed after `idle` without a message.
    #[must_use]
    pub fn with_idle_timeout(mut self, idle: Duration) -> Self {
        self.idle_timeout = idle.max(Duration::from_millis(1));
        self
    }

    /// These limits with at most `max` sessions open at once.
    #[must_use]
    pub fn with_max_sessions(mut self, max: usize) -> Self {
        self.max_sessions = max.max(1);
        self
    }

    /// These limits with `timeout` for a request's line and headers.
    #[must_use]
    pub fn with_header_timeout(mut self, timeout: Duration) -> Self {
        self.header_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// These limits with `timeout` for a POST body.
    #[must_use]
    pub fn with_body_timeout(mut self, timeout: Duration) -> Self {
        self.body_timeout = timeout.max(Duration::from_millis(1));
        self
    }

    /// The `Retry-After` of a refused new session, in whole seconds (at
    /// least 1): the idle timeout, at most [`MAX_RETRY_AFTER`].
    pub fn retry_after_secs(&self) -> u64 {
        self.idle_timeout.min(MAX_RETRY_AFTER).as_secs().max(1)
    }
}

/// Who may use a server started with
/// [`McpServer::serve_http_with`](crate::McpServer::serve_http_with).
///
/// - [`loopback`](Self::loopback) (the default): the address must be a
///   loopback address; no token, but only the server's own user (or root)
///   may connect: the owner of the client's socket is looked up in
///   `/proc/net/tcp` / `tcp6` for every request, because loopback does not
///   separate the users of one machine and the server hands out a shell.
/// - [`remote`](Self::remote): any address, including `0.0.0.0` and `[::]`;
///   every request needs `Authorization: Bearer <token>`.
/// - [`loopback`](Self::loopback)`.`[`with_token`](Self::with_token): loopback
///   only, and the token too (other local users, local web pages).
///
/// Serving MCP hands out every tool served, `bash_command` included, a shell:
/// never serve a non-loopback address without a token. The token is kept as
/// its SHA-256 and compared in constant time (no timing leak of its content
/// or length). `Debug` does not show it.
#[derive(Clone, Default)]
pub struct HttpAccess {
    remote: bool,
    token: Option<Arc<[u8; 32]>>,
}

impl std::fmt::Debug for HttpAccess {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HttpAccess")
            .field("remote", &self.remote)
            .field("token", &self.token.as_ref().map(|_| "<set>"))
            .finish()
    }
}

impl HttpAccess {
    /// Loopback clients only, without a token.
    pub fn loopback() -> Self {
        Self::default()
    }

    /// Clients anywhere, each request with `Authorization: Bearer <token>`.
    ///
    /// # Errors
    /// [`ErrorKind::Config`] when the token is shorter than
    /// [`MIN_TOKEN_LEN`] bytes or holds whitespace or control characters.
    pub fn remote(token: &str) -> Result<Self, Error> {
        Ok(Self {
            remote: true,
            ..Self::loopback().with_token(token)?
        })
    }

    /// The same access, and every request needs the bearer `token`.
    ///
    /// # Errors
    /// As [`remote`](Self::remote).
    pub fn with_token(mut self, token: &str) -> Result<Self, Error> {
        if token.len() < MIN_TOKEN_LEN {
            return Err(Error::new(
                ErrorKind::Config,
                format!(
                    "the bearer token is {} bytes long; it needs at least {MIN_TOKEN_LEN} (e.g. `openssl rand -hex 32`)",
                    token.len()
                ),
            ));
        }
        if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(Error::new(
                ErrorKind::Config,
                "the bearer token must not contain spaces or control characters",
            ));
        }
        self.token = Some(Arc::new(Sha256::digest(token.as_bytes()).into()));
        Ok(self)
    }

    /// Whether clients on other machines are let in.
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// Whether requests need a bearer token.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }

    /// Refuses a non-loopback `addr` unless remote access is on.
    pub(crate) fn permits(&self, addr: SocketAddr) -> Result<(), Error> {
        if self.remote || addr.ip().is_loopback() {
            return Ok(());
        }
        Err(Error::new(
            ErrorKind::Config,
            format!(
                "refusing to serve MCP on {addr}: it is not a loopback address, and anyone who reaches it could run the tools served (a shell, with bash_command); allow remote clients with a bearer token (HttpAccess::remote)"
            ),
        ))
    }
}

/// The longest a health check may take before `GET /health` answers `503`
/// (2 s): a load balancer's check interval is usually shorter than its
/// own timeout, and a store that slow cannot serve calls either.
pub const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// How long one health check's answer is reused (250 ms): however many
/// requests `GET /health` gets, the check (a state store's write-and-read probe) runs at
/// most four times a second.
pub const HEALTH_CACHE: Duration = Duration::from_millis(250);

/// A readiness check: `true` when the server can serve calls.
pub(crate) type HealthCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// `GET /health`'s check and its last answer.
#[derive(Clone)]
pub(crate) struct Health {
    check: Option<HealthCheck>,
    last: Arc<tokio::sync::Mutex<Option<(tokio::time::Instant, bool)>>>,
}

impl Health {
    pub(crate) fn new(check: Option<HealthCheck>) -> Self {
        Self {
            check,
            last: Arc::default(),
        }
    }

    /// Whether the server can serve: the check's answer of at most
    /// [`HEALTH_CACHE`] ago, else a new one (one at a time).
    async fn ok(&self) -> bool {
        let Some(check) = &self.check else {
            return true;
        };
        let mut last = self.last.lock().await;
        if let Some((at, ok)) = *last
            && at.elapsed() < HEALTH_CACHE
        {
            return ok;
        }
        let check = Arc::clone(check);
        let ok = matches!(
            tokio::time::timeout(HEALTH_TIMEOUT, tokio::task::spawn_blocking(move || check()))
                .await,
            Ok(Ok(true))
        );
        *last = Some((tokio::time::Instant::now(), ok));
        ok
    }
}

/// The `/health` route, outside the token and message checks: `200 ok` or
/// `503 unavailable`, never cached by a proxy, nothing else told.
pub(crate) fn health_route(health: Health) -> axum::Router {
    axum::Router::new().route(
        "/health",
        axum::routing::get(move || {
            let health = health.clone();
            async move {
                let (status, body) = if health.ok().await {
                    (StatusCode::OK, "ok\n")
                } else {
                    (StatusCode::SERVICE_UNAVAILABLE, "unavailable\n")
                };
                (
                    status,
                    [
                        (header::CACHE_CONTROL, "no-store"),
                        (header::CONTENT_TYPE, "text/plain; charset=utf-8"),
                    ],
                    body,
                )
            }
        }),
    )
}

/// The router: `mcp` (rmcp's service nested at `/mcp`), behind the message checks, behind
/// the token check when `access` has a token, else (loopback without a
/// token) behind the same-user check. Serve it with connect info
/// (`into_make_service_with_connect_info::<SocketAddr>`).
pub(crate) fn router(
    mcp: axum::Router,
    access: &HttpAccess,
    limits: HttpLimits,
    sessions: Arc<LocalSessionManager>,
) -> axum::Router {
    let gate = Arc::new(SessionGate {
        sessions,
        limits,
        opening: AtomicUsize::new(0),
    });
    let router = mcp
        .layer(middleware::from_fn_with_state(gate, check_post))
        .layer(middleware::from_fn(session_end_is_ok));
    match &access.token {
        Some(digest) => router.layer(middleware::from_fn_with_state(
            Arc::clone(digest),
            require_token,
        )),
        None => router.layer(middleware::from_fn(require_same_user)),
    }
}

/// A session ended by `DELETE` is answered `200 OK` where rmcp answers
/// `202 Accepted`: the transport spec leaves the success code open, and the
/// Python SDK (and clients written like it) accept only 200 or 204, logging
/// "Session termination failed: 202" otherwise (issue 24, first hour).
async fn session_end_is_ok(request: Request, next: Next) -> Response {
    let delete = request.method() == Method::DELETE;
    let mut response = next.run(request).await;
    if delete && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::OK;
    }
    response
}

/// Answers `403` unless the client's socket belongs to this process's user
/// (or root): without a token, a loopback server is for its own user only.
async fn require_same_user(request: Request, next: Next) -> Response {
    let peer = request
        .extensions()
        .get::<axum::extract::ConnectInfo<SocketAddr>>()
        .map(|c| c.0);
    let me = rustix::process::geteuid().as_raw();
    match peer.and_then(socket_owner) {
        Some(uid) if uid == me || uid == 0 => next.run(request).await,
        found => {
            let why = match found {
                Some(uid) => format!("the client runs as user {uid}"),
                None => "the client's user could not be found".to_owned(),
            };
            (
                StatusCode::FORBIDDEN,
                format!(
                    "Forbidden: this server has no token, so it serves only its own user (uid \
                     {me}), and {why}. Start it with --token-file FILE to let others in."
                ),
            )
                .into_response()
        }
    }
}

/// The uid owning the TCP socket whose local address is `peer` (a client
/// on this machine), from `/proc/net/tcp` or `/proc/net/tcp6`.
fn socket_owner(peer: SocketAddr) -> Option<u32> {
    let (file, address) = match peer {
        SocketAddr::V4(v4) => (
            "/proc/net/tcp",
            format!("{:08X}", u32::from_ne_bytes(v4.ip().octets())),
        ),
        SocketAddr::V6(v6) => (
            "/proc/net/tcp6",
            v6.ip()
                .octets()
                .chunks(4)
                .map(|c| format!("{:08X}", u32::from_ne_bytes([c[0], c[1], c[2], c[3]])))
                .collect(),
        ),
    };
    let wanted = format!("{address}:{:04X}", peer.port());
    let table = std::fs::read_to_string(file).ok()?;
    owner_in(&table, &wanted)
}

/// The uid of the connected (`ESTABLISHED`, state `01`) socket whose local
/// address is `local` (`HEXADDR:HEXPORT`) in a `/proc/net/tcp` table; `None`
/// when there is none, or when several disagree. Sockets in other states
/// are left out: a `TIME_WAIT` entry of an earlier connection from the same
/// port is listed with uid 0 (root), which would let any user in.
fn owner_in(table: &str, local: &str) -> Option<u32> {
    let mut owner = None;
    for line in table.lines().skip(1) {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.get(1) != Some(&local) || fields.get(3) != Some(&"01") {
            continue;
        }
        let uid: u32 = fields.get(7)?.parse().ok()?;
        match owner {
            Some(seen) if seen != uid => return None,
            _ => owner = Some(uid),
        }
    }
    owner
}

#[cfg(test)]
mod owner_tests {
    use super::owner_in;

    const HEAD: &str = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode";

    fn line(local: &str, remote: &str, st: &str, uid: u32) -> String {
        format!(
            "   0: {local} {remote} {st} 00000000:00000000 00:00000000 00000000 {uid:>5}        0 0 1"
        )
    }

    #[test]
    fn only_a_connected_socket_names_the_client() {
        let client = "0100007F:9C40";
        let server = "0100007F:1F90";
        // An earlier connection from the same port, in TIME_WAIT (uid 0),
        // listed first; the server's own end; the client's connected socket.
        let table = [
            HEAD.to_owned(),
            line(client, server, "06", 0),
            line(server, client, "01", 0),
            line(client, server, "01", 65534),
        ]
        .join("\n");
        assert_eq!(owner_in(&table, client), Some(65534));
        // Only the TIME_WAIT entry: nobody, so the request is refused.
        let stale = [HEAD.to_owned(), line(client, server, "06", 0)].join("\n");
        assert_eq!(owner_in(&stale, client), None);
        // Two connected sockets on one local port that disagree: nobody.
        let other = "0100007F:0050";
        let both = [
            HEAD.to_owned(),
            line(client, server, "01", 1000),
            line(client, other, "01", 65534),
        ]
        .join("\n");
        assert_eq!(owner_in(&both, client), None);
    }
}

/// A request's bearer token, checked by the server (the SHA-256 of the
/// server's token): what names the client in the stateless era.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Authenticated(pub(crate) [u8; 32]);

/// The token of an `Authorization: Bearer <token>` header (RFC 6750 §2.1;
/// the scheme is case-insensitive).
fn bearer(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

async fn require_token(
    State(expected): State<Arc<[u8; 32]>>,
    request: Request,
    next: Next,
) -> Response {
    let given = bearer(request.headers());
    let matches = given.is_some_and(|token| {
        let digest: [u8; 32] = Sha256::digest(token.as_bytes()).into();
        bool::from(digest.ct_eq(&*expected))
    });
    if matches {
        // Who the client is for the task caps (`tasks.rs`): the token it
        // proved, as its digest.
        let mut request = request;
        request.extensions_mut().insert(Authenticated(*expected));
        return next.run(request).await;
    }
    // RFC 6750 §3: the challenge, and `invalid_token` when one was given.
    let (challenge, message) = match given {
        None => (
            "Bearer realm=\"mcp\"",
            "Unauthorized: this server needs `Authorization: Bearer <token>`",
        ),
        Some(_) => (
            "Bearer realm=\"mcp\", error=\"invalid_token\"",
            "Unauthorized: the bearer token is wrong",
        ),
    };
    let mut response = (StatusCode::UNAUTHORIZED, message).into_response();
    response.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        HeaderValue::from_static(challenge),
    );
    response
}

fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|essence| essence.trim().eq_ignore_ascii_case("application/json"))
        })
}

fn json_error(status: StatusCode, answer: &serde_json::Value) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        answer.to_string(),
    )
        .into_response()
}

/// What [`check_post`] needs to bound sessions and bodies.
struct SessionGate {
    sessions: Arc<LocalSessionManager>,
    limits: HttpLimits,
    /// `initialize` requests let through whose session may not be in
    /// `sessions` yet.
    opening: AtomicUsize,
}

/// Gives the slot of an `initialize` back when its request is answered.
struct Opening<'a>(&'a AtomicUsize);

impl Drop for Opening<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// `503` with `Retry-After` for an `initialize` past the session cap.
fn too_many_sessions(limits: &HttpLimits) -> Response {
    let retry = limits.retry_after_secs();
    let mut response = (
        StatusCode::SERVICE_UNAVAILABLE,
        format!(
            "Service Unavailable: this server holds its limit of {} MCP sessions; retry in \
             {retry} s (idle sessions close after {} s), or end a session you no longer use \
             with DELETE",
            limits.max_sessions,
            limits.idle_timeout.as_secs()
        ),
    )
        .into_response();
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry));
    response
}

/// Whether `message` opens a session (`initialize`).
fn is_initialize(message: &rmcp::model::ClientJsonRpcMessage) -> bool {
    matches!(
        message,
        rmcp::model::ClientJsonRpcMessage::Request(request)
            if matches!(request.request, rmcp::model::ClientRequest::InitializeRequest(_))
    )
}

/// A POST body is read up to [`MAX_MESSAGE_BYTES`] within the body timeout
/// (`408` after it) and checked as a stdio line is; what fails is answered
/// here. An `initialize` past the session cap gets `503` with
/// `Retry-After`; the rest goes on to rmcp unchanged.
async fn check_post(
    State(gate): State<Arc<SessionGate>>,
    request: Request,
    next: Next,
) -> Response {
    if request.method() != Method::POST || !is_json(request.headers()) {
        return next.run(request).await;
    }
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if let Some(len) = declared.filter(|len| *len > MAX_MESSAGE_BYTES) {
        return json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &framing::oversize(b"", Some(len)).answer,
        );
    }
    let (parts, body) = request.into_parts();
    let read = tokio::time::timeout(
        gate.limits.body_timeout,
        axum::body::to_bytes(body, MAX_MESSAGE_BYTES),
    );
    let bytes = match read.await {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(_)) => {
            return json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                &framing::oversize(b"", None).answer,
            );
        }
        Err(_) => {
            let mut response = (
                StatusCode::REQUEST_TIMEOUT,
                format!(
                    "Request Timeout: the body did not arrive within {} ms of its headers",
                    gate.limits.body_timeout.as_millis()
                ),
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
            return response;
        }
    };
    match framing::check_message(&bytes) {
        Checked::Reject(rejection) => {
            // Streamable HTTP: input the server cannot accept is an HTTP
            // error; a request with bad params is answered in band (as rmcp
            // answers its own -32602).
            let status = if rejection.code == framing::INVALID_PARAMS {
                StatusCode::OK
            } else {
                StatusCode::BAD_REQUEST
            };
            json_error(status, &rejection.answer)
        }
        Checked::Pass(message)
            if is_initialize(&message) && !parts.headers.contains_key("mcp-session-id") =>
        {
            // Counted before the check, so that concurrent `initialize`s
            // cannot pass the cap together.
            let opening = gate.opening.fetch_add(1, Ordering::AcqRel) + 1;
            let _slot = Opening(&gate.opening);
            let open = gate.sessions.sessions.read().await.len();
            if open + opening > gate.limits.max_sessions {
                return too_many_sessions(&gate.limits);
            }
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
        Checked::Pass(_) | Checked::Skip => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}

/// Serves HTTP/1.1 connections from `listener` with `router` until `stop`
/// is cancelled, then lets the open connections finish their requests and
/// returns once they have closed. A connection's request line and headers
/// must arrive within `limits.header_timeout` (hyper's header read
/// timeout, which needs the Tokio timer set here), else it is closed;
/// every request carries the client's address as
/// [`ConnectInfo`](axum::extract::ConnectInfo).
pub(crate) async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: HttpLimits,
    stop: CancellationToken,
) {
    use hyper::service::Service as _;
    use hyper_util::rt::{TokioIo, TokioTimer};

    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: wait a moment, go on.
                    tracing::warn!("accepting a connection failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stop.cancelled() => break,
        };
        let app = hyper_util::service::TowerToHyperService::new(router.clone());
        let service = hyper::service::service_fn(
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request
                    .extensions_mut()
                    .insert(axum::extract::ConnectInfo(peer));
                app.call(request)
            },
        );
        // No upgrades: MCP has no use for WebSockets or CONNECT.
        let connection = builder.serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!("connection from {peer} ended: {e}");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
