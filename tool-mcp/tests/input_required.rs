//! A tool asks for input through its context (`tool_mcp::input`, issue 26,
//! SEP-2322): as server requests in 2025-11-25 sessions, as input-required
//! results with a sealed `requestState` in the 2026-07-28 era, and through
//! the host's hooks outside MCP. And `x-mcp-header` parameters (SEP-2243)
//! over Streamable HTTP. Against the fixture server (a real process) and
//! in-process servers on real sockets, with this crate's client and raw
//! JSON-RPC over HTTP.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]
#![allow(
    clippy::needless_pass_by_value,
    reason = "test helpers take JSON values as they are written"
)]
#![allow(
    deprecated,
    reason = "roots are deprecated from 2026-07-28 (SEP-2577), still part of it; a tool may ask for them"
)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tool_core::{Answer, Question, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
use tool_mcp::input::{self, HostRoots, HostSampler, InputKind, InputRequest};
use tool_mcp::rmcp::model::{ElicitationSchema, Root};
use tool_mcp::{
    LiveRegistry, MAX_REQUEST_STATE_BYTES, McpServer, McpToolSource, ProtocolEra, SamplingAnswer,
    SamplingRequest,
};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

/// An asker that answers `blue` to a question about a colour, else `ada`.
fn asker_ctx(questions: Arc<Mutex<Vec<String>>>) -> ToolContext {
    ToolContext::new().with_asker(move |q: Question| {
        questions.lock().unwrap().push(q.question.clone());
        let answer = if q.question.contains("color") {
            "blue"
        } else {
            "ada"
        };
        async move { Answer::Answered(answer.to_owned()) }
    })
}

fn sampler(
    request: SamplingRequest,
) -> impl std::future::Future<Output = Result<SamplingAnswer, String>> {
    let last = request
        .messages
        .last()
        .map(|m| m.text.clone())
        .unwrap_or_default();
    async move { Ok(SamplingAnswer::new(format!("echo: {last}"), "scripted-1")) }
}

#[tokio::test]
async fn the_same_tool_asks_in_both_eras_through_our_client() {
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let conn = McpToolSource::stdio(FIXTURE, std::iter::empty::<&str>(), [("RUST_LOG", "off")])
            .named("fx")
            .with_era(era)
            .with_sampler(sampler)
            .with_roots(["/work/project"])
            .connect()
            .await
            .unwrap();
        let questions = Arc::default();
        let ctx = asker_ctx(Arc::clone(&questions));
        let all = conn
            .call(
                "test_input_required_result_multiple_inputs",
                Map::new(),
                &ctx,
            )
            .await;
        assert_eq!(
            all.output, "name=ada, greeting=echo: Generate a greeting, roots=file:///work/project",
            "{era:?}: {all:?}"
        );
        // Two rounds in 2026-07-28 (the second runs the tool again and
        // finds step 1's answer in the sealed state), two requests in 2025.
        let rounds = conn
            .call("test_input_required_result_multi_round", Map::new(), &ctx)
            .await;
        assert_eq!(rounds.output, "ada likes blue", "{era:?}: {rounds:?}");
        let asked = questions.lock().unwrap().clone();
        assert_eq!(asked.len(), 3, "{era:?}: each question once: {asked:?}");
        assert!(asked[2].contains("Step 2"), "{asked:?}");
    }
}

#[tokio::test]
async fn a_client_without_sampling_or_roots_is_not_asked_for_them_in_either_era() {
    for era in [ProtocolEra::Initialize, ProtocolEra::Discover] {
        let conn = McpToolSource::stdio(FIXTURE, std::iter::empty::<&str>(), [("RUST_LOG", "off")])
            .named("fx")
            .with_era(era)
            .connect()
            .await
            .unwrap();
        let ctx = asker_ctx(Arc::default());
        let some = conn
            .call("test_input_required_result_capabilities", Map::new(), &ctx)
            .await;
        assert_eq!(some.output, "answered: user_name", "{era:?}: {some:?}");
        let roots = conn
            .call("test_input_required_result_list_roots", Map::new(), &ctx)
            .await;
        let error = roots.error.expect("no roots capability");
        assert!(
            error.message.contains(
                "cannot ask for roots/list here: the MCP client did not declare this capability"
            ),
            "{era:?}: {}",
            error.message
        );
    }
}

// ---------------------------------------------------------------------------
// Raw JSON-RPC over HTTP, 2026-07-28.
// ---------------------------------------------------------------------------

/// One HTTP/1.0 POST of a 2026-07-28 request to `/mcp` (headers as the
/// spec asks: protocol version, `Mcp-Method`, `Mcp-Name`, plus `extra`); the
/// status and the JSON-RPC answer (from a JSON body or the SSE stream).
async fn post(
    addr: SocketAddr,
    method: &str,
    params: Value,
    extra: &[(&str, &str)],
) -> (u16, Value) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let body = json!({"jsonrpc": "2.0", "id": 7, "method": method, "params": params}).to_string();
    let mut head = format!(
        "POST /mcp HTTP/1.0\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: {method}\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(name) = params.get("name").and_then(Value::as_str) {
        head.push_str(&format!("Mcp-Name: {name}\r\n"));
    }
    for (name, value) in extra {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(body.as_bytes()).await.unwrap();
    let mut response = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(30), stream.read_to_end(&mut response)).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {text:?}"));
    let body = text.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    let answer = serde_json::from_str(body).ok().or_else(|| {
        body.lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
            .find(|m| m.get("id").is_some())
    });
    (
        status,
        answer.unwrap_or_else(|| panic!("no JSON-RPC answer in {text:?}")),
    )
}

/// `params` with the per-request `_meta` of 2026-07-28 and these client
/// capabilities.
fn with_meta(mut params: Value, capabilities: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "raw-test", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    });
    params
}

fn all_capabilities() -> Value {
    json!({"elicitation": {}, "sampling": {}, "roots": {}})
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// A form with one required string field.
fn form(message: &str, field: &str) -> InputRequest {
    let schema = ElicitationSchema::builder()
        .required_string_property(field, |s| s)
        .build()
        .unwrap();
    InputRequest::form(message, schema)
}

/// An in-process server over HTTP with `book` (asks a city, then a date,
/// counting its completed runs in `runs`) and `probe` (says which kinds
/// it may ask).
async fn serve(runs: Arc<Mutex<Vec<String>>>) -> (SocketAddr, tokio_util::sync::CancellationToken) {
    let mut registry = ToolRegistry::new();
    let spec = ToolSpec::new(
        "book",
        "Books a trip.",
        json!({"type": "object", "properties": {"who": {"type": "string"}}}),
    );
    let book = Tool::new(spec, move |args: Map<String, Value>, ctx: ToolContext| {
        let runs = Arc::clone(&runs);
        async move {
            let city = match input::ask_one(&ctx, "city", form("Which city?", "city")).await {
                Ok(answer) => answer.form_field("city").cloned().unwrap_or_default(),
                Err(e) => {
                    return ToolResult::error(tool_core::ErrorKind::Failed, e.to_string());
                }
            };
            let date = match input::ask_one(&ctx, "date", form("Which date?", "date")).await {
                Ok(answer) => answer.form_field("date").cloned().unwrap_or_default(),
                Err(e) => {
                    return ToolResult::error(tool_core::ErrorKind::Failed, e.to_string());
                }
            };
            let who = args.get("who").and_then(Value::as_str).unwrap_or("?");
            let line = format!(
                "{who} to {} on {}",
                city.as_str().unwrap_or("?"),
                date.as_str().unwrap_or("?")
            );
            runs.lock().unwrap().push(line.clone());
            ToolResult::ok(line)
        }
    })
    .unwrap();
    registry.register(book).unwrap();
    let spec = ToolSpec::new("rate", "Asks for 1 to 5 stars.", json!({"type": "object"}));
    let rate = Tool::new(
        spec,
        |_args: Map<String, Value>, ctx: ToolContext| async move {
            let schema = ElicitationSchema::builder()
                .required_integer("stars", 1, 5)
                .build()
                .unwrap();
            let form = InputRequest::form("How many stars?", schema);
            match input::ask_one(&ctx, "stars", form).await {
                Ok(answer) => ToolResult::ok(format!(
                    "rated {}",
                    answer.form_field("stars").cloned().unwrap_or_default()
                )),
                Err(e) => ToolResult::error(tool_core::ErrorKind::Failed, e.to_string()),
            }
        },
    )
    .unwrap();
    registry.register(rate).unwrap();
    let spec = ToolSpec::new("probe", "Says what it may ask.", json!({"type": "object"}));
    let probe = Tool::new(
        spec,
        |_args: Map<String, Value>, ctx: ToolContext| async move {
            let kinds = [
                InputKind::Elicitation,
                InputKind::Sampling,
                InputKind::Roots,
            ]
            .into_iter()
            .filter(|k| input::can_ask(&ctx, *k))
            .map(|k| k.to_string())
            .collect::<Vec<_>>();
            let refused = match input::ask_one(&ctx, "name", form("Name?", "name")).await {
                Ok(_) => "asked".to_owned(),
                Err(e) => e.to_string(),
            };
            ToolResult::ok(format!(
                "may ask: [{}]; elicitation: {refused}",
                kinds.join(", ")
            ))
        },
    )
    .unwrap();
    registry.register(probe).unwrap();
    let spec = ToolSpec::new("summarise", "Needs a model.", json!({"type": "object"}));
    let summarise = Tool::new(
        spec,
        |_args: Map<String, Value>, ctx: ToolContext| async move {
            if let Err(e) = input::require(&ctx, InputKind::Sampling).await {
                return ToolResult::error(tool_core::ErrorKind::Failed, e.to_string());
            }
            ToolResult::ok("would sample")
        },
    )
    .unwrap();
    registry.register(summarise).unwrap();
    let catalog = tool_mcp::Catalog::new();
    catalog.add_prompt(tool_mcp::Prompt::with_context(
        "trip",
        "Plans a trip.",
        |_args, ctx: ToolContext| async move {
            let city = input::ask_one(&ctx, "city", form("Which city?", "city"))
                .await
                .map_err(|e| e.to_string())?;
            let text = format!(
                "Plan a trip to {}.",
                city.form_field("city")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            );
            Ok::<_, String>(vec![tool_mcp::rmcp::model::PromptMessage::new_text(
                tool_mcp::rmcp::model::Role::User,
                text,
            )])
        },
    ));
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(LiveRegistry::new(registry))
        .with_catalog(catalog)
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    (addr, stop)
}

fn call(name: &str, arguments: Value, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": arguments});
    if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
        params.extend(extra);
    }
    with_meta(params, all_capabilities())
}

#[tokio::test]
async fn rounds_carry_answers_in_a_sealed_state_and_refuse_a_changed_one() {
    let runs = Arc::default();
    let (addr, stop) = serve(Arc::clone(&runs)).await;
    let args = json!({"who": "ada"});
    // Round 1: the first question, with a state.
    let (status, first) = post(
        addr,
        "tools/call",
        call("book", args.clone(), json!({})),
        &[],
    )
    .await;
    assert_eq!(status, 200, "{first}");
    let result = &first["result"];
    assert_eq!(result["resultType"], "input_required", "{first}");
    assert_eq!(
        result["inputRequests"]["city"]["method"],
        "elicitation/create"
    );
    assert_eq!(
        result["inputRequests"]["city"]["params"]["message"],
        "Which city?"
    );
    let state1 = result["requestState"].as_str().unwrap().to_owned();
    // Round 2: city answered; the date is asked with a new state.
    let round2 = json!({"inputResponses": {"city": accept(json!({"city": "Oslo"}))}, "requestState": state1});
    let (_, second) = post(addr, "tools/call", call("book", args.clone(), round2), &[]).await;
    let result = &second["result"];
    assert_eq!(result["resultType"], "input_required", "{second}");
    assert_eq!(
        result["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["date"],
        "only the missing answer is asked: {second}"
    );
    let state2 = result["requestState"].as_str().unwrap().to_owned();
    assert_ne!(state1, state2);
    // A wrong key and a malformed answer: asked again, not an error.
    let wrong = json!({"inputResponses": {"dat": accept(json!({"date": "x"})), "date": 12345}, "requestState": state2});
    let (_, again) = post(addr, "tools/call", call("book", args.clone(), wrong), &[]).await;
    assert_eq!(again["result"]["resultType"], "input_required", "{again}");
    assert!(
        again["result"]["inputRequests"]["date"].is_object(),
        "{again}"
    );
    // Round 3: complete; the city came from the sealed state; extra keys ignored.
    let round3 = json!({
        "inputResponses": {"date": accept(json!({"date": "May 1"})), "unasked": accept(json!({}))},
        "requestState": state2
    });
    let (_, done) = post(addr, "tools/call", call("book", args.clone(), round3), &[]).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "ada to Oslo on May 1",
        "{done}"
    );
    assert_eq!(done["result"]["isError"], false, "{done}");
    assert_eq!(runs.lock().unwrap().clone(), ["ada to Oslo on May 1"]);

    // A changed state is refused with -32602 and never read.
    let mut tampered = state2.clone();
    tampered.push('x');
    let changed = json!({"inputResponses": {"date": accept(json!({"date": "May 1"}))}, "requestState": tampered});
    let (status, refused) =
        post(addr, "tools/call", call("book", args.clone(), changed), &[]).await;
    assert_eq!(status, 200, "{refused}");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("integrity check") && message.contains("call again without requestState"),
        "{message}"
    );
    // The state of these arguments is refused for other arguments.
    let other = json!({"inputResponses": {"date": accept(json!({"date": "May 1"}))}, "requestState": state2});
    let (_, refused) = post(
        addr,
        "tools/call",
        call("book", json!({"who": "eve"}), other),
        &[],
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    // An oversized state is refused before it is read.
    let huge = "A".repeat(MAX_REQUEST_STATE_BYTES + 1);
    let oversized = json!({"inputResponses": {}, "requestState": huge});
    let (_, refused) = post(
        addr,
        "tools/call",
        call("book", args.clone(), oversized),
        &[],
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.contains(&format!("over the limit of {MAX_REQUEST_STATE_BYTES}")),
        "{message}"
    );
    // None of these ran the tool.
    assert_eq!(runs.lock().unwrap().len(), 1);
    stop.cancel();
}

/// Review 26, F11, the server side: a client's answer that does not fit
/// the form the tool asked (a number over its maximum, text for a number,
/// a required field missing) never reaches the tool: the form is asked
/// again, its message saying why. (A field an open form does not list is
/// allowed, as in JSON Schema: `form_check`'s unit tests.)
#[tokio::test]
async fn answers_that_do_not_fit_the_form_are_asked_again_never_given_to_the_tool() {
    let (addr, stop) = serve(Arc::default()).await;
    let (_, first) = post(addr, "tools/call", call("rate", json!({}), json!({})), &[]).await;
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    for (answer, why) in [
        (json!({"stars": 9}), "`stars` must be at most 5; 9 is more"),
        (
            json!({"stars": "four"}),
            r#"`stars` must be a whole number; "four" is not"#,
        ),
        (json!({}), "`stars` is required"),
    ] {
        let round =
            json!({"inputResponses": {"stars": accept(answer.clone())}, "requestState": state});
        let (_, again) = post(addr, "tools/call", call("rate", json!({}), round), &[]).await;
        assert_eq!(
            again["result"]["resultType"], "input_required",
            "{answer}: {again}"
        );
        let message = again["result"]["inputRequests"]["stars"]["params"]["message"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(
            message,
            format!("Your answer was refused: {why}. Please answer again.\n\nHow many stars?"),
            "{answer}"
        );
    }
    let round =
        json!({"inputResponses": {"stars": accept(json!({"stars": 4}))}, "requestState": state});
    let (_, done) = post(addr, "tools/call", call("rate", json!({}), round), &[]).await;
    assert_eq!(done["result"]["content"][0]["text"], "rated 4", "{done}");
    stop.cancel();
}

#[tokio::test]
async fn only_declared_capabilities_are_asked_and_lists_never_ask() {
    let (addr, stop) = serve(Arc::default()).await;
    let params = with_meta(
        json!({"name": "probe", "arguments": {}}),
        json!({"sampling": {}}),
    );
    let (_, answer) = post(addr, "tools/call", params, &[]).await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "may ask: [sampling/createMessage]; elicitation: cannot ask for elicitation/create here: the MCP client did not declare this capability",
        "{answer}"
    );
    let (_, listed) = post(
        addr,
        "tools/list",
        with_meta(json!({}), all_capabilities()),
        &[],
    )
    .await;
    assert!(
        listed["result"]["resultType"] != "input_required",
        "{listed}"
    );
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    stop.cancel();
}

#[tokio::test]
async fn a_prompt_asks_too_and_a_missing_capability_is_32021() {
    let (addr, stop) = serve(Arc::default()).await;
    let get = |extra: Value| {
        let mut params = json!({"name": "trip"});
        if let (Value::Object(params), Value::Object(extra)) = (&mut params, extra) {
            params.extend(extra);
        }
        with_meta(params, all_capabilities())
    };
    let (_, first) = post(addr, "prompts/get", get(json!({})), &[]).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let state = first["result"]["requestState"].as_str().unwrap().to_owned();
    let answered =
        json!({"inputResponses": {"city": accept(json!({"city": "Rome"}))}, "requestState": state});
    let (_, done) = post(addr, "prompts/get", get(answered), &[]).await;
    assert_eq!(
        done["result"]["messages"][0]["content"]["text"], "Plan a trip to Rome.",
        "{done}"
    );
    // A tool's state is not a prompt's.
    let (_, tool_round) = post(addr, "tools/call", call("book", json!({}), json!({})), &[]).await;
    let tool_state = tool_round["result"]["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let foreign = json!({"inputResponses": {"city": accept(json!({"city": "Rome"}))}, "requestState": tool_state});
    let (_, refused) = post(addr, "prompts/get", get(foreign), &[]).await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // A tool that cannot run without sampling, for a client without it.
    let params = with_meta(
        json!({"name": "summarise", "arguments": {}}),
        json!({"elicitation": {}}),
    );
    let (status, refused) = post(addr, "tools/call", params, &[]).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["sampling"].is_object(),
        "{refused}"
    );
    let params = with_meta(
        json!({"name": "summarise", "arguments": {}}),
        all_capabilities(),
    );
    let (_, ok) = post(addr, "tools/call", params, &[]).await;
    assert_eq!(ok["result"]["content"][0]["text"], "would sample", "{ok}");
    stop.cancel();
}

// ---------------------------------------------------------------------------
// Outside MCP: the host's hooks.
// ---------------------------------------------------------------------------

#[tokio::test]
async fn outside_mcp_the_hosts_hooks_answer() {
    let mut registry = ToolRegistry::new();
    let spec = ToolSpec::new("survey", "Asks all three.", json!({"type": "object"}));
    let survey = Tool::new(
        spec,
        |_args: Map<String, Value>, ctx: ToolContext| async move {
            let requests = BTreeMap::from([
                ("name".to_owned(), form("Your name?", "name")),
                (
                    "model".to_owned(),
                    InputRequest::sampling_text("Say hi", 20),
                ),
                ("roots".to_owned(), InputRequest::roots()),
            ]);
            match input::ask(&ctx, requests).await {
                Ok(answers) => ToolResult::ok(format!(
                    "{} / {} / {}",
                    answers["name"]
                        .form_field("name")
                        .and_then(Value::as_str)
                        .unwrap_or("?"),
                    answers["model"].text().unwrap_or("?"),
                    answers["roots"].root_uris().join(",")
                )),
                Err(e) => ToolResult::error(tool_core::ErrorKind::Failed, e.to_string()),
            }
        },
    )
    .unwrap();
    registry.register(survey).unwrap();
    let questions = Arc::default();
    let ctx = asker_ctx(Arc::clone(&questions))
        .with_state(HostSampler(Arc::new(sampler)))
        .with_state(HostRoots(vec![Root::new("file:///srv/app")]));
    let result = registry.execute("survey", json!({}), &ctx).await;
    assert_eq!(
        result.output, "ada / echo: Say hi / file:///srv/app",
        "{result:?}"
    );
    assert_eq!(questions.lock().unwrap().len(), 1);
    // Without a sampler nothing is asked and the tool is told why.
    let bare = asker_ctx(Arc::default()).with_state(HostRoots(Vec::new()));
    let result = registry.execute("survey", json!({}), &bare).await;
    let error = result.error.expect("no sampler");
    assert!(
        error
            .message
            .contains("cannot ask for sampling/createMessage here")
            && error.message.contains("HostSampler"),
        "{}",
        error.message
    );
}

// ---------------------------------------------------------------------------
// x-mcp-header parameters (SEP-2243).
// ---------------------------------------------------------------------------

async fn serve_header_tool() -> (SocketAddr, tokio_util::sync::CancellationToken) {
    let spec = ToolSpec::new(
        "route",
        "Echoes its region.",
        json!({"type": "object", "properties": {"region": {"type": "string"}, "note": {"type": "string"}}}),
    );
    let spec = tool_mcp::with_mcp_header(spec, "region", "Region").unwrap();
    let tool = Tool::new(spec, |args: Map<String, Value>, _ctx| async move {
        ToolResult::ok(format!(
            "region={}",
            args.get("region").and_then(Value::as_str).unwrap_or("-")
        ))
    })
    .unwrap();
    let mut registry = ToolRegistry::new();
    registry.register(tool).unwrap();
    let stop = tokio_util::sync::CancellationToken::new();
    let (addr, _task) = McpServer::new(LiveRegistry::new(registry))
        .serve_http(([127, 0, 0, 1], 0).into(), stop.clone())
        .await
        .unwrap();
    (addr, stop)
}

#[tokio::test]
async fn header_parameters_are_checked_against_the_arguments() {
    let (addr, stop) = serve_header_tool().await;
    let (_, listed) = post(addr, "tools/list", with_meta(json!({}), json!({})), &[]).await;
    assert_eq!(
        listed["result"]["tools"][0]["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region",
        "{listed}"
    );
    let params = |region: &str| {
        with_meta(
            json!({"name": "route", "arguments": {"region": region}}),
            json!({}),
        )
    };
    let text = |answer: &Value| {
        answer["result"]["content"][0]["text"]
            .as_str()
            .map(str::to_owned)
    };
    // Literal and Base64 forms of the same value are accepted.
    let (status, ok) = post(
        addr,
        "tools/call",
        params("eu-west"),
        &[("Mcp-Param-Region", "eu-west")],
    )
    .await;
    assert_eq!(
        (status, text(&ok).as_deref()),
        (200, Some("region=eu-west")),
        "{ok}"
    );
    let (status, ok) = post(
        addr,
        "tools/call",
        params("Zürich"),
        &[("Mcp-Param-Region", "=?base64?WsO8cmljaA==?=")],
    )
    .await;
    assert_eq!(
        (status, text(&ok).as_deref()),
        (200, Some("region=Zürich")),
        "{ok}"
    );
    // A different value, a missing header, bad Base64: 400 with -32020.
    for headers in [
        &[("Mcp-Param-Region", "us-east")][..],
        &[][..],
        &[("Mcp-Param-Region", "=?base64?ZXUtd2VzdA?=")][..],
    ] {
        let (status, refused) = post(addr, "tools/call", params("eu-west"), headers).await;
        assert_eq!(status, 400, "{headers:?}: {refused}");
        assert_eq!(refused["error"]["code"], -32020, "{headers:?}: {refused}");
    }
    // Our own client sends the header once it has listed the tools (rmcp
    // keeps each listed schema for that).
    let conn = McpToolSource::http(format!("http://{addr}/mcp"))
        .named("web")
        .with_era(ProtocolEra::Discover)
        .connect()
        .await
        .unwrap();
    let local = LiveRegistry::new(ToolRegistry::new());
    conn.import_into(&local).await.unwrap();
    let result = conn
        .call(
            "route",
            serde_json::from_value(json!({"region": "ap-south"})).unwrap(),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(result.output, "region=ap-south", "{result:?}");
    stop.cancel();
}
