//! Our tools inside other agent frameworks, each behind a cargo feature that
//! is off by default:
//!
//! | feature | module | what it gives |
//! |---|---|---|
//! | `rig` | `tool_adapters::rig` | every tool of a [`ToolRegistry`](tool_core::ToolRegistry) or [`RegistryView`](tool_core::RegistryView) as a rig `DynamicTool` / in a rig `ToolSet`, our `execute` pipeline running inside each call |
//! | `rig-reqwest` | – | `rig` plus rig's bundled reqwest transport, for the `rig_agent` example's OpenAI-compatible client |
//! | `async-openai` | `tool_adapters::openai` | our schemas as async-openai's `ChatCompletionTools`, its tool calls as our [`ToolCall`](tool_core::ToolCall)s, our results as its tool messages, and back |
//!
//! With no feature the crate is empty: the workspace's default build
//! compiles neither rig nor async-openai.
//!
//! ```
//! // The default build has no adapter; the crate itself always compiles.
//! let view = tool_core::RegistryView::new(tool_core::ToolRegistry::new());
//! assert!(view.names().is_empty());
//! ```
//!
//! # Why a crate of its own
//!
//! The adapters could have been features of `tool-agent`, but that crate is
//! our own agent loop with its own model clients (reqwest, SSE): a host that
//! drives its agent with rig or async-openai wants our tools, not a second
//! agent runtime. This crate depends on `tool-core` alone (plus the framework
//! a feature names), so `tool-adapters --features rig` adds rig and nothing of
//! ours beyond the runtime. It sits beside `tool-agent` in the architecture
//! (imports `tool-core`; nothing imports it).
//!
//! # Crate choices
//!
//! - **rig** (`rig-core` and `rig-agent`, pinned `=0.44.0`): rig-core holds
//!   the tool contracts (`DynamicTool`, the tool's output and error types),
//!   rig-agent the `ToolSet` and the agent loop. 0.44 is the newest release that builds with Rust
//!   1.95 (0.45 and later ask for 1.97). rig removed `ToolDyn` from its
//!   public API in 0.44 ("use `DynamicTool` for runtime-defined tools", its
//!   CHANGELOG), so runtime-defined tools such as ours are `DynamicTool`s.
//!   Both without default features: no HTTP client unless `rig-reqwest`.
//! - **async-openai** (`0.43`, only its `chat-completion-types` feature): the
//!   typed Chat Completions request and response bodies, without its client,
//!   reqwest or tokio. It is the typed OpenAI crate most Rust agent code is
//!   written against.

#[cfg(feature = "rig")]
pub mod rig;

#[cfg(feature = "async-openai")]
pub mod openai;
