//! The file system as the built-in tools use it.
//!
//! Read side and write side, one concern per module:
//! - [`workspace`]: [`Workspace`](workspace::Workspace), the folder every path is
//!   confined to, and its error [`PathError`](workspace::PathError);
//! - [`beneath`]: resolving a path beneath the workspace's folder handle
//!   (`openat` one component at a time, symlinks followed by hand, bounded);
//! - [`ledger`]: [`FileLedger`](ledger::FileLedger), the read-before-write rule;
//! - [`text`], [`lines`], [`binary`]: decoding and encodings, line endings,
//!   binary sniffing;
//! - [`replace`]: the matching strategies of `edit_file` and `multi_edit`;
//! - [`atomic`]: atomic replacement of a file, and the host-side [`atomic::write_atomic`];
//! - [`changes`]: the snapshot hook that lets a host rewind a turn;
//! - [`diff`]: the unified diffs in every write's metadata;
//! - `target`: the one write path of every tool that changes a file
//!   (resolve once → lock → ledger check → decode → the tool's change →
//!   encode → write atomically → record → diff → write hooks);
//! - [`read_cache`]: the stamps the trace's read cache checks before reusing an answer;
//! - [`after_write`]: the write hooks ([`AfterWrite`]) a host registers to
//!   run after every successful write (diagnostics, index updates).
//!
//! Nothing here imports the tools or the shell: `fs` is the floor the
//! other wings stand on.

pub mod after_write;
pub mod atomic;
pub mod beneath;
pub mod binary;
pub mod changes;
pub mod diff;
pub mod ledger;
pub mod lines;
pub mod read_cache;
pub mod replace;
pub(crate) mod target;
pub mod text;
pub mod workspace;

pub use after_write::{AfterWrite, AfterWriteHooks, ChangedPath, HookReport};

use std::path::{Path, PathBuf};

/// Characters of a model-sent value kept in a message (about 200): a 10 MB
/// path is not echoed back whole.
pub(crate) const MESSAGE_VALUE_CHARS: usize = 200;

/// How a message quotes a model-sent value: [`MESSAGE_VALUE_CHARS`]
/// characters, a cut marked `… (N more bytes)` (`tool_rules::text::clip`).
pub(crate) const MESSAGE_VALUE: tool_rules::text::Clip =
    tool_rules::text::Clip::chars(MESSAGE_VALUE_CHARS).counting_rest();

/// The canonical form of `path`'s longest existing ancestor (or of `path`
/// itself) and the rest of the path below it. Used only to map a symlinked
/// spelling of a root's path onto the root; nothing is opened through it.
pub(crate) fn canonical_ancestor(path: &Path) -> Option<(PathBuf, PathBuf)> {
    let mut rest = Vec::new();
    let mut at = path;
    loop {
        if let Ok(c) = std::fs::canonicalize(at) {
            let mut tail = PathBuf::new();
            for name in rest.iter().rev() {
                tail.push(name);
            }
            return Some((c, tail));
        }
        rest.push(at.file_name()?.to_os_string());
        at = at.parent()?;
    }
}
