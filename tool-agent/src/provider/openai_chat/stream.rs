//! OpenAI Chat Completions streaming (`stream: true`): `chat.completion.chunk`
//! objects, each `choices[0].delta` carrying `content` text and/or
//! `tool_calls` fragments `{index, id?, type?, function: {name?, arguments?}}`;
//! the first fragment of a call has its id and name, later ones pieces of
//! the `arguments` JSON text. `finish_reason` closes the choice; `data:
//! [DONE]` ends the stream; a chunk with `usage` (with
//! `stream_options.include_usage`) carries the counts. Source: OpenAI API
//! reference, "The chat completion chunk object"; function-calling guide,
//! "Streaming".

use std::collections::BTreeMap;

use serde_json::{Value, json};
use tool_core::format::{Format, ToolCall};

use crate::error::{ModelError, body_excerpt, describe_call};
use crate::message::{StreamEvent, Usage};
use crate::provider::wire::{count, error_text, parse_chunk, response_info};
use crate::transport::sse::{Assembler, OpenCall};

/// Assembles OpenAI Chat Completions chunks (see the [`assemble`](crate::assemble) docs).
///
/// Fragments are keyed by their `index` and may arrive in any order
/// (interleaved, a later index first): the chunk format promises none. A call
/// is complete only when the answer ends (`finish_reason` or `[DONE]`); the
/// calls are then yielded in index order. A fragment repeating its call's id,
/// type or name is taken as the same call; a different id on an index that
/// already has one is [`Malformed`](crate::ModelErrorKind::Malformed).
#[derive(Debug, Default)]
pub struct OpenAiChatAssembler {
    /// Calls being streamed, by index.
    open: BTreeMap<u64, Partial>,
    /// The index the last fragment went to (a fragment without `index` and
    /// without id continues it).
    last: Option<u64>,
    /// The calls were yielded (`finish_reason` or `[DONE]` came): later
    /// fragments are refused.
    flushed: bool,
    finished: bool,
    done: bool,
    /// The response's id and model were sent (from the first chunk naming them).
    info_sent: bool,
}

#[derive(Debug)]
struct Partial {
    index: u64,
    id: Option<String>,
    name: Option<String>,
    arguments: String,
}

impl OpenAiChatAssembler {
    /// A fresh assembler for one response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Yields every open call, in index order: the answer ended.
    fn flush(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        self.flushed = true;
        for (_, p) in std::mem::take(&mut self.open) {
            out.push(StreamEvent::ToolCall(p.into_call()?));
        }
        Ok(())
    }

    fn fragment(&mut self, frag: &Value) -> Result<(), ModelError> {
        let id = frag
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| !i.is_empty());
        let function = frag.get("function");
        let name = function
            .and_then(|f| f.get("name"))
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty());
        let piece = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            .unwrap_or("");
        // Some OpenAI-compatible servers omit `index`: a fragment with a new
        // id starts the next call, one without continues the last.
        let index = match frag.get("index").and_then(Value::as_u64) {
            Some(i) => i,
            None => match (id, self.last) {
                (None, Some(last)) => last,
                (Some(id), _) if self.open.values().any(|p| p.id.as_deref() == Some(id)) => self
                    .open
                    .values()
                    .find(|p| p.id.as_deref() == Some(id))
                    .map_or(0, |p| p.index),
                _ => self.open.keys().next_back().map_or(0, |i| i + 1),
            },
        };
        if self.flushed {
            return Err(ModelError::malformed(format!(
                "OpenAI stream: a fragment for tool call index {index} {} arrived after the answer's calls were complete",
                describe_call(name, id)
            )));
        }
        self.last = Some(index);
        match self.open.get_mut(&index) {
            Some(p) => {
                match (&p.id, id) {
                    (Some(have), Some(new)) if have != new => {
                        return Err(ModelError::malformed(format!(
                            "OpenAI stream: tool call index {index} has two ids, `{have}` and `{new}`: \
                             each call needs its own index"
                        )));
                    }
                    (None, Some(new)) => p.id = Some(new.to_owned()),
                    _ => {}
                }
                if let Some(n) = name {
                    // Some servers resend the name with every fragment; others
                    // stream it in pieces.
                    match &mut p.name {
                        Some(have) if have != n => have.push_str(n),
                        Some(_) => {}
                        None => p.name = Some(n.to_owned()),
                    }
                }
                p.arguments.push_str(piece);
            }
            None => {
                self.open.insert(
                    index,
                    Partial {
                        index,
                        id: id.map(str::to_owned),
                        name: name.map(str::to_owned),
                        arguments: piece.to_owned(),
                    },
                );
            }
        }
        Ok(())
    }
}

impl Partial {
    fn into_call(self) -> Result<ToolCall, ModelError> {
        let Some(name) = self.name else {
            return Err(ModelError::malformed(format!(
                "OpenAI stream: tool call index {} {} has no function name",
                self.index,
                describe_call(None, self.id.as_deref())
            )));
        };
        let arguments = if self.arguments.trim().is_empty() {
            "{}".to_owned()
        } else {
            self.arguments
        };
        let call = match self.id {
            Some(id) => {
                json!({"id": id, "type": "function", "function": {"name": name, "arguments": arguments}})
            }
            // No id: the call gets a stable generated one (never sent back as an id the server gave).
            None => {
                let args = serde_json::from_str(&arguments).unwrap_or(Value::String(arguments));
                let mut call = ToolCall::with_generated_id(self.index as usize, name, args);
                if let tool_core::ToolArgs::Value(Value::String(t)) = &call.arguments {
                    call.arguments = tool_core::ToolArgs::Text(t.clone());
                }
                return Ok(call);
            }
        };
        ToolCall::parse(Format::OpenAiChat { strict: false }, &call)
            .map_err(|e| ModelError::malformed(format!("OpenAI stream: {e}")))?
            .pop()
            .ok_or_else(|| ModelError::malformed("OpenAI stream: empty tool call"))
    }
}

impl Assembler for OpenAiChatAssembler {
    fn feed(
        &mut self,
        _event: Option<&str>,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        let data = data.trim();
        if data == "[DONE]" {
            self.flush(out)?;
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk = parse_chunk("OpenAI", data)?;
        if let Some(error) = chunk.get("error") {
            return Err(ModelError::provider(error_text(error)));
        }
        if !self.info_sent {
            let at = |key: &str| chunk.get(key).and_then(Value::as_str);
            if let Some(info) = response_info(at("id"), at("model")) {
                out.push(info);
                self.info_sent = true;
            }
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            out.push(StreamEvent::Usage(Usage {
                input_tokens: count(usage, "/prompt_tokens"),
                output_tokens: count(usage, "/completion_tokens"),
            }));
        }
        let Some(choices) = chunk.get("choices").and_then(Value::as_array) else {
            if chunk.get("usage").is_some() {
                return Ok(());
            }
            return Err(ModelError::malformed(format!(
                "OpenAI stream chunk has no `choices`: {}",
                body_excerpt(data)
            )));
        };
        // One choice is asked for (`n` is not set); others are ignored.
        let Some(choice) = choices
            .iter()
            .find(|c| c.get("index").and_then(Value::as_u64).unwrap_or(0) == 0)
        else {
            return Ok(());
        };
        let delta = choice.get("delta").unwrap_or(&Value::Null);
        if let Some(text) = delta.get("content").and_then(Value::as_str) {
            if !text.is_empty() {
                out.push(StreamEvent::TextDelta(text.to_owned()));
            }
        }
        match delta.get("tool_calls") {
            None | Some(Value::Null) => {}
            Some(Value::Array(frags)) => {
                for frag in frags {
                    self.fragment(frag)?;
                }
            }
            Some(other) => {
                return Err(ModelError::malformed(format!(
                    "OpenAI stream: `delta.tool_calls` is not an array: {other}"
                )));
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.flush(out)?;
            self.finished = true;
            out.push(StreamEvent::Finished {
                stop_reason: Some(reason.to_owned()),
            });
        }
        Ok(())
    }

    fn finish(&mut self, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if !self.is_done() {
            return Err(self.truncation());
        }
        self.flush(out)?;
        if !self.finished {
            out.push(StreamEvent::Finished { stop_reason: None });
            self.finished = true;
        }
        Ok(())
    }

    /// The call a cut answer names: the first (by index) whose arguments are
    /// not yet a whole JSON value, else the last one.
    fn open_call(&self) -> Option<OpenCall<'_>> {
        let cut = self
            .open
            .values()
            .find(|p| serde_json::from_str::<serde::de::IgnoredAny>(&p.arguments).is_err())
            .or_else(|| self.open.values().next_back());
        cut.map(|p| OpenCall {
            name: p.name.as_deref(),
            id: p.id.as_deref(),
            received: p.arguments.len(),
            payload: "arguments",
        })
    }

    fn end_marker(&self) -> &'static str {
        "finish_reason or [DONE]"
    }

    fn is_done(&self) -> bool {
        self.done || self.finished
    }
}
