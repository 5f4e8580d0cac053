use tool_core::tool;

/// A search tool.
#[tool]
struct Search {
    query: String,
}

fn main() {
    let _ = Search { query: String::new() }.query;
}
