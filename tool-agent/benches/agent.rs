//! Benchmarks of the agent's own work, without a model:
//!
//! - `loop_overhead/turns_10_tools_20`: one run of 10 turns (9 with one tool
//!   call, then the answer) with 20 tools offered, against a scripted model
//!   that answers at once; divide by 10 for the overhead per turn (target
//!   < 50 µs: request building, schema lookup, argument preparation,
//!   execution of a trivial tool, history, events).
//! - `assemble/*_10MB`: an OpenAI Chat stream of 10 MB of tool-call argument
//!   fragments (and an Anthropic one of `input_json_delta`s), in 64 KiB
//!   chunks, through the SSE parser and the assembler (MB/s).
//!
//! Run with `cargo bench -p tool-agent --bench agent`.

use std::time::Duration;

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use futures_util::StreamExt;
use serde_json::{Map, Value, json};
use tool_agent::assemble::{AnthropicAssembler, OpenAiChatAssembler, from_sse};
use tool_agent::{Agent, ScriptedClient, ScriptedTurn};
use tool_core::format::ToolCall;
use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};

fn registry() -> ToolRegistry {
    let mut r = ToolRegistry::new();
    for i in 0..20 {
        let spec = ToolSpec::new(
            format!("tool_{i:02}"),
            "A benchmark tool that echoes its argument.",
            json!({"type": "object", "properties": {"text": {"type": "string", "description": "What to echo."}, "n": {"type": "integer"}}, "required": ["text"]}),
        )
        .read_only();
        r.register(
            Tool::new(spec, |args: Map<String, Value>, _| async move {
                ToolResult::ok(
                    args.get("text")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_owned(),
                )
            })
            .unwrap(),
        )
        .unwrap();
    }
    r
}

fn loop_overhead(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let tools = registry();
    let mut group = c.benchmark_group("loop_overhead");
    group.throughput(Throughput::Elements(10));
    group.bench_function("turns_10_tools_20", |b| {
        b.iter_batched(
            || {
                let mut turns: Vec<ScriptedTurn> = (0..9)
                    .map(|i| {
                        ScriptedTurn::calls([ToolCall::new(
                            format!("c{i}"),
                            format!("tool_{:02}", i % 20),
                            r#"{"text":"hello","n":3}"#,
                        )])
                    })
                    .collect();
                turns.push(ScriptedTurn::text("done"));
                Agent::new(
                    ScriptedClient::new(turns).without_recording(),
                    tools.clone(),
                )
                .max_turns(10)
            },
            |agent| {
                let out = rt.block_on(agent.run("go")).unwrap();
                assert_eq!(out.turns, 10);
                out
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

const TEN_MB: usize = 10 * 1024 * 1024;

fn openai_stream() -> Vec<u8> {
    let mut out = Vec::with_capacity(TEN_MB + 4096);
    let mut index = 0;
    while out.len() < TEN_MB {
        out.extend_from_slice(format!(
            "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"id\":\"call_{index}\",\"type\":\"function\",\"function\":{{\"name\":\"tool_00\",\"arguments\":\"\"}}}}]}}}}]}}\n\n"
        ).as_bytes());
        out.extend_from_slice(format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"function\":{{\"arguments\":\"{{\\\"text\\\": \\\"\"}}}}]}}}}]}}\n\n").as_bytes());
        for _ in 0..1000 {
            out.extend_from_slice(format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"function\":{{\"arguments\":\"lorem ipsum dolor \"}}}}]}}}}]}}\n\n").as_bytes());
        }
        out.extend_from_slice(format!("data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"tool_calls\":[{{\"index\":{index},\"function\":{{\"arguments\":\"\\\"}}\"}}}}]}}}}]}}\n\n").as_bytes());
        index += 1;
    }
    out.extend_from_slice(b"data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\ndata: [DONE]\n\n");
    out
}

fn anthropic_stream() -> Vec<u8> {
    let mut out = Vec::with_capacity(TEN_MB + 4096);
    let mut index = 0;
    while out.len() < TEN_MB {
        out.extend_from_slice(format!("event: content_block_start\ndata: {{\"type\":\"content_block_start\",\"index\":{index},\"content_block\":{{\"type\":\"tool_use\",\"id\":\"toolu_{index}\",\"name\":\"tool_00\",\"input\":{{}}}}}}\n\n").as_bytes());
        out.extend_from_slice(format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"{{\\\"text\\\": \\\"\"}}}}\n\n").as_bytes());
        for _ in 0..1000 {
            out.extend_from_slice(format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"lorem ipsum dolor \"}}}}\n\n").as_bytes());
        }
        out.extend_from_slice(format!("event: content_block_delta\ndata: {{\"type\":\"content_block_delta\",\"index\":{index},\"delta\":{{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"}}\"}}}}\n\nevent: content_block_stop\ndata: {{\"type\":\"content_block_stop\",\"index\":{index}}}\n\n").as_bytes());
        index += 1;
    }
    out.extend_from_slice(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n");
    out
}

fn chunks(bytes: &[u8]) -> Vec<Result<bytes::Bytes, std::io::Error>> {
    bytes
        .chunks(64 * 1024)
        .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
        .collect()
}

fn assemble(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut group = c.benchmark_group("assemble");
    group
        .measurement_time(Duration::from_secs(10))
        .sample_size(10);
    let openai = openai_stream();
    group.throughput(Throughput::Bytes(openai.len() as u64));
    group.bench_function("openai_chat_10MB", |b| {
        b.iter_batched(
            || chunks(&openai),
            |input| {
                let n = rt.block_on(
                    from_sse(
                        futures_util::stream::iter(input),
                        OpenAiChatAssembler::new(),
                    )
                    .map(Result::unwrap)
                    .count(),
                );
                assert!(n > 100);
                n
            },
            BatchSize::LargeInput,
        );
    });
    let anthropic = anthropic_stream();
    group.throughput(Throughput::Bytes(anthropic.len() as u64));
    group.bench_function("anthropic_10MB", |b| {
        b.iter_batched(
            || chunks(&anthropic),
            |input| {
                let n = rt.block_on(
                    from_sse(futures_util::stream::iter(input), AnthropicAssembler::new())
                        .map(Result::unwrap)
                        .count(),
                );
                assert!(n > 100);
                n
            },
            BatchSize::LargeInput,
        );
    });
    group.finish();
}

criterion_group!(benches, loop_overhead, assemble);
criterion_main!(benches);
