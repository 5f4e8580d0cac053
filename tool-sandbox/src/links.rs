//! Hard links planted in the workspace: a regular file whose inode has more
//! links than the workspace holds shares its data with a file outside, and
//! escapes every path-based rule (a write through it changes the outside
//! file, a read reads it). The scan walks the workspace within a time and
//! entry budget, counting the links of each multi-link inode it meets; the
//! inodes with links left over are "outside" links. Directory listings are
//! cached by the directory's (device, inode) and modification time, so an
//! unchanged tree costs one `stat` per directory and per multi-link file.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Time budget of one scan: 500 ms.
pub(crate) const SCAN_BUDGET: Duration = Duration::from_millis(500);
/// Most entries one scan visits: 200 000.
const MAX_ENTRIES: usize = 200_000;
/// Most directories kept in the cache: 100 000.
const MAX_CACHED_DIRS: usize = 100_000;

/// What a scan found.
#[derive(Debug, Default, Clone)]
pub struct LinkScan {
    /// Paths in the workspace of regular files that share their inode with
    /// a file outside it (more links than found inside).
    pub outside: Vec<PathBuf>,
    /// Whether the whole workspace was visited within the budget.
    pub complete: bool,
    /// Entries visited.
    pub visited: usize,
}

impl LinkScan {
    /// A one-line note when the scan could not finish, else `None`.
    pub fn note(&self) -> Option<String> {
        (!self.complete).then(|| {
            format!(
                "Hard-link scan of the workspace stopped after {} entries (budget); files beyond \
                 were not checked for links to outside files.",
                self.visited
            )
        })
    }

    /// The first few outside-linked paths, for messages.
    pub fn describe(&self) -> String {
        let mut shown: Vec<String> = self
            .outside
            .iter()
            .take(5)
            .map(|p| p.display().to_string())
            .collect();
        if self.outside.len() > 5 {
            shown.push(format!("and {} more", self.outside.len() - 5));
        }
        shown.join(", ")
    }
}

#[derive(Debug, Clone)]
struct CachedDir {
    mtime: (i64, i64),
    subdirs: Vec<PathBuf>,
    /// Regular files with more than one link.
    multi: Vec<PathBuf>,
    /// Entries named `.git` (folder, file or link): the repositories the
    /// after-call git check looks into (`crate::git_plants`).
    gits: Vec<PathBuf>,
}

fn cache() -> &'static Mutex<HashMap<(u64, u64), CachedDir>> {
    static CACHE: std::sync::OnceLock<Mutex<HashMap<(u64, u64), CachedDir>>> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Scans `workspace` for regular files linked from outside it, within `budget`.
pub fn scan_hard_links(workspace: &Path, budget: Duration) -> LinkScan {
    let mut seen: HashMap<(u64, u64), (u64, Vec<PathBuf>)> = HashMap::new();
    let (complete, visited) = walk(workspace, budget, |listing| {
        for file in &listing.multi {
            if let Ok(m) = std::fs::symlink_metadata(file)
                && m.is_file()
                && m.nlink() > 1
            {
                let entry = seen
                    .entry((m.dev(), m.ino()))
                    .or_insert_with(|| (m.nlink(), Vec::new()));
                entry.1.push(file.clone());
            }
        }
    });
    let mut scan = LinkScan {
        complete,
        visited,
        ..LinkScan::default()
    };
    for (links, paths) in seen.into_values() {
        if (paths.len() as u64) < links {
            scan.outside.extend(paths);
        }
    }
    scan.outside.sort();
    scan
}

/// Every entry named `.git` below `workspace` (the workspace's own
/// included), found by the same bounded, cached walk as
/// [`scan_hard_links`]; and whether the walk finished within `budget`.
pub(crate) fn git_entries(workspace: &Path, budget: Duration) -> (Vec<PathBuf>, bool) {
    let mut gits = Vec::new();
    let (complete, _) = walk(workspace, budget, |listing| {
        gits.extend(listing.gits.iter().cloned());
    });
    (gits, complete)
}

/// Walks the folders below `workspace` on its device (links not
/// followed), calling `visit` with each folder's listing (cached by the
/// folder's device, inode and modification time); stops past `budget` or
/// [`MAX_ENTRIES`]. Returns whether it finished and the entries listed.
fn walk(workspace: &Path, budget: Duration, mut visit: impl FnMut(&CachedDir)) -> (bool, usize) {
    let start = Instant::now();
    let mut visited = 0;
    let Ok(root_meta) = std::fs::symlink_metadata(workspace) else {
        return (true, 0);
    };
    let dev = root_meta.dev();
    let mut stack = vec![workspace.to_path_buf()];
    // `try_lock`: a background job's supervisor walks after `fork`, where
    // a lock another thread held at the fork stays held for ever; the walk
    // then goes without the cache.
    let mut uncached = HashMap::new();
    let mut held = match cache().try_lock() {
        Ok(g) => Some(g),
        Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
        Err(std::sync::TryLockError::WouldBlock) => None,
    };
    let cache = match held.as_deref_mut() {
        Some(c) => c,
        None => &mut uncached,
    };
    while let Some(dir) = stack.pop() {
        if start.elapsed() > budget || visited > MAX_ENTRIES {
            return (false, visited);
        }
        let Ok(meta) = std::fs::symlink_metadata(&dir) else {
            continue;
        };
        if meta.dev() != dev {
            continue;
        }
        let key = (meta.dev(), meta.ino());
        let mtime = (meta.mtime(), meta.mtime_nsec());
        let listing = match cache.get(&key) {
            Some(c) if c.mtime == mtime => c.clone(),
            _ => {
                let Some(listing) = list(&dir, mtime, &mut visited) else {
                    continue;
                };
                if cache.len() >= MAX_CACHED_DIRS {
                    cache.clear();
                }
                cache.insert(key, listing.clone());
                listing
            }
        };
        visit(&listing);
        stack.extend(listing.subdirs);
    }
    (true, visited)
}

fn list(dir: &Path, mtime: (i64, i64), visited: &mut usize) -> Option<CachedDir> {
    let entries = std::fs::read_dir(dir).ok()?;
    let mut out = CachedDir {
        mtime,
        subdirs: Vec::new(),
        multi: Vec::new(),
        gits: Vec::new(),
    };
    for e in entries.flatten() {
        *visited += 1;
        let Ok(ft) = e.file_type() else {
            continue;
        };
        if e.file_name() == ".git" {
            out.gits.push(e.path());
        }
        if ft.is_dir() {
            out.subdirs.push(e.path());
        } else if ft.is_file() && e.metadata().is_ok_and(|m| m.nlink() > 1) {
            out.multi.push(e.path());
        }
    }
    Some(out)
}
