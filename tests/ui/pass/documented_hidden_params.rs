//! `# Arguments` may document every kind of parameter: model-visible (by Rust
//! or renamed name), hidden, injected and framework-filled ones.
use tool_core::{ToolContext, ToolRegistry, tool};

/// Search a user's notes.
///
/// # Arguments
/// * `query` - Words to look for.
/// * `max` - Most notes returned (sent as `max`, `limit` in Rust).
/// * `uid` - The user, from the context (hidden).
/// * `owner` - Filled from the context value `config.owner`.
/// * `ctx` - The call's context.
#[tool(hidden_params = ["uid"], inject_params(owner(key = "config.owner")))]
fn documented_search(
    query: String,
    #[arg(rename = "max")] limit: usize,
    uid: String,
    owner: Option<serde_json::Value>,
    ctx: &ToolContext,
) -> String {
    let _ = ctx;
    format!("{query} {limit} {uid} {owner:?}")
}

fn main() {
    let spec = ToolRegistry::global().get("documented_search").unwrap().spec();
    assert_eq!(
        spec.parameters["properties"]["query"]["description"],
        "Words to look for."
    );
}
