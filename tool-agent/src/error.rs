//! [`ModelError`]: what can go wrong between the agent and a model endpoint.

use std::fmt;
use std::time::Duration;

/// Why a model request failed. Opaque: read it through [`kind`](Self::kind),
/// [`retry_after`](Self::retry_after) and [`Display`](fmt::Display).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelError {
    kind: ModelErrorKind,
}

/// The kinds of [`ModelError`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ModelErrorKind {
    /// The client is not set up: no API key, a base URL that does not parse.
    Config(String),
    /// No HTTP answer: connection refused or reset, DNS, TLS, timeout before
    /// the status line. Retried (see [`RetryPolicy`](crate::RetryPolicy)).
    Connect(String),
    /// HTTP 429. `retry_after` from the `retry-after` (seconds) or
    /// `retry-after-ms` header when the server sent one. Retried while the
    /// wait fits the policy.
    RateLimited {
        /// The wait the server asked for.
        retry_after: Option<Duration>,
        /// The start of the response body (at most 4 KiB).
        body: String,
    },
    /// Any other non-success status (after the retries for 5xx).
    Http {
        /// The HTTP status code.
        status: u16,
        /// The start of the response body (at most 4 KiB).
        body: String,
    },
    /// The provider reported an error inside a stream (`error` event,
    /// `response.failed`, an `{"error": …}` chunk).
    Provider(String),
    /// The stream ended before its end marker (`[DONE]`, `message_stop`,
    /// `response.completed`, a `finishReason`). `call` names the tool call
    /// that was open when it stopped, if any.
    Truncated {
        /// `` `name` (id …) `` of the call being streamed, when one was open.
        call: Option<String>,
        /// What was read last or what the transport reported.
        detail: String,
    },
    /// A chunk or body that is not in the provider's documented shape: not
    /// JSON, a tool call without a name, arguments that are not JSON where
    /// the provider promises JSON (Anthropic `input_json_delta`).
    Malformed(String),
    /// The run was cancelled while waiting for the model.
    Cancelled,
    /// One server-sent event of a streamed answer was larger than `limit`
    /// bytes ([`MAX_EVENT_BYTES`](crate::MAX_EVENT_BYTES), 16 MiB): reading
    /// stopped before the event was parsed. The events before it were
    /// yielded. Not retried.
    EventTooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// An answer (streamed or whole) was larger than `limit` bytes
    /// ([`MAX_ANSWER_BYTES`](crate::MAX_ANSWER_BYTES), 64 MiB): reading
    /// stopped there. For a streamed answer the events before it were
    /// yielded. Not retried.
    AnswerTooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
}

impl ModelError {
    /// An error of `kind`.
    pub fn new(kind: ModelErrorKind) -> Self {
        Self { kind }
    }

    /// What went wrong.
    pub fn kind(&self) -> &ModelErrorKind {
        &self.kind
    }

    /// The wait a 429 answer asked for.
    pub fn retry_after(&self) -> Option<Duration> {
        match &self.kind {
            ModelErrorKind::RateLimited { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// `true` for errors a caller may retry as they are (connection, 429,
    /// 5xx): the request never produced an answer that was read.
    pub fn is_retryable(&self) -> bool {
        match &self.kind {
            ModelErrorKind::Connect(_) | ModelErrorKind::RateLimited { .. } => true,
            ModelErrorKind::Http { status, .. } => is_retryable_status(*status),
            _ => false,
        }
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Config(message.into()))
    }

    pub(crate) fn malformed(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Malformed(message.into()))
    }

    pub(crate) fn provider(message: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Provider(message.into()))
    }

    pub(crate) fn truncated(call: Option<String>, detail: impl Into<String>) -> Self {
        Self::new(ModelErrorKind::Truncated {
            call,
            detail: detail.into(),
        })
    }
}

/// 5xx and Anthropic's 529 ("overloaded"): the server failed before answering.
pub(crate) fn is_retryable_status(status: u16) -> bool {
    (500..600).contains(&status) || status == 529
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ModelErrorKind::Config(m) => write!(f, "model client not configured: {m}"),
            ModelErrorKind::Connect(m) => write!(f, "could not reach the model endpoint: {m}"),
            ModelErrorKind::RateLimited { retry_after, body } => {
                write!(f, "rate limited (HTTP 429)")?;
                if let Some(d) = retry_after {
                    write!(f, ", retry after {} ms", d.as_millis())?;
                }
                if !body.is_empty() {
                    write!(f, ": {body}")?;
                }
                Ok(())
            }
            ModelErrorKind::Http { status, body } => write!(f, "HTTP {status}: {body}"),
            ModelErrorKind::Provider(m) => write!(f, "the model provider reported an error: {m}"),
            ModelErrorKind::Truncated {
                call: Some(c),
                detail,
            } => write!(
                f,
                "the response stream ended in the middle of tool call {c} ({detail})"
            ),
            ModelErrorKind::Truncated { call: None, detail } => {
                write!(
                    f,
                    "the response stream ended before its end marker ({detail})"
                )
            }
            ModelErrorKind::Malformed(m) => write!(f, "malformed model response: {m}"),
            ModelErrorKind::Cancelled => f.write_str("cancelled while waiting for the model"),
            ModelErrorKind::EventTooLarge { limit } => write!(
                f,
                "one event of the streamed answer is larger than {} (the cap per event); \
                 reading stopped there. Model APIs send small events: check that the base URL \
                 is the model API, or lower the answer size (max_output_tokens)",
                bytes_text(*limit)
            ),
            ModelErrorKind::AnswerTooLarge { limit } => write!(
                f,
                "the answer is larger than {} (the cap per answer); reading stopped there. \
                 Lower the answer size (max_output_tokens), or check that the base URL is the \
                 model API",
                bytes_text(*limit)
            ),
        }
    }
}

impl std::error::Error for ModelError {}

/// At most this many bytes of an error body are kept (UTF-8 safe).
pub(crate) const BODY_KEPT: usize = 4096;

/// The start of `body`, cut at a character boundary at most [`BODY_KEPT`]
/// bytes in, `…` marking a cut: `tool_rules::text::clip` under that limit
/// (kept as a one-argument name for the transport's many call sites).
pub(crate) fn body_excerpt(body: &str) -> String {
    tool_rules::text::clip(body, tool_rules::text::Clip::bytes(BODY_KEPT)).into_owned()
}

/// `limit` as text: `16 MiB` when it is a whole number of MiB, else `N bytes`.
fn bytes_text(limit: usize) -> String {
    if limit >= 1 << 20 && limit % (1 << 20) == 0 {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{limit} bytes")
    }
}

/// `` `name` (id …) `` for error messages about one call.
pub(crate) fn describe_call(name: Option<&str>, id: Option<&str>) -> String {
    match (name, id) {
        (Some(n), Some(i)) => format!("`{n}` (id {i})"),
        (Some(n), None) => format!("`{n}`"),
        (None, Some(i)) => format!("with id {i}"),
        (None, None) => "without name or id".to_owned(),
    }
}

/// `e` and its sources, `: `-joined (reqwest's own message is short).
pub(crate) fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
