//! [`Workspace`]: the folders the built-in tools may touch, and path resolution.
//!
//! Every path a model sends is resolved here before anything is opened:
//! relative paths against the root, then checked on their canonical form
//! (symlinks followed, `..` resolved by the filesystem). A path about to be
//! created is checked through its deepest existing ancestor. Anything that
//! lands outside the root and the extra roots is refused with an error that
//! says "outside the workspace". A symlink that resolves inside keeps working.

use std::fmt;
use std::io;
use std::path::{Component, Path, PathBuf};

use tool_core::{ErrorKind, ToolContext, ToolResult};

/// Most symlinks followed while resolving one path (the Linux limit, `MAXSYMLINKS`).
const MAX_SYMLINK_HOPS: u32 = 40;

/// The folders the built-in tools may read and write: a root plus optional extra roots.
///
/// Stored in the [`ToolContext`] as typed state; the file tools read it from there.
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
    root: PathBuf,
    extra_roots: Vec<PathBuf>,
    /// Folders `read_file` and `grep_content` may read but nothing may write
    /// (the spill folder of truncated output), as given: they may not exist yet.
    read_only_roots: Vec<PathBuf>,
}

impl Workspace {
    /// A workspace rooted at `root` (which must exist; it is canonicalised).
    ///
    /// No read-only root by default: the spill folder of the calling context's
    /// trace (where truncated output is saved) is added per call by the file
    /// tools, so a model reads its own trace's spill files and no other's.
    ///
    /// # Errors
    /// The I/O error of canonicalising `root` (e.g. it does not exist).
    pub fn new(root: impl AsRef<Path>) -> io::Result<Self> {
        Ok(Self {
            root: std::fs::canonicalize(root)?,
            extra_roots: Vec::new(),
            read_only_roots: Vec::new(),
        })
    }

    /// Adds a folder that [`Workspace::resolve_for_read`] accepts and
    /// [`Workspace::resolve`] (every write) refuses, such as a configured
    /// spill folder. It need not exist yet: it is canonicalised at each check.
    pub fn with_read_only_root(mut self, root: impl Into<PathBuf>) -> Self {
        let root = root.into();
        if !self.read_only_roots.contains(&root) {
            self.read_only_roots.push(root);
        }
        self
    }

    /// The read-only roots, as given.
    pub fn read_only_roots(&self) -> &[PathBuf] {
        &self.read_only_roots
    }

    /// Adds a folder outside the root that the tools may also use (e.g. a shared cache).
    ///
    /// # Errors
    /// The I/O error of canonicalising `root`.
    pub fn with_extra_root(mut self, root: impl AsRef<Path>) -> io::Result<Self> {
        self.extra_roots.push(std::fs::canonicalize(root)?);
        Ok(self)
    }

    /// The canonical root folder.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The canonical extra roots.
    pub fn extra_roots(&self) -> &[PathBuf] {
        &self.extra_roots
    }

    /// Whether the canonical path `path` lies inside the root or an extra root.
    pub fn contains(&self, path: &Path) -> bool {
        path.starts_with(&self.root) || self.extra_roots.iter().any(|r| path.starts_with(r))
    }

    /// The model's path as an absolute path, without touching the filesystem:
    /// relative paths are joined to the root. Used for messages before resolution.
    pub fn absolute(&self, model_path: &str) -> PathBuf {
        let p = Path::new(model_path);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.root.join(p)
        }
    }

    /// Resolves a path sent by a model to the canonical path to operate on.
    ///
    /// Relative paths resolve against the root. Symlinks and `..` are resolved
    /// through the filesystem; for a path that does not exist yet, its deepest
    /// existing ancestor is canonicalised and the rest appended (a dangling
    /// symlink is followed to its target). The result must lie inside the
    /// workspace.
    ///
    /// # Errors
    /// [`PathError::Outside`] when the path resolves outside the workspace,
    /// [`PathError::Empty`] for an empty path, [`PathError::Io`] when the
    /// filesystem refuses to tell (e.g. permissions, a symlink loop).
    pub fn resolve(&self, model_path: &str) -> Result<PathBuf, PathError> {
        if model_path.trim().is_empty() {
            return Err(PathError::Empty);
        }
        let absolute = self.absolute(model_path);
        let resolved = resolve_lenient(&absolute, 0).map_err(|source| PathError::Io {
            path: absolute.clone(),
            source,
        })?;
        if self.contains(&resolved) {
            Ok(resolved)
        } else {
            Err(PathError::Outside {
                path: model_path.to_owned(),
                resolved,
                root: self.root.clone(),
            })
        }
    }

    /// [`Workspace::resolve`] for reading only: a path inside a read-only
    /// root (the spill folder of truncated output) is accepted too. Never
    /// use the result to write.
    ///
    /// # Errors
    /// As [`Workspace::resolve`].
    pub fn resolve_for_read(&self, model_path: &str) -> Result<PathBuf, PathError> {
        self.resolve_for_read_in(model_path, &[])
    }

    /// [`Workspace::resolve_for_read`] with more read-only folders for this call.
    pub(crate) fn resolve_for_read_in(
        &self,
        model_path: &str,
        more: &[PathBuf],
    ) -> Result<PathBuf, PathError> {
        match self.resolve(model_path) {
            Err(PathError::Outside {
                path,
                resolved,
                root,
            }) => {
                let readable = self
                    .read_only_roots
                    .iter()
                    .chain(more)
                    .filter_map(|r| std::fs::canonicalize(r).ok())
                    .any(|r| resolved.starts_with(r));
                if readable {
                    Ok(resolved)
                } else {
                    Err(PathError::Outside {
                        path,
                        resolved,
                        root,
                    })
                }
            }
            other => other,
        }
    }

    /// The path relative to the root when it lies under it, else the path as is.
    pub fn relative<'a>(&self, path: &'a Path) -> &'a Path {
        path.strip_prefix(&self.root).unwrap_or(path)
    }
}

/// Why a model's path could not be used.
#[derive(Debug)]
#[non_exhaustive]
pub enum PathError {
    /// The path resolves outside the workspace.
    Outside {
        /// The path as the model sent it.
        path: String,
        /// Where it resolved to.
        resolved: PathBuf,
        /// The workspace root.
        root: PathBuf,
    },
    /// The path is empty.
    Empty,
    /// The filesystem could not resolve the path.
    Io {
        /// The absolute path being resolved.
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
                    resolved.display(),
                    root.display()
                )
            }
            Self::Empty => f.write_str("The path is empty. Give a file path inside the workspace."),
            Self::Io { path, source } => {
                write!(f, "Cannot resolve path {}: {source}", path.display())
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

impl PathError {
    /// The error as a tool result: `denied` for paths outside the workspace,
    /// `invalid_arguments` for an empty path, `failed` otherwise.
    pub fn to_result(&self) -> ToolResult {
        let kind = match self {
            Self::Outside { .. } => ErrorKind::Denied,
            Self::Empty => ErrorKind::InvalidArguments,
            Self::Io { .. } => ErrorKind::Failed,
        };
        ToolResult::error(kind, self.to_string())
    }
}

/// Resolves a path to read in `ctx`: inside the workspace, one of its
/// read-only roots, or the spill folder of the context's trace (its
/// `trace_id`; see `tool_core::truncate::trace_folder_name`) in the default
/// spill parent and in the spill parent of the context's
/// [`BashConfig`](crate::bash::BashConfig) (where `bash_command` and the
/// registry's output budget save full output). Another trace's spill folder
/// is not accepted, and neither is a trace folder (or a parent of it) that
/// fails `tool_core::truncate::check_private_dir` (a symbolic link, another
/// user's, not mode `0700`).
pub(crate) fn resolve_for_read(
    ctx: &ToolContext,
    ws: &Workspace,
    model_path: &str,
) -> Result<PathBuf, PathError> {
    let trace = ctx.trace_id();
    let configured = ctx
        .state::<crate::bash::BashConfig>()
        .map(|c| c.truncation.clone());
    let more: Vec<PathBuf> = std::iter::once(tool_core::truncate::Truncation::new())
        .chain(configured)
        .filter_map(|t| t.for_trace(trace).checked_spill_dir().ok())
        .collect();
    ws.resolve_for_read_in(model_path, &more)
}

/// The workspace of the context, or the `missing_context` error result a
/// tool returns when the host did not set one.
///
/// # Errors
/// A `missing_context` result naming what to add.
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's final result; it is returned at once"
)]
pub fn workspace_of(ctx: &ToolContext) -> Result<tool_core::State<Workspace>, ToolResult> {
    ctx.state::<Workspace>().ok_or_else(|| {
        ToolResult::error(
            ErrorKind::MissingContext,
            "The file tools need a workspace: the host must add one with \
             `ToolContext::with_state(Workspace::new(root)?)`.",
        )
    })
}

/// Canonicalises `path`, allowing the last components not to exist: the deepest
/// existing ancestor is canonicalised and the missing components appended
/// (`..` among them popping lexically, which is exact because a missing
/// component cannot be a symlink). A dangling symlink is followed to its target.
fn resolve_lenient(path: &Path, hops: u32) -> io::Result<PathBuf> {
    if hops > MAX_SYMLINK_HOPS {
        return Err(io::Error::other("too many levels of symbolic links"));
    }
    match std::fs::canonicalize(path) {
        Ok(p) => return Ok(p),
        Err(e) => {
            // Something exists here and still cannot be canonicalised (a loop,
            // no permission): report it rather than guess.
            if let Ok(meta) = std::fs::symlink_metadata(path) {
                if !meta.file_type().is_symlink() {
                    return Err(e);
                }
            }
        }
    }
    let mut components = path.components();
    let Some(last) = components.next_back() else {
        return Ok(path.to_path_buf());
    };
    let parent = components.as_path();
    match last {
        Component::Prefix(_) | Component::RootDir => Ok(path.to_path_buf()),
        Component::CurDir => resolve_lenient(parent, hops),
        Component::ParentDir => {
            let mut p = resolve_lenient(parent, hops)?;
            p.pop();
            Ok(p)
        }
        Component::Normal(name) => {
            if let Ok(meta) = std::fs::symlink_metadata(path) {
                if meta.file_type().is_symlink() {
                    // A dangling link (canonicalize failed): follow it by hand.
                    let target = std::fs::read_link(path)?;
                    let next = if target.is_absolute() {
                        target
                    } else {
                        parent.join(target)
                    };
                    return resolve_lenient(&next, hops + 1);
                }
            }
            Ok(resolve_lenient(parent, hops)?.join(name))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, Workspace) {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("sub")).unwrap();
        fs::write(dir.path().join("sub/a.txt"), "a").unwrap();
        let ws = Workspace::new(dir.path()).unwrap();
        (dir, ws)
    }

    #[test]
    fn relative_and_absolute_paths_inside_resolve() {
        let (_d, ws) = setup();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.resolve("sub/a.txt").unwrap(), root.join("sub/a.txt"));
        let abs = root.join("sub/a.txt");
        assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap(), abs);
        assert_eq!(ws.resolve("sub/../sub/./a.txt").unwrap(), abs);
    }

    #[test]
    fn new_files_resolve_through_their_deepest_existing_ancestor() {
        let (_d, ws) = setup();
        let root = ws.root().to_path_buf();
        assert_eq!(ws.resolve("x/y/z.txt").unwrap(), root.join("x/y/z.txt"));
        assert_eq!(ws.resolve("x/../q.txt").unwrap(), root.join("q.txt"));
        let err = ws.resolve("x/../../escape.txt").unwrap_err();
        assert!(err.to_string().contains("outside the workspace"), "{err}");
    }

    #[test]
    fn lexical_traversal_is_refused() {
        let (_d, ws) = setup();
        for p in ["../../../../etc/hostname", "/etc/hostname", "sub/../../x"] {
            let err = ws.resolve(p).unwrap_err();
            assert!(matches!(err, PathError::Outside { .. }), "{p}: {err}");
            assert!(err.to_string().contains("outside the workspace"));
            assert_eq!(err.to_result().error.unwrap().kind, ErrorKind::Denied);
        }
    }

    #[test]
    fn symlinks_escaping_are_refused_and_inside_ones_work() {
        let (d, ws) = setup();
        symlink("/etc", d.path().join("out")).unwrap();
        symlink("sub", d.path().join("inside")).unwrap();
        symlink("/nonexistent-target-dir/file", d.path().join("dangling")).unwrap();
        symlink("sub/new.txt", d.path().join("dangling-in")).unwrap();
        assert!(ws.resolve("out/hostname").is_err());
        assert!(ws.resolve("out/new-file.txt").is_err());
        assert!(ws.resolve("dangling").is_err());
        assert_eq!(
            ws.resolve("inside/a.txt").unwrap(),
            ws.root().join("sub/a.txt")
        );
        assert_eq!(
            ws.resolve("dangling-in").unwrap(),
            ws.root().join("sub/new.txt")
        );
    }

    #[test]
    fn symlink_loops_are_errors_not_hangs() {
        let (d, ws) = setup();
        symlink("loop2", d.path().join("loop1")).unwrap();
        symlink("loop1", d.path().join("loop2")).unwrap();
        assert!(ws.resolve("loop1").is_err());
    }

    #[test]
    fn extra_roots_are_inside() {
        let (_d, ws) = setup();
        let other = tempfile::tempdir().unwrap();
        let ws = ws.with_extra_root(other.path()).unwrap();
        let p = other.path().join("f.txt");
        assert!(ws.resolve(p.to_str().unwrap()).is_ok());
    }

    #[test]
    fn read_only_roots_are_readable_but_not_writable() {
        let (_d, ws) = setup();
        let spill = tempfile::tempdir().unwrap();
        let file = spill.path().join("out.txt");
        std::fs::write(&file, "x").unwrap();
        let name = file.to_str().unwrap();
        assert!(ws.resolve_for_read(name).is_err());
        let ws = ws.with_read_only_root(spill.path());
        assert_eq!(
            ws.resolve_for_read(name).unwrap(),
            std::fs::canonicalize(&file).unwrap()
        );
        assert!(
            ws.resolve(name)
                .unwrap_err()
                .to_string()
                .contains("outside the workspace")
        );
        assert!(ws.resolve_for_read("/etc/hostname").is_err());
        // `..` out of a read-only root is still outside.
        let up = format!("{}/../../etc/hostname", spill.path().display());
        assert!(ws.resolve_for_read(&up).is_err());
    }

    #[test]
    fn empty_path_is_invalid() {
        let (_d, ws) = setup();
        assert!(matches!(ws.resolve("  "), Err(PathError::Empty)));
    }
}
