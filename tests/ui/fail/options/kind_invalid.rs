use tool_core::tool;

/// Read a file.
#[tool(kind = "reads")]
fn read_file(path: String) -> String {
    path
}

fn main() {}
