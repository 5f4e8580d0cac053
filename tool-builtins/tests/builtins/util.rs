//! Setup shared by the black-box tests.

/// A temporary workspace holding `files` (relative path, content), with the
/// context [`tool_builtins::context`] builds for it.
pub(crate) fn workspace_with<C: AsRef<[u8]>>(
    files: &[(&str, C)],
) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().unwrap();
    for (name, content) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, content).unwrap();
    }
    let ctx = tool_builtins::context(dir.path()).unwrap();
    (dir, ctx)
}

/// Records a read of each of `paths` in the context's ledger, as `read_file` would.
pub(crate) fn prime(ctx: &ToolContext, paths: &[std::path::PathBuf]) {
    let ledger = ctx.state::<tool_builtins::FileLedger>().expect("ledger");
    for p in paths {
        let bytes = std::fs::read(p).expect("read");
        ledger.record_bytes(p, &bytes).expect("stamp");
    }
}

/// What most test modules use, glob-imported with `use crate::util::*`.
pub(crate) use std::path::{Path, PathBuf};
pub(crate) use std::time::SystemTime;
pub(crate) use tool_core::IntoToolResult;
pub(crate) use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult};
