//! Model clients: one trait ([`ModelClient`]), three HTTP clients
//! ([`OpenAiChatClient`], [`OpenAiResponsesClient`], [`AnthropicClient`])
//! and a scripted one for tests ([`ScriptedClient`]).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use futures_util::Stream;
use tool_core::Format;

use crate::error::ModelError;
use crate::message::{ModelRequest, StreamEvent};

mod anthropic;
mod http;
mod openai_chat;
mod responses;
mod scripted;

pub use anthropic::{
    ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, AnthropicClient, DEFAULT_MAX_TOKENS, TOOL_SEARCH_BETA,
};
pub(crate) use http::events_from_sse;
pub use openai_chat::{OPENAI_BASE_URL, OpenAiChatClient};
pub use responses::OpenAiResponsesClient;
pub use scripted::{ScriptedClient, ScriptedTurn, SeenRequest};

/// The events of one model answer, in arrival order; ends after
/// [`StreamEvent::Finished`] or with an error.
pub type EventStream<'a> = Pin<Box<dyn Stream<Item = Result<StreamEvent, ModelError>> + Send + 'a>>;

/// A future returned by [`ModelClient::send`].
pub type SendFuture<'a> =
    Pin<Box<dyn Future<Output = Result<EventStream<'a>, ModelError>> + Send + 'a>>;

/// A model endpoint: takes one turn's [`ModelRequest`], answers with a
/// stream of [`StreamEvent`]s (non-streaming transports produce the same
/// events from the whole answer).
pub trait ModelClient: Send + Sync {
    /// The provider format the request's tool list must be rendered in
    /// (`ToolRegistry::schemas_in(client.format())`).
    fn format(&self) -> Format;

    /// The model name sent with each request (for logs and events).
    fn model(&self) -> &str;

    /// Sends one request. The future resolves once the response headers
    /// arrived (HTTP errors and retries happen there); the stream then yields
    /// the answer.
    fn send<'a>(&'a self, request: ModelRequest<'a>) -> SendFuture<'a>;
}

impl<C: ModelClient + ?Sized> ModelClient for std::sync::Arc<C> {
    fn format(&self) -> Format {
        (**self).format()
    }
    fn model(&self) -> &str {
        (**self).model()
    }
    fn send<'a>(&'a self, request: ModelRequest<'a>) -> SendFuture<'a> {
        (**self).send(request)
    }
}

/// When a request is sent again: only while nothing of an answer was read
/// (a connection error before the status line, HTTP 429, HTTP 5xx/529), at
/// most [`max_retries`](Self::max_retries) times, waiting `base_delay × 2^n`
/// (capped at `max_delay`) or the server's `retry-after` when it asks for
/// longer. A `retry-after` beyond `max_delay` is not waited for: the
/// [`RateLimited`](crate::ModelErrorKind::RateLimited) error is returned
/// with it. A stream that breaks after its first byte is never retried
/// (the turn's text may already have been shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Extra attempts after the first. Default 3.
    pub max_retries: u32,
    /// First wait. Default 500 ms.
    pub base_delay: Duration,
    /// Longest wait. Default 30 s.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The wait before retry number `attempt` (0-based), without a server hint.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(16));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// What every HTTP client shares: endpoint, key, model, transport options.
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

/// Defines the shared builder setters of an HTTP client type with a `t: Transport` field.
macro_rules! http_builder {
    ($ty:ty) => {
        impl $ty {
            /// Sets the base URL (the part before `/chat/completions`,
            /// `/responses` or `/messages`).
            pub fn base_url(mut self, url: impl Into<String>) -> Self {
                self.t.opts.base_url = url.into();
                self
            }

            /// Sets the API key (overrides the environment's).
            pub fn api_key(mut self, key: impl Into<String>) -> Self {
                self.t.opts.api_key = Some(key.into());
                self
            }

            /// Streams answers (`true`, the default) or reads them whole.
            pub fn streaming(mut self, streaming: bool) -> Self {
                self.t.opts.streaming = streaming;
                self
            }

            /// Sets the retry policy ([`RetryPolicy::default`](crate::RetryPolicy::default): 3 retries).
            pub fn retry(mut self, retry: $crate::client::RetryPolicy) -> Self {
                self.t.opts.retry = retry;
                self
            }

            /// Sets the whole-request timeout (default 600 s).
            pub fn timeout(mut self, timeout: std::time::Duration) -> Self {
                self.t.opts.timeout = timeout;
                self
            }

            /// Renders tools in `format` instead of the provider's default
            /// (e.g. its strict variant). Must be the same provider.
            pub fn with_format(mut self, format: tool_core::Format) -> Self {
                self.t.opts.format = format;
                self
            }
        }
    };
}
pub(crate) use http_builder;
