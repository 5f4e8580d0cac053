//! `execute_overhead`: what the registry adds to a call.
//!
//! Compares a 3-argument tool called through `ToolRegistry::execute` with the
//! same fn called directly after `serde_json::from_value` of its arguments.
//! Target (foundation issue): median overhead under 2 µs per call.

use criterion::{Criterion, criterion_group, criterion_main};
use serde::Deserialize;
use serde_json::{Value, json};
use std::hint::black_box;
use tool_core::{ToolContext, ToolRegistry, tool};

/// Format a greeting.
///
/// # Arguments
/// * `name` - Who to greet.
/// * `times` - How many times.
/// * `shout` - Upper-case it.
#[tool]
async fn greet(name: String, times: u32, shout: bool) -> String {
    greet_body(&name, times, shout)
}

fn greet_body(name: &str, times: u32, shout: bool) -> String {
    let mut s = format!("hello {name} x{times}");
    if shout {
        s.make_ascii_uppercase();
    }
    s
}

#[derive(Deserialize)]
struct GreetArgs {
    name: String,
    times: u32,
    shout: bool,
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let registry = ToolRegistry::global();
    let ctx = ToolContext::new();
    let args: Value = json!({"name": "ana", "times": 3, "shout": false});

    let mut group = c.benchmark_group("execute_overhead");
    group.bench_function("direct_from_value", |b| {
        b.iter(|| {
            let a: GreetArgs = serde_json::from_value(black_box(args.clone())).expect("valid args");
            black_box(greet_body(&a.name, a.times, a.shout))
        });
    });
    group.bench_function("registry_execute", |b| {
        b.iter(|| {
            let r = rt.block_on(registry.execute("greet", black_box(args.clone()), &ctx));
            black_box(r)
        });
    });
    group.bench_function("block_on_baseline", |b| {
        // What block_on itself costs, so it can be subtracted from registry_execute.
        b.iter(|| {
            let r = rt.block_on(async {
                let a: GreetArgs =
                    serde_json::from_value(black_box(args.clone())).expect("valid args");
                greet_body(&a.name, a.times, a.shout)
            });
            black_box(r)
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
