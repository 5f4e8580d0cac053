//! `sandbox_overhead`: what the shell sandbox adds to one `bash_command`
//! call, in process (no CLI start-up, no JSON): the same call of `true`
//! through the tool's public fn (supervisor, output capture, result) with
//! the sandbox off, in its full tier (namespaces, mount view, Landlock,
//! seccomp, cgroup) and in its no-namespaces tier (Landlock, seccomp and the
//! after-call `.git` check), interleaved so that every variant sees the same
//! load on a shared machine. Prints, per variant, the 50th and 95th
//! percentile and the minimum in milliseconds, and each sandboxed
//! variant's median minus the unsandboxed one: the sandbox's own cost per
//! command.
//!
//! Run: `benches/sandbox-overhead.sh` (or `cargo bench -p tool-builtins
//! --bench sandbox_overhead`); `SANDBOX_RUNS` calls per variant (default
//! 200, at least 20). A tier that does not run here is reported and left
//! out. Not part of CI.

#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    reason = "a benchmark: a failed unwrap is a failed run; it prints its table"
)]

use std::time::Instant;

use tool_builtins::BashConfig;
use tool_core::{IntoToolResult, SandboxMode, SandboxPolicy, SandboxTier, ToolContext};

/// One call of `true`; its wall time in milliseconds, or the error text.
async fn once(ctx: &ToolContext) -> Result<f64, String> {
    let start = Instant::now();
    let result = tool_builtins::bash_command("true".to_owned(), None, None, None, None, ctx)
        .await
        .into_tool_result();
    let ms = start.elapsed().as_secs_f64() * 1e3;
    match (&result.error, result.exit_code()) {
        (None, Some(0)) => Ok(ms),
        _ => Err(format!("{:?} {}", result.error, result.output)),
    }
}

/// The `p`-th percentile (0..=100) of sorted `times`, nearest rank.
fn percentile(times: &[f64], p: f64) -> f64 {
    let rank = ((p / 100.0) * times.len() as f64).ceil() as usize;
    times[rank.clamp(1, times.len()) - 1]
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let runs: usize = std::env::var("SANDBOX_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200)
        .max(20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let ws = tempfile::tempdir().unwrap();
    let base = tool_builtins::context(ws.path()).unwrap();
    let policies = [
        (
            "no sandbox (--sandbox off)",
            SandboxPolicy::default().with_mode(SandboxMode::Off),
        ),
        (
            "sandbox, full tier",
            SandboxPolicy::default().with_tier(SandboxTier::Full),
        ),
        (
            "sandbox, no-namespaces tier",
            SandboxPolicy::default().with_tier(SandboxTier::NoNamespaces),
        ),
    ];
    let mut variants: Vec<(&str, ToolContext)> = Vec::new();
    for (name, policy) in policies {
        let ctx = base
            .clone()
            .with_state(BashConfig::default().with_sandbox(policy));
        // Warm-up, and the check that the tier runs here at all.
        match runtime.block_on(once(&ctx)) {
            Ok(_) => variants.push((name, ctx)),
            Err(e) => eprintln!("note: {name} does not run here, left out: {e}"),
        }
    }
    for _ in 0..5 {
        for (_, ctx) in &variants {
            runtime.block_on(once(ctx)).unwrap();
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(runs); variants.len()];
    for _ in 0..runs {
        for (i, (_, ctx)) in variants.iter().enumerate() {
            times[i].push(runtime.block_on(once(ctx)).unwrap());
        }
    }
    for t in &mut times {
        t.sort_by(f64::total_cmp);
    }
    let cpus = std::thread::available_parallelism().map_or(0, std::num::NonZero::get);
    println!(
        "bash_command `true`, in process, {runs} calls per variant, interleaved; {cpus} CPUs; \
         milliseconds"
    );
    println!();
    println!("| variant | p50 | p95 | min | p50 minus no sandbox |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    let plain = times.first().map(|t| percentile(t, 50.0));
    for ((name, _), t) in variants.iter().zip(&times) {
        let p50 = percentile(t, 50.0);
        let extra = match plain {
            Some(plain) if *name != variants[0].0 => format!("{:+.2}", p50 - plain),
            _ => "—".to_owned(),
        };
        println!(
            "| {name} | {p50:.2} | {:.2} | {:.2} | {extra} |",
            percentile(t, 95.0),
            t[0]
        );
    }
}
