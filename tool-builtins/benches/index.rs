//! Indexed search against the scan and ripgrep (issue 29), on the corpus
//! at `$CORPUS` (run through `benches/index.sh`, which makes one with the
//! shared generator). Prints one report:
//!
//! - cold build (no stored index; files in the page cache): seconds, index
//!   size on disk against the text it covers, peak memory of the build;
//! - 20 selective patterns (identifiers, `fn\s+\w+_handler`, a string with a
//!   typo, case-insensitive, an alternation, a class): p50 and p95 of the
//!   indexed `grep_content` (`RUNS` runs each, default 10) against the
//!   scan's (`SCAN_RUNS`, default 2) and `rg -n`'s (`RG_RUNS`, default 3);
//!   every indexed result is checked equal to the scan's;
//! - a dense pattern (`fn `): indexed against the scan (3 runs each);
//! - an edit behind the tools' back followed at once by a grep that must
//!   find it (5 times);
//! - memory while serving, measured in a second process that reuses the
//!   stored index and runs the same 20 patterns (peak resident set).
//!
//! The serving half alone, for a profiler: `index-<hash> --serve` with
//! `CORPUS`, `BENCH_STATE` (a state folder: built there on the first run,
//! reused after), `LOOPS` (runs of each pattern, default 3) and `NO_WATCH`
//! (set: no watcher, every change trusted to come through the write hook).
//!
//! The build alone: `index-<hash> --build` with `CORPUS`, `BUILDS` (cold
//! builds, default 3; the first in a process also pays for fresh memory),
//! `BUILD_THREADS` (default: the machine's) and `NO_PERSIST` (set: the
//! index is kept in memory, not written).
//!
//! `PATTERNS` names a file of other selective patterns, one per line:
//! `benches/selective_patterns_rust.txt` holds 20 real-code ones for a
//! corpus of Rust crate sources (a copy of `~/.cargo/registry/src`: the
//! benchmark edits a file of the corpus and puts it back).
//!
//! Not run by `cargo test`; `cargo bench --bench index` with `CORPUS` set.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use tool_builtins::{ContentIndex, IndexConfig, IndexStatus, Workspace, grep_content};
use tool_core::{IntoToolResult, ToolContext};

/// The 20 selective patterns, one per line (also read by the index's
/// `candidate_counts` test).
const SELECTIVE_TEXT: &str = include_str!("selective_patterns.txt");

/// The selective patterns: those of `selective_patterns.txt`, or of the
/// file `PATTERNS` names (one per line; `selective_patterns_rust.txt`
/// holds 20 for a corpus of Rust crate sources).
fn selective() -> Vec<String> {
    let text = match std::env::var_os("PATTERNS") {
        Some(path) => std::fs::read_to_string(&path).expect("the PATTERNS file"),
        None => SELECTIVE_TEXT.to_owned(),
    };
    text.lines()
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect()
}

fn main() {
    let Some(corpus) = std::env::var_os("CORPUS").map(PathBuf::from) else {
        eprintln!("set CORPUS to a folder (benches/index.sh makes one)");
        std::process::exit(2);
    };
    // cargo bench passes `--bench`; the serving half is this binary again.
    if std::env::args().any(|a| a == "--serve") {
        serve(&corpus);
        return;
    }
    if std::env::args().any(|a| a == "--build") {
        build_only(&corpus);
        return;
    }
    let env = |name: &str, default: usize| -> usize {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let (runs, rg_runs, scan_runs) = (env("RUNS", 10), env("RG_RUNS", 3), env("SCAN_RUNS", 2));
    let state = tempdir();
    let ws = Workspace::new(&corpus).expect("corpus");
    let config = IndexConfig::default().with_state_dir(&state);
    let scan = tool_builtins::context(&corpus).expect("context");

    // rg: one scan of the corpus, as ripgrep's default search (all files).
    let mut rg = Vec::new();
    for p in &selective() {
        for _ in 0..rg_runs {
            rg.push(time(|| {
                let out = Command::new("rg")
                    .args(["-n", "--", p.as_str()])
                    .arg(&corpus)
                    .output()
                    .expect("rg");
                drop(out);
            }));
        }
    }
    let rg_scan = median(&rg);

    let index = ContentIndex::new(&ws, config.clone());
    let started = Instant::now();
    let status = index.build();
    let build = started.elapsed();
    let IndexStatus::Ready {
        files,
        source_bytes,
        disk_bytes,
        ..
    } = status
    else {
        eprintln!("no index: {status}");
        std::process::exit(1);
    };
    let build_peak = peak_rss();
    let indexed = scan.clone().with_state(index.clone());

    let (mut ours, mut scans) = (Vec::new(), Vec::new());
    for p in &selective() {
        let want = grep(&scan, p);
        for _ in 0..scan_runs {
            scans.push(time(|| drop(grep(&scan, p))));
        }
        let got = grep(&indexed, p);
        assert_eq!(got, want, "indexed result differs from the scan for {p}");
        for _ in 0..runs {
            ours.push(time(|| drop(grep(&indexed, p))));
        }
    }
    let answered = index.answered();

    let dense_scan: Vec<Duration> = (0..3).map(|_| time(|| drop(grep(&scan, "fn ")))).collect();
    let dense_ours: Vec<Duration> = (0..3)
        .map(|_| time(|| drop(grep(&indexed, "fn "))))
        .collect();
    assert_eq!(grep(&indexed, "fn "), grep(&scan, "fn "));

    // An edit behind the back, then at once a grep that must see it.
    let target = first_text_file(&corpus);
    let original = std::fs::read(&target).expect("read");
    let mut edits = Vec::new();
    for i in 0..5 {
        let token = format!("fresh_token_{i}_{}", std::process::id());
        let mut text = original.clone();
        text.extend_from_slice(format!("let {token} = 1;\n").as_bytes());
        std::fs::write(&target, &text).expect("write");
        let mut found = String::new();
        edits.push(time(|| found = grep(&indexed, &token)));
        assert!(
            found.starts_with("Found 1 matches"),
            "the edit was not seen: {found}"
        );
    }
    std::fs::write(&target, &original).expect("restore");

    let serving = Command::new(std::env::current_exe().expect("exe"))
        .arg("--serve")
        .env("CORPUS", &corpus)
        .env("BENCH_STATE", &state)
        .output()
        .expect("serve half");
    let serving = String::from_utf8_lossy(&serving.stdout).trim().to_owned();

    let mib = |b: u64| b as f64 / 1_048_576.0;
    println!(
        "corpus {}: {files} files, {:.0} MiB indexed text",
        corpus.display(),
        mib(source_bytes)
    );
    println!(
        "build (cold, no stored index): {:.2} s = {:.1}x one rg scan ({:.0} ms); index {:.1} MiB on disk = {:.1} % of the text; build peak RSS {:.0} MiB",
        build.as_secs_f64(),
        build.as_secs_f64() / rg_scan.as_secs_f64(),
        ms(rg_scan),
        mib(disk_bytes),
        disk_bytes as f64 * 100.0 / source_bytes as f64,
        mib(build_peak),
    );
    println!(
        "20 selective patterns: indexed p50 {:.1} ms p95 {:.1} ms ({runs} runs each, {answered} answered from the index) | scan ({scan_runs} runs each) p50 {:.0} ms p95 {:.0} ms | rg ({rg_runs} runs each) p50 {:.0} ms p95 {:.0} ms | indexed vs rg at p50: {:.0}x faster",
        ms(pct(&ours, 50)),
        ms(pct(&ours, 95)),
        ms(pct(&scans, 50)),
        ms(pct(&scans, 95)),
        ms(pct(&rg, 50)),
        ms(pct(&rg, 95)),
        pct(&rg, 50).as_secs_f64() / pct(&ours, 50).as_secs_f64(),
    );
    println!(
        "dense `fn `: indexed median {:.0} ms, scan median {:.0} ms",
        ms(median(&dense_ours)),
        ms(median(&dense_scan))
    );
    println!(
        "edit behind the back, then grep: median {:.1} ms, max {:.1} ms (5 edits, each seen)",
        ms(median(&edits)),
        ms(edits.iter().copied().max().unwrap_or_default())
    );
    println!("serving (a second process reusing the stored index): {serving}");
    drop(index);
    let _ = std::fs::remove_dir_all(&state);
}

/// The build alone, for a profiler: `BUILDS` cold builds (default 3) into
/// fresh state folders, each timed, with their median.
fn build_only(corpus: &Path) {
    let builds = std::env::var("BUILDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3usize);
    let ws = Workspace::new(corpus).expect("corpus");
    let mut times = Vec::new();
    for _ in 0..builds {
        let state = tempdir();
        let threads = std::env::var("BUILD_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        let config = IndexConfig::default()
            .with_state_dir(&state)
            .with_threads(threads)
            .with_persist(std::env::var_os("NO_PERSIST").is_none());
        let index = ContentIndex::new(&ws, config);
        times.push(time(|| drop(index.build())));
        drop(index);
        let _ = std::fs::remove_dir_all(&state);
    }
    let shown: Vec<String> = times.iter().map(|t| format!("{:.0}", ms(*t))).collect();
    println!(
        "builds: {} ms, median {:.0} ms",
        shown.join(" "),
        ms(median(&times))
    );
}

/// The serving half: reuse the stored index, answer the 20 patterns, report memory.
fn serve(corpus: &Path) {
    let state = std::env::var_os("BENCH_STATE")
        .map(PathBuf::from)
        .expect("BENCH_STATE");
    let ws = Workspace::new(corpus).expect("corpus");
    let mut config = IndexConfig::default().with_state_dir(&state);
    if std::env::var_os("NO_WATCH").is_some() {
        config = config.with_watch(false).with_trusted_writes(true);
    }
    let index = ContentIndex::new(&ws, config);
    let started = Instant::now();
    let status = index.build();
    let load = started.elapsed();
    let ctx = tool_builtins::context(corpus)
        .expect("context")
        .with_state(index.clone());
    let mut times = Vec::new();
    // LOOPS (default 3) runs of each pattern: more for a profiler.
    let loops = std::env::var("LOOPS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    for p in &selective() {
        for _ in 0..loops {
            times.push(time(|| drop(grep(&ctx, p))));
        }
    }
    let reused = matches!(status, IndexStatus::Ready { reused: true, .. });
    println!(
        "reused {reused} in {:.2} s (walk and check), p50 {:.1} ms, peak RSS {:.0} MiB, RSS now {:.0} MiB",
        load.as_secs_f64(),
        ms(pct(&times, 50)),
        peak_rss() as f64 / 1_048_576.0,
        rss() as f64 / 1_048_576.0
    );
}

fn grep(ctx: &ToolContext, pattern: &str) -> String {
    let r = grep_content(pattern.to_owned(), None, None, None, ctx).into_tool_result();
    format!("{}{:?}", r.output, r.metadata)
}

fn time(f: impl FnOnce()) -> Duration {
    let t = Instant::now();
    f();
    t.elapsed()
}

fn pct(samples: &[Duration], p: usize) -> Duration {
    let mut s = samples.to_vec();
    s.sort();
    s[((s.len() - 1) * p) / 100]
}

fn median(samples: &[Duration]) -> Duration {
    pct(samples, 50)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn status_kib(field: &str) -> u64 {
    let text = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    text.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .unwrap_or(0)
        * 1024
}

fn peak_rss() -> u64 {
    status_kib("VmHWM:")
}

fn rss() -> u64 {
    status_kib("VmRSS:")
}

fn tempdir() -> PathBuf {
    let dir = std::env::temp_dir().join(format!("index-bench-state-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("state dir");
    dir
}

/// A `.rs` file the index lists (not ignored, not binary): under `src`
/// in the generator's corpus, anywhere in another (crate sources).
fn first_text_file(corpus: &Path) -> PathBuf {
    let src = corpus.join("src");
    let mut dirs = vec![if src.is_dir() {
        src
    } else {
        corpus.to_path_buf()
    }];
    while let Some(d) = dirs.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&d)
            .expect("read_dir")
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if name == "target"
                || name == "node_modules"
                || name == "generated"
                || name.starts_with('.')
            {
                continue;
            }
            if p.is_dir() {
                dirs.push(p);
            } else if name.ends_with(".rs") {
                return p;
            }
        }
    }
    panic!("no .rs file under {}/src", corpus.display());
}
