//! The results of one turn rendered together ([`render_results`]): the
//! shape in which a turn's images and files reach each provider, with the
//! size budget shared by the whole turn. Apart from `attachments.rs` so that
//! the provider files, which use the admission rules, are not imported back.

use serde_json::Value;

use super::Format;
use super::attachments::admit;
use super::call::ToolCall;
use super::openai;
use super::reply;
use crate::registry::history::Rendering;
use crate::result::ToolResult;

/// Renders every result of one turn (the answers to one assistant message's
/// calls, in call order) as `format`'s messages, the size limits of the
/// format applying to the turn's media together. Returns what to append:
///
/// - [`Format::OpenAiChat`]: one `tool` message per call (text only; every
///   tool message must directly follow the assistant message that made the
///   calls), then, when any result has images or files, ONE `user` message
///   with, for each such call, a text part naming the tool and call id
///   followed by its `image_url` / `file` parts (OpenAI API reference, Chat
///   Completions: user message content parts `image_url`, `file` with
///   `file_data`).
/// - Every other format: [`render_result`](super::render_result) of each
///   call in turn (for Anthropic the `tool_result` blocks of the next `user`
///   message; for Gemini the `functionResponse` parts of one content).
///
/// ```
/// use tool_core::format::{render_results, Format, ToolCall};
/// use tool_core::{Image, Rendering, ToolResult};
/// use tool_core::ToolArgs;
///
/// let a = ToolCall::new("call_1", "screenshot", ToolArgs::Text("{}".into()));
/// let b = ToolCall::new("call_2", "read_file", ToolArgs::Text("{}".into()));
/// let shot = ToolResult::ok("1 screenshot").with_image(Image::new("image/png", "iVBORw0KGgo="));
/// let text = ToolResult::ok("hello");
/// let messages = render_results(&[(&a, &shot), (&b, &text)], Format::OpenAiChat { strict: false }, Rendering::First);
/// assert_eq!(messages.len(), 3, "two tool messages, then one user message");
/// assert_eq!(messages[0]["role"], "tool");
/// assert_eq!(messages[1]["role"], "tool");
/// assert_eq!(messages[2]["role"], "user");
/// assert_eq!(messages[2]["content"][0]["text"], "Images returned by the `screenshot` tool (call call_1):");
/// assert_eq!(messages[2]["content"][1]["type"], "image_url");
/// ```
pub fn render_results(
    results: &[(&ToolCall, &ToolResult)],
    format: Format,
    rendering: Rendering,
) -> Vec<Value> {
    let mut spent = 0usize;
    if let Format::OpenAiChat { .. } = format {
        let mut messages = Vec::with_capacity(results.len() + 1);
        let mut parts = Vec::new();
        for (call, result) in results {
            let reply = reply::reply(result, rendering);
            let admitted = admit(&reply, &openai::MEDIA_LIMITS, &mut spent);
            messages.push(openai::chat_tool_message(call, &reply, &admitted));
            parts.extend(openai::chat_media_parts(call, &admitted));
        }
        if !parts.is_empty() {
            messages.push(serde_json::json!({"role": "user", "content": parts}));
        }
        return messages;
    }
    let render = format.provider().0.render_result;
    results
        .iter()
        .flat_map(|(call, result)| render(call, &reply::reply(result, rendering), &mut spent))
        .collect()
}
