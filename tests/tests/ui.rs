//! trybuild ui tests of `#[tool]`: every diagnostic in `ui/fail/<category>/`
//! (one mistake per file, its `.stderr` reviewed like code), and the accepted
//! forms in `ui/pass/`, each of which also runs and checks the registry.
//!
//! Regenerate the expected output after a deliberate change with
//! `TRYBUILD=overwrite cargo test -p tests --test ui`, then review the diff.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("ui/fail/*/*.rs");
    t.pass("ui/pass/*.rs");
}
