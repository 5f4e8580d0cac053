//! `#[arg(flatten)]`: a whole-argument struct whose fields are the tool's
//! top-level parameters, through the schema, every provider rendering,
//! argument repair, the argument errors and `execute`.
#![allow(
    deprecated,
    reason = "tools whose parameters are left undocumented on purpose: #[tool] warns of each"
)]

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tool_core::{Format, ToolCall, ToolContext, ToolRegistry, tool, toolset};

/// Which notes to look at.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NoteFilter {
    /// Only notes with this tag.
    pub tag: Option<String>,
    /// Only notes of this kind.
    pub kind: NoteKind,
}

/// A kind of note.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum NoteKind {
    /// A to-do item.
    Todo,
    /// Anything else.
    Plain,
}

/// A note search.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct NoteQuery {
    /// Words to look for.
    pub query: String,
    /// At most this many notes, 1 to 50.
    #[serde(default = "ten")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
    /// Match case exactly.
    #[serde(rename = "caseSensitive", default)]
    pub case_sensitive: bool,
    /// Narrow the search.
    pub filter: Option<NoteFilter>,
    pub since: Option<String>,
}

fn ten() -> u32 {
    10
}

/// Search the user's notes.
///
/// # Arguments
/// * `since` - Only notes after this date (from the fn doc).
#[tool(
    hidden_params = ["uid"],
    requires_confirmation,
    editable_params = ["query"],
    display(en(params(query = "Search words")))
)]
async fn flat_notes(
    #[arg(flatten)] q: NoteQuery,
    /// Show the note bodies.
    verbose: Option<bool>,
    uid: String,
) -> String {
    format!(
        "{}|{}|{}|{:?}|{:?}|{verbose:?}|{uid}",
        q.query,
        q.limit,
        q.case_sensitive,
        q.filter.map(|f| (f.tag, f.kind)),
        q.since
    )
}

fn registry() -> &'static ToolRegistry {
    ToolRegistry::global()
}

fn params() -> &'static Value {
    &registry().get("flat_notes").unwrap().spec().parameters
}

fn ctx() -> ToolContext {
    ToolContext::new()
        .with_value("uid", json!("ann"))
        .with_approver(|_req: tool_core::ApprovalRequest| async {
            tool_core::ApprovalDecision::Approve
        })
}

#[test]
fn fields_are_top_level_properties_with_their_docs() {
    let p = params();
    let names: Vec<&String> = p["properties"].as_object().unwrap().keys().collect();
    assert_eq!(
        names,
        [
            "query",
            "limit",
            "caseSensitive",
            "filter",
            "since",
            "verbose"
        ]
    );
    // Required as schemars says: `Option` and `#[serde(default)]` fields are not.
    assert_eq!(p["required"], json!(["query"]));
    assert_eq!(p["additionalProperties"], false);
    let props = &p["properties"];
    assert_eq!(props["query"]["description"], "Words to look for.");
    assert_eq!(
        props["limit"]["description"],
        "At most this many notes, 1 to 50."
    );
    assert_eq!(props["limit"]["maximum"], 50);
    assert_eq!(props["limit"]["default"], 10);
    assert_eq!(props["caseSensitive"]["type"], "boolean");
    // A field without a doc comment takes the fn doc's argument section.
    assert_eq!(
        props["since"]["description"],
        "Only notes after this date (from the fn doc)."
    );
    assert_eq!(props["verbose"]["description"], "Show the note bodies.");
    // Nested types go to `$defs`, as for any parameter.
    assert_eq!(p["$defs"]["NoteFilter"]["type"], "object");
    assert_eq!(p["$defs"]["NoteKind"]["oneOf"][0]["const"], "todo", "{p}");
    // The struct itself is not a parameter and not a definition.
    assert!(props.get("q").is_none());
    assert!(p["$defs"].get("NoteQuery").is_none());
    let spec = registry().get("flat_notes").unwrap().spec();
    assert_eq!(spec.hidden_params, ["uid"]);
    // Field names work in `editable_params` and `display` (checked at registration).
    assert_eq!(spec.editable_params, ["query"]);
    assert_eq!(spec.display["en"].params["query"], "Search words");
}

/// Every object schema under `schema` (the root, properties, items, `$defs`, branches).
fn objects(schema: &Value, out: &mut Vec<Value>) {
    match schema {
        Value::Object(obj) => {
            if obj.get("type") == Some(&json!("object")) || obj.contains_key("properties") {
                out.push(schema.clone());
            }
            obj.values().for_each(|v| objects(v, out));
        }
        Value::Array(items) => items.iter().for_each(|v| objects(v, out)),
        _ => {}
    }
}

#[test]
fn every_provider_rendering_lowers_the_lifted_fields() {
    let spec = registry().get("flat_notes").unwrap().spec();
    // OpenAI strict: every property required, `additionalProperties: false`
    // at every depth, the nested struct in `$defs` included.
    let openai = tool_core::format::render_tool(spec, Format::OpenAiChat { strict: true }).unwrap();
    let parameters = &openai["function"]["parameters"];
    assert_eq!(openai["function"]["strict"], true);
    let mut all = Vec::new();
    objects(parameters, &mut all);
    assert!(all.len() >= 2, "{parameters}");
    for object in &all {
        let keys: Vec<Value> = object["properties"]
            .as_object()
            .map(|p| p.keys().map(|k| json!(k)).collect())
            .unwrap_or_default();
        let mut required = object["required"].as_array().cloned().unwrap_or_default();
        required.sort_by_key(ToString::to_string);
        let mut keys = keys;
        keys.sort_by_key(ToString::to_string);
        assert_eq!(required, keys, "{object}");
        assert_eq!(object["additionalProperties"], false, "{object}");
    }
    // An optional field is nullable in strict mode.
    assert!(
        parameters["properties"]["since"]
            .to_string()
            .contains("null"),
        "{parameters}"
    );

    let anthropic =
        tool_core::format::render_tool(spec, Format::Anthropic { strict: false }).unwrap();
    assert_eq!(anthropic["input_schema"]["required"], json!(["query"]));
    assert_eq!(
        anthropic["input_schema"]["properties"]["query"]["description"],
        "Words to look for."
    );

    // Gemini: every `$ref` inlined.
    let gemini = tool_core::format::render_tool(
        spec,
        Format::Gemini {
            recursion: tool_core::format::Recursion::Refuse,
        },
    )
    .unwrap();
    let text = gemini.to_string();
    assert!(!text.contains("$ref"), "{text}");
    assert!(text.contains("\"todo\""), "{text}");

    let mcp = tool_core::format::render_tool(spec, Format::Mcp).unwrap();
    assert_eq!(mcp["inputSchema"]["required"], json!(["query"]));
    // MCP keeps the schema as declared (SEP-1613): `$ref` into its own `$defs`.
    assert!(
        mcp["inputSchema"]["$defs"]["NoteFilter"].is_object(),
        "{mcp}"
    );
    assert!(mcp.to_string().contains("#/$defs/NoteFilter"), "{mcp}");
}

#[tokio::test]
async fn the_struct_is_built_from_the_top_level_arguments() {
    let out = registry()
        .execute(
            "flat_notes",
            json!({"query": "milk", "caseSensitive": true, "filter": {"kind": "todo"}, "verbose": false}),
            &ctx(),
        )
        .await;
    assert_eq!(
        out.output, "milk|10|true|Some((None, Todo))|None|Some(false)|ann",
        "{out:?}"
    );
}

#[tokio::test]
async fn repairs_and_strict_nulls_reach_flattened_fields() {
    // A whole number sent as a string for an integer field is repaired, as
    // for any parameter: the field's JSON type is in the schema.
    let out = registry()
        .execute("flat_notes", json!({"query": "milk", "limit": "5"}), &ctx())
        .await;
    assert!(out.error.is_none(), "{out:?}");
    assert!(out.output.starts_with("milk|5|"), "{out:?}");
    assert_eq!(
        out.metadata["argument_repairs"],
        json!([{"kind": "integer_from_string", "parameter": "limit"}])
    );
    // Strict renderings make models send `null` for optional fields.
    let call = ToolCall::new(
        "c1",
        "flat_notes",
        r#"{"query": "tea", "limit": null, "caseSensitive": null, "filter": null, "since": null, "verbose": null}"#,
    );
    let out = registry().execute_call(&call, &ctx()).await;
    assert_eq!(out.output, "tea|10|false|None|None|None|ann", "{out:?}");
}

#[tokio::test]
async fn argument_errors_name_the_field() {
    let out = registry()
        .execute("flat_notes", json!({"qeury": "milk"}), &ctx())
        .await;
    let e = out.error.unwrap();
    assert_eq!(e.kind, tool_core::ErrorKind::InvalidArguments);
    assert_eq!(
        e.message,
        "Missing required parameter `query` of `flat_notes`: expected a string. The arguments also contain the unknown parameter `qeury`, which `flat_notes` does not take."
    );

    let out = registry()
        .execute(
            "flat_notes",
            json!({"query": "milk", "filter": {"kind": "urgent"}}),
            &ctx(),
        )
        .await;
    let message = out.error.unwrap().message;
    assert!(
        message.starts_with("Invalid value for parameter `filter` of `flat_notes`: expected"),
        "{message}"
    );
    assert!(message.contains("unknown variant `urgent`"), "{message}");

    let out = registry()
        .execute("flat_notes", json!({"query": "milk", "limit": -1}), &ctx())
        .await;
    let message = out.error.unwrap().message;
    assert!(
        message.starts_with(
            "Invalid value for parameter `limit` of `flat_notes`: expected an integer from 1 to 50, but received an integer -1."
        ),
        "{message}"
    );

    let out = registry()
        .execute("flat_notes", json!({"query": "milk", "page": 2}), &ctx())
        .await;
    assert_eq!(
        out.error.unwrap().message,
        "Unknown parameter `page` is not accepted by `flat_notes`. Valid parameters: `query`, `limit`, `caseSensitive`, `filter`, `since`, `verbose`."
    );

    // What the model sends for the hidden parameter is dropped, fields untouched.
    let out = registry()
        .execute("flat_notes", json!({"query": "milk", "uid": "eve"}), &ctx())
        .await;
    assert!(out.output.ends_with("|ann"), "{out:?}");
    assert_eq!(out.metadata["ignored_hidden_params"], json!(["uid"]));
}

/// A range checked as a whole (`try_from`): its error has no field path.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(try_from = "RawRange")]
pub(crate) struct Range {
    pub from: u32,
    pub to: u32,
}

/// A range as sent.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RawRange {
    /// First line.
    pub from: u32,
    /// Last line.
    pub to: u32,
}

impl TryFrom<RawRange> for Range {
    type Error = String;

    fn try_from(raw: RawRange) -> Result<Self, String> {
        if raw.from > raw.to {
            return Err(format!("`from` ({}) is after `to` ({})", raw.from, raw.to));
        }
        Ok(Self {
            from: raw.from,
            to: raw.to,
        })
    }
}

/// Count the lines of a range.
#[tool]
fn flat_lines(#[arg(flatten)] range: Range) -> String {
    (range.to - range.from + 1).to_string()
}

#[tokio::test]
async fn a_struct_level_error_names_the_struct() {
    let p = &registry().get("flat_lines").unwrap().spec().parameters;
    assert_eq!(p["required"], json!(["from", "to"]), "{p}");
    let out = registry()
        .execute(
            "flat_lines",
            json!({"from": 3, "to": 5}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(out.output, "3");
    let out = registry()
        .execute(
            "flat_lines",
            json!({"from": 5, "to": 3}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(
        out.error.unwrap().message,
        r#"Invalid arguments for `flat_lines`: its parameters {"from":5,"to":3} do not make a valid `Range`. (`from` (5) is after `to` (3))"#
    );
}

/// Line bounds.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Bounds {
    /// First line.
    pub lo: i64,
    /// Last line.
    pub hi: Option<i64>,
}

/// A search within bounds.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct RangedSearch {
    /// Words to look for.
    pub query: String,
    /// Where to look.
    pub range: Option<Bounds>,
}

/// Search within bounds.
#[tool]
fn flat_ranged(#[arg(flatten)] args: RangedSearch, more: Option<Vec<Bounds>>) -> String {
    let pairs = |b: Bounds| (b.lo, b.hi);
    format!(
        "{}|{:?}|{:?}",
        args.query,
        args.range.map(pairs),
        more.map(|m| m.into_iter().map(pairs).collect::<Vec<_>>())
    )
}

#[tokio::test]
async fn a_bad_nested_value_names_its_path() {
    let message = |args: Value| async move {
        registry()
            .execute("flat_ranged", args, &ToolContext::new())
            .await
            .error
            .unwrap()
            .message
    };
    // Inside a flattened field: the path starts at the field.
    assert_eq!(
        message(json!({"query": "a", "range": {"lo": "x"}})).await,
        r#"Invalid value for parameter `range` of `flat_ranged`: expected an integer at `range.lo`, but received a string "x"."#
    );
    // Inside an ordinary parameter, through an array.
    assert_eq!(
        message(json!({"query": "a", "more": [{"lo": 1}, {"lo": 2, "hi": [3]}]})).await,
        r#"Invalid value for parameter `more` of `flat_ranged`: expected an integer at `more[1].hi`, but received an array [3]."#
    );
    // Refused as a whole (a missing field): the parameter's own message.
    assert_eq!(
        message(json!({"query": "a", "range": {"hi": 2}})).await,
        r#"Invalid value for parameter `range` of `flat_ranged`: expected an object, but received an object {"hi":2}. (missing field `lo`)"#
    );
    let out = registry()
        .execute(
            "flat_ranged",
            json!({"query": "a", "range": {"lo": 1}, "more": [{"lo": 2, "hi": null}]}),
            &ToolContext::new(),
        )
        .await;
    assert_eq!(out.output, "a|Some((1, None))|Some([(2, None)])", "{out:?}");
}

/// One number.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Inner {
    /// The number.
    pub a: u8,
}

/// A newtype over a struct: serde reads it as the struct.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Newtype(pub Inner);

/// A transparent struct over a struct.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(transparent)]
pub(crate) struct Transparent {
    pub inner: Inner,
}

/// A newtype, flattened.
#[tool]
fn flat_newtype(#[arg(flatten)] w: Newtype) -> String {
    w.0.a.to_string()
}

/// A transparent struct, flattened.
#[tool]
fn flat_transparent(#[arg(flatten)] w: Transparent) -> String {
    w.inner.a.to_string()
}

#[tokio::test]
async fn a_newtype_of_a_struct_is_flattened_as_the_struct() {
    for tool in ["flat_newtype", "flat_transparent"] {
        let p = &registry().get(tool).unwrap().spec().parameters;
        assert_eq!(
            *p,
            json!({
                "type": "object",
                "properties": {"a": {"type": "integer", "format": "uint8", "minimum": 0, "maximum": 255, "description": "The number."}},
                "required": ["a"],
                "additionalProperties": false
            }),
            "{tool}: the definition it pointed to is inline, and gone from `$defs`"
        );
        let out = registry()
            .execute(tool, json!({"a": 7}), &ToolContext::new())
            .await;
        assert_eq!(out.output, "7", "{out:?}");
    }
}

/// One item of a store.
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct Item<T> {
    /// The item.
    pub item: T,
}

/// A store of items of one type.
pub(crate) struct Store<T>(std::marker::PhantomData<T>);

#[toolset]
impl<T> Store<T>
where
    T: serde::de::DeserializeOwned + JsonSchema + std::fmt::Debug + Send + Sync + 'static,
{
    /// Put an item.
    #[tool]
    fn put_item(&self, #[arg(flatten)] w: Item<T>) -> String {
        format!("{:?}", w.item)
    }
}

#[tokio::test]
async fn a_generic_struct_of_a_toolset_is_named_by_its_concrete_type() {
    let mut registry = ToolRegistry::new();
    registry
        .add_toolset(std::sync::Arc::new(Store::<u32>(std::marker::PhantomData)))
        .unwrap();
    let out = registry
        .execute("put_item", json!({"item": 7}), &ToolContext::new())
        .await;
    assert_eq!(out.output, "7", "{out:?}");
    let out = registry
        .execute("put_item", json!({"item": "x"}), &ToolContext::new())
        .await;
    assert_eq!(
        out.error.unwrap().message,
        r#"Invalid value for parameter `item` of `put_item`: expected an integer, but received a string "x"."#
    );
}
