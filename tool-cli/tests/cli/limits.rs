//! Patterns that used to abort the process (a stack overflow in the glob
//! compiler) come back as `invalid_arguments` in `call` and in `batch`, and
//! the batch goes on.

use serde_json::json;

use crate::support::{TempDir, code, json_lines, run, run_with_stdin, stderr, stdout};

fn nested(n: usize) -> String {
    format!("{}a{}", "{".repeat(n), "}".repeat(n))
}

#[test]
fn fifteen_thousand_nested_braces_are_an_argument_error_in_call() {
    let dir = TempDir::new();
    for args in [
        json!({"pattern": nested(15_000)}),
        json!({"pattern": "*".repeat(100_000)}),
        json!({"pattern": "x", "include": nested(15_000)}),
    ] {
        let tool = if args.get("include").is_some() {
            "grep_content"
        } else {
            "glob_files"
        };
        let out = run(["--workspace", dir.arg(), "call", tool, &args.to_string()]);
        assert_eq!(code(&out), 2, "{} {}", stdout(&out), stderr(&out));
        let text = stdout(&out) + &stderr(&out);
        assert!(
            text.contains("invalid_arguments") || text.contains("the limit is"),
            "{text}"
        );
        assert!(
            text.len() < 4_000,
            "the pattern is not echoed whole: {} bytes",
            text.len()
        );
    }
}

#[test]
fn a_batch_survives_hostile_patterns_and_answers_the_next_call() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("a.txt"), "needle\n").expect("write");
    let input = [
        json!({"name": "glob_files", "arguments": {"pattern": nested(15_000)}}),
        json!({"name": "grep_content", "arguments": {"pattern": "(".repeat(20_000)}}),
        json!({"name": "list_dir", "arguments": {"ignore": [nested(15_000)]}}),
        json!({"name": "grep_content", "arguments": {"pattern": "needle"}}),
    ]
    .map(|v| v.to_string())
    .join("\n");
    let out = run_with_stdin(&["batch", "--workspace", dir.arg()], &input);
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 4, "{}", stderr(&out));
    for line in &lines[..3] {
        assert_eq!(line["error"]["kind"], "invalid_arguments", "{line}");
    }
    assert!(lines[3]["error"].is_null());
    assert!(
        lines[3]["output"]
            .as_str()
            .unwrap_or_default()
            .contains("a.txt")
    );
}
