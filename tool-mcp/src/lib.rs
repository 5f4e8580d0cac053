//! Model Context Protocol for tool registries, both ways: serve any
//! [`ToolRegistry`](tool_core::ToolRegistry) as an MCP server
//! ([`McpServer`]), and import any MCP server's tools into a registry as
//! local runtime tools ([`McpToolSource`]).
//!
//! ```
//! use serde_json::json;
//! use tool_core::{Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
//! use tool_mcp::{LiveRegistry, McpServer, McpToolSource};
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A registry with one tool, served over Streamable HTTP on a free loopback port.
//! let mut tools = ToolRegistry::new();
//! let spec = ToolSpec::new("shout", "Upper-case a text.", json!({
//!     "type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]
//! }));
//! tools.register(Tool::new(spec, |args: serde_json::Map<String, serde_json::Value>, _ctx| async move {
//!     ToolResult::ok(args["text"].as_str().unwrap_or_default().to_uppercase())
//! })?)?;
//! let stop = tokio_util::sync::CancellationToken::new();
//! let (addr, _task) = McpServer::new(tools).serve_http(([127, 0, 0, 1], 0).into(), stop.clone()).await?;
//!
//! // Another registry imports it: the tool is `demo__shout` there.
//! let local = LiveRegistry::new(ToolRegistry::new());
//! let remote = McpToolSource::http(format!("http://{addr}/mcp")).named("demo").connect().await?;
//! assert_eq!(remote.import_into(&local).await?, ["demo__shout"]);
//! let result = local.snapshot().execute("demo__shout", json!({"text": "hi"}), &ToolContext::new()).await;
//! assert_eq!(result.output, "HI");
//! stop.cancel();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! # }).unwrap();
//! ```
//!
//! # Server
//! [`McpServer`] implements rmcp's `ServerHandler` by hand over a
//! [`LiveRegistry`]; tool definitions come from the registry (rendered by
//! `tool_core::format`'s MCP pipeline), never from a second declaration.
//! `tools/list` pages in name order; `tools/call` runs
//! [`ToolRegistry::execute`](tool_core::ToolRegistry::execute) with a context
//! per request (the base context plus the request's cancellation token and,
//! when the client asked for progress, a progress sink). Tool failures and
//! bad arguments are results with `isError: true`; an unknown tool is a
//! protocol error. Confirmation goes to the client when it can answer:
//! an elicitation in 2025-11-25 sessions, an input-required result
//! (SEP-2322) whose form approves, edits editable parameters or denies in the
//! 2026-07-28 era; else to the base context's approver. The client answers
//! such a confirmation on 2026-07-28 connections with the calling context's
//! approver. Changes made through
//! [`LiveRegistry::update`] become `notifications/tools/list_changed`.
//! Transports: [`McpServer::serve_stdio`] (with the stdout protection of
//! [`protect_stdout`]), [`McpServer::serve_http`] (Streamable HTTP at `/mcp`
//! on loopback, Host and Origin checked), [`McpServer::serve_http_with`]
//! ([`HttpAccess`]: remote clients with a bearer token),
//! [`McpServer::serve_transport`].
//!
//! Incoming messages go through this crate's own framing before rmcp sees
//! them: at most [`MAX_MESSAGE_BYTES`] each, checked against JSON-RPC 2.0 and
//! the params of the methods served, so that every request gets exactly one
//! answer with its `id` (rmcp alone drops oversize and non-JSON lines and
//! answers some malformed ones without their id).
//! [`McpServer::serve_transport`] lists the answers.
//!
//! Stopping: [`McpServer::serve_stdio`] stops on `SIGTERM`, `SIGINT` and
//! `SIGHUP` ([`shutdown_signal`]); the `_until` variants and
//! [`McpServer::serve_http`] on a cancellation token. Calls still running are
//! then cancelled and waited for, up to [`SHUTDOWN_TIMEOUT`]. Work a
//! cancelled call left on the blocking pool (a `bash_command` killing its
//! command) ends with the runtime: shut it down with
//! `Runtime::shutdown_timeout(SHUTDOWN_TIMEOUT)` rather than exiting at once.
//!
//! A tool asks for input in the middle of its call through its context
//! ([`input`]: [`input::ask`], [`input::can_ask`]): a form (elicitation), a
//! model's answer (sampling) or the client's roots. In 2025-11-25 sessions
//! these go to the client as server requests; in the 2026-07-28 era the call
//! ends with an input-required result (SEP-2322) and a `requestState`
//! sealed with HMAC-SHA256 (bound to the tool and its arguments, at most
//! [`MAX_REQUEST_STATE_BYTES`], valid for [`REQUEST_STATE_TTL`]), and the
//! tool runs again with the answers when the client calls back; outside MCP
//! they go to the host's hooks. A parameter declared with
//! [`with_mcp_header`] (`x-mcp-header`, SEP-2243) is also sent by clients as
//! an `Mcp-Param-<Name>` HTTP header, which the server checks against the
//! argument (HTTP 400, `-32020` on a mismatch).
//!
//! Beside the tools, [`McpServer::with_catalog`] serves a [`Catalog`] of
//! prompts, resources and resource templates ([`catalog`]): `prompts/*`,
//! `resources/*` (read, subscribe/unsubscribe in 2025-11-25,
//! `subscriptions/listen` in 2026-07-28, `list_changed` and `updated`
//! notifications) and `completion/complete`, declared with the
//! [`macro@prompt`] and [`macro@resource`] attribute macros
//! ([`Catalog::declared`]) or built at run time. The `prompts`,
//! `resources` and `completions` capabilities are always declared.
//!
//! Long-running tools: a tool declared with task support
//! (`#[tool(task_support = "optional" | "required")]`,
//! [`ToolSpec::with_task_support`](tool_core::ToolSpec::with_task_support))
//! answers a client that declared the tasks extension
//! (`io.modelcontextprotocol/tasks`, SEP-2663, advertised while a served
//! tool has task support) with a
//! task: `tasks/get` polls it and returns the result once done,
//! `tasks/cancel` stops it. A task is a job of the one job registry
//! (cross-cutting §3), bounded by [`TaskLimits`]
//! ([`McpServer::with_task_limits`]); the module docs of `tasks.rs` give the
//! model. From inside a tool, [`client_request`] reads the client's
//! declared capabilities (a missing one becomes `-32021`) and logs at the
//! request's level (2026-07-28: nothing unless the request asked for a level).
//!
//! # Client
//! [`McpToolSource::stdio`] / [`McpToolSource::http`] connect;
//! [`McpConnection::import_into`] registers every remote tool (all pages) as
//! `<server>__<tool>` ([`local_tool_name`]) and follows list changes. Every
//! request has a timeout; when the server dies, calls in flight fail at once
//! with a connection-closed error, the server's tools leave the
//! [`LiveRegistry`] and the server is recorded there as unavailable.
//! [`load_mcp_config`] reads `.mcp.json` (entries with `"disabled": true`
//! are left out); [`read_mcp_config`] and [`import_mcp_servers`] import
//! every server of such a file with each server isolated: one that is
//! missing, exits at once or dies later costs only its own tools.
//!
//! An imported server can be offered as one skill instead of N schemas:
//! write its imported tools' specs as a `SKILL.md` with tool-builtins'
//! `skills::write::for_tools` (`CallStyle::ToolCall`: a section per tool,
//! its arguments, a call line `server__tool {"arg": …}`) and defer the
//! tools in the model's view (`RegistryView::defer(["server__*"])`): the
//! `skill` tool lists the server on one line, and calls by name still run
//! (`tests/skill.rs`; from the command line, `tool skill-md --mcp SERVER`).
//!
//! `url` servers may need OAuth 2.1 ([`McpToolSource::with_oauth`],
//! [`OAuth`]): on a `401` the client discovers the authorization server,
//! registers, runs the authorization-code flow with PKCE through a
//! [`LoopbackLogin`] (or the client-credentials grant), caches the tokens in
//! a [`TokenCache`] (`0600` files in the private state folder) and refreshes
//! them; a `403 insufficient_scope` steps up at most [`MAX_STEP_UPS`] times.
//!
//! # Dependencies and why
//! - `rmcp` 3.x, the official Rust SDK of the protocol: both protocol eras
//!   (2025-11-25 sessions and 2026-07-28 stateless with `server/discover`),
//!   the stdio, child-process and Streamable HTTP transports, pagination,
//!   progress, cancellation and elicitation, maintained with the
//!   specification. Its `#[tool]` macros are not used: our registry is the
//!   single definition of a tool. Its `tls` support is behind our `tls`
//!   feature (off: plain HTTP to loopback servers needs none, and it halves
//!   the build).
//! - `axum` (no default features, HTTP/1): hosts rmcp's Streamable HTTP tower
//!   service, the way rmcp documents and tests it.
//! - `rustix`: the file-descriptor duplication for stdout protection without
//!   `unsafe` (the workspace forbids it); already a workspace dependency.
//! - `sha2`: the SHA-256 that binds a 2026-07-28 confirmation's
//!   `requestState` to its tool and arguments; already in the tree through
//!   rmcp.
//!   Also the digest under which an HTTP bearer token is kept and compared.
//! - rmcp's `request-state` feature (`RequestStateCodec`): the HMAC-SHA256
//!   seal, associated data and expiry of the `requestState` of a tool's
//!   input rounds, rather than a seal of our own; it brings `hmac` and
//!   `zeroize`, both already in the tree.
//! - `getrandom`: also the 32 random bytes of that seal's key, made once
//!   per process.
//! - `http`: the header name and value types of `url` servers' `headers`
//!   (the types rmcp's transport takes; already in the tree through rmcp).
//! - `chrono` (no default features): the ISO 8601 `createdAt` /
//!   `lastUpdatedAt` of MCP tasks; already in the tree through rmcp.
//! - `tool-rules`: `clip`, the one way to quote untrusted text in messages.
//! - `subtle`: constant-time comparison of bearer-token digests (no timing
//!   leak of a token), a `RustCrypto` crate `rustls` also uses; small, no
//!   dependencies.
//! - `tool-macros`: the `#[prompt]` / `#[resource]` attribute macros, next
//!   to `#[tool]` in the workspace's one proc-macro crate.
//! - `inventory`: link-time registration of `#[prompt]` / `#[resource]`
//!   fns, as tool-core registers `#[tool]` fns (no central list).
//! - `base64`: binary resource contents travel base64-encoded (`blob`);
//!   already in the tree through tool-core.
//! - `tokio-util` with `rt`: `TaskTracker`, to wait for the calls still
//!   running when a server stops.
//! - rmcp's `auth` feature (over the `oauth2` crate) for OAuth 2.1: the
//!   SDK's own implementation of the MCP authorization specification
//!   (metadata discovery and its variants, registration, PKCE, `resource`,
//!   issuer checks, refresh), kept in step with the conformance suite, rather
//!   than a second one; `oauth2` itself for its `TokenResponse` accessors,
//!   `reqwest` (the HTTP client rmcp's transport already uses),
//!   `async-trait` (the form of rmcp's `CredentialStore` trait) and
//!   `sse-stream` (the transport trait's stream type): all already in the
//!   tree through rmcp. This crate adds the transport client that reacts to
//!   challenges mid-connection, the token cache and the loopback login.
//! - `tool-agent`, optional (feature `agent`): `AgentSampler` answers
//!   servers' sampling requests with the workspace's one model-client trait
//!   (OpenAI, Anthropic, scripted clients) rather than a second one;
//!   `futures-util` reads its answer stream and is the OAuth transport's
//!   stream type (already in the workspace).
//! - `reqwest` (`stream`) also carries the legacy HTTP+SSE client transport
//!   (a streamed `GET`, plain `POST`s), which rmcp 3 no longer has, and the
//!   client wrapped to put `Mcp-Method` on `initialize`; `sse-stream` is also
//!   the event type of rmcp's `StreamableHttpClient` trait, which that
//!   wrapper implements. The legacy transport parses its stream itself,
//!   bounded (see `legacy_sse`).
//!
//! The lazily imported servers' tool lists are cached in the private state
//! folder ([`ToolListCache`]); the format is this crate's own JSON.
//! - `schemars`, `serde`, `serde_json`, `tokio`, `tokio-util`, `tracing`:
//!   the workspace's standards (the elicitation form schema, JSON, the
//!   runtime and cancellation tokens, diagnostics).

mod approval;
mod asking;
mod auth;
mod cancel;
pub mod catalog;
mod catalog_wire;
mod client;
pub mod client_request;
mod config;
mod declare;
mod error;
mod form_check;
mod framing;
mod headers;
mod http;
pub mod input;
mod input_required;
mod lazy;
mod legacy_sse;
mod mcp_header;
mod method_header;
mod names;
mod requests;
mod sandbox;
mod server;
mod stdio;
mod task_call;
mod task_input;
mod tasks;

pub use auth::{
    CacheKey, DEFAULT_LOGIN_TIMEOUT, Grant, Idp, LoopbackLogin, MAX_ASSERTION_BYTES,
    MAX_AUTHORIZATIONS, MAX_CACHE_FILE_BYTES, MAX_KEY_FILE_BYTES, MAX_OAUTH_VALUE_BYTES,
    MAX_SCOPES, MAX_STEP_UPS, OAuth, TokenCache, TokenSource,
};
pub use catalog::{Catalog, Completer, Prompt, Resource, ResourceBody, ResourceTemplate};
/// What the `#[prompt]` and `#[resource]` macros' output calls; not an API.
#[doc(hidden)]
pub mod __private {
    pub use crate::declare::*;
}
pub use cancel::{CANCEL_MARGIN, settle_cancellations};
pub use client::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_SERVER_IDLE_TIMEOUT, McpConnection,
    McpToolSource, ProtocolEra,
};
pub use config::{
    ImportOutcome, ImportReport, McpServerEntry, import_mcp_servers, import_mcp_servers_lazily,
    load_mcp_config, parse_mcp_config, parse_mcp_config_entries, read_mcp_config,
};
pub use error::{Error, ErrorKind};
pub use framing::{ID_PROBE_BYTES, MAX_MESSAGE_BYTES};
pub use headers::{MAX_HEADER_VALUE_BYTES, MAX_HEADERS};
pub use http::{
    DEFAULT_BODY_TIMEOUT, DEFAULT_HEADER_TIMEOUT, DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_SESSIONS,
    HEALTH_CACHE, HEALTH_TIMEOUT, HttpAccess, HttpLimits, MAX_RETRY_AFTER, MIN_TOKEN_LEN,
};
pub use input_required::{MAX_REQUEST_STATE_BYTES, REQUEST_STATE_TTL};
pub use lazy::{DEFAULT_CACHE_TTL, LazyServer, MAX_CACHE_BYTES, ToolListCache};
pub use mcp_header::with_mcp_header;
pub use names::{MAX_NAME_LEN, local_tool_name, server_prefix};
#[cfg(feature = "agent")]
pub use requests::AgentSampler;
pub use requests::{
    MAX_ELICITATION_FIELDS, MAX_SAMPLING_CHARS, MAX_SAMPLING_MESSAGES, MAX_SAMPLING_TOKENS,
    Sampler, SamplingAnswer, SamplingFuture, SamplingMessage, SamplingRequest, SamplingRole,
};
/// The rmcp crate this one is built on, for its model types.
pub use rmcp;
pub use server::{ClientScope, DEFAULT_PAGE_SIZE, McpServer, SHUTDOWN_TIMEOUT, shutdown_signal};
pub use stdio::protect_stdout;
pub use task_call::{
    DEFAULT_TASK_POLL_INTERVAL, MAX_TASK_INPUT_ROUNDS, MAX_TASK_POLL_INTERVAL, MAX_TASK_POLLS,
    MAX_TASK_RESULT_BYTES, MIN_TASK_POLL_INTERVAL, TASK_CANCEL_TIMEOUT,
};
pub use task_input::MAX_TASK_INPUT_RESPONSE_BYTES;
pub use tasks::{
    CANCEL_GRACE, DEFAULT_MAX_LIVE_TASKS, DEFAULT_MAX_RESULT_BYTES, DEFAULT_MAX_TOTAL_TASKS,
    DEFAULT_POLL_INTERVAL, DEFAULT_TASK_TTL, TASK_JOB_KIND, TaskLimits,
};
pub use tool_core::LiveRegistry;
pub use tool_core::live::{MAX_REASON_LEN, MAX_UNAVAILABLE};
pub use tool_macros::{prompt, resource};
