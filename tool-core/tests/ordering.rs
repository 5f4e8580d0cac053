//! Tool ordering for prompts (000 高级特性 5, 优化工具排序): `top_tools` by
//! each order with real calls and real durations, the names alone, and
//! `schemas_named` listing schemas in the order given.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

use std::time::Duration;

use serde_json::{Map, Value, json};
use tool_core::{RegistryError, StatsOrder, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};

/// `quick` answers at once, `steady` after 100 ms, `slow` after 400 ms,
/// `flaky` fails; `idle` is never called.
fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    for (name, ms) in [("quick", 0u64), ("steady", 100), ("slow", 400)] {
        let spec = ToolSpec::new(name, "Sleeps, then answers.", json!({"type": "object"}));
        r.register(
            Tool::new(spec, move |_: Map<String, Value>, _| async move {
                tokio::time::sleep(Duration::from_millis(ms)).await;
                ToolResult::ok(format!("{ms}"))
            })
            .unwrap(),
        )
        .unwrap();
    }
    for name in ["flaky", "idle"] {
        let spec = ToolSpec::new(
            name,
            "Fails.",
            json!({"type": "object", "properties": {"x": {"type": "integer"}}}),
        );
        r.register(
            Tool::new(spec, |_: Map<String, Value>, _| async {
                ToolResult::error(tool_core::ErrorKind::Failed, "no")
            })
            .unwrap(),
        )
        .unwrap();
    }
    r
}

#[tokio::test]
async fn top_tools_by_each_order() {
    let r = registry();
    let ctx = ToolContext::new();
    for (name, times) in [("slow", 1), ("steady", 2), ("quick", 3), ("flaky", 4)] {
        for _ in 0..times {
            r.execute(name, json!({}), &ctx).await;
        }
    }
    assert_eq!(
        r.top_tool_names(10, StatsOrder::CallCount),
        ["flaky", "quick", "steady", "slow"]
    );
    assert_eq!(
        r.top_tool_names(2, StatsOrder::SuccessRate),
        ["quick", "steady"]
    );
    // Fastest first, as the seed's `get_top_tools(by="average_duration")`.
    let fastest = r.top_tools(10, StatsOrder::AverageDuration);
    let names: Vec<&str> = fastest.iter().map(|s| s.name.as_str()).collect();
    // `flaky` fails at once and `quick` sleeps 0 ms: either may be first.
    assert_eq!(&names[2..], ["steady", "slow"], "{fastest:?}");
    assert!(fastest[3].average_duration >= Duration::from_millis(400));
    assert!(fastest[2].average_duration >= Duration::from_millis(100));
    assert!(fastest[2].average_duration < fastest[3].average_duration);
    assert_eq!(
        &r.top_tool_names(2, StatsOrder::SlowestFirst),
        &["slow", "steady"]
    );
    // Never-called tools are left out; the limit holds.
    assert!(
        !r.top_tool_names(10, StatsOrder::CallCount)
            .contains(&"idle".to_owned())
    );
    assert!(r.top_tool_names(0, StatsOrder::CallCount).is_empty());
}

#[tokio::test]
async fn schemas_in_the_order_given() {
    let r = registry();
    let ctx = ToolContext::new();
    for _ in 0..2 {
        r.execute("steady", json!({}), &ctx).await;
    }
    r.execute("slow", json!({}), &ctx).await;
    // The seed's "most used first": called tools by count, then the rest.
    let mut order = r.top_tool_names(10, StatsOrder::CallCount);
    for name in r.tool_names(None) {
        if !order.iter().any(|n| n == name) {
            order.push(name.to_owned());
        }
    }
    let schemas = r.schemas_named(&order).unwrap();
    let names: Vec<&str> = schemas
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["steady", "slow", "flaky", "idle", "quick"]);
    // Each is the canonical schema, as `schemas()` has it.
    let all = r.schemas();
    let flaky = all.iter().find(|s| s["name"] == "flaky").unwrap();
    assert_eq!(&schemas[2], flaky);
    assert_eq!(
        schemas[2]["parameters"]["properties"]["x"]["type"],
        "integer"
    );
    // A repeated name is listed once.
    assert_eq!(
        r.schemas_named(&["slow", "quick", "slow"]).unwrap().len(),
        2
    );
    assert!(r.schemas_named::<&str>(&[]).unwrap().is_empty());
}

#[test]
fn unknown_names_are_refused_with_suggestions() {
    let r = registry();
    let e = r.schemas_named(&["quick", "slwo", "zzzzzzzz"]).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no tool named `slwo` is registered; did you mean `slow`?; no tool named `zzzzzzzz` is registered"
    );
    match r.schemas_named(&["qiuck"]).unwrap_err() {
        RegistryError::UnknownTool { name, suggestion } => {
            assert_eq!(
                (name.as_str(), suggestion.as_deref()),
                ("qiuck", Some("quick"))
            );
        }
        other => panic!("{other:?}"),
    }
}
