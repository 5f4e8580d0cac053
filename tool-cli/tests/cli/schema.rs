//! `tool schema`.

use serde_json::Value;

use crate::support::{code, run, stderr, stdout};

fn schemas(args: &[&str]) -> Vec<Value> {
    let out = run(args);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    match serde_json::from_str::<Value>(&stdout(&out)) {
        Ok(Value::Array(items)) => items,
        other => panic!("expected a JSON array, got {other:?}"),
    }
}

#[test]
fn schema_without_names_describes_every_tool() {
    let all = schemas(&["schema"]);
    let names: Vec<&str> = all.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"cli_fixture_echo"));
    let listed = stdout(&run(["list"])).lines().count();
    assert_eq!(all.len(), listed);
    for s in &all {
        let keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(keys, ["name", "description", "parameters"]);
        assert_eq!(s["parameters"]["type"], "object");
    }
}

#[test]
fn schema_with_names_keeps_their_order() {
    let picked = schemas(&[
        "schema",
        "cli_fixture_sleep",
        "cli_fixture_echo",
        "--format",
        "json",
    ]);
    assert_eq!(picked.len(), 2);
    assert_eq!(picked[0]["name"], "cli_fixture_sleep");
    assert_eq!(picked[1]["name"], "cli_fixture_echo");
    assert_eq!(
        picked[1]["parameters"]["properties"]["text"]["type"],
        "string"
    );
}

#[test]
fn unknown_names_are_usage_errors() {
    let out = run(["schema", "cli_fixture_echo", "cli_fixture_slep", "zzz"]);
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("`cli_fixture_slep`") && err.contains("`cli_fixture_sleep`"),
        "{err}"
    );
    assert!(err.contains("`zzz`"), "{err}");
}

#[test]
fn provider_formats_render_the_request_tool_list() {
    let openai = schemas(&["schema", "--format", "openai", "cli_fixture_echo"]);
    assert_eq!(openai.len(), 1);
    assert_eq!(openai[0]["type"], "function");
    assert_eq!(openai[0]["function"]["name"], "cli_fixture_echo");
    assert_eq!(
        openai[0]["function"]["parameters"]["properties"]["text"]["type"],
        "string"
    );

    let strict = schemas(&["schema", "--format", "openai-strict", "cli_fixture_sleep"]);
    let params = &strict[0]["function"]["parameters"];
    assert_eq!(params["additionalProperties"], false);
    assert_eq!(
        params["required"],
        serde_json::json!(["ms"]),
        "strict: every property required"
    );
    assert_eq!(strict[0]["function"]["strict"], true);

    let anthropic = schemas(&["schema", "--format", "anthropic", "cli_fixture_echo"]);
    assert_eq!(anthropic[0]["name"], "cli_fixture_echo");
    assert_eq!(anthropic[0]["input_schema"]["type"], "object");

    let gemini = schemas(&["schema", "--format", "gemini", "cli_fixture_echo"]);
    let decl = &gemini[0]["functionDeclarations"][0];
    assert_eq!(decl["name"], "cli_fixture_echo");
    assert_eq!(decl["parameters"]["properties"]["text"]["type"], "STRING");

    let mcp = schemas(&["schema", "--format", "mcp"]);
    let echo = mcp
        .iter()
        .find(|t| t["name"] == "cli_fixture_echo")
        .expect("echo in mcp list");
    assert_eq!(echo["inputSchema"]["type"], "object");
    assert!(mcp.len() > 5);

    for format in [
        "openai-chat",
        "openai-responses",
        "openai-responses-strict",
        "anthropic-strict",
        "gemini-json-schema",
        "gemini-unroll-2",
    ] {
        let out = run(["schema", "--format", format, "cli_fixture_echo"]);
        assert_eq!(code(&out), 0, "{format}: {}", stderr(&out));
    }
}

#[test]
fn a_tool_gemini_parameters_cannot_express_falls_back_and_is_reported() {
    let out = run([
        "schema",
        "--format",
        "gemini",
        "cli_fixture_tree",
        "cli_fixture_echo",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).expect("a JSON list");
    let decls = list[0]["functionDeclarations"]
        .as_array()
        .expect("declarations");
    assert_eq!(decls.len(), 2);
    assert_eq!(decls[0]["name"], "cli_fixture_echo");
    assert_eq!(decls[0]["parameters"]["type"], "OBJECT");
    assert_eq!(decls[1]["name"], "cli_fixture_tree");
    assert!(decls[1].get("parameters").is_none());
    assert_eq!(decls[1]["parametersJsonSchema"]["type"], "object");
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines[0].starts_with(
            "warning: tool `cli_fixture_tree` rendered for Gemini with parametersJsonSchema instead of parameters: "
        ) && lines[0].contains("gemini.recursion"),
        "{err}"
    );
    assert_eq!(
        lines[1],
        "1 tool(s) rendered in a looser form than Gemini asks; --no-fallback leaves them out instead."
    );

    // Unrolling expresses it: no report.
    let out = run(["schema", "--format", "gemini-unroll-2", "cli_fixture_tree"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
}

#[test]
fn openai_strict_falls_back_per_function() {
    let out = run([
        "schema",
        "--format",
        "openai-strict",
        "cli_fixture_args",
        "cli_fixture_echo",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let list: Value = serde_json::from_str(&stdout(&out)).expect("a JSON list");
    assert_eq!(list[0]["function"]["name"], "cli_fixture_args");
    assert_eq!(list[0]["function"]["strict"], false);
    assert_eq!(list[1]["function"]["name"], "cli_fixture_echo");
    assert_eq!(list[1]["function"]["strict"], true);
    let err = stderr(&out);
    assert!(
        err.starts_with(
            "warning: tool `cli_fixture_args` rendered for OpenAI Chat Completions (strict) without strict mode: "
        ),
        "{err}"
    );
    assert!(err.contains("openai.strict.additional-properties"), "{err}");
    assert_eq!(err.matches("warning:").count(), 1, "{err}");
}

#[test]
fn no_fallback_leaves_such_tools_out_and_fails() {
    for (format, tool, kept) in [
        ("gemini", "cli_fixture_tree", "cli_fixture_echo"),
        ("openai-strict", "cli_fixture_args", "cli_fixture_echo"),
        ("anthropic-strict", "cli_fixture_tree", "cli_fixture_echo"),
    ] {
        let out = run(["schema", "--format", format, "--no-fallback", tool, kept]);
        assert_eq!(code(&out), 1, "{format}");
        let list = stdout(&out);
        assert!(
            list.contains(kept) && !list.contains(tool),
            "{format}: the rest is still printed: {list}"
        );
        serde_json::from_str::<Value>(&list).expect("JSON");
        let err = stderr(&out);
        assert!(
            err.contains(&format!("error: tool `{tool}` cannot be rendered")),
            "{format}: {err}"
        );
        assert!(err.contains("1 tool(s) left out"), "{format}: {err}");
        assert!(!err.contains("warning:"), "{format}: {err}");
    }
    // Nothing to refuse: the same as without the option.
    let out = run([
        "schema",
        "--format",
        "gemini",
        "--no-fallback",
        "cli_fixture_echo",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(stderr(&out).is_empty());
}

#[test]
fn unknown_formats_are_usage_errors_that_list_the_choices() {
    let out = run(["schema", "--format", "yaml"]);
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(
        err.contains("yaml") && err.contains("anthropic-strict"),
        "{err}"
    );
}

#[test]
fn anthropic_tool_search_marks_the_deferred_tools() {
    let all = schemas(&[
        "--defer",
        "cli_fixture_*",
        "schema",
        "--format",
        "anthropic-tool-search-bm25",
    ]);
    let listed = stdout(&run(["list"])).lines().count();
    assert_eq!(all.len(), listed + 1, "every tool, and the server tool");
    assert_eq!(
        all.last().unwrap(),
        &serde_json::json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"})
    );
    let by_name = |n: &str| all.iter().find(|t| t["name"] == n).unwrap();
    assert_eq!(by_name("cli_fixture_echo")["defer_loading"], true);
    assert!(by_name("read_file").get("defer_loading").is_none());
    assert!(all.iter().all(|t| t["name"] != "tool_search"));
    // Our own deferred loading: a new session's list leaves the deferred tools out.
    let lean = schemas(&[
        "--defer",
        "cli_fixture_*",
        "schema",
        "--format",
        "anthropic",
    ]);
    let names: Vec<&str> = lean.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names.last(), Some(&"tool_search"));
    assert!(
        !names.iter().any(|n| n.starts_with("cli_fixture_")),
        "{names:?}"
    );
    let deferred = all
        .iter()
        .filter(|t| t.get("defer_loading").is_some())
        .count();
    assert!(deferred >= 3, "{deferred}");
    assert_eq!(lean.len(), listed - deferred + 1);
}

#[test]
fn url_scoped_tools_are_marked_on_stderr_as_list_marks_them() {
    let out = run(["schema"]);
    assert_eq!(code(&out), 0);
    assert!(
        stderr(&out).contains(
            "note: `cli_fixture_shop_only` runs only with --page-url matching https://shop.example/*"
        ),
        "{}",
        stderr(&out)
    );
    let out = run(["schema", "cli_fixture_echo"]);
    assert!(
        !stderr(&out).contains("cli_fixture_shop_only"),
        "{}",
        stderr(&out)
    );
}
