//! `tool serve --state URL [--state-prefix P]`: the session's state in a
//! shared store (Redis 7 or Valkey, build feature `redis`) in place of the
//! per-user file store.

use std::sync::Arc;

use tool_core::state::StateStore;

use crate::session::Session;

/// Puts the store named by `url` (with key prefix `prefix`) in the
/// session's context, and the session's read ledger in it (owner: the
/// trace id; MCP clients' traces get their own ledgers in the same store).
///
/// # Errors
/// A usage message when the URL is not a Redis URL, the build has no Redis
/// support, or the server cannot be reached at start (the password is
/// never shown).
pub(crate) fn attach(session: &mut Session, url: &str, prefix: Option<&str>) -> Result<(), String> {
    let store = open(url, prefix)?;
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
    session.ctx = session.ctx.clone().with_state(store).with_state(ledger);
    Ok(())
}

#[cfg(feature = "redis")]
fn open(url: &str, prefix: Option<&str>) -> Result<Arc<dyn StateStore>, String> {
    let mut store = tool_core::state::RedisStore::open(url).map_err(|e| format!("--state: {e}"))?;
    if let Some(prefix) = prefix {
        store = store
            .with_prefix(prefix)
            .map_err(|e| format!("--state-prefix: {e}"))?;
    }
    store.ping().map_err(|e| format!("--state: {e}"))?;
    Ok(Arc::new(store))
}

#[cfg(not(feature = "redis"))]
fn open(url: &str, _prefix: Option<&str>) -> Result<Arc<dyn StateStore>, String> {
    let scheme = url.split("://").next().unwrap_or_default();
    Err(format!(
        "--state: this `tool` was built without Redis support, so a {scheme}:// state store \
         cannot be used: rebuild with `cargo install tool-cli --features redis` (or \
         `redis-tls` for rediss://), or leave --state out to keep state in \
         $XDG_STATE_HOME/agent-tools"
    ))
}
