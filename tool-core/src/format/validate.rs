//! Checks run on a lowered schema, shared by the targets' validators. Each
//! returns the first node that breaks its rule, with the node's JSON path.

use serde_json::{Map, Value};

use super::error::{Rule, Violation};
use super::walk::{child_path, is_object_schema, local_def_name, required_of, root_defs, walk};

/// Runs `check` on every schema node until one fails.
pub(crate) fn each_node(
    schema: &Value,
    mut check: impl FnMut(&Map<String, Value>, &str) -> Option<Violation>,
) -> Result<(), Violation> {
    let mut found = None;
    walk(schema, &mut |node, path, _| {
        if found.is_none() {
            found = check(node, path);
        }
    });
    found.map_or(Ok(()), Err)
}

/// The root is `{"type": "object", …}` without a root `anyOf`/`oneOf`/`allOf`.
pub(crate) fn root_is_object(schema: &Value, rule: &'static Rule) -> Result<(), Violation> {
    let Some(root) = schema.as_object() else {
        return Err(Violation::new(
            "",
            rule,
            "the parameters schema is not an object",
        ));
    };
    if root.get("type").and_then(Value::as_str) != Some("object") {
        return Err(Violation::new(
            "/type",
            rule,
            format!(
                "the root must be `\"type\": \"object\"`, found {}",
                root.get("type")
                    .map_or_else(|| "no type".to_owned(), ToString::to_string)
            ),
        ));
    }
    if let Some(k) = ["anyOf", "oneOf", "allOf"]
        .into_iter()
        .find(|k| root.contains_key(*k))
    {
        return Err(Violation::new(
            &child_path("", k),
            rule,
            format!("the root must be one object, not a `{k}` of alternatives"),
        ));
    }
    Ok(())
}

/// Every `$ref` is local (`#/$defs/<name>`) and names an existing definition.
pub(crate) fn refs_resolvable(schema: &Value, rule: &'static Rule) -> Result<(), Violation> {
    let empty = Map::new();
    let defs = root_defs(schema).unwrap_or(&empty);
    each_node(schema, |node, path| {
        let reference = node.get("$ref")?;
        let ok = reference
            .as_str()
            .and_then(local_def_name)
            .is_some_and(|n| defs.contains_key(&n));
        (!ok).then(|| {
            Violation::new(
                &child_path(path, "$ref"),
                rule,
                format!(
                    "`$ref: {reference}` is not a local reference to a definition of this schema"
                ),
            )
        })
    })
}

/// No node uses a keyword outside `allowed`.
pub(crate) fn only_keywords(
    schema: &Value,
    allowed: &[&str],
    rule: &'static Rule,
) -> Result<(), Violation> {
    each_node(schema, |node, path| {
        let k = node.keys().find(|k| !allowed.contains(&k.as_str()))?;
        Some(Violation::new(
            &child_path(path, k),
            rule,
            format!("keyword `{k}` is not supported here"),
        ))
    })
}

/// Every object schema sets `additionalProperties: false`.
pub(crate) fn objects_closed(schema: &Value, rule: &'static Rule) -> Result<(), Violation> {
    each_node(schema, |node, path| {
        (is_object_schema(node) && node.get("additionalProperties") != Some(&Value::Bool(false)))
            .then(|| {
                Violation::new(
                    path,
                    rule,
                    "this object does not set `additionalProperties: false`",
                )
            })
    })
}

/// Every property of every object is listed in its `required`.
pub(crate) fn all_required(schema: &Value, rule: &'static Rule) -> Result<(), Violation> {
    each_node(schema, |node, path| {
        let props = node.get("properties")?.as_object()?;
        let required = required_of(node);
        let missing = props.keys().find(|k| !required.contains(&k.as_str()))?;
        Some(Violation::new(
            &child_path(&child_path(path, "properties"), missing),
            rule,
            format!("property `{missing}` is not listed in `required`"),
        ))
    })
}

/// A `$ref` has no sibling keywords.
pub(crate) fn refs_alone(schema: &Value, rule: &'static Rule) -> Result<(), Violation> {
    each_node(schema, |node, path| {
        (node.contains_key("$ref") && node.len() > 1).then(|| {
            let siblings: Vec<&str> = node
                .keys()
                .map(String::as_str)
                .filter(|k| *k != "$ref")
                .collect();
            Violation::new(
                path,
                rule,
                format!("`$ref` has sibling keywords ({})", siblings.join(", ")),
            )
        })
    })
}

/// Every `format` value passes `keep(type, format)`.
pub(crate) fn formats_supported(
    schema: &Value,
    keep: fn(Option<&str>, &str) -> bool,
    rule: &'static Rule,
) -> Result<(), Violation> {
    each_node(schema, |node, path| {
        let format = node.get("format")?;
        let ty = node.get("type").and_then(Value::as_str);
        let ok = format.as_str().is_some_and(|f| keep(ty, f));
        (!ok).then(|| {
            Violation::new(
                &child_path(path, "format"),
                rule,
                format!(
                    "format {format} is not supported for type {}",
                    ty.unwrap_or("(none)")
                ),
            )
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    static RULE: Rule = Rule {
        id: "test.rule",
        text: "test",
        source: "test",
    };

    #[test]
    fn checks_report_paths() {
        let s = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}}}, "required": ["a"]});
        assert_eq!(objects_closed(&s, &RULE).unwrap_err().path, "");
        assert_eq!(
            all_required(&s, &RULE).unwrap_err().path,
            "/properties/a/properties/b"
        );
        let s = json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/X", "description": "d"}}});
        assert_eq!(refs_alone(&s, &RULE).unwrap_err().path, "/properties/a");
        assert_eq!(
            refs_resolvable(&s, &RULE).unwrap_err().path,
            "/properties/a/$ref"
        );
        assert_eq!(
            root_is_object(&json!({"anyOf": []}), &RULE)
                .unwrap_err()
                .path,
            "/type"
        );
    }
}
