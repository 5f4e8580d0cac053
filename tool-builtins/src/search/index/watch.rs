//! The file watcher: inotify (through the `inotify` crate) watching every
//! folder of the workspace, feeding changed paths into a queue the index
//! drains before each search.
//!
//! Why not `notify`, the portable watcher: its inotify backend (8.x) always
//! asks the kernel for `IN_OPEN` as well, so every file a search opens in
//! the workspace queued an event and woke the watcher's thread — a third of
//! an indexed search's CPU time (measured), and a search or build opening
//! more files than the kernel's queue holds (`fs.inotify.max_queued_events`,
//! 16384 by default) overflowed it, which re-walks the workspace. Its 9.x
//! release candidates let a caller leave opens out, but need Rust 1.88.
//! Here only changes are asked for: creation, deletion, writes, attribute
//! changes and renames.
//!
//! Draining is exact, not timed: every watch of one inotify instance shares
//! one queue, which the kernel fills in the order of the changes.
//! [`Watcher::barrier`] creates a fresh file in a private sentinel folder
//! (never in the workspace) that the same instance watches, and waits until
//! that file's creation comes through: every change made before the
//! barrier started has then been queued.
//!
//! The sentinel folder, `sentinels-<pid>` next to the index file, is
//! removed when the watcher is dropped; a starting watcher removes those of
//! processes no longer running, and a barrier that finds its folder gone
//! (deleted by a person or an older `tool index drop`) makes and watches
//! it again.

use std::collections::{HashMap, HashSet};
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::time::Duration;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask, Watches};

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

/// What each watch reports: changes only (no opens, reads or closes
/// without writing); symbolic links are not followed, so each folder is
/// watched once, at its own path, and the index maps changes below a
/// linked folder's target onto the link.
fn mask() -> WatchMask {
    WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::ATTRIB
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::DONT_FOLLOW
}

/// A running watcher over one workspace: a thread reading the inotify
/// queue, stopped when the watcher is dropped.
pub(crate) struct Watcher {
    sentinels: PathBuf,
    /// The instance's watches and the folder each names (shared with the
    /// thread), to watch the sentinel folder again if it was deleted.
    watches: Mutex<Watches>,
    paths: Arc<Mutex<HashMap<WatchDescriptor, PathBuf>>>,
    next: Mutex<u64>,
    queue: Arc<Queue>,
    /// Written to (or closed) to stop the thread.
    stop: Option<OwnedFd>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Watcher {
    fn drop(&mut self) {
        // Closing the write end wakes the thread's poll.
        drop(self.stop.take());
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        // This process's sentinel folder goes with it.
        let _ = std::fs::remove_dir_all(&self.sentinels);
    }
}

/// The watcher thread's state: the inotify instance and the folder each watch names.
struct Folders {
    inotify: Inotify,
    paths: Arc<Mutex<HashMap<WatchDescriptor, PathBuf>>>,
}

impl Folders {
    /// Watches `dir` and every folder below it (symbolic links not
    /// followed), each before listing it, so a folder created meanwhile is
    /// either listed or reported. With `shared`, up to [`WATCH_THREADS`]
    /// threads (no more than the cores) share the folders still to watch:
    /// the kernel work is a watch and a listing per folder, and one thread
    /// alone took some 75 ms on a tree of 1 GB (12 000 folders), every other
    /// core idle meanwhile. Without it (a folder an event reported, mostly
    /// small: starting threads would cost more than it saves) the calling
    /// thread does it all. A helper thread the system refuses to start is
    /// done without.
    ///
    /// # Errors
    /// Why a watch could not be added (too many watches: the message names
    /// the limit); folders that vanish meanwhile are skipped.
    fn watch_tree(&mut self, dir: &Path, shared: bool) -> Result<(), String> {
        let threads = if shared {
            std::thread::available_parallelism()
                .map_or(1, std::num::NonZeroUsize::get)
                .clamp(1, WATCH_THREADS)
        } else {
            1
        };
        let work = Mutex::new(TreeWork {
            todo: vec![dir.to_path_buf()],
            busy: 0,
            error: None,
        });
        let wake = Condvar::new();
        let watches = self.inotify.watches();
        std::thread::scope(|scope| {
            for _ in 1..threads {
                let (mut watches, work, wake, paths) = (watches.clone(), &work, &wake, &self.paths);
                let helper = std::thread::Builder::new()
                    .name("index-watch-tree".to_owned())
                    .spawn_scoped(scope, move || {
                        watch_folders(&mut watches, paths, work, wake);
                    });
                if helper.is_err() {
                    // No thread to be had (a limit reached): fewer share the tree.
                    break;
                }
            }
            watch_folders(&mut watches.clone(), &self.paths, &work, &wake);
        });
        match work
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
            .error
        {
            Some(reason) => Err(reason),
            None => Ok(()),
        }
    }
}

/// Most threads a shared [`Folders::watch_tree`] uses: 4 (no more than
/// the cores there are).
const WATCH_THREADS: usize = 4;

/// Folders a [`Folders::watch_tree`] has still to watch, shared by its threads.
struct TreeWork {
    todo: Vec<PathBuf>,
    /// Threads watching and listing a folder now (which may add more).
    busy: usize,
    /// The first error: every thread stops at it.
    error: Option<String>,
}

/// One thread of [`Folders::watch_tree`]: takes a folder, watches it,
/// lists it and hands its folders back, until none is left and no thread
/// is listing one (or one failed).
fn watch_folders(
    watches: &mut Watches,
    paths: &Mutex<HashMap<WatchDescriptor, PathBuf>>,
    work: &Mutex<TreeWork>,
    wake: &Condvar,
) {
    let lock = || work.lock().unwrap_or_else(PoisonError::into_inner);
    loop {
        let dir = {
            let mut w = lock();
            loop {
                if w.error.is_some() {
                    return;
                }
                if let Some(dir) = w.todo.pop() {
                    w.busy += 1;
                    break dir;
                }
                if w.busy == 0 {
                    // Nothing left, and nothing can add more.
                    wake.notify_all();
                    return;
                }
                w = wake.wait(w).unwrap_or_else(PoisonError::into_inner);
            }
        };
        let found = watch_folder(watches, paths, &dir);
        let mut w = lock();
        w.busy -= 1;
        let found = found.unwrap_or_else(|reason| {
            w.error.get_or_insert(reason);
            Vec::new()
        });
        // Waiting threads wake for new folders, an error, or the end.
        let notify = !found.is_empty() || w.error.is_some() || w.busy == 0;
        w.todo.extend(found);
        drop(w);
        if notify {
            wake.notify_all();
        }
    }
}

/// Watches one folder and lists the folders in it (to watch next). A
/// folder gone or no folder any more is skipped (none listed).
///
/// # Errors
/// One that stops the whole tree: too many watches, or another error of
/// adding the watch.
fn watch_folder(
    watches: &mut Watches,
    paths: &Mutex<HashMap<WatchDescriptor, PathBuf>>,
    dir: &Path,
) -> Result<Vec<PathBuf>, String> {
    match watches.add(dir, mask()) {
        Ok(wd) => {
            paths
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .insert(wd, dir.to_path_buf());
        }
        Err(e) if e.raw_os_error() == Some(libc::ENOSPC) => {
            return Err(format!(
                "too many folders to watch (the fs.inotify.max_user_watches limit) at {}",
                dir.display()
            ));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        // Not a folder (any more), or unreadable: nothing to watch.
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot watch {}: {e}", dir.display())),
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(Vec::new());
    };
    Ok(entries
        .flatten()
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_dir()))
        .map(|entry| entry.path())
        .collect())
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
        let inotify = Inotify::init().map_err(|e| format!("cannot start a file watcher: {e}"))?;
        let paths = Arc::new(Mutex::new(HashMap::new()));
        let mut folders = Folders {
            inotify,
            paths: Arc::clone(&paths),
        };
        let mut watches = folders.inotify.watches();
        let wd = watches
            .add(sentinels, mask())
            .map_err(|e| format!("cannot watch {}: {e}", sentinels.display()))?;
        paths
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(wd, sentinels.to_path_buf());
        folders.watch_tree(root, true)?;
        remove_dead_sentinels(sentinels);
        // Sentinels left by an earlier process are stale.
        if let Ok(entries) = std::fs::read_dir(sentinels) {
            for entry in entries.flatten() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        let (stop_read, stop) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)
            .map_err(|e| format!("cannot start a file watcher: {e}"))?;
        let thread_queue = Arc::clone(&queue);
        let (sentinel_dir, root) = (sentinels.to_path_buf(), root.to_path_buf());
        let thread = std::thread::Builder::new()
            .name("index-watcher".to_owned())
            .spawn(move || run(folders, &stop_read, &thread_queue, &root, &sentinel_dir))
            .map_err(|e| format!("cannot start a file watcher: {e}"))?;
        Ok(Self {
            sentinels: sentinels.to_path_buf(),
            watches: Mutex::new(watches),
            paths,
            next: Mutex::new(0),
            queue,
            stop: Some(stop),
            thread: Some(thread),
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
        if let Err(e) = std::fs::File::create(&file) {
            // The folder was deleted (`tool index drop` by an older
            // version, a person): made and watched again.
            if e.kind() != std::io::ErrorKind::NotFound
                || !self.rewatch_sentinels()
                || std::fs::File::create(&file).is_err()
            {
                return false;
            }
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

impl Watcher {
    /// Creates the sentinel folder again and watches it; `false` when that fails.
    fn rewatch_sentinels(&self) -> bool {
        if make_private_dir(&self.sentinels).is_err() {
            return false;
        }
        let added = self
            .watches
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .add(&self.sentinels, mask());
        let Ok(wd) = added else { return false };
        self.paths
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(wd, self.sentinels.clone());
        true
    }
}

/// Removes the sentinel folders (`sentinels-<pid>` next to `own`) of
/// processes that are no longer running (one left by a process that was
/// killed, or by an older version that kept them).
fn remove_dead_sentinels(own: &Path) {
    let Some(parent) = own.parent() else { return };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix("sentinels-"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if pid != std::process::id() && !Path::new("/proc").join(pid.to_string()).exists() {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The watcher thread: reads events until `stop` is closed, and records
/// them in `queue`. After the kernel's queue overflowed, every folder of
/// `root` is watched again (one created meanwhile went unreported).
fn run(mut folders: Folders, stop: &OwnedFd, queue: &Queue, root: &Path, sentinels: &Path) {
    use rustix::event::{PollFd, PollFlags};
    let mut buffer = vec![0u8; 64 << 10];
    loop {
        let mut fds = [
            PollFd::new(&folders.inotify, PollFlags::IN),
            PollFd::new(stop, PollFlags::IN),
        ];
        match rustix::event::poll(&mut fds, None) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return fail(queue, &format!("the file watcher stopped: {e}")),
        }
        if !fds[1].revents().is_empty() {
            return;
        }
        // Paths of this batch, and folders that appeared in it.
        let mut changed: Vec<PathBuf> = Vec::new();
        let mut new_folders: Vec<PathBuf> = Vec::new();
        let (mut rescan, mut seen) = (false, 0u64);
        match folders.inotify.read_events(&mut buffer) {
            Ok(events) => {
                for event in events {
                    if event.mask.contains(EventMask::Q_OVERFLOW) {
                        rescan = true;
                        continue;
                    }
                    let mut paths = folders.paths.lock().unwrap_or_else(PoisonError::into_inner);
                    if event.mask.contains(EventMask::IGNORED) {
                        paths.remove(&event.wd);
                        continue;
                    }
                    let Some(dir) = paths.get(&event.wd).cloned() else {
                        continue;
                    };
                    drop(paths);
                    let path = match event.name {
                        Some(name) => dir.join(name),
                        None => dir.clone(),
                    };
                    if dir == sentinels {
                        if event.mask.contains(EventMask::CREATE) {
                            let n = event
                                .name
                                .and_then(|n| n.to_str())
                                .and_then(|n| n.parse::<u64>().ok())
                                .unwrap_or(0);
                            seen = seen.max(n);
                        }
                        continue;
                    }
                    if event.mask.contains(EventMask::ISDIR)
                        && event
                            .mask
                            .intersects(EventMask::CREATE | EventMask::MOVED_TO)
                    {
                        new_folders.push(path.clone());
                    }
                    changed.push(path);
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => return fail(queue, &format!("the file watcher stopped: {e}")),
        }
        // A new (or moved) folder's folders are watched before its change
        // is queued, so a file created in it after the drain is reported.
        if rescan {
            new_folders = vec![root.to_path_buf()];
        }
        for dir in new_folders {
            // After an overflow, the whole tree again: shared by threads.
            if let Err(reason) = folders.watch_tree(&dir, rescan) {
                return fail(queue, &reason);
            }
        }
        let mut pending = queue.lock();
        if rescan {
            pending.rescan = true;
        }
        for path in changed {
            pending.add(path);
        }
        if seen > pending.seen {
            pending.seen = seen;
        }
        drop(pending);
        queue.cond.notify_all();
    }
}

/// Records that watching failed (searches then scan) and wakes any barrier.
fn fail(queue: &Queue, reason: &str) {
    let mut pending = queue.lock();
    if pending.failed.is_none() {
        pending.failed = Some(reason.to_owned());
    }
    drop(pending);
    queue.cond.notify_all();
}

/// Creates `dir` and its parents, the last with mode `0700`.
pub(crate) fn make_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The watch masks of every inotify instance of this process, from
    /// `/proc/self/fdinfo` (one `inotify wd:… mask:HEX …` line a watch).
    fn watch_masks() -> Vec<u32> {
        let mut masks = Vec::new();
        for entry in std::fs::read_dir("/proc/self/fdinfo").unwrap().flatten() {
            let Ok(info) = std::fs::read_to_string(entry.path()) else {
                continue;
            };
            for line in info.lines().filter(|l| l.starts_with("inotify wd:")) {
                let mask = line
                    .split_whitespace()
                    .find_map(|f| f.strip_prefix("mask:"))
                    .and_then(|m| u32::from_str_radix(m, 16).ok())
                    .unwrap();
                masks.push(mask);
            }
        }
        masks
    }

    fn pending_paths(queue: &Queue) -> HashSet<PathBuf> {
        queue.lock().paths.clone()
    }

    #[test]
    fn every_folder_of_a_tree_is_watched_once_by_the_threads_sharing_it() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        // 1 + 6 + 36 + 216 folders, a file in each, and a link to a folder
        // (not followed: its target is watched at its own path only).
        let mut want = HashSet::from([root.clone()]);
        for a in 0..6 {
            for b in 0..6 {
                for c in 0..6 {
                    let leaf = root.join(format!("a{a}/b{b}/c{c}"));
                    std::fs::create_dir_all(&leaf).unwrap();
                    std::fs::write(leaf.join("f.rs"), "x").unwrap();
                    want.insert(leaf.parent().unwrap().to_path_buf());
                    want.insert(leaf.parent().unwrap().parent().unwrap().to_path_buf());
                    want.insert(leaf);
                }
            }
        }
        std::os::unix::fs::symlink(root.join("a0/b0"), root.join("link")).unwrap();
        assert_eq!(want.len(), 1 + 6 + 36 + 216);
        // Shared by threads (rounds 0, 2, 4) or by the caller alone.
        for round in 0..5 {
            let paths = Arc::new(Mutex::new(HashMap::new()));
            let mut folders = Folders {
                inotify: Inotify::init().unwrap(),
                paths: Arc::clone(&paths),
            };
            folders.watch_tree(&root, round % 2 == 0).unwrap();
            let watched = paths.lock().unwrap();
            let got: HashSet<PathBuf> = watched.values().cloned().collect();
            assert_eq!(got, want);
            assert_eq!(watched.len(), want.len(), "one watch a folder");
        }
        // A folder that is gone, or below a file, is skipped, not an error.
        let mut folders = Folders {
            inotify: Inotify::init().unwrap(),
            paths: Arc::new(Mutex::new(HashMap::new())),
        };
        folders.watch_tree(&root.join("gone"), true).unwrap();
        folders
            .watch_tree(&root.join("a0/b0/c0/f.rs/x"), false)
            .unwrap();
        assert!(folders.paths.lock().unwrap().is_empty());
    }

    #[test]
    fn folders_are_watched_for_changes_only_and_new_folders_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join("ws/a/b")).unwrap();
        let state = tempfile::tempdir().unwrap();
        let queue = Arc::new(Queue::default());
        let watcher = Watcher::start(
            &root.join("ws"),
            &state.path().join("sentinels"),
            Arc::clone(&queue),
        )
        .unwrap();
        // The sentinel folder, ws, ws/a, ws/b: none asks for opens (which
        // every read of a searched file would queue) or reads.
        let masks = watch_masks();
        assert!(masks.len() >= 4, "{masks:x?}");
        let (open, access, close_nowrite) = (0x20, 0x01, 0x10);
        for mask in &masks {
            assert_eq!(mask & (open | access | close_nowrite), 0, "{mask:x}");
            assert_ne!(mask & 0x100, 0, "creations are watched: {mask:x}");
        }
        // Reading a file queues nothing; writing one is seen at the next barrier.
        std::fs::write(root.join("ws/a/b/f.rs"), "x").unwrap();
        assert!(watcher.barrier());
        queue.lock().paths.clear();
        let _ = std::fs::read(root.join("ws/a/b/f.rs")).unwrap();
        assert!(watcher.barrier());
        assert!(
            pending_paths(&queue).is_empty(),
            "{:?}",
            pending_paths(&queue)
        );
        std::fs::write(root.join("ws/a/g.rs"), "y").unwrap();
        assert!(watcher.barrier());
        assert!(pending_paths(&queue).contains(&root.join("ws/a/g.rs")));
        // A folder made after the start is watched once reported: a file
        // created in it later is seen too.
        std::fs::create_dir(root.join("ws/new")).unwrap();
        assert!(watcher.barrier());
        assert!(pending_paths(&queue).contains(&root.join("ws/new")));
        std::fs::write(root.join("ws/new/h.rs"), "z").unwrap();
        assert!(watcher.barrier());
        assert!(pending_paths(&queue).contains(&root.join("ws/new/h.rs")));
        // Dropping the watcher stops its thread.
        drop(watcher);
    }
}
