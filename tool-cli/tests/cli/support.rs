//! Running the binary and reading its output.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::Value;

/// The program under test: `tool` with the `cli_fixture_*` test tools
/// (`fixtures/main.rs`); the rest of it is the `tool` program.
pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_tool-fixtures");
/// The `tool` binary itself, as shipped.
pub(crate) const TOOL: &str = env!("CARGO_BIN_EXE_tool");

/// A `tool` command with a clean environment: no `TRACE_ID`, no backtraces,
/// run in the crate folder.
pub(crate) fn tool() -> Command {
    let mut cmd = Command::new(BIN);
    cmd.env_remove("TRACE_ID")
        .env_remove("RUST_BACKTRACE")
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .stdin(Stdio::null());
    cmd
}

/// Runs `tool ARGS` to the end.
pub(crate) fn run<I, S>(args: I) -> Output
where
    I: IntoIterator<Item = S>,
    S: AsRef<OsStr>,
{
    tool().args(args).output().expect("the tool binary runs")
}

/// Runs `tool ARGS` with `input` on stdin.
pub(crate) fn run_with_stdin(args: &[&str], input: &str) -> Output {
    let mut cmd = tool();
    cmd.args(args);
    feed(&mut cmd, input)
}

/// Runs `cmd` with `input` on stdin and its output captured.
pub(crate) fn feed(cmd: &mut Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the tool binary starts");
    // Written from a thread while the output is read: a large batch fills
    // both pipes, and writing everything first would wait forever.
    let mut stdin = child.stdin.take().expect("piped stdin");
    let input = input.to_owned();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let out = child.wait_with_output().expect("the tool binary ends");
    writer
        .join()
        .expect("the writer thread ends")
        .expect("stdin accepts the input");
    out
}

/// The exit code (the tests never kill the program with a signal).
pub(crate) fn code(out: &Output) -> i32 {
    out.status.code().expect("exited, not killed")
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("stderr is UTF-8")
}

/// Stdout as exactly one JSON value on exactly one line.
pub(crate) fn one_json_line(out: &Output) -> Value {
    let text = stdout(out);
    assert_eq!(
        text.matches('\n').count(),
        1,
        "expected one line on stdout, got {text:?} (stderr {:?})",
        stderr(out)
    );
    serde_json::from_str(&text).expect("stdout is JSON")
}

/// Every stdout line as JSON.
pub(crate) fn json_lines(out: &Output) -> Vec<Value> {
    stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect()
}

/// A fresh folder, removed when dropped.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "tool-cli-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        Self(path.canonicalize().expect("canonical temp dir"))
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }

    pub(crate) fn arg(&self) -> &str {
        self.0.to_str().expect("UTF-8 temp path")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `text` to `path` with mode `0600`: the secret files the CLI reads
/// (`--token-file`, `--state-file`) are refused when group or others may
/// read them.
pub(crate) fn write_private(path: &std::path::Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).expect("chmod 600");
}

/// A `tool serve --http 127.0.0.1:0 …` child, killed and reaped when
/// dropped; `url` is the endpoint its banner announces
/// (`http://127.0.0.1:PORT/mcp`).
pub(crate) struct Served {
    pub(crate) child: std::process::Child,
    pub(crate) url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Served {
    /// Spawns `cmd` (a `tool serve --http` command) with stdout discarded
    /// and stderr piped, and reads the URL from its first stderr line.
    /// Panics, naming the line, when it announces none.
    pub(crate) fn start(mut cmd: Command) -> Served {
        use std::io::{BufRead, BufReader};
        let mut child = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("tool serve starts");
        let mut line = String::new();
        BufReader::new(child.stderr.take().expect("piped stderr"))
            .read_line(&mut line)
            .expect("a banner line");
        let url = line
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no URL in {line:?}"))
            .trim_end_matches(',')
            .to_owned();
        Served { child, url }
    }
}
