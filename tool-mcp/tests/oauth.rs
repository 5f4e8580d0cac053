//! OAuth 2.1 end to end against servers the test starts: a small
//! authorization server (metadata, dynamic registration, an authorization
//! endpoint that approves at once, a token endpoint checking PKCE and the
//! `resource`, issuing rotating refresh tokens) and a protected resource in
//! front of a real `McpServer` (protected-resource metadata, `401` with a
//! `WWW-Authenticate` challenge, bearer tokens checked, then the request
//! forwarded). Proves discovery → registration → PKCE → token → call →
//! refresh, the token cache (file mode 0600, rotation, reuse by a second
//! connection without a login) and that the client asks for a login only
//! when it must.

#![allow(
    clippy::unwrap_used,
    clippy::needless_pass_by_value,
    reason = "tests: a panic is the failure report; axum handlers take their extractors by value"
)]

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get, post};
use base64::Engine;
use serde_json::{Value, json};
use sha2::Digest;
use tool_core::{Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
use tool_mcp::{LoopbackLogin, McpServer, McpToolSource, OAuth, TokenCache};

#[derive(Default)]
struct Auth {
    base: String,
    inner: String,
    clients: HashSet<String>,
    /// code → (client id, code challenge, resource)
    codes: HashMap<String, (String, String, String)>,
    access: HashSet<String>,
    refresh: HashSet<String>,
    issued: usize,
    registrations: usize,
    refreshes: usize,
    /// Every `resource` sent to the authorization and token endpoints.
    resources: Vec<String>,
    /// Scopes asked for at the authorization endpoint.
    scopes: Vec<String>,
    /// Tokens the resource saw, in order.
    seen: Vec<String>,
}

type Shared = Arc<Mutex<Auth>>;

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
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
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
    json!({"access_token": access, "token_type": "Bearer", "expires_in": 3600,
           "refresh_token": refresh, "scope": "tools.read"})
}

async fn token(State(s): State<Shared>, body: Bytes) -> Response {
    let form = query(std::str::from_utf8(&body).unwrap_or_default());
    let mut auth = s.lock().unwrap();
    let invalid = |what: &str| {
        json_response(
            StatusCode::BAD_REQUEST,
            json!({"error": "invalid_grant", "error_description": what}),
        )
    };
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
async fn start() -> (String, Shared) {
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

/// A login whose "browser" follows the redirects with an HTTP client,
/// counting the authorization URLs it was given.
fn login(opened: Arc<AtomicUsize>) -> LoopbackLogin {
    LoopbackLogin::new(move |url| {
        opened.fetch_add(1, Ordering::SeqCst);
        tokio::spawn(async move {
            let _ = reqwest::get(&url).await;
        });
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn discovery_registration_pkce_token_call_refresh_and_the_cache() {
    let (url, shared) = start().await;
    let state = tempfile::tempdir().unwrap();
    let cache = TokenCache::new(state.path().join("mcp-oauth"));
    let opened = Arc::new(AtomicUsize::new(0));
    let oauth = OAuth::new()
        .with_cache(cache.clone())
        .with_login(login(opened.clone()));

    // First connection: 401 → discovery → registration → PKCE → token.
    let conn = McpToolSource::http(url.clone())
        .named("guarded")
        .with_oauth(oauth.clone())
        .connect()
        .await
        .unwrap();
    let mut args = serde_json::Map::new();
    args.insert("text".into(), json!("hi"));
    let result = conn.call("shout", args.clone(), &ToolContext::new()).await;
    assert_eq!(result.output, "HI");
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    {
        let auth = shared.lock().unwrap();
        assert_eq!(auth.registrations, 1);
        assert_eq!(auth.issued, 1);
        // RFC 8707: the resource as the metadata published it, both times.
        assert_eq!(auth.resources, vec![url.clone(), url.clone()]);
        // The scope the resource metadata lists.
        assert_eq!(auth.scopes, vec!["tools.read".to_owned()]);
    }

    // The cache file: mode 0600 in a 0700 folder, the refresh token inside.
    use std::os::unix::fs::PermissionsExt;
    let file = cache.path_for(&url);
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&file), 0o600);
    assert_eq!(mode(cache.dir()), 0o700);
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("refresh-1") && text.contains("access-1"),
        "{text}"
    );

    // The server revokes the access token: the next call gets a 401, the
    // client refreshes (rotating the refresh token) and retries.
    shared.lock().unwrap().access.clear();
    let result = conn.call("shout", args.clone(), &ToolContext::new()).await;
    assert_eq!(result.output, "HI");
    {
        let auth = shared.lock().unwrap();
        assert_eq!(auth.refreshes, 1);
        assert_eq!(auth.seen.last().map(String::as_str), Some("access-2"));
    }
    assert_eq!(opened.load(Ordering::SeqCst), 1, "a refresh needs no login");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("refresh-2") && !text.contains("refresh-1"),
        "the rotated refresh token replaces the old one: {text}"
    );
    conn.close();

    // A second connection (another run of the program) uses the cache:
    // no login, no registration, the cached token.
    let again = McpToolSource::http(url.clone())
        .named("guarded")
        .with_oauth(OAuth::new().with_cache(cache.clone()))
        .connect()
        .await
        .unwrap();
    let result = again.call("shout", args.clone(), &ToolContext::new()).await;
    assert_eq!(result.output, "HI");
    {
        let auth = shared.lock().unwrap();
        assert_eq!(auth.registrations, 1);
        assert_eq!(auth.seen.last().map(String::as_str), Some("access-2"));
    }
    again.close();

    // Without a cache entry and without a login, connecting fails and says
    // how to log in.
    assert!(cache.remove(&url).unwrap());
    assert!(!cache.remove(&url).unwrap());
    let err = McpToolSource::http(url.clone())
        .named("guarded")
        .with_oauth(OAuth::new().with_cache(cache.clone()))
        .connect()
        .await
        .unwrap_err()
        .to_string();
    assert!(err.contains("tool mcp login"), "{err}");
    assert!(!err.contains("access-"), "{err}");
}

#[test]
fn oauth_settings_parse_and_refuse_bad_ones() {
    assert!(OAuth::parse(&json!(true)).is_ok());
    let oauth = OAuth::parse(&json!({"client_id": "abc", "client_secret": "${SECRET}",
                                     "scopes": ["a", "b"]}))
    .unwrap();
    let shown = format!("{oauth:?}");
    assert!(
        shown.contains("abc") && !shown.contains("SECRET"),
        "{shown}"
    );
    let err = |v: Value| OAuth::parse(&v).unwrap_err();
    assert!(err(json!({"client_secret": "x"})).contains("needs `oauth.client_id`"));
    assert!(err(json!({"scopes": ["a b"]})).contains("space"));
    assert!(err(json!({"grant": "password"})).contains("neither"));
    assert!(
        err(json!({"grant": "client_credentials", "client_id": "a"})).contains("client_secret")
    );
    assert!(err(json!({"clientid": "a"})).contains("unknown key `clientid`"));
    assert!(err(json!({"client_metadata_url": "http://x/c.json"})).contains("https"));
    assert!(err(json!(false)).contains("`true` or an object"));
    assert!(err(json!({"scopes": vec!["s"; 65]})).contains("at most 64"));
}

/// `tool --mcp-config F serve` in small: a registry importing the protected
/// server, served again over HTTP behind its own bearer token. The
/// re-exporting server's client's token never reaches the upstream server:
/// upstream sees only the tokens its own authorization server issued.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reexport_never_forwards_its_clients_token_upstream() {
    let (url, shared) = start().await;
    let opened = Arc::new(AtomicUsize::new(0));
    let upstream = McpToolSource::http(url.clone())
        .named("guarded")
        .with_oauth(OAuth::new().with_login(login(opened.clone())))
        .connect()
        .await
        .unwrap();
    let live = tool_mcp::LiveRegistry::new(ToolRegistry::new());
    assert_eq!(
        upstream.import_into(&live).await.unwrap(),
        ["guarded__shout"]
    );
    let client_token = "the-downstream-clients-own-token-0123456789";
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live)
        .serve_http_with(
            ([127, 0, 0, 1], 0).into(),
            tool_mcp::HttpAccess::loopback()
                .with_token(client_token)
                .unwrap(),
            stop.clone(),
        )
        .await
        .unwrap();
    let downstream = McpToolSource::http(format!("http://{addr}/mcp"))
        .with_bearer_token(client_token)
        .connect()
        .await
        .unwrap();
    let mut args = serde_json::Map::new();
    args.insert("text".into(), json!("relay"));
    let result = downstream
        .call("guarded__shout", args, &ToolContext::new())
        .await;
    assert_eq!(result.output, "RELAY");
    let seen = shared.lock().unwrap().seen.clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|t| t.starts_with("access-")),
        "upstream saw a token its authorization server did not issue: {seen:?}"
    );
    assert_eq!(opened.load(Ordering::SeqCst), 1);
    downstream.close();
    upstream.close();
    stop.cancel();
}
