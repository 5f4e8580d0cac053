use tool_core::tool;

/// Find files.
#[tool(tags = ["fs", "search", "fs"])]
fn find(pattern: String) -> String {
    pattern
}

fn main() {}
