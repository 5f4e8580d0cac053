//! [`Workspace`]: the folders the built-in tools may touch, and path resolution.
//!
//! Every path a model sends is resolved here before anything is opened, and
//! resolved *beneath an open handle* of the workspace root (see
//! [`crate::fs::beneath`]): relative paths from the root, absolute ones from
//! the root (or extra root) they lie in, one component at a time with
//! `openat(O_NOFOLLOW)`, symlinks read and followed only while they stay
//! inside, `..` never climbing above the root. The tools then open the file
//! through the folder handle the walk ended in, never by its path string,
//! so a folder swapped for a symlink between the check and the use cannot
//! redirect a read or a write. Anything that lands outside the root and the
//! extra roots is refused with an error that says "outside the workspace".
//! A symlink that resolves inside keeps working, relative or absolute.
//!
//! Rules worth knowing:
//! - An empty path (or one of only spaces) names the workspace root, for
//!   every tool: `list_dir`, `glob_files` and `grep_content` search it,
//!   `read_file` lists it, and the tools that write a file refuse it as a folder.
//! - `..` is resolved by the filesystem, as the kernel does: `x/../a.txt`
//!   needs `x` to exist (writes create missing folders first).
//! - An extra root is reached by its absolute path; `..` from the root
//!   does not lead into it.
//! - Paths are at most [`MAX_PATH_BYTES`](crate::fs::beneath::MAX_PATH_BYTES)
//!   bytes and 40 symlinks deep.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use tool_core::{ErrorKind, ToolContext, ToolError};

use crate::fs::beneath::{self, Beneath, Missing, RootDir, WalkError};

/// The folders the built-in tools may read and write: a root plus optional extra roots.
///
/// Stored in the [`ToolContext`] as typed state; the file tools read it from
/// there. The root and the extra roots are held open as directory handles
/// from [`Workspace::new`] on: moving or replacing the root folder later does
/// not move the workspace.
///
/// ```
/// use tool_builtins::Workspace;
/// use tool_core::ToolContext;
///
/// let dir = std::env::temp_dir();
/// let ctx = ToolContext::new().with_state(Workspace::new(&dir)?);
/// let ws = ctx.state::<Workspace>().unwrap();
/// assert!(ws.resolve("notes.txt")?.starts_with(ws.root()));
/// assert!(ws.resolve("/").is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workspace {
    root: RootDir,
    extra_roots: Vec<RootDir>,
    /// Folders `read_file` and `grep_content` may read but nothing may write
    /// (the spill folder of truncated output), as given: they may not exist yet.
    read_only_roots: Vec<PathBuf>,
    /// Folders no tool may write into, wherever they are (configured skills
    /// folders): canonical, or the canonical form of their longest existing
    /// ancestor joined with the rest when they do not exist yet.
    write_protected: Vec<PathBuf>,
    /// The folder a leading `~` names (`~/x`): the user's home folder, or
    /// the one given to [`Workspace::with_home`]; `None` when unknown.
    home: Option<PathBuf>,
}

impl Workspace {
    /// A workspace rooted at `root` (which must exist; it is canonicalised
    /// and opened as a directory handle).
    ///
    /// No read-only root by default: the spill folder of the calling context's
    /// trace (where truncated output is saved) is added per call by the file
    /// tools, so a model reads its own trace's spill files and no other's.
    ///
    /// # Errors
    /// The I/O error of canonicalising or opening `root` (e.g. it does not exist).
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self {
            root: RootDir::open(root.as_ref())?,
            extra_roots: Vec::new(),
            read_only_roots: Vec::new(),
            write_protected: Vec::new(),
            home: std::env::home_dir(),
        })
    }

    /// The folder `~` names in a model's path (`~` alone or `~/…`; `~user`
    /// is not expanded): by default the user's home folder
    /// ([`std::env::home_dir`]), `None` for a workspace where `~` names
    /// nothing. A path under `~` is then resolved like any absolute path:
    /// usable when the home folder (or that part of it) lies inside the
    /// workspace root or an extra root, refused as outside the workspace
    /// otherwise (001 `expandHome`).
    #[must_use]
    pub fn with_home(mut self, home: Option<PathBuf>) -> Self {
        self.home = home;
        self
    }

    /// `model_path` with a leading `~` replaced by the home folder; the path
    /// itself when it does not start with `~` or `~/`.
    fn expand_home<'a>(&self, model_path: &'a str) -> Result<std::borrow::Cow<'a, str>, PathError> {
        let rest = match model_path.strip_prefix('~') {
            Some("") => "",
            Some(rest) if rest.starts_with('/') => rest,
            _ => return Ok(std::borrow::Cow::Borrowed(model_path)),
        };
        let home = self.home.as_ref().ok_or_else(|| PathError::NoHome {
            path: tool_rules::text::clip(model_path, crate::fs::MESSAGE_VALUE).into_owned(),
        })?;
        let rest = rest.trim_start_matches('/');
        let expanded = if rest.is_empty() {
            home.clone()
        } else {
            home.join(rest)
        };
        Ok(std::borrow::Cow::Owned(
            expanded.to_string_lossy().into_owned(),
        ))
    }

    /// Adds a folder that [`Workspace::resolve_for_read`] accepts and
    /// [`Workspace::resolve`] (every write) refuses, such as a configured
    /// spill folder. It need not exist yet: it is opened at each use.
    pub fn with_read_only_root(mut self, root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        if !self.read_only_roots.contains(&root) {
            self.read_only_roots.push(root);
        }
        self
    }

    /// Adds a folder that no tool may write into, inside the workspace or
    /// not: a write, edit, patch (its `Move to` too) or new file there is
    /// refused with [`PathError::ReadOnly`], before anything is created;
    /// reading is unchanged. [`SkillSet::make_readable`](crate::skills::SkillSet::make_readable)
    /// adds every configured skills folder, since what a model writes there
    /// becomes instructions for every later session. A folder that does not
    /// exist yet is protected too (its future path, symlinks of its
    /// existing ancestors resolved).
    pub fn with_write_protected(mut self, folder: impl AsRef<Path>) -> Self {
        let folder = physical(folder.as_ref());
        if !self.write_protected.contains(&folder) {
            self.write_protected.push(folder);
        }
        self
    }

    /// The folders added by [`Workspace::with_write_protected`], in their
    /// physical form (see there).
    pub fn write_protected(&self) -> &[PathBuf] {
        &self.write_protected
    }

    /// The read-only roots, as given.
    pub fn read_only_roots(&self) -> &[PathBuf] {
        &self.read_only_roots
    }

    /// Adds a folder outside the root that the tools may also use (e.g. a
    /// shared cache), reached by its absolute path.
    ///
    /// # Errors
    /// The I/O error of canonicalising or opening `root`.
    pub fn with_extra_root(mut self, root: impl AsRef<Path>) -> io::Result<Self> {
        self.extra_roots.push(RootDir::open(root.as_ref())?);
        Ok(self)
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        self.root.path()
    }

    /// The canonical extra roots.
    pub fn extra_roots(&self) -> Vec<&Path> {
        self.extra_roots.iter().map(RootDir::path).collect()
    }

    /// Whether `path` lies lexically inside the root or an extra root (no
    /// filesystem access: use it on canonical paths).
    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(self.root.path())
            || self.extra_roots.iter().any(|r| path.starts_with(r.path()))
    }

    /// The model's path as an absolute path, without touching the filesystem:
    /// relative paths are joined to the root. Used for messages before resolution.
    pub fn absolute(&self, model_path: &str) -> PathBuf {
        let p = Path::new(model_path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.path().join(p)
        }
    }

    /// Resolves a path sent by a model to the physical path it names inside
    /// the workspace, without creating or opening anything for use.
    ///
    /// Relative paths resolve against the root. Symlinks and `..` are
    /// resolved through the filesystem beneath the root's handle; missing
    /// trailing components are appended as given, provided no `..` follows a
    /// missing folder. The tools themselves never open this path string:
    /// they resolve again and open through the folder handle.
    ///
    /// # Errors
    /// [`PathError::Outside`] when the path resolves outside the workspace,
    /// [`PathError::NotFound`] when a
    /// folder on the way is missing and `..` follows it, [`PathError::Limit`]
    /// for an over-long path, [`PathError::Io`] when the filesystem refuses
    /// to tell (e.g. permissions, a symlink loop).
    pub fn resolve(&self, model_path: &str) -> Result<PathBuf, PathError> {
        self.beneath(model_path, Missing::Plan).map(|b| b.path)
    }

    /// [`Workspace::resolve`] for reading only: a path inside a read-only
    /// root (the spill folder of truncated output) is accepted too. Never
    /// use the result to write.
    ///
    /// # Errors
    /// As [`Workspace::resolve`].
    pub fn resolve_for_read(&self, model_path: &str) -> Result<PathBuf, PathError> {
        self.beneath_for_read(model_path, &[], Missing::Plan)
            .map(|b| b.path)
    }

    /// [`Workspace::resolve`] for a path a tool will write, create, move or
    /// delete: refused with [`PathError::ReadOnly`] inside a
    /// [write-protected](Workspace::with_write_protected) folder.
    ///
    /// # Errors
    /// As [`Workspace::resolve`], and [`PathError::ReadOnly`].
    pub fn resolve_for_write(&self, model_path: &str) -> Result<PathBuf, PathError> {
        self.beneath_for_write(model_path, Missing::Plan)
            .map(|b| b.path)
    }

    /// [`Workspace::beneath`] for a path a tool will write: the path is
    /// planned first (nothing created) and refused inside a write-protected
    /// folder, then resolved with `missing` (which may create folders) and
    /// checked again.
    pub(crate) fn beneath_for_write(
        &self,
        model_path: &str,
        missing: Missing,
    ) -> Result<Beneath, PathError> {
        if !self.write_protected.is_empty() && missing == Missing::CreateParents {
            let planned = self.beneath_in(model_path, &[], Missing::Plan)?;
            self.check_writable(model_path, &planned.path)?;
        }
        let resolved = self.beneath_in(model_path, &[], missing)?;
        self.check_writable(model_path, &resolved.path)?;
        Ok(resolved)
    }

    fn check_writable(&self, model_path: &str, path: &Path) -> Result<(), PathError> {
        match self.write_protected.iter().find(|f| path.starts_with(f)) {
            Some(folder) => Err(PathError::ReadOnly {
                path: tool_rules::text::clip(model_path, crate::fs::MESSAGE_VALUE).into_owned(),
                folder: folder.clone(),
            }),
            None => Ok(()),
        }
    }

    /// Resolves `model_path` beneath the root or the extra root it names, for
    /// a tool that will write or create it.
    pub(crate) fn beneath(&self, model_path: &str, missing: Missing) -> Result<Beneath, PathError> {
        self.beneath_in(model_path, &[], missing)
    }

    /// [`Workspace::beneath`] that also accepts the read-only roots and `more` (for reading only).
    pub(crate) fn beneath_for_read(
        &self,
        model_path: &str,
        more: &[PathBuf],
        missing: Missing,
    ) -> Result<Beneath, PathError> {
        let readable: Vec<&PathBuf> = self.read_only_roots.iter().chain(more).collect();
        self.beneath_in(model_path, &readable, missing)
    }

    fn beneath_in(
        &self,
        model_path: &str,
        read_only: &[&PathBuf],
        missing: Missing,
    ) -> Result<Beneath, PathError> {
        // One rule for every tool: an empty path names the workspace root
        // (list, glob and grep search it, read_file lists it, and the write
        // tools refuse it as a folder).
        let model_path = if model_path.trim().is_empty() {
            "."
        } else {
            model_path
        };
        let given = model_path;
        let expanded = self.expand_home(model_path)?;
        let model_path = expanded.as_ref();
        if model_path.len() > beneath::MAX_PATH_BYTES {
            return Err(PathError::Limit(format!(
                "The path is {} bytes long; the limit is {} bytes.",
                model_path.len(),
                beneath::MAX_PATH_BYTES
            )));
        }
        let outside = |resolved: PathBuf| PathError::Outside {
            path: tool_rules::text::clip(given, crate::fs::MESSAGE_VALUE).into_owned(),
            resolved,
            root: self.root.path().to_path_buf(),
        };
        // Outside every root the message shows the path as given: looking
        // it up would tell the model whether something exists out there.
        let (root, rel) = self
            .locate(Path::new(model_path), read_only)
            .ok_or_else(|| outside(self.absolute(model_path)))?;
        let resolved = beneath::resolve(&root, &rel, missing).map_err(|e| match e {
            WalkError::Outside { resolved } => outside(resolved),
            WalkError::NotFound { at, then_up } => PathError::NotFound { path: at, then_up },
            WalkError::NotADirectory { at } => PathError::NotADirectory { path: at },
            WalkError::Limit(why) => PathError::Limit(format!("The path is too long: {why}.")),
            WalkError::Io { at, source } => PathError::Io { path: at, source },
        })?;
        if in_private_area(&resolved.path, read_only) {
            return Err(private_refusal(model_path, &resolved.path));
        }
        Ok(resolved)
    }

    /// The root a path lies in and the path relative to it: relative paths
    /// belong to the root; an absolute one to the deepest root it lies in
    /// lexically, else to the root its longest existing ancestor
    /// canonicalises into (a symlinked spelling of the root's path). The
    /// result is only a starting point: the walk beneath that root's handle
    /// decides what the path really names.
    fn locate(&self, path: &Path, read_only: &[&PathBuf]) -> Option<(RootDir, PathBuf)> {
        if !path.is_absolute() {
            return Some((self.root.clone(), path.to_path_buf()));
        }
        let pick = |roots: &mut dyn Iterator<Item = &RootDir>, p: &Path| {
            roots
                .filter(|r| p.starts_with(r.path()))
                .max_by_key(|r| r.path().as_os_str().len())
                .map(|r| {
                    let rel = p.strip_prefix(r.path()).map(Path::to_path_buf);
                    (r.clone(), rel.unwrap_or_default())
                })
        };
        let held = || std::iter::once(&self.root).chain(&self.extra_roots);
        // The read-only roots are opened only for a path the held roots do
        // not take (a walk of the workspace opens none per file).
        if let Some(found) = pick(&mut held(), path) {
            return Some(found);
        }
        let opened: Vec<RootDir> = read_only
            .iter()
            .filter_map(|p| RootDir::open(p).ok())
            .collect();
        pick(&mut held().chain(&opened), path).or_else(|| {
            let (canonical, rest) = crate::fs::canonical_ancestor(path)?;
            let (root, rel) = pick(&mut held().chain(&opened), &canonical)?;
            Some((root, rel.join(rest)))
        })
    }

    /// Opens a regular file that a directory walk produced (a path inside a
    /// root, maybe through symlinks the walk followed) beneath its root's
    /// handle, so that a link swapped in since the walk saw the path cannot
    /// lead outside.
    ///
    /// `hidden` is the folders no tool opens, looked up once by the caller
    /// ([`HiddenAreas::now`] as its walk started) rather than per file: the
    /// private folder's lookup is a status call while it does not exist
    /// (the usual case), a tenth of the opens' cost in an index build. The
    /// walk itself never lists a path in those folders (`search::walker`
    /// skips them by their name and mode, even one made after the lookup),
    /// so this check is the second line.
    ///
    /// # Errors
    /// `PermissionDenied` for a path outside every root or in a hidden
    /// folder; the errors of [`beneath::open_file`].
    pub(crate) fn open_walked(
        &self,
        path: &Path,
        read_only: &[PathBuf],
        hidden: &HiddenAreas,
    ) -> io::Result<std::fs::File> {
        let readable: Vec<&PathBuf> = read_only.iter().chain(&self.read_only_roots).collect();
        let (root, rel) = self.locate(path, &readable).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!("{} is outside the workspace", path.display()),
            )
        })?;
        if hidden.holds(path, &readable) {
            return Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                private_refusal(&path.to_string_lossy(), path).to_string(),
            ));
        }
        beneath::open_file(&root, &rel)
    }

    /// The path relative to the root when it lies under it, else the path as is.
    pub fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(self.root.path()).unwrap_or(path)
    }
}

/// The tools' per-user private folder (spill files and binary output of
/// every trace), canonical, when it exists; looked up once it does (every
/// file a walk opens is checked against it).
pub(crate) fn private_area() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    if let Some(p) = FOUND.get() {
        return Some(p.clone());
    }
    let location = tool_core::truncate::private_dir_location();
    // Until the folder exists (often never), one status call answers
    // instead of a canonicalisation (a readlink per part of the path),
    // which cost a walk's opens some 2 % of an index build's time.
    if std::fs::metadata(&location).is_err() {
        return None;
    }
    let p = std::fs::canonicalize(location).ok()?;
    Some(FOUND.get_or_init(|| p).clone())
}

/// The persistent state folder ([`tool_core::state::state_dir`]: every
/// trace's read ledger), in its physical form, looked up once.
pub(crate) fn state_area() -> Option<PathBuf> {
    static FOUND: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    FOUND
        .get_or_init(|| tool_core::state::state_dir().map(|d| physical(&d)))
        .clone()
}

/// The folders no file tool opens (cross-cutting §6): the private runtime
/// folder and the persistent state folder, canonical where they exist.
pub(crate) fn hidden_folders() -> Vec<PathBuf> {
    let runtime =
        private_area().unwrap_or_else(|| physical(&tool_core::truncate::private_dir_location()));
    std::iter::once(runtime).chain(state_area()).collect()
}

/// Whether `path` looks like the private or state tree of another
/// configuration of these tools (another `XDG_RUNTIME_DIR`, `TMPDIR` or
/// `XDG_STATE_HOME` than this process's): a folder named `agent-tools` or
/// `agent-tools-<uid>` (the names [`tool_core::truncate::private_dir_location`]
/// and [`tool_core::state::state_dir`] use) whose mode gives group and others
/// nothing (the `0700` those folders are created with). Walks skip such a
/// folder (review 23 F2); a project checkout of that name is normally
/// `0755` and stays visible.
pub(crate) fn looks_private_tree(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let named = name == "agent-tools"
        || name
            .strip_prefix("agent-tools-")
            .is_some_and(|uid| !uid.is_empty() && uid.bytes().all(|b| b.is_ascii_digit()));
    named
        && std::fs::metadata(path).is_ok_and(|m| m.is_dir() && m.permissions().mode() & 0o077 == 0)
}

/// `path` canonical, or its longest existing ancestor canonical joined with
/// the rest (for folders that may not exist yet).
fn physical(path: &Path) -> PathBuf {
    crate::fs::canonical_ancestor(path)
        .map_or_else(|| path.to_path_buf(), |(base, rest)| base.join(rest))
}

/// Whether `path` lies in the private folder but in none of `allowed` (the
/// calling trace's spill folders), or in the persistent state folder: a
/// workspace that contains the temp folder (`/tmp`, `/`) or the home folder
/// must not open other traces' files or ledgers through it.
fn in_private_area(path: &Path, allowed: &[&PathBuf]) -> bool {
    HiddenAreas::now().holds(path, allowed)
}

/// The folders no file tool opens (the persistent state folder and the
/// private runtime folder, physical, the latter when it exists), as looked
/// up at one moment: see [`Workspace::open_walked`].
#[derive(Debug, Clone)]
pub(crate) struct HiddenAreas {
    state: Option<PathBuf>,
    private: Option<PathBuf>,
}

impl HiddenAreas {
    /// The folders as they are now.
    pub(crate) fn now() -> Self {
        Self {
            state: state_area(),
            private: private_area(),
        }
    }

    /// Whether `path` lies in the state folder, or in the private folder
    /// but in none of `allowed` (the calling trace's spill folders).
    fn holds(&self, path: &Path, allowed: &[&PathBuf]) -> bool {
        if self
            .state
            .as_ref()
            .is_some_and(|state| path.starts_with(state))
        {
            return true;
        }
        self.private.as_ref().is_some_and(|private| {
            path.starts_with(private)
                && !allowed
                    .iter()
                    .filter_map(|r| std::fs::canonicalize(r).ok())
                    .any(|r| path.starts_with(r))
        })
    }
}

fn private_refusal(model_path: &str, _path: &Path) -> PathError {
    PathError::Private {
        path: tool_rules::text::clip(model_path, crate::fs::MESSAGE_VALUE).into_owned(),
    }
}

/// Why a model's path could not be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum PathError {
    /// The path resolves outside the workspace.
    Outside {
        /// The path as the model sent it (cut to about 200 characters).
        path: String,
        /// Where it resolved to, as far as the walk got.
        resolved: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path is in the tools' private folder (other traces' spill files
    /// and output), which a workspace holding the temp folder contains.
    Private {
        /// The path as the model sent it (cut to about 200 characters).
        path: String,
    },
    /// The path is inside a write-protected folder (a configured skills
    /// folder) and the tool would change it.
    ReadOnly {
        /// The path as the model sent it (cut to about 200 characters).
        path: String,
        /// The protected folder it lies in.
        folder: PathBuf,
    },
    /// The path starts with `~` (the home folder) and the workspace knows
    /// no home folder ([`Workspace::with_home`] with `None`).
    NoHome {
        /// The path as the model sent it (cut to about 200 characters).
        path: String,
    },
    /// The path is empty. Not returned any more: an empty path names the
    /// workspace root (see the module docs); kept for callers that match on it.
    Empty,
    /// A folder on the way does not exist (and the path goes on from it with `..`, or must exist).
    NotFound {
        /// The path up to the missing component.
        path: PathBuf,
        /// The model's path goes on from the missing folder with `..`.
        then_up: bool,
    },
    /// A component on the way is a file, not a folder.
    NotADirectory {
        /// The path up to that component.
        path: PathBuf,
    },
    /// The path breaks a limit (length, components, symlinks); the text says which.
    Limit(String),
    /// The filesystem could not resolve the path.
    Io {
        /// The path being resolved, up to the component that failed.
        path: PathBuf,
        /// The underlying error.
        source: io::Error,
    },
}

impl fmt::Display for PathError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Outside {
                path,
                resolved,
                root,
            } => {
                write!(
                    f,
                    "Access denied: {path} resolves to {} which is outside the workspace ({}). \
                     Only files inside the workspace can be used.",
                    tool_rules::text::clip(&resolved.to_string_lossy(), crate::fs::MESSAGE_VALUE)
                        .into_owned(),
                    root.display()
                )
            }
            Self::Private { path } => write!(
                f,
                "Access denied: {path} is in the tools' private folders (the spill files, \
                 output and read ledgers of every session); only the spill folder of this \
                 call's trace can be read."
            ),
            Self::ReadOnly { path, folder } => write!(
                f,
                "Access denied: {path} is inside {}, a read-only folder (a configured skills \
                 folder: what is written there becomes instructions for every later session). \
                 The file tools may read it but not change it, nor add files; nothing was \
                 written. Skills are changed by a person, outside the agent.",
                folder.display()
            ),
            Self::NoHome { path } => write!(
                f,
                "The path {path} starts with `~`, the home folder, which is not known here. \
                 Give the path inside the workspace, relative to its root or absolute."
            ),
            Self::Empty => f.write_str("The path is empty. Give a file path inside the workspace."),
            Self::NotFound { path, then_up } => {
                write!(
                    f,
                    "File not found: {} does not exist.",
                    tool_rules::text::clip(&path.to_string_lossy(), crate::fs::MESSAGE_VALUE)
                        .into_owned()
                )?;
                if *then_up {
                    f.write_str(
                        " A path cannot step back with `..` out of a folder that does not exist; \
                         give the path without `..`.",
                    )?;
                }
                Ok(())
            }
            Self::NotADirectory { path } => write!(
                f,
                "Not a directory: {} is a file, so the path cannot go on from it.",
                tool_rules::text::clip(&path.to_string_lossy(), crate::fs::MESSAGE_VALUE)
                    .into_owned()
            ),
            Self::Limit(why) => f.write_str(why),
            Self::Io { path, source } => {
                write!(
                    f,
                    "Cannot resolve path {}: {source}",
                    tool_rules::text::clip(&path.to_string_lossy(), crate::fs::MESSAGE_VALUE)
                        .into_owned()
                )
            }
        }
    }
}

impl std::error::Error for PathError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }
}

/// The workspace of the context, or the `missing_context` error result a
/// tool returns when the host did not set one.
///
/// # Errors
/// A `missing_context` result naming what to add.
pub fn workspace_of(ctx: &ToolContext) -> Result<tool_core::State<Workspace>, ToolError> {
    ctx.state::<Workspace>().ok_or_else(|| {
        ToolError::new(
            ErrorKind::MissingContext,
            "The file tools need a workspace: the host must add one with \
             `ToolContext::with_state(Workspace::new(root)?)`.",
        )
    })
}
