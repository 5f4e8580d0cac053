//! `tool list`, help texts and the command line itself.

use crate::support::{code, run, stderr, stdout};

#[test]
fn list_prints_name_kind_and_summary() {
    let out = run(["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let line = text
        .lines()
        .find(|l| l.starts_with("cli_fixture_echo "))
        .expect("the echo fixture is listed");
    let words: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(words[1], "read");
    assert_eq!(words[2..].join(" "), "Return `text` unchanged.");
    let mut names: Vec<&str> = text.lines().filter_map(|l| l.split(' ').next()).collect();
    let listed = names.clone();
    names.sort_unstable();
    assert_eq!(listed, names, "tools are listed in name order");
}

/// The toolbox of issue 27 is listed, each with its kind: the web, the task
/// list, asking the person and the background-job tools.
#[test]
fn list_shows_the_toolbox_built_ins_with_their_kinds() {
    let out = run(["list"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    let kind_of = |name: &str| {
        text.lines()
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            .find(|w| w.first() == Some(&name))
            .and_then(|w| w.get(1).map(|k| (*k).to_owned()))
    };
    for (name, kind) in [
        ("web_fetch", "network"),
        ("web_search", "network"),
        ("todo_write", "write"),
        ("todo_read", "read"),
        ("ask_user", "read"),
        ("job_output", "read"),
        ("job_kill", "exec"),
        ("job_list", "read"),
    ] {
        assert_eq!(kind_of(name).as_deref(), Some(kind), "{name} in:\n{text}");
    }
}

#[test]
fn list_json_gives_the_specs() {
    let out = run(["list", "--json"]);
    assert_eq!(code(&out), 0);
    let specs: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let echo = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "cli_fixture_echo")
        .expect("echo spec");
    assert_eq!(echo["kind"], "read");
    assert_eq!(echo["description"], "Return `text` unchanged.");
    assert_eq!(echo["parameters"]["required"][0], "text");
    let confirm = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "cli_fixture_confirm_write")
        .unwrap();
    assert_eq!(confirm["requires_confirmation"], true);
}

#[test]
fn every_command_has_help_with_examples() {
    for args in [
        vec!["--help"],
        vec!["list", "--help"],
        vec!["schema", "--help"],
        vec!["call", "--help"],
        vec!["batch", "--help"],
        vec!["help", "call"],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 0, "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.contains("Examples:"),
            "{args:?} help lacks examples:\n{text}"
        );
        assert!(text.contains("Usage: tool"), "{args:?}");
    }
    assert!(stdout(&run(["call", "--help"])).contains("--file-path"));
}

#[test]
fn no_command_or_a_wrong_one_is_a_usage_error() {
    let out = run::<[&str; 0], &str>([]);
    assert_eq!(code(&out), 2);
    assert!(stderr(&out).contains("Usage: tool"));

    let out = run(["lsit"]);
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("list"),
        "suggests `list`: {}",
        stderr(&out)
    );

    let out = run(["list", "--bogus"]);
    assert_eq!(code(&out), 2);
    assert!(stdout(&out).is_empty());
}

#[test]
fn version_prints_and_succeeds() {
    let out = run(["--version"]);
    assert_eq!(code(&out), 0);
    assert!(stdout(&out).starts_with("tool "));
}

#[test]
fn odd_command_lines_never_panic() {
    use std::ffi::OsString;
    use std::os::unix::ffi::OsStringExt;

    let odd: Vec<Vec<OsString>> = vec![
        vec![OsString::from_vec(vec![0xff, 0xfe])],
        vec!["call".into(), OsString::from_vec(vec![b'x', 0xff])],
        vec![
            "call".into(),
            "cli_fixture_args".into(),
            OsString::from_vec(vec![b'-', b'-', b'k', b'=', 0xff]),
        ],
        vec!["call".into(), "".into()],
        vec!["call".into(), "cli_fixture_args".into(), "--".into()],
        vec![
            "call".into(),
            "cli_fixture_args".into(),
            "-".into(),
            "-".into(),
        ],
        vec!["call".into(), "cli_fixture_args".into(), "{\"a\":".into()],
        vec!["schema".into(), "".into(), "é".into()],
        vec!["--timeout".into(), "-0".into(), "list".into()],
        vec![
            "--trace-id".into(),
            "../../x\n".into(),
            "call".into(),
            "cli_fixture_args".into(),
        ],
        vec!["batch".into(), "extra".into()],
    ];
    for args in odd {
        let out = run(&args);
        let status = code(&out);
        assert!((0..=2).contains(&status), "{args:?} exited {status}");
        assert!(
            !stderr(&out).contains("panicked"),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

/// Whether the file at `path` contains `needle`, read in 1 MiB pieces.
fn file_contains(path: &str, needle: &[u8]) -> bool {
    use std::io::Read;
    let mut file = std::fs::File::open(path).expect("open the binary");
    let mut window: Vec<u8> = Vec::new();
    let mut piece = vec![0_u8; 1 << 20];
    loop {
        let n = file.read(&mut piece).expect("read the binary");
        if n == 0 {
            return false;
        }
        window.extend_from_slice(&piece[..n]);
        if memchr::memmem::find(&window, needle).is_some() {
            return true;
        }
        // Keep the tail, in case the needle straddles two pieces.
        let keep = window.len().min(needle.len() - 1);
        window.drain(..window.len() - keep);
    }
}

/// Issue 23 item 15: `cargo test` (and `cargo build --all-targets`) turn on
/// the `fixtures` feature through the dev-dependency on this package; the
/// `tool` binary they build must still hold no test tool, by name or code.
#[test]
fn the_tool_binary_holds_no_fixture_tools() {
    let out = std::process::Command::new(crate::support::TOOL)
        .args(["list", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("the tool binary runs");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let tools: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
    let names: Vec<&str> = tools
        .as_array()
        .expect("an array")
        .iter()
        .filter_map(|t| t.get("name").and_then(serde_json::Value::as_str))
        .collect();
    assert!(names.contains(&"read_file"), "{names:?}");
    assert!(
        !names.iter().any(|n| n.starts_with("cli_fixture_")),
        "{names:?}"
    );
    assert!(!file_contains(crate::support::TOOL, b"cli_fixture_"));
    // The fixtures binary does hold them (the scan can find what it looks for).
    assert!(file_contains(crate::support::BIN, b"cli_fixture_"));
}
