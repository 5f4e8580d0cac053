//! Sequential `tools/call` round trips per second over stdio: one Rust client
//! (this crate's [`McpToolSource`]) against any server command serving a tool
//! `echo(text)`. Run through `benches/roundtrip.sh`, which compares our
//! fixture server with a Python `mcp` server.
//!
//! `cargo bench -p tool-mcp --bench roundtrip -- SECONDS COMMAND [ARGS...]`

use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use tool_core::ToolContext;
use tool_mcp::McpToolSource;

fn main() {
    let mut args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.len() < 2 {
        eprintln!("usage: roundtrip SECONDS COMMAND [ARGS...]");
        return;
    }
    let seconds: f64 = args.remove(0).parse().unwrap_or(3.0);
    let command = args.remove(0);
    // One thread: calls are sequential, so a second worker would only add
    // cross-thread wake-ups to every round trip (the client's cost counts
    // against both servers alike).
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return;
    };
    runtime.block_on(async move {
        let conn = match McpToolSource::stdio(command.clone(), args, Vec::<(String, String)>::new())
            .named("bench")
            .connect()
            .await
        {
            Ok(c) => c,
            Err(e) => {
                eprintln!("roundtrip: {e}");
                return;
            }
        };
        let mut arguments = Map::new();
        arguments.insert("text".to_owned(), json!("ping"));
        let ctx = ToolContext::new();
        for _ in 0..50 {
            let _ = conn.call("echo", arguments.clone(), &ctx).await;
        }
        let budget = Duration::from_secs_f64(seconds);
        let start = Instant::now();
        let mut calls = 0u64;
        while start.elapsed() < budget {
            let r = conn.call("echo", arguments.clone(), &ctx).await;
            if r.output != "ping" {
                eprintln!(
                    "roundtrip: unexpected result {:?}",
                    r.error.map(|e| e.message)
                );
                return;
            }
            calls += 1;
        }
        let elapsed = start.elapsed().as_secs_f64();
        let per_sec = calls as f64 / elapsed;
        println!(
            "{command}: {calls} calls in {elapsed:.2} s = {per_sec:.0} calls/s ({:.1} us/call)",
            1e6 / per_sec
        );
        let _: Value = Value::Null;
    });
}
