//! `tool serve --state URL [--state-prefix P]`: the session's state in a
//! shared store (Redis 7 or Valkey, build feature `redis`) in place of the
//! per-user file store; `--state-file PATH` reads the URL from a private file.

use std::path::Path;
use std::sync::Arc;

use tool_core::state::StateStore;

use crate::session::Session;

/// Largest `--state-file`, in bytes (4 KiB): a Redis URL with a user,
/// password, host and database is well under 1 KiB.
pub(crate) const MAX_STATE_FILE_BYTES: u64 = 4096;

/// The store URL of a `--state-file`: its first line, without surrounding
/// whitespace. The file must be a regular file of at most
/// [`MAX_STATE_FILE_BYTES`] that neither group nor others may read (mode
/// `0600` or stricter), as it holds the server's password.
///
/// # Errors
/// A usage message naming the file (never its content): cannot be opened,
/// not a regular file, readable by group or others, too large, not UTF-8,
/// or an empty first line.
pub(crate) fn read_url_file(path: &Path) -> Result<String, String> {
    let shown = path.display();
    let bytes = crate::small_file::read_private(
        path,
        "--state-file",
        "a file holding the state store URL on its first line (redis://USER:PASSWORD@HOST:PORT/DB)",
        MAX_STATE_FILE_BYTES,
    )?;
    let text = String::from_utf8(bytes)
        .map_err(|_| format!("--state-file {shown}: the file is not UTF-8 text"))?;
    let url = text.lines().next().unwrap_or_default().trim();
    if url.is_empty() {
        return Err(format!(
            "--state-file {shown}: the first line is empty; put the store URL \
             (redis://USER:PASSWORD@HOST:PORT/DB) on it"
        ));
    }
    Ok(url.to_owned())
}

/// `--state-prefix` and `--state-max-keys`.
#[derive(Debug, Default)]
#[cfg_attr(
    not(feature = "redis"),
    allow(
        dead_code,
        reason = "read only by the Redis store, which this build lacks"
    )
)]
pub(crate) struct Options<'a> {
    /// The key prefix (`None`: the store's default, `agent-tools`).
    pub(crate) prefix: Option<&'a str>,
    /// The cap on live keys under the prefix (`None`: the store's
    /// default, 100 000; `Some(0)`: no cap).
    pub(crate) max_keys: Option<u64>,
}

/// Puts the store named by `url` (with key prefix `prefix`) in the
/// session's context, and the session's read ledger in it (owner: the
/// trace id; MCP clients' traces get their own ledgers in the same store),
/// and a job registry on it shared by the replicas
/// ([`tool_core::jobs::JobRegistry::shared_by_hosts`], output rings in
/// this machine's state folder); returns `view` keeping its traces' loaded
/// tools in the store too ([`tool_core::RegistryView::with_state_store`],
/// keyed by the workspace).
///
/// # Errors
/// A usage message when the URL is not a Redis URL, the build has no Redis
/// support, or the server cannot be reached at start (the password is
/// never shown).
pub(crate) fn attach(
    session: &mut Session,
    view: tool_core::RegistryView,
    url: &str,
    options: &Options<'_>,
) -> Result<tool_core::RegistryView, String> {
    let store = open(url, options)?;
    let Some(root) = session
        .ctx
        .state::<tool_builtins::Workspace>()
        .map(|ws| ws.root().to_path_buf())
    else {
        return Err("--state: the session has no workspace to key its state by".to_owned());
    };
    let key = tool_core::state::StateKey::new(
        tool_builtins::fs::ledger::STATE_SPACE,
        session.trace_id.as_str(),
        &root,
    )
    .map_err(|e| format!("--state: {e}"))?;
    let ledger = tool_builtins::FileLedger::in_store(store.clone(), key);
    let view = view
        .with_state_store(store.clone(), &root)
        .map_err(|e| format!("--state: {e}"))?;
    session.ctx = session
        .ctx
        .clone()
        .with_state(store.clone())
        .with_state(ledger);
    // The job registry in the store too (review 32 F1): a job runs on the
    // replica that starts it, which mirrors it into the store, so every
    // replica lists, reads and stops it; with the store down none starts.
    // Its output ring stays in this machine's state folder.
    if let Some(dir) = tool_core::state::state_dir() {
        let jobs =
            tool_core::jobs::JobRegistry::new(store, dir.join("job-output")).shared_by_hosts();
        session.ctx = session.ctx.clone().with_state(jobs);
    }
    Ok(view)
}

/// The store, checked: a write and a read under the prefix with the
/// URL's user ([`tool_core::state::RedisStore::ping`]), so a server that
/// does not answer, refuses the user, or keeps it off the prefix stops the
/// start.
#[cfg(feature = "redis")]
fn open(url: &str, options: &Options<'_>) -> Result<Arc<dyn StateStore>, String> {
    let mut store = tool_core::state::RedisStore::open(url).map_err(|e| format!("--state: {e}"))?;
    if let Some(prefix) = options.prefix {
        store = store
            .with_prefix(prefix)
            .map_err(|e| format!("--state-prefix: {e}"))?;
    }
    if let Some(max_keys) = options.max_keys {
        store = store
            .with_limits(tool_core::state::RedisStoreLimits::default().with_max_keys(max_keys));
    }
    store.ping().map_err(|e| format!("--state: {e}"))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "redis"))]
fn open(url: &str, _options: &Options<'_>) -> Result<Arc<dyn StateStore>, String> {
    let scheme = url.split("://").next().unwrap_or_default();
    Err(format!(
        "--state: this `tool` was built without Redis support, so a {scheme}:// state store \
         cannot be used: rebuild with `cargo install tool-cli --features redis` (or \
         `redis-tls` for rediss://), or leave --state out to keep state in \
         $XDG_STATE_HOME/agent-tools"
    ))
}
