use tool_core::tool;

/// Find files.
#[tool(tags = [""])]
fn find(pattern: String) -> String {
    pattern
}

fn main() {}
