use tool_core::{ToolContext, tool};

/// Who is calling.
#[tool]
fn whoami(#[arg(description = "The context.")] ctx: &ToolContext) -> String {
    ctx.uid().unwrap_or("nobody").to_owned()
}

fn main() {}
