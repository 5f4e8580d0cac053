//! Argument types from the tool's schema: formats that write values as text
//! (Qwen3-Coder, GLM) give `"5"` for an integer parameter; with the schema,
//! the text becomes the type the parameter declares (as vLLM's
//! `qwen3_coder` parser converts by the request's tool parameters).
//!
//! Only string values change, and only when the parameter's `type` does not
//! allow a string and the text reads as an allowed type: `integer` (a whole
//! number), `number`, `boolean` (`true` / `false`, any case), `null`
//! (`null` / `None`), `object` / `array` (JSON text of that kind). Anything
//! else is left as written, for the tool's own argument check to report.

use serde_json::{Map, Value};

/// The JSON types a property schema allows (`type` as a string or a list;
/// `anyOf` / `oneOf` branches' types added). Empty when it says nothing.
fn allowed_types(schema: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    match schema.get("type") {
        Some(Value::String(t)) => out.push(t.as_str()),
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(Value::as_str)),
        _ => {}
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = schema.get(key) {
            for b in branches {
                out.extend(allowed_types(b));
            }
        }
    }
    out
}

/// `text` read as one of `types`, if it reads as one.
fn convert(text: &str, types: &[&str]) -> Option<Value> {
    let t = text.trim();
    for ty in types {
        // JSON Schema's names, and the Python-style aliases some tool lists use
        // (`int`, `float`, `bool`, `dict`, `list`), which vLLM's parsers accept too.
        let ty = match *ty {
            "int" => "integer",
            "float" | "double" => "number",
            "bool" => "boolean",
            "dict" => "object",
            "list" => "array",
            other => other,
        };
        let v = match ty {
            "integer" => t.parse::<i64>().ok().map(Value::from),
            "number" => t.parse::<i64>().ok().map(Value::from).or_else(|| {
                t.parse::<f64>()
                    .ok()
                    .filter(|f| f.is_finite())
                    .map(Value::from)
            }),
            "boolean" if t.eq_ignore_ascii_case("true") => Some(Value::Bool(true)),
            "boolean" if t.eq_ignore_ascii_case("false") => Some(Value::Bool(false)),
            "null" if t == "null" || t == "None" => Some(Value::Null),
            "object" => serde_json::from_str::<Value>(t)
                .ok()
                .filter(Value::is_object),
            "array" => serde_json::from_str::<Value>(t)
                .ok()
                .filter(Value::is_array),
            _ => None,
        };
        if v.is_some() {
            return v;
        }
    }
    None
}

/// Coerces `args` in place against `parameters` (a tool's JSON Schema object).
pub(crate) fn coerce(args: &mut Map<String, Value>, parameters: &Value) {
    let Some(Value::Object(props)) = parameters.get("properties") else {
        return;
    };
    for (key, value) in args.iter_mut() {
        let Value::String(text) = value else { continue };
        let Some(schema) = props.get(key) else {
            continue;
        };
        let types = allowed_types(schema);
        if types.is_empty() || types.iter().any(|t| matches!(*t, "string" | "str")) {
            continue;
        }
        if let Some(v) = convert(text, &types) {
            *value = v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn text_values_take_the_declared_type() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer"}, "x": {"type": "number"}, "b": {"type": "boolean"},
            "o": {"type": "object"}, "s": {"type": "string"}, "u": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
            "bad": {"type": "integer"}
        }});
        let Value::Object(mut args) = json!({"n": "5", "x": "2.5", "b": "True", "o": "{\"k\": 1}",
            "s": "7", "u": "None", "bad": "five", "extra": "1"})
        else {
            unreachable!()
        };
        coerce(&mut args, &schema);
        assert_eq!(
            Value::Object(args),
            json!({"n": 5, "x": 2.5, "b": true, "o": {"k": 1}, "s": "7", "u": null, "bad": "five", "extra": "1"})
        );
    }
}
