use tool_core::tool;

/// Search the web.
#[tool("web_search")]
fn search(query: String) -> String {
    query
}

fn main() {}
