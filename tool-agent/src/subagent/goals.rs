//! The trace's goal tree (tool-builtins' `goal` tool) as the sub-agent
//! tools see it: `evaluate` reads a goal's description and criteria from
//! it, `agent` and `evaluate` mark the goal they work on (`type:
//! agent_call`, mode, sub-trace ids). With tool-agent's `builtins` feature
//! only; without it there is no tree (`evaluate` falls back to the host's
//! goals, `agent` refuses a `goal_id`).

use tool_core::ToolContext;

/// The description and criteria of goal `id` in the context's goal tree;
/// `None` when the tree has no such goal or the context holds no tree
/// (no workspace or state store).
#[cfg(feature = "builtins")]
pub(super) async fn from_tree(ctx: &ToolContext, id: &str) -> Result<Option<String>, String> {
    let (ctx, id) = (ctx.clone(), id.to_owned());
    let found = tool_core::run_blocking(move || tool_builtins::goal::goal_of(&ctx, &id))
        .await
        .map_err(|e| e.message)?;
    match found {
        Ok(goal) => Ok(goal.map(|g| g.brief())),
        Err(e) if e.kind == tool_core::ErrorKind::MissingContext => Ok(None),
        // A malformed id is just not a tree goal: the host's goals may use any name.
        Err(e) if e.kind == tool_core::ErrorKind::InvalidArguments => Ok(None),
        Err(e) => Err(e.message),
    }
}

/// Without the `builtins` feature there is no goal tree.
#[cfg(not(feature = "builtins"))]
pub(super) async fn from_tree(_ctx: &ToolContext, _id: &str) -> Result<Option<String>, String> {
    Ok(None)
}

/// Marks goal `id` of the context's tree as worked on by the sub-traces
/// `ids` in `mode`.
///
/// # Errors
/// No such goal (with the trace's goal ids), no tree in the context.
#[cfg(feature = "builtins")]
pub(super) async fn mark(
    ctx: &ToolContext,
    id: &str,
    mode: &str,
    ids: &[String],
) -> Result<(), String> {
    let (ctx, id, mode, ids) = (ctx.clone(), id.to_owned(), mode.to_owned(), ids.to_vec());
    tool_core::run_blocking(move || {
        tool_builtins::goal::mark_agent_call(&ctx, &id, &mode, &ids).map(|_| ())
    })
    .await
    .and_then(|r| r)
    .map_err(|e| format!("`goal_id`: {}", e.message))
}

/// Without the `builtins` feature there is no goal tree to mark.
#[cfg(not(feature = "builtins"))]
pub(super) async fn mark(
    _ctx: &ToolContext,
    id: &str,
    _mode: &str,
    _ids: &[String],
) -> Result<(), String> {
    Err(format!(
        "this host keeps no goal tree, so goal `{id}` cannot be marked; leave `goal_id` out"
    ))
}
