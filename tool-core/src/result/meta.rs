//! The metadata keys the framework and the built-in tools write in
//! [`ToolResult::metadata`](crate::ToolResult::metadata), as constants, so
//! that writers and readers (hosts, the CLI, tests) cannot drift apart.
//!
//! ```
//! use tool_core::{meta, ToolResult};
//!
//! let r = ToolResult::ok("…").with_metadata(meta::TRUNCATED, true);
//! assert_eq!(r.metadata[meta::TRUNCATED], true);
//! ```

/// `true` when the output was cut to a budget (head and tail kept).
pub const TRUNCATED: &str = "truncated";
/// The absolute path of the file holding the full output (a spill file).
pub const OUTPUT_PATH: &str = "output_path";
/// `true` when the error message was cut to the budget.
pub const ERROR_TRUNCATED: &str = "error_truncated";
/// The [`ArgumentRepair`](crate::ArgumentRepair)s applied, as `[{"kind", "parameter"?}]`.
pub const ARGUMENT_REPAIRS: &str = "argument_repairs";
/// The hidden parameters the model sent, dropped by the pipeline: `["name", …]`.
pub const IGNORED_HIDDEN_PARAMS: &str = "ignored_hidden_params";
/// The parameters an approver changed: `["name", …]`.
pub const APPROVED_WITH_EDITS: &str = "approved_with_edits";
/// The JSON value of a tool's structured (`Serialize`) return.
pub const STRUCTURED: &str = "structured";
/// A command's exit status (`bash_command`), an integer; absent when a signal ended it.
pub const EXIT_CODE: &str = "exit_code";
/// The unified diff of a file change (the file tools).
pub const DIFF: &str = "diff";
/// `true` when the diff was cut to its byte budget.
pub const DIFF_TRUNCATED: &str = "diff_truncated";
/// `true` when a command ran past its timeout and was stopped.
pub const TIMED_OUT: &str = "timed_out";
