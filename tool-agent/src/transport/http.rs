//! The HTTP side every provider shares: one lazily built `reqwest` client,
//! POST with the [`RetryPolicy`], status → [`ModelError`], and whole JSON
//! answers read under [`MAX_ANSWER_BYTES`].

use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;
use tool_core::Format;

use super::limits::MAX_ANSWER_BYTES;
use super::retry::RetryPolicy;
use crate::error::{ModelError, ModelErrorKind, body_excerpt, error_chain, is_retryable_status};

/// What every HTTP client holds: endpoint, key, model, transport options.
#[derive(Debug, Clone)]
pub(crate) struct HttpOptions {
    pub(crate) base_url: String,
    pub(crate) api_key: Option<String>,
    pub(crate) model: String,
    pub(crate) streaming: bool,
    pub(crate) retry: RetryPolicy,
    pub(crate) timeout: Duration,
    pub(crate) format: Format,
}

impl HttpOptions {
    /// Options for `model` at `base_url`: streaming, the default
    /// [`RetryPolicy`], a 600 s whole-request timeout, tools rendered in `format`.
    pub(crate) fn new(
        base_url: String,
        api_key: Option<String>,
        model: String,
        format: Format,
    ) -> Self {
        Self {
            base_url,
            api_key,
            model,
            streaming: true,
            retry: RetryPolicy::default(),
            timeout: Duration::from_secs(600),
            format,
        }
    }

    /// `base_url` + `/` + `path`, without a doubled slash.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}/{}", self.base_url.trim_end_matches('/'), path)
    }
}

/// The value of environment variable `name`, when set and not empty.
pub(crate) fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

/// Builds the `reqwest` client for `opts` (reqwest's rustls under the `tls`
/// feature).
fn build_client(opts: &HttpOptions) -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        .timeout(opts.timeout)
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| ModelError::config(format!("HTTP client: {e}")))
}

/// Checks that `url` can be reached by this build.
fn check_url(url: &str) -> Result<(), ModelError> {
    let ok = url.starts_with("http://") || url.starts_with("https://");
    if !ok {
        return Err(ModelError::config(format!(
            "base URL `{url}` must start with http:// or https://"
        )));
    }
    if url.starts_with("https://") && !cfg!(feature = "tls") {
        return Err(ModelError::config(format!(
            "`{url}` needs HTTPS, and tool-agent was built without its `tls` feature"
        )));
    }
    Ok(())
}

/// The wait a 429 answer asks for: `retry-after-ms` (milliseconds, OpenAI)
/// or `retry-after` in seconds (RFC 9110 §10.2.3; the HTTP-date form is not read).
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let read = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    if let Some(ms) = read("retry-after-ms") {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    read("retry-after").map(Duration::from_secs_f64)
}

/// POSTs `body` (JSON) to `url` with `headers`, retrying per `opts.retry`
/// while no answer was read. Returns a response with a success status.
async fn post(
    client: &reqwest::Client,
    opts: &HttpOptions,
    url: &str,
    headers: &[(&'static str, String)],
    body: Vec<u8>,
) -> Result<reqwest::Response, ModelError> {
    check_url(url)?;
    let mut attempt = 0u32;
    loop {
        let mut req = client
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body.clone());
        for (k, v) in headers {
            req = req.header(*k, v);
        }
        let error = match req.send().await {
            Ok(resp) if resp.status().is_success() => return Ok(resp),
            Ok(resp) => {
                let status = resp.status().as_u16();
                let wait = retry_after(resp.headers());
                let text = resp.text().await.unwrap_or_default();
                if status == 429 {
                    ModelError::new(ModelErrorKind::RateLimited {
                        retry_after: wait,
                        body: body_excerpt(&text),
                    })
                } else {
                    let e = ModelError::new(ModelErrorKind::Http {
                        status,
                        body: body_excerpt(&text),
                    });
                    if !is_retryable_status(status) {
                        return Err(e);
                    }
                    e
                }
            }
            Err(e) => ModelError::new(ModelErrorKind::Connect(error_chain(&e))),
        };
        if attempt >= opts.retry.max_retries {
            return Err(error);
        }
        let backoff = opts.retry.backoff(attempt);
        let wait = match error.retry_after() {
            Some(asked) if asked > opts.retry.max_delay => return Err(error),
            Some(asked) => asked.max(backoff),
            None => backoff,
        };
        tracing::warn!(target: "tool_agent", %error, attempt, wait_ms = wait.as_millis() as u64, "retrying model request");
        tokio::time::sleep(wait).await;
        attempt += 1;
    }
}

/// Reads a whole JSON answer (at most [`MAX_ANSWER_BYTES`]).
///
/// # Errors
/// [`AnswerTooLarge`](ModelErrorKind::AnswerTooLarge) past the cap,
/// `truncated` when the transport breaks, `malformed` for a body that is not JSON.
pub(crate) async fn read_json(mut resp: reqwest::Response) -> Result<Value, ModelError> {
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                    return Err(ModelError::new(ModelErrorKind::AnswerTooLarge {
                        limit: MAX_ANSWER_BYTES,
                    }));
                }
                body.extend_from_slice(&chunk);
            }
            Ok(None) => break,
            Err(e) => {
                return Err(ModelError::truncated(
                    None,
                    format!("after {} bytes: {}", body.len(), error_chain(&e)),
                ));
            }
        }
    }
    serde_json::from_slice(&body).map_err(|e| {
        ModelError::malformed(format!(
            "the answer is not JSON ({e}): {}",
            body_excerpt(&String::from_utf8_lossy(&body))
        ))
    })
}

/// Options plus the lazily built `reqwest` client (built on first send, so
/// the builder's setters apply).
#[derive(Debug)]
pub(crate) struct Transport {
    pub(crate) opts: HttpOptions,
    http: OnceLock<reqwest::Client>,
}

impl Transport {
    pub(crate) fn new(opts: HttpOptions) -> Self {
        Self {
            opts,
            http: OnceLock::new(),
        }
    }

    /// The HTTP client, built on first use.
    fn client(&self) -> Result<&reqwest::Client, ModelError> {
        if self.http.get().is_none() {
            let client = build_client(&self.opts)?;
            let _ = self.http.set(client);
        }
        self.http
            .get()
            .ok_or_else(|| ModelError::config("the HTTP client could not be built"))
    }

    /// POSTs `body` to `path` under the base URL with `headers`, retrying
    /// per the options' [`RetryPolicy`] while no answer was read.
    ///
    /// # Errors
    /// `config` for a base URL this build cannot reach; `connect`, `http` and
    /// `rate_limited` after the retries.
    pub(crate) async fn post(
        &self,
        path: &str,
        headers: &[(&'static str, String)],
        body: &Value,
    ) -> Result<reqwest::Response, ModelError> {
        let client = self.client()?;
        let bytes = serde_json::to_vec(body)
            .map_err(|e| ModelError::config(format!("request body: {e}")))?;
        post(client, &self.opts, &self.opts.url(path), headers, bytes).await
    }
}
