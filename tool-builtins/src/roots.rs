//! The read-only roots a context adds to its workspace: the spill folders
//! of its own trace, where `bash_command` and the registry's output budget
//! save full output that `read_file` and `grep_content` may then read.
//!
//! This sits above both wings on purpose: the spill parent is part of
//! [`BashConfig`](crate::shell::BashConfig)'s truncation settings, and the
//! file layer must not know about the shell. `fs` gets the folders as plain
//! paths (`Workspace::beneath_for_read`), so `fs` never imports `shell`.

use std::path::PathBuf;

use tool_core::ToolContext;

use crate::fs::beneath::{Beneath, Missing};
use crate::fs::workspace::{PathError, Workspace};

/// The read-only folders of `ctx` beyond the workspace's own: the spill
/// folder of the context's trace (its `trace_id`; see
/// `tool_core::truncate::trace_folder_name`) in the default spill parent and
/// in the spill parent of the context's [`BashConfig`](crate::shell::BashConfig)
/// (where `bash_command` and the registry's output budget save full output).
/// Another trace's spill folder is not among them, and neither is a trace
/// folder (or a parent of it) that fails `tool_core::truncate::check_private_dir`
/// (a symbolic link, another user's, not mode `0700`).
pub(crate) fn read_roots(ctx: &ToolContext) -> Vec<PathBuf> {
    let trace = ctx.trace_id();
    let configured = ctx
        .state::<crate::shell::BashConfig>()
        .map(|c| c.truncation.clone());
    std::iter::once(tool_core::truncate::Truncation::new())
        .chain(configured)
        .filter_map(|t| t.for_trace(trace).checked_spill_dir().ok())
        .collect()
}

/// Resolves a path to read in `ctx` beneath the workspace, one of its
/// read-only roots, or [`read_roots`]; the last component may be missing
/// (the caller reports "not found" with suggestions).
pub(crate) fn resolve_for_read(
    ctx: &ToolContext,
    ws: &Workspace,
    model_path: &str,
) -> Result<Beneath, PathError> {
    ws.beneath_for_read(model_path, &read_roots(ctx), Missing::AllowLast)
}
