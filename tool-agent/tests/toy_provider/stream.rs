//! The toy stream: one JSON object per `data:` line, by `type`:
//! `text` (`text`), `call_start` (`id`, `name`), `call_args` (`text`, a piece
//! of the arguments' JSON), `call_end`, `end` (`reason`, `usage: {in, out}`).

use serde_json::Value;
use tool_agent::assemble::{Assembler, OpenCall};
use tool_agent::{ModelError, ModelErrorKind, StreamEvent, Usage};
use tool_core::format::ToolCall;

/// The toy stream's state machine.
#[derive(Debug, Default)]
pub struct ToyAssembler {
    open: Option<(String, String, String)>,
    done: bool,
}

fn malformed(text: String) -> ModelError {
    ModelError::new(ModelErrorKind::Malformed(text))
}

impl Assembler for ToyAssembler {
    fn feed(
        &mut self,
        _event: Option<&str>,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError> {
        let ev: Value = serde_json::from_str(data)
            .map_err(|e| malformed(format!("toy stream chunk is not JSON ({e})")))?;
        let text = |key: &str| ev[key].as_str().unwrap_or("").to_owned();
        match ev["type"].as_str() {
            Some("text") => out.push(StreamEvent::TextDelta(text("text"))),
            Some("call_start") => self.open = Some((text("id"), text("name"), String::new())),
            Some("call_args") => match &mut self.open {
                Some((_, _, args)) => args.push_str(&text("text")),
                None => return Err(malformed("toy stream: call_args with no open call".into())),
            },
            Some("call_end") => {
                let Some((id, name, args)) = self.open.take() else {
                    return Err(malformed("toy stream: call_end with no open call".into()));
                };
                out.push(StreamEvent::ToolCall(ToolCall::new(id, name, args)));
            }
            Some("end") => {
                out.push(StreamEvent::Usage(Usage {
                    input_tokens: ev["usage"]["in"].as_u64().unwrap_or(0),
                    output_tokens: ev["usage"]["out"].as_u64().unwrap_or(0),
                }));
                out.push(StreamEvent::Finished {
                    stop_reason: ev["reason"].as_str().map(str::to_owned),
                });
                self.done = true;
            }
            _ => {}
        }
        Ok(())
    }

    fn is_done(&self) -> bool {
        self.done
    }

    fn open_call(&self) -> Option<OpenCall<'_>> {
        self.open.as_ref().map(|(id, name, args)| OpenCall {
            name: Some(name),
            id: Some(id),
            received: args.len(),
            payload: "arguments",
        })
    }

    fn end_marker(&self) -> &'static str {
        "`end` event"
    }
}
