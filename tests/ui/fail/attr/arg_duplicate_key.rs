use tool_core::tool;

/// Search the web.
#[tool]
fn search(
    #[arg(rename = "q")]
    #[arg(description = "What to look for.", rename = "query_text")]
    query: String,
) -> String {
    query
}

fn main() {}
