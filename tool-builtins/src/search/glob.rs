//! `glob_files`: find files by name pattern, newest first.
//!
//! The walk is ripgrep's parallel walker (see [`crate::search`] for
//! the shared rules: hidden files in, `.git` out, ignore files honoured,
//! symlinks followed only inside the workspace). Ignore files never hide a
//! path the caller named: when the search folder, or the literal folder a
//! pattern starts with (`target/**/*.rs`), is itself ignored, that search
//! runs with ignore files off, and a pattern naming an existing file exactly
//! always finds it.

use std::path::{Path, PathBuf};

use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, meta, tool};

use crate::fs::workspace::{Workspace, workspace_of};
use crate::search::{
    self, GlobFilter, NewestFirst, SearchConfig, TRUNCATION_LINE, TopK, has_glob_syntax,
    newest_first,
};

/// Finds files whose path matches a glob pattern, newest first.
///
/// Patterns like `src/**/*.ts`; one without `/` (`*.md`) matches names at
/// any depth. Returns absolute paths, one per line, at most 100 per page. Hidden files are included; `.gitignore`d files are skipped
/// unless the pattern or path names them.
///
/// # Arguments
/// * `pattern` - The glob pattern to match files against.
/// * `path` - Folder to search, relative to the workspace root or absolute
///   (default: the root).
/// * `offset` - Files to skip (next page).
///
/// # Examples
/// ```json
/// {"pattern": "src/**/*.ts"}
/// {"pattern": "*.md", "path": "docs"}
/// ```
#[tool(kind = "read", tags = ["fs", "search"], read_only, idempotent, concurrency_safe)]
pub fn glob_files(
    pattern: String,
    path: Option<String>,
    offset: Option<i64>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let config = SearchConfig::from_context(context);
    let offset = search::check_offset(offset)?;
    // The skipped files are kept too: they decide where the page starts.
    let keep = offset.saturating_add(config.result_limit);
    let ws = workspace_of(context)?;
    let base = search_folder(&ws, path)?;
    let plan = plan(&ws, &base, &pattern)?;
    let listed = plan.dir.as_deref().and_then(|dir| {
        context
            .state::<search::index::ContentIndex>()
            .and_then(|index| index.files_under(dir))
    });
    let found = match (&plan.dir, listed) {
        // A long-running host's index lists the files the walk would find.
        (Some(dir), Some(files)) => {
            let mut found = TopK::new(keep);
            for (path, modified) in files {
                if plan
                    .filter
                    .is_match(path.strip_prefix(dir).unwrap_or(&path))
                {
                    found.push(newest_first(path, modified));
                }
            }
            found
        }
        (Some(dir), None) => walk(&ws, dir, &plan.filter, keep, config.threads),
        (None, _) => TopK::new(keep),
    };
    Ok(render(
        &pattern,
        found,
        plan.explicit_file,
        offset,
        config.result_limit,
    ))
}

/// Resolves the `path` argument to an existing folder inside the workspace.
pub(crate) fn search_folder(ws: &Workspace, path: Option<String>) -> Result<PathBuf, ToolError> {
    let Some(path) = path.filter(|p| !p.trim().is_empty()) else {
        return Ok(ws.root().to_path_buf());
    };
    let resolved = ws.resolve(&path)?;
    if !resolved.exists() {
        return Err(search::not_found(&ws.absolute(&path)));
    }
    if !resolved.is_dir() {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "Search path is not a directory: {}. Give a folder to search in.",
                resolved.display()
            ),
        ));
    }
    Ok(resolved)
}

/// The files matching `pattern` (resolved from the workspace root as
/// `glob_files` resolves it), at most `limit`, sorted by path; the second
/// value is how many matched in all. Used by `read_images` for its globs.
pub(crate) fn expand(
    ws: &Workspace,
    pattern: &str,
    limit: usize,
    threads: usize,
) -> Result<(Vec<PathBuf>, usize), ToolError> {
    let plan = plan(ws, ws.root(), pattern)?;
    let found = match &plan.dir {
        Some(dir) => walk(ws, dir, &plan.filter, limit, threads),
        None => TopK::new(limit),
    };
    let mut total = found.seen();
    let mut files: Vec<PathBuf> = found.into_sorted().into_iter().map(|(_, p)| p.0).collect();
    if let Some(file) = plan.explicit_file {
        if !files.contains(&file) {
            total += 1;
            files.push(file);
        }
    }
    files.sort();
    files.truncate(limit);
    Ok((files, total))
}

/// What to walk and what to match.
#[derive(Debug)]
struct Plan {
    /// The folder to walk; `None` when the pattern's literal folder does not exist.
    dir: Option<PathBuf>,
    /// The filter, relative to `dir`.
    filter: GlobFilter,
    /// A file the pattern names exactly, found whatever the ignore files say.
    explicit_file: Option<PathBuf>,
}

/// Splits `pattern` into the literal folder it starts with and the rest.
fn plan(ws: &Workspace, base: &Path, pattern: &str) -> Result<Plan, ToolError> {
    let pattern = pattern.trim();
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    if pattern.is_empty() {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            "The pattern is empty. Give a glob pattern such as `**/*.rs`.",
        ));
    }
    let invalid = |message: String| ToolError::new(ErrorKind::InvalidArguments, message);
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components
        .iter()
        .take_while(|c| !has_glob_syntax(c))
        .count();
    if literal == components.len() {
        // No glob syntax at all: a path. An existing file is returned; a
        // folder lists its files; a bare name also matches at any depth.
        let target = ws.resolve(&join(base, pattern))?;
        if target.is_dir() {
            return Ok(Plan {
                dir: Some(target),
                filter: GlobFilter::new("**").map_err(invalid)?,
                explicit_file: None,
            });
        }
        let explicit_file = target.is_file().then_some(target);
        let name_only = !pattern.trim_start_matches('/').contains('/');
        return Ok(Plan {
            dir: name_only.then(|| base.to_path_buf()),
            filter: GlobFilter::with_mode(pattern, true).map_err(invalid)?,
            explicit_file,
        });
    }
    if literal == 0 {
        return Ok(Plan {
            dir: Some(base.to_path_buf()),
            filter: GlobFilter::new(pattern).map_err(invalid)?,
            explicit_file: None,
        });
    }
    // A literal folder first (`src/**/*.rs`, `/abs/dir/*.rs`): walk from it.
    let prefix = components[..literal].join("/");
    let rest = components[literal..].join("/");
    let prefix = if prefix.is_empty() {
        "/".to_owned()
    } else {
        prefix
    };
    let dir = ws.resolve(&join(base, &prefix))?;
    Ok(Plan {
        dir: dir.is_dir().then_some(dir),
        filter: GlobFilter::with_mode(&rest, false).map_err(invalid)?,
        explicit_file: None,
    })
}

/// `base` joined with `relative` as a string for [`Workspace::resolve`]
/// (absolute patterns stay as they are).
fn join(base: &Path, relative: &str) -> String {
    base.join(relative).to_string_lossy().into_owned()
}

/// Walks `dir` in parallel, keeping the newest `limit` matches.
fn walk(
    ws: &Workspace,
    dir: &Path,
    filter: &GlobFilter,
    limit: usize,
    threads: usize,
) -> TopK<NewestFirst> {
    let honour_ignores = !search::explicitly_ignored(ws, dir);
    let walk = search::walker(ws, dir, honour_ignores, threads).build_parallel();
    search::collect_top_k(walk, limit, |entry| {
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return None;
        }
        let relative = entry.path().strip_prefix(dir).unwrap_or(entry.path());
        if !filter.is_match(relative) {
            return None;
        }
        let modified = entry.metadata().ok().and_then(|m| m.modified().ok());
        Some(newest_first(entry.into_path(), modified))
    })
}

/// The result text: paths newest first, from `offset`, at most `limit`, or
/// "No files found"; an explicitly named file the walk skipped (ignored) is
/// added. A truncated page ends with the `offset` of the next one.
fn render(
    pattern: &str,
    found: TopK<NewestFirst>,
    explicit_file: Option<PathBuf>,
    offset: usize,
    limit: usize,
) -> ToolResult {
    let keep = offset.saturating_add(limit);
    let mut total = found.seen();
    let mut files = found.into_sorted();
    if let Some(file) = explicit_file {
        if !files.iter().any(|(_, p)| p.0 == file) {
            let modified = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
            files.push(newest_first(file, modified));
            files.sort_by(|a, b| b.cmp(a));
            files.truncate(keep);
            total += 1;
        }
    }
    let end = keep.min(total);
    // More files after this page.
    let truncated = total > keep;
    let page: Vec<_> = files.iter().skip(offset).take(limit).collect();
    let mut output = String::new();
    if total == 0 {
        output.push_str("No files found");
    } else if page.is_empty() {
        output.push_str(&format!(
            "(No files past offset {offset}: {total} matched. Use a smaller offset.)"
        ));
    }
    for (i, (_, path)) in page.iter().enumerate() {
        if i > 0 {
            output.push('\n');
        }
        output.push_str(&path.0.to_string_lossy());
    }
    if truncated {
        output.push_str("\n\n");
        if offset == 0 {
            output.push_str(TRUNCATION_LINE);
            output.push('\n');
        }
        output.push_str(&search::next_page_line(
            "files",
            offset + 1,
            end,
            total as u64,
        ));
    }
    let result = ToolResult::ok(output)
        .with_title(pattern)
        .with_metadata(meta::COUNT, page.len())
        .with_metadata(meta::TRUNCATED, truncated);
    if truncated {
        result.with_metadata(meta::NEXT_OFFSET, end)
    } else {
        result
    }
}
