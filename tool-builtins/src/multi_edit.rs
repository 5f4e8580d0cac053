//! `multi_edit`: several replacements in one file, all or nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use tool_core::{ErrorKind, ToolContext, ToolResult, tool};

use crate::edit::{EditSpec, edit_blocking, run_blocking};
use crate::fs::target::WriteTarget;

/// One replacement of a `multi_edit` call.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, JsonSchema)]
pub struct Edit {
    /// The text to replace (empty only in the first edit, to create the file).
    pub old_string: String,
    /// The replacement text.
    pub new_string: String,
    /// Replace every occurrence of `old_string` (default false).
    #[serde(default)]
    pub replace_all: bool,
}

/// Apply several replacements to one file, in order, all or nothing.
///
/// Each edit works like `edit_file` and sees the result of the edits before
/// it. If any edit fails, the file is left untouched. The file must have been
/// read with `read_file` first.
///
/// # Arguments
/// * `file_path` - Path of the file to edit (relative to the workspace root, or absolute).
/// * `edits` - The replacements, applied in order.
#[tool(kind = "write")]
pub async fn multi_edit(context: &ToolContext, file_path: String, edits: Vec<Edit>) -> ToolResult {
    if edits.is_empty() {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            "edits is empty: give at least one {old_string, new_string} edit.",
        );
    }
    let target = match WriteTarget::new(context, &file_path) {
        Ok(target) => target,
        Err(r) => return r,
    };
    let specs: Vec<EditSpec> = edits
        .into_iter()
        .map(|e| EditSpec {
            old_string: e.old_string,
            new_string: e.new_string,
            replace_all: e.replace_all,
        })
        .collect();
    let _lock = target.ledger.lock(&target.path).await;
    let ctx = context.clone();
    let title = target.title();
    let count = specs.len();
    run_blocking(move || edit_blocking(&ctx, &target, &specs))
        .await
        .with_title(title)
        .with_metadata("edits", count)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

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
        let ctx = crate::context(d.path()).unwrap();
        crate::edit::prime(&ctx, &[fs::canonicalize(&p).unwrap()]);
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
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(r.output, "Edit applied successfully.");
        assert_eq!(fs::read_to_string(&p).unwrap(), "qux\n");
    }

    #[tokio::test]
    async fn read_only_files_are_refused() {
        use std::os::unix::fs::PermissionsExt;
        let (_d, ctx, p) = setup("a = 1\n");
        fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
        let r = multi_edit(&ctx, "m.txt".into(), vec![e("a = 1", "a = 2")]).await;
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
        .await;
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
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(fs::read(&p).unwrap(), b"a = 10\r\nb = 20\r\nc = 3\r\n");
    }

    #[tokio::test]
    async fn first_edit_may_create_the_file() {
        let d = tempfile::tempdir().unwrap();
        let ctx = crate::context(d.path()).unwrap();
        let r = multi_edit(
            &ctx,
            "new.txt".into(),
            vec![e("", "hello world\n"), e("world", "there")],
        )
        .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(
            fs::read_to_string(d.path().join("new.txt")).unwrap(),
            "hello there\n"
        );
    }
}
