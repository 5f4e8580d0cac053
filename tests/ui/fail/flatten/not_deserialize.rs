use tool_core::tool;

/// What to search for (no `Deserialize`).
#[derive(schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
}

/// Search the notes.
#[tool]
fn search(#[arg(flatten)] args: SearchArgs) -> String {
    args.query
}

fn main() {}
