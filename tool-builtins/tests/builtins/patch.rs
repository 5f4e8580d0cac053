//! Black-box tests of `patch` (moved from `patch/mod.rs`).

use crate::util::*;
use std::fs;
use std::os::unix::fs::FileTypeExt;
use tool_builtins::patch::*;

/// A workspace holding `files`, each read in the context (as a model
/// reads before it patches).
fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
    let (d, ctx) = workspace_with(files);
    let paths: Vec<_> = files
        .iter()
        .map(|(p, _)| fs::canonicalize(d.path().join(p)).unwrap())
        .collect();
    prime(&ctx, &paths);
    (d, ctx)
}

/// A workspace holding `files`, none of them read.
fn unread(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
    workspace_with(files)
}

async fn run(ctx: &ToolContext, patch: &str) -> ToolResult {
    apply_patch(ctx, patch.to_owned()).await.into_tool_result()
}

fn read(d: &tempfile::TempDir, p: &str) -> String {
    fs::read_to_string(d.path().join(p)).unwrap()
}

fn err(r: &ToolResult) -> String {
    r.error
        .as_ref()
        .map(|e| e.message.clone())
        .unwrap_or_default()
}

#[tokio::test]
async fn add_update_delete_summary() {
    let (d, ctx) = setup(&[
        ("multi.txt", "line1\nline2\nline3\nline4\n"),
        ("gone.txt", "bye\n"),
    ]);
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Add File: bar.md\n+This is a new file\n*** Update File: multi.txt\n@@\n-line2\n+changed2\n@@\n-line4\n+changed4\n*** Delete File: gone.txt\n*** End Patch\n",
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.output,
        "Success. Updated the following files:\nA bar.md\nM multi.txt\nD gone.txt\n"
    );
    assert_eq!(read(&d, "bar.md"), "This is a new file\n");
    assert_eq!(read(&d, "multi.txt"), "line1\nchanged2\nline3\nchanged4\n");
    assert!(!d.path().join("gone.txt").exists());
}

#[tokio::test]
async fn move_creates_folders_and_removes_the_source() {
    let (d, ctx) = setup(&[("old/name.txt", "old content\n")]);
    let r = run(&ctx, "*** Begin Patch\n*** Update File: old/name.txt\n*** Move to: renamed/dir/name.txt\n@@\n-old content\n+new content\n*** End Patch").await;
    assert!(r.is_ok(), "{r:?}");
    assert!(r.output.contains("M renamed/dir/name.txt"));
    assert_eq!(read(&d, "renamed/dir/name.txt"), "new content\n");
    assert!(!d.path().join("old/name.txt").exists());
}

#[tokio::test]
async fn nothing_is_written_when_one_hunk_fails() {
    let (d, ctx) = setup(&[("a.txt", "a\n")]);
    let r = run(&ctx, "*** Begin Patch\n*** Add File: created.txt\n+hello\n*** Update File: a.txt\n@@\n-a\n+b\n*** Update File: missing.txt\n@@\n-a\n+b\n*** End Patch").await;
    assert!(
        err(&r).starts_with("Failed to read file to update missing.txt"),
        "{r:?}"
    );
    assert!(!d.path().join("created.txt").exists());
    assert_eq!(read(&d, "a.txt"), "a\n");
}

#[tokio::test]
async fn grammar_errors() {
    let (_d, ctx) = setup(&[("foo.txt", "stays\n")]);
    let cases = [
        (
            "bad",
            "The first line of the patch must be '*** Begin Patch'",
        ),
        (
            "*** Begin Patch\n*** Add File: x\n+y",
            "The last line of the patch must be '*** End Patch'",
        ),
        ("*** Begin Patch\n*** End Patch\n", "No files were modified"),
        (
            "*** Begin Patch\n*** Update File: foo.txt\n*** End Patch\n",
            "invalid hunk at line 2, Update file hunk for path 'foo.txt' is empty",
        ),
        (
            "*** Begin Patch\n*** Frobnicate File: foo.txt\n*** End Patch\n",
            "invalid hunk at line 2, '*** Frobnicate File: foo.txt' is not a valid hunk header",
        ),
        (
            "*** Begin Patch\n*** Update File: foo.txt\n@@\nxstays\n*** End Patch\n",
            "Unexpected line found in update hunk: 'xstays'",
        ),
        (
            "*** Begin Patch\n*** Delete File: missing.txt\n*** End Patch\n",
            "Failed to delete file missing.txt",
        ),
        (
            "*** Begin Patch\n*** Update File: foo.txt\n@@ def missing():\n-stays\n+x\n*** End Patch\n",
            "Failed to find context 'def missing():' in foo.txt",
        ),
        (
            "*** Begin Patch\n*** Update File: foo.txt\n@@\n-nothere\n+x\n*** End Patch\n",
            "Failed to find expected lines in foo.txt:\nnothere",
        ),
        (
            "*** Begin Patch\n*** Add File: ../escape.txt\n+x\n*** End Patch\n",
            "outside the workspace",
        ),
    ];
    for (patch, want) in cases {
        let r = run(&ctx, patch).await;
        assert!(err(&r).contains(want), "{patch:?}: {r:?}");
    }
}

#[tokio::test]
async fn lenient_matching_passes() {
    let (d, ctx) = setup(&[
        ("t.txt", "foo   \nbar\n"),
        ("i.txt", "    indented\nend\n"),
        ("q.py", "print(\u{201C}hi\u{201D})\nx = 1 \u{2013} 2\n"),
    ]);
    let r = run(&ctx, "*** Begin Patch\n*** Update File: t.txt\n@@\n-foo\n+FOO\n bar\n*** Update File: i.txt\n@@\n-indented\n+flat\n end\n*** Update File: q.py\n@@\n-print(\"hi\")\n-x = 1 - 2\n+print(\"bye\")\n+x = 3\n*** End Patch").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "t.txt"), "FOO\nbar\n");
    assert_eq!(read(&d, "i.txt"), "flat\nend\n");
    assert_eq!(read(&d, "q.py"), "print(\"bye\")\nx = 3\n");
}

#[tokio::test]
async fn additions_go_after_their_anchor_or_at_the_end() {
    let (d, ctx) = setup(&[
        (
            "a.py",
            "class A:\n    def f(self):\n        pass\n\nclass B:\n    pass\n",
        ),
        ("input.txt", "line1\nline2\n"),
        ("f.txt", "import foo\n"),
    ]);
    let r = run(&ctx, "*** Begin Patch\n*** Update File: a.py\n@@ class A:\n+    def g(self):\n+        return 1\n*** Update File: input.txt\n@@\n+added line 1\n+added line 2\n*** Update File: f.txt\n import foo\n+bar\n*** End Patch\n").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        read(&d, "a.py"),
        "class A:\n    def g(self):\n        return 1\n    def f(self):\n        pass\n\nclass B:\n    pass\n"
    );
    assert_eq!(
        read(&d, "input.txt"),
        "line1\nline2\nadded line 1\nadded line 2\n"
    );
    assert_eq!(read(&d, "f.txt"), "import foo\nbar\n");
}

#[tokio::test]
async fn heredoc_wrapper_and_indented_headers() {
    let (d, ctx) = setup(&[("foo.txt", "old\n")]);
    let r = run(&ctx, "<<'EOF'\n*** Begin Patch\n*** Add File: h.txt\n+hi\n  *** Update File: foo.txt  \n@@\n-old\n+new\n*** End Patch\nEOF\n").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "h.txt"), "hi\n");
    assert_eq!(read(&d, "foo.txt"), "new\n");
}

#[tokio::test]
async fn crlf_and_bom_are_kept() {
    let (d, ctx) = setup(&[("w.txt", "\u{feff}one\r\ntwo\r\n")]);
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Update File: w.txt\n@@\n one\n-two\n+TWO\n+three\n*** End Patch",
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "w.txt"), "\u{feff}one\r\nTWO\r\nthree\r\n");
}

#[tokio::test]
async fn directories_are_never_deleted_and_add_never_overwrites() {
    let (d, ctx) = setup(&[("dir/foo.txt", "keep\n"), ("dup.txt", "old\n")]);
    let r = run(&ctx, "*** Begin Patch\n*** Delete File: dir\n*** End Patch").await;
    assert!(err(&r).contains("Failed to delete file dir"));
    assert_eq!(read(&d, "dir/foo.txt"), "keep\n");
    // Add File on an existing file is an error even after a read (Codex's semantics).
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Add File: dup.txt\n+new content\n*** End Patch",
    )
    .await;
    assert!(
        err(&r).contains("Failed to add file dup.txt: it already exists"),
        "{r:?}"
    );
    assert_eq!(read(&d, "dup.txt"), "old\n");
}

#[tokio::test]
async fn unread_files_are_never_replaced_deleted_or_updated() {
    let files = [
        ("a.txt", "one\n"),
        ("b.txt", "two\n"),
        ("sub/c.txt", "three\n"),
    ];
    for patch in [
        "*** Begin Patch\n*** Add File: a.txt\n+owned\n*** End Patch",
        "*** Begin Patch\n*** Delete File: a.txt\n*** End Patch",
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+owned\n*** End Patch",
        "*** Begin Patch\n*** Add File: new.txt\n+x\n*** Delete File: sub/c.txt\n*** End Patch",
        "*** Begin Patch\n*** Update File: sub/../b.txt\n@@\n-two\n+owned\n*** End Patch",
        "*** Begin Patch\n*** Add File: x.txt\n+1\n*** Add File: x.txt\n+2\n*** End Patch",
        "*** Begin Patch\n*** Add File: a.txt\n+1\n*** Add File: a.txt\n+2\n*** End Patch",
    ] {
        let (d, ctx) = unread(&files);
        let r = run(&ctx, patch).await;
        let msg = err(&r);
        assert!(
            msg.contains("You must read file")
                || msg.contains("already exists")
                || msg.contains("already adds or changes it"),
            "{patch}: {msg}"
        );
        for (p, content) in files {
            assert_eq!(read(&d, p), content, "{patch}");
        }
        assert!(!d.path().join("new.txt").exists() && !d.path().join("x.txt").exists());
    }
}

#[tokio::test]
async fn a_file_changed_since_its_read_is_not_patched() {
    let (d, ctx) = setup(&[("a.txt", "one\n"), ("b.txt", "two\n")]);
    fs::write(d.path().join("a.txt"), "ONE\n").unwrap();
    fs::write(d.path().join("b.txt"), "TWO\n").unwrap();
    for patch in [
        "*** Begin Patch\n*** Update File: a.txt\n@@\n-ONE\n+x\n*** End Patch",
        "*** Begin Patch\n*** Delete File: b.txt\n*** End Patch",
    ] {
        let r = run(&ctx, patch).await;
        assert!(
            err(&r).contains("has been modified since it was last read"),
            "{r:?}"
        );
    }
    assert_eq!(read(&d, "a.txt"), "ONE\n");
    assert_eq!(read(&d, "b.txt"), "TWO\n");
    // Delete then Add of one path in one patch is a replacement the patch states itself.
    let (d, ctx) = setup(&[("c.txt", "old\n")]);
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Delete File: c.txt\n*** Add File: c.txt\n+new\n*** End Patch",
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "c.txt"), "new\n");
}

#[tokio::test]
async fn read_only_files_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (d, ctx) = setup(&[("locked.txt", "a\n"), ("free.txt", "b\n")]);
    let locked = d.path().join("locked.txt");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o444)).unwrap();
    for patch in [
        "*** Begin Patch\n*** Update File: free.txt\n@@\n-b\n+c\n*** Update File: locked.txt\n@@\n-a\n+z\n*** End Patch",
        "*** Begin Patch\n*** Delete File: locked.txt\n*** End Patch",
        "*** Begin Patch\n*** Update File: free.txt\n*** Move to: locked.txt\n@@\n-b\n+c\n*** End Patch",
        "*** Begin Patch\n*** Update File: locked.txt\n*** Move to: other.txt\n@@\n-a\n+z\n*** End Patch",
    ] {
        let r = run(&ctx, patch).await;
        assert!(
            err(&r).contains("is read-only (mode 0444)"),
            "{patch}: {r:?}"
        );
        assert_eq!(read(&d, "locked.txt"), "a\n");
        assert_eq!(read(&d, "free.txt"), "b\n");
        assert!(!d.path().join("other.txt").exists());
    }
}

#[tokio::test]
async fn pipes_are_refused_without_blocking() {
    let (d, ctx) = setup(&[("a.txt", "a\n")]);
    let fifo = d.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo on this machine
    }
    for patch in [
        "*** Begin Patch\n*** Add File: pipe\n+x\n*** End Patch",
        "*** Begin Patch\n*** Update File: pipe\n@@\n-a\n+b\n*** End Patch",
        "*** Begin Patch\n*** Delete File: pipe\n*** End Patch",
        "*** Begin Patch\n*** Update File: a.txt\n*** Move to: pipe\n@@\n-a\n+b\n*** End Patch",
    ] {
        let r = tokio::time::timeout(std::time::Duration::from_secs(10), run(&ctx, patch))
            .await
            .expect("apply_patch blocked on a pipe");
        assert!(err(&r).contains("not a regular file"), "{patch}: {r:?}");
        assert!(fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
        assert_eq!(read(&d, "a.txt"), "a\n");
    }
}

#[tokio::test]
async fn moving_onto_an_unread_file_is_refused() {
    let (d, ctx) = unread(&[("src.txt", "a\n"), ("dest.txt", "precious\n")]);
    prime(&ctx, &[fs::canonicalize(d.path().join("src.txt")).unwrap()]);
    let patch = "*** Begin Patch\n*** Update File: src.txt\n*** Move to: dest.txt\n@@\n-a\n+b\n*** End Patch";
    let r = run(&ctx, patch).await;
    let msg = err(&r);
    assert!(
        msg.starts_with("Failed to move file src.txt to dest.txt: the destination already exists. You must read file"),
        "{msg}"
    );
    assert_eq!(read(&d, "dest.txt"), "precious\n");
    assert_eq!(read(&d, "src.txt"), "a\n");
    // After a read of the destination the move goes ahead.
    prime(
        &ctx,
        &[fs::canonicalize(d.path().join("dest.txt")).unwrap()],
    );
    let r = run(&ctx, patch).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "dest.txt"), "b\n");
    assert!(!d.path().join("src.txt").exists());
    // A destination the same patch deletes first needs no second read.
    fs::write(d.path().join("x.txt"), "x\n").unwrap();
    fs::write(d.path().join("y.txt"), "y\n").unwrap();
    prime(
        &ctx,
        &[
            fs::canonicalize(d.path().join("x.txt")).unwrap(),
            fs::canonicalize(d.path().join("y.txt")).unwrap(),
        ],
    );
    let r = run(&ctx, "*** Begin Patch\n*** Delete File: y.txt\n*** Update File: x.txt\n*** Move to: y.txt\n@@\n-x\n+z\n*** End Patch").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "y.txt"), "z\n");
}

#[tokio::test]
async fn large_diffs_are_capped_in_metadata() {
    let (d, ctx) = setup(&[]);
    let body: String = (0..10_000).map(|i| format!("+line number {i}\n")).collect();
    let mut patch = String::from("*** Begin Patch\n");
    for f in ["a.txt", "b.txt"] {
        patch.push_str(&format!("*** Add File: {f}\n{body}"));
    }
    patch.push_str("*** End Patch");
    let r = run(&ctx, &patch).await;
    assert!(r.is_ok(), "{r:?}");
    let diff = r.metadata["diff"].as_str().unwrap();
    assert!(
        diff.len() <= tool_builtins::fs::diff::DIFF_LIMIT + 100,
        "{}",
        diff.len()
    );
    assert!(
        diff.contains("more lines not shown"),
        "{}",
        &diff[diff.len() - 200..]
    );
    assert_eq!(r.metadata["diff_truncated"], true);
    assert_eq!(r.metadata["files"][1]["additions"], 10_000);
    assert_eq!(read(&d, "b.txt").lines().count(), 10_000);
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Add File: c.txt\n+x\n*** End Patch",
    )
    .await;
    assert!(r.metadata.get("diff_truncated").is_none(), "{r:?}");
}

#[tokio::test]
async fn end_of_file_anchors_at_the_end() {
    let (d, ctx) = setup(&[("e.txt", "x\ny\nx\n")]);
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Update File: e.txt\n@@\n-x\n+z\n*** End of File\n*** End Patch",
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "e.txt"), "x\ny\nz\n");
}

#[tokio::test]
async fn canonically_equal_unicode_matches_and_context_keeps_the_files_form() {
    // The input for apply_patch: a decomposed file, a precomposed patch.
    let (d, ctx) = setup(&[
        ("n.py", "name = \"cafe\u{301}\"\nother = 1\n"),
        ("k.txt", "\u{1112}\u{1161}\u{11ab} = 1\nnext\n"),
        ("w.txt", "Zo\u{eb}\r\nkeep\r\n"),
    ]);
    let r = run(&ctx, "*** Begin Patch\n*** Update File: n.py\n@@\n-name = \"caf\u{e9}\"\n+name = \"caf\u{e9} au lait\"\n other = 1\n*** End Patch").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        read(&d, "n.py"),
        "name = \"caf\u{e9} au lait\"\nother = 1\n"
    );
    assert_eq!(
        r.output,
        "Success. Updated the following files:\nM n.py\nNote: in n.py the patch's lines matched after normalising Unicode (NFC).\n"
    );
    // A precomposed context line keeps the file's decomposed bytes; the
    // added line is written as given.
    let r = run(&ctx, "*** Begin Patch\n*** Update File: k.txt\n@@\n \u{d55c} = 1\n-next\n+\u{d55c}\n*** End Patch").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        read(&d, "k.txt"),
        "\u{1112}\u{1161}\u{11ab} = 1\n\u{d55c}\n"
    );
    // A decomposed patch against a precomposed CRLF file.
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Update File: w.txt\n@@\n-Zoe\u{308}\n+Zoe\n keep\n*** End Patch",
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(read(&d, "w.txt"), "Zoe\r\nkeep\r\n");
    // Canonically different text is still not found.
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Update File: w.txt\n@@\n-Zo\u{e8}\n+x\n*** End Patch",
    )
    .await;
    assert!(err(&r).contains("Failed to find expected lines"), "{r:?}");
}

#[tokio::test]
async fn lenient_passes_get_one_note_and_context_keeps_its_whitespace() {
    let (d, ctx) = setup(&[
        ("t.txt", "foo   \nbar  \n"),
        ("q.py", "print(\u{201C}hi\u{201D})\n"),
        ("x.txt", "exact\n"),
    ]);
    let r = run(&ctx, "*** Begin Patch\n*** Update File: t.txt\n@@\n-foo\n+FOO\n bar\n*** Update File: q.py\n@@\n-print(\"hi\")\n+print(\"bye\")\n*** Update File: x.txt\n@@\n-exact\n+still exact\n*** End Patch").await;
    assert!(r.is_ok(), "{r:?}");
    // The context line `bar  ` keeps its trailing spaces.
    assert_eq!(read(&d, "t.txt"), "FOO\nbar  \n");
    assert_eq!(read(&d, "q.py"), "print(\"bye\")\n");
    let notes: Vec<&str> = r
        .output
        .lines()
        .filter(|l| l.starts_with("Note:"))
        .collect();
    assert_eq!(
        notes,
        [
            "Note: in t.txt the patch's lines matched after ignoring whitespace at the start and end of lines; in q.py the patch's lines matched after treating typographic quotes, dashes and spaces as their ASCII forms."
        ]
    );
    let r = run(
        &ctx,
        "*** Begin Patch\n*** Update File: x.txt\n@@\n-still exact\n+exact\n*** End Patch",
    )
    .await;
    assert!(!r.output.contains("Note:"), "{r:?}");
}
