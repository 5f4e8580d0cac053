//! The sandbox's cost per command as the fastest of many runs, for a
//! machine shared with other work: `bash -c true` and `bash -c 'git status
//! --short'` in a small repository, plain (forked through a `pre_exec` hook,
//! as `bash_command`'s supervisor is) and sandboxed in each tier (prepare +
//! spawn + wait + drop), interleaved so that every variant sees the same
//! load. The minimum is what the work costs when nothing else runs; the
//! median is printed beside it. Target (issue 22): the sandboxed figure at
//! most 2x plain, or plain + 5 ms, whichever is larger. `spawn.rs` gives
//! criterion's statistics for the same work on a quiet machine.
//!
//! `cargo bench -p tool-sandbox --bench spawn_min` (`SPAWN_MIN_RUNS`, default 60).

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    unsafe_code,
    reason = "a benchmark: a failed unwrap is a failed run; it prints its table; the plain variant forks through an empty pre_exec hook"
)]

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Instant;

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

/// Milliseconds one run of `script` takes, plain or in a sandbox of `policy`.
fn once(ws: &Path, script: &str, policy: Option<&SandboxPolicy>) -> f64 {
    let start = Instant::now();
    let mut c = command(ws, script);
    let sandbox = policy.map(|p| Arc::new(Sandbox::prepare(p, ws, Some(ws)).unwrap()));
    match &sandbox {
        Some(sb) => sb.apply(&mut c),
        // SAFETY: the hook does nothing.
        None => unsafe {
            c.pre_exec(|| Ok(()));
        },
    }
    assert!(c.status().unwrap().success());
    drop(sandbox);
    start.elapsed().as_secs_f64() * 1e3
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runs: usize = std::env::var("SPAWN_MIN_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
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
    let variants: [(&str, Option<&SandboxPolicy>); 3] = [
        ("plain", None),
        ("full", Some(&full)),
        ("no-namespaces", Some(&no_ns)),
    ];
    println!("{runs} runs each, interleaved; milliseconds (min / median)");
    for (name, script) in [("true", "true"), ("git_status", "git status --short")] {
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); variants.len()];
        for _ in 0..runs {
            for (i, (_, policy)) in variants.iter().enumerate() {
                times[i].push(once(ws.path(), script, *policy));
            }
        }
        let plain_min = times[0].iter().copied().fold(f64::INFINITY, f64::min);
        for ((variant, _), t) in variants.iter().zip(&mut times) {
            t.sort_by(f64::total_cmp);
            let (min, median) = (t[0], t[t.len() / 2]);
            let target = (2.0 * plain_min).max(plain_min + 5.0);
            let verdict = if *variant == "plain" {
                String::new()
            } else if min <= target {
                format!("  within target ({target:.2} ms)")
            } else {
                format!("  OVER target ({target:.2} ms)")
            };
            println!("{name}/{variant:<14} {min:7.2} / {median:7.2}{verdict}");
        }
    }
}
