//! Nested `AGENTS.md` files handed to the host by `read_file` (001
//! `OnInstructions`), once per trace; `~` as the home folder where the
//! workspace includes it (001 `expandHome`).

use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_builtins::instructions::{InstructionsHook, MAX_INSTRUCTIONS_BYTES};
use tool_builtins::{NestedInstructions, Workspace};
use tool_core::{ErrorKind, ToolContext, ToolRegistry, ToolResult};

type Found = Arc<Mutex<Vec<(Option<String>, NestedInstructions)>>>;

fn hooked(ctx: ToolContext) -> (ToolContext, Found) {
    let found: Found = Arc::default();
    let sink = found.clone();
    let hook = InstructionsHook::new(move |trace, file| {
        sink.lock()
            .unwrap()
            .push((trace.map(str::to_owned), file.clone()));
    });
    (ctx.with_state(hook), found)
}

async fn read(r: &ToolRegistry, ctx: &ToolContext, trace: &str, path: &str) -> ToolResult {
    let ctx = ctx.clone().with_trace_id(trace);
    r.execute("read_file", json!({"file_path": path}), &ctx)
        .await
}

/// The files handed over since the last call, as (trace, relative path, text).
fn take(found: &Found) -> Vec<(String, String, String)> {
    std::mem::take(&mut *found.lock().unwrap())
        .into_iter()
        .map(|(t, f)| {
            (
                t.unwrap_or_default(),
                f.relative.display().to_string(),
                f.text,
            )
        })
        .collect()
}

fn owned(rows: &[(&str, &str, &str)]) -> Vec<(String, String, String)> {
    rows.iter()
        .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
        .collect()
}

#[tokio::test]
async fn nested_files_on_the_way_down_once_per_trace() {
    let (dir, ctx) = crate::util::workspace_with(&[
        ("AGENTS.md", "root rules"),
        ("app/AGENTS.md", "app rules"),
        ("app/core/AGENTS.md", "core rules"),
        ("app/core/lib.rs", "fn main() {}\n"),
        ("app/README.md", "readme\n"),
        ("docs/guide.md", "guide\n"),
    ]);
    let (ctx, found) = hooked(ctx);
    let r = tool_builtins::registry();

    let result = read(&r, &ctx, "t1", "app/core/lib.rs").await;
    assert!(result.is_ok(), "{result:?}");
    assert!(
        result.output.contains("fn main() {}"),
        "the result is unchanged"
    );
    assert_eq!(
        take(&found),
        owned(&[
            ("t1", "app/AGENTS.md", "app rules"),
            ("t1", "app/core/AGENTS.md", "core rules")
        ])
    );
    // Same trace: nothing new. Another folder without one: nothing.
    read(&r, &ctx, "t1", "app/README.md").await;
    read(&r, &ctx, "t1", "docs/guide.md").await;
    assert!(take(&found).is_empty());
    // Another trace is told again, only what its reads meet.
    read(&r, &ctx, "t2", "app/README.md").await;
    assert_eq!(take(&found), owned(&[("t2", "app/AGENTS.md", "app rules")]));
    // A folder read counts its own AGENTS.md; a read of the file itself does not report it.
    read(&r, &ctx, "t3", "app/core/AGENTS.md").await;
    assert_eq!(take(&found), owned(&[("t3", "app/AGENTS.md", "app rules")]));
    read(&r, &ctx, "t4", "app/core").await;
    assert_eq!(
        take(&found),
        owned(&[
            ("t4", "app/AGENTS.md", "app rules"),
            ("t4", "app/core/AGENTS.md", "core rules")
        ])
    );
    // An absolute path inside the workspace is the same file; a failed read reports nothing.
    let abs = dir.path().join("app/README.md");
    read(&r, &ctx, "t5", abs.to_str().unwrap()).await;
    assert_eq!(take(&found).len(), 1);
    let missing = read(&r, &ctx, "t6", "app/core/nope.rs").await;
    assert!(missing.is_error());
    assert!(take(&found).is_empty());
    // The physical path is given too.
    read(&r, &ctx, "t7", "app/README.md").await;
    let (_, file) = found.lock().unwrap().pop().unwrap();
    assert_eq!(
        file.path,
        dir.path().canonicalize().unwrap().join("app/AGENTS.md")
    );
    assert!(!file.truncated);
}

#[tokio::test]
async fn large_links_outside_and_folders_named_agents() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("AGENTS.md"), "secret rules").unwrap();
    let big = "x".repeat(MAX_INSTRUCTIONS_BYTES + 10);
    let (dir, ctx) = crate::util::workspace_with(&[
        ("big/AGENTS.md", big.as_str()),
        ("big/a.txt", "a\n"),
        ("linked/a.txt", "a\n"),
        ("odd/AGENTS.md/inner.txt", "folder named AGENTS.md\n"),
        ("odd/b.txt", "b\n"),
    ]);
    std::os::unix::fs::symlink(
        outside.path().join("AGENTS.md"),
        dir.path().join("linked/AGENTS.md"),
    )
    .unwrap();
    let (ctx, found) = hooked(ctx);
    let r = tool_builtins::registry();
    read(&r, &ctx, "t", "big/a.txt").await;
    let (_, file) = found.lock().unwrap().pop().unwrap();
    assert!(file.truncated);
    assert_eq!(file.text.len(), MAX_INSTRUCTIONS_BYTES);
    // A link leading outside the workspace is not followed; a folder is not a file.
    read(&r, &ctx, "t", "linked/a.txt").await;
    read(&r, &ctx, "t", "odd/b.txt").await;
    assert!(take(&found).is_empty());
}

#[tokio::test]
async fn no_hook_no_report() {
    let (_dir, ctx) = crate::util::workspace_with(&[("a/AGENTS.md", "r"), ("a/b.txt", "b\n")]);
    let r = tool_builtins::registry();
    let result = read(&r, &ctx, "t", "a/b.txt").await;
    assert!(result.is_ok(), "{result:?}");
}

#[tokio::test]
async fn home_inside_the_workspace_is_reachable_as_tilde() {
    let (dir, ctx) = crate::util::workspace_with(&[("home/me/notes.txt", "my notes\n")]);
    let home = dir.path().join("home/me");
    let ctx = ctx.with_state(
        Workspace::new(dir.path())
            .unwrap()
            .with_home(Some(home.clone())),
    );
    let r = tool_builtins::registry();
    for path in ["~/notes.txt", "~/./notes.txt"] {
        let result = read(&r, &ctx, "t", path).await;
        assert!(result.is_ok(), "{path}: {result:?}");
        assert!(result.output.contains("1: my notes"), "{}", result.output);
    }
    let listing = read(&r, &ctx, "t", "~").await;
    assert!(listing.output.contains("notes.txt"), "{}", listing.output);
    // `~user` and a `~` inside a name are plain names.
    let plain = read(&r, &ctx, "t", "~me/notes.txt").await;
    let e = plain.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Failed, "{}", e.message);
    // Writes go through the same resolution.
    let w = r
        .execute(
            "write_file",
            json!({"file_path": "~/new.txt", "content": "new\n"}),
            &ctx,
        )
        .await;
    assert!(w.is_ok(), "{w:?}");
    assert_eq!(
        std::fs::read_to_string(home.join("new.txt")).unwrap(),
        "new\n"
    );
}

#[tokio::test]
async fn home_outside_the_workspace_is_refused_clearly() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("notes.txt"), "private\n").unwrap();
    let (dir, ctx) = crate::util::workspace_with(&[("a.txt", "a\n")]);
    let ctx = ctx.with_state(
        Workspace::new(dir.path())
            .unwrap()
            .with_home(Some(home.path().to_path_buf())),
    );
    let r = tool_builtins::registry();
    let e = read(&r, &ctx, "t", "~/notes.txt").await.error.unwrap();
    assert_eq!(e.kind, ErrorKind::Denied);
    assert_eq!(
        e.message,
        format!(
            "Access denied: ~/notes.txt resolves to {} which is outside the workspace ({}). Only files inside the workspace can be used.",
            home.path().join("notes.txt").display(),
            dir.path().canonicalize().unwrap().display()
        )
    );
    // No home folder known: said so, not read as a folder named `~`.
    let ctx = ctx.with_state(Workspace::new(dir.path()).unwrap().with_home(None));
    let e = read(&r, &ctx, "t", "~/notes.txt").await.error.unwrap();
    assert_eq!(e.kind, ErrorKind::InvalidArguments);
    assert_eq!(
        e.message,
        "The path ~/notes.txt starts with `~`, the home folder, which is not known here. Give the path inside the workspace, relative to its root or absolute."
    );
}
