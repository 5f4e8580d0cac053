//! `tool parse`: a model's raw answer on stdin, the calls written in it as
//! text on stdout, through the binary. The examples are README's, one per format.

use serde_json::{Value, json};

use crate::support::{TempDir, run, run_with_stdin};

fn parsed(args: &[&str], input: &str) -> Value {
    let out = run_with_stdin(args, input);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8(out.stdout).expect("stdout is UTF-8");
    assert_eq!(stdout.lines().count(), 1, "one JSON line: {stdout}");
    serde_json::from_str(&stdout).expect("stdout is one JSON object")
}

/// README's example per format: (format, model output, the call it holds).
const EXAMPLES: &[(&str, &str)] = &[
    (
        "hermes",
        "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}\n</tool_call>",
    ),
    (
        "mistral",
        "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}]",
    ),
    (
        "llama3_json",
        "{\"name\": \"read_file\", \"parameters\": {\"path\": \"a.txt\"}}",
    ),
    ("pythonic", "[read_file(path='a.txt')]"),
    (
        "deepseek_v3",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"path\": \"a.txt\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ),
    (
        "qwen3_coder",
        "<tool_call>\n<function=read_file>\n<parameter=path>\na.txt\n</parameter>\n</function>\n</tool_call>",
    ),
    (
        "kimi_k2",
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.read_file:0<|tool_call_argument_begin|>{\"path\": \"a.txt\"}<|tool_call_end|><|tool_calls_section_end|>",
    ),
    (
        "granite",
        "<|tool_call|>[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}]",
    ),
    (
        "xlam",
        "[{\"name\": \"read_file\", \"arguments\": {\"path\": \"a.txt\"}}]",
    ),
    (
        "glm45",
        "<tool_call>read_file\n<arg_key>path</arg_key>\n<arg_value>a.txt</arg_value>\n</tool_call>",
    ),
];

#[test]
fn every_format_reads_its_readme_example_and_auto_reads_them_all() {
    let want = json!({"content": "Reading it.", "calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}], "notes": []});
    for (format, markup) in EXAMPLES {
        let input = format!("Reading it.\n{markup}\n");
        assert_eq!(
            parsed(&["parse", "--format", format], &input),
            want,
            "{format}"
        );
        assert_eq!(
            parsed(&["parse", "--format", "auto"], &input),
            want,
            "auto on {format}"
        );
    }
}

#[test]
fn an_answer_made_only_of_calls_has_empty_content() {
    let out = parsed(
        &["parse", "--format", "hermes"],
        "\n<tool_call>{\"name\": \"a\", \"arguments\": {}}</tool_call>\n\n<tool_call>{\"name\": \"b\", \"arguments\": {}}</tool_call>\n",
    );
    assert_eq!(out["content"], "");
    assert_eq!(
        out["calls"],
        json!([{"name": "a", "arguments": {}}, {"name": "b", "arguments": {}}])
    );
}

#[test]
fn tools_coerce_types_and_unknown_names_are_kept_with_a_note() {
    let dir = TempDir::new();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        json!([{"name": "read_file", "description": "Reads.", "parameters": {"type": "object",
            "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}}}])
        .to_string(),
    )
    .unwrap();
    let tools = tools.to_str().unwrap();
    let input = "<tool_call>\n<function=read_file>\n<parameter=path>\n42\n</parameter>\n<parameter=limit>\n10\n</parameter>\n</function>\n</tool_call>";
    // Without --tools, values are taken as written.
    let plain = parsed(&["parse", "--format", "qwen3_coder"], input);
    assert_eq!(
        plain["calls"][0]["arguments"],
        json!({"path": "42", "limit": "10"})
    );
    let typed = parsed(
        &["parse", "--format", "qwen3_coder", "--tools", tools],
        input,
    );
    assert_eq!(
        typed["calls"][0]["arguments"],
        json!({"path": "42", "limit": 10})
    );
    assert_eq!(typed["notes"], json!([]));

    let unknown = parsed(
        &["parse", "--format", "hermes", "--tools", tools],
        "<tool_call>{\"name\": \"read_fil\", \"arguments\": {}}</tool_call>",
    );
    assert_eq!(
        unknown["calls"],
        json!([{"name": "read_fil", "arguments": {}}])
    );
    let note = unknown["notes"][0].as_str().unwrap();
    assert!(
        note.contains("`read_fil` is not one of the tools offered; did you mean `read_file`?"),
        "{note}"
    );
}

#[test]
fn malformed_markup_gives_notes_and_stays_in_the_content() {
    for (format, input, phrase) in [
        (
            "hermes",
            "<tool_call>{\"name\": \"a\", \"arguments\": {oops}}</tool_call>",
            "not valid JSON",
        ),
        (
            "hermes",
            "Sure. <tool_call>{\"name\": \"a\", \"argu",
            "not closed",
        ),
        (
            "mistral",
            "[TOOL_CALLS] no JSON here",
            "neither a JSON list",
        ),
        ("pythonic", "[f(1, 2)]", "keyword arguments"),
        (
            "glm45",
            "<tool_call>f\n<arg_key>k</arg_key>\n</tool_call>",
            "no `<arg_value>`",
        ),
    ] {
        let out = parsed(&["parse", "--format", format], input);
        assert_eq!(out["calls"], json!([]), "{format}");
        assert_eq!(out["content"], input.trim(), "{format}");
        let notes = out["notes"].as_array().unwrap();
        assert!(
            notes.iter().any(|n| n.as_str().unwrap().contains(phrase)),
            "{format}: {notes:?}"
        );
    }
}

#[test]
fn ten_megabytes_on_stdin_are_read_whole() {
    let mut input = "word ".repeat(2 << 20);
    input.push_str("<tool_call>{\"name\": \"end\", \"arguments\": {}}</tool_call>");
    let out = parsed(&["parse", "--format", "auto"], &input);
    assert_eq!(out["calls"], json!([{"name": "end", "arguments": {}}]));
    assert_eq!(out["content"].as_str().unwrap().len(), (10 << 20) - 1);
}

#[test]
fn bad_options_are_usage_errors() {
    let out = run_with_stdin(&["parse", "--format", "hermez"], "x");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown text tool-call format `hermez`; did you mean `hermes`?"),
        "{err}"
    );

    let dir = TempDir::new();
    let tools = dir.path().join("tools.json");
    std::fs::write(&tools, "{\"name\": \"x\"}").unwrap();
    let out = run_with_stdin(
        &[
            "parse",
            "--format",
            "auto",
            "--tools",
            tools.to_str().unwrap(),
        ],
        "x",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must be a JSON array"));

    let out = run(["parse"]);
    assert_eq!(out.status.code(), Some(2), "--format is required");
}
