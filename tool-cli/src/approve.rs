//! `--approve`: the unattended answer to confirmation-requiring calls. Its
//! own module so that the options (`cli`) and the run (`session`) both use
//! it without importing each other.

use clap::ValueEnum;
use tool_core::{ApprovalPolicy, ToolKind};

/// `--approve`: how calls of tools that require a person's confirmation are
/// answered when no person is there. Becomes the context's approver (a
/// [`tool_core::ApprovalPolicy`]) and the named value `approval_policy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum Approve {
    /// Approve nothing: confirmation-requiring calls are denied. The default.
    #[default]
    Never,
    /// Approve tools of kind `read`; deny the rest.
    Read,
    /// Approve every call.
    All,
}

impl Approve {
    /// The name as written on the command line (`never`, `read`, `all`).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Never => "never",
            Self::Read => "read",
            Self::All => "all",
        }
    }

    /// The approver that answers for this choice.
    pub(crate) fn policy(self) -> ApprovalPolicy {
        match self {
            Self::Never => ApprovalPolicy::new(),
            Self::Read => ApprovalPolicy::new().auto_approve(ToolKind::Read),
            Self::All => ApprovalPolicy::new().auto_approve_all(),
        }
    }
}
