//! `.mcp.json`: the `{"mcpServers": {name: {command, args, env} | {url}}}` file
//! that Claude Desktop, Claude Code, Cursor and others read.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::client::McpToolSource;
use crate::error::{Error, ErrorKind};

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    mcp_servers: BTreeMap<String, Entry>,
}

#[derive(Deserialize)]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
}

/// Reads an `.mcp.json` file: one [`McpToolSource`] per server, named after
/// its key, in key order. An entry has either `command` (with optional
/// `args` and `env`) or `url`; other keys (`type`, `disabled`, ...) are ignored.
///
/// # Errors
/// [`ErrorKind::Config`] naming the file and the entry at fault.
pub fn load_mcp_config(path: &Path) -> Result<Vec<McpToolSource>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    parse_mcp_config(&text).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("{}: {}", path.display(), e.message()),
        )
    })
}

/// [`load_mcp_config`] on the file's text.
///
/// ```
/// let sources = tool_mcp::parse_mcp_config(r#"{"mcpServers": {
///     "files": {"command": "tool", "args": ["serve"]},
///     "remote": {"url": "http://127.0.0.1:8080/mcp"}
/// }}"#).unwrap();
/// assert_eq!(sources.len(), 2);
/// ```
///
/// # Errors
/// [`ErrorKind::Config`] when the text is not such a file.
pub fn parse_mcp_config(text: &str) -> Result<Vec<McpToolSource>, Error> {
    let file: File = serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("not an MCP config (`{{\"mcpServers\": {{...}}}}`): {e}"),
        )
    })?;
    file.mcp_servers
        .into_iter()
        .map(|(name, entry)| {
            let source = match (entry.command, entry.url) {
                (Some(command), None) => McpToolSource::stdio(command, entry.args, entry.env),
                (None, Some(url)) => McpToolSource::http(url),
                _ => {
                    return Err(Error::new(
                        ErrorKind::Config,
                        format!("server `{name}` needs exactly one of `command` and `url`"),
                    ));
                }
            };
            Ok(source.named(name))
        })
        .collect()
}
