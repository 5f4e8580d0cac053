//! Model providers: one folder per API, each holding its [`Provider`] impl
//! with the request and answer shapes (`mod.rs`) and its stream
//! [`Assembler`](crate::assemble::Assembler) (`stream.rs`), after rig's
//! `providers/<name>/`. What they share is written once:
//! [`HttpClient`] (the one [`ModelClient`](crate::ModelClient)
//! implementation, its builder setters and the send path), the transport
//! (`crate::transport`: HTTP, retries, SSE, size caps) and the chunk readers
//! of `wire.rs`, and `text_calls.rs`, the option that reads tool calls
//! written as text ([`HttpClient::text_tool_calls`]).
//!
//! | folder | provider | client |
//! | --- | --- | --- |
//! | [`openai_chat`] | [`OpenAiChat`](openai_chat::OpenAiChat) | [`OpenAiChatClient`](crate::OpenAiChatClient) |
//! | [`responses`] | [`OpenAiResponses`](responses::OpenAiResponses) | [`OpenAiResponsesClient`](crate::OpenAiResponsesClient) |
//! | [`anthropic`] | [`Anthropic`](anthropic::Anthropic) | [`AnthropicClient`](crate::AnthropicClient) |
//! | [`gemini`] | (assembler only) | — |
//!
//! Arrows: `provider/<name>/` → `http_client`, `wire`, `transport`,
//! `message`, `error`; nothing in the crate outside `lib.rs` and the
//! [`assemble`](crate::assemble) re-exports imports a provider folder, and
//! no provider folder imports another's stream.

mod http_client;
mod text_calls;
pub(crate) mod wire;

pub mod anthropic;
pub mod gemini;
pub mod openai_chat;
pub mod responses;

pub use http_client::{HttpClient, Provider, RequestOptions};
