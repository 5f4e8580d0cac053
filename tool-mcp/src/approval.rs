//! Confirmation through the client: an [`Approver`] that asks the person
//! behind the MCP client with an elicitation request.

use std::sync::Arc;

use rmcp::service::{ElicitationError, ElicitationMode, RequestContext};
use rmcp::{Peer, RoleServer};
use std::future::Future;
use std::pin::Pin;
use tool_core::{ApprovalDecision, ApprovalRequest, Approver, ToolContext};

/// The form the client shows: one yes/no field.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Allow this call?
    approve: bool,
}

rmcp::elicit_safe!(Confirm);

/// Asks the client (elicitation, form mode) whether a call may run; when the
/// client cannot be asked (the request fails), the context's own approver
/// decides, else the call is denied.
pub(crate) struct ElicitationApprover {
    peer: Peer<RoleServer>,
    fallback: Option<Arc<dyn Approver>>,
}

impl ElicitationApprover {
    /// An approver for this request when the client declared form
    /// elicitation in an `initialize` session (2026-07-28 forbids
    /// server-to-client requests; there the context's approver decides).
    pub(crate) fn for_request(
        request: &RequestContext<RoleServer>,
        ctx: &ToolContext,
    ) -> Option<Self> {
        let peer = &request.peer;
        peer.peer_info()?;
        if !peer
            .supported_elicitation_modes()
            .contains(&ElicitationMode::Form)
        {
            return None;
        }
        Some(Self {
            peer: peer.clone(),
            fallback: ctx.approver().cloned(),
        })
    }
}

impl Approver for ElicitationApprover {
    fn approve(
        &self,
        request: ApprovalRequest,
    ) -> Pin<Box<dyn Future<Output = ApprovalDecision> + Send + 'static>> {
        let peer = self.peer.clone();
        let fallback = self.fallback.clone();
        Box::pin(async move {
            let arguments = serde_json::to_string(&request.arguments).unwrap_or_default();
            let message = format!(
                "Allow the tool `{}` ({}) to run with these arguments?\n{arguments}",
                request.tool, request.kind
            );
            match peer.elicit::<Confirm>(message).await {
                Ok(Some(Confirm { approve: true })) => ApprovalDecision::Approve,
                Ok(_) | Err(ElicitationError::UserDeclined | ElicitationError::UserCancelled) => {
                    ApprovalDecision::Deny("the user did not approve this call".to_owned())
                }
                Err(e) => match fallback {
                    Some(fallback) => fallback.approve(request).await,
                    None => ApprovalDecision::Deny(format!(
                        "this call needs a person's approval and the client could not be asked: {e}"
                    )),
                },
            }
        })
    }
}
