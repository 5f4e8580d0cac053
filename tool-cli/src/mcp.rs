//! `tool serve` and `--mcp-config`: the registry as an MCP server, and MCP
//! servers' tools next to the built-ins.

use std::io::Write;
use std::net::SocketAddr;
use std::path::Path;

use tool_core::ToolRegistry;
use tool_mcp::{LiveRegistry, McpServer};

use crate::commands::Failure;
use crate::session::Session;

/// Connects to every server of the `.mcp.json` file at `path` and imports
/// its tools (as `<server>__<tool>`) into a live copy of `registry`.
///
/// # Errors
/// A usage message naming the file or the server that failed, or the names
/// that collide.
pub(crate) async fn import(registry: &ToolRegistry, path: &Path) -> Result<LiveRegistry, String> {
    let live = LiveRegistry::new(registry.clone());
    for source in tool_mcp::load_mcp_config(path).map_err(|e| e.to_string())? {
        let connection = source.connect().await.map_err(|e| e.to_string())?;
        connection
            .import_into(&live)
            .await
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    Ok(live)
}

/// Serves `live` over stdio, or Streamable HTTP on `http`, until the client
/// goes away (stdio) or the process is interrupted (HTTP). Prints one line on
/// stderr saying what is served.
pub(crate) fn serve(
    live: LiveRegistry,
    session: &Session,
    runtime: &tokio::runtime::Runtime,
    http: Option<SocketAddr>,
    page_size: usize,
) -> Result<(), Failure> {
    let count = live.snapshot().len();
    let workspace = session.ctx.value_str("workspace").unwrap_or("?").to_owned();
    let server = McpServer::new(live)
        .with_context(session.ctx.clone())
        .with_page_size(page_size)
        .with_server_info("tool", env!("CARGO_PKG_VERSION"));
    let io_failure = |e: tool_mcp::Error| Failure::Io(std::io::Error::other(e.to_string()));
    match http {
        None => {
            banner(&format!("{count} tools over stdio, workspace {workspace}"));
            runtime.block_on(server.serve_stdio()).map_err(io_failure)
        }
        Some(addr) => runtime.block_on(async move {
            let stop = tokio_util::sync::CancellationToken::new();
            let (bound, task) = server
                .serve_http(addr, stop.clone())
                .await
                .map_err(io_failure)?;
            banner(&format!(
                "{count} tools at http://{bound}/mcp, workspace {workspace}"
            ));
            tokio::select! {
                _ = tokio::signal::ctrl_c() => stop.cancel(),
                _ = task => {}
            }
            Ok(())
        }),
    }
}

/// The one stderr line a person who starts the server sees.
fn banner(what: &str) {
    let _ = writeln!(
        std::io::stderr(),
        "tool serve: MCP server (protocol 2025-11-25 and 2026-07-28) with {what}"
    );
}
