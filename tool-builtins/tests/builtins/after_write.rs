//! The write hook (`fs::after_write`): called by the write orchestrator
//! after every successful write of every writer, with exactly the paths
//! changed; never after a refused or failed write; its text in the result.

use std::fs;
use std::sync::{Arc, Mutex};

use crate::util::*;
use tool_builtins::fs::after_write::{AfterWriteHooks, ChangedPath, HOOK_TEXT_CHARS};

/// Every call of the hook: the paths it was given.
type Calls = Arc<Mutex<Vec<Vec<ChangedPath>>>>;

/// A workspace holding `files` (all read in the context), with a hook that
/// records its calls and answers "hook saw N path(s)".
fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext, Calls, PathBuf) {
    let (d, ctx) = workspace_with(files);
    let root = fs::canonicalize(d.path()).unwrap();
    let read: Vec<PathBuf> = files.iter().map(|(p, _)| root.join(p)).collect();
    prime(&ctx, &read);
    let calls: Calls = Arc::default();
    let seen = calls.clone();
    let ctx = AfterWriteHooks::add(ctx, move |_: &ToolContext, paths: &[ChangedPath]| {
        seen.lock().unwrap().push(paths.to_vec());
        Some(format!("hook saw {} path(s)", paths.len()))
    });
    (d, ctx, calls, root)
}

fn calls(c: &Calls) -> Vec<Vec<ChangedPath>> {
    c.lock().unwrap().clone()
}

#[tokio::test]
async fn write_file_reports_a_created_then_a_modified_file() {
    let (_d, ctx, seen, root) = setup(&[]);
    let r = tool_builtins::write_file(&ctx, "new/a.txt".into(), "one\n".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "Wrote file successfully.\n\nhook saw 1 path(s)");
    let r = tool_builtins::write_file(&ctx, "new/a.txt".into(), "two\n".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    let a = root.join("new/a.txt");
    assert_eq!(
        calls(&seen),
        vec![
            vec![ChangedPath::Created(a.clone())],
            vec![ChangedPath::Modified(a)]
        ]
    );
}

#[tokio::test]
async fn edit_file_and_multi_edit_report_the_file_they_changed() {
    let (_d, ctx, seen, root) = setup(&[("a.txt", "alpha beta\n")]);
    let r = tool_builtins::edit_file(&ctx, "a.txt".into(), "alpha".into(), "gamma".into(), false)
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert!(r.output.ends_with("\n\nhook saw 1 path(s)"), "{}", r.output);
    let edits = vec![
        tool_builtins::multi_edit::Edit {
            old_string: "gamma".into(),
            new_string: "delta".into(),
            replace_all: false,
        },
        tool_builtins::multi_edit::Edit {
            old_string: "beta".into(),
            new_string: "epsilon".into(),
            replace_all: false,
        },
    ];
    let r = tool_builtins::multi_edit(&ctx, "a.txt".into(), edits)
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    let created =
        tool_builtins::edit_file(&ctx, "b.txt".into(), String::new(), "x\n".into(), false)
            .await
            .into_tool_result();
    assert!(created.is_ok(), "{created:?}");
    let a = root.join("a.txt");
    assert_eq!(
        calls(&seen),
        vec![
            vec![ChangedPath::Modified(a.clone())],
            vec![ChangedPath::Modified(a)],
            vec![ChangedPath::Created(root.join("b.txt"))],
        ]
    );
}

#[tokio::test]
async fn apply_patch_reports_added_updated_deleted_and_moved_files() {
    let (_d, ctx, seen, root) = setup(&[
        ("up.txt", "one\ntwo\n"),
        ("gone.txt", "bye\n"),
        ("old/name.txt", "keep\n"),
    ]);
    let patch = [
        "*** Begin Patch",
        "*** Add File: added.txt",
        "+hello",
        "*** Update File: up.txt",
        "@@",
        " one",
        "-two",
        "+2",
        "*** Delete File: gone.txt",
        "*** Update File: old/name.txt",
        "*** Move to: new/name.txt",
        "@@",
        "-keep",
        "+kept",
        "*** End Patch",
    ]
    .join("\n");
    let r = tool_builtins::patch::apply_patch(&ctx, patch)
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert!(r.output.ends_with("\n\nhook saw 4 path(s)"), "{}", r.output);
    assert_eq!(
        calls(&seen),
        vec![vec![
            ChangedPath::Created(root.join("added.txt")),
            ChangedPath::Modified(root.join("up.txt")),
            ChangedPath::Deleted(root.join("gone.txt")),
            ChangedPath::Renamed {
                from: root.join("old/name.txt"),
                to: root.join("new/name.txt"),
            },
        ]]
    );
    assert_eq!(
        fs::read_to_string(root.join("new/name.txt")).unwrap(),
        "kept\n"
    );
}

#[tokio::test]
async fn refused_and_failed_writes_call_no_hook() {
    let (d, ctx, seen, _root) = setup(&[("read.txt", "same\n")]);
    fs::write(d.path().join("unread.txt"), "x\n").unwrap();
    // Not read first.
    let r = tool_builtins::write_file(&ctx, "unread.txt".into(), "y".into())
        .await
        .into_tool_result();
    assert!(!r.is_ok());
    // No match.
    let r = tool_builtins::edit_file(&ctx, "read.txt".into(), "absent".into(), "z".into(), false)
        .await
        .into_tool_result();
    assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::Failed);
    // Outside the workspace.
    let r = tool_builtins::write_file(&ctx, "../escape.txt".into(), "y".into())
        .await
        .into_tool_result();
    assert_eq!(r.error.as_ref().unwrap().kind, ErrorKind::Denied);
    // `..` out of a missing folder: refused before any folder is created.
    let r = tool_builtins::write_file(&ctx, "made/../../x.txt".into(), "y".into())
        .await
        .into_tool_result();
    assert!(!r.is_ok(), "{r:?}");
    assert!(!d.path().join("made").exists());
    // A patch whose second file does not apply writes nothing.
    let patch = "*** Begin Patch\n*** Add File: new.txt\n+n\n*** Update File: read.txt\n@@\n-nope\n+x\n*** End Patch";
    let r = tool_builtins::patch::apply_patch(&ctx, patch.into())
        .await
        .into_tool_result();
    assert!(!r.is_ok());
    assert!(!d.path().join("new.txt").exists());
    // A read-only file.
    let ro = d.path().join("read.txt");
    fs::set_permissions(&ro, std::os::unix::fs::PermissionsExt::from_mode(0o444)).unwrap();
    let r = tool_builtins::write_file(&ctx, "read.txt".into(), "w".into())
        .await
        .into_tool_result();
    assert!(!r.is_ok(), "{r:?}");
    assert_eq!(calls(&seen), Vec::<Vec<ChangedPath>>::new());
}

#[tokio::test]
async fn hooks_run_in_order_and_a_failing_hook_leaves_the_write_standing() {
    let (d, ctx) = workspace_with::<&str>(&[]);
    let ctx = AfterWriteHooks::add(ctx, |_: &ToolContext, _: &[ChangedPath]| {
        Some("first".to_owned())
    });
    let ctx = AfterWriteHooks::add(ctx, |_: &ToolContext, _: &[ChangedPath]| None);
    let ctx = AfterWriteHooks::add(
        ctx,
        |_: &ToolContext, _: &[ChangedPath]| -> Option<String> { panic!("hook bug") },
    );
    let ctx = AfterWriteHooks::add(ctx, |_: &ToolContext, _: &[ChangedPath]| {
        Some("x".repeat(HOOK_TEXT_CHARS + 10))
    });
    assert_eq!(AfterWriteHooks::of(&ctx).len(), 4);
    let r = tool_builtins::write_file(&ctx, "a.txt".into(), "a".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(fs::read_to_string(d.path().join("a.txt")).unwrap(), "a");
    let expected = format!(
        "Wrote file successfully.\n\nfirst\n\n{}… (10 more bytes)",
        "x".repeat(HOOK_TEXT_CHARS)
    );
    assert_eq!(r.output, expected);
    assert_eq!(
        r.notes,
        vec!["a write hook of the host failed; the write itself succeeded".to_owned()]
    );
}

#[tokio::test]
async fn the_hook_text_reaches_the_model_through_the_registry() {
    let (_d, ctx) = workspace_with::<&str>(&[]);
    let ctx = AfterWriteHooks::add(ctx, |_: &ToolContext, paths: &[ChangedPath]| {
        Some(format!(
            "diagnostics: none in {}",
            paths[0].path().display()
        ))
    });
    let r = tool_builtins::registry()
        .execute(
            "write_file",
            serde_json::json!({"file_path": "b.txt", "content": "b"}),
            &ctx,
        )
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.model_text().contains("diagnostics: none in /"),
        "{}",
        r.model_text()
    );
    assert!(r.model_text().contains("b.txt"));
}

/// A hook that reports metadata and a note besides its text.
struct Reporting;

impl tool_builtins::AfterWrite for Reporting {
    fn changed(&self, _: &ToolContext, _: &[ChangedPath]) -> Option<String> {
        Some("only when report is not overridden".to_owned())
    }

    fn report(&self, _: &ToolContext, paths: &[ChangedPath]) -> tool_builtins::HookReport {
        tool_builtins::HookReport::text(format!("checked {} file(s)", paths.len()))
            .with_metadata(
                tool_core::meta::MetaKey::custom("checks"),
                serde_json::json!({"files": paths.len()}),
            )
            .with_note("the checker is slow today")
    }
}

#[tokio::test]
async fn a_hook_report_adds_text_metadata_and_notes() {
    let (_d, ctx) = workspace_with::<&str>(&[]);
    let ctx = AfterWriteHooks::add(ctx, Reporting);
    let r = tool_builtins::write_file(&ctx, "c.txt".into(), "c".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "Wrote file successfully.\n\nchecked 1 file(s)");
    assert_eq!(r.metadata["checks"], serde_json::json!({"files": 1}));
    assert_eq!(r.notes, vec!["the checker is slow today".to_owned()]);
    // The diff and the writer's own keys are still there, before the hook's.
    assert!(r.metadata.contains_key("diff"), "{r:?}");
}
