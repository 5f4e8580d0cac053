use tool_core::tool;

/// What to search for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
}

/// Search the notes.
#[tool]
fn search(#[arg(flatten)] args: Option<SearchArgs>) -> String {
    args.map(|a| a.query).unwrap_or_default()
}

fn main() {}
