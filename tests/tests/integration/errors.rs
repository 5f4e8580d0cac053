//! Argument errors: model-readable, naming the parameter, the expected type and what was sent.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use serde_json::json;
use tool_core::{ErrorKind, ToolContext, ToolRegistry, tool};

/// Resize an image.
#[tool]
async fn err_resize(
    path: String,
    width: u32,
    height: Option<u32>,
    keep: Option<Vec<String>>,
) -> String {
    format!("{path} {width} {height:?} {keep:?}")
}

/// A user id (an alias: its JSON Schema is an integer's).
type UserId = u64;

/// How to sort.
#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Order {
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
}

/// Look up a user.
#[tool]
fn err_user(user: UserId, order: Option<Order>) -> String {
    format!("{user} {}", matches!(order, Some(Order::Asc)))
}

/// Takes nothing.
#[tool]
fn err_nothing() -> &'static str {
    "nothing"
}

async fn call(name: &str, args: impl Into<tool_core::ToolArgs>) -> tool_core::ToolResult {
    ToolRegistry::global()
        .execute(name, args, &ToolContext::new())
        .await
}

fn message(r: tool_core::ToolResult, kind: ErrorKind) -> String {
    let e = r.error.expect("an error result");
    assert_eq!(e.kind, kind, "{}", e.message);
    e.message
}

#[tokio::test]
async fn wrong_type_names_parameter_type_and_value() {
    let m = message(
        call("err_resize", json!({"path": "a.png", "width": "wide"})).await,
        ErrorKind::InvalidArguments,
    );
    assert!(m.contains("parameter `width`"), "{m}");
    assert!(m.contains("expected an integer, but"), "{m}");
    assert!(m.contains("a string \"wide\""), "{m}");
}

/// The expected type comes from the parameter's JSON Schema, not the Rust
/// type's text: an alias is "an integer", an enum lists its values.
#[tokio::test]
async fn expected_type_comes_from_the_schema() {
    let m = message(
        call("err_user", json!({"user": "ana"})).await,
        ErrorKind::InvalidArguments,
    );
    assert!(
        m.contains("expected an integer, but received a string \"ana\""),
        "{m}"
    );
    let m = message(
        call("err_user", json!({})).await,
        ErrorKind::InvalidArguments,
    );
    assert!(m.contains("expected an integer."), "{m}");
    let m = message(
        call("err_user", json!({"user": 1, "order": "up"})).await,
        ErrorKind::InvalidArguments,
    );
    assert!(
        m.contains("expected one of \"asc\" or \"desc\", but"),
        "{m}"
    );
}

#[tokio::test]
async fn negative_for_unsigned_and_nested_items() {
    let m = message(
        call("err_resize", json!({"path": "a", "width": -3})).await,
        ErrorKind::InvalidArguments,
    );
    assert!(m.contains("`width`") && m.contains("-3"), "{m}");
    let m = message(
        call(
            "err_resize",
            json!({"path": "a", "width": 3, "keep": ["ok", 5]}),
        )
        .await,
        ErrorKind::InvalidArguments,
    );
    // The item refused, by its path, not the whole array.
    assert_eq!(
        m,
        "Invalid value for parameter `keep` of `err_resize`: expected a string at `keep[1]`, but received an integer 5."
    );
}

#[tokio::test]
async fn missing_required_parameter() {
    let m = message(
        call("err_resize", json!({"width": 3})).await,
        ErrorKind::InvalidArguments,
    );
    assert_eq!(
        m,
        "Missing required parameter `path` of `err_resize`: expected a string."
    );
}

#[tokio::test]
async fn missing_and_unknown_are_reported_together() {
    let m = message(
        call("err_resize", json!({"pth": "a.png", "width": 3})).await,
        ErrorKind::InvalidArguments,
    );
    assert_eq!(
        m,
        "Missing required parameter `path` of `err_resize`: expected a string. The arguments also contain the unknown parameter `pth`, which `err_resize` does not take."
    );
}

#[tokio::test]
async fn unknown_parameters_list_valid_ones() {
    let m = message(
        call(
            "err_resize",
            json!({"path": "a", "width": 1, "colour": "red"}),
        )
        .await,
        ErrorKind::InvalidArguments,
    );
    assert_eq!(
        m,
        "Unknown parameter `colour` is not accepted by `err_resize`. Valid parameters: `path`, `width`, `height`, `keep`."
    );
    let m = message(
        call("err_nothing", json!({"x": 1, "y": 2})).await,
        ErrorKind::InvalidArguments,
    );
    assert_eq!(
        m,
        "Unknown parameters `x`, `y` are not accepted by `err_nothing`. `err_nothing` takes no parameters."
    );
}

#[tokio::test]
async fn raw_text_that_is_not_json_or_not_an_object() {
    let m = message(
        call("err_resize", "{\"path\": ").await,
        ErrorKind::InvalidArguments,
    );
    assert!(
        m.starts_with("The arguments for `err_resize` are not valid JSON"),
        "{m}"
    );
    assert!(m.contains("Received: {\"path\": "), "{m}");
    let m = message(
        call("err_resize", json!([1, 2, 3, 4, 5])).await,
        ErrorKind::InvalidArguments,
    );
    assert_eq!(
        m,
        "The arguments for `err_resize` must be a JSON object such as {\"name\": value}; received an array [1,2,3,4,5]. `err_resize` takes 4 parameters (`path`, `width`, `height`, `keep`), so a list of 5 cannot be read by position."
    );
}

#[tokio::test]
async fn positional_arguments_are_read_in_declared_order() {
    // 002 #11: a list where the object was expected.
    let r = call("err_resize", json!(["a.png", 640, 480])).await;
    assert!(r.error.is_none(), "{:?}", r.error);
    assert_eq!(r.output, "a.png 640 Some(480) None");
    assert_eq!(
        r.notes,
        [
            "the arguments were a list and were read by position as `path`, `width`, `height`; send an object naming each parameter"
        ]
    );
    assert_eq!(
        r.metadata["argument_repairs"],
        json!([{"kind": "positional_arguments"}])
    );
    // Read by position, then checked like any arguments: the note says how it was read.
    let r = call("err_resize", json!([1, 2])).await;
    let e = r.error.as_ref().expect("path is a string");
    assert!(e.message.contains("parameter `path`"), "{}", e.message);
    assert!(
        r.notes[0].contains("by position as `path`, `width`"),
        "{:?}",
        r.notes
    );
}

#[tokio::test]
async fn long_values_are_cut_in_messages() {
    let long = "x".repeat(5000);
    let m = message(
        call("err_resize", json!({"path": "a", "width": long})).await,
        ErrorKind::InvalidArguments,
    );
    assert!(m.len() < 600, "message is {} bytes", m.len());
    assert!(m.contains("more bytes)"), "{m}");
}

#[tokio::test]
async fn unknown_tool_suggests_close_names() {
    let m = message(call("err_resize_", json!({})).await, ErrorKind::UnknownTool);
    assert!(m.contains("Did you mean `err_resize`"), "{m}");
    let m = message(
        call("zzzzzzzz-qqqq", json!({})).await,
        ErrorKind::UnknownTool,
    );
    assert!(!m.contains("Did you mean"), "{m}");
}

#[tokio::test]
async fn null_arguments_object_and_empty_object() {
    let r = call("err_nothing", json!({})).await;
    assert_eq!(r.output, "nothing");
    let m = message(
        call("err_nothing", json!(null)).await,
        ErrorKind::InvalidArguments,
    );
    assert!(m.contains("received null"), "{m}");
    // Raw text `null`: the kind once, not "null null".
    let m = message(
        call("err_nothing", "null").await,
        ErrorKind::InvalidArguments,
    );
    assert_eq!(
        m,
        "The arguments for `err_nothing` must be a JSON object such as {\"name\": value}; received null."
    );
}
