//! The two-layer memory in the requests a provider receives (000 对话历史示例):
//! a result made with `with_summary` reaches the model as `# title`, the full
//! output and `Summary: …` on the turn after its call, and as the summary
//! line alone on every later turn.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

mod common;

use common::{Canned, serve};
use serde_json::{Map, Value, json};
use tool_agent::{Agent, OpenAiChatClient};
use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};

/// An OpenAI Chat stream answering with one call.
fn call(id: &str, name: &str, arguments: &Value) -> String {
    let first = json!({"id": "r", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {
        "role": "assistant",
        "tool_calls": [{"index": 0, "id": id, "type": "function", "function": {"name": name, "arguments": arguments.to_string()}}]
    }, "finish_reason": null}]});
    let end = json!({"id": "r", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]});
    format!("data: {first}\n\ndata: {end}\n\ndata: [DONE]\n\n")
}

fn text(answer: &str) -> String {
    let first = json!({"id": "r", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"role": "assistant", "content": answer}, "finish_reason": null}]});
    let end = json!({"id": "r", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]});
    format!("data: {first}\n\ndata: {end}\n\ndata: [DONE]\n\n")
}

fn tools() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let schema = json!({"type": "object", "properties": {"url": {"type": "string"}}});
    r.register(
        Tool::new(
            ToolSpec::new("extract_page_data", "Extracts a page.", schema).read_only(),
            |args: Map<String, Value>, _| async move {
                let url = args["url"].as_str().unwrap_or("").to_owned();
                ToolResult::ok("D".repeat(10_000))
                    .with_title("Extracted page data")
                    .with_summary(format!("Extracted 10000 chars from {url}"))
            },
        )
        .unwrap(),
    )
    .unwrap();
    let schema = json!({"type": "object", "properties": {"content": {"type": "string"}}});
    r.register(
        Tool::new(
            ToolSpec::new("save", "Saves text.", schema),
            |args: Map<String, Value>, _| async move {
                let n = args["content"].as_str().map_or(0, str::len);
                ToolResult::ok(format!("saved {n} bytes"))
            },
        )
        .unwrap(),
    )
    .unwrap();
    r
}

/// The `content` of the tool message answering `call_id` in a request body.
fn tool_message(body: &Value, call_id: &str) -> String {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .unwrap_or_else(|| panic!("no tool message for {call_id} in {body}"))["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[tokio::test]
async fn first_turn_full_later_turns_the_summary() {
    let server = serve(vec![
        Canned::sse(call(
            "c1",
            "extract_page_data",
            &json!({"url": "amazon.com"}),
        )),
        Canned::sse(call("c2", "save", &json!({"content": "prices"}))),
        Canned::sse(text("saved")),
    ])
    .await;
    let client = OpenAiChatClient::new("m").base_url(&server.base_url);
    let out = Agent::new(client, tools())
        .run("Extract the prices from amazon.com, then save them")
        .await
        .unwrap();
    assert_eq!((out.text.as_str(), out.tool_calls), ("saved", 2));
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3);
    let first = tool_message(&seen[1].body, "c1");
    assert_eq!(
        first,
        format!(
            "# Extracted page data\n\n{}\n\nSummary: Extracted 10000 chars from amazon.com",
            "D".repeat(10_000)
        )
    );
    assert_eq!(
        tool_message(&seen[2].body, "c1"),
        "Summary: Extracted 10000 chars from amazon.com"
    );
    // A result without a summary is shown as it is on every turn.
    assert_eq!(tool_message(&seen[2].body, "c2"), "saved 6 bytes");
    // The run's history keeps both layers: full for turn 1's prompt, the summary after.
    assert_eq!(out.history.render(1)[0].1, first);
    assert_eq!(
        out.history.render(2)[0].1,
        "Summary: Extracted 10000 chars from amazon.com"
    );
}
