use tool_core::tool;

/// Delete a file.
#[tool(frobnicate = 1)]
fn delete_file(path: String) {
    let _ = path;
}

fn main() {}
