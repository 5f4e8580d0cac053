//! Black-box tests of `glob` (moved from `search/glob.rs`).

use crate::util::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::time::{Duration, SystemTime};
use tool_builtins::search::glob::*;
use tool_builtins::*;

fn setup(files: &[&str]) -> (tempfile::TempDir, ToolContext) {
    let files: Vec<(&str, &str)> = files.iter().map(|f| (*f, "x\n")).collect();
    workspace_with(&files)
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
    glob_files(pattern.to_owned(), path.map(str::to_owned), None, ctx).into_tool_result()
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
        "\n\n(Results are truncated. Consider using a more specific path or pattern.)\n\
         (Showing files 1-100 of 105. Use offset=100 to see the next page.)"
    ));
    assert_eq!(r.metadata["next_offset"], 100);
    assert_eq!(
        r.output.lines().filter(|l| l.ends_with(".txt")).count(),
        100
    );
}

/// The next page starts where the first ended, in the same order, and the
/// last page has no `next_offset`; together they list every file once.
#[test]
fn pages_follow_on_until_the_last() {
    let names: Vec<String> = (0..105).map(|i| format!("f{i}.txt")).collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (d, ctx) = setup(&refs);
    for (i, name) in names.iter().enumerate() {
        set_mtime(&d.path().join(name), 1_600_000_000 + i as u64);
    }
    let first = glob(&ctx, "*.txt", None);
    let second = glob_files("*.txt".to_owned(), None, Some(100), &ctx).into_tool_result();
    assert!(second.is_ok(), "{}", second.output);
    assert_eq!(second.metadata["count"], 5);
    assert_eq!(second.metadata["truncated"], false);
    assert!(second.metadata.get("next_offset").is_none());
    // Newest first: f104 … f5 on the first page, f4 … f0 on the second.
    let files: Vec<String> = second.output.lines().map(str::to_owned).collect();
    let want: Vec<String> = (0..5)
        .rev()
        .map(|i| root(&ctx).join(format!("f{i}.txt")).display().to_string())
        .collect();
    assert_eq!(files, want);
    let mut all: Vec<&str> = first
        .output
        .lines()
        .filter(|l| l.ends_with(".txt"))
        .chain(second.output.lines())
        .collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 105);
    // Past the end: says so; a negative or huge offset is refused.
    let past = glob_files("*.txt".to_owned(), None, Some(500), &ctx).into_tool_result();
    assert_eq!(
        past.output,
        "(No files past offset 500: 105 matched. Use a smaller offset.)"
    );
    let bad = glob_files("*.txt".to_owned(), None, Some(-1), &ctx).into_tool_result();
    assert!(bad.is_error());
    assert!(
        bad.model_text().contains("from 0 to 10000; got -1"),
        "{}",
        bad.model_text()
    );
    let huge = glob_files("*.txt".to_owned(), None, Some(10_001), &ctx).into_tool_result();
    assert!(huge.is_error());
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

/// Outside a repository a `.gitignore` hides nothing. The premise needs a
/// folder with no `.git` above it: the search reads the folders above the
/// workspace as ripgrep and git do, and `/tmp` is shared by the whole
/// machine (this test failed once when something made a `.git` there), so
/// the workspace goes where none is, and a failure names what appeared.
#[test]
fn gitignore_needs_a_git_repository() {
    let (d, ctx) = clean_workspace_with(&[("ignored/a.ts", "x\n")]);
    fs::write(d.path().join(".gitignore"), "ignored/\n").unwrap();
    let r = glob(&ctx, "**/*.ts", None);
    assert!(
        r.output.contains("ignored/a.ts"),
        "{}; found above the workspace: {:?}",
        r.output,
        markers_above(d.path())
    );
}

/// The other side of the rule: a `.git` in a folder above the workspace
/// makes the workspace part of that repository, and its `.gitignore`
/// applies (a workspace in a subfolder of a repository gets its rules).
#[test]
fn a_repository_above_the_workspace_counts() {
    let outer = tempfile::tempdir().unwrap();
    git_init(outer.path());
    fs::write(outer.path().join(".gitignore"), "*.log\n").unwrap();
    let ws = outer.path().join("sub");
    for f in ["ignored/a.ts", "src/b.ts", "debug.log"] {
        fs::create_dir_all(ws.join(f).parent().unwrap()).unwrap();
        fs::write(ws.join(f), "x\n").unwrap();
    }
    fs::write(ws.join(".gitignore"), "ignored/\n").unwrap();
    let ctx = tool_builtins::context(&ws).unwrap();
    let r = glob(&ctx, "**/*", None);
    assert!(r.output.contains("src/b.ts"), "{}", r.output);
    assert!(!r.output.contains("ignored/a.ts"), "{}", r.output);
    assert!(!r.output.contains("debug.log"), "{}", r.output);
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
