//! `.mcp.json`: the `{"mcpServers": {name: {command, args, env} | {url}}}` file
//! that Claude Desktop, Claude Code, Cursor and others read, and importing
//! every server it names with each server isolated from the others.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::auth::OAuth;
use crate::client::{McpConnection, McpToolSource, ProtocolEra};
use crate::error::{Error, ErrorKind};
use crate::lazy::{LazyServer, ToolListCache};
use crate::names::sanitize_server;
use rmcp::model::Tool as McpTool;
use tool_core::LiveRegistry;

/// Largest `"idleTimeout"` accepted: one week, in seconds.
const MAX_IDLE_SECS: f64 = 7.0 * 24.0 * 3600.0;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct File {
    mcp_servers: BTreeMap<String, Value>,
}

#[derive(Deserialize)]
struct Entry {
    command: Option<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    disabled: bool,
    /// Gemini CLI's names: the server's tools to import (all when absent).
    #[serde(default, rename = "includeTools")]
    include_tools: Option<Vec<String>>,
    /// Gemini CLI's names: the server's tools to leave out (wins over `includeTools`).
    #[serde(default, rename = "excludeTools")]
    exclude_tools: Vec<String>,
    /// The protocol era: `"auto"` (default), `"2025-11-25"` or `"2026-07-28"`.
    protocol: Option<String>,
    /// `url` servers: HTTP headers, values may hold `${VAR}`.
    #[serde(default)]
    headers: BTreeMap<String, String>,
    /// `url` servers: OAuth settings, `true` or an object (see [`OAuth::parse`]).
    oauth: Option<Value>,
    /// Seconds a lazily started server may sit idle before it is stopped
    /// (`0`: never); see [`McpToolSource::with_idle_timeout`].
    #[serde(default, rename = "idleTimeout")]
    idle_timeout: Option<f64>,
    /// `command` servers: `true`, `false` or a policy object (see
    /// [`McpToolSource::with_default_sandbox`]).
    sandbox: Option<Value>,
}

/// One server entry of an `.mcp.json` file, as read by
/// [`read_mcp_config`] / [`parse_mcp_config_entries`]. A bad entry is its
/// own [`Invalid`](Self::Invalid) value, so the other entries still count.
#[derive(Debug)]
#[non_exhaustive]
// One value per configured server, read once at start-up: the size of the
// `Enabled` variant costs nothing worth a `Box` in the public shape.
#[allow(clippy::large_enum_variant)]
pub enum McpServerEntry {
    /// A server to start or reach, already [`named`](McpToolSource::named) after its key.
    Enabled(McpToolSource),
    /// `"disabled": true`: not started at all.
    Disabled {
        /// The entry's key.
        name: String,
    },
    /// An entry that does not describe a server (neither or both of
    /// `command` and `url`, a value of the wrong type, not an object).
    Invalid {
        /// The entry's key.
        name: String,
        /// [`ErrorKind::Config`], naming the entry and what is wrong.
        error: Error,
    },
}

impl McpServerEntry {
    /// The entry's key in `mcpServers`.
    pub fn name(&self) -> &str {
        match self {
            Self::Enabled(source) => source.name().unwrap_or_default(),
            Self::Disabled { name } | Self::Invalid { name, .. } => name,
        }
    }
}

/// Reads an `.mcp.json` file: one [`McpToolSource`] per server, named after
/// its key, in key order. An entry has either `command` (with optional
/// `args` and `env`) or `url`; `"disabled": true` leaves it out (the server
/// is not started); `includeTools` / `excludeTools` (lists of the server's
/// tool names, `*` wildcards allowed; Gemini CLI's keys) choose which of its
/// tools are imported, exclusion winning; `"protocol"` chooses the era
/// ([`ProtocolEra`]: `"auto"`, the default, `"2025-11-25"` or `"2026-07-28"`);
/// `"headers"` (`url` entries) are sent with every request, each `${VAR}` in a
/// value read from this process's environment when connecting
/// ([`McpToolSource::with_header`]);
/// `"oauth"` (`url` entries) turns on OAuth 2.1 for the server: `true`, or
/// `{"client_id": ..., "client_secret": "${VAR}", "scopes": [...],
/// "client_metadata_url": ..., "client_name": ..., "grant":
/// "authorization_code" | "client_credentials" | "jwt_bearer" |
/// "enterprise_managed", "private_key_file": PATH, "platform_token_file":
/// PATH | "platform_token_env": VAR, "idp": {"token_endpoint", "client_id",
/// "client_secret", "id_token_file" | "id_token_env"}, "dpop": BOOL}`
/// ([`OAuth::parse`], [`McpToolSource::with_oauth`]; the host adds the token
/// cache and login): `private_key_file` signs `private_key_jwt` client
/// assertions and is refused unless only its owner may read it;
/// `platform_token_*` is the workload-identity assertion of `jwt_bearer`;
/// `idp` is the enterprise IdP of `enterprise_managed`; `dpop` forces DPoP
/// on or off (default: on when the authorization server advertises ES256);
/// `"idleTimeout"` (seconds, `0` for never; default 600) is how long a server
/// started on first use may sit idle before it is stopped
/// ([`McpToolSource::with_idle_timeout`], [`import_mcp_servers_lazily`](crate::import_mcp_servers_lazily));
/// `"sandbox"` (`command` entries) runs the server in the kernel sandbox of
/// `bash_command`: `true`, or an object `{"write": [PATH], "hide": [PATH],
/// "allowNet": [PATTERN], "workspace": PATH}` adding to the host's policy
/// (unknown keys and bad patterns are errors), or `false` to keep it out of
/// the CLI's `--mcp-sandbox` ([`McpToolSource::with_default_sandbox`]);
/// other keys (`type`, ...) are ignored.
///
/// Strict: one bad entry fails the whole file. [`read_mcp_config`] keeps
/// the good entries of a file with bad ones.
///
/// # Errors
/// [`ErrorKind::Config`] naming the file and the entry at fault.
pub fn load_mcp_config(path: &Path) -> Result<Vec<McpToolSource>, Error> {
    strict(read_mcp_config(path)?).map_err(|e| in_file(path, &e))
}

/// [`load_mcp_config`] on the file's text.
///
/// ```
/// let sources = tool_mcp::parse_mcp_config(r#"{"mcpServers": {
///     "files": {"command": "tool", "args": ["serve"]},
///     "remote": {"url": "http://127.0.0.1:8080/mcp"},
///     "off": {"command": "tool", "disabled": true}
/// }}"#).unwrap();
/// assert_eq!(sources.len(), 2);
/// ```
///
/// # Errors
/// [`ErrorKind::Config`] when the text is not such a file.
pub fn parse_mcp_config(text: &str) -> Result<Vec<McpToolSource>, Error> {
    strict(parse_mcp_config_entries(text)?)
}

fn strict(entries: Vec<McpServerEntry>) -> Result<Vec<McpToolSource>, Error> {
    let mut sources = Vec::new();
    for entry in entries {
        match entry {
            McpServerEntry::Enabled(source) => sources.push(source),
            McpServerEntry::Disabled { .. } => {}
            McpServerEntry::Invalid { error, .. } => return Err(error),
        }
    }
    Ok(sources)
}

fn in_file(path: &Path, e: &Error) -> Error {
    Error::new(
        ErrorKind::Config,
        format!("{}: {}", path.display(), e.message()),
    )
}

/// Reads an `.mcp.json` file entry by entry, in key order: every entry
/// becomes an [`McpServerEntry`], a bad one included (its error then names
/// the file and the entry).
///
/// # Errors
/// [`ErrorKind::Config`] when the file cannot be read or is not an MCP
/// config at all (not JSON, no `mcpServers` object).
pub fn read_mcp_config(path: &Path) -> Result<Vec<McpServerEntry>, Error> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("cannot read {}: {e}", path.display()),
        )
    })?;
    let entries = parse_mcp_config_entries(&text).map_err(|e| in_file(path, &e))?;
    Ok(entries
        .into_iter()
        .map(|entry| match entry {
            McpServerEntry::Invalid { name, error } => McpServerEntry::Invalid {
                error: in_file(path, &error),
                name,
            },
            other => other,
        })
        .collect())
}

/// [`read_mcp_config`] on the file's text.
///
/// ```
/// use tool_mcp::McpServerEntry;
/// let entries = tool_mcp::parse_mcp_config_entries(r#"{"mcpServers": {
///     "a": {"command": "tool", "args": ["serve"]},
///     "b": {"command": "tool", "disabled": true},
///     "c": {"args": ["no command"]}
/// }}"#).unwrap();
/// assert!(matches!(entries[0], McpServerEntry::Enabled(_)));
/// assert!(matches!(entries[1], McpServerEntry::Disabled { .. }));
/// assert!(matches!(entries[2], McpServerEntry::Invalid { .. }));
/// ```
///
/// # Errors
/// [`ErrorKind::Config`] when the text is not an MCP config at all.
pub fn parse_mcp_config_entries(text: &str) -> Result<Vec<McpServerEntry>, Error> {
    let file: File = serde_json::from_str(text).map_err(|e| {
        Error::new(
            ErrorKind::Config,
            format!("not an MCP config (`{{\"mcpServers\": {{...}}}}`): {e}"),
        )
    })?;
    Ok(file
        .mcp_servers
        .into_iter()
        .map(|(name, value)| parse_entry(name, value))
        .collect())
}

fn parse_entry(name: String, value: Value) -> McpServerEntry {
    let invalid = |name: String, why: String| McpServerEntry::Invalid {
        error: Error::new(ErrorKind::Config, format!("server `{name}`: {why}")),
        name,
    };
    // A disabled entry is not looked at further: a half-written one is fine.
    if value.get("disabled") == Some(&Value::Bool(true)) {
        return McpServerEntry::Disabled { name };
    }
    let entry: Entry = match serde_json::from_value(value) {
        Ok(entry) => entry,
        Err(e) => return invalid(name, e.to_string()),
    };
    if entry.disabled {
        return McpServerEntry::Disabled { name };
    }
    let source = match (entry.command, entry.url) {
        (Some(command), None) if entry.headers.is_empty() => {
            McpToolSource::stdio(command, entry.args, entry.env)
        }
        (None, Some(url)) => entry
            .headers
            .into_iter()
            .fold(McpToolSource::http(url), |source, (k, v)| {
                source.with_header(k, v)
            }),
        (Some(_), None) if !entry.headers.is_empty() => {
            return invalid(
                name,
                "`headers` apply to `url` servers; hand a `command` server a key through `env`"
                    .to_owned(),
            );
        }
        _ => {
            return invalid(name, "needs exactly one of `command` and `url`".to_owned());
        }
    };
    let mut source = source.named(name.clone());
    if let Some(value) = entry.sandbox {
        if source.is_http() {
            return invalid(
                name,
                "`sandbox` applies to servers this program starts (`command`), not to `url` \
                 servers"
                    .to_owned(),
            );
        }
        match crate::sandbox::parse_request(value) {
            Ok(request) => source = source.with_sandbox_request(request),
            Err(why) => return invalid(name, why),
        }
    }
    if let Some(value) = entry.oauth {
        if !source.is_http() {
            return invalid(
                name,
                "`oauth` applies to `url` servers, not to `command` servers".to_owned(),
            );
        }
        match OAuth::parse(&value) {
            Ok(oauth) => source = source.with_oauth(oauth),
            Err(why) => return invalid(name, why),
        }
    }
    if let Some(protocol) = entry.protocol {
        match protocol.parse::<ProtocolEra>() {
            Ok(era) => source = source.with_era(era),
            Err(e) => return invalid(name, format!("`protocol`: {e}")),
        }
    }
    if let Some(secs) = entry.idle_timeout {
        match Duration::try_from_secs_f64(secs) {
            Ok(idle) if secs <= MAX_IDLE_SECS => source = source.with_idle_timeout(idle),
            _ => {
                return invalid(
                    name,
                    format!(
                        "`idleTimeout`: {secs} is not a number of seconds from 0 to \
                         {MAX_IDLE_SECS}"
                    ),
                );
            }
        }
    }
    if let Some(include) = entry.include_tools {
        source = source.include_tools(include);
    }
    if !entry.exclude_tools.is_empty() {
        source = source.exclude_tools(entry.exclude_tools);
    }
    McpServerEntry::Enabled(source)
}

/// What [`import_mcp_servers`] did with one entry.
#[derive(Debug)]
#[non_exhaustive]
pub enum ImportOutcome {
    /// Connected; these local tool names were imported.
    Imported {
        /// The open connection (its tools hold it open too).
        connection: McpConnection,
        /// The local names of its tools.
        tools: Vec<String>,
    },
    /// Imported lazily ([`import_mcp_servers_lazily`](crate::import_mcp_servers_lazily)):
    /// these local tool names are registered; the server runs only when
    /// used (`server` tells whether it runs now).
    Lazy {
        /// The server's handle (its tools hold it too).
        server: LazyServer,
        /// The local names of its tools.
        tools: Vec<String>,
    },
    /// `"disabled": true`: not started.
    Disabled,
    /// Not imported: the entry is invalid, the server could not be started
    /// or reached, the handshake or `tools/list` failed, or its names are
    /// taken. The reason names the server.
    Unavailable(String),
}

/// One entry's [`ImportOutcome`].
#[derive(Debug)]
pub struct ImportReport {
    /// The entry's key.
    pub name: String,
    /// The `<server>` prefix its tools get (the key, sanitised).
    pub server: String,
    /// What happened.
    pub outcome: ImportOutcome,
}

/// Imports every enabled server of `entries` into `live`, each isolated
/// from the others: servers are started concurrently (each within its own
/// connect timeout) and imported in entry order; a server that fails is
/// recorded in `live` as unavailable ([`LiveRegistry::mark_unavailable`],
/// keyed by its `<server>` prefix) and the rest go on. A server that dies
/// later loses its tools and is recorded the same way
/// ([`McpConnection::import_into`]). Disabled entries are not started.
///
/// Returns one report per entry, in entry order. Never fails as a whole.
pub async fn import_mcp_servers(
    entries: Vec<McpServerEntry>,
    live: &LiveRegistry,
) -> Vec<ImportReport> {
    let mut pending = Vec::with_capacity(entries.len());
    for entry in entries {
        let name = entry.name().to_owned();
        let server = sanitize_server(&name);
        let step = match entry {
            McpServerEntry::Enabled(source) => Step::Connecting(tokio::spawn(source.connect())),
            McpServerEntry::Disabled { .. } => Step::Done(ImportOutcome::Disabled),
            McpServerEntry::Invalid { error, .. } => {
                Step::Done(ImportOutcome::Unavailable(error.to_string()))
            }
        };
        pending.push((name, server, step));
    }
    let mut reports = Vec::with_capacity(pending.len());
    for (name, server, step) in pending {
        let outcome = match step {
            Step::Done(outcome) => outcome,
            Step::Connecting(task) => match task.await {
                Ok(Ok(connection)) => match connection.import_into(live).await {
                    Ok(tools) => ImportOutcome::Imported { connection, tools },
                    Err(e) => {
                        connection.close();
                        ImportOutcome::Unavailable(format!("MCP server `{name}`: {e}"))
                    }
                },
                Ok(Err(e)) => ImportOutcome::Unavailable(e.to_string()),
                Err(e) => ImportOutcome::Unavailable(format!(
                    "MCP server `{name}`: connecting failed: {e}"
                )),
            },
        };
        if let ImportOutcome::Unavailable(reason) = &outcome {
            live.mark_unavailable(&server, reason);
        }
        reports.push(ImportReport {
            name,
            server,
            outcome,
        });
    }
    reports
}

enum Step {
    Connecting(tokio::task::JoinHandle<Result<McpConnection, Error>>),
    Done(ImportOutcome),
}

/// As [`import_mcp_servers`](crate::import_mcp_servers), lazily: an enabled
/// server whose tool list is fresh in `cache` (see [`ToolListCache`]) is not
/// started; its tools are registered from the cached list and the server
/// starts on the first call of one of them. A server without a fresh list
/// (or with no `cache`) is started now, concurrently with the others, its
/// list fetched and cached, and it stays running (it is stopped after its
/// idle time like any other). Either way the outcome is
/// [`ImportOutcome::Lazy`]; a server that cannot be started or listed now,
/// an invalid entry, or taken names give [`ImportOutcome::Unavailable`]
/// (recorded in `live`), disabled entries [`ImportOutcome::Disabled`].
///
/// A later start that fails makes that call's result an error
/// (`metadata["mcp_error"]` `connect`); the tools stay. A server that exits
/// is started again by the next call.
///
/// Returns one report per entry, in entry order. Never fails as a whole.
pub async fn import_mcp_servers_lazily(
    entries: Vec<McpServerEntry>,
    live: &LiveRegistry,
    cache: Option<&ToolListCache>,
) -> Vec<ImportReport> {
    enum Step {
        Cached(LazyServer, Vec<McpTool>),
        Listing(
            LazyServer,
            tokio::task::JoinHandle<Result<Vec<McpTool>, Error>>,
        ),
        Done(ImportOutcome),
    }
    let mut pending = Vec::with_capacity(entries.len());
    for entry in entries {
        let name = entry.name().to_owned();
        let server = sanitize_server(&name);
        let step = match entry {
            McpServerEntry::Enabled(source) => {
                let lazy = LazyServer::new(source, &name, live, cache);
                match lazy.cached_list() {
                    Some(list) => Step::Cached(lazy, list),
                    None => {
                        let task = tokio::spawn(lazy.clone().start_and_list());
                        Step::Listing(lazy, task)
                    }
                }
            }
            McpServerEntry::Disabled { .. } => Step::Done(ImportOutcome::Disabled),
            McpServerEntry::Invalid { error, .. } => {
                Step::Done(ImportOutcome::Unavailable(error.to_string()))
            }
        };
        pending.push((name, server, step));
    }
    let mut reports = Vec::with_capacity(pending.len());
    for (name, server, step) in pending {
        let listed = match step {
            Step::Done(outcome) => Err(outcome),
            Step::Cached(lazy, list) => Ok((lazy, list)),
            Step::Listing(lazy, task) => match task.await {
                Ok(Ok(list)) => Ok((lazy, list)),
                Ok(Err(e)) => {
                    lazy.stop();
                    Err(ImportOutcome::Unavailable(e.to_string()))
                }
                Err(e) => {
                    lazy.stop();
                    Err(ImportOutcome::Unavailable(format!(
                        "MCP server `{name}`: connecting failed: {e}"
                    )))
                }
            },
        };
        let outcome = match listed {
            Err(outcome) => outcome,
            Ok((lazy, list)) => match lazy.install(&list, true) {
                Ok(tools) => {
                    live.clear_unavailable(&server);
                    ImportOutcome::Lazy {
                        server: lazy,
                        tools,
                    }
                }
                Err(e) => {
                    lazy.stop();
                    ImportOutcome::Unavailable(format!("MCP server `{name}`: {e}"))
                }
            },
        };
        if let ImportOutcome::Unavailable(reason) = &outcome {
            live.mark_unavailable(&server, reason);
        }
        reports.push(ImportReport {
            name,
            server,
            outcome,
        });
    }
    reports
}
