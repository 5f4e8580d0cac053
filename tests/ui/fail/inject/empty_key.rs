use tool_core::tool;

/// Save a note.
#[tool(inject_params(owner(mode = "default", key = "")))]
fn save_note(text: String, owner: Option<String>) -> String {
    format!("{text} {owner:?}")
}

fn main() {}
