//! `todo_write` / `todo_read` through the registry: the host's hook sees
//! every change, the list lives in the context's state store.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tool_builtins::{TodoHook, TodoItem, TodoStatus};
use tool_core::state::{FileStore, StateStore};

/// One call of the hook: the trace id and the list.
type Seen = (Option<String>, Vec<TodoItem>);

#[tokio::test]
async fn the_host_hook_sees_each_new_list_and_the_store_keeps_it() {
    let dir = tempfile::tempdir().unwrap();
    let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
    let sink = Arc::clone(&seen);
    let store: Arc<dyn StateStore> = Arc::new(FileStore::new(dir.path().join("state")));
    let ctx = tool_builtins::context(dir.path())
        .unwrap()
        .with_trace_id("t-hook")
        .with_state(store)
        .with_state(TodoHook::new(move |trace, items| {
            sink.lock()
                .unwrap()
                .push((trace.map(str::to_owned), items.to_vec()));
        }));
    let registry = tool_builtins::registry();
    let wrote = registry
        .execute(
            "todo_write",
            json!({"todos": [{"content": "Ship it", "status": "in_progress"}]}),
            &ctx,
        )
        .await;
    assert!(wrote.is_ok(), "{wrote:?}");
    assert_eq!(wrote.output, "Tasks (0 of 1 done):\n[>] Ship it");
    {
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].0.as_deref(), Some("t-hook"));
        assert_eq!(seen[0].1[0].status, TodoStatus::InProgress);
    }
    // A refused list reaches neither the hook nor the store.
    let bad = registry
        .execute(
            "todo_write",
            json!({"todos": [{"content": "x", "status": "started"}]}),
            &ctx,
        )
        .await;
    assert!(bad.is_error(), "{bad:?}");
    assert_eq!(seen.lock().unwrap().len(), 1);
    let read = registry.execute("todo_read", json!({}), &ctx).await;
    assert_eq!(read.output, "Tasks (0 of 1 done):\n[>] Ship it");
}

fn todo_context(dir: &std::path::Path, trace: &str) -> tool_core::ToolContext {
    let store: Arc<dyn StateStore> = Arc::new(FileStore::new(dir.join("state")));
    tool_builtins::context(dir)
        .unwrap()
        .with_trace_id(trace)
        .with_state(store)
}

#[tokio::test]
async fn items_stay_on_one_line_and_odd_items_are_refused_by_field() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = todo_context(dir.path(), "t-lines");
    let registry = tool_builtins::registry();
    let wrote = registry
        .execute(
            "todo_write",
            json!({"todos": [{"content": "a\n[x] Run the tests\u{1b}[31m\u{202e}", "status": "pending"}]}),
            &ctx,
        )
        .await;
    assert_eq!(
        wrote.output,
        "Tasks (0 of 1 done):\n[ ] a [x] Run the tests"
    );
    let extra = registry
        .execute(
            "todo_write",
            json!({"todos": [{"content": "a", "status": "pending", "extra": 1}]}),
            &ctx,
        )
        .await;
    let message = extra.error.expect("unknown key refused").message;
    assert!(message.contains("extra"), "{message}");
    let long = registry
        .execute(
            "todo_write",
            json!({"todos": [{"content": "a", "status": "pending", "active_form": "x".repeat(501)}]}),
            &ctx,
        )
        .await;
    assert_eq!(
        long.error.expect("too long").message,
        "todos[0].active_form is longer than 500 characters; keep each task to one short sentence."
    );
}

#[tokio::test]
async fn a_list_over_the_store_cap_is_refused_saying_what_to_shorten() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = todo_context(dir.path(), "t-big");
    let registry = tool_builtins::registry();
    let items: Vec<_> = (0..100)
        .map(|_| json!({"content": "é".repeat(500), "status": "pending", "active_form": "x".repeat(500)}))
        .collect();
    let r = registry
        .execute("todo_write", json!({ "todos": items }), &ctx)
        .await;
    let e = r.error.expect("over the cap");
    assert_eq!(e.kind, tool_core::ErrorKind::InvalidArguments);
    assert!(
        e.message.starts_with("The list takes ")
            && e.message
                .contains("at most 65536 are kept. Shorten the tasks"),
        "{}",
        e.message
    );
    // 100 items of 500 ASCII characters fit.
    let items: Vec<_> = (0..100)
        .map(|_| json!({"content": "y".repeat(500), "status": "pending"}))
        .collect();
    let r = registry
        .execute("todo_write", json!({ "todos": items }), &ctx)
        .await;
    assert!(r.is_ok(), "{:?}", r.error);
}

#[tokio::test]
async fn a_panicking_hook_after_the_save_is_reported_as_such() {
    let dir = tempfile::tempdir().unwrap();
    let ctx = todo_context(dir.path(), "t-panic")
        .with_state(TodoHook::new(|_, _| panic!("hook exploded")));
    let registry = tool_builtins::registry();
    let r = registry
        .execute(
            "todo_write",
            json!({"todos": [{"content": "a", "status": "pending"}]}),
            &ctx,
        )
        .await;
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.notes_text()
            .unwrap()
            .contains("The list was saved, but the host's TodoHook failed"),
        "{r:?}"
    );
    let read = registry.execute("todo_read", json!({}), &ctx).await;
    assert_eq!(read.output, "Tasks (0 of 1 done):\n[ ] a");
}
