//! The async-openai adapter, black-box: round trips between our renderings
//! and async-openai's types, and a recorded response's calls executed.
#![cfg(feature = "async-openai")]

use async_openai::types::chat::{
    ChatCompletionMessageCustomToolCall, ChatCompletionMessageToolCalls,
    ChatCompletionRequestMessage, ChatCompletionTools, CreateChatCompletionResponse, CustomTool,
};
use serde_json::{Value, json};
use tool_adapters::openai::{
    AdapterError, canonical_schema, chat_tools, openai_tool_call, tool_call, tool_calls,
    tool_messages, tool_result,
};
use tool_core::format::render_result;
use tool_core::{Format, Image, RegistryView, Rendering, ToolCall, ToolResult};

fn builtins() -> RegistryView {
    RegistryView::new(tool_builtins::registry())
}

/// Our schemas → async-openai's `ChatCompletionTools` → JSON: equal to our
/// own OpenAI Chat rendering, strict and not.
#[test]
fn chat_tools_serialise_as_our_rendering() {
    let view = builtins();
    for strict in [false, true] {
        let tools = chat_tools(&view, strict).expect("tools");
        let ours = view
            .schemas_in(Format::OpenAiChat { strict })
            .expect("render")
            .into_value();
        assert_eq!(
            serde_json::to_value(&tools).expect("serialise"),
            ours,
            "strict {strict}"
        );
        assert!(tools.len() > 10, "{}", tools.len());
        let strict_flags: Vec<Option<bool>> = tools
            .iter()
            .map(|t| match t {
                ChatCompletionTools::Function(f) => f.function.strict,
                ChatCompletionTools::Custom(_) => panic!("a custom tool"),
            })
            .collect();
        if strict {
            assert!(strict_flags.contains(&Some(true)), "{strict_flags:?}");
        }
    }
}

/// Back: each function tool gives our canonical schema's name and
/// description, and (non-strict) the parameters our rendering sent.
#[test]
fn function_tools_read_back_as_canonical_schemas() {
    let view = builtins();
    let tools = chat_tools(&view, false).expect("tools");
    let canonical = view.registry().schemas();
    assert_eq!(tools.len(), canonical.len());
    for (tool, ours) in tools.iter().zip(&canonical) {
        let ChatCompletionTools::Function(f) = tool else {
            panic!("a custom tool")
        };
        let back = canonical_schema(f);
        assert_eq!(back["name"], ours["name"]);
        assert_eq!(back["description"], ours["description"]);
        let rendered = view
            .schemas_in(Format::OpenAiChat { strict: false })
            .expect("render")
            .into_value();
        let sent = rendered
            .as_array()
            .and_then(|a| a.iter().find(|t| t["function"]["name"] == ours["name"]))
            .expect("rendered tool");
        assert_eq!(back["parameters"], sent["function"]["parameters"]);
    }
}

fn recorded_response() -> CreateChatCompletionResponse {
    let text = include_str!("data/chat_response_tool_calls.json");
    serde_json::from_str(text).expect("the recorded response reads as async-openai's type")
}

/// A recorded response's calls, parsed from async-openai's type, execute
/// through our pipeline, and the results serialise as the API expects.
#[tokio::test]
async fn recorded_calls_execute_and_answer_as_tool_messages() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n").expect("write");
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    let ctx = tool_builtins::context(dir.path()).expect("context");
    let view = builtins();

    let response = recorded_response();
    let message = &response.choices[0].message;
    let calls = tool_calls(message.tool_calls.as_deref().unwrap_or_default()).expect("calls");
    assert_eq!(
        calls.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(),
        ["call_read", "call_typo", "call_repair"]
    );
    assert_eq!(calls[0].name, "read_file");
    let results = view.execute_calls(&calls, &ctx).await;

    let path = root.join("notes.txt").display().to_string();
    assert!(results[0].is_ok(), "{:?}", results[0]);
    assert!(
        results[0].output.contains("1: one\n2: two\n3: three"),
        "{}",
        results[0].output
    );
    let typo = results[1]
        .error
        .as_ref()
        .expect("unknown parameter refused");
    assert!(typo.message.contains("`limt`"), "{}", typo.message);
    assert!(
        results[2].output.contains("2: two"),
        "{}",
        results[2].output
    );
    assert!(
        !results[2].output.contains("1: one"),
        "{}",
        results[2].output
    );
    assert!(!results[2].notes.is_empty(), "the repair is noted");

    for (call, result) in calls.iter().zip(&results) {
        let messages = tool_messages(call, result, Rendering::First).expect("messages");
        let json = serde_json::to_value(&messages).expect("serialise");
        // What our own OpenAI Chat rendering sends…
        let ours = render_result(
            call,
            result,
            Format::OpenAiChat { strict: false },
            Rendering::First,
        );
        assert_eq!(json, Value::Array(ours), "{}", call.id);
        // …which is the API's tool message: role, tool_call_id, text content.
        assert_eq!(
            json,
            json!([{"role": "tool", "tool_call_id": call.id, "content": result.model_text()}]),
            "{}",
            call.id
        );
        let ChatCompletionRequestMessage::Tool(tool_message) = &messages[0] else {
            panic!("not a tool message: {messages:?}")
        };
        let (id, back) = tool_result(tool_message);
        assert_eq!(id, call.id);
        assert_eq!(back.output, result.model_text());
    }
    assert!(results[0].model_text().contains(&path));
}

/// Our call → async-openai's → ours again, for raw text and parsed arguments.
#[test]
fn calls_round_trip() {
    let raw = ToolCall::new("call_1", "read_file", r#"{"file_path": "a.txt"}"#);
    let theirs = openai_tool_call(&raw);
    assert_eq!(theirs.function.arguments, r#"{"file_path": "a.txt"}"#);
    assert_eq!(tool_call(&theirs), raw);
    assert_eq!(
        serde_json::to_value(ChatCompletionMessageToolCalls::Function(theirs)).expect("json"),
        json!({"id": "call_1", "type": "function",
               "function": {"name": "read_file", "arguments": "{\"file_path\": \"a.txt\"}"}})
    );
    let parsed = ToolCall::new(
        "call_2",
        "read_file",
        json!({"file_path": "b.txt", "limit": 2}),
    );
    let theirs = openai_tool_call(&parsed);
    assert_eq!(
        theirs.function.arguments,
        r#"{"file_path":"b.txt","limit":2}"#
    );
    let back = tool_call(&theirs);
    assert_eq!(
        (back.id.as_str(), back.name.as_str()),
        ("call_2", "read_file")
    );
}

#[test]
fn custom_tool_calls_are_refused_by_name() {
    let calls = [ChatCompletionMessageToolCalls::Custom(
        ChatCompletionMessageCustomToolCall {
            id: "call_c".to_owned(),
            custom_tool: CustomTool {
                name: "grammar_tool".to_owned(),
                input: "x".to_owned(),
            },
        },
    )];
    let err = tool_calls(&calls).expect_err("custom calls are refused");
    assert!(matches!(err, AdapterError::CustomToolCall { .. }));
    assert_eq!(
        err.to_string(),
        "call call_c is a custom tool call to `grammar_tool`; these tools are function tools (send them as `type: function`)"
    );
}

/// A result with an image: the tool message, then a user message with the
/// image part, both in async-openai's types.
#[test]
fn images_follow_in_a_user_message() {
    let call = ToolCall::new("call_img", "read_images", "{}");
    let result = ToolResult::ok("one image").with_image(Image::new("image/png", "iVBORw0KGgo="));
    let messages = tool_messages(&call, &result, Rendering::First).expect("messages");
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(matches!(messages[0], ChatCompletionRequestMessage::Tool(_)));
    assert!(matches!(messages[1], ChatCompletionRequestMessage::User(_)));
    let json = serde_json::to_value(&messages).expect("json");
    assert_eq!(
        json[1]["content"][1]["image_url"]["url"], "data:image/png;base64,iVBORw0KGgo=",
        "{json}"
    );
    let ours = render_result(
        &call,
        &result,
        Format::OpenAiChat { strict: false },
        Rendering::First,
    );
    assert_eq!(json, Value::Array(ours));
}

/// An empty output is `(no output)`, as OpenAI needs text.
#[test]
fn empty_output_is_still_text() {
    let call = ToolCall::new("call_e", "noop", "{}");
    let messages = tool_messages(&call, &ToolResult::ok(""), Rendering::First).expect("messages");
    assert_eq!(
        serde_json::to_value(&messages).expect("json"),
        json!([{"role": "tool", "tool_call_id": "call_e", "content": "(no output)"}])
    );
}
