//! `x-mcp-header` parameters (SEP-2243): a tool parameter whose value the
//! client also sends as an HTTP header, `Mcp-Param-<Name>`, so that proxies
//! and gateways can route on it without reading the body.
//!
//! A parameter is declared with the `x-mcp-header` keyword on its property
//! in the tool's input schema (the MCP rendering keeps schemas as declared):
//! [`with_mcp_header`] adds it to a [`ToolSpec`] with its checks. Over
//! Streamable HTTP, rmcp's transport validates every `tools/call` against
//! the called tool's schema, which the server hands it
//! (`ServerHandler::get_tool`): a header whose value (literal, or
//! `=?base64?<Base64>?=` for values a header cannot carry) differs from the
//! argument, a header missing while the argument is present, or one present
//! for an absent argument, gets HTTP 400 with JSON-RPC error `-32020`
//! (`HeaderMismatch`). Stdio has no headers: the keyword changes nothing there.

use rmcp::model::Tool as McpTool;
use serde_json::Value;
use tool_core::ToolSpec;
use tool_core::format::{Format, render_tool};

use crate::error::{Error, ErrorKind};

/// The schema keyword.
pub(crate) const KEYWORD: &str = "x-mcp-header";

/// Longest header name suffix accepted by [`with_mcp_header`] (64 bytes).
const MAX_HEADER_NAME_BYTES: usize = 64;

/// `spec` with its top-level parameter `param` mirrored in the HTTP header
/// `Mcp-Param-<header>` (SEP-2243).
///
/// # Errors
/// [`ErrorKind::Config`] when `param` is not a property of the schema, its
/// type is not a single primitive (`string`, `number`, `integer` or
/// `boolean`), `header` is empty, longer than 64 bytes or not an HTTP token
/// (letters, digits and ``!#$%&'*+-.^_`|~``), or another parameter already
/// uses the same header name (compared case-insensitively).
pub fn with_mcp_header(mut spec: ToolSpec, param: &str, header: &str) -> Result<ToolSpec, Error> {
    let bad = |why: String| {
        Error::new(
            ErrorKind::Config,
            format!("tool `{}`: x-mcp-header for `{param}`: {why}", spec.name),
        )
    };
    let is_tchar = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if header.is_empty() || header.len() > MAX_HEADER_NAME_BYTES || !header.chars().all(is_tchar) {
        return Err(bad(format!(
            "the header name must be 1 to {MAX_HEADER_NAME_BYTES} HTTP token characters"
        )));
    }
    let Some(properties) = spec.parameters.get("properties").and_then(Value::as_object) else {
        return Err(bad("the schema has no properties".to_owned()));
    };
    let Some(property) = properties.get(param) else {
        return Err(bad("no such parameter".to_owned()));
    };
    let primitive = matches!(
        property.get("type").and_then(Value::as_str),
        Some("string" | "number" | "integer" | "boolean")
    );
    if !primitive {
        return Err(bad(
            "only a parameter of one primitive type (string, number, integer, boolean) can be a header"
                .to_owned(),
        ));
    }
    let taken = properties.iter().any(|(name, p)| {
        name != param
            && p.get(KEYWORD)
                .and_then(Value::as_str)
                .is_some_and(|h| h.eq_ignore_ascii_case(header))
    });
    if taken {
        return Err(bad(format!("another parameter already uses `{header}`")));
    }
    if let Some(property) = spec
        .parameters
        .get_mut("properties")
        .and_then(|p| p.get_mut(param))
        .and_then(Value::as_object_mut)
    {
        property.insert(KEYWORD.to_owned(), Value::from(header));
    }
    Ok(spec)
}

/// `true` when `schema` has an `x-mcp-header` keyword anywhere.
fn declares_headers(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.contains_key(KEYWORD) || map.values().any(declares_headers),
        Value::Array(items) => items.iter().any(declares_headers),
        _ => false,
    }
}

/// The MCP definition of `spec` for rmcp's header validation, when its
/// schema declares `x-mcp-header` parameters; `None` otherwise (nothing to
/// validate beyond `Mcp-Method` / `Mcp-Name`).
pub(crate) fn tool_for_validation(spec: &ToolSpec) -> Option<McpTool> {
    if !declares_headers(&spec.parameters) {
        return None;
    }
    let rendered = render_tool(spec, Format::Mcp).ok()?;
    serde_json::from_value(rendered).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec() -> ToolSpec {
        ToolSpec::new(
            "t",
            "T.",
            json!({"type": "object", "properties": {
                "region": {"type": "string"},
                "tags": {"type": "array", "items": {"type": "string"}},
                "zone": {"type": "string", "x-mcp-header": "Region"}
            }}),
        )
    }

    #[test]
    fn declared_on_primitive_parameters_only() {
        let spec = with_mcp_header(spec(), "zone", "Zone").unwrap();
        assert_eq!(spec.parameters["properties"]["zone"][KEYWORD], "Zone");
        assert!(tool_for_validation(&spec).is_some());
        let err = |p: &str, h: &str| with_mcp_header(self::spec(), p, h).unwrap_err().to_string();
        assert!(err("tags", "Tags").contains("one primitive type"));
        assert!(err("nope", "Nope").contains("no such parameter"));
        assert!(err("region", "Re gion").contains("HTTP token"));
        assert!(err("region", "").contains("HTTP token"));
        assert!(err("region", "region").contains("already uses"));
        let plain = ToolSpec::new("p", "P.", json!({"type": "object", "properties": {}}));
        assert!(tool_for_validation(&plain).is_none());
    }
}
