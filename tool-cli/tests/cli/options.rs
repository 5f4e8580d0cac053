//! The common options: trace id, workspace, timeout, approval, secrets, page URL.

use serde_json::{Value, json};

use crate::support::{TempDir, code, one_json_line, run, stderr, stdout, tool};

fn context_report(cmd: &mut std::process::Command) -> Value {
    let out = cmd.output().expect("the tool binary runs");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    assert_eq!(
        v["trace_id"], v["output"]["trace_id"],
        "printed and context trace ids agree"
    );
    v["output"].clone()
}

#[test]
fn trace_id_comes_from_the_flag_then_the_environment_then_is_generated() {
    let flag_and_env = context_report(tool().env("TRACE_ID", "from-env").args([
        "call",
        "--trace-id",
        "from-flag",
        "cli_fixture_context",
    ]));
    assert_eq!(flag_and_env["trace_id"], "from-flag");

    let flag_after_command = context_report(tool().env("TRACE_ID", "from-env").args([
        "--trace-id=early",
        "call",
        "cli_fixture_context",
    ]));
    assert_eq!(flag_after_command["trace_id"], "early");

    let env_only = context_report(
        tool()
            .env("TRACE_ID", "from-env")
            .args(["call", "cli_fixture_context"]),
    );
    assert_eq!(env_only["trace_id"], "from-env");

    let generated = context_report(tool().args(["call", "cli_fixture_context"]));
    let id = generated["trace_id"].as_str().unwrap();
    assert!(id.starts_with("cli-") && id.len() == 12, "{id}");
    assert!(id[4..].bytes().all(|b| b.is_ascii_hexdigit()), "{id}");

    let empty_env = context_report(
        tool()
            .env("TRACE_ID", "")
            .args(["call", "cli_fixture_context"]),
    );
    assert!(empty_env["trace_id"].as_str().unwrap().starts_with("cli-"));

    let again = context_report(tool().args(["call", "cli_fixture_context"]));
    assert_ne!(
        again["trace_id"], generated["trace_id"],
        "generated ids differ per run"
    );
}

#[test]
fn workspace_defaults_to_the_current_folder_and_must_exist() {
    let dir = TempDir::new();
    let here = context_report(
        tool()
            .current_dir(dir.path())
            .args(["call", "cli_fixture_context"]),
    );
    assert_eq!(here["workspace"], dir.arg());

    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    let given = context_report(tool().args([
        "call",
        "--workspace",
        sub.to_str().unwrap(),
        "cli_fixture_context",
    ]));
    assert_eq!(given["workspace"], sub.to_str().unwrap());

    let missing = dir.path().join("missing");
    let out = run([
        "--workspace",
        missing.to_str().unwrap(),
        "call",
        "cli_fixture_context",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).is_empty());
    assert!(stderr(&out).contains("workspace"), "{}", stderr(&out));

    let file = dir.path().join("file");
    std::fs::write(&file, "x").unwrap();
    let out = run(["batch", "--workspace", file.to_str().unwrap()]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("not a folder"), "{}", stderr(&out));
}

#[test]
fn timeout_and_page_url_reach_the_context() {
    let report = context_report(tool().args([
        "call",
        "--timeout",
        "2.5",
        "--page-url",
        "https://example.com/p",
        "cli_fixture_context",
    ]));
    assert_eq!(report["timeout_ms"], 2500);
    assert_eq!(report["page_url"], "https://example.com/p");

    let defaults = context_report(tool().args(["call", "cli_fixture_context"]));
    assert_eq!(defaults["timeout_ms"], Value::Null);
    assert_eq!(defaults["page_url"], Value::Null);

    for bad in ["0", "-1", "soon"] {
        let out = run(["call", "--timeout", bad, "cli_fixture_context"]);
        assert_eq!(code(&out), 2, "--timeout {bad}");
        assert!(stderr(&out).contains("--timeout"), "{}", stderr(&out));
    }
}

#[test]
fn timeout_stops_a_slow_tool() {
    let start = std::time::Instant::now();
    let out = run(["call", "--timeout", "0.2", "cli_fixture_sleep", "--ms=5000"]);
    assert_eq!(code(&out), 1);
    assert_eq!(one_json_line(&out)["error"]["kind"], "timeout");
    assert!(start.elapsed().as_secs() < 4);
}

#[test]
fn a_stuck_sync_tool_does_not_keep_the_program_alive() {
    let start = std::time::Instant::now();
    let out = run([
        "call",
        "--timeout",
        "0.2",
        "cli_fixture_block",
        "--ms=10000",
    ]);
    assert_eq!(code(&out), 1);
    assert_eq!(one_json_line(&out)["error"]["kind"], "timeout");
    assert!(start.elapsed().as_secs() < 4, "{:?}", start.elapsed());

    let start = std::time::Instant::now();
    let out = crate::support::run_with_stdin(
        &["batch", "--timeout", "0.2"],
        "{\"name\": \"cli_fixture_block\", \"arguments\": {\"ms\": 10000}}\n",
    );
    assert_eq!(code(&out), 0);
    assert!(start.elapsed().as_secs() < 4, "{:?}", start.elapsed());
}

#[test]
fn approval_policy_is_stored_and_applied() {
    let report = context_report(tool().args(["call", "cli_fixture_context"]));
    assert_eq!(report["approval_policy"], "never");
    assert_eq!(report["has_approver"], true);
    let report = context_report(tool().args(["call", "--approve", "all", "cli_fixture_context"]));
    assert_eq!(report["approval_policy"], "all");

    let outcome = |policy: &str, name: &str| {
        let out = run(["call", "--approve", policy, name]);
        (code(&out), one_json_line(&out)["error"]["kind"].clone())
    };
    let denied = (1, json!("denied"));
    let ok = (0, Value::Null);
    assert_eq!(outcome("never", "cli_fixture_confirm_read"), denied);
    assert_eq!(outcome("never", "cli_fixture_confirm_write"), denied);
    assert_eq!(outcome("read", "cli_fixture_confirm_read"), ok);
    assert_eq!(outcome("read", "cli_fixture_confirm_write"), denied);
    assert_eq!(outcome("all", "cli_fixture_confirm_write"), ok);
    // Tools that need no confirmation run under every policy.
    assert_eq!(outcome("never", "cli_fixture_args"), ok);

    let out = run(["call", "cli_fixture_confirm_write"]);
    let message = one_json_line(&out)["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(message.contains("confirmation"), "{message}");

    let out = run(["call", "--approve", "sometimes", "cli_fixture_args"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn secrets_are_substituted_masked_and_never_printed() {
    let dir = TempDir::new();
    let file = dir.path().join("secrets.json");
    std::fs::write(
        &file,
        r#"{"api_key": "sk-very-secret", "*.example.com": {"token": "tok-also-secret"}}"#,
    )
    .unwrap();
    let secrets = file.to_str().unwrap();

    let out = run(["call", "--secrets", secrets, "cli_fixture_context"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        one_json_line(&out)["output"]["secret_keys"],
        json!(["api_key"])
    );
    let out = run([
        "call",
        "--secrets",
        secrets,
        "--page-url",
        "https://www.example.com/",
        "cli_fixture_context",
    ]);
    assert_eq!(
        one_json_line(&out)["output"]["secret_keys"],
        json!(["api_key", "token"])
    );

    // The tool receives the value; what comes back shows the placeholder.
    let out = run([
        "call",
        "--secrets",
        secrets,
        "cli_fixture_secret_echo",
        "--text=<secret>api_key</secret>",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = format!("{}{}", stdout(&out), stderr(&out));
    assert!(!text.contains("very-secret"), "{text}");
    let output = one_json_line(&out)["output"].as_str().unwrap().to_owned();
    assert!(output.starts_with("got 14 chars"), "{output}");

    std::fs::write(&file, r#"{"api_key": "sk-very-secret", "n": 987654}"#).unwrap();
    let out = run(["call", "--secrets", secrets, "cli_fixture_context"]);
    assert_eq!(code(&out), 2);
    let err = stderr(&out);
    assert!(err.contains(r#""n""#), "{err}");
    assert!(
        !err.contains("very-secret") && !err.contains("987654"),
        "{err}"
    );

    std::fs::write(&file, r#"{"api_key": "sk-very-secret"#).unwrap();
    let out = run(["call", "--secrets", secrets, "cli_fixture_context"]);
    assert_eq!(code(&out), 2);
    assert!(!stderr(&out).contains("very-secret"), "{}", stderr(&out));

    let out = run([
        "call",
        "--secrets",
        "/nonexistent/secrets.json",
        "cli_fixture_context",
    ]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("secret store"), "{}", stderr(&out));
}

#[test]
fn bash_policy_asks_the_approver_and_denies_by_pattern() {
    let dir = TempDir::new();
    let file = dir.path().join("policy.json");
    std::fs::write(&file, r#"{"deny": ["rm *"]}"#).unwrap();
    let policy = file.to_str().unwrap();
    let bash = |approve: &str, command: &str| {
        let args = json!({ "command": command }).to_string();
        let out = run([
            "call",
            "--workspace",
            dir.arg(),
            "--bash-policy",
            policy,
            "--approve",
            approve,
            "bash_command",
            &args,
        ]);
        one_json_line(&out)
    };
    // Command substitution needs confirmation: --approve never refuses it
    // with a message that says why and what to do.
    let v = bash("never", "echo $(echo hi)");
    assert_eq!(v["error"]["kind"], "denied", "{v}");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("command substitution"), "{msg}");
    assert!(msg.contains("It was not run"), "{msg}");
    // --approve all runs it.
    let v = bash("all", "echo $(echo hi)");
    assert_eq!(v["output"], "hi\n", "{v}");
    // A deny pattern refuses whatever --approve says, and nothing runs.
    std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
    let v = bash("all", "ls && rm keep.txt");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not allowed by the command policy"),
        "{v}"
    );
    assert!(dir.path().join("keep.txt").exists());
    // Plain commands run without asking.
    assert_eq!(bash("never", "echo plain")["output"], "plain\n");

    // A bad file is a usage error that names the key.
    std::fs::write(&file, r#"{"denied": []}"#).unwrap();
    let out = run([
        "--bash-policy",
        policy,
        "call",
        "bash_command",
        "--command=ls",
    ]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("unknown key `denied`"),
        "{}",
        stderr(&out)
    );
}

/// Options of `tool` given after the tool name, where every `--x` is an
/// argument of the tool, are named as such.
#[test]
fn own_options_after_the_tool_name_say_where_they_go() {
    for (args, flag) in [
        (
            vec![
                "call",
                "bash_command",
                r#"{"command": "true"}"#,
                "--workspace",
                "/tmp",
            ],
            "--workspace",
        ),
        (
            vec!["call", "read_file", "--file-path=x", "--timeout=5"],
            "--timeout",
        ),
        (vec!["call", "list_dir", "--trace-id", "t1"], "--trace-id"),
        (
            vec!["call", "glob_files", "--pattern=*", "--approve=all"],
            "--approve",
        ),
    ] {
        let out = crate::support::run(&args);
        assert_eq!(crate::support::code(&out), 2, "{args:?}");
        let err = crate::support::stderr(&out);
        assert!(
            err.contains(&format!("`{flag}` is an option of the `tool` program")),
            "{err}"
        );
        assert!(err.contains("before the tool name"), "{err}");
    }
}

#[test]
fn negative_timeouts_get_the_timeout_message() {
    for value in ["-1", "-0.5"] {
        let out = crate::support::run(["--timeout", value, "list"]);
        assert_eq!(crate::support::code(&out), 2);
        let err = crate::support::stderr(&out);
        assert!(
            err.contains("the timeout must be more than 0 seconds"),
            "{err}"
        );
        assert!(!err.contains("unexpected argument"), "{err}");
    }
}

#[test]
fn batch_lines_that_are_no_call_are_described_in_plain_words() {
    let input = [
        "[]",
        "42",
        "\"read_file\"",
        "{\"arguments\": {}}",
        "{\"name\": 7}",
        "{\"name\": \"list_dir\", \"args\": {}}",
        "{\"name\": ",
    ]
    .join("\n");
    let out = crate::support::run_with_stdin(&["batch"], &input);
    let lines = crate::support::json_lines(&out);
    let want = [
        "is an array, not an object",
        "is a number, not an object",
        "is a string, not an object",
        "has no \"name\"",
        "\"name\" must be a string",
        "unknown key `args`",
        "is not JSON",
    ];
    assert_eq!(lines.len(), want.len());
    for (line, want) in lines.iter().zip(want) {
        let message = line["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(want), "{message}");
        assert!(
            !message.contains("BatchLine") && !message.contains("struct"),
            "{message}"
        );
    }
}

#[test]
fn an_over_long_batch_line_is_refused_and_the_batch_goes_on() {
    let huge = format!(
        "{{\"name\": \"list_dir\", \"arguments\": {{\"path\": \"{}\"}}}}",
        "a".repeat(17 << 20)
    );
    let input = format!("{huge}\n{{\"name\": \"list_dir\", \"arguments\": {{}}}}\n");
    let out = crate::support::run_with_stdin(&["batch"], &input);
    let lines = crate::support::json_lines(&out);
    assert_eq!(lines.len(), 2);
    let message = lines[0]["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("longer than 16 MiB"), "{message}");
    assert!(lines[1]["error"].is_null(), "{}", lines[1]);
}

#[test]
fn a_file_path_ending_in_a_slash_is_refused_by_the_write_tools() {
    let dir = crate::support::TempDir::new();
    for (tool, args) in [
        ("write_file", r#"{"file_path": "newdir/", "content": "x"}"#),
        (
            "edit_file",
            r#"{"file_path": "d/", "old_string": "", "new_string": "x"}"#,
        ),
    ] {
        let out = crate::support::run(["--workspace", dir.arg(), "call", tool, args]);
        let v = crate::support::one_json_line(&out);
        let message = v["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("names a folder"), "{tool}: {v}");
    }
    assert!(!dir.path().join("newdir").exists() && !dir.path().join("d").exists());
}

/// `tool call` on a terminal (a pseudo-terminal made by util-linux's
/// `script`) asks the person: `y` runs the call, `n` denies it; without a
/// terminal the refusal says how to approve.
#[test]
fn a_person_at_the_terminal_is_asked() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    }
    let on_terminal = |answer: &str| {
        let inner = format!("{} call cli_fixture_confirm_write", crate::support::BIN);
        let mut cmd = std::process::Command::new("script");
        cmd.args(["-qec", &inner, "/dev/null"])
            .env_remove("TRACE_ID")
            .current_dir(env!("CARGO_MANIFEST_DIR"));
        crate::support::feed(&mut cmd, answer)
    };
    let yes = on_terminal("y\n");
    let text = String::from_utf8_lossy(&yes.stdout);
    assert!(text.contains("needs your confirmation"), "{text}");
    assert_eq!(yes.status.code(), Some(0), "{text}");
    let no = on_terminal("n\n");
    let text = String::from_utf8_lossy(&no.stdout);
    assert_eq!(no.status.code(), Some(1), "{text}");
    assert!(text.contains("declined"), "{text}");
    // No terminal: denied, and the refusal names the option that approves.
    let out = run(["call", "cli_fixture_confirm_write"]);
    assert_eq!(code(&out), 1);
    let message = one_json_line(&out)["error"]["message"].to_string();
    assert!(message.contains("--approve all"), "{message}");
}

/// Ctrl-C at the y/N question ends the program with status 130 and ends
/// the question's line first (second review, finding 7: the shell's prompt
/// landed after `[y/N] `).
#[test]
fn ctrl_c_at_the_question_ends_its_line() {
    use std::io::{Read, Write};
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    }
    let inner = format!("{} call cli_fixture_confirm_write", crate::support::BIN);
    let mut child = std::process::Command::new("script")
        .args(["-qec", &inner, "/dev/null"])
        .env_remove("TRACE_ID")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("script starts");
    let mut stdout = child.stdout.take().expect("stdout");
    let (chunks, received) = std::sync::mpsc::channel::<Vec<u8>>();
    let reader = std::thread::spawn(move || {
        // Everything the terminal shows, passed on as it comes.
        let mut buf = [0_u8; 256];
        while let Ok(n) = stdout.read(&mut buf) {
            if n == 0 || chunks.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    // A hang guard, not a speed target.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let mut stdin = child.stdin.take().expect("stdin");
    let mut seen = Vec::new();
    let mut sent = false;
    loop {
        assert!(
            std::time::Instant::now() < deadline,
            "the program did not end"
        );
        match received.recv_timeout(std::time::Duration::from_millis(50)) {
            Ok(chunk) => seen.extend_from_slice(&chunk),
            Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => break,
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
        }
        // Once the question is up: ETX, which the terminal turns into SIGINT.
        if !sent && String::from_utf8_lossy(&seen).contains("Run it? [y/N] ") {
            stdin.write_all(b"\x03").expect("write to script");
            stdin.flush().expect("flush");
            sent = true;
        }
    }
    drop(stdin);
    let status = child.wait().expect("status");
    reader.join().expect("reader");
    let text = String::from_utf8_lossy(&seen).into_owned();
    let asked = text.find("Run it? [y/N] ").expect("the question was asked");
    let after = &text[asked + "Run it? [y/N] ".len()..];
    assert!(
        after.contains('\n'),
        "no newline after the question: {text:?}"
    );
    assert_eq!(status.code(), Some(130), "{text:?}");
}

#[test]
fn a_malformed_page_url_is_refused_at_once() {
    let out = run([
        "--page-url",
        "shop.example.com",
        "call",
        "cli_fixture_context",
    ]);
    assert_eq!(code(&out), 2);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("is not a URL") && err.contains("https://"),
        "{err}"
    );
}

/// Review 23 F9: `--secrets`, `--bash-policy` and `--mcp-config` read
/// `/dev/zero` without bound and waited forever on a FIFO; now each is
/// refused at once like `--token-file`: regular files only, 1 MiB at most.
#[test]
fn file_options_refuse_fifos_devices_and_huge_files() {
    let dir = crate::support::TempDir::new();
    let fifo = dir.path().join("fifo");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .expect("mkfifo runs");
    assert!(made.success());
    let big = dir.path().join("big.json");
    std::fs::write(&big, format!("{{\"x\": \"{}\"}}", "a".repeat(2 << 20))).expect("write");
    let command = r#"{"command":"true"}"#;
    for option in ["--secrets", "--bash-policy", "--mcp-config"] {
        for (file, expected) in [
            (
                fifo.to_str().unwrap(),
                "not a regular file (a FIFO, socket or device)",
            ),
            ("/dev/zero", "not a regular file (a FIFO, socket or device)"),
            (dir.arg(), "not a regular file (a folder)"),
            (
                big.to_str().unwrap(),
                "the file is larger than 1048576 bytes",
            ),
        ] {
            let mut child = crate::support::tool()
                .args([option, file, "--workspace", dir.arg()])
                .args(["call", "bash_command", command])
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("tool starts");
            // A hang guard, not a speed target: before the fix it never ended.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
            while child.try_wait().expect("wait").is_none() {
                if std::time::Instant::now() > deadline {
                    let _ = child.kill();
                    panic!("{option} {file} hangs");
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            let out = child.wait_with_output().expect("output");
            let err = String::from_utf8_lossy(&out.stderr);
            assert_ne!(out.status.code(), Some(0), "{option} {file}: {err}");
            assert!(
                err.contains(&format!("{option} {file}: {expected}")),
                "{option} {file}: {err}"
            );
        }
    }
}

/// On a terminal an argument error is shown once (in the readable result),
/// with the schema hint after it (review of issue 24, 2026-12-02).
#[test]
fn an_argument_error_is_shown_once_on_a_terminal() {
    if std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_err()
    {
        eprintln!("SKIPPED: util-linux `script` is not installed");
        return;
    }
    let inner = format!(
        "{} call read_file --limit=-3 --file-path=x",
        crate::support::BIN
    );
    let mut cmd = std::process::Command::new("script");
    cmd.args(["-qec", &inner, "/dev/null"])
        .env_remove("TRACE_ID")
        .current_dir(env!("CARGO_MANIFEST_DIR"));
    let out = crate::support::feed(&mut cmd, "");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "{text}");
    assert!(text.contains("schema read_file"), "{text}");
    let first_line = text.lines().next().unwrap_or_default().to_owned();
    assert!(first_line.contains("(invalid_arguments)"), "{text}");
    let message = first_line
        .split(": ")
        .nth(1)
        .unwrap_or_default()
        .trim_end_matches('\r')
        .to_owned();
    assert!(!message.is_empty(), "{text}");
    assert_eq!(text.matches(&message).count(), 1, "{text}");
}

/// `tool serve --state redis://...` in a build without feature `redis`
/// refuses to start, says how to get Redis support, and never shows the
/// URL's password; `--state-prefix` needs `--state`.
#[cfg(not(feature = "redis"))]
#[test]
fn serve_state_without_redis_support_refuses_to_start_and_hides_the_password() {
    let out = crate::support::run([
        "serve",
        "--state",
        "redis://agent:Pa55-not-for-logs@127.0.0.1:1/0",
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("built without Redis support"), "{stderr}");
    assert!(stderr.contains("--features redis"), "{stderr}");
    assert!(!stderr.contains("Pa55-not-for-logs"), "{stderr}");
    assert!(out.stdout.is_empty());
    let out = crate::support::run(["serve", "--state-prefix", "team-a"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--state"), "{stderr}");
}

/// `tool serve --state` with feature `redis`: a server that does not answer
/// stops the start with status 2, naming it with the password masked; a
/// real `redis-server` (started here on a free loopback port, skipped
/// loudly when none is installed) lets it start and serve.
#[cfg(feature = "redis")]
#[test]
fn serve_state_needs_a_reachable_server_and_hides_the_password() {
    use std::net::{TcpListener, TcpStream};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    const PASSWORD: &str = "Pa55-not-for-logs";
    let free_port = || {
        TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .expect("a free loopback port")
    };
    let dead = free_port();
    let out = crate::support::run([
        "serve".to_owned(),
        "--state".to_owned(),
        format!("redis://agent:{PASSWORD}@127.0.0.1:{dead}/0"),
    ]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot be reached"), "{stderr}");
    assert!(stderr.contains("redis://***@127.0.0.1"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");

    let Some(bin) = std::env::var_os("REDIS_SERVER")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|d| d.join("redis-server"))
                .find(|p| p.is_file())
        })
    else {
        eprintln!(
            "\n!!! SKIPPED the live half: no redis-server (apt-get install redis-server) !!!\n"
        );
        return;
    };
    let dir = crate::support::TempDir::new();
    let port = free_port();
    let mut server = Command::new(bin)
        .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
        .arg("--dir")
        .arg(dir.path())
        .args([
            "--save",
            "",
            "--appendonly",
            "no",
            "--user",
            "default",
            "off",
        ])
        .args([
            "--user",
            "agent",
            "on",
            &format!(">{PASSWORD}"),
            "~*",
            "+@all",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    let deadline = Instant::now() + Duration::from_secs(30);
    while TcpStream::connect(("127.0.0.1", port)).is_err() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    // Stdin is closed at once: the server starts (the store answered and
    // the banner is printed), then ends for want of a client.
    let out = crate::support::run([
        "serve".to_owned(),
        "--no-index".to_owned(),
        "--state".to_owned(),
        format!("redis://agent:{PASSWORD}@127.0.0.1:{port}/0"),
        "--state-prefix".to_owned(),
        "team-a".to_owned(),
    ]);
    let _ = server.kill();
    let _ = server.wait();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("over stdio"), "{stderr}");
    assert!(!stderr.contains("--state"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");
}

/// `tool serve --state-file`: the URL comes from a private file, so the
/// password is in no argument; a file group or others may read is refused
/// unread, and no message shows the password.
#[test]
fn serve_state_file_must_be_private_and_its_password_is_never_shown() {
    use std::os::unix::fs::PermissionsExt;

    const PASSWORD: &str = "Pa55-not-for-logs";
    let dir = crate::support::TempDir::new();
    let file = dir.path().join("redis-url");
    // Port 1 on loopback: nothing answers there.
    std::fs::write(&file, format!("redis://agent:{PASSWORD}@127.0.0.1:1/0\n")).unwrap();
    let path = file.to_str().unwrap();

    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = crate::support::run(["serve", "--state-file", path]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("group or others may access the file (mode 640)"),
        "{stderr}"
    );
    assert!(stderr.contains("chmod 600"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");

    // Private: read, and then refused for the server (unreachable, or no
    // Redis support in this build), the password masked either way.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let out = crate::support::run(["serve", "--state-file", path]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot be reached") || stderr.contains("built without Redis support"),
        "{stderr}"
    );
    assert!(!stderr.contains("group or others"), "{stderr}");
    assert!(!stderr.contains(PASSWORD), "{stderr}");

    // An empty first line, and --state with --state-file, are usage errors.
    std::fs::write(&file, "\n").unwrap();
    let out = crate::support::run(["serve", "--state-file", path]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("the first line is empty"), "{stderr}");
    let out = crate::support::run(["serve", "--state-file", path, "--state", "redis://h/0"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot be used with"));
    // --state-prefix goes with either.
    let out = crate::support::run(["serve", "--state-prefix", "team-a"]);
    assert_eq!(out.status.code(), Some(2));
}
