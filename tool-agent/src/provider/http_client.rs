//! [`Provider`] (what one model API adds to the shared transport) and
//! [`HttpClient`], the one [`ModelClient`] implementation over it.

use std::fmt;
use std::time::Duration;

use serde_json::Value;
use tool_core::Format;

use crate::client::{EventStream, ModelClient, SendFuture};
use crate::error::ModelError;
use crate::message::{ModelRequest, StreamEvent};
use crate::transport::http::{HttpOptions, Transport, env, read_json};
use crate::transport::retry::RetryPolicy;
use crate::transport::sse::{Assembler, sse_events};
use tool_core::text_calls::{TextCallFormat, ToolSchema};

use super::text_calls;

/// One model API: its path, environment variables, request body, headers,
/// stream [`Assembler`] and whole-answer reader. Everything else (HTTP,
/// retries, SSE, size caps, the builder setters and [`ModelClient`]) is
/// [`HttpClient`]'s, written once.
///
/// A provider is a unit struct in its own folder, `src/provider/<name>/`
/// (`mod.rs`: this impl and the wire shapes; `stream.rs`: the assembler),
/// plus `pub type <Name>Client = HttpClient<<Name>>;` there and one
/// `pub mod <name>;` line in `provider/mod.rs`. See `docs/ARCHITECTURE.md`,
/// "A new model provider", and `tool-agent/tests/toy_provider/` for one
/// written outside the crate.
pub trait Provider: Default + fmt::Debug + Send + Sync + 'static {
    /// The stream state machine of one answer (a fresh one per request).
    type Assembler: Assembler + Default + 'static;

    /// The request path under the base URL, without a leading slash
    /// (`"chat/completions"`).
    const PATH: &'static str;

    /// The tool rendering a new client uses; `with_format` may pick another
    /// variant of the same provider (its strict form).
    const FORMAT: Format;

    /// The base URL when neither [`HttpClient::base_url`] nor
    /// [`BASE_URL_ENV`](Self::BASE_URL_ENV) gives one.
    const DEFAULT_BASE_URL: &'static str;

    /// The environment variable read for the base URL (ignored when unset or blank).
    const BASE_URL_ENV: &'static str;

    /// The environment variable read for the API key (ignored when unset or blank).
    const API_KEY_ENV: &'static str;

    /// The JSON body for `request` (what [`HttpClient::body`] returns and
    /// [`ModelClient::send`] posts). Pure: no I/O.
    fn body(&self, request: &ModelRequest<'_>, options: &RequestOptions<'_>) -> Value;

    /// The request headers besides `content-type` (and `accept:
    /// text/event-stream`, added when streaming). The default sends
    /// `authorization: Bearer KEY` when a key is set and nothing otherwise
    /// (local OpenAI-compatible servers take none).
    ///
    /// # Errors
    /// A [`Config`](crate::ModelErrorKind::Config) error when the API needs
    /// a key and none is set; the request is not sent.
    fn headers(
        &self,
        api_key: Option<&str>,
        body: &Value,
    ) -> Result<Vec<(&'static str, String)>, ModelError> {
        let _ = body;
        Ok(api_key
            .map(|key| ("authorization", format!("Bearer {key}")))
            .into_iter()
            .collect())
    }

    /// The events of a whole (non-streamed) answer: text, then calls, usage
    /// and the end, as the stream would have given them.
    ///
    /// # Errors
    /// [`Provider`](crate::ModelErrorKind::Provider) for the API's error
    /// object, [`Malformed`](crate::ModelErrorKind::Malformed) for a body
    /// outside its documented shape.
    fn whole(&self, body: &Value) -> Result<Vec<StreamEvent>, ModelError>;
}

/// What [`Provider::body`] may read of the client's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RequestOptions<'a> {
    /// The model name.
    pub model: &'a str,
    /// `true` to ask for a streamed answer (the default).
    pub streaming: bool,
    /// The tool rendering in use (the request's tools are already in it).
    pub format: Format,
}

/// A model client for provider `P`: the crate's one [`ModelClient`] over
/// HTTP. The public clients are aliases of it
/// ([`OpenAiChatClient`](crate::OpenAiChatClient) = `HttpClient<OpenAiChat>`, …).
///
/// Defaults: base URL from `P::BASE_URL_ENV`, else `P::DEFAULT_BASE_URL`;
/// key from `P::API_KEY_ENV`, else none; streaming; [`RetryPolicy::default`];
/// a 600 s whole-request timeout; tools rendered as `P::FORMAT`. Answers are
/// capped at [`MAX_ANSWER_BYTES`](crate::MAX_ANSWER_BYTES) and streamed
/// events at [`MAX_EVENT_BYTES`](crate::MAX_EVENT_BYTES).
#[derive(Debug)]
pub struct HttpClient<P: Provider> {
    t: Transport,
    provider: P,
    /// Tool calls written as text: the format read (see [`text_tool_calls`](HttpClient::text_tool_calls)).
    text_calls: Option<&'static dyn TextCallFormat>,
    /// Fields added to every request body (see [`extra_body`](HttpClient::extra_body)).
    extra: serde_json::Map<String, Value>,
}

impl<P: Provider> HttpClient<P> {
    /// A client for `model`, endpoint and key from the environment (see the type docs).
    pub fn new(model: impl Into<String>) -> Self {
        Self {
            t: Transport::new(HttpOptions::new(
                env(P::BASE_URL_ENV).unwrap_or_else(|| P::DEFAULT_BASE_URL.to_owned()),
                env(P::API_KEY_ENV),
                model.into(),
                P::FORMAT,
            )),
            provider: P::default(),
            text_calls: None,
            extra: serde_json::Map::new(),
        }
    }

    /// The JSON body for `request` (what [`send`](ModelClient::send) posts).
    pub fn body(&self, request: &ModelRequest<'_>) -> Value {
        self.body_and_tools(request).0
    }

    /// The body `send` posts, and with text tool calls the tools taken out
    /// of it (into the system prompt) for the answer's parser. One function
    /// for both, so what [`body`](Self::body) shows is what is sent.
    fn body_and_tools(&self, request: &ModelRequest<'_>) -> (Value, Option<Vec<ToolSchema>>) {
        let mut body = self.provider.body(request, &self.options());
        let tools = self
            .text_calls
            .map(|format| text_calls::rewrite_body(format, &mut body));
        if let Value::Object(map) = &mut body {
            for (k, v) in &self.extra {
                map.insert(k.clone(), v.clone());
            }
        }
        (body, tools)
    }

    /// Adds `fields` to the top level of every request body: a server's own
    /// parameters, such as llama.cpp's `grammar` (a GBNF grammar the answer
    /// must follow) or vLLM's `guided_json`. A field the client writes
    /// itself (`model`, `messages`, `tools`, `stream`, …) is replaced by
    /// the one given here. Replaces earlier extra fields. Default: none.
    pub fn extra_body(mut self, fields: serde_json::Map<String, Value>) -> Self {
        self.extra = fields;
        self
    }

    /// Reads tool calls written as text in the answer, in `format` (a name
    /// of [`tool_core::text_calls::FORMAT_NAMES`]: `hermes`, `mistral`,
    /// `llama3_json`, `pythonic`, `deepseek_v3`, `qwen3_coder`, `kimi_k2`,
    /// `granite`, `xlam`, `glm45`, or `auto`), for servers with no tool
    /// calling of their own: the tools go into the system prompt in the
    /// format's template, earlier calls and results are written back as
    /// text, and the answer's markup becomes [`StreamEvent::ToolCall`]s
    /// (whole or streamed; `provider/text_calls.rs` has the details). The
    /// body rewrite is the Chat Completions shape's: use it with
    /// [`OpenAiChatClient`](crate::OpenAiChatClient). Default: off.
    ///
    /// # Errors
    /// A [`Config`](crate::ModelErrorKind::Config) error naming the closest
    /// format for an unknown name.
    pub fn text_tool_calls(mut self, format: &str) -> Result<Self, ModelError> {
        let format = tool_core::text_calls::format_named(format)
            .map_err(|e| ModelError::config(format!("text_tool_calls: {e}")))?;
        self.text_calls = Some(format);
        Ok(self)
    }

    fn options(&self) -> RequestOptions<'_> {
        RequestOptions {
            model: &self.t.opts.model,
            streaming: self.t.opts.streaming,
            format: self.t.opts.format,
        }
    }

    /// Sets the base URL (the part before the provider's path:
    /// `/chat/completions`, `/responses`, `/messages`).
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

    /// Sets the retry policy ([`RetryPolicy::default`]: 3 retries).
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.t.opts.retry = retry;
        self
    }

    /// Sets the whole-request timeout (default 600 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.t.opts.timeout = timeout;
        self
    }

    /// Renders tools in `format` instead of the provider's default
    /// (e.g. its strict variant). Must be the same provider.
    pub fn with_format(mut self, format: Format) -> Self {
        self.t.opts.format = format;
        self
    }
}

impl<P: Provider> ModelClient for HttpClient<P> {
    fn format(&self) -> Format {
        self.t.opts.format
    }

    fn model(&self) -> &str {
        &self.t.opts.model
    }

    /// POSTs [`body`](HttpClient::body) to `P::PATH` with `P`'s headers, then
    /// reads the answer as server-sent events through a fresh
    /// `P::Assembler`, or whole through [`Provider::whole`].
    fn send<'a>(&'a self, request: ModelRequest<'a>) -> SendFuture<'a> {
        let (body, tools) = self.body_and_tools(&request);
        let text_calls = self.text_calls.zip(tools);
        let headers = self.provider.headers(self.t.opts.api_key.as_deref(), &body);
        Box::pin(async move {
            let mut headers = headers?;
            let streaming = self.t.opts.streaming;
            if streaming {
                headers.push(("accept", "text/event-stream".to_owned()));
            }
            let resp = self.t.post(P::PATH, &headers, &body).await?;
            let stream: EventStream<'a> = if streaming {
                sse_events(resp, P::Assembler::default())
            } else {
                let events = self.provider.whole(&read_json(resp).await?)?;
                Box::pin(futures_util::stream::iter(events.into_iter().map(Ok)))
            };
            Ok(match text_calls {
                Some((format, tools)) => text_calls::parsed_stream(stream, format, tools),
                None => stream,
            })
        })
    }
}
