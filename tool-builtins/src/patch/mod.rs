//! `apply_patch`: add, delete, update and move files with one patch in the
//! Codex grammar, verified in full before anything is written.
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path/new.txt
//! +first line
//! *** Delete File: path/old.txt
//! *** Update File: path/file.py
//! *** Move to: path/renamed.py
//! @@ def anchor():
//!  context line
//! -removed line
//! +added line
//! *** End of File
//! *** End Patch
//! ```
//!
//! Parsing is lenient about whitespace around header lines and about a
//! heredoc wrapper (`<<'EOF'` ... `EOF`) that models copy from shell habits.
//! Context lines are matched exactly first, then under Unicode
//! Normalization Form C (a decomposed `e` + U+0301 equals U+00E9), then
//! ignoring trailing whitespace, then ignoring surrounding whitespace, then
//! with typographic punctuation folded to ASCII. When any but the exact pass
//! placed a chunk, the output ends with one "Note: ..." line naming the
//! file and what was overlooked ([`Strategy::note`](crate::fs::replace::Strategy::note)).

mod apply;
mod parse;

use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, tool};

use crate::fs::target::change_set;
use apply::{into_set_plan, plan};
use parse::{Hunk, parse};

/// Apply a patch that adds, deletes, updates or moves files.
///
/// The patch uses this format (paths relative to the workspace root):
///
/// ```text
/// *** Begin Patch
/// *** Add File: <path>
/// +<each line of the new file>
/// *** Delete File: <path>
/// *** Update File: <path>
/// *** Move to: <new path>        (optional)
/// @@ <a line just before the change, to locate it>   (optional)
///  <context line>
/// -<removed line>
/// +<added line>
/// *** End Patch
/// ```
///
/// Every change is checked before any file is written: if one part does not
/// apply, nothing changes.
///
/// # Arguments
/// * `patch` - The full patch text, from `*** Begin Patch` to `*** End Patch`.
///
/// # Examples
/// ```json
/// {"patch": "*** Begin Patch\n*** Update File: src/main.rs\n@@ fn main() {\n-    println!(\"hi\");\n+    println!(\"hello\");\n*** End Patch"}
/// ```
#[tool(kind = "write", tags = ["fs", "edit"], destructive)]
pub async fn apply_patch(context: &ToolContext, patch: String) -> Result<ToolResult, ToolError> {
    let hunks = match parse(&patch) {
        Ok(h) => h,
        Err(e) => return Err(ToolError::new(ErrorKind::InvalidArguments, e)),
    };
    if hunks.is_empty() {
        return Err(ToolError::new(
            ErrorKind::Failed,
            "The patch has no file operations (add, delete or update). No files were modified.",
        ));
    }
    let named: Vec<String> = hunks
        .iter()
        .flat_map(|h| match h {
            Hunk::Add { path, .. } | Hunk::Delete { path } => vec![path.clone()],
            Hunk::Update { path, move_to, .. } => {
                std::iter::once(path).chain(move_to).cloned().collect()
            }
        })
        .collect();
    change_set(context, named, move |files, ledger| {
        plan(files, ledger, &hunks)
            .map(into_set_plan)
            .map_err(|e| ToolError::new(ErrorKind::Failed, e))
    })
    .await
}
