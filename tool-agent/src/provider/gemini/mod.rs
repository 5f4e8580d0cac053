//! Gemini `streamGenerateContent?alt=sse`: the stream assembler only
//! ([`GeminiAssembler`], `stream.rs`), for recordings and other transports.
//! A Gemini client is this folder's `mod.rs` growing a [`Provider`](crate::provider::Provider)
//! impl and `pub type GeminiClient = HttpClient<Gemini>;` (see
//! `docs/ARCHITECTURE.md`, "A new model provider").

mod stream;

pub use stream::GeminiAssembler;
