//! `bash_command`'s command policy asks through the core approval gate: an
//! approver that panics is a failed approval (`denied`), not a crashed tool,
//! and nothing runs; an edit of anything but `command` is refused.

use serde_json::{Map, Value, json};
use tool_builtins::{BashConfig, CommandPolicy, PolicyAction, Workspace};
use tool_core::{ApprovalDecision, ApprovalRequest, ErrorKind, ToolContext, ToolRegistry};

fn context(dir: &std::path::Path) -> ToolContext {
    let policy = CommandPolicy::new(PolicyAction::Allow).ask("touch *");
    let config = BashConfig::default().with_policy(policy);
    ToolContext::new()
        .with_state(Workspace::new(dir).unwrap())
        .with_state(config)
}

async fn run(ctx: &ToolContext, args: Value) -> tool_core::ToolResult {
    let registry: ToolRegistry = tool_builtins::registry();
    registry.execute("bash_command", args, ctx).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panicking_approver_is_a_failed_approval() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).with_approver(|_request: ApprovalRequest| async move {
        panic!("the approval UI crashed");
    });
    let r = run(&ctx, json!({"command": "touch made"})).await;
    let e = r.error.expect("refused");
    assert_eq!(e.kind, ErrorKind::Denied, "{}", e.message);
    assert_eq!(
        e.message,
        "The approval of `bash_command` failed, so the call was not made."
    );
    assert!(!dir.path().join("made").exists());
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_command_may_be_edited() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = context(dir.path()).with_approver(|request: ApprovalRequest| async move {
        let mut edited: Map<String, Value> = request.arguments.clone();
        edited.insert("description".to_owned(), json!("something else"));
        ApprovalDecision::ApproveWithEdits(edited)
    });
    let r = run(
        &ctx,
        json!({"command": "touch made", "description": "make a file"}),
    )
    .await;
    let e = r.error.expect("refused");
    assert_eq!(e.kind, ErrorKind::Denied, "{}", e.message);
    assert!(
        e.message.contains("`description`, which is not editable"),
        "{}",
        e.message
    );
    assert!(!dir.path().join("made").exists());
}
