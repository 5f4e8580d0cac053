//! A small OAuth authorization server and a protected MCP resource in front
//! of a real `McpServer` (one `shout` tool), for the OAuth tests of
//! tool-mcp (`tests/oauth.rs`) and tool-cli (`tests/cli/mcp_oauth.rs`,
//! which includes this file by path). The authorization server publishes
//! metadata, registers clients dynamically, approves at once (redirecting
//! with `code`, `state` and `iss`), checks PKCE, the client and the
//! `resource` at the token endpoint, and rotates refresh tokens; the
//! resource answers `401` with a `resource_metadata` challenge unless the
//! bearer token is one the server issued, then forwards the request.

#![allow(
    clippy::unwrap_used,
    clippy::needless_pass_by_value,
    dead_code,
    reason = "test support: a panic is the failure report; axum handlers take extractors by value"
)]

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;
use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};
use tool_mcp::McpServer;

#[derive(Default)]
pub(crate) struct Auth {
    pub(crate) base: String,
    pub(crate) inner: String,
    pub(crate) clients: HashSet<String>,
    /// code → (client id, code challenge, resource)
    pub(crate) codes: HashMap<String, (String, String, String)>,
    pub(crate) access: HashSet<String>,
    pub(crate) refresh: HashSet<String>,
    pub(crate) issued: usize,
    pub(crate) registrations: usize,
    pub(crate) refreshes: usize,
    /// Every `resource` sent to the authorization and token endpoints.
    pub(crate) resources: Vec<String>,
    /// Scopes asked for at the authorization endpoint.
    pub(crate) scopes: Vec<String>,
    /// Tokens the resource saw, in order.
    pub(crate) seen: Vec<String>,
    /// Client id → secret of pre-registered confidential clients (the
    /// token endpoint checks it, from HTTP Basic or the body).
    pub(crate) secrets: HashMap<String, String>,
    /// When set, the token endpoint refuses every request and echoes what
    /// it was sent (the body, the Basic credentials, the secrets by name),
    /// as a careless authorization server might.
    pub(crate) echo: bool,
    /// `expires_in` of the tokens issued (default 3600 s).
    pub(crate) expires_in: Option<u64>,
}

pub(crate) type Shared = Arc<Mutex<Auth>>;

fn query(text: &str) -> HashMap<String, String> {
    reqwest::Url::parse(&format!("http://x/?{text}"))
        .map(|u| u.query_pairs().into_owned().collect())
        .unwrap_or_default()
}

fn json_response(status: StatusCode, body: Value) -> Response {
    (
        status,
        [("content-type", "application/json")],
        body.to_string(),
    )
        .into_response()
}

async fn resource_metadata(State(s): State<Shared>) -> Response {
    let base = s.lock().unwrap().base.clone();
    json_response(
        StatusCode::OK,
        json!({"resource": format!("{base}/mcp"), "authorization_servers": [base],
               "scopes_supported": ["tools.read"]}),
    )
}

async fn server_metadata(State(s): State<Shared>) -> Response {
    let base = s.lock().unwrap().base.clone();
    json_response(
        StatusCode::OK,
        json!({
            "issuer": base,
            "authorization_endpoint": format!("{base}/authorize"),
            "token_endpoint": format!("{base}/token"),
            "registration_endpoint": format!("{base}/register"),
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token", "client_credentials"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "authorization_response_iss_parameter_supported": true,
        }),
    )
}

async fn register(State(s): State<Shared>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let mut auth = s.lock().unwrap();
    auth.registrations += 1;
    let id = format!("client-{}", auth.registrations);
    auth.clients.insert(id.clone());
    json_response(
        StatusCode::CREATED,
        json!({"client_id": id, "redirect_uris": request["redirect_uris"],
               "token_endpoint_auth_method": "none"}),
    )
}

async fn authorize(State(s): State<Shared>, uri: Uri) -> Response {
    let q = query(uri.query().unwrap_or_default());
    let mut auth = s.lock().unwrap();
    let ok = q.get("response_type").map(String::as_str) == Some("code")
        && q.get("code_challenge_method").map(String::as_str) == Some("S256")
        && q.get("client_id").is_some_and(|c| auth.clients.contains(c));
    let (Some(redirect), Some(state), Some(challenge), true) = (
        q.get("redirect_uri"),
        q.get("state"),
        q.get("code_challenge"),
        ok,
    ) else {
        return (StatusCode::BAD_REQUEST, "bad authorization request").into_response();
    };
    let resource = q.get("resource").cloned().unwrap_or_default();
    auth.resources.push(resource.clone());
    auth.scopes
        .push(q.get("scope").cloned().unwrap_or_default());
    let code = format!("code-{}", auth.codes.len() + 1);
    auth.codes.insert(
        code.clone(),
        (q["client_id"].clone(), challenge.clone(), resource),
    );
    let mut to = reqwest::Url::parse(redirect).unwrap();
    to.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", state)
        .append_pair("iss", &auth.base);
    (StatusCode::FOUND, [("location", to.to_string())]).into_response()
}

fn issue(auth: &mut Auth) -> Value {
    auth.issued += 1;
    let access = format!("access-{}", auth.issued);
    let refresh = format!("refresh-{}", auth.issued);
    auth.access.insert(access.clone());
    auth.refresh.insert(refresh.clone());
    json!({"access_token": access, "token_type": "Bearer",
           "expires_in": auth.expires_in.unwrap_or(3600),
           "refresh_token": refresh, "scope": "tools.read"})
}

/// The client id and secret of an `Authorization: Basic` header.
fn basic_credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let value = headers.get("authorization")?.to_str().ok()?;
    let encoded = value.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    let pair = String::from_utf8(decoded).ok()?;
    let (id, secret) = pair.split_once(':')?;
    let id = query(&format!("v={id}")).remove("v").unwrap_or_default();
    let secret = query(&format!("v={secret}"))
        .remove("v")
        .unwrap_or_default();
    Some((id, secret))
}

async fn token(State(s): State<Shared>, headers: HeaderMap, body: Bytes) -> Response {
    let mut form = query(std::str::from_utf8(&body).unwrap_or_default());
    let basic = basic_credentials(&headers);
    if let Some((id, secret)) = &basic {
        form.entry("client_id".to_owned())
            .or_insert_with(|| id.clone());
        form.entry("client_secret".to_owned())
            .or_insert_with(|| secret.clone());
    }
    let mut auth = s.lock().unwrap();
    if auth.echo {
        let sent = String::from_utf8_lossy(&body).into_owned();
        let pair = basic.map(|(i, p)| format!("{i}:{p}")).unwrap_or_default();
        return json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "invalid_client",
                   "error_description": format!("cannot accept {sent} with basic {pair}; refresh token {}",
                       form.get("refresh_token").cloned().unwrap_or_default()),
                   "client_secret": form.get("client_secret"),
                   "refresh_token": form.get("refresh_token"),
                   "access_token": "access-echoed-0123456789"}),
        );
    }
    let invalid = |what: &str| {
        json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "invalid_grant", "error_description": what}),
        )
    };
    if let Some(id) = form.get("client_id")
        && let Some(expected) = auth.secrets.get(id)
        && form.get("client_secret") != Some(expected)
    {
        return json_response(
            StatusCode::UNAUTHORIZED,
            json!({"error": "invalid_client", "error_description": "wrong client secret"}),
        );
    }
    auth.resources
        .push(form.get("resource").cloned().unwrap_or_default());
    match form.get("grant_type").map(String::as_str) {
        Some("authorization_code") => {
            let Some((client, challenge, resource)) =
                form.get("code").and_then(|c| auth.codes.remove(c))
            else {
                return invalid("unknown code");
            };
            let verifier = form.get("code_verifier").cloned().unwrap_or_default();
            let digest = sha2::Sha256::digest(verifier.as_bytes());
            let expected = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
            if expected != challenge
                || form.get("client_id") != Some(&client)
                || form.get("resource") != Some(&resource)
            {
                return invalid("PKCE, client or resource mismatch");
            }
            let answer = issue(&mut auth);
            json_response(StatusCode::OK, answer)
        }
        Some("refresh_token") => {
            // Rotation: a refresh token works once.
            let Some(old) = form
                .get("refresh_token")
                .filter(|r| auth.refresh.contains(*r))
            else {
                return invalid("unknown or used refresh token");
            };
            let old = old.clone();
            auth.refresh.remove(&old);
            auth.refreshes += 1;
            let answer = issue(&mut auth);
            json_response(StatusCode::OK, answer)
        }
        Some("client_credentials")
            if form
                .get("client_id")
                .is_some_and(|c| auth.secrets.contains_key(c)) =>
        {
            let answer = issue(&mut auth);
            json_response(StatusCode::OK, answer)
        }
        _ => invalid("unsupported grant"),
    }
}

/// The protected MCP endpoint: checks the bearer token, then forwards the
/// request to the real server.
async fn mcp(State(s): State<Shared>, request: Request) -> Response {
    let token = request
        .headers()
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::to_owned);
    let (base, inner) = {
        let mut auth = s.lock().unwrap();
        let valid = token.as_ref().is_some_and(|t| auth.access.contains(t));
        if let Some(t) = &token {
            auth.seen.push(t.clone());
        }
        if !valid {
            let challenge = format!(
                "Bearer resource_metadata=\"{}/.well-known/oauth-protected-resource/mcp\"",
                auth.base
            );
            return (
                StatusCode::UNAUTHORIZED,
                [("www-authenticate", challenge)],
                "unauthorized",
            )
                .into_response();
        }
        (auth.base.clone(), auth.inner.clone())
    };
    let _ = base;
    let method = request.method().clone();
    let headers: HeaderMap = request.headers().clone();
    let body = axum::body::to_bytes(request.into_body(), 1 << 20)
        .await
        .unwrap_or_default();
    let mut forward = reqwest::Client::new().request(method, &inner);
    for (name, value) in &headers {
        if !matches!(name.as_str(), "host" | "authorization" | "content-length") {
            forward = forward.header(name, value);
        }
    }
    let Ok(answer) = forward.body(body).send().await else {
        return (StatusCode::BAD_GATEWAY, "inner server").into_response();
    };
    let mut response = Response::builder().status(answer.status().as_u16());
    for (name, value) in answer.headers() {
        if !matches!(name.as_str(), "content-length" | "transfer-encoding") {
            response = response.header(name, value);
        }
    }
    response
        .body(Body::from_stream(answer.bytes_stream()))
        .unwrap()
}

/// Starts the real MCP server and the protected front; returns the MCP URL
/// and the shared state.
pub(crate) async fn start() -> (String, Shared) {
    let mut tools = ToolRegistry::new();
    let spec = ToolSpec::new(
        "shout",
        "Upper-case a text.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    tools
        .register(
            Tool::new(
                spec,
                |args: serde_json::Map<String, Value>, _ctx| async move {
                    ToolResult::ok(args["text"].as_str().unwrap_or_default().to_uppercase())
                },
            )
            .unwrap(),
        )
        .unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let (inner, _task) = McpServer::new(tools)
        .serve_http(([127, 0, 0, 1], 0).into(), stop)
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let shared: Shared = Arc::new(Mutex::new(Auth {
        base: base.clone(),
        inner: format!("http://{inner}/mcp"),
        ..Auth::default()
    }));
    let app = axum::Router::new()
        .route(
            "/.well-known/oauth-protected-resource/mcp",
            get(resource_metadata),
        )
        .route(
            "/.well-known/oauth-authorization-server",
            get(server_metadata),
        )
        .route("/register", post(register))
        .route("/authorize", get(authorize))
        .route("/token", post(token))
        .route("/mcp", any(mcp))
        .with_state(shared.clone());
    tokio::spawn(async move { axum::serve(listener, app).await });
    (format!("{base}/mcp"), shared)
}
