use tool_core::tool;

/// Search the web.
#[tool(display(chinese(name = "搜索")))]
fn search(query: String) -> String {
    query
}

fn main() {}
