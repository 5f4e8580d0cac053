//! Every built-in model provider passes the shared recorded-stream checks
//! (`common::conformance`): a recorded stream with calls, a truncated one, a
//! whole answer after a retried 503, and an agent run with real tools. A
//! new provider adds one `check` call here (`docs/ARCHITECTURE.md`, "A new
//! model provider").

#![allow(
    clippy::unwrap_used,
    reason = "test code: a failed setup step should stop the test"
)]

mod common;

use common::conformance::{Recorded, check};
use common::recording;
use serde_json::json;
use tool_agent::provider::anthropic::Anthropic;
use tool_agent::provider::openai_chat::OpenAiChat;
use tool_agent::provider::responses::OpenAiResponses;

#[tokio::test]
async fn openai_chat_passes_the_shared_checks() {
    let whole = json!({
        "id": "chatcmpl-3", "object": "chat.completion",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": null,
            "tool_calls": [{"id": "call_x", "type": "function", "function": {"name": "glob_files", "arguments": "{\"pattern\":\"*.rs\"}"}}]}}],
        "usage": {"prompt_tokens": 5, "completion_tokens": 7}
    });
    let answer = concat!(
        "data: {\"id\":\"c2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"All done.\"},\"finish_reason\":null}]}\n\n",
        "data: {\"id\":\"c2\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n",
        "data: [DONE]\n\n"
    );
    check::<OpenAiChat>(
        "openai_chat",
        "gpt-4.1-mini",
        Recorded {
            calls: recording("openai_chat_parallel.sse").into(),
            truncated: recording("openai_chat_truncated.sse").into(),
            whole: whole.to_string(),
            answer: answer.into(),
            answer_text: "All done.",
        },
    )
    .await;
}

#[tokio::test]
async fn anthropic_passes_the_shared_checks() {
    let whole = json!({
        "type": "message", "role": "assistant", "stop_reason": "tool_use",
        "content": [
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"file_path": "a.md"}}
        ],
        "usage": {"input_tokens": 11, "output_tokens": 3}
    });
    let answer = concat!(
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\",\"type\":\"message\",\"role\":\"assistant\",\"content\":[],\"stop_reason\":null,\"usage\":{\"input_tokens\":9,\"output_tokens\":1}}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
        "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"All done.\"}}\n\n",
        "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
        "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":3}}\n\n",
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
    );
    check::<Anthropic>(
        "anthropic",
        "claude-sonnet-4-5",
        Recorded {
            calls: recording("anthropic_tools.sse").into(),
            truncated: recording("anthropic_truncated.sse").into(),
            whole: whole.to_string(),
            answer: answer.into(),
            answer_text: "All done.",
        },
    )
    .await;
}

#[tokio::test]
async fn openai_responses_passes_the_shared_checks() {
    let whole = json!({
        "id": "resp_1", "status": "completed",
        "output": [
            {"type": "message", "content": [{"type": "output_text", "text": "Done soon."}]},
            {"type": "function_call", "call_id": "call_9", "name": "glob_files", "arguments": "{\"pattern\":\"*.md\"}"}
        ],
        "usage": {"input_tokens": 21, "output_tokens": 4}
    });
    let answer = concat!(
        "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_2\",\"object\":\"response\",\"status\":\"in_progress\",\"output\":[]}}\n\n",
        "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"sequence_number\":1,\"item_id\":\"msg_2\",\"output_index\":0,\"content_index\":0,\"delta\":\"All done.\"}\n\n",
        "event: response.completed\ndata: {\"type\":\"response.completed\",\"sequence_number\":2,\"response\":{\"id\":\"resp_2\",\"object\":\"response\",\"status\":\"completed\",\"usage\":{\"input_tokens\":30,\"output_tokens\":3,\"total_tokens\":33}}}\n\n"
    );
    check::<OpenAiResponses>(
        "openai_responses",
        "gpt-4.1-mini",
        Recorded {
            calls: recording("responses_call.sse").into(),
            truncated: recording("responses_truncated.sse").into(),
            whole: whole.to_string(),
            answer: answer.into(),
            answer_text: "All done.",
        },
    )
    .await;
}
