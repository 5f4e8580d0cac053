//! An application's own program (no built-ins) and one whose registry is
//! empty (third new-user review: H1, M2), run as `tool-fixtures` with
//! `TOOL_FIXTURES_APP` set.

use crate::support::tool;

fn run_as(mode: &str, args: &[&str]) -> std::process::Output {
    tool()
        .env("TOOL_FIXTURES_APP", mode)
        .args(args)
        .output()
        .expect("the tool binary runs")
}

#[test]
fn an_empty_registry_is_warned_about_on_list_call_and_serve() {
    for args in [&["list"][..], &["call", "price", "--sku=MUG-1"], &["serve"]] {
        let out = run_as("empty", args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("warning: no tools registered: tool-fixtures's registry is empty. If its `#[tool]` fns are in a library crate, the bin must reference that library (e.g. `use my_lib as _;` in main.rs)"),
            "{args:?}: {stderr}"
        );
    }
    // An app with tools gets no such warning.
    let out = run_as("app", &["list"]);
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !String::from_utf8_lossy(&out.stderr).contains("no tools registered"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("cli_fixture_note_add"));
}

#[test]
fn no_index_is_refused_by_an_app_without_the_search_tools() {
    let out = run_as("app", &["serve", "--no-index"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim_end(),
        "error: --no-index configures the built-in search tools' content index (grep_content, glob_files, list_dir), which tool-fixtures does not include, so it would do nothing; remove it"
    );
}

/// `index` / `skills` alone print their help: in the app's name, saying when
/// the app refuses them (fourth new-user review, S6).
#[test]
fn the_hidden_builtin_commands_help_names_the_app() {
    for (command, says) in [
        ("index", "tool-fixtures refuses `index`"),
        ("skills", "tool-fixtures\nrefuses it"),
    ] {
        let out = run_as("app", &[command, "--help"]);
        let help = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{command}: {help}");
        assert!(help.contains(says), "{command}: {help}");
        assert!(!help.contains("  tool "), "{command}: {help}");
        assert!(!help.contains("`tool "), "{command}: {help}");
    }
    let out = run_as("app", &["index"]);
    assert_eq!(out.status.code(), Some(2));
    let help = String::from_utf8_lossy(&out.stderr);
    assert!(
        help.contains("tool-fixtures --workspace ~/project index build"),
        "{help}"
    );
    assert!(!help.contains("  tool "), "{help}");
}

#[test]
fn lsp_refusal_reads_as_a_sentence() {
    let out = run_as("app", &["--lsp", "py=pylsp", "list"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr)
            .starts_with("error: --lsp configures the built-in file tools (write_file, edit_file, …), which tool-fixtures does not include"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn every_usage_error_of_call_prints_the_json_error_object() {
    // Unknown tool, arguments that do not parse, invalid arguments: one JSON
    // object on stdout each (stdout is a pipe here), the message on stderr, status 2.
    let cases: [(&[&str], &str); 3] = [
        (&["call", "cli_fixture_note_ad", "{}"], "unknown_tool"),
        (
            &["call", "cli_fixture_note_add", "not-json"],
            "invalid_arguments",
        ),
        (
            &["call", "cli_fixture_note_add", r#"{"text": 5}"#],
            "invalid_arguments",
        ),
    ];
    for (args, kind) in cases {
        let out = run_as("app", args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let v = crate::support::one_json_line(&out);
        assert_eq!(v["error"]["kind"], kind, "{args:?}: {v}");
        assert!(!String::from_utf8_lossy(&out.stderr).is_empty(), "{args:?}");
    }
    let out = run_as("app", &["call", "cli_fixture_note_ad", "{}"]);
    assert!(
        crate::support::one_json_line(&out)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("Did you mean `cli_fixture_note_add`")
    );
}
