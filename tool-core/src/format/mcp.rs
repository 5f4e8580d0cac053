//! Model Context Protocol: `tools/list` entries (`{name, title?,
//! description, inputSchema, annotations}`), `tools/call` requests and
//! `CallToolResult`s.
//!
//! Source: MCP specification 2025-11-25, "Server Features › Tools" (tool
//! names, `inputSchema`, annotations, `CallToolResult`, content types).

use serde_json::{Value, json};

use super::call::{ToolCall, arguments_of, field_str};
use super::error::{CallParseError, Rule, Violation};
use super::lower::{self, Ctx};
use super::provider::{Looser, Provider};
use super::reply::Reply;
use super::validate;
use super::{Format, Pipeline};
use crate::result::Attachment;
use crate::tool::spec::ToolSpec;

const TOOLS: &str = "MCP specification 2025-11-25, \"Server Features › Tools\"";

pub(crate) static NAME: Rule = Rule {
    id: "mcp.name",
    text: "tool names are 1 to 128 characters of A-Z, a-z, 0-9, underscore, hyphen and dot",
    source: "MCP specification 2025-11-25, \"Server Features › Tools › Tool names\"",
};
static ROOT: Rule = Rule {
    id: "mcp.root",
    text: "inputSchema is a JSON Schema object with `type: object`",
    source: TOOLS,
};
static REFS: Rule = Rule {
    id: "mcp.refs",
    text: "every $ref is local (#/$defs/<name>) and resolvable",
    source: TOOLS,
};

/// Checks the tool name ([`NAME`]).
pub(crate) fn check_name(name: &str) -> Result<(), Violation> {
    let ok = !name.is_empty()
        && name.len() <= 128
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    if ok {
        Ok(())
    } else {
        Err(Violation::new(
            "name",
            &NAME,
            format!("`{name}` is not a valid MCP tool name"),
        ))
    }
}

/// No rewriting: MCP schemas are JSON Schema 2020-12 and servers keep them
/// as declared (SEP-1613, MCP 2025-11-25 "Server Features › Tools": "MUST
/// be a valid JSON Schema object"; `$schema`, `$defs`, `$ref` and
/// `$anchor` included), so a client resolves `$ref` itself. The provider
/// formats that cannot take `$ref` (OpenAI, Anthropic, Gemini) inline in
/// their own pipelines.
pub(crate) static PIPELINE: Pipeline = Pipeline {
    check_name,
    steps: &[],
    validate: validate_schema,
};

/// Validates an `inputSchema`.
pub(crate) fn validate_schema(schema: &Value) -> Result<(), Violation> {
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(Violation::new(
            "/type",
            &ROOT,
            "the root must be `\"type\": \"object\"`",
        ));
    }
    validate::refs_resolvable(schema, &REFS)
}

/// A `tools/list` entry: name, `title` (the English display name, if any),
/// description, `inputSchema`, and the behaviour hints as `annotations`.
pub(crate) fn tool(spec: &ToolSpec, input_schema: &Value) -> Value {
    let title = spec.display.get("en").and_then(|d| d.name.clone());
    let mut annotations = json!({
        "readOnlyHint": spec.flags.read_only,
        "destructiveHint": spec.flags.destructive,
        "idempotentHint": spec.flags.idempotent,
        "openWorldHint": spec.flags.open_world,
    });
    let mut tool = json!({
        "name": spec.name,
        "description": spec.description,
        "inputSchema": input_schema,
    });
    if let Some(title) = title {
        annotations["title"] = Value::String(title.clone());
        tool["title"] = Value::String(title);
    }
    tool["annotations"] = annotations;
    tool
}

/// A `tools/call` JSON-RPC request (`{"jsonrpc", "id", "method": "tools/call",
/// "params": {"name", "arguments"}}`) or its `params`. The call id is the
/// JSON-RPC id; bare `params` get a generated one.
pub(crate) fn parse(payload: &Value) -> Result<Vec<ToolCall>, CallParseError> {
    let format = Format::Mcp;
    if let Some(method) = payload.get("method").and_then(Value::as_str) {
        if method != "tools/call" {
            return Err(CallParseError::new(
                format,
                "/method",
                format!("expected method `tools/call`, found `{method}`"),
            ));
        }
        let params = payload
            .get("params")
            .ok_or_else(|| CallParseError::new(format, "/params", "missing `params`"))?;
        let id = field_str(payload, "id", "", format)?;
        let name = field_str(params, "name", "/params", format)?;
        return Ok(vec![ToolCall::new(
            id,
            name,
            arguments_of(params.get("arguments")),
        )]);
    }
    let name = field_str(payload, "name", "", format)?;
    let arguments = payload
        .get("arguments")
        .cloned()
        .unwrap_or_else(|| json!({}));
    Ok(vec![ToolCall::with_generated_id(0, name, arguments)])
}

/// A `CallToolResult`: `content` (text, then `image` items, then the inline
/// attachments: `audio/*` as `audio` items, anything else as an embedded
/// `resource` with a `blob`; [`attachment_content`]), `isError`, and
/// `structuredContent` when the tool returned a JSON object. MCP sets no
/// size limit of its own, so nothing is left out; attachments by path only
/// stay with the host (a path on the server's machine means nothing to the
/// client; the tool's text names it).
pub(crate) fn call_tool_result(reply: &Reply<'_>) -> Value {
    let mut content = Vec::new();
    if !reply.text.is_empty() {
        content.push(json!({"type": "text", "text": reply.text}));
    }
    content.extend(
        reply.images.iter().map(
            |image| json!({"type": "image", "data": image.data, "mimeType": image.media_type}),
        ),
    );
    content.extend(reply.attachments.iter().filter_map(attachment_content));
    let mut result = json!({"content": content, "isError": reply.is_error});
    if let Some(structured) = reply.structured.filter(|v| v.is_object()) {
        result["structuredContent"] = structured.clone();
    }
    result
}

/// An inline attachment as MCP content (MCP specification 2025-11-25,
/// "Server Features › Tools › Tool result": audio content, embedded
/// resources): `audio/*` as `{"type": "audio", "data", "mimeType"}`,
/// anything else as `{"type": "resource", "resource": {"uri", "mimeType",
/// "blob"}}` at `attachment:///<name>` (or the name itself when it already
/// is a URI). `None` for an attachment by path only.
pub(crate) fn attachment_content(attachment: &Attachment) -> Option<Value> {
    let data = attachment.data.as_ref()?;
    if attachment
        .media_type
        .to_ascii_lowercase()
        .starts_with("audio/")
    {
        return Some(json!({"type": "audio", "data": data, "mimeType": attachment.media_type}));
    }
    let uri = if attachment.name.contains("://") {
        attachment.name.clone()
    } else {
        format!("attachment:///{}", attachment.name)
    };
    Some(json!({
        "type": "resource",
        "resource": {"uri": uri, "mimeType": attachment.media_type, "blob": data},
    }))
}

/// MCP's table entry.
pub(crate) static MCP: Provider = Provider {
    slug: "mcp",
    title: "MCP",
    parameters_pointer: "/inputSchema",
    plain: Some(&PIPELINE),
    strict: None,
    render_tool,
    looser: Looser::None,
    tool_list: Value::Array,
    parse_calls: parse,
    render_result: |_, reply, _| vec![call_tool_result(reply)],
    unrolled: None,
};

/// A `tools/list` entry. The output schema goes through the same lowering;
/// one that cannot be lowered is left out rather than failing the tool.
#[allow(
    clippy::needless_pass_by_value,
    reason = "the signature of `Provider::render_tool`, whose other renderers consume the schema"
)]
fn render_tool(spec: &ToolSpec, parameters: Value, _strict: bool) -> Value {
    let mut tool = tool(spec, &parameters);
    if let Some(output) = &spec.output_schema {
        let mut schema = output.clone();
        let ctx = Ctx {
            format: Format::Mcp,
        };
        if lower::run(PIPELINE.steps, &mut schema, &ctx).is_ok()
            && (PIPELINE.validate)(&schema).is_ok()
        {
            tool["outputSchema"] = schema;
        }
    }
    tool
}
