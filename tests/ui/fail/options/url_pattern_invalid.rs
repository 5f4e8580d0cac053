use tool_core::tool;

/// Summarise the search results page.
#[tool(url_patterns = ["*.google.com", "go*gle.com"])]
fn summarise(page: String) -> String {
    page
}

fn main() {}
