//! OpenAI-compatible Chat Completions (`POST {base}/chat/completions`):
//! OpenAI, vLLM, llama.cpp's server, Ollama, `OpenRouter`, … Source: OpenAI
//! API reference, "Create chat completion". The stream is read by
//! [`OpenAiChatAssembler`] (`stream.rs`).

use serde_json::{Value, json};
use tool_core::format::{Format, ToolCall};

use super::http_client::{HttpClient, Provider, RequestOptions};
use super::wire::{WholeShape, error_text, whole_answer};
use crate::error::{ModelError, body_excerpt};
use crate::message::{
    Message, ModelRequest, StreamEvent, ToolChoice, arguments_text, rendered_results,
};

mod stream;

pub use stream::OpenAiChatAssembler;

/// Default base URL when neither an argument nor `OPENAI_BASE_URL` gives one.
pub const OPENAI_BASE_URL: &str = "https://api.openai.com/v1";

/// A Chat Completions client for any OpenAI-compatible server.
///
/// Base URL: [`base_url`](HttpClient::base_url), else `OPENAI_BASE_URL`, else
/// `https://api.openai.com/v1`. Key: [`api_key`](HttpClient::api_key), else
/// `OPENAI_API_KEY`, else none (local servers need none); sent as
/// `Authorization: Bearer`. Streams by default, asking for the usage chunk
/// (`stream_options.include_usage`). Tools are rendered as
/// [`Format::OpenAiChat`] (non-strict by default; strict with
/// [`with_format`](HttpClient::with_format)).
///
/// ```
/// use tool_agent::{ModelClient, OpenAiChatClient};
/// let client = OpenAiChatClient::new("gpt-4.1-mini").base_url("http://127.0.0.1:8080/v1");
/// assert_eq!(client.model(), "gpt-4.1-mini");
/// ```
pub type OpenAiChatClient = HttpClient<OpenAiChat>;

/// The Chat Completions API as a [`Provider`] (see [`OpenAiChatClient`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct OpenAiChat;

impl Provider for OpenAiChat {
    type Assembler = OpenAiChatAssembler;
    const PATH: &'static str = "chat/completions";
    const FORMAT: Format = Format::OpenAiChat { strict: false };
    const DEFAULT_BASE_URL: &'static str = OPENAI_BASE_URL;
    const BASE_URL_ENV: &'static str = "OPENAI_BASE_URL";
    const API_KEY_ENV: &'static str = "OPENAI_API_KEY";

    fn body(&self, request: &ModelRequest<'_>, options: &RequestOptions<'_>) -> Value {
        let mut messages = Vec::with_capacity(request.messages.len() + 1);
        if let Some(system) = request.system {
            messages.push(json!({"role": "system", "content": system}));
        }
        for m in request.messages {
            match m {
                Message::User { content } => {
                    messages.push(json!({"role": "user", "content": content}));
                }
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    // Always a string: llama-cpp-python's server refuses the
                    // `content: null` OpenAI allows beside `tool_calls` (found by the e2e test).
                    let mut msg = json!({"role": "assistant", "content": content});
                    if !tool_calls.is_empty() {
                        msg["tool_calls"] = tool_calls.iter().map(chat_call).collect();
                    }
                    messages.push(msg);
                }
                Message::Tool { turn, results } => {
                    messages.extend(rendered_results(
                        results,
                        options.format,
                        *turn,
                        request.turn,
                    ));
                }
            }
        }
        let mut body = json!({
            "model": options.model,
            "messages": messages,
            "stream": options.streaming,
        });
        if options.streaming {
            body["stream_options"] = json!({"include_usage": true});
        }
        if request.tools.as_array().is_some_and(|t| !t.is_empty()) {
            body["tools"] = request.tools.clone();
            body["tool_choice"] = chat_tool_choice(request.tool_choice);
        }
        if let Some(max) = request.max_output_tokens {
            body["max_tokens"] = json!(max);
        }
        body
    }

    /// The events of a whole chat completion.
    fn whole(&self, body: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        if let Some(e) = body.get("error") {
            return Err(ModelError::provider(error_text(e)));
        }
        let message = body.pointer("/choices/0/message").ok_or_else(|| {
            ModelError::malformed(format!(
                "a chat completion without `choices[0].message`: {}",
                body_excerpt(&body.to_string())
            ))
        })?;
        let mut events = Vec::new();
        if let Some(t) = message
            .get("content")
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
        {
            events.push(StreamEvent::TextDelta(t.to_owned()));
        }
        whole_answer(
            body,
            message,
            events,
            &WholeShape {
                format: Format::OpenAiChat { strict: false },
                usage: ["/prompt_tokens", "/completion_tokens"],
                stop_reason: "/choices/0/finish_reason",
                response: ["/id", "/model"],
            },
        )
    }
}

fn chat_call(c: &ToolCall) -> Value {
    json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": arguments_text(c)}})
}

/// `tool_choice` for Chat Completions.
fn chat_tool_choice(choice: &ToolChoice) -> Value {
    match choice {
        ToolChoice::Auto => json!("auto"),
        ToolChoice::None => json!("none"),
        ToolChoice::Required => json!("required"),
        ToolChoice::Tool(name) => json!({"type": "function", "function": {"name": name}}),
    }
}
