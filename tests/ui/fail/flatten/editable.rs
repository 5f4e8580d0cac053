use tool_core::tool;

/// What to search for.
#[derive(serde::Deserialize, schemars::JsonSchema)]
pub struct SearchArgs {
    /// Words to look for.
    pub query: String,
}

/// Search the notes.
#[tool(requires_confirmation, editable_params = ["args"])]
fn search(#[arg(flatten)] args: SearchArgs) -> String {
    args.query
}

fn main() {}
