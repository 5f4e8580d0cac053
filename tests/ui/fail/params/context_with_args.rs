use tool_core::{ToolContext, tool};

/// Look up a user.
#[tool]
fn lookup(#[context(uid)] ctx: &ToolContext) -> String {
    ctx.uid().unwrap_or_default().to_owned()
}

fn main() {}
