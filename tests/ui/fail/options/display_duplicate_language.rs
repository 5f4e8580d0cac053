use tool_core::tool;

/// Search the web.
#[tool(display(zh(name = "搜索"), en(name = "Search"), zh(name = "查找")))]
fn search(query: String) -> String {
    query
}

fn main() {}
