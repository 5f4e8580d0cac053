//! OpenTelemetry's GenAI semantic conventions for agent runs and model calls,
//! emitted through `tracing` (the default build has no OpenTelemetry crate;
//! the `otel` feature adds the bridge and an OTLP exporter, `tool_agent::otel`).
//!
//! One [`Agent::run`](crate::Agent::run) gives this tree of `tracing` spans
//! (target `tool_agent` / `tool_core`, level INFO):
//!
//! ```text
//! agent_run   otel.name "invoke_agent {gen_ai.agent.name}" (or "invoke_agent"), kind internal
//! ├── chat    otel.name "chat {gen_ai.request.model}", kind client      (one per turn)
//! ├── tool_call  otel.name "execute_tool {gen_ai.tool.name}", kind internal (one per call,
//! │              tool-core's span: see tool_core::telemetry)
//! └── chat    …
//! ```
//!
//! The `agent_run` span (`invoke_agent`):
//!
//! | field | value |
//! |---|---|
//! | `gen_ai.operation.name` | `invoke_agent` |
//! | `gen_ai.agent.name` | [`Agent::name`](crate::Agent::name), when set |
//! | `gen_ai.provider.name` | [`ModelClient::provider_name`] |
//! | `gen_ai.request.model` | [`ModelClient::model`] |
//! | `gen_ai.conversation.id` | the run's trace id |
//! | `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` | the run's totals, as the provider reported them |
//! | `error.type`, `otel.status_code` | on a failed run: the [`ModelErrorKind`] (see below) or `schemas`, and `error` |
//!
//! Each `chat` span (one model request and its whole streamed answer):
//!
//! | field | value |
//! |---|---|
//! | `gen_ai.operation.name` | `chat` |
//! | `gen_ai.provider.name`, `gen_ai.request.model` | as above |
//! | `gen_ai.request.max_tokens` | the output-token cap, when set |
//! | `gen_ai.response.finish_reasons` | the provider's stop reason as it wrote it (`stop`, `tool_calls`, `end_turn`, …): a string array with the `otel` feature, its JSON text otherwise |
//! | `gen_ai.response.id`, `gen_ai.response.model` | the response's id and the model that answered, when the provider named them ([`StreamEvent::ResponseInfo`](crate::StreamEvent::ResponseInfo)) |
//! | `gen_ai.usage.input_tokens`, `gen_ai.usage.output_tokens` | this request's counts |
//! | `error.type`, `otel.status_code` | on a failed request: the error kind and `error` |
//! | `gen_ai.system_instructions`, `gen_ai.input.messages`, `gen_ai.output.messages` | only with content capture (below) |
//! | `turn` | the turn number (this project's own) |
//!
//! `error.type` of a failed model request: `config`, `connect`,
//! `rate_limited`, the HTTP status code (`500`, `404`, …), `provider`,
//! `truncated`, `malformed`, `cancelled`, `event_too_large`, or `_OTHER`.
//!
//! # Content capture
//!
//! Off by default. [`ToolContext::with_content_capture`](tool_core::ToolContext::with_content_capture)
//! on the agent's [context](crate::Agent::context) turns it on for the run:
//! the system prompt, the request's messages and the answer are recorded as
//! the conventions' JSON (`[{"role": "user", "parts": [{"type": "text",
//! "content": "…"}]}, …]`; tool calls as `tool_call` parts, results as
//! `tool_call_response` parts), and the tool spans get their arguments and
//! results. Every value is masked by the context's
//! [`SecretStore`](tool_core::SecretStore) and cut to
//! [`CONTENT_LIMIT`](tool_core::telemetry::CONTENT_LIMIT) bytes
//! ([`tool_core::telemetry::captured`]); a cut JSON text is no longer valid JSON.

use serde_json::{Value, json};
use tool_core::format::ToolCall;
use tool_core::{ToolArgs, ToolContext, telemetry};
use tool_rules::text::{Clip, clip};
use tracing::field::Empty;

use crate::client::ModelClient;
use crate::error::{ModelError, ModelErrorKind};
use crate::message::{Message, ModelRequest, Usage};

/// Bytes of one finish reason recorded (the provider writes it).
const REASON_LIMIT: usize = 64;

/// At most this many finish reasons are recorded per answer.
pub(crate) const MAX_REASONS: usize = 16;

/// The `agent_run` span of one run (`invoke_agent`).
pub(crate) fn agent_span(
    client: &dyn ModelClient,
    name: Option<&str>,
    trace_id: &str,
) -> tracing::Span {
    tracing::info_span!(
        target: "tool_agent",
        "agent_run",
        otel.name = %SpanName("invoke_agent", name.unwrap_or("")),
        otel.kind = "internal",
        otel.status_code = Empty,
        gen_ai.operation.name = "invoke_agent",
        gen_ai.agent.name = name,
        gen_ai.provider.name = client.provider_name(),
        gen_ai.request.model = client.model(),
        gen_ai.conversation.id = trace_id,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        trace_id = trace_id,
        // The former field of this span, kept for log readers.
        model = client.model(),
    )
}

/// The `chat` span of one model request; with content capture the request's
/// system prompt and messages are recorded on it.
pub(crate) fn chat_span(
    client: &dyn ModelClient,
    request: &ModelRequest<'_>,
    ctx: &ToolContext,
) -> tracing::Span {
    let span = tracing::info_span!(
        target: "tool_agent",
        "chat",
        otel.name = %SpanName("chat", client.model()),
        otel.kind = "client",
        otel.status_code = Empty,
        gen_ai.operation.name = "chat",
        gen_ai.provider.name = client.provider_name(),
        gen_ai.request.model = client.model(),
        gen_ai.request.max_tokens = request.max_output_tokens.map(i64::from),
        gen_ai.response.finish_reasons = Empty,
        gen_ai.response.id = Empty,
        gen_ai.response.model = Empty,
        gen_ai.usage.input_tokens = Empty,
        gen_ai.usage.output_tokens = Empty,
        error.type = Empty,
        gen_ai.system_instructions = Empty,
        gen_ai.input.messages = Empty,
        gen_ai.output.messages = Empty,
        turn = request.turn,
    );
    if ctx.captures_content() && !span.is_disabled() {
        if let Some(system) = request.system {
            let parts = json!([{"type": "text", "content": system}]);
            record_captured(&span, "gen_ai.system_instructions", ctx, &parts);
        }
        let messages: Vec<Value> = request
            .messages
            .iter()
            .map(|m| message_json(m, request.turn))
            .collect();
        record_captured(&span, "gen_ai.input.messages", ctx, &Value::Array(messages));
    }
    span
}

/// Records a model answer on its `chat` span: token counts, finish
/// reasons, and with content capture the answer as an output message.
pub(crate) fn record_answer(
    span: &tracing::Span,
    ctx: &ToolContext,
    text: &str,
    calls: &[ToolCall],
    usage: Usage,
    finish_reasons: &[String],
) {
    if span.is_disabled() {
        return;
    }
    record_usage(span, usage);
    if !finish_reasons.is_empty() {
        record_finish_reasons(span, finish_reasons);
    }
    if ctx.captures_content() {
        let mut message = assistant_json(text, calls);
        if let Some(reason) = finish_reasons.last() {
            message["finish_reason"] = Value::String(reason.clone());
        }
        record_captured(span, "gen_ai.output.messages", ctx, &json!([message]));
    }
}

/// Records the provider's response id and answering model
/// (`gen_ai.response.id`, `gen_ai.response.model`) on a `chat` span.
pub(crate) fn record_response(span: &tracing::Span, id: Option<&str>, model: Option<&str>) {
    if let Some(id) = id {
        span.record("gen_ai.response.id", id);
    }
    if let Some(model) = model {
        span.record("gen_ai.response.model", model);
    }
}

/// Records token counts (`gen_ai.usage.*`) on a `chat` or `agent_run` span.
pub(crate) fn record_usage(span: &tracing::Span, usage: Usage) {
    span.record(
        "gen_ai.usage.input_tokens",
        saturating_i64(usage.input_tokens),
    );
    span.record(
        "gen_ai.usage.output_tokens",
        saturating_i64(usage.output_tokens),
    );
}

/// Marks a span failed: `error.type` and the error status.
pub(crate) fn record_error(span: &tracing::Span, error_type: &str) {
    span.record("error.type", error_type);
    span.record("otel.status_code", "error");
}

/// The `error.type` of a failed model request.
pub(crate) fn model_error_type(e: &ModelError) -> String {
    match e.kind() {
        ModelErrorKind::Config(_) => "config".to_owned(),
        ModelErrorKind::Connect(_) => "connect".to_owned(),
        ModelErrorKind::RateLimited { .. } => "rate_limited".to_owned(),
        ModelErrorKind::Http { status, .. } => status.to_string(),
        ModelErrorKind::Provider(_) => "provider".to_owned(),
        ModelErrorKind::Truncated { .. } => "truncated".to_owned(),
        ModelErrorKind::Malformed(_) => "malformed".to_owned(),
        ModelErrorKind::Cancelled => "cancelled".to_owned(),
        ModelErrorKind::EventTooLarge { .. } => "event_too_large".to_owned(),
        _ => "_OTHER".to_owned(),
    }
}

/// The finish reasons, bounded, as the attribute's string array (with the
/// `otel` feature) or its JSON text (without).
fn record_finish_reasons(span: &tracing::Span, reasons: &[String]) {
    let reasons: Vec<String> = reasons
        .iter()
        .take(MAX_REASONS)
        .map(|r| clip(r, Clip::bytes(REASON_LIMIT)).into_owned())
        .collect();
    #[cfg(feature = "otel")]
    {
        use tracing_opentelemetry::OpenTelemetrySpanExt;
        let values: Vec<opentelemetry::StringValue> = reasons
            .into_iter()
            .map(opentelemetry::StringValue::from)
            .collect();
        span.set_attribute(
            "gen_ai.response.finish_reasons",
            opentelemetry::Value::Array(opentelemetry::Array::String(values)),
        );
    }
    #[cfg(not(feature = "otel"))]
    {
        let text = Value::from(reasons).to_string();
        span.record("gen_ai.response.finish_reasons", text.as_str());
    }
}

/// Records `value`'s JSON text on `field` when content capture allows it (masked, cut).
fn record_captured(span: &tracing::Span, field: &'static str, ctx: &ToolContext, value: &Value) {
    if let Some(text) = telemetry::captured(ctx, &value.to_string()) {
        span.record(field, text.as_str());
    }
}

/// One conversation message in the conventions' shape; results rendered as
/// a request for `turn` renders them.
fn message_json(message: &Message, turn: u64) -> Value {
    match message {
        Message::User { content } => {
            json!({"role": "user", "parts": [{"type": "text", "content": content}]})
        }
        Message::Assistant {
            content,
            tool_calls,
        } => assistant_json(content, tool_calls),
        Message::Tool {
            turn: result_turn,
            results,
        } => {
            let rendering = crate::message::rendering_for(*result_turn, turn);
            let parts: Vec<Value> = results
                .iter()
                .map(|o| {
                    json!({
                        "type": "tool_call_response",
                        "id": o.call.id,
                        "response": o.result.render(rendering),
                    })
                })
                .collect();
            json!({"role": "tool", "parts": parts})
        }
    }
}

/// An assistant message: its text part (when not empty) and its tool calls.
fn assistant_json(text: &str, calls: &[ToolCall]) -> Value {
    let mut parts = Vec::with_capacity(calls.len() + 1);
    if !text.is_empty() {
        parts.push(json!({"type": "text", "content": text}));
    }
    for c in calls {
        let arguments = match &c.arguments {
            ToolArgs::Text(t) => {
                serde_json::from_str(t).unwrap_or_else(|_| Value::String(t.clone()))
            }
            ToolArgs::Value(v) => v.clone(),
        };
        parts
            .push(json!({"type": "tool_call", "id": c.id, "name": c.name, "arguments": arguments}));
    }
    json!({"role": "assistant", "parts": parts})
}

/// A token count as an OpenTelemetry int attribute (`tracing-opentelemetry`
/// records `u64` fields as text).
fn saturating_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `{operation} {what}`, or `{operation}` alone when `what` is empty;
/// formatted only when the span is enabled.
struct SpanName<'a>(&'static str, &'a str);

impl std::fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.1.is_empty() {
            f.write_str(self.0)
        } else {
            write!(f, "{} {}", self.0, self.1)
        }
    }
}
