use tool_core::tool;

/// Delete a file.
#[tool(reqires_confirmation)]
fn delete_file(path: String) {
    let _ = path;
}

fn main() {}
