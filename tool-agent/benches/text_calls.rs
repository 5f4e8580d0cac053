//! Tool calls written as text against structured tool calls, streamed:
//!
//! - `text_calls/parser_{hermes,auto}_10MB`: 10 MB of model text with a
//!   Hermes `<tool_call>` every ~18 KB (570 calls), fed to tool-core's
//!   `StreamParser` in 18-byte pieces (a token or a few), MB/s of text.
//! - `text_calls/sse_text_hermes_10MB`: the client's whole path for the same
//!   answer: an OpenAI Chat SSE stream whose `delta.content` carries those
//!   pieces, through the SSE parser, the assembler and the text parser
//!   (what `OpenAiChatClient::text_tool_calls` does), MB/s of SSE bytes.
//! - `text_calls/sse_structured_10MB`: the structured baseline, the same
//!   pieces as `delta.tool_calls` argument fragments (as in the `agent`
//!   bench's `assemble/openai_chat_10MB`), MB/s of SSE bytes; the first
//!   half of the pieces (5 MB of text), since the whole would pass the
//!   client's 64 MiB answer cap.
//!
//! Run with `cargo bench -p tool-agent --bench text_calls`.

#![allow(
    clippy::unwrap_used,
    reason = "bench code: a failed setup step should stop the bench"
)]

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use tool_agent::StreamEvent;
use tool_agent::assemble::{OpenAiChatAssembler, from_sse};
use tool_core::text_calls::{Piece, StreamParser, format_named};

const TEN_MB: usize = 10 * 1024 * 1024;
const PIECE: &str = "lorem ipsum dolor ";
/// Pieces of text between two calls.
const BETWEEN: usize = 1000;

/// The model's text, as the pieces it streams in.
fn text_pieces() -> Vec<String> {
    let mut out = Vec::new();
    let mut len = 0;
    let mut i = 0;
    while len < TEN_MB {
        for _ in 0..BETWEEN {
            out.push(PIECE.to_owned());
            len += PIECE.len();
        }
        let call = format!(
            "\n<tool_call>\n{{\"name\": \"tool_00\", \"arguments\": {{\"text\": \"call {i}\", \"n\": {i}}}}}\n</tool_call>\n"
        );
        for chunk in call.as_bytes().chunks(PIECE.len()) {
            let s = std::str::from_utf8(chunk).unwrap().to_owned();
            len += s.len();
            out.push(s);
        }
        i += 1;
    }
    out
}

fn sse_event(delta: &serde_json::Value) -> String {
    format!(
        "data: {}\n\n",
        serde_json::json!({"choices": [{"index": 0, "delta": delta}]})
    )
}

fn text_sse(pieces: &[String]) -> Vec<u8> {
    let mut out = String::with_capacity(TEN_MB * 4);
    for p in pieces {
        out.push_str(&sse_event(&serde_json::json!({"content": p})));
    }
    out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

fn structured_sse(pieces: &[String]) -> Vec<u8> {
    let mut out = String::with_capacity(TEN_MB * 6);
    let mut index = 0;
    for (n, p) in pieces.iter().enumerate() {
        if n % (BETWEEN + 5) == 0 {
            out.push_str(&sse_event(&serde_json::json!({"tool_calls": [{"index": index, "id": format!("call_{index}"), "type": "function", "function": {"name": "tool_00", "arguments": "{\"text\": \""}}]})));
        }
        out.push_str(&sse_event(
            &serde_json::json!({"tool_calls": [{"index": index, "function": {"arguments": p}}]}),
        ));
        if n % (BETWEEN + 5) == BETWEEN + 4 {
            out.push_str(&sse_event(&serde_json::json!({"tool_calls": [{"index": index, "function": {"arguments": "\"}"}}]})));
            index += 1;
        }
    }
    out.push_str(&sse_event(
        &serde_json::json!({"tool_calls": [{"index": index, "function": {"arguments": "\"}"}}]}),
    ));
    out.push_str("data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
    out.into_bytes()
}

fn chunks(bytes: &[u8]) -> Vec<Result<bytes::Bytes, std::io::Error>> {
    bytes
        .chunks(64 * 1024)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect()
}

fn text_calls(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let pieces = text_pieces();
    let text_len: usize = pieces.iter().map(String::len).sum();
    let mut group = c.benchmark_group("text_calls");
    group
        .measurement_time(Duration::from_secs(10))
        .sample_size(10);

    group.throughput(Throughput::Bytes(text_len as u64));
    for name in ["hermes", "auto"] {
        group.bench_function(format!("parser_{name}_10MB"), |b| {
            b.iter(|| {
                let mut p = StreamParser::new(format_named(name).unwrap(), None);
                let mut calls = 0;
                for piece in &pieces {
                    calls += p
                        .feed(piece)
                        .iter()
                        .filter(|x| matches!(x, Piece::Call(_)))
                        .count();
                }
                calls += p
                    .finish()
                    .iter()
                    .filter(|x| matches!(x, Piece::Call(_)))
                    .count();
                assert!(calls > 500, "{calls} calls");
                calls
            });
        });
    }

    let text = text_sse(&pieces);
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.bench_function("sse_text_hermes_10MB", |b| {
        b.iter_batched(
            || chunks(&text),
            |input| {
                rt.block_on(async {
                    let mut p = StreamParser::new(format_named("hermes").unwrap(), None);
                    let mut calls = 0;
                    let mut events = from_sse(
                        futures_util::stream::iter(input),
                        OpenAiChatAssembler::new(),
                    );
                    while let Some(ev) = events.next().await {
                        if let StreamEvent::TextDelta(t) = ev.unwrap() {
                            calls += p
                                .feed(&t)
                                .iter()
                                .filter(|x| matches!(x, Piece::Call(_)))
                                .count();
                        }
                    }
                    calls += p
                        .finish()
                        .iter()
                        .filter(|x| matches!(x, Piece::Call(_)))
                        .count();
                    assert!(calls > 500, "{calls} calls");
                    calls
                })
            },
            BatchSize::LargeInput,
        );
    });

    // The first half of the pieces: the whole as structured fragments is
    // over the client's 64 MiB answer cap (each 18-byte piece costs a
    // ~110-byte event), and MB/s is a rate, so half compares the same.
    let structured = structured_sse(&pieces[..pieces.len() / 2]);
    group.throughput(Throughput::Bytes(structured.len() as u64));
    group.bench_function("sse_structured_10MB", |b| {
        b.iter_batched(
            || chunks(&structured),
            |input| {
                let n = rt.block_on(
                    from_sse(
                        futures_util::stream::iter(input),
                        OpenAiChatAssembler::new(),
                    )
                    .map(Result::unwrap)
                    .filter(|e| std::future::ready(matches!(e, StreamEvent::ToolCall(_))))
                    .count(),
                );
                assert!(n > 250, "{n} calls");
                n
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
    println!(
        "text {text_len} bytes; SSE with text {} bytes; SSE structured {} bytes",
        text.len(),
        structured.len()
    );
}

criterion_group!(benches, text_calls);
criterion_main!(benches);
