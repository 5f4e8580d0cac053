//! The HTTP clients and stream assemblers against a local server replaying
//! SSE recordings written in each provider's documented event shapes
//! (`tests/recordings/`), including malformed and truncated streams, plus
//! HTTP errors, rate limits and retries.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

mod common;

use std::time::Duration;

use common::{Canned, recording, serve};
use futures_util::StreamExt;
use serde_json::json;
use tool_agent::assemble::{GeminiAssembler, from_sse};
use tool_agent::{
    AnthropicClient, Message, ModelClient, ModelError, ModelErrorKind, ModelRequest,
    OpenAiChatClient, OpenAiResponsesClient, RetryPolicy, StreamEvent, ToolChoice, Usage,
};
use tool_core::ToolArgs;
use tool_core::format::ToolCall;

fn fast_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: 2,
        base_delay: Duration::from_millis(5),
        max_delay: Duration::from_secs(2),
    }
}

async fn collect(
    client: &dyn ModelClient,
    choice: ToolChoice,
) -> Result<Vec<StreamEvent>, ModelError> {
    let messages = vec![Message::user("go")];
    // The replay server does not read the tool list; a placeholder entry makes the client send it.
    let tools = json!([{"name": "placeholder"}]);
    let request = ModelRequest::new(&messages, &tools, &choice).with_system(Some("be brief"));
    let stream = client.send(request).await?;
    stream.collect::<Vec<_>>().await.into_iter().collect()
}

fn calls(events: &[StreamEvent]) -> Vec<&ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => Some(c),
            _ => None,
        })
        .collect()
}

fn text(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn openai_chat_assembles_parallel_calls_from_fragments() {
    let server = serve(vec![Canned::sse(recording("openai_chat_parallel.sse"))]).await;
    let client = OpenAiChatClient::new("gpt-4.1-mini")
        .base_url(&server.base_url)
        .api_key("sk-test");
    let events = collect(&client, ToolChoice::Required).await.unwrap();
    assert_eq!(text(&events), "Reading both files.");
    let calls = calls(&events);
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_a", "read_file")
    );
    assert_eq!(
        calls[0].arguments,
        ToolArgs::Text("{\"path\": \"a.txt\"}".into())
    );
    assert_eq!(
        calls[1].arguments,
        ToolArgs::Text("{\"path\": \"b.txt\"}".into())
    );
    // Calls are complete at the end of the answer (`finish_reason`), not when a
    // later index starts: both come after the last fragment, in index order.
    let first_call = events
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCall(_)))
        .unwrap();
    // The first chunk names the response and the model that answered.
    assert_eq!(
        events[0],
        StreamEvent::ResponseInfo {
            id: Some("chatcmpl-1".into()),
            model: Some("gpt-4.1-mini".into())
        }
    );
    let infos = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ResponseInfo { .. }))
        .count();
    assert_eq!(infos, 1, "sent once, not per chunk: {events:?}");
    assert_eq!(first_call, 2, "{events:?}");
    assert!(
        matches!(&events[4], StreamEvent::Finished { .. }),
        "{events:?}"
    );
    assert!(events.contains(&StreamEvent::Usage(Usage {
        input_tokens: 82,
        output_tokens: 41
    })));
    assert!(events.contains(&StreamEvent::Finished {
        stop_reason: Some("tool_calls".into())
    }));

    let seen = server.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/v1/chat/completions");
    assert_eq!(seen.header("authorization"), Some("Bearer sk-test"));
    assert_eq!(seen.body["stream"], true);
    assert_eq!(seen.body["stream_options"]["include_usage"], true);
    assert_eq!(
        seen.body["messages"][0],
        json!({"role": "system", "content": "be brief"})
    );
    assert_eq!(
        seen.body["messages"][1],
        json!({"role": "user", "content": "go"})
    );
}

/// The calls of a recorded stream, as `(id, name, arguments as JSON)`.
async fn recorded_calls(
    file: &str,
) -> Result<Vec<(String, String, serde_json::Value)>, ModelError> {
    let server = serve(vec![Canned::sse(recording(file))]).await;
    let client = OpenAiChatClient::new("m").base_url(&server.base_url);
    let events = collect(&client, ToolChoice::Auto).await?;
    Ok(calls(&events)
        .into_iter()
        .map(|c| {
            let args = match &c.arguments {
                ToolArgs::Text(t) => serde_json::from_str(t).unwrap(),
                ToolArgs::Value(v) => v.clone(),
            };
            (c.id.clone(), c.name.clone(), args)
        })
        .collect())
}

#[tokio::test]
async fn openai_chat_fragments_assemble_by_index_in_any_order() {
    let both = vec![
        (
            "call_a".to_owned(),
            "read_file".to_owned(),
            json!({"path": "a.txt"}),
        ),
        (
            "call_b".to_owned(),
            "glob_files".to_owned(),
            json!({"pattern": "*.rs"}),
        ),
    ];
    // Fragments of index 0 and 1 alternate (the chunk format promises no order).
    assert_eq!(
        recorded_calls("openai_chat_interleaved.sse").await.unwrap(),
        both
    );
    // Index 1 streams whole before index 0 starts: calls still come in index order.
    assert_eq!(
        recorded_calls("openai_chat_out_of_order.sse")
            .await
            .unwrap(),
        both
    );
    // Every fragment repeats the call's id, type and name (some servers do):
    // the header is taken once, the argument pieces appended.
    assert_eq!(
        recorded_calls("openai_chat_duplicated.sse").await.unwrap(),
        both
    );
}

#[tokio::test]
async fn openai_chat_two_ids_on_one_index_is_malformed() {
    let err = recorded_calls("openai_chat_index_clash.sse")
        .await
        .unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Malformed(m)
            if m.contains("index 0") && m.contains("call_a") && m.contains("call_z")),
        "{err:?}"
    );
}

#[tokio::test]
async fn openai_chat_truncated_stream_names_the_open_call() {
    let server = serve(vec![Canned::sse(recording("openai_chat_truncated.sse"))]).await;
    let client = OpenAiChatClient::new("m").base_url(&server.base_url);
    let messages = vec![Message::user("go")];
    let tools = json!([]);
    let choice = ToolChoice::Auto;
    let stream = client
        .send(ModelRequest::new(&messages, &tools, &choice))
        .await
        .unwrap();
    let items: Vec<_> = stream.collect().await;
    // No call of a cut answer is complete (the end marker never came): only the
    // text is yielded, then the error names the call whose arguments were cut.
    assert!(
        !items
            .iter()
            .any(|i| matches!(i, Ok(StreamEvent::ToolCall(_)))),
        "{items:?}"
    );
    let err = items.last().unwrap().as_ref().unwrap_err();
    match err.kind() {
        ModelErrorKind::Truncated { call: Some(c), .. } => assert_eq!(c, "`read_file` (id call_b)"),
        other => panic!("{other:?}"),
    }
    assert!(
        err.to_string()
            .contains("in the middle of tool call `read_file` (id call_b)"),
        "{err}"
    );
}

#[tokio::test]
async fn openai_chat_transport_break_mid_call_is_truncated() {
    let mut canned = Canned::sse(recording("openai_chat_truncated.sse"));
    canned.short_by = 500;
    let server = serve(vec![canned]).await;
    let client = OpenAiChatClient::new("m")
        .base_url(&server.base_url)
        .retry(fast_retries());
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Truncated { call: Some(_), .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains("transport"), "{err}");
    assert_eq!(
        server.seen.lock().unwrap().len(),
        1,
        "a stream that started is never retried"
    );
}

#[tokio::test]
async fn openai_chat_malformed_and_error_chunks() {
    let server = serve(vec![Canned::sse(recording("openai_chat_malformed.sse"))]).await;
    let client = OpenAiChatClient::new("m").base_url(&server.base_url);
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Malformed(m) if m.contains("not JSON")),
        "{err:?}"
    );

    let server = serve(vec![Canned::sse(recording("openai_chat_error.sse"))]).await;
    let client = OpenAiChatClient::new("m").base_url(&server.base_url);
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert_eq!(
        err.kind(),
        &ModelErrorKind::Provider(
            "server_error: The server had an error while processing your request.".into()
        )
    );
}

#[tokio::test]
async fn openai_chat_non_streaming_answer() {
    let body = json!({
        "id": "chatcmpl-3", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_x", "type": "function", "function": {"name": "glob_files", "arguments": "{\"pattern\":\"*.rs\"}"}}]}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7}
    });
    let server = serve(vec![Canned::json(200, &body.to_string())]).await;
    let client = OpenAiChatClient::new("m")
        .base_url(&server.base_url)
        .streaming(false);
    let events = collect(&client, ToolChoice::Tool("glob_files".into()))
        .await
        .unwrap();
    assert_eq!(calls(&events)[0].name, "glob_files");
    // No `model` in this body: the id alone.
    assert!(events.contains(&StreamEvent::ResponseInfo {
        id: Some("chatcmpl-3".into()),
        model: None
    }));
    assert!(events.contains(&StreamEvent::Usage(Usage {
        input_tokens: 5,
        output_tokens: 7
    })));
    let seen = server.seen.lock().unwrap()[0].body.clone();
    assert_eq!(seen["stream"], false);
    assert!(seen.get("stream_options").is_none());
}

#[tokio::test]
async fn anthropic_and_responses_non_streaming_answers() {
    let anthropic = json!({
        "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"file_path": "a.md"}}
        ],
        "usage": {"input_tokens": 11, "output_tokens": 3}
    });
    let responses = json!({
        "id": "resp_1", "status": "completed",
        "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "Done soon."}]},
            {"type": "function_call", "call_id": "call_9", "name": "glob_files", "arguments": "{\"pattern\":\"*.md\"}"}
        ],
        "usage": {"input_tokens": 21, "output_tokens": 4}
    });
    let server = serve(vec![
        Canned::json(200, &anthropic.to_string()),
        Canned::json(200, &responses.to_string()),
    ])
    .await;
    let a = AnthropicClient::new("m")
        .base_url(&server.base_url)
        .api_key("k")
        .streaming(false);
    let r = OpenAiResponsesClient::new("m")
        .base_url(&server.base_url)
        .streaming(false);
    for (client, said, call, usage, stop) in [
        (
            &a as &dyn ModelClient,
            "Looking.",
            ("read_file", json!({"file_path": "a.md"})),
            (11, 3),
            "tool_use",
        ),
        (
            &r,
            "Done soon.",
            ("glob_files", json!({"pattern": "*.md"})),
            (21, 4),
            "completed",
        ),
    ] {
        let events = collect(client, ToolChoice::Auto).await.unwrap();
        assert_eq!(text(&events), said);
        let calls = calls(&events);
        assert_eq!(calls.len(), 1);
        assert_eq!(calls[0].name, call.0);
        // Chat-style arguments arrive as the JSON text the model wrote; Anthropic's as a value.
        let got = match &calls[0].arguments {
            ToolArgs::Text(t) => serde_json::from_str(t).unwrap(),
            ToolArgs::Value(v) => v.clone(),
        };
        assert_eq!(got, call.1);
        assert!(events.contains(&StreamEvent::Usage(Usage {
            input_tokens: usage.0,
            output_tokens: usage.1
        })));
        assert_eq!(
            events.last(),
            Some(&StreamEvent::Finished {
                stop_reason: Some(stop.into())
            })
        );
    }
}

#[tokio::test]
async fn rate_limits_are_retried_after_the_servers_wait() {
    let server = serve(vec![
        Canned::json(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "0.05"),
        Canned::sse(recording("openai_chat_parallel.sse")),
    ])
    .await;
    let client = OpenAiChatClient::new("m")
        .base_url(&server.base_url)
        .retry(fast_retries());
    let started = std::time::Instant::now();
    let events = collect(&client, ToolChoice::Auto).await.unwrap();
    assert_eq!(calls(&events).len(), 2);
    assert_eq!(server.seen.lock().unwrap().len(), 2);
    assert!(
        started.elapsed() >= Duration::from_millis(50),
        "waited the server's retry-after"
    );

    // A wait longer than the policy allows is returned, not slept through.
    let server = serve(vec![Canned::json(429, "busy").header("retry-after", "120")]).await;
    let client = OpenAiChatClient::new("m")
        .base_url(&server.base_url)
        .retry(fast_retries());
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert_eq!(err.retry_after(), Some(Duration::from_secs(120)));
    assert!(matches!(err.kind(), ModelErrorKind::RateLimited { body, .. } if body == "busy"));
    assert_eq!(server.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn server_errors_are_retried_client_errors_are_not() {
    let server = serve(vec![Canned::json(503, "down")]).await;
    let client = OpenAiChatClient::new("m")
        .base_url(&server.base_url)
        .retry(fast_retries());
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert_eq!(
        err.kind(),
        &ModelErrorKind::Http {
            status: 503,
            body: "down".into()
        }
    );
    assert_eq!(
        server.seen.lock().unwrap().len(),
        3,
        "first try and two retries"
    );

    let server = serve(vec![Canned::json(
        400,
        r#"{"error":{"message":"bad tool schema"}}"#,
    )])
    .await;
    let client = OpenAiChatClient::new("m")
        .base_url(&server.base_url)
        .retry(fast_retries());
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Http { status: 400, body } if body.contains("bad tool schema"))
    );
    assert!(!err.is_retryable());
    assert_eq!(server.seen.lock().unwrap().len(), 1);
}

#[tokio::test]
async fn connection_refused_is_a_connect_error_after_retries() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let client = OpenAiChatClient::new("m")
        .base_url(format!("http://127.0.0.1:{port}/v1"))
        .retry(fast_retries());
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(matches!(err.kind(), ModelErrorKind::Connect(_)), "{err:?}");
    assert!(err.is_retryable());
    let err = collect(
        &OpenAiChatClient::new("m").base_url("ftp://x"),
        ToolChoice::Auto,
    )
    .await
    .unwrap_err();
    assert!(matches!(err.kind(), ModelErrorKind::Config(m) if m.contains("http://")));
}

#[tokio::test]
async fn responses_events_yield_the_call_at_arguments_done() {
    let server = serve(vec![Canned::sse(recording("responses_call.sse"))]).await;
    let client = OpenAiResponsesClient::new("gpt-5")
        .base_url(&server.base_url)
        .api_key("k");
    let events = collect(&client, ToolChoice::Tool("grep_content".into()))
        .await
        .unwrap();
    // `response.created` names the response (this recording gives no model).
    assert_eq!(
        events[0],
        StreamEvent::ResponseInfo {
            id: Some("resp_1".into()),
            model: None
        }
    );
    assert_eq!(text(&events), "Let me look.");
    let calls = calls(&events);
    assert_eq!(calls.len(), 1, "output_item.done does not repeat the call");
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_r1", "grep_content")
    );
    assert_eq!(
        calls[0].arguments,
        ToolArgs::Text("{\"pattern\":\"TODO\"}".into())
    );
    assert!(events.contains(&StreamEvent::Usage(Usage {
        input_tokens: 120,
        output_tokens: 18
    })));
    let seen = server.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/v1/responses");
    assert_eq!(seen.body["instructions"], "be brief");
    assert_eq!(
        seen.body["input"][0],
        json!({"role": "user", "content": "go"})
    );
    assert_eq!(seen.body["store"], false);
}

#[tokio::test]
async fn responses_truncated_and_failed() {
    let server = serve(vec![Canned::sse(recording("responses_truncated.sse"))]).await;
    let client = OpenAiResponsesClient::new("m").base_url(&server.base_url);
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Truncated { call: Some(c), .. } if c == "`grep_content` (id call_r1)"),
        "{err:?}"
    );

    let server = serve(vec![Canned::sse(recording("responses_failed.sse"))]).await;
    let client = OpenAiResponsesClient::new("m").base_url(&server.base_url);
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert_eq!(
        err.kind(),
        &ModelErrorKind::Provider("server_error: The model failed to generate a response.".into())
    );
}

#[tokio::test]
async fn anthropic_input_json_deltas_and_an_empty_input() {
    let server = serve(vec![Canned::sse(recording("anthropic_tools.sse"))]).await;
    let client = AnthropicClient::new("claude-sonnet-4-5")
        .base_url(&server.base_url)
        .api_key("sk-ant");
    let events = collect(&client, ToolChoice::Required).await.unwrap();
    assert_eq!(text(&events), "Checking the clock and the file.");
    assert_eq!(
        events[0],
        StreamEvent::ResponseInfo {
            id: Some("msg_01".into()),
            model: Some("claude-sonnet-4-5".into())
        },
        "from `message_start`"
    );
    let calls = calls(&events);
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0].arguments,
        ToolArgs::Value(json!({"path": "notes.md", "limit": 20}))
    );
    assert_eq!(
        (calls[1].name.as_str(), &calls[1].arguments),
        ("clock", &ToolArgs::Value(json!({})))
    );
    let usage: u64 = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Usage(u) => Some(u.total()),
            _ => None,
        })
        .sum();
    assert_eq!(usage, 472 + 2 + 89);
    assert!(events.contains(&StreamEvent::Finished {
        stop_reason: Some("tool_use".into())
    }));
    let seen = server.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/v1/messages");
    assert_eq!(seen.header("x-api-key"), Some("sk-ant"));
    assert_eq!(seen.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(seen.body["tool_choice"], json!({"type": "any"}));
    assert_eq!(seen.body["system"], "be brief");
    assert_eq!(seen.body["max_tokens"], 4096);
}

#[tokio::test]
async fn anthropic_server_tool_search_sends_the_beta_header_and_plain_tools_do_not() {
    let server = serve(vec![
        Canned::sse(recording("anthropic_tools.sse")),
        Canned::sse(recording("anthropic_tools.sse")),
    ])
    .await;
    let client = AnthropicClient::new("claude-sonnet-4-5")
        .base_url(&server.base_url)
        .api_key("sk-ant");
    let messages = vec![Message::user("go")];
    let choice = ToolChoice::Auto;
    let with_search = json!([
        {"name": "github__create_issue", "description": "d", "input_schema": {"type": "object"}, "defer_loading": true},
        {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    ]);
    let plain = json!([{"name": "clock", "description": "d", "input_schema": {"type": "object"}}]);
    for tools in [&with_search, &plain] {
        let stream = client
            .send(ModelRequest::new(&messages, tools, &choice))
            .await
            .unwrap();
        let _ = stream.collect::<Vec<_>>().await;
    }
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0].header("anthropic-beta"),
        Some(tool_agent::TOOL_SEARCH_BETA)
    );
    assert_eq!(seen[0].body["tools"], with_search);
    assert_eq!(seen[1].header("anthropic-beta"), None);
}

/// "Tool use examples": a tool with `input_examples` needs the same beta;
/// the built-ins' examples (their `# Examples` sections) reach the request.
#[tokio::test]
async fn anthropic_input_examples_send_the_beta_header() {
    let server = serve(vec![Canned::sse(recording("anthropic_tools.sse"))]).await;
    let client = AnthropicClient::new("claude-sonnet-4-5")
        .base_url(&server.base_url)
        .api_key("sk-ant");
    let messages = vec![Message::user("go")];
    let choice = ToolChoice::Auto;
    let tools = tool_builtins::registry()
        .schemas_in(tool_core::Format::Anthropic { strict: false })
        .unwrap()
        .as_value()
        .clone();
    let read = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "read_file")
        .unwrap();
    assert_eq!(
        read["input_examples"][0],
        json!({"file_path": "src/main.rs"})
    );
    let stream = client
        .send(ModelRequest::new(&messages, &tools, &choice))
        .await
        .unwrap();
    let _ = stream.collect::<Vec<_>>().await;
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(
        seen[0].header("anthropic-beta"),
        Some(tool_agent::TOOL_SEARCH_BETA)
    );
}

#[tokio::test]
async fn anthropic_truncated_bad_json_overloaded_and_no_key() {
    let server = serve(vec![Canned::sse(recording("anthropic_truncated.sse"))]).await;
    let client = AnthropicClient::new("m")
        .base_url(&server.base_url)
        .api_key("k");
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Truncated { call: Some(c), .. } if c == "`read_file` (id toolu_01)"),
        "{err:?}"
    );

    let server = serve(vec![Canned::sse(recording("anthropic_bad_json.sse"))]).await;
    let client = AnthropicClient::new("m")
        .base_url(&server.base_url)
        .api_key("k");
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("the input of tool call `read_file` (id toolu_01) is not JSON"),
        "{err}"
    );

    let server = serve(vec![Canned::sse(recording("anthropic_overloaded.sse"))]).await;
    let client = AnthropicClient::new("m")
        .base_url(&server.base_url)
        .api_key("k");
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert_eq!(
        err.kind(),
        &ModelErrorKind::Provider("overloaded_error: Overloaded".into())
    );

    let client = AnthropicClient::new("m").base_url(&server.base_url);
    if std::env::var_os("ANTHROPIC_API_KEY").is_none() {
        let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
        assert!(matches!(err.kind(), ModelErrorKind::Config(m) if m.contains("ANTHROPIC_API_KEY")));
    }
}

async fn gemini_events(name: &str) -> Vec<Result<StreamEvent, ModelError>> {
    let bytes = bytes::Bytes::from(recording(name));
    // Split into 7-byte chunks: a call must not depend on chunk boundaries.
    let chunks: Vec<Result<bytes::Bytes, std::io::Error>> = bytes
        .chunks(7)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect();
    from_sse(futures_util::stream::iter(chunks), GeminiAssembler::new())
        .collect()
        .await
}

#[tokio::test]
async fn gemini_whole_calls_per_chunk() {
    let events: Vec<StreamEvent> = gemini_events("gemini.sse")
        .await
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(text(&events), "I'll check both.");
    // `modelVersion` of the first chunk; this recording has no `responseId`.
    assert_eq!(
        events[0],
        StreamEvent::ResponseInfo {
            id: None,
            model: Some("gemini-2.5-flash".into())
        }
    );
    let calls = calls(&events);
    assert_eq!(calls.len(), 2);
    assert_ne!(
        calls[0].id, calls[1].id,
        "generated ids count across the answer"
    );
    assert!(calls[0].generated_id);
    assert_eq!(
        calls[1].arguments,
        ToolArgs::Value(json!({"path": "b.txt"}))
    );
    assert!(events.contains(&StreamEvent::Usage(Usage {
        input_tokens: 40,
        output_tokens: 21
    })));
    let truncated = gemini_events("gemini_truncated.sse").await;
    let err = truncated.last().unwrap().as_ref().unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Truncated { call: None, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_streamed_request_answered_with_html_says_it_is_not_an_event_stream() {
    let page = Canned {
        status: 200,
        headers: vec![("content-type".into(), "text/html; charset=utf-8".into())],
        body: b"<html><body>Welcome to the proxy</body></html>".to_vec(),
        short_by: 0,
    };
    let server = serve(vec![page]).await;
    let client = OpenAiChatClient::new("m").base_url(&server.base_url);
    let err = collect(&client, ToolChoice::Auto).await.unwrap_err();
    assert!(
        matches!(err.kind(), ModelErrorKind::Malformed(_)),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("content type `text/html; charset=utf-8`, not an event stream"),
        "{err}"
    );
}

/// `extra_body` fields reach the server on every request, with and without
/// text tool calls: what `body()` shows is what `send` posts (the fields
/// were once dropped on the way out).
#[tokio::test]
async fn extra_body_fields_are_sent_as_body_shows_them() {
    for text in [false, true] {
        let server = serve(vec![Canned::sse(recording("openai_chat_parallel.sse"))]).await;
        let mut extra = serde_json::Map::new();
        extra.insert("grammar".into(), json!("root ::= \"x\""));
        extra.insert("seed".into(), json!(7));
        let mut client = OpenAiChatClient::new("m").base_url(&server.base_url);
        if text {
            client = client.text_tool_calls("hermes").unwrap();
        }
        let client = client.extra_body(extra);
        collect(&client, ToolChoice::Auto).await.unwrap();
        let seen = server.seen.lock().unwrap()[0].body.clone();
        assert_eq!(seen["grammar"], "root ::= \"x\"", "text={text}: {seen}");
        assert_eq!(seen["seed"], 7, "text={text}: {seen}");
        assert_eq!(seen.get("tools").is_none(), text, "text={text}: {seen}");
    }
}
