//! `--allow-tools`, `--deny-tools` and `--tags` for every command, and
//! `.mcp.json`'s `includeTools` / `excludeTools`.

use serde_json::{Value, json};
use tool_core::ToolContext;
use tool_mcp::{McpToolSource, ProtocolEra};

use crate::support::{BIN, TempDir, code, one_json_line, run, run_with_stdin, stderr, stdout};

fn listed(args: &[&str]) -> Vec<String> {
    let out = run(args);
    assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
    stdout(&out)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn list_and_schema_show_only_the_view() {
    let names = listed(&["--allow-tools", "cli_fixture_e*", "list"]);
    assert_eq!(names, ["cli_fixture_echo"]);
    let names = listed(&[
        "--allow-tools",
        "cli_fixture_*",
        "--deny-tools",
        "cli_fixture_e*",
        "--deny-tools",
        "cli_fixture_a*",
        "list",
    ]);
    assert!(!names.is_empty());
    assert!(
        names.iter().all(|n| n.starts_with("cli_fixture_")),
        "{names:?}"
    );
    assert!(
        !names
            .iter()
            .any(|n| n.starts_with("cli_fixture_e") || n.starts_with("cli_fixture_a"))
    );
    assert_eq!(
        listed(&["--tags", "fixture-echo", "list"]),
        ["cli_fixture_echo"]
    );
    // Options may follow the command too (they are global).
    assert_eq!(
        listed(&["list", "--tags", "fixture-echo"]),
        ["cli_fixture_echo"]
    );

    let out = run(["--allow-tools", "read_*", "schema"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let schemas: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let names: Vec<&str> = schemas
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(names.contains(&"read_file"), "{names:?}");
    assert!(names.iter().all(|n| n.starts_with("read_")), "{names:?}");
    // A tool outside the view is unknown to `schema` too.
    let out = run(["--allow-tools", "read_*", "schema", "cli_fixture_echo"]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
}

#[test]
fn a_pattern_that_matches_nothing_is_warned_about() {
    let out = run(["--allow-tools", "nothing_like_this*", "list"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).trim().is_empty(), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("warning: --allow-tools `nothing_like_this*` matches no tool"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn call_and_batch_refuse_tools_outside_the_view() {
    let out = run([
        "--deny-tools",
        "cli_fixture_echo",
        "call",
        "cli_fixture_echo",
        "--text=hi",
    ]);
    assert_eq!(code(&out), 2, "{}", stdout(&out));
    assert!(
        stderr(&out).contains("cli_fixture_echo"),
        "{}",
        stderr(&out)
    );
    let ok = run([
        "--allow-tools",
        "cli_fixture_echo",
        "call",
        "cli_fixture_echo",
        "--text=hi",
    ]);
    assert_eq!(code(&ok), 0, "{}", stderr(&ok));
    assert_eq!(one_json_line(&ok)["output"], "hi");

    let input = concat!(
        r#"{"name": "cli_fixture_echo", "arguments": {"text": "a"}}"#,
        "\n",
        r#"{"name": "read_file", "arguments": {"file_path": "x"}}"#,
        "\n"
    );
    let out = run_with_stdin(&["--tags", "fixture-echo", "batch"], input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["output"], "a");
    assert_eq!(lines[1]["error"]["kind"], "unknown_tool", "{}", lines[1]);
}

#[tokio::test]
async fn serve_offers_only_the_view() {
    let dir = TempDir::new();
    let conn = McpToolSource::stdio(
        BIN,
        [
            "--allow-tools",
            "read_*",
            "--allow-tools",
            "list_*",
            "serve",
            "--workspace",
            dir.arg(),
        ],
        [("TRACE_ID", "")],
    )
    .named("files")
    .with_era(ProtocolEra::Initialize)
    .connect()
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<String> = conn
        .remote_tools()
        .await
        .expect("tools/list")
        .iter()
        .map(|t| t.name.to_string())
        .collect();
    assert!(names.contains(&"read_file".to_owned()), "{names:?}");
    assert!(
        names
            .iter()
            .all(|n| n.starts_with("read_") || n.starts_with("list_")),
        "{names:?}"
    );
    let denied = conn
        .call("bash_command", serde_json::Map::new(), &ToolContext::new())
        .await;
    assert_eq!(denied.metadata["mcp_error"], "protocol", "{denied:?}");
    conn.close();
}

#[test]
fn mcp_config_include_and_exclude_tools() {
    let served = TempDir::new();
    let here = TempDir::new();
    let path = here.path().join(".mcp.json");
    let entry = |extra: Value| {
        let mut e = json!({"command": BIN, "args": ["serve", "--workspace", served.arg()], "env": {"RUST_LOG": "off"}});
        for (k, v) in extra.as_object().unwrap() {
            e[k] = v.clone();
        }
        e
    };
    let config = json!({"mcpServers": {
        "only": entry(json!({"includeTools": ["read_file", "grep_*", "glob_files"], "excludeTools": ["glob_files"]})),
        "most": entry(json!({"excludeTools": ["bash_command", "*_file"]})),
    }});
    std::fs::write(&path, config.to_string()).unwrap();
    let names = listed(&["--mcp-config", path.to_str().unwrap(), "list"]);
    let only: Vec<&String> = names.iter().filter(|n| n.starts_with("only__")).collect();
    assert!(only.contains(&&"only__read_file".to_owned()), "{names:?}");
    assert!(
        only.contains(&&"only__grep_content".to_owned()),
        "{names:?}"
    );
    assert_eq!(
        only,
        ["only__grep_content", "only__read_file"],
        "exclusion wins"
    );
    let most: Vec<&String> = names.iter().filter(|n| n.starts_with("most__")).collect();
    assert!(most.contains(&&"most__list_dir".to_owned()), "{names:?}");
    assert!(
        !most
            .iter()
            .any(|n| n.ends_with("_file") || *n == "most__bash_command"),
        "{most:?}"
    );
}

#[test]
fn defer_offers_tool_search_which_finds_the_deferred_tools() {
    let ws = TempDir::new();
    let names = listed(&["--defer", "*", "--keep-loaded", "read_file", "list"]);
    assert!(names.iter().any(|n| n == "tool_search"), "{names:?}");
    let out = run([
        "--defer",
        "*",
        "--keep-loaded",
        "read_file",
        "--trace-id",
        "cli-defer",
        "call",
        "--workspace",
        ws.arg(),
        "tool_search",
        r#"{"query": "select:edit_file,nope_tool"}"#,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    let text = v["output"].as_str().unwrap();
    assert!(text.contains("- edit_file ("), "{text}");
    assert!(text.contains("- nope_tool: no such tool"), "{text}");
    // An empty query is a usage error the model can act on.
    let out = run([
        "--defer",
        "*",
        "call",
        "--workspace",
        ws.arg(),
        "tool_search",
        r#"{"query": " "}"#,
    ]);
    assert_ne!(code(&out), 0);
    assert_eq!(one_json_line(&out)["error"]["kind"], "invalid_arguments");
}

#[test]
fn a_view_that_leaves_no_tools_is_warned_about() {
    let out = run(["--deny-tools", "*", "list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("the view leaves no tools"),
        "{}",
        stderr(&out)
    );
    let out = run(["--tags", "no-such-tag", "list"]);
    assert!(
        stderr(&out).contains("no tool has any of these tags"),
        "{}",
        stderr(&out)
    );
}
