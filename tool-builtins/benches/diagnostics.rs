//! `diagnostics`: what diagnostics after edits cost a write when no server
//! serves the file (issue 27: "diagnostics add no time when unconfigured").
//!
//! One `edit_file` call (through its public fn, on a real file in a
//! temporary workspace, two edits per iteration so the file returns to its
//! first text) in three contexts:
//! - `no_hook`: the file tools as they are without diagnostics;
//! - `unconfigured`: `Diagnostics::new(LspConfig::default()).install(ctx)`
//!   (no server: `install` adds no hook, so this must equal `no_hook`);
//! - `other_extension`: a server configured for `.py` while a `.txt` file
//!   is edited (the hook runs, matches no server, starts nothing).
//!
//! Target: `unconfigured` and `other_extension` within the noise of
//! `no_hook`.
//!
//! Run: `cargo bench -p tool-builtins --bench diagnostics`.

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tool_builtins::diagnostics::{Diagnostics, LspConfig, LspServer};
use tool_core::{IntoToolResult, ToolContext};

/// A workspace with `notes.txt`, read in the returned context.
fn workspace() -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("notes.txt");
    std::fs::write(&file, "alpha\n").expect("write");
    let ctx = tool_builtins::context(dir.path()).expect("context");
    let ledger = ctx.state::<tool_builtins::FileLedger>().expect("ledger");
    let physical = std::fs::canonicalize(&file).expect("canonical");
    ledger
        .record_bytes(&physical, b"alpha\n")
        .expect("recorded read");
    (dir, ctx)
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    let py_only = LspConfig::default().with_server(LspServer::new("/nonexistent/pylsp", ["py"]));
    let cases: [(&str, Option<Arc<Diagnostics>>); 3] = [
        ("no_hook", None),
        ("unconfigured", Some(Diagnostics::new(LspConfig::default()))),
        ("other_extension", Some(Diagnostics::new(py_only))),
    ];
    let mut group = c.benchmark_group("edit_file");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(5));
    for (name, lsp) in cases {
        let (_dir, ctx) = workspace();
        let ctx = match &lsp {
            Some(lsp) => lsp.install(ctx),
            None => ctx,
        };
        group.bench_function(name, |b| {
            b.iter(|| {
                runtime.block_on(async {
                    for (old, new) in [("alpha", "beta"), ("beta", "alpha")] {
                        let r = tool_builtins::edit_file(
                            &ctx,
                            "notes.txt".into(),
                            old.into(),
                            new.into(),
                            false,
                        )
                        .await
                        .into_tool_result();
                        assert!(r.is_ok(), "{r:?}");
                    }
                });
            });
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
