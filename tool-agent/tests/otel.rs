//! OpenTelemetry output (feature `otel-tests`): an agent run on a scripted
//! model with the real `read_file` tool, one call that succeeds and one that
//! fails, seen through the SDK's in-memory exporter (every span name,
//! parent, kind, status and GenAI attribute), with content capture off and
//! on; and once through the OTLP/HTTP exporter to a receiver this test starts.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use opentelemetry::trace::{SpanKind, Status};
use opentelemetry::{Array, StringValue, Value};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use tool_agent::otel;
use tool_agent::{Agent, RunOutput, ScriptedClient, ScriptedTurn, StreamEvent, Usage};
use tool_core::format::ToolCall;
use tool_core::{RegistryView, SecretStore, ToolContext};
use tracing_subscriber::layer::SubscriberExt;

/// A secret the model writes into a path and the task, and the file holds.
const SECRET: &str = "tok-SECRET-0123456789";

/// The scripted model: turn 1 reads `notes.txt` (succeeds) and a file named
/// after the secret (fails: no such file), turn 2 answers.
fn model() -> ScriptedClient {
    ScriptedClient::new([
        ScriptedTurn::Events(vec![
            // The provider names the response and the (dated) model that answered.
            StreamEvent::ResponseInfo {
                id: Some("chatcmpl-1".to_owned()),
                model: Some("scripted-2026-01-01".to_owned()),
            },
            StreamEvent::ToolCall(ToolCall::new(
                "call-ok",
                "read_file",
                r#"{"file_path": "notes.txt"}"#,
            )),
            StreamEvent::ToolCall(ToolCall::new(
                "call-bad",
                "read_file",
                format!(r#"{{"file_path": "{SECRET}.txt"}}"#),
            )),
            StreamEvent::Usage(Usage {
                input_tokens: 120,
                output_tokens: 30,
            }),
            StreamEvent::Finished {
                stop_reason: Some("tool_calls".to_owned()),
            },
        ]),
        ScriptedTurn::Events(vec![
            StreamEvent::TextDelta("The notes say alpha.".to_owned()),
            StreamEvent::Usage(Usage {
                input_tokens: 200,
                output_tokens: 7,
            }),
            StreamEvent::Finished {
                stop_reason: Some("stop".to_owned()),
            },
        ]),
    ])
}

/// A workspace with `notes.txt` (holding the secret), the context for it
/// with the secret store, and the agent.
fn agent(capture: bool) -> (tempfile::TempDir, Agent) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("notes.txt"),
        format!("alpha\nkey {SECRET}\n"),
    )
    .unwrap();
    let secrets = SecretStore::new().with_secret("api_token", SECRET).unwrap();
    let ctx: ToolContext = tool_builtins::context(dir.path())
        .unwrap()
        .with_secrets(secrets)
        .with_content_capture(capture);
    let tools = RegistryView::from(tool_builtins::registry()).allow(["read_file"]);
    let agent = Agent::new(model(), tools)
        .name("reader")
        .system("You read files.")
        .context(ctx)
        .trace_id("t-otel");
    (dir, agent)
}

/// Runs the agent with an in-memory exporter installed for this thread, and
/// returns the run and the finished spans.
async fn run_captured(capture: bool) -> (RunOutput, Vec<SpanData>) {
    let exporter = InMemorySpanExporter::default();
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter.clone())
        .build();
    let subscriber = tracing_subscriber::registry().with(otel::layer(&provider));
    let (_dir, agent) = agent(capture);
    let out = {
        let _guard = tracing::subscriber::set_default(subscriber);
        agent
            .run(format!("Read notes.txt; the key is {SECRET}"))
            .await
            .unwrap()
    };
    provider.force_flush().unwrap();
    let spans = exporter.get_finished_spans().unwrap();
    (out, spans)
}

/// The span's attributes whose keys start with `gen_ai.` or `error.`, by key.
fn genai(span: &SpanData) -> BTreeMap<String, Value> {
    span.attributes
        .iter()
        .filter(|kv| {
            kv.key.as_str().starts_with("gen_ai.") || kv.key.as_str().starts_with("error.")
        })
        .map(|kv| (kv.key.as_str().to_owned(), kv.value.clone()))
        .collect()
}

fn s(v: &str) -> Value {
    Value::String(v.to_owned().into())
}

fn strings(v: &[&str]) -> Value {
    Value::Array(Array::String(
        v.iter()
            .map(|x| StringValue::from((*x).to_owned()))
            .collect(),
    ))
}

/// The expected attributes, from `(key, value)` pairs.
fn expect(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect()
}

/// The spans by name, in end order: `invoke_agent reader`, two `chat
/// scripted`, two `execute_tool read_file` (ok first, then the failure).
struct Tree<'a> {
    agent: &'a SpanData,
    chats: Vec<&'a SpanData>,
    tools: Vec<&'a SpanData>,
}

fn tree(spans: &[SpanData]) -> Tree<'_> {
    let mut names: Vec<&str> = spans.iter().map(|s| s.name.as_ref()).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "chat scripted",
            "chat scripted",
            "execute_tool read_file",
            "execute_tool read_file",
            "invoke_agent reader"
        ],
        "every span the run made"
    );
    let agent = spans
        .iter()
        .find(|s| s.name == "invoke_agent reader")
        .unwrap();
    let chats: Vec<&SpanData> = spans.iter().filter(|s| s.name == "chat scripted").collect();
    let mut tools: Vec<&SpanData> = spans
        .iter()
        .filter(|s| s.name == "execute_tool read_file")
        .collect();
    tools.sort_by_key(|t| genai(t).get("gen_ai.tool.call.id").map(ToString::to_string));
    // Sorted by call id: "call-bad" < "call-ok".
    tools.reverse();
    Tree {
        agent,
        chats,
        tools,
    }
}

#[tokio::test]
async fn spans_follow_the_genai_conventions_and_carry_no_content_by_default() {
    let (out, spans) = run_captured(false).await;
    assert_eq!(out.tool_calls, 2);
    assert_eq!(out.tool_errors.len(), 1, "{:?}", out.tool_errors);
    let t = tree(&spans);

    // One trace; the chats and the tool calls are children of the run.
    let trace = t.agent.span_context.trace_id();
    let root = t.agent.span_context.span_id();
    assert_eq!(
        t.agent.parent_span_id,
        opentelemetry::trace::SpanId::INVALID
    );
    for child in t.chats.iter().chain(&t.tools) {
        assert_eq!(child.span_context.trace_id(), trace, "{}", child.name);
        assert_eq!(
            child.parent_span_id, root,
            "{} is a child of the run",
            child.name
        );
    }
    assert_eq!(t.agent.span_kind, SpanKind::Internal);
    assert!(t.chats.iter().all(|c| c.span_kind == SpanKind::Client));
    assert!(t.tools.iter().all(|c| c.span_kind == SpanKind::Internal));

    assert_eq!(
        genai(t.agent),
        expect(&[
            ("gen_ai.operation.name", s("invoke_agent")),
            ("gen_ai.agent.name", s("reader")),
            ("gen_ai.provider.name", s("_OTHER")),
            ("gen_ai.request.model", s("scripted")),
            ("gen_ai.conversation.id", s("t-otel")),
            ("gen_ai.usage.input_tokens", Value::I64(320)),
            ("gen_ai.usage.output_tokens", Value::I64(37)),
        ])
    );
    assert_eq!(t.agent.status, Status::Unset);

    // The chats, in the order they ended (turn 1 first).
    let mut chats = t.chats.clone();
    chats.sort_by_key(|c| c.start_time);
    let chat = |input: i64, output: i64, reason: &str| {
        expect(&[
            ("gen_ai.operation.name", s("chat")),
            ("gen_ai.provider.name", s("_OTHER")),
            ("gen_ai.request.model", s("scripted")),
            ("gen_ai.usage.input_tokens", Value::I64(input)),
            ("gen_ai.usage.output_tokens", Value::I64(output)),
            ("gen_ai.response.finish_reasons", strings(&[reason])),
        ])
    };
    // Turn 1's provider named its response; turn 2's did not.
    let mut first = chat(120, 30, "tool_calls");
    first.insert("gen_ai.response.id".to_owned(), s("chatcmpl-1"));
    first.insert("gen_ai.response.model".to_owned(), s("scripted-2026-01-01"));
    assert_eq!(genai(chats[0]), first);
    assert_eq!(genai(chats[1]), chat(200, 7, "stop"));
    assert!(
        chats[0].end_time <= t.tools[0].start_time,
        "the calls run after the answer"
    );

    assert_eq!(
        genai(t.tools[0]),
        expect(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("read_file")),
            ("gen_ai.tool.type", s("function")),
            ("gen_ai.tool.call.id", s("call-ok")),
        ])
    );
    assert_eq!(t.tools[0].status, Status::Unset);
    assert_eq!(
        genai(t.tools[1]),
        expect(&[
            ("gen_ai.operation.name", s("execute_tool")),
            ("gen_ai.tool.name", s("read_file")),
            ("gen_ai.tool.type", s("function")),
            ("gen_ai.tool.call.id", s("call-bad")),
            ("error.type", s("failed")),
        ])
    );
    assert!(
        matches!(&t.tools[1].status, Status::Error { description } if description.is_empty()),
        "error status without the message when content is not captured: {:?}",
        t.tools[1].status
    );

    // No content anywhere: neither the file's text, the task, nor the secret.
    for span in &spans {
        for kv in &span.attributes {
            let text = kv.value.to_string();
            for needle in ["alpha", SECRET, "secret", "Read notes"] {
                assert!(
                    !text.contains(needle),
                    "{} carries content ({needle}): {} = {text}",
                    span.name,
                    kv.key
                );
            }
        }
    }
}

#[tokio::test]
async fn captured_content_is_masked_by_the_secret_store() {
    let (_out, spans) = run_captured(true).await;
    let t = tree(&spans);
    let placeholder = "<secret>api_token</secret>";

    let ok = genai(t.tools[0]);
    assert_eq!(
        ok["gen_ai.tool.call.arguments"],
        s(r#"{"file_path":"notes.txt"}"#)
    );
    let result = ok["gen_ai.tool.call.result"].to_string();
    assert!(result.contains("alpha"), "{result}");
    assert!(result.contains(&format!("key {placeholder}")), "{result}");

    let bad = genai(t.tools[1]);
    assert_eq!(
        bad["gen_ai.tool.call.arguments"],
        s(&format!(r#"{{"file_path":"{placeholder}.txt"}}"#))
    );
    assert_eq!(bad["error.type"], s("failed"));
    match &t.tools[1].status {
        Status::Error { description } => {
            assert!(description.contains(placeholder), "{description}");
        }
        other => panic!("expected an error status, got {other:?}"),
    }

    let mut chats = t.chats.clone();
    chats.sort_by_key(|c| c.start_time);
    let first = genai(chats[0]);
    assert_eq!(
        first["gen_ai.system_instructions"],
        s(r#"[{"type":"text","content":"You read files."}]"#)
    );
    assert_eq!(
        first["gen_ai.input.messages"],
        s(&format!(
            r#"[{{"role":"user","parts":[{{"type":"text","content":"Read notes.txt; the key is {placeholder}"}}]}}]"#
        ))
    );
    let output: serde_json::Value =
        serde_json::from_str(&first["gen_ai.output.messages"].to_string()).unwrap();
    assert_eq!(
        output,
        serde_json::json!([{
            "role": "assistant",
            "finish_reason": "tool_calls",
            "parts": [
                {"type": "tool_call", "id": "call-ok", "name": "read_file", "arguments": {"file_path": "notes.txt"}},
                {"type": "tool_call", "id": "call-bad", "name": "read_file", "arguments": {"file_path": format!("{placeholder}.txt")}},
            ]
        }])
    );
    // The second request carries the results, masked.
    let second = genai(chats[1])["gen_ai.input.messages"].to_string();
    assert!(second.contains(r#""role":"tool""#), "{second}");
    assert!(second.contains("tool_call_response"), "{second}");
    assert!(second.contains(&format!("key {placeholder}")), "{second}");

    for span in &spans {
        for kv in &span.attributes {
            assert!(
                !kv.value.to_string().contains(SECRET),
                "{}: {} leaks the secret",
                span.name,
                kv.key
            );
        }
    }
}

/// One OTLP/HTTP request as the receiver saw it.
struct Received {
    path: String,
    content_type: String,
    body: Vec<u8>,
}

/// A receiver on 127.0.0.1 that answers every request `200 OK` and sends
/// what it read to the returned channel; runs until the test ends.
fn receiver() -> (String, mpsc::Receiver<Received>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(stream) = stream else { return };
            let tx = tx.clone();
            std::thread::spawn(move || {
                let mut writer = stream.try_clone().unwrap();
                let mut reader = BufReader::new(stream);
                // Requests on one connection, one after the other (keep-alive).
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("").to_owned();
                    let (mut length, mut content_type) = (0usize, String::new());
                    loop {
                        let mut header = String::new();
                        reader.read_line(&mut header).unwrap();
                        let header = header.trim_end();
                        if header.is_empty() {
                            break;
                        }
                        let (name, value) = header.split_once(':').unwrap();
                        match name.to_ascii_lowercase().as_str() {
                            "content-length" => length = value.trim().parse().unwrap(),
                            "content-type" => value.trim().clone_into(&mut content_type),
                            _ => {}
                        }
                    }
                    let mut body = vec![0; length];
                    reader.read_exact(&mut body).unwrap();
                    writer
                        .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/x-protobuf\r\ncontent-length: 0\r\n\r\n")
                        .unwrap();
                    let _ = tx.send(Received {
                        path,
                        content_type,
                        body,
                    });
                }
            });
        }
    });
    (format!("http://{addr}"), rx)
}

#[tokio::test]
async fn the_otlp_exporter_sends_the_spans_over_http() {
    use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
    use prost::Message as _;

    let (endpoint, requests) = receiver();
    let provider = otel::otlp_provider(&format!("{endpoint}/"), "otel-test").unwrap();
    let subscriber = tracing_subscriber::registry().with(otel::layer(&provider));
    let (_dir, agent) = agent(false);
    {
        let _guard = tracing::subscriber::set_default(subscriber);
        agent.run("Read notes.txt").await.unwrap();
    }
    // The batch processor's thread sends on flush; the blocking client waits
    // for the receiver's answer, so the request has arrived when this returns.
    tokio::task::spawn_blocking(move || provider.force_flush().map(|()| provider))
        .await
        .unwrap()
        .unwrap();

    let mut names = Vec::new();
    let mut services = Vec::new();
    while names.len() < 5 {
        let got = requests.recv_timeout(Duration::from_secs(60)).unwrap();
        assert_eq!(got.path, "/v1/traces");
        assert_eq!(got.content_type, "application/x-protobuf");
        let request = ExportTraceServiceRequest::decode(got.body.as_slice()).unwrap();
        for rs in request.resource_spans {
            for kv in rs.resource.iter().flat_map(|r| &r.attributes) {
                if kv.key == "service.name" {
                    services.push(format!("{:?}", kv.value));
                }
            }
            for ss in rs.scope_spans {
                assert_eq!(
                    ss.scope.as_ref().map(|s| s.name.as_str()),
                    Some(otel::SCOPE)
                );
                names.extend(ss.spans.into_iter().map(|s| s.name));
            }
        }
    }
    names.sort();
    assert_eq!(
        names,
        [
            "chat scripted",
            "chat scripted",
            "execute_tool read_file",
            "execute_tool read_file",
            "invoke_agent reader"
        ]
    );
    assert!(
        services.iter().all(|s| s.contains("otel-test")) && !services.is_empty(),
        "{services:?}"
    );
}

#[test]
fn an_endpoint_that_is_not_a_url_is_refused() {
    let err = otel::otlp_provider("localhost:4318", "x").unwrap_err();
    assert!(err.to_string().contains("http://localhost:4318"), "{err}");
}
