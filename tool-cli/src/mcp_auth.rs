//! `tool mcp login NAME` / `tool mcp logout NAME`: OAuth tokens of the `url`
//! servers of `--mcp-config`, cached in the private state folder
//! ([`tool_mcp::TokenCache::user`]), and the cache given to every import.

use std::io::Write;

use tool_mcp::{LoopbackLogin, McpServerEntry, McpToolSource, TokenCache};

use crate::cli::{CommonOptions as Common, McpAction};
use crate::failure::Failure;

/// `source` with the per-user token cache when it is a `url` server that
/// has an `"oauth"` entry or a cached token (`tool mcp login` was run);
/// other sources unchanged. No login: a run that needs a new authorization
/// fails naming `tool mcp login`.
pub(crate) fn with_token_cache(source: McpToolSource) -> McpToolSource {
    let (Some(url), Some(cache)) = (source.url(), TokenCache::user()) else {
        return source;
    };
    if source.oauth().is_none()
        && !TokenCache::key(url, &tool_mcp::OAuth::new()).is_ok_and(|key| cache.contains(&key))
    {
        return source;
    }
    let oauth = source
        .oauth()
        .cloned()
        .unwrap_or_default()
        .with_cache(cache);
    source.with_oauth(oauth)
}

/// Runs `tool mcp login|logout NAME`.
///
/// # Errors
/// [`Failure::Usage`] without `--mcp-config`, for an unknown, disabled,
/// invalid or stdio entry, or without a state folder; [`Failure::Io`] when
/// the login fails (the server or authorization server refused, nobody
/// opened the URL in time) or the cache file cannot be deleted.
pub(crate) async fn run(
    action: &McpAction,
    common: &Common,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let name = match action {
        McpAction::Login { name } | McpAction::Logout { name } => name,
    };
    let source = entry(common, name)?;
    let url = source
        .url()
        .ok_or_else(|| {
            Failure::Usage(format!(
                "`{name}` is a `command` server: OAuth is for `url` servers (hand a command \
                 server a key through its `env`)"
            ))
        })?
        .to_owned();
    let cache = TokenCache::user().ok_or_else(|| {
        Failure::Usage(
            "no state folder for the token cache: set HOME or XDG_STATE_HOME to an absolute path"
                .to_owned(),
        )
    })?;
    // The entry of this server's client (its id, grant, scopes and
    // credential): another entry for the same URL keeps its own.
    let settings = source.oauth().cloned().unwrap_or_default();
    let key =
        TokenCache::key(&url, &settings).map_err(|e| Failure::Usage(format!("`{name}`: {e}")))?;
    match action {
        McpAction::Logout { .. } => {
            let removed = cache
                .remove(&key)
                .map_err(|e| Failure::Io(std::io::Error::other(format!("the token cache: {e}"))))?;
            if removed {
                writeln!(
                    out,
                    "Logged out of `{name}` ({url}): its cached token is deleted."
                )?;
            } else {
                writeln!(out, "`{name}` ({url}) had no cached token.")?;
            }
            Ok(())
        }
        McpAction::Login { .. } => {
            // A new login: the old entry goes first.
            cache
                .remove(&key)
                .map_err(|e| Failure::Io(std::io::Error::other(format!("the token cache: {e}"))))?;
            let oauth = settings
                .with_cache(cache.clone())
                .with_login(LoopbackLogin::stderr());
            let conn = source
                .with_oauth(oauth)
                .connect()
                .await
                .map_err(|e| Failure::Io(std::io::Error::other(e.to_string())))?;
            let tools = conn.tools().await.map(|t| t.len());
            conn.close();
            let tools = tools.map_err(|e| Failure::Io(std::io::Error::other(e.to_string())))?;
            if cache.contains(&key) {
                writeln!(
                    out,
                    "Logged in to `{name}` ({url}): {tools} tools; the token is cached in {}.",
                    cache.dir().display()
                )?;
            } else {
                writeln!(
                    out,
                    "`{name}` ({url}) did not ask for authorization ({tools} tools); nothing cached."
                )?;
            }
            Ok(())
        }
    }
}

/// The enabled entry `name` of `--mcp-config`.
fn entry(common: &Common, name: &str) -> Result<McpToolSource, Failure> {
    let path = common.mcp_config.as_deref().ok_or_else(|| {
        Failure::Usage("`mcp login` / `mcp logout` need --mcp-config FILE".to_owned())
    })?;
    crate::small_file::read_config(path, "--mcp-config", "an MCP config (JSON)")
        .map_err(Failure::Usage)?;
    let entries = tool_mcp::read_mcp_config(path).map_err(|e| Failure::Usage(e.to_string()))?;
    let mut known = Vec::new();
    for entry in entries {
        if entry.name() != name {
            known.push(entry.name().to_owned());
            continue;
        }
        return match entry {
            McpServerEntry::Enabled(source) => Ok(source),
            McpServerEntry::Disabled { .. } => Err(Failure::Usage(format!(
                "`{name}` is disabled in {}",
                path.display()
            ))),
            McpServerEntry::Invalid { error, .. } => Err(Failure::Usage(error.to_string())),
            _ => Err(Failure::Usage(format!("`{name}`: not a usable entry"))),
        };
    }
    Err(Failure::Usage(format!(
        "no server `{}` in {} (servers: {})",
        name.chars().take(60).collect::<String>(),
        path.display(),
        if known.is_empty() {
            "none".to_owned()
        } else {
            known.join(", ")
        }
    )))
}
