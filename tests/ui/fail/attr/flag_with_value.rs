use tool_core::tool;

/// Read a file.
#[tool(read_only = "yes")]
fn read_file(path: String) -> String {
    path
}

fn main() {}
