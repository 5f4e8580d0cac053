use tool_core::tool;

/// Find files.
#[tool(tags = ["fs", "Git"])]
fn find(pattern: String) -> String {
    pattern
}

fn main() {}
