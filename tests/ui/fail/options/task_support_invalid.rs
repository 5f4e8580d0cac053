use tool_core::tool;

/// Fetch a page.
#[tool(task_support = "maybe")]
fn fetch(url: String) -> String {
    url
}

fn main() {}
