//! `context_saving`: schema tokens per request of a 100-tool and a 1 000-tool
//! registry, everything loaded vs. deferred (only `tool_search` and three
//! core tools loaded), counted with `o200k_base` ([`tool_core::tokens`]) on
//! the serialised tool list of each format. Target (issue 14): ≥ 85 % fewer.
//!
//! Run: `cargo bench -p tool-core --features tokens --bench context_saving`.
//! The tools are the evaluation set's (`support/eval_tools.rs`), whose
//! descriptions are short; registries of richer tools save more.

use tool_core::format::Format;
use tool_core::{RegistryView, tokens};

#[path = "support/eval_tools.rs"]
mod eval_tools;

/// The tools kept loaded in the deferred view.
const CORE: [&str; 3] = [
    "filesystem__read_file",
    "filesystem__write_file",
    "filesystem__list_directory",
];

fn count(list: &serde_json::Value) -> usize {
    tokens::count(&serde_json::to_string(list).expect("JSON"))
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument is not supported.
    let mut worst: f64 = 100.0;
    println!("| tools | format | all loaded | deferred (tools sent) | saved |");
    println!("|---|---|---|---|---|");
    for n in [100, 1000] {
        let registry = eval_tools::registry(n);
        let all = RegistryView::new(registry.clone());
        let deferred = RegistryView::new(registry).defer(["*"]).keep_loaded(CORE);
        for format in [
            Format::Anthropic { strict: false },
            Format::OpenAiChat { strict: false },
            Format::Mcp,
        ] {
            let full = count(&all.schemas_in(format).expect("renders"));
            let lean_list = deferred.schemas_new_session(format).expect("renders");
            let sent = lean_list.as_array().map_or(0, Vec::len);
            assert_eq!(sent, CORE.len() + 1, "the core tools and tool_search");
            let lean = count(&lean_list);
            #[allow(clippy::cast_precision_loss, reason = "token counts")]
            let saved = 100.0 * (1.0 - lean as f64 / full as f64);
            worst = worst.min(saved);
            println!(
                "| {n} | {} | {full} | {lean} ({sent}) | {saved:.1} % |",
                format.slug()
            );
        }
    }
    println!("smallest saving: {worst:.1} %");
    assert!(worst >= 85.0, "the deferred lists save only {worst:.1} %");
}
