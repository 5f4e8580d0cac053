//! A rig agent using our built-in tools, with no network: rig's
//! OpenAI-compatible client (the llama.cpp dialect) talks to a stub Chat
//! Completions server on loopback that this example starts. The stub answers
//! the first request with a `read_file` call and the second with a final
//! text, and records what rig sent, so the example can assert that our
//! pipeline ran inside rig's tool call (the numbered file text, and the note
//! saying the `"1"` for an integer was repaired, reached the model).
//!
//! Point it at a real server instead by setting `LLAMACPP_API_BASE_URL`
//! (e.g. `http://127.0.0.1:8080/v1`, a llama.cpp server started with
//! `--jinja`); the stub is then not started and only the run is printed.
//!
//! `cargo run -p tool-adapters --features rig-reqwest --example rig_agent`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use rig_agent::AgentBuilder;
use rig_core::providers::llamacpp;
use rig_core::providers::openai::{OpenAIConfig, wire::LLAMACPP};

/// The stub's two answers, in order: a tool call, then the final text.
const ANSWERS: [&str; 2] = [
    r#"{"id": "chatcmpl-1", "object": "chat.completion", "created": 1764633600, "model": "stub",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
          "tool_calls": [{"id": "call_1", "type": "function",
            "function": {"name": "read_file", "arguments": "{\"file_path\": \"TODO.md\", \"offset\": \"1\"}"}}]}}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 20, "total_tokens": 920}}"#,
    r#"{"id": "chatcmpl-2", "object": "chat.completion", "created": 1764633601, "model": "stub",
        "choices": [{"index": 0, "finish_reason": "stop",
          "message": {"role": "assistant", "content": "One item is left: ship the adapters."}}],
        "usage": {"prompt_tokens": 990, "completion_tokens": 9, "total_tokens": 999}}"#,
];

/// Serves `ANSWERS` to `POST …/chat/completions`, one per connection
/// (`Connection: close`), recording each request body. Ends after the last.
fn start_stub(
    bodies: Arc<Mutex<Vec<String>>>,
) -> std::io::Result<(String, std::thread::JoinHandle<()>)> {
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let base = format!("http://{}/v1", listener.local_addr()?);
    let handle = std::thread::spawn(move || {
        for answer in ANSWERS {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream);
            let mut length = 0usize;
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 0) {
                if line == "\r\n" {
                    break;
                }
                if let Some((name, value)) = line.split_once(':')
                    && name.eq_ignore_ascii_case("content-length")
                {
                    length = value.trim().parse().unwrap_or(0);
                }
                line.clear();
            }
            let mut body = vec![0; length.min(16 << 20)];
            if reader.read_exact(&mut body).is_err() {
                return;
            }
            if let Ok(mut all) = bodies.lock() {
                all.push(String::from_utf8_lossy(&body).into_owned());
            }
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
            let mut stream = reader.into_inner();
            if stream.write_all(reply.as_bytes()).is_err() {
                return;
            }
        }
    });
    Ok((base, handle))
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    std::fs::write(dir.path().join("TODO.md"), "# Todo\n- ship the adapters\n")?;
    // The host's context: the workspace the file tools may touch, the read ledger.
    let ctx = tool_builtins::context(dir.path())?;
    let tools = tool_adapters::rig::dynamic_tools(tool_builtins::registry(), &ctx)?;
    println!("{} built-in tools handed to rig", tools.len());

    let bodies = Arc::new(Mutex::new(Vec::new()));
    let real = std::env::var("LLAMACPP_API_BASE_URL").ok();
    let (base, stub) = match &real {
        Some(base) => (base.clone(), None),
        None => {
            let (base, handle) = start_stub(Arc::clone(&bodies))?;
            (base, Some(handle))
        }
    };
    let client = OpenAIConfig::with_key(&LLAMACPP, "no-key")
        .with_base_url(base)
        .client();
    let agent = AgentBuilder::new(client.chat(llamacpp::LLAMA_CPP))
        .preamble("You are a coding agent. Use the tools to answer.")
        .dynamic_tools(tools)
        .build();
    let response = agent
        .prompt("What is left in TODO.md?")
        .max_turns(4)
        .await?;
    println!("answer: {}", response.output());
    if real.is_some() {
        return Ok(());
    }

    if let Some(handle) = stub {
        handle.join().map_err(|_| "the stub server panicked")?;
    }
    let bodies = bodies.lock().map_err(|_| "poisoned")?.clone();
    assert_eq!(bodies.len(), 2, "two model calls");
    let first: serde_json::Value = serde_json::from_str(&bodies[0])?;
    let sent: Vec<&str> = first["tools"]
        .as_array()
        .map(|t| {
            t.iter()
                .filter_map(|t| t["function"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    assert!(sent.contains(&"read_file"), "tools sent: {sent:?}");
    // What rig sent back as the tool result: our pipeline's text.
    let second: serde_json::Value = serde_json::from_str(&bodies[1])?;
    let tool_message = second["messages"]
        .as_array()
        .and_then(|m| m.iter().find(|m| m["role"] == "tool"))
        .ok_or("no tool message in the second request")?;
    let content = match &tool_message["content"] {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    println!("tool message rig sent: {content}");
    assert!(content.contains("1: # Todo"), "{content}");
    assert!(content.contains("2: - ship the adapters"), "{content}");
    assert!(
        content.contains("read as the number 1"),
        "the repair note: {content}"
    );
    assert_eq!(response.output(), "One item is left: ship the adapters.");
    Ok(())
}
