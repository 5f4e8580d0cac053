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
use std::sync::{Arc, Mutex};

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use tool_core::{ErrorKind, ToolContext, ToolResult, tool};

use crate::glob::search_folder;
use crate::search::{self, GlobFilter, SearchConfig, TopK};
use crate::workspace::{Workspace, workspace_of};

/// Lists the files of a folder as a tree: folders first, then files, sorted.
///
/// Leaves out version control, dependency, build and cache folders
/// (`.git`, `node_modules`, `target`, `dist`, `__pycache__`, `.venv`, …) and
/// files excluded by `.gitignore`. Shows at most 100 files. Prefer
/// `glob_files` and `grep_content` when you know what you are looking for.
///
/// # Arguments
/// * `path` - The folder to list, relative to the workspace root or absolute
///   (default: the workspace root).
/// * `ignore` - Extra glob patterns to leave out (e.g. `*.lock`, `docs/**`).
#[tool(kind = "read", tags = ["fs", "search"], read_only, idempotent, concurrency_safe)]
pub fn list_dir(
    path: Option<String>,
    ignore: Option<Vec<String>>,
    context: &ToolContext,
) -> ToolResult {
    let config = SearchConfig::from_context(context);
    let ws = match workspace_of(context) {
        Ok(ws) => ws,
        Err(result) => return result,
    };
    let base = match search_folder(&ws, path) {
        Ok(base) => base,
        Err(result) => return result,
    };
    let ignore = ignore.unwrap_or_default();
    if ignore.len() > search::MAX_GLOB_COUNT {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "ignore has {} patterns; the limit is {}. Combine them with `{{a,b}}` alternations.",
                ignore.len(),
                search::MAX_GLOB_COUNT
            ),
        );
    }
    let mut filters = Vec::new();
    for pattern in ignore {
        let pattern = pattern.trim().trim_end_matches('/');
        if pattern.is_empty() {
            continue;
        }
        match GlobFilter::new(pattern) {
            Ok(f) => filters.push(f),
            Err(message) => return ToolResult::error(ErrorKind::InvalidArguments, message),
        }
    }
    let found = walk(&ws, &base, &config, filters);
    render(&base, found)
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
    let shared = Mutex::new(TopK::new(config.result_limit));
    let mut builder = Collector {
        base,
        limit: config.result_limit,
        shared: &shared,
    };
    search::walker_with(ws, base, honour_ignores, config.threads, keep)
        .build_parallel()
        .visit(&mut builder);
    shared
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Collector<'s> {
    base: &'s Path,
    limit: usize,
    shared: &'s Mutex<TopK<ShallowFirst>>,
}

impl<'s> ParallelVisitorBuilder<'s> for Collector<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            base: self.base,
            local: Some(TopK::new(self.limit)),
            shared: self.shared,
        })
    }
}

struct Visitor<'s> {
    base: &'s Path,
    local: Option<TopK<ShallowFirst>>,
    shared: &'s Mutex<TopK<ShallowFirst>>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if entry.depth() == 0 || entry.file_type().is_some_and(|t| t.is_dir()) {
            return WalkState::Continue;
        }
        if let Ok(relative) = entry.path().strip_prefix(self.base) {
            if let Some(local) = &mut self.local {
                local.push(Reverse((entry.depth(), relative.to_path_buf())));
            }
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        if let Some(local) = self.local.take() {
            self.shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .merge(local);
        }
    }
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
        .with_metadata("count", files.len())
        .with_metadata("truncated", truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn setup(files: &[&str]) -> (tempfile::TempDir, ToolContext) {
        let files: Vec<(&str, &str)> = files.iter().map(|f| (*f, "x")).collect();
        crate::test_support::workspace_with(&files)
    }

    fn root(ctx: &ToolContext) -> PathBuf {
        ctx.state::<Workspace>().unwrap().root().to_path_buf()
    }

    #[test]
    fn tree_folders_first_sorted_two_spaces_per_level() {
        let (_d, ctx) = setup(&["b.txt", "a.txt", "src/main.rs", "src/util/x.rs", ".env"]);
        let r = list_dir(None, None, &ctx);
        let expected = format!(
            "{}/\n  src/\n    util/\n      x.rs\n    main.rs\n  .env\n  a.txt\n  b.txt\n",
            root(&ctx).display()
        );
        assert_eq!(r.output, expected);
        assert_eq!(r.metadata["count"], 5);
        assert_eq!(r.metadata["truncated"], false);
    }

    #[test]
    fn default_and_extra_ignores() {
        let (_d, ctx) = setup(&[
            "node_modules/p/i.js",
            "target/debug/b",
            ".git/HEAD",
            "__pycache__/m.pyc",
            ".venv/bin/python",
            "src/lib.rs",
            "Cargo.lock",
            "docs/a.md",
        ]);
        let r = list_dir(None, Some(vec!["*.lock".into(), "docs/".into()]), &ctx);
        let expected = format!("{}/\n  src/\n    lib.rs\n", root(&ctx).display());
        assert_eq!(r.output, expected);
    }

    #[test]
    fn explicit_path_into_an_ignored_folder_lists_it() {
        let (_d, ctx) = setup(&["node_modules/p/index.js"]);
        let r = list_dir(Some("node_modules".into()), None, &ctx);
        assert!(r.output.contains("  p/\n    index.js\n"), "{}", r.output);
    }

    #[test]
    fn limit_keeps_the_shallowest_files() {
        let mut files: Vec<String> = (0..120).map(|i| format!("deep/f{i:03}.txt")).collect();
        files.push("top.txt".into());
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        let (_d, ctx) = setup(&refs);
        let r = list_dir(None, None, &ctx);
        assert_eq!(r.metadata["count"], 100);
        assert_eq!(r.metadata["truncated"], true);
        assert!(r.output.contains("\n  top.txt\n"));
        assert!(r.output.contains("    f000.txt\n") && !r.output.contains("f099.txt"));
        assert!(r.output.ends_with(
            "(Showing 100 of 121 files. Use a more specific path or the ignore parameter to see the rest.)"
        ));
    }

    #[test]
    fn symlinks_out_and_loops_are_not_followed() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.txt"), "x").unwrap();
        let (d, ctx) = setup(&["in/a.txt"]);
        symlink(outside.path(), d.path().join("out")).unwrap();
        symlink("..", d.path().join("in/loop")).unwrap();
        let r = list_dir(None, None, &ctx);
        assert!(!r.output.contains("secret"), "{}", r.output);
        assert_eq!(r.metadata["count"], 1, "{}", r.output);
        let r = list_dir(Some("out".into()), None, &ctx);
        assert!(r.error.unwrap().message.contains("outside the workspace"));
    }

    #[test]
    fn missing_folder() {
        let (_d, ctx) = setup(&["a.txt"]);
        let r = list_dir(Some("nope".into()), None, &ctx);
        assert!(
            r.error
                .unwrap()
                .message
                .starts_with("Search path not found: ")
        );
    }

    #[tokio::test]
    async fn hostile_ignore_patterns_are_refused() {
        let (_d, ctx) = crate::test_support::workspace_with(&[("a.txt", "x")]);
        let nested = format!("{}a{}", "{".repeat(15_000), "}".repeat(15_000));
        for ignore in [
            vec![nested],
            vec!["x".to_owned(); 300],
            vec!["*".repeat(5_000)],
        ] {
            let e = list_dir(None, Some(ignore), &ctx).error.expect("refused");
            assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
        }
    }
}
