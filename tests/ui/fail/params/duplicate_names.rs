use tool_core::tool;

/// Search the web.
#[tool]
fn search(query: String, #[arg(rename = "query")] fallback: Option<String>) -> String {
    fallback.unwrap_or(query)
}

fn main() {}
