//! Requests a server sends its client: sampling (`sampling/createMessage`,
//! answered by the host's [`Sampler`]) and elicitation (`elicitation/create`,
//! answered through the calling context's approval and asking hooks,
//! cross-cutting §4). Both arrive as server requests on a 2025-11-25
//! connection and as input requests of an input-required result on a
//! 2026-07-28 one; this module turns either into the host's terms and back.
//!
//! The wire forms are read as JSON (the parameters' documented fields) so
//! that both eras and rmcp's two request envelopes share one reader.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};
use tool_core::governance::asking::{self, Asked};
use tool_core::governance::confirm::{self, Confirmation};
use tool_core::{ApprovalRequest, Question, ToolContext, ToolKind};
use tool_rules::text::{Clip, clip};

/// Most messages of one sampling request a [`Sampler`] is handed (100);
/// a request with more is refused with an `invalid params` error.
pub const MAX_SAMPLING_MESSAGES: usize = 100;

/// Most characters of text in one sampling request, all messages and the
/// system prompt together (256 Ki); a request with more is refused.
pub const MAX_SAMPLING_CHARS: usize = 256 * 1024;

/// Largest `maxTokens` passed on to a [`Sampler`] (16 384): a server asking
/// for more gets at most this many.
pub const MAX_SAMPLING_TOKENS: u32 = 16_384;

/// Most fields of one elicitation form the client asks about (32); a form
/// with more is declined.
pub const MAX_ELICITATION_FIELDS: usize = 32;

/// The future a [`Sampler`] answers with.
pub type SamplingFuture =
    std::pin::Pin<Box<dyn std::future::Future<Output = Result<SamplingAnswer, String>> + Send>>;

/// Who wrote a message of a [`SamplingRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SamplingRole {
    /// The user (the server, speaking for its user).
    User,
    /// The model.
    Assistant,
}

/// One message of a [`SamplingRequest`]: its role and its text. Images and
/// audio are given as a one-line note (`[image: image/png]`); tool use and
/// tool results as their JSON text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SamplingMessage {
    /// Who wrote it.
    pub role: SamplingRole,
    /// Its text.
    pub text: String,
}

/// A server's `sampling/createMessage`, as the host's [`Sampler`] sees it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SamplingRequest {
    /// The `<server>` name of the connection that asks.
    pub server: String,
    /// The system prompt the server asks for, if any.
    pub system: Option<String>,
    /// The conversation, oldest first (at most [`MAX_SAMPLING_MESSAGES`]).
    pub messages: Vec<SamplingMessage>,
    /// Most tokens to generate (at most [`MAX_SAMPLING_TOKENS`]).
    pub max_tokens: u32,
    /// The server's model hints (`modelPreferences.hints[].name`), in order.
    pub model_hints: Vec<String>,
}

/// What a [`Sampler`] answers: the model's text.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SamplingAnswer {
    /// The generated text.
    pub text: String,
    /// The model that produced it (`model` of the result).
    pub model: String,
    /// Why generation stopped (`endTurn`, `maxTokens`, ...), if known.
    pub stop_reason: Option<String>,
}

impl SamplingAnswer {
    /// `text` from `model`, stopped at the end of its turn (`endTurn`).
    pub fn new(text: impl Into<String>, model: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            model: model.into(),
            stop_reason: Some("endTurn".to_owned()),
        }
    }
}

/// The model a host lends to MCP servers for sampling
/// ([`McpToolSource::with_sampler`](crate::McpToolSource::with_sampler)).
/// A client with one declares the `sampling` capability.
///
/// Implemented for any `Fn(SamplingRequest) -> impl Future<Output =
/// Result<SamplingAnswer, String>>`; with the `agent` feature, for
/// `AgentSampler` over a `tool_agent::ModelClient`.
/// An `Err` text goes back to the server as the request's error message.
pub trait Sampler: Send + Sync + 'static {
    /// Answers one request.
    fn sample(&self, request: SamplingRequest) -> SamplingFuture;
}

impl std::fmt::Debug for dyn Sampler {
    /// `Sampler` (a model client shows nothing more).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sampler")
    }
}

impl<F, Fut> Sampler for F
where
    F: Fn(SamplingRequest) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<SamplingAnswer, String>> + Send + 'static,
{
    fn sample(&self, request: SamplingRequest) -> SamplingFuture {
        Box::pin(self(request))
    }
}

/// A `tool_agent` [`ModelClient`](tool_agent::ModelClient) as a [`Sampler`]
/// (feature `agent`): the request's messages become the conversation (user
/// and assistant text), its system prompt the system prompt, `maxTokens`
/// the output cap; no tools are offered. The answer is the streamed text;
/// a model error is the error text.
#[cfg(feature = "agent")]
#[derive(Clone)]
pub struct AgentSampler {
    client: Arc<dyn tool_agent::ModelClient>,
}

#[cfg(feature = "agent")]
impl AgentSampler {
    /// Samples with `client`.
    pub fn new(client: Arc<dyn tool_agent::ModelClient>) -> Self {
        Self { client }
    }
}

#[cfg(feature = "agent")]
impl std::fmt::Debug for AgentSampler {
    /// The model's name.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentSampler")
            .field("model", &self.client.model())
            .finish()
    }
}

#[cfg(feature = "agent")]
impl Sampler for AgentSampler {
    fn sample(&self, request: SamplingRequest) -> SamplingFuture {
        use futures_util::StreamExt;
        let client = Arc::clone(&self.client);
        Box::pin(async move {
            let messages: Vec<tool_agent::Message> = request
                .messages
                .into_iter()
                .map(|m| match m.role {
                    SamplingRole::Assistant => tool_agent::Message::Assistant {
                        content: m.text,
                        tool_calls: Vec::new(),
                    },
                    SamplingRole::User => tool_agent::Message::User { content: m.text },
                })
                .collect();
            let tools = Value::Array(Vec::new());
            let choice = tool_agent::ToolChoice::None;
            let model_request = tool_agent::ModelRequest::new(&messages, &tools, &choice)
                .with_system(request.system.as_deref())
                .with_max_output_tokens(Some(request.max_tokens));
            let mut stream = client
                .send(model_request)
                .await
                .map_err(|e| format!("the model failed: {e}"))?;
            let mut text = String::new();
            let mut stop_reason = None;
            while let Some(event) = stream.next().await {
                match event.map_err(|e| format!("the model failed: {e}"))? {
                    tool_agent::StreamEvent::TextDelta(delta) => text.push_str(&delta),
                    tool_agent::StreamEvent::Finished { stop_reason: r } => stop_reason = r,
                    _ => {}
                }
            }
            let mut answer = SamplingAnswer::new(text, client.model());
            // MCP's stop reasons are its own words; a provider's
            // `max_tokens` / `length` is MCP's `maxTokens`.
            answer.stop_reason = Some(match stop_reason.as_deref() {
                Some("max_tokens" | "length" | "MAX_TOKENS") => "maxTokens".to_owned(),
                _ => "endTurn".to_owned(),
            });
            Ok(answer)
        })
    }
}

/// Reads a `sampling/createMessage`'s parameters (JSON) into a
/// [`SamplingRequest`].
///
/// # Errors
/// A message for the server when the request is over the limits above or
/// has no message.
pub(crate) fn sampling_request(server: &str, params: &Value) -> Result<SamplingRequest, String> {
    let raw = params
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("sampling/createMessage needs `messages`")?;
    if raw.is_empty() {
        return Err("sampling/createMessage needs at least one message".to_owned());
    }
    if raw.len() > MAX_SAMPLING_MESSAGES {
        return Err(format!(
            "sampling/createMessage has {} messages; this client takes at most {MAX_SAMPLING_MESSAGES}",
            raw.len()
        ));
    }
    let messages: Vec<SamplingMessage> = raw
        .iter()
        .map(|m| SamplingMessage {
            role: if m.get("role").and_then(Value::as_str) == Some("assistant") {
                SamplingRole::Assistant
            } else {
                SamplingRole::User
            },
            text: content_text(m.get("content").unwrap_or(&Value::Null)),
        })
        .collect();
    let system = params
        .get("systemPrompt")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let chars = messages
        .iter()
        .map(|m| m.text.chars().count())
        .sum::<usize>()
        + system.as_deref().map_or(0, |s| s.chars().count());
    if chars > MAX_SAMPLING_CHARS {
        return Err(format!(
            "sampling/createMessage has {chars} characters of text; this client takes at most {MAX_SAMPLING_CHARS}"
        ));
    }
    let max_tokens =
        params
            .get("maxTokens")
            .and_then(Value::as_u64)
            .map_or(MAX_SAMPLING_TOKENS, |n| {
                u32::try_from(n)
                    .unwrap_or(u32::MAX)
                    .min(MAX_SAMPLING_TOKENS)
            });
    let model_hints = params
        .pointer("/modelPreferences/hints")
        .and_then(Value::as_array)
        .map(|hints| {
            hints
                .iter()
                .filter_map(|h| h.get("name").and_then(Value::as_str))
                .take(8)
                .map(|n| clip(n, Clip::chars(100)).into_owned())
                .collect()
        })
        .unwrap_or_default();
    Ok(SamplingRequest {
        server: server.to_owned(),
        system,
        messages,
        max_tokens,
        model_hints,
    })
}

/// The text of a sampling message's content: one block or an array.
fn content_text(content: &Value) -> String {
    let block = |b: &Value| match b.get("type").and_then(Value::as_str) {
        Some("text") => b
            .get("text")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned(),
        Some(kind @ ("image" | "audio")) => format!(
            "[{kind}: {}]",
            b.get("mimeType").and_then(Value::as_str).unwrap_or("?")
        ),
        _ => b.to_string(),
    };
    match content {
        Value::Array(blocks) => blocks.iter().map(block).collect::<Vec<_>>().join("\n"),
        other => block(other),
    }
}

/// The `CreateMessageResult` JSON for `answer`.
pub(crate) fn sampling_result(answer: &SamplingAnswer) -> Value {
    let mut out = Map::new();
    out.insert("role".to_owned(), Value::from("assistant"));
    out.insert(
        "content".to_owned(),
        serde_json::json!({"type": "text", "text": answer.text}),
    );
    out.insert("model".to_owned(), Value::from(answer.model.clone()));
    if let Some(reason) = &answer.stop_reason {
        out.insert("stopReason".to_owned(), Value::from(reason.clone()));
    }
    Value::Object(out)
}

/// Asks `sampler` and gives the result as JSON, or the error text.
pub(crate) async fn sample(
    sampler: Option<&Arc<dyn Sampler>>,
    server: &str,
    params: &Value,
) -> Result<Value, String> {
    let Some(sampler) = sampler else {
        return Err("this client offers no sampling (no model was given to it)".to_owned());
    };
    let request = sampling_request(server, params)?;
    let answer = sampler.sample(request).await?;
    Ok(sampling_result(&answer))
}

/// An elicitation's answer: `{"action": "accept", "content": {...}}`,
/// `decline` or `cancel`.
pub(crate) fn elicit_answer(action: &str, content: Option<Map<String, Value>>) -> Value {
    let mut out = Map::new();
    out.insert("action".to_owned(), Value::from(action));
    if let Some(content) = content {
        out.insert("content".to_owned(), Value::Object(content));
    }
    Value::Object(out)
}

/// What the elicitation is for: the call that caused it (the local tool
/// name and its arguments), when known.
pub(crate) struct Origin<'a> {
    /// `<server>__<tool>`.
    pub(crate) tool: String,
    /// The call's arguments.
    pub(crate) args: &'a Map<String, Value>,
}

/// Answers a form elicitation (parameters as JSON) through `ctx`'s hooks:
/// a confirmation (a form with a boolean `approve`, as
/// [`McpServer`](crate::McpServer) sends) goes to the approver as an
/// [`ApprovalRequest`] for the calling tool; any other form to the asker,
/// one question per field (choices for enums and booleans, the field's
/// default as the question's). A URL elicitation, a form over
/// [`MAX_ELICITATION_FIELDS`], no hook, or a person who declines: declined;
/// a question that timed out without a default, or a cancelled call: cancel.
pub(crate) async fn elicit(
    ctx: &ToolContext,
    server: &str,
    params: &Value,
    origin: Option<Origin<'_>>,
) -> Value {
    let decline = || elicit_answer("decline", None);
    if params.get("mode").and_then(Value::as_str) == Some("url") {
        return decline();
    }
    let Some(properties) = params
        .pointer("/requestedSchema/properties")
        .and_then(Value::as_object)
    else {
        return decline();
    };
    if properties.len() > MAX_ELICITATION_FIELDS {
        return decline();
    }
    if let Some(fields) = confirmation_fields(properties) {
        let (tool, args) = match &origin {
            Some(o) => (o.tool.clone(), o.args.clone()),
            None => (format!("{server}__?"), Map::new()),
        };
        let approval = ApprovalRequest {
            tool,
            kind: ToolKind::Other,
            display: BTreeMap::new(),
            arguments: args.clone(),
            editable_params: fields.keys().cloned().collect(),
            trace_id: ctx.trace_id().map(str::to_owned),
            injected: Map::new(),
            editable_schemas: Map::new(),
            defaults: Map::new(),
        };
        let decision = confirm::ask(ctx, approval).await;
        return confirmation_answer(&decision, &args, &fields, properties, server);
    }
    let message = params.get("message").and_then(Value::as_str).unwrap_or("");
    let schema = params.get("requestedSchema").unwrap_or(&Value::Null);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let mut content = Map::new();
    for (name, field) in properties {
        let optional = !required.contains(&name.as_str());
        match ask_field(ctx, server, message, name, field, optional).await {
            Field::Answered(value) => {
                content.insert(name.clone(), value);
            }
            Field::Skipped => {}
            Field::End(answer) => return answer,
        }
    }
    // Each field was checked; the whole form too (required fields).
    if let Err(why) = crate::form_check::check_form(schema, &content) {
        tracing::warn!("MCP server `{server}`: the form's answer was declined: {why}");
        return decline();
    }
    elicit_answer("accept", Some(content))
}

/// How asking one field of a form ended.
enum Field {
    /// A value that fits the field.
    Answered(Value),
    /// An optional field left empty.
    Skipped,
    /// The whole form ends with this answer (declined, cancelled).
    End(Value),
}

/// Asks field `name` (schema `field`) of a form through `ctx`'s asker, at
/// most [`MAX_FORM_ATTEMPTS`](crate::form_check::MAX_FORM_ATTEMPTS) times:
/// an answer that does not fit the field (its type, choices, bounds,
/// length, format) is refused and the question asked again, starting with
/// why; after the last attempt the form is declined. An empty answer to an
/// `optional` field that would not fit leaves the field out.
async fn ask_field(
    ctx: &ToolContext,
    server: &str,
    message: &str,
    name: &str,
    field: &Value,
    optional: bool,
) -> Field {
    let label = field.get("title").and_then(Value::as_str).unwrap_or(name);
    let mut text = format!(
        "MCP server `{server}` asks: {}\n{}",
        clip(message, Clip::chars(2000)),
        clip(label, Clip::chars(200))
    );
    if let Some(description) = field.get("description").and_then(Value::as_str) {
        text.push_str(": ");
        text.push_str(&clip(description, Clip::chars(500)));
    }
    let ty = field
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("string");
    let mut refused: Option<String> = None;
    for _attempt in 0..crate::form_check::MAX_FORM_ATTEMPTS {
        let asked = match &refused {
            Some(why) => format!("The answer was refused: {why}. Please answer again.\n{text}"),
            None => text.clone(),
        };
        let mut question = Question::new(asked)
            .with_choices(field_choices(field, ty))
            .with_trace_id(ctx.trace_id().map(str::to_owned));
        if let Some(default) = field.get("default") {
            question = question.with_default(match default {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            });
        }
        let answer = match asking::ask(ctx, question).await {
            Asked::Answered(text)
            | Asked::TimedOut {
                default: Some(text),
            } => text,
            Asked::TimedOut { default: None } | Asked::Cancelled => {
                return Field::End(elicit_answer("cancel", None));
            }
            Asked::Declined(_) | Asked::NoPerson(_) => {
                return Field::End(elicit_answer("decline", None));
            }
        };
        let checked = typed(&answer, ty)
            .ok_or_else(|| {
                format!(
                    "`{}` must be {}; `{}` is not",
                    clip(name, Clip::chars(60)),
                    type_words(ty),
                    clip(answer.trim(), Clip::chars(80))
                )
            })
            .and_then(|value| crate::form_check::check_field(name, field, &value).map(|()| value));
        match checked {
            Ok(value) => return Field::Answered(value),
            Err(_) if optional && answer.trim().is_empty() => return Field::Skipped,
            Err(why) => refused = Some(why),
        }
    }
    tracing::warn!(
        "MCP server `{server}`: the form was declined after {} answers to `{}` that did not fit: {}",
        crate::form_check::MAX_FORM_ATTEMPTS,
        clip(name, Clip::chars(60)),
        refused.unwrap_or_default()
    );
    Field::End(elicit_answer("decline", None))
}

/// A JSON type in words, for messages.
fn type_words(ty: &str) -> &'static str {
    match ty {
        "boolean" => "true or false (yes/no)",
        "integer" => "a whole number",
        "number" => "a number",
        "array" => "a comma-separated list",
        _ => "text",
    }
}

/// The answers offered for a field: its `enum` (or its `oneOf` / `anyOf`
/// consts, the titled form), else its array items' (a multi-select, plain or
/// titled: `items.enum` or `items.anyOf` consts), `true`/`false` for a
/// boolean; none otherwise. At most 64.
fn field_choices(schema: &Value, ty: &str) -> Vec<String> {
    if ty == "boolean" {
        return vec!["true".to_owned(), "false".to_owned()];
    }
    let listed = single_select_choices(schema);
    if !listed.is_empty() {
        return listed;
    }
    schema
        .get("items")
        .map(single_select_choices)
        .unwrap_or_default()
}

/// The string constants of one select: `enum`, else the `const` of each
/// `oneOf` / `anyOf` branch (at most 64).
fn single_select_choices(schema: &Value) -> Vec<String> {
    let branches = schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect::<Vec<_>>())
        .filter(|a| !a.is_empty())
        .or_else(|| {
            schema
                .get("oneOf")
                .or_else(|| schema.get("anyOf"))
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .filter_map(|o| o.get("const").and_then(Value::as_str))
                        .collect()
                })
        })
        .unwrap_or_default();
    branches.into_iter().take(64).map(str::to_owned).collect()
}

/// `answer` as a value of JSON type `ty`; `None` when it is not one.
fn typed(answer: &str, ty: &str) -> Option<Value> {
    let answer = answer.trim();
    match ty {
        "boolean" => match answer.to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" => Some(Value::Bool(true)),
            "false" | "no" | "n" => Some(Value::Bool(false)),
            _ => None,
        },
        "integer" => answer.parse::<i64>().ok().map(Value::from),
        "number" => answer
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map(Value::Number),
        "array" => Some(Value::Array(
            answer
                .split(',')
                .map(|s| Value::from(s.trim()))
                .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
                .collect(),
        )),
        _ => Some(Value::from(answer)),
    }
}

/// The editable fields of a confirmation form (property name → its schema
/// type), or `None` when the form has no boolean `approve`.
fn confirmation_fields(properties: &Map<String, Value>) -> Option<BTreeMap<String, String>> {
    if properties.get("approve")?.get("type")?.as_str()? != "boolean" {
        return None;
    }
    Some(
        properties
            .iter()
            .filter(|(name, _)| *name != "approve")
            .map(|(name, schema)| {
                let ty = schema
                    .get("type")
                    .and_then(Value::as_str)
                    .unwrap_or("string");
                (name.clone(), ty.to_owned())
            })
            .collect(),
    )
}

/// The form answer standing for `decision`: `approve`, plus the edited fields
/// (a non-string value in a string field as JSON text); a refusal declines,
/// and so does an edit that does not fit its field's schema in
/// `properties` (named in a warning: it is never sent).
fn confirmation_answer(
    decision: &Confirmation,
    args: &Map<String, Value>,
    fields: &BTreeMap<String, String>,
    properties: &Map<String, Value>,
    server: &str,
) -> Value {
    let mut content = Map::new();
    match decision {
        Confirmation::Approved
        | Confirmation::TimedOut {
            default: tool_core::ApprovalDefault::Approve,
            ..
        } => {}
        Confirmation::Edited {
            arguments: edited, ..
        } => {
            for (name, ty) in fields {
                let Some(value) = edited.get(name) else {
                    continue;
                };
                if args.get(name) == Some(value) {
                    continue;
                }
                let value = match (ty.as_str(), value) {
                    ("string", Value::String(_)) | ("boolean" | "integer" | "number", _) => {
                        value.clone()
                    }
                    _ => Value::String(value.to_string()),
                };
                let schema = properties.get(name).unwrap_or(&Value::Null);
                if let Err(why) = crate::form_check::check_field(name, schema, &value) {
                    tracing::warn!(
                        "MCP server `{server}`: the confirmation was declined: the edit does not \
                         fit the form: {why}"
                    );
                    return elicit_answer("decline", None);
                }
                content.insert(name.clone(), value);
            }
        }
        _ => return elicit_answer("decline", None),
    }
    content.insert("approve".to_owned(), Value::Bool(true));
    elicit_answer("accept", Some(content))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sampling_requests_are_read_and_bounded() {
        let params = json!({
            "messages": [
                {"role": "user", "content": {"type": "text", "text": "hi"}},
                {"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "image", "mimeType": "image/png", "data": ""}]}
            ],
            "systemPrompt": "be brief",
            "maxTokens": 1_000_000,
            "modelPreferences": {"hints": [{"name": "claude"}]}
        });
        let r = sampling_request("s", &params).unwrap();
        assert_eq!(r.messages[0].text, "hi");
        assert_eq!(r.messages[1].role, SamplingRole::Assistant);
        assert_eq!(r.messages[1].text, "a\n[image: image/png]");
        assert_eq!(r.max_tokens, MAX_SAMPLING_TOKENS);
        assert_eq!(r.system.as_deref(), Some("be brief"));
        assert_eq!(r.model_hints, ["claude"]);
        let many = json!({"messages": vec![json!({"role": "user", "content": {"type": "text", "text": "x"}}); 101], "maxTokens": 5});
        assert!(
            sampling_request("s", &many)
                .unwrap_err()
                .contains("at most 100")
        );
        let big = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x".repeat(MAX_SAMPLING_CHARS + 1)}}], "maxTokens": 5});
        assert!(
            sampling_request("s", &big)
                .unwrap_err()
                .contains("characters")
        );
    }

    #[test]
    fn answers_are_typed_by_the_field() {
        assert_eq!(typed("yes", "boolean"), Some(json!(true)));
        assert_eq!(typed("12", "integer"), Some(json!(12)));
        assert_eq!(typed("1.5", "number"), Some(json!(1.5)));
        assert_eq!(typed("x", "integer"), None);
        assert_eq!(typed("a, b", "array"), Some(json!(["a", "b"])));
        let schema =
            json!({"type": "string", "oneOf": [{"const": "r", "title": "Red"}, {"const": "g"}]});
        assert_eq!(field_choices(&schema, "string"), ["r", "g"]);
        // A titled multi-select (items' anyOf consts), as server-everything sends.
        let schema = json!({"type": "array", "items": {"anyOf": [
            {"const": "fish-1", "title": "Tuna"}, {"const": "fish-2", "title": "Salmon"}]}});
        assert_eq!(field_choices(&schema, "array"), ["fish-1", "fish-2"]);
        let schema = json!({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}});
        assert_eq!(field_choices(&schema, "array"), ["a", "b"]);
    }
}
