//! `#[arg(flatten)]`: a struct's fields as top-level parameters, mixed with
//! ordinary, hidden and context parameters, two structs in one tool, and on a
//! `#[toolset]` method.
#![deny(warnings)]

use std::sync::Arc;

use serde::Deserialize;
use serde_json::json;
use tool_core::{ToolContext, ToolRegistry, Toolset, tool, toolset};

/// What to search for.
#[derive(Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    /// Words to look for.
    query: String,
    /// Match case exactly.
    #[serde(default, rename = "caseSensitive")]
    case_sensitive: bool,
}

/// Which page of results.
#[derive(Deserialize, schemars::JsonSchema)]
struct Paging {
    /// First result, from 0.
    offset: Option<u32>,
}

/// Search the notes.
#[tool(hidden_params = ["uid"])]
fn flat_search(
    #[arg(flatten)] args: SearchArgs,
    /// At most this many.
    limit: Option<u32>,
    #[arg(flatten)] paging: Paging,
    uid: String,
    ctx: &ToolContext,
) -> String {
    format!(
        "{}|{}|{limit:?}|{:?}|{uid}|{}",
        args.query,
        args.case_sensitive,
        paging.offset,
        ctx.trace_id().unwrap_or("-")
    )
}

struct Finder;

#[toolset]
impl Finder {
    /// Search with a bound finder.
    #[tool]
    async fn flat_find(&self, #[arg(flatten)] args: SearchArgs) -> String {
        args.query
    }
}

fn main() {
    let registry = ToolRegistry::global();
    let spec = registry.get("flat_search").unwrap().spec();
    let params = &spec.parameters;
    let names: Vec<&String> = params["properties"].as_object().unwrap().keys().collect();
    assert_eq!(names, ["query", "caseSensitive", "limit", "offset"]);
    assert_eq!(params["required"], json!(["query"]));
    assert_eq!(params["properties"]["query"]["description"], "Words to look for.");
    assert_eq!(params["properties"]["limit"]["description"], "At most this many.");
    assert_eq!(spec.hidden_params, ["uid", "ctx"]);

    let rt = tokio::runtime::Runtime::new().unwrap();
    let ctx = ToolContext::new().with_value("uid", json!("ann"));
    let out = rt.block_on(registry.execute(
        "flat_search",
        json!({"query": "milk", "caseSensitive": true, "offset": 20}),
        &ctx,
    ));
    assert_eq!(out.output, "milk|true|None|Some(20)|ann|-", "{out:?}");

    let mut bound = ToolRegistry::new();
    bound.add_toolset(Arc::new(Finder)).unwrap();
    assert_eq!(
        bound.get("flat_find").unwrap().spec().parameters["required"],
        json!(["query"])
    );
    let out = rt.block_on(bound.execute("flat_find", json!({"query": "tea"}), &ctx));
    assert_eq!(out.output, "tea");
    let _ = Arc::new(Finder).tools().unwrap();
}
