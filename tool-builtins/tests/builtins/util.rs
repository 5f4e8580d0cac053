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

/// Names that change what a search lists in every folder below the one
/// holding them: a repository marker (`.git`, `.jj`: its `.gitignore` files
/// apply) or an ignore file. The walker reads them in every folder above
/// the workspace too (ripgrep's and git's rule, kept on purpose: a
/// workspace in a subfolder of a repository gets the repository's rules).
const ABOVE_MARKERS: [&str; 5] = [".git", ".jj", ".gitignore", ".ignore", ".rgignore"];

/// The files named in [`ABOVE_MARKERS`] in the folders above `dir` (not in
/// `dir` itself), nearest first.
pub(crate) fn markers_above(dir: &Path) -> Vec<PathBuf> {
    dir.ancestors()
        .skip(1)
        .flat_map(|a| ABOVE_MARKERS.map(|m| a.join(m)))
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect()
}

/// [`workspace_with`] in a temporary folder no folder above which holds a
/// repository marker or an ignore file: the first such of `$TMPDIR` (or
/// `/tmp`), `/dev/shm` and `/var/tmp`. For the tests whose premise is
/// "not inside a repository": `/tmp` is shared by every process on the
/// machine, and a `.git` that one of them makes there (a `git init` or a
/// `cargo new` run in `/tmp`, a tool session whose workspace is `/tmp`)
/// turns every workspace under it into a repository. Panics, naming what it
/// found, when every candidate has one.
pub(crate) fn clean_workspace_with<C: AsRef<[u8]>>(
    files: &[(&str, C)],
) -> (tempfile::TempDir, ToolContext) {
    let candidates = [
        std::env::temp_dir(),
        PathBuf::from("/dev/shm"),
        PathBuf::from("/var/tmp"),
    ];
    let mut seen = Vec::new();
    for base in candidates.iter().filter(|b| b.is_dir()) {
        let Ok(base) = std::fs::canonicalize(base) else {
            continue;
        };
        let found = markers_above(&base.join("x"));
        if found.is_empty() {
            let dir = tempfile::tempdir_in(&base).unwrap();
            for (name, content) in files {
                let p = dir.path().join(name);
                std::fs::create_dir_all(p.parent().unwrap()).unwrap();
                std::fs::write(p, content).unwrap();
            }
            let ctx = tool_builtins::context(dir.path()).unwrap();
            return (dir, ctx);
        }
        seen.extend(found);
    }
    panic!("every temporary folder lies below a repository marker or an ignore file: {seen:?}");
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
