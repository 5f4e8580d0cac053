//! What a tool learns about the MCP request it serves, through its context:
//! the client's declared capabilities and the log level it asked for, with
//! the two things a tool does with them — log at the request's level
//! ([`log`]) and refuse a call the client cannot support
//! ([`missing_client_capability`], `-32021` on the wire).
//!
//! The server puts an [`McpRequest`] in every `tools/call` context; a tool
//! run outside MCP finds none, and then [`log`] sends nothing and
//! [`client_capabilities`] is `None`.
//!
//! ```no_run
//! use tool_core::{ToolContext, ToolResult, tool};
//! use tool_mcp::client_request::{self, LogLevel};
//! use tool_mcp::rmcp::model::ClientCapabilities;
//!
//! /// Summarise with the client's model.
//! #[tool]
//! async fn summarise(context: &ToolContext) -> ToolResult {
//!     let can_sample = client_request::client_capabilities(context)
//!         .is_some_and(|c| c.sampling.is_some());
//!     if !can_sample {
//!         return client_request::missing_client_capability(
//!             &ClientCapabilities::builder().enable_sampling().build(),
//!         );
//!     }
//!     client_request::log(context, LogLevel::Info, "summarising".into()).await;
//!     ToolResult::ok("…")
//! }
//! ```

#![allow(
    deprecated,
    reason = "logging is deprecated from 2026-07-28 (SEP-2577); its per-request level is still part of it"
)]

use rmcp::model::{ClientCapabilities, LoggingMessageNotificationParam};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, Peer, RoleServer};
use serde_json::Value;
use tool_core::meta::MetaKey;
use tool_core::{ErrorKind, ToolContext, ToolResult};

/// MCP's log levels (RFC 5424 severities), lowest first.
pub use rmcp::model::LoggingLevel as LogLevel;

/// The result metadata key of [`missing_client_capability`]: the
/// `ClientCapabilities` object the call needs (`mcp_required_client_capabilities`).
pub const REQUIRED_CLIENT_CAPABILITIES: &str = "mcp_required_client_capabilities";

/// The MCP request a tool call serves, as the server saw it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpRequest {
    /// The capabilities the client declared: per request in 2026-07-28
    /// (`_meta["io.modelcontextprotocol/clientCapabilities"]`), at
    /// `initialize` in 2025-11-25.
    pub client_capabilities: Option<ClientCapabilities>,
    /// The log level the request asked for
    /// (`_meta["io.modelcontextprotocol/logLevel"]`, 2026-07-28).
    pub log_level: Option<LogLevel>,
    /// `true` in the stateless era (2026-07-28), where a request that asks
    /// for no log level gets no log messages.
    pub stateless: bool,
}

impl McpRequest {
    /// What `request` says.
    pub(crate) fn of(request: &RequestContext<RoleServer>, stateless: bool) -> Self {
        Self {
            client_capabilities: request.client_capabilities(),
            log_level: request.meta.log_level(),
            stateless,
        }
    }
}

/// The capabilities the MCP client of the call in progress declared; `None`
/// outside MCP or when it declared none.
pub fn client_capabilities(ctx: &ToolContext) -> Option<ClientCapabilities> {
    ctx.state::<McpRequest>()
        .and_then(|r| r.client_capabilities.clone())
}

/// Severity rank of `level` (debug 0 … emergency 7).
fn rank(level: LogLevel) -> u8 {
    match level {
        LogLevel::Debug => 0,
        LogLevel::Info => 1,
        LogLevel::Notice => 2,
        LogLevel::Warning => 3,
        LogLevel::Error => 4,
        LogLevel::Critical => 5,
        LogLevel::Alert => 6,
        LogLevel::Emergency => 7,
    }
}

/// Whether a message of `level` may go to the client of `request`: in
/// 2026-07-28 only when the request asked for a level and `level` is at
/// least that; in 2025-11-25 always (the session's `logging/setLevel` is
/// accepted and not applied).
pub fn allows(request: &McpRequest, level: LogLevel) -> bool {
    match (request.stateless, request.log_level) {
        (_, Some(min)) => rank(level) >= rank(min),
        (true, None) => false,
        (false, None) => true,
    }
}

/// Sends `notifications/message` with `data` at `level` to the MCP client
/// of the call in progress when [`allows`] says so; returns whether it was
/// sent. Nothing is sent outside MCP or once the client is gone.
pub async fn log(ctx: &ToolContext, level: LogLevel, data: Value) -> bool {
    let Some(request) = ctx.state::<McpRequest>() else {
        return false;
    };
    if !allows(&request, level) {
        return false;
    }
    let Some(peer) = ctx.state::<Peer<RoleServer>>() else {
        return false;
    };
    peer.notify_logging_message(LoggingMessageNotificationParam::new(level, data))
        .await
        .is_ok()
}

/// The result of a call that needs client capabilities the client did not
/// declare: an error naming them, which the MCP server answers as the
/// protocol error `-32021` (Missing Required Client Capability, HTTP 400)
/// with `data.requiredCapabilities = required`. Outside MCP it is a plain
/// `missing_context` error.
pub fn missing_client_capability(required: &ClientCapabilities) -> ToolResult {
    let value = serde_json::to_value(required).unwrap_or(Value::Null);
    let names: Vec<String> = value
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    ToolResult::error(
        ErrorKind::MissingContext,
        format!(
            "This tool needs the client capabilities {} and the client did not declare them; \
             call it from a client that supports them.",
            names.join(", ")
        ),
    )
    .with_metadata(MetaKey::custom(REQUIRED_CLIENT_CAPABILITIES), value)
}

/// The protocol error a tool's result stands for: `-32021` for
/// [`missing_client_capability`]; `None` for any other result.
pub(crate) fn protocol_error_of(result: &ToolResult) -> Option<ErrorData> {
    let required = result.metadata.get(REQUIRED_CLIENT_CAPABILITIES)?;
    if result.error.as_ref()?.kind != ErrorKind::MissingContext {
        return None;
    }
    let required: ClientCapabilities = serde_json::from_value(required.clone()).ok()?;
    Some(ErrorData::missing_required_client_capability(required))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(stateless: bool, log_level: Option<LogLevel>) -> McpRequest {
        McpRequest {
            client_capabilities: None,
            log_level,
            stateless,
        }
    }

    #[test]
    fn the_stateless_era_logs_only_at_or_above_the_requested_level() {
        assert!(!allows(&request(true, None), LogLevel::Emergency));
        assert!(allows(
            &request(true, Some(LogLevel::Info)),
            LogLevel::Warning
        ));
        assert!(allows(&request(true, Some(LogLevel::Info)), LogLevel::Info));
        assert!(!allows(
            &request(true, Some(LogLevel::Warning)),
            LogLevel::Info
        ));
        assert!(allows(&request(false, None), LogLevel::Debug));
        assert!(!allows(
            &request(false, Some(LogLevel::Error)),
            LogLevel::Info
        ));
    }

    #[test]
    fn a_missing_capability_result_becomes_32021_with_the_capabilities() {
        let result =
            missing_client_capability(&ClientCapabilities::builder().enable_sampling().build());
        assert!(result.is_error());
        assert!(
            result.error.as_ref().unwrap().message.contains("sampling"),
            "{:?}",
            result.error
        );
        let error = protocol_error_of(&result).unwrap();
        assert_eq!(
            error.code,
            rmcp::model::ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY
        );
        assert!(error.data.unwrap()["requiredCapabilities"]["sampling"].is_object());
        assert!(protocol_error_of(&ToolResult::failed("x")).is_none());
    }
}
