//! OpenAI Responses (`POST {base}/responses`). Source: OpenAI API reference,
//! "Responses › Create a model response" and "Streaming events". The stream
//! is read by [`ResponsesAssembler`] (`stream.rs`).

use serde_json::{Value, json};
use tool_core::format::{Format, ToolCall};

use super::http_client::{HttpClient, Provider, RequestOptions};
use super::openai_chat::OPENAI_BASE_URL;
use super::wire::{WholeShape, error_text, whole_answer};
use crate::error::{ModelError, body_excerpt};
use crate::message::{
    Message, ModelRequest, StreamEvent, ToolChoice, arguments_text, rendered_results,
};

mod stream;

pub use stream::ResponsesAssembler;

/// An OpenAI Responses client.
///
/// Endpoint and key as [`OpenAiChatClient`](crate::OpenAiChatClient)
/// (`OPENAI_BASE_URL`, `OPENAI_API_KEY`). The system prompt is sent as
/// `instructions`; calls go back as `function_call` items and results as
/// `function_call_output` items ([`render_result`](tool_core::format::render_result)). Tools are rendered as
/// [`Format::OpenAiResponses`]. Requests set `store: false`, so each turn
/// carries the whole conversation.
pub type OpenAiResponsesClient = HttpClient<OpenAiResponses>;

/// The Responses API as a [`Provider`] (see [`OpenAiResponsesClient`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct OpenAiResponses;

impl Provider for OpenAiResponses {
    type Assembler = ResponsesAssembler;
    const PATH: &'static str = "responses";
    const FORMAT: Format = Format::OpenAiResponses { strict: false };
    const DEFAULT_BASE_URL: &'static str = OPENAI_BASE_URL;
    const BASE_URL_ENV: &'static str = "OPENAI_BASE_URL";
    const API_KEY_ENV: &'static str = "OPENAI_API_KEY";

    fn body(&self, request: &ModelRequest<'_>, options: &RequestOptions<'_>) -> Value {
        let mut input = Vec::with_capacity(request.messages.len());
        for m in request.messages {
            match m {
                Message::User { content } => {
                    input.push(json!({"role": "user", "content": content}));
                }
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    if !content.is_empty() {
                        input.push(json!({"role": "assistant", "content": content}));
                    }
                    input.extend(tool_calls.iter().map(responses_call));
                }
                Message::Tool { turn, results } => {
                    input.extend(rendered_results(
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
            "input": input,
            "stream": options.streaming,
            "store": false,
        });
        if let Some(system) = request.system {
            body["instructions"] = json!(system);
        }
        if request.tools.as_array().is_some_and(|t| !t.is_empty()) {
            body["tools"] = request.tools.clone();
            body["tool_choice"] = match request.tool_choice {
                ToolChoice::Auto => json!("auto"),
                ToolChoice::None => json!("none"),
                ToolChoice::Required => json!("required"),
                ToolChoice::Tool(name) => json!({"type": "function", "name": name}),
            };
        }
        if let Some(max) = request.max_output_tokens {
            body["max_output_tokens"] = json!(max);
        }
        body
    }

    /// The events of a whole response.
    fn whole(&self, body: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        if let Some(e) = body.get("error").filter(|e| !e.is_null()) {
            return Err(ModelError::provider(error_text(e)));
        }
        let Some(output) = body.get("output").and_then(Value::as_array) else {
            return Err(ModelError::malformed(format!(
                "a response without `output`: {}",
                body_excerpt(&body.to_string())
            )));
        };
        let mut events = Vec::new();
        for item in output {
            if item.get("type").and_then(Value::as_str) == Some("message") {
                for part in item
                    .get("content")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    if part.get("type").and_then(Value::as_str) == Some("output_text") {
                        if let Some(t) = part.get("text").and_then(Value::as_str) {
                            events.push(StreamEvent::TextDelta(t.to_owned()));
                        }
                    }
                }
            }
        }
        whole_answer(
            body,
            body,
            events,
            &WholeShape {
                format: Format::OpenAiResponses { strict: false },
                usage: ["/input_tokens", "/output_tokens"],
                stop_reason: "/status",
                response: ["/id", "/model"],
            },
        )
    }
}

fn responses_call(c: &ToolCall) -> Value {
    json!({"type": "function_call", "call_id": c.id, "name": c.name, "arguments": arguments_text(c)})
}
