//! Puts the workspace (the folder the built-in tools are confined to) into the context.
//!
//! Kept in one small function so that the wiring follows tool-builtins' API in one place.

use std::path::{Path, PathBuf};

use tool_core::ToolContext;

/// Resolves `--workspace` (default: the current folder) to an absolute, existing folder.
pub(crate) fn resolve_root(flag: Option<&Path>) -> Result<PathBuf, String> {
    let given = match flag {
        Some(p) => p.to_path_buf(),
        None => std::env::current_dir()
            .map_err(|e| format!("cannot determine the current folder: {e}"))?,
    };
    let root = given
        .canonicalize()
        .map_err(|e| format!("workspace {}: {e}", given.display()))?;
    if !root.is_dir() {
        return Err(format!("workspace {} is not a folder", given.display()));
    }
    Ok(root)
}

/// Adds what the built-in tools read from the context (through
/// [`tool_builtins::with_builtins`]): the [`Workspace`](tool_builtins::Workspace)
/// rooted at `root`, one [`FileLedger`](tool_builtins::FileLedger) (so the read-before-write rule holds
/// across every call of the run), and the named value `workspace` (the root
/// as a string, for any other tool).
pub(crate) fn wire(ctx: ToolContext, root: &Path) -> Result<ToolContext, String> {
    let ctx = ctx.with_value("workspace", root.to_string_lossy().into_owned());
    tool_builtins::with_builtins(ctx, root)
        .map_err(|e| format!("workspace {}: {e}", root.display()))
}
