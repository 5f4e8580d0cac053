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

/// The variables a `tool batch` run is started with in the tests below:
/// secret-looking ones (the issue-23 spellings the old end-of-name patterns
/// missed among them) and two that must reach commands.
const START_ENV: [(&str, &str); 12] = [
    ("FOO_TOKEN", "tok123"),
    ("GITHUB_PAT", "pat456"),
    ("DATABASE_URL", "postgres://u:dbpw321@h/db"),
    ("NPM_AUTH", "npmauth654"),
    ("CREDENTIALS_JSON", "credjson987"),
    ("GITHUB_TOKEN_2", "ghtwo111"),
    ("MASTER_KEY_B64", "masterb64222"),
    ("OTP_SEED", "otpseed333"),
    ("MYSQL_ROOT_PW", "rootpw444"),
    (
        "HTTPS_PROXY",
        "http://proxyuser:proxypw555@proxy.invalid:3128",
    ),
    ("HARMLESS_NAME", "visible789"),
    ("PLAIN_URL", "https://example.com/visible246"),
];
const START_SECRETS: [&str; 10] = [
    "tok123",
    "pat456",
    "dbpw321",
    "npmauth654",
    "credjson987",
    "ghtwo111",
    "masterb64222",
    "otpseed333",
    "rootpw444",
    "proxypw555",
];

/// `tool batch` in `dir` with [`START_ENV`], running `commands` through
/// `bash_command`; the outputs, one per command.
fn batch_with_secrets(
    dir: &TempDir,
    cmd: &mut std::process::Command,
    commands: &[&str],
) -> Vec<String> {
    let input = commands
        .iter()
        .map(|c| json!({"name": "bash_command", "arguments": {"command": c}}).to_string())
        .collect::<Vec<_>>()
        .join("\n");
    cmd.args(["batch", "--sandbox", "off", "--workspace", dir.arg()]);
    for (name, value) in START_ENV {
        cmd.env(name, value);
    }
    let out = feed(cmd, &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    json_lines(&out)
        .iter()
        .map(|line| line["output"].as_str().expect("text output").to_owned())
        .collect()
}

/// Commands see none of the secret-looking variables `tool` was started
/// with, while `tool` itself keeps them (cross-cutting §7): its own
/// environment block, which root can read, still holds them.
#[test]
fn secret_variables_are_kept_by_the_program_and_withheld_from_commands() {
    let dir = TempDir::new();
    let outputs = batch_with_secrets(&dir, &mut tool(), &["env"]);
    let env = &outputs[0];
    assert!(env.contains("HARMLESS_NAME=visible789"), "{env}");
    assert!(
        env.contains("PLAIN_URL=https://example.com/visible246"),
        "{env}"
    );
    for secret in START_SECRETS {
        assert!(!env.contains(secret), "{secret} reached the command: {env}");
    }
    if rustix::process::geteuid().is_root() {
        // The supervisor is a fork of `tool`: its block is the program's
        // own, which root can read. The program kept the variable; the
        // output shows it masked (issue 23.10).
        let outputs = batch_with_secrets(
            &dir,
            &mut tool(),
            &[r#"tr "\0" "\n" < /proc/$PPID/environ"#],
        );
        assert!(!outputs[0].contains("ghtwo111"), "{}", outputs[0]);
        assert!(
            outputs[0].contains("GITHUB_TOKEN_2=<withheld:GITHUB_TOKEN_2>"),
            "{}",
            outputs[0]
        );
    }
}

/// A command of the same user cannot read the program's environment block
/// (`/proc/$PPID/environ`): the program is not dumpable. Run as `nobody`
/// when the tests run as root (root reads every block).
#[test]
fn a_command_cannot_read_the_program_environment_block() {
    use std::os::unix::fs::PermissionsExt;
    use std::os::unix::process::CommandExt;
    let dir = TempDir::new();
    let mut cmd = tool();
    if rustix::process::geteuid().is_root() {
        let state = dir.path().join("state");
        std::fs::create_dir(&state).expect("state folder");
        for folder in [dir.path(), state.as_path()] {
            std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o777))
                .expect("chmod");
        }
        cmd.uid(65534)
            .gid(65534)
            .env("HOME", &state)
            .env("XDG_STATE_HOME", &state)
            .env_remove("XDG_RUNTIME_DIR");
    }
    let outputs = batch_with_secrets(
        &dir,
        &mut cmd,
        &[
            r#"id -u; tr "\0" "\n" < /proc/$PPID/environ; echo "exit $?""#,
            "env",
        ],
    );
    assert!(
        !outputs[0].starts_with("0\n"),
        "ran as root: {}",
        outputs[0]
    );
    assert!(outputs[0].contains("Permission denied"), "{}", outputs[0]);
    assert!(
        outputs[1].contains("HARMLESS_NAME=visible789"),
        "{}",
        outputs[1]
    );
    for output in &outputs {
        for secret in START_SECRETS {
            assert!(!output.contains(secret), "{secret} leaked: {output}");
        }
    }
}
