//! The size caps on streamed answers, against a real local HTTP server that
//! never stops sending: one event that never ends must fail with
//! `EventTooLarge` after `MAX_EVENT_BYTES`, an endless run of small events
//! with `AnswerTooLarge` after `MAX_ANSWER_BYTES`, both without a hang and
//! without buffering more than the cap. A whole (non-streamed) answer over the
//! cap is `AnswerTooLarge` too.

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tool_agent::{
    MAX_ANSWER_BYTES, MAX_EVENT_BYTES, Message, ModelClient, ModelError, ModelErrorKind,
    ModelRequest, OpenAiChatClient, RetryPolicy, StreamEvent, ToolChoice,
};

/// A server that answers every request with `prefix` and then `unit` again
/// and again until the client goes away (no content-length: the body ends
/// only when the connection closes). Counts the bytes it managed to write.
async fn endless(prefix: &'static [u8], unit: Vec<u8>) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let written = Arc::new(AtomicUsize::new(0));
    let count = written.clone();
    tokio::spawn(async move {
        while let Ok((mut sock, _)) = listener.accept().await {
            let unit = unit.clone();
            let count = count.clone();
            tokio::spawn(async move {
                let mut buf = vec![0u8; 65536];
                let mut head = Vec::new();
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let status = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n";
                if sock.write_all(status).await.is_err() || sock.write_all(prefix).await.is_err() {
                    return;
                }
                while sock.write_all(&unit).await.is_ok() {
                    count.fetch_add(unit.len(), Ordering::Relaxed);
                }
            });
        }
    });
    (format!("http://{addr}/v1"), written)
}

async fn collect(client: &dyn ModelClient) -> Vec<Result<StreamEvent, ModelError>> {
    let messages = vec![Message::user("go")];
    let tools = json!([]);
    let request = ModelRequest::new(&messages, &tools, &ToolChoice::Auto);
    let run = async {
        match client.send(request).await {
            Ok(stream) => stream.collect::<Vec<_>>().await,
            Err(e) => vec![Err(e)],
        }
    };
    // Generous: the caps end these streams after 16 / 64 MiB; only a hang reaches it.
    tokio::time::timeout(Duration::from_secs(300), run)
        .await
        .expect("the stream did not end: no cap stopped it")
}

fn client(base_url: &str) -> OpenAiChatClient {
    OpenAiChatClient::new("m")
        .base_url(base_url)
        .retry(RetryPolicy::none())
}

#[tokio::test]
async fn an_event_that_never_ends_is_event_too_large_at_16_mib() {
    // One `data:` line that grows forever: no line end, no blank line.
    let (url, written) = endless(
        b"data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"",
        vec![b'a'; 64 * 1024],
    )
    .await;
    let events = collect(&client(&url)).await;
    assert_eq!(
        events.len(),
        1,
        "nothing before the cap: {:?}",
        events.len()
    );
    let err = events[0].as_ref().unwrap_err();
    assert_eq!(
        err.kind(),
        &ModelErrorKind::EventTooLarge {
            limit: MAX_EVENT_BYTES
        }
    );
    assert_eq!(MAX_EVENT_BYTES, 16 << 20);
    let text = err.to_string();
    assert!(
        text.contains("one event of the streamed answer is larger than 16 MiB"),
        "{text}"
    );
    // The client stopped reading near the cap (socket buffers hold a few MiB more).
    assert!(
        written.load(Ordering::Relaxed) < MAX_EVENT_BYTES + (32 << 20),
        "{} bytes written",
        written.load(Ordering::Relaxed)
    );
}

#[tokio::test]
async fn an_answer_that_never_ends_is_answer_too_large_at_64_mib() {
    // Well-formed text deltas of 256 KiB each, without end.
    let piece = "b".repeat(256 * 1024);
    let unit = format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{piece}\"}}}}]}}\n\n"
    );
    let (url, _) = endless(b": an endless answer\n\n", unit.into_bytes()).await;
    let events = collect(&client(&url)).await;
    let (last, before) = events.split_last().unwrap();
    let err = last.as_ref().unwrap_err();
    assert_eq!(
        err.kind(),
        &ModelErrorKind::AnswerTooLarge {
            limit: MAX_ANSWER_BYTES
        }
    );
    assert!(
        err.to_string().contains("the answer is larger than 64 MiB"),
        "{err}"
    );
    // Everything before the cap arrived as text: 64 MiB of it, in whole deltas.
    let text: usize = before
        .iter()
        .map(|e| match e {
            Ok(StreamEvent::TextDelta(t)) => t.len(),
            other => panic!("{other:?}"),
        })
        .sum();
    assert!(
        text > 60 << 20 && text <= MAX_ANSWER_BYTES,
        "{text} bytes of text"
    );
}

#[tokio::test]
async fn a_whole_answer_over_64_mib_is_answer_too_large() {
    let (url, _) = endless(b"{\"choices\": [", b"{}, ".repeat(16 * 1024)).await;
    let events = collect(&client(&url).streaming(false)).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        events[0].as_ref().unwrap_err().kind(),
        &ModelErrorKind::AnswerTooLarge {
            limit: MAX_ANSWER_BYTES
        }
    );
}

#[tokio::test]
async fn events_under_the_cap_pass_whatever_their_line_ends_and_chunking() {
    // Three 9 MiB events, each under the 16 MiB cap but any two together over
    // it, ended by CRLF CRLF, CR CR and LF LF, cut so that every terminator
    // is split across two chunks.
    let big = "c".repeat(9 << 20);
    let event = |text: &str, end: &str| {
        format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}{end}{end}"
        )
    };
    let body = [
        event(&big, "\r\n"),
        event(&big, "\r"),
        event(&big, "\n"),
        "data: [DONE]\n\n".to_owned(),
    ]
    .concat()
    .into_bytes();
    let mut chunks = Vec::new();
    let mut start = 0;
    for (i, pair) in body.windows(2).enumerate() {
        if pair == b"\r\n" || pair == b"\r\r" || pair == b"\n\n" {
            chunks.push(bytes::Bytes::copy_from_slice(&body[start..=i]));
            start = i + 1;
        }
    }
    chunks.push(bytes::Bytes::copy_from_slice(&body[start..]));
    let events: Vec<_> = tool_agent::assemble::from_sse(
        futures_util::stream::iter(chunks.into_iter().map(Ok::<_, std::io::Error>)),
        tool_agent::assemble::OpenAiChatAssembler::new(),
    )
    .collect()
    .await;
    let sizes: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            Ok(StreamEvent::TextDelta(t)) => Some(t.len()),
            _ => None,
        })
        .collect();
    assert_eq!(sizes, vec![9 << 20; 3], "{:?}", events.last());
    assert!(events.iter().all(Result::is_ok), "{:?}", events.last());
}
