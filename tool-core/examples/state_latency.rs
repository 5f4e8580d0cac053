//! The latency a state store adds to a tool call: the ledger operations of
//! `read_file` (one `put`: the read is recorded) and of `edit_file` (a
//! `get`: the read-before-write check; a `put`: the write is recorded), timed
//! on the file store and on a Redis server, p50 and p99 over N calls each.
//! `scripts/state-bench` starts a loopback redis-server and runs it.
//!
//! ```text
//! cargo run -p tool-core --features redis --example state_latency -- redis://127.0.0.1:PORT/0 [N]
//! ```

use std::path::Path;
use std::time::{Duration, Instant};

use tool_core::state::{FileStore, RedisStore, StateKey, StateStore};

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "an index into a short list"
    )]
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn micros(d: Duration) -> String {
    format!("{:.0} µs", d.as_secs_f64() * 1e6)
}

/// Times `n` read calls then `n` edit calls on `store`; one line per kind.
fn bench(
    name: &str,
    store: &dyn StateStore,
    workspace: &Path,
    n: usize,
) -> Result<(), Box<dyn std::error::Error>> {
    let key = StateKey::new("ledger", format!("bench-{}", std::process::id()), workspace)?;
    let stamp = "m=1733227200123456789;s=4096;i=12345678;h=9f86d081884c7d65";
    let mut reads = Vec::with_capacity(n);
    let mut edits = Vec::with_capacity(n);
    for i in 0..n {
        let field = format!("{}/src/file{}.rs", workspace.display(), i % 200);
        let t = Instant::now();
        store.put(&key, &field, stamp)?;
        reads.push(t.elapsed());
    }
    for i in 0..n {
        let field = format!("{}/src/file{}.rs", workspace.display(), i % 200);
        let t = Instant::now();
        let seen = store.get(&key, &field)?;
        assert!(seen.is_some(), "the read was recorded");
        store.put(&key, &field, stamp)?;
        edits.push(t.elapsed());
    }
    reads.sort();
    edits.sort();
    for (kind, v) in [
        ("read_file (put)", &reads),
        ("edit_file (get + put)", &edits),
    ] {
        println!(
            "{name:<6} {kind:<22} p50 {:>7}  p99 {:>7}  ({n} calls)",
            micros(percentile(v, 0.50)),
            micros(percentile(v, 0.99))
        );
    }
    Ok(())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let url = args.get(1).ok_or("usage: state_latency REDIS_URL [N]")?;
    let n: usize = args.get(2).map_or(Ok(2000), |s| s.parse())?;
    let dir = tempfile::tempdir()?;
    let workspace = dir.path().join("ws");
    std::fs::create_dir_all(&workspace)?;
    bench(
        "file",
        &FileStore::new(dir.path().join("state")),
        &workspace,
        n,
    )?;
    let redis = RedisStore::open(url)?.with_prefix("bench")?;
    bench("redis", &redis, &workspace, n)?;
    Ok(())
}
