//! Argument repair: the few well-known ways models malform arguments, fixed
//! openly. Every repair is recorded (`metadata["argument_repairs"]`,
//! statistics); nothing else is ever rewritten.
//!
//! Repaired:
//! - empty argument text → `{}`;
//! - a JSON string whose content is the arguments object (double encoding) → decoded once;
//! - a single wrapper key `arguments`, `parameters` or `input` holding an
//!   object, when the tool has no parameter of that name → unwrapped (at most two levels);
//! - a string holding JSON for a parameter whose schema is an object or array → parsed once;
//! - a string holding a whole number for an integer parameter, or `true` /
//!   `false` for a boolean one → converted.
//!
//! Never repaired: a parameter whose schema admits strings (file content
//! `'{"a":1}'` stays text), `"12abc"` or `"1.5"` for an integer (these stay
//! errors naming the parameter and type).

use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value};

use crate::execute::ToolArgs;

/// One repair applied to a call's arguments.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentRepair {
    /// What was repaired: `empty_arguments`, `double_encoded_arguments`,
    /// `unwrapped_arguments`, `json_string_parsed`, `integer_from_string`, `boolean_from_string`.
    pub kind: &'static str,
    /// The parameter (or wrapper key) concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
}

impl ArgumentRepair {
    fn new(kind: &'static str, parameter: Option<&str>) -> Self {
        Self {
            kind,
            parameter: parameter.map(str::to_owned),
        }
    }
}

/// JSON types a schema admits (a union over `type`, `anyOf`/`oneOf`, `enum`/`const`, `$ref`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct JsonTypes {
    string: bool,
    integer: bool,
    number: bool,
    boolean: bool,
    object: bool,
    array: bool,
    /// The schema constrains nothing we can read: never repair.
    any: bool,
}

impl JsonTypes {
    fn add_name(&mut self, name: &str) {
        match name {
            "string" => self.string = true,
            "integer" => self.integer = true,
            "number" => self.number = true,
            "boolean" => self.boolean = true,
            "object" => self.object = true,
            "array" => self.array = true,
            "null" => {}
            _ => self.any = true,
        }
    }

    fn add_value(&mut self, v: &Value) {
        match v {
            Value::String(_) => self.string = true,
            Value::Number(n) if n.is_f64() => self.number = true,
            Value::Number(_) => self.integer = true,
            Value::Bool(_) => self.boolean = true,
            Value::Object(_) => self.object = true,
            Value::Array(_) => self.array = true,
            Value::Null => {}
        }
    }

    fn union(&mut self, other: Self) {
        self.string |= other.string;
        self.integer |= other.integer;
        self.number |= other.number;
        self.boolean |= other.boolean;
        self.object |= other.object;
        self.array |= other.array;
        self.any |= other.any;
    }

    pub(crate) fn of(schema: &Value, root: &Value, depth: u8) -> Self {
        let mut t = Self::default();
        let Value::Object(obj) = schema else {
            t.any = true;
            return t;
        };
        if depth > 8 {
            t.any = true;
            return t;
        }
        let mut constrained = false;
        match obj.get("type") {
            Some(Value::String(name)) => {
                constrained = true;
                t.add_name(name);
            }
            Some(Value::Array(names)) => {
                constrained = true;
                names
                    .iter()
                    .filter_map(Value::as_str)
                    .for_each(|n| t.add_name(n));
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = obj.get("enum") {
            constrained = true;
            values.iter().for_each(|v| t.add_value(v));
        }
        if let Some(v) = obj.get("const") {
            constrained = true;
            t.add_value(v);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            if let Some(Value::Array(branches)) = obj.get(key) {
                constrained = true;
                for b in branches {
                    t.union(Self::of(b, root, depth + 1));
                }
            }
        }
        if let Some(Value::String(reference)) = obj.get("$ref") {
            constrained = true;
            match resolve_ref(root, reference) {
                Some(target) => t.union(Self::of(target, root, depth + 1)),
                None => t.any = true,
            }
        }
        if !constrained {
            t.any = true;
        }
        t
    }
}

fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    root.pointer(pointer)
}

/// The JSON types of each top-level parameter, computed once per tool.
#[derive(Debug, Default)]
pub(crate) struct ParamTypes {
    types: HashMap<String, JsonTypes>,
}

impl ParamTypes {
    pub(crate) fn from_parameters(parameters: &Value) -> Self {
        let types = parameters
            .get("properties")
            .and_then(Value::as_object)
            .map(|props| {
                props
                    .iter()
                    .map(|(k, s)| (k.clone(), JsonTypes::of(s, parameters, 0)))
                    .collect()
            })
            .unwrap_or_default();
        Self { types }
    }

    fn has(&self, name: &str) -> bool {
        self.types.contains_key(name)
    }
}

/// Whether parameter `name` of a tool with this parameters schema admits
/// strings and no other JSON type (`null` aside), reading `type`, `enum`,
/// `const`, `anyOf`/`oneOf`/`allOf` and local `$ref`s. `false` for unknown
/// parameters and unconstrained schemas. Used by front ends that receive
/// untyped text (e.g. the CLI's `--key=value`) to keep text as text.
pub fn takes_only_text(parameters: &Value, name: &str) -> bool {
    parameters
        .get("properties")
        .and_then(|p| p.get(name))
        .map(|schema| JsonTypes::of(schema, parameters, 0))
        .is_some_and(|t| {
            t.string && !(t.any || t.integer || t.number || t.boolean || t.object || t.array)
        })
}

const WRAPPER_KEYS: [&str; 3] = ["arguments", "parameters", "input"];

/// Turns raw arguments into an object, applying the repairs in the module
/// docs. `Err(message)` when the arguments cannot be an object.
pub(crate) fn prepare(
    tool: &str,
    args: ToolArgs,
    types: &ParamTypes,
    repairs: &mut Vec<ArgumentRepair>,
) -> Result<Map<String, Value>, String> {
    let mut value = match args {
        ToolArgs::Value(v) => v,
        ToolArgs::Text(text) if text.trim().is_empty() => {
            repairs.push(ArgumentRepair::new("empty_arguments", None));
            Value::Object(Map::new())
        }
        ToolArgs::Text(text) => serde_json::from_str::<Value>(&text).map_err(|e| {
            format!(
                "The arguments for `{tool}` are not valid JSON ({e}). Send one JSON object such as {{\"name\": value}}. Received: {}",
                crate::execute::quote(&text)
            )
        })?,
    };
    if let Value::String(s) = &value
        && let Ok(inner @ Value::Object(_)) = serde_json::from_str::<Value>(s)
    {
        repairs.push(ArgumentRepair::new("double_encoded_arguments", None));
        value = inner;
    }
    let Value::Object(mut map) = value else {
        return Err(format!(
            "The arguments for `{tool}` must be a JSON object such as {{\"name\": value}}; received {} {}.",
            crate::execute::json_kind(&value),
            crate::execute::quote(&value.to_string())
        ));
    };
    for _ in 0..2 {
        let Some((key, Value::Object(_))) = map.iter().next().filter(|_| map.len() == 1) else {
            break;
        };
        if !WRAPPER_KEYS.contains(&key.as_str()) || types.has(key) {
            break;
        }
        let key = key.clone();
        if let Some(Value::Object(inner)) = map.remove(&key) {
            repairs.push(ArgumentRepair::new("unwrapped_arguments", Some(&key)));
            map = inner;
        }
    }
    for (name, v) in &mut map {
        let Value::String(s) = v else { continue };
        let Some(t) = types.types.get(name) else {
            continue;
        };
        if t.any || t.string {
            continue;
        }
        if (t.object || t.array)
            && let Ok(parsed) = serde_json::from_str::<Value>(s)
            && ((t.object && parsed.is_object()) || (t.array && parsed.is_array()))
        {
            repairs.push(ArgumentRepair::new("json_string_parsed", Some(name)));
            *v = parsed;
            continue;
        }
        if t.integer
            && let Some(n) = whole_number(s)
        {
            repairs.push(ArgumentRepair::new("integer_from_string", Some(name)));
            *v = n;
            continue;
        }
        if t.boolean && (s == "true" || s == "false") {
            repairs.push(ArgumentRepair::new("boolean_from_string", Some(name)));
            *v = Value::Bool(s == "true");
        }
    }
    Ok(map)
}

/// `"42"` / `"-7"` → a JSON integer; anything else (`"12abc"`, `"1.5"`, `" 4"`) → `None`.
fn whole_number(s: &str) -> Option<Value> {
    let digits = s.strip_prefix('-').unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse::<i64>()
        .map(Value::from)
        .ok()
        .or_else(|| s.parse::<u64>().ok().map(Value::from))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn types() -> ParamTypes {
        ParamTypes::from_parameters(&json!({
            "type": "object",
            "properties": {
                "content": {"type": "string"},
                "limit": {"type": ["integer", "null"]},
                "flag": {"type": "boolean"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "point": {"$ref": "#/$defs/P"},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]}
            },
            "$defs": {"P": {"type": "object"}}
        }))
    }

    fn run(args: ToolArgs) -> (Result<Map<String, Value>, String>, Vec<&'static str>) {
        let mut repairs = Vec::new();
        let r = prepare("t", args, &types(), &mut repairs);
        (r, repairs.iter().map(|r| r.kind).collect())
    }

    #[test]
    fn empty_and_double_encoded() {
        let (r, k) = run(ToolArgs::Text("  ".into()));
        assert_eq!((r.unwrap(), k), (Map::new(), vec!["empty_arguments"]));
        let (r, k) = run(ToolArgs::Text(r#""{\"limit\": 3}""#.into()));
        assert_eq!(r.unwrap()["limit"], 3);
        assert_eq!(k, ["double_encoded_arguments"]);
        let (r, _) = run(ToolArgs::Value(json!("\"{}\"")));
        assert!(r.is_err(), "decoded only once");
    }

    #[test]
    fn wrapper_keys_unwrap_twice_at_most() {
        let (r, k) = run(ToolArgs::Value(
            json!({"arguments": {"input": {"limit": 1}}}),
        ));
        assert_eq!(r.unwrap()["limit"], 1);
        assert_eq!(k, ["unwrapped_arguments", "unwrapped_arguments"]);
        let (r, _) = run(ToolArgs::Value(
            json!({"arguments": {"input": {"parameters": {"limit": 1}}}}),
        ));
        assert!(r.unwrap().contains_key("parameters"));
    }

    #[test]
    fn per_parameter_repairs() {
        let (r, k) = run(ToolArgs::Value(json!({
            "content": "{\"a\":1}", "limit": "12", "flag": "false", "tags": "[\"x\"]", "point": "{\"x\": 1}", "either": "5"
        })));
        let m = r.unwrap();
        assert_eq!(m["content"], "{\"a\":1}");
        assert_eq!(m["limit"], 12);
        assert_eq!(m["flag"], false);
        assert_eq!(m["tags"], json!(["x"]));
        assert_eq!(m["point"], json!({"x": 1}));
        assert_eq!(m["either"], "5");
        assert_eq!(k.len(), 4);
    }

    #[test]
    fn text_only_parameters() {
        let p = json!({
            "type": "object",
            "properties": {
                "s": {"type": "string"},
                "opt": {"type": ["string", "null"]},
                "e": {"$ref": "#/$defs/E"},
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "n": {"type": "integer"},
                "free": {}
            },
            "$defs": {"E": {"enum": ["a", "b"]}}
        });
        for (name, expected) in [
            ("s", true),
            ("opt", true),
            ("e", true),
            ("either", false),
            ("n", false),
            ("free", false),
            ("missing", false),
        ] {
            assert_eq!(takes_only_text(&p, name), expected, "{name}");
        }
    }

    #[test]
    fn not_repaired() {
        for bad in ["12abc", "1.5", " 4", "", "-", "TRUE"] {
            let (r, k) = run(ToolArgs::Value(json!({"limit": bad, "flag": bad})));
            assert_eq!(r.unwrap()["limit"], bad);
            assert!(k.is_empty(), "{bad}: {k:?}");
        }
    }
}
