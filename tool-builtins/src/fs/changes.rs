//! Change snapshots: every change the tools make, sent to a host's hook so
//! it can rewind a turn; [`ChangeLog`] is a ready-made in-memory hook.

use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use tool_core::ToolContext;

use super::atomic::write_atomic;

/// One change a tool made to a file, for a host that wants to rewind a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file (canonical path).
    pub path: PathBuf,
    /// The content before the change; `None` when the file did not exist, or
    /// existed but could not be read (then `existed` is `true`).
    pub before: Option<Vec<u8>>,
    /// Whether the file existed before the change.
    pub existed: bool,
    /// The content after the change; `None` when the file was deleted.
    pub after: Option<Vec<u8>>,
}

impl Change {
    /// The file existed but its old content could not be read, so this change
    /// cannot be undone by restoring it.
    pub fn before_unreadable(&self) -> bool {
        self.existed && self.before.is_none()
    }
}

/// Receives every [`Change`] the built-in tools make.
pub trait SnapshotHook: Send + Sync {
    /// Called after a change was written to disk.
    fn record(&self, change: &Change);
}

/// The snapshot hook of a context: store one with
/// `ctx.with_state(Snapshots::new(hook))`; without it changes are not recorded.
#[derive(Clone)]
pub struct Snapshots(pub Arc<dyn SnapshotHook>);

impl Snapshots {
    /// Wraps a hook for [`ToolContext::with_state`].
    pub fn new(hook: impl SnapshotHook + 'static) -> Self {
        Self(Arc::new(hook))
    }
}

impl fmt::Debug for Snapshots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Snapshots(..)")
    }
}

/// A ready-made [`SnapshotHook`] that keeps every change in memory and can undo them.
///
/// ```
/// use std::sync::Arc;
/// use tool_builtins::fs::changes::{ChangeLog, Snapshots};
/// use tool_core::ToolContext;
///
/// let log = Arc::new(ChangeLog::default());
/// let ctx = ToolContext::new().with_state(Snapshots(log.clone()));
/// assert!(log.changes().is_empty());
/// ```
#[derive(Debug, Default)]
pub struct ChangeLog {
    changes: Mutex<Vec<Change>>,
}

impl ChangeLog {
    /// Every change recorded so far, oldest first.
    pub fn changes(&self) -> Vec<Change> {
        self.changes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Removes and returns every change recorded so far.
    pub fn take(&self) -> Vec<Change> {
        std::mem::take(
            &mut *self
                .changes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Undoes every recorded change, newest first, and forgets them: files
    /// that did not exist are removed, others get their old content back.
    ///
    /// # Errors
    /// The first I/O error, or `InvalidData` for a change whose old content
    /// was unreadable (that file is left as it is; the rest are undone).
    pub fn rewind(&self) -> io::Result<()> {
        let mut first_err = None;
        for change in self.take().into_iter().rev() {
            let r = match (&change.before, change.existed) {
                (Some(old), _) => write_atomic(&change.path, old),
                (None, false) => match fs::remove_file(&change.path) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    r => r,
                },
                (None, true) => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the old content of {} was not readable",
                        change.path.display()
                    ),
                )),
            };
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl SnapshotHook for ChangeLog {
    fn record(&self, change: &Change) {
        self.changes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(change.clone());
    }
}

/// The old state of a file, as captured before changing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Before {
    /// The old bytes, when the file existed and could be read.
    pub content: Option<Vec<u8>>,
    /// Whether the file existed.
    pub existed: bool,
}

impl Before {
    /// Reads the current state of `path`. A file that exists but cannot be
    /// read is `existed: true, content: None`, never "did not exist".
    pub fn capture(path: &Path) -> Self {
        match fs::read(path) {
            Ok(bytes) => Self {
                content: Some(bytes),
                existed: true,
            },
            Err(_) => Self {
                content: None,
                existed: fs::symlink_metadata(path).is_ok(),
            },
        }
    }

    /// A state known without reading again (the caller already holds the bytes).
    pub fn known(content: Option<Vec<u8>>) -> Self {
        Self {
            existed: content.is_some(),
            content,
        }
    }
}

/// Whether the context has a snapshot hook (so the old content is worth keeping).
pub fn wants_snapshots(ctx: &ToolContext) -> bool {
    ctx.state::<Snapshots>().is_some()
}

/// Sends a change to the context's snapshot hook, if it has one (the new
/// content is copied only then).
pub fn record_change(ctx: &ToolContext, path: &Path, before: Before, after: Option<&[u8]>) {
    if let Some(state) = ctx.state::<Snapshots>() {
        let snapshots: &Snapshots = &state;
        snapshots.0.record(&Change {
            path: path.to_path_buf(),
            before: before.content,
            existed: before.existed,
            after: after.map(<[u8]>::to_vec),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn before_capture_distinguishes_missing_from_unreadable() {
        let d = tempfile::tempdir().unwrap();
        let missing = Before::capture(&d.path().join("nope"));
        assert_eq!(
            missing,
            Before {
                content: None,
                existed: false
            }
        );
        // A directory exists but cannot be read as a file.
        let dir = Before::capture(d.path());
        assert!(dir.existed && dir.content.is_none());
        let c = Change {
            path: d.path().into(),
            before: dir.content,
            existed: dir.existed,
            after: None,
        };
        assert!(c.before_unreadable());
    }

    #[test]
    fn change_log_rewinds() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.txt");
        let b = d.path().join("b.txt");
        fs::write(&a, "old").unwrap();
        let log = Arc::new(ChangeLog::default());
        let ctx = ToolContext::new().with_state(Snapshots(log.clone()));
        write_atomic(&a, b"new").unwrap();
        record_change(&ctx, &a, Before::known(Some(b"old".to_vec())), Some(b"new"));
        write_atomic(&b, b"created").unwrap();
        record_change(&ctx, &b, Before::known(None), Some(b"created"));
        assert_eq!(log.changes().len(), 2);
        log.rewind().unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"old");
        assert!(!b.exists());
    }
}
