//! The file system as the built-in tools use it: every path resolved
//! beneath the workspace's folder handle ([`beneath`]), and one write path
//! for every tool that changes a file (`target`): resolve → lock → ledger
//! check → write atomically → record → diff.

pub(crate) mod atomic;
pub mod beneath;
pub(crate) mod target;

use std::path::{Path, PathBuf};

/// Characters of a model-sent value kept in a message (about 200): a 10 MB
/// path is not echoed back whole.
pub(crate) const MESSAGE_VALUE_CHARS: usize = 200;

/// `text` cut to [`MESSAGE_VALUE_CHARS`] characters, with a note of how much was left out.
pub(crate) fn clip(text: &str) -> String {
    match text.char_indices().nth(MESSAGE_VALUE_CHARS) {
        None => text.to_owned(),
        Some((at, _)) => format!("{}… ({} more bytes)", &text[..at], text.len() - at),
    }
}

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
