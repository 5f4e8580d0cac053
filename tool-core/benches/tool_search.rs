//! `tool_search`: BM25 search over 10 000 tools and building the index.
//!
//! - `search_10k`: one query of the evaluation set (`queries.json`, cycled)
//!   against an index of 10 000 tools, best 5, every signal on (BM25, typos,
//!   services, semantic; target, issue 31: p50 ≤ 1 ms);
//! - `search_10k_bm25`: the same without the semantic signal (target,
//!   issues 14 and 31: p50 ≤ 100 µs); `search_10k_plain_bm25`: BM25 alone,
//!   no typo or service signal (what the search was before issue 31);
//! - `tool_search_call_10k`: the same through the `tool_search` tool of a
//!   deferred [`RegistryView`] (`execute`: argument checks, load, result text);
//! - `index_build_10k`: indexing 10 000 tools, BM25 only (target: ≤ 50 ms);
//!   `index_build_10k_semantic`: with the tools' vectors;
//! - `index_update_10k`: what a registry change costs the index of 10 000
//!   tools: 10 tools removed and 10 added ([`SearchIndex::remove`],
//!   [`SearchIndex::insert`]), then the first search, which computes the
//!   contributions again.
//!
//! The tools are the evaluation set's, replicated under numbered server
//! names (`support/eval_tools.rs`). Criterion's `median` in
//! `target/criterion/<bench>/new/estimates.json` is the p50.

use std::hint::black_box;

use criterion::{Criterion, criterion_group};
use serde_json::{Value, json};
use tool_core::search::{FieldWeights, SearchIndex, Signals};
use tool_core::{RegistryView, ToolContext};

#[path = "support/eval_tools.rs"]
mod eval_tools;

fn queries() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/tool_search/queries.json"
    );
    let cases: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("queries")).expect("parses");
    cases
        .iter()
        .filter_map(|c| c["query"].as_str().map(str::to_owned))
        .collect()
}

/// Signals for the variants: none (BM25 alone, as before issue 31), the
/// lexical ones (jargon, typos, clipped words, named and implied services,
/// the server prior: the BM25 path), and all (the default).
fn signals(typos_and_services: bool, semantic: bool) -> Signals {
    let mut s = Signals::default();
    s.typos = typos_and_services;
    s.services = typos_and_services;
    s.implied = typos_and_services;
    s.jargon = typos_and_services;
    s.prefixes = typos_and_services;
    if !typos_and_services {
        s.server_prior = 0.0;
    }
    if !semantic {
        s.semantic = 0.0;
    }
    s
}

fn bench(c: &mut Criterion) {
    let specs = eval_tools::specs(10_000);
    let queries = queries();
    let mut group = c.benchmark_group("tool_search");
    for (label, signals) in [
        ("search_10k_plain_bm25", signals(false, false)),
        ("search_10k_bm25", signals(true, false)),
        ("search_10k", signals(true, true)),
    ] {
        let index = SearchIndex::build_with_signals(specs.iter(), FieldWeights::default(), signals);
        let mut i = 0usize;
        group.bench_function(label, |b| {
            b.iter(|| {
                i = (i + 1) % queries.len();
                black_box(index.search(&queries[i], 5))
            });
        });
    }

    let view = RegistryView::new(eval_tools::registry(10_000)).defer(["*"]);
    // Materialise and index once, as the first call of a session would.
    let _ = view.search("warm up", 1);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    let ctx = ToolContext::new().with_trace_id("bench");
    let mut j = 0usize;
    group.bench_function("tool_search_call_10k", |b| {
        b.iter(|| {
            j = (j + 1) % queries.len();
            let args = json!({"query": queries[j]});
            black_box(runtime.block_on(view.execute("tool_search", args, &ctx)))
        });
    });

    group.sample_size(20);
    group.bench_function("index_build_10k", |b| {
        b.iter(|| {
            black_box(SearchIndex::build_with_signals(
                specs.iter(),
                FieldWeights::default(),
                signals(true, false),
            ))
        });
    });
    group.bench_function("index_build_10k_semantic", |b| {
        b.iter(|| black_box(SearchIndex::build(specs.iter())));
    });
    let mut updated = SearchIndex::build(specs.iter());
    let mut round = 0usize;
    group.bench_function("index_update_10k", |b| {
        b.iter(|| {
            // Ten tools out and back in: the index ends as it began.
            round = (round + 1) % 100;
            let changed = &specs[round * 10..round * 10 + 10];
            for spec in changed {
                updated.remove(&spec.name);
            }
            for spec in changed {
                updated.insert(spec);
            }
            black_box(updated.search(&queries[round % queries.len()], 5))
        });
    });
    group.finish();
}

/// Thread CPU time, which other processes on a busy machine do not inflate
/// (wall time there can be several times the work).
fn cpu_now() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    std::time::Duration::new(
        u64::try_from(t.tv_sec).unwrap_or(0),
        u32::try_from(t.tv_nsec).unwrap_or(0),
    )
}

/// p50 of the thread CPU time of `runs` runs of `f`.
fn cpu_p50(runs: usize, mut f: impl FnMut()) -> std::time::Duration {
    let mut times: Vec<std::time::Duration> = (0..runs)
        .map(|_| {
            let start = cpu_now();
            f();
            cpu_now() - start
        })
        .collect();
    times.sort_unstable();
    times[runs / 2]
}

/// The same three measurements in thread CPU time, printed after criterion's.
fn cpu_times() {
    let specs = eval_tools::specs(10_000);
    let queries = queries();
    let bm25 = SearchIndex::build_with_signals(
        specs.iter(),
        FieldWeights::default(),
        signals(true, false),
    );
    let full = SearchIndex::build(specs.iter());
    let mut i = 0usize;
    let search_bm25 = cpu_p50(2000, || {
        i = (i + 1) % queries.len();
        black_box(bm25.search(&queries[i], 5));
    });
    let search = cpu_p50(2000, || {
        i = (i + 1) % queries.len();
        black_box(full.search(&queries[i], 5));
    });
    let build = cpu_p50(11, || {
        black_box(SearchIndex::build_with_signals(
            specs.iter(),
            FieldWeights::default(),
            signals(true, false),
        ));
    });
    let build_semantic = cpu_p50(11, || {
        black_box(SearchIndex::build(specs.iter()));
    });
    println!(
        "CPU time p50: search_10k_bm25 {search_bm25:?}, search_10k {search:?}, \
         index_build_10k {build:?}, index_build_10k_semantic {build_semantic:?}"
    );
}

criterion_group!(benches, bench);

fn main() {
    benches();
    cpu_times();
    Criterion::default().configure_from_args().final_summary();
}
