use tool_core::tool;

/// Summarise the issue.
#[tool(url_patterns = ["https://github..com/**/issues"])]
fn summarise(page: String) -> String {
    page
}

fn main() {}
