//! `ask_user` served over MCP (issue 27): the question goes to the person
//! behind the client as an `elicitation/create` form when the client
//! declared elicitation, through rmcp's own client. Answers, choices,
//! declines, a wait given up, and a client without the capability.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tool_core::{Answer, Question, ToolContext};
use tool_mcp::McpServer;
use tool_mcp::rmcp::model::{
    CallToolRequestParams, CallToolResult, ClientCapabilities, ElicitRequestParams, ElicitResult,
    ElicitationAction, ElicitationCapability, FormElicitationCapability,
};
use tool_mcp::rmcp::service::{RequestContext, RunningService};
use tool_mcp::rmcp::{ClientHandler, ErrorData, RoleClient, ServiceExt};

/// How the person behind the test client answers.
#[derive(Clone)]
enum Reply {
    Accept(Value),
    Decline,
    Cancel,
    /// Never answers; the handler waits for the server's cancellation.
    Never,
}

/// The test client: declares form elicitation when `capable`, answers every
/// form with `reply`, and keeps what it was asked and whether a request
/// was cancelled.
#[derive(Clone)]
struct Person {
    capable: bool,
    reply: Arc<Mutex<Reply>>,
    asked: Arc<Mutex<Vec<(String, Value)>>>,
    cancelled: Arc<Mutex<usize>>,
}

impl Person {
    fn new(capable: bool) -> Self {
        Self {
            capable,
            reply: Arc::new(Mutex::new(Reply::Decline)),
            asked: Arc::default(),
            cancelled: Arc::default(),
        }
    }
}

impl ClientHandler for Person {
    fn get_info(&self) -> tool_mcp::rmcp::model::ClientConfig {
        let mut info = tool_mcp::rmcp::model::ClientConfig::default();
        if self.capable {
            let mut capabilities = ClientCapabilities::default();
            capabilities.elicitation =
                Some(ElicitationCapability::new().with_form(FormElicitationCapability::new()));
            info.capabilities = capabilities;
        }
        info
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Err(ErrorData::invalid_params("only forms", None));
        };
        self.asked
            .lock()
            .unwrap()
            .push((message, serde_json::to_value(requested_schema).unwrap()));
        let reply = self.reply.lock().unwrap().clone();
        Ok(match reply {
            Reply::Accept(content) => {
                ElicitResult::new(ElicitationAction::Accept).with_content(content)
            }
            Reply::Decline => ElicitResult::new(ElicitationAction::Decline),
            Reply::Cancel => ElicitResult::new(ElicitationAction::Cancel),
            Reply::Never => {
                context.ct.cancelled().await;
                *self.cancelled.lock().unwrap() += 1;
                ElicitResult::new(ElicitationAction::Cancel)
            }
        })
    }
}

/// Serves tool-builtins (with `ask_user`) in process, with `context` as the
/// server's base context, to a [`Person`].
async fn connect(person: &Person, context: ToolContext) -> RunningService<RoleClient, Person> {
    let (client_side, server_side) = tokio::io::duplex(1 << 16);
    let server = McpServer::new(tool_builtins::registry()).with_context(context);
    tokio::spawn(server.serve_transport(tokio::io::split(server_side)));
    person
        .clone()
        .serve(tokio::io::split(client_side))
        .await
        .expect("client connects")
}

async fn ask(client: &RunningService<RoleClient, Person>, arguments: Value) -> CallToolResult {
    let Value::Object(arguments) = arguments else {
        panic!("arguments must be an object");
    };
    client
        .call_tool(CallToolRequestParams::new("ask_user").with_arguments(arguments))
        .await
        .unwrap()
}

fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn ask_user_asks_the_person_behind_the_client_with_a_form() {
    // The server's own asker must not be used while the client can be asked.
    let host = ToolContext::new()
        .with_asker(|_q: Question| async { Answer::Answered("from the server".into()) });
    let person = Person::new(true);
    let client = connect(&person, host).await;

    // A free question: a text field, answered with text.
    *person.reply.lock().unwrap() = Reply::Accept(json!({"answer": "blue"}));
    let answered = ask(&client, json!({"question": "Which colour?"})).await;
    assert_eq!(answered.is_error, Some(false), "{answered:?}");
    assert_eq!(text(&answered), "The user answered: blue");
    {
        let asked = person.asked.lock().unwrap();
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].0, "Which colour?");
        assert_eq!(
            asked[0].1,
            json!({"type": "object", "properties": {"answer": {"type": "string", "title": "Answer",
                   "description": "Your answer, as free text."}}, "required": ["answer"]})
        );
    }

    // Choices: an enum with the default, answered with one of them.
    *person.reply.lock().unwrap() = Reply::Accept(json!({"answer": "sqlite"}));
    let picked = ask(
        &client,
        json!({"question": "Which database?", "choices": ["sqlite", "postgres"], "default": "postgres"}),
    )
    .await;
    assert_eq!(text(&picked), "The user answered: sqlite");
    assert_eq!(
        person.asked.lock().unwrap()[1].1,
        json!({"type": "object", "properties": {"answer": {"type": "string", "title": "Answer",
               "description": "Pick one.", "enum": ["sqlite", "postgres"], "default": "postgres"}},
               "required": ["answer"]})
    );

    // Declined and dismissed: a result that says so, not an error.
    *person.reply.lock().unwrap() = Reply::Decline;
    let declined = ask(&client, json!({"question": "Deploy now?"})).await;
    assert_eq!(declined.is_error, Some(false), "{declined:?}");
    assert_eq!(
        text(&declined),
        "The user declined to answer (the user declined the question in the MCP client). Go on \
         without the answer, or ask differently."
    );
    *person.reply.lock().unwrap() = Reply::Cancel;
    let dismissed = ask(&client, json!({"question": "Deploy now?"})).await;
    assert!(
        text(&dismissed).contains("the user dismissed the question in the MCP client"),
        "{dismissed:?}"
    );
    assert_eq!(person.asked.lock().unwrap().len(), 4);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_question_nobody_answers_ends_at_its_timeout_and_the_client_is_told() {
    let person = Person::new(true);
    *person.reply.lock().unwrap() = Reply::Never;
    let client = connect(&person, ToolContext::new()).await;
    let started = Instant::now();
    let result = ask(
        &client,
        json!({"question": "Go?", "choices": ["yes", "no"], "default": "no", "timeout": 0.3}),
    )
    .await;
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_eq!(
        text(&result),
        "Nobody answered within 0.3 s; the default answer is used: no"
    );
    // The client's pending form is cancelled (notifications/cancelled).
    let deadline = Instant::now() + Duration::from_secs(10);
    while *person.cancelled.lock().unwrap() == 0 && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(*person.cancelled.lock().unwrap(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_client_without_elicitation_gets_a_refusal_that_says_why() {
    let person = Person::new(false);
    let client = connect(&person, ToolContext::new()).await;
    let refused = ask(&client, json!({"question": "Which colour?"})).await;
    assert_eq!(refused.is_error, Some(true), "{refused:?}");
    let message = text(&refused);
    assert!(
        message.starts_with("Error: No person is present to answer"),
        "{message}"
    );
    assert!(
        message.contains("the MCP client did not declare the elicitation capability"),
        "{message}"
    );
    assert!(person.asked.lock().unwrap().is_empty());
    client.cancel().await.unwrap();
}
