//! Black-box tests of `list` (moved from `search/list.rs`).

use crate::util::*;
use std::fs;
use std::os::unix::fs::symlink;
use tool_builtins::search::list::*;
use tool_builtins::*;

fn setup(files: &[&str]) -> (tempfile::TempDir, ToolContext) {
    let files: Vec<(&str, &str)> = files.iter().map(|f| (*f, "x")).collect();
    workspace_with(&files)
}

fn root(ctx: &ToolContext) -> PathBuf {
    ctx.state::<Workspace>().unwrap().root().to_path_buf()
}

#[test]
fn tree_folders_first_sorted_two_spaces_per_level() {
    let (_d, ctx) = setup(&["b.txt", "a.txt", "src/main.rs", "src/util/x.rs", ".env"]);
    let r = list_dir(None, None, &ctx).into_tool_result();
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
    let r = list_dir(None, Some(vec!["*.lock".into(), "docs/".into()]), &ctx).into_tool_result();
    let expected = format!("{}/\n  src/\n    lib.rs\n", root(&ctx).display());
    assert_eq!(r.output, expected);
}

#[test]
fn explicit_path_into_an_ignored_folder_lists_it() {
    let (_d, ctx) = setup(&["node_modules/p/index.js"]);
    let r = list_dir(Some("node_modules".into()), None, &ctx).into_tool_result();
    assert!(r.output.contains("  p/\n    index.js\n"), "{}", r.output);
}

#[test]
fn limit_keeps_the_shallowest_files() {
    let mut files: Vec<String> = (0..120).map(|i| format!("deep/f{i:03}.txt")).collect();
    files.push("top.txt".into());
    let refs: Vec<&str> = files.iter().map(String::as_str).collect();
    let (_d, ctx) = setup(&refs);
    let r = list_dir(None, None, &ctx).into_tool_result();
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
    let r = list_dir(None, None, &ctx).into_tool_result();
    assert!(!r.output.contains("secret"), "{}", r.output);
    assert_eq!(r.metadata["count"], 1, "{}", r.output);
    let r = list_dir(Some("out".into()), None, &ctx).into_tool_result();
    assert!(r.error.unwrap().message.contains("outside the workspace"));
}

#[test]
fn missing_folder() {
    let (_d, ctx) = setup(&["a.txt"]);
    let r = list_dir(Some("nope".into()), None, &ctx).into_tool_result();
    assert!(
        r.error
            .unwrap()
            .message
            .starts_with("Search path not found: ")
    );
}

#[tokio::test]
async fn hostile_ignore_patterns_are_refused() {
    let (_d, ctx) = workspace_with(&[("a.txt", "x")]);
    let nested = format!("{}a{}", "{".repeat(15_000), "}".repeat(15_000));
    for ignore in [
        vec![nested],
        vec!["x".to_owned(); 300],
        vec!["*".repeat(5_000)],
    ] {
        let e = list_dir(None, Some(ignore), &ctx)
            .into_tool_result()
            .error
            .expect("refused");
        assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
    }
}
