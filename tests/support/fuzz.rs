//! Helpers shared by the property suites (`tool-core/tests/props.rs`,
//! `tool-builtins/tests/props.rs`), included with `#[path]`: case counts
//! from `FUZZ_CASES`, progress ticks for `scripts/fuzz-big`, and one tokio
//! runtime per test thread.

use proptest::test_runner::Config;

/// Cases for a property holding `share` percent of the run: `FUZZ_CASES`
/// (default 10 000) × `share` / 100, at least 16. `PROPTEST_CASES`, when
/// set, overrides this for every property alike (proptest applies it over
/// any configuration).
pub(crate) fn cases(share: u32) -> Config {
    let total: u64 = std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000);
    let n = (total * u64::from(share) / 100).max(16);
    Config {
        cases: u32::try_from(n).unwrap_or(u32::MAX),
        // Failures are turned into named regression tests by hand.
        failure_persistence: None,
        ..Config::default()
    }
}

/// Counts the cases each property ran and, when `FUZZ_REPORT` is set (as
/// `scripts/fuzz-big` does), prints the count every 10 000 cases, so a run
/// stopped by its time box still says how far it got.
pub(crate) fn tick(name: &'static str) {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    static COUNTS: std::sync::Mutex<std::collections::BTreeMap<&'static str, u64>> =
        std::sync::Mutex::new(std::collections::BTreeMap::new());
    if !*ON.get_or_init(|| std::env::var_os("FUZZ_REPORT").is_some()) {
        return;
    }
    let mut counts = COUNTS
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let n = counts.entry(name).or_default();
    *n += 1;
    if *n % 10_000 == 0 {
        eprintln!("fuzz-cases {name} {n}");
    }
}

thread_local! {
    /// One runtime per test thread, shared by its cases (building one per
    /// case cost more than most calls).
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime");
}

/// Runs `f` on this thread's runtime.
pub(crate) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    RUNTIME.with(|rt| rt.block_on(f))
}
