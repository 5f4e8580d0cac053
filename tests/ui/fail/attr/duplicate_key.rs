use tool_core::tool;

/// Read a file.
#[tool(kind = "read", read_only, kind = "write")]
fn read_file(path: String) -> String {
    path
}

fn main() {}
