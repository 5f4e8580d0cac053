//! [`Asker`]: the one way a tool asks a person a question (cross-cutting
//! §4, beside [`Approver`](crate::Approver) for "may this call run?").
//! `ask_user`, MCP elicitation and any other question go through it.
//!
//! Every question carries a timeout and an optional default answer chosen
//! by the caller (the seed's rule for human-in-the-loop waits: a person who
//! does not answer must not stall the agent).
//! [`asking::ask`](crate::governance::asking::ask) applies both, and the
//! context's cancellation, around the host's asker:
//!
//! ```
//! use std::time::Duration;
//! use tool_core::ToolContext;
//! use tool_core::governance::ask::{Answer, Question};
//! use tool_core::governance::asking::{self, Asked};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A host whose "person" always picks the second choice.
//! let ctx = ToolContext::new().with_asker(|q: Question| async move {
//!     Answer::Answered(q.choices[1].clone())
//! });
//! let q = Question::new("Which database?").with_choices(["sqlite", "postgres"]);
//! assert_eq!(asking::ask(&ctx, q).await, Asked::Answered("postgres".into()));
//! // A person who never answers: the caller's default after the timeout.
//! let silent = ToolContext::new().with_asker(|_q: Question| std::future::pending());
//! let q = Question::new("Proceed?")
//!     .with_default("yes")
//!     .with_timeout(Duration::from_millis(10));
//! assert_eq!(asking::ask(&silent, q).await, Asked::TimedOut { default: Some("yes".into()) });
//! // No asker in the context: nobody to ask.
//! assert!(matches!(asking::ask(&ToolContext::new(), Question::new("?")).await, Asked::NoPerson(_)));
//! # });
//! ```

use std::future::Future;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::tool::future::BoxFuture;

/// Timeout of a [`Question`] built with [`Question::new`]: 300 s.
pub const DEFAULT_ASK_TIMEOUT: Duration = Duration::from_secs(300);

/// A question for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Question {
    /// The question, as the person reads it.
    pub question: String,
    /// Answers to pick from; empty for a free answer.
    pub choices: Vec<String>,
    /// The answer used when the person does not answer in time (or sends
    /// an empty answer); `None`: no answer then.
    pub default: Option<String>,
    /// How long to wait for the person.
    pub timeout: Duration,
    /// The call's trace id, if any.
    pub trace_id: Option<String>,
}

impl Question {
    /// A free question with no default and the [`DEFAULT_ASK_TIMEOUT`].
    pub fn new(question: impl Into<String>) -> Self {
        Self {
            question: question.into(),
            choices: Vec::new(),
            default: None,
            timeout: DEFAULT_ASK_TIMEOUT,
            trace_id: None,
        }
    }

    /// The answers to pick from.
    #[must_use]
    pub fn with_choices<I, S>(mut self, choices: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.choices = choices.into_iter().map(Into::into).collect();
        self
    }

    /// The answer used when nobody answers in time.
    #[must_use]
    pub fn with_default(mut self, default: impl Into<String>) -> Self {
        self.default = Some(default.into());
        self
    }

    /// How long to wait.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The trace the question belongs to.
    #[must_use]
    pub fn with_trace_id(mut self, trace_id: Option<String>) -> Self {
        self.trace_id = trace_id;
        self
    }
}

/// What the host's [`Asker`] reports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Answer {
    /// The person's answer (a choice, or free text).
    Answered(String),
    /// The person chose not to answer; the reason, for the model.
    Declined(String),
    /// Nobody can be asked here (no terminal, a headless run); the reason.
    NoPerson(String),
}

/// Asks a person; the host implements it (the CLI: the terminal; an MCP
/// server: an elicitation request). Implemented for any
/// `Fn(Question) -> impl Future<Output = Answer>` closure. The timeout and
/// default are applied by [`asking::ask`](crate::governance::asking::ask),
/// so an asker may simply wait.
pub trait Asker: Send + Sync + 'static {
    /// Asks one question.
    fn ask(&self, question: Question) -> BoxFuture<Answer>;
}

impl<F, Fut> Asker for F
where
    F: Fn(Question) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Answer> + Send + 'static,
{
    fn ask(&self, question: Question) -> BoxFuture<Answer> {
        Box::pin(self(question))
    }
}
