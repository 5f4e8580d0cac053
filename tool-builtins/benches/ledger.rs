//! `ledger`: what one read costs the persistent read ledger of a trace that
//! has already read 4 000 files (issue 23 item 6: the ledger file was
//! rewritten whole on every read, 5.8 ms → 31 ms per `tool call read_file`
//! at 4 000 files).
//!
//! Measures one `record_bytes` (what `read_file` does after reading) plus
//! one `get` (what the next write checks), through
//! a persistent ledger (`FileLedger::in_store` on a `FileStore`; before
//! issue 23, `FileLedger::persistent` on a JSON file), on real files in a
//! temporary folder.
//! Target: flat in the number of files already read (under 1 ms at 4 000).
//!
//! Run: `cargo bench -p tool-builtins --bench ledger`.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use tool_builtins::FileLedger;

/// Files read before the measured one.
const ALREADY_READ: usize = 4_000;

fn bench(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("f.txt");
    std::fs::write(&file, "x").expect("write");
    let store = std::sync::Arc::new(tool_core::state::FileStore::new(dir.path().join("state")));
    let key = tool_core::state::StateKey::new("ledger", "bench", dir.path()).expect("key");
    let ledger = FileLedger::in_store(store, key);
    // Distinct paths (the ledger keys on the path; the file behind it is one).
    for i in 0..ALREADY_READ {
        let path = dir.path().join(format!("f.txt/../{i}/f.txt"));
        let meta = std::fs::metadata(&file).expect("meta");
        ledger.record(
            &path,
            tool_builtins::fs::ledger::Stamp::new(&meta, i as u64),
        );
    }
    let mut group = c.benchmark_group("ledger");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(5));
    let mut n = ALREADY_READ;
    group.bench_function("read_at_4000_files", |b| {
        b.iter(|| {
            n += 1;
            let path = dir.path().join(format!("f.txt/../{n}/f.txt"));
            let meta = std::fs::metadata(&file).expect("meta");
            ledger.record(
                &path,
                tool_builtins::fs::ledger::Stamp::new(&meta, n as u64),
            );
            black_box(ledger.get(&path));
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
