//! `write_file`: write a whole file, verbatim.

use tool_core::{ToolContext, ToolError, ToolResult, meta, tool};

use crate::fs::target::{self, NewText, Open};

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
///
/// # Examples
/// ```json
/// {"file_path": "notes/plan.md", "content": "# Plan\n- write the tests\n"}
/// ```
#[tool(kind = "write", tags = ["fs", "edit"], destructive, idempotent)]
pub async fn write_file(
    context: &ToolContext,
    file_path: String,
    content: String,
) -> Result<ToolResult, ToolError> {
    target::change(context, &file_path, Open::write(), move |current| {
        Ok(NewText {
            text: content,
            output: "Wrote file successfully.".to_owned(),
            extra: vec![(meta::EXISTS, current.exists.into())],
        })
    })
    .await
}
