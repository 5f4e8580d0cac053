//! `OpenAiChatClient::text_tool_calls`: a server with no tool calling of its
//! own (the replay server here, answering as llama.cpp without `--jinja`
//! does: calls as markup in `delta.content`), the tool list sent in the
//! system prompt, calls read from the streamed text and executed by the agent.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

mod common;

use std::sync::{Arc, Mutex};

use common::{Canned, serve};
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tool_agent::{
    Agent, Message, ModelClient, ModelErrorKind, ModelRequest, OpenAiChatClient, StopReason,
    StreamEvent, ToolChoice,
};
use tool_core::{Tool, ToolArgs, ToolRegistry, ToolResult, ToolSpec};

/// An SSE answer whose text arrives in `pieces`, as Chat Completions chunks.
fn sse(pieces: &[&str]) -> String {
    let mut out = String::new();
    for p in pieces {
        let chunk = json!({"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": null}]});
        out.push_str(&format!("data: {chunk}\n\n"));
    }
    out.push_str("data: {\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    out
}

fn registry(log: &Arc<Mutex<Vec<String>>>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let log = log.clone();
    let schema = json!({"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["path"]});
    r.register(
        Tool::new(
            ToolSpec::new("read_file", "Reads a file.", schema).read_only(),
            move |args: Map<String, Value>, _| {
                let log = log.clone();
                async move {
                    log.lock().unwrap().push(Value::Object(args).to_string());
                    ToolResult::ok("hello from a.txt")
                }
            },
        )
        .unwrap(),
    )
    .unwrap();
    r
}

#[tokio::test]
async fn streamed_markup_becomes_calls_and_the_tools_go_into_the_prompt() {
    let server = serve(vec![Canned::sse(sse(&[
        "Let me read it.\n<tool",
        "_call>\n{\"name\": \"read_file\", \"argu",
        "ments\": {\"path\": \"a.txt\", \"limit\": \"5\"}}\n</tool_call>",
    ]))])
    .await;
    let client = OpenAiChatClient::new("smol")
        .base_url(&server.base_url)
        .text_tool_calls("hermes")
        .unwrap();
    let messages = vec![Message::user("read a.txt")];
    let tools = json!([{"type": "function", "function": {"name": "read_file", "description": "Reads a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}}]);
    let choice = ToolChoice::Auto;
    let request = ModelRequest::new(&messages, &tools, &choice).with_system(Some("Be brief."));
    let events: Vec<StreamEvent> = client
        .send(request)
        .await
        .unwrap()
        .map(Result::unwrap)
        .collect()
        .await;
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Let me read it.", "no markup leaks into the text");
    let calls: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect();
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].name, "read_file");
    // "5" became 5: the offered schema says integer.
    assert_eq!(
        calls[0].arguments,
        ToolArgs::Value(json!({"path": "a.txt", "limit": 5}))
    );

    let body = server.seen.lock().unwrap()[0].body.clone();
    assert!(
        body.get("tools").is_none() && body.get("tool_choice").is_none(),
        "{body}"
    );
    let system = body["messages"][0]["content"].as_str().unwrap();
    assert!(system.starts_with("Be brief.\n\n# Tools"), "{system}");
    assert!(
        system.contains("<tools>\n{\"type\":\"function\",\"function\":{\"name\":\"read_file\""),
        "{system}"
    );
}

#[tokio::test]
async fn the_agent_runs_a_text_call_and_replays_it_as_text() {
    let server = serve(vec![
        Canned::sse(sse(&[
            "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}]",
        ])),
        Canned::sse(sse(&["It says hello."])),
    ])
    .await;
    let client = OpenAiChatClient::new("smol")
        .base_url(&server.base_url)
        .text_tool_calls("auto")
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let out = Agent::new(client, registry(&log))
        .run("what is in a.txt?")
        .await
        .unwrap();
    assert_eq!(
        (out.stop, out.tool_calls, out.text.as_str()),
        (StopReason::Answered, 1, "It says hello.")
    );
    assert_eq!(*log.lock().unwrap(), vec![r#"{"path":"a.txt"}"#.to_owned()]);
    // The second request carries the call as markup and the result as a user turn.
    let body = server.seen.lock().unwrap()[1].body.clone();
    let msgs = body["messages"].as_array().unwrap();
    let assistant = msgs.iter().find(|m| m["role"] == "assistant").unwrap();
    assert!(assistant.get("tool_calls").is_none());
    assert_eq!(
        assistant["content"],
        "<tool_call>\n{\"name\":\"read_file\",\"arguments\":{\"path\":\"a.txt\"}}\n</tool_call>"
    );
    let last = msgs.last().unwrap();
    assert_eq!(last["role"], "user");
    let result = last["content"].as_str().unwrap();
    assert!(
        result.starts_with("<tool_response>\n") && result.contains("hello from a.txt"),
        "{result}"
    );
    assert!(!msgs.iter().any(|m| m["role"] == "tool"));
}

#[tokio::test]
async fn malformed_markup_is_not_run_and_says_why() {
    let server = serve(vec![Canned::sse(sse(&[
        "<tool_call>{\"name\": \"read_file\", \"arguments\": {path}}</tool_call>",
    ]))])
    .await;
    let client = OpenAiChatClient::new("smol")
        .base_url(&server.base_url)
        .text_tool_calls("hermes")
        .unwrap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let out = Agent::new(client, registry(&log)).run("go").await.unwrap();
    assert_eq!(out.tool_calls, 0);
    assert!(log.lock().unwrap().is_empty());
    assert!(
        out.text.starts_with("<tool_call>{\"name\": \"read_file\""),
        "{}",
        out.text
    );
    assert!(
        out.text
            .contains("[tool-call note: a <tool_call> block is not valid JSON"),
        "{}",
        out.text
    );
}

#[tokio::test]
async fn whole_answers_are_read_too_and_bad_names_refused() {
    let body = json!({"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant",
        "content": "[read_file(path='a.txt')]"}}]});
    let server = serve(vec![Canned::json(200, &body.to_string())]).await;
    let client = OpenAiChatClient::new("smol")
        .base_url(&server.base_url)
        .streaming(false)
        .text_tool_calls("pythonic")
        .unwrap();
    let messages = vec![Message::user("go")];
    let tools = json!([]);
    let choice = ToolChoice::Auto;
    let events: Vec<_> = client
        .send(ModelRequest::new(&messages, &tools, &choice))
        .await
        .unwrap()
        .collect()
        .await;
    assert!(
        matches!(&events[0], Ok(StreamEvent::ToolCall(c)) if c.name == "read_file"),
        "{events:?}"
    );

    let err = OpenAiChatClient::new("m")
        .text_tool_calls("hermez")
        .unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Config(m) if m.contains("did you mean `hermes`")),
        "{err:?}"
    );
}
