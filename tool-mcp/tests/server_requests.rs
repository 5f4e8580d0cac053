//! Requests a server sends the client (issue 26): sampling answered by the
//! host's model, elicitation by the calling context's asker and approver,
//! and progress reports that all reach the caller before the result, also
//! through a re-export. Against the fixture server, a real process.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tool_core::{Answer, Progress, Question, ToolContext, ToolRegistry};
use tool_mcp::{
    LiveRegistry, McpServer, McpToolSource, ProtocolEra, SamplingAnswer, SamplingRequest,
    SamplingRole,
};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

fn fixture() -> McpToolSource {
    McpToolSource::stdio(FIXTURE, std::iter::empty::<&str>(), [("RUST_LOG", "off")])
        .named("fx")
        // Server requests (`sampling/createMessage`, `elicitation/create`)
        // are of the 2025-11-25 era.
        .with_era(ProtocolEra::Initialize)
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[tokio::test]
async fn sampling_is_answered_by_the_hosts_model() {
    let seen: Arc<Mutex<Vec<SamplingRequest>>> = Arc::default();
    let log = Arc::clone(&seen);
    let conn = fixture()
        .with_sampler(move |request: SamplingRequest| {
            log.lock().unwrap().push(request.clone());
            let last = request
                .messages
                .last()
                .map(|m| m.text.clone())
                .unwrap_or_default();
            async move { Ok(SamplingAnswer::new(format!("echo: {last}"), "scripted-1")) }
        })
        .connect()
        .await
        .unwrap();
    let result = conn
        .call(
            "test_sampling",
            args(json!({"prompt": "What is 2+2?"})),
            &ToolContext::new(),
        )
        .await;
    assert!(result.error.is_none(), "{result:?}");
    assert_eq!(
        result.output,
        r#"LLM response: {"type":"text","text":"echo: What is 2+2?"}"#
    );
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].server, "fx");
    assert_eq!(seen[0].messages[0].role, SamplingRole::User);
    assert_eq!(seen[0].max_tokens, 100);
}

#[tokio::test]
async fn without_a_model_sampling_is_refused_with_the_reason() {
    let conn = fixture().connect().await.unwrap();
    let result = conn
        .call(
            "test_sampling",
            args(json!({"prompt": "hi"})),
            &ToolContext::new(),
        )
        .await;
    let error = result.error.expect("no model, no sampling");
    assert!(
        error.message.contains("offers no sampling"),
        "{}",
        error.message
    );
}

#[tokio::test]
async fn sampling_through_a_scripted_agent_client() {
    let client = tool_agent::ScriptedClient::new([tool_agent::ScriptedTurn::text("four")]);
    let conn = fixture()
        .with_sampler(tool_mcp::AgentSampler::new(Arc::new(client)))
        .connect()
        .await
        .unwrap();
    let result = conn
        .call(
            "test_sampling",
            args(json!({"prompt": "What is 2+2?"})),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(
        result.output, r#"LLM response: {"type":"text","text":"four"}"#,
        "{result:?}"
    );
}

#[tokio::test]
async fn a_form_is_filled_in_through_the_callers_asker() {
    let conn = fixture().connect().await.unwrap();
    let questions: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&questions);
    let ctx = ToolContext::new().with_asker(move |q: Question| {
        log.lock().unwrap().push(q.question.clone());
        let answer = if q.question.ends_with("User's email address") {
            "ada@example.org"
        } else {
            "ada"
        };
        async move { Answer::Answered(answer.to_owned()) }
    });
    let result = conn
        .call(
            "test_elicitation",
            args(json!({"message": "Who are you?"})),
            &ctx,
        )
        .await;
    assert_eq!(
        result.output,
        r#"Elicitation completed: action="accept", content={"username":"ada","email":"ada@example.org"}"#,
        "{result:?}"
    );
    let questions = questions.lock().unwrap();
    assert_eq!(questions.len(), 2);
    assert!(
        questions[0].starts_with("MCP server `fx` asks: Who are you?\nusername"),
        "{questions:?}"
    );
}

#[tokio::test]
async fn empty_answers_take_the_forms_defaults_typed() {
    let conn = fixture().connect().await.unwrap();
    let choices: Arc<Mutex<Vec<Vec<String>>>> = Arc::default();
    let log = Arc::clone(&choices);
    let ctx = ToolContext::new().with_asker(move |q: Question| {
        log.lock().unwrap().push(q.choices.clone());
        async { Answer::Answered(String::new()) }
    });
    let result = conn
        .call("test_elicitation_sep1034_defaults", Map::new(), &ctx)
        .await;
    assert_eq!(
        result.output,
        r#"Elicitation completed: action="accept", content={"name":"John Doe","age":30,"score":95.5,"status":"active","verified":true}"#,
        "{result:?}"
    );
    // Fields in the form's order: name, age, score, status, verified.
    assert_eq!(
        *choices.lock().unwrap(),
        vec![
            vec![],
            vec![],
            vec![],
            vec![
                "active".to_owned(),
                "inactive".to_owned(),
                "pending".to_owned()
            ],
            vec!["true".to_owned(), "false".to_owned()],
        ]
    );
}

/// Review 26, F11: an answer that does not fit its field (not a whole
/// number, not one of the choices) is refused and the question asked
/// again, saying why; only answers that fit reach the server. Three
/// misfits in a row decline the form.
#[tokio::test]
async fn answers_that_do_not_fit_the_form_are_asked_again_never_sent() {
    let conn = fixture().connect().await.unwrap();
    let questions: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&questions);
    let ctx = ToolContext::new().with_asker(move |q: Question| {
        let mut log = log.lock().unwrap();
        let again = q.question.starts_with("The answer was refused");
        let answer = if q.question.ends_with("User age") {
            if again { "41" } else { "two hundred" }
        } else if q.question.ends_with("User status") {
            if again { "pending" } else { "deleted" }
        } else {
            ""
        };
        log.push(q.question.clone());
        async move { Answer::Answered(answer.to_owned()) }
    });
    let result = conn
        .call("test_elicitation_sep1034_defaults", Map::new(), &ctx)
        .await;
    assert_eq!(
        result.output,
        r#"Elicitation completed: action="accept", content={"name":"John Doe","age":41,"score":95.5,"status":"pending","verified":true}"#,
        "{result:?}"
    );
    let questions = questions.lock().unwrap().clone();
    assert_eq!(questions.len(), 7, "{questions:#?}");
    assert!(
        questions[2].starts_with(
            "The answer was refused: `age` must be a whole number; `two hundred` is not. \
             Please answer again.\nMCP server `fx` asks:"
        ),
        "{questions:#?}"
    );
    assert!(
        questions[5].starts_with(
            r#"The answer was refused: `status` must be one of "active", "inactive", "pending"; "deleted" is not."#
        ),
        "{questions:#?}"
    );

    // Someone who keeps answering what does not fit: declined.
    let stubborn =
        ToolContext::new().with_asker(|_q: Question| async { Answer::Answered("x".into()) });
    let result = conn
        .call("test_elicitation_sep1034_defaults", Map::new(), &stubborn)
        .await;
    assert_eq!(
        result.output,
        r#"Elicitation completed: action="decline", content=null"#
    );
}

#[tokio::test]
async fn a_declined_question_or_no_person_declines_the_form() {
    let conn = fixture().connect().await.unwrap();
    let declining =
        ToolContext::new().with_asker(|_q: Question| async { Answer::Declined("no".into()) });
    for ctx in [declining, ToolContext::new()] {
        let result = conn
            .call("test_elicitation", args(json!({"message": "?"})), &ctx)
            .await;
        assert_eq!(
            result.output,
            r#"Elicitation completed: action="decline", content=null"#
        );
    }
}

/// Issue 26: through a re-export the last of three progress reports was
/// lost. The fixture's `progress_burst` sends its reports with no pause and
/// answers at once, the case that lost the last one; every report must
/// reach the caller, in order, directly and through `McpServer` over HTTP,
/// in both eras.
#[tokio::test]
async fn every_progress_report_arrives_before_the_result() {
    let imported = McpToolSource::stdio(FIXTURE, std::iter::empty::<&str>(), [("RUST_LOG", "off")])
        .named("fx")
        .connect()
        .await
        .unwrap();
    let live = LiveRegistry::new(ToolRegistry::new());
    imported.import_into(&live).await.unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let check = async |conn: &tool_mcp::McpConnection, tool: &str, what: &str| {
        for round in 0..20 {
            let seen = Arc::new(Mutex::new(Vec::new()));
            let sink = Arc::clone(&seen);
            let ctx = ToolContext::new().with_progress_sink(move |p: Progress| {
                sink.lock().unwrap().push(p.progress);
            });
            let result = conn.call(tool, args(json!({"count": 3})), &ctx).await;
            assert_eq!(result.output, "3 reports", "{what}");
            assert_eq!(
                *seen.lock().unwrap(),
                vec![1.0, 2.0, 3.0],
                "{what} round {round}"
            );
        }
    };
    check(&imported, "progress_burst", "direct").await;
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let upstream = McpToolSource::http(format!("http://{addr}/mcp"))
            .with_era(era)
            .connect()
            .await
            .unwrap();
        check(&upstream, "fx__progress_burst", &format!("{era:?}")).await;
    }
    stop.cancel();
}

/// Through a re-export (`tool --mcp-config F serve` in small) an imported
/// server's form reaches the person behind the upstream client: the
/// re-exporting server asks each field as an `elicitation/create` of its
/// own (one `answer` field) in 2025-11-25 sessions, and the upstream
/// client's asker answers it.
#[tokio::test]
async fn a_form_through_a_reexport_is_answered_upstream() {
    let imported = fixture().connect().await.unwrap();
    let live = LiveRegistry::new(ToolRegistry::new());
    imported.import_into(&live).await.unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(live)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    let upstream = McpToolSource::http(format!("http://{addr}/mcp"))
        .with_era(ProtocolEra::Initialize)
        .connect()
        .await
        .unwrap();
    let questions: Arc<Mutex<Vec<String>>> = Arc::default();
    let log = Arc::clone(&questions);
    let ctx = ToolContext::new().with_asker(move |q: Question| {
        log.lock().unwrap().push(q.question.clone());
        let answer = if q.question.contains("email") {
            "ada@example.org"
        } else {
            "ada"
        };
        async move { Answer::Answered(answer.to_owned()) }
    });
    let result = upstream
        .call(
            "fx__test_elicitation",
            args(json!({"message": "Who are you?"})),
            &ctx,
        )
        .await;
    assert_eq!(
        result.output,
        r#"Elicitation completed: action="accept", content={"username":"ada","email":"ada@example.org"}"#,
        "{result:?}"
    );
    let questions = questions.lock().unwrap();
    assert_eq!(questions.len(), 2, "{questions:?}");
    // The upstream person sees the origin server's question, relayed.
    assert!(questions[0].contains("Who are you?"), "{questions:?}");
    stop.cancel();
}
