//! The rig adapter, black-box: a rig `ToolSet` of the built-ins lists their
//! canonical schemas and runs our pipeline on real files.
#![cfg(feature = "rig")]

use rig_core::tool::{ToolContext as RigContext, ToolErrorKind};
use serde_json::{Value, json};
use tool_core::{
    ErrorKind, RegistryView, SecretStore, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec,
};

/// A workspace with `a.txt` and the built-ins' context for it.
fn workspace() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").expect("write a.txt");
    let ctx = tool_builtins::context(dir.path()).expect("context");
    (dir, ctx)
}

/// The model-visible text of a rig result: the output, or the error's feedback.
fn rig_text(result: &rig_core::tool::ToolResult) -> String {
    match result.error() {
        Some(e) => e.model_feedback().expect("text feedback").to_owned(),
        None => result.output().as_text().expect("text output").to_owned(),
    }
}

#[test]
fn tool_set_lists_the_canonical_schemas() {
    let registry = tool_builtins::registry();
    let expected = registry.schemas();
    let set = tool_adapters::rig::tool_set(tool_builtins::registry(), &ToolContext::new())
        .expect("tool set");
    let listed: Vec<Value> = set
        .tool_definitions()
        .into_iter()
        .map(|d| json!({"name": d.name.as_str(), "description": d.description, "parameters": d.parameters}))
        .collect();
    assert!(listed.len() > 10, "built-ins listed: {}", listed.len());
    assert_eq!(listed, expected);
    assert!(set.contains("read_file"));
}

#[tokio::test]
async fn read_file_through_rig_returns_the_numbered_text() {
    let (dir, ctx) = workspace();
    let set = tool_adapters::rig::tool_set(tool_builtins::registry(), &ctx).expect("tool set");
    let mut rig_ctx = RigContext::default();
    let result = set
        .execute("read_file", r#"{"file_path": "a.txt"}"#, &mut rig_ctx)
        .await;
    assert!(result.is_success(), "{result:?}");
    let text = rig_text(&result);
    let root = std::fs::canonicalize(dir.path()).expect("canonical");
    assert_eq!(
        text,
        format!(
            "<path>{}</path>\n<type>file</type>\n<content>\n1: alpha\n2: beta\n\n(End of file - total 2 lines)\n</content>",
            root.join("a.txt").display()
        )
    );
}

/// The same call through `execute` and through rig gives the same model text
/// and (for failures) the matching kind: the pipeline runs inside rig's call.
#[tokio::test]
async fn repairs_and_refusals_match_execute() {
    let cases = [
        // An unknown parameter beside the right one: refused, with did-you-mean.
        (
            json!({"file_path": "a.txt", "limt": 1}),
            Some(ErrorKind::InvalidArguments),
        ),
        // A wrong name for the required parameter.
        (json!({"path": "a.txt"}), Some(ErrorKind::InvalidArguments)),
        // "2" for an integer: repaired, with a note.
        (json!({"file_path": "a.txt", "offset": "2"}), None),
        // Double-encoded JSON: repaired.
        (json!(r#"{"file_path": "a.txt"}"#), None),
        // A file outside the workspace: the tool's own refusal.
        (
            json!({"file_path": "/etc/hostname"}),
            Some(ErrorKind::Denied),
        ),
        // A missing file: the tool's failure.
        (json!({"file_path": "missing.txt"}), Some(ErrorKind::Failed)),
    ];
    for (args, failure) in cases {
        let (_dir, ctx) = workspace();
        let direct = tool_builtins::registry()
            .execute("read_file", args.clone(), &ctx)
            .await;
        let (_dir2, ctx2) = workspace();
        let set = tool_adapters::rig::tool_set(tool_builtins::registry(), &ctx2).expect("tool set");
        let through_rig = set
            .execute("read_file", args.to_string(), &mut RigContext::default())
            .await;
        let direct_text = direct.model_text().replace(
            &std::fs::canonicalize(_dir.path())
                .expect("canonical")
                .display()
                .to_string(),
            "<root>",
        );
        let rig_model_text = rig_text(&through_rig).replace(
            &std::fs::canonicalize(_dir2.path())
                .expect("canonical")
                .display()
                .to_string(),
            "<root>",
        );
        assert_eq!(rig_model_text, direct_text, "{args}");
        assert_eq!(
            direct.error.as_ref().map(|e| e.kind),
            failure,
            "{args}: {direct_text}"
        );
        match failure {
            None => assert!(through_rig.is_success(), "{args}"),
            Some(ErrorKind::InvalidArguments) => {
                assert!(
                    through_rig.is_error_kind(ToolErrorKind::InvalidArgs),
                    "{args}"
                );
            }
            Some(ErrorKind::Denied) => assert!(through_rig.is_refused(), "{args}"),
            Some(_) => assert!(through_rig.is_error_kind(ToolErrorKind::Other), "{args}"),
        }
    }
}

#[tokio::test]
async fn unknown_parameter_text_names_the_parameter() {
    let (_dir, ctx) = workspace();
    let set = tool_adapters::rig::tool_set(tool_builtins::registry(), &ctx).expect("tool set");
    let result = set
        .execute(
            "read_file",
            r#"{"file_path": "a.txt", "limt": 1}"#,
            &mut RigContext::default(),
        )
        .await;
    let text = rig_text(&result);
    assert!(text.starts_with("Error: "), "{text}");
    assert!(text.contains("`limt`"), "{text}");
    assert!(text.contains("`limit`"), "did you mean: {text}");
}

/// A view: only its tools are listed, and the calls go through it.
#[tokio::test]
async fn a_view_lists_only_its_tools() {
    let (_dir, ctx) = workspace();
    let view = RegistryView::new(tool_builtins::registry()).allow(["read_file", "list_dir*"]);
    let set = tool_adapters::rig::tool_set(view.clone(), &ctx).expect("tool set");
    let names: Vec<&str> = set.names().collect();
    assert_eq!(
        names,
        view.names().iter().map(String::as_str).collect::<Vec<_>>()
    );
    assert!(names.contains(&"read_file"));
    assert!(!names.contains(&"write_file"));
    let result = set
        .execute(
            "read_file",
            r#"{"file_path": "a.txt"}"#,
            &mut RigContext::default(),
        )
        .await;
    assert!(rig_text(&result).contains("1: alpha"));
}

/// A host registry: one tool that needs confirmation, one that echoes.
fn host_registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    let delete = ToolSpec::new(
        "delete_all",
        "Deletes everything.",
        json!({"type": "object", "properties": {}}),
    )
    .requires_confirmation(&[]);
    let echo = ToolSpec::new(
        "echo",
        "Returns its text.",
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
    );
    let tools = [
        Tool::new(delete, |_args, _ctx| async { ToolResult::ok("deleted") }),
        Tool::new(
            echo,
            |args: serde_json::Map<String, Value>, _ctx| async move {
                ToolResult::ok(args["text"].as_str().unwrap_or_default().to_owned())
            },
        ),
    ];
    for tool in tools {
        registry.register(tool.expect("tool")).expect("register");
    }
    registry
}

/// A call to a tool needing confirmation, with no approver, is refused as
/// `execute` refuses it, and reaches rig as a refusal.
#[tokio::test]
async fn confirmation_without_approver_is_a_rig_refusal() {
    let ctx = ToolContext::new();
    let direct = host_registry().execute("delete_all", json!({}), &ctx).await;
    assert_eq!(
        direct.error.as_ref().map(|e| e.kind),
        Some(ErrorKind::Denied)
    );
    let set = tool_adapters::rig::tool_set(host_registry(), &ctx).expect("tool set");
    let result = set
        .execute("delete_all", "{}", &mut RigContext::default())
        .await;
    assert!(result.is_refused(), "{result:?}");
    assert_eq!(rig_text(&result), direct.model_text());
}

/// Secrets: a placeholder is substituted before the call and the value is
/// masked back in what rig gets.
#[tokio::test]
async fn secrets_are_substituted_and_masked() {
    let store = SecretStore::from_json(&json!({"api_key": "s3cr3t-value"})).expect("store");
    let ctx = ToolContext::new().with_secrets(store);
    let set = tool_adapters::rig::tool_set(host_registry(), &ctx).expect("tool set");
    let result = set
        .execute(
            "echo",
            r#"{"text": "key=<secret>api_key</secret>"}"#,
            &mut RigContext::default(),
        )
        .await;
    let text = rig_text(&result);
    assert_eq!(text, "key=<secret>api_key</secret>");
    assert!(!text.contains("s3cr3t-value"));
}
