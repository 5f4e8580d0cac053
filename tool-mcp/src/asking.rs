//! Questions through the client: in 2025-11-25 sessions whose client
//! declared form elicitation, an [`Asker`] that puts a [`Question`] (the
//! `ask_user` tool's, or any other tool's) to the person behind the MCP
//! client with an `elicitation/create` request (cross-cutting §4: one way to
//! ask a person; [`crate::approval`] is the confirmation side).
//!
//! The form has one required field, `answer`: a single-select enum of the
//! question's choices when it has any, free text otherwise, the question's
//! default as the field's default. The wait is bounded by the question's
//! timeout and the call's cancellation, both applied by
//! `tool_core::governance::asking::ask`; when either ends the wait, the
//! client is sent `notifications/cancelled` for the request, so its form
//! closes.

use std::collections::BTreeMap;
use std::sync::Arc;

use rmcp::model::{
    CancelledNotificationParam, ClientResult, ElicitRequest, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationSchema, EnumSchema, PrimitiveSchemaDefinition, RequestId,
    ServerRequest, StringSchema,
};
use rmcp::service::{ElicitationMode, PeerRequestOptions, RequestContext, ServiceError};
use rmcp::{Peer, RoleServer};
use serde_json::Value;
use tool_core::{Answer, Asker, Question, ToolContext};

/// The form field that carries the answer.
pub(crate) const ANSWER_FIELD: &str = "answer";

/// Asks the person behind the client of one 2025-11-25 session. When the
/// request fails (the client answers with an error, or the connection is
/// gone), the context's own asker answers, else the answer is "no person".
pub(crate) struct ElicitationAsker {
    peer: Peer<RoleServer>,
    fallback: Option<Arc<dyn Asker>>,
}

impl ElicitationAsker {
    /// An asker for this request when the client declared form elicitation
    /// in an `initialize` session; `None` otherwise (the 2026-07-28 era
    /// forbids server-to-client requests, and a client without the
    /// capability cannot be asked: the context's asker stays, see
    /// [`NoElicitation`]).
    pub(crate) fn for_request(
        request: &RequestContext<RoleServer>,
        ctx: &ToolContext,
    ) -> Option<Self> {
        if crate::approval::is_stateless_era(request) {
            return None;
        }
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
            fallback: ctx.asker().cloned(),
        })
    }
}

/// The asker of a call whose client cannot be asked and whose server set no
/// asker of its own: "no person", saying why (the client declared no form
/// elicitation, or the 2026-07-28 era, where a server may not send requests).
pub(crate) struct NoElicitation(&'static str);

impl NoElicitation {
    /// For a call that got no [`ElicitationAsker`]; `None` when the context
    /// has an asker (it stays).
    pub(crate) fn for_request(
        request: &RequestContext<RoleServer>,
        ctx: &ToolContext,
    ) -> Option<Self> {
        if ctx.asker().is_some() {
            return None;
        }
        Some(Self(if crate::approval::is_stateless_era(request) {
            "a 2026-07-28 MCP request cannot carry a question to the person behind the client"
        } else {
            "the MCP client did not declare the elicitation capability (form mode), so the \
             person behind it cannot be asked"
        }))
    }
}

impl Asker for NoElicitation {
    fn ask(
        &self,
        _question: Question,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Answer> + Send + 'static>> {
        let why = self.0;
        Box::pin(async move { Answer::NoPerson(why.to_owned()) })
    }
}

impl Asker for ElicitationAsker {
    fn ask(
        &self,
        question: Question,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Answer> + Send + 'static>> {
        let peer = self.peer.clone();
        let fallback = self.fallback.clone();
        Box::pin(async move {
            let request = ServerRequest::ElicitRequest(ElicitRequest::new(
                ElicitRequestParams::FormElicitationParams {
                    meta: None,
                    message: question.question.clone(),
                    requested_schema: question_form(&question),
                },
            ));
            // No timeout of rmcp's own: the question's timeout is applied
            // around this future (so its default, not an error, ends the
            // wait), and the guard tells the client when the wait ends early.
            let sent = peer
                .send_request_with_option(request, PeerRequestOptions::no_options())
                .await;
            let answered = match sent {
                Ok(handle) => {
                    let guard = CancelOnDrop {
                        peer: peer.clone(),
                        id: Some(handle.id.clone()),
                    };
                    let answered = handle.await_response().await;
                    guard.disarm();
                    answered
                }
                Err(e) => Err(e),
            };
            match answered {
                Ok(ClientResult::ElicitResult(answer)) => answer_of(&answer, &question),
                Ok(_) => {
                    ask_fallback(
                        fallback,
                        question,
                        "the MCP client answered the question with something other than a form"
                            .to_owned(),
                    )
                    .await
                }
                Err(e) => ask_fallback(fallback, question, client_error(&e)).await,
            }
        })
    }
}

/// Why the client could not be asked, for the model.
fn client_error(e: &ServiceError) -> String {
    format!("the MCP client could not be asked: {e}")
}

/// The context's own asker, when there is one; else "no person", with `why`.
/// When the fallback has nobody either, its reason follows `why` (the
/// client's failure comes first, so a host debugging its client is not
/// sent looking at a terminal).
async fn ask_fallback(fallback: Option<Arc<dyn Asker>>, question: Question, why: String) -> Answer {
    match fallback {
        Some(asker) => match asker.ask(question).await {
            Answer::NoPerson(also) => Answer::NoPerson(format!("{why}; and {also}")),
            other => other,
        },
        None => Answer::NoPerson(why),
    }
}

/// Sends `notifications/cancelled` for the request when dropped armed: the
/// question's timeout or the call's cancellation dropped the wait.
struct CancelOnDrop {
    peer: Peer<RoleServer>,
    id: Option<RequestId>,
}

impl CancelOnDrop {
    fn disarm(mut self) {
        self.id = None;
    }
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let peer = self.peer.clone();
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                let param = CancelledNotificationParam::new(
                    Some(id),
                    Some(
                        "the question was given up (its timeout, or the call was cancelled)"
                            .to_owned(),
                    ),
                );
                let _ = peer.notify_cancelled(param).await;
            });
        }
    }
}

/// The form of `question`: one required `answer` field, an enum of the
/// choices when there are some, free text otherwise; the default, if any,
/// as the field's default.
pub(crate) fn question_form(question: &Question) -> ElicitationSchema {
    let field = if question.choices.is_empty() {
        let mut text = StringSchema::new()
            .title("Answer")
            .description("Your answer, as free text.");
        if let Some(default) = &question.default {
            text = text.with_default(default.clone());
        }
        PrimitiveSchemaDefinition::String(text)
    } else {
        let builder = || {
            EnumSchema::builder(question.choices.clone())
                .title("Answer")
                .description("Pick one.")
        };
        // A default that is not a choice (ask_user refuses one) is left out.
        let builder = match &question.default {
            Some(default) => builder()
                .with_default(default.clone())
                .unwrap_or_else(|_| builder()),
            None => builder(),
        };
        PrimitiveSchemaDefinition::Enum(builder.build())
    };
    let properties = BTreeMap::from([(ANSWER_FIELD.to_owned(), field)]);
    ElicitationSchema::new(properties).with_required(vec![ANSWER_FIELD.to_owned()])
}

/// What the client's answer to [`question_form`] of `question` stands
/// for: an accepted form's `answer` text, when it is a string and (when the
/// question has choices) one of them; a decline or cancel, an accepted form
/// without an answer, or an answer of another type or outside the choices
/// is declined, with the reason for the model (the form asked for exactly
/// that, so anything else is the client's fault, never an answer).
pub(crate) fn answer_of(answer: &ElicitResult, question: &Question) -> Answer {
    match answer.action {
        ElicitationAction::Accept => {
            match answer.content.as_ref().and_then(|c| c.get(ANSWER_FIELD)) {
                Some(Value::String(text))
                    if question.choices.is_empty()
                        || question.choices.iter().any(|c| c == text.trim()) =>
                {
                    Answer::Answered(text.trim().to_owned())
                }
                Some(Value::String(text)) => Answer::Declined(format!(
                    "the MCP client sent {:?}, which is not one of the offered choices, so no \
                     choice was made",
                    tool_rules::text::clip(text, tool_rules::text::Clip::chars(80))
                )),
                Some(Value::Null) | None => Answer::Declined(
                    "the MCP client accepted the question but sent no `answer`".to_owned(),
                ),
                Some(other) => Answer::Declined(format!(
                    "the MCP client sent a {} as the answer, not the text the form asked for",
                    match other {
                        Value::Number(_) => "number",
                        Value::Bool(_) => "boolean",
                        Value::Array(_) => "list",
                        _ => "object",
                    }
                )),
            }
        }
        ElicitationAction::Decline => {
            Answer::Declined("the user declined the question in the MCP client".to_owned())
        }
        ElicitationAction::Cancel => {
            Answer::Declined("the user dismissed the question in the MCP client".to_owned())
        }
        _ => Answer::Declined("the MCP client answered with an unknown action".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{ElicitResult, ElicitationAction};
    use serde_json::json;
    use tool_core::{Answer, Question};

    use super::{answer_of, question_form};

    #[test]
    fn choices_become_an_enum_and_a_free_question_a_text_field() {
        let q = Question::new("Which database?")
            .with_choices(["sqlite", "postgres"])
            .with_default("postgres");
        assert_eq!(
            serde_json::to_value(question_form(&q)).unwrap(),
            json!({"type": "object", "properties": {"answer": {"type": "string", "title": "Answer",
                   "description": "Pick one.", "enum": ["sqlite", "postgres"], "default": "postgres"}},
                   "required": ["answer"]})
        );
        let free = Question::new("Name?");
        assert_eq!(
            serde_json::to_value(question_form(&free)).unwrap(),
            json!({"type": "object", "properties": {"answer": {"type": "string", "title": "Answer",
                   "description": "Your answer, as free text."}}, "required": ["answer"]})
        );
    }

    #[test]
    fn answers_declines_and_odd_forms() {
        let accept = |content| ElicitResult::new(ElicitationAction::Accept).with_content(content);
        let free = Question::new("Name?");
        let pick = Question::new("Colour?").with_choices(["red", "blue"]);
        assert_eq!(
            answer_of(&accept(json!({"answer": "blue"})), &pick),
            Answer::Answered("blue".into())
        );
        assert_eq!(
            answer_of(&accept(json!({"answer": "anything"})), &free),
            Answer::Answered("anything".into())
        );
        // Outside the choices, or not text: never taken as the answer.
        assert!(matches!(
            answer_of(&accept(json!({"answer": "green"})), &pick),
            Answer::Declined(why) if why.contains("\"green\", which is not one of the offered choices")
        ));
        assert!(matches!(
            answer_of(&accept(json!({"answer": 12345, "extra": "x"})), &pick),
            Answer::Declined(why) if why.contains("sent a number")
        ));
        assert!(matches!(
            answer_of(&accept(json!({"answer": 7})), &free),
            Answer::Declined(why) if why.contains("sent a number")
        ));
        assert!(matches!(
            answer_of(&accept(json!({})), &free),
            Answer::Declined(_)
        ));
        assert!(matches!(
            answer_of(&ElicitResult::new(ElicitationAction::Decline), &free),
            Answer::Declined(why) if why.contains("declined")
        ));
        assert!(matches!(
            answer_of(&ElicitResult::new(ElicitationAction::Cancel), &free),
            Answer::Declined(why) if why.contains("dismissed")
        ));
    }

    #[tokio::test]
    async fn a_client_error_comes_before_the_fallbacks_reason() {
        let terminal: std::sync::Arc<dyn tool_core::Asker> =
            std::sync::Arc::new(|_q: Question| async {
                Answer::NoPerson("stderr is not a terminal".to_owned())
            });
        let answer = super::ask_fallback(
            Some(terminal),
            Question::new("Go?"),
            "the MCP client could not be asked: client exploded".to_owned(),
        )
        .await;
        assert_eq!(
            answer,
            Answer::NoPerson(
                "the MCP client could not be asked: client exploded; and stderr is not a terminal"
                    .to_owned()
            )
        );
    }
}
