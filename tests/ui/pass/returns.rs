//! Every return shape: the types that convert themselves, `Serialize` types
//! (as JSON), and `Result`s of both, with and without a written error type;
//! an error that converts into `ToolError` keeps its kind, a `Display`-only
//! one is `failed`.
#![deny(warnings)]
#![allow(deprecated, reason = "parameters left undocumented on purpose: #[tool] warns of each")]

use std::borrow::Cow;
use std::fmt;

use serde::Serialize;
use serde_json::json;
use tool_core::{ErrorKind, ToolContext, ToolError, ToolRegistry, ToolResult, tool};

#[derive(Serialize)]
struct Report {
    n: u32,
}

#[derive(Debug)]
struct MyError;

impl fmt::Display for MyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("my error")
    }
}

/// An error with its own kind, through `From<KindError> for ToolError`.
#[derive(Debug)]
struct KindError;

impl fmt::Display for KindError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("display text, not used")
    }
}

impl From<KindError> for ToolError {
    fn from(_: KindError) -> Self {
        ToolError::new(ErrorKind::Denied, "refused by policy")
    }
}

/// A `Result` alias whose error type (`ToolError`) is not written at the use.
mod outcome {
    pub type Result<T> = std::result::Result<T, tool_core::ToolError>;
}

/// Returns a ToolResult.
#[tool]
fn r_tool_result() -> ToolResult {
    ToolResult::ok("full").with_title("T")
}

/// Returns a String.
#[tool]
fn r_string() -> String {
    "string".into()
}

/// Returns a static str.
#[tool]
fn r_str() -> &'static str {
    "str"
}

/// Returns a Cow.
#[tool]
async fn r_cow() -> Cow<'static, str> {
    Cow::Borrowed("cow")
}

/// Returns unit, written out.
#[tool]
#[allow(clippy::unused_unit)]
fn r_unit() -> () {}

/// Returns nothing.
#[tool]
async fn r_nothing() {}

/// Returns a struct, as JSON.
#[tool]
fn r_struct() -> Report {
    Report { n: 7 }
}

/// Returns a list, as JSON.
#[tool]
async fn r_list() -> Vec<u32> {
    vec![1, 2]
}

/// Returns a Result of a String with a Display error.
#[tool]
fn r_result_direct(fail: bool) -> Result<String, MyError> {
    if fail { Err(MyError) } else { Ok("fine".into()) }
}

/// Returns a Result of a struct with a String error.
#[tool]
async fn r_result_json(fail: bool) -> Result<Report, String> {
    if fail { Err("no report".into()) } else { Ok(Report { n: 1 }) }
}

/// Returns a Result alias whose error type is not written.
#[tool]
fn r_result_alias(fail: bool) -> std::io::Result<()> {
    if fail { Err(std::io::Error::other("disk on fire")) } else { Ok(()) }
}

/// Returns a Result of a ToolResult.
#[tool]
fn r_result_tool_result() -> Result<ToolResult, MyError> {
    Ok(ToolResult::ok("inner"))
}

/// Returns a Result whose error is a ToolError: the kind is kept.
#[tool]
fn r_result_tool_error(fail: bool) -> Result<ToolResult, ToolError> {
    if fail {
        return Err(ToolError::new(ErrorKind::InvalidArguments, "bad `fail`"));
    }
    Ok(ToolResult::ok("kept"))
}

/// Returns a Result whose error converts into ToolError (and is Display): the kind is kept.
#[tool]
async fn r_result_kind_error() -> Result<String, KindError> {
    Err(KindError)
}

/// Returns an alias of a Result with a ToolError, error type not written: the kind is kept.
#[tool]
fn r_result_alias_kind() -> outcome::Result<Report> {
    Err(ToolError::new(ErrorKind::MissingContext, "no workspace"))
}

/// Returns a boxed error (Display only): `failed`.
#[tool]
fn r_result_boxed() -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    Err("boxed".into())
}

async fn run(name: &str, args: serde_json::Value) -> ToolResult {
    ToolRegistry::global().execute(name, args, &ToolContext::new()).await
}

#[tokio::main]
async fn main() {
    let r = run("r_tool_result", json!({})).await;
    assert_eq!((r.output.as_str(), r.title.as_deref()), ("full", Some("T")));
    assert_eq!(run("r_string", json!({})).await.output, "string");
    assert_eq!(run("r_str", json!({})).await.output, "str");
    assert_eq!(run("r_cow", json!({})).await.output, "cow");
    for unit in ["r_unit", "r_nothing"] {
        let r = run(unit, json!({})).await;
        assert!(r.is_ok() && r.output.is_empty(), "{unit}: {r:?}");
    }
    let r = run("r_struct", json!({})).await;
    assert_eq!(r.output, r#"{"n":7}"#);
    assert_eq!(r.metadata["structured"], json!({"n": 7}));
    assert_eq!(run("r_list", json!({})).await.output, "[1,2]");

    assert_eq!(run("r_result_direct", json!({"fail": false})).await.output, "fine");
    let r = run("r_result_direct", json!({"fail": true})).await;
    assert_eq!(r.error, Some(ToolError::new(ErrorKind::Failed, "my error")));
    assert_eq!(run("r_result_json", json!({"fail": false})).await.output, r#"{"n":1}"#);
    let r = run("r_result_json", json!({"fail": true})).await;
    assert_eq!(r.error.unwrap().message, "no report");
    assert!(run("r_result_alias", json!({"fail": false})).await.is_ok());
    let r = run("r_result_alias", json!({"fail": true})).await;
    assert_eq!(r.error, Some(ToolError::new(ErrorKind::Failed, "disk on fire")));
    assert_eq!(run("r_result_tool_result", json!({})).await.output, "inner");

    assert_eq!(run("r_result_tool_error", json!({"fail": false})).await.output, "kept");
    let r = run("r_result_tool_error", json!({"fail": true})).await;
    assert_eq!(r.error, Some(ToolError::new(ErrorKind::InvalidArguments, "bad `fail`")));
    let r = run("r_result_kind_error", json!({})).await;
    assert_eq!(r.error, Some(ToolError::new(ErrorKind::Denied, "refused by policy")));
    let r = run("r_result_alias_kind", json!({})).await;
    assert_eq!(r.error, Some(ToolError::new(ErrorKind::MissingContext, "no workspace")));
    let r = run("r_result_boxed", json!({})).await;
    assert_eq!(r.error, Some(ToolError::new(ErrorKind::Failed, "boxed")));
}
