use tool_core::tool;

/// What to search for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
    /// Only notes with these tags.
    pub tags: Option<Vec<String>>,
}

/// Search the notes.
#[tool(inject_params(tags(mode = "merge", key = "cfg.tags")))]
fn search(#[arg(flatten)] args: SearchArgs) -> String {
    args.query
}

fn main() {}
