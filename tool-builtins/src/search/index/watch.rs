//! The file watcher: `notify`'s recommended backend (inotify on Linux)
//! watching the workspace recursively, feeding changed paths into a queue
//! the index drains before each search.
//!
//! Draining is exact, not timed: every watch of one watcher shares one
//! inotify queue, which the kernel fills in the order of the changes and
//! `notify` hands on in that order. [`Watcher::barrier`] creates a fresh
//! file in a private sentinel folder (never in the workspace) that the same
//! watcher watches, and waits until that file's creation comes through:
//! every change made before the barrier started has then been queued.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use notify::{EventKind, RecursiveMode, Watcher as _};

/// Longest a barrier waits for its sentinel: 2 s. Past it the search scans.
pub(crate) const BARRIER_TIMEOUT: Duration = Duration::from_secs(2);

/// Changed paths not yet applied to the index.
#[derive(Default)]
pub(crate) struct Pending {
    /// Paths named by events or by the host's write path.
    pub(crate) paths: HashSet<PathBuf>,
    /// The kernel's queue overflowed: every file must be checked again.
    pub(crate) rescan: bool,
    /// Watching failed (too many watches, an unsupported file system):
    /// the reason; the index is then not trusted.
    pub(crate) failed: Option<String>,
    /// Highest sentinel number seen.
    seen: u64,
}

/// Most paths held pending: 4096. Past it the queue holds none and asks
/// for a re-walk instead, so a burst of changes (a build writing
/// thousands of files) costs bounded memory.
pub(crate) const MAX_PENDING_PATHS: usize = 4096;

impl Pending {
    /// Records a changed path, or a re-walk once [`MAX_PENDING_PATHS`] are held.
    pub(crate) fn add(&mut self, path: PathBuf) {
        if self.rescan {
            return;
        }
        if self.paths.len() >= MAX_PENDING_PATHS {
            self.rescan = true;
            self.paths = HashSet::new();
            return;
        }
        self.paths.insert(path);
    }
}

/// The queue shared by the watcher's thread and the index.
#[derive(Default)]
pub(crate) struct Queue {
    pub(crate) pending: Mutex<Pending>,
    cond: Condvar,
}

impl Queue {
    /// The pending changes, locked.
    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// A running watcher over one workspace.
pub(crate) struct Watcher {
    _inner: notify::RecommendedWatcher,
    sentinels: PathBuf,
    next: Mutex<u64>,
    queue: Arc<Queue>,
}

impl Watcher {
    /// Watches `root` recursively and `sentinels` (a private folder, created
    /// here) for barriers.
    ///
    /// # Errors
    /// The reason watching is impossible, for the host's log.
    pub(crate) fn start(root: &Path, sentinels: &Path, queue: Arc<Queue>) -> Result<Self, String> {
        make_private_dir(sentinels).map_err(|e| {
            format!(
                "cannot create the sentinel folder {}: {e}",
                sentinels.display()
            )
        })?;
        let handler_queue = Arc::clone(&queue);
        let sentinel_dir = sentinels.to_path_buf();
        let handler = move |event: notify::Result<notify::Event>| {
            let mut pending = handler_queue.lock();
            match event {
                Ok(event) => {
                    if event.need_rescan() {
                        pending.rescan = true;
                    }
                    for path in event.paths {
                        if path.parent() == Some(sentinel_dir.as_path()) {
                            if matches!(event.kind, EventKind::Create(_)) {
                                let n = path
                                    .file_name()
                                    .and_then(|n| n.to_str())
                                    .and_then(|n| n.parse::<u64>().ok())
                                    .unwrap_or(0);
                                pending.seen = pending.seen.max(n);
                                handler_queue.cond.notify_all();
                            }
                        } else if !is_read_only(event.kind) {
                            pending.add(path);
                        }
                    }
                }
                Err(e) => {
                    if pending.failed.is_none() {
                        pending.failed = Some(e.to_string());
                    }
                    handler_queue.cond.notify_all();
                }
            }
        };
        // Symbolic links are not followed: each folder is watched once, at
        // its own path, and the index maps changes below a linked folder's
        // target onto the link.
        let config = notify::Config::default().with_follow_symlinks(false);
        let mut inner = notify::RecommendedWatcher::new(handler, config)
            .map_err(|e| format!("cannot start a file watcher: {e}"))?;
        inner
            .watch(sentinels, RecursiveMode::NonRecursive)
            .map_err(|e| format!("cannot watch {}: {e}", sentinels.display()))?;
        inner
            .watch(root, RecursiveMode::Recursive)
            .map_err(|e| format!("cannot watch {}: {e}", root.display()))?;
        // Sentinels left by an earlier process are stale.
        if let Ok(entries) = std::fs::read_dir(sentinels) {
            for entry in entries.flatten() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(Self {
            _inner: inner,
            sentinels: sentinels.to_path_buf(),
            next: Mutex::new(0),
            queue,
        })
    }

    /// Waits until every change made before this call is in the queue.
    /// `false` when the sentinel did not come through within
    /// [`BARRIER_TIMEOUT`] or watching failed: the caller then scans.
    pub(crate) fn barrier(&self) -> bool {
        let n = {
            let mut next = self.next.lock().unwrap_or_else(PoisonError::into_inner);
            *next += 1;
            *next
        };
        let file = self.sentinels.join(n.to_string());
        if std::fs::File::create(&file).is_err() {
            return false;
        }
        let pending = self.queue.lock();
        let (pending, _) = self
            .queue
            .cond
            .wait_timeout_while(pending, BARRIER_TIMEOUT, |p| {
                p.seen < n && p.failed.is_none()
            })
            .unwrap_or_else(PoisonError::into_inner);
        let ok = pending.seen >= n && pending.failed.is_none();
        drop(pending);
        let _ = std::fs::remove_file(&file);
        ok
    }
}

/// Whether an event only reports a read (an open, a close without writing).
fn is_read_only(kind: EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode};
    matches!(kind, EventKind::Access(a) if a != AccessKind::Close(AccessMode::Write))
}

/// Creates `dir` and its parents, the last with mode `0700`.
pub(crate) fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}
