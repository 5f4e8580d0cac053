//! The transport: everything between a model request body and a stream of
//! [`StreamEvent`](crate::StreamEvent)s that does not depend on the provider.
//!
//! - [`http`]: the `reqwest` client, POST with the [`RetryPolicy`](retry::RetryPolicy),
//!   HTTP status → [`ModelError`](crate::ModelError), whole JSON answers;
//! - [`retry`]: when a request is sent again;
//! - [`limits`]: the size caps on answers ([`MAX_EVENT_BYTES`](limits::MAX_EVENT_BYTES)
//!   per server-sent event, [`MAX_ANSWER_BYTES`](limits::MAX_ANSWER_BYTES) per answer);
//! - [`sse`]: the Server-Sent Events driver and the [`Assembler`](sse::Assembler)
//!   trait it drives (each provider's stream state machine implements it, in
//!   `provider/<name>/stream.rs`).
//!
//! Arrows: `transport` imports only `client` (the stream types), `error` and
//! `message`; `provider` imports `transport`, never the reverse.

pub(crate) mod http;
pub(crate) mod limits;
pub(crate) mod retry;
pub(crate) mod sse;
