//! The schema check of a tool built at run time ([`Tool::new`](crate::Tool::new)
//! with a `Map` handler): its arguments against its own JSON Schema, at the
//! top level, with the messages `#[tool]` fns give. Checked: a missing
//! required parameter, an unknown one when `additionalProperties` is
//! `false`, a value of a JSON type the parameter's schema does not admit
//! (`type`, `enum`/`const`, `anyOf`/`oneOf`, local `$ref`s), and a number
//! outside `minimum`/`maximum`. Not checked (left to the handler): nested
//! values, string formats and lengths, patterns, array lengths, and a
//! parameter whose schema states no type (`{}`), which admits anything.

use serde_json::{Map, Value};

use super::messages::{self, expected, expected_for};
use super::schema::{JsonTypes, ParamTypes, required_of};
use crate::result::ToolResult;

/// `Err` with the `invalid_arguments` result for the first problem of
/// `args` against `types`' schema (missing, then unknown, then each value in
/// the order sent).
#[allow(
    clippy::result_large_err,
    reason = "the Err is the call's final ToolResult, returned as is on a rare path"
)]
pub(crate) fn against_schema(
    tool: &str,
    types: &ParamTypes,
    args: &Map<String, Value>,
) -> Result<(), ToolResult> {
    let root = types.parameters();
    let Some(node) = root.as_object() else {
        return Ok(());
    };
    let closed = node.get("additionalProperties") == Some(&Value::Bool(false));
    let unknown: Vec<&str> = if closed {
        args.keys()
            .map(String::as_str)
            .filter(|k| !types.has(k))
            .collect()
    } else {
        Vec::new()
    };
    for name in required_of(node) {
        // Only an absent parameter is missing: a required one may admit
        // `null` (`"type": ["string", "null"]`), which this check does not read.
        if args.get(name).is_none() {
            let what = expected(types, name, "value");
            return Err(messages::missing_parameter(tool, name, &what, &unknown));
        }
    }
    if !unknown.is_empty() {
        let mut valid: Vec<&str> = node
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().map(String::as_str).collect())
            .unwrap_or_default();
        valid.sort_unstable();
        return Err(messages::unknown_parameters(tool, &unknown, &valid));
    }
    for (name, sent) in args {
        let Some(t) = types.types.get(name) else {
            continue;
        };
        if sent.is_null() {
            // Absent, as strict renderings send an optional parameter.
            continue;
        }
        let bad_type = !t.any && !admits(*t, sent);
        let what = expected_for(types, name, "value", sent);
        let out_of_bounds = what != expected(types, name, "value");
        if bad_type || out_of_bounds {
            return Err(messages::bad_parameter(tool, name, &what, sent, ""));
        }
    }
    Ok(())
}

/// Whether a value of `sent`'s JSON type is admitted by `t` (a whole
/// number counts as an integer, as JSON does not tell `2.0` from `2`).
fn admits(t: JsonTypes, sent: &Value) -> bool {
    match sent {
        Value::String(_) => t.string,
        Value::Bool(_) => t.boolean,
        Value::Object(_) => t.object,
        Value::Array(_) => t.array,
        Value::Number(n) => {
            t.number
                || (t.integer
                    && (n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)))
        }
        Value::Null => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(args: &Value) -> Result<(), String> {
        let types = ParamTypes::from_parameters(&json!({
            "type": "object",
            "properties": {
                "text": {"type": "string"},
                "limit": {"type": "integer", "minimum": 1, "maximum": 100},
                "mode": {"enum": ["fast", "slow"]},
                "any": {"description": "anything"}
            },
            "required": ["text"],
            "additionalProperties": false
        }));
        let args = args.as_object().cloned().unwrap_or_default();
        against_schema("t", &types, &args)
            .map_err(|r| r.error.map(|e| e.message).unwrap_or_default())
    }

    #[test]
    fn a_run_time_tools_schema_is_checked() {
        assert_eq!(check(&json!({"text": "a", "limit": 5, "any": [1]})), Ok(()));
        assert_eq!(check(&json!({"text": "a", "limit": 5.0})), Ok(()));
        assert_eq!(
            check(&json!({"limit": 5})),
            Err("Missing required parameter `text` of `t`: expected a string.".into())
        );
        assert_eq!(
            check(&json!({"text": "a", "bogus": 1})),
            Err("Unknown parameter `bogus` is not accepted by `t`. Valid parameters: `any`, `limit`, `mode`, `text`.".into())
        );
        let e = check(&json!({"text": "a", "limit": "abc"})).unwrap_err();
        assert_eq!(
            e,
            "Invalid value for parameter `limit` of `t`: expected a positive integer, but received a string \"abc\"."
        );
        let e = check(&json!({"text": "a", "limit": 5000})).unwrap_err();
        assert!(e.starts_with("Invalid value for parameter `limit` of `t`: expected an integer from 1 to 100, but received"), "{e}");
        let e = check(&json!({"text": "a", "mode": 3})).unwrap_err();
        assert!(
            e.starts_with("Invalid value for parameter `mode` of `t`: expected"),
            "{e}"
        );
        assert_eq!(check(&json!({"text": "a", "limit": null})), Ok(()));
        // A required parameter sent as null is left to the handler: its
        // schema may admit null.
        assert_eq!(check(&json!({"text": null})), Ok(()));
    }
}
