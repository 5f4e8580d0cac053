use tool_core::tool;

/// Search the web.
#[tool(display(zh(name = "搜索", params(qurey = "关键词"))))]
fn search(query: String) -> String {
    query
}

fn main() {}
