//! Black-box tests of `bash_registry` (moved from `shell/bash.rs`).

use std::time::Duration;

use tool_core::{ToolContext, ToolKind};

use tool_builtins::shell::config::*;

use serde_json::json;

use tool_builtins::fs::workspace::Workspace;

#[tokio::test]
async fn registered_with_a_timeout_above_the_largest_the_model_may_ask() {
    let registry = tool_builtins::registry();
    let tool = registry.get("bash_command").unwrap();
    let spec = tool.spec();
    assert_eq!(spec.kind, ToolKind::Exec);
    assert!(spec.timeout.unwrap() >= MAX_BASH_TIMEOUT + Duration::from_secs(5));
    assert_eq!(spec.parameters["required"], json!(["command"]));
    let props = spec.parameters["properties"].as_object().unwrap();
    let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(
        names,
        [
            "command",
            "description",
            "run_in_background",
            "timeout",
            "workdir"
        ]
    );
    assert!(spec.description.starts_with("Runs a shell command"));
}

#[tokio::test]
async fn runs_through_the_registry() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new().with_state(Workspace::new(dir.path()).unwrap());
    let registry = tool_builtins::registry();
    let r = registry
        .execute(
            "bash_command",
            json!({"command": "echo hello", "description": "print hello"}),
            &ctx,
        )
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "hello\n");
    assert_eq!(r.title.as_deref(), Some("print hello"));
    let r = registry
        .execute(
            "bash_command",
            json!({"command": "echo x", "timeout": -1}),
            &ctx,
        )
        .await;
    assert!(r.error.unwrap().message.contains("Invalid timeout value"));
}

#[tokio::test]
async fn the_registry_budget_never_cuts_the_output_again() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = ToolContext::new().with_state(Workspace::new(dir.path()).unwrap());
    let r = tool_builtins::registry()
        .execute(
            "bash_command",
            json!({"command": "seq 1 200000; exit 4"}),
            &ctx,
        )
        .await;
    assert_eq!(r.metadata["truncated"], true);
    assert_eq!(r.metadata["exit_code"], 4);
    assert_eq!(
        r.exit_code(),
        Some(4),
        "the typed exit code (001 Result.Exit)"
    );
    let path = r.metadata["output_path"].as_str().unwrap().to_owned();
    let full = std::fs::read_to_string(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(
        full.lines().count(),
        200_000,
        "the spill file holds the whole output"
    );
    assert!(r.output.starts_with("1\n2\n"));
    assert!(r.output.contains("\n200000\n"));
    // Exactly the exit-code note: the sandbox's first process still exiting
    // at the drain deadline is not a background process (it once added the
    // background-processes note under load).
    assert!(
        r.output
            .ends_with("\n<bash_metadata>\nCommand exited with code 4.\n</bash_metadata>"),
        "{}",
        &r.output[r.output.len().saturating_sub(400)..]
    );
    assert_eq!(r.metadata.get("stopped_background"), None);
}
