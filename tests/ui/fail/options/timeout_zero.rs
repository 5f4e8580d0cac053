use tool_core::tool;

/// Fetch a page.
#[tool(timeout = "0ms")]
fn fetch(url: String) -> String {
    url
}

fn main() {}
