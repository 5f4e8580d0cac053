//! The agent loop with a scripted model: execution order, parallel
//! read-only calls, the two-layer memory in later requests, limits, events.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_agent::{
    Agent, AgentError, AgentEvent, Message, ModelError, ModelErrorKind, OpenAiChatClient,
    ScriptedClient, ScriptedTurn, StopReason, StreamEvent, ToolChoice, Usage,
};
use tool_core::format::ToolCall;
use tool_core::{CancellationToken, Tool, ToolRegistry, ToolResult, ToolSpec};

fn schema() -> Value {
    json!({"type": "object", "properties": {"ms": {"type": "integer"}}})
}

/// `slow_read` (read-only, concurrency-safe: sleeps `ms`), `write` (records order), `page` (output once).
fn tools(log: &Arc<Mutex<Vec<String>>>) -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let mut spec = ToolSpec::new("slow_read", "Sleeps, then answers.", schema()).read_only();
    spec.flags.concurrency_safe = true;
    r.register(
        Tool::new(spec, |args: Map<String, Value>, _| async move {
            let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
            tokio::time::sleep(Duration::from_millis(ms)).await;
            ToolResult::ok(format!("slept {ms}"))
        })
        .unwrap(),
    )
    .unwrap();
    let w = log.clone();
    r.register(
        Tool::new(
            ToolSpec::new("write", "Writes.", schema()),
            move |_: Map<String, Value>, ctx: tool_core::ToolContext| {
                let w = w.clone();
                async move {
                    w.lock()
                        .unwrap()
                        .push(format!("write trace={}", ctx.trace_id().unwrap_or("")));
                    ToolResult::ok("written")
                }
            },
        )
        .unwrap(),
    )
    .unwrap();
    r.register(
        Tool::new(
            ToolSpec::new("page", "A long page.", schema()).read_only(),
            |_: Map<String, Value>, _| async {
                ToolResult::ok("P".repeat(5000))
                    .with_long_term_memory("read the page (5000 chars)")
                    .output_once()
            },
        )
        .unwrap(),
    )
    .unwrap();
    r
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

#[tokio::test]
async fn read_only_calls_run_in_parallel_writes_in_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([
            call("a", "slow_read", json!({"ms": 300})),
            call("b", "slow_read", json!({"ms": 300})),
            call("c", "write", json!({})),
        ]),
        ScriptedTurn::text("done"),
    ]));
    let events = Arc::new(Mutex::new(Vec::new()));
    let ev = events.clone();
    let started = Instant::now();
    let out = Agent::new(model.clone(), tools(&log))
        .trace_id("run-1")
        .on_event(move |e| {
            let line = match e {
                AgentEvent::RequestSent { turn, .. } => format!("request {turn}"),
                AgentEvent::TextDelta { text, .. } => format!("text {text}"),
                AgentEvent::CallAssembled { call, .. } => format!("call {}", call.id),
                AgentEvent::CallResult { call, result, .. } => {
                    format!("result {} {}", call.id, result.output)
                }
                AgentEvent::TurnDone { turn, calls, .. } => format!("turn {turn} {calls}"),
                _ => "other".to_owned(),
            };
            ev.lock().unwrap().push(line);
        })
        .run("go")
        .await
        .unwrap();
    let elapsed = started.elapsed();
    assert!(
        elapsed < Duration::from_millis(550),
        "the two 300 ms reads overlapped: {elapsed:?}"
    );
    assert_eq!(out.stop, StopReason::Answered);
    assert_eq!((out.turns, out.tool_calls), (2, 3));
    assert_eq!(log.lock().unwrap().as_slice(), ["write trace=run-1"]);
    assert_eq!(
        events.lock().unwrap().as_slice(),
        [
            "request 1",
            "call a",
            "call b",
            "call c",
            "result a slept 300",
            "result b slept 300",
            "result c written",
            "turn 1 3",
            "request 2",
            "text done",
            "turn 2 0",
        ]
    );
    let seen = model.seen();
    assert_eq!(seen[1].messages, 3, "task, assistant calls, tool results");
    assert_eq!(seen[0].tool_names, ["page", "slow_read", "write"]);
}

#[tokio::test]
async fn later_requests_carry_the_long_term_memory_of_output_once_results() {
    // The OpenAI body shows what the provider gets on each turn.
    let log = Arc::new(Mutex::new(Vec::new()));
    let registry = tools(&log);
    let page = registry
        .execute("page", json!({}), &tool_core::ToolContext::new())
        .await;
    let messages = vec![
        Message::user("read"),
        Message::Assistant {
            content: String::new(),
            tool_calls: vec![call("p1", "page", json!({}))],
        },
        Message::Tool {
            turn: 1,
            results: vec![tool_agent::ToolOutcome {
                call: call("p1", "page", json!({})),
                result: page,
            }],
        },
    ];
    let tools = json!([]);
    let choice = ToolChoice::Auto;
    let client = OpenAiChatClient::new("m").base_url("http://127.0.0.1:9/v1");
    let on_turn = |turn| {
        let request = tool_agent::ModelRequest::new(&messages, &tools, &choice).with_turn(turn);
        client.body(&request)["messages"][2]["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    // Made on turn 1, answered by request 2: in full there, short after.
    assert_eq!(
        on_turn(2).len(),
        5000,
        "in full in the request that answers it"
    );
    assert_eq!(on_turn(3), "read the page (5000 chars)");
    // The assistant's calls are echoed with their arguments as JSON text.
    let request = tool_agent::ModelRequest::new(&messages, &tools, &choice).with_turn(2);
    assert_eq!(
        client.body(&request)["messages"][1]["tool_calls"][0]["function"]["arguments"],
        "{}"
    );
}

#[tokio::test]
async fn limits_end_the_run() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let looping = || ScriptedTurn::calls([call("x", "write", json!({}))]);
    let model = ScriptedClient::new([looping(), looping(), looping(), looping()]);
    let out = Agent::new(model, tools(&log))
        .max_turns(3)
        .run("go")
        .await
        .unwrap();
    assert_eq!(
        (out.stop, out.turns, out.tool_calls),
        (StopReason::MaxTurns, 3, 3)
    );

    let with_usage = || {
        ScriptedTurn::Events(vec![
            StreamEvent::ToolCall(call("x", "write", json!({}))),
            StreamEvent::Usage(Usage {
                input_tokens: 60,
                output_tokens: 10,
            }),
        ])
    };
    let model = ScriptedClient::new([with_usage(), with_usage(), with_usage()]);
    let out = Agent::new(model, tools(&log))
        .max_total_tokens(100)
        .run("go")
        .await
        .unwrap();
    assert_eq!(
        (out.stop, out.turns, out.usage.total()),
        (StopReason::TokenLimit, 2, 140)
    );

    let model = ScriptedClient::new([ScriptedTurn::calls([call(
        "s",
        "slow_read",
        json!({"ms": 2000}),
    )])]);
    let started = Instant::now();
    let token = CancellationToken::new();
    let canceller = token.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        canceller.cancel();
    });
    let out = Agent::new(model, tools(&log))
        .cancellation(token)
        .run("go")
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Cancelled);
    assert!(
        started.elapsed() < Duration::from_millis(1500),
        "the sleeping tool saw the cancellation"
    );
}

#[tokio::test]
async fn time_limit_stops_a_slow_model() {
    // A server that accepts and never answers.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = listener.accept().await {
            held.push(s);
        }
    });
    let client = OpenAiChatClient::new("m").base_url(format!("http://{addr}/v1"));
    let started = Instant::now();
    let out = Agent::new(client, ToolRegistry::new())
        .time_limit(Duration::from_millis(200))
        .run("hi")
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::TimeLimit);
    assert!(started.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn model_errors_carry_the_turn_and_the_conversation() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = ScriptedClient::new([
        ScriptedTurn::calls([call("x", "write", json!({}))]),
        ScriptedTurn::Fail(ModelError::new(ModelErrorKind::Http {
            status: 400,
            body: "bad".into(),
        })),
    ]);
    let err = Agent::new(model, tools(&log)).run("go").await.unwrap_err();
    match err {
        AgentError::Model {
            turn,
            source,
            messages,
        } => {
            assert_eq!(turn, 2);
            assert_eq!(source.to_string(), "HTTP 400: bad");
            assert_eq!(messages.len(), 3);
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn first_tool_choice_applies_to_the_first_turn_only_and_errors_reach_the_model() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([
            call("u", "no_such_tool", json!({})),
            ToolCall::new("w", "slow_read", "{\"ms\": "),
        ]),
        ScriptedTurn::text("ok"),
    ]));
    let out = Agent::new(model.clone(), tools(&log))
        .first_tool_choice(ToolChoice::Tool("write".into()))
        .run("go")
        .await
        .unwrap();
    let seen = model.seen();
    assert_eq!(seen[0].tool_choice, ToolChoice::Tool("write".into()));
    assert_eq!(seen[1].tool_choice, ToolChoice::Auto);
    assert_eq!(out.tool_errors.len(), 2, "{:?}", out.tool_errors);
    assert!(
        out.tool_errors[0].starts_with("no_such_tool: "),
        "{:?}",
        out.tool_errors
    );
    let Some(Message::Tool { results, .. }) = seen[1].last.clone() else {
        panic!()
    };
    assert!(
        results[1].result.is_error(),
        "a bad argument is an error result the model sees"
    );
}

#[tokio::test]
async fn tools_loaded_by_tool_search_join_the_next_request() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let view = tool_core::RegistryView::from(tools(&log)).defer(["*"]);
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([call("s", "tool_search", json!({"query": "select:write"}))]),
        ScriptedTurn::text("loaded"),
    ]));
    let out = Agent::new(model.clone(), view)
        .trace_id("t-search")
        .run("go")
        .await
        .unwrap();
    assert_eq!(out.stop, StopReason::Answered);
    let seen = model.seen();
    assert_eq!(seen[0].tool_names, ["tool_search"]);
    assert_eq!(seen[1].tool_names, ["tool_search", "write"]);
}

/// Regression (issue 25, R1): the loop now hands calls to
/// `ToolRegistry::execute_calls`, so a call whose text needed a repair (a raw
/// tab inside a string) also gets strict mode's "`null` means absent"; the
/// loop's own argument preparation skipped that for any text that was not
/// already valid JSON, and the tool saw `"n": null`. The repair's note stays.
#[tokio::test]
async fn repaired_arguments_are_normalised_like_every_provider_call() {
    let mut r = ToolRegistry::new();
    let spec = ToolSpec::new(
        "keys",
        "Lists the argument keys.",
        json!({"type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "integer"}}, "required": ["text"]}),
    );
    r.register(
        Tool::new(spec, |args: Map<String, Value>, _| async move {
            let keys: Vec<&str> = args.keys().map(String::as_str).collect();
            ToolResult::ok(keys.join(","))
        })
        .unwrap(),
    )
    .unwrap();
    let model = ScriptedClient::new([
        ScriptedTurn::calls([
            ToolCall::new("c1", "keys", "{\"text\": \"a\tb\", \"n\": null}"),
            ToolCall::new("c2", "keys", "{\"text\": \"ab\", \"n\": null}"),
        ]),
        ScriptedTurn::text("done"),
    ]);
    let out = Agent::new(model, r).run("go").await.unwrap();
    let Message::Tool { results, .. } = &out.messages[2] else {
        panic!("{:?}", out.messages)
    };
    assert_eq!(results[0].result.output, "text");
    assert_eq!(results[1].result.output, "text");
    assert_eq!(
        results[0].result.metadata["argument_repairs"][0]["kind"],
        "control_characters_escaped"
    );
    assert_eq!(
        results[0].result.notes.len(),
        1,
        "{:?}",
        results[0].result.notes
    );
    assert!(results[1].result.metadata.get("argument_repairs").is_none());
    assert!(results[1].result.notes.is_empty());
}

/// `open_tool` (anywhere) and `shop_tool` (only on `https://shop.example/*`).
fn scoped_tools() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    let open = ToolSpec::new("open_tool", "Runs anywhere.", schema()).read_only();
    r.register(
        Tool::new(open, |_: Map<String, Value>, _| async {
            ToolResult::ok("open")
        })
        .unwrap(),
    )
    .unwrap();
    let mut shop = ToolSpec::new("shop_tool", "Runs on the shop's pages.", schema()).read_only();
    shop.url_patterns = vec!["https://shop.example/*".to_owned()];
    r.register(
        Tool::new(shop, |_: Map<String, Value>, _| async {
            ToolResult::ok("shop")
        })
        .unwrap(),
    )
    .unwrap();
    r
}

#[tokio::test]
async fn url_scoped_tools_are_offered_only_on_their_pages() {
    // No page: the scoped tool is neither offered nor run, and the unknown-tool
    // answer does not name it.
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([call("s", "shop_tool", json!({}))]),
        ScriptedTurn::text("done"),
    ]));
    let out = Agent::new(model.clone(), scoped_tools())
        .run("go")
        .await
        .unwrap();
    let seen = model.seen();
    assert_eq!(seen[0].tool_names, ["open_tool"]);
    assert_eq!(seen[1].tool_names, ["open_tool"]);
    assert_eq!(
        out.tool_errors,
        ["shop_tool: Unknown tool `shop_tool`. Did you mean `open_tool`?"]
    );

    // On a matching page it is offered and runs.
    let model = Arc::new(ScriptedClient::new([
        ScriptedTurn::calls([call("s", "shop_tool", json!({}))]),
        ScriptedTurn::text("done"),
    ]));
    let agent = Agent::new(model.clone(), scoped_tools())
        .context(tool_core::ToolContext::new().with_page_url("https://shop.example/cart"));
    let out = agent.run("go").await.unwrap();
    assert_eq!(model.seen()[0].tool_names, ["open_tool", "shop_tool"]);
    assert!(out.tool_errors.is_empty(), "{:?}", out.tool_errors);

    // Another page: as with no page.
    assert_eq!(
        Agent::new(Arc::new(ScriptedClient::new([])), scoped_tools())
            .offered(Some("https://evil.example/"))
            .names(),
        ["open_tool"]
    );
}
