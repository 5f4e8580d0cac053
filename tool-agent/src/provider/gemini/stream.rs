//! Gemini `streamGenerateContent?alt=sse`: every `data:` is a whole
//! `GenerateContentResponse`; `candidates[0].content.parts[]` carry `text`
//! pieces and whole `functionCall {name, args, id?}` parts (a call is never
//! split across chunks), the last chunk a `finishReason` and
//! `usageMetadata`. Source: Gemini API reference, "models.streamGenerateContent"
//! and "Function calling" (streaming).

use serde_json::Value;
use tool_core::format::{Format, ToolCall};

use crate::error::ModelError;
use crate::message::{StreamEvent, Usage};
use crate::provider::wire::{count, error_text, parse_chunk, response_info};
use crate::transport::sse::Assembler;

/// Assembles Gemini stream chunks (see the [`assemble`](crate::assemble) docs).
#[derive(Debug, Default)]
pub struct GeminiAssembler {
    calls: usize,
    usage: Option<Usage>,
    done: bool,
    info_sent: bool,
}

impl GeminiAssembler {
    /// A fresh assembler for one response.
    pub fn new() -> Self {
        Self::default()
    }
}

impl Assembler for GeminiAssembler {
    fn feed(
        &mut self,
        _event: Option<&str>,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        if data.trim().is_empty() {
            return Ok(());
        }
        let chunk = parse_chunk("Gemini", data)?;
        if let Some(error) = chunk.get("error") {
            return Err(ModelError::provider(error_text(error)));
        }
        if !self.info_sent {
            let at = |key: &str| chunk.get(key).and_then(Value::as_str);
            if let Some(info) = response_info(at("responseId"), at("modelVersion")) {
                out.push(info);
                self.info_sent = true;
            }
        }
        if let Some(parts) = chunk
            .pointer("/candidates/0/content/parts")
            .and_then(Value::as_array)
        {
            for part in parts {
                if let Some(t) = part
                    .get("text")
                    .and_then(Value::as_str)
                    .filter(|t| !t.is_empty())
                {
                    // Thought summaries are not answer text.
                    if part.get("thought").and_then(Value::as_bool) != Some(true) {
                        out.push(StreamEvent::TextDelta(t.to_owned()));
                    }
                }
                if part.get("functionCall").is_some() {
                    let mut call = ToolCall::parse(Format::GeminiJsonSchema, part)
                        .map_err(|e| ModelError::malformed(format!("Gemini stream: {e}")))?
                        .pop()
                        .ok_or_else(|| {
                            ModelError::malformed("Gemini stream: empty functionCall")
                        })?;
                    if call.generated_id {
                        // Number calls across chunks, not within one.
                        let args = match &call.arguments {
                            tool_core::ToolArgs::Value(v) => v.clone(),
                            tool_core::ToolArgs::Text(t) => Value::String(t.clone()),
                        };
                        call = ToolCall::with_generated_id(self.calls, call.name, args);
                    }
                    self.calls += 1;
                    out.push(StreamEvent::ToolCall(call));
                }
            }
        }
        if let Some(meta) = chunk.get("usageMetadata") {
            // Each chunk repeats the running totals: keep the last.
            self.usage = Some(Usage {
                input_tokens: count(meta, "/promptTokenCount"),
                output_tokens: count(meta, "/candidatesTokenCount"),
            });
        }
        if let Some(reason) = chunk
            .pointer("/candidates/0/finishReason")
            .and_then(Value::as_str)
        {
            self.done = true;
            if let Some(u) = self.usage.take() {
                out.push(StreamEvent::Usage(u));
            }
            out.push(StreamEvent::Finished {
                stop_reason: Some(reason.to_owned()),
            });
        }
        Ok(())
    }

    fn end_marker(&self) -> &'static str {
        "candidate finishReason"
    }

    fn is_done(&self) -> bool {
        self.done
    }
}
