//! Provider answer JSON → `ToolCall` → `execute_call` → provider result JSON,
//! for each provider, with payloads in the shapes the APIs return.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_core::format::{Format, Recursion, ToolCall, render_result};
use tool_core::{Image, Rendering, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec, tool};

/// Temperature unit.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Options {
    /// Days of forecast.
    #[serde(default = "one")]
    days: u8,
    /// Attach a map image.
    #[serde(default)]
    with_map: bool,
}

fn one() -> u8 {
    1
}

/// Arguments of `get_weather`.
#[derive(Debug, Deserialize, JsonSchema)]
struct WeatherArgs {
    /// City name.
    city: String,
    /// Unit; Celsius when absent.
    unit: Option<Unit>,
    #[serde(default = "default_options")]
    options: Options,
}

fn default_options() -> Options {
    Options {
        days: 1,
        with_map: false,
    }
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

fn registry() -> ToolRegistry {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<WeatherArgs>().to_value();
    schema["additionalProperties"] = json!(false);
    let weather = Tool::new(
        ToolSpec::new(
            "get_weather",
            "Get the weather forecast for a city.",
            schema,
        ),
        |args: Map<String, Value>, _ctx| async move {
            let args: WeatherArgs = match serde_json::from_value(Value::Object(args)) {
                Ok(a) => a,
                Err(e) => {
                    return ToolResult::error(
                        tool_core::ErrorKind::InvalidArguments,
                        e.to_string(),
                    );
                }
            };
            let unit = match args.unit {
                None | Some(Unit::Celsius) => "°C",
                Some(Unit::Fahrenheit) => "°F",
            };
            let mut result = ToolResult::ok(format!(
                "{}: 21{unit}, sunny ({} day forecast)",
                args.city, args.options.days
            ))
            .with_long_term_memory(format!("looked up the weather in {}", args.city))
            .output_once();
            if args.options.with_map {
                result = result.with_image(Image::new("image/png", PNG));
            }
            result
        },
    )
    .expect("valid tool");
    let fail = Tool::new(
        ToolSpec::new(
            "fail",
            "Always fails.",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ),
        |_args: Map<String, Value>, _ctx| async move {
            ToolResult::failed("the weather service is down").with_output("partial data")
        },
    )
    .expect("valid tool");
    let mut registry = ToolRegistry::new();
    registry.register(weather).expect("registers");
    registry.register(fail).expect("registers");
    registry
}

/// Parses, executes every call, renders each result first and later.
async fn round_trip(format: Format, payload: &Value) -> (Vec<ToolCall>, Value) {
    let registry = registry();
    registry
        .schemas_in(format)
        .expect("both tools render for every format");
    let calls = ToolCall::parse(format, payload).expect("payload parses");
    let ctx = ToolContext::new();
    let mut rendered = Vec::new();
    for call in &calls {
        let result = registry.execute_call(call, &ctx).await;
        rendered.push(json!({
            "call": {"id": call.id, "name": call.name, "generated_id": call.generated_id},
            "output": result.output,
            "first": render_result(call, &result, format, Rendering::First),
            "later": render_result(call, &result, format, Rendering::Later),
        }));
    }
    (calls, Value::Array(rendered))
}

#[tokio::test]
async fn openai_chat_completion() {
    let payload = json!({
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG",
        "object": "chat.completion",
        "created": 1_741_570_283,
        "model": "gpt-4o-2024-08-06",
        "choices": [{
            "index": 0,
            "message": {
                "role": "assistant",
                "content": null,
                "tool_calls": [
                    {
                        "id": "call_12345xyz",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": "{\"city\":\"Paris\",\"unit\":null,\"options\":{\"days\":null,\"with_map\":true}}"
                        }
                    },
                    {
                        "id": "call_67890abc",
                        "type": "function",
                        "function": {"name": "fail", "arguments": "{}"}
                    }
                ],
                "refusal": null,
                "annotations": []
            },
            "logprobs": null,
            "finish_reason": "tool_calls"
        }],
        "usage": {"prompt_tokens": 82, "completion_tokens": 17, "total_tokens": 99}
    });
    let (calls, out) = round_trip(Format::OpenAiChat { strict: true }, &payload).await;
    assert_eq!(calls[0].id, "call_12345xyz");
    // Strict-mode nulls arrive as "absent": unit → Celsius, days → its default 1.
    assert_eq!(out[0]["output"], "Paris: 21°C, sunny (1 day forecast)");
    let first = &out[0]["first"];
    assert_eq!(first[0]["role"], "tool");
    assert_eq!(first[0]["tool_call_id"], "call_12345xyz");
    assert_eq!(first[1]["role"], "user");
    assert_eq!(
        first[1]["content"][1]["image_url"]["url"],
        format!("data:image/png;base64,{PNG}")
    );
    let later = &out[0]["later"];
    assert_eq!(later.as_array().map(Vec::len), Some(1), "no images later");
    assert_eq!(later[0]["content"], "looked up the weather in Paris");
    assert_eq!(
        out[1]["first"][0]["content"],
        "partial data\n\nError: the weather service is down"
    );
    insta::assert_json_snapshot!("roundtrip_openai_chat", out);
}

#[tokio::test]
async fn openai_responses() {
    let payload = json!({
        "id": "resp_67ccd2bed1ec8190b14f964abc054267",
        "object": "response",
        "created_at": 1_741_476_542,
        "status": "completed",
        "model": "gpt-4.1-2025-04-14",
        "output": [
            {"type": "reasoning", "id": "rs_67ccd3", "summary": []},
            {
                "type": "function_call",
                "id": "fc_12345xyz",
                "call_id": "call_12345xyz",
                "name": "get_weather",
                "arguments": "{\"city\":\"Paris\",\"unit\":\"fahrenheit\",\"options\":{\"days\":3,\"with_map\":true}}",
                "status": "completed"
            }
        ]
    });
    let (calls, out) = round_trip(Format::OpenAiResponses { strict: true }, &payload).await;
    assert_eq!(calls.len(), 1);
    assert_eq!(calls[0].id, "call_12345xyz", "the call id, not the item id");
    let item = &out[0]["first"][0];
    assert_eq!(item["type"], "function_call_output");
    assert_eq!(item["call_id"], "call_12345xyz");
    assert_eq!(item["output"][0]["type"], "input_text");
    assert_eq!(item["output"][1]["type"], "input_image");
    assert_eq!(
        out[0]["later"][0]["output"],
        "looked up the weather in Paris"
    );
    insta::assert_json_snapshot!("roundtrip_openai_responses", out);
}

#[tokio::test]
async fn anthropic_messages() {
    let payload = json!({
        "id": "msg_01Aq9w938a90dw8q",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-5",
        "content": [
            {"type": "text", "text": "I'll check the weather in Paris."},
            {
                "type": "tool_use",
                "id": "toolu_01A09q90qw90lq917835lq9",
                "name": "get_weather",
                "input": {"city": "Paris", "options": {"with_map": true}}
            },
            {"type": "tool_use", "id": "toolu_01B", "name": "fail", "input": {}}
        ],
        "stop_reason": "tool_use",
        "stop_sequence": null,
        "usage": {"input_tokens": 472, "output_tokens": 91}
    });
    let (calls, out) = round_trip(Format::Anthropic { strict: false }, &payload).await;
    assert_eq!(calls.len(), 2);
    let block = &out[0]["first"][0];
    assert_eq!(block["type"], "tool_result");
    assert_eq!(block["tool_use_id"], "toolu_01A09q90qw90lq917835lq9");
    assert_eq!(block["content"][1]["source"]["type"], "base64");
    assert!(block.get("is_error").is_none());
    assert_eq!(out[1]["first"][0]["is_error"], true);
    insta::assert_json_snapshot!("roundtrip_anthropic", out);
}

#[tokio::test]
async fn gemini_generate_content() {
    let payload = json!({
        "candidates": [{
            "content": {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "get_weather", "args": {"city": "Paris", "options": {"with_map": true}}}},
                    {"functionCall": {"id": "fc-2", "name": "fail", "args": {}}}
                ]
            },
            "finishReason": "STOP",
            "index": 0
        }],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 10, "totalTokenCount": 60},
        "modelVersion": "gemini-2.5-flash"
    });
    let format = Format::Gemini {
        recursion: Recursion::Refuse,
    };
    let (calls, out) = round_trip(format, &payload).await;
    let (again, _) = round_trip(format, &payload).await;
    assert!(calls[0].generated_id);
    assert_eq!(calls[0].id, again[0].id, "generated ids are stable");
    assert_eq!(calls[1].id, "fc-2");
    let first = &out[0]["first"][0]["functionResponse"];
    assert!(first.get("id").is_none(), "a generated id is not sent back");
    assert_eq!(
        first["response"]["output"],
        "Paris: 21°C, sunny (1 day forecast)"
    );
    assert_eq!(first["parts"][0]["inlineData"]["mimeType"], "image/png");
    let failed = &out[1]["first"][0]["functionResponse"];
    assert_eq!(failed["id"], "fc-2");
    assert_eq!(failed["response"]["error"], "the weather service is down");
    insta::assert_json_snapshot!("roundtrip_gemini", out);
}

#[tokio::test]
async fn mcp_tools_call() {
    let payload = json!({
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}
    });
    let (calls, out) = round_trip(Format::Mcp, &payload).await;
    assert_eq!(calls[0].id, "2");
    let result = &out[0]["first"][0];
    assert_eq!(result["isError"], false);
    assert_eq!(result["content"][0]["type"], "text");
    insta::assert_json_snapshot!("roundtrip_mcp", out);
}

#[tokio::test]
async fn malformed_payloads_name_the_path() {
    let err = ToolCall::parse(
        Format::OpenAiChat { strict: false },
        &json!({"role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {"arguments": "{}"}}]}),
    )
    .expect_err("no name");
    assert_eq!(err.path, "/tool_calls/0/function/name");
    let err = ToolCall::parse(
        Format::Anthropic { strict: false },
        &json!({"content": [{"type": "tool_use", "name": "x", "input": {}}]}),
    )
    .expect_err("no id");
    assert_eq!(err.path, "/content/0/id");
    let none = ToolCall::parse(
        Format::OpenAiChat { strict: false },
        &json!({"role": "assistant", "content": "Hello"}),
    )
    .expect("a message without calls");
    assert!(none.is_empty());
    // Arguments that are not JSON reach the tool pipeline, which tells the model.
    let calls = ToolCall::parse(
        Format::OpenAiChat { strict: false },
        &json!([{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{city: Paris"}}]),
    )
    .expect("parses");
    let result = registry()
        .execute_call(&calls[0], &ToolContext::new())
        .await;
    assert!(result.is_error());
    assert!(
        result.model_text().contains("not valid JSON"),
        "{}",
        result.model_text()
    );
}

/// Search notes.
///
/// # Arguments
/// * `query` - What to look for.
/// * `limit` - At most this many notes.
/// * `tags` - Only notes with these tags.
#[tool(strict)]
fn search_notes(
    query: String,
    #[arg(default = 10)] limit: u32,
    tags: Option<Vec<String>>,
) -> String {
    format!("{query} limit={limit} tags={tags:?}")
}

#[tokio::test]
async fn macro_strict_tool_round_trip() {
    let registry = ToolRegistry::global();
    // `#[tool(strict)]` renders strict even when the format does not ask for it.
    let tools = registry
        .schemas_in(Format::OpenAiChat { strict: false })
        .expect("renders");
    let tool = tools
        .as_array()
        .and_then(|t| t.iter().find(|t| t["function"]["name"] == "search_notes"))
        .expect("listed");
    assert_eq!(tool["function"]["strict"], true);
    assert_eq!(
        tool["function"]["parameters"]["required"],
        json!(["query", "limit", "tags"])
    );
    let calls = ToolCall::parse(
        Format::OpenAiChat { strict: false },
        &json!({"role": "assistant", "tool_calls": [{"id": "call_9", "type": "function", "function": {
            "name": "search_notes", "arguments": "{\"query\":\"rust\",\"limit\":null,\"tags\":null}"}}]}),
    )
    .expect("parses");
    let result = registry.execute_call(&calls[0], &ToolContext::new()).await;
    assert_eq!(result.output, "rust limit=10 tags=None");
}
