//! A sync and an async tool: both register, both run, arguments arrive typed.
#![deny(warnings)]
#![allow(deprecated, reason = "parameters left undocumented on purpose: #[tool] warns of each")]

use serde_json::json;
use tool_core::{ToolContext, ToolRegistry, tool};

/// Add two integers (runs on the blocking pool).
#[tool]
fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Greet someone after a yield (runs on the async runtime).
#[tool]
async fn greet(name: String, excited: Option<bool>) -> String {
    tokio::task::yield_now().await;
    format!("hello {name}{}", if excited.unwrap_or(false) { "!" } else { "" })
}

#[tokio::main]
async fn main() {
    // The fns stay ordinary fns.
    assert_eq!(add(1, 2), "3");
    assert_eq!(greet("x".into(), None).await, "hello x");

    let registry = ToolRegistry::global();
    let ctx = ToolContext::new();
    let r = registry.execute("add", json!({"a": 2, "b": 40}), &ctx).await;
    assert_eq!(r.output, "42");
    let r = registry.execute("greet", json!({"name": "ana", "excited": true}), &ctx).await;
    assert_eq!(r.output, "hello ana!");
    let r = registry.execute("greet", json!({"name": "bo"}), &ctx).await;
    assert_eq!(r.output, "hello bo");
    let spec = registry.get("greet").unwrap().spec();
    assert_eq!(spec.description, "Greet someone after a yield (runs on the async runtime).");
    assert_eq!(spec.parameters["required"], json!(["name"]));
}
