//! What `glob_files`, `grep_content` and `list_dir` share: the directory
//! walker, the rule that explicitly named paths are never hidden by ignore
//! files, glob filters, newest-first selection and the settings type.
//!
//! The walker is ripgrep's (`ignore`), set up the way ripgrep runs for
//! `rg --hidden --follow`: hidden files included, `.gitignore` (inside a git
//! repository), `.ignore` and `.rgignore` honoured, `.git` folders skipped.
//! Symbolic links are followed only when their target lies inside the
//! workspace, so no search walks out of it; link loops are detected by the
//! walker and skipped.

mod collect;
pub mod glob;
pub mod grep;
pub mod index;
pub mod list;

pub(crate) use collect::{TopK, collect_top_k};

use std::cmp::Reverse;
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use globset::{GlobBuilder, GlobMatcher};
use ignore::{DirEntry, WalkBuilder};
use tool_core::{ErrorKind, ToolError};

use crate::fs::workspace::Workspace;

/// Default most results shown by `glob_files` and `grep_content`, and entries by `list_dir`.
pub const DEFAULT_RESULT_LIMIT: usize = 100;
/// Default longest line `grep_content` shows, in characters.
pub const DEFAULT_MAX_LINE_CHARS: usize = 2000;
/// Default longest line `grep_content` searches, in bytes: 4 MiB. The rest
/// of a longer line is read past, not held, so the memory of a search stays
/// bounded by about this much per thread whatever the files hold (a
/// minified bundle, a one-line 200 MB dump); the output names each line so
/// cut.
pub const DEFAULT_MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Folders `list_dir` leaves out unless asked for by path.
pub const DEFAULT_LIST_IGNORES: &[&str] = &[
    "node_modules",
    "__pycache__",
    ".git",
    "dist",
    "build",
    "target",
    "vendor",
    "bin",
    "obj",
    ".idea",
    ".vscode",
    ".zig-cache",
    "zig-out",
    ".coverage",
    "coverage",
    "tmp",
    "temp",
    ".cache",
    "cache",
    "logs",
    ".venv",
    "venv",
    "env",
    ".next",
    ".nuxt",
    ".tox",
    ".mypy_cache",
    ".pytest_cache",
    ".gradle",
];

/// Settings of `glob_files`, `grep_content` and `list_dir`, read from the
/// context (`ToolContext::with_state(SearchConfig { .. })`); the defaults
/// apply without one.
///
/// ```
/// use tool_builtins::SearchConfig;
///
/// let config = SearchConfig::default().with_result_limit(50).with_threads(4);
/// assert_eq!(config.result_limit, 50);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchConfig {
    /// Most files (glob), matching lines (grep) or files (list) shown. Default 100.
    pub result_limit: usize,
    /// Longest matching line shown by grep, in characters; longer ones are cut
    /// and end with `...`. Default 2000.
    pub max_line_chars: usize,
    /// Longest line grep searches, in bytes (at least 1); only the first this
    /// many bytes of a longer line are searched, and the output says which
    /// lines were cut. Default [`DEFAULT_MAX_LINE_BYTES`] (4 MiB).
    pub max_line_bytes: usize,
    /// Walker threads; 0 picks one per core (at most 12). Default 0.
    pub threads: usize,
    /// Folder names `list_dir` leaves out. Default [`DEFAULT_LIST_IGNORES`].
    pub list_ignores: Vec<String>,
}

impl SearchConfig {
    /// The context's `SearchConfig`, or the defaults when it holds none.
    pub fn from_context(ctx: &tool_core::ToolContext) -> Self {
        ctx.state::<Self>()
            .map_or_else(Self::default, |c| (*c).clone())
    }
}

impl Default for SearchConfig {
    fn default() -> Self {
        Self {
            result_limit: DEFAULT_RESULT_LIMIT,
            max_line_chars: DEFAULT_MAX_LINE_CHARS,
            max_line_bytes: DEFAULT_MAX_LINE_BYTES,
            threads: 0,
            list_ignores: DEFAULT_LIST_IGNORES
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
        }
    }
}

impl SearchConfig {
    /// Sets the result limit (at least 1).
    #[must_use]
    pub fn with_result_limit(mut self, limit: usize) -> Self {
        self.result_limit = limit.max(1);
        self
    }

    /// Sets the longest line grep shows.
    #[must_use]
    pub fn with_max_line_chars(mut self, chars: usize) -> Self {
        self.max_line_chars = chars;
        self
    }

    /// Sets the longest line grep searches, in bytes (at least 1).
    #[must_use]
    pub fn with_max_line_bytes(mut self, bytes: usize) -> Self {
        self.max_line_bytes = bytes.max(1);
        self
    }

    /// Sets the number of walker threads (0 = automatic).
    #[must_use]
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads;
        self
    }

    /// Replaces the folder names `list_dir` leaves out.
    #[must_use]
    pub fn with_list_ignores<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        self.list_ignores = names.into_iter().map(Into::into).collect();
        self
    }
}

/// The truncation line of glob and list results.
/// Largest `offset` `grep_content` and `glob_files` take: a page past it
/// would keep that many results in memory, and a search that needs it is
/// better narrowed.
pub const MAX_OFFSET: usize = 10_000;

/// Checks a paging `offset` (results to skip, default 0) against
/// [`MAX_OFFSET`].
pub(crate) fn check_offset(offset: Option<i64>) -> Result<usize, ToolError> {
    let offset = offset.unwrap_or(0);
    match usize::try_from(offset) {
        Ok(o) if o <= MAX_OFFSET => Ok(o),
        _ => Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "`offset` is the number of results to skip, from 0 to {MAX_OFFSET}; got {offset}. \
                 Past {MAX_OFFSET}, narrow the search with `path` or a more specific pattern."
            ),
        )),
    }
}

/// The paging note after a truncated page: which results were shown and
/// the `offset` of the next page.
pub(crate) fn next_page_line(what: &str, from: usize, to: usize, total: u64) -> String {
    format!("(Showing {what} {from}-{to} of {total}. Use offset={to} to see the next page.)")
}

pub(crate) const TRUNCATION_LINE: &str =
    "(Results are truncated. Consider using a more specific path or pattern.)";

/// A walker over `base` with the shared settings. `honour_ignores` turns the
/// ignore files on; `.git` folders are skipped and symlinks leading outside
/// the workspace are not followed either way.
pub(crate) fn walker(
    ws: &Workspace,
    base: &Path,
    honour_ignores: bool,
    threads: usize,
) -> WalkBuilder {
    walker_with(ws, base, honour_ignores, threads, |_| true)
}

/// [`walker`] with an extra predicate: entries (and folders with all their
/// contents) for which `keep` returns `false` are skipped.
pub(crate) fn walker_with(
    ws: &Workspace,
    base: &Path,
    honour_ignores: bool,
    threads: usize,
    keep: impl Fn(&DirEntry) -> bool + Send + Sync + 'static,
) -> WalkBuilder {
    let mut builder = WalkBuilder::new(base);
    configure(&mut builder, honour_ignores);
    builder.threads(threads);
    let ws = Arc::new(ws.clone());
    // Never into the tools' private folder (other traces' spill files) from
    // outside it, nor into the state folder (every trace's ledger), whatever
    // path leads there: a followed symlink is judged by its target.
    let areas: Vec<PathBuf> = crate::fs::workspace::private_area()
        .into_iter()
        .chain(crate::fs::workspace::state_area())
        .collect();
    let base_real = std::fs::canonicalize(base).unwrap_or_else(|_| base.to_path_buf());
    // A walk that starts inside another configuration's private tree shows
    // nothing of it.
    let base_private = base_real.ancestors().any(|a| {
        !areas.iter().any(|area| area == a) && crate::fs::workspace::looks_private_tree(a)
    });
    builder.filter_entry(move |entry| {
        !base_private
            && !leads_into_private(entry, &areas, &base_real)
            && keep_entry(&ws, entry)
            && keep(entry)
    });
    builder
}

/// Whether a walk must not enter or show `entry` (cross-cutting §6; review
/// 23 F2): its physical path (a symlink's canonical target) lies in one of
/// `areas` (the private and state folders) and not below `base` (a walk
/// that starts inside the caller's own spill folder keeps it), or it is a
/// private tree of another configuration ([`crate::fs::workspace::looks_private_tree`]).
fn leads_into_private(entry: &DirEntry, areas: &[PathBuf], base: &Path) -> bool {
    let resolved;
    let physical = if entry.path_is_symlink() {
        match std::fs::canonicalize(entry.path()) {
            Ok(target) => {
                resolved = target;
                resolved.as_path()
            }
            // A dangling link shows nothing; keep_entry drops it.
            Err(_) => return false,
        }
    } else {
        entry.path()
    };
    if areas
        .iter()
        .any(|area| physical.starts_with(area) && !physical.starts_with(base))
    {
        return true;
    }
    physical != base && crate::fs::workspace::looks_private_tree(physical)
}

fn configure(builder: &mut WalkBuilder, honour_ignores: bool) {
    builder
        .hidden(false)
        .follow_links(true)
        .parents(honour_ignores)
        .ignore(honour_ignores)
        .git_ignore(honour_ignores)
        .git_global(honour_ignores)
        .git_exclude(honour_ignores)
        .require_git(true);
    if honour_ignores {
        builder.add_custom_ignore_filename(".rgignore");
    }
}

/// Skips `.git` folders and symlinks whose target is outside the workspace.
fn keep_entry(ws: &Workspace, entry: &DirEntry) -> bool {
    if entry.file_name() == ".git" {
        return false;
    }
    if entry.path_is_symlink() {
        return std::fs::canonicalize(entry.path()).is_ok_and(|target| ws.contains(&target));
    }
    true
}

/// Whether the ignore files of the workspace hide `path` (canonical, inside
/// the root) or one of its ancestors below the root. A path so hidden was
/// named explicitly by the caller, so its search runs with ignore files off.
pub(crate) fn explicitly_ignored(ws: &Workspace, path: &Path) -> bool {
    let Ok(relative) = path.strip_prefix(ws.root()) else {
        return false;
    };
    if relative.as_os_str().is_empty() {
        return false;
    }
    let mut builder = WalkBuilder::new(ws.root());
    configure(&mut builder, true);
    let Some(mut matcher) = builder.build_matchers().into_iter().next() else {
        return false;
    };
    let mut prefix = PathBuf::new();
    let components: Vec<Component<'_>> = relative.components().collect();
    for (i, component) in components.iter().enumerate() {
        prefix.push(component);
        let is_dir = i + 1 < components.len() || path.is_dir();
        if matcher.matched(&prefix, is_dir).is_ignore() {
            return true;
        }
    }
    false
}

/// A glob filter in ripgrep's `--glob` sense: a pattern without `/` matches
/// the file name at any depth; one with `/` matches the path relative to the
/// search folder. `*` never crosses a `/`; `**` does.
#[derive(Debug, Clone)]
pub(crate) struct GlobFilter {
    matcher: GlobMatcher,
    name_only: bool,
}

impl GlobFilter {
    /// Compiles `pattern`; the error message is ready for the model.
    pub(crate) fn new(pattern: &str) -> Result<Self, String> {
        let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
        Self::with_mode(pattern, !pattern.contains('/'))
    }

    /// Compiles `pattern` to match file names (`name_only`) or relative
    /// paths, after [`check_glob`]'s limits.
    pub(crate) fn with_mode(pattern: &str, name_only: bool) -> Result<Self, String> {
        check_glob(pattern)?;
        let glob = GlobBuilder::new(pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .empty_alternates(true)
            .build()
            .map_err(|e| format!("Invalid glob pattern `{pattern}`: {}", e.kind()))?;
        Ok(Self {
            matcher: glob.compile_matcher(),
            name_only,
        })
    }

    /// Whether the file at `relative` (to the search folder) matches.
    pub(crate) fn is_match(&self, relative: &Path) -> bool {
        if self.name_only {
            relative
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name))
        } else {
            self.matcher.is_match(relative)
        }
    }
}

/// Longest glob pattern accepted (`pattern`, `include`, `ignore`), in bytes: 4 KiB.
pub const MAX_GLOB_BYTES: usize = 4096;

/// Deepest nesting of `{…}` alternations in one glob: 8.
pub const MAX_GLOB_NESTING: usize = 8;

/// Most wildcards (`*`, `?`) in one glob: 256.
pub const MAX_GLOB_WILDCARDS: usize = 256;

/// Most `ignore` patterns in one `list_dir` call: 256.
pub const MAX_GLOB_COUNT: usize = 256;

/// Longest regular expression `grep_content` accepts, in bytes: 16 KiB.
/// (Nesting is bounded by the regex parser itself: 250 levels, an error, not a crash.)
pub const MAX_REGEX_BYTES: usize = 16 * 1024;

/// The limits every glob a model sends must keep, checked before the glob
/// is compiled: the compiler recurses on nested alternations, and a pattern
/// of some 15 000 nested braces overflows the stack, which aborts the whole
/// process whatever thread it happens on (a `catch_unwind` cannot stop it).
/// So the limits are the fix, not a guard: length [`MAX_GLOB_BYTES`],
/// nesting [`MAX_GLOB_NESTING`], wildcards [`MAX_GLOB_WILDCARDS`].
///
/// # Errors
/// The model-facing message naming the limit and the value.
pub fn check_glob(pattern: &str) -> Result<(), String> {
    let shown = tool_rules::text::clip(pattern, crate::fs::MESSAGE_VALUE).into_owned();
    if pattern.len() > MAX_GLOB_BYTES {
        return Err(format!(
            "The glob pattern is {} bytes long; the limit is {MAX_GLOB_BYTES} bytes. \
             Use a shorter pattern (or several calls). Pattern: {shown}",
            pattern.len()
        ));
    }
    let (mut depth, mut deepest, mut wildcards, mut escaped) = (0usize, 0usize, 0usize, false);
    for b in pattern.bytes() {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' => escaped = true,
            b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b'}' => depth = depth.saturating_sub(1),
            b'*' | b'?' => wildcards += 1,
            _ => {}
        }
    }
    if deepest > MAX_GLOB_NESTING {
        return Err(format!(
            "The glob pattern nests `{{…}}` {deepest} levels deep; the limit is \
             {MAX_GLOB_NESTING}. Flatten the alternation. Pattern: {shown}"
        ));
    }
    if wildcards > MAX_GLOB_WILDCARDS {
        return Err(format!(
            "The glob pattern has {wildcards} wildcards (`*`, `?`); the limit is \
             {MAX_GLOB_WILDCARDS}. Pattern: {shown}"
        ));
    }
    Ok(())
}

/// Whether a path component holds glob syntax.
pub(crate) fn has_glob_syntax(component: &str) -> bool {
    component.contains(['*', '?', '[', '{', '\\'])
}

/// Sort key for "newest first, then by path": larger is better.
pub(crate) type NewestFirst = (SystemTime, Reverse<PathBuf>);

/// The key of a file for [`NewestFirst`] ordering.
pub(crate) fn newest_first(path: PathBuf, modified: Option<SystemTime>) -> NewestFirst {
    (modified.unwrap_or(SystemTime::UNIX_EPOCH), Reverse(path))
}

/// "Search path not found: <path>" as a failed result.
pub(crate) fn not_found(path: &Path) -> ToolError {
    ToolError::new(
        ErrorKind::Failed,
        format!("Search path not found: {}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glob_filter_name_and_path_forms() {
        let f = GlobFilter::new("*.ts").unwrap();
        assert!(f.is_match(Path::new("a.ts")));
        assert!(f.is_match(Path::new("src/deep/a.ts")));
        assert!(!f.is_match(Path::new("a.tsx")));
        let f = GlobFilter::new("src/*.ts").unwrap();
        assert!(f.is_match(Path::new("src/a.ts")));
        assert!(!f.is_match(Path::new("src/deep/a.ts")));
        let f = GlobFilter::new("**/*.{ts,tsx}").unwrap();
        assert!(f.is_match(Path::new("a.tsx")));
        assert!(f.is_match(Path::new("x/y/a.ts")));
        assert!(GlobFilter::new("a[").is_err());
    }

    #[test]
    fn top_k_keeps_the_best_and_counts_all() {
        let mut a = TopK::new(3);
        for i in [5, 1, 9, 3, 7] {
            a.push(i);
        }
        let mut b = TopK::new(3);
        for i in [8, 2] {
            b.push(i);
        }
        a.merge(b);
        assert_eq!(a.seen(), 7);
        assert_eq!(a.into_sorted(), vec![9, 8, 7]);
    }
}
