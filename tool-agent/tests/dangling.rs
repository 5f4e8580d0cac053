//! Dangling tool calls (002 #161): a conversation handed to the agent with
//! tool calls that have no result is answered "not run" before the next
//! request, so the request a provider receives pairs every call with a result.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

mod common;

use common::{Canned, recording, serve};
use serde_json::{Value, json};
use tool_agent::{
    Agent, AnthropicClient, Message, NOT_RUN_MESSAGE, OpenAiChatClient, ToolOutcome,
    repair_dangling_calls,
};
use tool_core::format::ToolCall;
use tool_core::{ErrorKind, ToolRegistry, ToolResult, meta};

/// user → assistant(a, b) → tool(a only) → assistant(c) [no result] → user.
fn interrupted() -> Vec<Message> {
    let assistant = |calls: Vec<ToolCall>| {
        let mut m = Message::assistant("");
        if let Message::Assistant { tool_calls, .. } = &mut m {
            *tool_calls = calls;
        }
        m
    };
    vec![
        Message::user("read both files"),
        assistant(vec![
            ToolCall::new("call_a", "read_file", json!({"path": "a.txt"})),
            ToolCall::new("call_b", "read_file", json!({"path": "b.txt"})),
        ]),
        Message::Tool {
            turn: 1,
            results: vec![ToolOutcome {
                call: ToolCall::new("call_a", "read_file", json!({"path": "a.txt"})),
                result: ToolResult::ok("alpha"),
            }],
        },
        assistant(vec![ToolCall::new(
            "call_c",
            "bash_command",
            json!({"command": "ls"}),
        )]),
        Message::user("go on"),
    ]
}

#[test]
fn missing_results_are_added_in_place() {
    let mut messages = interrupted();
    assert_eq!(repair_dangling_calls(&mut messages), 2);
    assert_eq!(messages.len(), 6);
    let Message::Tool { turn, results } = &messages[2] else {
        panic!("{:?}", messages[2]);
    };
    assert_eq!(*turn, 1);
    let ids: Vec<&str> = results.iter().map(|o| o.call.id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b"]);
    assert_eq!(results[0].result.output, "alpha");
    let b = &results[1].result;
    assert_eq!(b.error.as_ref().unwrap().kind, ErrorKind::Cancelled);
    assert_eq!(b.error.as_ref().unwrap().message, NOT_RUN_MESSAGE);
    assert_eq!(b.metadata[meta::NOT_RUN], true);
    // The last assistant message had no tool message: one is inserted after it, a turn later.
    let Message::Tool { turn, results } = &messages[4] else {
        panic!("{:?}", messages[4]);
    };
    assert_eq!(*turn, 2);
    assert_eq!(results.len(), 1);
    assert_eq!(results[0].call.name, "bash_command");
    assert_eq!(messages[5], Message::user("go on"));
    // A second pass finds nothing to do.
    let again = messages.clone();
    assert_eq!(repair_dangling_calls(&mut messages), 0);
    assert_eq!(messages, again);
}

/// OpenAI Chat's rule: every `tool_calls[].id` of an assistant message is
/// answered by a `tool` message with that `tool_call_id` before the next
/// non-tool message. Returns the answers as `(id, content)`.
fn openai_pairs(body: &Value) -> Vec<(String, String)> {
    let messages = body["messages"].as_array().unwrap();
    let mut pairs = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        let Some(calls) = m["tool_calls"].as_array() else {
            continue;
        };
        let answers: Vec<&Value> = messages[i + 1..]
            .iter()
            .take_while(|n| n["role"] == "tool")
            .collect();
        for c in calls {
            let id = c["id"].as_str().unwrap();
            let answer = answers
                .iter()
                .find(|a| a["tool_call_id"] == id)
                .unwrap_or_else(|| panic!("call {id} unanswered in {body}"));
            pairs.push((
                id.to_owned(),
                answer["content"].as_str().unwrap().to_owned(),
            ));
        }
    }
    pairs
}

#[tokio::test]
async fn an_openai_request_answers_every_call() {
    let answer = concat!(
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"done\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    let server = serve(vec![Canned::sse(answer)]).await;
    let client = OpenAiChatClient::new("m").base_url(&server.base_url);
    let out = Agent::new(client, ToolRegistry::new())
        .run_conversation(interrupted())
        .await
        .unwrap();
    assert_eq!(out.text, "done");
    let body = server.seen.lock().unwrap()[0].body.clone();
    let pairs = openai_pairs(&body);
    let ids: Vec<&str> = pairs.iter().map(|(id, _)| id.as_str()).collect();
    assert_eq!(ids, ["call_a", "call_b", "call_c"]);
    assert_eq!(pairs[0].1, "alpha");
    assert!(pairs[1].1.contains(NOT_RUN_MESSAGE), "{}", pairs[1].1);
    assert!(pairs[2].1.contains(NOT_RUN_MESSAGE), "{}", pairs[2].1);
    // The conversation the run returns holds the added results too.
    assert_eq!(out.messages.len(), 7);
}

#[tokio::test]
async fn an_anthropic_request_answers_every_tool_use() {
    let server = serve(vec![Canned::sse(recording("anthropic_tools.sse"))]).await;
    let client = AnthropicClient::new("m")
        .base_url(&server.base_url)
        .api_key("k");
    let _ = Agent::new(client, ToolRegistry::new())
        .max_turns(1)
        .run_conversation(interrupted())
        .await
        .unwrap();
    let body = server.seen.lock().unwrap()[0].body.clone();
    // Anthropic's rule: each `tool_use` block is answered by a `tool_result`
    // block with its id in the very next (user) message.
    let messages = body["messages"].as_array().unwrap();
    let mut answered = Vec::new();
    for (i, m) in messages.iter().enumerate() {
        for block in m["content"].as_array().into_iter().flatten() {
            if block["type"] != "tool_use" {
                continue;
            }
            let id = block["id"].as_str().unwrap();
            let next = &messages[i + 1];
            assert_eq!(next["role"], "user", "{body}");
            let result = next["content"]
                .as_array()
                .unwrap()
                .iter()
                .find(|b| b["type"] == "tool_result" && b["tool_use_id"] == id)
                .unwrap_or_else(|| panic!("tool_use {id} unanswered in {body}"));
            answered.push((id.to_owned(), result["is_error"] == true));
        }
    }
    assert_eq!(
        answered,
        [
            ("call_a".to_owned(), false),
            ("call_b".to_owned(), true),
            ("call_c".to_owned(), true)
        ]
    );
}
