//! The browser-free authorization step: a one-shot HTTP listener on a
//! random loopback port receives the authorization server's redirect
//! (RFC 8252 §7.3), after the authorization URL was handed to whoever opens
//! it (a person, through stderr; a test's HTTP client).

use std::sync::Arc;
use std::time::Duration;

use rmcp::transport::auth::AuthError;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// How long [`LoopbackLogin`] waits for the redirect by default (5 minutes).
pub const DEFAULT_LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Longest request head the redirect listener reads, in bytes (8 KiB).
const MAX_REQUEST_HEAD: usize = 8 * 1024;

/// How long one connection to the listener may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// The path of the redirect URI (`http://127.0.0.1:<port>/callback`).
const CALLBACK_PATH: &str = "/callback";

/// The interactive step of the OAuth authorization-code flow, without a
/// browser integration: the authorization URL goes to an *opener* (by
/// default printed to stderr for a person to open anywhere), and a listener
/// on `127.0.0.1:<random port>` waits for the authorization server to
/// redirect back to `http://127.0.0.1:<port>/callback` with the code.
///
/// Used on a 401 from a `url` server when set on the [`OAuth`](crate::OAuth)
/// settings (`tool mcp login NAME` does); without it a connection that needs
/// a new authorization fails with a message naming `tool mcp login`.
#[derive(Clone)]
pub struct LoopbackLogin {
    open: Arc<dyn Fn(String) + Send + Sync>,
    timeout: Duration,
}

impl std::fmt::Debug for LoopbackLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackLogin")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackLogin {
    /// A login whose authorization URL is given to `open` (called once per
    /// authorization, from the connecting task; it must not block).
    pub fn new(open: impl Fn(String) + Send + Sync + 'static) -> Self {
        Self {
            open: Arc::new(open),
            timeout: DEFAULT_LOGIN_TIMEOUT,
        }
    }

    /// A login that prints the authorization URL to stderr for a person.
    pub fn stderr() -> Self {
        Self::new(|url| {
            eprintln!(
                "To authorize, open this URL in a browser (on this machine: the answer comes \
                 back to a listener on 127.0.0.1):\n\n  {url}\n"
            );
        })
    }

    /// How long to wait for the redirect (default [`DEFAULT_LOGIN_TIMEOUT`]).
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How long it waits for the redirect.
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Binds the redirect listener.
    pub(crate) async fn bind(&self) -> Result<Pending, AuthError> {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(|e| AuthError::AuthorizationFailed(format!("redirect listener: {e}")))?;
        let port = listener
            .local_addr()
            .map_err(|e| AuthError::AuthorizationFailed(format!("redirect listener: {e}")))?
            .port();
        Ok(Pending {
            listener,
            base: format!("http://127.0.0.1:{port}"),
            login: self.clone(),
        })
    }
}

/// A bound redirect listener waiting for its authorization URL.
pub(crate) struct Pending {
    listener: tokio::net::TcpListener,
    base: String,
    login: LoopbackLogin,
}

impl Pending {
    /// The redirect URI to register and send.
    pub(crate) fn redirect_uri(&self) -> String {
        format!("{}{CALLBACK_PATH}", self.base)
    }

    /// Hands `auth_url` to the opener and waits for the redirect; returns
    /// the full callback URL (with `code`, `state` and maybe `iss`).
    ///
    /// # Errors
    /// [`AuthError::AuthorizationFailed`] when no redirect arrives within
    /// the timeout, the listener fails, or the redirect carries an `error`.
    pub(crate) async fn wait(self, auth_url: &str) -> Result<String, AuthError> {
        (self.login.open)(auth_url.to_owned());
        let timeout = self.login.timeout;
        let callback = tokio::time::timeout(timeout, self.accept_callback())
            .await
            .map_err(|_| {
                AuthError::AuthorizationFailed(format!(
                    "no authorization redirect arrived within {timeout:?}"
                ))
            })??;
        let parsed = reqwest::Url::parse(&callback)
            .map_err(|e| AuthError::AuthorizationFailed(format!("redirect: {e}")))?;
        if let Some((_, error)) = parsed.query_pairs().find(|(k, _)| k == "error") {
            let description = parsed
                .query_pairs()
                .find(|(k, _)| k == "error_description")
                .map(|(_, d)| {
                    format!(
                        ": {}",
                        tool_rules::text::clip(&d, tool_rules::text::Clip::chars(200))
                    )
                })
                .unwrap_or_default();
            return Err(AuthError::AuthorizationFailed(format!(
                "the authorization server answered `{}`{description}",
                tool_rules::text::clip(&error, tool_rules::text::Clip::chars(60))
            )));
        }
        Ok(callback)
    }

    async fn accept_callback(&self) -> Result<String, AuthError> {
        loop {
            let (mut stream, _) =
                self.listener.accept().await.map_err(|e| {
                    AuthError::AuthorizationFailed(format!("redirect listener: {e}"))
                })?;
            let Ok(Some(target)) =
                tokio::time::timeout(HEAD_TIMEOUT, read_target(&mut stream)).await
            else {
                continue;
            };
            let is_callback =
                target == CALLBACK_PATH || target.starts_with(&format!("{CALLBACK_PATH}?"));
            let (status, body) = if is_callback {
                (
                    "200 OK",
                    "Authorization received; you may close this window.\n",
                )
            } else {
                ("404 Not Found", "Not found.\n")
            };
            let answer = format!(
                "HTTP/1.1 {status}\r\ncontent-type: text/plain; charset=utf-8\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(answer.as_bytes()).await;
            let _ = stream.shutdown().await;
            if is_callback {
                return Ok(format!("{}{target}", self.base));
            }
        }
    }
}

/// The request target of a `GET` request head, `None` when the head is not
/// one (too long, not UTF-8, another method).
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::with_capacity(1024);
    let mut chunk = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 || head.len() + n > MAX_REQUEST_HEAD {
            return None;
        }
        head.extend_from_slice(&chunk[..n]);
    }
    let head = std::str::from_utf8(&head).ok()?;
    let mut line = head.lines().next()?.split(' ');
    match (line.next(), line.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Some(target.to_owned()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn get(url: String) -> u16 {
        let target = url.trim_start_matches("http://");
        let (host, path) = target.split_once('/').unwrap_or((target, ""));
        let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
        let request = format!("GET /{path} HTTP/1.1\r\nhost: {host}\r\n\r\n");
        stream.write_all(request.as_bytes()).await.expect("write");
        let mut answer = String::new();
        stream.read_to_string(&mut answer).await.expect("read");
        answer
            .split(' ')
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0)
    }

    #[tokio::test]
    async fn the_listener_takes_the_callback_and_ignores_other_paths() {
        let (tx, rx) = tokio::sync::oneshot::channel::<String>();
        let tx = std::sync::Mutex::new(Some(tx));
        let login = LoopbackLogin::new(move |url| {
            if let Some(tx) = tx.lock().ok().and_then(|mut t| t.take()) {
                let _ = tx.send(url);
            }
        });
        let pending = login.bind().await.expect("bind");
        let redirect = pending.redirect_uri();
        assert!(redirect.starts_with("http://127.0.0.1:") && redirect.ends_with("/callback"));
        let base = redirect.trim_end_matches("/callback").to_owned();
        let person = tokio::spawn(async move {
            let opened = rx.await.expect("the URL was handed over");
            assert_eq!(opened, "https://as.example/authorize?x=1");
            // A stray request first: 404, and the listener keeps waiting.
            assert_eq!(get(format!("{base}/favicon.ico")).await, 404);
            get(format!(
                "{base}/callback?code=c1&state=s1&iss=https%3A%2F%2Fas"
            ))
            .await
        });
        let callback = pending
            .wait("https://as.example/authorize?x=1")
            .await
            .expect("callback");
        assert!(callback.ends_with("/callback?code=c1&state=s1&iss=https%3A%2F%2Fas"));
        assert_eq!(person.await.expect("person"), 200);
    }

    #[tokio::test]
    async fn an_error_redirect_and_a_timeout_are_reported() {
        let pending = LoopbackLogin::new(|_| {}).bind().await.expect("bind");
        let base = pending.redirect_uri();
        let person = tokio::spawn(async move {
            get(format!(
                "{base}?error=access_denied&error_description=no%20thanks"
            ))
            .await
        });
        let err = pending.wait("https://as.example/a").await.unwrap_err();
        assert!(
            err.to_string().contains("`access_denied`: no thanks"),
            "{err}"
        );
        assert_eq!(person.await.expect("person"), 200);

        let pending = LoopbackLogin::new(|_| {})
            .with_timeout(Duration::from_millis(50))
            .bind()
            .await
            .expect("bind");
        let err = pending.wait("https://as.example/a").await.unwrap_err();
        assert!(
            err.to_string()
                .contains("no authorization redirect arrived"),
            "{err}"
        );
    }
}
