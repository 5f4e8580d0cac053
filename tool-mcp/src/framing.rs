//! The server's own JSON-RPC framing, in front of rmcp's service.
//!
//! rmcp's line transport drops lines over its length limit and lines that are
//! not JSON without a word, answers a malformed message without its `id`, and
//! turns a known method with bad params into "method not found". A client
//! then waits for an answer that never comes, or gets one it cannot match.
//! Here every line is read (in bounded memory), checked against JSON-RPC 2.0
//! and, for the methods this server implements, against their params, and
//! every request that does not pass gets exactly one error answer carrying
//! its `id`. Lines that pass go on to rmcp as parsed messages
//! ([`FramedTransport`] implements rmcp's `Transport`). The HTTP transport
//! runs the same check on each POST body ([`check_message`]).
//!
//! The answers (JSON-RPC 2.0 §5.1 error codes; MCP 2025-11-25 "Basic"):
//! - not JSON (or not UTF-8): `-32700`, `id: null`;
//! - JSON but not a JSON-RPC 2.0 message (not an object, an array batch,
//!   `jsonrpc` not `"2.0"`, `method` not a string, `id` not a string or
//!   integer, `params` not an object, a response without `result`/`error`):
//!   `-32600`, with the message's `id` when it has a usable one, else `null`;
//! - a request of a method rmcp knows whose params do not fit (a `tools/call`
//!   without a string `name`, `arguments` that are not an object, a
//!   `logging/setLevel` level outside the eight syslog names, ...): `-32602`
//!   with the request's `id`;
//! - a message over [`MAX_MESSAGE_BYTES`]: `-32600` naming the limit, with the
//!   `id` when it can be read from the message's first
//!   [`ID_PROBE_BYTES`], else `null`. The rest of the line is read and
//!   thrown away without being kept, and serving goes on.
//!
//! Notifications (no `id`) that are valid JSON-RPC get no answer, as
//! JSON-RPC requires, even when their params are wrong. `params: null` is
//! taken as absent params.

use std::collections::VecDeque;
use std::fmt;

use rmcp::RoleServer;
#[allow(
    deprecated,
    reason = "logging is deprecated from 2026-07-28 (SEP-2577), still part of 2025-11-25"
)]
use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest,
    CompleteRequestMethod, ConstString, DiscoverRequestMethod, GetPromptRequestMethod,
    InitializeResultMethod, ListPromptsRequestMethod, ListResourceTemplatesRequestMethod,
    ListResourcesRequestMethod, ListToolsRequestMethod, PaginatedRequestParams, PingRequestMethod,
    ReadResourceRequestMethod, RequestId, SetLevelRequestMethod, SetLevelRequestParams,
    SubscribeRequestMethod, SubscriptionsListenRequestMethod, UnsubscribeRequestMethod,
};
use rmcp::transport::Transport;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::{mpsc, oneshot};

/// Largest JSON-RPC message accepted, in bytes (16 MiB), over stdio (one
/// line, without its newline) and over HTTP (one POST body). Larger messages
/// get a `-32600` error and are not processed.
pub const MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// How much of an oversize message is kept to find its `id` (64 KiB): a
/// client that writes `id` before `params`, as the SDKs do, gets its id back.
pub const ID_PROBE_BYTES: usize = 64 * 1024;

/// JSON-RPC 2.0 error codes this module answers with.
const PARSE_ERROR: i64 = -32700;
const INVALID_REQUEST: i64 = -32600;
pub(crate) const INVALID_PARAMS: i64 = -32602;

/// A message that did not pass: the error answer to send, its JSON-RPC code.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rejection {
    /// The JSON-RPC error code (-32700, -32600, -32602).
    pub(crate) code: i64,
    /// The complete error response, `{"jsonrpc":"2.0","id":..,"error":{..}}`.
    pub(crate) answer: Value,
}

impl Rejection {
    fn new(id: Option<&RequestId>, code: i64, message: impl fmt::Display) -> Self {
        let id = id.map_or(Value::Null, |id| id.clone().into_json_value());
        Self {
            code,
            answer: json!({
                "jsonrpc": "2.0",
                "id": id,
                "error": {"code": code, "message": message.to_string()},
            }),
        }
    }

    /// The answer as one line of JSON, newline included.
    pub(crate) fn to_line(&self) -> Vec<u8> {
        let mut line = self.answer.to_string().into_bytes();
        line.push(b'\n');
        line
    }
}

/// What the check makes of one message.
#[derive(Debug)]
pub(crate) enum Checked {
    /// Valid: hand it to rmcp.
    Pass(Box<ClientJsonRpcMessage>),
    /// Invalid: send this answer instead.
    Reject(Rejection),
    /// Nothing to answer (an empty line, a malformed response of the client).
    Skip,
}

/// Checks one message (a stdio line without its newline, or an HTTP body).
pub(crate) fn check_message(bytes: &[u8]) -> Checked {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let bytes = bytes.strip_suffix(b"\r").unwrap_or(bytes);
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Checked::Skip;
    }
    let value: Value = match serde_json::from_slice(bytes) {
        Ok(value) => value,
        Err(e) => {
            return Checked::Reject(Rejection::new(
                None,
                PARSE_ERROR,
                format!("Parse error: the message is not JSON ({e})"),
            ));
        }
    };
    match check_value(value) {
        Ok(message) => Checked::Pass(Box::new(message)),
        Err(Some(rejection)) => Checked::Reject(rejection),
        Err(None) => Checked::Skip,
    }
}

/// The answer to a message over [`MAX_MESSAGE_BYTES`] whose first bytes are
/// `prefix`, of `len` bytes when known.
pub(crate) fn oversize(prefix: &[u8], len: Option<usize>) -> Rejection {
    let size = len.map_or_else(|| "larger".to_owned(), |len| format!("{len} bytes"));
    Rejection::new(
        probe_id(prefix).as_ref(),
        INVALID_REQUEST,
        format!(
            "Invalid Request: the message is {size}, over the limit of {MAX_MESSAGE_BYTES} bytes (16 MiB) per message; it was not processed"
        ),
    )
}

/// Methods rmcp parses into typed requests. A request of one of them whose
/// params do not fit falls back to rmcp's "custom request", answered with
/// "method not found"; here it is "invalid params".
fn is_known_method(method: &str) -> bool {
    [
        PingRequestMethod::VALUE,
        InitializeResultMethod::VALUE,
        DiscoverRequestMethod::VALUE,
        CompleteRequestMethod::VALUE,
        SetLevelRequestMethod::VALUE,
        GetPromptRequestMethod::VALUE,
        ListPromptsRequestMethod::VALUE,
        ListResourcesRequestMethod::VALUE,
        ListResourceTemplatesRequestMethod::VALUE,
        ReadResourceRequestMethod::VALUE,
        SubscriptionsListenRequestMethod::VALUE,
        SubscribeRequestMethod::VALUE,
        UnsubscribeRequestMethod::VALUE,
        CallToolRequestMethod::VALUE,
        ListToolsRequestMethod::VALUE,
    ]
    .contains(&method)
}

/// The `_meta` key of a 2026-07-28 request's protocol version (SEP-2575).
const PROTOCOL_VERSION_META: &str = "io.modelcontextprotocol/protocolVersion";

/// Methods 2026-07-28 removed (SEP-2575): on a request of that era rmcp
/// answers them with "method not found", whatever their params.
const REMOVED_IN_2026: [&str; 5] = [
    "initialize",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// A JSON-RPC id as MCP allows it: a string or an integer (JSON-RPC 2.0
/// §4; MCP: "MUST NOT be null").
fn request_id(value: &Value) -> Option<RequestId> {
    match value {
        Value::String(s) => Some(RequestId::String(s.as_str().into())),
        Value::Number(n) => n.as_i64().map(RequestId::Number),
        _ => None,
    }
}

fn check_value(value: Value) -> Result<ClientJsonRpcMessage, Option<Rejection>> {
    let mut object = match value {
        Value::Object(object) => object,
        Value::Array(_) => {
            return Err(Some(Rejection::new(
                None,
                INVALID_REQUEST,
                "Invalid Request: JSON-RPC batches (arrays) are not supported by MCP; send one message per line",
            )));
        }
        _ => {
            return Err(Some(Rejection::new(
                None,
                INVALID_REQUEST,
                "Invalid Request: a JSON-RPC message must be a JSON object",
            )));
        }
    };
    if !object.contains_key("method")
        && (object.contains_key("result") || object.contains_key("error"))
    {
        // A response of the client (to an elicitation, a ping, ...). Never
        // answered, even when malformed (JSON-RPC: no answer to a response;
        // answering could start an error storm with a peer that answers back).
        return serde_json::from_value(Value::Object(object)).map_err(|e| {
            tracing::debug!("dropped a malformed response of the client: {e}");
            None
        });
    }
    let id = match object.get("id") {
        None => None,
        Some(raw) => Some(request_id(raw).ok_or_else(|| {
            Some(Rejection::new(
                None,
                INVALID_REQUEST,
                format!("Invalid Request: `id` must be a string or an integer, got {raw}"),
            ))
        })?),
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(Some(Rejection::new(
            id.as_ref(),
            INVALID_REQUEST,
            "Invalid Request: `jsonrpc` must be \"2.0\"",
        )));
    }
    let method = match object.get("method") {
        Some(Value::String(method)) => method.clone(),
        Some(_) => {
            return Err(Some(Rejection::new(
                id.as_ref(),
                INVALID_REQUEST,
                "Invalid Request: `method` must be a string",
            )));
        }
        None => {
            return Err(Some(Rejection::new(
                id.as_ref(),
                INVALID_REQUEST,
                "Invalid Request: the message has neither `method` (a request or notification) nor `result` or `error` (a response)",
            )));
        }
    };
    match object.get("params") {
        None | Some(Value::Object(_)) => {}
        Some(Value::Null) => {
            object.remove("params");
        }
        Some(other) => {
            let what = if other.is_array() {
                "an array (MCP params are named)"
            } else {
                "not an object"
            };
            return Err(Some(Rejection::new(
                id.as_ref(),
                INVALID_REQUEST,
                format!("Invalid Request: `params` must be an object, got {what}"),
            )));
        }
    }
    // A 2026-07-28 request (per-request `_meta` with the protocol version)
    // of a method that era removed goes to rmcp as it is: its answer is
    // "method not found" (HTTP 404), not a complaint about the params.
    let modern = object
        .get("params")
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION_META))
        .is_some();
    let checked =
        is_known_method(&method) && !(modern && REMOVED_IN_2026.contains(&method.as_str()));
    if let Some(id) = id.as_ref().filter(|_| checked) {
        check_params(&method, object.get("params"), id).map_err(Some)?;
    }
    let message: ClientJsonRpcMessage =
        serde_json::from_value(Value::Object(object)).map_err(|e| {
            let code = if id.is_some() && checked {
                INVALID_PARAMS
            } else {
                INVALID_REQUEST
            };
            Some(Rejection::new(
                id.as_ref(),
                code,
                format!("Invalid params of `{method}`: {e}"),
            ))
        })?;
    if let (Some(id), ClientJsonRpcMessage::Request(request)) = (&id, &message)
        && let ClientRequest::CustomRequest(_) = &request.request
        && checked
    {
        return Err(Some(Rejection::new(
            Some(id),
            INVALID_PARAMS,
            format!("Invalid params: the params do not fit `{method}`"),
        )));
    }
    Ok(message)
}

/// The params of the methods this server implements, checked for a message
/// an agent can act on (serde's own words, which name the field).
#[allow(
    deprecated,
    reason = "logging is deprecated from 2026-07-28 (SEP-2577), still part of 2025-11-25"
)]
fn check_params(method: &str, params: Option<&Value>, id: &RequestId) -> Result<(), Rejection> {
    let empty = Value::Object(Map::new());
    let params = params.unwrap_or(&empty);
    let problem = if method == CallToolRequestMethod::VALUE {
        match params.get("arguments") {
            None | Some(Value::Null | Value::Object(_)) => {
                <CallToolRequestParams as serde::Deserialize>::deserialize(params)
                    .err()
                    .map(|e| e.to_string())
            }
            Some(other) => Some(format!(
                "`arguments` must be an object of the tool's parameters, got {}",
                json_type(other)
            )),
        }
        .map(|detail| {
            if params.get("name").is_none() {
                "`name` (the tool to call) is missing".to_owned()
            } else {
                detail
            }
        })
    } else if method == SetLevelRequestMethod::VALUE {
        <SetLevelRequestParams as serde::Deserialize>::deserialize(params)
            .err()
            .map(|_| {
                format!(
                    "`level` must be one of debug, info, notice, warning, error, critical, alert, emergency; got {}",
                    params.get("level").map_or("nothing".to_owned(), Value::to_string)
                )
            })
    } else if method == ListToolsRequestMethod::VALUE {
        // rmcp reads params it cannot parse as no params; a wrong cursor
        // would silently restart the listing.
        <PaginatedRequestParams as serde::Deserialize>::deserialize(params)
            .err()
            .map(|e| e.to_string())
    } else {
        None
    };
    match problem {
        None => Ok(()),
        Some(detail) => Err(Rejection::new(
            Some(id),
            INVALID_PARAMS,
            format!("Invalid params of `{method}`: {detail}"),
        )),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The top-level `id` of a (possibly cut off) JSON object, when it comes
/// before the cut: the keys are read in order and every other value skipped,
/// so the first bytes of a huge message are enough.
fn probe_id(prefix: &[u8]) -> Option<RequestId> {
    struct Probe<'a>(&'a mut Option<RequestId>);
    impl<'de> Visitor<'de> for Probe<'_> {
        type Value = ();
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
            while let Some(key) = map.next_key::<String>()? {
                if key == "id" {
                    let value: Value = map.next_value()?;
                    *self.0 = request_id(&value);
                    return Ok(());
                }
                map.next_value::<IgnoredAny>()?;
            }
            Ok(())
        }
    }
    impl<'de> DeserializeSeed<'de> for Probe<'_> {
        type Value = ();
        fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
            d.deserialize_map(self)
        }
    }
    let mut found = None;
    let mut de = serde_json::Deserializer::from_slice(prefix);
    // A cut-off message ends in an error; what was found before it counts.
    let _ = Probe(&mut found).deserialize(&mut de);
    found
}

/// One read from the stream.
enum Frame {
    /// A whole line (or the last bytes before end of input) is in `line`.
    Line,
    /// A line over the limit was read to its end and dropped; its first bytes
    /// and its length (at least).
    Oversize {
        prefix: Vec<u8>,
        len: usize,
    },
    Eof,
    Io(std::io::Error),
}

/// A line being thrown away: its first bytes, for the id, and its length so far.
struct Discard {
    prefix: Vec<u8>,
    len: usize,
}

/// Newline-delimited reading that never holds more than `max` bytes of a
/// line. Cancellation-safe (rmcp polls `receive` inside a `select!`): all
/// progress lives in the struct, and bytes are consumed from the buffered
/// reader only in the same synchronous step that stores them.
struct LineReader<R> {
    read: BufReader<R>,
    line: Vec<u8>,
    discard: Option<Discard>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    async fn next(&mut self) -> Frame {
        loop {
            let (taken, ended) = {
                let available = match self.read.fill_buf().await {
                    Ok(available) => available,
                    Err(e) => return Frame::Io(e),
                };
                if available.is_empty() {
                    if let Some(d) = self.discard.take() {
                        return Frame::Oversize {
                            prefix: d.prefix,
                            len: d.len,
                        };
                    }
                    // A last message without its newline still counts.
                    return if self.line.is_empty() {
                        Frame::Eof
                    } else {
                        Frame::Line
                    };
                }
                let newline = available.iter().position(|b| *b == b'\n');
                let taken = newline.map_or(available.len(), |i| i + 1);
                let content = &available[..newline.unwrap_or(available.len())];
                if let Some(d) = &mut self.discard {
                    keep_prefix(&mut d.prefix, content);
                    d.len = d.len.saturating_add(content.len());
                } else if self.line.len().saturating_add(content.len()) > self.max {
                    let len = self.line.len();
                    let mut prefix = std::mem::take(&mut self.line);
                    prefix.truncate(ID_PROBE_BYTES);
                    let mut d = Discard { prefix, len };
                    keep_prefix(&mut d.prefix, content);
                    d.len = d.len.saturating_add(content.len());
                    self.discard = Some(d);
                } else {
                    self.line.extend_from_slice(content);
                }
                (taken, newline.is_some())
            };
            self.read.consume(taken);
            if ended {
                if let Some(d) = self.discard.take() {
                    self.line = Vec::new();
                    return Frame::Oversize {
                        prefix: d.prefix,
                        len: d.len,
                    };
                }
                return Frame::Line;
            }
        }
    }
}

fn keep_prefix(prefix: &mut Vec<u8>, more: &[u8]) {
    let room = ID_PROBE_BYTES.saturating_sub(prefix.len());
    prefix.extend_from_slice(&more[..room.min(more.len())]);
}

/// A message for the writer task: bytes of whole lines, and whom to tell
/// when they are written.
struct Outgoing {
    bytes: Vec<u8>,
    done: Option<oneshot::Sender<std::io::Result<()>>>,
}

/// rmcp's server transport over a byte stream pair, with this module's
/// checks on every incoming line. Outgoing messages (rmcp's and this
/// module's error answers) are written whole, one line each, in order, by
/// one writer task.
pub(crate) struct FramedTransport<R> {
    reader: LineReader<R>,
    out: mpsc::Sender<Outgoing>,
    /// Error answers not yet handed to the writer.
    pending: VecDeque<Vec<u8>>,
}

impl<R: AsyncRead + Send + Unpin + 'static> FramedTransport<R> {
    /// Starts the writer task on the current runtime.
    pub(crate) fn new<W>(read: R, write: W) -> Self
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        Self::with_limit(read, write, MAX_MESSAGE_BYTES)
    }

    fn with_limit<W>(read: R, mut write: W, max: usize) -> Self
    where
        W: AsyncWrite + Send + Unpin + 'static,
    {
        let (out, mut queue) = mpsc::channel::<Outgoing>(32);
        tokio::spawn(async move {
            let mut broken: Option<std::io::ErrorKind> = None;
            while let Some(message) = queue.recv().await {
                let result = match broken {
                    Some(kind) => Err(std::io::Error::new(kind, "the output stream failed")),
                    None => {
                        let r = async {
                            write.write_all(&message.bytes).await?;
                            write.flush().await
                        }
                        .await;
                        if let Err(e) = &r {
                            broken = Some(e.kind());
                        }
                        r
                    }
                };
                if let Some(done) = message.done {
                    let _ = done.send(result);
                }
            }
            let _ = write.shutdown().await;
        });
        Self {
            reader: LineReader {
                read: BufReader::with_capacity(64 * 1024, read),
                line: Vec::new(),
                discard: None,
                max,
            },
            out,
            pending: VecDeque::new(),
        }
    }
}

fn closed() -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::BrokenPipe,
        "the output stream is closed",
    )
}

impl<R: AsyncRead + Send + Unpin + 'static> Transport<RoleServer> for FramedTransport<R> {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: rmcp::model::ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let bytes = serde_json::to_vec(&item).map(|mut b| {
            b.push(b'\n');
            b
        });
        async move {
            let bytes = bytes.map_err(std::io::Error::other)?;
            let (done, written) = oneshot::channel();
            out.send(Outgoing {
                bytes,
                done: Some(done),
            })
            .await
            .map_err(|_| closed())?;
            written.await.map_err(|_| closed())?
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            // Answers go to the writer before the next line is read; a
            // cancelled `reserve` loses nothing (the answer stays queued).
            while !self.pending.is_empty() {
                let permit = self.out.reserve().await.ok()?;
                if let Some(bytes) = self.pending.pop_front() {
                    permit.send(Outgoing { bytes, done: None });
                }
            }
            let checked = match self.reader.next().await {
                Frame::Line => {
                    let checked = check_message(&self.reader.line);
                    self.reader.line.clear();
                    // A huge message does not pin its buffer for the session.
                    if self.reader.line.capacity() > ID_PROBE_BYTES * 16 {
                        self.reader.line.shrink_to(ID_PROBE_BYTES);
                    }
                    checked
                }
                Frame::Oversize { prefix, len } => {
                    tracing::warn!(
                        "refused a message of {len} bytes or more (limit {MAX_MESSAGE_BYTES})"
                    );
                    Checked::Reject(oversize(&prefix, Some(len)))
                }
                Frame::Eof => return None,
                Frame::Io(e) => {
                    tracing::error!("reading the client's messages failed: {e}");
                    return None;
                }
            };
            match checked {
                Checked::Pass(message) => return Some(*message),
                Checked::Reject(rejection) => {
                    tracing::debug!("refused a message: {}", rejection.answer);
                    self.pending.push_back(rejection.to_line());
                }
                Checked::Skip => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        for bytes in self.pending.drain(..) {
            let _ = self.out.send(Outgoing { bytes, done: None }).await;
        }
        let (done, written) = oneshot::channel();
        self.out
            .send(Outgoing {
                bytes: Vec::new(),
                done: Some(done),
            })
            .await
            .map_err(|_| closed())?;
        written.await.map_err(|_| closed())?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code_and_id(bytes: &[u8]) -> (i64, Value) {
        match check_message(bytes) {
            Checked::Reject(r) => (r.code, r.answer["id"].clone()),
            other => panic!("passed: {other:?}"),
        }
    }

    #[test]
    fn not_json_is_a_parse_error_with_null_id() {
        for line in [
            &b"hello"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,",
            b"\xff\xfe",
            b"{'id': 1}",
        ] {
            assert_eq!(code_and_id(line), (PARSE_ERROR, Value::Null), "{line:?}");
        }
    }

    #[test]
    fn malformed_messages_are_invalid_requests_with_their_id() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":"x"}"#,
                json!(7),
            ),
            (
                r#"{"jsonrpc":"2.0","id":"a","method":"tools/list","params":[1]}"#,
                json!("a"),
            ),
            (r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#, json!(3)),
            (r#"{"jsonrpc":"2.0","id":4,"method":5}"#, json!(4)),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
                Value::Null,
            ),
            (r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#, Value::Null),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, Value::Null),
            (r#"42"#, Value::Null),
            (r#"{"jsonrpc":"2.0","id":9}"#, json!(9)),
            (
                r#"{"jsonrpc":"2.0","method":"notifications/x","params":"y"}"#,
                Value::Null,
            ),
        ];
        for (line, id) in cases {
            assert_eq!(
                code_and_id(line.as_bytes()),
                (INVALID_REQUEST, id),
                "{line}"
            );
        }
    }

    #[test]
    fn bad_params_of_known_methods_are_invalid_params() {
        let cases = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":"{}"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":[]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{"level":"loud"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"logging/setLevel","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":5}}"#,
        ];
        for line in cases {
            assert_eq!(
                code_and_id(line.as_bytes()),
                (INVALID_PARAMS, json!(1)),
                "{line}"
            );
        }
        let Checked::Reject(r) = check_message(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":{}}}"#,
        ) else {
            panic!("passed")
        };
        assert!(
            r.answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`name`"),
            "{}",
            r.answer
        );
    }

    #[test]
    fn valid_messages_pass() {
        for line in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            r#"{"jsonrpc":"2.0","id":"x","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"ping","params":null}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"logging/setLevel","params":{"level":"debug"}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"vendor/thing","params":{"a":1}}"#,
            r#"{"jsonrpc":"2.0","id":5,"result":{}}"#,
        ] {
            assert!(
                matches!(check_message(line.as_bytes()), Checked::Pass(_)),
                "{line}"
            );
        }
        assert!(matches!(check_message(b"  \r"), Checked::Skip));
        // Removed methods of a 2026-07-28 request are rmcp's to refuse (404).
        for method in REMOVED_IN_2026 {
            let line = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": {
                "_meta": {PROTOCOL_VERSION_META: "2026-07-28"}
            }});
            assert!(
                matches!(check_message(line.to_string().as_bytes()), Checked::Pass(_)),
                "{line}"
            );
        }
    }

    #[test]
    fn oversize_answers_carry_the_id_found_in_the_prefix() {
        let cut = br#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"aaaa"#;
        assert_eq!(oversize(cut, Some(1 << 25)).answer["id"], json!(42));
        let late = br#"{"jsonrpc":"2.0","method":"tools/call","params":{"x":"aaaa"#;
        assert_eq!(oversize(late, Some(1 << 25)).answer["id"], Value::Null);
        let nested = br#"{"params":{"id":3},"id":"s","x":"#;
        assert_eq!(oversize(nested, Some(1 << 25)).answer["id"], json!("s"));
        assert_eq!(
            oversize(b"garbage", Some(1 << 25)).answer["id"],
            Value::Null
        );
        assert_eq!(oversize(b"", Some(1 << 25)).code, INVALID_REQUEST);
    }

    #[tokio::test]
    async fn line_reader_bounds_lines_and_resumes() {
        let input = b"short\nlooooooooong line\n\nlast".to_vec();
        let mut reader = LineReader {
            read: BufReader::with_capacity(4, &input[..]),
            line: Vec::new(),
            discard: None,
            max: 8,
        };
        assert!(matches!(reader.next().await, Frame::Line));
        assert_eq!(reader.line, b"short");
        reader.line.clear();
        match reader.next().await {
            Frame::Oversize { prefix, len } => {
                assert_eq!(prefix, b"looooooooong line");
                assert_eq!(len, 17);
            }
            _ => panic!("not oversize"),
        }
        assert!(matches!(reader.next().await, Frame::Line));
        assert_eq!(reader.line, b"");
        assert!(matches!(reader.next().await, Frame::Line));
        assert_eq!(reader.line, b"last");
        reader.line.clear();
        assert!(matches!(reader.next().await, Frame::Eof));
    }
}
