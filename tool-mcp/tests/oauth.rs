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

/// The one file in `dir`.
fn only_file(dir: &std::path::Path) -> std::path::PathBuf {
    let files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files[0].clone()
}

/// Every file under `dir`, as text.
fn all_text(dir: &std::path::Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| std::fs::read_to_string(e.unwrap().path()).unwrap_or_default())
                .collect()
        })
        .unwrap_or_default()
}

fn shout_args() -> serde_json::Map<String, Value> {
    let mut args = serde_json::Map::new();
    args.insert("text".into(), json!("hi"));
    args
}

/// Calls the server's `shout` with "hi" through `conn`; asserts "HI".
async fn shout_hi(conn: &tool_mcp::McpConnection) {
    let result = conn.call("shout", shout_args(), &ToolContext::new()).await;
    assert_eq!(result.output, "HI", "{result:?}");
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
    shout_hi(&conn).await;
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
    let file = only_file(cache.dir());
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
    shout_hi(&conn).await;
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
    shout_hi(&again).await;
    {
        let auth = shared.lock().unwrap();
        assert_eq!(auth.registrations, 1);
        assert_eq!(auth.seen.last().map(String::as_str), Some("access-2"));
    }
    again.close();

    // Without a cache entry and without a login, connecting fails and says
    // how to log in.
    let key = TokenCache::key(&url, &OAuth::new()).unwrap();
    assert_eq!(cache.path_for(&key), file);
    assert!(cache.remove(&key).unwrap());
    assert!(!cache.remove(&key).unwrap());
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

/// Review 26, F3 and F4: two entries for one URL with different clients
/// (or a broken one with a wrong secret) never use each other's cached
/// token, and no cache file holds a client secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn entries_for_one_url_keep_their_own_tokens_and_no_secret_on_disk() {
    let (url, shared) = start().await;
    let secret = "alpha-client-secret-0123456789";
    {
        let mut auth = shared.lock().unwrap();
        auth.clients.extend(["alpha".to_owned(), "beta".to_owned()]);
        auth.secrets.insert("alpha".to_owned(), secret.to_owned());
    }
    let state = tempfile::tempdir().unwrap();
    let cache = TokenCache::new(state.path().join("mcp-oauth"));
    let opened = Arc::new(AtomicUsize::new(0));
    let alpha = || {
        OAuth::new()
            .with_client_id("alpha")
            .with_client_secret(secret)
            .with_cache(cache.clone())
    };
    let connect = |name: &str, oauth: OAuth| {
        McpToolSource::http(url.clone())
            .named(name)
            .with_oauth(oauth)
            .connect()
    };

    // `alpha` logs in; its token is cached, without its secret.
    let conn = connect("alpha", alpha().with_login(login(opened.clone())))
        .await
        .unwrap();
    shout_hi(&conn).await;
    conn.close();
    let texts = all_text(cache.dir());
    assert_eq!(texts.len(), 1);
    assert!(texts[0].contains("access-1"), "{}", texts[0]);
    assert!(!texts[0].contains(secret), "a secret on disk: {}", texts[0]);

    // Another run of `alpha`: the cached token, no login.
    let again = connect("alpha", alpha()).await.unwrap();
    shout_hi(&again).await;
    again.close();
    assert_eq!(opened.load(Ordering::SeqCst), 1);

    // Another client for the same URL, and `alpha` with a wrong secret: no
    // token of theirs is cached, so without a login they must log in.
    for (name, oauth) in [
        ("beta", OAuth::new().with_client_id("beta")),
        (
            "broken",
            OAuth::new()
                .with_client_id("alpha")
                .with_client_secret("not-alphas-secret-000000"),
        ),
        ("dynamic", OAuth::new()),
    ] {
        let err = connect(name, oauth.with_cache(cache.clone()))
            .await
            .map(|c| c.close())
            .expect_err(name)
            .to_string();
        assert!(err.contains("tool mcp login"), "{name}: {err}");
    }
    assert_eq!(shared.lock().unwrap().issued, 1);

    // `beta` logs in on its own: its own token and its own file.
    let beta = connect(
        "beta",
        OAuth::new()
            .with_client_id("beta")
            .with_cache(cache.clone())
            .with_login(login(opened.clone())),
    )
    .await
    .unwrap();
    shout_hi(&beta).await;
    beta.close();
    assert_eq!(opened.load(Ordering::SeqCst), 2);
    assert_eq!(all_text(cache.dir()).len(), 2);
    assert_eq!(
        shared.lock().unwrap().seen.last().map(String::as_str),
        Some("access-2")
    );
}

/// Review 26, F5: a token endpoint that echoes what it was sent (the
/// client secret, the refresh token) in its error answer: the error the
/// user and the model see names the refusal, never a secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_a_token_endpoint_echoes_are_masked_in_errors() {
    let (url, shared) = start().await;
    let secret = "machine-secret-0123456789";
    {
        let mut auth = shared.lock().unwrap();
        auth.secrets.insert("machine".to_owned(), secret.to_owned());
        auth.echo = true;
    }
    let err = McpToolSource::http(url.clone())
        .named("machine")
        .with_oauth(
            OAuth::new()
                .with_grant(tool_mcp::Grant::ClientCredentials)
                .with_client_id("machine")
                .with_client_secret(secret),
        )
        .connect()
        .await
        .map(|c| c.close())
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid_client"), "{err}");
    assert!(!err.contains(secret), "{err}");
    assert!(!err.contains("access-echoed"), "{err}");

    // A refresh refused with an echo of the refresh token: tokens that
    // expire at once, cached by a first run; the next run must refresh.
    {
        let mut auth = shared.lock().unwrap();
        auth.echo = false;
        auth.expires_in = Some(0);
    }
    let state = tempfile::tempdir().unwrap();
    let cache = TokenCache::new(state.path().join("mcp-oauth"));
    let opened = Arc::new(AtomicUsize::new(0));
    let first = McpToolSource::http(url.clone())
        .named("person")
        .with_oauth(
            OAuth::new()
                .with_cache(cache.clone())
                .with_login(login(opened)),
        )
        .connect()
        .await
        .unwrap();
    first.close();
    let refresh = all_text(cache.dir())
        .concat()
        .split("refresh-")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .map(|n| format!("refresh-{n}"))
        .expect("a refresh token in the cache");
    shared.lock().unwrap().echo = true;
    let err = McpToolSource::http(url.clone())
        .named("person")
        .with_oauth(OAuth::new().with_cache(cache.clone()))
        .connect()
        .await
        .map(|c| c.close())
        .unwrap_err()
        .to_string();
    assert!(err.contains("invalid_client"), "{err}");
    for leaked in [refresh.as_str(), "access-echoed"] {
        assert!(!err.contains(leaked), "{leaked}: {err}");
    }
}
