//! The recipe "A new model provider" of `docs/ARCHITECTURE.md`, followed from
//! outside the crate: `toy_provider/` is one folder, and `mod toy_provider;`
//! below is the one line. The toy client then runs the same recorded-stream
//! checks as the built-in providers (`streams.rs`): a streamed answer from a
//! recording, a truncated one, a whole one, and a full agent run with a real
//! tool against the local replay server.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

mod common;
mod toy_provider;

use common::{Canned, recording, serve};
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tool_agent::{
    Agent, Message, ModelClient, ModelError, ModelErrorKind, ModelRequest, RetryPolicy, StopReason,
    StreamEvent, ToolChoice, Usage,
};
use tool_core::format::ToolCall;
use tool_core::{Format, Tool, ToolArgs, ToolRegistry, ToolResult, ToolSpec};
use toy_provider::ToyClient;

/// The shared checks every provider passes (`common::conformance`), on the toy.
#[tokio::test]
async fn the_toy_provider_passes_the_shared_checks() {
    let whole = r#"{"text": "Noon.", "calls": [{"id": "t9", "name": "clock", "args": {"zone": "CET"}}], "reason": "stop", "usage": {"in": 3, "out": 2}}"#;
    let answer = "data: {\"type\":\"text\",\"text\":\"It is noon.\"}\n\ndata: {\"type\":\"end\",\"reason\":\"stop\"}\n\n";
    common::conformance::check::<toy_provider::Toy>(
        "toy",
        "toy-1",
        common::conformance::Recorded {
            calls: recording("toy_calls.sse").into(),
            truncated: recording("toy_truncated.sse").into(),
            whole: whole.to_owned(),
            answer: answer.into(),
            answer_text: "It is noon.",
        },
    )
    .await;
}

async fn collect(client: &dyn ModelClient) -> Result<Vec<StreamEvent>, ModelError> {
    let messages = vec![Message::user("what time is it?")];
    let tools = json!([{"name": "clock"}]);
    let request =
        ModelRequest::new(&messages, &tools, &ToolChoice::Auto).with_system(Some("be brief"));
    let stream = client.send(request).await?;
    stream.collect::<Vec<_>>().await.into_iter().collect()
}

#[tokio::test]
async fn the_toy_provider_assembles_a_recorded_stream() {
    let server = serve(vec![Canned::sse(recording("toy_calls.sse"))]).await;
    let client = ToyClient::new("toy-1")
        .base_url(&server.base_url)
        .api_key("k1");
    assert_eq!(client.format(), Format::Json);
    let events = collect(&client).await.unwrap();
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta("Checking the ".into()),
            StreamEvent::TextDelta("clock.".into()),
            StreamEvent::ToolCall(ToolCall::new("t1", "clock", r#"{"zone": "UTC"}"#)),
            StreamEvent::Usage(Usage {
                input_tokens: 12,
                output_tokens: 9
            }),
            StreamEvent::Finished {
                stop_reason: Some("calls".into())
            },
        ]
    );
    let seen = server.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/v1/toy/chat");
    assert_eq!(seen.header("x-toy-key"), Some("k1"));
    assert_eq!(seen.header("accept"), Some("text/event-stream"));
    assert_eq!(seen.body["model"], "toy-1");
    assert_eq!(seen.body["system"], "be brief");
    assert_eq!(seen.body["stream"], true);
    assert_eq!(
        seen.body["turns"][0],
        json!({"role": "user", "text": "what time is it?"})
    );
}

#[tokio::test]
async fn a_truncated_toy_stream_names_the_open_call_through_the_shared_finish() {
    let server = serve(vec![Canned::sse(recording("toy_truncated.sse"))]).await;
    let client = ToyClient::new("toy-1").base_url(&server.base_url);
    let err = collect(&client).await.unwrap_err();
    assert_eq!(
        err.kind(),
        &ModelErrorKind::Truncated {
            call: Some("`clock` (id t2)".into()),
            detail: "11 bytes of arguments received, no `end` event".into(),
        }
    );
}

#[tokio::test]
async fn a_whole_toy_answer_and_the_shared_retries() {
    let whole = r#"{"text": "Noon.", "calls": [{"id": "t9", "name": "clock", "args": {"zone": "CET"}}], "reason": "stop", "usage": {"in": 3, "out": 2}}"#;
    let server = serve(vec![
        Canned::json(503, r#"{"error": "busy"}"#),
        Canned::json(200, whole),
    ])
    .await;
    let client = ToyClient::new("toy-1")
        .base_url(&server.base_url)
        .streaming(false)
        .retry(RetryPolicy {
            max_retries: 1,
            base_delay: std::time::Duration::from_millis(5),
            max_delay: std::time::Duration::from_secs(1),
        });
    let events = collect(&client).await.unwrap();
    assert_eq!(events[0], StreamEvent::TextDelta("Noon.".into()));
    assert_eq!(
        events[1],
        StreamEvent::ToolCall(ToolCall::new("t9", "clock", json!({"zone": "CET"})))
    );
    assert_eq!(
        events[3],
        StreamEvent::Finished {
            stop_reason: Some("stop".into())
        }
    );
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "the 503 was retried by the shared transport");
    assert_eq!(seen[1].body["stream"], false);
    assert_eq!(
        seen[1].header("accept"),
        Some("*/*"),
        "no event stream asked for"
    );
}

#[tokio::test]
async fn an_agent_runs_a_real_tool_through_the_toy_provider() {
    let end = "data: {\"type\":\"text\",\"text\":\"It is noon in UTC.\"}\n\ndata: {\"type\":\"end\",\"reason\":\"stop\"}\n\n";
    let server = serve(vec![
        Canned::sse(recording("toy_calls.sse")),
        Canned::sse(end),
    ])
    .await;
    let mut tools = ToolRegistry::new();
    let spec = ToolSpec::new(
        "clock",
        "The time in a zone.",
        json!({"type": "object", "properties": {"zone": {"type": "string"}}, "required": ["zone"]}),
    );
    tools
        .register(
            Tool::new(spec, |args: Map<String, Value>, _| async move {
                ToolResult::ok(format!("12:00 {}", args["zone"].as_str().unwrap_or("?")))
            })
            .unwrap(),
        )
        .unwrap();
    let out = Agent::new(ToyClient::new("toy-1").base_url(&server.base_url), tools)
        .run("what time is it?")
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Answered);
    assert_eq!((out.turns, out.tool_calls), (2, 1));
    assert_eq!(out.text, "It is noon in UTC.");
    let second = server.seen.lock().unwrap()[1].clone();
    let turns = second.body["turns"].as_array().unwrap().clone();
    assert_eq!(
        turns[2],
        json!({"role": "call", "id": "t1", "name": "clock", "args": "{\"zone\": \"UTC\"}"})
    );
    assert_eq!(
        turns[3],
        json!({"role": "result", "id": "t1", "text": "12:00 UTC"})
    );
    let Message::Tool { results, .. } = &out.messages[2] else {
        panic!("{:?}", out.messages)
    };
    assert_eq!(
        results[0].call.arguments,
        ToolArgs::Text(r#"{"zone": "UTC"}"#.into())
    );
}
