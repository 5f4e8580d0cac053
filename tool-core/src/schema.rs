//! The canonical JSON Schema of a `#[tool]` fn's parameters.
//!
//! Canonical form: JSON Schema 2020-12 as schemars generates it, root
//! `{"type": "object", "properties", "required", "additionalProperties": false}`
//! with shared definitions under `$defs`. Provider-specific lowerings start
//! from this form.

use std::collections::BTreeMap;

use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::statics::{ParamRole, StaticParam};

/// Builds the parameters schema of a macro tool.
///
/// Descriptions come from `#[arg(description)]` / the parameter's own doc,
/// else from the fn doc's argument section (looked up by model-facing name,
/// then by Rust name).
pub(crate) fn parameters_schema(
    params: &[StaticParam],
    section_docs: &BTreeMap<String, String>,
) -> Value {
    let mut generator = SchemaSettings::draft2020_12().into_generator();
    let mut properties = Map::new();
    let mut required = Vec::new();
    for p in params.iter().filter(|p| p.role == ParamRole::Visible) {
        let Some(schema_fn) = p.schema else { continue };
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
            if let Some(d) = description.filter(|d| !d.is_empty()) {
                obj.insert("description".to_owned(), Value::String(d));
            }
            if let Some(default) = p.default {
                obj.insert("default".to_owned(), default());
            }
        }
        if !p.optional {
            required.push(Value::String(p.name.to_owned()));
        }
        properties.insert(p.name.to_owned(), schema);
    }
    let mut root = Map::new();
    root.insert("type".to_owned(), json!("object"));
    root.insert("properties".to_owned(), Value::Object(properties));
    root.insert("required".to_owned(), Value::Array(required));
    root.insert("additionalProperties".to_owned(), Value::Bool(false));
    let defs = generator.take_definitions(true);
    if !defs.is_empty() {
        root.insert("$defs".to_owned(), Value::Object(defs));
    }
    Value::Object(root)
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
