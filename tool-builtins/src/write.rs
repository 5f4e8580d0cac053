//! `write_file`: write a whole file, verbatim.

use tool_core::{ToolContext, ToolError, ToolResult, tool};

use crate::fs::changes::Before;
use crate::fs::target::{Report, WriteTarget};
use crate::fs::text::UTF8_BOM;

/// Write a file in the workspace, replacing it if it exists.
///
/// The content is written exactly as given: no newline is added and no
/// character is changed. Parent folders are created. An existing file must
/// have been read with `read_file` first; prefer `edit_file` for changes to
/// part of a file.
///
/// # Arguments
/// * `file_path` - Path of the file to write (relative to the workspace root, or absolute).
/// * `content` - The complete new content of the file.
#[tool(kind = "write", tags = ["fs", "edit"], destructive, idempotent)]
pub async fn write_file(
    context: &ToolContext,
    file_path: String,
    content: String,
) -> Result<ToolResult, ToolError> {
    WriteTarget::run(context, &file_path, move |ctx, target| {
        write_blocking(ctx, target, &content)
    })
    .await
}

fn write_blocking(
    ctx: &ToolContext,
    target: &WriteTarget,
    content: &str,
) -> Result<ToolResult, ToolError> {
    let mut file = target.open("write", true)?;
    let exists = file.exists();
    let before = Before::known(file.existing.take());
    // A file that had a UTF-8 byte order mark keeps it (the mark is not
    // content: read_file never shows it); everything else is as given.
    let keep_bom = before
        .content
        .as_deref()
        .is_some_and(|b| b.starts_with(UTF8_BOM))
        && !content.starts_with('\u{feff}');
    let mut bytes = Vec::with_capacity(content.len() + 3);
    if keep_bom {
        bytes.extend_from_slice(UTF8_BOM);
    }
    bytes.extend_from_slice(content.as_bytes());
    let old_text = before
        .content
        .as_deref()
        .map(|b| String::from_utf8_lossy(b.strip_prefix(UTF8_BOM).unwrap_or(b)).into_owned())
        .unwrap_or_default();
    Ok(file.write_reporting(
        ctx,
        &target.ledger,
        before,
        &bytes,
        Report {
            old_text: &old_text,
            new_text: content,
            output: "Wrote file successfully.",
            extra: &[("exists", exists.into())],
        },
    ))
}
