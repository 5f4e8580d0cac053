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

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use support::oauth_server::start;
use tool_core::{ToolContext, ToolRegistry};
use tool_mcp::{LoopbackLogin, McpServer, McpToolSource, OAuth, TokenCache};

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
    assert!(
        err(json!({"grant": "password"}))
            .contains("`password` is not `authorization_code`, `client_credentials`")
    );
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
