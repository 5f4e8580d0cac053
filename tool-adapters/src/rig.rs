//! Our tools as [rig](https://docs.rs/rig-core/0.44.0) tools (feature `rig`).
//!
//! [`dynamic_tools`] turns every tool of a [`RegistryView`] (or a whole
//! [`ToolRegistry`](tool_core::ToolRegistry): `.into()`) into a rig
//! [`DynamicTool`], and [`tool_set`] puts them in a rig [`ToolSet`], which
//! a rig agent takes with `AgentBuilder::dynamic_tools` or which a host calls
//! with [`ToolSet::execute`].
//!
//! Each rig tool carries the tool's canonical schema (the `name`,
//! `description` and `parameters` of
//! [`ToolSpec::canonical_schema`](tool_core::ToolSpec::canonical_schema),
//! unchanged: rig's OpenAI-compatible clients send it as the function's
//! `parameters`) and, when rig calls it, runs [`RegistryView::execute`] with
//! the [`ToolContext`] the host supplied: lookup, argument repair, URL scope,
//! confirmation, secret substitution, the call, masking, the output budget
//! and statistics, exactly as a call through `execute`. The tool list is
//! taken when the tools are built; calls go through the view, so a tool
//! removed from a live registry since then answers `unknown_tool`.
//!
//! # Results
//!
//! A successful result becomes a text [`ToolOutput`] holding
//! [`ToolResult::model_text`] (the output, then any `Note:` lines, e.g. the
//! repairs made to the arguments). A failed result becomes a
//! [`ToolExecutionError`] whose model-visible text is the same
//! `model_text` (`Error: …` with our did-you-mean and hints), and whose kind
//! follows [`ErrorKind`]:
//!
//! | ours | rig's |
//! |---|---|
//! | `invalid_arguments` | `InvalidArgs` |
//! | `unknown_tool` | `NotFound` |
//! | `denied` | a refusal ([`ToolExecutionError::refused`], kind `PermissionDenied`) |
//! | `timeout` | `Timeout` |
//! | `cancelled` | `Cancelled` |
//! | `panicked`, `missing_context`, `failed`, any later kind | `Other` |
//!
//! The error's operator message (`ToolExecutionError::message`) is
//! `"<kind>: <message>"`, masked like everything else. Images and
//! attachments of a result are not passed to rig (its text output only);
//! the `Note:` lines still say what the tool returned.
//!
//! # Limits
//!
//! rig parses the argument text as JSON before a `DynamicTool` sees it (an
//! answer that is not JSON is rig's `InvalidArgs` "failed to parse tool
//! arguments", and never reaches our pipeline); every repair of parsed JSON
//! (double-encoded JSON, wrappers, `"12"` for an integer, unknown
//! parameters, …) is ours. Deferred loading of a view does not apply: every
//! tool the view admits is listed (rig has its own retrieval-backed tools).
//!
//! ```
//! use tool_core::{RegistryView, ToolContext, ToolRegistry};
//!
//! let view = RegistryView::new(ToolRegistry::new());
//! let set = tool_adapters::rig::tool_set(view, &ToolContext::new()).unwrap();
//! assert!(set.is_empty());
//! ```

use rig_agent::tool::ToolSet;
use rig_core::message::{EmptyToolName, ToolName};
use rig_core::tool::{DynamicTool, ToolErrorKind, ToolExecutionError, ToolOutput};
use serde_json::Value;
use tool_core::{ErrorKind, RegistryView, ToolContext, ToolResult};

/// Every tool of `tools` as a rig [`DynamicTool`], in name order, each
/// running our pipeline with a clone of `ctx` (cheap: an `Arc`) when rig
/// calls it.
///
/// `ctx` is the host's context for every call: its trace id (the
/// read-before-write ledger, spill files, `tool_search` loads), approver,
/// secret store, page URL, timeout and cancellation token apply to the
/// calls rig makes.
///
/// # Errors
///
/// [`EmptyToolName`] for a tool with an empty name, which a registry
/// never holds (names are checked when a tool is registered), so in
/// practice this never fails.
pub fn dynamic_tools(
    tools: impl Into<RegistryView>,
    ctx: &ToolContext,
) -> Result<Vec<DynamicTool>, EmptyToolName> {
    let view: RegistryView = tools.into();
    let registry = view.registry();
    registry
        .specs()
        .map(|spec| {
            let name = ToolName::new(spec.name.clone())?;
            let view = view.clone();
            let ctx = ctx.clone();
            let tool_name = spec.name.clone();
            Ok(DynamicTool::new(
                name,
                spec.description.clone(),
                spec.parameters.clone(),
                move |args: Value| {
                    let view = view.clone();
                    let ctx = ctx.clone();
                    let tool_name = tool_name.clone();
                    Box::pin(async move {
                        let result = view.execute(&tool_name, args, &ctx).await;
                        to_rig(&result)
                    })
                },
            ))
        })
        .collect()
}

/// A rig [`ToolSet`] of every tool of `tools` ([`dynamic_tools`]), in name
/// order, each always advertised.
///
/// # Errors
///
/// As [`dynamic_tools`] (never, for a registry's tools).
pub fn tool_set(
    tools: impl Into<RegistryView>,
    ctx: &ToolContext,
) -> Result<ToolSet, EmptyToolName> {
    Ok(ToolSet::from_dynamic_tools(dynamic_tools(tools, ctx)?))
}

/// Our [`ToolResult`] as what a rig tool callback returns: the model text
/// ([`ToolResult::model_text`]) as a text [`ToolOutput`] on success, else a
/// [`ToolExecutionError`] of the matching kind (table in the
/// [module docs](self)) whose model-visible text is that same model text.
///
/// # Errors
///
/// The `Err` is the failed result itself, converted; nothing else fails.
pub fn to_rig(result: &ToolResult) -> Result<ToolOutput, ToolExecutionError> {
    let Some(error) = &result.error else {
        return Ok(ToolOutput::text(result.model_text()));
    };
    let message = format!("{}: {}", error.kind, error.message);
    let rig_error = match error.kind {
        ErrorKind::Denied => ToolExecutionError::refused(message),
        kind => ToolExecutionError::new(rig_kind(kind), message),
    };
    Err(rig_error.with_model_feedback(result.model_text()))
}

/// rig's error kind for ours (the table in the module docs).
fn rig_kind(kind: ErrorKind) -> ToolErrorKind {
    match kind {
        ErrorKind::InvalidArguments => ToolErrorKind::InvalidArgs,
        ErrorKind::UnknownTool => ToolErrorKind::NotFound,
        ErrorKind::Denied => ToolErrorKind::PermissionDenied,
        ErrorKind::Timeout => ToolErrorKind::Timeout,
        ErrorKind::Cancelled => ToolErrorKind::Cancelled,
        _ => ToolErrorKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_map_per_the_table() {
        let denied = ToolResult::error(ErrorKind::Denied, "no approver");
        let Err(e) = to_rig(&denied) else {
            panic!("a denial is an error")
        };
        assert_eq!(e.kind(), ToolErrorKind::PermissionDenied);
        assert_eq!(e.message(), "denied: no approver");
        assert_eq!(
            e.model_output().as_text(),
            Some("Error: no approver"),
            "the model sees our text"
        );
        for (ours, theirs) in [
            (ErrorKind::InvalidArguments, ToolErrorKind::InvalidArgs),
            (ErrorKind::UnknownTool, ToolErrorKind::NotFound),
            (ErrorKind::Timeout, ToolErrorKind::Timeout),
            (ErrorKind::Cancelled, ToolErrorKind::Cancelled),
            (ErrorKind::Panicked, ToolErrorKind::Other),
            (ErrorKind::Failed, ToolErrorKind::Other),
            (ErrorKind::MissingContext, ToolErrorKind::Other),
        ] {
            let Err(e) = to_rig(&ToolResult::error(ours, "x")) else {
                panic!("{ours} is an error")
            };
            assert_eq!(e.kind(), theirs, "{ours}");
        }
        let ok = to_rig(&ToolResult::ok("fine").with_note("a note"));
        assert_eq!(
            ok.ok().and_then(|o| o.as_text().map(str::to_owned)),
            Some("fine\n\nNote: a note".to_owned())
        );
    }
}
