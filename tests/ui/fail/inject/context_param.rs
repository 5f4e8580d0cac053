use tool_core::{ToolContext, tool};

/// Save a note.
#[tool(inject_params(ctx(mode = "default", key = "knowledge_config")))]
fn save_note(text: String, ctx: &ToolContext) -> String {
    format!("{text} {:?}", ctx.uid())
}

fn main() {}
