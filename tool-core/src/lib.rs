//! Tools for LLM agents from ordinary Rust functions.
//!
//! Annotate a function with [`#[tool]`](macro@tool): its doc comment becomes the
//! description, its signature becomes a JSON Schema, and it registers itself
//! in the [global registry](ToolRegistry::global). [`ToolRegistry::execute`]
//! then turns a model's tool call (JSON) into a typed call and a [`ToolResult`].
//!
//! ```
//! use tool_core::{tool, ToolContext, ToolRegistry};
//! use serde_json::json;
//!
//! /// Add two integers.
//! ///
//! /// # Arguments
//! /// * `a` - The first addend.
//! /// * `b` - The second addend.
//! #[tool(kind = "read", read_only)]
//! fn add(a: i64, b: i64) -> String {
//!     (a + b).to_string()
//! }
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let registry = ToolRegistry::global();
//! let spec = registry.get("add").unwrap().spec();
//! assert_eq!(spec.description, "Add two integers.");
//! assert_eq!(spec.parameters["properties"]["a"]["description"], "The first addend.");
//! assert_eq!(spec.parameters["required"], json!(["a", "b"]));
//!
//! let ctx = ToolContext::new();
//! let result = registry.execute("add", r#"{"a": 2, "b": 40}"#, &ctx).await;
//! assert_eq!(result.output, "42");
//!
//! let bad = registry.execute("add", json!({"a": "two", "b": 1}), &ctx).await;
//! assert!(bad.error.unwrap().message.contains("parameter `a`"));
//! # });
//! ```
//!
//! Every parameter the model sees needs a description (a `///` comment on it,
//! `#[arg(description = "...")]`, or a `# Arguments` entry); one without any
//! compiles with a warning at the parameter ("parameter `b` of tool `sub`
//! reaches the model with no description; …"), an error under
//! `-D warnings`:
//!
//! ```compile_fail
//! #![deny(deprecated)]
//! /// Subtract two integers.
//! ///
//! /// # Arguments
//! /// * `a` - The minuend.
//! #[tool_core::tool]
//! fn sub(a: i64, b: i64) -> i64 {
//!     a - b
//! }
//! # fn main() {}
//! ```
//!
//! ```
//! #![deny(deprecated)]
//! /// Subtract two integers.
//! ///
//! /// # Arguments
//! /// * `a` - The minuend.
//! #[tool_core::tool]
//! fn sub(
//!     a: i64,
//!     /// The subtrahend.
//!     b: i64,
//! ) -> i64 {
//!     a - b
//! }
//! # fn main() {}
//! ```
//!
//! # Pieces
//! - [`ToolResult`]: output, long-term memory, error, images, attachments, metadata, and
//!   the model-visible notes on how the input was read ([`ToolResult::with_note`]).
//! - [`ToolContext`]: ids, page URL, named values and configs, typed state, cancellation.
//! - [`ToolRegistry`]: lookup, listing, canonical schemas, [`execute`](ToolRegistry::execute).
//! - [`Tool`] / [`ToolSpec`]: the runtime API the macro is sugar over.
//!
//! # Secrets and what masking covers
//!
//! A [`SecretStore`] in the context replaces `<secret>key</secret>` in the
//! arguments just before the call and masks the values again in the result.
//! Masking finds each value as written, JSON- and `Debug`-escaped,
//! form-urlencoded, and as its *standalone* base64 (standard and URL-safe,
//! padded or not) and hex (lower or upper case): the encoding of the value
//! alone, which a value inside a larger base64 blob does not have, since
//! base64 depends on where in the blob the value starts. A value changed in
//! any other way (hashed, compressed, re-cased, split) is not found. Values
//! shorter than 4 characters are refused when the store is built. The full
//! rules: [`governance::secrets`].
//!
//! # Dependencies and why
//! - `serde`/`serde_json`: the arguments and results are JSON; serde is the standard.
//! - `schemars` 1.x: JSON Schema 2020-12 from Rust types, the de-facto standard
//!   that the MCP SDK and most Rust LLM crates already use.
//! - `inventory`: link-time registration, so `#[tool]` needs no central list.
//! - `tokio` (+ `tokio-util` for the cancellation token): the async runtime agents run on;
//!   timeouts and the blocking pool for sync tools.
//! - `futures-util`: `catch_unwind` on futures for panic containment.
//! - `tool-rules`: the rules shared with the macro (names, flags, URL
//!   patterns) and the one home of "did you mean" (`tool_rules::suggest`,
//!   over `strsim`) and of message clipping (`tool_rules::text::clip`).
//! - `serde_path_to_error`: the path of the field serde refused inside an
//!   `#[arg(flatten)]` struct (serde's own error does not say which field),
//!   so the argument error names that field, as it does for any parameter;
//!   dtolnay's crate, also used by axum for the same purpose.
//! - `thiserror`, `tracing`: error types and diagnostics, the ecosystem standards.
//! - `base64`: the standalone base64 forms of secret values that masking
//!   looks for (four engines: standard and URL-safe, padded and not).
//! - `psl`: Mozilla's Public Suffix List compiled into code (no file or network
//!   at run time), so that the `*` of a URL pattern such as `www.google.*`
//!   stands for exactly one public suffix (`com`, `co.uk`), never
//!   `abc.com`; keeping that list by hand would go stale.
//! - `rustix` (Unix only): the current user id (`getuid`), to check that the private
//!   folders of spill files and binary output are owned by the user
//!   ([`truncate::check_private_dir`]); already in the workspace for `tool-builtins`.
//!   Its `fs` part gives the [`state::FileStore`] its `flock` (advisory file
//!   locks that the kernel drops with the process, so a crashed writer
//!   never leaves a stale lock behind).
//! - No embedded database for [`state`]: the ledger needs one small map per
//!   trace with appends and a compare-and-set across processes; `SQLite` or
//!   `redb` would add a C library or a page-structured file format for what
//!   a line-per-write log under `flock` does in ~400 lines with bounds we
//!   can state exactly. The Redis backend (scale issue) goes behind the
//!   same trait.
//! - `rust-stemmers`: the Snowball English (Porter2) stemmer for the
//!   [`search`] tokeniser, the stemmer search engines use (tantivy's), in
//!   place of hand-written suffix rules: on the evaluation set it found as
//!   many tools (recall@5 0.901 both, recall@1 0.637 against 0.632), and its
//!   rules are a published standard rather than ours to keep.
//! - `tiktoken-rs` (feature `tokens`, off by default): OpenAI's `o200k_base`
//!   tokenizer with its tables built in, for the `tokens` module (see there why it is optional).
//! - `tempfile` (tests only): real temporary folders for the [`state`]
//!   store's tests and doctest, removed when dropped; the standard choice.
//! - `proptest` (tests only): the property and fuzz tests of `tests/props.rs`
//!   (`execute` with arbitrary arguments, masking, truncation, URL patterns)
//!   on stable Rust, with shrinking to a minimal failing input; the most
//!   used property-testing crate, no nightly toolchain needed.

pub mod args;
mod execute;
pub mod format;
pub mod governance;
pub mod jobs;
pub mod layer;
pub mod read_cache;
mod registry;
mod result;
pub mod search;
pub mod state;
pub mod telemetry;
pub mod text_calls;
mod tool;
pub mod truncate;
pub mod view;

#[cfg(feature = "tokens")]
pub use format::token_count as tokens;
pub use registry::live;
pub use result::meta;
pub use tool::extract;

mod private;

#[doc(hidden)]
pub mod __private {
    //! Support for code generated by `#[tool]` and `#[toolset]`; not public API.
    pub use crate::private::*;
}

pub use args::{ArgumentRepair, RepairKind, ToolArgs};
pub use format::{Format, Recursion, ToolCall};
pub use governance::approval::{
    ApprovalDecision, ApprovalDefault, ApprovalPolicy, ApprovalRequest, Approver,
};
pub use governance::ask::{Answer, Asker, Question};
pub use governance::network::{NetworkPolicy, NetworkRefusal};
pub use governance::sandbox::{
    SandboxLimits, SandboxMode, SandboxPolicy, SandboxPolicyError, SandboxTier,
};
pub use governance::secrets::{SecretStore, SecretStoreError};
pub use governance::stats::{CallPhase, StatsOrder, ToolEvent, ToolObserver, ToolStatsSnapshot};
pub use governance::url_pattern::{UrlPattern, UrlPatternError};
pub use registry::error::RegistryError;
pub use registry::history::{OMITTED_OUTPUT, Rendering, ToolHistory};
pub use registry::live::LiveRegistry;
pub use registry::{DEFAULT_TIMEOUT, OnConflict, OptInTools, ToolRegistry};
pub use result::into_result::{IntoToolResult, run_blocking};
pub use result::{
    Attachment, ErrorKind, Image, ImageFileError, MemoryLayout, NOTE_LIMIT, NOTES_SHOWN,
    SUMMARY_PREFIX, ToolError, ToolResult,
};
pub use tokio_util::sync::CancellationToken;
pub use tool::context::{Progress, ProgressSink, State, ToolContext};
pub use tool::extract::FromToolContext;
pub use tool::spec::{
    DisplayName, SourceLocation, TaskSupport, ToolKind, ToolSpec, is_valid_tool_name,
};
pub use tool::{Tool, ToolHandler};
pub use tool_rules::ToolFlags;
pub use view::{NamePattern, RegistryView, TOOL_SEARCH};

pub use tool::toolset::Toolset;
/// Turns a free `async fn` or `fn` into a tool registered in the global registry.
///
/// See the crate docs for an example and the `tool-macros` crate for every option.
pub use tool_macros::{tool, toolset};
