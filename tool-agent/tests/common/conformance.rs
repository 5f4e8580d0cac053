//! The shared recorded-stream checks every model provider passes (the
//! recipe "A new model provider" in `docs/ARCHITECTURE.md`): give
//! [`check`] a provider type and its [`Recorded`] answers, and it runs
//!
//! 1. a streamed answer with tool calls: events assembled, every call with
//!    a name and arguments that parse, `Finished` after them (only usage
//!    may follow);
//! 2. the same kind of stream cut off: a `Truncated` error (the shared
//!    `finish`);
//! 3. a whole (non-streamed) answer after a `503`: retried once by the
//!    shared transport, the call read;
//! 4. an agent run: the streamed calls executed against real tools (one per
//!    called name, answering `ok`), the results sent back, and the text-only
//!    answer ending the run.
//!
//! Every built-in provider runs it (`tests/conformance.rs`), and so does the
//! toy provider written from the recipe (`tests/provider_recipe.rs`).

use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tool_agent::provider::{HttpClient, Provider};
use tool_agent::{
    Agent, Message, ModelClient, ModelError, ModelErrorKind, ModelRequest, RetryPolicy, StopReason,
    StreamEvent, ToolChoice,
};
use tool_core::format::ToolCall;
use tool_core::{Tool, ToolArgs, ToolRegistry, ToolResult, ToolSpec};

use super::{Canned, serve};

/// A provider's recorded answers, in its own wire format.
pub struct Recorded {
    /// A streamed answer holding at least one tool call.
    pub calls: Vec<u8>,
    /// A streamed answer cut off before its end marker.
    pub truncated: Vec<u8>,
    /// A whole (non-streamed) answer holding at least one tool call.
    pub whole: String,
    /// A streamed answer of text only, and that text.
    pub answer: Vec<u8>,
    /// The text `answer` carries.
    pub answer_text: &'static str,
}

fn client<P: Provider>(model: &str, base: &str, streaming: bool) -> HttpClient<P> {
    HttpClient::<P>::new(model)
        .base_url(base)
        .api_key("k")
        .streaming(streaming)
        .retry(RetryPolicy {
            max_retries: 1,
            base_delay: std::time::Duration::from_millis(5),
            max_delay: std::time::Duration::from_secs(1),
        })
}

async fn collect(client: &dyn ModelClient) -> Result<Vec<StreamEvent>, ModelError> {
    let messages = vec![Message::user("what time is it?")];
    let tools = json!([]);
    let request = ModelRequest::new(&messages, &tools, &ToolChoice::Auto);
    let stream = client.send(request).await?;
    stream.collect::<Vec<_>>().await.into_iter().collect()
}

fn calls(events: &[StreamEvent]) -> Vec<ToolCall> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCall(c) => Some(c.clone()),
            _ => None,
        })
        .collect()
}

fn arguments_parse(call: &ToolCall) -> bool {
    match &call.arguments {
        ToolArgs::Text(t) => serde_json::from_str::<Value>(t).is_ok_and(|v| v.is_object()),
        ToolArgs::Value(v) => v.is_object(),
    }
}

/// Runs the four checks on provider `P` (see the module docs); panics with
/// the provider's name and the check that failed.
pub async fn check<P: Provider>(name: &str, model: &str, rec: Recorded) {
    // 1. A streamed answer with calls.
    let server = serve(vec![Canned::sse(rec.calls.clone())]).await;
    let events = collect(&client::<P>(model, &server.base_url, true))
        .await
        .unwrap_or_else(|e| panic!("{name}: the recorded stream failed: {e}"));
    let streamed = calls(&events);
    assert!(!streamed.is_empty(), "{name}: no call in {events:?}");
    for c in &streamed {
        assert!(!c.name.is_empty() && arguments_parse(c), "{name}: {c:?}");
    }
    // `Finished` closes the answer (a usage report may follow it).
    let finished = events
        .iter()
        .position(|e| matches!(e, StreamEvent::Finished { .. }))
        .unwrap_or_else(|| panic!("{name}: no Finished in {events:?}"));
    assert!(
        events[finished..]
            .iter()
            .all(|e| matches!(e, StreamEvent::Finished { .. } | StreamEvent::Usage(_))),
        "{name}: events after Finished: {events:?}"
    );
    assert_eq!(server.seen.lock().unwrap().len(), 1);

    // 2. Cut off: the shared `finish` names it truncated.
    let server = serve(vec![Canned::sse(rec.truncated)]).await;
    let err = collect(&client::<P>(model, &server.base_url, true))
        .await
        .expect_err("a truncated stream must fail");
    assert!(
        matches!(err.kind(), ModelErrorKind::Truncated { .. }),
        "{name}: {err:?}"
    );

    // 3. A whole answer, after a 503 the shared transport retries.
    let server = serve(vec![
        Canned::json(503, r#"{"error": "busy"}"#),
        Canned::json(200, &rec.whole),
    ])
    .await;
    let events = collect(&client::<P>(model, &server.base_url, false))
        .await
        .unwrap_or_else(|e| panic!("{name}: the whole answer failed: {e}"));
    let whole = calls(&events);
    assert!(!whole.is_empty(), "{name}: no call in {events:?}");
    assert!(whole.iter().all(arguments_parse), "{name}: {whole:?}");
    assert_eq!(
        server.seen.lock().unwrap().len(),
        2,
        "{name}: the 503 was not retried"
    );

    // 4. An agent run executing real tools.
    let server = serve(vec![Canned::sse(rec.calls), Canned::sse(rec.answer)]).await;
    let mut tools = ToolRegistry::new();
    let mut names: Vec<String> = streamed.iter().map(|c| c.name.clone()).collect();
    names.sort_unstable();
    names.dedup();
    for tool in &names {
        let spec = ToolSpec::new(
            tool.clone(),
            "A tool of the recording.",
            json!({"type": "object", "additionalProperties": true}),
        );
        tools
            .register(
                Tool::new(spec, |_: Map<String, Value>, _| async {
                    ToolResult::ok("ok")
                })
                .unwrap(),
            )
            .unwrap();
    }
    let out = Agent::new(client::<P>(model, &server.base_url, true), tools)
        .run("what time is it?")
        .await
        .unwrap_or_else(|e| panic!("{name}: the agent run failed: {e}"));
    assert_eq!(out.stop, StopReason::Answered, "{name}");
    assert_eq!((out.turns, out.tool_calls), (2, streamed.len()), "{name}");
    assert_eq!(out.text, rec.answer_text, "{name}");
    let seen = server.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 2, "{name}");
    let sent = seen[1].body.to_string();
    assert!(
        sent.contains("ok"),
        "{name}: the tool results were not sent back: {sent}"
    );
}
