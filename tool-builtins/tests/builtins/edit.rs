//! Black-box tests of `edit` (moved from `edit.rs`).

use crate::util::*;
use std::fs;
use tool_builtins::edit::*;
use tool_builtins::fs::replace::NOT_FOUND;

fn setup(files: &[(&str, &[u8])]) -> (tempfile::TempDir, ToolContext) {
    workspace_with(files)
}

fn read_all(ctx: &ToolContext, d: &tempfile::TempDir) {
    let root = fs::canonicalize(d.path()).unwrap();
    let mut paths = Vec::new();
    for e in fs::read_dir(&root).unwrap() {
        let p = e.unwrap().path();
        if p.is_file() {
            paths.push(p);
        }
    }
    prime(ctx, &paths);
}

async fn edit(ctx: &ToolContext, f: &str, old: &str, new: &str, all: bool) -> ToolResult {
    edit_file(ctx, f.into(), old.into(), new.into(), all)
        .await
        .into_tool_result()
}

#[tokio::test]
async fn read_only_files_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (d, ctx) = setup(&[("locked.txt", b"old content\n")]);
    let p = d.path().join("locked.txt");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
    read_all(&ctx, &d);
    let r = edit(&ctx, "locked.txt", "old", "new", false).await;
    let msg = r.error.unwrap().message;
    assert!(msg.contains("is read-only (mode 0444)"), "{msg}");
    assert_eq!(fs::read_to_string(&p).unwrap(), "old content\n");
}

#[tokio::test]
async fn large_diffs_are_capped_in_metadata() {
    let (d, ctx) = setup(&[("big.txt", b"x\n")]);
    read_all(&ctx, &d);
    let huge = "new line\n".repeat(20_000);
    let r = edit(&ctx, "big.txt", "x\n", &huge, false).await;
    assert!(r.is_ok(), "{r:?}");
    let diff = r.metadata["diff"].as_str().unwrap();
    assert!(diff.len() <= 64 * 1024 + 100, "{}", diff.len());
    assert!(diff.contains("more lines not shown"));
    assert_eq!(r.metadata["diff_truncated"], true);
    assert_eq!(r.metadata["additions"], 20_000);
}

#[tokio::test]
async fn edits_after_a_read() {
    let (d, ctx) = setup(&[("a.txt", b"old content here")]);
    let r = edit(&ctx, "a.txt", "old content", "new content", false).await;
    assert!(r.error.unwrap().message.contains("You must read file"));
    read_all(&ctx, &d);
    let r = edit(&ctx, "a.txt", "old content", "new content", false).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, APPLIED);
    assert_eq!(r.metadata["strategy"], "exact");
    assert_eq!(r.metadata["additions"], 1);
    assert_eq!(
        fs::read_to_string(d.path().join("a.txt")).unwrap(),
        "new content here"
    );
    // A write counts as a fresh read.
    let r = edit(&ctx, "a.txt", "here", "there", false).await;
    assert!(r.is_ok(), "{r:?}");
}

#[tokio::test]
async fn fuzzy_matches_never_cut_words_or_add_blank_lines() {
    let (d, ctx) = setup(&[
        ("word.txt", b"foobar\nbaz\n"),
        ("trim.txt", b"  foo  \nnext\n"),
    ]);
    read_all(&ctx, &d);
    let r = edit(&ctx, "word.txt", "\nfoo\n", "X", false).await;
    assert!(
        r.error
            .unwrap()
            .message
            .contains("Could not find old_string")
    );
    assert_eq!(
        fs::read_to_string(d.path().join("word.txt")).unwrap(),
        "foobar\nbaz\n"
    );
    let r = edit(&ctx, "trim.txt", "foo\n", "bar\n", false).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.metadata["strategy"], "line_trimmed");
    // The line keeps its indentation (old_string had none).
    assert_eq!(
        fs::read_to_string(d.path().join("trim.txt")).unwrap(),
        "  bar\nnext\n"
    );
}

#[tokio::test]
async fn crlf_bom_and_bytes_outside_the_span_are_kept() {
    let original = "\u{feff}x = 1\r\nname = \u{c1}rv\u{ed}zt\u{171}r\u{151}\r\n";
    let (d, ctx) = setup(&[("bom.txt", original.as_bytes())]);
    read_all(&ctx, &d);
    let r = edit(&ctx, "bom.txt", "x = 1", "x = 2", false).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read_to_string(d.path().join("bom.txt")).unwrap(),
        original.replace("x = 1", "x = 2")
    );
}

#[tokio::test]
async fn lf_old_string_in_crlf_file_writes_crlf_single_and_replace_all() {
    for all in [false, true] {
        let (d, ctx) = setup(&[("c.txt", b"alpha\r\nbeta\r\ngamma\r\n")]);
        read_all(&ctx, &d);
        let r = edit(&ctx, "c.txt", "alpha\nbeta", "ALPHA\nBETA", all).await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(
            fs::read(d.path().join("c.txt")).unwrap(),
            b"ALPHA\r\nBETA\r\ngamma\r\n"
        );
    }
}

#[tokio::test]
async fn crlf_strings_on_an_lf_file_stay_lf() {
    let (d, ctx) = setup(&[("t.txt", b"alpha\nbeta\ngamma\n")]);
    read_all(&ctx, &d);
    let r = edit(
        &ctx,
        "t.txt",
        "alpha\nbeta\r\ngamma",
        "alpha\r\nbeta\nomega",
        false,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read_to_string(d.path().join("t.txt")).unwrap(),
        "alpha\nbeta\nomega\n"
    );
}

#[tokio::test]
async fn mixed_line_endings_outside_the_span_are_untouched() {
    let (d, ctx) = setup(&[("m.txt", b"a\r\nb\nc\r\nd\n")]);
    read_all(&ctx, &d);
    let r = edit(&ctx, "m.txt", "c", "C", false).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read(d.path().join("m.txt")).unwrap(),
        b"a\r\nb\nC\r\nd\n"
    );
}

#[tokio::test]
async fn errors() {
    let (d, ctx) = setup(&[("f.txt", b"foo bar foo"), ("dir/x", b"")]);
    read_all(&ctx, &d);
    let msg = |r: ToolResult| r.error.unwrap().message;
    assert_eq!(
        msg(edit(&ctx, "f.txt", "same", "same", false).await),
        IDENTICAL
    );
    assert_eq!(
        msg(edit(&ctx, "f.txt", "foo", "x", false).await),
        format!(
            "{MULTIPLE}: 2 matches, on line 1. Add more surrounding context to make the match unique, or set replace_all to change every one."
        )
    );
    assert_eq!(
        msg(edit(&ctx, "f.txt", "nope", "x", false).await),
        NOT_FOUND
    );
    assert!(msg(edit(&ctx, "missing.txt", "a", "b", false).await).contains("not found"));
    assert!(msg(edit(&ctx, "dir", "a", "b", false).await).contains("directory"));
    assert!(msg(edit(&ctx, "../x.txt", "a", "b", false).await).contains("outside the workspace"));
    assert_eq!(
        fs::read_to_string(d.path().join("f.txt")).unwrap(),
        "foo bar foo"
    );
}

#[tokio::test]
async fn empty_old_string_creates_the_file() {
    let (d, ctx) = setup(&[]);
    let r = edit(&ctx, "nested/dir/file.txt", "", "nested file", false).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read_to_string(d.path().join("nested/dir/file.txt")).unwrap(),
        "nested file"
    );
}

#[tokio::test]
async fn modified_after_read_is_refused() {
    let (d, ctx) = setup(&[("s.txt", b"a\n")]);
    read_all(&ctx, &d);
    fs::write(d.path().join("s.txt"), "a changed\n").unwrap();
    let r = edit(&ctx, "s.txt", "a", "b", false).await;
    assert!(
        r.error
            .unwrap()
            .message
            .contains("has been modified since it was last read")
    );
}

#[tokio::test]
async fn concurrent_edits_of_one_file_both_land() {
    let body: String = (0..50).map(|i| format!("line {i}\n")).collect();
    let (d, ctx) = setup(&[("c.txt", body.as_bytes())]);
    read_all(&ctx, &d);
    let mut tasks = Vec::new();
    for i in 0..50 {
        let ctx = ctx.clone();
        tasks.push(tokio::spawn(async move {
            edit_file(
                &ctx,
                "c.txt".into(),
                format!("line {i}\n"),
                format!("LINE {i}\n"),
                false,
            )
            .await
            .into_tool_result()
        }));
    }
    for t in tasks {
        let r = t.await.unwrap();
        assert!(r.is_ok(), "{r:?}");
    }
    let expected: String = (0..50).map(|i| format!("LINE {i}\n")).collect();
    assert_eq!(
        fs::read_to_string(d.path().join("c.txt")).unwrap(),
        expected
    );
}

#[tokio::test]
async fn legacy_encodings_are_written_back_in_kind() {
    let text = "caf\u{e9} cr\u{e8}me br\u{fb}l\u{e9}e\n".repeat(20);
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&text);
    let (d, ctx) = setup(&[("l.txt", &bytes)]);
    read_all(&ctx, &d);
    let r = edit(
        &ctx,
        "l.txt",
        "cr\u{e8}me br\u{fb}l\u{e9}e\ncaf\u{e9}",
        "cr\u{e8}me\ncaf\u{e9}",
        false,
    )
    .await;
    let msg = r.error.unwrap().message;
    assert!(
        msg.starts_with(&format!(
            "{MULTIPLE}: 19 matches, at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and later lines."
        )),
        "{msg}"
    );
    let r = edit(&ctx, "l.txt", "cr\u{e8}me", "CR\u{c8}ME", true).await;
    assert!(r.is_ok(), "{r:?}");
    let after = fs::read(d.path().join("l.txt")).unwrap();
    assert!(std::str::from_utf8(&after).is_err());
    assert_eq!(after.iter().filter(|&&b| b == 0xC8).count(), 20);
}

#[tokio::test]
async fn permissions_survive_an_edit() {
    use std::os::unix::fs::PermissionsExt;
    let (d, ctx) = setup(&[("run.sh", b"echo hi\n")]);
    let p = d.path().join("run.sh");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    read_all(&ctx, &d);
    assert!(edit(&ctx, "run.sh", "hi", "bye", false).await.is_ok());
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o755
    );
}

#[tokio::test]
async fn snapshot_hook_sees_the_change() {
    use std::sync::Arc;
    use tool_builtins::fs::changes::ChangeLog;
    use tool_builtins::fs::changes::Snapshots;
    let (d, ctx) = setup(&[("a.txt", b"one")]);
    let log = Arc::new(ChangeLog::default());
    let ctx = ctx.with_state(Snapshots(log.clone()));
    read_all(&ctx, &d);
    assert!(edit(&ctx, "a.txt", "one", "two", false).await.is_ok());
    let changes = log.changes();
    assert_eq!(changes.len(), 1);
    assert_eq!(changes[0].before.as_deref(), Some(&b"one"[..]));
    assert_eq!(changes[0].after.as_deref(), Some(&b"two"[..]));
    assert!(changes[0].existed);
    log.rewind().unwrap();
    assert_eq!(fs::read_to_string(d.path().join("a.txt")).unwrap(), "one");
}

// --- Empty old_string on an existing file -------------------------------

#[tokio::test]
async fn empty_old_string_on_a_file_with_content_is_refused() {
    // The input: a model "appending" with an empty old_string.
    let (d, ctx) = setup(&[
        ("notes.md", b"line one\nline two\n"),
        ("crlf.txt", b"\xef\xbb\xbfa\r\nb\r\n"),
        ("blank.txt", b"\n"),
    ]);
    read_all(&ctx, &d);
    for (file, all) in [
        ("notes.md", false),
        ("notes.md", true),
        ("crlf.txt", false),
        ("blank.txt", false),
    ] {
        let before = fs::read(d.path().join(file)).unwrap();
        let r = edit(&ctx, file, "", "appended line\n", all).await;
        let msg = r.error.unwrap().message;
        assert_eq!(msg, EMPTY_OLD_ON_EXISTING, "{file}");
        assert!(msg.contains("write_file"));
        assert_eq!(fs::read(d.path().join(file)).unwrap(), before, "{file}");
    }
}

#[tokio::test]
async fn empty_old_string_fills_an_existing_empty_file() {
    let (d, ctx) = setup(&[("empty.txt", b"")]);
    read_all(&ctx, &d);
    let r = edit(&ctx, "empty.txt", "", "first line\n", false).await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read_to_string(d.path().join("empty.txt")).unwrap(),
        "first line\n"
    );
}

// --- Unicode canonical equivalence --------------------------------------

#[tokio::test]
async fn canonically_equal_unicode_matches_and_new_string_is_written_as_given() {
    // The input: a decomposed file (macOS), a precomposed old_string.
    let (d, ctx) = setup(&[
        ("n.py", "name = \"cafe\u{301}\"\nother = 1\n".as_bytes()),
        ("w.txt", "Zo\u{eb}\r\nna\u{ef}ve\r\n".as_bytes()),
    ]);
    read_all(&ctx, &d);
    let r = edit(
        &ctx,
        "n.py",
        "name = \"caf\u{e9}\"",
        "name = \"caf\u{e9} au lait\"",
        false,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.metadata["strategy"], "unicode_nfc");
    assert_eq!(
        r.output,
        format!("{APPLIED}\nNote: old_string matched after normalising Unicode (NFC).")
    );
    assert_eq!(
        fs::read_to_string(d.path().join("n.py")).unwrap(),
        "name = \"caf\u{e9} au lait\"\nother = 1\n"
    );
    // A decomposed old_string in a precomposed CRLF file, across lines.
    let r = edit(
        &ctx,
        "w.txt",
        "Zoe\u{308}\nnai\u{308}ve",
        "Zoe\u{308}\nnaive",
        false,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read(d.path().join("w.txt")).unwrap(),
        "Zoe\u{308}\r\nnaive\r\n".as_bytes()
    );
}

// --- Indentation of lenient matches -------------------------------------

#[tokio::test]
async fn dropped_indentation_is_restored_and_reported() {
    let file = "class A:\n    def f(self):\n        return 1\n";
    let (d, ctx) = setup(&[("a.py", file.as_bytes())]);
    read_all(&ctx, &d);
    let r = edit(
        &ctx,
        "a.py",
        "def f(self):\n    return 1\n",
        "def f(self):\n    x = 1\n    return x\n",
        false,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.metadata["strategy"], "line_trimmed");
    assert_eq!(
        r.output,
        format!(
            "{APPLIED}\nNote: old_string matched after ignoring whitespace at the start and end of lines; new_string was re-indented to the file's indentation."
        )
    );
    assert_eq!(
        fs::read_to_string(d.path().join("a.py")).unwrap(),
        "class A:\n    def f(self):\n        x = 1\n        return x\n"
    );
}

#[tokio::test]
async fn indentation_that_cannot_be_fitted_is_refused() {
    let file = "\tif (x) {\n\t\ty();\n\t}\n";
    let (d, ctx) = setup(&[("t.c", file.as_bytes())]);
    read_all(&ctx, &d);
    let r = edit(
        &ctx,
        "t.c",
        "if (x) {\ny();\n}",
        "if (x) {\n    z();\n}",
        false,
    )
    .await;
    let msg = r.error.unwrap().message;
    assert!(
        msg.contains("cannot be re-indented") && msg.contains("use tabs"),
        "{msg}"
    );
    assert_eq!(fs::read_to_string(d.path().join("t.c")).unwrap(), file);
    // With a consistent tab width the spaces become tabs.
    let r = edit(
        &ctx,
        "t.c",
        "    if (x) {\n        y();\n    }",
        "    if (x) {\n        z();\n    }",
        false,
    )
    .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read_to_string(d.path().join("t.c")).unwrap(),
        "\tif (x) {\n\t\tz();\n\t}\n"
    );
}

// --- Ambiguity and notes --------------------------------------------------

#[tokio::test]
async fn a_multi_line_old_string_found_twice_names_count_and_lines() {
    let (d, ctx) = setup(&[
        ("m.go", b"\tx := 1\n\tx := 1\n"),
        ("c.txt", b"a\r\nb\r\nzzz\r\na\r\nb\r\n"),
    ]);
    read_all(&ctx, &d);
    let r = edit(&ctx, "m.go", "\tx := 1\n", "\tx := 2\n", false).await;
    let msg = r.error.unwrap().message;
    assert!(
        msg.starts_with(&format!("{MULTIPLE}: 2 matches, at lines 1 and 2.")),
        "{msg}"
    );
    assert!(msg.contains("replace_all"), "{msg}");
    assert_eq!(
        fs::read_to_string(d.path().join("m.go")).unwrap(),
        "\tx := 1\n\tx := 1\n"
    );
    // Lines count the same in a CRLF file.
    let r = edit(&ctx, "c.txt", "a\nb", "c", false).await;
    let msg = r.error.unwrap().message;
    assert!(msg.contains("2 matches, at lines 1 and 4."), "{msg}");
}

#[tokio::test]
async fn lenient_matches_add_one_note_line_and_exact_ones_none() {
    let (d, ctx) = setup(&[
        ("ws.txt", b"const   x =   5;\n"),
        ("q.py", "print(\u{201c}hi\u{201d})\n".as_bytes()),
        ("e.txt", b"say(\"hi\")\n"),
        ("x.txt", b"exact\n"),
    ]);
    read_all(&ctx, &d);
    let cases = [
        (
            "ws.txt",
            "const x = 5;",
            "const x = 6;",
            "old_string matched after treating runs of whitespace as equal",
        ),
        (
            "q.py",
            "print(\"hi\")",
            "print(\"bye\")",
            "old_string matched after treating typographic quotes, dashes and spaces as their ASCII forms",
        ),
        (
            "e.txt",
            "say(\\\"hi\\\")",
            "say(\"bye\")",
            "old_string matched after interpreting backslash escapes in old_string",
        ),
    ];
    for (file, old, new, note) in cases {
        let r = edit(&ctx, file, old, new, false).await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(r.output, format!("{APPLIED}\nNote: {note}."), "{file}");
        assert_eq!(r.output.lines().count(), 2);
    }
    let r = edit(&ctx, "x.txt", "exact", "still exact", false).await;
    assert_eq!(r.output, APPLIED);
}
