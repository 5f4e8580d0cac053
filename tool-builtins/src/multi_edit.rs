//! `multi_edit`: several replacements in one file, all or nothing.

use schemars::JsonSchema;
use serde::Deserialize;
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, meta, tool};

use crate::edit::EditSpec;

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
///
/// # Examples
/// ```json
/// {"file_path": "src/config.rs", "edits": [{"old_string": "port: 8080", "new_string": "port: 9090"}, {"old_string": "debug: true", "new_string": "debug: false"}]}
/// ```
#[tool(kind = "write", tags = ["fs", "edit"])]
pub async fn multi_edit(
    context: &ToolContext,
    file_path: String,
    edits: Vec<Edit>,
) -> Result<ToolResult, ToolError> {
    if edits.is_empty() {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            "edits is empty: give at least one {old_string, new_string} edit.",
        ));
    }
    let specs: Vec<EditSpec> = edits
        .into_iter()
        .map(|e| EditSpec {
            old_string: e.old_string,
            new_string: e.new_string,
            replace_all: e.replace_all,
        })
        .collect();
    let count = specs.len();
    crate::edit::edit(
        context,
        &file_path,
        specs,
        vec![(meta::EDITS, count.into())],
    )
    .await
}
