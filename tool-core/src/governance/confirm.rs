//! The approval gate: the one place a call waits for a person's (or a
//! policy's) decision. Used by the pipeline for `requires_confirmation`
//! tools, by `bash_command`'s command policy, and by the MCP client when a
//! server asks to confirm a call.
//!
//! [`ask`] sends the context's [`Approver`] an
//! [`ApprovalRequest`] and returns a [`Confirmation`]. It contains what
//! every caller would otherwise write (and did, three times, differently):
//! - no approver configured: [`Confirmation::NoApprover`], never "approved";
//! - the approver panicking (when asked or while deciding):
//!   [`Confirmation::Failed`], so the caller says the approval failed, not
//!   that the tool crashed;
//! - the context's cancellation token firing while waiting:
//!   [`Confirmation::Cancelled`];
//! - no answer within the context's approval timeout (300 s unless
//!   [`ToolContext::with_approval_timeout`] says otherwise):
//!   [`Confirmation::TimedOut`] with the caller's default (deny unless
//!   configured), and the approver is told ([`Approver::timed_out`]: a
//!   [`RefusalBreaker`](super::breaker::RefusalBreaker) counts it as a refusal);
//! - an approval with edits that changes a parameter outside
//!   [`ApprovalRequest::editable_params`] (or removes one):
//!   [`Confirmation::NotEditable`]; an allowed edit is
//!   [`Confirmation::Edited`] with the changed names.
//!
//! ```
//! use tool_core::governance::confirm::{ask, Confirmation};
//! use tool_core::{ApprovalDecision, ApprovalRequest, ToolContext, ToolKind};
//! use serde_json::{json, Map};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let request = ApprovalRequest {
//!     tool: "send_mail".to_owned(),
//!     kind: ToolKind::Network,
//!     display: Default::default(),
//!     arguments: json!({"to": "ana@example.com", "body": "hi"}).as_object().unwrap().clone(),
//!     editable_params: vec!["body".to_owned()],
//!     trace_id: None,
//!     injected: Map::new(),
//!     editable_schemas: Map::new(),
//!     defaults: Map::new(),
//! };
//! // Nobody to ask: never approved.
//! assert_eq!(ask(&ToolContext::new(), request.clone()).await, Confirmation::NoApprover);
//!
//! // An approver that rewrites the recipient, which is not editable.
//! let ctx = ToolContext::new().with_approver(|req: ApprovalRequest| async move {
//!     let mut edited = req.arguments.clone();
//!     edited.insert("to".to_owned(), json!("eve@example.com"));
//!     ApprovalDecision::ApproveWithEdits(edited)
//! });
//! assert_eq!(ask(&ctx, request).await, Confirmation::NotEditable("to".to_owned()));
//! # });
//! ```

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use std::time::Duration;

use super::approval::{ApprovalDecision, ApprovalDefault, ApprovalRequest, Approver, check_edits};
use crate::result::{ErrorKind, ToolResult};
use crate::tool::context::ToolContext;

/// What the approval gate decided ([`ask`]).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Confirmation {
    /// Run the call as sent.
    Approved,
    /// Run the call with `arguments`; `changed` names each parameter whose
    /// value differs from the request's (set or removed), edits of editable
    /// parameters only.
    Edited {
        /// The arguments to run with.
        arguments: Map<String, Value>,
        /// The changed parameters: those set to a new value, in the edited
        /// arguments' order, then those removed.
        changed: Vec<String>,
    },
    /// The approver denied the call; its reason.
    Denied(String),
    /// The approval changed (or removed) this parameter, which is not editable: do not run.
    NotEditable(String),
    /// No approver is configured: do not run.
    NoApprover,
    /// The approver panicked: do not run.
    Failed,
    /// The context's cancellation token fired while waiting: do not run.
    Cancelled,
    /// The approver did not answer within the context's approval timeout
    /// ([`ToolContext::with_approval_timeout`]); the caller's `default`
    /// decides (run the call as sent, or not).
    TimedOut {
        /// The default applied.
        default: ApprovalDefault,
        /// How long the gate waited.
        after: Duration,
    },
}

impl Confirmation {
    /// Whether the call may run ([`Approved`](Self::Approved) or [`Edited`](Self::Edited)).
    pub fn allows(&self) -> bool {
        matches!(
            self,
            Self::Approved
                | Self::Edited { .. }
                | Self::TimedOut {
                    default: ApprovalDefault::Approve,
                    ..
                }
        )
    }

    /// The error result for a call to `tool` that must not run, in the
    /// pipeline's words (kind `denied`, or `cancelled`); `None` when it may run.
    pub fn refusal(&self, tool: &str) -> Option<ToolResult> {
        let denied = |message: String| Some(ToolResult::error(ErrorKind::Denied, message));
        match self {
            Self::Approved
            | Self::Edited { .. }
            | Self::TimedOut {
                default: ApprovalDefault::Approve,
                ..
            } => None,
            Self::TimedOut { after, .. } => denied(format!(
                "Nobody answered the approval of `{tool}` within {}, and an unanswered approval is denied here, so the call was not made.",
                humantime::format_duration(*after)
            )),
            Self::Denied(reason) => {
                denied(format!("The call to `{tool}` was not approved: {reason}"))
            }
            Self::NotEditable(param) => denied(format!(
                "The approval of `{tool}` changed `{param}`, which is not editable, so the call was not made."
            )),
            Self::NoApprover => denied(format!(
                "The tool `{tool}` needs confirmation, and no approver is configured, so the call was not made."
            )),
            Self::Failed => denied(format!(
                "The approval of `{tool}` failed, so the call was not made."
            )),
            Self::Cancelled => Some(ToolResult::error(
                ErrorKind::Cancelled,
                format!("The call to `{tool}` was cancelled while waiting for confirmation."),
            )),
        }
    }
}

/// Asks `ctx`'s approver about `request` (the module docs list what is contained).
pub async fn ask(ctx: &ToolContext, request: ApprovalRequest) -> Confirmation {
    let Some(approver) = ctx.approver() else {
        return Confirmation::NoApprover;
    };
    ask_approver(ctx, approver.as_ref(), request).await
}

/// As [`ask`], asking `approver` instead of the context's (a check beside
/// the gate that has an approver of its own, such as a refusal breaker's
/// person), with the same containment: `ctx`'s approval timeout and
/// default, its cancellation token, a panicking approver as
/// [`Confirmation::Failed`], edits checked. On a timeout the approver is
/// told ([`Approver::timed_out`]).
pub async fn ask_approver(
    ctx: &ToolContext,
    approver: &dyn Approver,
    request: ApprovalRequest,
) -> Confirmation {
    let asked = request.clone();
    let (original, editable) = (&asked.arguments, &asked.editable_params);
    let decide = async {
        let started = std::panic::catch_unwind(AssertUnwindSafe(|| approver.approve(request)));
        match started {
            Ok(future) => AssertUnwindSafe(future).catch_unwind().await.ok(),
            Err(_) => None,
        }
    };
    let (timeout, default) = ctx.approval_timeout();
    let decision = tokio::select! {
        biased;
        () = ctx.cancellation_token().cancelled() => return Confirmation::Cancelled,
        d = tokio::time::timeout(timeout, decide) => match d {
            Ok(d) => d,
            Err(_) => {
                approver.timed_out(&asked);
                return Confirmation::TimedOut { default, after: timeout };
            }
        },
    };
    match decision {
        None => {
            tracing::error!(target: "tool_core", "the approver panicked; the call was not made");
            Confirmation::Failed
        }
        Some(ApprovalDecision::Approve) => Confirmation::Approved,
        Some(ApprovalDecision::Deny(reason)) => Confirmation::Denied(reason),
        Some(ApprovalDecision::ApproveWithEdits(edited)) => {
            if let Err(param) = check_edits(original, &edited, editable) {
                return Confirmation::NotEditable(param.to_owned());
            }
            let mut changed: Vec<String> = edited
                .iter()
                .filter(|(k, v)| original.get(*k) != Some(*v))
                .map(|(k, _)| k.clone())
                .collect();
            changed.extend(
                original
                    .keys()
                    .filter(|k| !edited.contains_key(*k))
                    .cloned(),
            );
            if changed.is_empty() {
                return Confirmation::Approved;
            }
            Confirmation::Edited {
                arguments: edited,
                changed,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::spec::ToolKind;
    use serde_json::json;

    fn request() -> ApprovalRequest {
        ApprovalRequest {
            tool: "t".to_owned(),
            kind: ToolKind::Other,
            display: Default::default(),
            arguments: json!({"a": 1, "b": 2}).as_object().unwrap().clone(),
            editable_params: vec!["b".to_owned()],
            trace_id: None,
            injected: Map::new(),
            editable_schemas: Map::new(),
            defaults: Map::new(),
        }
    }

    #[tokio::test]
    async fn a_panicking_approver_is_a_failed_approval() {
        let ctx = ToolContext::new().with_approver(|_req: ApprovalRequest| async move {
            panic!("approver bug");
        });
        assert_eq!(ask(&ctx, request()).await, Confirmation::Failed);
        let r = Confirmation::Failed.refusal("t").unwrap();
        assert_eq!(
            r.error.unwrap().message,
            "The approval of `t` failed, so the call was not made."
        );
    }

    #[tokio::test]
    async fn cancellation_ends_the_wait() {
        let ctx = ToolContext::new().with_approver(|_req: ApprovalRequest| async move {
            std::future::pending::<ApprovalDecision>().await
        });
        ctx.cancellation_token().cancel();
        assert_eq!(ask(&ctx, request()).await, Confirmation::Cancelled);
    }

    #[tokio::test]
    async fn edits_name_what_changed() {
        let ctx = ToolContext::new().with_approver(|req: ApprovalRequest| async move {
            let mut edited = req.arguments.clone();
            edited.insert("b".to_owned(), json!(3));
            ApprovalDecision::ApproveWithEdits(edited)
        });
        assert_eq!(
            ask(&ctx, request()).await,
            Confirmation::Edited {
                arguments: json!({"a": 1, "b": 3}).as_object().unwrap().clone(),
                changed: vec!["b".to_owned()],
            }
        );
    }
}
