use tool_core::tool;

/// Save a note.
#[tool(inject_params(owner(mode = "defualt", key = "knowledge_config.owner")))]
fn save_note(text: String, owner: Option<String>) -> String {
    format!("{text} {owner:?}")
}

fn main() {}
