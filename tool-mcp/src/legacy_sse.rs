//! The client side of the legacy HTTP+SSE transport (MCP 2024-11-05): a
//! `GET` opens a Server-Sent Events stream whose first event, `endpoint`,
//! names the URL to `POST` each JSON-RPC message to; the server's messages
//! (answers included) arrive as `message` events on the stream.
//!
//! Used for a `url` ending in `/sse`, and as the fallback when the Streamable
//! HTTP handshake fails (the 2025-03-26 specification's backwards-
//! compatibility guidance for clients: a `POST` answered with a 4xx status,
//! then a `GET` expecting an event stream whose first event is `endpoint`).
//!
//! The event stream is parsed here rather than with `sse-stream` (in the
//! tree through rmcp) because that parser buffers a line or an event of any
//! length; this one refuses an event over [`MAX_MESSAGE_BYTES`] and a stream
//! that has not named its endpoint within [`MAX_MESSAGE_BYTES`] bytes.

use std::collections::HashMap;

use futures_util::StreamExt;
use rmcp::RoleClient;
use rmcp::service::{RxJsonRpcMessage, TxJsonRpcMessage};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::{CancellationToken, DropGuard};

use crate::framing::MAX_MESSAGE_BYTES;

/// Messages from the server waiting to be read before the stream is paused.
const QUEUE: usize = 64;

/// Whether `url`'s path ends in `/sse` (or `/sse/`): a legacy endpoint.
pub(crate) fn is_sse_url(url: &str) -> bool {
    let path = url.split(['?', '#']).next().unwrap_or_default();
    let path = path.strip_suffix('/').unwrap_or(path);
    path.ends_with("/sse")
}

/// Whether a failed Streamable HTTP handshake is worth a legacy attempt:
/// every failure but a 401 (where credentials, not the transport, are the
/// problem). rmcp's error does not always carry the status (in the `auto`
/// era it reports that both lifecycles failed), so rather than guess from
/// its text the legacy `GET` itself tells: a server that is not a legacy
/// one does not answer it with an event stream naming an endpoint, and
/// then both failures are reported.
pub(crate) fn is_fallback_cue(error: &str) -> bool {
    !error.contains("Auth required")
}

/// An open legacy connection, as an rmcp client transport.
pub(crate) struct LegacySse {
    incoming: mpsc::Receiver<RxJsonRpcMessage<RoleClient>>,
    poster: Poster,
    /// Ends the stream reader when the transport is dropped or closed.
    stop: Option<DropGuard>,
}

#[derive(Clone)]
struct Poster {
    client: reqwest::Client,
    endpoint: reqwest::Url,
    headers: reqwest::header::HeaderMap,
}

impl LegacySse {
    /// `GET`s `url` with `headers` (and `Authorization: Bearer <bearer>`)
    /// and waits for the `endpoint` event.
    ///
    /// # Errors
    /// A message naming what failed: the request, a non-2xx status, a
    /// stream that is not `text/event-stream`, one that ends or runs over
    /// its bound before naming an endpoint, or an endpoint of another origin.
    pub(crate) async fn connect(
        url: &str,
        headers: &HashMap<http::HeaderName, http::HeaderValue>,
        bearer: Option<&str>,
    ) -> Result<Self, String> {
        let sse_url = reqwest::Url::parse(url).map_err(|e| format!("bad URL: {e}"))?;
        let mut header_map = reqwest::header::HeaderMap::new();
        for (name, value) in headers {
            header_map.insert(name.clone(), value.clone());
        }
        if let Some(token) = bearer {
            let mut value = http::HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| "the bearer token is not a valid header value".to_owned())?;
            value.set_sensitive(true);
            header_map.insert(http::header::AUTHORIZATION, value);
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| format!("HTTP client: {e}"))?;
        let response = client
            .get(sse_url.clone())
            .headers(header_map.clone())
            .header(http::header::ACCEPT, "text/event-stream")
            .send()
            .await
            .map_err(|e| format!("legacy HTTP+SSE GET: {e}"))?;
        let status = response.status();
        if !status.is_success() {
            return Err(format!("legacy HTTP+SSE GET answered {status}"));
        }
        let is_sse = response
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.starts_with("text/event-stream"));
        if !is_sse {
            return Err("legacy HTTP+SSE GET did not answer with text/event-stream".to_owned());
        }
        let (endpoint_tx, endpoint_rx) = oneshot::channel();
        let (tx, incoming) = mpsc::channel(QUEUE);
        let stop = CancellationToken::new();
        tokio::spawn(read_events(
            response,
            sse_url.clone(),
            endpoint_tx,
            tx,
            stop.clone(),
        ));
        let endpoint = endpoint_rx.await.map_err(|_| {
            "the legacy HTTP+SSE stream ended before naming its endpoint".to_owned()
        })??;
        Ok(Self {
            incoming,
            poster: Poster {
                client,
                endpoint,
                headers: header_map,
            },
            stop: Some(stop.drop_guard()),
        })
    }
}

/// Reads the event stream: the first `endpoint` event resolves `endpoint`,
/// `message` events go to `tx`. Ends with the stream, on a bound, or when
/// `stop` is cancelled (dropping `tx` tells rmcp the transport closed).
async fn read_events(
    response: reqwest::Response,
    base: reqwest::Url,
    endpoint: oneshot::Sender<Result<reqwest::Url, String>>,
    tx: mpsc::Sender<RxJsonRpcMessage<RoleClient>>,
    stop: CancellationToken,
) {
    let mut endpoint = Some(endpoint);
    let mut parser = EventParser::default();
    let mut bytes = response.bytes_stream();
    // Bytes seen before the endpoint event: bounded too.
    let mut before_endpoint = 0usize;
    loop {
        let chunk = tokio::select! {
            chunk = bytes.next() => chunk,
            () = stop.cancelled() => return,
        };
        let Some(Ok(chunk)) = chunk else { return };
        if endpoint.is_some() {
            before_endpoint += chunk.len();
            if before_endpoint > MAX_MESSAGE_BYTES {
                if let Some(endpoint) = endpoint.take() {
                    let _ = endpoint.send(Err(format!(
                        "the legacy HTTP+SSE stream sent {before_endpoint} bytes without an \
                         endpoint event"
                    )));
                }
                return;
            }
        }
        let events = match parser.feed(&chunk) {
            Ok(events) => events,
            Err(why) => {
                tracing::warn!("legacy HTTP+SSE stream from {base}: {why}; closing it");
                if let Some(endpoint) = endpoint.take() {
                    let _ = endpoint.send(Err(why));
                }
                return;
            }
        };
        for (event, data) in events {
            match event.as_str() {
                "endpoint" => {
                    if let Some(sender) = endpoint.take() {
                        let _ = sender.send(same_origin_endpoint(&base, data.trim()));
                    }
                }
                "" | "message" => match serde_json::from_str(&data) {
                    Ok(message) => {
                        if tx.send(message).await.is_err() {
                            return;
                        }
                    }
                    Err(e) => tracing::warn!(
                        "legacy HTTP+SSE stream from {base}: a message that is not JSON-RPC: {e}"
                    ),
                },
                _ => {}
            }
        }
    }
}

/// The endpoint `text` names, resolved against the stream's URL; refused
/// unless it has the stream's scheme, host and port (a server may not send
/// this client's messages, and their credentials, elsewhere).
fn same_origin_endpoint(base: &reqwest::Url, text: &str) -> Result<reqwest::Url, String> {
    let url = base
        .join(text)
        .map_err(|e| format!("the endpoint event names no URL: {e}"))?;
    if url.origin() != base.origin() {
        return Err(format!(
            "the endpoint event names another origin ({}) than the stream's ({})",
            url.origin().ascii_serialization(),
            base.origin().ascii_serialization()
        ));
    }
    Ok(url)
}

/// A bounded Server-Sent Events parser (the WHATWG "event stream"
/// interpretation, without `id` and `retry`, which this transport ignores).
#[derive(Default)]
struct EventParser {
    /// The incomplete line.
    line: Vec<u8>,
    event: String,
    data: String,
    has_data: bool,
}

impl EventParser {
    /// Feeds bytes; returns the events they complete, as (type, data).
    ///
    /// # Errors
    /// When a line or an event's data is over [`MAX_MESSAGE_BYTES`].
    fn feed(&mut self, bytes: &[u8]) -> Result<Vec<(String, String)>, String> {
        let mut events = Vec::new();
        for &b in bytes {
            if b != b'\n' {
                self.line.push(b);
                if self.line.len() > MAX_MESSAGE_BYTES {
                    return Err(format!("a line over {MAX_MESSAGE_BYTES} bytes"));
                }
                continue;
            }
            if self.line.last() == Some(&b'\r') {
                self.line.pop();
            }
            let line = String::from_utf8_lossy(&std::mem::take(&mut self.line)).into_owned();
            if line.is_empty() {
                if self.has_data {
                    events.push((
                        std::mem::take(&mut self.event),
                        std::mem::take(&mut self.data),
                    ));
                }
                self.event.clear();
                self.data.clear();
                self.has_data = false;
                continue;
            }
            let (field, value) = match line.split_once(':') {
                Some((field, value)) => (field, value.strip_prefix(' ').unwrap_or(value)),
                None => (line.as_str(), ""),
            };
            match field {
                "event" => value.clone_into(&mut self.event),
                "data" => {
                    if self.has_data {
                        self.data.push('\n');
                    }
                    self.data.push_str(value);
                    self.has_data = true;
                    if self.data.len() > MAX_MESSAGE_BYTES {
                        return Err(format!("an event over {MAX_MESSAGE_BYTES} bytes"));
                    }
                }
                _ => {}
            }
        }
        Ok(events)
    }
}

impl rmcp::transport::Transport<RoleClient> for LegacySse {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl std::future::Future<Output = Result<(), Self::Error>> + Send + 'static {
        let poster = self.poster.clone();
        async move {
            let response = poster
                .client
                .post(poster.endpoint)
                .headers(poster.headers)
                .json(&item)
                .send()
                .await
                .map_err(std::io::Error::other)?;
            let status = response.status();
            if status.is_success() {
                Ok(())
            } else {
                Err(std::io::Error::other(format!(
                    "legacy HTTP+SSE POST answered {status}"
                )))
            }
        }
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.incoming.recv().await
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.stop.take();
        self.incoming.close();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_split_across_chunks_and_bounded() {
        let mut parser = EventParser::default();
        assert!(
            parser
                .feed(b"event: endpoint\r\ndata: /messages?s")
                .expect("ok")
                .is_empty()
        );
        let events = parser
            .feed(b"=1\r\n\r\n: a comment\n\ndata: {\"a\":\ndata: 1}\n\n")
            .expect("ok");
        assert_eq!(
            events,
            vec![
                ("endpoint".to_owned(), "/messages?s=1".to_owned()),
                (String::new(), "{\"a\":\n1}".to_owned()),
            ]
        );
        let long = vec![b'x'; MAX_MESSAGE_BYTES + 1];
        assert!(parser.feed(&long).is_err());
    }

    #[test]
    fn sse_urls_and_fallback_cues() {
        assert!(is_sse_url("http://127.0.0.1:8000/sse"));
        assert!(is_sse_url("http://127.0.0.1:8000/sse/?k=v"));
        assert!(!is_sse_url("http://127.0.0.1:8000/mcp"));
        assert!(is_fallback_cue(
            "discover and legacy initialize both failed"
        ));
        assert!(!is_fallback_cue("Auth required"));
    }

    #[test]
    fn an_endpoint_of_another_origin_is_refused() {
        let base = reqwest::Url::parse("http://127.0.0.1:8000/sse").expect("url");
        assert_eq!(
            same_origin_endpoint(&base, "/messages/?session_id=ab")
                .expect("same origin")
                .as_str(),
            "http://127.0.0.1:8000/messages/?session_id=ab"
        );
        assert!(same_origin_endpoint(&base, "http://evil.example/messages").is_err());
        assert!(same_origin_endpoint(&base, "http://127.0.0.1:8001/messages").is_err());
    }
}
