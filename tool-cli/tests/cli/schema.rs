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
        assert_eq!(keys, ["description", "name", "parameters"]);
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
fn provider_formats_are_refused_until_they_exist() {
    for format in ["openai", "openai-strict", "anthropic", "gemini", "mcp"] {
        let out = run(["schema", "--format", format]);
        assert_eq!(code(&out), 2, "{format}");
        assert!(stdout(&out).is_empty(), "{format}");
        let err = stderr(&out);
        assert!(err.contains(&format!("`{format}`")), "{err}");
        assert!(err.contains("provider formats"), "{err}");
        assert!(err.contains("--format json"), "{err}");
    }
    let out = run(["schema", "--format", "yaml"]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("openai-strict"), "lists the choices");
}
