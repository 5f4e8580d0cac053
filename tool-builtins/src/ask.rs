//! `ask_user`: a question for the person, answered through the context's
//! [`Asker`](tool_core::Asker) (cross-cutting §4): the terminal in the CLI
//! (a refusal saying no person is present when there is none), an MCP
//! elicitation over MCP, whatever the host provides elsewhere.
//!
//! The model chooses the timeout and the default answer (the seed's
//! human-in-the-loop rule: a wait for a person always ends): after
//! `timeout` seconds (default [`ASK_USER_TIMEOUT`], at most
//! [`MAX_ASK_USER_TIMEOUT`]) the default is the answer, or, without one,
//! the result says nobody answered. Bounds on what a model may send: the
//! question at most [`MAX_QUESTION_CHARS`] characters, at most
//! [`MAX_CHOICES`] choices of at most [`MAX_CHOICE_CHARS`] each.

use std::time::Duration;

use serde_json::Value;
use tool_core::governance::ask::Question;
use tool_core::governance::asking::{self, Asked};
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, tool};

/// Default wait for the person: 300 s.
pub const ASK_USER_TIMEOUT: Duration = tool_core::governance::ask::DEFAULT_ASK_TIMEOUT;
/// Longest wait a model may ask for: 1800 s.
pub const MAX_ASK_USER_TIMEOUT: Duration = Duration::from_secs(1800);
/// Longest question, in characters: 2000.
pub const MAX_QUESTION_CHARS: usize = 2000;
/// Most choices: 10.
pub const MAX_CHOICES: usize = 10;
/// Longest choice (and default), in characters: 200.
pub const MAX_CHOICE_CHARS: usize = 200;

fn invalid(message: String) -> ToolError {
    ToolError::new(ErrorKind::InvalidArguments, message)
}

/// Asks the user a question and waits for the answer. Use it when you need
/// a decision or a fact only the user has; do not ask what you can find out
/// yourself.
///
/// Give `choices` when the answer is one of a few options (at a terminal
/// the user may still type another; an MCP client offers only the choices). If nobody answers within `timeout` seconds, the
/// `default` answer is used, or the result says nobody answered.
///
/// # Arguments
/// * `question` - The question, complete and short (at most 2000 characters).
/// * `choices` - Answers to pick from (at most 10, each at most 200 characters).
/// * `default` - The answer to use when nobody answers in time (one of the
///   choices when choices are given).
/// * `timeout` - Seconds to wait for the answer (default 300, at most 1800).
///
/// # Examples
/// ```json
/// {"question": "Which database should the service use?", "choices": ["PostgreSQL", "SQLite"], "default": "PostgreSQL"}
/// ```
#[tool(kind = "read", tags = ["person"], timeout = "1810s")]
pub async fn ask_user(
    question: String,
    choices: Option<Vec<String>>,
    default: Option<String>,
    timeout: Option<f64>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let question = question.trim().to_owned();
    if question.is_empty() {
        return Err(invalid(
            "The question is empty: say what to ask the user.".into(),
        ));
    }
    if question.chars().count() > MAX_QUESTION_CHARS {
        return Err(invalid(format!(
            "The question is longer than {MAX_QUESTION_CHARS} characters; ask something shorter."
        )));
    }
    let choices: Vec<String> = choices
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.trim().to_owned())
        .collect();
    if choices.len() > MAX_CHOICES {
        return Err(invalid(format!(
            "{} choices were given; at most {MAX_CHOICES} are shown. Offer fewer, or ask a free \
             question.",
            choices.len()
        )));
    }
    if let Some(n) = choices
        .iter()
        .position(|c| c.is_empty() || c.chars().count() > MAX_CHOICE_CHARS)
    {
        return Err(invalid(format!(
            "choices[{n}] is empty or longer than {MAX_CHOICE_CHARS} characters."
        )));
    }
    for (n, c) in choices.iter().enumerate() {
        if let Some(first) = choices[..n].iter().position(|o| o == c) {
            return Err(invalid(format!(
                "choices[{n}] repeats choices[{first}] ({c:?}); give each choice once."
            )));
        }
    }
    let default = default
        .map(|d| d.trim().to_owned())
        .filter(|d| !d.is_empty());
    if let Some(d) = &default {
        if d.chars().count() > MAX_CHOICE_CHARS {
            return Err(invalid(format!(
                "The default is longer than {MAX_CHOICE_CHARS} characters."
            )));
        }
        if !choices.is_empty() && !choices.contains(d) {
            return Err(invalid(format!(
                "The default {d:?} is not one of the choices {choices:?}; give one of them, or no \
                 default."
            )));
        }
    }
    let timeout = match timeout {
        None => ASK_USER_TIMEOUT,
        Some(t) if t.is_finite() && t > 0.0 && t <= MAX_ASK_USER_TIMEOUT.as_secs_f64() => {
            Duration::from_secs_f64(t)
        }
        Some(t) => {
            return Err(invalid(format!(
                "Invalid timeout value: {t}. Give seconds, greater than 0 and at most {}.",
                MAX_ASK_USER_TIMEOUT.as_secs()
            )));
        }
    };
    let mut q = Question::new(question)
        .with_choices(choices)
        .with_timeout(timeout)
        .with_trace_id(context.trace_id().map(str::to_owned));
    if let Some(d) = default {
        q = q.with_default(d);
    }
    let answered = |text: String, how: &str| {
        ToolResult::ok(format!("The user answered: {text}"))
            .with_metadata(tool_core::meta::MetaKey::custom("answer"), text)
            .with_metadata(tool_core::meta::MetaKey::custom("answered_by"), how)
    };
    match asking::ask(context, q).await {
        Asked::Answered(a) => Ok(answered(a, "person")),
        Asked::TimedOut { default: Some(d) } => Ok(ToolResult::ok(format!(
            "Nobody answered within {} s; the default answer is used: {d}",
            timeout.as_secs_f64()
        ))
        .with_metadata(tool_core::meta::MetaKey::custom("answer"), d)
        .with_metadata(tool_core::meta::MetaKey::custom("answered_by"), "default")),
        Asked::TimedOut { default: None } => Ok(ToolResult::ok(format!(
            "Nobody answered within {} s and no default was given. Go on without the answer \
             (say what you assumed), or ask again later.",
            timeout.as_secs_f64()
        ))
        .with_metadata(tool_core::meta::MetaKey::custom("answer"), Value::Null)
        .with_metadata(tool_core::meta::MetaKey::custom("answered_by"), "nobody")),
        Asked::Declined(why) => Ok(ToolResult::ok(format!(
            "The user declined to answer ({why}). Go on without the answer, or ask differently."
        ))
        .with_metadata(tool_core::meta::MetaKey::custom("answer"), Value::Null)
        .with_metadata(tool_core::meta::MetaKey::custom("answered_by"), "declined")),
        Asked::NoPerson(why) => Err(ToolError::new(
            ErrorKind::Denied,
            format!(
                "No person is present to answer ({why}). Decide yourself and say what you \
                 assumed, or stop and report the open question."
            ),
        )),
        Asked::Cancelled => Err(ToolError::new(
            ErrorKind::Cancelled,
            "The question was cancelled before an answer came.",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tool_core::Answer;

    fn run(ctx: &ToolContext, args: serde_json::Value) -> ToolResult {
        let rt = tokio::runtime::Runtime::new().unwrap();
        rt.block_on(crate::registry().execute("ask_user", args, ctx))
    }

    #[test]
    fn the_answer_the_default_and_the_refusals() {
        let picks = ToolContext::new().with_asker(|q: Question| async move {
            Answer::Answered(q.choices.last().cloned().unwrap_or_default())
        });
        let r = run(
            &picks,
            serde_json::json!({"question": "Which?", "choices": ["a", "b"]}),
        );
        assert_eq!(r.output, "The user answered: b");
        assert_eq!(r.metadata["answered_by"], "person");
        let silent = ToolContext::new().with_asker(|_q: Question| std::future::pending());
        let r = run(
            &silent,
            serde_json::json!({"question": "Go?", "choices": ["yes", "no"], "default": "no", "timeout": 0.05}),
        );
        assert_eq!(r.metadata["answer"], "no", "{r:?}");
        assert_eq!(r.metadata["answered_by"], "default");
        let r = run(
            &silent,
            serde_json::json!({"question": "Go?", "timeout": 0.05}),
        );
        assert_eq!(r.metadata["answered_by"], "nobody", "{r:?}");
        let nobody = run(&ToolContext::new(), serde_json::json!({"question": "Go?"}));
        let err = nobody.error.unwrap();
        assert_eq!(err.kind, ErrorKind::Denied);
        assert!(err.message.starts_with("No person is present"), "{err:?}");
        let bad = run(
            &picks,
            serde_json::json!({"question": "Go?", "choices": ["yes"], "default": "maybe"}),
        );
        assert!(
            bad.error
                .unwrap()
                .message
                .contains("not one of the choices")
        );
    }

    #[test]
    fn repeated_choices_are_refused_by_name() {
        let ctx = ToolContext::new()
            .with_asker(|q: Question| async move { Answer::Answered(q.choices[0].clone()) });
        let r = run(
            &ctx,
            serde_json::json!({"question": "Which?", "choices": ["a", "b", " a "]}),
        );
        assert_eq!(
            r.error.map(|e| e.message).as_deref(),
            Some("choices[2] repeats choices[0] (\"a\"); give each choice once.")
        );
    }
}
