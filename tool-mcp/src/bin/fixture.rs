//! `tool-mcp-fixture`: an MCP server of `#[tool]` fixture tools, for the
//! integration tests, the conformance suite and the benchmark.
//!
//! `tool-mcp-fixture [--http ADDR] [--page-size N] [--extra N]`: stdio by
//! default; `--extra N` adds N filler tools (pagination tests).

use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;
use tool_core::{Image, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec, tool};
use tool_mcp::{LiveRegistry, McpServer};

/// Echo the text back.
///
/// # Arguments
/// * `text` - What to echo.
#[tool(read_only, idempotent)]
fn echo(text: String) -> String {
    text
}

/// Tests simple text content response.
#[tool(read_only)]
fn test_simple_text() -> String {
    "This is a simple text response for testing.".to_owned()
}

/// Tests image content response.
#[tool(read_only)]
fn test_image_content() -> ToolResult {
    // A 1x1 red PNG.
    const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
    ToolResult::ok("").with_image(Image::new("image/png", PNG))
}

/// Tests error response handling.
#[tool]
fn test_error_handling() -> Result<String, String> {
    Err("This tool intentionally returns an error for testing".to_owned())
}

/// Tests tool that reports progress notifications.
#[tool]
async fn test_tool_with_progress(context: &ToolContext) -> String {
    for step in [0.0, 50.0, 100.0] {
        context.report_progress(step, Some(100.0), Some("working"));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    "progress done".to_owned()
}

/// Sleep until cancelled or for the given milliseconds; reports whether it was cancelled.
///
/// # Arguments
/// * `millis` - How long to sleep.
#[tool]
async fn slow(context: &ToolContext, millis: u64) -> String {
    let token = context.cancellation_token().clone();
    tokio::select! {
        () = tokio::time::sleep(Duration::from_millis(millis)) => "slept".to_owned(),
        () = token.cancelled() => {
            eprintln!("fixture: slow was cancelled");
            "cancelled".to_owned()
        }
    }
}

/// Print to stdout (which must not reach the protocol stream), then answer.
#[tool]
fn noisy() -> String {
    println!("this line must not corrupt the protocol stream");
    "quiet on the wire".to_owned()
}

/// Add a tool named `added_<name>` to the served registry (a `list_changed` trigger).
///
/// # Arguments
/// * `name` - The new tool's name suffix.
#[tool]
fn add_tool(context: &ToolContext, name: String) -> Result<String, String> {
    let live = context
        .state::<LiveRegistry>()
        .ok_or_else(|| "no live registry".to_owned())?;
    let spec = ToolSpec::new(
        format!("added_{name}"),
        "An added tool.",
        json!({"type": "object"}),
    );
    let tool = Tool::new(
        spec,
        |_args: serde_json::Map<String, serde_json::Value>, _ctx| async { ToolResult::ok("added") },
    )
    .map_err(|e| e.to_string())?;
    live.update(|r| r.register(tool))
        .map_err(|e| e.to_string())?;
    Ok("added".to_owned())
}

/// Exit the server process at once (a server-death trigger).
#[tool]
fn die() -> String {
    std::process::exit(3)
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let mut http = None;
    let mut page_size = tool_mcp::DEFAULT_PAGE_SIZE;
    let mut extra = 0usize;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--http" => http = args.next().and_then(|a| a.parse().ok()),
            "--page-size" => {
                page_size = args
                    .next()
                    .and_then(|a| a.parse().ok())
                    .unwrap_or(page_size);
            }
            "--extra" => extra = args.next().and_then(|a| a.parse().ok()).unwrap_or(0),
            other => {
                eprintln!("tool-mcp-fixture: unknown argument {other}");
                return ExitCode::from(2);
            }
        }
    }
    let mut registry = ToolRegistry::global().clone();
    for i in 0..extra {
        let spec = ToolSpec::new(
            format!("filler_{i:03}"),
            "A filler tool.",
            json!({"type": "object"}),
        );
        if let Ok(tool) = Tool::new(
            spec,
            |_args: serde_json::Map<String, serde_json::Value>, _ctx| async {
                ToolResult::ok("filler")
            },
        ) {
            let _ = registry.register(tool);
        }
    }
    let live = LiveRegistry::new(registry);
    let server = McpServer::new(live.clone())
        .with_context(ToolContext::new().with_state(live))
        .with_page_size(page_size)
        .with_server_info("tool-mcp-fixture", env!("CARGO_PKG_VERSION"));
    let Ok(runtime) = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    else {
        return ExitCode::FAILURE;
    };
    let outcome = runtime.block_on(async move {
        match http {
            Some(addr) => {
                let stop = tokio_util::sync::CancellationToken::new();
                let (bound, task) = server.serve_http(addr, stop).await?;
                eprintln!("tool-mcp-fixture: listening on http://{bound}/mcp");
                let _ = task.await;
                Ok(())
            }
            None => server.serve_stdio().await,
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tool-mcp-fixture: {e}");
            ExitCode::FAILURE
        }
    }
}
