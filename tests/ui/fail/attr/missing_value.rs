use tool_core::tool;

/// Search the web.
#[tool(name =, kind = "read")]
fn search(query: String) -> String {
    query
}

fn main() {}
