//! The Server-Sent Events driver: response bytes → bounded SSE events →
//! an [`Assembler`] → [`StreamEvent`]s.
//!
//! Bytes are counted before they are parsed: one event over
//! [`MAX_EVENT_BYTES`] or an answer over [`MAX_ANSWER_BYTES`] ends the
//! stream with [`EventTooLarge`](ModelErrorKind::EventTooLarge) /
//! [`AnswerTooLarge`](ModelErrorKind::AnswerTooLarge), so a server that never
//! ends an event (or never ends the answer) cannot make the client buffer
//! without bound. The SSE grammar (fields, line ends CRLF / LF / CR, a blank
//! line ending an event) is the WHATWG HTML Living Standard's "Server-sent
//! events" section; the parsing itself is the `sse-stream` crate's.

use std::collections::VecDeque;
use std::pin::Pin;

use futures_util::{Stream, StreamExt};

use super::limits::{MAX_ANSWER_BYTES, MAX_EVENT_BYTES};
use crate::client::EventStream;
use crate::error::{ModelError, ModelErrorKind, body_excerpt, describe_call, error_chain};
use crate::message::StreamEvent;

/// A provider's stream state machine: fed one SSE event at a time by the
/// driver ([`from_sse`]), it yields each [`StreamEvent`] as soon as it is
/// complete (see [`assemble`](crate::assemble) for the providers' shapes).
///
/// A new provider implements [`feed`](Self::feed), [`is_done`](Self::is_done),
/// [`open_call`](Self::open_call) and [`end_marker`](Self::end_marker); the
/// provided [`finish`](Self::finish) then gives every provider the same
/// truncation error.
pub trait Assembler: Send {
    /// Reads one SSE event: its `event:` name (if any) and its `data:`
    /// text, appending what it completes to `out`.
    ///
    /// # Errors
    /// [`Malformed`](crate::ModelErrorKind::Malformed) for data outside the
    /// provider's documented shape, [`Provider`](crate::ModelErrorKind::Provider)
    /// for an error event.
    fn feed(
        &mut self,
        event: Option<&str>,
        data: &str,
        out: &mut Vec<StreamEvent>,
    ) -> Result<(), ModelError>;

    /// `true` once the end marker arrived.
    fn is_done(&self) -> bool;

    /// The tool call being streamed, if one is open (the first one, when
    /// several are): what a truncation error names. Default: none.
    fn open_call(&self) -> Option<OpenCall<'_>> {
        None
    }

    /// The provider's end marker as its documentation names it (`message_stop`,
    /// `finish_reason or [DONE]`), for the truncation error. Default:
    /// `"its end marker"`.
    fn end_marker(&self) -> &'static str {
        "its end marker"
    }

    /// The transport ended: flushes what is complete. The provided method
    /// returns `Ok` once [`is_done`](Self::is_done), else
    /// [`truncation`](Self::truncation)'s error.
    ///
    /// # Errors
    /// [`Truncated`](crate::ModelErrorKind::Truncated) when the end marker
    /// never came, naming the call that was open.
    fn finish(&mut self, _out: &mut Vec<StreamEvent>) -> Result<(), ModelError> {
        if self.is_done() {
            Ok(())
        } else {
            Err(self.truncation())
        }
    }

    /// The [`Truncated`](crate::ModelErrorKind::Truncated) error of a stream
    /// that ended before [`end_marker`](Self::end_marker): with the
    /// [`open_call`](Self::open_call), `` `name` (id …) `` and "N bytes of
    /// arguments received, no `end_marker`"; without, "no `end_marker`
    /// before the connection closed".
    fn truncation(&self) -> ModelError {
        let marker = self.end_marker();
        match self.open_call() {
            Some(call) => ModelError::truncated(
                Some(describe_call(call.name, call.id)),
                format!(
                    "{} bytes of {} received, no {marker}",
                    call.received, call.payload
                ),
            ),
            None => {
                ModelError::truncated(None, format!("no {marker} before the connection closed"))
            }
        }
    }
}

/// A tool call still being streamed (see [`Assembler::open_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenCall<'a> {
    /// Its name, when it arrived.
    pub name: Option<&'a str>,
    /// Its id, when it arrived.
    pub id: Option<&'a str>,
    /// Bytes of its arguments received so far.
    pub received: usize,
    /// What those bytes are called in the provider's docs: `"arguments"`
    /// (OpenAI), `"input JSON"` (Anthropic).
    pub payload: &'static str,
}

/// The events of an SSE byte stream read through `assembler`: what the
/// HTTP clients do with a response body, for recordings, other transports
/// and benchmarks. The stream ends after the last event, or with the
/// assembler's error ([`Assembler::finish`] runs when the bytes end; a
/// transport error mid-call becomes [`Truncated`](crate::ModelErrorKind::Truncated)
/// naming the call). Bytes are counted before they are parsed:
/// [`MAX_EVENT_BYTES`] per event (ending the stream with
/// [`EventTooLarge`](ModelErrorKind::EventTooLarge)), [`MAX_ANSWER_BYTES`] in
/// all ([`AnswerTooLarge`](ModelErrorKind::AnswerTooLarge)).
///
/// ```
/// use futures_util::StreamExt;
/// use tool_agent::assemble::{from_sse, AnthropicAssembler};
/// use tool_agent::StreamEvent;
///
/// # tokio::runtime::Runtime::new().unwrap().block_on(async {
/// let sse = "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"clock\",\"input\":{}}}\n\n\
///            event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"\"}}\n\n\
///            event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n";
/// let chunks = futures_util::stream::iter([Ok::<_, std::io::Error>(bytes::Bytes::from(sse))]);
/// let events: Vec<_> = from_sse(chunks, AnthropicAssembler::new()).collect().await;
/// let Ok(StreamEvent::ToolCall(call)) = &events[0] else { panic!("{events:?}") };
/// assert_eq!(call.arguments, serde_json::json!({}).into(), "an empty partial_json is {{}}");
/// let err = events[1].as_ref().unwrap_err();
/// assert!(err.to_string().contains("before its end marker"), "{err}");
/// # });
/// ```
pub fn from_sse<'a, S, E, A>(bytes: S, assembler: A) -> EventStream<'a>
where
    S: Stream<Item = Result<bytes::Bytes, E>> + Send + 'a,
    E: std::error::Error + Send + Sync + 'static,
    A: Assembler + 'a,
{
    let mut bound = Bound::default();
    let bounded = bytes.map(move |item| match item {
        Ok(chunk) => bound.check(&chunk).map(|()| chunk),
        Err(e) => Err(ByteError::Transport(Box::new(e))),
    });
    let sse = sse_stream::SseStream::from_bytes_stream(bounded);
    events_from_sse(Box::pin(sse), assembler)
}

/// The events of an SSE answer, read through `assembler`. An answer whose
/// `content-type` names something else (an HTML error page from a proxy, a
/// JSON body from a wrong path) is one `malformed` error saying so, not a
/// "stream ended early" later.
pub(crate) fn sse_events<'a, A: Assembler + 'a>(
    resp: reqwest::Response,
    assembler: A,
) -> EventStream<'a> {
    let content_type = resp
        .headers()
        .get(reqwest::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    if !content_type.is_empty() && !content_type.starts_with("text/event-stream") {
        let err = ModelError::malformed(format!(
            "the server answered a streamed request with content type `{}`, not an event stream \
             (`text/event-stream`): check that the base URL is the API's root (e.g. \
             http://127.0.0.1:8080/v1), or turn streaming off",
            body_excerpt(&content_type)
        ));
        return Box::pin(futures_util::stream::once(async move { Err(err) }));
    }
    from_sse(resp.bytes_stream(), assembler)
}

/// What the bounded byte stream fails with: the transport's own error, or a
/// cap (told to the driver, which reports it as it is).
#[derive(Debug)]
enum ByteError {
    Transport(Box<dyn std::error::Error + Send + Sync>),
    Limit(ModelError),
}

impl std::fmt::Display for ByteError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The transport's words, so `error_chain` reads as before the wrapper.
            Self::Transport(e) => e.fmt(f),
            Self::Limit(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for ByteError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Transport(e) => e.source(),
            Self::Limit(_) => None,
        }
    }
}

/// Counts the bytes of the current event (since the last blank line) and of
/// the whole answer, over chunk boundaries. Line terminators are CRLF, LF or
/// CR; a line with no bytes before its terminator is blank and ends the event.
#[derive(Debug, Default)]
struct Bound {
    /// Bytes of the whole answer so far.
    total: usize,
    /// Bytes of the current event so far (terminators excluded).
    event: usize,
    /// Bytes of the current line so far.
    line: usize,
    /// The last byte seen was a CR (an LF right after it completes a CRLF).
    after_cr: bool,
}

impl Bound {
    fn check(&mut self, chunk: &[u8]) -> Result<(), ByteError> {
        self.total = self.total.saturating_add(chunk.len());
        if self.total > MAX_ANSWER_BYTES {
            return Err(ByteError::Limit(ModelError::new(
                ModelErrorKind::AnswerTooLarge {
                    limit: MAX_ANSWER_BYTES,
                },
            )));
        }
        let mut rest = chunk;
        while !rest.is_empty() {
            let Some(at) = memchr::memchr2(b'\n', b'\r', rest) else {
                self.grow(rest.len())?;
                break;
            };
            let end = rest[at];
            if at == 0 && end == b'\n' && self.after_cr {
                // The LF of a CRLF whose CR ended the line already.
                self.after_cr = false;
                rest = &rest[1..];
                continue;
            }
            self.grow(at)?;
            if self.line == 0 {
                self.event = 0;
            }
            self.line = 0;
            self.after_cr = end == b'\r';
            rest = &rest[at + 1..];
        }
        Ok(())
    }

    fn grow(&mut self, n: usize) -> Result<(), ByteError> {
        if n == 0 {
            return Ok(());
        }
        self.after_cr = false;
        self.line += n;
        self.event += n;
        if self.event > MAX_EVENT_BYTES {
            return Err(ByteError::Limit(ModelError::new(
                ModelErrorKind::EventTooLarge {
                    limit: MAX_EVENT_BYTES,
                },
            )));
        }
        Ok(())
    }
}

type SseItems<'a> =
    Pin<Box<dyn Stream<Item = Result<sse_stream::Sse, sse_stream::Error>> + Send + 'a>>;

struct State<'a, A> {
    sse: SseItems<'a>,
    asm: A,
    pending: VecDeque<StreamEvent>,
    ended: bool,
}

/// Drives `assembler` over parsed SSE events.
fn events_from_sse<'a, A: Assembler + 'a>(sse: SseItems<'a>, assembler: A) -> EventStream<'a> {
    let state = State {
        sse,
        asm: assembler,
        pending: VecDeque::new(),
        ended: false,
    };
    Box::pin(futures_util::stream::unfold(state, |mut st| async move {
        loop {
            if let Some(ev) = st.pending.pop_front() {
                return Some((Ok(ev), st));
            }
            if st.ended {
                return None;
            }
            let mut out = Vec::new();
            let step = match st.sse.next().await {
                Some(Ok(sse)) => match sse.data {
                    Some(data) => st.asm.feed(sse.event.as_deref(), &data, &mut out),
                    None => Ok(()),
                },
                Some(Err(sse_stream::Error::Body(e))) => {
                    st.ended = true;
                    match e.downcast_ref::<ByteError>() {
                        Some(ByteError::Limit(cap)) => Err(cap.clone()),
                        _ if st.asm.is_done() => st.asm.finish(&mut out),
                        _ => match st.asm.finish(&mut out) {
                            Err(trunc) => Err(with_transport(trunc, &*e)),
                            Ok(()) => Ok(()),
                        },
                    }
                }
                Some(Err(e)) => Err(ModelError::malformed(format!(
                    "not a valid SSE stream: {e}"
                ))),
                None => {
                    st.ended = true;
                    st.asm.finish(&mut out)
                }
            };
            st.pending.extend(out);
            if let Err(e) = step {
                st.ended = true;
                st.pending.clear();
                return Some((Err(e), st));
            }
        }
    }))
}

/// A truncation error with the transport's reason added.
fn with_transport(e: ModelError, cause: &(dyn std::error::Error + Send + Sync)) -> ModelError {
    match e.kind() {
        ModelErrorKind::Truncated { call, detail } => ModelError::truncated(
            call.clone(),
            format!("{detail}; transport: {}", error_chain(cause)),
        ),
        _ => e,
    }
}
