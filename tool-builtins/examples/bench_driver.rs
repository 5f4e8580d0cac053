//! Runs one built-in tool call through `ToolRegistry::execute`, for the
//! benchmark script `tool-builtins/benches/builtins.sh` (wall time and peak
//! memory are measured around this process).
//!
//! Usage: `[RESULT_LIMIT=N] bench_driver WORKSPACE TOOL ARGS_JSON [REPEAT]`
//!
//! Prints one JSON line per call: the call's own time in milliseconds, the
//! result's metadata, the output's length, the error if any, and (with
//! `REPEAT` > 1) repeats the call in the same process.

use std::process::ExitCode;
use std::time::Instant;

use serde_json::{Value, json};
use tool_builtins::SearchConfig;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    let [_, workspace, tool, call_args, rest @ ..] = args.as_slice() else {
        eprintln!("usage: bench_driver WORKSPACE TOOL ARGS_JSON [REPEAT]");
        return ExitCode::from(2);
    };
    let repeat: usize = rest.first().and_then(|r| r.parse().ok()).unwrap_or(1);
    let call_args: Value = match serde_json::from_str(call_args) {
        Ok(v) => v,
        Err(e) => {
            eprintln!("ARGS_JSON is not JSON: {e}");
            return ExitCode::from(2);
        }
    };
    let ctx = match tool_builtins::context(workspace) {
        // RESULT_LIMIT raises the search tools' limit, for checking their
        // results against rg's in full.
        Ok(ctx) => match std::env::var("RESULT_LIMIT")
            .ok()
            .and_then(|l| l.parse().ok())
        {
            Some(limit) => ctx.with_state(SearchConfig::default().with_result_limit(limit)),
            None => ctx,
        },
        Err(e) => {
            eprintln!("cannot open workspace {workspace}: {e}");
            return ExitCode::from(2);
        }
    };
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    else {
        eprintln!("cannot start the async runtime");
        return ExitCode::from(2);
    };
    let registry = tool_builtins::registry();
    if !registry.contains(tool) {
        eprintln!("no tool `{tool}`; registered: {:?}", registry.names());
        return ExitCode::from(2);
    }
    let mut failed = false;
    for _ in 0..repeat {
        let start = Instant::now();
        let result = runtime.block_on(registry.execute(tool, call_args.clone(), &ctx));
        let ms = start.elapsed().as_secs_f64() * 1000.0;
        failed |= result.is_error();
        let line = json!({
            "ms": ms,
            "metadata": result.metadata,
            "output_chars": result.output.chars().count(),
            "error": result.error.map(|e| e.message),
        });
        println!("{line}");
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
