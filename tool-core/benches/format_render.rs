//! `format_render`: rendering the schemas of 1000 registered tools for one
//! provider format.
//!
//! - `cached`: `ToolRegistry::schemas_in` once the format has been rendered
//!   (target, issue 7: under 5 ms).
//! - `uncached`: what a cache miss costs, lowering all 1000 schemas
//!   (`render_tool` per tool), for OpenAI strict and Gemini, the two longest pipelines.
//! - `view`: a `RegistryView`'s tool list (OpenAI strict) once rendered:
//!   `all` of a view with nothing deferred (`schemas_in`), `deferred` of a
//!   `defer(["*"])` view for a session that loaded three tools (`schemas_for`).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_core::format::{Format, Recursion, render_tool};
use tool_core::{RegistryView, Tool, ToolRegistry, ToolResult, ToolSpec};

/// Sort order.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only its schema is used")]
enum Order {
    Newest,
    Oldest,
    Relevance,
}

/// A filter on note fields.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only its schema is used")]
struct Filter {
    /// Only notes with all of these tags.
    tags: Vec<String>,
    /// Only notes created after this date.
    after: Option<String>,
    /// Include archived notes.
    #[serde(default)]
    archived: bool,
}

/// Search the notes.
#[derive(Deserialize, JsonSchema)]
#[allow(dead_code, reason = "only its schema is used")]
struct SearchArgs {
    /// The query text.
    query: String,
    /// At most this many results.
    limit: Option<u32>,
    /// Sort order.
    order: Order,
    /// Optional filter.
    filter: Option<Filter>,
}

fn registry(n: usize) -> ToolRegistry {
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<SearchArgs>().to_value();
    schema["additionalProperties"] = json!(false);
    let mut registry = ToolRegistry::new();
    for i in 0..n {
        let spec = ToolSpec::new(
            format!("search_notes_{i:04}"),
            "Search the user's notes by text, tags and date.",
            schema.clone(),
        );
        let tool = Tool::new(spec, |_args: Map<String, Value>, _ctx| async move {
            ToolResult::ok("")
        })
        .expect("valid tool");
        registry.register(tool).expect("unique names");
    }
    registry
}

fn bench(c: &mut Criterion) {
    let registry = registry(1000);
    let strict = Format::OpenAiChat { strict: true };
    let gemini = Format::Gemini {
        recursion: Recursion::Refuse,
    };
    for format in [strict, gemini] {
        registry.schemas_in(format).expect("every tool renders");
    }
    c.bench_function("format_render/cached/1000_tools/openai_chat_strict", |b| {
        b.iter(|| black_box(registry.schemas_in(black_box(strict))));
    });
    c.bench_function("format_render/cached/1000_tools/gemini", |b| {
        b.iter(|| black_box(registry.schemas_in(black_box(gemini))));
    });
    let specs: Vec<ToolSpec> = registry.specs().cloned().collect();
    let mut group = c.benchmark_group("format_render/uncached/1000_tools");
    group.sample_size(10);
    for (label, format) in [("openai_chat_strict", strict), ("gemini", gemini)] {
        group.bench_function(label, |b| {
            b.iter(|| {
                for spec in &specs {
                    black_box(render_tool(spec, format).expect("renders"));
                }
            });
        });
    }
    group.finish();

    let all = RegistryView::new(registry.clone());
    let deferred = RegistryView::new(registry).defer(["*"]);
    deferred.load(
        Some("s"),
        &[
            "search_notes_0001",
            "search_notes_0500",
            "search_notes_0999",
        ],
    );
    all.schemas_in(strict).expect("renders");
    deferred.schemas_for(strict, Some("s")).expect("renders");
    c.bench_function("format_render/view/1000_tools/all", |b| {
        b.iter(|| black_box(all.schemas_in(black_box(strict))));
    });
    c.bench_function("format_render/view/1000_tools/deferred", |b| {
        b.iter(|| black_box(deferred.schemas_for(black_box(strict), Some("s"))));
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
