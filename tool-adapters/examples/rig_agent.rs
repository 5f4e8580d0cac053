//! A rig agent using our built-in tools, with no network: rig's
//! OpenAI-compatible client (the llama.cpp dialect) talks to a stub Chat
//! Completions server on loopback that this example starts. The stub answers
//! the first request with a `read_file` call and the second with a final
//! text, and records what rig sent, so the example can assert that our
//! pipeline ran inside rig's tool call (the numbered file text, and the note
//! saying the `"1"` for an integer was repaired, reached the model).
//!
//! A rig hook forces `read_file` on the first model call and no tool on the
//! later ones (`tool_choice` per turn), so even a small local model makes
//! exactly one call and then answers; it also records each tool outcome rig
//! received from our pipeline. rig's llama.cpp dialect speaks to
//! `llama-server`, which takes no named tool choice: there the first call is
//! `required` with only `read_file` advertised. `LLAMACPP_DIALECT=llama-cpp-python`
//! selects a dialect of our own for llama-cpp-python's server (the one
//! `tool-agent/tests/e2e.sh` starts), which takes a named choice but not
//! `required`, and plain-string `content` only.
//!
//! Point it at a real server instead by setting `LLAMACPP_API_BASE_URL`
//! (e.g. `http://127.0.0.1:8080/v1`, a llama.cpp server started with
//! `--jinja`); the stub is then not started, and the example checks what a
//! real model can be held to: the forced call reached our pipeline, which
//! answered it, and the model was asked again with that answer. CI runs it
//! this way against `tool-agent/tests/e2e.sh`'s llama.cpp server
//! (SmolLM2-135M).
//!
//! `cargo run -p tool-adapters --features rig-reqwest --example rig_agent`

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use rig_agent::AgentBuilder;
use rig_agent::agent::{
    AgentHook, CompletionCallAction, CompletionCallEvent, HookContext, OutcomeAction, OutcomeEvent,
    RequestPatch,
};
use rig_core::message::{AssistantContent, Message, ToolChoice, ToolName};
use rig_core::providers::llamacpp;
use rig_core::providers::openai::wire::{Auth, BodyRewrite, Dialect, LLAMACPP};
use rig_core::providers::openai::{OpenAIConfig, Route};

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

/// llama-cpp-python's OpenAI-compatible server as a rig dialect: no key
/// needed, a named tool choice honoured (compiled into a grammar) but
/// `required` refused, and `content` taken only as a string outside user
/// messages, so content-part arrays are sent joined (rig's flattening
/// rewrite, written for another gateway with the same rule).
fn llama_cpp_python() -> Dialect {
    let mut dialect = Dialect::gateway(
        "llama-cpp-python",
        "http://localhost:8000/v1",
        "LLAMACPP_API_KEY",
    );
    dialect.base_url_env = Some("LLAMACPP_API_BASE_URL");
    dialect.quirks.auth = Auth::OptionalBearer;
    dialect.quirks.rewrite = BodyRewrite::Mira;
    dialect
}

/// Forces `read_file` on the first model call and no tool after it, with a
/// small output budget; keeps each tool outcome rig received (its `Debug`
/// text) and what the second call sent, and counts the model calls.
#[derive(Clone, Default)]
struct OneForcedCall {
    /// The server takes OpenAI's named tool choice (else: `required` with
    /// only `read_file` advertised).
    named_choice: bool,
    outcomes: Arc<Mutex<Vec<String>>>,
    model_calls: Arc<Mutex<usize>>,
    /// What the second model call carried (its prompt and history, `Debug`
    /// text): where the tool result goes back to the model.
    second_call: Arc<Mutex<String>>,
}

impl AgentHook for OneForcedCall {
    fn on_completion_call(
        &self,
        _ctx: &HookContext,
        event: CompletionCallEvent<'_>,
    ) -> impl Future<Output = CompletionCallAction> + Send {
        if let Ok(mut calls) = self.model_calls.lock() {
            *calls += 1;
        }
        if event.turn == 2
            && let Ok(mut second) = self.second_call.lock()
        {
            *second = format!("{:?} {:?}", event.history, event.prompt);
        }
        let mut patch = RequestPatch::new().max_tokens(96);
        if self.named_choice && event.turn > 1 {
            // llama-cpp-python's `chatml-function-calling` template reads
            // `content` on every message; rig leaves it off a turn that only
            // called tools, so such a turn is replayed with a short text (rig drops a blank one).
            let history = event.history.iter().cloned().map(|message| match message {
                Message::Assistant(mut turn)
                    if !turn
                        .content
                        .iter()
                        .any(|c| matches!(c, AssistantContent::Text(_))) =>
                {
                    turn.content
                        .insert(0, AssistantContent::text("(tool call)"));
                    // Replayed from its canonical fields, not the server's item.
                    turn.origin = None;
                    Message::Assistant(turn)
                }
                other => other,
            });
            patch = patch.history(history);
        }
        let patch = match ToolName::try_from("read_file") {
            Ok(name) if event.turn == 1 && self.named_choice => {
                patch.tool_choice(ToolChoice::Specific {
                    function_names: vec![name],
                })
            }
            _ if event.turn == 1 => patch
                .tool_choice(ToolChoice::Required)
                .active_tools(["read_file"]),
            _ => patch.tool_choice(ToolChoice::None),
        };
        async move { CompletionCallAction::Patch(patch) }
    }

    fn on_outcome(
        &self,
        _ctx: &HookContext,
        event: OutcomeEvent<'_>,
    ) -> impl Future<Output = OutcomeAction> + Send {
        if event.call_id.is_some()
            && let Ok(mut all) = self.outcomes.lock()
        {
            all.push(format!("{:?}", event.outcome));
        }
        async { OutcomeAction::Proceed }
    }
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
    let named_choice = std::env::var("LLAMACPP_DIALECT").is_ok_and(|d| d == "llama-cpp-python");
    let dialect = if named_choice {
        llama_cpp_python()
    } else {
        LLAMACPP
    };
    let client = OpenAIConfig::with_key(&dialect, "no-key")
        .with_base_url(base)
        .with_route(Route::Chat)
        .client();
    let hook = OneForcedCall {
        named_choice,
        ..OneForcedCall::default()
    };
    let agent = AgentBuilder::new(client.chat(llamacpp::LLAMA_CPP))
        .preamble("You are a coding agent. Use the tools to answer.")
        .dynamic_tools(tools)
        .add_hook(hook.clone())
        .build();
    let response = agent
        .prompt("What is left in TODO.md?")
        .max_turns(4)
        .await?;
    println!("answer: {}", response.output());
    let outcomes = hook.outcomes.lock().map_err(|_| "poisoned")?.clone();
    let model_calls = *hook.model_calls.lock().map_err(|_| "poisoned")?;
    println!("tool outcomes rig received: {outcomes:?}");
    // Both modes: one forced call, answered by our pipeline, then one more
    // model call carrying that answer (tool choice `none`), which ends the run.
    assert_eq!(outcomes.len(), 1, "one tool call: {outcomes:?}");
    assert_eq!(model_calls, 2, "a tool turn and an answer turn");
    if real.is_some() {
        // What a real model can be held to: the file it names is its
        // choice, but whatever it named, our read_file answered and rig sent
        // that answer back with the second call — the file's numbered lines,
        // or our error saying why not.
        let second = hook.second_call.lock().map_err(|_| "poisoned")?.clone();
        println!("second model call carried: {second}");
        let expected = if outcomes[0].contains("status: \"success\"") {
            "1: # Todo"
        } else {
            "Error: "
        };
        assert!(
            second.contains(expected),
            "our pipeline's answer ({expected:?}) in the second call: {second}"
        );
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
    assert_eq!(first["tool_choice"], "required", "the hook forced a call");
    assert_eq!(sent, ["read_file"], "with only read_file advertised");
    // What rig sent back as the tool result: our pipeline's text.
    let second: serde_json::Value = serde_json::from_str(&bodies[1])?;
    assert_eq!(second["tool_choice"], "none", "and no tool on the second");
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
