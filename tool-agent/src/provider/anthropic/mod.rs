//! Anthropic Messages (`POST {base}/messages`). Source: Anthropic API
//! reference, "Messages" and "Streaming Messages"; tool use guide. The
//! stream is read by [`AnthropicAssembler`] (`stream.rs`).

use serde_json::{Value, json};
use tool_core::format::{Format, ToolCall};

use super::http_client::{HttpClient, Provider, RequestOptions};
use super::wire::{WholeShape, error_text, whole_answer};
use crate::error::{ModelError, body_excerpt};
use crate::message::{
    Message, ModelRequest, StreamEvent, ToolChoice, arguments_object, rendered_results,
};

mod stream;

pub use stream::AnthropicAssembler;

/// Default base URL when neither an argument nor `ANTHROPIC_BASE_URL` gives one.
pub const ANTHROPIC_BASE_URL: &str = "https://api.anthropic.com/v1";

/// The `anthropic-version` header sent.
pub const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The `anthropic-beta` value sent when the tool list holds Anthropic's
/// server-side tool search (`tool_search_tool_bm25_20251119` or
/// `tool_search_tool_regex_20251119`, rendered by
/// [`Format::AnthropicToolSearch`]): Anthropic's "Tool search tool" docs
/// require this beta for the search tool and `defer_loading`; "Tool use
/// examples" require the same beta for a tool's `input_examples`, so it is
/// also sent when any tool of the request carries examples.
pub const TOOL_SEARCH_BETA: &str = "advanced-tool-use-2025-11-20";

/// Default `max_tokens` (the API requires one).
pub const DEFAULT_MAX_TOKENS: u32 = 4096;

/// An Anthropic Messages client.
///
/// Base URL: argument, `ANTHROPIC_BASE_URL`, or `https://api.anthropic.com/v1`;
/// key: argument or `ANTHROPIC_API_KEY` (required: sent as `x-api-key`),
/// with `anthropic-version: 2023-06-01`. Tool results go back as
/// `tool_result` blocks of a `user` message ([`render_result`](tool_core::format::render_result)); consecutive
/// user content is merged into one message. Tools rendered as
/// [`Format::Anthropic`].
///
/// With [`Format::AnthropicToolSearch`] (`with_format`), or when a tool
/// carries `input_examples` (a `# Examples` section of its doc comment), the
/// request carries `anthropic-beta: advanced-tool-use-2025-11-20`
/// ([`TOOL_SEARCH_BETA`]).
/// Limit: the answer's `server_tool_use` / `tool_search_tool_result` blocks
/// are not kept in the conversation the loop sends back, so a later turn
/// does not show the model its own earlier searches (it searches again);
/// the project's own `tool_search` with a deferred view has no such gap.
pub type AnthropicClient = HttpClient<Anthropic>;

/// The Messages API as a [`Provider`] (see [`AnthropicClient`]).
#[derive(Debug, Default, Clone, Copy)]
pub struct Anthropic;

impl Provider for Anthropic {
    type Assembler = AnthropicAssembler;
    const PATH: &'static str = "messages";
    const FORMAT: Format = Format::Anthropic { strict: false };
    const DEFAULT_BASE_URL: &'static str = ANTHROPIC_BASE_URL;
    const BASE_URL_ENV: &'static str = "ANTHROPIC_BASE_URL";
    const API_KEY_ENV: &'static str = "ANTHROPIC_API_KEY";

    fn body(&self, request: &ModelRequest<'_>, options: &RequestOptions<'_>) -> Value {
        let mut messages: Vec<Value> = Vec::with_capacity(request.messages.len());
        let mut push = |role: &str, blocks: Vec<Value>| {
            if blocks.is_empty() {
                return;
            }
            if let Some(last) = messages.last_mut() {
                if last["role"] == role {
                    if let Some(content) = last["content"].as_array_mut() {
                        content.extend(blocks);
                        return;
                    }
                }
            }
            messages.push(json!({"role": role, "content": blocks}));
        };
        for m in request.messages {
            match m {
                Message::User { content } => {
                    push("user", vec![json!({"type": "text", "text": content})]);
                }
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    let mut blocks = Vec::new();
                    if !content.is_empty() {
                        blocks.push(json!({"type": "text", "text": content}));
                    }
                    blocks.extend(tool_calls.iter().map(tool_use));
                    push("assistant", blocks);
                }
                Message::Tool { turn, results } => {
                    push(
                        "user",
                        rendered_results(results, options.format, *turn, request.turn),
                    );
                }
            }
        }
        let mut body = json!({
            "model": options.model,
            "max_tokens": request.max_output_tokens.unwrap_or(DEFAULT_MAX_TOKENS),
            "messages": messages,
            "stream": options.streaming,
        });
        if let Some(system) = request.system {
            body["system"] = json!(system);
        }
        if request.tools.as_array().is_some_and(|t| !t.is_empty()) {
            body["tools"] = request.tools.clone();
            body["tool_choice"] = match request.tool_choice {
                ToolChoice::Auto => json!({"type": "auto"}),
                ToolChoice::None => json!({"type": "none"}),
                ToolChoice::Required => json!({"type": "any"}),
                ToolChoice::Tool(name) => json!({"type": "tool", "name": name}),
            };
        }
        body
    }

    /// `x-api-key` (required), `anthropic-version`, and `anthropic-beta`
    /// when the tool list holds the server-side tool search.
    fn headers(
        &self,
        api_key: Option<&str>,
        body: &Value,
    ) -> Result<Vec<(&'static str, String)>, ModelError> {
        let Some(key) = api_key else {
            return Err(ModelError::config(
                "no Anthropic API key: pass one or set ANTHROPIC_API_KEY",
            ));
        };
        let mut headers = vec![
            ("x-api-key", key.to_owned()),
            ("anthropic-version", ANTHROPIC_VERSION.to_owned()),
        ];
        let needs_beta = body["tools"].as_array().is_some_and(|tools| {
            tools.iter().any(|t| {
                t["type"]
                    .as_str()
                    .is_some_and(|ty| ty.starts_with("tool_search_tool_"))
                    || t.get("input_examples").is_some()
            })
        });
        if needs_beta {
            headers.push(("anthropic-beta", TOOL_SEARCH_BETA.to_owned()));
        }
        Ok(headers)
    }

    /// The events of a whole message.
    fn whole(&self, body: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        if body.get("type").and_then(Value::as_str) == Some("error") {
            return Err(ModelError::provider(error_text(
                body.get("error").unwrap_or(body),
            )));
        }
        let Some(content) = body.get("content").and_then(Value::as_array) else {
            return Err(ModelError::malformed(format!(
                "a message without `content`: {}",
                body_excerpt(&body.to_string())
            )));
        };
        let events: Vec<StreamEvent> = content
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .map(|t| StreamEvent::TextDelta(t.to_owned()))
            .collect();
        whole_answer(
            body,
            body,
            events,
            &WholeShape {
                format: Format::Anthropic { strict: false },
                usage: ["/input_tokens", "/output_tokens"],
                stop_reason: "/stop_reason",
                response: ["/id", "/model"],
            },
        )
    }
}

fn tool_use(c: &ToolCall) -> Value {
    json!({"type": "tool_use", "id": c.id, "name": c.name, "input": arguments_object(c)})
}
