//! Tools defined at run time, without the macro.

use serde_json::{Map, Value, json};
use tool_core::{
    ErrorKind, OnConflict, RegistryError, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec,
};

fn echo_tool(name: &str) -> Tool {
    let spec = ToolSpec::new(
        name,
        "Repeat the text.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    Tool::new(
        spec,
        |args: Map<String, Value>, ctx: ToolContext| async move {
            let text = args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            ToolResult::ok(format!("{}:{text}", ctx.uid().unwrap_or("-")))
        },
    )
    .unwrap()
}

#[tokio::test]
async fn runtime_tool_executes_with_context() {
    let mut registry = ToolRegistry::new();
    registry.register(echo_tool("echo")).unwrap();
    let ctx = ToolContext::new().with_uid("u7");
    let r = registry.execute("echo", json!({"text": "hi"}), &ctx).await;
    assert_eq!(r.output, "u7:hi");
    let r = registry.execute("echo", r#"{"text": "raw"}"#, &ctx).await;
    assert_eq!(r.output, "u7:raw");
    assert_eq!(
        registry.schemas()[0]["parameters"]["required"],
        json!(["text"])
    );
}

#[test]
fn invalid_specs_are_refused() {
    let bad_name = ToolSpec::new("has space", "d", json!({"type": "object"}));
    let err = Tool::new(bad_name, |_: Map<String, Value>, _: ToolContext| async {
        ToolResult::ok("")
    })
    .unwrap_err();
    assert_eq!(
        err,
        RegistryError::InvalidName {
            name: "has space".into()
        }
    );
    assert!(err.to_string().contains("^[a-zA-Z0-9_-]{1,64}$"));

    let long = "a".repeat(65);
    let spec = ToolSpec::new(long.clone(), "d", json!({"type": "object"}));
    assert!(
        Tool::new(spec, |_: Map<String, Value>, _: ToolContext| async {
            ToolResult::ok("")
        })
        .is_err()
    );

    let no_desc = ToolSpec::new("t", "  ", json!({"type": "object"}));
    let err = Tool::new(no_desc, |_: Map<String, Value>, _: ToolContext| async {
        ToolResult::ok("")
    })
    .unwrap_err();
    assert!(err.to_string().contains("description is empty"), "{err}");

    let not_object = ToolSpec::new("t", "d", json!({"type": "string"}));
    let err = Tool::new(not_object, |_: Map<String, Value>, _: ToolContext| async {
        ToolResult::ok("")
    })
    .unwrap_err();
    assert!(err.to_string().contains("\"type\": \"object\""), "{err}");
}

#[test]
fn collision_policies() {
    let mut r = ToolRegistry::new();
    r.register(echo_tool("echo")).unwrap();

    let err = r.register(echo_tool("echo")).unwrap_err();
    assert!(matches!(err, RegistryError::Duplicate { ref name, .. } if name == "echo"));
    assert!(err.to_string().contains("<runtime registration>"));

    assert_eq!(
        r.register_with(echo_tool("echo"), OnConflict::Skip)
            .unwrap(),
        None
    );
    assert_eq!(r.len(), 1);
    assert_eq!(
        r.register_with(echo_tool("echo"), OnConflict::Rename)
            .unwrap()
            .as_deref(),
        Some("echo_2")
    );
    assert_eq!(
        r.register_with(echo_tool("echo"), OnConflict::Rename)
            .unwrap()
            .as_deref(),
        Some("echo_3")
    );
    assert_eq!(r.names(), ["echo", "echo_2", "echo_3"]);
    assert_eq!(r.get("echo_3").unwrap().spec().name, "echo_3");

    let long = "x".repeat(64);
    r.register(echo_tool(&long)).unwrap();
    let renamed = r
        .register_with(echo_tool(&long), OnConflict::Rename)
        .unwrap()
        .unwrap();
    assert_eq!(renamed.len(), 64);
    assert!(renamed.ends_with("_2"));

    let mut replacement = ToolSpec::new("echo", "Another echo.", json!({"type": "object"}));
    replacement.flags.read_only = true;
    let tool = Tool::new(replacement, |_: Map<String, Value>, _: ToolContext| async {
        ToolResult::ok("new")
    })
    .unwrap();
    r.register_with(tool, OnConflict::Override).unwrap();
    assert_eq!(r.get("echo").unwrap().spec().description, "Another echo.");
}

#[test]
fn merge_reports_every_collision_and_adds_nothing() {
    let mut a = ToolRegistry::new();
    a.register(echo_tool("one")).unwrap();
    a.register(echo_tool("two")).unwrap();
    let mut b = ToolRegistry::new();
    b.register(echo_tool("one")).unwrap();
    b.register(echo_tool("two")).unwrap();
    b.register(echo_tool("three")).unwrap();
    let err = a.merge(&b, OnConflict::Error).unwrap_err();
    assert!(matches!(err, RegistryError::Many(ref v) if v.len() == 2));
    assert_eq!(a.len(), 2);
    a.merge(&b, OnConflict::Skip).unwrap();
    assert_eq!(a.names(), ["one", "three", "two"]);
}

#[tokio::test]
async fn handler_that_panics_before_returning_a_future_is_contained() {
    let spec = ToolSpec::new("eager", "Panics eagerly.", json!({"type": "object"}));
    fn eager(_: Map<String, Value>, _: ToolContext) -> std::future::Ready<ToolResult> {
        panic!("eager panic")
    }
    let mut r = ToolRegistry::new();
    r.register(Tool::new(spec, eager).unwrap()).unwrap();
    let out = r.execute("eager", json!({}), &ToolContext::new()).await;
    assert_eq!(out.error.unwrap().kind, ErrorKind::Panicked);
}
