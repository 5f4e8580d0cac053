//! An imported MCP server's tools offered as one skill (design notes 002
//! #101): the fixture server's tools are imported, written as one SKILL.md
//! whose body lists each tool and its arguments, the skills loader reads it
//! back, and with the tools deferred in the model's view the skill stands in
//! for their schemas while calls by name still run on the server.

#![allow(
    clippy::unwrap_used,
    reason = "tests: a failed unwrap is the failure report"
)]

use serde_json::json;
use tool_builtins::skills::SkillSet;
use tool_builtins::skills::write::{CallStyle, for_tools};
use tool_core::format::Format;
use tool_core::{RegistryView, ToolContext, ToolRegistry, ToolSpec};
use tool_mcp::{LiveRegistry, McpToolSource};

const FIXTURE: &str = env!("CARGO_BIN_EXE_tool-mcp-fixture");

#[tokio::test]
async fn a_servers_tools_become_one_skill_and_stay_callable_by_name() {
    let conn = McpToolSource::stdio(FIXTURE, [] as [&str; 0], [("RUST_LOG", "off")])
        .named("fx")
        .connect()
        .await
        .expect("fixture connects");
    let live = LiveRegistry::new(ToolRegistry::new());
    let names = conn.import_into(&live).await.expect("import");
    let registry = live.snapshot();
    let specs: Vec<ToolSpec> = names
        .iter()
        .map(|n| registry.get(n).unwrap().spec().clone())
        .collect();
    let doc = for_tools(
        "mcp-fx",
        "Use the fixture MCP server's tools (echo and test content).",
        "The tools of the MCP server `fx`, imported as `fx__<tool>`.",
        &specs,
        &CallStyle::ToolCall,
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join(&doc.name)).unwrap();
    std::fs::write(
        dir.path().join(&doc.name).join("SKILL.md"),
        doc.to_markdown().unwrap(),
    )
    .unwrap();

    let skills = SkillSet::load([dir.path()]);
    assert!(
        skills.diagnostics().is_empty(),
        "{:?}",
        skills.diagnostics()
    );
    let skill = skills.get("mcp-fx").unwrap();
    assert_eq!(
        skill.description,
        "Use the fixture MCP server's tools (echo and test content)."
    );
    // One section per imported tool, with the server's own parameter docs.
    for name in &names {
        assert!(skill.body.contains(&format!("### `{name}`")), "{name}");
    }
    let echo = &registry.get("fx__echo").unwrap().spec().parameters;
    let text_doc = echo["properties"]["text"]["description"].as_str();
    let line = match text_doc {
        Some(d) => format!("- `text` (string, required): {d}"),
        None => "- `text` (string, required)".to_owned(),
    };
    assert!(skill.body.contains(&line), "{line} in {}", skill.body);
    assert!(
        skill.body.contains("`fx__echo {\"text\": …}`"),
        "{}",
        skill.body
    );

    // The model's view: the skill tool, the server's tools deferred.
    let mut offered = ToolRegistry::new();
    offered.register(skills.tool().unwrap()).unwrap();
    for name in &names {
        offered
            .register(registry.get(name).unwrap().clone())
            .unwrap();
    }
    let view = RegistryView::new(LiveRegistry::new(offered)).defer(["fx__*"]);
    let listed = view
        .schemas_for(Format::Json, Some("t-skill"))
        .unwrap()
        .into_value()
        .to_string();
    assert!(
        listed.contains("mcp-fx: Use the fixture MCP server"),
        "{listed}"
    );
    assert!(
        !listed.contains("\"fx__echo\""),
        "no schema of a deferred tool: {listed}"
    );
    let ctx = ToolContext::new().with_trace_id("t-skill");
    let body = view.execute("skill", json!({"name": "mcp-fx"}), &ctx).await;
    assert!(body.output.contains("### `fx__echo`"), "{}", body.output);
    let called = view
        .execute("fx__echo", json!({"text": "by name"}), &ctx)
        .await;
    assert_eq!(called.output, "by name", "{called:?}");
}
