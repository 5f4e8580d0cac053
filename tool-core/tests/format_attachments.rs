//! A result with an image and a PDF, parsed from each provider's call shape,
//! executed, and rendered in each provider's result shape (first turn and
//! later turns), plus the size limits and the one-user-message rule of
//! OpenAI Chat. The Gemini rendering is also a snapshot that
//! `gemini_sdk_check.py` validates with the google-genai SDK in CI.

use serde_json::{Map, Value, json};
use tool_core::format::{Format, ToolCall, render_result, render_results};
use tool_core::{
    Attachment, Image, Rendering, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec,
};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
/// `%PDF-1.4` and a few bytes: the renderings carry it, none parses it.
const PDF: &str = "JVBERi0xLjQKJcfsj6IKMSAwIG9iago8PD4+CmVuZG9iagp0cmFpbGVyCjw8Pj4KJSVFT0Y=";

fn result() -> ToolResult {
    ToolResult::ok("Read the page and its report.")
        .with_image(Image::new("image/png", PNG).with_path("/work/page.png"))
        .with_attachment(Attachment {
            name: "report.pdf".into(),
            media_type: "application/pdf".into(),
            path: Some("/work/report.pdf".into()),
            data: Some(PDF.into()),
        })
        .with_long_term_memory("[read page.png and report.pdf earlier]")
        .output_once()
}

fn registry() -> ToolRegistry {
    let spec = ToolSpec::new(
        "fetch_page",
        "Fetch a page as an image and its report as a PDF.",
        json!({"type": "object", "properties": {}, "additionalProperties": false}),
    );
    let tool = Tool::new(spec, |_: Map<String, Value>, _| async { result() }).expect("valid");
    let mut registry = ToolRegistry::new();
    registry.register(tool).expect("registers");
    registry
}

async fn run(format: Format, payload: &Value) -> (ToolCall, ToolResult) {
    let calls = ToolCall::parse(format, payload).expect("parses");
    let r = registry()
        .execute_call(&calls[0], &ToolContext::new())
        .await;
    assert!(r.is_ok(), "{r:?}");
    (calls[0].clone(), r)
}

#[tokio::test]
async fn anthropic_tool_result_has_image_and_document_blocks() {
    let payload = json!({"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "fetch_page", "input": {}}
    ]});
    let (call, r) = run(Format::Anthropic { strict: false }, &payload).await;
    let first = render_result(
        &call,
        &r,
        Format::Anthropic { strict: false },
        Rendering::First,
    );
    assert_eq!(
        first[0],
        json!({
            "type": "tool_result",
            "tool_use_id": "toolu_01A09q90qw90lq917835lq9",
            "content": [
                {"type": "text", "text": "Read the page and its report."},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}, "title": "report.pdf"},
            ]
        })
    );
    let later = render_result(
        &call,
        &r,
        Format::Anthropic { strict: false },
        Rendering::Later,
    );
    assert_eq!(
        later[0]["content"],
        json!([{"type": "text", "text": "[read page.png and report.pdf earlier]"}]),
        "shown once: later turns carry the description only"
    );
}

#[tokio::test]
async fn openai_responses_output_has_input_image_and_input_file() {
    let payload = json!({"output": [
        {"type": "function_call", "id": "fc_1", "call_id": "call_abc", "name": "fetch_page", "arguments": "{}"}
    ]});
    let format = Format::OpenAiResponses { strict: true };
    let (call, r) = run(format, &payload).await;
    let first = render_result(&call, &r, format, Rendering::First);
    assert_eq!(
        first[0],
        json!({
            "type": "function_call_output",
            "call_id": "call_abc",
            "output": [
                {"type": "input_text", "text": "Read the page and its report."},
                {"type": "input_image", "image_url": format!("data:image/png;base64,{PNG}")},
                {"type": "input_file", "filename": "report.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")},
            ]
        })
    );
    let later = render_result(&call, &r, format, Rendering::Later);
    assert_eq!(later[0]["output"], "[read page.png and report.pdf earlier]");
}

#[tokio::test]
async fn openai_chat_puts_every_media_item_of_the_turn_in_one_user_message() {
    let payload = json!({"role": "assistant", "content": null, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "fetch_page", "arguments": "{}"}},
        {"id": "call_2", "type": "function", "function": {"name": "fetch_page", "arguments": "{}"}}
    ]});
    let format = Format::OpenAiChat { strict: false };
    let calls = ToolCall::parse(format, &payload).expect("parses");
    let registry = registry();
    let ctx = ToolContext::new();
    let r1 = registry.execute_call(&calls[0], &ctx).await;
    let r2 = registry.execute_call(&calls[1], &ctx).await;
    let messages = render_results(
        &[(&calls[0], &r1), (&calls[1], &r2)],
        format,
        Rendering::First,
    );
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[0],
        json!({"role": "tool", "tool_call_id": "call_1", "content": "Read the page and its report."})
    );
    assert_eq!(messages[1]["role"], "tool");
    assert_eq!(messages[1]["tool_call_id"], "call_2");
    let file = json!({"type": "file", "file": {"filename": "report.pdf", "file_data": format!("data:application/pdf;base64,{PDF}")}});
    let image =
        json!({"type": "image_url", "image_url": {"url": format!("data:image/png;base64,{PNG}")}});
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "text", "text": "Images and files returned by the `fetch_page` tool (call call_1):"},
            image, file,
            {"type": "text", "text": "Images and files returned by the `fetch_page` tool (call call_2):"},
            image, file,
        ]})
    );
    // Later turns: the tool messages carry the description, no user message.
    let later = render_results(
        &[(&calls[0], &r1), (&calls[1], &r2)],
        format,
        Rendering::Later,
    );
    assert_eq!(later.len(), 2);
    assert_eq!(
        later[0]["content"],
        "[read page.png and report.pdf earlier]"
    );
    // One call alone through render_result: the same shape.
    let one = render_result(&calls[0], &r1, format, Rendering::First);
    assert_eq!(one.len(), 2);
    assert_eq!(one[1]["content"][2], file);
}

#[tokio::test]
async fn gemini_function_response_has_inline_data_parts() {
    let payload = json!({"candidates": [{"content": {"role": "model", "parts": [
        {"functionCall": {"id": "fc-7", "name": "fetch_page", "args": {}}}
    ]}}]});
    let format = Format::Gemini {
        recursion: Default::default(),
    };
    let (call, r) = run(format, &payload).await;
    let first = render_result(&call, &r, format, Rendering::First);
    assert_eq!(
        first[0],
        json!({"functionResponse": {
            "name": "fetch_page",
            "response": {"output": "Read the page and its report."},
            "id": "fc-7",
            "parts": [
                {"inlineData": {"mimeType": "image/png", "data": PNG}},
                {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
            ]
        }})
    );
    let later = render_result(&call, &r, format, Rendering::Later);
    assert!(later[0]["functionResponse"].get("parts").is_none());
    insta::assert_json_snapshot!(
        "attachments_gemini",
        json!([{"call": {"name": call.name}, "first": first, "later": later}])
    );
}

#[tokio::test]
async fn mcp_has_image_and_embedded_resource_blocks() {
    let (call, r) = run(Format::Mcp, &json!({"name": "fetch_page", "arguments": {}})).await;
    let out = render_result(&call, &r, Format::Mcp, Rendering::First);
    assert_eq!(
        out[0]["content"],
        json!([
            {"type": "text", "text": "Read the page and its report."},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "attachment:///report.pdf", "mimeType": "application/pdf", "blob": PDF}},
        ])
    );
    let later = render_result(&call, &r, Format::Mcp, Rendering::Later);
    assert_eq!(
        later[0]["content"],
        json!([{"type": "text", "text": "[read page.png and report.pdf earlier]"}])
    );
}

#[test]
fn mcp_sends_zip_and_audio_attachments_too() {
    let r = ToolResult::ok("packed")
        .with_attachment(Attachment::inline("a.zip", "application/zip", "UEsDBA=="))
        .with_attachment(Attachment::inline("say.wav", "audio/wav", "UklGRg=="))
        .with_attachment(Attachment::file("full.log", "text/plain", "/tmp/full.log"));
    let call = ToolCall::new("1", "pack", tool_core::ToolArgs::Text("{}".into()));
    let out = render_result(&call, &r, Format::Mcp, Rendering::First);
    assert_eq!(
        out[0],
        json!({"content": [
            {"type": "text", "text": "packed"},
            {"type": "resource", "resource": {"uri": "attachment:///a.zip", "mimeType": "application/zip", "blob": "UEsDBA=="}},
            {"type": "audio", "data": "UklGRg==", "mimeType": "audio/wav"},
        ], "isError": false})
    );
}

#[tokio::test]
async fn json_lists_every_image_and_file_as_media() {
    let (call, r) = run(Format::Json, &json!({"id": "c1", "name": "fetch_page"})).await;
    let with_log =
        r.clone()
            .with_attachment(Attachment::file("full.log", "text/plain", "/tmp/full.log"));
    let out = render_result(&call, &with_log, Format::Json, Rendering::First);
    assert_eq!(
        out[0],
        json!({
            "id": "c1",
            "name": "fetch_page",
            "content": "Read the page and its report.",
            "is_error": false,
            "media": [
                {"type": "image", "mime_type": "image/png", "data": PNG},
                {"type": "file", "name": "report.pdf", "mime_type": "application/pdf", "data": PDF},
                {"type": "file", "name": "full.log", "mime_type": "text/plain", "path": "/tmp/full.log"},
            ]
        })
    );
    let later = render_result(&call, &r, Format::Json, Rendering::Later);
    assert_eq!(
        later[0],
        json!({"id": "c1", "name": "fetch_page", "content": "[read page.png and report.pdf earlier]", "is_error": false}),
        "shown once: no media on later turns"
    );
}

fn providers() -> [Format; 4] {
    [
        Format::Anthropic { strict: false },
        Format::OpenAiResponses { strict: false },
        Format::OpenAiChat { strict: false },
        Format::Gemini {
            recursion: Default::default(),
        },
    ]
}

/// All the text of a provider rendering, joined, and the base64 data it carries.
fn text_and_data(format: Format, rendered: &[Value]) -> (String, Vec<String>) {
    let mut texts = Vec::new();
    let mut data = Vec::new();
    fn walk(v: &Value, texts: &mut Vec<String>, data: &mut Vec<String>) {
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    match (k.as_str(), v) {
                        ("text" | "content" | "output" | "error", Value::String(s)) => {
                            texts.push(s.clone());
                        }
                        ("data" | "url" | "image_url" | "file_data", Value::String(s)) => {
                            data.push(s.clone());
                        }
                        _ => walk(v, texts, data),
                    }
                }
            }
            Value::Array(a) => a.iter().for_each(|v| walk(v, texts, data)),
            _ => {}
        }
    }
    rendered.iter().for_each(|v| walk(v, &mut texts, &mut data));
    let _ = format;
    (texts.join("\n"), data)
}

#[test]
fn invalid_base64_becomes_a_note_for_every_provider() {
    let r = ToolResult::ok("shot")
        .with_image(Image::new("image/png", "iVBOR!!!").with_path("/work/bad.png"))
        .with_attachment(Attachment::inline("a.pdf", "application/pdf", "JVBERi0=\n"));
    let call = ToolCall::new("c", "shot", tool_core::ToolArgs::Text("{}".into()));
    for format in providers() {
        let out = render_result(&call, &r, format, Rendering::First);
        let (text, data) = text_and_data(format, &out);
        assert!(
            data.is_empty(),
            "{format:?} passed invalid base64 on: {data:?}"
        );
        assert!(
            text.contains("[not shown: image 1 (image/png, 8 bytes of base64): its data is not valid base64 (an invalid character at 5); the file is at /work/bad.png]"),
            "{format:?}: {text}"
        );
        assert!(
            text.contains("[not shown: attachment a.pdf (application/pdf, 9 bytes of base64): its data is not valid base64 (9 characters, not a multiple of 4); it was not saved to a file]"),
            "{format:?}: {text}"
        );
    }
}

/// `r` rendered for Anthropic on its first turn, as the answer to a call `c`.
fn anthropic_first(r: &ToolResult) -> Vec<Value> {
    let call = ToolCall::new("c", "shot", tool_core::ToolArgs::Text("{}".into()));
    render_result(
        &call,
        r,
        Format::Anthropic { strict: false },
        Rendering::First,
    )
}

#[test]
fn media_types_are_matched_without_regard_to_case() {
    let r = ToolResult::ok("shot")
        .with_image(Image::new("IMAGE/PNG", PNG))
        .with_attachment(Attachment::inline("r.pdf", "Application/PDF", PDF));
    let call = ToolCall::new("c", "shot", tool_core::ToolArgs::Text("{}".into()));
    let a = anthropic_first(&r);
    assert_eq!(
        a[0]["content"],
        json!([
            {"type": "text", "text": "shot"},
            {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
            {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": PDF}, "title": "r.pdf"},
        ]),
        "sent with the provider's spelling"
    );
    let g = render_result(
        &call,
        &r,
        Format::Gemini {
            recursion: Default::default(),
        },
        Rendering::First,
    );
    assert_eq!(
        g[0]["functionResponse"]["parts"],
        json!([
            {"inlineData": {"mimeType": "image/png", "data": PNG}},
            {"inlineData": {"mimeType": "application/pdf", "data": PDF}},
        ])
    );
}

#[test]
fn a_type_refusal_says_to_convert_not_to_shrink() {
    let r = ToolResult::ok("scan")
        .with_image(Image::new("image/tiff", "SUkqAA==").with_path("/w/s.tiff"));
    let a = anthropic_first(&r);
    assert_eq!(
        a[0]["content"],
        json!([{"type": "text", "text": "scan\n\n[not shown: image 1 (image/tiff, 8 bytes of base64): Anthropic does not take image/tiff in a tool result (it takes image/jpeg, image/png, image/gif, image/webp); convert it to PNG or JPEG; the file is at /w/s.tiff]"}])
    );
}

#[test]
fn media_over_a_provider_limit_become_notes_naming_the_file() {
    // 6 MB of base64: over Anthropic's 5 MB per image, under OpenAI's and Gemini's limits.
    let big = "A".repeat(6_000_000);
    let r =
        ToolResult::ok("shot").with_image(Image::new("image/png", big).with_path("/work/big.png"));
    let call = ToolCall::new("c", "shot", tool_core::ToolArgs::Text("{}".into()));
    let a = render_result(
        &call,
        &r,
        Format::Anthropic { strict: false },
        Rendering::First,
    );
    let content = a[0]["content"].as_array().unwrap();
    assert_eq!(content.len(), 1, "no image block");
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.starts_with("shot\n\n[not shown: image 1 (image/png, 6.0 MB (6000000 bytes) of base64): it is over Anthropic's limit of 5 MB (5242880 bytes) of base64 for one item (Anthropic docs"), "{text}");
    assert!(
        text.contains("ask the tool for a smaller one; the file is at"),
        "{text}"
    );
    assert!(text.ends_with("the file is at /work/big.png]"), "{text}");
    let o = render_result(
        &call,
        &r,
        Format::OpenAiResponses { strict: false },
        Rendering::First,
    );
    assert_eq!(o[0]["output"][1]["type"], "input_image", "OpenAI takes it");

    // Gemini: 20 MB per request, shared by the turn's results.
    let half = "A".repeat(11_000_000);
    let r = ToolResult::ok("x").with_image(Image::new("image/png", half));
    let g = Format::Gemini {
        recursion: Default::default(),
    };
    let both = render_results(&[(&call, &r), (&call, &r)], g, Rendering::First);
    assert!(both[0]["functionResponse"]["parts"].is_array());
    assert!(both[1]["functionResponse"].get("parts").is_none());
    let output = both[1]["functionResponse"]["response"]["output"]
        .as_str()
        .unwrap();
    assert!(
        output.contains("would pass Gemini's limit of 20 MB for one request"),
        "{output}"
    );
    assert!(output.contains("it was not saved to a file"), "{output}");
}
