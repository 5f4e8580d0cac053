//! OpenAI: Chat Completions (`{"type": "function", "function": {…}}`) and
//! Responses (flat function tools), each with and without strict mode.
//!
//! Sources: OpenAI function-calling guide; OpenAI Structured Outputs guide,
//! section "Supported schemas" (strict mode subset and limits).

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::attachments::{Admitted, Limits, Media};
use super::call::{ToolCall, arguments_of, field_str, list_at};
use super::error::{CallParseError, Rule, Violation};
use super::lower::{self, Step};
use super::provider::{Looser, Provider};
use super::reply::{NO_OUTPUT, Reply};
use super::validate;
use super::walk::{child_path, local_def_name, root_defs, walk};
use super::{Format, Pipeline};
use crate::tool::spec::ToolSpec;

const GUIDE: &str = "OpenAI Structured Outputs guide, \"Supported schemas\"";

pub(crate) static NAME: Rule = Rule {
    id: "openai.name",
    text: "function names match ^[a-zA-Z0-9_-]{1,64}$",
    source: "OpenAI API reference, function `name`: \"a-z, A-Z, 0-9, or contain underscores and dashes, with a maximum length of 64\"",
};
static ROOT: Rule = Rule {
    id: "openai.root",
    text: "the parameters schema is one object (`type: object`); the root is not an anyOf",
    source: "OpenAI Structured Outputs guide, \"Supported schemas\": root objects must not be anyOf and must be an object",
};
static REFS: Rule = Rule {
    id: "openai.refs",
    text: "every $ref points to a definition of the same schema (#/$defs/<name>)",
    source: "OpenAI Structured Outputs guide, \"Supported schemas\": definitions and recursive schemas are supported through local $ref",
};
static STRICT_CLOSED: Rule = Rule {
    id: "openai.strict.additional-properties",
    text: "in strict mode every object sets additionalProperties: false (so free-form maps are not expressible)",
    source: GUIDE,
};
static STRICT_REQUIRED: Rule = Rule {
    id: "openai.strict.required",
    text: "in strict mode every property is required; an optional field is emulated with a union with null",
    source: GUIDE,
};
static STRICT_KEYWORDS: Rule = Rule {
    id: "openai.strict.keywords",
    text: "strict mode supports type, properties, required, additionalProperties, items, anyOf, enum, const, $ref/$defs, description, title, pattern, format, multipleOf, (exclusive)minimum/maximum, minItems and maxItems; not, if/then/else, allOf, prefixItems and the like are not supported",
    source: GUIDE,
};
static STRICT_FORMATS: Rule = Rule {
    id: "openai.strict.formats",
    text: "in strict mode string formats are date-time, time, date, duration, email, hostname, ipv4, ipv6 and uuid",
    source: GUIDE,
};
static STRICT_REF_ALONE: Rule = Rule {
    id: "openai.strict.ref-alone",
    text: "in strict mode a $ref has no sibling keywords",
    source: "OpenAI API schema validation, error \"$ref cannot have keywords {…}\" (strict function parameters)",
};
static STRICT_LIMITS: Rule = Rule {
    id: "openai.strict.limits",
    text: "at most 5000 object properties and 10 levels of nesting; at most 1000 enum values; at most 120,000 characters of property names, definition names, enum and const values; an enum of more than 250 strings at most 15,000 characters",
    source: GUIDE,
};

/// The keywords strict mode accepts (see [`STRICT_KEYWORDS`]).
const STRICT_ALLOWED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "multipleOf",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "minItems",
    "maxItems",
];

/// Keywords strict mode cannot take and that cannot be dropped without widening the schema.
const STRICT_REFUSED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
    "allOf",
    "prefixItems",
    "dependentSchemas",
];

fn strict_format(_ty: Option<&str>, format: &str) -> bool {
    matches!(
        format,
        "date-time"
            | "time"
            | "date"
            | "duration"
            | "email"
            | "hostname"
            | "ipv4"
            | "ipv6"
            | "uuid"
    )
}

/// Checks the function name ([`NAME`]).
pub(crate) fn check_name(name: &str) -> Result<(), Violation> {
    if crate::tool::spec::is_valid_tool_name(name) {
        Ok(())
    } else {
        Err(Violation::new(
            "name",
            &NAME,
            format!("`{name}` is not a valid function name"),
        ))
    }
}

/// `merge_root_union` under this provider's root rule ([`ROOT`]), in both pipelines.
const MERGE_ROOT_UNION: Step = Step {
    name: "merge_root_union",
    run: |s, _| lower::merge_root_union(s, &ROOT),
};

pub(crate) static PLAIN: Pipeline = Pipeline {
    check_name,
    steps: &[lower::DROP_ROOT_META, MERGE_ROOT_UNION],
    validate: validate_plain,
};

pub(crate) static STRICT: Pipeline = Pipeline {
    check_name,
    steps: &[
        lower::DROP_ROOT_META,
        MERGE_ROOT_UNION,
        lower::FOLD_ALL_OF,
        lower::ONE_OF_TO_ANY_OF,
        Step {
            name: "refuse_unsupported",
            run: |s, _| lower::refuse_keywords(s, STRICT_REFUSED, &STRICT_KEYWORDS),
        },
        Step {
            name: "close_objects",
            run: |s, _| lower::close_objects(s, &STRICT_CLOSED),
        },
        lower::REQUIRE_ALL_PROPERTIES,
        lower::DEFAULT_INTO_DESCRIPTION,
        Step {
            name: "keep_supported_keywords",
            run: |s, _| lower::keep_keywords(s, STRICT_ALLOWED),
        },
        Step {
            name: "keep_supported_formats",
            run: |s, _| lower::filter_formats(s, strict_format),
        },
        lower::ISOLATE_REFS,
    ],
    validate: validate_strict,
};

/// Validates a non-strict parameters schema: one root object, resolvable references.
pub(crate) fn validate_plain(schema: &Value) -> Result<(), Violation> {
    validate::root_is_object(schema, &ROOT)?;
    validate::refs_resolvable(schema, &REFS)
}

/// Validates a strict parameters schema against every strict-mode rule.
pub(crate) fn validate_strict(schema: &Value) -> Result<(), Violation> {
    validate_plain(schema)?;
    validate::only_keywords(schema, STRICT_ALLOWED, &STRICT_KEYWORDS)?;
    validate::objects_closed(schema, &STRICT_CLOSED)?;
    validate::all_required(schema, &STRICT_REQUIRED)?;
    validate::refs_alone(schema, &STRICT_REF_ALONE)?;
    validate::formats_supported(schema, strict_format, &STRICT_FORMATS)?;
    check_limits(schema)
}

/// The size limits of [`STRICT_LIMITS`].
fn check_limits(schema: &Value) -> Result<(), Violation> {
    let mut properties = 0usize;
    let mut enum_values = 0usize;
    let mut chars = 0usize;
    let mut big_enum: Option<(String, usize)> = None;
    if let Some(defs) = root_defs(schema) {
        chars += defs.keys().map(|k| k.chars().count()).sum::<usize>();
    }
    walk(schema, &mut |node, path, _| {
        if let Some(Value::Object(props)) = node.get("properties") {
            properties += props.len();
            chars += props.keys().map(|k| k.chars().count()).sum::<usize>();
        }
        if let Some(Value::Array(values)) = node.get("enum") {
            enum_values += values.len();
            let len: usize = values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum();
            chars += len;
            if values.len() > 250 && len > 15_000 && big_enum.is_none() {
                big_enum = Some((child_path(path, "enum"), len));
            }
        }
        if let Some(Value::String(c)) = node.get("const") {
            chars += c.chars().count();
        }
    });
    let depth = nesting_depth(schema);
    let fail = |path: &str, message: String| Err(Violation::new(path, &STRICT_LIMITS, message));
    if properties > 5000 {
        return fail(
            "",
            format!("{properties} object properties in total (limit 5000)"),
        );
    }
    if depth > 10 {
        return fail("", format!("{depth} levels of object nesting (limit 10)"));
    }
    if enum_values > 1000 {
        return fail(
            "",
            format!("{enum_values} enum values in total (limit 1000)"),
        );
    }
    if chars > 120_000 {
        return fail(
            "",
            format!("{chars} characters of names and enum/const values (limit 120,000)"),
        );
    }
    if let Some((path, len)) = big_enum {
        return fail(
            &path,
            format!("an enum of more than 250 values has {len} characters (limit 15,000)"),
        );
    }
    Ok(())
}

/// Levels of nested objects, following `$ref`s (a recursive definition counts once).
fn nesting_depth(schema: &Value) -> usize {
    fn depth(
        v: &Value,
        defs: &Map<String, Value>,
        stack: &mut Vec<String>,
        memo: &mut BTreeMap<String, usize>,
    ) -> usize {
        let Value::Object(node) = v else { return 0 };
        if let Some(name) = node
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(local_def_name)
        {
            if stack.contains(&name) {
                return 0;
            }
            if let Some(d) = memo.get(&name) {
                return *d;
            }
            let Some(def) = defs.get(&name) else { return 0 };
            stack.push(name.clone());
            let d = depth(def, defs, stack, memo);
            stack.pop();
            memo.insert(name, d);
            return d;
        }
        let mut deepest = 0;
        super::walk::for_each_child(node, |slot, sub| {
            if !matches!(slot, super::walk::Slot::Named("$defs" | "definitions", _)) {
                deepest = deepest.max(depth(sub, defs, stack, memo));
            }
        });
        let own = usize::from(super::walk::is_object_schema(node));
        own + deepest
    }
    let empty = Map::new();
    let defs = root_defs(schema).unwrap_or(&empty);
    depth(schema, defs, &mut Vec::new(), &mut BTreeMap::new())
}

/// `{"type": "function", "function": {name, description, parameters, strict}}`.
pub(crate) fn chat_tool(spec: &ToolSpec, parameters: &Value, strict: bool) -> Value {
    json!({
        "type": "function",
        "function": {
            "name": spec.name,
            "description": spec.description,
            "parameters": parameters,
            "strict": strict,
        }
    })
}

/// `{"type": "function", name, description, parameters, strict}`. `strict`
/// is always written: the Responses API enforces strict mode when it is absent.
pub(crate) fn responses_tool(spec: &ToolSpec, parameters: &Value, strict: bool) -> Value {
    json!({
        "type": "function",
        "name": spec.name,
        "description": spec.description,
        "parameters": parameters,
        "strict": strict,
    })
}

/// Tool calls of a Chat Completions answer: a whole response (first
/// choice), an assistant message, or its `tool_calls` array. Each call is
/// `{"id", "type": "function", "function": {"name", "arguments": "<JSON text>"}}`.
pub(crate) fn parse_chat(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let format = Format::OpenAiChat { strict: false };
    let (list, base) = if payload.get("choices").is_some() {
        (
            payload.pointer("/choices/0/message/tool_calls"),
            "/choices/0/message/tool_calls".to_owned(),
        )
    } else if payload.is_array() {
        (Some(payload), String::new())
    } else if payload.get("function").is_some() {
        return parse_chat_call(payload, "", format).map(|c| vec![c]);
    } else if payload.is_object() {
        (payload.get("tool_calls"), "/tool_calls".to_owned())
    } else {
        return Err(CallParseError::new(
            format,
            "",
            "expected a chat completion, an assistant message or a `tool_calls` array",
        ));
    };
    let Some(items) = list_at(list, &base, format)? else {
        return Ok(Vec::new());
    };
    items
        .iter()
        .enumerate()
        .map(|(i, call)| parse_chat_call(call, &child_path(&base, &i.to_string()), format))
        .collect()
}

fn parse_chat_call(call: &Value, path: &str, format: Format) -> Result<ToolCall, CallParseError> {
    if let Some(kind) = call.get("type").and_then(Value::as_str) {
        if kind != "function" {
            return Err(CallParseError::new(
                format,
                &child_path(path, "type"),
                format!("unsupported tool call type `{kind}` (only `function` calls are handled)"),
            ));
        }
    }
    let id = field_str(call, "id", path, format)?;
    let function_path = child_path(path, "function");
    let function = call
        .get("function")
        .ok_or_else(|| CallParseError::new(format, &function_path, "missing `function`"))?;
    let name = field_str(function, "name", &function_path, format)?;
    let arguments = arguments_of(function.get("arguments"));
    Ok(ToolCall::new(id, name, arguments))
}

/// Function calls of a Responses answer: a whole response (its `output`
/// items), an item list, or one item. Only `function_call` items are read:
/// `{"type": "function_call", "call_id", "name", "arguments": "<JSON text>"}`;
/// the call id is `call_id` (the item's own `id` names the item, not the call).
pub(crate) fn parse_responses(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let format = Format::OpenAiResponses { strict: false };
    let (items, base): (Vec<&Value>, String) = match payload {
        Value::Array(items) => (items.iter().collect(), String::new()),
        Value::Object(o) if o.get("type").and_then(Value::as_str) == Some("function_call") => {
            (vec![payload], String::new())
        }
        Value::Object(o) => match list_at(o.get("output"), "/output", format)? {
            Some(items) => (items.iter().collect(), "/output".to_owned()),
            None => (Vec::new(), String::new()),
        },
        _ => {
            return Err(CallParseError::new(
                format,
                "",
                "expected a response, a list of output items or a `function_call` item",
            ));
        }
    };
    let single = items.len() == 1 && std::ptr::eq(items[0], payload);
    let mut calls = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        if item.get("type").and_then(Value::as_str) != Some("function_call") {
            continue;
        }
        let path = if single {
            String::new()
        } else {
            child_path(&base, &i.to_string())
        };
        let id = field_str(item, "call_id", &path, format)?;
        let name = field_str(item, "name", &path, format)?;
        calls.push(ToolCall::new(id, name, arguments_of(item.get("arguments"))));
    }
    Ok(calls)
}

/// What OpenAI takes in tool results: images (PNG, JPEG, WebP, non-animated
/// GIF) and PDF files, within the request limits.
pub(crate) static MEDIA_LIMITS: Limits = Limits {
    provider: "OpenAI",
    image_types: &["image/png", "image/jpeg", "image/webp", "image/gif"],
    file_types: &["application/pdf"],
    max_image: 50_000_000,
    max_file: 32_000_000,
    max_total: 50_000_000,
    source: "OpenAI docs, \"Images and vision\" › image input requirements: PNG, JPEG, WEBP, non-animated GIF, up to 50 MB total payload per request; \"File inputs\": PDFs as base64 `file_data`, up to 32 MB",
};

/// One call's messages: the `tool` message, then, when it has media, a
/// `user` message with them (see [`render_results`](super::render_results)
/// for a whole turn, whose media share one `user` message).
fn chat_result(call: &ToolCall, reply: &Reply<'_>, spent: &mut usize) -> Vec<Value> {
    let admitted = super::attachments::admit(reply, &MEDIA_LIMITS, spent);
    let mut messages = vec![chat_tool_message(call, reply, &admitted)];
    let parts = chat_media_parts(call, &admitted);
    if !parts.is_empty() {
        messages.push(json!({"role": "user", "content": parts}));
    }
    messages
}

/// The `tool` message of one call: text only (the Chat Completions API
/// takes no images in tool messages), with a note for every media item left out.
pub(crate) fn chat_tool_message(
    call: &ToolCall,
    reply: &Reply<'_>,
    admitted: &Admitted<'_>,
) -> Value {
    let text = admitted.text_after(&reply.text);
    json!({
        "role": "tool",
        "tool_call_id": call.id,
        "content": if text.is_empty() { NO_OUTPUT.to_owned() } else { text },
    })
}

/// The `user` message parts for one call's media: a text part naming the
/// tool and call id, then `image_url` parts (data URLs) and `file` parts
/// (`{"filename", "file_data": data URL}`; OpenAI API reference, Chat
/// Completions user content parts). Empty when there are none.
pub(crate) fn chat_media_parts(call: &ToolCall, admitted: &Admitted<'_>) -> Vec<Value> {
    if admitted.media.is_empty() {
        return Vec::new();
    }
    let images = admitted.media.iter().any(Media::is_image);
    let files = admitted.media.iter().any(|m| !m.is_image());
    let what = match (images, files) {
        (true, true) => "Images and files",
        (true, false) => "Images",
        _ => "Files",
    };
    let mut parts = vec![json!({
        "type": "text",
        "text": format!("{what} returned by the `{}` tool (call {}):", call.name, call.id),
    })];
    parts.extend(admitted.media.iter().map(|media| match media.file_name {
        None => json!({"type": "image_url", "image_url": {"url": media.data_url()}}),
        Some(name) => json!({
            "type": "file",
            "file": {"filename": name, "file_data": media.data_url()},
        }),
    }));
    parts
}

/// One Responses `function_call_output` item: the output text, or with
/// media a list of `input_text`, `input_image` (data URL) and `input_file`
/// (`filename`, `file_data` data URL) parts (OpenAI API reference,
/// Responses: function call output content).
pub(crate) fn responses_result(
    call: &ToolCall,
    reply: &Reply<'_>,
    admitted: &Admitted<'_>,
) -> Value {
    let text = admitted.text_after(&reply.text);
    let output = if admitted.media.is_empty() {
        Value::String(if text.is_empty() {
            NO_OUTPUT.to_owned()
        } else {
            text
        })
    } else {
        let mut parts = Vec::new();
        if !text.is_empty() {
            parts.push(json!({"type": "input_text", "text": text}));
        }
        parts.extend(admitted.media.iter().map(|media| match media.file_name {
            None => json!({"type": "input_image", "image_url": media.data_url()}),
            Some(name) => json!({
                "type": "input_file",
                "filename": name,
                "file_data": media.data_url(),
            }),
        }));
        Value::Array(parts)
    };
    json!({"type": "function_call_output", "call_id": call.id, "output": output})
}

/// OpenAI Chat Completions' table entry.
pub(crate) static CHAT: Provider = Provider {
    slug: "openai-chat",
    title: "OpenAI Chat Completions",
    parameters_pointer: "/function/parameters",
    plain: Some(&PLAIN),
    strict: Some(&STRICT),
    render_tool: |spec, parameters, strict| chat_tool(spec, &parameters, strict),
    looser: Looser::NonStrict,
    tool_list: Value::Array,
    parse_calls: parse_chat,
    render_result: chat_result,
    unrolled: None,
};

/// OpenAI Responses' table entry.
pub(crate) static RESPONSES: Provider = Provider {
    slug: "openai-responses",
    title: "OpenAI Responses",
    parameters_pointer: "/parameters",
    plain: Some(&PLAIN),
    strict: Some(&STRICT),
    render_tool: |spec, parameters, strict| responses_tool(spec, &parameters, strict),
    looser: Looser::NonStrict,
    tool_list: Value::Array,
    parse_calls: parse_responses,
    render_result: |call, reply, spent| {
        let admitted = super::attachments::admit(reply, &MEDIA_LIMITS, spent);
        vec![responses_result(call, reply, &admitted)]
    },
    unrolled: None,
};
