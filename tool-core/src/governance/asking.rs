//! The question gate: [`ask`] puts a [`Question`] to the context's
//! [`Asker`](super::ask::Asker) with the question's timeout and default and
//! the context's cancellation (cross-cutting §4; the asking side of what
//! [`confirm`](super::confirm) is for approvals).

use super::ask::{Answer, Question};
use crate::tool::context::ToolContext;

/// How a question ended, after [`ask`] applied timeout, default and cancellation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Asked {
    /// The person answered (an empty answer with a default counts as the default).
    Answered(String),
    /// Nobody answered within the timeout; the caller's default, if any.
    TimedOut {
        /// The default the question carried.
        default: Option<String>,
    },
    /// The person declined; the reason.
    Declined(String),
    /// Nobody can be asked (no asker in the context, or the host said so); the reason.
    NoPerson(String),
    /// The call was cancelled while waiting.
    Cancelled,
}

/// Asks `question` through the context's [`Asker`](super::ask::Asker), waiting at most its
/// timeout, and stopping early when the context is cancelled.
pub async fn ask(ctx: &ToolContext, question: Question) -> Asked {
    let Some(asker) = ctx.asker().cloned() else {
        return Asked::NoPerson(
            "no person can be asked here: the host set no asker (ToolContext::with_asker)"
                .to_owned(),
        );
    };
    let (timeout, default) = (question.timeout, question.default.clone());
    let asked = tokio::time::timeout(timeout, asker.ask(question));
    tokio::select! {
        () = ctx.cancellation_token().cancelled() => Asked::Cancelled,
        outcome = asked => match outcome {
            Err(_) => Asked::TimedOut { default },
            Ok(Answer::Answered(a)) if a.trim().is_empty() && default.is_some() => {
                Asked::Answered(default.unwrap_or_default())
            }
            Ok(Answer::Answered(a)) => Asked::Answered(a),
            Ok(Answer::Declined(why)) => Asked::Declined(why),
            Ok(Answer::NoPerson(why)) => Asked::NoPerson(why),
        },
    }
}
