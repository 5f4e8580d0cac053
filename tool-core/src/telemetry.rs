//! OpenTelemetry's GenAI semantic conventions for tool execution, emitted
//! through `tracing` (this crate depends on no OpenTelemetry crate; a
//! `tracing-opentelemetry` layer turns the spans into OpenTelemetry spans,
//! see tool-agent's `otel` feature).
//!
//! Every call that reaches the pipeline ([`ToolRegistry::execute`](crate::ToolRegistry::execute),
//! `execute_call`, `execute_calls`, `execute_batch`) runs in one `tracing`
//! span named `tool_call` (target `tool_core`, level INFO) whose fields are
//! the convention's attributes, plus the fields `tracing-opentelemetry`
//! reads for the span's name, kind and status:
//!
//! | field | value |
//! |---|---|
//! | `otel.name` | `execute_tool {gen_ai.tool.name}` |
//! | `otel.kind` | `internal` |
//! | `otel.status_code` | `error` when the result is an error; unset otherwise |
//! | `otel.status_description` | the (masked) error message, only with content capture |
//! | `gen_ai.operation.name` | `execute_tool` |
//! | `gen_ai.tool.name` | the tool's name (an unknown name as the model wrote it, cut to [`NAME_LIMIT`] bytes) |
//! | `gen_ai.tool.type` | `function` (the model writes the arguments, the application runs the code) |
//! | `gen_ai.tool.call.id` | the model's call id ([`ToolCall::id`](crate::ToolCall::id)); absent for `execute` / `execute_batch`, which take no call id |
//! | `error.type` | the result's [`ErrorKind`](crate::ErrorKind) (`invalid_arguments`, `unknown_tool`, `denied`, `timeout`, `panicked`, `cancelled`, `missing_context`, `failed`) |
//! | `gen_ai.tool.call.arguments` | only with content capture: the arguments as the model sent them (JSON) |
//! | `gen_ai.tool.call.result` | only with content capture: the result as the model reads it |
//! | `trace_id`, `call_id` | the context's trace id and the registry's number for the call (this project's own) |
//!
//! # Content capture
//!
//! Arguments, results and error messages are what users typed and tools
//! read, so they are **not** recorded unless the context asks for it with
//! [`ToolContext::with_content_capture`]. When it does, each value goes
//! through [`captured`]: every value of the context's
//! [`SecretStore`](crate::SecretStore) is masked to its `<secret>key</secret>`
//! placeholder (the forms the pipeline masks in results), and the text is cut
//! to [`CONTENT_LIMIT`] bytes (a model or a tool controls its length).

use tool_rules::text::{Clip, clip};

use crate::governance::secrets;
use crate::tool::context::ToolContext;

/// Bytes of one captured content attribute (arguments, a result, a message
/// text); longer text is cut at a character boundary and ends in `…`.
pub const CONTENT_LIMIT: usize = 16 * 1024;

/// Bytes of a tool name recorded for a call to a tool nobody registered (the
/// model wrote it, so it is bounded).
pub const NAME_LIMIT: usize = 128;

/// `text` as a content attribute may record it: `None` unless `ctx` has
/// content capture on ([`ToolContext::with_content_capture`]); otherwise the
/// text with every value of the context's secret store masked, cut to
/// [`CONTENT_LIMIT`] bytes.
///
/// ```
/// use tool_core::{SecretStore, ToolContext, telemetry};
///
/// let store = SecretStore::new().with_secret("api_key", "sk-very-secret").unwrap();
/// let ctx = ToolContext::new().with_secrets(store);
/// assert_eq!(telemetry::captured(&ctx, "key sk-very-secret"), None);
/// let ctx = ctx.with_content_capture(true);
/// assert_eq!(
///     telemetry::captured(&ctx, "key sk-very-secret").as_deref(),
///     Some("key <secret>api_key</secret>")
/// );
/// ```
pub fn captured(ctx: &ToolContext, text: &str) -> Option<String> {
    if !ctx.captures_content() {
        return None;
    }
    let mut text = text.to_owned();
    if let Some(masker) = secrets::masker_for(ctx.secrets(), &[]) {
        masker.mask_string(&mut text);
    }
    Some(clip(&text, Clip::bytes(CONTENT_LIMIT)).into_owned())
}

/// A tool name as the span records it: cut to [`NAME_LIMIT`] bytes.
pub(crate) fn tool_name(name: &str) -> std::borrow::Cow<'_, str> {
    clip(name, Clip::bytes(NAME_LIMIT))
}
