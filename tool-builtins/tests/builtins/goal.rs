//! `goal` through the registry: the tree lives in the context's state store,
//! per trace; ids are positional; parallel writers never lose a goal.

use std::sync::Arc;

use serde_json::{Value, json};
use tool_builtins::goal::{goal_of, goals_of, mark_agent_call};
use tool_builtins::{GoalKind, GoalStatus};
use tool_core::state::{FileStore, StateStore};
use tool_core::{ToolContext, ToolRegistry, ToolResult};

fn setup(dir: &tempfile::TempDir, trace: &str) -> ToolContext {
    let store: Arc<dyn StateStore> = Arc::new(FileStore::new(dir.path().join("state")));
    tool_builtins::context(dir.path())
        .unwrap()
        .with_trace_id(trace)
        .with_state(store)
}

async fn call(r: &ToolRegistry, ctx: &ToolContext, args: Value) -> ToolResult {
    r.execute("goal", args, ctx).await
}

#[tokio::test]
async fn goals_are_added_nested_updated_and_listed_per_trace() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = setup(&dir, "t-goal");
    let r = tool_builtins::registry();
    let added = call(
        &r,
        &ctx,
        json!({"action": "add", "description": "Fix the CSV parser",
               "criteria": ["quoted commas parse", "the suite passes"]}),
    )
    .await;
    assert!(added.is_ok(), "{added:?}");
    assert_eq!(
        added.output,
        "Added goal 1.\nGoals (0 of 1 completed):\n[ ] 1 Fix the CSV parser\n    criteria: \
         quoted commas parse; the suite passes"
    );
    assert_eq!(added.metadata["goal_id"], "1");
    let child = call(
        &r,
        &ctx,
        json!({"action": "add", "description": "Write a failing test", "parent": "1"}),
    )
    .await;
    assert_eq!(child.metadata["goal_id"], "1.1", "{child:?}");
    let second = call(&r, &ctx, json!({"action": "add", "description": "Ship"})).await;
    assert_eq!(second.metadata["goal_id"], "2");
    let done = call(
        &r,
        &ctx,
        json!({"action": "update", "id": "1.1", "status": "completed", "summary": "tests/csv.rs:12 fails"}),
    )
    .await;
    assert!(done.is_ok(), "{done:?}");
    let list = call(&r, &ctx, json!({"action": "list"})).await;
    assert_eq!(
        list.output,
        "Goals (1 of 3 completed):\n[ ] 1 Fix the CSV parser\n    criteria: quoted commas \
         parse; the suite passes\n  [x] 1.1 Write a failing test\n      summary: tests/csv.rs:12 \
         fails\n[ ] 2 Ship"
    );
    assert_eq!(list.metadata["goals"][1]["status"], "completed");
    assert_eq!(list.metadata["goals"][1]["type"], "normal");
    let one = call(&r, &ctx, json!({"action": "list", "id": "2"})).await;
    assert_eq!(one.output, "Goals (0 of 1 completed):\n[ ] 2 Ship");

    // The library side reads the same tree.
    let g = goal_of(&ctx, "1").unwrap().unwrap();
    assert_eq!(
        g.brief(),
        "Fix the CSV parser\nCriteria:\n- quoted commas parse\n- the suite passes"
    );
    assert!(goal_of(&ctx, "7").unwrap().is_none());

    // Another trace starts with an empty tree.
    let other = setup(&dir, "t-other");
    let empty = call(&r, &other, json!({"action": "list"})).await;
    assert_eq!(empty.output, "The goal tree is empty.");
}

#[tokio::test]
async fn bad_goal_calls_are_refused_with_what_to_do_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = setup(&dir, "t-bad");
    let r = tool_builtins::registry();
    call(&r, &ctx, json!({"action": "add", "description": "One"})).await;
    let cases = [
        (json!({"action": "add"}), "`add` needs a `description`"),
        (
            json!({"action": "add", "description": "x", "parent": "4"}),
            "There is no goal `4` to add a sub-goal to",
        ),
        (
            json!({"action": "update", "id": "3", "status": "completed"}),
            "There is no goal `3` in this trace; its goals are 1",
        ),
        (
            json!({"action": "update", "id": "1"}),
            "`update` of goal `1` changes nothing",
        ),
        (
            json!({"action": "update", "id": "1.x", "status": "completed"}),
            "`1.x` is not a goal id",
        ),
        (
            json!({"action": "update", "id": "1.1.1.1.1.1.1", "status": "completed"}),
            "`1.1.1.1.1.1.1` is too deep to be a goal id: goals nest at most 6 deep.",
        ),
        (
            json!({"action": "add", "description": "x", "parent": "1.1.1.1.1.1.1"}),
            "`1.1.1.1.1.1.1` is too deep to be a goal id",
        ),
        (
            json!({"action": "add", "description": "x", "criteria": vec!["c"; 11]}),
            "`criteria` lists 11; at most 10",
        ),
        (
            json!({"action": "add", "description": "d".repeat(501)}),
            "`description` has 501 characters; at most 500",
        ),
    ];
    for (args, expected) in cases {
        let out = call(&r, &ctx, args.clone()).await;
        let message = &out.error.as_ref().expect("refused").message;
        assert!(message.contains(expected), "{args}: {message}");
    }
    let bad_status = call(
        &r,
        &ctx,
        json!({"action": "update", "id": "1", "status": "finished"}),
    )
    .await;
    assert!(bad_status.is_error(), "{bad_status:?}");
    let all = goals_of(&ctx).unwrap();
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].status, GoalStatus::Pending);
}

#[tokio::test]
async fn parallel_adds_take_distinct_ids_and_agent_calls_mark_their_goal() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = setup(&dir, "t-par");
    let r = Arc::new(tool_builtins::registry());
    let mut tasks = Vec::new();
    for n in 0..8 {
        let (r, ctx) = (Arc::clone(&r), ctx.clone());
        tasks.push(tokio::spawn(async move {
            call(
                &r,
                &ctx,
                json!({"action": "add", "description": format!("task {n}")}),
            )
            .await
        }));
    }
    let mut ids = Vec::new();
    for t in tasks {
        let out = t.await.unwrap();
        assert!(out.is_ok(), "{out:?}");
        ids.push(out.metadata["goal_id"].as_str().unwrap().to_owned());
    }
    ids.sort_by_key(|i| i.parse::<u32>().unwrap());
    assert_eq!(ids, ["1", "2", "3", "4", "5", "6", "7", "8"]);
    assert_eq!(goals_of(&ctx).unwrap().len(), 8);

    let marked = mark_agent_call(&ctx, "3", "explore", &["t-par@explore-1".into()]).unwrap();
    assert_eq!(marked.kind, GoalKind::AgentCall);
    assert_eq!(marked.status, GoalStatus::InProgress);
    let again = mark_agent_call(&ctx, "3", "delegate", &["t-par@delegate-2".into()]).unwrap();
    assert_eq!(again.sub_trace_ids, ["t-par@explore-1", "t-par@delegate-2"]);
    assert_eq!(again.agent_call_mode.as_deref(), Some("delegate"));
    let listed = call(&r, &ctx, json!({"action": "list", "id": "3"})).await;
    assert_eq!(
        listed.output,
        "Goals (0 of 1 completed):\n[>] 3 task 2 (agent call: delegate, 2 sub-traces)"
            .replace("task 2", &goal_of(&ctx, "3").unwrap().unwrap().description)
    );
    let err = mark_agent_call(&ctx, "9", "delegate", &[]).unwrap_err();
    assert!(err.message.contains("There is no goal `9`"), "{err}");
}
