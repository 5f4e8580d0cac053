use tool_core::tool;

/// Search the web.
#[tool]
fn search(#[arg(descripton = "What to look for.")] query: String) -> String {
    query
}

fn main() {}
