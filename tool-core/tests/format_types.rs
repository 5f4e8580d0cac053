//! Every parameter type of issue 7 × every provider format: the rendering is
//! snapshotted (insta, `tests/snapshots/`), every successful rendering passes
//! the target's validator, and the set of refusals is exactly the expected one.
//!
//! The Gemini renderings in the snapshots are also checked by the
//! `google-genai` SDK's own models in CI (`tests/gemini_sdk_check.py`).

#![allow(
    dead_code,
    reason = "the test types are only deserialised and described, never read"
)]

use std::collections::{BTreeMap, HashMap};
use std::fmt::Debug;
use std::num::NonZeroU8;

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tool_core::format::{Format, Recursion, render_tool, validate_parameters};
use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec, tool};

/// A struct with an optional, a defaulted and a required field.
#[derive(Debug, Deserialize, JsonSchema)]
struct Inner {
    /// An optional note.
    a: Option<String>,
    /// A count that defaults to zero.
    #[serde(default)]
    b: u32,
    /// A required flag.
    c: bool,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Outer {
    inner: Inner,
    maybe: Option<Inner>,
    #[serde(default)]
    tags: Vec<String>,
}

/// A colour.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Color {
    Red,
    Green,
    Blue,
}

/// A shape, tagged by `kind`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
enum Shape {
    Circle { radius: f64 },
    Rect { width: f64, height: f64 },
}

/// An action, externally tagged.
#[derive(Debug, Deserialize, JsonSchema)]
enum Action {
    Stop,
    Move { x: i32, y: i32 },
    Say(String),
}

/// A number, a word or a pair.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
enum Loose {
    Number(i64),
    Word(String),
    Pair { a: u8, b: u8 },
}

/// A tree of integers.
#[derive(Debug, Deserialize, JsonSchema)]
struct Tree {
    value: i32,
    #[serde(default)]
    children: Vec<Tree>,
}

/// A point on the map.
#[derive(Debug, Deserialize, JsonSchema)]
struct Point {
    x: f64,
    y: f64,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Trip {
    /// Where to go.
    destination: Point,
    /// Where to start; the current position when absent.
    start: Option<Point>,
}

#[derive(Debug, Deserialize, JsonSchema)]
struct Flat {
    name: String,
    #[serde(flatten)]
    inner: Inner,
}

/// Arguments whose root is an object plus a flattened enum (a root `oneOf`).
#[derive(Debug, Deserialize, JsonSchema)]
struct Lookup {
    /// How many results.
    limit: Option<u8>,
    #[serde(flatten)]
    by: LookupBy,
}

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(tag = "by", rename_all = "snake_case")]
enum LookupBy {
    Id { id: u64 },
    Name { name: String },
}

/// The parameters schema the `#[tool]` macro builds for one parameter
/// `value: T` (same generator settings, root shape and `$defs`).
fn single_param_schema<T: JsonSchema>(optional: bool) -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.subschema_for::<T>().to_value();
    if let Value::Object(o) = &mut schema {
        o.insert("description".to_owned(), json!("The value under test."));
    }
    let mut root = Map::new();
    root.insert("type".to_owned(), json!("object"));
    root.insert("properties".to_owned(), json!({ "value": schema }));
    root.insert(
        "required".to_owned(),
        if optional {
            json!([])
        } else {
            json!(["value"])
        },
    );
    root.insert("additionalProperties".to_owned(), json!(false));
    let defs = generator.take_definitions(true);
    if !defs.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(defs));
    }
    Value::Object(root)
}

/// A tool `name` taking `value: T`; it answers with the `Debug` of what it received.
pub fn param_tool<T>(name: &str, optional: bool) -> Tool
where
    T: JsonSchema + DeserializeOwned + Debug + Send + 'static,
{
    let spec = ToolSpec::new(
        name,
        format!("Echo a `{}`.", std::any::type_name::<T>()),
        single_param_schema::<T>(optional),
    );
    let owned = name.to_owned();
    Tool::new(spec, move |mut args: Map<String, Value>, _ctx| {
        let name = owned.clone();
        async move {
            let value = args.remove("value").unwrap_or(Value::Null);
            match serde_json::from_value::<T>(value) {
                Ok(v) => ToolResult::ok(format!("{v:?}")),
                Err(e) => ToolResult::failed(format!("{name}: {e}")),
            }
        }
    })
    .expect("test tools are valid")
}

/// A tool whose parameters schema is `T`'s own root schema.
fn root_tool<T>(name: &str) -> Tool
where
    T: JsonSchema + DeserializeOwned + Debug + Send + 'static,
{
    let generator = SchemaSettings::draft2020_12().into_generator();
    let mut schema = generator.into_root_schema_for::<T>().to_value();
    if let Value::Object(o) = &mut schema {
        o.insert("additionalProperties".to_owned(), json!(false));
    }
    let spec = ToolSpec::new(name, "Look something up.", schema);
    Tool::new(spec, |args: Map<String, Value>, _ctx| async move {
        match serde_json::from_value::<T>(Value::Object(args)) {
            Ok(v) => ToolResult::ok(format!("{v:?}")),
            Err(e) => ToolResult::failed(e.to_string()),
        }
    })
    .expect("test tools are valid")
}

/// The table: one tool per parameter type of issue 7.
pub fn table() -> Vec<Tool> {
    vec![
        param_tool::<Option<String>>("option_string", true),
        param_tool::<Option<Vec<u32>>>("option_vec_u32", true),
        param_tool::<Outer>("nested_struct", false),
        param_tool::<Color>("unit_enum", false),
        param_tool::<Shape>("internally_tagged", false),
        param_tool::<Action>("externally_tagged", false),
        param_tool::<Loose>("untagged", false),
        param_tool::<HashMap<String, u8>>("hash_map", false),
        param_tool::<u64>("u64", false),
        param_tool::<NonZeroU8>("non_zero_u8", false),
        param_tool::<url::Url>("url", false),
        param_tool::<chrono::DateTime<chrono::Utc>>("date_time", false),
        param_tool::<Tree>("recursive_tree", false),
        param_tool::<Trip>("documented_struct_field", false),
        param_tool::<Flat>("serde_flatten", false),
        root_tool::<Lookup>("flattened_enum_root"),
    ]
}

/// The formats of the table: every format, plus Gemini with recursion unrolled.
fn formats() -> Vec<Format> {
    let mut all = Format::ALL.to_vec();
    all.push(Format::Gemini {
        recursion: Recursion::Unroll(2),
    });
    all
}

/// (tool, format slug) pairs that must be refused, each with its rule id.
const EXPECTED_REFUSALS: &[(&str, &str, &str)] = &[
    (
        "hash_map",
        "openai-chat-strict",
        "openai.strict.additional-properties",
    ),
    (
        "hash_map",
        "openai-responses-strict",
        "openai.strict.additional-properties",
    ),
    (
        "hash_map",
        "anthropic-strict",
        "anthropic.strict.additional-properties",
    ),
    ("hash_map", "gemini", "gemini.objects"),
    ("hash_map", "gemini-unroll-2", "gemini.objects"),
    (
        "recursive_tree",
        "anthropic-strict",
        "anthropic.strict.recursion",
    ),
    ("recursive_tree", "gemini", "gemini.recursion"),
];

#[test]
fn every_type_in_every_format() {
    let mut refusals = Vec::new();
    for tool in table() {
        let spec = tool.spec();
        let mut snapshot = BTreeMap::new();
        for format in formats() {
            let slug = format.slug();
            let entry = match render_tool(spec, format) {
                Ok(rendered) => {
                    let params = rendered
                        .pointer(format.parameters_pointer())
                        .cloned()
                        .unwrap_or_else(|| json!({"type": "OBJECT", "properties": {}}));
                    if let Err(e) =
                        validate_parameters(format, &spec.name, &params, format.is_strict_for(spec))
                    {
                        panic!("{} × {slug}: rendered but invalid: {e}", spec.name);
                    }
                    rendered
                }
                Err(e) => {
                    assert!(!e.rule.source.is_empty(), "every rule cites its source");
                    refusals.push((spec.name.clone(), slug.clone(), e.rule.id.to_owned()));
                    json!({"error": {
                        "step": e.step,
                        "path": e.path,
                        "rule": e.rule.id,
                        "message": e.message,
                    }})
                }
            };
            snapshot.insert(slug, entry);
        }
        insta::assert_json_snapshot!(spec.name.clone(), snapshot);
    }
    let expected: Vec<(String, String, String)> = EXPECTED_REFUSALS
        .iter()
        .map(|(t, f, r)| ((*t).to_owned(), (*f).to_owned(), (*r).to_owned()))
        .collect();
    assert_eq!(refusals, expected);
}

#[test]
fn refusal_messages_name_path_rule_and_source() {
    let tool = param_tool::<Tree>("tree", false);
    let err = render_tool(
        tool.spec(),
        Format::Gemini {
            recursion: Recursion::Refuse,
        },
    )
    .expect_err("Gemini cannot take a recursive type");
    assert_eq!(err.step, "inline_refs");
    assert_eq!(err.path, "/properties/value/properties/children/items");
    let text = err.to_string();
    assert!(
        text.contains("tool `tree` cannot be rendered for Gemini"),
        "{text}"
    );
    assert!(text.contains("`Tree` contains itself"), "{text}");
    assert!(text.contains("source: Gemini API reference"), "{text}");
}

/// The same parameter types through `#[tool]`: one fn per table row, same name.
mod macro_tools {
    use super::{Action, Color, Flat, Loose, Outer, Shape, Tree, Trip, tool};
    use std::collections::HashMap;
    use std::num::NonZeroU8;

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn option_string(value: Option<String>) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn option_vec_u32(value: Option<Vec<u32>>) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn nested_struct(value: Outer) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn unit_enum(value: Color) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn internally_tagged(value: Shape) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn externally_tagged(value: Action) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn untagged(value: Loose) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn hash_map(value: HashMap<String, u8>) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn u64(value: u64) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn non_zero_u8(value: NonZeroU8) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn url(value: url::Url) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn date_time(value: chrono::DateTime<chrono::Utc>) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn recursive_tree(value: Tree) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn documented_struct_field(value: Trip) -> String {
        format!("{value:?}")
    }

    /// Echo.
    ///
    /// # Arguments
    /// * `value` - The value under test.
    #[tool]
    fn serde_flatten(value: Flat) -> String {
        format!("{value:?}")
    }
}

#[test]
fn macro_tools_have_the_table_schemas() {
    let global = ToolRegistry::global();
    let mut compared = 0;
    for runtime in table() {
        let Some(generated) = global.get(runtime.name()) else {
            // `flattened_enum_root` has no single-parameter macro form.
            continue;
        };
        assert_eq!(
            generated.spec().parameters,
            runtime.spec().parameters,
            "`{}`: #[tool] and the table build different schemas",
            runtime.name()
        );
        compared += 1;
    }
    assert_eq!(compared, 15);
}
