//! What the sandbox adds to one command, in process (no CLI start-up):
//! `bash -c true` and `bash -c 'git status'` in a small repository, plain
//! (forked through a `pre_exec` hook, as `bash_command`'s supervisor is) and
//! sandboxed in each tier (prepare + spawn + wait). Target (issue 22): the
//! sandboxed figure at most 2x plain, or plain + 5 ms, whichever is larger.
//!
//! `cargo bench -p tool-sandbox --bench spawn`

#![allow(
    clippy::unwrap_used,
    reason = "a benchmark: a failed unwrap is a failed run"
)]

use std::hint::black_box;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tool_core::{SandboxPolicy, SandboxTier};
use tool_sandbox::Sandbox;

fn command(ws: &Path, script: &str) -> Command {
    let mut c = Command::new("/bin/bash");
    c.arg("-c")
        .arg(script)
        .current_dir(ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    c
}

fn plain(ws: &Path, script: &str) {
    let mut c = command(ws, script);
    #[allow(
        unsafe_code,
        reason = "an empty pre_exec hook, to fork as the supervisor does"
    )]
    // SAFETY: the hook does nothing.
    unsafe {
        c.pre_exec(|| Ok(()));
    }
    assert!(c.status().unwrap().success());
}

fn sandboxed(ws: &Path, script: &str, policy: &SandboxPolicy) {
    let sb = Arc::new(Sandbox::prepare(policy, ws, Some(ws)).unwrap());
    let mut c = command(ws, script);
    sb.apply(&mut c);
    assert!(c.status().unwrap().success());
}

fn bench(c: &mut Criterion) {
    let ws = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        assert!(
            Command::new("git")
                .args(args)
                .current_dir(ws.path())
                .stdout(Stdio::null())
                .status()
                .unwrap()
                .success()
        );
    };
    git(&["init", "-q"]);
    std::fs::write(ws.path().join("a.txt"), "a\n").unwrap();
    git(&["add", "a.txt"]);
    git(&[
        "-c",
        "user.email=a@b.c",
        "-c",
        "user.name=n",
        "commit",
        "-qm",
        "a",
    ]);
    let full = SandboxPolicy::default().with_tier(SandboxTier::Full);
    let no_ns = SandboxPolicy::default().with_tier(SandboxTier::NoNamespaces);
    let mut group = c.benchmark_group("spawn");
    group
        .sample_size(30)
        .measurement_time(Duration::from_secs(4))
        .warm_up_time(Duration::from_secs(1));
    // Preparing alone (paths, mount plan, Landlock ruleset, hard-link scan):
    // the part of each sandboxed figure spent before the fork.
    group.bench_function("prepare/full", |b| {
        b.iter(|| Sandbox::prepare(&full, black_box(ws.path()), Some(ws.path())).unwrap());
    });
    for (name, script) in [("true", "true"), ("git_status", "git status --short")] {
        group.bench_function(format!("{name}/plain"), |b| {
            b.iter(|| plain(black_box(ws.path()), script));
        });
        group.bench_function(format!("{name}/full"), |b| {
            b.iter(|| sandboxed(black_box(ws.path()), script, &full));
        });
        group.bench_function(format!("{name}/no-namespaces"), |b| {
            b.iter(|| sandboxed(black_box(ws.path()), script, &no_ns));
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
