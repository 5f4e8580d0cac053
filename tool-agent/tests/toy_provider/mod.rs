//! A toy model provider written only from `docs/ARCHITECTURE.md`'s recipe
//! "A new model provider", outside the crate (so only public API): this
//! folder plus one `mod toy_provider;` line in the test that uses it.
//!
//! The toy API: `POST {base}/toy/chat` with `{"model", "system", "turns":
//! [{"role", "text"} | {"role": "call", "id", "name", "args"} | {"role":
//! "result", "id", "text"}], "tools", "stream"}`; a whole answer is `{"text",
//! "calls": [{"id", "name", "args"}], "reason", "usage": {"in", "out"}}` and
//! a streamed one the events of `stream.rs`. Key (optional) in `x-toy-key`.

#![allow(
    unreachable_pub,
    reason = "public as a provider folder inside tool-agent would be; here in a test crate"
)]

use serde_json::{Value, json};
use tool_agent::provider::{HttpClient, Provider, RequestOptions};
use tool_agent::{Message, ModelError, ModelErrorKind, ModelRequest, StreamEvent, Usage};
use tool_core::format::ToolCall;
use tool_core::{Format, ToolArgs};

mod stream;

pub use stream::ToyAssembler;

/// The toy client: the one line that makes the provider a [`tool_agent::ModelClient`].
pub type ToyClient = HttpClient<Toy>;

/// The toy API.
#[derive(Debug, Default, Clone, Copy)]
pub struct Toy;

impl Provider for Toy {
    type Assembler = ToyAssembler;
    const PATH: &'static str = "toy/chat";
    const FORMAT: Format = Format::Json;
    const DEFAULT_BASE_URL: &'static str = "http://127.0.0.1:9/v1";
    const BASE_URL_ENV: &'static str = "TOY_BASE_URL";
    const API_KEY_ENV: &'static str = "TOY_API_KEY";

    fn body(&self, request: &ModelRequest<'_>, options: &RequestOptions<'_>) -> Value {
        let mut turns = Vec::new();
        for m in request.messages {
            match m {
                Message::User { content } => turns.push(json!({"role": "user", "text": content})),
                Message::Assistant {
                    content,
                    tool_calls,
                } => {
                    turns.push(json!({"role": "assistant", "text": content}));
                    for c in tool_calls {
                        let args = match &c.arguments {
                            ToolArgs::Text(t) => Value::String(t.clone()),
                            ToolArgs::Value(v) => v.clone(),
                        };
                        turns.push(
                            json!({"role": "call", "id": c.id, "name": c.name, "args": args}),
                        );
                    }
                }
                Message::Tool { turn, results } => {
                    // In full in the request after its turn, short afterwards (an
                    // output-once result's long-term memory), as every
                    // built-in provider does.
                    let rendering = tool_agent::rendering_for(*turn, request.turn);
                    for r in results {
                        turns.push(json!({
                            "role": "result",
                            "id": r.call.id,
                            "text": r.result.render(rendering),
                        }));
                    }
                }
                _ => {}
            }
        }
        json!({
            "model": options.model,
            "system": request.system,
            "turns": turns,
            "tools": request.tools,
            "stream": options.streaming,
        })
    }

    fn headers(
        &self,
        api_key: Option<&str>,
        _body: &Value,
    ) -> Result<Vec<(&'static str, String)>, ModelError> {
        Ok(api_key
            .map(|k| ("x-toy-key", k.to_owned()))
            .into_iter()
            .collect())
    }

    fn whole(&self, body: &Value) -> Result<Vec<StreamEvent>, ModelError> {
        let mut events = Vec::new();
        if let Some(t) = body["text"].as_str().filter(|t| !t.is_empty()) {
            events.push(StreamEvent::TextDelta(t.to_owned()));
        }
        for c in body["calls"].as_array().into_iter().flatten() {
            let (Some(id), Some(name)) = (c["id"].as_str(), c["name"].as_str()) else {
                return Err(ModelError::new(ModelErrorKind::Malformed(format!(
                    "toy answer: a call without id or name: {c}"
                ))));
            };
            events.push(StreamEvent::ToolCall(ToolCall::new(
                id,
                name,
                c["args"].clone(),
            )));
        }
        events.push(StreamEvent::Usage(Usage {
            input_tokens: body["usage"]["in"].as_u64().unwrap_or(0),
            output_tokens: body["usage"]["out"].as_u64().unwrap_or(0),
        }));
        events.push(StreamEvent::Finished {
            stop_reason: body["reason"].as_str().map(str::to_owned),
        });
        Ok(events)
    }
}
