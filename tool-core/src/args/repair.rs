//! Argument repair: the few well-known ways models malform arguments, fixed
//! openly. Every repair is recorded (`metadata["argument_repairs"]`,
//! statistics) and told to the model as a note on the result
//! ([`ToolResult::notes`](crate::ToolResult::notes)); nothing else is ever rewritten.
//!
//! Repaired:
//! - empty argument text → `{}`;
//! - raw control characters (a literal newline, tab, carriage return, …)
//!   inside the JSON strings of argument text, which JSON forbids (RFC 8259
//!   §7) but local models under a JSON grammar produce → escaped, then parsed;
//! - a JSON string whose content is the arguments object or a list (double
//!   encoding) → decoded once (a list is then read by position, below);
//! - a single wrapper key `arguments`, `parameters` or `input` holding an
//!   object, when the tool has no parameter of that name → unwrapped (at most
//!   two levels); holding a list → the list, read by position;
//! - a list of one object where the object was expected (`[{"from": "a"}]`),
//!   when the first parameter does not take objects → that object;
//! - a JSON array where the object was expected (positional arguments, as a
//!   model trained on Python calls writes `["a.txt", 10]`) → its items mapped
//!   to the parameters in the schema's declared order (`properties` key
//!   order), at most as many items as parameters; a tool whose one parameter
//!   takes only arrays gets the whole array as that parameter instead;
//! - a string holding JSON for a parameter whose schema is an object or array → parsed once;
//! - any other string for a parameter whose schema is an array of strings
//!   (`"paths": "a.png"` for a list of paths) → a list of that one string;
//! - a string holding a whole number for an integer parameter, a JSON number
//!   (`"5"`, `"2.5"`, `"1e3"`) for a number parameter, or `true` / `false`
//!   for a boolean one → converted.
//!
//! Read without a repair (no record, no note): a whole number written as a
//! float (`2.0`) where the schema admits integers but not other numbers, at
//! any depth (inside arrays, objects, maps). Gemini's function-call arguments
//! carry every number as a double, and JSON itself does not tell `2.0` from
//! `2` (RFC 8259 §6), so nothing the model wrote is changed and a note would
//! only be noise on every Gemini call. The conversion is exact: only values
//! with no fractional part that fit `i64` or `u64` are converted; the target
//! type's own range (`i8`, `u32`, …) is then checked when the value is read,
//! so `300.0` for an `i8` or `1e20` for a `u64` stays an error naming the parameter.
//!
//! Never repaired: a parameter whose schema admits strings (file content
//! `'{"a":1}'` stays text), `"12abc"` or `"1.5"` for an integer, `2.5` for
//! an integer, `" 5"` or `"NaN"` for a number (these stay errors naming the
//! parameter and type).

use serde::Serialize;
use serde_json::{Map, Value};

use super::ToolArgs;
use super::messages;
pub(crate) use super::schema::ParamTypes;
use super::schema::{JsonTypes, resolve_ref};

/// What kind of repair was applied (the module docs describe each).
/// Serialised as its `snake_case` name ([`as_str`](Self::as_str)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RepairKind {
    /// Empty argument text, read as `{}`.
    EmptyArguments,
    /// Raw control characters inside JSON strings, escaped and parsed.
    ControlCharactersEscaped,
    /// A JSON string holding the arguments object, decoded once.
    DoubleEncodedArguments,
    /// The parameters wrapped under `arguments`, `parameters` or `input`, unwrapped.
    UnwrappedArguments,
    /// A JSON array of values, mapped to the parameters in declared order.
    PositionalArguments,
    /// A string holding JSON for an object or array parameter, parsed.
    JsonStringParsed,
    /// A whole number sent as a string for an integer parameter.
    IntegerFromString,
    /// A JSON number sent as a string for a number parameter.
    NumberFromString,
    /// `"true"`/`"false"` for a boolean parameter.
    BooleanFromString,
    /// One string for an array-of-strings parameter, read as a one-item list.
    StringAsList,
}

impl RepairKind {
    /// The `snake_case` name, as serialised (`integer_from_string`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::EmptyArguments => "empty_arguments",
            Self::ControlCharactersEscaped => "control_characters_escaped",
            Self::DoubleEncodedArguments => "double_encoded_arguments",
            Self::UnwrappedArguments => "unwrapped_arguments",
            Self::PositionalArguments => "positional_arguments",
            Self::JsonStringParsed => "json_string_parsed",
            Self::IntegerFromString => "integer_from_string",
            Self::NumberFromString => "number_from_string",
            Self::BooleanFromString => "boolean_from_string",
            Self::StringAsList => "string_as_list",
        }
    }
}

/// One repair applied to a call's arguments.
///
/// Serialised (in `metadata["argument_repairs"]`) as `{"kind", "parameter"?}`;
/// the model-facing sentence is [`note`](Self::note).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ArgumentRepair {
    /// What was repaired.
    pub kind: RepairKind,
    /// The parameter (or wrapper key) concerned, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    #[serde(skip)]
    note: String,
}

impl ArgumentRepair {
    fn new(kind: RepairKind, parameter: Option<&str>, note: String) -> Self {
        Self {
            kind,
            parameter: parameter.map(str::to_owned),
            note,
        }
    }

    /// What the model is told, one line without the `Note:` prefix, e.g.
    /// ``argument `limit` was given as the string "5" and read as the number 5``.
    pub fn note(&self) -> &str {
        &self.note
    }
}

/// Longest excerpt of a sent value quoted in a note, in characters.
const NOTE_QUOTE: usize = 40;

/// `"text"` as JSON, cut to [`NOTE_QUOTE`] characters.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(NOTE_QUOTE) {
        None => Value::String(text.to_owned()).to_string(),
        Some((cut, _)) => format!("{}…", Value::String(text[..cut].to_owned())),
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

/// Parses argument text as JSON; when that fails only because strings hold
/// raw control characters, escapes them and parses again, returning the
/// `control_characters_escaped` repair.
///
/// # Errors
/// The first parse's error when the text is not JSON even with its control characters escaped.
pub(crate) fn parse_text(text: &str) -> Result<(Value, Option<ArgumentRepair>), serde_json::Error> {
    let first = match serde_json::from_str::<Value>(text) {
        Ok(v) => return Ok((v, None)),
        Err(e) => e,
    };
    let Some((escaped, repair)) = escape_control_characters(text) else {
        return Err(first);
    };
    serde_json::from_str::<Value>(&escaped)
        .map(|v| (v, Some(repair)))
        .map_err(|_| first)
}

/// Escapes the control characters (U+0000–U+001F) found inside JSON string
/// literals of `text`; `None` when there are none. Characters outside strings
/// are left alone (newlines and tabs are white space there).
fn escape_control_characters(text: &str) -> Option<(String, ArgumentRepair)> {
    let mut out = String::with_capacity(text.len() + 16);
    let mut in_string = false;
    let mut after_backslash = false;
    let mut count = 0usize;
    let mut names: Vec<String> = Vec::new();
    for c in text.chars() {
        if !in_string {
            in_string = c == '"';
            out.push(c);
            continue;
        }
        if after_backslash {
            after_backslash = false;
            out.push(c);
            continue;
        }
        match c {
            '\\' => {
                after_backslash = true;
                out.push(c);
            }
            '"' => {
                in_string = false;
                out.push(c);
            }
            c if u32::from(c) < 0x20 => {
                count += 1;
                let (escape, name) = match c {
                    '\n' => ("\\n".to_owned(), "newline".to_owned()),
                    '\t' => ("\\t".to_owned(), "tab".to_owned()),
                    '\r' => ("\\r".to_owned(), "carriage return".to_owned()),
                    other => {
                        let code = u32::from(other);
                        (format!("\\u{code:04x}"), format!("U+{code:04X}"))
                    }
                };
                out.push_str(&escape);
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            c => out.push(c),
        }
    }
    if count == 0 {
        return None;
    }
    let what = if count == 1 {
        format!("a raw control character ({})", names.join(", "))
    } else {
        format!("{count} raw control characters ({})", names.join(", "))
    };
    let note = format!(
        "the arguments held {what} inside JSON strings, which JSON allows only escaped (e.g. \\n); they were read as those characters"
    );
    Some((
        out,
        ArgumentRepair::new(RepairKind::ControlCharactersEscaped, None, note),
    ))
}

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
            repairs.push(ArgumentRepair::new(
                RepairKind::EmptyArguments,
                None,
                "the arguments were empty and were read as no arguments ({})".to_owned(),
            ));
            Value::Object(Map::new())
        }
        ToolArgs::Text(text) => match parse_text(&text) {
            Ok((v, repair)) => {
                repairs.extend(repair);
                v
            }
            Err(e) => return Err(messages::not_json(tool, &e, &text)),
        },
    };
    if let Value::String(s) = &value
        && let Ok((inner, escaped)) = parse_text(s)
        && (inner.is_object() || inner.is_array())
    {
        let note = if inner.is_object() {
            "the arguments were a JSON string holding the arguments object and were read as that object; send the object itself"
        } else {
            "the arguments were a JSON string holding a list and were read as that list; send an object naming each parameter"
        };
        repairs.push(ArgumentRepair::new(
            RepairKind::DoubleEncodedArguments,
            None,
            note.to_owned(),
        ));
        repairs.extend(escaped);
        value = inner;
    }
    // A list under a wrapper key (`{"arguments": ["a", "b"]}`): the list.
    if let Value::Object(map) = &mut value
        && map.len() == 1
        && let Some((key, Value::Array(_))) = map.iter().next()
        && WRAPPER_KEYS.contains(&key.as_str())
        && !types.has(key)
    {
        let key = key.clone();
        if let Some(list) = map.remove(&key) {
            repairs.push(ArgumentRepair::new(
                RepairKind::UnwrappedArguments,
                Some(&key),
                format!("the arguments were wrapped under `{key}`, and the list inside it was used; send an object at the top level"),
            ));
            value = list;
        }
    }
    if let Value::Array(items) = value {
        value = match list_wrapped_object(items, types) {
            Ok(object) => {
                repairs.push(ArgumentRepair::new(
                    RepairKind::UnwrappedArguments,
                    None,
                    "the arguments object was sent inside a list and was read as that object; send the object itself".to_owned(),
                ));
                object
            }
            Err(items) => {
                let (map, repair) = positional(tool, items, types)?;
                repairs.push(repair);
                Value::Object(map)
            }
        };
    }
    let Value::Object(mut map) = value else {
        return Err(messages::not_an_object(tool, &value));
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
            let note = format!(
                "the arguments were wrapped in an object under `{key}`, and the parameters inside it were used; send them at the top level"
            );
            repairs.push(ArgumentRepair::new(
                RepairKind::UnwrappedArguments,
                Some(&key),
                note,
            ));
            map = inner;
        }
    }
    for (name, v) in &mut map {
        if let Value::String(s) = v
            && let Some(t) = types.types.get(name)
            && let Some(repair) = repair_string(name, s, *t).or_else(|| {
                let items = types.schema_of(name)?.get("items")?;
                string_as_list(name, s, *t, JsonTypes::of(items, types.parameters(), 0))
            })
        {
            *v = repair.0;
            repairs.push(repair.1);
        }
        // Not a repair and not noted: `2.0` and `2` are the same JSON number,
        // and Gemini writes every number as a double (module docs).
        if let Some(schema) = types.schema_of(name) {
            read_whole_floats(v, &[schema], types.parameters(), 0);
        }
    }
    Ok(map)
}

/// The arguments object a model wrapped in a list (`[{"from": "a"}]`): a
/// list of one object, when the first parameter (which the object would go
/// to by position) does not take objects. `Err` gives the list back.
fn list_wrapped_object(mut items: Vec<Value>, types: &ParamTypes) -> Result<Value, Vec<Value>> {
    let first = types
        .parameters()
        .get("properties")
        .and_then(Value::as_object)
        .and_then(|p| p.keys().next());
    let first_takes_objects = first
        .and_then(|name| types.types.get(name.as_str()))
        .is_some_and(|t| t.any || t.object);
    match items.as_slice() {
        [Value::Object(_)] if first.is_some() && !first_takes_objects => Ok(items.remove(0)),
        _ => Err(items),
    }
}

/// Positional arguments: the items of `items` given to the parameters in the
/// schema's declared order (`properties` key order, which `serde_json`'s
/// `preserve_order` keeps as the tool declared it). A tool whose only
/// parameter takes arrays and nothing else gets the whole array as that
/// parameter. `Err` (the not-an-object message, with the parameter list) when
/// there are more items than parameters.
fn positional(
    tool: &str,
    items: Vec<Value>,
    types: &ParamTypes,
) -> Result<(Map<String, Value>, ArgumentRepair), String> {
    let names: Vec<&String> = types
        .parameters()
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| p.keys().collect())
        .unwrap_or_default();
    if let [only] = names.as_slice()
        && let Some(t) = types.types.get(only.as_str())
        && t.array
        && !(t.any || t.string || t.object || t.integer || t.number || t.boolean)
        && !matches!(items.as_slice(), [Value::Array(_)])
    {
        let mut map = Map::new();
        map.insert((*only).clone(), Value::Array(items));
        let note = format!(
            "the arguments were a list and were read as the list parameter `{only}`; send an object such as {{\"{only}\": [...]}}"
        );
        return Ok((
            map,
            ArgumentRepair::new(RepairKind::PositionalArguments, Some(only), note),
        ));
    }
    if items.len() > names.len() {
        return Err(messages::too_many_positional(
            tool,
            &Value::Array(items),
            &names,
        ));
    }
    let used: Vec<String> = names
        .iter()
        .take(items.len())
        .map(|n| format!("`{n}`"))
        .collect();
    let map: Map<String, Value> = names.iter().map(|n| (*n).clone()).zip(items).collect();
    let note = if used.is_empty() {
        "the arguments were an empty list and were read as no arguments; send an object ({})"
            .to_owned()
    } else {
        format!(
            "the arguments were a list and were read by position as {}; send an object naming each parameter",
            used.join(", ")
        )
    };
    Ok((
        map,
        ArgumentRepair::new(RepairKind::PositionalArguments, None, note),
    ))
}

/// The repaired value and its record for a string sent to a parameter of types `t`, if one applies.
fn repair_string(name: &str, s: &str, t: JsonTypes) -> Option<(Value, ArgumentRepair)> {
    if t.any || t.string {
        return None;
    }
    let given = format!("argument `{name}` was given as the string {}", quoted(s));
    if (t.object || t.array)
        && let Ok(parsed) = serde_json::from_str::<Value>(s)
        && ((t.object && parsed.is_object()) || (t.array && parsed.is_array()))
    {
        let what = if parsed.is_object() {
            "object"
        } else {
            "array"
        };
        let note = format!(
            "argument `{name}` was given as a string holding JSON and read as the {what} it holds; send the {what} itself"
        );
        return Some((
            parsed,
            ArgumentRepair::new(RepairKind::JsonStringParsed, Some(name), note),
        ));
    }
    if t.integer
        && let Some(n) = whole_number(s)
    {
        let note = format!("{given} and read as the number {n}");
        return Some((
            n,
            ArgumentRepair::new(RepairKind::IntegerFromString, Some(name), note),
        ));
    }
    if t.number
        && let Some(n) = json_number(s)
    {
        let note = format!("{given} and read as the number {n}");
        return Some((
            n,
            ArgumentRepair::new(RepairKind::NumberFromString, Some(name), note),
        ));
    }
    if t.boolean && (s == "true" || s == "false") {
        let note = format!("{given} and read as the boolean {s}");
        return Some((
            Value::Bool(s == "true"),
            ArgumentRepair::new(RepairKind::BooleanFromString, Some(name), note),
        ));
    }
    None
}

/// A string sent for a parameter that only takes an array whose items are
/// strings (and only strings): that string as a one-item list, noted.
fn string_as_list(
    name: &str,
    s: &str,
    t: JsonTypes,
    items: JsonTypes,
) -> Option<(Value, ArgumentRepair)> {
    let only_array = t.array && !(t.any || t.string || t.object);
    let only_strings = items.string
        && !(items.any
            || items.array
            || items.object
            || items.integer
            || items.number
            || items.boolean);
    if !(only_array && only_strings) {
        return None;
    }
    let list = Value::Array(vec![Value::String(s.to_owned())]);
    let note = format!(
        "argument `{name}` was given as the string {} and read as the list {list}; send a list",
        quoted(s)
    );
    Some((
        list,
        ArgumentRepair::new(RepairKind::StringAsList, Some(name), note),
    ))
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

/// A string that is exactly one JSON number (`"5"`, `"-2.5"`, `"1e3"`) → that
/// number; anything else (`" 5"`, `"+5"`, `".5"`, `"NaN"`, `"1e999"`) → `None`.
fn json_number(s: &str) -> Option<Value> {
    let starts_right = s
        .bytes()
        .next()
        .is_some_and(|b| b == b'-' || b.is_ascii_digit());
    let ends_right = s.bytes().last().is_some_and(|b| b.is_ascii_digit());
    if !starts_right || !ends_right {
        return None;
    }
    match serde_json::from_str::<Value>(s) {
        Ok(n @ Value::Number(_)) => Some(n),
        _ => None,
    }
}

/// Deepest level of nesting (and of `$ref`/`anyOf` indirection) the whole-float walk follows.
const WALK_DEPTH: u8 = 32;

/// Rewrites whole floats (`2.0`) as integers wherever every schema in
/// `schemas` (the alternatives a value may match) admits integers and none
/// admits other numbers or anything at all; follows arrays (`items`,
/// `prefixItems`), objects (`properties`, `additionalProperties`), `$ref`,
/// `anyOf`/`oneOf`/`allOf`. See the module docs for why this is no repair.
fn read_whole_floats(value: &mut Value, schemas: &[&Value], root: &Value, depth: u8) {
    if depth > WALK_DEPTH || schemas.is_empty() {
        return;
    }
    match value {
        Value::Number(n) if n.is_f64() => {
            let mut t = JsonTypes::default();
            for s in schemas {
                t.union(JsonTypes::of(s, root, 0));
            }
            if t.integer
                && !t.number
                && !t.any
                && let Some(whole) = n.as_f64().and_then(exact_integer)
            {
                *value = whole;
            }
        }
        Value::Array(items) => {
            let alternatives = expand(schemas, root);
            for (i, item) in items.iter_mut().enumerate() {
                let children: Vec<&Value> = alternatives
                    .iter()
                    .filter_map(|s| {
                        s.get("prefixItems")
                            .and_then(|p| p.get(i))
                            .or_else(|| s.get("items"))
                    })
                    .collect();
                read_whole_floats(item, &children, root, depth + 1);
            }
        }
        Value::Object(fields) => {
            let alternatives = expand(schemas, root);
            for (key, field) in fields.iter_mut() {
                let children: Vec<&Value> = alternatives
                    .iter()
                    .filter_map(|s| {
                        s.get("properties")
                            .and_then(|p| p.get(key))
                            .or_else(|| s.get("additionalProperties"))
                    })
                    .collect();
                read_whole_floats(field, &children, root, depth + 1);
            }
        }
        _ => {}
    }
}

/// `schemas` with every `$ref` target and `anyOf`/`oneOf`/`allOf` branch added, depth-first.
fn expand<'a>(schemas: &[&'a Value], root: &'a Value) -> Vec<&'a Value> {
    fn add<'a>(s: &'a Value, root: &'a Value, depth: u8, out: &mut Vec<&'a Value>) {
        if depth > 8 {
            return;
        }
        out.push(s);
        if let Some(target) = s
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve_ref(root, r))
        {
            add(target, root, depth + 1, out);
        }
        for key in ["anyOf", "oneOf", "allOf"] {
            for branch in s.get(key).and_then(Value::as_array).into_iter().flatten() {
                add(branch, root, depth + 1, out);
            }
        }
    }
    let mut out = Vec::new();
    for s in schemas {
        add(s, root, 0, &mut out);
    }
    out
}

/// `f` as a JSON integer when it is whole and fits `i64` or `u64` exactly.
fn exact_integer(f: f64) -> Option<Value> {
    // 2^63 and 2^64 are exact in f64; every whole f64 below them converts without loss.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if !f.is_finite() || f.fract() != 0.0 {
        return None;
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "the range checks above make both casts exact"
    )]
    if (-TWO_POW_63..TWO_POW_63).contains(&f) {
        Some(Value::from(f as i64))
    } else if (0.0..2.0 * TWO_POW_63).contains(&f) {
        Some(Value::from(f as u64))
    } else {
        None
    }
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
                "either": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
                "timeout": {"type": ["number", "null"], "format": "double"},
                "ratio": {"type": "number"}
            },
            "$defs": {"P": {"type": "object"}}
        }))
    }

    fn notes(args: ToolArgs) -> Vec<String> {
        let mut repairs = Vec::new();
        let _ = prepare("t", args, &types(), &mut repairs);
        repairs.iter().map(|r| r.note().to_owned()).collect()
    }

    fn run(args: ToolArgs) -> (Result<Map<String, Value>, String>, Vec<&'static str>) {
        let mut repairs = Vec::new();
        let r = prepare("t", args, &types(), &mut repairs);
        (r, repairs.iter().map(|r| r.kind.as_str()).collect())
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
        let (r, k) = run(ToolArgs::Value(json!("{\"content\": \"a\nb\"}")));
        assert_eq!(r.unwrap()["content"], "a\nb");
        assert_eq!(
            k,
            ["double_encoded_arguments", "control_characters_escaped"]
        );
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
    fn positional_arguments_follow_the_declared_order() {
        // 002 #11: a list where the object was expected, read by position.
        let (r, k) = run(ToolArgs::Value(json!(["hello", "7", true])));
        let m = r.unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"content": "hello", "limit": 7, "flag": true})
        );
        assert_eq!(k, ["positional_arguments", "integer_from_string"]);
        assert_eq!(
            notes(ToolArgs::Text("[\"a\", 2]".into()))[0],
            "the arguments were a list and were read by position as `content`, `limit`; send an object naming each parameter"
        );
        let (r, k) = run(ToolArgs::Value(json!([])));
        assert_eq!((r.unwrap(), k), (Map::new(), vec!["positional_arguments"]));
        // More items than parameters: refused, naming the parameters in order.
        let nine = json!([1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let e = run(ToolArgs::Value(nine)).0.unwrap_err();
        assert_eq!(
            e,
            "The arguments for `t` must be a JSON object such as {\"name\": value}; received an array [1,2,3,4,5,6,7,8,9]. `t` takes 8 parameters (`content`, `limit`, `flag`, `tags`, `point`, `either`, `timeout`, `ratio`), so a list of 9 cannot be read by position."
        );
        let none = ParamTypes::from_parameters(&json!({"type": "object", "properties": {}}));
        let e = prepare("n", ToolArgs::Value(json!([1])), &none, &mut Vec::new()).unwrap_err();
        assert!(e.ends_with("`n` takes no parameters."), "{e}");
    }

    #[test]
    fn positional_corners() {
        // Review 30 F10: a double-encoded list, a list under a wrapper key
        // and an object wrapped in a list.
        let (r, k) = run(ToolArgs::Value(json!("[\"a\", \"5\"]")));
        assert_eq!(
            Value::Object(r.unwrap()),
            json!({"content": "a", "limit": 5})
        );
        assert_eq!(
            k,
            [
                "double_encoded_arguments",
                "positional_arguments",
                "integer_from_string"
            ]
        );
        assert_eq!(
            notes(ToolArgs::Text(r#""[\"a\"]""#.into()))[0],
            "the arguments were a JSON string holding a list and were read as that list; send an object naming each parameter"
        );
        let (r, k) = run(ToolArgs::Value(json!({"arguments": ["a", 2]})));
        assert_eq!(
            Value::Object(r.unwrap()),
            json!({"content": "a", "limit": 2})
        );
        assert_eq!(k, ["unwrapped_arguments", "positional_arguments"]);
        assert_eq!(
            notes(ToolArgs::Value(json!({"input": ["a"]})))[0],
            "the arguments were wrapped under `input`, and the list inside it was used; send an object at the top level"
        );
        let (r, k) = run(ToolArgs::Value(json!([{"content": "a", "limit": 2}])));
        assert_eq!(
            Value::Object(r.unwrap()),
            json!({"content": "a", "limit": 2})
        );
        assert_eq!(k, ["unwrapped_arguments"]);
        assert_eq!(
            notes(ToolArgs::Value(json!([{"content": "a"}])))[0],
            "the arguments object was sent inside a list and was read as that object; send the object itself"
        );
        // A first parameter that takes objects gets the object by position.
        let obj_first = ParamTypes::from_parameters(&json!({
            "type": "object",
            "properties": {"filter": {"type": "object"}, "n": {"type": "integer"}}
        }));
        let mut repairs = Vec::new();
        let m = prepare(
            "o",
            ToolArgs::Value(json!([{"a": 1}])),
            &obj_first,
            &mut repairs,
        )
        .unwrap();
        assert_eq!(Value::Object(m), json!({"filter": {"a": 1}}));
        // A tool with a parameter named `input` keeps it.
        let named = ParamTypes::from_parameters(&json!({
            "type": "object",
            "properties": {"input": {"type": "array"}}
        }));
        let m = prepare(
            "i",
            ToolArgs::Value(json!({"input": [1]})),
            &named,
            &mut Vec::new(),
        )
        .unwrap();
        assert_eq!(Value::Object(m), json!({"input": [1]}));
    }

    #[test]
    fn a_list_for_a_tool_whose_one_parameter_is_a_list() {
        let one = ParamTypes::from_parameters(&json!({
            "type": "object",
            "properties": {"paths": {"type": "array", "items": {"type": "string"}}}
        }));
        for (sent, paths) in [
            (json!(["a.png", "b.png"]), json!(["a.png", "b.png"])),
            (json!([["a.png"]]), json!(["a.png"])),
        ] {
            let mut repairs = Vec::new();
            let m = prepare("r", ToolArgs::Value(sent.clone()), &one, &mut repairs).unwrap();
            assert_eq!(m["paths"], paths, "{sent}");
            assert_eq!(repairs[0].kind, RepairKind::PositionalArguments);
        }
        let mut repairs = Vec::new();
        let _ = prepare("r", ToolArgs::Value(json!(["a"])), &one, &mut repairs);
        assert_eq!(
            repairs[0].note(),
            "the arguments were a list and were read as the list parameter `paths`; send an object such as {\"paths\": [...]}"
        );
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

    #[test]
    fn every_repair_has_a_note() {
        assert_eq!(
            notes(ToolArgs::Value(json!({"limit": "5"}))),
            ["argument `limit` was given as the string \"5\" and read as the number 5"]
        );
        assert_eq!(
            notes(ToolArgs::Value(json!({"flag": "true"}))),
            ["argument `flag` was given as the string \"true\" and read as the boolean true"]
        );
        assert_eq!(
            notes(ToolArgs::Value(json!({"tags": "[\"x\"]"}))),
            [
                "argument `tags` was given as a string holding JSON and read as the array it holds; send the array itself"
            ]
        );
        assert_eq!(
            notes(ToolArgs::Value(json!({"tags": "x.png"}))),
            [
                "argument `tags` was given as the string \"x.png\" and read as the list [\"x.png\"]; send a list"
            ]
        );
        let (r, k) = run(ToolArgs::Value(json!({"tags": "a b"})));
        assert_eq!(
            (r.unwrap()["tags"].clone(), k),
            (json!(["a b"]), vec!["string_as_list"])
        );
        assert_eq!(
            notes(ToolArgs::Value(json!({"timeout": "2.5"}))),
            ["argument `timeout` was given as the string \"2.5\" and read as the number 2.5"]
        );
        assert!(notes(ToolArgs::Text(String::new()))[0].contains("empty"));
        assert!(notes(ToolArgs::Value(json!("{\"limit\": 1}")))[0].contains("JSON string"));
        assert!(
            notes(ToolArgs::Value(json!({"input": {"limit": 1}})))[0]
                .contains("wrapped in an object under `input`")
        );
        let long = notes(ToolArgs::Value(
            json!({"timeout": format!("1{}", "0".repeat(80))}),
        ));
        assert!(
            long[0].contains("\"1000000000000000000000000000000000000000\"…"),
            "{long:?}"
        );
    }

    #[test]
    fn numbers_from_strings_for_number_parameters() {
        // The issue's inputs (`bash_command {"timeout": "5"}`, `"2.5"`), then more of the kind.
        for (sent, read) in [
            ("5", json!(5)),
            ("2.5", json!(2.5)),
            ("-0.25", json!(-0.25)),
            ("1e3", json!(1000.0)),
            ("0", json!(0)),
        ] {
            let (r, k) = run(ToolArgs::Value(json!({"timeout": sent, "ratio": sent})));
            let m = r.unwrap();
            assert_eq!((&m["timeout"], &m["ratio"]), (&read, &read), "{sent}");
            assert_eq!(k, ["number_from_string", "number_from_string"], "{sent}");
        }
        for bad in [
            " 5", "5 ", "+5", ".5", "5.", "NaN", "inf", "1e999", "0x10", "", "five", "[5]",
        ] {
            let (r, k) = run(ToolArgs::Value(json!({"timeout": bad})));
            assert_eq!(r.unwrap()["timeout"], bad, "{bad}");
            assert!(k.is_empty(), "{bad}: {k:?}");
        }
        // An integer parameter still refuses a fraction.
        let (r, k) = run(ToolArgs::Value(json!({"limit": "2.5"})));
        assert_eq!((r.unwrap()["limit"].clone(), k.len()), (json!("2.5"), 0));
    }

    fn float_types() -> ParamTypes {
        ParamTypes::from_parameters(&json!({
            "type": "object",
            "properties": {
                "limit": {"type": "integer", "format": "uint32", "minimum": 0},
                "opt": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
                "list": {"type": "array", "items": {"type": "integer"}},
                "pair": {"type": "array", "prefixItems": [{"type": "integer"}, {"type": "number"}]},
                "map": {"type": "object", "additionalProperties": {"type": "integer", "format": "int32"}},
                "nested": {"$ref": "#/$defs/Outer"},
                "ratio": {"type": "number"},
                "free": {},
                "either": {"type": ["integer", "number"]}
            },
            "$defs": {
                "Outer": {"type": "object", "properties": {
                    "inner": {"$ref": "#/$defs/Inner"},
                    "rows": {"type": "array", "items": {"$ref": "#/$defs/Inner"}}
                }},
                "Inner": {"type": "object", "properties": {"n": {"type": "integer"}, "x": {"type": "number"}}}
            }
        }))
    }

    fn read(args: Value) -> (Map<String, Value>, usize) {
        let mut repairs = Vec::new();
        let m = prepare("t", ToolArgs::Value(args), &float_types(), &mut repairs).unwrap();
        (m, repairs.len())
    }

    #[test]
    fn whole_floats_read_as_integers_at_any_depth() {
        // The issue's input: Gemini sends `read_file {"limit": 2.0}`.
        let (m, n) = read(json!({"limit": 2.0}));
        assert!(m["limit"].is_u64() && m["limit"] == 2, "{m:?}");
        assert_eq!(n, 0, "a lossless reading, not a repair");
        let (m, _) = read(json!({
            "opt": 7.0,
            "list": [1.0, 2.0, -3.0],
            "pair": [4.0, 5.0],
            "map": {"a": 6.0, "b": -0.0},
            "nested": {"inner": {"n": 8.0, "x": 9.0}, "rows": [{"n": 10.0}, {"n": 11.0, "x": 1.0}]},
            "ratio": 2.0,
            "free": 3.0,
            "either": 4.0
        }));
        let v = Value::Object(m);
        for (pointer, expected) in [
            ("/opt", json!(7)),
            ("/list", json!([1, 2, -3])),
            ("/pair/0", json!(4)),
            ("/map", json!({"a": 6, "b": 0})),
            ("/nested/inner/n", json!(8)),
            ("/nested/rows", json!([{"n": 10}, {"n": 11, "x": 1.0}])),
        ] {
            // serde_json's numbers compare by kind too: `json!(1.0) != json!(1)`.
            assert_eq!(v.pointer(pointer), Some(&expected), "{pointer}");
        }
        assert_ne!(json!(1.0), json!(1));
        // Where a schema admits other numbers (or anything), floats stay floats.
        for pointer in ["/pair/1", "/nested/inner/x", "/ratio", "/free", "/either"] {
            assert!(v.pointer(pointer).unwrap().is_f64(), "{pointer}");
        }
    }

    #[test]
    fn floats_that_are_not_exact_integers_stay_floats() {
        for f in [2.5, -0.1, 1e20, -1e19, 18_446_744_073_709_551_616.0] {
            let (m, _) = read(json!({"limit": f, "list": [f]}));
            assert!(m["limit"].is_f64() && m["list"][0].is_f64(), "{f}");
        }
        // The edges of i64 and u64: exact, so converted.
        let (m, _) = read(
            json!({"limit": -9_223_372_036_854_775_808.0_f64, "list": [9_223_372_036_854_775_808.0_f64]}),
        );
        assert_eq!(m["limit"], json!(i64::MIN));
        assert_eq!(m["list"][0], json!(9_223_372_036_854_775_808_u64));
    }

    #[test]
    fn raw_control_characters_in_strings_are_escaped() {
        // The issue's input: a literal newline and tab inside `"patch": "…"`.
        let text = "{\"patch\": \"*** Begin Patch\n*** Update File: a.rs\n@@\n-\told\n+\tnew\n*** End Patch\"}";
        let (r, k) = run(ToolArgs::Text(text.to_owned()));
        assert_eq!(
            r.unwrap()["patch"],
            "*** Begin Patch\n*** Update File: a.rs\n@@\n-\told\n+\tnew\n*** End Patch"
        );
        assert_eq!(k, ["control_characters_escaped"]);
        let n = notes(ToolArgs::Text(text.to_owned()));
        assert_eq!(
            n,
            [
                "the arguments held 7 raw control characters (newline, tab) inside JSON strings, which JSON allows only escaped (e.g. \\n); they were read as those characters"
            ]
        );
        for (text, key, expected, name) in [
            ("{\"a\": \"x\r\ny\"}", "a", "x\r\ny", "carriage return"),
            (
                "{\"a\": [\"p\u{1}q\"], \"b\": {\"c\": \"\u{0}\"}}",
                "b",
                "{\"c\":\"\\u0000\"}",
                "U+0000",
            ),
            (
                "{\n\t\"a\": \"tab\there\",\r\n \"q\": \"\\\"\n\"}",
                "q",
                "\"\n",
                "tab",
            ),
            ("{\"a\": \"\\\\\n\"}", "a", "\\\n", "newline"),
        ] {
            let (r, k) = run(ToolArgs::Text(text.to_owned()));
            let m = r.unwrap_or_else(|e| panic!("{text:?}: {e}"));
            let got = match &m[key] {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert_eq!(got, expected, "{text:?}");
            assert_eq!(k, ["control_characters_escaped"], "{text:?}");
            assert!(
                notes(ToolArgs::Text(text.to_owned()))[0].contains(name),
                "{text:?}"
            );
        }
        // Control characters outside strings are white space; other broken JSON stays an error.
        let (r, k) = run(ToolArgs::Text("{\n\t\"limit\": 1\r\n}".to_owned()));
        assert_eq!((r.unwrap()["limit"].clone(), k.len()), (json!(1), 0));
        for bad in [
            "{\"a\": \"x\n",
            "{\"a\": \"x\ny\",}",
            "{\"a\": \"\\\nx\"}",
            "{\u{1}}",
        ] {
            let e = run(ToolArgs::Text(bad.to_owned())).0.unwrap_err();
            assert!(e.contains("are not valid JSON"), "{bad:?}: {e}");
        }
    }
}
