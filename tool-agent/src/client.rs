//! [`ModelClient`]: the one trait every model endpoint implements (the
//! generic HTTP client of [`provider`](crate::provider) once, and
//! [`ScriptedClient`](crate::ScriptedClient) for tests), and the stream types
//! it answers with.

use std::future::Future;
use std::pin::Pin;

use futures_util::Stream;
use tool_core::Format;

use crate::error::ModelError;
use crate::message::{ModelRequest, StreamEvent};

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

    /// The provider's name for telemetry: the `gen_ai.provider.name`
    /// attribute of the `chat` and `invoke_agent` spans (OpenTelemetry's
    /// GenAI conventions; see [`telemetry`](crate::telemetry)). The default
    /// follows [`format`](Self::format): `openai` for the OpenAI formats (also
    /// what OpenAI-compatible servers such as llama.cpp, vLLM or Ollama speak),
    /// `anthropic`, `gcp.gemini`, and `_OTHER` for any other format.
    fn provider_name(&self) -> &str {
        match self.format() {
            Format::OpenAiChat { .. } | Format::OpenAiResponses { .. } => "openai",
            Format::Anthropic { .. } => "anthropic",
            Format::Gemini { .. } | Format::GeminiJsonSchema => "gcp.gemini",
            _ => "_OTHER",
        }
    }

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
    fn provider_name(&self) -> &str {
        (**self).provider_name()
    }
    fn send<'a>(&'a self, request: ModelRequest<'a>) -> SendFuture<'a> {
        (**self).send(request)
    }
}
