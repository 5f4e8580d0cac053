//! `@modelcontextprotocol/server-everything` (npm), a server nobody here
//! wrote, through this crate's client over stdio and Streamable HTTP: every
//! tool it lists is called, sampling answered by a scripted model, elicitation
//! by the caller's asker, roots offered, and the task-only
//! `simulate-research-query` followed as a task (issue 26).
//!
//! Needs npm and the network for the first install (cached under the cargo
//! target folder), so it is `#[ignore]`d in the plain test run;
//! `tool-mcp/tests/third_party.sh` runs it (`--ignored`). Without npm it
//! says so and passes.

#![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tool_core::{Answer, Progress, Question, ToolContext};
use tool_mcp::{McpConnection, McpToolSource, SamplingAnswer, SamplingRequest};

/// The pinned version.
const VERSION: &str = "2026.8.31";

/// The server's entry script, installed under the target folder when missing;
/// `None` (with a message) when npm is not there.
fn install() -> Option<PathBuf> {
    let prefix = Path::new(env!("CARGO_TARGET_TMPDIR")).join("../third_party/everything");
    let package = prefix.join("node_modules/@modelcontextprotocol/server-everything");
    let installed = std::fs::read_to_string(package.join("package.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|p| p["version"] == VERSION);
    if !installed {
        std::fs::create_dir_all(&prefix).unwrap();
        let status = std::process::Command::new("npm")
            .args([
                "install",
                "--no-audit",
                "--no-fund",
                "--loglevel=error",
                "--prefix",
            ])
            .arg(&prefix)
            .arg(format!("@modelcontextprotocol/server-everything@{VERSION}"))
            .status();
        match status {
            Ok(s) if s.success() => {}
            Ok(s) => panic!("npm install of server-everything failed: {s}"),
            Err(e) => {
                eprintln!(
                    "SKIPPED: npm is not available ({e}); install Node.js and npm to run this test"
                );
                return None;
            }
        }
    }
    Some(package.join("dist/index.js"))
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

/// A source with a scripted model, the workspace as its one root.
fn prepared(source: McpToolSource, root: &Path) -> McpToolSource {
    source
        .named("everything")
        .with_roots([root])
        .with_timeout(Duration::from_secs(60))
        .with_sampler(|request: SamplingRequest| {
            let asked = request
                .messages
                .last()
                .map(|m| m.text.clone())
                .unwrap_or_default();
            async move {
                Ok(SamplingAnswer::new(
                    format!("scripted answer to: {asked}"),
                    "scripted",
                ))
            }
        })
}

/// A caller whose person answers every question: the first choice, else a
/// value that fits the field's name.
fn caller(progress: &Arc<Mutex<Vec<f64>>>) -> ToolContext {
    let sink = Arc::clone(progress);
    ToolContext::new()
        .with_asker(|q: Question| {
            let field = q.question.lines().last().unwrap_or("").to_ascii_lowercase();
            let answer = if let Some(first) = q.choices.first() {
                first.clone()
            } else if field.contains("email") {
                "ada@example.org".to_owned()
            } else if field.contains("homepage")
                || field.contains("url")
                || field.contains("uri format")
            {
                "https://example.org".to_owned()
            } else if field.contains("birth") || field.contains("date") {
                "1815-12-10".to_owned()
            } else if field.contains("integer") || field.contains("number") {
                "7".to_owned()
            } else {
                "Ada".to_owned()
            };
            async move { Answer::Answered(answer) }
        })
        .with_progress_sink(move |p: Progress| sink.lock().unwrap().push(p.progress))
}

/// Lists and calls every tool; checks what each should give.
async fn exercise(conn: &McpConnection, root: &Path, transport: &str) {
    let tools = conn.remote_tools().await.unwrap();
    let names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    // The tools the server offers only to a client that declares sampling,
    // elicitation (form) and roots.
    for gated in [
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "get-roots-list",
    ] {
        assert!(
            names.iter().any(|n| n == gated),
            "{transport}: {gated} not listed: {names:?}"
        );
    }
    let mut called = 0;
    for name in &names {
        let progress = Arc::new(Mutex::new(Vec::new()));
        let ctx = caller(&progress);
        let arguments = match name.as_str() {
            "echo" => json!({"message": "hello"}),
            "get-sum" => json!({"a": 2, "b": 3}),
            "get-structured-content" => json!({"location": "Chicago"}),
            "get-annotated-message" => json!({"messageType": "error", "includeImage": true}),
            "get-resource-links" => json!({"count": 3}),
            "gzip-file-as-resource" => {
                json!({"name": "hi.gz", "data": "data:text/plain;base64,aGVsbG8=", "outputType": "resource"})
            }
            "trigger-long-running-operation" => json!({"duration": 1, "steps": 3}),
            "trigger-sampling-request" => json!({"prompt": "What is 2+2?"}),
            "simulate-research-query" => json!({"topic": "rust"}),
            _ => json!({}),
        };
        let result = conn.call(name, args(arguments), &ctx).await;
        let text = &result.output;
        let what = format!("{transport}: {name}: {result:?}");
        assert!(result.error.is_none(), "{what}");
        called += 1;
        let mcp = &result.metadata["mcp"];
        match name.as_str() {
            "echo" => assert_eq!(text, "Echo: hello", "{what}"),
            "get-sum" => assert!(text.contains('5'), "{what}"),
            "trigger-sampling-request" => {
                assert!(text.contains("scripted answer to: "), "{what}");
                assert!(text.contains("What is 2+2?"), "{what}");
            }
            "trigger-elicitation-request" => {
                assert!(text.contains("accept"), "{what}");
                assert!(text.contains("ada@example.org"), "{what}");
            }
            "get-roots-list" => {
                assert!(
                    text.contains(&format!("file://{}", root.display())),
                    "{what}"
                );
            }
            "get-annotated-message" => {
                let annotations = mcp["content_annotations"].as_array().expect(&what);
                assert!(
                    annotations
                        .iter()
                        .any(|a| a["annotations"]["priority"].as_f64() == Some(1.0)),
                    "{what}"
                );
                assert!(
                    annotations
                        .iter()
                        .any(|a| a["annotations"]["audience"].is_array()),
                    "{what}"
                );
                assert_eq!(result.images.len(), 1, "{what}");
            }
            "get-resource-links" => {
                assert_eq!(
                    mcp["resource_links"].as_array().map(Vec::len),
                    Some(3),
                    "{what}"
                );
                assert_eq!(text.matches("Resource link: ").count(), 3, "{what}");
                assert!(!text.contains("\"uri\""), "no raw JSON: {what}");
            }
            "get-structured-content" => {
                assert!(
                    result.metadata["structured"]["temperature"].is_number(),
                    "{what}"
                );
            }
            "get-tiny-image" => assert_eq!(result.images.len(), 1, "{what}"),
            // Declared `execution.taskSupport: "required"`: the plain call
            // is refused (-32601), the client calls it as a task of the
            // 2025-11-25 tasks utility, polls tasks/get and fetches
            // tasks/result after its four stages.
            "simulate-research-query" => {
                assert!(text.starts_with("# Research Report: rust"), "{what}");
                for stage in [
                    "Gathering sources",
                    "Analyzing content",
                    "Generating report",
                ] {
                    assert!(text.contains(stage), "{what}");
                }
                assert!(
                    mcp["task"].as_str().is_some_and(|t| !t.is_empty()),
                    "{what}"
                );
            }
            "trigger-long-running-operation" => {
                assert_eq!(progress.lock().unwrap().len(), 3, "{what}");
            }
            _ => {}
        }
    }
    assert!(
        called >= 15,
        "{transport}: only {called} tools called: {names:?}"
    );
}

#[tokio::test]
#[ignore = "installs @modelcontextprotocol/server-everything from npm; run by tool-mcp/tests/third_party.sh"]
async fn server_everything_over_stdio_and_streamable_http() {
    let Some(script) = install() else { return };
    let root = tempfile::tempdir().unwrap();
    let root = root.path().canonicalize().unwrap();

    let stdio = prepared(
        McpToolSource::stdio(
            "node",
            [script.to_string_lossy().into_owned(), "stdio".to_owned()],
            [("NODE_NO_WARNINGS", "1")],
        ),
        &root,
    )
    .connect()
    .await
    .unwrap();
    exercise(&stdio, &root, "stdio").await;
    stdio.close();

    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut server = tokio::process::Command::new("node")
        .arg(&script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut up = false;
    for _ in 0..300 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            up = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(up, "server-everything did not listen on {port} within 30 s");
    let http = prepared(
        McpToolSource::http(format!("http://127.0.0.1:{port}/mcp")),
        &root,
    )
    .connect()
    .await
    .unwrap();
    exercise(&http, &root, "streamable HTTP").await;
    http.close();
    let _ = server.kill().await;
}
