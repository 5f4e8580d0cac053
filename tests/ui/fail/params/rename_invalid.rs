use tool_core::tool;

/// Search the web.
#[tool]
fn search(#[arg(rename = "search query")] query: String) -> String {
    query
}

fn main() {}
