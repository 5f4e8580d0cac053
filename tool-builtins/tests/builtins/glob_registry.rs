//! Black-box tests of `glob_registry` (moved from `search/glob.rs`).

use serde_json::json;
use tool_core::ToolKind;

use crate::util::*;
use tool_builtins::*;

#[tokio::test]
async fn search_tools_are_registered_read_only() {
    let registry = tool_builtins::registry();
    for (name, params) in [
        ("glob_files", vec!["offset", "path", "pattern"]),
        ("grep_content", vec!["include", "offset", "path", "pattern"]),
        ("list_dir", vec!["ignore", "path"]),
    ] {
        let spec = registry.get(name).unwrap().spec();
        assert_eq!(spec.kind, ToolKind::Read, "{name}");
        assert!(
            spec.flags.read_only && spec.flags.concurrency_safe,
            "{name}"
        );
        let props = spec.parameters["properties"].as_object().unwrap();
        let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, params, "{name}");
    }
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.rs"), "fn main() {}\n").unwrap();
    let ctx = ToolContext::new().with_state(Workspace::new(dir.path()).unwrap());
    let r = registry
        .execute("glob_files", json!({"pattern": "*.rs"}), &ctx)
        .await;
    assert!(r.output.ends_with("a.rs"), "{r:?}");
    let r = registry
        .execute("grep_content", json!({"pattern": "fn main"}), &ctx)
        .await;
    assert!(r.output.starts_with("Found 1 matches"), "{r:?}");
    let r = registry.execute("list_dir", json!({}), &ctx).await;
    assert!(r.output.ends_with("\n  a.rs\n"), "{r:?}");
}
