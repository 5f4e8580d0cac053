//! Who may use the HTTP server ([`HttpAccess`]), and the layers in front of
//! rmcp's Streamable HTTP service: the bearer token, then the message checks.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use crate::error::{Error, ErrorKind};
use crate::framing::{self, Checked, MAX_MESSAGE_BYTES};

/// Shortest bearer token accepted, in bytes (16): a token is a password
/// anyone on the network may try.
pub const MIN_TOKEN_LEN: usize = 16;

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

/// The router: `mcp` (rmcp's service nested at `/mcp`), behind the message checks, behind
/// the token check when `access` has a token, else (loopback without a
/// token) behind the same-user check. Serve it with connect info
/// (`into_make_service_with_connect_info::<SocketAddr>`).
pub(crate) fn router(mcp: axum::Router, access: &HttpAccess) -> axum::Router {
    let router = mcp.layer(middleware::from_fn(check_post));
    match &access.token {
        Some(digest) => router.layer(middleware::from_fn_with_state(
            Arc::clone(digest),
            require_token,
        )),
        None => router.layer(middleware::from_fn(require_same_user)),
    }
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
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(1) == Some(&wanted.as_str()))
            .then(|| fields.get(7).and_then(|u| u.parse().ok()))
            .flatten()
    })
}

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

/// A POST body is read up to [`MAX_MESSAGE_BYTES`] and checked as a stdio
/// line is; what fails is answered here, the rest goes on to rmcp unchanged.
async fn check_post(request: Request, next: Next) -> Response {
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
    let Ok(bytes) = axum::body::to_bytes(body, MAX_MESSAGE_BYTES).await else {
        return json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            &framing::oversize(b"", None).answer,
        );
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
        Checked::Pass(_) | Checked::Skip => {
            next.run(Request::from_parts(parts, Body::from(bytes)))
                .await
        }
    }
}
