//! Streamed tool-call assembly: provider stream chunks in, [`StreamEvent`](crate::StreamEvent)s
//! out, each tool call yielded as soon as its last fragment arrived.
//!
//! One state machine per provider (in its folder, `provider/<name>/stream.rs`),
//! all behind [`Assembler`] (the trait the SSE driver in `transport/sse.rs`
//! drives): feed each SSE event (`event:` name and `data:` text) with
//! [`Assembler::feed`], then call
//! [`Assembler::finish`] when the transport ends. The shapes follow the
//! providers' streaming references:
//!
//! | provider | a call is complete when | end marker |
//! | --- | --- | --- |
//! | OpenAI Chat Completions ([`OpenAiChatAssembler`]) | the answer ends (`finish_reason` or `[DONE]`); fragments are keyed by `index` in any order | `data: [DONE]` (or a `finish_reason`) |
//! | OpenAI Responses ([`ResponsesAssembler`]) | `response.function_call_arguments.done` (or the item's `response.output_item.done`) | `response.completed` |
//! | Anthropic Messages ([`AnthropicAssembler`]) | the block's `content_block_stop`; an empty `partial_json` is `{}` | `message_stop` |
//! | Gemini `streamGenerateContent?alt=sse` ([`GeminiAssembler`]) | at once: each chunk carries whole `functionCall` parts | a candidate `finishReason` |
//!
//! A transport that ends before the end marker is a
//! [`Truncated`](crate::ModelErrorKind::Truncated) error naming the call
//! that was open; a chunk that is not in the documented shape is
//! [`Malformed`](crate::ModelErrorKind::Malformed). Completed calls are read
//! with tool-core's [`ToolCall::parse`](tool_core::format::ToolCall::parse)
//! from the provider's own call shape, so ids and arguments are handled as
//! for whole answers.
//!
//! This module gathers them under their public paths; the trait and the
//! driver ([`from_sse`]) live in the transport, each assembler in its
//! provider's folder. An assembler implements `feed`, `is_done`,
//! `open_call` and `end_marker`; the provided [`Assembler::finish`] then
//! reports a stream cut short the same way for every provider.
//!
//! ```
//! use tool_agent::assemble::{Assembler, OpenAiChatAssembler};
//! use tool_agent::StreamEvent;
//!
//! let mut asm = OpenAiChatAssembler::new();
//! let mut out = Vec::new();
//! for data in [
//!     r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"read_file","arguments":""}}]}}]}"#,
//!     r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"path\":"}}]}}]}"#,
//!     r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"\"a.txt\"}"}}]}}]}"#,
//!     r#"{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}"#,
//!     "[DONE]",
//! ] {
//!     asm.feed(None, data, &mut out)?;
//! }
//! asm.finish(&mut out)?;
//! let StreamEvent::ToolCall(call) = &out[0] else { panic!() };
//! assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "read_file"));
//! # Ok::<(), tool_agent::ModelError>(())
//! ```

pub use crate::provider::anthropic::AnthropicAssembler;
pub use crate::provider::gemini::GeminiAssembler;
pub use crate::provider::openai_chat::OpenAiChatAssembler;
pub use crate::provider::responses::ResponsesAssembler;
pub use crate::transport::sse::{Assembler, OpenCall, from_sse};
