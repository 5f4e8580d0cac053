//! Answers to a form elicitation checked against the form's requested
//! schema (review 26, F11), on both sides: this crate's client checks what
//! the person typed before it answers a server, and its server checks what
//! a client answered before a tool sees it. An answer that does not fit is
//! refused with a message naming the field and the rule (the person, or
//! the client, may answer again); it is never passed on.
//!
//! MCP's form schemas (2025-11-25, "Elicitation › Requested schema") are a
//! flat object of primitive fields, and this checks what they can say:
//! `required`; no field the form does not have when it says
//! `additionalProperties: false` (otherwise, as JSON Schema has it, a field
//! it does not list is allowed and passed on as sent: the conformance
//! suite's clients answer with fields for several forms at once); per field its `type`
//! (`string`, `number`, `integer`, `boolean`, or `array` for a
//! multi-select), `enum` / `oneOf` / `anyOf` constants (single-select),
//! `items.enum` / `items.anyOf` constants and `minItems` / `maxItems`
//! (multi-select), `minLength` / `maxLength` (in characters), `minimum` /
//! `maximum`, and the formats `email`, `uri`, `date` and `date-time` (their
//! shape: `a@b`, a scheme, `YYYY-MM-DD`, `YYYY-MM-DDTHH:MM:SS…`). A field
//! schema this does not know is accepted as it is.

use serde_json::{Map, Value};
use tool_rules::text::{Clip, clip};

/// How many times one form is asked when its answer does not fit: 3 (the
/// first time and two more); then the form is declined (client side) or
/// the request fails (server side).
pub(crate) const MAX_FORM_ATTEMPTS: usize = 3;

/// `Ok` when `content` fits the form `schema` (its `requestedSchema`).
///
/// # Errors
/// The first problem, naming the field: a required field missing, a field
/// the form does not have (only when it sets `additionalProperties: false`),
/// or a value that breaks its field's rules.
pub(crate) fn check_form(schema: &Value, content: &Map<String, Value>) -> Result<(), String> {
    let properties = schema.get("properties").and_then(Value::as_object);
    for name in schema
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        if !content.contains_key(name) {
            return Err(format!("`{}` is required", shown_name(name)));
        }
    }
    let closed = schema.get("additionalProperties") == Some(&Value::Bool(false));
    for (name, value) in content {
        match properties.and_then(|p| p.get(name)) {
            Some(field) => check_field(name, field, value)?,
            None if closed => {
                return Err(format!("the form has no field `{}`", shown_name(name)));
            }
            None => {}
        }
    }
    Ok(())
}

/// `Ok` when `value` fits field `name`'s schema `field`.
///
/// # Errors
/// What is wrong, naming the field and the rule.
pub(crate) fn check_field(name: &str, field: &Value, value: &Value) -> Result<(), String> {
    let name = shown_name(name);
    let shown = clip(&value.to_string(), Clip::chars(80)).into_owned();
    let ty = field.get("type").and_then(Value::as_str);
    let wrong = |what: &str| format!("`{name}` must be {what}; {shown} is not");
    match ty {
        Some("string") => {
            let Some(text) = value.as_str() else {
                return Err(wrong("a string"));
            };
            check_string(&name, field, text)?;
        }
        Some("integer") => {
            let whole = value.as_i64().is_some()
                || value.as_u64().is_some()
                || value.as_f64().is_some_and(|f| f.fract() == 0.0);
            if !whole {
                return Err(wrong("a whole number"));
            }
            check_bounds(&name, field, value)?;
        }
        Some("number") => {
            if !value.is_number() {
                return Err(wrong("a number"));
            }
            check_bounds(&name, field, value)?;
        }
        Some("boolean") if !value.is_boolean() => return Err(wrong("true or false")),
        Some("array") => {
            let Some(items) = value.as_array() else {
                return Err(wrong("a list"));
            };
            check_items(&name, field, items)?;
        }
        _ => {}
    }
    let allowed = constants(field);
    if !allowed.is_empty() && !allowed.contains(value) {
        return Err(format!(
            "`{name}` must be one of {}; {shown} is not",
            listed(&allowed)
        ));
    }
    Ok(())
}

/// `Ok` when `answer` fits the form `params` asked (only an accepted
/// answer to a form is checked: a decline, a cancel, a URL elicitation
/// carry no content to check).
///
/// # Errors
/// As [`check_form`]; an accepted form without content is refused too.
pub(crate) fn check_answer(
    params: &rmcp::model::ElicitRequestParams,
    answer: &rmcp::model::ElicitResult,
) -> Result<(), String> {
    let rmcp::model::ElicitRequestParams::FormElicitationParams {
        requested_schema, ..
    } = params
    else {
        return Ok(());
    };
    if answer.action != rmcp::model::ElicitationAction::Accept {
        return Ok(());
    }
    let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
    match &answer.content {
        Some(Value::Object(content)) => check_form(&schema, content),
        _ => Err("the form was accepted without its fields".to_owned()),
    }
}

/// The same form asked again after an answer that did not fit: its message
/// begins with why (`Your answer was refused: WHY. Please answer again.`).
pub(crate) fn asked_again(
    params: &rmcp::model::ElicitRequestParams,
    why: &str,
) -> rmcp::model::ElicitRequestParams {
    let mut params = params.clone();
    if let rmcp::model::ElicitRequestParams::FormElicitationParams { message, .. } = &mut params {
        *message = format!(
            "Your answer was refused: {}. Please answer again.\n\n{message}",
            clip(why, Clip::chars(300))
        );
    }
    params
}

/// A field name for messages (clipped).
fn shown_name(name: &str) -> String {
    clip(name, Clip::chars(60)).into_owned()
}

/// The constants a single-select field admits: `enum`, else the `const` of
/// each `oneOf` / `anyOf` branch; empty when it lists none.
fn constants(field: &Value) -> Vec<Value> {
    if let Some(list) = field.get("enum").and_then(Value::as_array) {
        return list.clone();
    }
    field
        .get("oneOf")
        .or_else(|| field.get("anyOf"))
        .and_then(Value::as_array)
        .map(|branches| {
            branches
                .iter()
                .filter_map(|b| b.get("const").cloned())
                .collect()
        })
        .unwrap_or_default()
}

fn listed(values: &[Value]) -> String {
    let shown: Vec<String> = values.iter().take(20).map(Value::to_string).collect();
    let more = if values.len() > 20 { ", …" } else { "" };
    format!("{}{more}", shown.join(", "))
}

fn check_string(name: &str, field: &Value, text: &str) -> Result<(), String> {
    let chars = text.chars().count();
    if let Some(min) = field.get("minLength").and_then(Value::as_u64)
        && (chars as u64) < min
    {
        return Err(format!(
            "`{name}` must be at least {min} characters long; the answer has {chars}"
        ));
    }
    if let Some(max) = field.get("maxLength").and_then(Value::as_u64)
        && (chars as u64) > max
    {
        return Err(format!(
            "`{name}` must be at most {max} characters long; the answer has {chars}"
        ));
    }
    let format = field.get("format").and_then(Value::as_str);
    let fits = match format {
        Some("email") => is_email(text),
        Some("uri") => is_uri(text),
        Some("date") => is_date(text),
        Some("date-time") => is_date_time(text),
        _ => true,
    };
    if !fits {
        return Err(format!(
            "`{name}` must be {}; `{}` is not",
            match format {
                Some("email") => "an email address (name@domain)",
                Some("uri") => "a URI (scheme:…, e.g. https://example.com)",
                Some("date") => "a date (YYYY-MM-DD)",
                _ => "a date and time (YYYY-MM-DDTHH:MM:SSZ)",
            },
            clip(text, Clip::chars(80))
        ));
    }
    Ok(())
}

fn check_bounds(name: &str, field: &Value, value: &Value) -> Result<(), String> {
    let Some(n) = value.as_f64() else {
        return Ok(());
    };
    if let Some(min) = field.get("minimum").and_then(Value::as_f64)
        && n < min
    {
        return Err(format!("`{name}` must be at least {min}; {value} is less"));
    }
    if let Some(max) = field.get("maximum").and_then(Value::as_f64)
        && n > max
    {
        return Err(format!("`{name}` must be at most {max}; {value} is more"));
    }
    Ok(())
}

fn check_items(name: &str, field: &Value, items: &[Value]) -> Result<(), String> {
    let count = items.len() as u64;
    if let Some(min) = field.get("minItems").and_then(Value::as_u64)
        && count < min
    {
        return Err(format!(
            "`{name}` needs at least {min} choices; the answer has {count}"
        ));
    }
    if let Some(max) = field.get("maxItems").and_then(Value::as_u64)
        && count > max
    {
        return Err(format!(
            "`{name}` takes at most {max} choices; the answer has {count}"
        ));
    }
    let allowed = field.get("items").map(constants).unwrap_or_default();
    if let Some(bad) = items
        .iter()
        .find(|item| !allowed.is_empty() && !allowed.contains(item))
    {
        return Err(format!(
            "each of `{name}` must be one of {}; {} is not",
            listed(&allowed),
            clip(&bad.to_string(), Clip::chars(80))
        ));
    }
    Ok(())
}

fn is_email(text: &str) -> bool {
    let Some((local, domain)) = text.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn is_uri(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        && !rest.is_empty()
        && !text.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// `YYYY-MM-DD` with a month 01–12 and a day 01–31.
fn is_date(text: &str) -> bool {
    let b = text.as_bytes();
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    if b.len() != 10
        || b[4] != b'-'
        || b[7] != b'-'
        || !digits(0..4)
        || !digits(5..7)
        || !digits(8..10)
    {
        return false;
    }
    let month = (b[5] - b'0') * 10 + (b[6] - b'0');
    let day = (b[8] - b'0') * 10 + (b[9] - b'0');
    (1..=12).contains(&month) && (1..=31).contains(&day)
}

/// A date, `T` (or `t`, or a space), `HH:MM:SS`, then anything (fractions,
/// a zone); RFC 3339 asks for the zone, people often leave it out.
fn is_date_time(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 19 || !text.is_char_boundary(10) || !is_date(&text[..10]) {
        return false;
    }
    let digits = |r: std::ops::Range<usize>| b[r].iter().all(u8::is_ascii_digit);
    matches!(b[10], b'T' | b't' | b' ')
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> Value {
        json!({"type": "object", "required": ["name", "age"], "properties": {
            "name": {"type": "string", "minLength": 2, "maxLength": 5},
            "age": {"type": "integer", "minimum": 0, "maximum": 150},
            "ratio": {"type": "number", "maximum": 1},
            "ok": {"type": "boolean"},
            "color": {"type": "string", "enum": ["red", "green"]},
            "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l"}]},
            "tags": {"type": "array", "minItems": 1, "maxItems": 2,
                     "items": {"type": "string", "enum": ["a", "b", "c"]}},
            "mail": {"type": "string", "format": "email"},
            "site": {"type": "string", "format": "uri"},
            "day": {"type": "string", "format": "date"},
            "at": {"type": "string", "format": "date-time"}
        }})
    }

    fn check(content: &Value) -> Result<(), String> {
        check_form(&form(), content.as_object().expect("object"))
    }

    #[test]
    fn a_fitting_answer_passes() {
        check(
            &json!({"name": "Ada", "age": 36, "ratio": 0.5, "ok": true, "color": "red",
            "size": "l", "tags": ["a", "c"], "mail": "ada@example.org",
            "site": "https://example.org", "day": "1815-12-10", "at": "1815-12-10T08:00:00Z"}),
        )
        .expect("fits");
        check(&json!({"name": "Al", "age": 2.0})).expect("a whole float is an integer");
        // A field the form does not list is allowed unless the form closes it.
        check(&json!({"name": "Ada", "age": 3, "extra": 1})).expect("open form");
    }

    #[test]
    fn a_closed_form_refuses_a_field_it_does_not_have() {
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}},
            "additionalProperties": false});
        let content = json!({"name": "Ada", "extra": 1});
        let err = check_form(&schema, content.as_object().expect("object")).unwrap_err();
        assert!(err.contains("no field `extra`"), "{err}");
    }

    #[test]
    fn each_rule_refuses_with_the_field_named() {
        let cases = [
            (json!({"age": 3}), "`name` is required"),
            (
                json!({"name": 7, "age": 3}),
                "`name` must be a string; 7 is not",
            ),
            (json!({"name": "A", "age": 3}), "at least 2 characters"),
            (
                json!({"name": "Adalovelace", "age": 3}),
                "at most 5 characters",
            ),
            (
                json!({"name": "Ada", "age": 3.5}),
                "`age` must be a whole number",
            ),
            (
                json!({"name": "Ada", "age": 200}),
                "`age` must be at most 150",
            ),
            (
                json!({"name": "Ada", "age": -1}),
                "`age` must be at least 0",
            ),
            (
                json!({"name": "Ada", "age": 3, "ratio": "x"}),
                "`ratio` must be a number",
            ),
            (
                json!({"name": "Ada", "age": 3, "ok": "yes"}),
                "`ok` must be true or false",
            ),
            (
                json!({"name": "Ada", "age": 3, "color": "blue"}),
                r#"one of "red", "green""#,
            ),
            (
                json!({"name": "Ada", "age": 3, "size": "m"}),
                r#"one of "s", "l""#,
            ),
            (
                json!({"name": "Ada", "age": 3, "tags": []}),
                "at least 1 choices",
            ),
            (
                json!({"name": "Ada", "age": 3, "tags": ["a", "b", "c"]}),
                "at most 2 choices",
            ),
            (
                json!({"name": "Ada", "age": 3, "tags": ["z"]}),
                "each of `tags`",
            ),
            (
                json!({"name": "Ada", "age": 3, "mail": "ada"}),
                "an email address",
            ),
            (
                json!({"name": "Ada", "age": 3, "site": "example.org"}),
                "a URI",
            ),
            (
                json!({"name": "Ada", "age": 3, "day": "1815-13-10"}),
                "a date (YYYY-MM-DD)",
            ),
            (
                json!({"name": "Ada", "age": 3, "at": "1815-12-10"}),
                "a date and time",
            ),
        ];
        for (content, expected) in cases {
            let err = check(&content).expect_err(&content.to_string());
            assert!(err.contains(expected), "{content}: {err}");
        }
    }
}
