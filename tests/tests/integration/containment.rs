//! Panic, timeout and cancellation containment; return kinds.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use std::time::Duration;

use serde::Serialize;
use serde_json::{Value, json};
use tool_core::{CancellationToken, ErrorKind, ToolContext, ToolRegistry, ToolResult, tool};

/// Panics in async code.
#[tool]
async fn boom_async(msg: String) -> String {
    tokio::task::yield_now().await;
    panic!("secret detail: {msg}");
}

/// Panics in sync code.
#[tool]
fn boom_sync(msg: String) -> String {
    panic!("sync detail: {msg}");
}

/// Sleeps longer than its own timeout.
#[tool(timeout = "50ms")]
async fn slow_attr() -> String {
    tokio::time::sleep(Duration::from_secs(30)).await;
    "late".into()
}

/// Sleeps for the given milliseconds.
#[tool]
async fn sleepy(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "awake".into()
}

/// A structured answer.
#[derive(Serialize)]
pub(crate) struct Answer {
    pub n: u32,
    pub words: Vec<&'static str>,
}

/// Returns a struct.
#[tool]
fn ret_struct() -> Answer {
    Answer {
        n: 2,
        words: vec!["a", "b"],
    }
}

/// Returns unit.
#[tool]
async fn ret_unit() {}

/// Returns a Result with an io error.
#[tool]
fn ret_io(fail: bool) -> std::io::Result<String> {
    if fail {
        Err(std::io::Error::other("disk on fire"))
    } else {
        Ok("fine".into())
    }
}

/// Returns a Result of a struct.
#[tool]
async fn ret_result_struct(fail: bool) -> Result<Answer, String> {
    if fail {
        Err("no answer".into())
    } else {
        Ok(Answer {
            n: 1,
            words: vec![],
        })
    }
}

/// Returns a full `ToolResult`.
#[tool]
fn ret_tool_result() -> ToolResult {
    ToolResult::ok("full")
        .with_title("T")
        .with_long_term_memory("mem")
        .output_once()
}

async fn run(name: &str, args: Value, ctx: &ToolContext) -> ToolResult {
    ToolRegistry::global().execute(name, args, ctx).await
}

#[tokio::test]
async fn panics_become_error_results_without_the_payload() {
    for name in ["boom_async", "boom_sync"] {
        let r = run(name, json!({"msg": "xyz"}), &ToolContext::new()).await;
        let e = r.error.unwrap();
        assert_eq!(e.kind, ErrorKind::Panicked);
        assert!(e.message.contains(&format!("`{name}`")), "{}", e.message);
        assert!(
            !e.message.contains("xyz"),
            "panic payload leaked: {}",
            e.message
        );
    }
    // The registry still works after a panic.
    assert_eq!(
        run("sleepy", json!({"ms": 1}), &ToolContext::new())
            .await
            .output,
        "awake"
    );
}

#[tokio::test]
async fn attribute_timeout_drops_the_future() {
    let started = std::time::Instant::now();
    let r = run("slow_attr", json!({}), &ToolContext::new()).await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(e.message.contains("within 50ms "), "{}", e.message);
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test(start_paused = true)]
async fn context_timeout_then_registry_default() {
    let ctx = ToolContext::new().with_timeout(Duration::from_millis(200));
    let r = run("sleepy", json!({"ms": 1000}), &ctx).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Timeout);
    let r = run("sleepy", json!({"ms": 100}), &ctx).await;
    assert_eq!(r.output, "awake");

    // The registry default applies when neither tool nor context sets one.
    let registry = ToolRegistry::from_inventory()
        .unwrap()
        .with_default_timeout(Duration::from_secs(1));
    let r = registry
        .execute("sleepy", json!({"ms": 5000}), &ToolContext::new())
        .await;
    let e = r.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Timeout);
    assert!(e.message.contains("within 1s "), "{}", e.message);
    let r = ToolRegistry::global()
        .execute("sleepy", json!({"ms": 119_000}), &ToolContext::new())
        .await;
    assert_eq!(
        r.output, "awake",
        "the 120 s default lets a 119 s call finish"
    );
}

#[tokio::test]
async fn cancellation_token_stops_the_call() {
    let token = CancellationToken::new();
    let ctx = ToolContext::new().with_cancellation_token(token.clone());
    let canceller = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(20)).await;
        token.cancel();
    });
    let r = run("sleepy", json!({"ms": 30_000}), &ctx).await;
    assert_eq!(r.error.unwrap().kind, ErrorKind::Cancelled);
    canceller.await.unwrap();
}

#[tokio::test]
async fn return_kinds_convert() {
    let ctx = ToolContext::new();
    let r = run("ret_struct", json!({}), &ctx).await;
    assert_eq!(r.output, r#"{"n":2,"words":["a","b"]}"#);
    assert_eq!(
        r.metadata["structured"],
        json!({"n": 2, "words": ["a", "b"]})
    );
    let r = run("ret_unit", json!({}), &ctx).await;
    assert!(r.is_ok() && r.output.is_empty());
    assert_eq!(
        run("ret_io", json!({"fail": false}), &ctx).await.output,
        "fine"
    );
    let e = run("ret_io", json!({"fail": true}), &ctx)
        .await
        .error
        .unwrap();
    assert_eq!(
        (e.kind, e.message.as_str()),
        (ErrorKind::Failed, "disk on fire")
    );
    assert_eq!(
        run("ret_result_struct", json!({"fail": false}), &ctx)
            .await
            .output,
        r#"{"n":1,"words":[]}"#
    );
    assert_eq!(
        run("ret_result_struct", json!({"fail": true}), &ctx)
            .await
            .error
            .unwrap()
            .message,
        "no answer"
    );
    let r = run("ret_tool_result", json!({}), &ctx).await;
    assert_eq!(
        (
            r.output.as_str(),
            r.title.as_deref(),
            r.include_output_only_once
        ),
        ("full", Some("T"), true)
    );
}

#[tokio::test]
async fn no_input_makes_execute_panic() {
    // A deterministic sweep of hostile argument texts and values over every tool.
    let texts = [
        "",
        " ",
        "null",
        "[]",
        "\"{}\"",
        "{",
        "}",
        "{\"a\":",
        "1e999",
        "{\"msg\": \"\\ud800\"}",
        "\u{0}",
        "{\"ms\": 18446744073709551616}",
        "{\"ms\": -1}",
        "{\"ms\": 1.5}",
        "{\"fail\": \"true\"}",
    ];
    let values = [
        json!({"msg": null}),
        json!({"ms": {"nested": [1, 2, {"deep": true}]}}),
        json!({"fail": [true]}),
        json!({"": 1}),
        json!({"query": "q".repeat(100_000)}),
    ];
    let ctx = ToolContext::new().with_timeout(Duration::from_millis(200));
    for name in ToolRegistry::global().names() {
        if name.starts_with("boom") {
            continue;
        }
        for t in texts {
            let r = ToolRegistry::global().execute(name, t, &ctx).await;
            let _ = r.model_text();
        }
        for v in &values {
            let r = ToolRegistry::global().execute(name, v.clone(), &ctx).await;
            let _ = r.model_text();
        }
    }
}
