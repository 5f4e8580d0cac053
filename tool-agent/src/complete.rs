//! One request, one text answer: what the reviewer and the summariser ask a model.

use futures_util::StreamExt;
use serde_json::Value;

use crate::client::ModelClient;
use crate::error::ModelError;
use crate::message::{Message, ModelRequest, StreamEvent, ToolChoice};

/// Most bytes of answer text kept (the rest of a longer answer is dropped): 64 KiB.
const MAX_TEXT: usize = 64 * 1024;

/// Sends `system` and one user message `user` with no tools, and returns
/// the answer's text (at most [`MAX_TEXT`] bytes, cut at a character boundary).
pub(crate) async fn complete(
    client: &dyn ModelClient,
    system: &str,
    user: String,
    max_output_tokens: Option<u32>,
) -> Result<String, ModelError> {
    let messages = [Message::user(user)];
    let tools = Value::Array(Vec::new());
    let choice = ToolChoice::None;
    let request = ModelRequest::new(&messages, &tools, &choice)
        .with_system(Some(system))
        .with_turn(1)
        .with_max_output_tokens(max_output_tokens);
    let mut stream = client.send(request).await?;
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event? {
            StreamEvent::TextDelta(t) if text.len() < MAX_TEXT => text.push_str(&t),
            StreamEvent::Finished { .. } => break,
            _ => {}
        }
    }
    if text.len() > MAX_TEXT {
        let cut = tool_core::truncate::floor_char_boundary(&text, MAX_TEXT);
        text.truncate(cut);
    }
    Ok(text)
}
