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
//!
//! [`ToolResult::with_metadata`](crate::ToolResult::with_metadata) takes a
//! [`MetaKey`]: one of the constants here, or [`MetaKey::custom`] for a key
//! of a tool's own. The constants stay plain `&'static str`s so that readers
//! index with them (`result.metadata[meta::DIFF]`) as before; a bare string
//! literal or a `String` still converts (`From`), so older call sites keep
//! compiling. First-party tools name every key through this module
//! (`scripts/structure-rules` refuses `with_metadata("…")` in `tool-*/src`).

use std::borrow::Cow;
use std::fmt;

/// A metadata key, as [`ToolResult::with_metadata`](crate::ToolResult::with_metadata)
/// takes it: one of this module's constants (`meta::DIFF.into()`), or a
/// key of a tool's own named with [`MetaKey::custom`] (a `&'static str`) or
/// [`MetaKey::owned`] (built at run time). Any string is accepted; keys are
/// compared as the exact strings.
///
/// ```
/// use tool_core::{meta, meta::MetaKey, ToolResult};
///
/// let r = ToolResult::ok("done")
///     .with_metadata(meta::ADDITIONS, 3)
///     .with_metadata(MetaKey::custom("rows"), 12);
/// assert_eq!(r.metadata[meta::ADDITIONS], 3);
/// assert_eq!(MetaKey::custom("rows").as_str(), "rows");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MetaKey(Cow<'static, str>);

impl MetaKey {
    /// A key of a tool's own (one not listed in [`meta`](self)).
    #[must_use]
    pub const fn custom(key: &'static str) -> Self {
        Self(Cow::Borrowed(key))
    }

    /// A key built at run time (for example one per file).
    #[must_use]
    pub fn owned(key: impl Into<String>) -> Self {
        Self(Cow::Owned(key.into()))
    }

    /// The key as written in the metadata map.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The key as the `String` the metadata map stores.
    #[must_use]
    pub fn into_string(self) -> String {
        self.0.into_owned()
    }
}

impl fmt::Display for MetaKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The constants of this module (and any string slice, which older call sites pass).
impl From<&str> for MetaKey {
    fn from(key: &str) -> Self {
        Self::owned(key)
    }
}

/// A key built at run time, as older call sites pass it.
impl From<String> for MetaKey {
    fn from(key: String) -> Self {
        Self::owned(key)
    }
}

impl From<&String> for MetaKey {
    fn from(key: &String) -> Self {
        Self::owned(key.clone())
    }
}

/// `true` when the output was cut to a budget (head and tail kept).
pub const TRUNCATED: &str = "truncated";
/// The `offset` argument that gives the next page of a paged search
/// (`grep_content`, `glob_files`); absent on the last page.
pub const NEXT_OFFSET: &str = "next_offset";
/// `true` when the answer came from the trace's read cache
/// ([`read_cache`](crate::read_cache)); absent otherwise.
pub const CACHED: &str = "cached";
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
/// `true` on a result the framework put in for a call that never ran: a
/// tool call left without a result in a conversation handed back to an agent
/// (`tool_agent::repair_dangling_calls`).
pub const NOT_RUN: &str = "not_run";
/// The middleware layers ([`ToolLayer`](crate::layer::ToolLayer)) that
/// rewrote the arguments before the call, outermost first: `["name", …]`.
pub const REWRITTEN_BY: &str = "rewritten_by";
/// The middleware layer that refused the call (its name).
pub const REFUSED_BY: &str = "refused_by";
/// `true` when nobody answered the approval in time and the caller's default
/// ([`ApprovalDefault`](crate::governance::approval::ApprovalDefault)) decided.
pub const APPROVAL_TIMED_OUT: &str = "approval_timed_out";
/// `true` when a model's summary replaced the output (the full text is at
/// [`OUTPUT_PATH`]).
pub const SUMMARIZED: &str = "summarized";
/// The [`ResultView`](crate::layer::ResultView) a host chose for the tool
/// (`"brief"` or `"minimal"`; absent for the full result).
pub const RESULT_VIEW: &str = "result_view";
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
/// Lines added by a file change (the file tools), an integer.
pub const ADDITIONS: &str = "additions";
/// Lines removed by a file change (the file tools), an integer.
pub const DELETIONS: &str = "deletions";
/// The absolute physical path of the file a tool changed.
pub const FILEPATH: &str = "filepath";
/// The matching strategy that placed an edit's `old_string` (`exact`,
/// `line_trimmed`, …; `create` for a file created by an edit).
pub const STRATEGY: &str = "strategy";
/// The strategy of every edit of a `multi_edit`, in order.
pub const STRATEGIES: &str = "strategies";
/// The file's text encoding when it is not UTF-8 (the WHATWG name, e.g. `UTF-16LE`).
pub const ENCODING: &str = "encoding";
/// The number of edits a `multi_edit` applied.
pub const EDITS: &str = "edits";
/// Whether `write_file` replaced an existing file.
pub const EXISTS: &str = "exists";
/// Per file an `apply_patch` changed: `{"path", "kind", "additions", "deletions", "from"?}`.
pub const FILES: &str = "files";

// Reading files and folders (`read_file`).

/// The number of entries of a folder `read_file` listed, an integer.
pub const ENTRIES: &str = "entries";
/// The number of lines of the file, an integer.
pub const TOTAL_LINES: &str = "total_lines";
/// The number of lines the output shows, an integer.
pub const LINES_SHOWN: &str = "lines_shown";
/// A PDF's page count, estimated from its page objects, an integer.
pub const PAGES_COUNTED: &str = "pages_counted";
/// The media type of a file or image sent as an attachment (`application/pdf`, `image/png`, …).
pub const MEDIA_TYPE: &str = "media_type";
/// The size in bytes of what was sent (a file, an encoded image), an integer.
pub const BYTES: &str = "bytes";
/// An image's width in pixels as sent, an integer.
pub const WIDTH: &str = "width";
/// An image's height in pixels as sent, an integer.
pub const HEIGHT: &str = "height";
/// An image's width in pixels before it was scaled down, an integer.
pub const ORIGINAL_WIDTH: &str = "original_width";
/// An image's height in pixels before it was scaled down, an integer.
pub const ORIGINAL_HEIGHT: &str = "original_height";
/// `false` when an image was sent as stored, without decoding it.
pub const DECODED: &str = "decoded";

// Searching (`glob_files`, `list_dir`, `grep_content`).

/// The number of paths found, an integer.
pub const COUNT: &str = "count";
/// The number of matching lines found, an integer.
pub const MATCHES: &str = "matches";
/// Lines searched only up to the per-line cap, an integer (present when not 0).
pub const CUT_LINES: &str = "cut_lines";
/// Files whose search stopped midway, an integer (present when not 0).
pub const PARTIAL_FILES: &str = "partial_files";

// Images (`read_images`).

/// How the images were sent: `single`, `separate` or `grid`.
pub const LAYOUT: &str = "layout";
/// The paths of images left out because the request's image budget was spent.
pub const NOT_SENT: &str = "not_sent";
/// A grid's number of columns, an integer.
pub const COLUMNS: &str = "columns";
/// A grid's number of rows, an integer.
pub const ROWS: &str = "rows";
/// A grid cell's side in pixels, an integer.
pub const CELL: &str = "cell";
/// Per image sent: its number, path and sizes.
pub const IMAGES: &str = "images";
/// The files skipped, each with the reason.
pub const SKIPPED: &str = "skipped";

// Commands (`bash_command`).

/// The sandbox a command ran in: `{"policy", "tier", "refused", "limits"}`.
pub const SANDBOX: &str = "sandbox";
/// The hosts a command contacted and was refused: `{"contacted", "refused", "omitted"?}`.
pub const NETWORK: &str = "network";
/// The number of bytes the command wrote (stdout and stderr), an integer.
pub const OUTPUT_BYTES: &str = "output_bytes";
/// The signal that ended the command (`SIGKILL`, …).
pub const SIGNAL: &str = "signal";
/// `true` when processes the command left running in the background were stopped.
pub const STOPPED_BACKGROUND: &str = "stopped_background";
/// `true` when the call was cancelled and the command stopped.
pub const CANCELLED: &str = "cancelled";

// Skills (`skill`).

/// The name of the skill loaded.
pub const SKILL: &str = "skill";
/// The folder the skill was loaded from, absolute.
pub const FOLDER: &str = "folder";

// Imported tools (tool-mcp).

/// The MCP error kind of a failed remote call.
pub const MCP_ERROR: &str = "mcp_error";
/// Where an imported tool came from: `{"server", "tool"}`.
pub const MCP: &str = "mcp";

// Background jobs (`bash_command` with `run_in_background`, `job_output`,
// `job_kill`, `job_list`; cross-cutting §3).

/// A job's id, `job-<hex>`.
pub const JOB_ID: &str = "job_id";
/// What a job runs: `shell` or `agent`.
pub const JOB_KIND: &str = "kind";
/// A job's status: `running`, `exited`, `killed`, `expired`, `failed`, `lost`.
pub const JOB_STATUS: &str = "status";
/// A job's lifetime cap, in seconds (an integer).
pub const LIFETIME_SECS: &str = "lifetime_secs";
/// Bytes of a job's output dropped before this read (the kept window is bounded).
pub const DROPPED_BYTES: &str = "dropped_bytes";
/// Bytes of an unfinished last line held back until it ends.
pub const PENDING_BYTES: &str = "pending_bytes";
/// The jobs of `job_list`: one object per job.
pub const JOBS: &str = "jobs";
