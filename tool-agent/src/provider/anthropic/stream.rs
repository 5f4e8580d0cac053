//! Anthropic Messages streaming: `message_start`, then per content block
//! `content_block_start` (`{"type": "text"}` or `{"type": "tool_use", "id",
//! "name", "input": {}}`), `content_block_delta` (`text_delta` with `text`,
//! `input_json_delta` with `partial_json`, a piece of the input's JSON
//! text), `content_block_stop`; then `message_delta` (`stop_reason`,
//! `usage.output_tokens`) and `message_stop`. `ping` events may come
//! anywhere; `error` carries `{"error": {"type", "message"}}`. A tool without
//! parameters streams an empty `partial_json` (or none): its input is `{}`.
//! Source: Anthropic docs, "Streaming Messages" (event types, "Input JSON
//! delta").

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use tool_core::format::{Format, ToolCall};

use crate::error::{ModelError, body_excerpt, describe_call};
use crate::message::{StreamEvent, Usage};
use crate::provider::wire::{count, error_text, parse_chunk, response_info};
use crate::transport::sse::{Assembler, OpenCall};

/// Assembles Anthropic Messages events (see the [`assemble`](crate::assemble) docs).
#[derive(Debug, Default)]
pub struct AnthropicAssembler {
    /// `tool_use` blocks being streamed, by block index.
    open: BTreeMap<u64, Partial>,
    stop_reason: Option<String>,
    done: bool,
}

#[derive(Debug)]
struct Partial {
    id: String,
    name: String,
    json: String,
}

impl AnthropicAssembler {
    /// A fresh assembler for one response.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Assembler for AnthropicAssembler {
    fn feed(
        &mut self,
        event: Option<&str>,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        let ev = parse_chunk("Anthropic", data)?;
        let kind = ev
            .get("type")
            .and_then(Value::as_str)
            .or(event)
            .unwrap_or("");
        let index = ev.get("index").and_then(Value::as_u64);
        match kind {
            "message_start" => {
                let at = |pointer: &str| ev.pointer(pointer).and_then(Value::as_str);
                out.extend(response_info(at("/message/id"), at("/message/model")));
                let usage = ev.pointer("/message/usage").unwrap_or(&Value::Null);
                out.push(StreamEvent::Usage(Usage {
                    input_tokens: count(usage, "/input_tokens"),
                    output_tokens: count(usage, "/output_tokens"),
                }));
            }
            "content_block_start" => {
                let block = ev.get("content_block").unwrap_or(&Value::Null);
                match block.get("type").and_then(Value::as_str) {
                    Some("tool_use") => {
                        let (Some(i), Some(id), Some(name)) = (
                            index,
                            block.get("id").and_then(Value::as_str),
                            block.get("name").and_then(Value::as_str),
                        ) else {
                            return Err(ModelError::malformed(format!(
                                "Anthropic stream: a tool_use block start without index, id or name: {block}"
                            )));
                        };
                        // `input` is `{}` at the start; a non-empty one (some
                        // gateways send the whole input here) is kept.
                        let json = match block.get("input") {
                            Some(Value::Object(m)) if !m.is_empty() => {
                                Value::Object(m.clone()).to_string()
                            }
                            _ => String::new(),
                        };
                        self.open.insert(
                            i,
                            Partial {
                                id: id.to_owned(),
                                name: name.to_owned(),
                                json,
                            },
                        );
                    }
                    Some("text") => {
                        if let Some(t) = block
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(StreamEvent::TextDelta(t.to_owned()));
                        }
                    }
                    _ => {}
                }
            }
            "content_block_delta" => {
                let delta = ev.get("delta").unwrap_or(&Value::Null);
                match delta.get("type").and_then(Value::as_str) {
                    Some("text_delta") => {
                        if let Some(t) = delta
                            .get("text")
                            .and_then(Value::as_str)
                            .filter(|t| !t.is_empty())
                        {
                            out.push(StreamEvent::TextDelta(t.to_owned()));
                        }
                    }
                    Some("input_json_delta") => {
                        let Some(p) = index.and_then(|i| self.open.get_mut(&i)) else {
                            return Err(ModelError::malformed(format!(
                                "Anthropic stream: input_json_delta for block {index:?}, which is not an open tool_use block"
                            )));
                        };
                        p.json.push_str(
                            delta
                                .get("partial_json")
                                .and_then(Value::as_str)
                                .unwrap_or(""),
                        );
                    }
                    _ => {}
                }
            }
            "content_block_stop" => {
                if let Some(p) = index.and_then(|i| self.open.remove(&i)) {
                    let input = if p.json.trim().is_empty() {
                        Value::Object(Map::new())
                    } else {
                        serde_json::from_str::<Value>(&p.json).map_err(|e| {
                            ModelError::malformed(format!(
                                "Anthropic stream: the input of tool call {} is not JSON ({e}): {}",
                                describe_call(Some(&p.name), Some(&p.id)),
                                body_excerpt(&p.json)
                            ))
                        })?
                    };
                    let block =
                        json!({"type": "tool_use", "id": p.id, "name": p.name, "input": input});
                    let call = ToolCall::parse(Format::Anthropic { strict: false }, &block)
                        .map_err(|e| ModelError::malformed(format!("Anthropic stream: {e}")))?
                        .pop()
                        .ok_or_else(|| ModelError::malformed("Anthropic stream: empty tool_use"))?;
                    out.push(StreamEvent::ToolCall(call));
                }
            }
            "message_delta" => {
                if let Some(r) = ev.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(r.to_owned());
                }
                let usage = ev.get("usage").unwrap_or(&Value::Null);
                out.push(StreamEvent::Usage(Usage {
                    input_tokens: count(usage, "/input_tokens"),
                    output_tokens: count(usage, "/output_tokens"),
                }));
            }
            "message_stop" => {
                if let Some(p) = self.open.values().next() {
                    return Err(ModelError::malformed(format!(
                        "Anthropic stream: message_stop while tool call {} was open",
                        describe_call(Some(&p.name), Some(&p.id))
                    )));
                }
                self.done = true;
                out.push(StreamEvent::Finished {
                    stop_reason: self.stop_reason.take(),
                });
            }
            "error" => {
                return Err(ModelError::provider(error_text(
                    ev.get("error").unwrap_or(&ev),
                )));
            }
            _ => {} // ping and future event types
        }
        Ok(())
    }

    fn open_call(&self) -> Option<OpenCall<'_>> {
        self.open.values().next().map(|p| OpenCall {
            name: Some(&p.name),
            id: Some(&p.id),
            received: p.json.len(),
            payload: "input JSON",
        })
    }

    fn end_marker(&self) -> &'static str {
        "message_stop"
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
