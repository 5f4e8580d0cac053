//! `governance`: what the governance layers cost.
//!
//! - `plain/*`: a call that uses no governance feature, through `execute`
//!   (all layers) and through `execute_ungoverned` (lookup and call only).
//!   Target (governance issue): the difference is under 1 µs median.
//! - `secrets_10k/*`: a tool taking a ~10 KiB argument object with 20 secret
//!   values: inline with no store; inline with a store (the masking pass
//!   only); as `<secret>` placeholders resolved from the store (substitution
//!   before the call, masking after). Substitution costs the difference of
//!   the last two.
//!
//! Run: `cargo bench -p tool-core --features bench-internals --bench governance`.

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Map, Value, json};
use std::hint::black_box;
use tool_core::{SecretStore, ToolContext, ToolRegistry, tool};

/// Format a greeting.
///
/// # Arguments
/// * `name` - Who to greet.
/// * `times` - How many times.
/// * `shout` - Upper-case it.
#[tool]
async fn greet(name: String, times: u32, shout: bool) -> String {
    let mut s = format!("hello {name} x{times}");
    if shout {
        s.make_ascii_uppercase();
    }
    s
}

/// Store a document.
///
/// # Arguments
/// * `doc` - The document.
#[tool]
async fn store_doc(doc: Value) -> String {
    format!("stored {} fields", doc.as_object().map_or(0, Map::len))
}

fn big_args(with_placeholders: bool) -> Value {
    let mut doc = Map::new();
    for i in 0..80 {
        let text = if i % 4 == 0 {
            if with_placeholders {
                format!("token <secret>key_{}</secret> for item {i}", i / 4)
            } else {
                format!("token value-of-secret-{} for item {i}", i / 4)
            }
        } else {
            format!("{i}: {}", "lorem ipsum dolor sit amet ".repeat(5))
        };
        doc.insert(format!("field_{i}"), Value::String(text));
    }
    json!({ "doc": doc })
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let registry = ToolRegistry::global();
    let ctx = ToolContext::new();
    let args = json!({"name": "ana", "times": 3, "shout": false});
    let map = args.as_object().cloned().unwrap_or_default();

    let mut g = c.benchmark_group("plain");
    g.bench_function("execute", |b| {
        b.iter(|| black_box(rt.block_on(registry.execute("greet", black_box(args.clone()), &ctx))));
    });
    g.bench_function("execute_ungoverned", |b| {
        b.iter(|| {
            black_box(rt.block_on(registry.execute_ungoverned(
                "greet",
                black_box(map.clone()),
                &ctx,
            )))
        });
    });
    g.finish();

    let mut store = SecretStore::new();
    for k in 0..16 {
        store = store
            .with_secret(format!("key_{k}"), format!("value-of-secret-{k}"))
            .expect("valid secret");
    }
    let with_secrets = ToolContext::new().with_secrets(store);
    let placeholders = big_args(true);
    let inline = big_args(false);
    println!(
        "secrets_10k argument size: {} bytes",
        placeholders.to_string().len()
    );
    let mut g = c.benchmark_group("secrets_10k");
    g.bench_function("placeholders_with_store", |b| {
        b.iter(|| {
            black_box(rt.block_on(registry.execute(
                "store_doc",
                black_box(placeholders.clone()),
                &with_secrets,
            )))
        });
    });
    g.bench_function("inline_no_store", |b| {
        b.iter(|| {
            black_box(rt.block_on(registry.execute("store_doc", black_box(inline.clone()), &ctx)))
        });
    });
    g.bench_function("inline_with_store", |b| {
        b.iter(|| {
            black_box(rt.block_on(registry.execute(
                "store_doc",
                black_box(inline.clone()),
                &with_secrets,
            )))
        });
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
