//! Resolution of a path beneath a directory handle, one component at a time.
//!
//! The workspace root is opened once as a directory handle (`O_PATH`). A
//! model's path is then walked from that handle: every component is opened
//! with `openat(parent, name, O_PATH | O_NOFOLLOW)`, a symlink is read with
//! `readlinkat` and its target spliced into the walk, and `..` pops back to
//! the handle the walk came from. Nothing is ever opened by its full path
//! string, so a component that is swapped for a symlink while the walk runs
//! is seen as a symlink (and checked) instead of being followed by the
//! kernel; `..` can never climb above the root, because the walk only holds
//! handles it opened beneath the root itself.
//!
//! Why this and not `openat2(RESOLVE_BENEATH)` or `cap-std`: both refuse
//! absolute symlinks outright, while a workspace may hold absolute links
//! that point inside it (`data -> /home/me/proj/assets`), which must keep
//! working; the walk also yields the physical path it took (for messages and
//! for the read-before-write ledger, which keys files by that path), and it
//! behaves the same on kernels before 5.6 and in sandboxes whose seccomp
//! filter blocks `openat2`. The cost is two system calls per component.
//!
//! Limits, since the path comes from a model: at most [`MAX_PATH_BYTES`]
//! bytes, [`MAX_COMPONENTS`] components (after splicing symlink targets)
//! and [`MAX_SYMLINK_HOPS`] symlinks per path.

use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, Stat};

/// Most symlinks followed while resolving one path (the Linux limit, `MAXSYMLINKS`).
pub const MAX_SYMLINK_HOPS: u32 = 40;

/// Longest path accepted, in bytes (Linux's `PATH_MAX`, 4096).
pub const MAX_PATH_BYTES: usize = 4096;

/// Most components walked for one path, counting those spliced in from symlink targets.
pub const MAX_COMPONENTS: usize = 4096;

/// An open directory that paths are resolved beneath: its canonical path and an `O_PATH` handle.
#[derive(Clone)]
pub(crate) struct RootDir {
    path: PathBuf,
    fd: Arc<OwnedFd>,
}

impl fmt::Debug for RootDir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RootDir").field(&self.path).finish()
    }
}

impl PartialEq for RootDir {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for RootDir {}

impl RootDir {
    /// Opens the folder `path` (canonicalised first) as a root.
    ///
    /// # Errors
    /// The I/O error of canonicalising or opening it (missing, not a folder, no permission).
    pub(crate) fn open(path: &Path) -> io::Result<Self> {
        let path = std::fs::canonicalize(path)?;
        let fd = rustix::fs::open(
            &path,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        Ok(Self {
            path,
            fd: Arc::new(fd),
        })
    }

    /// The canonical path the root was opened at.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// What to do about components that do not exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Missing {
    /// Every component must exist.
    Refuse,
    /// The last component may be missing (a file about to be created).
    AllowLast,
    /// Missing folders on the way are created (`mkdirat`, mode `0777` less the umask); the last may be missing.
    CreateParents,
    /// Missing folders on the way are allowed without creating them: the
    /// rest of the path is appended as is, provided it holds no `..` (which
    /// the kernel could not resolve either). For planning and messages only;
    /// the result has no handle to open.
    Plan,
}

/// Why a path could not be resolved beneath its root.
#[derive(Debug)]
pub(crate) enum WalkError {
    /// `..` climbed above the root, or a symlink points outside it.
    Outside {
        /// Where the walk was going when it left (as far as known).
        resolved: PathBuf,
    },
    /// A component does not exist.
    NotFound {
        /// The path up to and including the missing component.
        at: PathBuf,
        /// The path goes on from the missing folder with `..`.
        then_up: bool,
    },
    /// A component other than the last is not a folder.
    NotADirectory {
        /// The path up to and including that component.
        at: PathBuf,
    },
    /// A limit of the walk was hit (path length, components, symlink hops).
    Limit(String),
    /// Any other error of the filesystem.
    Io {
        /// The path up to the component being opened.
        at: PathBuf,
        /// The error.
        source: io::Error,
    },
}

/// A path resolved beneath a root: the folder that holds it (a handle), its
/// name in that folder, and the physical path the walk took.
#[derive(Debug)]
pub(crate) struct Beneath {
    /// The folder holding the entry (`O_PATH`); for the root itself, the root's handle.
    pub(crate) parent: Option<OwnedFd>,
    /// The entry's name in `parent`; `None` when the path is the root folder.
    pub(crate) name: Option<OsString>,
    /// The physical path (root path joined with the names walked).
    pub(crate) path: PathBuf,
    /// The entry's status (not following a symlink), `None` when it does not exist.
    pub(crate) stat: Option<Stat>,
}

impl Beneath {
    /// Whether the entry exists.
    pub(crate) fn exists(&self) -> bool {
        self.stat.is_some()
    }

    /// The entry's file type, when it exists.
    pub(crate) fn file_type(&self) -> Option<FileType> {
        self.stat.map(|s| FileType::from_raw_mode(s.st_mode))
    }

    /// The handle of the holding folder.
    ///
    /// # Errors
    /// `InvalidInput` for a planned path (see [`Missing::Plan`]), which has no handle.
    pub(crate) fn parent_fd(&self) -> io::Result<BorrowedFd<'_>> {
        self.parent.as_ref().map(AsFd::as_fd).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                "a planned path has no folder handle",
            )
        })
    }

    /// The entry's name, or `.` for the root folder.
    pub(crate) fn name_or_dot(&self) -> &OsStr {
        self.name.as_deref().unwrap_or(OsStr::new("."))
    }

    /// Opens the entry itself with `flags` (plus `O_NOFOLLOW | O_CLOEXEC`):
    /// a symlink swapped in since the walk fails with `ELOOP` instead of being followed.
    ///
    /// # Errors
    /// The error of `openat`.
    pub(crate) fn open(&self, flags: OFlags, mode: Mode) -> io::Result<OwnedFd> {
        Ok(rustix::fs::openat(
            self.parent_fd()?,
            self.name_or_dot(),
            flags | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            mode,
        )?)
    }

    /// Opens the entry as a regular file for reading; refuses anything else
    /// (a FIFO would block, a device could be anything).
    ///
    /// # Errors
    /// The error of `openat`, or `InvalidInput` when the entry is not a regular file.
    pub(crate) fn open_file(&self) -> io::Result<std::fs::File> {
        // O_NONBLOCK so that a FIFO swapped in cannot block the open; the
        // type is checked on the handle before any read.
        regular_file(self.open(OFlags::RDONLY | OFlags::NONBLOCK, Mode::empty())?)
    }

    /// Opens the entry as a folder, readable (for listing, locking and `fchdir`).
    ///
    /// # Errors
    /// The error of `openat` (`ENOTDIR` when it is not a folder).
    pub(crate) fn open_dir(&self) -> io::Result<OwnedFd> {
        self.open(OFlags::RDONLY | OFlags::DIRECTORY, Mode::empty())
    }

    /// Opens the holding folder readable (for locking, listing and `fsync`).
    ///
    /// # Errors
    /// The error of `openat`.
    pub(crate) fn open_parent_dir(&self) -> io::Result<OwnedFd> {
        Ok(rustix::fs::openat(
            self.parent_fd()?,
            ".",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?)
    }

    /// The entries of the folder this names (without `.` and `..`), each
    /// with whether it is a folder (a symlink counts as what it points to),
    /// listed through the folder's handle.
    ///
    /// # Errors
    /// The error of opening or listing the folder.
    pub(crate) fn list(&self) -> io::Result<Vec<(OsString, bool)>> {
        let dir = self.open_dir()?;
        let entries = rustix::fs::Dir::read_from(&dir)?;
        let mut out = Vec::new();
        for entry in entries {
            let entry = entry?;
            let name = entry.file_name();
            if matches!(name.to_bytes(), b"." | b"..") {
                continue;
            }
            let is_dir = match entry.file_type() {
                FileType::Directory => true,
                FileType::Symlink | FileType::Unknown => {
                    rustix::fs::statat(&dir, name, AtFlags::empty())
                        .is_ok_and(|s| FileType::from_raw_mode(s.st_mode) == FileType::Directory)
                }
                _ => false,
            };
            out.push((OsStr::from_bytes(name.to_bytes()).to_os_string(), is_dir));
        }
        Ok(out)
    }

    /// The entry's status now (not following a symlink); `None` when it is gone.
    ///
    /// # Errors
    /// Any error of `statat` but "not found".
    pub(crate) fn stat_now(&self) -> io::Result<Option<Stat>> {
        match rustix::fs::statat(
            self.parent_fd()?,
            self.name_or_dot(),
            AtFlags::SYMLINK_NOFOLLOW,
        ) {
            Ok(s) => Ok(Some(s)),
            Err(rustix::io::Errno::NOENT) => Ok(None),
            Err(e) => Err(e.into()),
        }
    }
}

/// Opens the regular file `rel` beneath `root` for reading: first with one
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (the kernel refuses
/// any escape), and when the kernel cannot do that (before Linux 5.6, a
/// seccomp filter, or an absolute symlink, which `RESOLVE_BENEATH` refuses
/// even when it points inside) by the component walk of [`resolve`].
/// Returns the file and the physical path when the walk was needed.
///
/// # Errors
/// `NotFound`, `PermissionDenied` for a path that leaves the root,
/// `InvalidInput` for something other than a regular file, or any I/O error.
pub(crate) fn open_file(root: &RootDir, rel: &Path) -> io::Result<std::fs::File> {
    let fast = rustix::fs::openat2(
        root.fd(),
        rel,
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
        rustix::fs::ResolveFlags::BENEATH | rustix::fs::ResolveFlags::NO_MAGICLINKS,
    );
    match fast {
        Ok(fd) => regular_file(fd),
        Err(rustix::io::Errno::NOENT) => Err(io::ErrorKind::NotFound.into()),
        Err(_) => match resolve(root, rel, Missing::Refuse) {
            Ok(b) => b.open_file(),
            Err(WalkError::NotFound { .. }) => Err(io::ErrorKind::NotFound.into()),
            Err(WalkError::Outside { resolved }) => Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is outside the workspace", resolved.display()),
            )),
            Err(WalkError::Io { source, .. }) => Err(source),
            Err(WalkError::NotADirectory { at }) => Err(io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is not a directory", at.display()),
            )),
            Err(WalkError::Limit(why)) => Err(io::Error::new(io::ErrorKind::InvalidInput, why)),
        },
    }
}

/// `fd` (opened `O_NONBLOCK`, so that a FIFO cannot block the open) as a
/// file, when it is a regular file. `O_NONBLOCK` has no effect on reads of
/// regular files, so it is left set (one system call less per file).
fn regular_file(fd: OwnedFd) -> io::Result<std::fs::File> {
    let st = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file (a device, socket or pipe)",
        ));
    }
    // A hard link shares its data with every other name of the inode, which
    // may lie outside the workspace (a planted link to ~/.bashrc): no
    // path-based rule can tell, so files with more than one link are refused.
    if st.st_nlink > 1 {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "the file has {} hard links, and a hard link may tie this path to a file outside \
                 the workspace, so the file tools refuse it; if it is yours, break the link with \
                 `cp --remove-destination` of a copy",
                st.st_nlink
            ),
        ));
    }
    Ok(std::fs::File::from(fd))
}

/// Splits a path into the names and `..`s the walk processes (`.` and empty components dropped).
fn parts(path: &Path) -> Vec<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => None,
        })
        .collect()
}

/// `base` with the walk's remaining names appended lexically (`..` drops the
/// last component), for the message of a path that left the workspace: the
/// walk stops there, so the rest is only shown, never opened.
fn lexical_rest(mut base: PathBuf, rest: &VecDeque<OsString>) -> PathBuf {
    for name in rest {
        if name == ".." {
            base.pop();
        } else {
            base.push(name);
        }
    }
    base
}

/// Resolves `rel` (a path relative to the root; an absolute one is taken
/// relative to it) beneath `root`, following symlinks that stay inside.
///
/// An absolute symlink target is accepted when it lies lexically under the
/// root's path (it then continues from the root); any other is outside.
///
/// # Errors
/// See [`WalkError`].
pub(crate) fn resolve(root: &RootDir, rel: &Path, missing: Missing) -> Result<Beneath, WalkError> {
    if rel.as_os_str().len() > MAX_PATH_BYTES {
        return Err(WalkError::Limit(format!(
            "the path is {} bytes long; the limit is {MAX_PATH_BYTES} bytes",
            rel.as_os_str().len()
        )));
    }
    let mut queue: VecDeque<OsString> = parts(rel).into();
    let mut walked = 0usize;
    let mut hops = 0u32;
    // The folders entered below the root: handle and name.
    let mut stack: Vec<(OwnedFd, OsString)> = Vec::new();
    let here = |stack: &[(OwnedFd, OsString)]| {
        let mut p = root.path.clone();
        for (_, n) in stack {
            p.push(n);
        }
        p
    };
    let dup = |stack: &[(OwnedFd, OsString)]| -> Result<OwnedFd, WalkError> {
        let fd = stack.last().map_or_else(|| root.fd(), |(fd, _)| fd.as_fd());
        fd.try_clone_to_owned().map_err(|source| WalkError::Io {
            at: here(stack),
            source,
        })
    };
    let mut mkdir_tries = 0u32;
    while let Some(name) = queue.pop_front() {
        walked += 1;
        if walked > MAX_COMPONENTS {
            return Err(WalkError::Limit(format!(
                "the path has more than {MAX_COMPONENTS} components (counting symlink targets)"
            )));
        }
        if name == ".." {
            if stack.pop().is_none() {
                let mut resolved = root.path.clone();
                resolved.pop();
                return Err(WalkError::Outside {
                    resolved: lexical_rest(resolved, &queue),
                });
            }
            continue;
        }
        let last = queue.is_empty();
        let dir = stack.last().map_or_else(|| root.fd(), |(fd, _)| fd.as_fd());
        let opened = rustix::fs::openat(
            dir,
            name.as_os_str(),
            OFlags::PATH | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        );
        let fd = match opened {
            Ok(fd) => fd,
            Err(rustix::io::Errno::NOENT) => {
                if last && missing != Missing::Refuse {
                    let mut path = here(&stack);
                    path.push(&name);
                    let parent = if missing == Missing::Plan {
                        None
                    } else {
                        Some(dup(&stack)?)
                    };
                    return Ok(Beneath {
                        parent,
                        name: Some(name),
                        path,
                        stat: None,
                    });
                }
                match missing {
                    Missing::CreateParents if mkdir_tries < 64 => {
                        mkdir_tries += 1;
                        match rustix::fs::mkdirat(dir, name.as_os_str(), Mode::from_raw_mode(0o777))
                        {
                            Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                            Err(e) => {
                                let mut at = here(&stack);
                                at.push(&name);
                                return Err(WalkError::Io {
                                    at,
                                    source: e.into(),
                                });
                            }
                        }
                        // Open what is there now, checking it like any other component.
                        queue.push_front(name);
                        walked -= 1;
                        continue;
                    }
                    Missing::Plan if !queue.iter().any(|n| n == "..") => {
                        let mut path = here(&stack);
                        path.push(&name);
                        for rest in &queue {
                            path.push(rest);
                        }
                        let name = queue.pop_back().or(Some(name));
                        return Ok(Beneath {
                            parent: None,
                            name,
                            path,
                            stat: None,
                        });
                    }
                    _ => {
                        let mut at = here(&stack);
                        at.push(&name);
                        let then_up = queue.iter().any(|n| n == "..");
                        return Err(WalkError::NotFound { at, then_up });
                    }
                }
            }
            Err(e) => {
                let mut at = here(&stack);
                at.push(&name);
                return Err(WalkError::Io {
                    at,
                    source: e.into(),
                });
            }
        };
        let stat = rustix::fs::fstat(&fd).map_err(|e| WalkError::Io {
            at: here(&stack).join(&name),
            source: e.into(),
        })?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::Symlink => {
                hops += 1;
                if hops > MAX_SYMLINK_HOPS {
                    return Err(WalkError::Io {
                        at: here(&stack).join(&name),
                        source: io::Error::other("too many levels of symbolic links"),
                    });
                }
                let target =
                    rustix::fs::readlinkat(&fd, "", Vec::new()).map_err(|e| WalkError::Io {
                        at: here(&stack).join(&name),
                        source: e.into(),
                    })?;
                let target = PathBuf::from(OsStr::from_bytes(target.to_bytes()));
                let spliced = if target.is_absolute() {
                    match target.strip_prefix(&root.path) {
                        Ok(inside) => {
                            stack.clear();
                            parts(inside)
                        }
                        Err(_) => {
                            return Err(WalkError::Outside {
                                resolved: lexical_rest(target, &queue),
                            });
                        }
                    }
                } else {
                    parts(&target)
                };
                if queue.len() + spliced.len() > MAX_COMPONENTS {
                    return Err(WalkError::Limit(format!(
                        "the path has more than {MAX_COMPONENTS} components (counting symlink targets)"
                    )));
                }
                for part in spliced.into_iter().rev() {
                    queue.push_front(part);
                }
                if queue.is_empty() {
                    // A link to "." or to the root: the folder reached so far.
                    return finish_at_folder(root, stack, &here, &dup);
                }
            }
            FileType::Directory if !last => stack.push((fd, name)),
            file_type => {
                if !last {
                    return Err(WalkError::NotADirectory {
                        at: here(&stack).join(&name),
                    });
                }
                let _ = file_type;
                let mut path = here(&stack);
                path.push(&name);
                let parent = dup(&stack)?;
                return Ok(Beneath {
                    parent: Some(parent),
                    name: Some(name),
                    path,
                    stat: Some(stat),
                });
            }
        }
    }
    finish_at_folder(root, stack, &here, &dup)
}

/// A folder the walk entered below the root: its handle and name.
type Entered = (OwnedFd, OsString);

/// The result for a walk that ended on a folder it entered (`a/b/..`, `.`, a link to a folder).
fn finish_at_folder(
    root: &RootDir,
    mut stack: Vec<Entered>,
    here: &dyn Fn(&[Entered]) -> PathBuf,
    dup: &dyn Fn(&[Entered]) -> Result<OwnedFd, WalkError>,
) -> Result<Beneath, WalkError> {
    let path = here(&stack);
    let Some((fd, name)) = stack.pop() else {
        let stat = rustix::fs::fstat(root.fd()).map_err(|e| WalkError::Io {
            at: root.path.clone(),
            source: e.into(),
        })?;
        return Ok(Beneath {
            parent: Some(dup(&[])?),
            name: None,
            path,
            stat: Some(stat),
        });
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| WalkError::Io {
        at: path.clone(),
        source: e.into(),
    })?;
    Ok(Beneath {
        parent: Some(dup(&stack)?),
        name: Some(name),
        path,
        stat: Some(stat),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn root() -> (tempfile::TempDir, RootDir) {
        let d = tempfile::tempdir().unwrap();
        fs::create_dir_all(d.path().join("ws/sub/deep")).unwrap();
        fs::write(d.path().join("ws/sub/a.txt"), "a").unwrap();
        fs::create_dir_all(d.path().join("outside")).unwrap();
        fs::write(d.path().join("outside/s.txt"), "secret").unwrap();
        let r = RootDir::open(&d.path().join("ws")).unwrap();
        (d, r)
    }

    #[allow(
        clippy::needless_pass_by_value,
        reason = "takes the walk's result as is"
    )]
    fn outside(r: Result<Beneath, WalkError>) -> bool {
        matches!(&r, Err(WalkError::Outside { .. }))
    }

    #[test]
    fn plain_paths_resolve_to_their_physical_path() {
        let (_d, r) = root();
        let b = resolve(&r, Path::new("sub/./deep/../a.txt"), Missing::Refuse).unwrap();
        assert_eq!(b.path, r.path().join("sub/a.txt"));
        assert_eq!(b.name.as_deref(), Some(OsStr::new("a.txt")));
        assert_eq!(b.file_type(), Some(FileType::RegularFile));
        let b = resolve(&r, Path::new(""), Missing::Refuse).unwrap();
        assert_eq!(b.path, r.path());
        assert!(b.name.is_none());
        let b = resolve(&r, Path::new("sub/deep/.."), Missing::Refuse).unwrap();
        assert_eq!(b.path, r.path().join("sub"));
        assert_eq!(b.file_type(), Some(FileType::Directory));
    }

    #[test]
    fn dotdot_above_the_root_is_outside() {
        let (_d, r) = root();
        for p in [
            "..",
            "../outside/s.txt",
            "sub/../../outside",
            "sub/deep/../../..",
        ] {
            assert!(
                outside(resolve(&r, Path::new(p), Missing::AllowLast)),
                "{p}"
            );
        }
    }

    #[test]
    fn a_missing_folder_then_dotdot_through_a_symlink_does_not_escape() {
        let (d, r) = root();
        symlink(d.path().join("outside"), d.path().join("ws/lnk")).unwrap();
        symlink("../outside", d.path().join("ws/rel")).unwrap();
        for p in [
            "x/../lnk/s.txt",
            "lnk/s.txt",
            "x/y/../../lnk/s.txt",
            "rel/s.txt",
            "sub/x/../../rel/s.txt",
        ] {
            for m in [Missing::Refuse, Missing::AllowLast, Missing::Plan] {
                let res = resolve(&r, Path::new(p), m);
                assert!(
                    matches!(
                        res,
                        Err(WalkError::Outside { .. } | WalkError::NotFound { .. })
                    ),
                    "{p} {m:?}: {res:?}"
                );
            }
            // Creating the missing folders makes `..` real; the link is still outside.
            assert!(
                outside(resolve(&r, Path::new(p), Missing::CreateParents)),
                "{p}"
            );
        }
    }

    #[test]
    fn symlinks_inside_work_relative_and_absolute() {
        let (d, r) = root();
        symlink("sub", d.path().join("ws/rel")).unwrap();
        symlink(r.path().join("sub/deep"), d.path().join("ws/abs")).unwrap();
        symlink("../a.txt", d.path().join("ws/sub/deep/up")).unwrap();
        let b = resolve(&r, Path::new("rel/a.txt"), Missing::Refuse).unwrap();
        assert_eq!(b.path, r.path().join("sub/a.txt"));
        let b = resolve(&r, Path::new("abs/up"), Missing::Refuse).unwrap();
        assert_eq!(b.path, r.path().join("sub/a.txt"));
        // `..` after a link goes to the physical parent of its target, as the kernel does.
        let b = resolve(&r, Path::new("abs/../a.txt"), Missing::Refuse).unwrap();
        assert_eq!(b.path, r.path().join("sub/a.txt"));
        // A dangling link inside names the file to create.
        symlink("sub/new.txt", d.path().join("ws/dangling")).unwrap();
        let b = resolve(&r, Path::new("dangling"), Missing::AllowLast).unwrap();
        assert_eq!(b.path, r.path().join("sub/new.txt"));
        assert!(!b.exists());
    }

    #[test]
    fn loops_and_limits_are_errors() {
        let (d, r) = root();
        symlink("l2", d.path().join("ws/l1")).unwrap();
        symlink("l1", d.path().join("ws/l2")).unwrap();
        assert!(matches!(
            resolve(&r, Path::new("l1"), Missing::AllowLast),
            Err(WalkError::Io { .. })
        ));
        let long = "a/".repeat(3000);
        assert!(matches!(
            resolve(&r, Path::new(&long), Missing::Plan),
            Err(WalkError::Limit(_))
        ));
        // Links count against one budget for the whole path, as in the kernel.
        symlink(".", d.path().join("ws/dot")).unwrap();
        assert!(resolve(&r, Path::new(&"dot/".repeat(40)), Missing::Refuse).is_ok());
        assert!(resolve(&r, Path::new(&"dot/".repeat(41)), Missing::Refuse).is_err());
    }

    #[test]
    fn create_parents_makes_real_folders_and_plan_makes_none() {
        let (_d, r) = root();
        let b = resolve(&r, Path::new("n1/n2/f.txt"), Missing::Plan).unwrap();
        assert_eq!(b.path, r.path().join("n1/n2/f.txt"));
        assert!(!r.path().join("n1").exists());
        assert!(matches!(
            resolve(&r, Path::new("n1/../f.txt"), Missing::Plan),
            Err(WalkError::NotFound { .. })
        ));
        let b = resolve(&r, Path::new("n1/n2/f.txt"), Missing::CreateParents).unwrap();
        assert!(r.path().join("n1/n2").is_dir());
        assert_eq!(b.path, r.path().join("n1/n2/f.txt"));
        assert!(b.parent.is_some());
        assert!(matches!(
            resolve(&r, Path::new("sub/a.txt/x"), Missing::CreateParents),
            Err(WalkError::NotADirectory { .. })
        ));
    }

    #[test]
    fn open_file_is_confined_on_both_paths() {
        let (d, r) = root();
        symlink(d.path().join("outside/s.txt"), d.path().join("ws/out")).unwrap();
        symlink("../outside/s.txt", d.path().join("ws/rel-out")).unwrap();
        symlink(r.path().join("sub/a.txt"), d.path().join("ws/abs-in")).unwrap();
        symlink("sub/a.txt", d.path().join("ws/rel-in")).unwrap();
        let read = |p: &str| {
            let mut s = String::new();
            open_file(&r, Path::new(p)).map(|mut f| {
                std::io::Read::read_to_string(&mut f, &mut s).unwrap();
                s
            })
        };
        assert_eq!(read("rel-in").unwrap(), "a");
        // Refused by openat2, then taken by the walk, which accepts it.
        assert_eq!(read("abs-in").unwrap(), "a");
        for p in [
            "out",
            "rel-out",
            "../outside/s.txt",
            "sub/../../outside/s.txt",
        ] {
            let e = read(p).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{p}: {e}");
        }
        assert_eq!(read("nope").unwrap_err().kind(), io::ErrorKind::NotFound);
        assert_eq!(read("sub").unwrap_err().kind(), io::ErrorKind::InvalidInput);
    }

    #[test]
    fn a_file_swapped_for_a_symlink_after_the_walk_is_not_followed() {
        let (d, r) = root();
        let b = resolve(&r, Path::new("sub/a.txt"), Missing::Refuse).unwrap();
        fs::remove_file(d.path().join("ws/sub/a.txt")).unwrap();
        symlink(
            d.path().join("outside/s.txt"),
            d.path().join("ws/sub/a.txt"),
        )
        .unwrap();
        assert!(b.open_file().is_err());
    }
}
