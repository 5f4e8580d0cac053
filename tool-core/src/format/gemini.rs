//! Gemini API: `functionDeclarations` with an OpenAPI-subset `parameters`
//! schema ([`Format::Gemini`]) or a JSON Schema `parametersJsonSchema`
//! ([`Format::GeminiJsonSchema`]); calls as `functionCall` parts, results as
//! `functionResponse` parts.
//!
//! Sources: Gemini API reference, `FunctionDeclaration` and `Schema`
//! (field list and formats; the `google-genai` SDK's `types.Schema` mirrors
//! it); Vertex AI reference, `FunctionDeclaration` (name and parameter-name rules).

use serde_json::{Map, Value, json};

use super::attachments::{Admitted, Limits};
use super::call::{ToolCall, field_str, list_at};
use super::error::FallbackForm;
use super::error::{CallParseError, Rule, Violation};
use super::lower::{self, Ctx, Inline, InlineRules, Step};
use super::provider::{Looser, Provider};
use super::reply::Reply;
use super::validate;
use super::walk::{child_path, is_object_schema, required_of, walk_mut};
use super::{Format, Pipeline, Recursion};
use crate::tool::spec::ToolSpec;

const SCHEMA_REF: &str = "Gemini API reference, `Schema` (an OpenAPI 3.0 subset)";

pub(crate) static NAME: Rule = Rule {
    id: "gemini.name",
    text: "function names start with a letter or underscore and contain only a-z, A-Z, 0-9, underscores, dots, colons and dashes, at most 64 characters",
    source: "Gemini API / Vertex AI reference, `FunctionDeclaration.name` (the Gemini API allows 128; Vertex AI 64, the limit kept here)",
};
static PARAM_NAMES: Rule = Rule {
    id: "gemini.parameter-names",
    text: "parameter names start with a letter or underscore and contain only a-z, A-Z, 0-9 and underscores, at most 64 characters",
    source: "Vertex AI reference, `FunctionDeclaration.parameters`",
};
static ROOT: Rule = Rule {
    id: "gemini.root",
    text: "parameters is one OBJECT schema whose properties are the parameters",
    source: "Gemini API reference, `FunctionDeclaration.parameters` / `parametersJsonSchema`",
};
static REFS: Rule = Rule {
    id: "gemini.refs",
    text: "the OpenAPI-subset Schema has no $ref or $defs: every reference is written out in place",
    source: SCHEMA_REF,
};
static RECURSION: Rule = Rule {
    id: "gemini.recursion",
    text: "without references a recursive type cannot be written out (refused unless unrolling to a fixed depth is requested)",
    source: SCHEMA_REF,
};
static KEYWORDS: Rule = Rule {
    id: "gemini.keywords",
    text: "Schema fields are type, format, title, description, nullable, enum, items, minItems, maxItems, properties, required, minProperties, maxProperties, minLength, maxLength, pattern, example, anyOf, propertyOrdering, default, minimum, maximum; others (additionalProperties, $ref, oneOf, allOf, not, exclusiveMinimum, …) are rejected as unknown fields",
    source: "Gemini API reference, `Schema`; API error \"Invalid JSON payload received. Unknown name \\\"additionalProperties\\\"\"",
};
static TYPES: Rule = Rule {
    id: "gemini.types",
    text: "type is one of STRING, NUMBER, INTEGER, BOOLEAN, ARRAY, OBJECT (one per node; null is expressed with nullable: true)",
    source: "Gemini API reference, `Schema.type` / `Type` enum",
};
static OBJECTS: Rule = Rule {
    id: "gemini.objects",
    text: "an OBJECT schema lists at least one property, properties appear only on OBJECT, and required names are declared properties (free-form maps cannot be described)",
    source: "Gemini API errors \"properties: should be non-empty for OBJECT type\" and \"properties: only allowed for OBJECT type\"",
};
static ENUMS: Rule = Rule {
    id: "gemini.enums",
    text: "enum values are strings",
    source: "Gemini API reference, `Schema.enum` (values of a STRING with format enum)",
};
static FORMATS: Rule = Rule {
    id: "gemini.formats",
    text: "format is float or double for NUMBER, int32 or int64 for INTEGER, enum or date-time for STRING",
    source: "Gemini API reference, `Schema.format`",
};
static JSON_ROOT: Rule = Rule {
    id: "gemini.json-schema.root",
    text: "parametersJsonSchema describes an object whose properties are the parameters",
    source: "Gemini API reference, `FunctionDeclaration.parametersJsonSchema`",
};
static JSON_REFS: Rule = Rule {
    id: "gemini.json-schema.refs",
    text: "every $ref is local (#/$defs/<name>) and resolvable",
    source: "Gemini API reference, `FunctionDeclaration.parametersJsonSchema` (JSON Schema)",
};

/// The Schema fields the OpenAPI-subset `parameters` accepts ([`KEYWORDS`]).
const ALLOWED: &[&str] = &[
    "type",
    "format",
    "title",
    "description",
    "nullable",
    "enum",
    "items",
    "minItems",
    "maxItems",
    "properties",
    "required",
    "minProperties",
    "maxProperties",
    "minLength",
    "maxLength",
    "pattern",
    "example",
    "anyOf",
    "propertyOrdering",
    "default",
    "minimum",
    "maximum",
];

const REFUSED: &[&str] = &["allOf", "not", "if", "then", "else", "prefixItems"];

const TYPE_NAMES: &[&str] = &["STRING", "NUMBER", "INTEGER", "BOOLEAN", "ARRAY", "OBJECT"];

fn supported_format(ty: Option<&str>, format: &str) -> bool {
    let ty = ty.map(str::to_ascii_lowercase);
    matches!(
        (ty.as_deref(), format),
        (Some("number"), "float" | "double")
            | (Some("integer"), "int32" | "int64")
            | (Some("string"), "enum" | "date-time")
    )
}

/// Checks the function name ([`NAME`]).
pub(crate) fn check_name(name: &str) -> Result<(), Violation> {
    let bytes = name.as_bytes();
    let ok = bytes
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b':' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Violation::new(
            "name",
            &NAME,
            format!("`{name}` is not a valid Gemini function name"),
        ))
    }
}

fn inline(schema: &mut Value, ctx: &Ctx) -> Result<(), Violation> {
    let unroll = match ctx.format {
        Format::Gemini {
            recursion: Recursion::Unroll(n),
        } => n,
        _ => 0,
    };
    lower::inline_refs(
        schema,
        Inline::All { unroll },
        &InlineRules {
            resolvable: &REFS,
            recursion: &RECURSION,
        },
    )
}

/// Refuses objects that cannot be described without `additionalProperties`
/// (maps, free-form objects) below the root; drops `additionalProperties`
/// from objects that have properties.
fn refuse_maps(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, path| {
        if !is_object_schema(node) {
            return Ok(());
        }
        if node.contains_key("patternProperties") {
            return Err(Violation::new(
                path,
                &OBJECTS,
                "`patternProperties` (a map keyed by pattern) cannot be described; use Format::GeminiJsonSchema",
            ));
        }
        let has_props = node
            .get("properties")
            .and_then(Value::as_object)
            .is_some_and(|p| !p.is_empty());
        let open = !matches!(
            node.get("additionalProperties"),
            None | Some(Value::Bool(false))
        );
        if !has_props && !path.is_empty() {
            return Err(Violation::new(
                path,
                &OBJECTS,
                if open {
                    "a map (e.g. `HashMap<String, _>`) has no fixed properties, and Gemini's OBJECT needs them; take a `Vec` of key/value structs, or render with Format::GeminiJsonSchema"
                } else {
                    "an object without properties cannot be described as a Gemini OBJECT"
                },
            ));
        }
        node.remove("additionalProperties");
        Ok(())
    })
}

/// Refuses enums of non-strings ([`ENUMS`]).
fn refuse_non_string_enums(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, path| {
        if let Some(Value::Array(values)) = node.get("enum") {
            if let Some(v) = values.iter().find(|v| !v.is_string()) {
                return Err(Violation::new(
                    &child_path(path, "enum"),
                    &ENUMS,
                    format!(
                        "enum value {v} is not a string; Gemini enums hold strings only (use a string enum, e.g. a unit-variant Rust enum)"
                    ),
                ));
            }
            if !node.contains_key("type") {
                node.insert("type".to_owned(), json!("string"));
            }
        }
        Ok(())
    })
}

/// `string` → `STRING`, …: the `Type` enum's names.
fn uppercase_types(schema: &mut Value) -> Result<(), Violation> {
    walk_mut(schema, &mut |node, _| {
        if let Some(Value::String(t)) = node.get_mut("type") {
            *t = t.to_ascii_uppercase();
        }
        Ok(())
    })
}

pub(crate) static OPENAPI: Pipeline = Pipeline {
    check_name,
    steps: &[
        lower::DROP_ROOT_META,
        Step {
            name: "merge_root_union",
            run: |s, _| lower::merge_root_union(s, &ROOT),
        },
        Step {
            name: "inline_refs",
            run: inline,
        },
        lower::FOLD_ALL_OF,
        lower::ONE_OF_TO_ANY_OF,
        Step {
            name: "refuse_unsupported",
            run: |s, _| lower::refuse_keywords(s, REFUSED, &KEYWORDS),
        },
        lower::NULLABLE_KEYWORD,
        lower::CONST_TO_ENUM,
        Step {
            name: "refuse_maps",
            run: |s, _| refuse_maps(s),
        },
        Step {
            name: "refuse_non_string_enums",
            run: |s, _| refuse_non_string_enums(s),
        },
        Step {
            name: "keep_supported_keywords",
            run: |s, _| lower::keep_keywords(s, ALLOWED),
        },
        Step {
            name: "keep_supported_formats",
            run: |s, _| lower::filter_formats(s, supported_format),
        },
        Step {
            name: "uppercase_types",
            run: |s, _| uppercase_types(s),
        },
    ],
    validate: validate_openapi,
};

pub(crate) static JSON_SCHEMA: Pipeline = Pipeline {
    check_name,
    steps: &[
        lower::DROP_ROOT_META,
        Step {
            name: "merge_root_union",
            run: |s, _| lower::merge_root_union(s, &JSON_ROOT),
        },
    ],
    validate: validate_json_schema,
};

/// Validates an OpenAPI-subset `parameters` schema against every rule above.
pub(crate) fn validate_openapi(schema: &Value) -> Result<(), Violation> {
    let root = schema
        .as_object()
        .filter(|r| r.get("type").and_then(Value::as_str) == Some("OBJECT"))
        .ok_or_else(|| Violation::new("/type", &ROOT, "the root must be `\"type\": \"OBJECT\"`"))?;
    if let Some(Value::Object(props)) = root.get("properties") {
        if let Some(bad) = props.keys().find(|k| !valid_param_name(k)) {
            return Err(Violation::new(
                &child_path("/properties", bad),
                &PARAM_NAMES,
                format!("parameter name `{bad}` is not accepted by Gemini"),
            ));
        }
    }
    validate::only_keywords(schema, ALLOWED, &KEYWORDS)?;
    validate::formats_supported(schema, supported_format, &FORMATS)?;
    validate::each_node(schema, |node, path| {
        match node.get("type") {
            Some(Value::String(t)) if TYPE_NAMES.contains(&t.as_str()) => {}
            None if node.contains_key("anyOf") => {}
            other => {
                return Some(Violation::new(
                    &child_path(path, "type"),
                    &TYPES,
                    format!(
                        "type {} is not one of {}",
                        other.map_or_else(|| "(missing)".to_owned(), ToString::to_string),
                        TYPE_NAMES.join(", ")
                    ),
                ));
            }
        }
        let is_object = node.get("type").and_then(Value::as_str) == Some("OBJECT");
        let props = node.get("properties").and_then(Value::as_object);
        if props.is_some() && !is_object {
            return Some(Violation::new(
                &child_path(path, "properties"),
                &OBJECTS,
                "`properties` on a schema that is not an OBJECT",
            ));
        }
        if is_object && !path.is_empty() && props.is_none_or(Map::is_empty) {
            return Some(Violation::new(
                path,
                &OBJECTS,
                "an OBJECT without properties",
            ));
        }
        if let Some(missing) = required_of(node)
            .into_iter()
            .find(|r| props.is_none_or(|p| !p.contains_key(*r)))
        {
            return Some(Violation::new(
                &child_path(path, "required"),
                &OBJECTS,
                format!("required name `{missing}` is not a declared property"),
            ));
        }
        if let Some(v) = node
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.iter().find(|v| !v.is_string()))
        {
            return Some(Violation::new(
                &child_path(path, "enum"),
                &ENUMS,
                format!("enum value {v} is not a string"),
            ));
        }
        None
    })
}

fn valid_param_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    bytes
        .first()
        .is_some_and(|b| b.is_ascii_alphabetic() || *b == b'_')
        && bytes.len() <= 64
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// Validates a `parametersJsonSchema`.
pub(crate) fn validate_json_schema(schema: &Value) -> Result<(), Violation> {
    validate::root_is_object(schema, &JSON_ROOT)?;
    validate::refs_resolvable(schema, &JSON_REFS)
}

/// `{name, description, parameters?}`; `parameters` is left out for a tool
/// without parameters (the API rejects an OBJECT without properties).
pub(crate) fn declaration(spec: &ToolSpec, parameters: Value) -> Value {
    let mut decl = json!({"name": spec.name, "description": spec.description});
    let has_params = parameters
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|p| !p.is_empty());
    if has_params {
        decl["parameters"] = parameters;
    }
    decl
}

/// `{name, description, parametersJsonSchema}`.
pub(crate) fn json_schema_declaration(spec: &ToolSpec, parameters: &Value) -> Value {
    json!({"name": spec.name, "description": spec.description, "parametersJsonSchema": parameters})
}

/// `functionCall` parts of a `generateContent` response (first candidate),
/// a `Content`, its `parts`, or one part. A call without `id` gets a
/// generated one ([`ToolCall::with_generated_id`]).
pub(crate) fn parse(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let format = Format::GeminiJsonSchema;
    let (parts, base): (Vec<&Value>, String) = if payload.get("functionCall").is_some() {
        (vec![payload], String::new())
    } else if payload.get("candidates").is_some() {
        let base = "/candidates/0/content/parts";
        (
            list_at(payload.pointer(base), base, format)?
                .map(|p| p.iter().collect())
                .unwrap_or_default(),
            base.to_owned(),
        )
    } else if let Value::Array(items) = payload {
        (items.iter().collect(), String::new())
    } else if payload.is_object() {
        (
            list_at(payload.get("parts"), "/parts", format)?
                .map(|p| p.iter().collect())
                .unwrap_or_default(),
            "/parts".to_owned(),
        )
    } else {
        return Err(CallParseError::new(
            format,
            "",
            "expected a response, a Content, a parts array or a `functionCall` part",
        ));
    };
    let single = parts.len() == 1 && std::ptr::eq(parts[0], payload);
    let mut calls = Vec::new();
    for (i, part) in parts.into_iter().enumerate() {
        let Some(call) = part.get("functionCall") else {
            continue;
        };
        let path = if single {
            "/functionCall".to_owned()
        } else {
            child_path(&child_path(&base, &i.to_string()), "functionCall")
        };
        let name = field_str(call, "name", &path, format)?;
        let args = call.get("args").cloned().unwrap_or_else(|| json!({}));
        let index = calls.len();
        calls.push(match call.get("id").and_then(Value::as_str) {
            Some(id) => ToolCall::new(id, name, args),
            None => ToolCall::with_generated_id(index, name, args),
        });
    }
    Ok(calls)
}

/// One `functionResponse` part: `response` is `{"output": …}` on success
/// (structured output as JSON when the tool returned some) and
/// `{"error": …, "output"?: …}` on failure, the keys the API documents;
/// images and PDFs go in the response's own `parts` as `inlineData` with
/// their `mimeType` (media over [`MEDIA_LIMITS`] become notes). The call's `id`
/// is echoed only when Gemini sent one.
///
/// Notes ([`ToolResult::notes`](crate::ToolResult::notes)) end the text they
/// belong with: the error message on failure, else the output text; with
/// structured output they go in a `notes` string beside it.
pub(crate) fn response_part(call: &ToolCall, reply: &Reply<'_>, admitted: &Admitted<'_>) -> Value {
    let media_notes = (!admitted.notes.is_empty()).then(|| admitted.notes.join("\n"));
    let notes = match (&reply.notes, &media_notes) {
        (Some(a), Some(b)) => Some(format!("{a}\n{b}")),
        (a, b) => a.clone().or_else(|| b.clone()),
    };
    let after = |text: &str| match &notes {
        None => text.to_owned(),
        Some(notes) if text.is_empty() => notes.clone(),
        Some(notes) => format!("{text}\n\n{notes}"),
    };
    let response = match reply.error {
        Some(message) => {
            let mut r = json!({"error": after(message)});
            if !reply.output.is_empty() {
                r["output"] = Value::String(reply.output.clone());
            }
            r
        }
        None => match reply.structured {
            Some(value) => {
                let mut r = json!({"output": value});
                if let Some(notes) = &notes {
                    r["notes"] = Value::String(notes.clone());
                }
                r
            }
            None => json!({"output": after(&reply.output)}),
        },
    };
    let mut function_response = json!({"name": call.name, "response": response});
    if !call.generated_id {
        function_response["id"] = Value::String(call.id.clone());
    }
    if !admitted.media.is_empty() {
        function_response["parts"] = Value::Array(
            admitted
                .media
                .iter()
                .map(|media| {
                    json!({"inlineData": {"mimeType": media.media_type, "data": media.data}})
                })
                .collect(),
        );
    }
    json!({"functionResponse": function_response})
}

/// What Gemini takes in a `functionResponse`: images (PNG, JPEG, WebP) and
/// PDFs as `inlineData` parts, within the inline-data request limit.
pub(crate) static MEDIA_LIMITS: Limits = Limits {
    provider: "Gemini",
    image_types: &["image/png", "image/jpeg", "image/webp"],
    file_types: &["application/pdf"],
    max_image: 20_000_000,
    max_file: 20_000_000,
    max_total: 20_000_000,
    source: "Gemini API docs, \"Function calling\" › multimodal function responses: images (JPEG, PNG, WebP) and PDF documents as FunctionResponsePart inline data; \"Image understanding\" / \"File input methods\": inline data up to 20 MB per request",
};

/// Gemini's table entry (`parameters`, the OpenAPI subset).
pub(crate) static GEMINI: Provider = Provider {
    slug: "gemini",
    title: "Gemini",
    parameters_pointer: "/parameters",
    plain: Some(&OPENAPI),
    strict: None,
    render_tool: |spec, parameters, _| declaration(spec, parameters),
    looser: Looser::Format(Format::GeminiJsonSchema, FallbackForm::ParametersJsonSchema),
    tool_list,
    parse_calls: parse,
    render_result: |call, reply, spent| {
        let admitted = super::attachments::admit(reply, &MEDIA_LIMITS, spent);
        vec![response_part(call, reply, &admitted)]
    },
    unrolled: Some(|n| Format::Gemini {
        recursion: Recursion::Unroll(n),
    }),
};

/// Gemini's table entry with `parametersJsonSchema`.
pub(crate) static GEMINI_JSON_SCHEMA: Provider = Provider {
    slug: "gemini-json-schema",
    title: "Gemini (parametersJsonSchema)",
    parameters_pointer: "/parametersJsonSchema",
    plain: Some(&JSON_SCHEMA),
    strict: None,
    render_tool: |spec, parameters, _| json_schema_declaration(spec, &parameters),
    looser: Looser::None,
    tool_list,
    parse_calls: parse,
    render_result: |call, reply, spent| {
        let admitted = super::attachments::admit(reply, &MEDIA_LIMITS, spent);
        vec![response_part(call, reply, &admitted)]
    },
    unrolled: None,
};

/// The request's `tools` value: `[{"functionDeclarations": [...]}]`.
fn tool_list(declarations: Vec<Value>) -> Value {
    json!([{ "functionDeclarations": Value::Array(declarations) }])
}
