//! [`LiveRegistry`]: a registry that can change while it is being used.

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;

use crate::registry::ToolRegistry;

/// A [`ToolRegistry`] shared between its users (an MCP server and its
/// sessions, [`RegistryView`](crate::RegistryView)s, an agent loop) and
/// whoever changes it, with a version number and change notification.
///
/// Readers take a [`snapshot`](Self::snapshot) (an `Arc`, so a call in flight
/// keeps the registry it started with); writers go through
/// [`update`](Self::update), which swaps in the new registry and wakes every
/// [`subscribe`](Self::subscribe)r. The server turns a wake-up into
/// `notifications/tools/list_changed`; imported MCP tools are replaced
/// through it when their server's list changes.
///
/// It also keeps the list of MCP servers that are *unavailable* (never
/// started, or gone since) with the reason, so that hosts can say why a
/// server's tools are missing ([`unavailable`](Self::unavailable),
/// [`unavailable_server_of`](Self::unavailable_server_of)). Imported tools
/// are removed when their server goes away, and the server is recorded here.
///
/// Every successful [`update`](Self::update) makes a new registry
/// [`version`](Self::version) (0 for the registry it was built with), which
/// views and the tool-search index use to rebuild only what changed.
///
/// Cheap to clone; clones share the registry.
#[derive(Clone)]
pub struct LiveRegistry {
    inner: Arc<Inner>,
}

struct Inner {
    /// The registry and its version (the number of updates so far).
    current: RwLock<(Arc<ToolRegistry>, u64)>,
    version: watch::Sender<u64>,
    /// `<server>` prefix → why it is unavailable; at most
    /// [`MAX_UNAVAILABLE`] entries of at most [`MAX_REASON_LEN`] bytes.
    unavailable: RwLock<BTreeMap<String, String>>,
}

/// Most servers [`LiveRegistry::mark_unavailable`] keeps (further ones are
/// dropped: a host has a config file's worth of servers, not thousands).
pub const MAX_UNAVAILABLE: usize = 256;

/// Longest reason [`LiveRegistry::mark_unavailable`] keeps, in bytes; a
/// longer one is cut at a character boundary and ends in `...`.
pub const MAX_REASON_LEN: usize = 1000;

impl LiveRegistry {
    /// Shares `registry`.
    pub fn new(registry: ToolRegistry) -> Self {
        Self {
            inner: Arc::new(Inner {
                current: RwLock::new((Arc::new(registry), 0)),
                version: watch::Sender::new(0),
                unavailable: RwLock::new(BTreeMap::new()),
            }),
        }
    }

    /// The registry as it is now.
    pub fn snapshot(&self) -> Arc<ToolRegistry> {
        self.versioned().0
    }

    /// The registry as it is now with its version: the number of successful
    /// [`update`](Self::update)s before it (0 for the registry the live
    /// registry was built with). The two are read together, so the version
    /// always belongs to that registry.
    pub fn versioned(&self) -> (Arc<ToolRegistry>, u64) {
        let slot = self
            .inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner);
        (Arc::clone(&slot.0), slot.1)
    }

    /// The version of the registry as it is now (see [`versioned`](Self::versioned)).
    pub fn version(&self) -> u64 {
        self.inner
            .current
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .1
    }

    /// Changes the registry with `change` (applied to a copy, swapped in
    /// atomically) and notifies subscribers when `change` returns `Ok`.
    /// Changes are serialised: two concurrent updates both apply.
    ///
    /// # Errors
    /// Whatever `change` returns; the registry is then left as it was.
    pub fn update<T, E>(
        &self,
        change: impl FnOnce(&mut ToolRegistry) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut slot = self
            .inner
            .current
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        let mut next = ToolRegistry::clone(&slot.0);
        let out = change(&mut next)?;
        *slot = (Arc::new(next), slot.1 + 1);
        drop(slot);
        self.inner.version.send_modify(|v| *v += 1);
        Ok(out)
    }

    /// A receiver that is marked changed after every successful
    /// [`update`](Self::update) and every change of the unavailable servers
    /// ([`mark_unavailable`](Self::mark_unavailable),
    /// [`clear_unavailable`](Self::clear_unavailable)).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
    }

    /// How many [`subscribe`](Self::subscribe) receivers are alive now: with
    /// tool-mcp's `McpServer`, one per open session of the initialize era
    /// (and per `subscriptions/listen` stream), so a count that stays up
    /// after the sessions end is a leak.
    pub fn subscribers(&self) -> usize {
        self.inner.version.receiver_count()
    }

    /// Records that MCP server `server` (the `<server>` prefix of its tool
    /// names) is unavailable because of `reason` (a sentence for people;
    /// cut to [`MAX_REASON_LEN`] bytes), replacing an earlier reason.
    /// Beyond [`MAX_UNAVAILABLE`] servers new ones are not recorded. Its
    /// tools are not touched: the connection removes its own when it dies.
    pub fn mark_unavailable(&self, server: &str, reason: &str) {
        let mut reason = reason.trim().to_owned();
        if reason.len() > MAX_REASON_LEN {
            let mut cut = MAX_REASON_LEN - 3;
            while !reason.is_char_boundary(cut) {
                cut -= 1;
            }
            reason.truncate(cut);
            reason.push_str("...");
        }
        {
            let mut map = self
                .inner
                .unavailable
                .write()
                .unwrap_or_else(PoisonError::into_inner);
            if map.len() >= MAX_UNAVAILABLE && !map.contains_key(server) {
                return;
            }
            map.insert(server.to_owned(), reason);
        }
        self.inner.version.send_modify(|v| *v += 1);
    }

    /// Forgets that `server` was unavailable (it has been imported again).
    pub fn clear_unavailable(&self, server: &str) {
        let removed = self
            .inner
            .unavailable
            .write()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(server)
            .is_some();
        if removed {
            self.inner.version.send_modify(|v| *v += 1);
        }
    }

    /// The unavailable MCP servers: `<server>` prefix → reason, in name order.
    pub fn unavailable(&self) -> BTreeMap<String, String> {
        self.inner
            .unavailable
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// For a tool name that is not in the registry: the unavailable server
    /// whose tool it would be (`tool` starts with `<server>__`) and why, so
    /// that a host can answer "MCP server `x` is unavailable: ..." instead
    /// of "unknown tool". `None` for a tool that is registered or that no
    /// unavailable server's prefix matches (the longest prefix wins).
    pub fn unavailable_server_of(&self, tool: &str) -> Option<(String, String)> {
        if self.snapshot().contains(tool) {
            return None;
        }
        self.inner
            .unavailable
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|(server, _)| {
                tool.strip_prefix(server.as_str())
                    .is_some_and(|rest| rest.starts_with("__"))
            })
            .max_by_key(|(server, _)| server.len())
            .map(|(server, reason)| (server.clone(), reason.clone()))
    }
}

impl From<ToolRegistry> for LiveRegistry {
    fn from(registry: ToolRegistry) -> Self {
        Self::new(registry)
    }
}

impl std::fmt::Debug for LiveRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LiveRegistry")
            .field("tools", &self.snapshot().names())
            .field("unavailable", &self.unavailable())
            .finish()
    }
}
