//! The built-in tools with async-openai's types, no network: builds a Chat
//! Completions request from our registry, reads a recorded response, runs
//! its tool calls through our pipeline and appends the answers for the next
//! turn. Asserts what it prints.
//!
//! `cargo run -p tool-adapters --features async-openai --example async_openai_request`

use async_openai::types::chat::{
    ChatCompletionMessageToolCalls, ChatCompletionRequestAssistantMessage,
    ChatCompletionRequestMessage, ChatCompletionRequestSystemMessage,
    ChatCompletionRequestUserMessage, CreateChatCompletionRequest, CreateChatCompletionResponse,
};
use tool_adapters::openai::{chat_tools, openai_tool_call, tool_calls, tool_messages};
use tool_core::{RegistryView, Rendering};

/// What the model answered (recorded from an OpenAI-compatible server).
const RECORDED: &str = r#"{
  "id": "chatcmpl-1", "object": "chat.completion", "created": 1764633600, "model": "gpt-4.1-mini",
  "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
    "role": "assistant", "content": null,
    "tool_calls": [
      {"id": "call_1", "type": "function",
       "function": {"name": "read_file", "arguments": "{\"file_path\": \"TODO.md\", \"offset\": \"2\"}"}}
    ]}}],
  "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}
}"#;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("TODO.md"), "# Todo\n- ship the adapters\n")?;
    let ctx = tool_builtins::context(dir.path())?;
    // Read-only built-ins only, as a view.
    let view = RegistryView::new(tool_builtins::registry()).read_only();

    let mut request = CreateChatCompletionRequest {
        model: "gpt-4.1-mini".to_owned(),
        messages: vec![
            ChatCompletionRequestSystemMessage::from("You are a careful coding agent.").into(),
            ChatCompletionRequestUserMessage::from("What is left in TODO.md?").into(),
        ],
        tools: Some(chat_tools(&view, true)?),
        ..Default::default()
    };
    let tools = request.tools.as_deref().unwrap_or_default();
    println!(
        "request: {} messages, {} tools",
        request.messages.len(),
        tools.len()
    );
    assert!(tools.len() >= 3, "read-only built-ins: {}", tools.len());

    // The model's answer, read with async-openai's types.
    let response: CreateChatCompletionResponse = serde_json::from_str(RECORDED)?;
    let message = &response.choices[0].message;
    let openai_calls = message.tool_calls.clone().unwrap_or_default();
    let calls = tool_calls(&openai_calls)?;
    let results = view.execute_calls(&calls, &ctx).await;

    // The assistant turn and the tool answers go back into the history.
    request.messages.push(
        ChatCompletionRequestAssistantMessage {
            tool_calls: Some(
                calls
                    .iter()
                    .map(|c| ChatCompletionMessageToolCalls::Function(openai_tool_call(c)))
                    .collect(),
            ),
            ..Default::default()
        }
        .into(),
    );
    for (call, result) in calls.iter().zip(&results) {
        request
            .messages
            .extend(tool_messages(call, result, Rendering::First)?);
    }

    let Some(ChatCompletionRequestMessage::Tool(answer)) = request.messages.last() else {
        return Err("the last message is not the tool answer".into());
    };
    let body = serde_json::to_value(answer)?;
    println!("tool message: {body}");
    let text = body["content"].as_str().unwrap_or_default();
    // `"offset": "2"` was repaired to 2 (and noted); line 2 is shown, line 1 is not.
    assert!(text.contains("2: - ship the adapters"), "{text}");
    assert!(!text.contains("1: # Todo"), "{text}");
    assert!(text.contains("Note: "), "{text}");
    assert_eq!(body["tool_call_id"], "call_1");
    println!(
        "next request: {} messages, {} bytes of JSON",
        request.messages.len(),
        serde_json::to_string(&request)?.len()
    );
    assert_eq!(request.messages.len(), 4);
    Ok(())
}
