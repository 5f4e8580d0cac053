use tool_core::tool;

/// What to search for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
    /// Whose notes.
    pub uid: String,
}

/// Search the notes.
#[tool(hidden_params = ["uid"])]
fn search(#[arg(flatten)] args: SearchArgs) -> String {
    args.query + &args.uid
}

fn main() {}
