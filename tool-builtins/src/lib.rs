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
//! # Modules
//! - [`workspace`]: [`Workspace`] and path resolution ("outside the workspace").
//! - [`ledger`]: [`FileLedger`], the read-before-write rule and per-file locks.
//! - [`fsutil`]: text decoding, line endings and BOM, atomic writes, change
//!   snapshots, binary detection, diffs.
//! - Head/tail truncation with spill files lives in `tool_core::truncate`.
//!
//! # Setting up a context
//! The tools read their environment from the [`ToolContext`] as typed state:
//! a [`Workspace`] (required), a [`FileLedger`] (required by the tools that
//! write) and a [`Snapshots`](fsutil::Snapshots) hook (optional). [`context`]
//! builds a context with the first two.
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
//!   replacement characters; the pair Firefox uses, both without unsafe surprises.
//! - `base64`: images returned to the model are base64 in [`tool_core::Image`].
//! - `memchr`: fast line counting when streaming a window out of a huge file.
//! - `strsim`: edit distance for the block-anchor matching of `edit_file`
//!   (already a `tool-core` dependency).

use std::io;
use std::path::Path;

use tool_core::ToolContext;

pub mod edit;
pub mod fsutil;
pub mod ledger;
pub mod multi_edit;
pub mod read;
pub mod replace;
pub mod workspace;
pub mod write;

mod ansi;
pub mod bash;
pub mod bash_policy;
pub mod glob;
pub mod grep;
pub mod list;
pub mod search;

pub use edit::edit_file;
pub use ledger::FileLedger;
pub use multi_edit::{Edit, multi_edit};
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

/// A context for the built-in tools: a [`Workspace`] rooted at `root` and a
/// fresh [`FileLedger`]. Add a [`Snapshots`](fsutil::Snapshots) hook with
/// [`ToolContext::with_state`] to record changes.
///
/// # Errors
/// The I/O error of canonicalising `root` (e.g. it does not exist).
pub fn context(root: impl AsRef<Path>) -> io::Result<ToolContext> {
    Ok(ToolContext::new()
        .with_state(Workspace::new(root)?)
        .with_state(FileLedger::new()))
}
