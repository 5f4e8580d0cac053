//! `tool mcp login NAME` end to end: the program prints the authorization
//! URL on stderr and waits on a loopback listener; the test plays the
//! person, opening the URL with an HTTP client that follows the
//! authorization server's redirect back to the listener. Then a plain
//! `tool call` of the server's tool uses the cached token (no login), and
//! `tool mcp logout` forgets it.

// Shared with tool-mcp's OAuth tests; its own `#![allow]` covers its unwraps.
#[path = "../../../tool-mcp/tests/support/oauth_server.rs"]
mod oauth_server;

use std::io::{BufRead, BufReader};
use std::os::unix::fs::PermissionsExt;
use std::process::Stdio;

use crate::support::{TempDir, code, one_json_line, stderr, stdout, tool};

/// Runs `login` (a `tool mcp login NAME` command), takes the authorization
/// URL it prints on stderr and opens it as the person's browser would (the
/// redirect lands on the program's listener, answering 200), then waits for
/// the program: the URL and its output (stderr already read).
fn log_in_with_the_browser(
    mut login: std::process::Command,
    runtime: &tokio::runtime::Runtime,
) -> (String, std::process::Output) {
    let mut child = login
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tool mcp login starts");
    let mut lines = BufReader::new(child.stderr.take().expect("piped stderr")).lines();
    let auth_url = lines
        .by_ref()
        .map_while(Result::ok)
        .find_map(|line| {
            line.trim()
                .starts_with("http")
                .then(|| line.trim().to_owned())
        })
        .expect("the authorization URL on stderr");
    let opened = runtime.block_on(async { reqwest::get(&auth_url).await.map(|r| r.status()) });
    assert_eq!(opened.expect("the redirect is followed").as_u16(), 200);
    (auth_url, child.wait_with_output().expect("login ends"))
}

#[test]
fn login_caches_a_token_that_later_runs_use_and_logout_forgets_it() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (url, shared) = runtime.block_on(oauth_server::start());
    let (state, here) = (TempDir::new(), TempDir::new());
    let config = here.path().join("mcp.json");
    std::fs::write(
        &config,
        format!(r#"{{"mcpServers": {{"guarded": {{"url": "{url}"}}}}}}"#),
    )
    .expect("write config");

    // Before a login: the call fails (no OAuth for this entry yet).
    let call = || {
        tool()
            .env("XDG_STATE_HOME", state.path())
            .arg("--mcp-config")
            .arg(&config)
            .args(["call", "guarded__shout", "--text=quiet"])
            .output()
            .expect("tool runs")
    };
    assert_ne!(code(&call()), 0);

    let mut login = tool();
    login
        .env("XDG_STATE_HOME", state.path())
        .arg("--mcp-config")
        .arg(&config)
        .args(["mcp", "login", "guarded"]);
    let (auth_url, out) = log_in_with_the_browser(login, &runtime);
    assert!(auth_url.contains("code_challenge="), "{auth_url}");
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("Logged in to `guarded`"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    let cache = tool_mcp::TokenCache::new(state.path().join("agent-tools/mcp-oauth"));
    let key = tool_mcp::TokenCache::key(&url, &tool_mcp::OAuth::new()).expect("key");
    let file = cache.path_for(&key);
    let mode = std::fs::metadata(&file)
        .expect("cache file")
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600);

    // A later run uses the cached token: no login, the tool answers.
    let out = call();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(one_json_line(&out)["output"], "QUIET");
    assert!(!stdout(&out).contains("access-") && !stderr(&out).contains("access-"));
    assert_eq!(shared.lock().unwrap().registrations, 1);

    let out = tool()
        .env("XDG_STATE_HOME", state.path())
        .arg("--mcp-config")
        .arg(&config)
        .args(["mcp", "logout", "guarded"])
        .output()
        .expect("tool runs");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(!file.exists());
    assert_ne!(code(&call()), 0);
}

/// Review 26, F4: a `${VAR}` client secret of `.mcp.json` is resolved in
/// the program and never written to the token cache: after a login of a
/// pre-registered confidential client, no file of the state folder holds
/// it, and a later run (the secret again from the environment) uses the
/// cached token.
#[test]
fn a_configured_client_secret_never_reaches_the_cache() {
    const SECRET: &str = "conf-client-secret-0123456789abcdef";
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let (url, shared) = runtime.block_on(oauth_server::start());
    {
        let mut auth = shared.lock().unwrap();
        auth.clients.insert("conf".to_owned());
        auth.secrets.insert("conf".to_owned(), SECRET.to_owned());
    }
    let (state, here) = (TempDir::new(), TempDir::new());
    let config = here.path().join("mcp.json");
    std::fs::write(
        &config,
        format!(
            r#"{{"mcpServers": {{"conf": {{"url": "{url}",
                "oauth": {{"client_id": "conf", "client_secret": "${{CONF_SECRET}}"}}}}}}}}"#
        ),
    )
    .expect("write config");
    let mut login = tool();
    login
        .env("XDG_STATE_HOME", state.path())
        .env("CONF_SECRET", SECRET)
        .arg("--mcp-config")
        .arg(&config)
        .args(["mcp", "login", "conf"]);
    let (_, out) = log_in_with_the_browser(login, &runtime);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Every file under the state folder: the token, never the secret.
    let mut stack = vec![state.path().to_path_buf()];
    let mut cached = 0;
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).expect("read dir") {
            let path = entry.expect("entry").path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            let bytes = std::fs::read(&path).expect("read");
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains(SECRET),
                "{} holds the secret",
                path.display()
            );
            cached += usize::from(text.contains("access-1"));
        }
    }
    assert_eq!(cached, 1, "one cache entry with the token");

    // A later run: the cached token, the secret from the environment.
    let out = tool()
        .env("XDG_STATE_HOME", state.path())
        .env("CONF_SECRET", SECRET)
        .arg("--mcp-config")
        .arg(&config)
        .args(["call", "conf__shout", "--text=again"])
        .output()
        .expect("tool runs");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(one_json_line(&out)["output"], "AGAIN");
    assert!(!stdout(&out).contains(SECRET) && !stderr(&out).contains(SECRET));
}
