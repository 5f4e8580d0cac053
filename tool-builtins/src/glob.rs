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
use std::sync::Mutex;

use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use tool_core::{ErrorKind, ToolContext, ToolResult, tool};

use crate::search::{
    self, GlobFilter, NewestFirst, SearchConfig, TRUNCATION_LINE, TopK, has_glob_syntax,
    newest_first,
};
use crate::workspace::{Workspace, workspace_of};

/// Finds files whose path matches a glob pattern, newest first.
///
/// Works with any codebase size. Patterns like `**/*.rs` or `src/**/*.ts`; a
/// pattern without `/` (`*.md`) matches file names at any depth. Returns
/// absolute paths, one per line, sorted by modification time (newest first),
/// at most 100. Hidden files are included; files excluded by `.gitignore` are
/// skipped unless the pattern or path names them explicitly.
///
/// # Arguments
/// * `pattern` - The glob pattern to match files against.
/// * `path` - The folder to search in, relative to the workspace root or
///   absolute (default: the workspace root).
#[tool(kind = "read", tags = ["fs", "search"], read_only, idempotent, concurrency_safe)]
pub fn glob_files(pattern: String, path: Option<String>, context: &ToolContext) -> ToolResult {
    let config = SearchConfig::from_context(context);
    let ws = match workspace_of(context) {
        Ok(ws) => ws,
        Err(result) => return result,
    };
    let base = match search_folder(&ws, path) {
        Ok(base) => base,
        Err(result) => return result,
    };
    let plan = match plan(&ws, &base, &pattern) {
        Ok(plan) => plan,
        Err(result) => return result,
    };
    let found = match &plan.dir {
        Some(dir) => walk(&ws, dir, &plan.filter, config.result_limit, config.threads),
        None => TopK::new(config.result_limit),
    };
    render(&pattern, found, plan.explicit_file, config.result_limit)
}

/// Resolves the `path` argument to an existing folder inside the workspace.
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's final result; it is returned at once"
)]
pub(crate) fn search_folder(ws: &Workspace, path: Option<String>) -> Result<PathBuf, ToolResult> {
    let Some(path) = path.filter(|p| !p.trim().is_empty()) else {
        return Ok(ws.root().to_path_buf());
    };
    let resolved = ws.resolve(&path).map_err(|e| e.to_result())?;
    if !resolved.exists() {
        return Err(search::not_found(&ws.absolute(&path)));
    }
    if !resolved.is_dir() {
        return Err(ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "Search path is not a directory: {}. Give a folder to search in.",
                resolved.display()
            ),
        ));
    }
    Ok(resolved)
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
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's final result; it is returned at once"
)]
fn plan(ws: &Workspace, base: &Path, pattern: &str) -> Result<Plan, ToolResult> {
    let pattern = pattern.trim();
    let pattern = pattern.strip_prefix("./").unwrap_or(pattern);
    if pattern.is_empty() {
        return Err(ToolResult::error(
            ErrorKind::InvalidArguments,
            "The pattern is empty. Give a glob pattern such as `**/*.rs`.",
        ));
    }
    let invalid = |message: String| ToolResult::error(ErrorKind::InvalidArguments, message);
    let components: Vec<&str> = pattern.split('/').collect();
    let literal = components
        .iter()
        .take_while(|c| !has_glob_syntax(c))
        .count();
    if literal == components.len() {
        // No glob syntax at all: a path. An existing file is returned; a
        // folder lists its files; a bare name also matches at any depth.
        let target = ws
            .resolve(&join(base, pattern))
            .map_err(|e| e.to_result())?;
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
    let dir = ws
        .resolve(&join(base, &prefix))
        .map_err(|e| e.to_result())?;
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
    let shared = Mutex::new(TopK::new(limit));
    let mut builder = Collector {
        dir,
        filter,
        limit,
        shared: &shared,
    };
    search::walker(ws, dir, honour_ignores, threads)
        .build_parallel()
        .visit(&mut builder);
    shared
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

struct Collector<'s> {
    dir: &'s Path,
    filter: &'s GlobFilter,
    limit: usize,
    shared: &'s Mutex<TopK<NewestFirst>>,
}

impl<'s> ParallelVisitorBuilder<'s> for Collector<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            dir: self.dir,
            filter: self.filter,
            local: Some(TopK::new(self.limit)),
            shared: self.shared,
        })
    }
}

struct Visitor<'s> {
    dir: &'s Path,
    filter: &'s GlobFilter,
    local: Option<TopK<NewestFirst>>,
    shared: &'s Mutex<TopK<NewestFirst>>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if !entry.file_type().is_some_and(|t| t.is_file()) {
            return WalkState::Continue;
        }
        let relative = entry.path().strip_prefix(self.dir).unwrap_or(entry.path());
        if self.filter.is_match(relative) {
            let modified = entry.metadata().ok().and_then(|m| m.modified().ok());
            if let Some(local) = &mut self.local {
                local.push(newest_first(entry.into_path(), modified));
            }
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        if let Some(local) = self.local.take() {
            let mut shared = self
                .shared
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            shared.merge(local);
        }
    }
}

/// The result text: paths newest first, or "No files found"; an explicitly
/// named file the walk skipped (ignored) is added.
fn render(
    pattern: &str,
    found: TopK<NewestFirst>,
    explicit_file: Option<PathBuf>,
    limit: usize,
) -> ToolResult {
    let mut total = found.seen();
    let mut files = found.into_sorted();
    if let Some(file) = explicit_file {
        if !files.iter().any(|(_, p)| p.0 == file) {
            let modified = std::fs::metadata(&file).and_then(|m| m.modified()).ok();
            files.push(newest_first(file, modified));
            files.sort_by(|a, b| b.cmp(a));
            files.truncate(limit);
            total += 1;
        }
    }
    let truncated = total > files.len();
    let mut output = String::new();
    if files.is_empty() {
        output.push_str("No files found");
    }
    for (i, (_, path)) in files.iter().enumerate() {
        if i > 0 {
            output.push('\n');
        }
        output.push_str(&path.0.to_string_lossy());
    }
    if truncated {
        output.push_str("\n\n");
        output.push_str(TRUNCATION_LINE);
    }
    ToolResult::ok(output)
        .with_title(pattern)
        .with_metadata("count", files.len())
        .with_metadata("truncated", truncated)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::time::{Duration, SystemTime};

    fn setup(files: &[&str]) -> (tempfile::TempDir, ToolContext) {
        let files: Vec<(&str, &str)> = files.iter().map(|f| (*f, "x\n")).collect();
        crate::test_support::workspace_with(&files)
    }

    fn git_init(dir: &Path) {
        fs::create_dir_all(dir.join(".git")).unwrap();
    }

    fn set_mtime(path: &Path, secs: u64) {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    fn glob(ctx: &ToolContext, pattern: &str, path: Option<&str>) -> ToolResult {
        glob_files(pattern.to_owned(), path.map(str::to_owned), ctx)
    }

    fn root(ctx: &ToolContext) -> PathBuf {
        ctx.state::<Workspace>().unwrap().root().to_path_buf()
    }

    #[test]
    fn newest_first_absolute_paths() {
        let (d, ctx) = setup(&["old.ts", "new.ts", "mid.ts", "other.js"]);
        set_mtime(&d.path().join("old.ts"), 1_000_000_000);
        set_mtime(&d.path().join("mid.ts"), 1_500_000_000);
        set_mtime(&d.path().join("new.ts"), 1_700_000_000);
        let r = glob(&ctx, "**/*.ts", None);
        let root = root(&ctx);
        let expected = ["new.ts", "mid.ts", "old.ts"]
            .map(|f| root.join(f).to_string_lossy().into_owned())
            .join("\n");
        assert_eq!(r.output, expected);
        assert_eq!(r.metadata["count"], 3);
        assert_eq!(r.metadata["truncated"], false);
    }

    #[test]
    fn no_files_found() {
        let (_d, ctx) = setup(&["a.txt"]);
        let r = glob(&ctx, "*.rs", None);
        assert!(r.is_ok());
        assert_eq!(r.output, "No files found");
        assert_eq!(r.metadata["count"], 0);
    }

    #[test]
    fn more_than_the_limit_is_truncated() {
        let names: Vec<String> = (0..105).map(|i| format!("f{i}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let (_d, ctx) = setup(&refs);
        let r = glob(&ctx, "*.txt", None);
        assert_eq!(r.metadata["count"], 100);
        assert_eq!(r.metadata["truncated"], true);
        assert!(r.output.ends_with(
            "\n\n(Results are truncated. Consider using a more specific path or pattern.)"
        ));
        assert_eq!(
            r.output.lines().filter(|l| l.ends_with(".txt")).count(),
            100
        );
    }

    #[test]
    fn hidden_included_git_excluded() {
        let (_d, ctx) = setup(&[".hidden/x.ts", ".git/y.ts", "sub/.git/z.ts"]);
        let r = glob(&ctx, "**/*.ts", None);
        assert!(r.output.contains(".hidden/x.ts"));
        assert!(!r.output.contains("y.ts"));
        assert!(!r.output.contains("z.ts"));
    }

    #[test]
    fn gitignore_honoured_for_broad_patterns() {
        let (d, ctx) = setup(&["ignored/a.ts", "src/b.ts", "debug.log"]);
        git_init(d.path());
        fs::write(d.path().join(".gitignore"), "ignored/\n*.log\n").unwrap();
        let r = glob(&ctx, "**/*.ts", None);
        assert!(r.output.contains("src/b.ts"));
        assert!(!r.output.contains("ignored/a.ts"));
        assert!(!glob(&ctx, "*", None).output.contains("debug.log"));
    }

    #[test]
    fn gitignore_needs_a_git_repository() {
        let (d, ctx) = setup(&["ignored/a.ts"]);
        fs::write(d.path().join(".gitignore"), "ignored/\n").unwrap();
        assert!(glob(&ctx, "**/*.ts", None).output.contains("ignored/a.ts"));
    }

    #[test]
    fn explicit_paths_are_never_hidden_by_ignore_files() {
        let (d, ctx) = setup(&["ignored/a.ts", "ignored/deep/b.ts", "src/c.ts", "debug.log"]);
        git_init(d.path());
        fs::write(d.path().join(".gitignore"), "ignored/\n*.log\n").unwrap();
        // The search folder itself is ignored.
        let r = glob(&ctx, "**/*.ts", Some("ignored"));
        assert!(r.output.contains("ignored/a.ts") && r.output.contains("ignored/deep/b.ts"));
        // The pattern's literal folder is ignored.
        let r = glob(&ctx, "ignored/**/*.ts", None);
        assert_eq!(r.metadata["count"], 2, "{}", r.output);
        let r = glob(&ctx, "ignored/*.ts", None);
        assert_eq!(r.metadata["count"], 1, "{}", r.output);
        // An ignored file named exactly.
        let r = glob(&ctx, "debug.log", None);
        assert!(r.output.ends_with("debug.log"), "{}", r.output);
        assert_eq!(r.metadata["count"], 1);
    }

    #[test]
    fn literal_folder_patterns_are_anchored() {
        let (_d, ctx) = setup(&["src/a.ts", "src/deep/b.ts", "other/src/c.ts"]);
        let r = glob(&ctx, "src/*.ts", None);
        assert_eq!(r.metadata["count"], 1, "{}", r.output);
        let r = glob(&ctx, "src/**/*.ts", None);
        assert_eq!(r.metadata["count"], 2, "{}", r.output);
        let r = glob(&ctx, "*.ts", Some("src"));
        assert_eq!(r.metadata["count"], 2, "{}", r.output);
        let r = glob(&ctx, "src", None);
        assert_eq!(
            r.metadata["count"], 2,
            "a folder lists its files: {}",
            r.output
        );
    }

    #[test]
    fn symlinks_inside_followed_outside_and_loops_not() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.ts"), "x").unwrap();
        let (d, ctx) = setup(&["real/a.ts"]);
        symlink(outside.path(), d.path().join("escape")).unwrap();
        symlink(
            outside.path().join("secret.ts"),
            d.path().join("file-escape.ts"),
        )
        .unwrap();
        symlink(d.path().join("real"), d.path().join("alias")).unwrap();
        symlink("..", d.path().join("real/loop")).unwrap();
        let r = glob(&ctx, "**/*.ts", None);
        assert!(!r.output.contains("secret.ts"), "{}", r.output);
        assert!(!r.output.contains("file-escape.ts"), "{}", r.output);
        assert!(r.output.contains("real/a.ts"));
        assert!(r.output.contains("alias/a.ts"));
        let r = glob(&ctx, "*.ts", Some("escape"));
        assert!(r.error.unwrap().message.contains("outside the workspace"));
        let r = glob(&ctx, "../*", None);
        assert!(r.error.unwrap().message.contains("outside the workspace"));
    }

    #[test]
    fn bad_inputs() {
        let (_d, ctx) = setup(&["a.txt"]);
        let r = glob(&ctx, "*.txt", Some("nope"));
        assert!(
            r.error
                .unwrap()
                .message
                .starts_with("Search path not found: ")
        );
        let r = glob(&ctx, "a[", None);
        assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments);
        let r = glob(&ctx, "  ", None);
        assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments);
    }

    /// Patterns that crashed or stalled the process before the limits: each
    /// comes back as `invalid_arguments` naming the limit.
    #[test]
    fn hostile_patterns_are_refused_with_the_limit_named() {
        let (_d, ctx) = setup(&["a.rs"]);
        let nested = |n: usize| format!("{}a{}", "{".repeat(n), "}".repeat(n));
        let cases = [
            (nested(15_000), "bytes"),
            (nested(500), "levels deep"),
            (nested(9), "levels deep"),
            ("*".repeat(100_000), "bytes"),
            ("*".repeat(257), "wildcards"),
            ("{a}".repeat(10_000), "bytes"),
            (format!("src/{}", nested(20)), "levels deep"),
            ("?*".repeat(200), "wildcards"),
        ];
        for (pattern, limit) in cases {
            let r = glob(&ctx, &pattern, None);
            let e = r.error.expect("refused");
            assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
            assert!(e.message.contains(limit), "{limit}: {}", e.message);
            assert!(e.message.len() < 600, "the pattern is not echoed whole");
        }
        // At the limits, patterns still work.
        assert!(
            glob(
                &ctx,
                &format!("{}*.rs{}", "{".repeat(8), "}".repeat(8)),
                None
            )
            .is_ok()
        );
        assert!(glob(&ctx, &format!("**/{}a.rs", "*".repeat(200)), None).is_ok());
    }
}

#[cfg(test)]
mod registry_tests {
    use serde_json::json;
    use tool_core::{ToolKind, ToolRegistry};

    use super::*;

    #[tokio::test]
    async fn search_tools_are_registered_read_only() {
        let registry = ToolRegistry::global();
        for (name, params) in [
            ("glob_files", vec!["path", "pattern"]),
            ("grep_content", vec!["include", "path", "pattern"]),
            ("list_dir", vec!["ignore", "path"]),
        ] {
            let spec = registry.get(name).unwrap().spec();
            assert_eq!(spec.kind, ToolKind::Read, "{name}");
            assert!(
                spec.flags.read_only && spec.flags.concurrency_safe,
                "{name}"
            );
            let props = spec.parameters["properties"].as_object().unwrap();
            let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
            names.sort_unstable();
            assert_eq!(names, params, "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
        let ctx = ToolContext::new().with_state(Workspace::new(dir.path()).unwrap());
        let r = registry
            .execute("glob_files", json!({"pattern": "*.rs"}), &ctx)
            .await;
        assert!(r.output.ends_with("a.rs"), "{r:?}");
        let r = registry
            .execute("grep_content", json!({"pattern": "fn main"}), &ctx)
            .await;
        assert!(r.output.starts_with("Found 1 matches"), "{r:?}");
        let r = registry.execute("list_dir", json!({}), &ctx).await;
        assert!(r.output.ends_with("\n  a.rs\n"), "{r:?}");
    }
}
