//! Black-box tests of `multi_edit` (moved from `multi_edit.rs`).

use crate::util::*;
use std::fs;
use tool_builtins::multi_edit::*;

fn e(old: &str, new: &str) -> Edit {
    Edit {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: false,
    }
}

fn setup(content: &str) -> (tempfile::TempDir, ToolContext, std::path::PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("m.txt");
    fs::write(&p, content).unwrap();
    let ctx = tool_builtins::context(d.path()).unwrap();
    prime(&ctx, &[fs::canonicalize(&p).unwrap()]);
    (d, ctx, p)
}

#[tokio::test]
async fn applies_in_order_each_seeing_the_last() {
    let (_d, ctx, p) = setup("foo baz\n");
    let r = multi_edit(
        &ctx,
        "m.txt".into(),
        vec![e("foo", "bar"), e("bar baz", "qux")],
    )
    .await
    .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "Edit applied successfully.");
    assert_eq!(fs::read_to_string(&p).unwrap(), "qux\n");
}

#[tokio::test]
async fn read_only_files_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (_d, ctx, p) = setup("a = 1\n");
    fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
    let r = multi_edit(&ctx, "m.txt".into(), vec![e("a = 1", "a = 2")])
        .await
        .into_tool_result();
    let msg = r.error.unwrap().message;
    assert!(msg.contains("is read-only"), "{msg}");
    assert_eq!(fs::read_to_string(&p).unwrap(), "a = 1\n");
}

#[tokio::test]
async fn one_failure_leaves_the_file_untouched() {
    let (_d, ctx, p) = setup("a = 1\nb = 2\n");
    let r = multi_edit(
        &ctx,
        "m.txt".into(),
        vec![e("a = 1", "a = 10"), e("c = 3", "c = 30")],
    )
    .await
    .into_tool_result();
    let msg = r.error.unwrap().message;
    assert!(
        msg.starts_with("Edit 2 of 2 failed: Could not find old_string"),
        "{msg}"
    );
    assert_eq!(fs::read_to_string(&p).unwrap(), "a = 1\nb = 2\n");
}

#[tokio::test]
async fn crlf_is_kept_across_edits() {
    let (_d, ctx, p) = setup("a = 1\r\nb = 2\r\n");
    let r = multi_edit(
        &ctx,
        "m.txt".into(),
        vec![
            e("a = 1\nb = 2", "a = 10\nb = 2"),
            e("b = 2", "b = 20\nc = 3"),
        ],
    )
    .await
    .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(fs::read(&p).unwrap(), b"a = 10\r\nb = 20\r\nc = 3\r\n");
}

#[tokio::test]
async fn first_edit_may_create_the_file() {
    let d = tempfile::tempdir().unwrap();
    let ctx = tool_builtins::context(d.path()).unwrap();
    let r = multi_edit(
        &ctx,
        "new.txt".into(),
        vec![e("", "hello world\n"), e("world", "there")],
    )
    .await
    .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        fs::read_to_string(d.path().join("new.txt")).unwrap(),
        "hello there\n"
    );
}

#[tokio::test]
async fn empty_old_string_on_a_file_with_content_is_refused() {
    let edit = |old: &str, new: &str, all: bool| Edit {
        old_string: old.into(),
        new_string: new.into(),
        replace_all: all,
    };
    for edits in [
        vec![edit("", "appended line\n", false)],
        vec![edit("", "appended line\n", true)],
        vec![edit("", "x\n", false), edit("line one", "LINE ONE", false)],
        vec![edit("line one", "LINE ONE", false), edit("", "x\n", true)],
    ] {
        let (_d, ctx, p) = setup("line one\nline two\n");
        let n = edits.len();
        let r = multi_edit(&ctx, "m.txt".into(), edits)
            .await
            .into_tool_result();
        let msg = r.error.unwrap().message;
        assert!(msg.contains("old_string is empty"), "{msg}");
        assert!(msg.contains("write_file"), "{msg}");
        if n > 1 {
            assert!(msg.starts_with("Edit "), "{msg}");
        }
        assert_eq!(fs::read_to_string(&p).unwrap(), "line one\nline two\n");
    }
}

#[tokio::test]
async fn one_note_line_names_the_lenient_edits() {
    let (_d, ctx, p) = setup("a = 1\n    b = 2\nc = \"cafe\u{301}\"\n");
    let r = multi_edit(
        &ctx,
        "m.txt".into(),
        vec![
            e("a = 1", "a = 10"),
            e("b = 2  \n", "b = 20\nd = 4\n"),
            e("c = \"caf\u{e9}\"", "c = \"tea\""),
        ],
    )
    .await
    .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.output,
        "Edit applied successfully.\nNote: edit 2 of 3: old_string matched after ignoring whitespace at the start and end of lines; new_string was re-indented to the file's indentation; edit 3 of 3: old_string matched after normalising Unicode (NFC)."
    );
    assert_eq!(
        fs::read_to_string(&p).unwrap(),
        "a = 10\n    b = 20\n    d = 4\nc = \"tea\"\n"
    );
    assert_eq!(
        r.metadata["strategies"],
        serde_json::json!(["exact", "line_trimmed", "unicode_nfc"])
    );
}

#[tokio::test]
async fn an_ambiguous_edit_names_its_matches() {
    let (_d, ctx, p) = setup("x\ny\nx\ny\n");
    let r = multi_edit(&ctx, "m.txt".into(), vec![e("y", "Y"), e("x\nY", "z")])
        .await
        .into_tool_result();
    let msg = r.error.unwrap().message;
    // Edit 1 already fails: y occurs on lines 2 and 4.
    assert!(
        msg.starts_with("Edit 1 of 2 failed: Found multiple matches for old_string: 2 matches, at lines 2 and 4."),
        "{msg}"
    );
    assert_eq!(fs::read_to_string(&p).unwrap(), "x\ny\nx\ny\n");
}
