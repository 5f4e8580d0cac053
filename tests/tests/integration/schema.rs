//! Schema shapes: required / optional / default, docs from every source, renames, examples.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tool_core::{ToolKind, ToolRegistry, tool};

/// A point on a map.
#[derive(Debug, Deserialize, Serialize, JsonSchema)]
pub(crate) struct Point {
    /// Degrees north.
    pub lat: f64,
    /// Degrees east.
    pub lon: f64,
}

/// Find places near a point.
///
/// Results are sorted by distance.
///
/// # Arguments
/// * `query` - What to look for.
/// * `near` - Centre of the search.
/// * `radius_km` - Search radius in kilometres.
/// * `tags` - Only places with all these tags.
///
/// # Returns
/// One line per place.
///
/// # Examples
/// ```json
/// {"query": "coffee", "near": {"lat": 1.0, "lon": 2.0}}
/// ```
#[tool(
    kind = "read",
    read_only,
    idempotent,
    open_world,
    concurrency_safe,
    timeout = "2s",
    strict
)]
async fn schema_find_places(
    query: String,
    near: Point,
    #[arg(default = 5)] radius_km: u32,
    tags: Option<Vec<String>>,
    /// Language of the answer (parameter doc).
    lang: Option<String>,
    #[arg(description = "Maximum results (attribute wins).", rename = "max")]
    /// This parameter doc loses to the attribute.
    max_results: Option<u8>,
    #[arg(default)] verbose: bool,
) -> String {
    format!(
        "{query} {} {} {radius_km} {tags:?} {lang:?} {max_results:?} {verbose}",
        near.lat, near.lon
    )
}

/// Rank candidates.
///
/// Args:
///     items: The candidates to rank.
///     weights: Weight per criterion,
///         between 0 and 1.
#[tool(
    name = "schema-rank_v2",
    display(en(name = "Rank"), zh(name = "排序", params(items = "候选")))
)]
fn schema_rank(items: Vec<String>, weights: BTreeMap<String, f32>) -> Vec<String> {
    let _ = weights;
    items
}

fn spec(name: &str) -> &'static tool_core::ToolSpec {
    ToolRegistry::global()
        .get(name)
        .unwrap_or_else(|| panic!("{name} registered"))
        .spec()
}

#[test]
fn description_keeps_other_sections_and_drops_arguments_and_examples() {
    let s = spec("schema_find_places");
    assert_eq!(
        s.description,
        "Find places near a point.\n\nResults are sorted by distance.\n\n# Returns\nOne line per place."
    );
    assert_eq!(s.summary(), "Find places near a point.");
    assert_eq!(
        s.input_examples,
        vec![json!({"query": "coffee", "near": {"lat": 1.0, "lon": 2.0}})]
    );
}

#[test]
fn required_optional_and_defaults() {
    let p = &spec("schema_find_places").parameters;
    assert_eq!(p["type"], "object");
    assert_eq!(p["additionalProperties"], false);
    assert_eq!(p["required"], json!(["query", "near"]));
    let props = p["properties"].as_object().unwrap();
    let names: Vec<&str> = props.keys().map(String::as_str).collect();
    assert_eq!(
        names,
        [
            "query",
            "near",
            "radius_km",
            "tags",
            "lang",
            "max",
            "verbose"
        ]
    );
    assert_eq!(props["radius_km"]["default"], 5);
    assert_eq!(props["radius_km"]["type"], "integer");
    assert!(
        props["verbose"].get("default").is_none(),
        "#[arg(default)] has no JSON default to show"
    );
    assert_eq!(props["tags"]["type"], json!(["array", "null"]));
}

#[test]
fn descriptions_from_every_source() {
    let props = &spec("schema_find_places").parameters["properties"];
    assert_eq!(props["query"]["description"], "What to look for.");
    assert_eq!(
        props["radius_km"]["description"],
        "Search radius in kilometres."
    );
    assert_eq!(
        props["lang"]["description"],
        "Language of the answer (parameter doc)."
    );
    assert_eq!(
        props["max"]["description"],
        "Maximum results (attribute wins)."
    );
    let rank = &spec("schema-rank_v2").parameters["properties"];
    assert_eq!(rank["items"]["description"], "The candidates to rank.");
    assert_eq!(
        rank["weights"]["description"],
        "Weight per criterion, between 0 and 1."
    );
}

#[test]
fn struct_parameters_use_defs() {
    let p = &spec("schema_find_places").parameters;
    let near = &p["properties"]["near"];
    assert_eq!(near["$ref"], "#/$defs/Point");
    assert_eq!(near["description"], "Centre of the search.");
    assert_eq!(
        p["$defs"]["Point"]["properties"]["lat"]["description"],
        "Degrees north."
    );
    assert_eq!(p["$defs"]["Point"]["required"], json!(["lat", "lon"]));
}

#[test]
fn options_are_recorded_in_the_spec() {
    let s = spec("schema_find_places");
    assert_eq!(s.kind, ToolKind::Read);
    assert!(
        s.flags.read_only
            && s.flags.idempotent
            && s.flags.open_world
            && s.flags.concurrency_safe
            && s.flags.strict
    );
    assert!(!s.flags.destructive && !s.flags.requires_confirmation);
    assert_eq!(s.timeout, Some(std::time::Duration::from_secs(2)));
    let src = s.source.as_ref().unwrap();
    assert!(src.file.ends_with("schema.rs"), "{}", src.file);
    assert!(src.line > 0);

    let r = spec("schema-rank_v2");
    assert_eq!(r.kind, ToolKind::Other);
    assert_eq!(r.display["zh"].name.as_deref(), Some("排序"));
    assert_eq!(r.display["zh"].params["items"], "候选");
    assert_eq!(r.display["en"].name.as_deref(), Some("Rank"));
}

#[test]
fn canonical_schema_object() {
    let all = ToolRegistry::global().schemas();
    let entry = all.iter().find(|s| s["name"] == "schema-rank_v2").unwrap();
    assert_eq!(entry["description"], "Rank candidates.");
    assert_eq!(entry["parameters"]["required"], json!(["items", "weights"]));
    assert_eq!(entry.as_object().unwrap().len(), 3);
    let _: &Value = &entry["parameters"];
}

#[tokio::test]
async fn defaults_and_renames_apply_at_call_time() {
    let ctx = tool_core::ToolContext::new();
    let r = ToolRegistry::global()
        .execute(
            "schema_find_places",
            json!({"query": "tea", "near": {"lat": 1.5, "lon": -2}, "max": 3}),
            &ctx,
        )
        .await;
    assert_eq!(r.output, "tea 1.5 -2 5 None None Some(3) false");
    let r = ToolRegistry::global()
        .execute(
            "schema_find_places",
            json!({"query": "tea", "near": {"lat": 0, "lon": 0}, "max_results": 3}),
            &ctx,
        )
        .await;
    let e = r.error.unwrap();
    assert!(
        e.message.contains("Unknown parameter `max_results`"),
        "{}",
        e.message
    );
    assert!(e.message.contains("`max`"), "{}", e.message);
}

/// A forecast.
#[derive(Serialize, JsonSchema)]
pub(crate) struct Forecast {
    /// Degrees Celsius.
    pub celsius: f32,
    /// Where.
    pub place: Point,
}

/// Forecast the weather.
#[tool]
async fn schema_forecast(city: String) -> Result<Forecast, String> {
    let _ = city;
    Ok(Forecast {
        celsius: 21.5,
        place: Point { lat: 0.0, lon: 0.0 },
    })
}

/// List cities.
#[tool]
fn schema_cities() -> Vec<String> {
    vec![]
}

#[test]
fn structured_returns_have_an_output_schema() {
    let out = spec("schema_forecast")
        .output_schema
        .clone()
        .expect("an output schema");
    assert_eq!(out["type"], "object");
    assert_eq!(out["required"], json!(["celsius", "place"]));
    assert_eq!(
        out["properties"]["celsius"]["description"],
        "Degrees Celsius."
    );
    assert_eq!(out["properties"]["place"]["$ref"], "#/$defs/Point");
    assert_eq!(out["$defs"]["Point"]["type"], "object");
    // Not an object: no output schema (MCP requires objects); text returns have none.
    assert!(spec("schema_cities").output_schema.is_none());
    assert!(spec("schema-rank_v2").output_schema.is_none());
    assert!(spec("schema_find_places").output_schema.is_none());

    let mcp =
        tool_core::format::render_tool(spec("schema_forecast"), tool_core::Format::Mcp).unwrap();
    assert_eq!(mcp["outputSchema"]["type"], "object");
    // Kept as declared for MCP (SEP-1613): the client resolves `$ref`.
    assert_eq!(
        mcp["outputSchema"]["properties"]["place"]["$ref"],
        "#/$defs/Point"
    );
    assert_eq!(mcp["outputSchema"]["$defs"]["Point"]["type"], "object");
    let plain =
        tool_core::format::render_tool(spec("schema_cities"), tool_core::Format::Mcp).unwrap();
    assert!(plain.get("outputSchema").is_none());
}
