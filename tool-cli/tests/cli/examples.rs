//! Every example in `tool`'s help texts and in the README's command-line
//! section runs, as written, in a small workspace and succeeds. Examples
//! that need a second program or a network service are listed in
//! [`SKIPPED`] with the reason (and the tests that cover them instead).

use std::path::Path;
use std::process::Command;

use crate::support::{BIN, TempDir};

/// Examples not run here: (text they contain, why).
const SKIPPED: &[(&str, &str)] = &[
    ("| jq", "needs jq, a second program"),
    (
        "cargo install",
        "installs from crates.io (network, a full release build); CI builds the workspace instead",
    ),
    (
        "coproc tool batch",
        "a bash coprocess holding a live batch; batch::* tests cover streaming",
    ),
    (
        "tool serve",
        "an MCP server: needs an MCP client or a network port; mcp::* tests cover it",
    ),
    (
        "--mcp-config",
        "needs a second MCP server program; mcp::* tests cover it",
    ),
    (
        "\"job-…\"",
        "names the id an earlier call returned; jobs::* tests read and kill real jobs",
    ),
    (
        "--example agent",
        "needs a model server; tool-agent/tests/e2e.sh runs it against a local llama.cpp server",
    ),
    (
        "--lsp ",
        "needs a language server; diagnostics::* tests run pylsp through --lsp",
    ),
];

/// The examples of one help text: the lines after `Examples:` up to the
/// first blank line, `\`-continued lines joined, a trailing explanation
/// (after a run of three or more spaces, or in parentheses) dropped.
fn help_examples(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut inside = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim() == "Examples:" {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if line.trim().is_empty() {
            inside = false;
            continue;
        }
        let line = line.trim();
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        let whole = format!("{pending}{line}");
        pending.clear();
        let command = whole
            .split("   ")
            .next()
            .unwrap_or_default()
            .trim()
            .to_owned();
        // A line that starts with no command is the previous example's explanation, wrapped.
        let starts = ["tool", "printf", "echo", "TRACE_ID=", "coproc"];
        if starts.iter().any(|w| command.starts_with(w)) {
            out.push(command);
        }
    }
    out
}

/// The shell examples of the README's fenced `sh` blocks, with
/// `cargo run --release -p tool-cli --` read as `tool`.
fn readme_examples(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.starts_with("```") {
            in_sh = line.trim() == "```sh";
            continue;
        }
        if !in_sh || line.trim_start().starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if let Some(head) = line.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        let whole =
            format!("{pending}{line}").replace("cargo run --release -p tool-cli --", "tool");
        pending.clear();
        out.push(whole.trim().to_owned());
    }
    out
}

/// Examples whose documented exit status is not 0: (text they contain, status, why).
const STATUS: &[(&str, i32, &str)] = &[(
    "--no-fallback",
    1,
    "the help says a tool that is left out makes the status 1; this binary's test fixtures include \
     a recursive tool Gemini's parameters cannot express",
)];

fn skipped(example: &str) -> Option<&'static str> {
    SKIPPED
        .iter()
        .find(|(needle, _)| example.contains(needle))
        .map(|(_, why)| *why)
}

/// A workspace with the files the examples name, and a sibling `repo`.
fn workspace() -> (TempDir, std::path::PathBuf) {
    let top = TempDir::new();
    let ws = top.path().join("ws");
    let repo = top.path().join("repo");
    for dir in [&ws, &repo, &ws.join("src")] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    // A 1x1 grey PNG, made by the `image` crate (so every decoder takes it).
    let mut png = std::io::Cursor::new(Vec::new());
    image::GrayImage::from_pixel(1, 1, image::Luma([128]))
        .write_to(&mut png, image::ImageFormat::Png)
        .expect("encodes");
    let png = png.get_ref().as_slice();
    let files: [(&Path, &[u8]); 7] = [
        (&ws.join("README.md"), b"# readme\nfn main mentioned\n"),
        (&ws.join("notes.txt"), b"a note\n"),
        (&ws.join("a.txt"), b"x marks\n"),
        (&ws.join("x.txt"), b"a\n"),
        (&ws.join("src/main.rs"), b"fn main() {}\n// TODO\n"),
        (&ws.join("logo.png"), png),
        (&repo.join("logo.png"), png),
    ];
    for (path, bytes) in files {
        std::fs::write(path, bytes).expect("write");
    }
    (top, ws)
}

/// Runs `example` with `bash` in `ws` (state under `top`), `tool` on the
/// PATH: a link named `tool` to the program under test (with its fixtures).
fn run_example(top: &TempDir, ws: &Path, example: &str) -> Result<(), String> {
    let bin_dir = top.path().join("bin");
    if !bin_dir.join("tool").exists() {
        std::fs::create_dir_all(&bin_dir).map_err(|e| format!("bin: {e}"))?;
        std::os::unix::fs::symlink(BIN, bin_dir.join("tool")).map_err(|e| format!("bin: {e}"))?;
    }
    let path = format!(
        "{}:{}",
        bin_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let state = top.path().join("state");
    let out = Command::new("bash")
        .args(["-c", example])
        .current_dir(ws)
        .env("PATH", path)
        .env("XDG_STATE_HOME", &state)
        .env_remove("TRACE_ID")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("bash: {e}"))?;
    let want = STATUS
        .iter()
        .find(|(needle, _, _)| example.contains(needle))
        .map_or(0, |(_, status, _)| *status);
    if out.status.code() == Some(want) {
        Ok(())
    } else {
        Err(format!(
            "`{example}` exited {:?}\nstdout: {}\nstderr: {}",
            out.status.code(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

#[test]
fn every_help_and_readme_example_runs() {
    // Each help text's examples, and the README's, run in order in one
    // workspace, as a person would type them one after the other.
    let mut groups: Vec<(String, Vec<String>)> = Vec::new();
    for command in [
        &[][..],
        &["list"],
        &["schema"],
        &["call"],
        &["batch"],
        &["serve"],
    ] {
        let out = Command::new(BIN)
            .args(command)
            .arg("--help")
            .output()
            .expect("help");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let found = help_examples(&text);
        let name = format!("tool {} --help", command.join(" "));
        assert!(!found.is_empty(), "no examples in `{name}`");
        groups.push((name, found));
    }
    let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md"))
        .expect("README");
    let from_readme = readme_examples(&readme);
    assert!(from_readme.len() >= 5, "{from_readme:?}");
    groups.push(("README.md".to_owned(), from_readme));
    let mut failures = Vec::new();
    let mut ran = 0;
    for (source, examples) in &groups {
        let (top, ws) = workspace();
        for example in examples {
            if let Some(why) = skipped(example) {
                eprintln!("{source}: skipped `{example}`: {why}");
                continue;
            }
            ran += 1;
            // A trailing "(...)" remark is not part of the command.
            let command = match example.rfind("  (") {
                Some(i) => example[..i].trim(),
                None => example.as_str(),
            };
            if let Err(e) = run_example(&top, &ws, command) {
                failures.push(format!("{source}: {e}"));
            }
        }
    }
    assert!(ran >= 15, "only {ran} examples ran");
    assert!(
        failures.is_empty(),
        "{} of {ran} examples failed:\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
