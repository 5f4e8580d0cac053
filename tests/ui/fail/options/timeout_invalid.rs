use tool_core::tool;

/// Fetch a page.
#[tool(timeout = "30 seconds")]
fn fetch(url: String) -> String {
    url
}

fn main() {}
