//! `inject_params`: default and merge on maps and lists.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use std::collections::HashMap;

use serde::Serialize;
use serde_json::json;
use tool_core::{ToolContext, ToolRegistry, tool};

#[derive(Serialize)]
struct Cfg {
    owner: String,
    tags: HashMap<String, String>,
    scopes: Vec<String>,
    nested: Nested,
}

#[derive(Serialize)]
struct Nested {
    limit: u32,
}

fn ctx() -> ToolContext {
    ToolContext::new().with_config(
        "kb",
        &Cfg {
            owner: "fw-owner".into(),
            tags: HashMap::from([
                ("env".into(), "prod".into()),
                ("team".into(), "core".into()),
            ]),
            scopes: vec!["global".into(), "shared".into()],
            nested: Nested { limit: 7 },
        },
    )
}

/// Echo what the tool received.
#[tool(inject_params(
    owner(mode = "default", key = "kb.owner"),
    tags(mode = "merge", key = "kb.tags"),
    scopes(mode = "merge", key = "kb.scopes"),
    limit(mode = "default", key = "kb.nested.limit"),
))]
fn inject_echo(
    owner: Option<String>,
    tags: Option<HashMap<String, String>>,
    scopes: Option<Vec<String>>,
    limit: Option<u32>,
) -> serde_json::Value {
    let mut tags: Vec<(String, String)> = tags.unwrap_or_default().into_iter().collect();
    tags.sort();
    json!({"owner": owner, "tags": tags, "scopes": scopes, "limit": limit})
}

async fn run(args: serde_json::Value, ctx: &ToolContext) -> serde_json::Value {
    let r = ToolRegistry::global()
        .execute("inject_echo", args, ctx)
        .await;
    assert!(r.is_ok(), "{:?}", r.error);
    serde_json::from_str(&r.output).unwrap()
}

#[tokio::test]
async fn default_fills_omitted_and_null_but_not_sent_values() {
    let c = ctx();
    let v = run(json!({}), &c).await;
    assert_eq!(v["owner"], "fw-owner");
    assert_eq!(v["limit"], 7);
    let v = run(json!({"owner": null, "limit": null}), &c).await;
    assert_eq!(v["owner"], "fw-owner");
    assert_eq!(v["limit"], 7);
    let v = run(json!({"owner": "model", "limit": 2}), &c).await;
    assert_eq!(v["owner"], "model");
    assert_eq!(v["limit"], 2);
}

#[tokio::test]
async fn merge_maps_framework_keys_win() {
    let v = run(json!({"tags": {"env": "dev", "topic": "x"}}), &ctx()).await;
    assert_eq!(
        v["tags"],
        json!([["env", "prod"], ["team", "core"], ["topic", "x"]])
    );
}

#[tokio::test]
async fn merge_lists_framework_first_then_new_model_items() {
    let v = run(json!({"scopes": ["shared", "mine", "mine"]}), &ctx()).await;
    assert_eq!(v["scopes"], json!(["global", "shared", "mine"]));
    let v = run(json!({}), &ctx()).await;
    assert_eq!(v["scopes"], json!(["global", "shared"]));
}

#[tokio::test]
async fn without_config_the_model_value_stands() {
    let v = run(json!({"scopes": ["a"], "owner": "m"}), &ToolContext::new()).await;
    assert_eq!(v["scopes"], json!(["a"]));
    assert_eq!(v["owner"], "m");
    assert_eq!(v["limit"], serde_json::Value::Null);
}
