//! `tool call`: the result object, argument syntax, exit codes, binary output.

use serde_json::{Value, json};

use crate::support::{TempDir, code, one_json_line, run, run_with_stdin, stderr, stdout};

const KEYS: [&str; 10] = [
    "trace_id",
    "tool",
    "title",
    "output",
    "error",
    "notes",
    "metadata",
    "long_term_memory",
    "images",
    "attachments",
];

#[test]
fn success_prints_one_object_with_every_key_and_exits_0() {
    let out = run(["call", "cli_fixture_echo", r#"{"text": "hi"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    let keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    let mut expected = KEYS.to_vec();
    expected.sort_unstable();
    let mut got = keys.clone();
    got.sort_unstable();
    assert_eq!(got, expected);
    assert_eq!(v["tool"], "cli_fixture_echo");
    assert_eq!(v["title"], "echo");
    assert_eq!(v["output"], "hi");
    assert_eq!(v["error"], Value::Null);
    assert_eq!(v["images"], json!([]));
    assert_eq!(v["notes"], json!([]));
    assert!(stderr(&out).is_empty());
}

#[test]
fn repaired_arguments_are_noted_in_the_output() {
    for (args, note) in [
        (
            r#"{"ms": "1"}"#,
            "argument `ms` was given as the string \"1\" and read as the number 1",
        ),
        (
            r#"{"arguments": {"ms": 1}}"#,
            "the arguments were wrapped in an object under `arguments`, and the parameters inside it were used; send them at the top level",
        ),
        (r#"{"ms": 1.0}"#, ""),
    ] {
        let out = run(["call", "cli_fixture_sleep", args]);
        assert_eq!(code(&out), 0, "{args}: {}", stderr(&out));
        let v = one_json_line(&out);
        let expected = if note.is_empty() {
            json!([])
        } else {
            json!([note])
        };
        assert_eq!(v["notes"], expected, "{args}");
        // A whole float reaches the tool as an integer (its handler reads `as_u64`).
        assert_eq!(v["output"], "slept 1 ms", "{args}");
    }
}

#[test]
fn key_value_pairs_parse_as_json_when_they_can() {
    let out = run([
        "call",
        "cli_fixture_args",
        "--limit=5",
        "--query=hello",
        "--tags=[\"a\"]",
        "--flag=true",
        "--ratio=0.5",
        "--nothing=null",
        "--quoted=\"5\"",
        "--key-with-dashes=x",
        "--bare",
        "--spaced",
        "two words",
        "--neg",
        "-3",
        "--eq=a=b",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        one_json_line(&out)["output"],
        json!({
            "limit": 5, "query": "hello", "tags": ["a"], "flag": true, "ratio": 0.5,
            "nothing": null, "quoted": "5", "key_with_dashes": "x", "bare": true,
            "spaced": "two words", "neg": -3, "eq": "a=b"
        })
    );
}

#[test]
fn json_object_and_pairs_combine() {
    let out = run([
        "call",
        "cli_fixture_args",
        r#"{"a": 1, "b": {"c": [1, 2]}}"#,
        "--a=2",
    ]);
    assert_eq!(code(&out), 0);
    assert_eq!(
        one_json_line(&out)["output"],
        json!({"a": 2, "b": {"c": [1, 2]}})
    );

    let out = run_with_stdin(
        &["call", "cli_fixture_args", "-", "--z=1"],
        r#"{"from": "stdin"}"#,
    );
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        one_json_line(&out)["output"],
        json!({"from": "stdin", "z": 1})
    );

    let out = run(["call", "cli_fixture_args"]);
    assert_eq!(one_json_line(&out)["output"], json!({}));
}

#[test]
fn tool_options_after_the_name_belong_to_the_tool() {
    let out = run([
        "call",
        "cli_fixture_args",
        "--timeout=5",
        "--workspace=/nope",
        "--help",
        "--version",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        one_json_line(&out)["output"],
        json!({"timeout": 5, "workspace": "/nope", "help": true, "version": true})
    );
}

#[test]
fn help_after_the_tool_name_describes_the_tool() {
    for flag in ["--help", "-h"] {
        let out = run(["call", "cli_fixture_echo", flag]);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        assert!(
            text.starts_with("cli_fixture_echo (read)\n\nReturn `text` unchanged."),
            "{text}"
        );
        assert!(text.contains("  --text=<string>, required\n"), "{text}");
        assert!(text.contains("tool schema cli_fixture_echo"), "{text}");
        // An enum (behind a `$ref`, optional) shows its values, not `<json>`.
        let out = run(["call", "read_images", flag]);
        let text = stdout(&out);
        assert!(
            text.contains("  --layout=<grid|separate>, optional\n"),
            "{text}"
        );
        assert!(text.contains("  --paths=<array>, required\n"), "{text}");
        // A default is shown (second review, finding 7).
        let text = stdout(&run(["call", "read_file", flag]));
        assert!(
            text.contains("  --offset=<integer>, optional, default 1\n"),
            "{text}"
        );
    }
    let out = run(["call", "cli_fixture_nope", "--help"]);
    assert_eq!(code(&out), 2);
}

#[test]
fn json_output_is_embedded_not_double_encoded() {
    // Key order and number spelling are kept as the tool wrote them.
    let tool_text = r#"{"nested": {"k": "v \"q\""}, "n": 1.50}"#;
    let args = json!({ "text": tool_text }).to_string();
    let out = run(["call", "cli_fixture_echo", &args]);
    let text = stdout(&out);
    assert!(!text.contains(r#"\"nested\""#), "double-encoded: {text}");
    assert!(
        text.contains(r#""output":{"nested":{"k":"v \"q\""},"n":1.50}"#),
        "{text}"
    );
    let out = run(["call", "cli_fixture_args", r#"{"nested": {"k": "v"}}"#]);
    let v = one_json_line(&out);
    assert!(v["output"].is_object());

    // Text that is not a JSON object or array stays a string.
    for text in [
        "plain",
        "42",
        "null",
        "\"s\"",
        "{not json",
        "[1, 2] and more",
    ] {
        let args = json!({ "text": text }).to_string();
        let out = run(["call", "cli_fixture_echo", &args]);
        assert_eq!(one_json_line(&out)["output"], json!(text), "{text}");
    }
    // Indented JSON output still yields one line.
    let out = run(["call", "cli_fixture_echo", r#"{"text": "[\n 1,\n 2\n]\n"}"#]);
    assert_eq!(one_json_line(&out)["output"], json!([1, 2]));
}

#[test]
fn a_tool_error_exits_1_with_kind_message_and_partial_output() {
    let out = run(["call", "cli_fixture_fail"]);
    assert_eq!(code(&out), 1);
    let v = one_json_line(&out);
    assert_eq!(
        v["error"],
        json!({"kind": "failed", "message": "the fixture failed on purpose"})
    );
    assert_eq!(v["output"], "partial");
}

#[test]
fn a_panicking_tool_exits_1_and_the_program_survives() {
    let out = run(["call", "cli_fixture_panic"]);
    assert_eq!(code(&out), 1);
    assert_eq!(one_json_line(&out)["error"]["kind"], "panicked");
    assert!(!stderr(&out).contains("stack backtrace"));
}

#[test]
fn unknown_tool_is_a_usage_error_with_suggestions() {
    let out = run(["call", "cli_fixture_ecko", "--text=x"]);
    assert_eq!(code(&out), 2);
    // stdout (a pipe) gets the JSON error object, as for any failed call.
    assert_eq!(one_json_line(&out)["error"]["kind"], "unknown_tool");
    let err = stderr(&out);
    assert!(err.contains("unknown tool `cli_fixture_ecko`"), "{err}");
    assert!(err.contains("`cli_fixture_echo`"), "{err}");
}

#[test]
fn unparsable_arguments_are_usage_errors() {
    for args in [
        vec!["call", "cli_fixture_args", "{\"a\": "],
        vec!["call", "cli_fixture_args", "[1, 2]"],
        vec!["call", "cli_fixture_args", "--a=1", "stray"],
        vec!["call", "cli_fixture_args", "--a=1", "--a=2"],
        vec!["call", "cli_fixture_args", "--=1"],
    ] {
        let out = run(&args);
        assert_eq!(code(&out), 2, "{args:?}");
        assert_eq!(
            one_json_line(&out)["error"]["kind"],
            "invalid_arguments",
            "{args:?}"
        );
        assert!(
            stderr(&out).starts_with("error: "),
            "{args:?}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn arguments_the_tool_rejects_exit_2_with_the_result_printed() {
    // (`--text=5` would be the string "5": `text` takes only strings.) The
    // tool is built at run time, so its schema is checked before it runs.
    let out = run(["call", "cli_fixture_echo", r#"{"text": 5}"#]);
    assert_eq!(code(&out), 2);
    assert_eq!(one_json_line(&out)["error"]["kind"], "invalid_arguments");
    assert!(
        stderr(&out).contains(
            "Invalid value for parameter `text` of `cli_fixture_echo`: expected a string"
        ),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).ends_with("Run `tool schema cli_fixture_echo` to see the parameters.\n"),
        "the tool's own name: {}",
        stderr(&out)
    );
}

#[test]
fn key_value_pairs_for_text_parameters_stay_text() {
    let out = run(["call", "cli_fixture_echo", "--text=123"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(one_json_line(&out)["output"], "123");
    let out = run(["call", "cli_fixture_echo", "--text=\"quoted\""]);
    assert_eq!(one_json_line(&out)["output"], "\"quoted\"");
}

#[test]
fn pretty_prints_one_object_over_several_lines() {
    let out = run(["call", "--pretty", "cli_fixture_echo", "--text=hi"]);
    assert_eq!(code(&out), 0);
    let text = stdout(&out);
    assert!(text.lines().count() > 5);
    let v: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["output"], "hi");
}

#[test]
fn images_and_inline_attachments_go_to_files_never_to_stdout() {
    let dir = TempDir::new();
    let out = run(["call", "--out", dir.arg(), "cli_fixture_binary"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("iVBORw0KGgo"), "base64 on stdout: {text}");
    assert!(!text.contains("aGVsbG8K"), "base64 on stdout: {text}");
    let v = one_json_line(&out);

    let image = &v["images"][0];
    assert_eq!(image["media_type"], "image/png");
    let path = image["path"].as_str().unwrap();
    assert!(
        path.starts_with(dir.arg()) && path.ends_with(".png"),
        "{path}"
    );
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(image["bytes"], bytes.len());

    let broken = &v["images"][1];
    assert_eq!(broken["path"], Value::Null);
    assert!(broken["error"].as_str().unwrap().contains("base64"));

    // An inline attachment is written under its (confined) name.
    let inline = &v["attachments"][0];
    assert_eq!(inline["name"], "../notes.txt");
    let path = inline["path"].as_str().unwrap();
    assert_eq!(path, dir.path().join("notes.txt").to_str().unwrap());
    assert_eq!(std::fs::read_to_string(path).unwrap(), "hello\n");
    // An attachment already on disk is reported as it is.
    assert_eq!(v["attachments"][1]["path"], "/var/log/x.log");

    // A second call never overwrites the first call's files.
    let again = one_json_line(&run(["call", "--out", dir.arg(), "cli_fixture_binary"]));
    assert_ne!(again["images"][0]["path"], v["images"][0]["path"]);
    assert!(
        again["attachments"][0]["path"]
            .as_str()
            .unwrap()
            .ends_with("notes-2.txt")
    );
}

#[test]
fn binary_output_defaults_to_a_private_folder_per_trace_id() {
    use std::os::unix::fs::PermissionsExt;
    let trace = format!("cli-test-{}", std::process::id());
    let out = run(["call", "--trace-id", &trace, "cli_fixture_binary"]);
    assert_eq!(code(&out), 0);
    let v = one_json_line(&out);
    let path = std::path::PathBuf::from(v["images"][0]["path"].as_str().unwrap());
    let folder = path.parent().unwrap().to_path_buf();
    let private = tool_core::truncate::private_dir_location();
    assert_eq!(folder, private.join("out").join(&trace));
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&private), 0o700);
    assert_eq!(mode(&folder), 0o700);
    assert!(path.is_file());
    std::fs::remove_dir_all(&folder).unwrap();
    // A symlink planted as the trace's folder is refused, and nothing is written through it.
    let target = TempDir::new();
    std::os::unix::fs::symlink(target.path(), &folder).unwrap();
    let out = run(["call", "--trace-id", &trace, "cli_fixture_binary"]);
    let v = one_json_line(&out);
    assert_eq!(v["images"][0]["path"], Value::Null);
    let error = v["images"][0]["error"].as_str().unwrap();
    assert!(error.contains("it is a symbolic link"), "{error}");
    assert!(error.contains("--out DIR"), "{error}");
    assert_eq!(std::fs::read_dir(target.path()).unwrap().count(), 0);
    std::fs::remove_file(&folder).unwrap();
}

/// `$XDG_RUNTIME_DIR/agent-tools` is the private dir when the variable names
/// an absolute folder of the user's; else the temp dir's `agent-tools-<uid>`.
#[test]
fn the_private_dir_follows_xdg_runtime_dir_only_when_it_is_the_users() {
    let trace = format!("cli-xdg-{}", std::process::id());
    let image_folder = |xdg: &std::ffi::OsStr| {
        let out = crate::support::tool()
            .env("XDG_RUNTIME_DIR", xdg)
            .args(["call", "--trace-id", &trace, "cli_fixture_binary"])
            .output()
            .unwrap();
        let v = one_json_line(&out);
        let path = v["images"][0]["path"]
            .as_str()
            .map(std::path::PathBuf::from);
        (
            path.map(|p| p.parent().unwrap().to_path_buf()),
            v["images"][0]["error"].clone(),
        )
    };
    let runtime = TempDir::new();
    let uid = std::os::unix::fs::MetadataExt::uid(&std::fs::metadata(runtime.path()).unwrap());
    let (folder, _) = image_folder(runtime.path().as_os_str());
    assert_eq!(
        folder.unwrap(),
        runtime.path().join("agent-tools/out").join(&trace)
    );
    // Unusable values fall back to the temp dir.
    let fallback = std::env::temp_dir()
        .join(format!("agent-tools-{uid}"))
        .join("out")
        .join(&trace);
    for bad in ["relative/run", "/nonexistent/run-dir", ""] {
        let (folder, error) = image_folder(std::ffi::OsStr::new(bad));
        assert_eq!(folder.as_ref(), Some(&fallback), "{bad:?}: {error}");
    }
    if uid == 0 {
        let theirs = TempDir::new();
        std::os::unix::fs::chown(theirs.path(), Some(65534), None).unwrap();
        let (folder, _) = image_folder(theirs.path().as_os_str());
        assert_eq!(
            folder,
            Some(fallback.clone()),
            "another user's runtime dir is not used"
        );
    }
    std::fs::remove_dir_all(&fallback).unwrap();
    // A symlink planted as the private dir itself is refused.
    let planted = TempDir::new();
    std::os::unix::fs::symlink(runtime.path(), planted.path().join("agent-tools")).unwrap();
    let (folder, error) = image_folder(planted.path().as_os_str());
    assert_eq!(folder, None);
    let error = error.as_str().unwrap();
    assert!(
        error.contains("agent-tools: it is a symbolic link"),
        "{error}"
    );
}

/// A one-shot call prints where the full output is; a later call of the same
/// trace reads it, another trace cannot, and the file holds no secret value.
#[test]
fn spill_file_outlives_the_call_is_masked_and_stays_with_its_trace() {
    let dir = TempDir::new();
    let secrets = dir.path().join("secrets.json");
    std::fs::write(&secrets, r#"{"api_key": "sk-cli-0123456789"}"#).unwrap();
    let trace = format!("cli-spill-{}", std::process::id());
    let command =
        json!({"command": "for i in $(seq 1 3000); do echo \"$i <secret>api_key</secret>\"; done"});
    let out = run([
        "call",
        "--workspace",
        dir.arg(),
        "--trace-id",
        &trace,
        "--secrets",
        secrets.to_str().unwrap(),
        "bash_command",
        &command.to_string(),
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    let spill = v["metadata"]["output_path"].as_str().unwrap().to_owned();
    let saved = std::fs::read_to_string(&spill).unwrap();
    assert!(!saved.contains("sk-cli-0123456789"));
    assert_eq!(saved.matches("<secret>api_key</secret>").count(), 3000);
    let read = json!({"file_path": spill, "offset": 2999, "limit": 1}).to_string();
    let out = run([
        "call",
        "--workspace",
        dir.arg(),
        "--trace-id",
        &trace,
        "read_file",
        &read,
    ]);
    assert_eq!(code(&out), 0, "{}", stdout(&out));
    assert!(
        one_json_line(&out)["output"]
            .as_str()
            .unwrap()
            .contains("2999 <secret>api_key</secret>")
    );
    let other = format!("{trace}-other");
    let out = run([
        "call",
        "--workspace",
        dir.arg(),
        "--trace-id",
        &other,
        "read_file",
        &read,
    ]);
    assert_eq!(code(&out), 1);
    let v = one_json_line(&out);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("outside the workspace"),
        "{v}"
    );
    std::fs::remove_dir_all(std::path::Path::new(&spill).parent().unwrap()).unwrap();
}

#[test]
fn read_images_writes_the_composed_grid_to_the_out_file() {
    // A 1×1 PNG, twice: a grid of two 500 px cells, 1024 × 516 px.
    let png = tool_cli_png();
    let ws = TempDir::new();
    std::fs::write(ws.path().join("a.png"), &png).unwrap();
    std::fs::write(ws.path().join("b.png"), &png).unwrap();
    let file = ws.path().join("shots").join("grid.png");
    let out = run([
        "call",
        "--workspace",
        ws.arg(),
        "--out",
        file.to_str().unwrap(),
        "read_images",
        r#"--paths=["a.png", "b.png"]"#,
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    assert_eq!(v["images"][0]["path"], file.to_str().unwrap(), "{v}");
    let bytes = std::fs::read(&file).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1024, 516));
    assert!(v["output"].as_str().unwrap().contains("1: a.png ("), "{v}");
    // A second call replaces the file the user named.
    let again = one_json_line(&run([
        "call",
        "--workspace",
        ws.arg(),
        "--out",
        file.to_str().unwrap(),
        "read_images",
        r#"--paths=["a.png", "b.png"]"#,
    ]));
    assert_eq!(again["images"][0]["path"], v["images"][0]["path"]);
}

#[allow(
    clippy::unwrap_used,
    reason = "a fixed, valid base64 constant: a failure is a bug in the test"
)]
pub(crate) fn tool_cli_png() -> Vec<u8> {
    // Standard base64 decoding of a 1×1 RGBA PNG, done by hand to need no crate here.
    const B64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    let alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut bits = 0u32;
    let mut n = 0;
    let mut out = Vec::new();
    for c in B64.bytes().filter(|&c| c != b'=') {
        let v = u32::try_from(alphabet.iter().position(|&a| a == c).unwrap()).unwrap();
        bits = (bits << 6) | v;
        n += 6;
        if n >= 8 {
            n -= 8;
            out.push(u8::try_from((bits >> n) & 0xFF).unwrap());
        }
    }
    out
}

#[test]
fn toolset_methods_are_called_like_any_tool() {
    let out = run(["call", "cli_fixture_note_add", r#"{"text": "milk"}"#]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(one_json_line(&out)["output"], "1");
    let out = run(["call", "cli_fixture_note_list", "{}"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    // A new process, a new instance: the list starts empty.
    assert_eq!(one_json_line(&out)["output"], json!([]));
    let out = run(["call", "cli_fixture_note_add", r#"{"txt": "milk"}"#]);
    assert_ne!(code(&out), 0);
    let v = one_json_line(&out);
    assert_eq!(v["error"]["kind"], "invalid_arguments");
}

#[test]
fn a_flattened_struct_s_fields_are_top_level_parameters() {
    // The schema the CLI prints lists the struct's fields, not the struct.
    let out = run(["schema", "cli_fixture_note_find"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let schemas: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let parameters = &schemas[0]["parameters"];
    let names: Vec<&String> = parameters["properties"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(names, ["words", "caseSensitive", "limit"], "{schemas}");
    assert_eq!(parameters["required"], json!(["words"]));
    assert_eq!(
        parameters["properties"]["words"]["description"],
        "Words the note contains."
    );
    // `--key=value` pairs reach the fields by their serde names, typed by the schema.
    let input = [
        r#"{"name": "cli_fixture_note_add", "arguments": {"text": "Milk"}}"#,
        r#"{"name": "cli_fixture_note_add", "arguments": {"text": "tea"}}"#,
        r#"{"name": "cli_fixture_note_find", "arguments": {"words": "milk"}}"#,
        r#"{"name": "cli_fixture_note_find", "arguments": {"words": "milk", "caseSensitive": true}}"#,
        r#"{"name": "cli_fixture_note_find", "arguments": {"word": "milk"}}"#,
    ]
    .join("\n");
    let out = run_with_stdin(&["batch"], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let lines = crate::support::json_lines(&out);
    assert_eq!(lines[2]["output"], json!(["Milk"]));
    assert_eq!(lines[3]["output"], json!([]));
    assert_eq!(lines[4]["error"]["kind"], "invalid_arguments");
    assert_eq!(
        lines[4]["error"]["message"],
        "Missing required parameter `words` of `cli_fixture_note_find`: expected a string. The arguments also contain the unknown parameter `word`, which `cli_fixture_note_find` does not take."
    );
    let out = run([
        "call",
        "cli_fixture_note_find",
        "--words=milk",
        "--caseSensitive=true",
        "--limit=2",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(one_json_line(&out)["output"], json!([]));
}

/// Runs `tool ARGS` with stdout on a pseudo-terminal (util-linux `script`),
/// stdin still `/dev/null`; returns what the terminal showed.
fn on_a_terminal(args: &[&str]) -> String {
    let mut command = String::from(crate::support::BIN);
    for a in args {
        command.push_str(" '");
        command.push_str(&a.replace('\'', r"'\''"));
        command.push('\'');
    }
    let out = std::process::Command::new("script")
        .args(["-qec", &command, "/dev/null"])
        .env_remove("TRACE_ID")
        .env("TRACE_ID", "t-terminal")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(std::process::Stdio::null())
        .output()
        .expect("util-linux `script` runs");
    String::from_utf8_lossy(&out.stdout).replace("\r\n", "\n")
}

/// Cross-cutting decision 9: readable text only when stdout is a terminal
/// (stdin plays no part), the JSON object otherwise; `--json` / `--text` force one.
#[test]
fn a_terminal_gets_text_a_pipe_gets_json_and_the_flags_force_one() {
    let shown = on_a_terminal(&["call", "cli_fixture_echo", r#"{"text": "hi"}"#]);
    assert_eq!(shown, "== echo\nhi\n(trace t-terminal)\n");
    let forced = on_a_terminal(&["call", "--json", "cli_fixture_echo", r#"{"text": "hi"}"#]);
    let v: Value = serde_json::from_str(forced.trim()).expect("one JSON object");
    assert_eq!(v["output"], "hi");
    // A pipe: exactly the JSON object, as before.
    let out = run(["call", "cli_fixture_echo", r#"{"text": "hi"}"#]);
    assert_eq!(one_json_line(&out)["output"], "hi");
    // --text on a pipe: the readable form, errors included.
    let out = run([
        "--trace-id",
        "t-pipe",
        "call",
        "--text",
        "cli_fixture_echo",
        r#"{"text": "hi"}"#,
    ]);
    assert_eq!(stdout(&out), "== echo\nhi\n(trace t-pipe)\n");
    let out = run(["--trace-id", "t-fail", "call", "--text", "cli_fixture_fail"]);
    assert_eq!(code(&out), 1);
    assert_eq!(
        stdout(&out),
        "partial\nerror (failed): the fixture failed on purpose\n(trace t-fail)\n"
    );
    let out = run(["call", "--json", "--text", "cli_fixture_echo"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
}

#[test]
fn a_url_scoped_tool_without_a_page_says_how_to_give_one() {
    let out = run(["call", "cli_fixture_shop_only"]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let v = one_json_line(&out);
    assert_eq!(v["error"]["kind"], "denied");
    assert_eq!(
        stderr(&out).trim_end(),
        "hint: `cli_fixture_shop_only` runs only on pages matching https://shop.example/*; \
         give the page with `tool --page-url URL call cli_fixture_shop_only …`"
    );
    // On its page it runs, and no hint is printed.
    let out = run([
        "--page-url",
        "https://shop.example/cart",
        "call",
        "cli_fixture_shop_only",
    ]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(one_json_line(&out)["output"], "on the shop's page");
    // `list` marks it.
    let listed = stdout(&run(["list"]));
    let line = listed
        .lines()
        .find(|l| l.starts_with("cli_fixture_shop_only "))
        .expect("listed");
    assert!(
        line.ends_with("[only with --page-url matching https://shop.example/*]"),
        "{line}"
    );
}
