//! `tool batch`: JSON Lines in, one result line per call, one shared context, streaming.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{TempDir, code, feed, json_lines, run_with_stdin, stderr, tool};

#[test]
fn one_result_per_line_in_order_in_one_context() {
    let input = [
        r#"{"name": "cli_fixture_count", "arguments": {}, "id": 1}"#,
        r#"{"name": "cli_fixture_echo", "arguments": {"text": "two"}, "id": "b"}"#,
        "",
        r#"{"name": "cli_fixture_count"}"#,
        r#"{"name": "cli_fixture_args", "arguments": "{\"as\": \"text\"}"}"#,
        r#"{"name": "cli_fixture_count", "arguments": null}"#,
    ]
    .join("\n");
    let out = run_with_stdin(&["batch", "--trace-id", "batch-1"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 5, "blank lines get no result");
    assert_eq!(lines[0]["id"], 1);
    assert_eq!(lines[0]["output"], "1");
    assert_eq!(lines[1]["id"], "b");
    assert_eq!(lines[1]["output"], "two");
    assert_eq!(
        lines[2]["output"], "2",
        "the context (and its state) is shared"
    );
    assert!(lines[2].get("id").is_none());
    assert_eq!(lines[3]["output"], json!({"as": "text"}));
    assert_eq!(lines[4]["output"], "3");
    for line in &lines {
        assert_eq!(line["trace_id"], "batch-1");
        assert_eq!(line["error"], Value::Null);
    }
}

#[test]
fn bad_lines_get_error_results_and_the_batch_goes_on() {
    let input = "not json\n\
                 {\"name\": \"cli_fixture_nope\", \"arguments\": {}}\n\
                 {\"arguments\": {}}\n\
                 {\"name\": \"cli_fixture_echo\", \"arguments\": [1]}\n\
                 {\"name\": \"cli_fixture_echo\", \"arguments\": \"{oops\"}\n\
                 {\"name\": \"cli_fixture_fail\", \"arguments\": {}}\n\
                 {\"name\": \"cli_fixture_confirm_write\"}\n\
                 {\"name\": \"cli_fixture_echo\", \"arguments\": {\"text\": \"still here\"}, \"extra\": 1}\n\
                 \u{ff}\u{fe}\n\
                 {\"name\": \"cli_fixture_echo\", \"arguments\": {\"text\": \"last\"}}";
    let out = run_with_stdin(&["batch"], input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines = json_lines(&out);
    let kinds: Vec<Value> = lines.iter().map(|l| l["error"]["kind"].clone()).collect();
    assert_eq!(
        kinds,
        [
            json!("invalid_arguments"),
            json!("unknown_tool"),
            json!("invalid_arguments"),
            json!("invalid_arguments"),
            json!("invalid_arguments"),
            json!("failed"),
            json!("denied"),
            json!("invalid_arguments"),
            json!("invalid_arguments"),
            Value::Null,
        ]
    );
    assert!(
        lines[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("line 1")
    );
    assert_eq!(lines[0]["tool"], Value::Null);
    assert_eq!(lines[1]["tool"], "cli_fixture_nope");
    assert_eq!(lines[9]["output"], "last");
}

#[test]
fn each_line_is_answered_before_the_next_is_written() {
    let mut child = tool()
        .args(["batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap()).is_err() {
                break;
            }
        }
    });
    let wait = Duration::from_secs(20);
    for i in 1..=3 {
        // Nothing is answered before its line is written.
        assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
        writeln!(
            stdin,
            r#"{{"name": "cli_fixture_count", "arguments": {{}}, "id": {i}}}"#
        )
        .unwrap();
        stdin.flush().unwrap();
        let line = rx
            .recv_timeout(wait)
            .expect("the result arrives while stdin stays open");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["id"], i);
        assert_eq!(v["output"], i.to_string());
    }
    // A partial line is not a call until its newline arrives.
    write!(stdin, r#"{{"name": "cli_fixture_echo", "#).unwrap();
    stdin.flush().unwrap();
    assert!(rx.recv_timeout(Duration::from_millis(300)).is_err());
    writeln!(stdin, r#""arguments": {{"text": "joined"}}}}"#).unwrap();
    stdin.flush().unwrap();
    let v: Value = serde_json::from_str(&rx.recv_timeout(wait).unwrap()).unwrap();
    assert_eq!(v["output"], "joined");

    drop(stdin);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    reader.join().unwrap();
}

#[test]
fn a_slow_call_does_not_hold_back_earlier_results() {
    let mut child = tool()
        .args(["batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    writeln!(
        stdin,
        r#"{{"name": "cli_fixture_echo", "arguments": {{"text": "fast"}}}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"name": "cli_fixture_sleep", "arguments": {{"ms": 400}}}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let mut first = String::new();
    let start = std::time::Instant::now();
    stdout.read_line(&mut first).unwrap();
    assert!(first.contains(r#""output":"fast""#), "{first}");
    assert!(start.elapsed() < Duration::from_millis(400) || cfg!(debug_assertions));
    let mut second = String::new();
    stdout.read_line(&mut second).unwrap();
    assert!(second.contains("slept 400 ms"), "{second}");
    drop(stdin);
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

#[test]
fn empty_input_prints_nothing_and_succeeds() {
    let out = run_with_stdin(&["batch"], "");
    assert_eq!(code(&out), 0);
    assert!(out.stdout.is_empty());
}

#[test]
fn secret_variables_cannot_be_read_from_the_program_environment() {
    let dir = TempDir::new();
    let input = [
        json!({"name": "bash_command", "arguments": {"command": r#"tr "\0" "\n" < /proc/$PPID/environ"#}}),
        json!({"name": "bash_command", "arguments": {"command": "env"}}),
    ]
    .map(|line| line.to_string())
    .join("\n");
    let out = feed(
        // Unsandboxed: the sandbox refuses /proc/$PPID/environ outright;
        // this checks the scrub that also holds without it.
        tool()
            .args(["batch", "--sandbox", "off", "--workspace", dir.arg()])
            .env("FOO_TOKEN", "tok123")
            .env("GITHUB_PAT", "pat456")
            .env("HARMLESS_NAME", "visible789")
            .env("DATABASE_URL", "postgres://u:dbpw321@h/db")
            .env("NPM_AUTH", "npmauth654")
            .env("CREDENTIALS_JSON", "credjson987")
            .env("PLAIN_URL", "https://example.com/visible246")
            .env_remove("TOOL_CLI_ENV_SCRUBBED"),
        &input,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines.len(), 2);
    let environ = lines[0]["output"].as_str().expect("text output");
    assert!(environ.contains("HARMLESS_NAME=visible789"), "{environ}");
    assert!(
        environ.contains("PLAIN_URL=https://example.com/visible246"),
        "{environ}"
    );
    assert!(environ.contains("TOOL_CLI_ENV_SCRUBBED=1"), "{environ}");
    for line in &lines {
        let text = line["output"].as_str().expect("text output");
        for secret in ["tok123", "pat456", "dbpw321", "npmauth654", "credjson987"] {
            assert!(!text.contains(secret), "{secret} leaked: {text}");
        }
    }
}
