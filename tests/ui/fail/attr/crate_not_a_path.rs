use tool_core::tool;

/// Search the web.
#[tool(crate = "my tools")]
fn search(query: String) -> String {
    query
}

fn main() {}
