//! The canonical JSON Schema of a `#[tool]` fn's parameters.
//!
//! Canonical form: JSON Schema 2020-12 as schemars generates it, root
//! `{"type": "object", "properties", "required", "additionalProperties": false}`
//! with shared definitions under `$defs`. Provider-specific lowerings start
//! from this form.

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::args::schema::{ArgLayoutFields, FlatField, local_def_name};
use crate::registry::error::RegistryError;
use crate::tool::statics::{ParamRole, StaticParam};

/// Builds the parameters schema of a macro tool, and the layout of its
/// flattened parameters.
///
/// Descriptions come from `#[arg(description)]` / the parameter's own doc,
/// else from the fn doc's argument section (looked up by model-facing name,
/// then by Rust name). The fields of an `#[arg(flatten)]` struct become
/// top-level properties at the parameter's place, described by their own
/// doc comments (schemars), else by the argument section, and required as
/// the struct's schema says.
///
/// # Errors
/// [`RegistryError::ParameterCollision`] when a flattened field takes a name
/// another parameter or field already has (hidden and context parameters
/// included: the pipeline drops what the model sends under their names);
/// [`RegistryError::InvalidSpec`] when a flattened type's schema is not a
/// plain object schema (an enum, a map, a newtype of a scalar; a newtype of
/// a struct is followed to the struct), or a field's name breaks the
/// parameter-name rule. Every problem of the tool is reported (several as
/// [`RegistryError::Many`]).
pub(crate) fn parameters_schema(
    tool: &str,
    params: &[StaticParam],
    section_docs: &BTreeMap<String, String>,
) -> Result<(Value, ArgLayoutFields), RegistryError> {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    // Who has each name: every parameter first (the macro has made them
    // distinct), then each flattened field as it is lifted.
    let mut owners: BTreeMap<String, String> = BTreeMap::new();
    for p in params {
        let (name, owner) = match p.role {
            ParamRole::Visible if p.name != p.rust_name => (
                p.name,
                format!(
                    "the parameter `{}: {}` (sent as `{}`)",
                    p.rust_name,
                    p.shown_type(),
                    p.name
                ),
            ),
            ParamRole::Visible => (
                p.name,
                format!("the parameter `{}: {}`", p.name, p.shown_type()),
            ),
            ParamRole::Hidden => (
                p.rust_name,
                format!("the hidden parameter `{}`", p.rust_name),
            ),
            ParamRole::Context | ParamRole::State => (
                p.rust_name,
                format!(
                    "the framework-filled parameter `{}: {}`",
                    p.rust_name,
                    p.shown_type()
                ),
            ),
            ParamRole::Flattened => continue,
        };
        owners.insert(name.to_owned(), owner);
    }
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut flattened = Vec::new();
    let mut errors = Vec::new();
    // Definitions a flattened newtype's root `$ref` pointed to, lifted inline.
    let mut lifted_refs = Vec::new();
    for (idx, p) in params.iter().enumerate() {
        let Some(schema_fn) = p.schema else { continue };
        match p.role {
            ParamRole::Visible => {
                let mut schema = schema_fn(&mut generator).to_value();
                if !schema.is_object() {
                    // `true` schemas (any value) become an empty object so keywords can be added.
                    schema = json!({});
                }
                if let Value::Object(obj) = &mut schema {
                    let description = p
                        .description
                        .map(str::to_owned)
                        .or_else(|| section_docs.get(p.name).cloned())
                        .or_else(|| section_docs.get(p.rust_name).cloned());
                    describe(obj, description);
                    if let Some(default) = p.default {
                        obj.insert("default".to_owned(), default());
                    }
                }
                if !p.optional {
                    required.push(Value::String(p.name.to_owned()));
                }
                properties.insert(p.name.to_owned(), schema);
            }
            ParamRole::Flattened => {
                let schema = schema_fn(&mut generator).to_value();
                let (schema, via) = through_root_ref(schema, generator.definitions());
                let (fields, field_required) = match flat_fields(tool, p, schema, &via) {
                    Ok(found) => found,
                    Err(e) => {
                        errors.push(e);
                        continue;
                    }
                };
                lifted_refs.extend(via);
                if let Some(e) = bad_field_names(tool, p, &fields) {
                    errors.push(e);
                    continue;
                }
                let owner = format!(
                    "a field of `{}` (the flattened parameter `{}`)",
                    p.shown_type(),
                    p.rust_name
                );
                let mut layout = Vec::with_capacity(fields.len());
                for (name, mut field_schema) in fields {
                    if let Some(first) = owners.get(&name) {
                        errors.push(RegistryError::ParameterCollision {
                            tool: tool.to_owned(),
                            parameter: name,
                            first: first.clone(),
                            second: owner.clone(),
                        });
                        continue;
                    }
                    owners.insert(name.clone(), owner.clone());
                    if !field_schema.is_object() {
                        field_schema = json!({});
                    }
                    if let Value::Object(obj) = &mut field_schema
                        && !obj.contains_key("description")
                    {
                        describe(obj, section_docs.get(&name).cloned());
                    }
                    let is_required = field_required.contains(&name);
                    if is_required {
                        required.push(Value::String(name.clone()));
                    }
                    layout.push(FlatField {
                        name: name.clone(),
                        required: is_required,
                    });
                    properties.insert(name, field_schema);
                }
                flattened.push((idx, layout));
            }
            ParamRole::Hidden | ParamRole::Context | ParamRole::State => {}
        }
    }
    let mut root = Map::new();
    root.insert("type".to_owned(), json!("object"));
    root.insert("properties".to_owned(), Value::Object(properties));
    root.insert("required".to_owned(), Value::Array(required));
    root.insert("additionalProperties".to_owned(), Value::Bool(false));
    RegistryError::from_all(errors)?;
    let mut defs = generator.take_definitions(true);
    // A definition lifted inline stays only when something still refers to it.
    for reference in lifted_refs {
        let Some(name) = local_def_name(&reference) else {
            continue;
        };
        let quoted = Value::String(reference).to_string();
        let used = |v: &Value| v.to_string().contains(&quoted);
        let still_used =
            root.values().any(used) || defs.iter().any(|(other, v)| *other != name && used(v));
        if !still_used {
            defs.remove(&name);
        }
    }
    if !defs.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(defs));
    }
    Ok((Value::Object(root), flattened))
}

/// A flattened type's schema with a root `$ref` followed into the
/// generator's definitions (schemars gives a newtype struct `struct W(Inner)`
/// or a `#[serde(transparent)]` struct the schema of what it wraps, a
/// reference when that is a named type): the target schema, and the
/// references followed (at most 8). A reference that does not resolve is
/// left in place.
fn through_root_ref(mut schema: Value, defs: &Map<String, Value>) -> (Value, Vec<String>) {
    let mut via = Vec::new();
    for _ in 0..8 {
        let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
            break;
        };
        let Some(target) = local_def_name(reference).and_then(|name| defs.get(&name)) else {
            break;
        };
        via.push(reference.to_owned());
        schema = target.clone();
    }
    (schema, via)
}

/// The error for fields of a flattened struct whose names break the
/// parameter-name rule (`tool_rules::names`, the rule the macro applies to
/// ordinary parameters): `#[serde(rename)]` can set any string, and
/// providers refuse most (OpenAI strict, Anthropic and MCP clients included).
fn bad_field_names(
    tool: &str,
    p: &StaticParam,
    fields: &Map<String, Value>,
) -> Option<RegistryError> {
    let bad: Vec<String> = fields
        .keys()
        .filter(|name| !tool_rules::names::is_valid_param_name(name))
        .map(|name| {
            format!(
                "{:?}",
                tool_rules::text::clip(name, tool_rules::text::Clip::chars(70))
            )
        })
        .collect();
    let (fields_are, them) = match bad.len() {
        0 => return None,
        1 => (format!("the field {} of", bad[0]), "it"),
        _ => (format!("the fields {} of", bad.join(", ")), "them"),
    };
    Some(RegistryError::InvalidSpec {
        name: tool.to_owned(),
        reason: format!(
            "{fields_are} `{}` (the flattened parameter `{}`) cannot be parameter names: {}; rename {them} with `#[serde(rename = \"...\")]`",
            p.shown_type(),
            p.rust_name,
            tool_rules::names::PARAM_NAME_RULE
        ),
    })
}

/// Sets a non-empty `description`.
fn describe(obj: &mut Map<String, Value>, description: Option<String>) {
    if let Some(d) = description.filter(|d| !d.is_empty()) {
        obj.insert("description".to_owned(), Value::String(d));
    }
}

/// The keywords a flattened struct's schema may carry besides its
/// properties: annotations, and what the top level restates itself.
const FLAT_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "title",
    "description",
    "$schema",
    "$comment",
    "default",
    "examples",
    "deprecated",
];

/// The properties (in order) and the required names of a flattened
/// parameter's schema, which must be a plain object schema: `type: object`,
/// `properties`, no `additionalProperties` other than `false`, and no
/// keyword that constrains the object as a whole (`oneOf`, `allOf`,
/// `patternProperties`, ...), which lifting its fields to the top would lose.
fn flat_fields(
    tool: &str,
    p: &StaticParam,
    schema: Value,
    via: &[String],
) -> Result<(Map<String, Value>, Vec<String>), RegistryError> {
    // A newtype's schema is that of what it wraps: say which.
    let wrapped = via
        .last()
        .and_then(|r| local_def_name(r))
        .map(|name| format!(" (it wraps `{name}`, whose schema it takes)"))
        .unwrap_or_default();
    let invalid = |why: String| RegistryError::InvalidSpec {
        name: tool.to_owned(),
        reason: format!(
            "the flattened parameter `{}: {}` is not a struct with named fields{wrapped}: {why}; `#[arg(flatten)]` lifts a struct's fields to the tool's top-level parameters",
            p.rust_name,
            p.shown_type()
        ),
    };
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return Err(invalid(format!(
            "its schema is a reference (`{reference}`) to no definition the registry can read"
        )));
    }
    let Value::Object(mut obj) = schema else {
        return Err(invalid("its schema is not an object".to_owned()));
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return Err(invalid(
            "its schema is not `\"type\": \"object\"` (an enum, a tuple struct, a newtype of a scalar?)".to_owned(),
        ));
    }
    if let Some(keyword) = obj.keys().find(|k| !FLAT_KEYWORDS.contains(&k.as_str())) {
        return Err(invalid(format!(
            "its schema uses `{keyword}`, which cannot be kept once its fields are top-level parameters"
        )));
    }
    if obj
        .get("additionalProperties")
        .is_some_and(|a| a != &Value::Bool(false))
    {
        return Err(invalid(
            "it takes additional properties (a `#[serde(flatten)]` map?), which top-level parameters cannot".to_owned(),
        ));
    }
    let required = obj
        .get("required")
        .and_then(Value::as_array)
        .map(|r| {
            r.iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default();
    let properties = match obj.remove("properties") {
        Some(Value::Object(props)) => props,
        None => Map::new(),
        Some(_) => return Err(invalid("its `properties` is not an object".to_owned())),
    };
    Ok((properties, required))
}

/// The output schema of a macro tool that returns a structured type: the
/// type's schema with its root `$ref` resolved, definitions under `$defs`.
/// `None` when the type has no schema or its root is not an object (MCP's
/// `outputSchema` and `structuredContent` must be objects).
pub(crate) fn output_schema(
    schema_fn: fn(&mut schemars::SchemaGenerator) -> Option<schemars::Schema>,
) -> Option<Value> {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut root = schema_fn(&mut generator)?.to_value();
    let mut defs = generator.take_definitions(true);
    if let Some(name) = root
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/$defs/"))
        .map(str::to_owned)
    {
        let target = defs.get(&name)?.clone();
        // Keep the definition when the type refers to itself.
        if !target.to_string().contains(&format!("\"#/$defs/{name}\"")) {
            defs.remove(&name);
        }
        root = target;
    }
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return None;
    }
    if let (Value::Object(obj), false) = (&mut root, defs.is_empty()) {
        obj.insert("$defs".to_owned(), Value::Object(defs));
    }
    Some(root)
}
