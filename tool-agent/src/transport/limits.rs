//! Size caps on what a model endpoint sends back. Both are counted in bytes
//! as received (before UTF-8 or JSON decoding), so a server, a proxy or a
//! runaway generation can never make the client buffer more than this.

/// Largest single server-sent event of a streamed answer: 16 MiB (the
/// default cap of rmcp's SSE client, `DEFAULT_MAX_SSE_EVENT_SIZE`). Counted
/// from the first byte after a blank line to the next blank line, line
/// terminators excluded. A bigger event is refused with
/// [`ModelErrorKind::EventTooLarge`](crate::ModelErrorKind::EventTooLarge)
/// before it is parsed. Provider events are small (one delta of text or
/// arguments), and Gemini's whole-chunk events hold one candidate's delta.
pub const MAX_EVENT_BYTES: usize = 16 << 20;

/// Largest whole answer, streamed or not: 64 MiB of body bytes. A streamed
/// answer that goes past it is stopped with
/// [`ModelErrorKind::AnswerTooLarge`](crate::ModelErrorKind::AnswerTooLarge)
/// (the events before it were already yielded); a whole (non-streamed) answer
/// over it is refused with the same kind before it is parsed.
pub const MAX_ANSWER_BYTES: usize = 64 << 20;
