//! Tool calls written as text, for OpenAI-compatible servers that have no
//! structured tool calling (llama.cpp without `--jinja`, raw Ollama
//! templates, vLLM without `--tool-call-parser`): the request carries the
//! tool list inside the system prompt in the format's own template, and the
//! answer's text is read by tool-core's [`text_calls`](tool_core::text_calls)
//! parser, whole or streamed, each call yielded as a
//! [`StreamEvent::ToolCall`] as soon as its markup closes.
//!
//! What changes in the Chat Completions body: `tools` and `tool_choice` are
//! left out (the list goes into the system message through
//! [`tool_prompt`]); an earlier assistant turn's `tool_calls` are written
//! back into its content as the format's markup ([`render_call`]), and
//! `tool` messages become `user` messages wrapping the result in
//! `<tool_response>…</tool_response>` (the Hermes template's shape), since
//! such servers' templates know neither.
//!
//! A malformed call (markup the parser could not read) is not run: the text
//! stays in the answer, followed by the parser's note on a line of its own,
//! `[tool-call note: …]`, so the person and the model both see why; the note
//! is also logged (`tracing`, target `tool_agent`, warn).

use std::collections::VecDeque;

use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tool_core::format::ToolCall;
use tool_core::text_calls::{
    Piece, StreamParser, TextCall, TextCallFormat, ToolSchema, render_call, tool_prompt,
};

use crate::client::EventStream;
use crate::error::ModelError;
use crate::message::StreamEvent;

/// The tools of an OpenAI Chat `tools` array (`{"type": "function",
/// "function": {name, description, parameters}}` entries).
fn schemas(tools: &Value) -> Vec<ToolSchema> {
    let Some(items) = tools.as_array() else {
        return Vec::new();
    };
    items
        .iter()
        .filter_map(|t| {
            let f = t.get("function").unwrap_or(t);
            Some(ToolSchema {
                name: f.get("name")?.as_str()?.to_owned(),
                description: f
                    .get("description")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned(),
                parameters: f.get("parameters").cloned().unwrap_or_else(|| json!({})),
            })
        })
        .collect()
}

/// Rewrites a Chat Completions `body` for a server without tool calling
/// (see the module docs); returns the tools it offered, for checking calls.
pub(crate) fn rewrite_body(format: &dyn TextCallFormat, body: &mut Value) -> Vec<ToolSchema> {
    let Some(obj) = body.as_object_mut() else {
        return Vec::new();
    };
    let tools = obj.remove("tools").map(|t| schemas(&t)).unwrap_or_default();
    obj.remove("tool_choice");
    let Some(Value::Array(messages)) = obj.get_mut("messages") else {
        return tools;
    };
    for m in messages.iter_mut() {
        let Some(msg) = m.as_object_mut() else {
            continue;
        };
        match msg.get("role").and_then(Value::as_str) {
            Some("assistant") => {
                let Some(Value::Array(calls)) = msg.remove("tool_calls") else {
                    continue;
                };
                let mut content = msg
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned();
                for c in &calls {
                    let f = c.get("function").unwrap_or(c);
                    let name = f.get("name").and_then(Value::as_str).unwrap_or_default();
                    let arguments = match f.get("arguments") {
                        Some(Value::String(s)) => {
                            serde_json::from_str::<Map<String, Value>>(s).unwrap_or_default()
                        }
                        Some(Value::Object(o)) => o.clone(),
                        _ => Map::new(),
                    };
                    if !content.is_empty() {
                        content.push('\n');
                    }
                    content.push_str(&render_call(format.name(), &TextCall::new(name, arguments)));
                }
                msg.insert("content".into(), Value::String(content));
            }
            Some("tool") => {
                msg.insert("role".into(), json!("user"));
                msg.remove("tool_call_id");
                if let Some(Value::String(text)) = msg.get("content") {
                    let wrapped = format!("<tool_response>\n{text}\n</tool_response>");
                    msg.insert("content".into(), Value::String(wrapped));
                }
            }
            _ => {}
        }
    }
    let prompt = tool_prompt(format.name(), &tools);
    if !prompt.is_empty() {
        match messages.first_mut() {
            Some(first) if first.get("role").and_then(Value::as_str) == Some("system") => {
                let had = first
                    .get("content")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let joined = if had.is_empty() {
                    prompt
                } else {
                    format!("{had}\n\n{prompt}")
                };
                first["content"] = Value::String(joined);
            }
            _ => messages.insert(0, json!({"role": "system", "content": prompt})),
        }
    }
    tools
}

struct State<'a> {
    inner: EventStream<'a>,
    parser: StreamParser<'static>,
    pending: VecDeque<Result<StreamEvent, ModelError>>,
    calls: usize,
    ended: bool,
}

impl State<'_> {
    fn push(&mut self, pieces: Vec<Piece>) {
        for p in pieces {
            let ev = match p {
                Piece::Text(t) => StreamEvent::TextDelta(t),
                Piece::Call(c) => {
                    let call =
                        ToolCall::with_generated_id(self.calls, c.name, Value::Object(c.arguments));
                    self.calls += 1;
                    StreamEvent::ToolCall(call)
                }
                Piece::Note(n) => {
                    tracing::warn!(target: "tool_agent", format = self.parser.format().name(), note = %n, "text tool call");
                    StreamEvent::TextDelta(format!("\n[tool-call note: {n}]\n"))
                }
            };
            self.pending.push_back(Ok(ev));
        }
    }
}

/// `inner`'s events with its text read for calls in `format` (see the module docs).
pub(crate) fn parsed_stream<'a>(
    inner: EventStream<'a>,
    format: &'static dyn TextCallFormat,
    tools: Vec<ToolSchema>,
) -> EventStream<'a> {
    let tools = (!tools.is_empty()).then_some(tools);
    let state = State {
        inner,
        parser: StreamParser::new(format, tools),
        pending: VecDeque::new(),
        calls: 0,
        ended: false,
    };
    Box::pin(futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.pending.pop_front() {
                return Some((ev, st));
            }
            if st.ended {
                return None;
            }
            match st.inner.next().await {
                Some(Ok(StreamEvent::TextDelta(t))) => {
                    let pieces = st.parser.feed(&t);
                    st.push(pieces);
                }
                Some(Ok(finished @ StreamEvent::Finished { .. })) => {
                    let pieces = st.parser.finish();
                    st.push(pieces);
                    st.pending.push_back(Ok(finished));
                }
                Some(Ok(other)) => st.pending.push_back(Ok(other)),
                Some(Err(e)) => {
                    st.ended = true;
                    st.pending.push_back(Err(e));
                }
                None => {
                    st.ended = true;
                    let pieces = st.parser.finish();
                    st.push(pieces);
                }
            }
        }
    }))
}
