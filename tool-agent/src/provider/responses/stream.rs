//! OpenAI Responses streaming: typed events, each SSE `event:` name equal to
//! the data's `type`. Function calls: `response.output_item.added` (an item
//! `{"type": "function_call", "id", "call_id", "name", "arguments": ""}`),
//! `response.function_call_arguments.delta` (`item_id`, `output_index`,
//! `delta`), `response.function_call_arguments.done` (`arguments`, whole),
//! then `response.output_item.done` with the finished item. Text:
//! `response.output_text.delta`. End: `response.completed` (with
//! `response.usage`); failures: `response.failed`, `response.incomplete`,
//! `error`. Source: OpenAI API reference, "Responses › Streaming events".

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tool_core::format::{Format, ToolCall};

use crate::error::{ModelError, describe_call};
use crate::message::{StreamEvent, Usage};
use crate::provider::wire::{count, error_text, parse_chunk, response_info};
use crate::transport::sse::{Assembler, OpenCall};

/// Assembles OpenAI Responses events (see the [`assemble`](crate::assemble) docs).
#[derive(Debug, Default)]
pub struct ResponsesAssembler {
    /// Function-call items by item id.
    open: BTreeMap<String, Partial>,
    done: bool,
    /// The response's id and model were sent (from the first event whose
    /// `response` object names them: `response.created`, else the end).
    info_sent: bool,
}

#[derive(Debug)]
struct Partial {
    call_id: Option<String>,
    name: Option<String>,
    arguments: String,
    yielded: bool,
}

impl ResponsesAssembler {
    /// A fresh assembler for one response.
    pub fn new() -> Self {
        Self::default()
    }

    fn complete(
        &mut self,
        item_id: &str,
        arguments: Option<&str>,
        name: Option<&str>,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        let Some(p) = self.open.get_mut(item_id) else {
            return Err(ModelError::malformed(format!(
                "Responses stream: arguments finished for unknown item `{item_id}`"
            )));
        };
        if p.yielded {
            return Ok(());
        }
        if let Some(a) = arguments {
            p.arguments = a.to_owned();
        }
        if p.name.is_none() {
            p.name = name.map(str::to_owned);
        }
        let (Some(call_id), Some(name)) = (&p.call_id, &p.name) else {
            return Err(ModelError::malformed(format!(
                "Responses stream: function call item `{item_id}` {} lacks its call_id or name",
                describe_call(p.name.as_deref(), p.call_id.as_deref())
            )));
        };
        let item = json!({"type": "function_call", "call_id": call_id, "name": name, "arguments": p.arguments});
        let call = ToolCall::parse(Format::OpenAiResponses { strict: false }, &item)
            .map_err(|e| ModelError::malformed(format!("Responses stream: {e}")))?
            .pop()
            .ok_or_else(|| ModelError::malformed("Responses stream: empty function call"))?;
        p.yielded = true;
        out.push(StreamEvent::ToolCall(call));
        Ok(())
    }
}

fn str_at<'a>(v: &'a Value, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Value::as_str)
}

impl Assembler for ResponsesAssembler {
    fn feed(
        &mut self,
        event: Option<&str>,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        let ev = parse_chunk("Responses", data)?;
        let kind = str_at(&ev, "type").or(event).unwrap_or("");
        if !self.info_sent {
            let at = |pointer: &str| ev.pointer(pointer).and_then(Value::as_str);
            if let Some(info) = response_info(at("/response/id"), at("/response/model")) {
                out.push(info);
                self.info_sent = true;
            }
        }
        match kind {
            "response.output_text.delta" => {
                if let Some(d) = str_at(&ev, "delta").filter(|d| !d.is_empty()) {
                    out.push(StreamEvent::TextDelta(d.to_owned()));
                }
            }
            "response.output_item.added" => {
                let item = ev.get("item").unwrap_or(&Value::Null);
                if str_at(item, "type") == Some("function_call") {
                    let Some(id) = str_at(item, "id").or(str_at(item, "call_id")) else {
                        return Err(ModelError::malformed(
                            "Responses stream: a function_call item without `id`",
                        ));
                    };
                    self.open.insert(
                        id.to_owned(),
                        Partial {
                            call_id: str_at(item, "call_id").map(str::to_owned),
                            name: str_at(item, "name").map(str::to_owned),
                            arguments: str_at(item, "arguments").unwrap_or("").to_owned(),
                            yielded: false,
                        },
                    );
                }
            }
            "response.function_call_arguments.delta" => {
                let id = str_at(&ev, "item_id").unwrap_or("");
                let Some(p) = self.open.get_mut(id) else {
                    return Err(ModelError::malformed(format!(
                        "Responses stream: arguments delta for unknown item `{id}`"
                    )));
                };
                if p.yielded {
                    return Err(ModelError::malformed(format!(
                        "Responses stream: arguments delta for {} after it was done",
                        describe_call(p.name.as_deref(), p.call_id.as_deref())
                    )));
                }
                p.arguments.push_str(str_at(&ev, "delta").unwrap_or(""));
            }
            "response.function_call_arguments.done" => {
                let id = str_at(&ev, "item_id").unwrap_or("").to_owned();
                self.complete(&id, str_at(&ev, "arguments"), str_at(&ev, "name"), out)?;
            }
            "response.output_item.done" => {
                let item = ev.get("item").unwrap_or(&Value::Null);
                if str_at(item, "type") == Some("function_call") {
                    let id = str_at(item, "id")
                        .or(str_at(item, "call_id"))
                        .unwrap_or("")
                        .to_owned();
                    if !self.open.contains_key(&id) {
                        self.open.insert(
                            id.clone(),
                            Partial {
                                call_id: None,
                                name: None,
                                arguments: String::new(),
                                yielded: false,
                            },
                        );
                    }
                    if let Some(p) = self.open.get_mut(&id) {
                        if p.call_id.is_none() {
                            p.call_id = str_at(item, "call_id").map(str::to_owned);
                        }
                    }
                    self.complete(&id, str_at(item, "arguments"), str_at(item, "name"), out)?;
                }
            }
            "response.completed" => {
                let usage = ev.pointer("/response/usage").unwrap_or(&Value::Null);
                out.push(StreamEvent::Usage(Usage {
                    input_tokens: count(usage, "/input_tokens"),
                    output_tokens: count(usage, "/output_tokens"),
                }));
                if let Some((id, p)) = self.open.iter().find(|(_, p)| !p.yielded) {
                    return Err(ModelError::malformed(format!(
                        "Responses stream: completed while function call item `{id}` {} was unfinished",
                        describe_call(p.name.as_deref(), p.call_id.as_deref())
                    )));
                }
                self.done = true;
                out.push(StreamEvent::Finished {
                    stop_reason: ev
                        .pointer("/response/status")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                });
            }
            "response.failed" | "response.incomplete" => {
                let why = ev
                    .pointer("/response/error")
                    .filter(|e| !e.is_null())
                    .map(error_text)
                    .or_else(|| {
                        ev.pointer("/response/incomplete_details/reason")
                            .map(|r| format!("incomplete: {r}"))
                    })
                    .unwrap_or_else(|| kind.to_owned());
                return Err(ModelError::provider(why));
            }
            "error" => return Err(ModelError::provider(error_text(&ev))),
            _ => {}
        }
        Ok(())
    }

    fn open_call(&self) -> Option<OpenCall<'_>> {
        self.open.values().find(|p| !p.yielded).map(|p| OpenCall {
            name: p.name.as_deref(),
            id: p.call_id.as_deref(),
            received: p.arguments.len(),
            payload: "arguments",
        })
    }

    fn end_marker(&self) -> &'static str {
        "response.completed"
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
