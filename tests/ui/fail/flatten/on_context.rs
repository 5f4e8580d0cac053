use tool_core::{tool, ToolContext};

/// Report the trace id.
#[tool]
fn trace(#[arg(flatten)] ctx: &ToolContext) -> String {
    ctx.trace_id().unwrap_or("-").to_owned()
}

fn main() {}
