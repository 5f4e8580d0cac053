//! The model is told when its input was changed: every argument repair and an
//! approver's edits end the rendered result with a `Note:` line, in every
//! provider's result message. And the number readings Gemini needs (whole
//! floats for integer parameters), numbers sent as strings, raw control
//! characters in argument text.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use std::collections::HashMap;

use serde_json::{Map, Value, json};
use tool_core::format::{Format, Recursion, ToolCall, render_result};
use tool_core::{
    ApprovalDecision, ApprovalRequest, ErrorKind, Rendering, ToolArgs, ToolContext, ToolRegistry,
    ToolResult, tool,
};

/// Read part of a file (echoes what it received).
#[tool(kind = "read", read_only)]
fn note_read(
    path: String,
    limit: Option<u32>,
    small: Option<i8>,
    big: Option<u64>,
    rows: Option<Vec<u16>>,
    counts: Option<HashMap<String, i32>>,
    flag: Option<bool>,
) -> String {
    let mut counts: Vec<_> = counts.unwrap_or_default().into_iter().collect();
    counts.sort();
    format!(
        "path={path} limit={limit:?} small={small:?} big={big:?} rows={rows:?} counts={counts:?} flag={flag:?}"
    )
}

/// Run a command (echoes its timeout).
#[tool]
fn note_run(command: String, timeout: Option<f64>) -> String {
    format!("ran {command} with timeout {timeout:?}")
}

/// Apply a patch (echoes it).
#[tool]
fn note_patch(patch: String) -> String {
    format!("applied {} lines", patch.lines().count())
}

/// Write a file; asks first.
#[tool(requires_confirmation, editable_params = ["content"], kind = "write")]
fn note_write(path: String, content: String) -> String {
    format!("wrote {} bytes to {path}", content.len())
}

/// Count words; structured output.
#[tool(read_only)]
fn note_count(words: Vec<String>, min: Option<u8>) -> Value {
    json!({"count": words.len(), "min": min})
}

fn registry() -> ToolRegistry {
    ToolRegistry::from_inventory().expect("the test tools register")
}

/// Every result rendering the model can get.
fn formats() -> [Format; 7] {
    [
        Format::Json,
        Format::OpenAiChat { strict: true },
        Format::OpenAiResponses { strict: false },
        Format::Anthropic { strict: false },
        Format::Gemini {
            recursion: Recursion::Refuse,
        },
        Format::GeminiJsonSchema,
        Format::Mcp,
    ]
}

/// The text the model reads in one rendered result, taken from where each
/// provider puts it.
fn model_text(format: Format, rendered: &[Value]) -> String {
    let first = &rendered[0];
    let text = match format {
        Format::Json => &first["content"],
        Format::OpenAiChat { .. } => &first["content"],
        Format::OpenAiResponses { .. } => &first["output"],
        Format::Anthropic { .. } => &first["content"][0]["text"],
        Format::Gemini { .. } | Format::GeminiJsonSchema => {
            let response = &first["functionResponse"]["response"];
            if response.get("error").is_some() {
                &response["error"]
            } else if response.get("notes").is_some() {
                &response["notes"]
            } else {
                &response["output"]
            }
        }
        Format::Mcp => &first["content"][0]["text"],
        _ => unreachable!("only the formats above are rendered"),
    };
    text.as_str()
        .unwrap_or_else(|| panic!("{format}: no text in {rendered:?}"))
        .to_owned()
}

/// Executes `args` as a provider call of `name` and checks that every
/// provider's rendering ends with `Note: <note>` (on the first and later turns).
async fn assert_noted(
    name: &str,
    args: impl Into<ToolArgs>,
    ctx: &ToolContext,
    note: &str,
) -> ToolResult {
    let registry = registry();
    let call = ToolCall::new("call_1", name, args.into());
    let result = registry.execute_call(&call, ctx).await;
    let line = format!("Note: {note}");
    assert!(
        result.notes.iter().any(|n| n == note),
        "{name}: notes {:?}, expected {note:?} (error {:?})",
        result.notes,
        result.error
    );
    for format in formats() {
        for rendering in [Rendering::First, Rendering::Later] {
            let rendered = render_result(&call, &result, format, rendering);
            let text = model_text(format, &rendered);
            assert!(
                text.lines().any(|l| l == line),
                "{format} ({rendering:?}): {text:?} lacks {line:?}"
            );
            assert!(
                text.ends_with(&result.notes_text().expect("notes")),
                "{format}: the notes end the text: {text:?}"
            );
        }
    }
    result
}

#[tokio::test]
async fn integer_given_as_string_is_noted_everywhere() {
    let ctx = ToolContext::new();
    let r = assert_noted(
        "note_read",
        json!({"path": "a.txt", "limit": "5"}),
        &ctx,
        "argument `limit` was given as the string \"5\" and read as the number 5",
    )
    .await;
    assert!(
        r.output.starts_with("path=a.txt limit=Some(5)"),
        "{}",
        r.output
    );
    assert_eq!(
        r.metadata["argument_repairs"],
        json!([{"kind": "integer_from_string", "parameter": "limit"}])
    );
    // Provider text too (OpenAI sends the arguments as a string).
    assert_noted(
        "note_read",
        r#"{"path": "a.txt", "small": "-7"}"#,
        &ctx,
        "argument `small` was given as the string \"-7\" and read as the number -7",
    )
    .await;
}

#[tokio::test]
async fn number_given_as_string_is_repaired_and_noted() {
    let ctx = ToolContext::new();
    // The issue's inputs: `bash_command {"timeout": "5"}` and `"2.5"`.
    for (sent, shown) in [
        ("5", "5"),
        ("2.5", "2.5"),
        ("-0.5", "-0.5"),
        ("1e2", "100.0"),
        ("0", "0"),
    ] {
        let r = assert_noted(
            "note_run",
            json!({"command": "ls", "timeout": sent}),
            &ctx,
            &format!("argument `timeout` was given as the string \"{sent}\" and read as the number {shown}"),
        )
        .await;
        let value: f64 = sent.parse().expect("a number");
        assert_eq!(r.output, format!("ran ls with timeout Some({value:?})"));
        assert_eq!(
            r.metadata["argument_repairs"][0]["kind"],
            "number_from_string"
        );
    }
    for bad in ["5s", " 5", "NaN", "five"] {
        let r = registry()
            .execute("note_run", json!({"command": "ls", "timeout": bad}), &ctx)
            .await;
        let e = r.error.expect("not a number");
        assert_eq!(e.kind, ErrorKind::InvalidArguments);
        assert!(
            e.message.contains("parameter `timeout`") && e.message.contains("a number"),
            "{}",
            e.message
        );
        assert!(r.notes.is_empty());
    }
}

#[tokio::test]
async fn other_repairs_are_noted_everywhere() {
    let ctx = ToolContext::new();
    assert_noted(
        "note_read",
        json!({"path": "a", "flag": "true"}),
        &ctx,
        "argument `flag` was given as the string \"true\" and read as the boolean true",
    )
    .await;
    let r = assert_noted(
        "note_read",
        json!({"path": "a", "rows": "[1, 2]"}),
        &ctx,
        "argument `rows` was given as a string holding JSON and read as the array it holds; send the array itself",
    )
    .await;
    assert!(r.output.contains("rows=Some([1, 2])"), "{}", r.output);
    assert_noted(
        "note_read",
        json!({"arguments": {"path": "a"}}),
        &ctx,
        "the arguments were wrapped in an object under `arguments`, and the parameters inside it were used; send them at the top level",
    )
    .await;
    assert_noted(
        "note_read",
        r#""{\"path\": \"a\"}""#,
        &ctx,
        "the arguments were a JSON string holding the arguments object and were read as that object; send the object itself",
    )
    .await;
    // Empty text: the call then fails for the missing `path`; the note still shows, after the error.
    let r = assert_noted(
        "note_read",
        "",
        &ctx,
        "the arguments were empty and were read as no arguments ({})",
    )
    .await;
    assert!(
        r.model_text()
            .starts_with("Error: Missing required parameter `path`")
    );
    // Structured output: Gemini carries the notes beside it.
    let r = assert_noted(
        "note_count",
        json!({"words": "[\"a\", \"b\"]"}),
        &ctx,
        "argument `words` was given as a string holding JSON and read as the array it holds; send the array itself",
    )
    .await;
    let call = ToolCall::new("c", "note_count", json!({}));
    let gemini = render_result(&call, &r, Format::GeminiJsonSchema, Rendering::First);
    assert_eq!(
        gemini[0]["functionResponse"]["response"]["output"],
        json!({"count": 2, "min": null})
    );
}

#[tokio::test]
async fn raw_control_characters_in_argument_text_are_escaped_and_noted() {
    let ctx = ToolContext::new();
    // The issue's input: a llama.cpp-served model wrote literal newlines and tabs inside the patch.
    let text = "{\"patch\": \"*** Begin Patch\n*** Update File: src/main.rs\n@@ fn main\n-\tprintln!(\\\"old\\\");\n+\tprintln!(\\\"new\\\");\n*** End Patch\"}";
    let r = assert_noted(
        "note_patch",
        text,
        &ctx,
        "the arguments held 7 raw control characters (newline, tab) inside JSON strings, which JSON allows only escaped (e.g. \\n); they were read as those characters",
    )
    .await;
    assert_eq!(r.output, "applied 6 lines");
    assert_eq!(
        r.metadata["argument_repairs"],
        json!([{"kind": "control_characters_escaped"}])
    );
    // Through `execute` too, and with other control characters.
    for (text, expected) in [
        ("{\"patch\": \"a\r\nb\"}", "applied 2 lines"),
        ("{\"patch\": \"one\u{b}two\"}", "applied 1 lines"),
        ("{\"patch\":\n\t\"x\ny\nz\"\n}", "applied 3 lines"),
    ] {
        let r = registry().execute("note_patch", text, &ctx).await;
        assert_eq!(r.output, expected, "{text:?}: {:?}", r.error);
        assert_eq!(r.notes.len(), 1, "{text:?}");
        assert!(r.model_text().contains("raw control character"), "{text:?}");
    }
    let e = registry()
        .execute("note_patch", "{\"patch\": \"unterminated\n", &ctx)
        .await
        .error
        .expect("still not JSON");
    assert!(e.message.contains("are not valid JSON"), "{}", e.message);
}

#[tokio::test]
async fn approver_edits_are_noted_everywhere() {
    let ctx = ToolContext::new().with_approver(|req: ApprovalRequest| async move {
        let mut a: Map<String, Value> = req.arguments;
        a.insert("content".into(), json!("reviewed text"));
        ApprovalDecision::ApproveWithEdits(a)
    });
    let r = assert_noted(
        "note_write",
        json!({"path": "a.txt", "content": "draft"}),
        &ctx,
        "the person approving this call edited it first (`content` set to \"reviewed text\"); it ran with the edited arguments",
    )
    .await;
    assert_eq!(r.output, "wrote 13 bytes to a.txt");
    assert_eq!(r.metadata["approved_with_edits"], json!(["content"]));

    // A repair and an edit: the repair's note first, each on its own line.
    let long = "x".repeat(100);
    let ctx = ToolContext::new().with_approver(move |req: ApprovalRequest| {
        let long = long.clone();
        async move {
            let mut a: Map<String, Value> = req.arguments;
            a.insert("content".into(), json!(long));
            ApprovalDecision::ApproveWithEdits(a)
        }
    });
    let r = registry()
        .execute(
            "note_write",
            json!({"arguments": {"path": "b", "content": "c"}}),
            &ctx,
        )
        .await;
    assert_eq!(r.notes.len(), 2, "{:?}", r.notes);
    assert!(r.notes[0].starts_with("the arguments were wrapped"));
    assert!(
        r.notes[1].contains(&format!("`content` set to \"{}…", "x".repeat(59))),
        "{}",
        r.notes[1]
    );
    // An unedited approval adds no note.
    let plain =
        ToolContext::new().with_approver(|_: ApprovalRequest| async { ApprovalDecision::Approve });
    let r = registry()
        .execute("note_write", json!({"path": "a", "content": "c"}), &plain)
        .await;
    assert!(
        r.notes.is_empty() && r.model_text() == "wrote 1 bytes to a",
        "{:?}",
        r.notes
    );
}

#[tokio::test]
async fn whole_floats_read_as_integers_without_a_note() {
    let ctx = ToolContext::new();
    let registry = registry();
    // The issue's input: Gemini's `read_file {"limit": 2.0}`.
    let r = registry
        .execute("note_read", json!({"path": "a", "limit": 2.0}), &ctx)
        .await;
    assert!(r.is_ok(), "{:?}", r.error);
    assert!(r.output.contains("limit=Some(2)"), "{}", r.output);
    assert!(r.notes.is_empty() && !r.metadata.contains_key("argument_repairs"));
    // Nested integers, the bounds of i8 and u64.
    let r = registry
        .execute(
            "note_read",
            json!({"path": "a", "rows": [1.0, 65535.0], "counts": {"a": -2.0, "b": 3.0}, "small": -128.0, "big": 9_223_372_036_854_775_808.0_f64}),
            &ctx,
        )
        .await;
    assert!(r.is_ok(), "{:?}", r.error);
    assert_eq!(
        r.output,
        "path=a limit=None small=Some(-128) big=Some(9223372036854775808) rows=Some([1, 65535]) counts=[(\"a\", -2), (\"b\", 3)] flag=None"
    );
    // A Gemini functionCall, parsed and executed.
    let payload =
        json!({"functionCall": {"name": "note_count", "args": {"words": ["a"], "min": 3.0}}});
    let calls = ToolCall::parse(
        Format::Gemini {
            recursion: Recursion::Refuse,
        },
        &payload,
    )
    .expect("parses");
    let r = registry.execute_call(&calls[0], &ctx).await;
    assert_eq!(r.metadata["structured"], json!({"count": 1, "min": 3}));
}

#[tokio::test]
async fn floats_that_are_no_integer_of_the_type_stay_errors_naming_the_parameter() {
    let ctx = ToolContext::new();
    let registry = registry();
    for (param, value) in [
        ("limit", json!(2.5)),
        ("limit", json!(-1.0)),
        ("limit", json!(4_294_967_296.0)),
        ("small", json!(128.0)),
        ("small", json!(-129.0)),
        ("big", json!(18_446_744_073_709_551_616.0_f64)),
        ("big", json!(1e20)),
        ("rows", json!([1.0, 1.5])),
        ("rows", json!([65536.0])),
        ("counts", json!({"a": 0.5})),
    ] {
        let mut args = json!({"path": "a"});
        args[param] = value.clone();
        let e = registry
            .execute("note_read", args, &ctx)
            .await
            .error
            .unwrap_or_else(|| panic!("{param} = {value} is refused"));
        assert_eq!(e.kind, ErrorKind::InvalidArguments);
        assert!(
            e.message.contains(&format!("parameter `{param}`")),
            "{param}={value}: {}",
            e.message
        );
    }
}
