//! A hidden path inside a hidden folder (`$SSH_AUTH_SOCK` inside
//! `$XDG_RUNTIME_DIR`, the escape suite's layout): the command still starts
//! (regression: the mount onto the inner path, once its folder was covered,
//! failed every spawn with ENOENT) and reads neither.

#![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use std::process::{Command, Stdio};
use std::sync::Arc;

use tool_core::{SandboxPolicy, SandboxTier};
use tool_sandbox::Sandbox;

#[test]
fn a_hidden_file_inside_a_hidden_folder_does_not_stop_the_command() {
    // Outside /tmp, which the full tier replaces anyway.
    let base = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let ws = tempfile::tempdir().unwrap();
    let run = base.path().join("run");
    std::fs::create_dir(&run).unwrap();
    std::fs::write(run.join("agent.sock"), "secret-inside").unwrap();
    let policy = SandboxPolicy::default()
        .with_tier(SandboxTier::Full)
        .hidden(&run)
        .hidden(run.join("agent.sock"));
    let sb = Arc::new(Sandbox::prepare(&policy, ws.path(), Some(ws.path())).unwrap());
    let mut c = Command::new("/bin/sh");
    c.arg("-c")
        .arg(format!(
            "cat {0}/agent.sock; ls -A {0} | wc -l; echo started",
            run.display()
        ))
        .stdin(Stdio::null());
    sb.apply(&mut c);
    let out = c.output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.ends_with("started\n"), "{text}");
    assert!(!text.contains("secret-inside"), "{text}");
}
