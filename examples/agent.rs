//! An agent on your own model endpoint, with the built-in coding tools.
//!
//! ```text
//! cargo run -p examples --example agent -- --base-url http://127.0.0.1:8080/v1 \
//!     --model my-model --workspace . "Which files mention TODO?"
//! ```
//!
//! Runs the built-in tools (read, write, edit, bash, glob, grep, …) confined
//! to `--workspace` (default: the current folder), plus the `agent` tool
//! for sub-agents with `--sub-agents`, and prints every event as it streams:
//! each request, the model's text, each tool call with its name and
//! arguments, each result. `--tool-choice NAME` forces the first turn's tool
//! (small local models need it); the key comes from `--api-key` or the
//! provider's environment variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`),
//! the base URL from `--base-url` or `OPENAI_BASE_URL` / `ANTHROPIC_BASE_URL`.
//! Exits with status 1 when the run fails, 2 when it ends without an answer.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use clap::{Parser, ValueEnum};
use tool_agent::subagent::SubAgents;
use tool_agent::{
    Agent, AgentEvent, AnthropicClient, ModelClient, OpenAiChatClient, OpenAiResponsesClient,
    StopReason, ToolChoice,
};
use tool_core::{ToolArgs, ToolResult};

#[derive(Clone, Copy, Debug, ValueEnum)]
enum Provider {
    /// OpenAI-compatible Chat Completions (OpenAI, vLLM, llama.cpp, Ollama, `OpenRouter`).
    OpenaiChat,
    /// OpenAI Responses.
    Responses,
    /// Anthropic Messages.
    Anthropic,
}

/// Run an agent with the built-in tools against a model endpoint.
#[derive(Parser, Debug)]
struct Args {
    /// The task.
    task: String,
    /// Base URL of the API (e.g. `http://127.0.0.1:8080/v1`) [default: the provider's environment variable, else its public endpoint].
    #[arg(long)]
    base_url: Option<String>,
    /// Model name.
    #[arg(long)]
    model: String,
    /// API key [default: `OPENAI_API_KEY` / `ANTHROPIC_API_KEY`].
    #[arg(long)]
    api_key: Option<String>,
    /// Which API the endpoint speaks.
    #[arg(long, value_enum, default_value = "openai-chat")]
    provider: Provider,
    /// Folder the tools are confined to.
    #[arg(long, default_value = ".")]
    workspace: PathBuf,
    /// Force this tool on the first turn.
    #[arg(long)]
    tool_choice: Option<String>,
    /// Most requests (at least 1).
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    max_turns: u32,
    /// Read answers whole instead of streaming them.
    #[arg(long)]
    no_stream: bool,
    /// Cap on each answer's tokens.
    #[arg(long)]
    max_tokens: Option<u32>,
    /// Also offer the `agent` tool (sub-agents on the same model).
    #[arg(long)]
    sub_agents: bool,
}

fn client(args: &Args) -> Arc<dyn ModelClient> {
    macro_rules! configure {
        ($c:expr) => {{
            let mut c = $c.streaming(!args.no_stream);
            if let Some(url) = &args.base_url {
                c = c.base_url(url);
            }
            if let Some(key) = &args.api_key {
                c = c.api_key(key);
            }
            Arc::new(c)
        }};
    }
    match args.provider {
        Provider::OpenaiChat => configure!(OpenAiChatClient::new(&args.model)),
        Provider::Responses => configure!(OpenAiResponsesClient::new(&args.model)),
        Provider::Anthropic => configure!(AnthropicClient::new(&args.model)),
    }
}

fn short(text: &str, max: usize) -> String {
    let one_line = text.replace('\n', "⏎");
    match one_line.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &one_line[..i]),
        None => one_line,
    }
}

fn print_event(e: &AgentEvent<'_>) {
    let mut out = std::io::stdout().lock();
    let _ = match e {
        AgentEvent::RequestSent {
            turn,
            messages,
            tool_choice,
            ..
        } => {
            writeln!(
                out,
                "\n── turn {turn}: request with {messages} message(s), tool choice {tool_choice:?}"
            )
        }
        AgentEvent::TextDelta { text, .. } => write!(out, "{text}"),
        AgentEvent::CallAssembled { call, .. } => {
            writeln!(
                out,
                "\n→ {} {}",
                call.name,
                short(&arguments_text(&call.arguments), 300)
            )
        }
        AgentEvent::CallResult { call, result, .. } => {
            writeln!(out, "← {} {}", call.name, describe(result))
        }
        AgentEvent::TurnDone { turn, calls, usage } if usage.total() == 0 => writeln!(
            out,
            "\n── turn {turn} done: {calls} call(s), token usage not reported by the server"
        ),
        AgentEvent::TurnDone { turn, calls, usage } => writeln!(
            out,
            "\n── turn {turn} done: {calls} call(s), {} input + {} output tokens",
            usage.input_tokens, usage.output_tokens
        ),
        _ => Ok(()),
    };
    let _ = out.flush();
}

/// A call's arguments as the model sent them (JSON text), not Rust's debug form.
fn arguments_text(args: &ToolArgs) -> String {
    match args {
        ToolArgs::Text(text) => text.clone(),
        ToolArgs::Value(value) => value.to_string(),
    }
}

fn describe(result: &ToolResult) -> String {
    match &result.error {
        Some(e) => format!("error: {}", short(&e.message, 200)),
        None => short(&result.output, 200),
    }
}

#[tokio::main]
async fn main() -> std::process::ExitCode {
    let args = Args::parse();
    if let Some(url) = &args.base_url {
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            eprintln!(
                "--base-url {url}: expected an http:// or https:// URL, e.g. http://127.0.0.1:8080/v1"
            );
            return std::process::ExitCode::FAILURE;
        }
    }
    let ctx = match tool_builtins::context(&args.workspace) {
        Ok(ctx) => ctx,
        Err(e) => {
            eprintln!("workspace {}: {e}", args.workspace.display());
            return std::process::ExitCode::FAILURE;
        }
    };
    let model = client(&args);
    let mut tools = tool_builtins::registry();
    if args.sub_agents {
        let sub = Arc::new(
            SubAgents::with_shared_client(model.clone(), tools.clone()).max_turns(args.max_turns),
        );
        if let Err(e) = sub.agent_tool().and_then(|t| tools.register(t)) {
            eprintln!("the agent tool: {e}");
            return std::process::ExitCode::FAILURE;
        }
    }
    let known: Vec<String> = tools.names().into_iter().map(str::to_owned).collect();
    let mut agent = Agent::with_shared_client(model, tools)
        .system("You are a coding agent. Use the tools to answer; be brief.")
        .max_turns(args.max_turns)
        .context(ctx)
        .on_event(print_event);
    if let Some(name) = &args.tool_choice {
        if !known.iter().any(|n| n == name) {
            eprintln!(
                "--tool-choice {name}: no such tool; the tools are: {}",
                known.join(", ")
            );
            return std::process::ExitCode::FAILURE;
        }
        agent = agent.first_tool_choice(ToolChoice::Tool(name.clone()));
    }
    if let Some(n) = args.max_tokens {
        agent = agent.max_output_tokens(n);
    }
    match agent.run(args.task.clone()).await {
        Ok(out) => {
            println!(
                "\n== {:?} after {} turn(s), {} tool call(s), {} tool error(s), trace {}",
                out.stop,
                out.turns,
                out.tool_calls,
                out.tool_errors.len(),
                out.trace_id
            );
            if out.stop == StopReason::Answered {
                std::process::ExitCode::SUCCESS
            } else {
                std::process::ExitCode::from(2)
            }
        }
        Err(e) => {
            eprintln!("\nerror: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
