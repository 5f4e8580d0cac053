use tool_core::{ToolContext, tool};

/// Who is calling.
#[tool]
fn whoami(ctx: &mut ToolContext) -> String {
    ctx.uid().unwrap_or("nobody").to_owned()
}

fn main() {}
