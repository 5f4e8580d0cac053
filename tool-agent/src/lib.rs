//! Agents on real models: model clients over HTTP, streamed tool-call
//! assembly, the agent loop, and the `agent` (sub-agents) and `evaluate` tools.
//!
//! ```
//! use tool_agent::{Agent, AgentEvent, ScriptedClient, ScriptedTurn, StopReason};
//! use tool_core::format::ToolCall;
//! use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};
//! use serde_json::{json, Map, Value};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let mut tools = ToolRegistry::new();
//! let spec = ToolSpec::new("clock", "The time.", json!({"type": "object", "properties": {}}));
//! tools.register(Tool::new(spec, |_: Map<String, Value>, _| async { ToolResult::ok("12:00") })?)?;
//!
//! // A real model: `tool_agent::OpenAiChatClient::new("model").base_url("http://127.0.0.1:8080/v1")`.
//! let model = ScriptedClient::new([
//!     ScriptedTurn::calls([ToolCall::new("c1", "clock", "{}")]),
//!     ScriptedTurn::text("It is noon."),
//! ]);
//! let out = Agent::new(model, tools)
//!     .on_event(|e| if let AgentEvent::CallResult { call, result, .. } = e {
//!         println!("{} -> {}", call.name, result.output);
//!     })
//!     .run("What time is it?")
//!     .await?;
//! assert_eq!(out.stop, StopReason::Answered);
//! assert_eq!(out.text, "It is noon.");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Pieces
//! - [`ModelClient`]: one trait for every endpoint — [`OpenAiChatClient`]
//!   (any OpenAI-compatible server: OpenAI, vLLM, llama.cpp, Ollama,
//!   `OpenRouter`), [`OpenAiResponsesClient`], [`AnthropicClient`], and
//!   [`ScriptedClient`] for tests. Requests carry the conversation
//!   ([`Message`]), the tool list rendered by tool-core for the client's
//!   [`Format`](tool_core::Format) and a [`ToolChoice`]; answers are
//!   [`StreamEvent`]s. Errors are [`ModelError`]s (HTTP status, 429 with
//!   `retry-after`, truncated streams, answers over [`MAX_EVENT_BYTES`] per
//!   event or [`MAX_ANSWER_BYTES`] in all); [`RetryPolicy`] retries only
//!   while nothing of an answer was read.
//! - [`provider`]: one folder per model API (its [`Provider`](provider::Provider)
//!   impl, request and answer shapes, stream assembler) over one generic
//!   [`HttpClient`](provider::HttpClient); the HTTP clients above are its
//!   aliases. A new provider is one folder plus one line (`docs/ARCHITECTURE.md`).
//! - [`assemble`]: the per-provider stream state machines under one path,
//!   and [`from_sse`](assemble::from_sse), the bounded SSE driver.
//! - [`Agent`]: the loop, its limits and its [`AgentEvent`]s. It runs on a
//!   [`RegistryView`](tool_core::RegistryView) (or a plain registry): the
//!   view's tool list is rendered each turn, so tools that `tool_search`
//!   loaded join the next request.
//! - [`subagent`]: the `agent` and `evaluate` tools, presets, the trace store.
//! - [`review`]: a second model as approver ([`Reviewer`](review::Reviewer),
//!   proposer–reviewer) and beside read-only calls
//!   ([`SafetyCheck`](review::SafetyCheck), a middleware layer).
//! - [`summarize`]: large results summarised by a model, the full text
//!   spilled ([`Summarizer`](summarize::Summarizer), a middleware layer).
//!
//! Provider shapes are not redefined here: tool lists come from
//! `ToolRegistry::schemas_in`, calls are read with `ToolCall::parse` and
//! results written with `render_result` (all in [`tool_core::format`]).
//!
//! # Dependencies and why
//! - `reqwest` (no default features; `stream`): the HTTP client of the Rust
//!   ecosystem, already in the tree through `rmcp`. TLS (feature `tls`, on by
//!   default) is reqwest's own rustls setup (aws-lc-rs provider, no system
//!   OpenSSL). Not `rustls-no-provider`: with it every other reqwest client
//!   of the program (an MCP client's) would panic for want of a provider.
//! - `sse-stream`: the Server-Sent Events parser. Chosen over
//!   `eventsource-stream` (last release February 2022, on `nom` 7) because it
//!   is maintained (0.2.6), small, and already built for `rmcp`'s streamable
//!   HTTP client, so it costs no extra compile.
//! - `tool-builtins` (optional, feature `builtins`, off by default): only for
//!   `SkillSource` on its `SkillSet`. Off by default since issue 24: it
//!   roughly doubles a clean build (image codecs, grep), and an agent gets
//!   the built-in tools only by asking (`tool_builtins::registry()`), never
//!   through `ToolRegistry::global()`. Build lighter still with
//!   `default-features = false` (no `tls`: `http://` endpoints only).
//! - `tool-rules`: "did you mean" for unknown presets
//!   (`tool_rules::suggest::did_you_mean`) and message clipping
//!   (`tool_rules::text::clip`), the workspace's one home of both.
//! - `memchr`: finds line ends in streamed bytes so each server-sent event
//!   is counted against [`MAX_EVENT_BYTES`] before it is parsed (the
//!   standard vectorised byte search; already in the tree through
//!   `serde_json`).
//! - `chrono` (no default features): the UTC timestamp of sub-trace ids.
//! - `getrandom`: the 128 random bits that end a sub-trace id, so that no
//!   trace can guess another's (the standard, minimal crate for the OS's
//!   random source; already in the tree through reqwest's TLS-less stack and
//!   tempfile, and no RNG is needed on top of it).
//! - `schemars`: the schemas of the `agent` and `evaluate` tools come from
//!   their argument types (`AgentArgs`, `EvaluateArgs`) through
//!   `tool_core::Tool::typed`, as a `#[tool]` fn's do; the same version
//!   tool-core uses.
//! - `tokio`, `tokio-util`, `futures-util`, `serde`/`serde_json`,
//!   `thiserror`, `tracing`: as in tool-core.

mod agent;
pub mod assemble;
mod client;
mod complete;
mod error;
mod limits;
mod message;
#[cfg(feature = "otel")]
pub mod otel;
pub mod provider;
pub mod review;
mod scripted;
pub mod subagent;
pub mod summarize;
pub mod telemetry;
mod transport;

pub use agent::{Agent, AgentError, AgentEvent, RunOutput, StopReason};
pub use client::{EventStream, ModelClient, SendFuture};
pub use error::{ModelError, ModelErrorKind};
pub use limits::{AgentLimits, DEFAULT_MAX_TURNS};
pub use message::{
    Message, ModelRequest, NOT_RUN_MESSAGE, RESPONSE_INFO_MAX_CHARS, StreamEvent, ToolChoice,
    ToolOutcome, Usage, rendering_for, repair_dangling_calls,
};
pub use provider::anthropic::{
    ANTHROPIC_BASE_URL, ANTHROPIC_VERSION, AnthropicClient, DEFAULT_MAX_TOKENS, TOOL_SEARCH_BETA,
};
pub use provider::openai_chat::{OPENAI_BASE_URL, OpenAiChatClient};
pub use provider::responses::OpenAiResponsesClient;
pub use scripted::{ScriptedClient, ScriptedTurn, SeenRequest};
pub use transport::limits::{MAX_ANSWER_BYTES, MAX_EVENT_BYTES};
pub use transport::retry::RetryPolicy;
