//! A durable-runs worker: the `DurableAgent` workflow on an OpenAI-compatible
//! model (Chat Completions: vLLM, llama.cpp's server, Ollama, OpenAI, …),
//! with four small note tools over one folder. `tests/restate.sh` runs it
//! against a scripted model server and kills it mid-run.
//!
//! ```text
//! OPENAI_API_KEY=… worker --bind 127.0.0.1:9080 --model qwen3 \
//!     --model-url http://127.0.0.1:8000/v1 --workspace DIR
//! ```
//!
//! - `--bind ADDR`: where Restate reaches the worker (default `127.0.0.1:9080`).
//! - `--model NAME` (required): the model name the server knows (`qwen3`,
//!   `llama3.1:8b` in Ollama, `gpt-4.1-mini`, …; `scripted` for the test's server).
//! - `--model-url URL`: the API base, the part before `/chat/completions`;
//!   default `$OPENAI_BASE_URL`, else `https://api.openai.com/v1`.
//! - The API key comes from `$OPENAI_API_KEY` only (never the command line,
//!   where other users could read it); unset: no key (local servers need none).
//! - `--workspace DIR` (required): the notes folder, created if missing.
//!
//! Answers are asked for whole (no streaming): a run journals each answer
//! as one step anyway.
//!
//! Tools (each takes `file`, a plain name inside DIR):
//! - `read_notes` (read-only): the file's text.
//! - `append_note` (kind write, not idempotent): appends `line` and a newline.
//! - `guarded_append` (kind write, requires confirmation): the same, after an approval.
//! - `ask_user` (kind ask): a question for a person (no code runs: a durable promise).
//!
//! Test hooks (environment): `DURABLE_PAUSE_AFTER_CALL=N` stops the run
//! (the task blocks, the process stays) once call N's outcome is journaled
//! on this worker, printing `PAUSED after call N` to stderr;
//! `DURABLE_PAUSE_IN_APPEND=FILE:LINE` stops inside `append_note` right
//! after that line was written, before its outcome is journaled, printing
//! `PAUSED in append FILE:LINE`.

use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use tool_agent::OpenAiChatClient;
use tool_core::{ErrorKind, Tool, ToolKind, ToolRegistry, ToolResult, ToolSpec};
use tool_durable::DurableAgent;
use tool_durable::restate_sdk::prelude::{Endpoint, HttpServer};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

/// `file` inside `dir`: a plain name, no separators, not `.`/`..`.
fn note_path(dir: &Path, args: &Map<String, Value>) -> Result<PathBuf, String> {
    let name = args.get("file").and_then(Value::as_str).unwrap_or_default();
    if name.is_empty() || name.contains('/') || name.starts_with('.') {
        return Err(format!("`file` must be a plain file name, not {name:?}"));
    }
    Ok(dir.join(name))
}

fn append(dir: &Path, args: &Map<String, Value>) -> ToolResult {
    let path = match note_path(dir, args) {
        Ok(p) => p,
        Err(e) => return ToolResult::error(ErrorKind::InvalidArguments, e),
    };
    let line = args.get("line").and_then(Value::as_str).unwrap_or_default();
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .and_then(|mut f| writeln!(f, "{line}"));
    match written {
        Ok(()) => ToolResult::ok(format!("appended {line:?}")),
        Err(e) => ToolResult::error(ErrorKind::Failed, format!("cannot append: {e}")),
    }
}

fn registry(dir: &Path) -> Result<ToolRegistry, Box<dyn std::error::Error>> {
    let file = json!({"type": "string", "description": "A file name inside the notes folder."});
    let mut tools = ToolRegistry::new();
    let d = dir.to_path_buf();
    let spec = ToolSpec::new(
        "read_notes",
        "Reads a notes file.",
        json!({"type": "object", "properties": {"file": file}, "required": ["file"]}),
    )
    .with_kind(ToolKind::Read)
    .read_only();
    tools.register(Tool::new(spec, move |args: Map<String, Value>, _| {
        let d = d.clone();
        async move {
            match note_path(&d, &args) {
                Ok(p) => ToolResult::ok(std::fs::read_to_string(p).unwrap_or_default()),
                Err(e) => ToolResult::error(ErrorKind::InvalidArguments, e),
            }
        }
    })?)?;
    let line_params = json!({"type": "object", "properties": {
        "file": file, "line": {"type": "string", "description": "The line to append."}
    }, "required": ["file", "line"]});
    let d = dir.to_path_buf();
    let pause = std::env::var("DURABLE_PAUSE_IN_APPEND").ok();
    let spec = ToolSpec::new(
        "append_note",
        "Appends a line to a notes file.",
        line_params.clone(),
    )
    .with_kind(ToolKind::Write);
    tools.register(Tool::new(spec, move |args: Map<String, Value>, _| {
        let d = d.clone();
        let pause = pause.clone();
        async move {
            let result = append(&d, &args);
            let here = format!(
                "{}:{}",
                args.get("file").and_then(Value::as_str).unwrap_or_default(),
                args.get("line").and_then(Value::as_str).unwrap_or_default()
            );
            if pause.as_deref() == Some(here.as_str()) {
                eprintln!("PAUSED in append {here}");
                std::future::pending::<()>().await;
            }
            result
        }
    })?)?;
    let d = dir.to_path_buf();
    let spec = ToolSpec::new(
        "guarded_append",
        "Appends a line to a notes file, once a person approved.",
        line_params,
    )
    .with_kind(ToolKind::Write)
    .requires_confirmation(&["line"]);
    tools.register(Tool::new(spec, move |args: Map<String, Value>, _| {
        let d = d.clone();
        async move { append(&d, &args) }
    })?)?;
    let spec = ToolSpec::new(
        "ask_user",
        "Asks the user a question.",
        json!({"type": "object", "properties": {
            "question": {"type": "string"}, "choices": {"type": "array", "items": {"type": "string"}}
        }, "required": ["question"]}),
    )
    .with_kind(ToolKind::Ask);
    tools.register(Tool::new(spec, |_: Map<String, Value>, _| async {
        ToolResult::error(ErrorKind::Failed, "asked through the run's promise instead")
    })?)?;
    Ok(tools)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let bind: SocketAddr = arg(&args, "--bind")
        .unwrap_or_else(|| "127.0.0.1:9080".to_owned())
        .parse()?;
    let model_name = arg(&args, "--model")
        .ok_or("--model NAME is required: the model name your server knows (e.g. qwen3)")?;
    let dir = PathBuf::from(arg(&args, "--workspace").ok_or("--workspace DIR is required")?);
    std::fs::create_dir_all(&dir)?;
    let pause_after: Option<usize> = std::env::var("DURABLE_PAUSE_AFTER_CALL")
        .ok()
        .and_then(|v| v.parse().ok());

    // Key from OPENAI_API_KEY, base URL from OPENAI_BASE_URL unless given.
    let mut model = OpenAiChatClient::new(model_name).streaming(false);
    if let Some(url) = arg(&args, "--model-url") {
        model = model.base_url(url);
    }
    let agent = DurableAgent::new(model, registry(&dir)?)
        .max_turns(12)
        .on_step(move |e| {
            eprintln!(
                "step {} {} {} {:?} replayed={}",
                e.run, e.key, e.tool, e.class, e.replayed
            );
            if !e.replayed && Some(e.index) == pause_after {
                eprintln!("PAUSED after call {}", e.index);
                // Blocks this run's task for good: the test kills the process.
                loop {
                    std::thread::park();
                }
            }
        });
    // Bound here, not by `listen_and_serve` (which panics on a port in
    // use): a clear error, and "listening" is printed once it is true.
    let listener = tokio::net::TcpListener::bind(bind)
        .await
        .map_err(|e| format!("cannot listen on {bind}: {e}"))?;
    eprintln!("worker listening on {bind}");
    HttpServer::new(Endpoint::builder().bind(agent).build())
        .serve(listener)
        .await;
    Ok(())
}
