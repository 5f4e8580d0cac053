//! `tool call NAME [ARGS_JSON] [--key=value ...]`: the words after the tool
//! name turned into one arguments object.

use std::io::Read;

use serde_json::{Map, Value};
use tool_core::args::{json_kind, takes_only_text};

/// Builds the arguments object from the words after the tool name.
///
/// - An optional first word that is not an option: a JSON object, or `-` to
///   read that object from `stdin`.
/// - Then `--key=value`, `--key value` or a bare `--key` (`true`, refused
///   for a parameter whose schema declares types without `boolean`). The value
///   is JSON when it parses as JSON, else the string itself; for a parameter
///   whose schema (`parameters`) takes only strings it is always the text as written. Dashes in the key
///   become underscores. A pair overrides the same key of the JSON object;
///   the same key twice among the pairs is an error.
///
/// # Errors
/// A message for a person: what was wrong and how to write it instead.
pub(crate) fn parse_call_args(
    words: &[String],
    stdin: impl FnOnce() -> std::io::Result<String>,
    parameters: &Value,
) -> Result<Map<String, Value>, String> {
    let mut words = words.iter().peekable();
    let mut args = Map::new();
    if let Some(first) = words.next_if(|w| !is_option(w)) {
        let text = if first == "-" {
            stdin().map_err(|e| format!("cannot read the arguments from stdin: {e}"))?
        } else {
            first.clone()
        };
        args = parse_object(&text, parameters)?;
    }
    let mut from_pairs: Vec<String> = Vec::new();
    while let Some(word) = words.next() {
        let Some(option) = word.strip_prefix("--") else {
            return Err(format!(
                "unexpected argument `{word}`: after the tool name give one JSON object, then `--key=value` pairs"
            ));
        };
        let (raw_key, text) = match option.split_once('=') {
            Some((k, v)) => (k, Some(v)),
            None => (option, words.next_if(|w| !is_option(w)).map(String::as_str)),
        };
        let key = declared_key(parameters, raw_key);
        let value = match text {
            // A parameter that only takes text gets the text as written:
            // `--pattern=123` is the string "123", `--query='"x"'` keeps its quotes.
            Some(t) if takes_only_text(parameters, &key) => Value::String(t.to_owned()),
            Some(t) => parse_value(t),
            None if declares_no_boolean(parameters, &key) => {
                return Err(format!(
                    "`--{raw_key}` needs a value: write `--{raw_key}=…` (a bare `--{raw_key}` means \
                     `true`, and `{key}` takes no boolean)"
                ));
            }
            None => Value::Bool(true),
        };
        if key.is_empty() || (key.starts_with('_') && raw_key.starts_with('-')) {
            return Err(format!(
                "`{word}` names no argument: write `--key=value`, e.g. `--file-path=src/main.rs`"
            ));
        }
        if from_pairs.contains(&key) {
            return Err(format!(
                "argument `{key}` is given twice; give it once (a list is written as JSON: --{raw_key}='[\"a\", \"b\"]')"
            ));
        }
        from_pairs.push(key.clone());
        args.insert(key, value);
    }
    Ok(args)
}

/// The parameter `--raw_key` names: dashes become underscores
/// (`--file-path` is `file_path`), and when no parameter has that name, the
/// one parameter whose name is the same but for case, dashes and
/// underscores (`--from-year` is `fromYear`, a `#[serde(rename)]`d field);
/// else the underscored key, which the tool then refuses with the valid names.
fn declared_key(parameters: &Value, raw_key: &str) -> String {
    let key = raw_key.replace('-', "_");
    let Some(properties) = parameters["properties"].as_object() else {
        return key;
    };
    if properties.contains_key(&key) {
        return key;
    }
    let fold = |s: &str| {
        s.chars()
            .filter(|c| !matches!(c, '-' | '_'))
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let wanted = fold(raw_key);
    let mut same = properties.keys().filter(|p| fold(p) == wanted);
    match (same.next(), same.next()) {
        (Some(only), None) => only.clone(),
        _ => key,
    }
}

/// Refuses an argument that is one of the `tool` program's own options
/// (`--workspace`, `--timeout`, ...) when the tool has no parameter of that
/// name: after the tool name every `--x` belongs to the tool, so the option
/// was surely meant for the program and must go before the name.
///
/// # Errors
/// The message saying where to put the option.
pub(crate) fn check_own_options(
    tool: &str,
    args: &Map<String, Value>,
    parameters: &Value,
    own: &[String],
) -> Result<(), String> {
    // A tool that takes any object (no declared properties, or additional
    // properties allowed) may mean the key; only a declared parameter list
    // that lacks it proves the option was meant for the program.
    let open = parameters["properties"].as_object().is_none()
        || !matches!(
            parameters.get("additionalProperties"),
            None | Some(Value::Bool(false))
        );
    let known = |key: &str| open || parameters["properties"].get(key).is_some();
    for key in args.keys().filter(|k| !known(k)) {
        let flag = key.replace('_', "-");
        if own.contains(&flag) {
            return Err(format!(
                "`--{flag}` is an option of the `{program}` program, not a parameter of {tool}: \
                 put it before the tool name, e.g. `{program} call --{flag} … {tool} …` \
                 (everything after the tool name is an argument of the tool)",
                program = crate::app::program_name()
            ));
        }
    }
    Ok(())
}

/// Reads all of stdin as text, for `tool call NAME -`.
pub(crate) fn read_stdin() -> std::io::Result<String> {
    let mut text = String::new();
    std::io::stdin().lock().read_to_string(&mut text)?;
    Ok(text)
}

/// A word that starts an option: `--something` (a lone `-` is stdin, `-5` a value).
fn is_option(word: &str) -> bool {
    word.starts_with("--")
}

/// A `--key=value` value: JSON when it parses, else the text itself.
fn parse_value(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.to_owned()))
}

/// True when parameter `key` of the schema `parameters` declares its JSON
/// types (`"type": "string"` or a list) and `boolean` is not among them, so a
/// bare `--key` (meaning `true`) cannot be what the person meant. A schema
/// without a plain `type` (`$ref`, `anyOf`, none) declares nothing here.
fn declares_no_boolean(parameters: &Value, key: &str) -> bool {
    match &parameters["properties"][key]["type"] {
        Value::String(t) => t != "boolean",
        Value::Array(types) => !types.iter().any(|t| t == "boolean"),
        _ => false,
    }
}

/// An example arguments object for messages, built from the tool's own
/// schema: its first required parameter (else its first parameter) with a
/// value of that parameter's type, e.g. `{"sku": "…"}`; `{}` for a tool
/// without parameters.
fn example_object(parameters: &Value) -> String {
    let properties = parameters["properties"].as_object();
    let first_required = parameters["required"]
        .as_array()
        .and_then(|r| r.first())
        .and_then(Value::as_str);
    let name =
        first_required.or_else(|| properties.and_then(|p| p.keys().next().map(String::as_str)));
    let Some(name) = name else {
        return "{}".to_owned();
    };
    let kind = match &parameters["properties"][name]["type"] {
        Value::String(t) => t.as_str(),
        Value::Array(types) => types
            .iter()
            .find_map(|t| t.as_str().filter(|t| *t != "null"))
            .unwrap_or(""),
        _ => "",
    };
    let value = match kind {
        "integer" | "number" => Value::from(1),
        "boolean" => Value::Bool(true),
        "array" => Value::Array(Vec::new()),
        "object" => Value::Object(Map::new()),
        _ => Value::String("…".to_owned()),
    };
    let mut example = Map::new();
    example.insert(name.to_owned(), value);
    Value::Object(example).to_string()
}

/// The positional arguments object.
fn parse_object(text: &str, parameters: &Value) -> Result<Map<String, Value>, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(other) => Err(format!(
            "the arguments must be one JSON object such as '{}', not {}",
            example_object(parameters),
            json_kind(&other)
        )),
        Err(e) => Err(format!(
            "the arguments are not valid JSON ({e}); write one JSON object such as '{}', or use --key=value pairs",
            example_object(parameters)
        )),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(words: &[&str]) -> Result<Value, String> {
        let words: Vec<String> = words.iter().map(|w| (*w).to_owned()).collect();
        parse_call_args(&words, || Ok(r#"{"from": "stdin"}"#.to_owned()), &json!({}))
            .map(Value::Object)
    }

    #[test]
    fn text_only_parameters_keep_the_text_as_written() {
        let schema = json!({
            "type": "object",
            "properties": {
                "pattern": {"type": "string"},
                "path": {"type": ["string", "null"]},
                "mode": {"$ref": "#/$defs/Mode"},
                "limit": {"type": "integer"},
                "any": {}
            },
            "$defs": {"Mode": {"type": "string", "enum": ["a", "1"]}}
        });
        let words: Vec<String> = [
            "--pattern=123",
            "--path=\"q\"",
            "--mode=1",
            "--limit=5",
            "--any=7",
        ]
        .iter()
        .map(|w| (*w).to_owned())
        .collect();
        let args = parse_call_args(&words, || Ok(String::new()), &schema).unwrap();
        assert_eq!(
            Value::Object(args),
            json!({"pattern": "123", "path": "\"q\"", "mode": "1", "limit": 5, "any": 7})
        );
    }

    #[test]
    fn values_are_json_when_they_parse() {
        assert_eq!(
            parse(&[
                "--limit=5",
                "--query=hello",
                "--tags=[\"a\"]",
                "--x=true",
                "--n=null",
                "--f=1.5",
                "--s=\"42\"",
                "--empty=",
                "--eq=a=b",
            ])
            .unwrap(),
            json!({"limit": 5, "query": "hello", "tags": ["a"], "x": true, "n": null, "f": 1.5,
                   "s": "42", "empty": "", "eq": "a=b"})
        );
    }

    #[test]
    fn a_dashed_key_finds_its_camel_case_parameter() {
        let parameters = serde_json::json!({"type": "object", "properties": {
            "text": {"type": "string"}, "fromYear": {"type": "integer"}, "file_path": {"type": "string"}
        }});
        let words: Vec<String> = ["--from-year=2020", "--file-path=a", "--Text=x"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let args = parse_call_args(&words, || Ok(String::new()), &parameters).unwrap();
        assert_eq!(
            Value::Object(args),
            serde_json::json!({"fromYear": 2020, "file_path": "a", "text": "x"})
        );
        // Two parameters that fold alike: the plain underscored key, refused later.
        let parameters = serde_json::json!({"type": "object", "properties": {
            "fromYear": {"type": "integer"}, "from_year_": {"type": "integer"}
        }});
        let words = vec!["--FROM-YEAR=1".to_owned()];
        let args = parse_call_args(&words, || Ok(String::new()), &parameters).unwrap();
        assert_eq!(Value::Object(args), serde_json::json!({"FROM_YEAR": 1}));
    }

    #[test]
    fn dashes_become_underscores_and_bare_flags_are_true() {
        assert_eq!(
            parse(&[
                "--file-path=a.txt",
                "--replace-all",
                "--offset",
                "-5",
                "--last"
            ])
            .unwrap(),
            json!({"file_path": "a.txt", "replace_all": true, "offset": -5, "last": true})
        );
    }

    #[test]
    fn json_object_then_pairs_override() {
        assert_eq!(
            parse(&[r#"{"a": 1, "b": 2}"#, "--b=3"]).unwrap(),
            json!({"a": 1, "b": 3})
        );
        assert_eq!(
            parse(&["-", "--x=1"]).unwrap(),
            json!({"from": "stdin", "x": 1})
        );
        assert_eq!(parse(&[]).unwrap(), json!({}));
    }

    #[test]
    fn mistakes_are_explained() {
        assert!(parse(&["{bad"]).unwrap_err().contains("not valid JSON"));
        assert!(parse(&["[1]"]).unwrap_err().contains("not an array"));
        assert!(
            parse(&["--a=1", "stray"])
                .unwrap_err()
                .contains("unexpected argument `stray`")
        );
        assert!(
            parse(&["--a=1", "--a=2"])
                .unwrap_err()
                .contains("given twice")
        );
        assert!(parse(&["--=1"]).unwrap_err().contains("names no argument"));
        let schema = json!({
            "type": "object",
            "properties": {"sku": {"type": "string"}, "qty": {"type": ["integer", "null"]},
                           "fast": {"type": "boolean"}},
            "required": ["sku"]
        });
        let words = |w: &[&str]| w.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            parse_call_args(&words(&["--sku"]), || Ok(String::new()), &schema).unwrap_err(),
            "`--sku` needs a value: write `--sku=…` (a bare `--sku` means `true`, and `sku` takes \
             no boolean)"
        );
        assert_eq!(
            Value::Object(
                parse_call_args(
                    &words(&["--fast", "--qty=2"]),
                    || Ok(String::new()),
                    &schema
                )
                .unwrap()
            ),
            json!({"fast": true, "qty": 2})
        );
        assert_eq!(
            parse_call_args(&words(&["not json"]), || Ok(String::new()), &schema).unwrap_err(),
            "the arguments are not valid JSON (expected ident at line 1 column 2); write one JSON \
             object such as '{\"sku\":\"…\"}', or use --key=value pairs"
        );
        assert!(
            parse(&["---x=1"])
                .unwrap_err()
                .contains("names no argument")
        );
    }
}
