//! Parameter forms: docs on parameters, `#[arg]` (description, default = EXPR,
//! default, rename), `Option`, raw and `mut` identifiers, hidden and injected
//! parameters, every context form and `State<T>`, in sync and async fns.
#![deny(warnings)]
#![allow(deprecated, reason = "parameters left undocumented on purpose: #[tool] warns of each")]

use std::collections::BTreeMap;

use serde_json::json;
use tool_core::{State, ToolContext, ToolRegistry, tool};

const DEFAULT_LIMIT: u32 = 10;

/// Application state.
struct Db {
    name: &'static str,
}

/// Search the notes.
///
/// # Arguments
/// * `query` - What to look for (from the fn doc).
#[tool(hidden_params = ["uid"])]
fn params_search(
    query: String,
    /// How many results (a parameter doc).
    #[arg(default = DEFAULT_LIMIT * 2)]
    limit: u32,
    #[arg(description = "Sort order (the attribute wins).")]
    /// Loses to the attribute.
    order: Option<String>,
    #[arg(default, rename = "include_archived")] archived: bool,
    r#type: Option<String>,
    mut tags: Vec<String>,
    uid: String,
    ctx: &ToolContext,
    db: State<Db>,
) -> String {
    tags.sort();
    format!(
        "{query}|{limit}|{order:?}|{archived}|{kind:?}|{tags:?}|{uid}|{}|{}",
        ctx.trace_id().unwrap_or("-"),
        db.name,
        kind = r#type,
    )
}

/// Save a note for its owner.
#[tool(
    hidden_params = ["owner"],
    inject_params(
        owner(key = "kb.owner"),
        tags(mode = "merge", key = "kb.tags"),
        meta(mode = "merge", key = "kb.meta"),
        lang(mode = "default", key = "kb.lang"),
    )
)]
async fn params_save(
    text: String,
    owner: String,
    tags: Option<Vec<String>>,
    meta: BTreeMap<String, String>,
    lang: String,
    owned: ToolContext,
    maybe: Option<&ToolContext>,
) -> String {
    tokio::task::yield_now().await;
    format!(
        "{text}|{owner}|{tags:?}|{meta:?}|{lang}|{:?}|{:?}",
        owned.uid(),
        maybe.and_then(ToolContext::uid)
    )
}

#[tokio::main]
async fn main() {
    let registry = ToolRegistry::global();

    let spec = registry.get("params_search").unwrap().spec();
    let props = &spec.parameters["properties"];
    assert_eq!(spec.parameters["required"], json!(["query", "tags"]));
    let mut names = spec.parameter_names();
    names.sort_unstable();
    assert_eq!(names, ["include_archived", "limit", "order", "query", "tags", "type"]);
    assert_eq!(props["query"]["description"], "What to look for (from the fn doc).");
    assert_eq!(props["limit"]["description"], "How many results (a parameter doc).");
    assert_eq!(props["limit"]["default"], 20);
    assert_eq!(props["order"]["description"], "Sort order (the attribute wins).");
    assert!(props["include_archived"].get("default").is_none());
    let mut hidden = spec.hidden_params.clone();
    hidden.sort();
    assert_eq!(hidden, ["ctx", "db", "uid"]);

    let ctx = ToolContext::new()
        .with_uid("u1")
        .with_trace_id("t1")
        .with_state(Db { name: "main" });
    let r = registry
        .execute("params_search", json!({"query": "q", "tags": ["b", "a"]}), &ctx)
        .await;
    assert_eq!(r.output, r#"q|20|None|false|None|["a", "b"]|u1|t1|main"#, "{r:?}");
    let args = json!({
        "query": "q", "limit": 3, "order": "asc", "include_archived": true,
        "type": "memo", "tags": [],
    });
    let r = registry.execute("params_search", args, &ctx).await;
    assert_eq!(r.output, r#"q|3|Some("asc")|true|Some("memo")|[]|u1|t1|main"#, "{r:?}");

    let spec = registry.get("params_save").unwrap().spec();
    let mut names = spec.parameter_names();
    names.sort_unstable();
    assert_eq!(names, ["lang", "meta", "tags", "text"]);
    let ctx = ToolContext::new().with_uid("u2").with_config(
        "kb",
        &json!({"owner": "ana", "tags": ["work"], "meta": {"src": "app"}, "lang": "en"}),
    );
    let args = json!({"text": "hi", "tags": ["mine"], "meta": {"k": "v"}});
    let r = registry.execute("params_save", args, &ctx).await;
    assert_eq!(
        r.output,
        r#"hi|ana|Some(["work", "mine"])|{"k": "v", "src": "app"}|en|Some("u2")|Some("u2")"#,
        "{r:?}"
    );
}
