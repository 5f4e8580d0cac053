//! The invoke stage: the tool's handler, with panic containment, the timeout
//! and cancellation.

use std::any::Any;
use std::panic::AssertUnwindSafe;
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use crate::governance::secrets;
use crate::registry::ToolRegistry;
use crate::result::{ErrorKind, ToolResult};
use crate::tool::Tool;
use crate::tool::context::ToolContext;

/// Runs the handler with panic containment, timeout and cancellation.
pub(super) async fn call_tool(
    registry: &ToolRegistry,
    tool: &Tool,
    args: Map<String, Value>,
    ctx: &ToolContext,
) -> ToolResult {
    let name = tool.name();
    let timeout = timeout_for(registry, tool, ctx);
    // The handler knows when it will be stopped (`ToolContext::deadline`),
    // so that it can tidy up first (an MCP call cancels on its server).
    let own = ctx
        .clone()
        .with_deadline(tokio::time::Instant::now() + timeout);
    let start = std::panic::catch_unwind(AssertUnwindSafe(|| tool.start(args, own)));
    let future = match start {
        Ok(f) => AssertUnwindSafe(f).catch_unwind(),
        Err(payload) => return panicked(name, payload.as_ref(), ctx),
    };
    let cancel = ctx.cancellation_token();
    tokio::select! {
        biased;
        outcome = tokio::time::timeout(timeout, future) => match outcome {
            Ok(Ok(result)) => result,
            Ok(Err(payload)) => panicked(name, payload.as_ref(), ctx),
            Err(_) => timed_out(name, timeout),
        },
        () = cancel.cancelled() => cancelled(name),
    }
}

/// The `cancelled` result of a call to `tool` stopped by the context's
/// cancellation token.
pub(crate) fn cancelled(tool: &str) -> ToolResult {
    ToolResult::error(
        ErrorKind::Cancelled,
        format!("The call to `{tool}` was cancelled before it finished."),
    )
}

/// A call's timeout: the tool's, else the context's, else the registry's.
pub(crate) fn timeout_for(registry: &ToolRegistry, tool: &Tool, ctx: &ToolContext) -> Duration {
    tool.spec()
        .timeout
        .or_else(|| ctx.timeout())
        .unwrap_or(registry.default_timeout)
}

/// A contained panic: the model reads that the tool crashed; the payload
/// (masked) goes to `tracing` only.
fn panicked(tool: &str, payload: &(dyn Any + Send), ctx: &ToolContext) -> ToolResult {
    let detail = secrets::panic_detail(payload, ctx.secrets());
    tracing::error!(target: "tool_core", tool, panic = %detail, "tool panicked; the panic was contained");
    ToolResult::error(
        ErrorKind::Panicked,
        format!(
            "The tool `{tool}` crashed with an internal error and returned no result. Do not retry the same call; try another approach."
        ),
    )
}

/// The `timeout` result of a call to `tool` stopped after `timeout`.
pub(crate) fn timed_out(tool: &str, timeout: Duration) -> ToolResult {
    ToolResult::error(
        ErrorKind::Timeout,
        format!(
            "The call to `{tool}` did not finish within {} and was stopped. Try a smaller request.",
            humantime::format_duration(timeout)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handler's context says when the executor stops the call: the
    /// context's timeout, else the registry's default, and the earlier of
    /// that and a deadline the context had.
    #[tokio::test]
    async fn the_handler_knows_its_deadline() {
        use crate::{Tool, ToolSpec};
        let spec = ToolSpec::new(
            "deadline",
            "Milliseconds left until the call's deadline.",
            serde_json::json!({"type": "object", "properties": {}}),
        );
        let tool = Tool::new(
            spec,
            |_args: Map<String, Value>, ctx: ToolContext| async move {
                ToolResult::ok(ctx.deadline().map_or_else(
                    || "none".to_owned(),
                    |d| {
                        d.saturating_duration_since(tokio::time::Instant::now())
                            .as_millis()
                            .to_string()
                    },
                ))
            },
        )
        .unwrap();
        let mut registry = ToolRegistry::new().with_default_timeout(Duration::from_secs(7));
        registry.register(tool).unwrap();
        let left = |ctx: ToolContext| {
            let registry = registry.clone();
            async move {
                let out = registry.execute("deadline", Map::new(), &ctx).await.output;
                out.parse::<u64>().unwrap_or_else(|_| panic!("{out}"))
            }
        };
        let near =
            |ms: u64, expected: u64| assert!((expected - 500..=expected).contains(&ms), "{ms}");
        near(left(ToolContext::new()).await, 7_000);
        near(
            left(ToolContext::new().with_timeout(Duration::from_secs(3))).await,
            3_000,
        );
        let earlier =
            ToolContext::new().with_deadline(tokio::time::Instant::now() + Duration::from_secs(1));
        near(left(earlier).await, 1_000);
    }

    #[test]
    fn timeouts_read_as_durations() {
        let r = timed_out("t", Duration::from_millis(1500));
        assert_eq!(
            r.error.unwrap().message,
            "The call to `t` did not finish within 1s 500ms and was stopped. Try a smaller request."
        );
        let r = timed_out("t", Duration::from_secs(120));
        assert!(r.error.unwrap().message.contains("within 2m and"));
    }
}
