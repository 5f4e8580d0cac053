//! Diagnostics after edits (`tool_builtins::diagnostics`) with a real
//! language server: python-lsp-server (pyflakes) from the Python Package Index, installed by
//! `scripts/test` into `target/lsp-venv` and named by `$AGENT_TOOLS_PYLSP`.
//! Without that variable these tests fail, unless `AGENT_TOOLS_SKIP_LSP=1`
//! skips them. Fake servers (a Python script, `sleep`) play the broken ones.

use std::fs;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::util::*;
use serde_json::Value;
use tool_builtins::diagnostics::{Diagnostics, LspConfig, LspServer};
use tool_builtins::shell::BashConfig;
use tool_core::SandboxPolicy;

/// The pylsp program, or `None` when `AGENT_TOOLS_SKIP_LSP=1` skips the test.
fn pylsp() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("AGENT_TOOLS_PYLSP") {
        return Some(PathBuf::from(path));
    }
    if std::env::var("AGENT_TOOLS_SKIP_LSP").as_deref() == Ok("1") {
        eprintln!("skipped: AGENT_TOOLS_SKIP_LSP=1");
        return None;
    }
    panic!(
        "AGENT_TOOLS_PYLSP is not set: run scripts/test (it installs python-lsp-server into \
         target/lsp-venv), or set AGENT_TOOLS_PYLSP=/path/to/pylsp, or AGENT_TOOLS_SKIP_LSP=1 to \
         skip the language-server tests"
    );
}

/// A workspace with `app.py` (read in the context) and the hook for `server`.
fn setup(
    server: LspServer,
    tune: impl FnOnce(LspConfig) -> LspConfig,
    sandbox: SandboxPolicy,
) -> (tempfile::TempDir, ToolContext, Arc<Diagnostics>) {
    let (d, ctx) = workspace_with(&[("app.py", "x = 1\nprint(x)\n")]);
    let root = fs::canonicalize(d.path()).unwrap();
    prime(&ctx, &[root.join("app.py")]);
    let lsp = Diagnostics::new(tune(LspConfig::default().with_server(server)));
    let ctx = lsp.install(ctx.with_state(BashConfig::default().with_sandbox(sandbox)));
    (d, ctx, lsp)
}

async fn edit(ctx: &ToolContext, old: &str, new: &str) -> ToolResult {
    tool_builtins::edit_file(ctx, "app.py".into(), old.into(), new.into(), false)
        .await
        .into_tool_result()
}

fn diagnostics(r: &ToolResult) -> &Value {
    r.metadata.get("diagnostics").expect("diagnostics metadata")
}

/// An undefined name appears in the result; the fix clears it; one server
/// served both edits (started once, kept), and shutdown ends it.
async fn undefined_name_then_fixed(sandbox: SandboxPolicy) {
    let Some(pylsp) = pylsp() else { return };
    let (_d, ctx, lsp) = setup(
        LspServer::new(pylsp, ["py"]),
        |c| {
            c.with_wait(Duration::from_secs(20))
                .with_start_timeout(Duration::from_secs(30))
        },
        sandbox,
    );
    let r = edit(&ctx, "print(x)", "print(y)").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.output,
        "Edit applied successfully.\n\n\
         Diagnostics (pylsp): 1 error, 0 warnings in app.py:\n\
         app.py:2:7: error: undefined name 'y' [pyflakes]",
        "{r:?}"
    );
    let meta = diagnostics(&r);
    assert_eq!(meta["errors"], 1);
    assert_eq!(meta["items"][0]["line"], 2);
    assert_eq!(meta["items"][0]["column"], 7);
    assert_eq!(meta["items"][0]["source"], "pyflakes");
    assert_eq!(meta["items"][0]["message"], "undefined name 'y'");
    let pids = lsp.running();
    assert_eq!(pids.len(), 1);

    let r = edit(&ctx, "print(y)", "print(x)").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.output,
        "Edit applied successfully.\n\n\
         Diagnostics (pylsp): no errors or warnings in app.py."
    );
    assert_eq!(diagnostics(&r)["errors"], 0);
    assert_eq!(diagnostics(&r)["items"], serde_json::json!([]));
    assert_eq!(lsp.running(), pids, "the same server answered both edits");

    lsp.shutdown();
    assert_eq!(lsp.running(), Vec::<u32>::new());
    let pid = pids[0];
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || fs::read_to_string(format!("/proc/{pid}/stat"))
                .unwrap_or_default()
                .contains(") Z"),
        "the server process {pid} is gone after shutdown"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn pylsp_reports_an_undefined_name_and_its_fix_unsandboxed() {
    undefined_name_then_fixed(SandboxPolicy::off()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn pylsp_reports_an_undefined_name_and_its_fix_in_the_sandbox() {
    undefined_name_then_fixed(SandboxPolicy::default()).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn write_file_and_apply_patch_report_too_and_other_files_are_left_alone() {
    let Some(pylsp) = pylsp() else { return };
    let (d, ctx, lsp) = setup(
        LspServer::new(pylsp, ["py"]),
        |c| {
            c.with_wait(Duration::from_secs(20))
                .with_start_timeout(Duration::from_secs(30))
        },
        SandboxPolicy::off(),
    );
    let r = tool_builtins::write_file(&ctx, "notes.txt".into(), "print(z)\n".into())
        .await
        .into_tool_result();
    assert_eq!(r.output, "Wrote file successfully.");
    assert!(r.metadata.get("diagnostics").is_none());
    assert!(lsp.running().is_empty(), "no server for a .txt file");

    let r = tool_builtins::write_file(&ctx, "lib.py".into(), "import os\n".into())
        .await
        .into_tool_result();
    assert_eq!(
        r.output,
        "Wrote file successfully.\n\n\
         Diagnostics (pylsp): 0 errors, 1 warning in lib.py:\n\
         lib.py:1:1: warning: 'os' imported but unused [pyflakes]"
    );
    let patch = "*** Begin Patch\n*** Update File: app.py\n@@\n-print(x)\n+print(w)\n*** End Patch";
    let r = tool_builtins::patch::apply_patch(&ctx, patch.into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.output.ends_with(
            "Diagnostics (pylsp): 1 error, 0 warnings in app.py:\n\
             app.py:2:7: error: undefined name 'w' [pyflakes]"
        ),
        "{}",
        r.output
    );
    let edits = vec![
        tool_builtins::multi_edit::Edit {
            old_string: "print(w)".into(),
            new_string: "print(x)".into(),
            replace_all: false,
        },
        tool_builtins::multi_edit::Edit {
            old_string: "x = 1".into(),
            new_string: "x = 2".into(),
            replace_all: false,
        },
    ];
    let r = tool_builtins::multi_edit::multi_edit(&ctx, "app.py".into(), edits)
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.output
            .ends_with("Diagnostics (pylsp): no errors or warnings in app.py."),
        "{}",
        r.output
    );
    drop(d);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_server_gives_a_note_and_the_write_stands() {
    let (d, ctx, lsp) = setup(
        LspServer::new("/nonexistent/pylsp-nowhere", ["py"]),
        |c| c,
        SandboxPolicy::off(),
    );
    let r = edit(&ctx, "print(x)", "print(y)").await;
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "Edit applied successfully.");
    assert_eq!(
        r.notes,
        vec![
            "No diagnostics for app.py (pylsp-nowhere): the language server \
             `/nonexistent/pylsp-nowhere` was not found (is it installed and on PATH?). The write \
             itself succeeded."
                .to_owned()
        ]
    );
    assert_eq!(diagnostics(&r)["errors"], 0);
    assert_eq!(
        fs::read_to_string(d.path().join("app.py")).unwrap(),
        "x = 1\nprint(y)\n"
    );
    assert!(lsp.running().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_answers_is_bounded_by_the_start_timeout_then_left_alone() {
    // `sleep` reads nothing and writes nothing: `initialize` is never answered.
    let sleeper = LspServer::new("sleep", ["py"]).with_args(["600"]);
    let (_d, ctx, lsp) = setup(
        sleeper,
        |c| {
            c.with_start_timeout(Duration::from_millis(800))
                .with_wait(Duration::from_millis(300))
        },
        SandboxPolicy::off(),
    );
    let t0 = Instant::now();
    let r = edit(&ctx, "print(x)", "print(y)").await;
    let took = t0.elapsed();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(
        r.notes,
        vec![
            "No diagnostics for app.py (sleep): `sleep` did not answer `initialize` within 0.8 s. \
              The write itself succeeded."
                .to_owned()
        ]
    );
    assert!(
        took >= Duration::from_millis(800),
        "waited the start timeout: {took:?}"
    );
    assert!(took < Duration::from_secs(3), "bounded: {took:?}");
    assert!(lsp.running().is_empty(), "the hung server was stopped");
}

/// A fake server in Python: answers `initialize`, then runs `behaviour`
/// for every later message (`msg` is the parsed message, `send(obj)` writes
/// one frame).
fn fake_server(dir: &Path, behaviour: &str) -> LspServer {
    let script = dir.join("fake_lsp.py");
    let body = format!(
        r#"import json, sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
def send(obj):
    data = json.dumps(obj).encode()
    out.write(b"Content-Length: %d\r\n\r\n" % len(data) + data)
    out.flush()
def read():
    length = None
    while True:
        line = inp.readline()
        if not line:
            sys.exit(0)
        line = line.strip()
        if not line:
            break
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":")[1])
    return json.loads(inp.read(length))
while True:
    msg = read()
    if msg.get("method") == "initialize":
        send({{"jsonrpc": "2.0", "id": msg["id"], "result": {{"capabilities": {{"textDocumentSync": 1}}}}}})
        continue
{behaviour}
"#
    );
    fs::write(&script, body).unwrap();
    LspServer::new("python3", ["py"]).with_args([script.display().to_string()])
}

#[tokio::test(flavor = "multi_thread")]
async fn a_server_that_never_publishes_is_bounded_by_the_wait() {
    let tools = tempfile::tempdir().unwrap();
    let silent = fake_server(tools.path(), "    pass");
    let (_d, ctx, lsp) = setup(
        silent,
        |c| c.with_wait(Duration::from_millis(700)),
        SandboxPolicy::off(),
    );
    let t0 = Instant::now();
    let r = edit(&ctx, "print(x)", "print(y)").await;
    let took = t0.elapsed();
    assert!(r.is_ok(), "{r:?}");
    assert_eq!(r.output, "Edit applied successfully.");
    assert_eq!(
        r.notes,
        vec![
            "`python3` published no diagnostics for app.py within 0.7 s (the wait for \
              diagnostics); the write itself succeeded."
                .to_owned()
        ]
    );
    assert!(took >= Duration::from_millis(700), "{took:?}");
    assert!(took < Duration::from_secs(8), "{took:?}");
    assert_eq!(lsp.running().len(), 1, "a slow server is kept");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flooding_server_is_stopped_with_a_note() {
    let tools = tempfile::tempdir().unwrap();
    // Announces a 1 GiB message after the first didOpen.
    let flood = fake_server(
        tools.path(),
        "    if msg.get(\"method\") == \"textDocument/didOpen\":\n        \
         out.write(b\"Content-Length: 1073741824\\r\\n\\r\\n\" + b\"x\" * 65536)\n        out.flush()",
    );
    let (_d, ctx, lsp) = setup(
        flood,
        |c| c.with_wait(Duration::from_secs(5)),
        SandboxPolicy::off(),
    );
    let t0 = Instant::now();
    let r = edit(&ctx, "print(x)", "print(y)").await;
    assert!(r.is_ok(), "{r:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(5),
        "ended at once, not at the wait"
    );
    assert_eq!(
        r.notes,
        vec![
            "No diagnostics for app.py: `python3` stopped (it sent a message of 1073741824 \
              bytes, more than the limit of 4194304 bytes); it is started again on the next \
              write. The write itself succeeded."
                .to_owned()
        ]
    );
    assert!(lsp.running().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crashing_server_is_restarted_at_most_three_times() {
    let tools = tempfile::tempdir().unwrap();
    let crash = fake_server(tools.path(), "    sys.stderr.write('boom\\n'); sys.exit(3)");
    let (_d, ctx, _lsp) = setup(
        crash,
        |c| c.with_wait(Duration::from_secs(5)),
        SandboxPolicy::off(),
    );
    let mut notes = Vec::new();
    for (old, new) in [("x)", "y)"), ("y)", "z)"), ("z)", "w)"), ("w)", "v)")] {
        let r = edit(&ctx, old, new).await;
        assert!(r.is_ok(), "{r:?}");
        notes.push(r.notes.join(" | "));
    }
    for note in &notes[..3] {
        assert!(
            note.contains(
                "`python3` stopped (it exited (its output closed); its last output: boom)"
            ),
            "{note}"
        );
    }
    assert!(
        notes[3].contains(
            "it was started 3 times in this process, so no more diagnostics come from it"
        ),
        "{}",
        notes[3]
    );
}

#[tokio::test]
async fn no_server_configured_leaves_results_unchanged() {
    let (d, ctx) = workspace_with(&[("app.py", "x = 1\n")]);
    let root = fs::canonicalize(d.path()).unwrap();
    prime(&ctx, &[root.join("app.py")]);
    let lsp = Diagnostics::new(LspConfig::default());
    let ctx = lsp.install(ctx);
    assert!(tool_builtins::AfterWriteHooks::of(&ctx).is_empty());
    let r = edit(&ctx, "x = 1", "x = y").await;
    assert_eq!(r.output, "Edit applied successfully.");
    assert!(r.notes.is_empty());
    assert!(r.metadata.get("diagnostics").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn what_a_server_publishes_is_bounded_in_count() {
    let tools = tempfile::tempdir().unwrap();
    // 5 000 errors for the opened file, then 2 000 publications for files it never opened.
    let many = fake_server(
        tools.path(),
        "    if msg.get(\"method\") == \"textDocument/didOpen\":\n        \
         doc = msg[\"params\"][\"textDocument\"]\n        \
         for i in range(2000):\n            \
         send({\"jsonrpc\": \"2.0\", \"method\": \"textDocument/publishDiagnostics\", \"params\": {\"uri\": \"file:///elsewhere/f%d.py\" % i, \"diagnostics\": []}})\n        \
         d = {\"range\": {\"start\": {\"line\": 1, \"character\": 6}, \"end\": {\"line\": 1, \"character\": 7}}, \"severity\": 1, \"message\": \"bad\"}\n        \
         send({\"jsonrpc\": \"2.0\", \"method\": \"textDocument/publishDiagnostics\", \"params\": {\"uri\": doc[\"uri\"], \"version\": doc[\"version\"], \"diagnostics\": [d] * 5000}})",
    );
    let (_d, ctx, _lsp) = setup(
        many,
        |c| c.with_wait(Duration::from_secs(10)),
        SandboxPolicy::off(),
    );
    let r = edit(&ctx, "print(x)", "print(y)").await;
    assert!(r.is_ok(), "{r:?}");
    let meta = diagnostics(&r);
    assert_eq!(meta["errors"], 1000, "kept at most MAX_KEPT_PER_PUBLISH");
    assert_eq!(meta["omitted"], 980);
    assert_eq!(meta["items"].as_array().unwrap().len(), 20);
    assert_eq!(
        r.output
            .lines()
            .filter(|l| l.starts_with("app.py:2:7: error: bad"))
            .count(),
        20
    );
    assert!(
        r.output.ends_with("… and 980 more not shown"),
        "{}",
        r.output
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_item_is_skipped_and_counted_not_the_whole_publication() {
    let tools = tempfile::tempdir().unwrap();
    let odd = fake_server(
        tools.path(),
        "    if msg.get(\"method\") == \"textDocument/didOpen\":\n        \
         doc = msg[\"params\"][\"textDocument\"]\n        \
         d = {\"range\": {\"start\": {\"line\": 1, \"character\": 6}, \"end\": {\"line\": 1, \"character\": 7}}, \"severity\": 1, \"message\": \"bad\"}\n        \
         neg = {\"range\": {\"start\": {\"line\": -5, \"character\": 0}, \"end\": {\"line\": 0, \"character\": 1}}, \"message\": \"neg\"}\n        \
         big = {\"range\": {\"start\": {\"line\": 2**40, \"character\": 0}, \"end\": {\"line\": 0, \"character\": 1}}, \"message\": \"big\"}\n        \
         send({\"jsonrpc\": \"2.0\", \"method\": \"textDocument/publishDiagnostics\", \"params\": {\"uri\": doc[\"uri\"], \"version\": doc[\"version\"], \"diagnostics\": [d, neg, big]}})",
    );
    let (_d, ctx, _lsp) = setup(
        odd,
        |c| c.with_wait(Duration::from_secs(10)),
        SandboxPolicy::off(),
    );
    let t0 = Instant::now();
    let r = edit(&ctx, "print(x)", "print(y)").await;
    assert!(r.is_ok(), "{r:?}");
    assert!(
        t0.elapsed() < Duration::from_secs(8),
        "no wait for the deadline"
    );
    assert_eq!(diagnostics(&r)["errors"], 1);
    assert!(r.output.contains("app.py:2:7: error: bad"), "{}", r.output);
    assert_eq!(
        r.notes,
        vec![
            "`python3` sent 2 malformed diagnostics for app.py (not LSP diagnostics, e.g. a \
             negative line); skipped."
                .to_owned()
        ]
    );
}
