//! Walking a JSON Schema (2020-12) node by node, with the JSON Pointer of each node.

use serde_json::{Map, Value};

use super::error::Violation;

/// Keywords whose value is a map of name → subschema.
const MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Keywords whose value is one subschema.
const ONE_KEYWORDS: &[&str] = &[
    "items",
    "additionalProperties",
    "unevaluatedProperties",
    "unevaluatedItems",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "additionalItems",
];

/// Keywords whose value is a list of subschemas.
const LIST_KEYWORDS: &[&str] = &["anyOf", "oneOf", "allOf", "prefixItems"];

/// A visitor that may rewrite each schema node (see [`walk_mut`]).
pub(crate) type VisitMut<'a> =
    dyn FnMut(&mut Map<String, Value>, &str) -> Result<(), Violation> + 'a;

/// A read-only visitor: node, JSON Pointer, nesting level (see [`walk`]).
pub(crate) type Visit<'a> = dyn FnMut(&Map<String, Value>, &str, usize) + 'a;

/// Where a child schema sits in its parent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Slot<'a> {
    /// `properties/<name>` and the other name maps.
    Named(&'a str, &'a str),
    /// `items`, `not`, … (keyword).
    One(&'a str),
    /// `anyOf/<i>` and the other lists.
    Listed(&'a str, usize),
}

/// Appends one RFC 6901 reference token to `path`.
pub(crate) fn push_token(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// `path` + `/token`.
pub(crate) fn child_path(path: &str, token: &str) -> String {
    let mut p = path.to_owned();
    push_token(&mut p, token);
    p
}

/// Calls `f` on every schema object in `schema`, parents before children,
/// with its JSON Pointer. `f` may rewrite the node; the walk then descends
/// into the node as rewritten. Boolean schemas are skipped.
pub(crate) fn walk_mut(schema: &mut Value, f: &mut VisitMut<'_>) -> Result<(), Violation> {
    let mut path = String::new();
    walk_mut_at(schema, &mut path, f)
}

fn walk_mut_at(
    schema: &mut Value,
    path: &mut String,
    f: &mut VisitMut<'_>,
) -> Result<(), Violation> {
    let Value::Object(node) = schema else {
        return Ok(());
    };
    f(node, path)?;
    for (key, child) in node.iter_mut() {
        let len = path.len();
        if MAP_KEYWORDS.contains(&key.as_str()) {
            if let Value::Object(map) = child {
                push_token(path, key);
                for (name, sub) in map.iter_mut() {
                    let inner = path.len();
                    push_token(path, name);
                    walk_mut_at(sub, path, f)?;
                    path.truncate(inner);
                }
            }
        } else if ONE_KEYWORDS.contains(&key.as_str()) {
            push_token(path, key);
            walk_mut_at(child, path, f)?;
        } else if LIST_KEYWORDS.contains(&key.as_str()) {
            if let Value::Array(list) = child {
                push_token(path, key);
                for (i, sub) in list.iter_mut().enumerate() {
                    let inner = path.len();
                    push_token(path, &i.to_string());
                    walk_mut_at(sub, path, f)?;
                    path.truncate(inner);
                }
            }
        }
        path.truncate(len);
    }
    Ok(())
}

/// Read-only walk: `f` gets each schema object, its JSON Pointer and the
/// number of object schemas enclosing it (its nesting level, root object = 1).
pub(crate) fn walk(schema: &Value, f: &mut Visit<'_>) {
    let mut path = String::new();
    walk_at(schema, &mut path, 0, f);
}

fn walk_at(schema: &Value, path: &mut String, depth: usize, f: &mut Visit<'_>) {
    let Value::Object(node) = schema else {
        return;
    };
    let depth = if is_object_schema(node) {
        depth + 1
    } else {
        depth
    };
    f(node, path, depth);
    for_each_child(node, |slot, sub| {
        let len = path.len();
        match slot {
            Slot::Named(kw, name) => {
                push_token(path, kw);
                push_token(path, name);
            }
            Slot::One(kw) => push_token(path, kw),
            Slot::Listed(kw, i) => {
                push_token(path, kw);
                push_token(path, &i.to_string());
            }
        }
        // `$defs` restart the nesting count: their depth is counted where they are used.
        let child_depth = match slot {
            Slot::Named("$defs" | "definitions", _) => 0,
            _ => depth,
        };
        walk_at(sub, path, child_depth, f);
        path.truncate(len);
    });
}

/// Calls `f` on each direct subschema of `node`.
pub(crate) fn for_each_child<'a>(
    node: &'a Map<String, Value>,
    mut f: impl FnMut(Slot<'a>, &'a Value),
) {
    for (key, child) in node {
        if MAP_KEYWORDS.contains(&key.as_str()) {
            if let Value::Object(map) = child {
                for (name, sub) in map {
                    f(Slot::Named(key, name), sub);
                }
            }
        } else if ONE_KEYWORDS.contains(&key.as_str()) {
            f(Slot::One(key), child);
        } else if LIST_KEYWORDS.contains(&key.as_str()) {
            if let Value::Array(list) = child {
                for (i, sub) in list.iter().enumerate() {
                    f(Slot::Listed(key, i), sub);
                }
            }
        }
    }
}

/// `true` when the node describes an object (`type: object`, a type list
/// containing `object`, or `properties` without a type).
pub(crate) fn is_object_schema(node: &Map<String, Value>) -> bool {
    match node.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => ts.iter().any(|t| t == "object"),
        _ => node.contains_key("properties"),
    }
}

pub(crate) use crate::args::schema::{local_def_name, required_of, root_defs, types_of};

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pointer_tokens_are_escaped() {
        assert_eq!(child_path("/properties", "a/b~c"), "/properties/a~1b~0c");
        assert_eq!(local_def_name("#/$defs/a~1b"), Some("a/b".to_owned()));
        assert_eq!(local_def_name("#/$defs/a/b"), None);
        assert_eq!(local_def_name("other.json#/x"), None);
    }

    #[test]
    fn walk_visits_every_subschema_with_depth() {
        let schema = json!({
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}},
            "$defs": {"D": {"anyOf": [{"type": "null"}]}}
        });
        let mut seen = Vec::new();
        walk(&schema, &mut |_, p, d| seen.push((p.to_owned(), d)));
        seen.sort();
        assert_eq!(
            seen,
            vec![
                (String::new(), 1),
                ("/$defs/D".to_owned(), 0),
                ("/$defs/D/anyOf/0".to_owned(), 0),
                ("/properties/a".to_owned(), 2),
                ("/properties/a/properties/b".to_owned(), 2),
            ]
        );
    }
}
