//! The read cache (`tool_core::read_cache`) through the registry, as a host
//! wires it (`tool_builtins::with_builtins`): real files, real writes
//! through the tools, a real shell command, a file changed behind the
//! tools' back.

use std::path::Path;

use serde_json::{Value, json};
use tool_core::{ToolContext, ToolResult, meta};

use tool_builtins::fs::workspace::Workspace;

const TRACE: &str = "t-read-cache";

fn cached_ctx(dir: &Path) -> ToolContext {
    tool_builtins::with_builtins(ToolContext::new().with_trace_id(TRACE), dir).unwrap()
}

/// The same workspace without a read cache: what an uncached call answers.
fn plain_ctx(dir: &Path) -> ToolContext {
    ToolContext::new()
        .with_trace_id(TRACE)
        .with_state(Workspace::new(dir).unwrap())
        .with_state(tool_builtins::FileLedger::new())
}

fn files() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\n").unwrap();
    std::fs::write(dir.path().join("sub/deep.txt"), "gamma\n").unwrap();
    dir
}

fn was_cached(r: &ToolResult) -> bool {
    r.metadata.get(meta::CACHED) == Some(&Value::Bool(true))
}

fn matches(r: &ToolResult) -> u64 {
    r.metadata[meta::MATCHES].as_u64().unwrap()
}

#[tokio::test]
async fn identical_read_only_calls_are_answered_from_the_cache_as_an_uncached_call_answers() {
    let dir = files();
    let registry = tool_builtins::registry();
    let ctx = cached_ctx(dir.path());
    for (tool, args) in [
        ("read_file", json!({"file_path": "a.txt"})),
        // A search of one file (folders: the test below).
        (
            "grep_content",
            json!({"pattern": "alpha|gamma", "path": "a.txt"}),
        ),
    ] {
        let first = registry.execute(tool, args.clone(), &ctx).await;
        assert!(first.is_ok() && !was_cached(&first), "{tool}: {first:?}");
        let second = registry.execute(tool, args.clone(), &ctx).await;
        assert!(was_cached(&second), "{tool}: {second:?}");
        let uncached = registry.execute(tool, args, &plain_ctx(dir.path())).await;
        let mut shown = second.clone();
        shown.metadata.remove(meta::CACHED);
        assert_eq!(shown, uncached, "{tool}");
        assert_eq!(shown, first, "{tool}");
    }
    // Another trace has its own entries.
    let other = ctx.clone().with_trace_id("t-other");
    let r = registry
        .execute("read_file", json!({"file_path": "a.txt"}), &other)
        .await;
    assert!(!was_cached(&r), "{r:?}");
    // A call without a trace is never cached.
    let untraced = tool_builtins::with_builtins(ToolContext::new(), dir.path()).unwrap();
    for _ in 0..2 {
        let r = registry
            .execute("read_file", json!({"file_path": "a.txt"}), &untraced)
            .await;
        assert!(r.is_ok() && !was_cached(&r), "{r:?}");
    }
}

#[tokio::test]
async fn a_write_through_the_tools_in_between_changes_the_answer() {
    let dir = files();
    let registry = tool_builtins::registry();
    let ctx = cached_ctx(dir.path());
    let read = json!({"file_path": "a.txt"});
    let before = registry.execute("read_file", read.clone(), &ctx).await;
    assert!(before.output.contains("alpha"), "{before:?}");
    let grep = json!({"pattern": "delta"});
    let none = registry.execute("grep_content", grep.clone(), &ctx).await;
    assert_eq!(matches(&none), 0, "{none:?}");
    assert!(was_cached(
        &registry.execute("read_file", read.clone(), &ctx).await
    ));
    let edit = registry
        .execute(
            "edit_file",
            json!({"file_path": "a.txt", "old_string": "alpha", "new_string": "delta"}),
            &ctx,
        )
        .await;
    assert!(edit.is_ok(), "{edit:?}");
    let after = registry.execute("read_file", read, &ctx).await;
    assert!(!was_cached(&after), "{after:?}");
    assert!(
        after.output.contains("delta") && !after.output.contains("alpha"),
        "{after:?}"
    );
    let found = registry.execute("grep_content", grep, &ctx).await;
    assert!(!was_cached(&found));
    assert_eq!(matches(&found), 1, "{found:?}");
}

#[tokio::test]
async fn a_shell_command_in_between_empties_the_cache() {
    let dir = files();
    let registry = tool_builtins::registry();
    let ctx = cached_ctx(dir.path());
    let grep = json!({"pattern": "gamma", "path": "sub/deep.txt"});
    let before = registry.execute("grep_content", grep.clone(), &ctx).await;
    assert_eq!(matches(&before), 1, "{before:?}");
    assert!(was_cached(
        &registry.execute("grep_content", grep.clone(), &ctx).await
    ));
    // Appends with the size and times put back: the file's stamp would
    // show nothing, so only the invalidation by the shell call can.
    let shell = registry
        .execute(
            "bash_command",
            json!({"command": "echo gamma >> sub/deep.txt"}),
            &ctx,
        )
        .await;
    assert!(shell.is_ok(), "{shell:?}");
    let after = registry.execute("grep_content", grep, &ctx).await;
    assert!(!was_cached(&after), "{after:?}");
    assert_eq!(matches(&after), 2, "{after:?}");
}

#[tokio::test]
async fn a_file_changed_behind_the_tools_back_is_read_again() {
    let dir = files();
    let registry = tool_builtins::registry();
    let ctx = cached_ctx(dir.path());
    let read = json!({"file_path": "a.txt"});
    registry.execute("read_file", read.clone(), &ctx).await;
    assert!(was_cached(
        &registry.execute("read_file", read.clone(), &ctx).await
    ));
    std::fs::write(dir.path().join("a.txt"), "epsilon\n").unwrap();
    let after = registry.execute("read_file", read, &ctx).await;
    assert!(!was_cached(&after), "{after:?}");
    assert!(after.output.contains("epsilon"), "{after:?}");
}

/// Review 29, F1: a search or listing of a folder depends on every file
/// below it, which the folder's own stamp does not show. Without an index
/// such a call is never answered from the cache; with a built index that
/// watches the workspace it is, until anything below changes, and a file
/// made in a new subfolder or edited in place by another process is seen
/// by the very next call (no 30 s TTL).
#[tokio::test]
async fn folder_searches_see_changes_below_the_folder_at_once() {
    let dir = files();
    let registry = tool_builtins::registry();
    let folder_calls = [
        ("grep_content", json!({"pattern": "zeta"})),
        ("glob_files", json!({"pattern": "**/*.txt"})),
        ("list_dir", json!({})),
    ];
    // No index: every call reads the folder again.
    let ctx = cached_ctx(dir.path());
    for (tool, args) in &folder_calls {
        for _ in 0..2 {
            let r = registry.execute(tool, args.clone(), &ctx).await;
            assert!(r.is_ok() && !was_cached(&r), "{tool}: {r:?}");
        }
    }
    // A built, watching index vouches for the folder.
    let state = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    let index = tool_builtins::ContentIndex::new(
        &ws,
        tool_builtins::IndexConfig::default()
            .with_min_bytes(0)
            .with_state_dir(state.path()),
    );
    assert!(
        matches!(index.build(), tool_builtins::IndexStatus::Ready { .. }),
        "{}",
        index.status()
    );
    let ctx = cached_ctx(dir.path()).with_state(index);
    for (tool, args) in &folder_calls {
        let first = registry.execute(tool, args.clone(), &ctx).await;
        assert!(first.is_ok() && !was_cached(&first), "{tool}: {first:?}");
        let second = registry.execute(tool, args.clone(), &ctx).await;
        assert!(was_cached(&second), "{tool}: {second:?}");
    }
    // Another process makes a nested folder with a file, and edits one in
    // place: the folder's own stamp is unchanged.
    std::fs::create_dir_all(dir.path().join("sub/new/er")).unwrap();
    std::fs::write(dir.path().join("sub/new/er/n.txt"), "zeta\n").unwrap();
    std::fs::write(dir.path().join("sub/deep.txt"), "zeta\n").unwrap();
    let plain = plain_ctx(dir.path());
    for (tool, args) in &folder_calls {
        let after = registry.execute(tool, args.clone(), &ctx).await;
        assert!(!was_cached(&after), "{tool}: {after:?}");
        let scanned = registry.execute(tool, args.clone(), &plain).await;
        assert_eq!(after.output, scanned.output, "{tool}");
        assert!(
            after.output.contains("n.txt") || after.output.contains("Found 2"),
            "{tool}: {}",
            after.output
        );
    }
}
