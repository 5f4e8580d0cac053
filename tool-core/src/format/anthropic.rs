//! Anthropic Messages API: tools as `{name, description, input_schema,
//! input_examples?, strict?}`, calls as `tool_use` blocks, results as
//! `tool_result` blocks.
//!
//! Sources: Anthropic docs "Define tools" (tool definition fields, name rule),
//! "Structured outputs" › "JSON Schema limitations" (strict tool use).

use serde_json::{Value, json};

use super::Format;
use super::Pipeline;
use super::attachments::{Admitted, Limits};
use super::call::{ToolCall, field_str, list_at};
use super::error::{CallParseError, Rule, Violation};
use super::lower::{self, Step};
use super::provider::{Looser, Provider};
use super::reply::{NO_OUTPUT, Reply};
use super::validate;
use super::walk::child_path;
use crate::args::ToolArgs;
use crate::tool::spec::ToolSpec;

const LIMITS: &str = "Anthropic docs, \"Structured outputs\" › \"JSON Schema limitations\"";

pub(crate) static NAME: Rule = Rule {
    id: "anthropic.name",
    text: "tool names match ^[a-zA-Z0-9_-]{1,64}$",
    source: "Anthropic docs, \"Define tools\": name \"Must match the regex ^[a-zA-Z0-9_-]{1,64}$\"",
};
static ROOT: Rule = Rule {
    id: "anthropic.root",
    text: "input_schema is one object (`type: object`); oneOf, allOf and anyOf are not allowed at its top level",
    source: "Anthropic docs, \"Define tools\" (input_schema is a JSON Schema object); API error \"input_schema does not support oneOf, allOf, or anyOf at the top level\"",
};
static REFS: Rule = Rule {
    id: "anthropic.refs",
    text: "every $ref is local (#/$defs/<name>) and resolvable",
    source: LIMITS,
};
static STRICT_CLOSED: Rule = Rule {
    id: "anthropic.strict.additional-properties",
    text: "with strict: true every object sets additionalProperties: false",
    source: LIMITS,
};
static STRICT_RECURSION: Rule = Rule {
    id: "anthropic.strict.recursion",
    text: "with strict: true recursive schemas are not supported",
    source: LIMITS,
};
static STRICT_KEYWORDS: Rule = Rule {
    id: "anthropic.strict.keywords",
    text: "with strict: true numerical constraints (minimum, maximum, multipleOf), string length constraints and array constraints other than minItems 0 or 1 are not supported; not and if/then/else cannot be expressed",
    source: LIMITS,
};
static STRICT_FORMATS: Rule = Rule {
    id: "anthropic.strict.formats",
    text: "with strict: true string formats are date-time, time, date, duration, email, hostname, uri, ipv4, ipv6 and uuid",
    source: LIMITS,
};

const STRICT_ALLOWED: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "allOf",
    "enum",
    "const",
    "$ref",
    "$defs",
    "description",
    "title",
    "pattern",
    "format",
    "minItems",
];

const STRICT_REFUSED: &[&str] = &[
    "not",
    "if",
    "then",
    "else",
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
            | "uri"
            | "ipv4"
            | "ipv6"
            | "uuid"
    )
}

/// Checks the tool name ([`NAME`]).
pub(crate) fn check_name(name: &str) -> Result<(), Violation> {
    super::openai::check_name(name).map_err(|v| Violation { rule: &NAME, ..v })
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
            name: "refuse_recursion",
            run: |s, _| lower::refuse_recursion(s, &STRICT_RECURSION),
        },
        Step {
            name: "refuse_unsupported",
            run: |s, _| lower::refuse_keywords(s, STRICT_REFUSED, &STRICT_KEYWORDS),
        },
        Step {
            name: "close_objects",
            run: |s, _| lower::close_objects(s, &STRICT_CLOSED),
        },
        lower::DEFAULT_INTO_DESCRIPTION,
        Step {
            name: "keep_supported_keywords",
            run: |s, _| lower::keep_keywords(s, STRICT_ALLOWED),
        },
        Step {
            name: "limit_min_items",
            run: |s, _| limit_min_items(s),
        },
        Step {
            name: "keep_supported_formats",
            run: |s, _| lower::filter_formats(s, strict_format),
        },
    ],
    validate: validate_strict,
};

/// Drops `minItems` other than 0 or 1 ([`STRICT_KEYWORDS`]); serde still
/// checks the length of fixed-size arrays at call time.
fn limit_min_items(schema: &mut Value) -> Result<(), Violation> {
    super::walk::walk_mut(schema, &mut |node, _| {
        if node
            .get("minItems")
            .is_some_and(|m| m.as_u64().is_none_or(|m| m > 1))
        {
            node.remove("minItems");
        }
        Ok(())
    })
}

/// Validates a plain `input_schema`.
pub(crate) fn validate_plain(schema: &Value) -> Result<(), Violation> {
    validate::root_is_object(schema, &ROOT)?;
    validate::refs_resolvable(schema, &REFS)
}

/// Validates a strict `input_schema`.
pub(crate) fn validate_strict(schema: &Value) -> Result<(), Violation> {
    validate_plain(schema)?;
    validate::only_keywords(schema, STRICT_ALLOWED, &STRICT_KEYWORDS)?;
    validate::objects_closed(schema, &STRICT_CLOSED)?;
    validate::formats_supported(schema, strict_format, &STRICT_FORMATS)?;
    validate::each_node(schema, |node, path| {
        node.get("minItems")
            .filter(|m| m.as_u64().is_none_or(|m| m > 1))
            .map(|_| {
                Violation::new(
                    &child_path(path, "minItems"),
                    &STRICT_KEYWORDS,
                    "minItems other than 0 or 1",
                )
            })
    })?;
    lower::refuse_recursion(schema, &STRICT_RECURSION)
}

/// `{name, description, input_schema, input_examples?, strict?}`;
/// `input_examples` only when not strict.
pub(crate) fn tool(spec: &ToolSpec, input_schema: &Value, strict: bool) -> Value {
    let mut tool = json!({
        "name": spec.name,
        "description": spec.description,
        "input_schema": input_schema,
    });
    // Strict renderings leave them out: a strict tool's input is already
    // bound to its schema by the provider's constrained decoding.
    if !spec.input_examples.is_empty() && !strict {
        tool["input_examples"] = Value::Array(spec.input_examples.clone());
    }
    if strict {
        tool["strict"] = Value::Bool(true);
    }
    tool
}

/// `tool_use` blocks of a message, its `content` array, or one block:
/// `{"type": "tool_use", "id", "name", "input": {…}}`.
pub(crate) fn parse(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let format = Format::Anthropic { strict: false };
    if payload.get("type").and_then(Value::as_str) == Some("tool_use") {
        return parse_block(payload, "", format).map(|c| vec![c]);
    }
    let (blocks, base) = match payload {
        Value::Array(items) => (Some(items), String::new()),
        Value::Object(o) => (
            list_at(o.get("content"), "/content", format)?,
            "/content".to_owned(),
        ),
        _ => {
            return Err(CallParseError::new(
                format,
                "",
                "expected a message, a content array or a `tool_use` block",
            ));
        }
    };
    blocks
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, b)| b.get("type").and_then(Value::as_str) == Some("tool_use"))
        .map(|(i, b)| parse_block(b, &child_path(&base, &i.to_string()), format))
        .collect()
}

fn parse_block(block: &Value, path: &str, format: Format) -> Result<ToolCall, CallParseError> {
    let id = field_str(block, "id", path, format)?;
    let name = field_str(block, "name", path, format)?;
    let input = block.get("input").cloned().unwrap_or_else(|| json!({}));
    Ok(ToolCall::new(id, name, ToolArgs::Value(input)))
}

/// What Anthropic takes in a `tool_result`: images (JPEG, PNG, GIF, WebP;
/// at most 5 MB of base64 each) and PDFs as `document` blocks, within the
/// 32 MB request limit.
pub(crate) static MEDIA_LIMITS: Limits = Limits {
    provider: "Anthropic",
    image_types: &["image/jpeg", "image/png", "image/gif", "image/webp"],
    file_types: &["application/pdf"],
    max_image: 5 * 1024 * 1024,
    max_file: 32_000_000,
    max_total: 32_000_000,
    source: "Anthropic docs, \"Vision\": JPEG, PNG, GIF, WebP, the API refuses an image over 5 MB (\"image exceeds 5 MB maximum\"); \"PDF support\": maximum request size 32 MB",
};

/// One `tool_result` content block (for the next `user` message): text,
/// `image` blocks (base64 source) and `document` blocks for PDFs (base64
/// source, the file name as `title`), `is_error` on failure (Anthropic docs,
/// "Tool use": `tool_result` content is a string or a list of text, image
/// and document blocks). Media over [`MEDIA_LIMITS`] become notes in the text.
pub(crate) fn result_block(call: &ToolCall, reply: &Reply<'_>, admitted: &Admitted<'_>) -> Value {
    let mut content = Vec::new();
    let text = admitted.text_after(&reply.text);
    if !text.is_empty() || admitted.media.is_empty() {
        let text = if text.is_empty() {
            NO_OUTPUT.to_owned()
        } else {
            text
        };
        content.push(json!({"type": "text", "text": text}));
    }
    content.extend(admitted.media.iter().map(|media| match media.file_name {
        None => json!({
            "type": "image",
            "source": {"type": "base64", "media_type": media.media_type, "data": media.data},
        }),
        Some(name) => json!({
            "type": "document",
            "source": {"type": "base64", "media_type": media.media_type, "data": media.data},
            "title": name,
        }),
    }));
    let mut block = json!({
        "type": "tool_result",
        "tool_use_id": call.id,
        "content": content,
    });
    if reply.is_error {
        block["is_error"] = Value::Bool(true);
    }
    block
}

/// Anthropic Messages' table entry.
pub(crate) static ANTHROPIC: Provider = Provider {
    slug: "anthropic",
    title: "Anthropic",
    parameters_pointer: "/input_schema",
    plain: Some(&PLAIN),
    strict: Some(&STRICT),
    render_tool: |spec, parameters, strict| tool(spec, &parameters, strict),
    looser: Looser::NonStrict,
    tool_list: Value::Array,
    parse_calls: parse,
    render_result: |call, reply, spent| {
        let admitted = super::attachments::admit(reply, &MEDIA_LIMITS, spent);
        vec![result_block(call, reply, &admitted)]
    },
    unrolled: None,
};
