use tool_core::tool;

/// List the user's notes.
#[tool(hidden_params = ["user_id", "user_id"])]
fn list_notes(folder: String, user_id: String) -> String {
    format!("{folder} {user_id}")
}

fn main() {}
