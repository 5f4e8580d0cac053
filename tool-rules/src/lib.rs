//! The rules both the `#[tool]` macro (at compile time) and the `tool-core`
//! runtime (when a tool registers) apply, written once, and the one
//! declaration of a tool's boolean options, [`ToolFlags`].
//!
//! ```
//! use tool_rules::{ToolFlags, names, suggest, url_pattern};
//!
//! const FLAGS: ToolFlags = ToolFlags::NONE.with_read_only(true);
//! assert!(FLAGS.read_only && !FLAGS.destructive);
//! assert_eq!(names::tool_name_problem("web search").as_deref(), Some("` ` is not allowed"));
//! assert_eq!(suggest::did_you_mean("readonly", ToolFlags::NAMES), Some("read_only"));
//! assert!(url_pattern::parse("https://github.com/**/issues").is_ok());
//! ```
//!
//! Why a crate of its own: `tool-macros` is a proc-macro crate, which cannot
//! export ordinary items to `tool-core`, and `tool-core` cannot be a
//! dependency of the macro (it re-exports the macro). A third crate both
//! depend on keeps one copy of each rule, so the compile-time check and the
//! run-time check cannot drift apart (serde shares its internals between
//! `serde_derive` and `serde_derive_internals` for the same reason).
//!
//! # Dependencies and why
//!
//! - `strsim`: string similarity for "did you mean" (optimal string alignment
//!   for keys, Jaro-Winkler for ranking tool names, normalised Levenshtein for
//!   line similarity); darling and clap use it for the same job. This crate
//!   is the only one of the workspace that uses it (`scripts/structure-rules`).
//! - `serde` (optional, feature `serde`): `Serialize`/`Deserialize` of
//!   [`ToolFlags`], which `tool-core`'s `ToolSpec` flattens into its JSON.

pub mod docs;
mod flags;
pub mod names;
pub mod suggest;
pub mod text;
pub mod url_pattern;

pub use flags::ToolFlags;
