//! `tool-mcp-fixture`: an MCP server of `#[tool]` fixture tools, for the
//! integration tests, the conformance suite and the benchmark.
//!
//! Beside its tools it serves the conformance suite's prompts
//! (`test_simple_prompt`, `test_prompt_with_arguments`, ...) and resources
//! (`test://static-text`, `test://template/{id}/data`, ...), declared with
//! `#[prompt]` and `#[resource]`; `test://watched-resource` is announced as
//! updated every time `touch_watched` is called.
//!
//! `tool-mcp-fixture [--http ADDR] [--page-size N] [--extra N] [--files]`:
//! stdio by default; `--extra N` adds N filler tools (pagination tests);
//! `--files` offers `fixture_write_file` and `fixture_read_file`, which use
//! any path with no check of their own (the sandbox tests: only the
//! sandbox the server runs in stops them).

#![allow(
    deprecated,
    reason = "the 2025-11-25 conformance scenarios test sampling and logging, deprecated from 2026-07-28 (SEP-2577)"
)]

use std::process::ExitCode;
use std::time::Duration;

use serde_json::{Value, json};
use tool_core::{Attachment, Image, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec, tool};
use tool_mcp::client_request::{self, LogLevel};
use tool_mcp::input::{self, InputKind, InputRequest, InputResponse};
use tool_mcp::rmcp::model::{
    CreateMessageRequestParams, ElicitRequestParams, ElicitationSchema, LoggingLevel,
    LoggingMessageNotificationParam, PromptMessage, Role,
};
use tool_mcp::rmcp::{Peer, RoleServer};
use tool_mcp::{Catalog, Completer, LiveRegistry, McpServer, Prompt, prompt, resource};

/// A 1x1 red PNG.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

/// A WAV file of eight silent 16-bit samples at 8 kHz.
const WAV: &str =
    "UklGRjQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YRAAAAAAAAAAAAAAAAAAAAAAAAAA";

/// The MCP client of the call in progress (the server puts it in every call's context).
fn client(context: &ToolContext) -> Result<Peer<RoleServer>, String> {
    context
        .state::<Peer<RoleServer>>()
        .map(|peer| Peer::clone(&peer))
        .ok_or_else(|| "not called over MCP".to_owned())
}

/// Asks the client to fill in a form described by `request` (JSON `elicitation/create` params).
async fn elicit(context: &ToolContext, request: Value) -> Result<String, String> {
    let params: ElicitRequestParams = serde_json::from_value(request).map_err(|e| e.to_string())?;
    let answer = client(context)?
        .create_elicitation(params)
        .await
        .map_err(|e| e.to_string())?;
    let content = answer.content.unwrap_or(Value::Null);
    Ok(format!(
        "Elicitation completed: action={}, content={content}",
        serde_json::to_value(answer.action).unwrap_or_default()
    ))
}

/// Echo the text back.
///
/// # Arguments
/// * `text` - What to echo.
// An async body runs on the server's own runtime, as the Python reference's
// `def echo` runs on its event loop: the round-trip benchmark compares like with
// like (a sync `#[tool]` body would add a trip to the blocking pool).
#[tool(read_only, idempotent)]
async fn echo(text: String) -> String {
    text
}

/// Writes `text` to the file at `path` (created or replaced), with no
/// check of its own; offered with `--files` only.
///
/// * `path` - Any path.
/// * `text` - The file's new content.
#[tool]
fn fixture_write_file(path: String, text: String) -> Result<String, String> {
    std::fs::write(&path, text).map_err(|e| format!("{path}: {e}"))?;
    Ok(format!("wrote {path}"))
}

/// Reads the file at `path` as text, with no check of its own; offered
/// with `--files` only.
///
/// * `path` - Any path.
#[tool(read_only)]
fn fixture_read_file(path: String) -> Result<String, String> {
    std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))
}

/// The tools offered with `--files` only.
const FILE_TOOLS: [&str; 2] = ["fixture_write_file", "fixture_read_file"];

/// Tests simple text content response.
#[tool(read_only)]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Tests image content response.
#[tool(read_only)]
fn test_image_content() -> ToolResult {
    ToolResult::ok("").with_image(Image::new("image/png", PNG))
}

/// Tests audio content response.
#[tool(read_only)]
fn test_audio_content() -> ToolResult {
    ToolResult::ok("").with_attachment(Attachment::inline("test.wav", "audio/wav", WAV))
}

/// The embedded resource of the conformance suite's resource tools.
fn embedded_resource() -> Attachment {
    // "This is an embedded resource content." in base64.
    Attachment::inline(
        "test://embedded-resource",
        "text/plain",
        "VGhpcyBpcyBhbiBlbWJlZGRlZCByZXNvdXJjZSBjb250ZW50Lg==",
    )
}

/// Tests embedded resource content response.
#[tool(read_only)]
fn test_embedded_resource() -> ToolResult {
    ToolResult::ok("").with_attachment(embedded_resource())
}

/// Tests response with multiple content types (text, image, resource).
#[tool(read_only)]
fn test_multiple_content_types() -> ToolResult {
    ToolResult::ok("Multiple content types test:")
        .with_image(Image::new("image/png", PNG))
        .with_attachment(embedded_resource())
}

/// Tests tool that sends log messages during execution.
#[tool]
async fn test_tool_with_logging(context: &ToolContext) -> Result<String, String> {
    let peer = client(context)?;
    for (i, message) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let param = LoggingMessageNotificationParam::new(LoggingLevel::Info, json!(message));
        peer.notify_logging_message(param)
            .await
            .map_err(|e| e.to_string())?;
    }
    Ok("Tool with logging executed successfully".to_owned())
}

/// Tests server-initiated sampling (LLM completion request).
///
/// # Arguments
/// * `prompt` - The prompt to send to the LLM.
#[tool]
async fn test_sampling(context: &ToolContext, prompt: String) -> Result<String, String> {
    let params: CreateMessageRequestParams = serde_json::from_value(json!({
        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
        "maxTokens": 100
    }))
    .map_err(|e| e.to_string())?;
    let answer = client(context)?
        .create_message(params)
        .await
        .map_err(|e| e.to_string())?;
    let text = serde_json::to_value(&answer.message.content).unwrap_or_default();
    Ok(format!("LLM response: {text}"))
}

/// Tests server-initiated elicitation (user input request).
///
/// # Arguments
/// * `message` - The message to show the user.
#[tool]
async fn test_elicitation(context: &ToolContext, message: String) -> Result<String, String> {
    elicit(
        context,
        json!({
            "mode": "form",
            "message": message,
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"}
                },
                "required": ["username", "email"]
            }
        }),
    )
    .await
}

/// Tests elicitation with default values for every primitive type (SEP-1034).
#[tool]
async fn test_elicitation_sep1034_defaults(context: &ToolContext) -> Result<String, String> {
    elicit(
        context,
        json!({
            "mode": "form",
            "message": "Please review and update the form fields with defaults",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "description": "User name", "default": "John Doe"},
                    "age": {"type": "integer", "description": "User age", "default": 30},
                    "score": {"type": "number", "description": "User score", "default": 95.5},
                    "status": {
                        "type": "string",
                        "description": "User status",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active"
                    },
                    "verified": {"type": "boolean", "description": "Verification status", "default": true}
                },
                "required": []
            }
        }),
    )
    .await
}

/// Tests elicitation with the five enum schema variants (SEP-1330).
#[tool]
async fn test_elicitation_sep1330_enums(context: &ToolContext) -> Result<String, String> {
    elicit(
        context,
        json!({
            "mode": "form",
            "message": "Please select options from the enum fields",
            "requestedSchema": {
                "type": "object",
                "properties": {
                    "untitledSingle": {
                        "type": "string",
                        "description": "Select one option",
                        "enum": ["option1", "option2", "option3"]
                    },
                    "titledSingle": {
                        "type": "string",
                        "description": "Select one option with titles",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"}
                        ]
                    },
                    "legacyEnum": {
                        "type": "string",
                        "description": "Select one option (legacy)",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"]
                    },
                    "untitledMulti": {
                        "type": "array",
                        "description": "Select multiple options",
                        "minItems": 1,
                        "maxItems": 3,
                        "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
                    },
                    "titledMulti": {
                        "type": "array",
                        "description": "Select multiple options with titles",
                        "minItems": 1,
                        "maxItems": 3,
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"}
                            ]
                        }
                    }
                },
                "required": []
            }
        }),
    )
    .await
}

/// Tests error response handling.
#[tool]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Tests tool that reports progress notifications.
#[tool]
async fn test_tool_with_progress(context: &ToolContext) -> String {
    for step in [0.0, 50.0, 100.0] {
        context.report_progress(step, Some(100.0), Some("working"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    "progress done".to_owned()
}

/// Reports progress `count` times (at most 100) with no pause and answers at
/// once: the last report leaves right before the result (issue 26).
///
/// # Arguments
/// * `count` - How many reports.
#[tool]
fn progress_burst(context: &ToolContext, count: u32) -> String {
    for step in 1..=count.min(100) {
        context.report_progress(f64::from(step), Some(f64::from(count)), None);
    }
    format!("{} reports", count.min(100))
}

/// Sleep until cancelled or for the given milliseconds; reports whether it was cancelled.
///
/// # Arguments
/// * `millis` - How long to sleep.
#[tool]
async fn slow(context: &ToolContext, millis: u64) -> String {
    let token = context.cancellation_token().clone();
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(millis)) => "slept".to_owned(),
        () = token.cancelled() => {
            eprintln!("fixture: slow was cancelled");
            "cancelled".to_owned()
        }
    }
}

/// Greet someone (the tasks scenarios' sync-only tool).
///
/// # Arguments
/// * `name` - Who to greet.
#[tool(read_only)]
fn greet(name: String) -> String {
    format!("Hello, {name}!")
}

/// Compute for `seconds` seconds, then answer (a task-supporting tool: a
/// client with the tasks extension gets a task). Stops when cancelled.
///
/// # Arguments
/// * `seconds` - How long to compute (0: at once).
/// * `label` - A label echoed in the result.
#[tool(task_support = "optional")]
async fn slow_compute(
    context: &ToolContext,
    seconds: u64,
    #[arg(default)] label: String,
) -> Result<String, String> {
    let token = context.cancellation_token().clone();
    tokio::select! {
        () = tokio::time::sleep(Duration::from_secs(seconds.min(3600))) => {
            Ok(format!("Computed for {seconds} s ({label})"))
        }
        () = token.cancelled() => {
            eprintln!("fixture: slow_compute was cancelled");
            Err("cancelled".to_owned())
        }
    }
}

/// Fail after about a second with a tool error (task support required).
#[tool(task_support = "required")]
async fn failing_job() -> Result<String, String> {
    tokio::time::sleep(Duration::from_secs(1)).await;
    Err("failing_job always fails".to_owned())
}

/// Panic: a protocol-level failure of a task (task support required).
#[tool(task_support = "required")]
fn protocol_error_job() -> String {
    panic!("protocol_error_job panics on purpose")
}

/// Ask whether to delete `filename` (a form with a boolean `confirm`), then
/// answer what was decided; nothing is deleted (task support optional: as a
/// 2026-07-28 task it parks in `input_required` until tasks/update).
///
/// # Arguments
/// * `filename` - The file to (pretend to) delete.
#[tool(task_support = "optional")]
async fn confirm_delete(context: &ToolContext, filename: String) -> Result<String, String> {
    let schema = ElicitationSchema::builder()
        .required_bool("confirm")
        .build()
        .map_err(str::to_owned)?;
    let form = InputRequest::form(format!("Delete {filename}?"), schema);
    let answer = input::ask_one(context, "confirm_delete", form)
        .await
        .map_err(|e| e.to_string())?;
    Ok(match answer.form_field("confirm") {
        Some(Value::Bool(true)) => format!("Deleted {filename}"),
        _ => format!("Kept {filename}"),
    })
}

/// Ask two questions at once (keys `first` and `second`, each a form with
/// a string `name`), then answer both names (task support optional).
#[tool(task_support = "optional")]
async fn multi_input(context: &ToolContext) -> Result<String, String> {
    let first = one_field_form("First name?", "name")?;
    let second = one_field_form("Second name?", "name")?;
    let (a, b) = tokio::join!(
        input::ask_one(context, "first", first),
        input::ask_one(context, "second", second),
    );
    let (a, b) = (a.map_err(|e| e.to_string())?, b.map_err(|e| e.to_string())?);
    Ok(format!(
        "Got {} and {}",
        field_text(&a, "name"),
        field_text(&b, "name")
    ))
}

/// Ask the person's name (key `user_name`) before the task is created (the
/// fixture serves it with `with_input_before_task`), then greet them from
/// the task after a short wait (task support required).
#[tool(task_support = "required")]
async fn test_tool_with_task(context: &ToolContext) -> Result<String, String> {
    let form = one_field_form("What is your name?", "name")?;
    let answer = input::ask_one(context, "user_name", form)
        .await
        .map_err(|e| e.to_string())?;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(format!("Hello, {}!", field_text(&answer, "name")))
}

/// Log three messages at `info`, each only when the request asked for that
/// level (2026-07-28: `_meta["io.modelcontextprotocol/logLevel"]`).
#[tool]
async fn test_logging_tool(context: &ToolContext) -> String {
    let mut sent = 0;
    for message in [
        "Logging tool started",
        "Logging tool working",
        "Logging tool done",
    ] {
        if client_request::log(context, LogLevel::Info, json!(message)).await {
            sent += 1;
        }
    }
    format!("Logging tool finished ({sent} messages sent)")
}

/// Add a prompt to the served catalog (the conformance suite's prompts
/// `list_changed` trigger).
#[tool]
fn test_trigger_prompt_change(context: &ToolContext) -> Result<String, String> {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let catalog = context
        .state::<Catalog>()
        .ok_or_else(|| "no catalog".to_owned())?;
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let name = format!("added_prompt_{n}");
    catalog.add_prompt(Prompt::new(name.clone(), "An added prompt.", |_| async {
        serde_json::from_value::<Vec<PromptMessage>>(
            json!([{"role": "user", "content": {"type": "text", "text": "added"}}]),
        )
        .map_err(|e| e.to_string())
    }));
    Ok(format!("added {name}"))
}

/// Print to stdout (which must not reach the protocol stream), then answer.
#[tool]
fn noisy() -> String {
    println!("this line must not corrupt the protocol stream");
    "quiet on the wire".to_owned()
}

/// Add a tool named `added_<name>` to the served registry (a `list_changed` trigger).
///
/// # Arguments
/// * `name` - The new tool's name suffix.
#[tool]
fn add_tool(context: &ToolContext, name: String) -> Result<String, String> {
    register_added(context, &name)
}

/// Add a new tool to the served registry (the conformance suite's `list_changed` trigger).
#[tool]
fn test_trigger_tool_change(context: &ToolContext) -> Result<String, String> {
    static COUNT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = COUNT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    register_added(context, &format!("trigger_{n}"))
}

fn register_added(context: &ToolContext, name: &str) -> Result<String, String> {
    let live = context
        .state::<LiveRegistry>()
        .ok_or_else(|| "no live registry".to_owned())?;
    let spec = ToolSpec::new(
        format!("added_{name}"),
        "An added tool.",
        json!({"type": "object"}),
    );
    let tool = Tool::new(
        spec,
        |_args: serde_json::Map<String, serde_json::Value>, _ctx| async { ToolResult::ok("added") },
    )
    .map_err(|e| e.to_string())?;
    live.update(|r| r.register(tool))
        .map_err(|e| e.to_string())?;
    Ok("added".to_owned())
}

/// Exit the server process at once (a server-death trigger).
#[tool]
fn die() -> String {
    std::process::exit(3)
}

/// The conformance suite's `json_schema_2020_12_tool`: an input schema with
/// 2020-12 keywords a `#[tool]` signature cannot produce, as a runtime tool.
fn json_schema_2020_12_tool() -> Result<Tool, tool_core::RegistryError> {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    let spec = ToolSpec::new(
        "json_schema_2020_12_tool",
        "Tool with JSON Schema 2020-12 features",
        schema,
    );
    Tool::new(
        spec,
        |args: serde_json::Map<String, serde_json::Value>, _ctx| async move {
            ToolResult::ok(Value::Object(args).to_string())
        },
    )
}

// --- SEP-2322: tools that ask for input through their context -----------
// (tool_mcp::input: input-required results in 2026-07-28, server requests in
// 2025-11-25, the host's hooks outside MCP).

/// A form with one required string field `field`.
fn one_field_form(message: &str, field: &str) -> Result<InputRequest, String> {
    let schema = ElicitationSchema::builder()
        .required_string_property(field, |s| s)
        .build()
        .map_err(str::to_owned)?;
    Ok(InputRequest::form(message, schema))
}

/// A form with one required boolean field `ok`.
fn confirm_form(message: &str) -> Result<InputRequest, String> {
    let schema = ElicitationSchema::builder()
        .required_bool("ok")
        .build()
        .map_err(str::to_owned)?;
    Ok(InputRequest::form(message, schema))
}

/// A form answer's field as text (`?` when absent or not accepted).
fn field_text(answer: &InputResponse, field: &str) -> String {
    match answer.form_field(field) {
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
        None => "?".to_owned(),
    }
}

/// Asks the person's name (key `user_name`) and greets them.
#[tool]
async fn test_input_required_result_elicitation(context: &ToolContext) -> Result<String, String> {
    let form = one_field_form("What is your name?", "name")?;
    let answer = input::ask_one(context, "user_name", form)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("Hello, {}!", field_text(&answer, "name")))
}

/// Asks a model the capital of France (key `capital_question`).
#[tool]
async fn test_input_required_result_sampling(context: &ToolContext) -> Result<String, String> {
    let request = InputRequest::sampling_text("What is the capital of France?", 100);
    let answer = input::ask_one(context, "capital_question", request)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("The model said: {}", answer.text().unwrap_or("")))
}

/// Asks the client's roots (key `client_roots`) and lists them.
#[tool]
async fn test_input_required_result_list_roots(context: &ToolContext) -> Result<String, String> {
    let answer = input::ask_one(context, "client_roots", InputRequest::roots())
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("Roots: {}", answer.root_uris().join(", ")))
}

/// Asks for a confirmation whose answer comes back with the sealed state.
#[tool]
async fn test_input_required_result_request_state(context: &ToolContext) -> Result<String, String> {
    let answer = input::ask_one(context, "confirmation", confirm_form("Please confirm")?)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("state-ok: ok={}", field_text(&answer, "ok")))
}

/// Asks a name, a model's greeting and the roots in one round.
#[tool]
async fn test_input_required_result_multiple_inputs(
    context: &ToolContext,
) -> Result<String, String> {
    let requests = std::collections::BTreeMap::from([
        (
            "user_name".to_owned(),
            one_field_form("What is your name?", "name")?,
        ),
        (
            "greeting".to_owned(),
            InputRequest::sampling_text("Generate a greeting", 50),
        ),
        ("client_roots".to_owned(), InputRequest::roots()),
    ]);
    let answers = input::ask(context, requests)
        .await
        .map_err(|e| e.to_string())?;
    let text = |key: &str| answers.get(key);
    Ok(format!(
        "name={}, greeting={}, roots={}",
        text("user_name").map_or_else(|| "?".to_owned(), |a| field_text(a, "name")),
        text("greeting")
            .and_then(InputResponse::text)
            .unwrap_or("?"),
        text("client_roots")
            .map(InputResponse::root_uris)
            .unwrap_or_default()
            .join(", ")
    ))
}

/// Asks a name, then (a second round) a favourite colour.
#[tool]
async fn test_input_required_result_multi_round(context: &ToolContext) -> Result<String, String> {
    let form = one_field_form("Step 1: What is your name?", "name")?;
    let name = input::ask_one(context, "step1", form)
        .await
        .map_err(|e| e.to_string())?;
    let form = one_field_form("Step 2: What is your favorite color?", "color")?;
    let color = input::ask_one(context, "step2", form)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "{} likes {}",
        field_text(&name, "name"),
        field_text(&color, "color")
    ))
}

/// Asks for a confirmation; its sealed state refuses any change.
#[tool]
async fn test_input_required_result_tampered_state(
    context: &ToolContext,
) -> Result<String, String> {
    let answer = input::ask_one(context, "confirmation", confirm_form("Please confirm")?)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!("confirmed: ok={}", field_text(&answer, "ok")))
}

/// Asks only what the client declared it can answer: a name (elicitation)
/// and a model's answer (sampling).
#[tool]
async fn test_input_required_result_capabilities(context: &ToolContext) -> Result<String, String> {
    let mut requests = std::collections::BTreeMap::new();
    if input::can_ask(context, InputKind::Elicitation) {
        requests.insert(
            "user_name".to_owned(),
            one_field_form("What is your name?", "name")?,
        );
    }
    if input::can_ask(context, InputKind::Sampling) {
        requests.insert(
            "capital_question".to_owned(),
            InputRequest::sampling_text("What is the capital of France?", 100),
        );
    }
    if requests.is_empty() {
        return Ok("the client can answer neither elicitation nor sampling".to_owned());
    }
    let answers = input::ask(context, requests)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "answered: {}",
        answers.keys().cloned().collect::<Vec<_>>().join(", ")
    ))
}

/// The stateless suite's probe: asks a name (an input-required result in
/// 2026-07-28, never a request of its own on the response stream).
#[tool]
async fn test_streaming_elicitation(context: &ToolContext) -> Result<String, String> {
    let answer = input::ask_one(
        context,
        "user_name",
        one_field_form("What is your name?", "name")?,
    )
    .await
    .map_err(|e| e.to_string())?;
    Ok(format!("Hello, {}!", field_text(&answer, "name")))
}

/// The stateless suite's probe: cannot run without sampling (`-32021` when
/// the client did not declare it).
#[tool]
async fn test_missing_capability(context: &ToolContext) -> Result<String, String> {
    input::require(context, InputKind::Sampling)
        .await
        .map_err(|e| e.to_string())?;
    let answer = input::ask_one(
        context,
        "answer",
        InputRequest::sampling_text("Say yes", 10),
    )
    .await
    .map_err(|e| e.to_string())?;
    Ok(format!("The model said: {}", answer.text().unwrap_or("")))
}

/// SEP-2243: a tool whose `region` parameter travels in the
/// `Mcp-Param-Region` header too (declared with `tool_mcp::with_mcp_header`).
fn header_param_tool() -> Result<Tool, String> {
    let spec = ToolSpec::new(
        "test_header_param",
        "Echoes its region, which clients also send as the Mcp-Param-Region header",
        json!({
            "type": "object",
            "properties": {"region": {"type": "string", "description": "Where to run."}},
            "required": ["region"]
        }),
    );
    let spec = tool_mcp::with_mcp_header(spec, "region", "Region").map_err(|e| e.to_string())?;
    Tool::new(
        spec,
        |args: serde_json::Map<String, serde_json::Value>, _ctx| async move {
            let region = args.get("region").and_then(Value::as_str).unwrap_or("");
            ToolResult::ok(format!("region: {region}"))
        },
    )
    .map_err(|e| e.to_string())
}

/// A static text resource.
#[resource("test://static-text", mime_type = "text/plain")]
fn static_text() -> String {
    "This is the content of the static text resource.".to_owned()
}

/// A static binary resource (a 1x1 PNG).
#[resource("test://static-binary", mime_type = "image/png")]
fn static_binary() -> Result<Vec<u8>, String> {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD
        .decode(PNG)
        .map_err(|e| e.to_string())
}

/// Data for one id, from a URI template.
#[resource("test://template/{id}/data", mime_type = "application/json")]
fn template_data(id: String) -> String {
    json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")}).to_string()
}

/// A resource whose updates subscribers hear of (`touch_watched`).
#[resource("test://watched-resource", mime_type = "text/plain")]
fn watched_resource() -> String {
    "watched".to_owned()
}

/// The resource the embedded-resource prompt points at.
#[resource("test://example-resource", mime_type = "text/plain")]
fn example_resource() -> String {
    "This is an example resource.".to_owned()
}

/// A simple prompt without arguments.
#[prompt(title = "Simple prompt")]
fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".to_owned()
}

/// A prompt with required arguments.
///
/// # Arguments
/// * `arg1` - First test argument.
/// * `arg2` - Second test argument.
#[prompt]
fn test_prompt_with_arguments(arg1: String, arg2: String) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that embeds a resource.
///
/// # Arguments
/// * `resourceUri` - URI of the resource to embed.
#[prompt]
#[allow(
    non_snake_case,
    reason = "the conformance suite names the argument `resourceUri`"
)]
fn test_prompt_with_embedded_resource(resourceUri: String) -> Result<Vec<PromptMessage>, String> {
    let messages = json!([
        {"role": "user", "content": {"type": "resource", "resource": {
            "uri": resourceUri, "mimeType": "text/plain", "text": "Embedded resource content for testing."
        }}},
        {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
    ]);
    serde_json::from_value(messages).map_err(|e| e.to_string())
}

/// A prompt with an image.
#[prompt]
async fn test_prompt_with_image() -> Result<Vec<PromptMessage>, String> {
    let messages = json!([
        {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
        {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
    ]);
    serde_json::from_value(messages).map_err(|e| e.to_string())
}

/// Announce that `test://watched-resource` changed (its subscribers get
/// `notifications/resources/updated`).
#[tool]
fn touch_watched(context: &ToolContext) -> Result<String, String> {
    let catalog = context
        .state::<Catalog>()
        .ok_or_else(|| "no catalog".to_owned())?;
    catalog.notify_updated("test://watched-resource");
    Ok("touched".to_owned())
}

/// The catalog: the declared prompts and resources, with completions for
/// `test_prompt_with_arguments` and `test://template/{id}/data`.
fn catalog() -> Result<Catalog, String> {
    let catalog = Catalog::declared()?;
    if let Some(p) = catalog.prompt("test_prompt_with_arguments") {
        catalog.add_prompt(p.with_completion(
            "arg1",
            Completer::from_values(["paris", "park", "party", "test", "testing"]),
        ));
    }
    catalog.add_prompt(Prompt::with_context(
        "test_input_required_result_prompt",
        "A prompt that asks the client what context to use (SEP-2322)",
        |_args, ctx: ToolContext| async move {
            let form = one_field_form("What context should the prompt use?", "context")?;
            let answer = input::ask_one(&ctx, "user_context", form)
                .await
                .map_err(|e| e.to_string())?;
            let text = format!("Use this context: {}", field_text(&answer, "context"));
            Ok::<_, String>(vec![PromptMessage::new_text(Role::User, text)])
        },
    ));
    Ok(catalog)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut http = None;
    let mut page_size = tool_mcp::DEFAULT_PAGE_SIZE;
    let mut extra = 0usize;
    let mut files = false;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => http = args.next().and_then(|a| a.parse().ok()),
            "--page-size" => {
                page_size = args
                    .next()
                    .and_then(|a| a.parse().ok())
                    .unwrap_or(page_size);
            }
            "--extra" => extra = args.next().and_then(|a| a.parse().ok()).unwrap_or(0),
            "--files" => files = true,
            other => {
                eprintln!("tool-mcp-fixture: unknown argument {other}");
                return ExitCode::from(2);
            }
        }
    }
    let mut registry = ToolRegistry::global().clone();
    if !files {
        for name in FILE_TOOLS {
            registry.remove(name);
        }
    }
    if let Ok(tool) = json_schema_2020_12_tool() {
        let _ = registry.register(tool);
    }
    match header_param_tool() {
        Ok(tool) => {
            let _ = registry.register(tool);
        }
        Err(e) => eprintln!("tool-mcp-fixture: test_header_param left out: {e}"),
    }
    for i in 0..extra {
        let spec = ToolSpec::new(
            format!("filler_{i:03}"),
            "A filler tool.",
            json!({"type": "object"}),
        );
        if let Ok(tool) = Tool::new(
            spec,
            |_args: serde_json::Map<String, serde_json::Value>, _ctx| async {
                ToolResult::ok("filler")
            },
        ) {
            let _ = registry.register(tool);
        }
    }
    let live = LiveRegistry::new(registry);
    let catalog = match catalog() {
        Ok(catalog) => catalog,
        Err(e) => {
            eprintln!("tool-mcp-fixture: {e}");
            return ExitCode::FAILURE;
        }
    };
    let server = McpServer::new(live.clone())
        .with_context(
            ToolContext::new()
                .with_state(live)
                .with_state(catalog.clone()),
        )
        .with_catalog(catalog)
        .with_page_size(page_size)
        .with_input_before_task(["test_tool_with_task"])
        .with_server_info("tool-mcp-fixture", env!("CARGO_PKG_VERSION"));
    // Stdio serves one client: one thread (`tool serve` does the same);
    // HTTP may serve many at once.
    let runtime = if http.is_some() {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    };
    let Ok(runtime) = runtime else {
        return ExitCode::FAILURE;
    };
    let outcome = runtime.block_on(async move {
        match http {
            Some(addr) => {
                let stop = tokio_util::sync::CancellationToken::new();
                let (bound, task) = server.serve_http(addr, stop).await?;
                eprintln!("tool-mcp-fixture: listening on http://{bound}/mcp");
                let _ = task.await;
                Ok(())
            }
            None => server.serve_stdio().await,
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tool-mcp-fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
