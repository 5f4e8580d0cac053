//! Built-in coding tools for agents, confined to a workspace.
//!
//! The file tools every coding agent expects (read, write, edit, multi-edit,
//! patch, shell, glob, grep, list), with the model-facing envelopes and
//! messages of opencode and the patch grammar of Codex, so prompts written for
//! those keep working. Every path is resolved inside a [`Workspace`]; writes
//! follow the read-before-write rule of a [`FileLedger`], are atomic, keep the
//! file's permissions, byte order mark and line endings, and can be recorded
//! for rewinding through a [`Snapshots`](fsutil::Snapshots) hook.
//!
//! ```
//! use tool_builtins::{context, fsutil::ChangeLog, fsutil::Snapshots};
//! use std::sync::Arc;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("notes.txt"), "alpha\r\nbeta\r\n").unwrap();
//!
//! // One context per agent session: the workspace, the ledger, and (optionally) a change log.
//! let log = Arc::new(ChangeLog::default());
//! let ctx = context(dir.path()).unwrap().with_state(Snapshots(log.clone()));
//!
//! // The workspace confines every path.
//! let ws = ctx.state::<tool_builtins::Workspace>().unwrap();
//! let err = ws.resolve("../outside.txt").unwrap_err();
//! assert!(err.to_string().contains("outside the workspace"));
//!
//! // Record a read in the ledger, as read_file does; then a write may proceed.
//! let ledger = ctx.state::<tool_builtins::FileLedger>().unwrap();
//! let path = ws.resolve("notes.txt").unwrap();
//! assert!(ledger.check(&path).is_err());
//! ledger.record_bytes(&path, &std::fs::read(&path).unwrap()).unwrap();
//! assert!(ledger.check(&path).is_ok());
//! assert!(log.changes().is_empty());
//! # });
//! ```
//!
//! # Tools
//! | tool | module | what it does |
//! | --- | --- | --- |
//! | `read_file` | [`read`] | numbered window of a text file (streamed), a folder's entries, an image |
//! | `write_file` | [`write`](mod@write) | a whole file, verbatim; read-before-write for existing files |
//! | `edit_file` | [`edit`] | one replacement, located by the strategies of [`replace`] |
//! | `multi_edit` | [`multi_edit`](mod@multi_edit) | several replacements in one file, all or nothing |
//! | `apply_patch` | [`patch`] | Codex-style patch over many files, verified before writing |
//! | `bash_command` | [`bash`] | a shell command in its own process group, bounded output |
//! | `glob_files` | [`glob`] | files by glob, newest first |
//! | `grep_content` | [`grep`] | regex search with ripgrep's engine |
//! | `list_dir` | [`list`] | a folder tree |
//!
//! Each is a `#[tool]` fn: linking this crate adds them to
//! [`ToolRegistry::global`]; [`registry`] gives a registry of just these.
//! The fns can also be called directly (`read_file(&ctx, path, 1, None).await`).
//!
//! # Modules
//! - [`workspace`]: [`Workspace`] and path resolution ("outside the workspace").
//! - [`ledger`]: [`FileLedger`], the read-before-write rule and per-file locks.
//! - [`fsutil`]: text decoding, line endings and BOM, atomic writes, change
//!   snapshots, binary detection, diffs.
//! - [`replace`]: the matching strategies of `edit_file` and `multi_edit`.
//! - [`bash_policy`]: [`CommandPolicy`] and [`split_command`]: allow / ask /
//!   deny on every segment of a compound command; substitutions need confirmation.
//! - [`search`]: what glob, grep and list share: the walker that stays in the
//!   workspace, explicitly named paths versus ignore files, [`SearchConfig`].
//! - Head/tail truncation with spill files lives in `tool_core::truncate`.
//!
//! # Setting up a context
//! The tools read their environment from the [`ToolContext`] as typed state:
//! a [`Workspace`] (required), a [`FileLedger`] (required by the tools that
//! write) and a [`Snapshots`](fsutil::Snapshots) hook (optional). [`context`]
//! builds a context with the first two. [`BashConfig`] (shell, limits, which
//! environment variables count as secrets, a [`CommandPolicy`]) and
//! [`SearchConfig`] (result limit, line cut, threads, list ignores) are
//! optional state too; without them the documented defaults apply.
//!
//! # Dependencies and why
//! - `tool-core`: the runtime (results, context, registry) and `truncate`.
//! - `tokio` (`sync`): the per-file async locks of the ledger, and
//!   `spawn_blocking` for file I/O off the async workers.
//! - `serde`, `serde_json`, `schemars`: typed arguments (`multi_edit`'s edit
//!   list) and JSON metadata.
//! - `similar`: unified diffs for the metadata of every write; a mature,
//!   dependency-free diff crate with a ready unified-diff writer.
//! - `chardetng` + `encoding_rs`: text that is not UTF-8 is decoded with a
//!   detected encoding (and written back in it) instead of being shown with
//!   replacement characters; the detector and converter Firefox uses.
//! - `base64`: images returned to the model are base64 in [`tool_core::Image`].
//! - `memchr`: fast line counting when streaming a window out of a huge file.
//! - `strsim`: edit distance for the block-anchor matching of `edit_file`
//!   (already a `tool-core` dependency).
//! - `tempfile` (tests only): real files in throw-away folders for every hazard test.
//! - `proptest` (tests only): the property and fuzz tests of `tests/props.rs`
//!   (every tool's `execute` with arbitrary arguments, patches from real
//!   diffs, edits against the matcher, the policy lexer) on stable Rust, with
//!   shrinking to a minimal failing input.
//! - `ignore`, `globset`, `grep-searcher`, `grep-regex`: ripgrep's own
//!   library crates behind `glob_files`, `grep_content` and `list_dir`: its
//!   parallel walker with `.gitignore`/`.ignore` semantics and symlink-loop
//!   detection, its glob engine, and its line-oriented searcher with binary
//!   detection. Using the engine `rg` is built from keeps results identical to
//!   `rg --hidden --follow` and the speed within reach of it.
//! - `grep-matcher`: the `LineTerminator` type of ripgrep's crates, to give
//!   the searcher the CRLF line terminator the matcher uses (`--crlf` mode).
//! - `unicode-normalization`: Unicode Normalization Form C and its quick
//!   check, so that `edit_file`, `multi_edit` and `apply_patch` match text
//!   that is canonically equal (a decomposed `e` + U+0301 from a macOS file
//!   system against U+00E9); the unicode-rs implementation, already in the tree.
//! - `rustix`: safe wrappers for what `bash_command` needs beyond `std`:
//!   signalling a whole process group (`kill(-pgid)`, `SIGTERM` then
//!   `SIGKILL`), one pipe shared by stdout and stderr, and `poll` with a
//!   timeout, `prctl`, `pidfd_open`, `waitpid` and `/proc` reads without
//!   allocation for the per-call supervisor. `rustix` is smaller than `nix`,
//!   talks to Linux without libc, and is already in the tree (through
//!   `tempfile`).
//! - `libc`: the calls of the supervisor that `rustix` has no stable
//!   safe form for (`fork`, `_exit`, `signal(SIG_IGN)`, `close_range`),
//!   made in the one function of the workspace allowed to use `unsafe`
//!   (`proctree::supervise`, audited; the workspace lint is `deny`). Already
//!   in the tree (through `memmap2` and `tokio`).

use std::io;
use std::path::Path;

use tool_core::{ToolContext, ToolRegistry};

pub mod edit;
pub mod fs;
pub mod fsutil;
pub mod ledger;
pub mod multi_edit;
pub mod patch;
pub mod read;
pub mod replace;
pub mod workspace;
pub mod write;

mod ansi;
pub mod bash;
pub mod bash_guard;
pub mod bash_policy;
pub mod glob;
pub mod grep;
pub mod list;
mod proctree;
pub mod search;

pub use edit::edit_file;
pub use ledger::FileLedger;
pub use multi_edit::{Edit, multi_edit};
pub use patch::apply_patch;
pub use read::{ReadOptions, read_file};
pub use workspace::{PathError, Workspace};
pub use write::write_file;

pub use bash::{BashConfig, bash_command};
pub use bash_policy::{
    CommandParts, CommandPolicy, PolicyAction, PolicyDecision, SegmentVerdict, split_command,
};
pub use glob::glob_files;
pub use grep::grep_content;
pub use list::list_dir;
pub use search::SearchConfig;

/// A registry holding only the built-in tools, for hosts that opt in to them
/// explicitly (or merge them into a registry of their own).
///
/// Every `#[tool]` fn linked into the binary, the built-ins included, is in
/// [`ToolRegistry::global`]; this one holds the `#[tool]` fns of this crate
/// ([`ToolRegistry::of_crate`]: each tool records the `module_path!()` it is
/// defined in), so a new built-in is in it without being listed anywhere and
/// a host tool that happens to share a name is never picked up. It does not
/// go through the global registry, so a name clash among the host's own tools
/// cannot make it fail.
///
/// ```
/// let registry = tool_builtins::registry();
/// assert!(registry.contains("read_file"));
/// assert!(registry.contains("apply_patch"));
/// assert_eq!(registry.get("read_file").unwrap().spec().kind, tool_core::ToolKind::Read);
/// ```
pub fn registry() -> ToolRegistry {
    // The specs are fixed at compile time and covered by this crate's tests
    // (`builtins_are_registered`); a spec that failed to build would be a bug
    // here, not input, so an error leaves an empty registry those tests catch.
    ToolRegistry::of_crate("tool_builtins").unwrap_or_default()
}

/// A context for the built-in tools: a [`Workspace`] rooted at `root` and a
/// fresh [`FileLedger`]. Add a [`Snapshots`](fsutil::Snapshots) hook with
/// [`ToolContext::with_state`] to record changes.
///
/// # Errors
/// The I/O error of canonicalising `root` (e.g. it does not exist).
pub fn context(root: impl AsRef<Path>) -> io::Result<ToolContext> {
    with_builtins(ToolContext::new(), root)
}

/// `ctx` plus what the built-in tools read from a context: a [`Workspace`]
/// rooted at `root` and a fresh [`FileLedger`] (replacing any already there).
///
/// # Errors
/// The I/O error of canonicalising `root` (e.g. it does not exist).
pub fn with_builtins(ctx: ToolContext, root: impl AsRef<Path>) -> io::Result<ToolContext> {
    Ok(ctx
        .with_state(Workspace::new(root)?)
        .with_state(FileLedger::new()))
}

/// Helpers shared by the tools' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use tool_core::ToolContext;

    /// A temporary workspace holding `files` (relative path, content), with
    /// the context [`crate::context`] builds for it.
    pub(crate) fn workspace_with<C: AsRef<[u8]>>(
        files: &[(&str, C)],
    ) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let ctx = crate::context(dir.path()).unwrap();
        (dir, ctx)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    /// The tools as a host calls them: JSON arguments through the registry.
    #[tokio::test]
    async fn file_tools_through_the_registry() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("m.txt"), "a = 1\r\nb = 2\r\n").unwrap();
        let ctx = super::context(d.path()).unwrap();
        let r = super::registry();
        let edit = json!({"file_path": "m.txt", "old_string": "a = 1", "new_string": "a = 10"});
        let res = r.execute("edit_file", edit.clone(), &ctx).await;
        assert!(res.error.unwrap().message.starts_with("You must read file"));
        let res = r
            .execute(
                "read_file",
                json!({"file_path": "m.txt", "offset": null}),
                &ctx,
            )
            .await;
        assert!(res.output.contains("1: a = 1\n2: b = 2\n"), "{res:?}");
        let res = r.execute("edit_file", edit, &ctx).await;
        assert!(res.is_ok(), "{res:?}");
        let res = r
            .execute(
                "multi_edit",
                json!({"file_path": "m.txt", "edits": [
                    {"old_string": "a = 10", "new_string": "a = 11"},
                    {"old_string": "b = 2", "new_string": "b = 3", "replace_all": true}
                ]}),
                &ctx,
            )
            .await;
        assert!(res.is_ok(), "{res:?}");
        assert_eq!(
            std::fs::read(d.path().join("m.txt")).unwrap(),
            b"a = 11\r\nb = 3\r\n"
        );
        let res = r
            .execute(
                "apply_patch",
                json!({"patch": "*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch"}),
                &ctx,
            )
            .await;
        assert_eq!(
            res.output,
            "Success. Updated the following files:\nA n.txt\n"
        );
        let res = r
            .execute(
                "write_file",
                json!({"file_path": "n.txt", "content": "y"}),
                &ctx,
            )
            .await;
        assert!(res.is_ok(), "a patch write counts as a read: {res:?}");
    }

    fn private_tempdir() -> tempfile::TempDir {
        use std::os::unix::fs::PermissionsExt;
        tempfile::Builder::new()
            .permissions(std::fs::Permissions::from_mode(0o700))
            .tempdir()
            .unwrap()
    }

    /// Truncated output points at a spill file: `read_file` and `grep_content`
    /// may read it (default and configured spill folders), nothing may write there.
    #[tokio::test]
    async fn spill_files_are_readable_but_not_writable() {
        let d = tempfile::tempdir().unwrap();
        // A spill parent must be private (mode 0700), as `tempfile` can make it.
        let custom = private_tempdir();
        let configured = super::BashConfig::default().with_truncation(
            super::BashConfig::default()
                .truncation
                .spill_dir(custom.path()),
        );
        let r = super::registry();
        for ctx in [
            super::context(d.path()).unwrap(),
            super::context(d.path()).unwrap().with_state(configured),
        ] {
            let res = r
                .execute("bash_command", json!({"command": "seq 1 100000"}), &ctx)
                .await;
            assert_eq!(res.metadata["truncated"], true, "{res:?}");
            let spill = res.metadata["output_path"].as_str().unwrap().to_owned();
            let res = r
                .execute(
                    "read_file",
                    json!({"file_path": spill, "offset": 77777, "limit": 1}),
                    &ctx,
                )
                .await;
            assert!(res.output.contains("77777: 77777\n"), "{res:?}");
            let res = r
                .execute(
                    "grep_content",
                    json!({"pattern": "^88888$", "path": spill}),
                    &ctx,
                )
                .await;
            assert!(res.output.starts_with("Found 1 matches"), "{res:?}");
            for (tool, args) in [
                ("write_file", json!({"file_path": spill, "content": "x"})),
                (
                    "edit_file",
                    json!({"file_path": spill, "old_string": "77777", "new_string": "x"}),
                ),
            ] {
                let res = r.execute(tool, args, &ctx).await;
                let msg = res.error.map(|e| e.message).unwrap_or_default();
                assert!(msg.contains("outside the workspace"), "{tool}: {msg}");
            }
            assert_eq!(std::fs::metadata(&spill).unwrap().len(), 588_895);
            std::fs::remove_file(spill).unwrap();
        }
    }

    /// `read_file` / `grep_content` accept the spill files of the calling
    /// context's trace only: not another trace's, not through a planted
    /// symlink, not without the same trace id.
    #[tokio::test]
    async fn a_workspace_holding_the_private_folder_cannot_reach_other_traces() {
        let r = super::registry();
        let pid = std::process::id();
        let private = tool_core::truncate::private_dir().unwrap();
        let other = private.join("spill").join(format!("other-trace-{pid}"));
        tool_core::truncate::ensure_private_dir(&private.join("spill")).unwrap();
        tool_core::truncate::ensure_private_dir(&other).unwrap();
        let secret_file = other.join("output-x.txt");
        std::fs::write(&secret_file, "needle-of-another-trace\n").unwrap();
        // A workspace that contains the private folder: its parent.
        let top = std::fs::canonicalize(private.parent().unwrap()).unwrap();
        let ctx = super::context(&top)
            .unwrap()
            .with_trace_id(format!("me-trace-{pid}"));
        let res = r
            .execute(
                "read_file",
                json!({"file_path": secret_file.display().to_string()}),
                &ctx,
            )
            .await;
        let e = res.error.expect("refused");
        assert_eq!(e.kind, tool_core::ErrorKind::Denied, "{}", e.message);
        assert!(e.message.contains("private folder"), "{}", e.message);
        for path in [private.display().to_string(), other.display().to_string()] {
            let res = r
                .execute(
                    "grep_content",
                    json!({"pattern": "needle-of-another", "path": path}),
                    &ctx,
                )
                .await;
            assert!(!res.output.contains("output-x.txt"), "{res:?}");
        }
        let name = private.file_name().unwrap().to_string_lossy().into_owned();
        let listing = r
            .execute("list_dir", json!({"path": top.display().to_string()}), &ctx)
            .await;
        assert!(
            !listing.output.contains(&format!("{name}/spill")),
            "{}",
            listing.output
        );
        std::fs::remove_dir_all(&other).unwrap();
    }

    #[tokio::test]
    async fn spill_files_of_another_trace_are_refused() {
        let d = tempfile::tempdir().unwrap();
        let r = super::registry();
        let pid = std::process::id();
        let ctx = |trace: &str| {
            super::context(d.path())
                .unwrap()
                .with_trace_id(format!("{trace}-{pid}"))
        };
        let (a, b) = (ctx("spill-a"), ctx("spill-b"));
        assert!(
            super::Workspace::new(d.path())
                .unwrap()
                .read_only_roots()
                .is_empty()
        );
        let res = r
            .execute("bash_command", json!({"command": "seq 1 100000"}), &a)
            .await;
        let spill = std::path::PathBuf::from(res.metadata["output_path"].as_str().unwrap());
        let a_dir = spill.parent().unwrap().to_path_buf();
        let parent = a_dir.parent().unwrap().to_path_buf();
        assert_eq!(a_dir, parent.join(format!("spill-a-{pid}")));
        let read = |path: String| json!({"file_path": path, "offset": 5, "limit": 1});
        let res = r
            .execute("read_file", read(spill.display().to_string()), &a)
            .await;
        assert!(res.output.contains("5: 5\n"), "{res:?}");
        // The same file through b's trace folder, a `..` path and plain.
        let b_dir = parent.join(format!("spill-b-{pid}"));
        tool_core::truncate::ensure_private_dir(&b_dir).unwrap();
        let name = spill.file_name().unwrap().to_string_lossy().into_owned();
        let via_dotdot = format!("{}/../spill-a-{pid}/{name}", b_dir.display());
        let planted_file = b_dir.join("planted.txt");
        std::os::unix::fs::symlink(&spill, &planted_file).unwrap();
        let c_dir = parent.join(format!("spill-c-{pid}"));
        std::os::unix::fs::symlink(&a_dir, &c_dir).unwrap();
        let via_planted_folder = c_dir.join(&name).display().to_string();
        let untraced = super::context(d.path()).unwrap();
        for (who, ctx, path) in [
            ("b", &b, spill.display().to_string()),
            ("b", &b, via_dotdot),
            ("b", &b, planted_file.display().to_string()),
            ("c", &ctx("spill-c"), via_planted_folder),
            ("untraced", &untraced, spill.display().to_string()),
        ] {
            let res = r.execute("read_file", read(path.clone()), ctx).await;
            let msg = res.error.map(|e| e.message).unwrap_or_default();
            assert!(msg.contains("outside the workspace"), "{who} {path}: {msg}");
            let res = r
                .execute("grep_content", json!({"pattern": "^5$", "path": path}), ctx)
                .await;
            let msg = res.error.map(|e| e.message).unwrap_or_default();
            assert!(msg.contains("outside the workspace"), "{who} grep: {msg}");
        }
        for dir in [&a_dir, &b_dir] {
            std::fs::remove_dir_all(dir).unwrap();
        }
        std::fs::remove_file(&c_dir).unwrap();
    }

    #[test]
    fn registry_holds_exactly_the_builtins_that_are_linked() {
        let r = super::registry();
        for name in [
            "read_file",
            "write_file",
            "edit_file",
            "multi_edit",
            "apply_patch",
        ] {
            let tool = r.get(name).unwrap_or_else(|| panic!("{name} missing"));
            assert!(!tool.spec().description.is_empty());
            assert_eq!(tool.spec().hidden_params, vec!["context".to_owned()]);
        }
        // Found by crate, not by a list: exactly the built-ins, no test tool.
        assert_eq!(
            r.names(),
            [
                "apply_patch",
                "bash_command",
                "edit_file",
                "glob_files",
                "grep_content",
                "list_dir",
                "multi_edit",
                "read_file",
                "write_file",
            ]
        );
        // A shell can delete anything and reach the network: say so to MCP clients.
        for (name, tags) in [
            ("read_file", &["fs", "read"][..]),
            ("edit_file", &["fs", "edit"]),
            ("grep_content", &["fs", "search"]),
            ("bash_command", &["shell"]),
        ] {
            assert_eq!(r.get(name).unwrap().spec().tags, tags, "{name}");
        }
        let bash = r.get("bash_command").unwrap().spec();
        assert!(bash.flags.destructive && bash.flags.open_world && !bash.flags.read_only);
        let read = r.get("read_file").unwrap().spec();
        assert_eq!(read.parameters["properties"]["offset"]["default"], 1);
        let edit = r.get("edit_file").unwrap().spec();
        assert_eq!(
            edit.parameters["properties"]["replace_all"]["type"],
            "boolean"
        );
        let mut names = read.parameter_names();
        names.sort_unstable();
        assert_eq!(names, vec!["file_path", "limit", "offset"]);
        assert_eq!(
            read.parameters["required"],
            serde_json::json!(["file_path"])
        );
    }
}
