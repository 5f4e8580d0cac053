//! OpenAI Chat Completions streaming (`stream: true`): `chat.completion.chunk`
//! objects, each `choices[0].delta` carrying `content` text and/or
//! `tool_calls` fragments `{index, id?, type?, function: {name?, arguments?}}`;
//! the first fragment of a call has its id and name, later ones pieces of
//! the `arguments` JSON text. `finish_reason` closes the choice; `data:
//! [DONE]` ends the stream; a chunk with `usage` (with
//! `stream_options.include_usage`) carries the counts. Source: OpenAI API
//! reference, "The chat completion chunk object"; function-calling guide,
//! "Streaming".

use serde_json::{Value, json};
use tool_core::format::{Format, ToolCall};

use crate::error::{ModelError, body_excerpt, describe_call};
use crate::message::{StreamEvent, Usage};
use crate::provider::wire::{count, error_text, parse_chunk};
use crate::transport::sse::{Assembler, OpenCall};

/// Assembles OpenAI Chat Completions chunks (see the [`assemble`](crate::assemble) docs).
#[derive(Debug, Default)]
pub struct OpenAiChatAssembler {
    /// Calls being streamed, in index order (fragments of a finished call
    /// after a later index started are refused).
    open: Vec<Partial>,
    /// The highest index yielded so far.
    yielded_below: Option<u64>,
    finished: bool,
    done: bool,
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

    fn flush(&mut self, upto: Option<u64>, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        while let Some(first) = self.open.first() {
            if upto.is_some_and(|u| first.index >= u) {
                break;
            }
            let p = self.open.remove(0);
            self.yielded_below = Some(p.index);
            out.push(StreamEvent::ToolCall(p.into_call()?));
        }
        Ok(())
    }

    fn fragment(&mut self, frag: &Value, out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        let id = frag.get("id").and_then(Value::as_str);
        let function = frag.get("function");
        let name = function.and_then(|f| f.get("name")).and_then(Value::as_str);
        let piece = function
            .and_then(|f| f.get("arguments"))
            .and_then(Value::as_str)
            .unwrap_or("");
        // Some OpenAI-compatible servers omit `index`: a fragment with an id
        // starts the next call, one without continues the last.
        let index = match frag.get("index").and_then(Value::as_u64) {
            Some(i) => i,
            None => match (id, self.open.last()) {
                (None, Some(last)) => last.index,
                _ => self
                    .open
                    .last()
                    .map(|p| p.index + 1)
                    .or(self.yielded_below.map(|i| i + 1))
                    .unwrap_or(0),
            },
        };
        if self.yielded_below.is_some_and(|y| index <= y) {
            return Err(ModelError::malformed(format!(
                "OpenAI stream: a fragment for tool call index {index} {} arrived after that call was complete",
                describe_call(name, id)
            )));
        }
        // A later index starts: every call before it is complete.
        if self.open.last().is_some_and(|p| index > p.index) {
            self.flush(Some(index), out)?;
        }
        match self.open.iter_mut().find(|p| p.index == index) {
            Some(p) => {
                if p.id.is_none() {
                    p.id = id.map(str::to_owned);
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
            None => self.open.push(Partial {
                index,
                id: id.map(str::to_owned),
                name: name.map(str::to_owned),
                arguments: piece.to_owned(),
            }),
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
            self.flush(None, out)?;
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
                    self.fragment(frag, out)?;
                }
            }
            Some(other) => {
                return Err(ModelError::malformed(format!(
                    "OpenAI stream: `delta.tool_calls` is not an array: {other}"
                )));
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.flush(None, out)?;
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
        self.flush(None, out)?;
        if !self.finished {
            out.push(StreamEvent::Finished { stop_reason: None });
            self.finished = true;
        }
        Ok(())
    }

    fn open_call(&self) -> Option<OpenCall<'_>> {
        self.open.first().map(|p| OpenCall {
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
