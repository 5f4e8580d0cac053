//! Every message about bad arguments, in one place: what the model reads when
//! its arguments are not JSON, not an object, of the wrong type, missing or
//! unknown. Each names the parameter, what was expected (from the
//! parameter's JSON Schema) and, cut to [`QUOTE_LIMIT`] characters, what was sent.

use serde_json::Value;
use tool_rules::text::{Clip, clip};

use super::schema::{JsonTypes, ParamTypes, resolve_ref};
use crate::result::{ErrorKind, ToolResult};

/// Longest excerpt of a model's value quoted back in an error message, in characters.
pub(crate) const QUOTE_LIMIT: usize = 200;

/// Most `enum` values listed in an expected type ("one of …"); longer enums say "a string".
const ENUM_LISTED: usize = 12;

/// `text` cut to [`QUOTE_LIMIT`] characters (never inside a character), a cut
/// marked `… (N more bytes)` (`tool_rules::text::clip`).
pub(crate) fn quote(text: &str) -> String {
    clip(text, Clip::chars(QUOTE_LIMIT).counting_rest()).into_owned()
}

/// The kind of a JSON value as a message says it: "null", "a boolean",
/// "a number" (a float), "an integer", "a string", "an array", "an object".
pub fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// What parameter `param` expects, in JSON terms read from its JSON Schema
/// in `types` ("an integer", "an array of strings", "a string or a boolean",
/// `one of "a" or "b"`): what the model sends is JSON, so the message never
/// names the Rust type behind it. "a value of type `T`" (the Rust type) only
/// when the schema constrains nothing readable or the parameter has none
/// (e.g. a hidden one), since nothing else describes it then.
pub(crate) fn expected(types: &ParamTypes, param: &str, rust_type: &str) -> String {
    match types
        .schema_of(param)
        .and_then(|schema| described(schema, types.parameters()))
    {
        Some(what) => what,
        None => format!("a value of type `{rust_type}`"),
    }
}

/// Like [`expected`], but when `sent` is a number outside the bounds of the
/// parameter's schema (`minimum`, `maximum`, as schemars writes them for
/// unsigned and fixed-width integers), the bound it broke:
/// `{"limit": -3}` for a `usize` gives "an integer of at least 0", where
/// "an integer" alone would contradict the value quoted after it.
pub(crate) fn expected_for(
    types: &ParamTypes,
    param: &str,
    rust_type: &str,
    sent: &Value,
) -> String {
    types
        .schema_of(param)
        .and_then(|schema| out_of_bounds(schema, types.parameters(), sent))
        .unwrap_or_else(|| expected(types, param, rust_type))
}

/// "an integer of at least 0", "a number from 1 to 10" when `sent` is a
/// number below `minimum` or above `maximum` of `schema`; `None` otherwise.
fn out_of_bounds(schema: &Value, root: &Value, sent: &Value) -> Option<String> {
    let schema = resolved(schema, root);
    let value = sent.as_f64()?;
    // An integer too large (or small) for the parameter's fixed-width type
    // (schemars' `format`): its range, where "an integer" alone would
    // contradict the whole number quoted after it (second review, finding 7).
    if let (Some(whole), Some((lo, hi))) = (whole_number(sent), format_range(schema)) {
        if whole > hi {
            return Some(format!("an integer of at most {hi}"));
        }
        if whole < lo && schema.get("minimum").is_none() {
            return Some(format!("an integer of at least {lo}"));
        }
    }
    let bound = |key: &str| schema.get(key).filter(|b| b.as_f64().is_some());
    let (min, max) = (bound("minimum"), bound("maximum"));
    let below = min.and_then(Value::as_f64).is_some_and(|m| value < m);
    let above = max.and_then(Value::as_f64).is_some_and(|m| value > m);
    if !below && !above {
        return None;
    }
    let t = JsonTypes::of(schema, root, 0);
    let kind = if t.integer && !t.number {
        "an integer"
    } else {
        "a number"
    };
    Some(match (min, max) {
        (Some(min), Some(max)) => format!("{kind} from {min} to {max}"),
        (Some(min), None) => format!("{kind} of at least {min}"),
        (None, Some(max)) => format!("{kind} of at most {max}"),
        (None, None) => return None,
    })
}

/// `sent` as a whole number, exactly when JSON gave an integer, else a
/// whole, finite float (`1e20`, or an integer beyond 64 bits that JSON
/// parsing turned into a float) saturated to `i128`.
fn whole_number(sent: &Value) -> Option<i128> {
    if let Some(u) = sent.as_u64() {
        return Some(i128::from(u));
    }
    if let Some(i) = sent.as_i64() {
        return Some(i128::from(i));
    }
    let f = sent.as_f64()?;
    #[allow(
        clippy::cast_possible_truncation,
        reason = "a whole float saturates to i128, far beyond every range compared with"
    )]
    (f.is_finite() && f.fract() == 0.0).then_some(f as i128)
}

/// The range of the fixed-width integer type schemars names in `format`
/// (`uint8` … `uint64`, `uint` for `usize`, `int8` … `int64`, `int` for `isize`).
fn format_range(schema: &Value) -> Option<(i128, i128)> {
    Some(match schema.get("format")?.as_str()? {
        "uint8" => (0, i128::from(u8::MAX)),
        "uint16" => (0, i128::from(u16::MAX)),
        "uint32" => (0, i128::from(u32::MAX)),
        "uint64" | "uint" => (0, i128::from(u64::MAX)),
        "int8" => (i128::from(i8::MIN), i128::from(i8::MAX)),
        "int16" => (i128::from(i16::MIN), i128::from(i16::MAX)),
        "int32" => (i128::from(i32::MIN), i128::from(i32::MAX)),
        "int64" | "int" => (i128::from(i64::MIN), i128::from(i64::MAX)),
        _ => return None,
    })
}

/// One step into a nested value: an object's key or an array's index (an
/// enum's variant is the key it is sent under).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// `.key`
    Key(String),
    /// `[index]`
    Index(usize),
}

/// `param` followed by `steps`: `range.lo`, `paths[2]`, `filter.tags[0]`.
pub(crate) fn path_text(param: &str, steps: &[Step]) -> String {
    let mut text = param.to_owned();
    for step in steps {
        match step {
            Step::Key(key) => {
                text.push('.');
                text.push_str(&clip(key, Clip::chars(60)));
            }
            Step::Index(i) => text.push_str(&format!("[{i}]")),
        }
    }
    text
}

/// The part of `value` at `steps`, if the value has it.
pub(crate) fn value_at<'a>(mut value: &'a Value, steps: &[Step]) -> Option<&'a Value> {
    for step in steps {
        value = match (step, value) {
            (Step::Key(key), Value::Object(obj)) => obj.get(key)?,
            // A unit variant is sent as its name, not as a key.
            (Step::Key(key), Value::String(s)) if s == key => value,
            (Step::Index(i), Value::Array(items)) => items.get(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

/// What the schema of parameter `param` expects at `steps` inside its value
/// ("an integer", `one of "a" or "b"`), following `properties`, `items`,
/// `prefixItems`, `additionalProperties`, `$ref`s and `anyOf`/`oneOf`/`allOf`
/// branches; `None` when the schema says nothing readable there.
pub(crate) fn expected_at(types: &ParamTypes, param: &str, steps: &[Step]) -> Option<String> {
    let root = types.parameters();
    let mut schema = types.schema_of(param)?;
    for step in steps {
        schema = child(schema, root, step, 0)?;
    }
    described(schema, root)
}

/// The schema of one step into a value `schema` describes (searched through
/// `$ref`s and branches, at most 8 deep).
fn child<'a>(schema: &'a Value, root: &'a Value, step: &Step, depth: u8) -> Option<&'a Value> {
    if depth > 8 {
        return None;
    }
    let schema = resolved(schema, root);
    let found = match step {
        Step::Key(key) => schema
            .get("properties")
            .and_then(|props| props.get(key))
            .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object())),
        Step::Index(i) => schema
            .get("prefixItems")
            .and_then(|items| items.get(*i))
            .or_else(|| schema.get("items").filter(|a| a.is_object())),
    };
    if found.is_some() {
        return found;
    }
    // A unit variant is a `const` branch: the step stays on the value itself.
    if let Step::Key(key) = step
        && enum_values(schema, root, 0)
            .is_some_and(|values| values.iter().any(|v| v.as_str() == Some(key)))
    {
        return Some(schema);
    }
    ["anyOf", "oneOf", "allOf"]
        .iter()
        .filter_map(|k| schema.get(*k).and_then(Value::as_array))
        .flatten()
        .find_map(|branch| child(branch, root, step, depth + 1))
}

/// What `schema` admits, as a message says it ("an integer", "a string or
/// an array", `one of "a" or "b"`); `None` when it constrains nothing readable.
fn described(schema: &Value, root: &Value) -> Option<String> {
    let schema = resolved(schema, root);
    if let Some(values) = enum_values(schema, root, 0)
        && (1..=ENUM_LISTED).contains(&values.len())
    {
        let listed: Vec<String> = values
            .iter()
            .map(|v| clip(&v.to_string(), Clip::chars(60)).into_owned())
            .collect();
        return Some(format!("one of {}", join_or(&listed)));
    }
    kinds(schema, root).map(|kinds| join_or(&kinds))
}

/// The JSON kinds `schema` admits ("a string", "an array of integers" …),
/// `None` when it admits anything or nothing readable.
fn kinds(schema: &Value, root: &Value) -> Option<Vec<String>> {
    let t = JsonTypes::of(schema, root, 0);
    let positive = schema
        .get("minimum")
        .and_then(Value::as_f64)
        .is_some_and(|m| m >= 1.0);
    let array = schema
        .get("items")
        .map(|items| resolved(items, root))
        .and_then(|items| kinds(items, root))
        .and_then(|item_kinds| match item_kinds.as_slice() {
            [one] => plural(one).map(|p| format!("an array of {p}")),
            _ => None,
        })
        .unwrap_or_else(|| "an array".to_owned());
    let mut kinds: Vec<String> = Vec::new();
    for (admitted, name) in [
        (t.string, "a string"),
        (t.integer && positive, "a positive integer"),
        (t.integer && !positive, "an integer"),
        (t.number, "a number"),
        (t.boolean, "a boolean"),
        (t.array, array.as_str()),
        (t.object, "an object"),
    ] {
        if admitted {
            kinds.push(name.to_owned());
        }
    }
    (!t.any && !kinds.is_empty()).then_some(kinds)
}

/// "strings" for "a string", "positive integers" for "a positive integer",
/// "arrays of integers" for "an array of integers".
fn plural(kind: &str) -> Option<String> {
    let bare = kind
        .strip_prefix("a ")
        .or_else(|| kind.strip_prefix("an "))?;
    Some(match bare.strip_prefix("array") {
        Some(rest) => format!("arrays{rest}"),
        None => format!("{bare}s"),
    })
}

/// `schema` with its local `$ref`s followed (at most 8).
fn resolved<'a>(mut schema: &'a Value, root: &'a Value) -> &'a Value {
    for _ in 0..8 {
        match schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve_ref(root, r))
        {
            Some(target) => schema = target,
            None => break,
        }
    }
    schema
}

/// The values a schema allows when it allows only listed values (`enum`,
/// `const`, or `anyOf`/`oneOf` of those, a `null` branch aside).
fn enum_values(schema: &Value, root: &Value, depth: u8) -> Option<Vec<Value>> {
    if depth > 8 {
        return None;
    }
    let schema = resolved(schema, root);
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return Some(values.iter().filter(|v| !v.is_null()).cloned().collect());
    }
    if let Some(value) = schema.get("const") {
        return Some(vec![value.clone()]);
    }
    let branches = schema
        .get("oneOf")
        .or_else(|| schema.get("anyOf"))
        .and_then(Value::as_array)?;
    let mut out = Vec::new();
    for b in branches {
        if b.get("type").and_then(Value::as_str) == Some("null") {
            continue;
        }
        out.extend(enum_values(b, root, depth + 1)?);
    }
    Some(out)
}

/// `a`, `a or b`, `a, b or c`.
pub(crate) fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The error for argument text that is not JSON.
pub(crate) fn not_json(tool: &str, error: &serde_json::Error, text: &str) -> String {
    format!(
        "The arguments for `{tool}` are not valid JSON ({error}). Send one JSON object such as {{\"name\": value}}. Received: {}",
        quote(text)
    )
}

/// A value as a message quotes it: its kind, then the value cut to
/// [`QUOTE_LIMIT`] (`a string "x"`, `an integer 3`); `null` alone.
pub(crate) fn received(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        // A whole number beyond what JSON parsing keeps as an integer (more
        // than 64 bits) is still an integer, written out in full.
        Value::Number(n)
            if n.as_f64().is_some_and(|f| {
                n.is_f64() && f.fract() == 0.0 && f.abs() >= 9.0e18 && f.abs() < 1.0e30
            }) =>
        {
            format!("an integer {:.0}", n.as_f64().unwrap_or_default())
        }
        other => format!("{} {}", json_kind(other), quote(&other.to_string())),
    }
}

/// The error for arguments that are JSON but not an object.
pub(crate) fn not_an_object(tool: &str, value: &Value) -> String {
    format!(
        "The arguments for `{tool}` must be a JSON object such as {{\"name\": value}}; received {}.",
        received(value)
    )
}

/// A list of more items than the tool has parameters, so not readable by position.
pub(crate) fn too_many_positional(tool: &str, value: &Value, names: &[&String]) -> String {
    let count = value.as_array().map_or(0, Vec::len);
    let takes = if names.is_empty() {
        format!("`{tool}` takes no parameters")
    } else {
        let list: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        format!(
            "`{tool}` takes {} parameter{} ({}), so a list of {count} cannot be read by position",
            names.len(),
            if names.len() == 1 { "" } else { "s" },
            list.join(", ")
        )
    };
    format!(
        "The arguments for `{tool}` must be a JSON object such as {{\"name\": value}}; received {}. {takes}.",
        received(value)
    )
}

/// serde's own words after a message, as " (…)", or nothing when they only
/// restate the sentence before them in Rust terms: serde's generic
/// `invalid type: …, expected …` and `invalid value: …, expected …` name
/// what was sent and a Rust type (`u32`, `i64`), which the message already
/// says in JSON terms. Anything else (a custom `Deserialize`'s reason, an
/// unknown variant, a length) is kept, cut to [`QUOTE_LIMIT`].
fn serde_detail(error: &str) -> String {
    let generic = (error.starts_with("invalid type: ") || error.starts_with("invalid value: "))
        && error.contains(", expected ");
    if generic || error.is_empty() {
        String::new()
    } else {
        format!(" ({})", quote(error))
    }
}

/// The error for a parameter whose JSON did not deserialise; `expected` from [`expected`].
pub(crate) fn bad_parameter(
    tool: &str,
    param: &str,
    expected: &str,
    sent: &Value,
    error: &str,
) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Invalid value for parameter `{param}` of `{tool}`: expected {expected}, but received {}.{}",
            received(sent),
            serde_detail(error)
        ),
    )
}

/// The error for a value serde refused inside parameter `param`, at `path`
/// (from [`path_text`]); `expected` from [`expected_at`], `sent` the part
/// of the value at that path.
pub(crate) fn bad_nested(
    tool: &str,
    param: &str,
    path: &str,
    expected: Option<&str>,
    sent: &Value,
    error: &str,
) -> ToolResult {
    let message = match expected {
        Some(expected) => format!(
            "Invalid value for parameter `{param}` of `{tool}`: expected {expected} at `{path}`, but received {}.{}",
            received(sent),
            serde_detail(error)
        ),
        None => format!(
            "Invalid value for parameter `{param}` of `{tool}` at `{path}`: received {}. ({})",
            received(sent),
            quote(error)
        ),
    };
    ToolResult::error(ErrorKind::InvalidArguments, message)
}

/// The error for the fields of a flattened struct (`#[arg(flatten)]`, Rust
/// type `rust_type`) that serde refused as a whole, not at one field (a
/// custom `Deserialize`, a struct-level rule); `sent` is the fields received.
pub(crate) fn bad_fields(tool: &str, rust_type: &str, sent: &Value, error: &str) -> ToolResult {
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Invalid arguments for `{tool}`: its parameters {} do not make a valid `{rust_type}`. ({})",
            quote(&sent.to_string()),
            quote(error)
        ),
    )
}

/// The error for a missing required parameter; `unknown` are the names sent
/// that the tool does not take (a renamed or misspelt parameter shows up as
/// both missing and unknown, so the message says both).
pub(crate) fn missing_parameter(
    tool: &str,
    param: &str,
    expected: &str,
    unknown: &[&str],
) -> ToolResult {
    let mut message =
        format!("Missing required parameter `{param}` of `{tool}`: expected {expected}.");
    if !unknown.is_empty() {
        message.push_str(&format!(
            " The arguments also contain {} {}, which `{tool}` does not take.",
            if unknown.len() == 1 {
                "the unknown parameter"
            } else {
                "the unknown parameters"
            },
            names(unknown),
        ));
    }
    ToolResult::error(ErrorKind::InvalidArguments, message)
}

/// The error for parameters the tool does not have.
pub(crate) fn unknown_parameters(tool: &str, unknown: &[&str], valid: &[&str]) -> ToolResult {
    let (noun, verb) = if unknown.len() == 1 {
        ("parameter", "is")
    } else {
        ("parameters", "are")
    };
    let valid_text = if valid.is_empty() {
        format!("`{tool}` takes no parameters.")
    } else {
        format!("Valid parameters: {}.", names(valid))
    };
    ToolResult::error(
        ErrorKind::InvalidArguments,
        format!(
            "Unknown {noun} {} {verb} not accepted by `{tool}`. {valid_text}",
            names(unknown)
        ),
    )
}

/// `` `a`, `b` ``, each name quoted and cut.
fn names(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{}`", quote(n)))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn quote_cuts_on_char_boundary() {
        let s = "é".repeat(300);
        let q = quote(&s);
        assert!(q.starts_with(&"é".repeat(200)));
        assert!(q.ends_with("(200 more bytes)"));
    }

    /// The expected type comes from the schema: an alias (`type UserId = u64`)
    /// reads as the integer it is, not as an unknown type name.
    #[test]
    fn expected_type_comes_from_the_schema() {
        let types = ParamTypes::from_parameters(&json!({
            "type": "object",
            "properties": {
                "user": {"type": "integer", "format": "uint64", "minimum": 0},
                "count": {"type": "integer", "format": "uint32", "minimum": 1},
                "tags": {"type": ["array", "null"], "items": {"type": "string"}},
                "mode": {"$ref": "#/$defs/Mode"},
                "either": {"anyOf": [{"type": "string"}, {"type": "boolean"}]},
                "grid": {"type": "array", "items": {"type": "array", "items": {"type": "integer"}}},
                "anything": {}
            },
            "$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"]}}
        }));
        assert_eq!(expected(&types, "user", "UserId"), "an integer");
        assert_eq!(
            expected(&types, "count", "NonZeroU32"),
            "a positive integer"
        );
        assert_eq!(
            expected(&types, "tags", "Option<Vec<String>>"),
            "an array of strings"
        );
        assert_eq!(
            expected(&types, "grid", "Vec<Vec<u8>>"),
            "an array of arrays of integers"
        );
        assert_eq!(
            expected(&types, "mode", "Mode"),
            "one of \"fast\" or \"slow\""
        );
        assert_eq!(
            expected(&types, "either", "Either"),
            "a string or a boolean"
        );
        assert_eq!(
            expected(&types, "anything", "Value"),
            "a value of type `Value`"
        );
        assert_eq!(
            expected(&types, "hidden", "u8"),
            "a value of type `u8`",
            "a parameter outside the schema"
        );
    }

    #[test]
    fn missing_names_the_unknown_ones_too() {
        let r = missing_parameter("t", "path", "a string", &["file_path"]);
        assert_eq!(
            r.error.unwrap().message,
            "Missing required parameter `path` of `t`: expected a string. The arguments also contain the unknown parameter `file_path`, which `t` does not take."
        );
    }
}
