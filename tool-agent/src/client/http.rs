//! The HTTP side every client shares: one `reqwest` client, POST with the
//! [`RetryPolicy`], status → [`ModelError`], SSE → assembler → events.

use std::collections::VecDeque;
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;
use tool_core::format::Format;

use super::{EventStream, HttpOptions, SendFuture};
use crate::assemble::Assembler;
use crate::error::{ModelError, ModelErrorKind, clip, is_retryable_status};
use crate::message::StreamEvent;

/// Largest whole (non-streamed) answer read: 64 MiB.
const MAX_BODY: usize = 64 << 20;

/// Builds the `reqwest` client for `opts` (reqwest's rustls under the `tls`
/// feature).
pub(crate) fn build_client(opts: &HttpOptions) -> Result<reqwest::Client, ModelError> {
    reqwest::Client::builder()
        .timeout(opts.timeout)
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| ModelError::config(format!("HTTP client: {e}")))
}

/// Checks that `url` can be reached by this build.
pub(crate) fn check_url(url: &str) -> Result<(), ModelError> {
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
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
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
pub(crate) async fn post(
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
                        body: clip(&text),
                    })
                } else {
                    let e = ModelError::new(ModelErrorKind::Http {
                        status,
                        body: clip(&text),
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

/// `e` and its sources, `: `-joined (reqwest's own message is short).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// Reads a whole JSON answer (at most 64 MiB).
pub(crate) async fn read_json(mut resp: reqwest::Response) -> Result<Value, ModelError> {
    let mut body = Vec::new();
    loop {
        match resp.chunk().await {
            Ok(Some(chunk)) => {
                if body.len() + chunk.len() > MAX_BODY {
                    return Err(ModelError::malformed("the answer is larger than 64 MiB"));
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
            clip(&String::from_utf8_lossy(&body))
        ))
    })
}

/// The events of an SSE answer, read through `assembler`. An answer whose
/// `content-type` names something else (an HTML error page from a proxy, a
/// JSON body from a wrong path) is one `malformed` error saying so, not a
/// "stream ended early" later.
pub(crate) fn sse_events<'a, A: Assembler + 'a>(
    resp: reqwest::Response,
    assembler: A,
) -> EventStream<'a> {
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !content_type.is_empty() && !content_type.starts_with("text/event-stream") {
        let err = ModelError::malformed(format!(
            "the server answered a streamed request with content type `{}`, not an event stream \
             (`text/event-stream`): check that the base URL is the API's root (e.g. \
             http://127.0.0.1:8080/v1), or turn streaming off",
            clip(&content_type)
        ));
        return Box::pin(futures_util::stream::once(async move { Err(err) }));
    }
    let sse = sse_stream::SseStream::from_bytes_stream(resp.bytes_stream());
    events_from_sse(Box::pin(sse), assembler)
}

type SseItems<'a> = std::pin::Pin<
    Box<dyn futures_util::Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send + 'a>,
>;

struct State<'a, A> {
    sse: SseItems<'a>,
    asm: A,
    pending: VecDeque<StreamEvent>,
    ended: bool,
}

/// Drives `assembler` over parsed SSE events (split out for the benchmark and tests).
pub(crate) fn events_from_sse<'a, A: Assembler + 'a>(
    sse: SseItems<'a>,
    assembler: A,
) -> EventStream<'a> {
    let state = State {
        sse,
        asm: assembler,
        pending: VecDeque::new(),
        ended: false,
    };
    Box::pin(futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.pending.pop_front() {
                return Some((Ok(ev), st));
            }
            if st.ended {
                return None;
            }
            let mut out = Vec::new();
            let step = match st.sse.next().await {
                Some(Ok(sse)) => match sse.data {
                    Some(data) => st.asm.feed(sse.event.as_deref(), &data, &mut out),
                    None => Ok(()),
                },
                Some(Err(sse_stream::Error::Body(e))) => {
                    st.ended = true;
                    if st.asm.is_done() {
                        st.asm.finish(&mut out)
                    } else {
                        match st.asm.finish(&mut out) {
                            Err(trunc) => Err(with_transport(trunc, &*e)),
                            Ok(()) => Ok(()),
                        }
                    }
                }
                Some(Err(e)) => Err(ModelError::malformed(format!(
                    "not a valid SSE stream: {e}"
                ))),
                None => {
                    st.ended = true;
                    st.asm.finish(&mut out)
                }
            };
            st.pending.extend(out);
            if let Err(e) = step {
                st.ended = true;
                st.pending.clear();
                return Some((Err(e), st));
            }
        }
    }))
}

fn with_transport(e: ModelError, cause: &(dyn std::error::Error + Send + Sync)) -> ModelError {
    match e.kind() {
        ModelErrorKind::Truncated { call, detail } => ModelError::truncated(
            call.clone(),
            format!("{detail}; transport: {}", error_chain(cause)),
        ),
        _ => e,
    }
}

/// Where a provider's whole (not streamed) answer keeps what every answer
/// has besides its text.
pub(crate) struct WholeShape {
    /// The format whose `ToolCall::parse` reads the calls.
    pub(crate) format: Format,
    /// JSON pointers of the input and output token counts inside `usage`.
    pub(crate) usage: [&'static str; 2],
    /// JSON pointer of the stop reason in the body.
    pub(crate) stop_reason: &'static str,
}

/// The events of a whole answer `body`: the `text` events given, then the
/// calls found in `calls_in` (the body or the part of it holding them), the
/// usage and the end, as `shape` says where they are.
///
/// # Errors
/// `malformed` when the calls cannot be parsed.
pub(crate) fn whole_answer(
    body: &Value,
    calls_in: &Value,
    mut events: Vec<StreamEvent>,
    shape: &WholeShape,
) -> Result<Vec<StreamEvent>, ModelError> {
    let calls = tool_core::format::ToolCall::parse(shape.format, calls_in)
        .map_err(|e| ModelError::malformed(e.to_string()))?;
    events.extend(calls.into_iter().map(StreamEvent::ToolCall));
    if let Some(u) = body.get("usage") {
        events.push(StreamEvent::Usage(crate::message::Usage {
            input_tokens: crate::assemble::count(u, shape.usage[0]),
            output_tokens: crate::assemble::count(u, shape.usage[1]),
        }));
    }
    events.push(StreamEvent::Finished {
        stop_reason: body
            .pointer(shape.stop_reason)
            .and_then(Value::as_str)
            .map(str::to_owned),
    });
    Ok(events)
}

/// Events of a whole answer: text, then calls, usage and the end.
pub(crate) fn whole_events<'a>(events: Vec<StreamEvent>) -> EventStream<'a> {
    Box::pin(futures_util::stream::iter(events.into_iter().map(Ok)))
}

/// Options plus the lazily built `reqwest` client (built on first send, so
/// the builder's setters apply).
#[derive(Debug)]
pub(crate) struct Transport {
    pub(crate) opts: HttpOptions,
    http: std::sync::OnceLock<reqwest::Client>,
}

impl Transport {
    pub(crate) fn new(opts: HttpOptions) -> Self {
        Self {
            opts,
            http: std::sync::OnceLock::new(),
        }
    }

    /// The HTTP client, built on first use.
    pub(crate) fn client(&self) -> Result<&reqwest::Client, ModelError> {
        if self.http.get().is_none() {
            let client = build_client(&self.opts)?;
            let _ = self.http.set(client);
        }
        self.http
            .get()
            .ok_or_else(|| ModelError::config("the HTTP client could not be built"))
    }

    /// POSTs `body` to `path` under the base URL (see [`post`]).
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

    /// One model request of every provider client: POSTs `body` to `path`
    /// with `headers` (plus `accept: text/event-stream` when streaming), then
    /// reads the answer as server-sent events through `assembler`, or whole
    /// through `whole` (the provider's answer-to-events function).
    ///
    /// # Errors
    /// What [`post`] and [`read_json`] return, and `whole`'s error for an
    /// answer that is the provider's error object or malformed.
    pub(crate) fn send<'a, A: Assembler + Send + 'a>(
        &'a self,
        path: &'static str,
        mut headers: Vec<(&'static str, String)>,
        body: Value,
        assembler: A,
        whole: fn(&Value) -> Result<Vec<StreamEvent>, ModelError>,
    ) -> SendFuture<'a> {
        Box::pin(async move {
            if self.opts.streaming {
                headers.push(("accept", "text/event-stream".to_owned()));
            }
            let resp = self.post(path, &headers, &body).await?;
            if self.opts.streaming {
                Ok(sse_events(resp, assembler))
            } else {
                Ok(whole_events(whole(&read_json(resp).await?)?))
            }
        })
    }

    /// `authorization: Bearer KEY` when a key is set (OpenAI-compatible servers
    /// without a key, such as a local llama.cpp, take none).
    pub(crate) fn bearer(&self) -> Vec<(&'static str, String)> {
        self.opts
            .api_key
            .iter()
            .map(|key| ("authorization", format!("Bearer {key}")))
            .collect()
    }
}
