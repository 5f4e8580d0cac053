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
