//! `list_dir`: a folder's files as an indented tree.
//!
//! The walk follows the rules of [`crate::search`] and also leaves
//! out build output, dependency and cache folders (`node_modules`, `target`,
//! `.venv`, … see [`SearchConfig::list_ignores`]) plus any glob the caller
//! adds. When there are more files than the limit, the shallowest ones are
//! shown (then by path), so the top of the tree stays visible.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use ignore::DirEntry;
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, meta, tool};

use crate::fs::workspace::{Workspace, workspace_of};
use crate::search::glob::search_folder;
use crate::search::{self, GlobFilter, SearchConfig, TopK};

/// Lists a folder as a tree, folders first.
///
/// Skips `.gitignore`d files and VCS, dependency, build and cache folders
/// (`.git`, `node_modules`, …). At most 100 files. For known names or text
/// use `glob_files`/`grep_content`.
///
/// # Arguments
/// * `path` - Folder to list (default: workspace root).
/// * `ignore` - Extra glob patterns to skip.
///
/// # Examples
/// ```json
/// {"path": "src"}
/// {"ignore": ["target", "node_modules"]}
/// ```
#[tool(kind = "read", tags = ["fs", "search"], read_only, idempotent, concurrency_safe)]
pub fn list_dir(
    path: Option<String>,
    ignore: Option<Vec<String>>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let config = SearchConfig::from_context(context);
    let ws = workspace_of(context)?;
    let base = search_folder(&ws, path)?;
    let ignore = ignore.unwrap_or_default();
    if ignore.len() > search::MAX_GLOB_COUNT {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "ignore has {} patterns; the limit is {}. Combine them with `{{a,b}}` alternations.",
                ignore.len(),
                search::MAX_GLOB_COUNT
            ),
        ));
    }
    let mut filters = Vec::new();
    for pattern in ignore {
        let pattern = pattern.trim().trim_end_matches('/');
        if pattern.is_empty() {
            continue;
        }
        match GlobFilter::new(pattern) {
            Ok(f) => filters.push(f),
            Err(message) => return Err(ToolError::new(ErrorKind::InvalidArguments, message)),
        }
    }
    let found = walk(&ws, &base, &config, filters);
    Ok(render(&base, found))
}

/// Sort key: shallowest first, then by path (larger is better for [`TopK`]).
type ShallowFirst = Reverse<(usize, PathBuf)>;

fn walk(
    ws: &Workspace,
    base: &Path,
    config: &SearchConfig,
    filters: Vec<GlobFilter>,
) -> TopK<ShallowFirst> {
    let honour_ignores = !search::explicitly_ignored(ws, base);
    let names: BTreeSet<String> = config.list_ignores.iter().cloned().collect();
    let filters = Arc::new(filters);
    let root = base.to_path_buf();
    let keep = move |entry: &DirEntry| {
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        if is_dir && names.contains(entry.file_name().to_string_lossy().as_ref()) {
            return false;
        }
        let relative = entry.path().strip_prefix(&root).unwrap_or(entry.path());
        !filters.iter().any(|f| f.is_match(relative))
    };
    let walk = search::walker_with(ws, base, honour_ignores, config.threads, keep).build_parallel();
    search::collect_top_k(walk, config.result_limit, |entry| {
        if entry.depth() == 0 || entry.file_type().is_some_and(|t| t.is_dir()) {
            return None;
        }
        let relative = entry.path().strip_prefix(base).ok()?;
        Some(Reverse((entry.depth(), relative.to_path_buf())))
    })
}

/// One folder of the tree being rendered.
#[derive(Default)]
struct Node {
    folders: BTreeMap<String, Node>,
    files: BTreeSet<String>,
}

impl Node {
    fn insert(&mut self, relative: &Path) {
        let parts: Vec<String> = relative
            .iter()
            .map(|c| c.to_string_lossy().into_owned())
            .collect();
        let Some((file, folders)) = parts.split_last() else {
            return;
        };
        let mut node = self;
        for folder in folders {
            node = node.folders.entry(folder.clone()).or_default();
        }
        node.files.insert(file.clone());
    }

    fn render(&self, depth: usize, out: &mut String) {
        let indent = "  ".repeat(depth);
        for (name, child) in &self.folders {
            out.push_str(&format!("{indent}{name}/\n"));
            child.render(depth + 1, out);
        }
        for name in &self.files {
            out.push_str(&format!("{indent}{name}\n"));
        }
    }
}

fn render(base: &Path, found: TopK<ShallowFirst>) -> ToolResult {
    let total = found.seen();
    let files = found.into_sorted();
    let truncated = total > files.len();
    let mut tree = Node::default();
    for Reverse((_, relative)) in &files {
        tree.insert(relative);
    }
    let mut out = format!("{}/\n", base.display());
    tree.render(1, &mut out);
    if truncated {
        out.push_str(&format!(
            "\n(Showing {} of {total} files. Use a more specific path or the ignore parameter to see the rest.)",
            files.len()
        ));
    }
    ToolResult::ok(out)
        .with_title(base.to_string_lossy())
        .with_metadata(meta::COUNT, files.len())
        .with_metadata(meta::TRUNCATED, truncated)
}
