//! How the builtins' error types become the model-facing [`ToolError`], in
//! one place: each keeps its [`ErrorKind`], so a tool body writes
//! `ws.resolve(&path)?` and returns `Result<ToolResult, ToolError>`, which
//! `tool_core`'s `IntoToolResult` turns into the call's result.
//!
//! | error | kind |
//! | --- | --- |
//! | [`PathError::Outside`], [`PathError::Private`], [`PathError::ReadOnly`] | `denied` |
//! | [`PathError::Empty`], [`PathError::Limit`], [`PathError::NoHome`] | `invalid_arguments` |
//! | other [`PathError`]s | `failed` |
//! | [`LedgerError`] (not read, changed since, unreadable) | `failed` |
//!
//! Errors of the text layer ([`DecodeError`](crate::fs::text::DecodeError),
//! [`EncodeError`](crate::fs::text::EncodeError)) and of matching
//! ([`MatchError`](crate::fs::replace::MatchError)) are `Display`-only: the
//! tools put them in a sentence naming the file first, and they stay `failed`.

use tool_core::{ErrorKind, ToolError};

use crate::fs::ledger::LedgerError;
use crate::fs::workspace::PathError;

impl From<PathError> for ToolError {
    fn from(e: PathError) -> Self {
        let kind = match e {
            PathError::Outside { .. } | PathError::Private { .. } | PathError::ReadOnly { .. } => {
                ErrorKind::Denied
            }
            PathError::Empty | PathError::Limit(_) | PathError::NoHome { .. } => {
                ErrorKind::InvalidArguments
            }
            PathError::NotFound { .. } | PathError::NotADirectory { .. } | PathError::Io { .. } => {
                ErrorKind::Failed
            }
        };
        ToolError::new(kind, e.to_string())
    }
}

impl From<LedgerError> for ToolError {
    fn from(e: LedgerError) -> Self {
        ToolError::new(ErrorKind::Failed, e.to_string())
    }
}
