//! The call-time half of strict lowering: an explicit `null` for an optional
//! field means absent ([`normalize_arguments`]).

use serde_json::{Map, Value};

use super::schema::{local_def_name, required_of, root_defs};

/// Applies "an explicit `null` for an optional field means absent" to
/// `args`, guided by the tool's canonical `schema`: at every depth, a
/// property that the canonical schema does not require and whose value is
/// `null` is removed, so the Rust default (or `None`) applies.
///
/// Why: strict renderings (OpenAI strict) must list every property as
/// required, so optional fields become nullable and the model sends `null`
/// for "not given"; a non-`Option` field with a serde default (e.g.
/// `#[serde(default)] limit: u32`) would otherwise fail to deserialise.
/// Applied by [`ToolRegistry::execute_call`](crate::ToolRegistry::execute_call)
/// for every format; harmless for the others (a `null` for an optional
/// field is read as absent there too).
///
/// Follows `properties`, `items`, local `$ref`s, and the branches of
/// `anyOf`/`oneOf`/`allOf` whose constant properties (serde tags) match the value.
pub fn normalize_arguments(schema: &Value, args: &mut Map<String, Value>) {
    let empty = Map::new();
    let defs = root_defs(schema).unwrap_or(&empty);
    normalize_object(schema, args, defs, 0);
}

/// References followed before giving up (recursive schemas on deep values).
const MAX_DEPTH: usize = 64;

fn normalize_value(schema: &Value, value: &mut Value, defs: &Map<String, Value>, depth: usize) {
    match value {
        Value::Object(map) => normalize_object(schema, map, defs, depth),
        Value::Array(items) => {
            let Some(item_schema) = resolve(schema, defs).get("items") else {
                return;
            };
            for item in items {
                normalize_value(item_schema, item, defs, depth + 1);
            }
        }
        _ => {}
    }
}

fn normalize_object(
    schema: &Value,
    map: &mut Map<String, Value>,
    defs: &Map<String, Value>,
    depth: usize,
) {
    if depth > MAX_DEPTH {
        return;
    }
    let node = resolve(schema, defs);
    if let Some(Value::Object(props)) = node.get("properties") {
        let required = node.as_object().map(required_of).unwrap_or_default();
        map.retain(|k, v| {
            !(v.is_null() && props.contains_key(k) && !required.contains(&k.as_str()))
        });
        for (k, v) in map.iter_mut() {
            if let Some(sub) = props.get(k) {
                normalize_value(sub, v, defs, depth + 1);
            }
        }
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        let Some(Value::Array(branches)) = node.get(keyword) else {
            continue;
        };
        let mut matched_keys: Vec<&String> = Vec::new();
        let mut other_keys: Vec<&String> = Vec::new();
        for branch in branches {
            let resolved = resolve(branch, defs);
            let keys = resolved
                .get("properties")
                .and_then(Value::as_object)
                .into_iter()
                .flat_map(Map::keys);
            if keyword == "allOf" || tags_match(resolved, map) {
                matched_keys.extend(keys);
                normalize_object(branch, map, defs, depth + 1);
            } else {
                other_keys.extend(keys);
            }
        }
        // A strict rendering merges the branches of a root union into one
        // object, so the model sends `null` for the other branches' fields.
        let own = node.get("properties").and_then(Value::as_object);
        map.retain(|k, v| {
            !(v.is_null()
                && other_keys.contains(&k)
                && !matched_keys.contains(&k)
                && own.is_none_or(|p| !p.contains_key(k)))
        });
    }
}

/// `true` when every `const` property of the object branch equals the value's.
fn tags_match(branch: &Value, map: &Map<String, Value>) -> bool {
    let Some(Value::Object(props)) = branch.get("properties") else {
        return false;
    };
    let mut has_tag = false;
    for (k, sub) in props {
        if let Some(c) = sub.get("const") {
            has_tag = true;
            if map.get(k) != Some(c) {
                return false;
            }
        }
    }
    // Untagged object branches: apply only when the value has none of the
    // branch's unknown keys (a cheap shape match).
    has_tag || map.keys().all(|k| props.contains_key(k))
}

fn resolve<'a>(schema: &'a Value, defs: &'a Map<String, Value>) -> &'a Value {
    let mut current = schema;
    for _ in 0..8 {
        match current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(local_def_name)
            .and_then(|n| defs.get(&n))
        {
            Some(def) => current = def,
            None => break,
        }
    }
    current
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn null_for_optional_fields_is_absent_at_every_depth() {
        let schema = json!({
            "type": "object",
            "properties": {
                "q": {"type": "string"},
                "limit": {"type": "integer", "default": 10},
                "inner": {"$ref": "#/$defs/Inner"},
                "list": {"type": "array", "items": {"$ref": "#/$defs/Inner"}},
                "shape": {"oneOf": [
                    {"type": "object", "properties": {"kind": {"const": "a"}, "x": {"type": "integer"}}, "required": ["kind"]},
                    {"type": "object", "properties": {"kind": {"const": "b"}, "y": {"type": "integer"}}, "required": ["kind"]}
                ]}
            },
            "required": ["q", "inner"],
            "$defs": {"Inner": {"type": "object", "properties": {"a": {"type": ["string", "null"]}, "b": {"type": "integer"}}, "required": ["b"]}}
        });
        let mut args = json!({
            "q": null, "limit": null,
            "inner": {"a": null, "b": null},
            "list": [{"a": null, "b": 1}],
            "shape": {"kind": "b", "x": null, "y": null}
        })
        .as_object()
        .unwrap()
        .clone();
        normalize_arguments(&schema, &mut args);
        assert_eq!(
            Value::Object(args),
            json!({
                "q": null,
                "inner": {"b": null},
                "list": [{"b": 1}],
                "shape": {"kind": "b"}
            })
        );
    }
}
