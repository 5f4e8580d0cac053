//! [`LiveRegistry`]: a registry that can change while it is being served.

use std::sync::{Arc, PoisonError, RwLock};

use tokio::sync::watch;
use tool_core::ToolRegistry;

/// A [`ToolRegistry`] shared between an MCP server (or several sessions of
/// one) and whoever changes it, with change notification.
///
/// Readers take a [`snapshot`](Self::snapshot) (an `Arc`, so a call in flight
/// keeps the registry it started with); writers go through
/// [`update`](Self::update), which swaps in the new registry and wakes every
/// [`subscribe`](Self::subscribe)r. The server turns a wake-up into
/// `notifications/tools/list_changed`; imported MCP tools are replaced
/// through it when their server's list changes.
///
/// Cheap to clone; clones share the registry.
#[derive(Clone)]
pub struct LiveRegistry {
    inner: Arc<Inner>,
}

struct Inner {
    current: RwLock<Arc<ToolRegistry>>,
    version: watch::Sender<u64>,
}

impl LiveRegistry {
    /// Shares `registry`.
    pub fn new(registry: ToolRegistry) -> Self {
        Self {
            inner: Arc::new(Inner {
                current: RwLock::new(Arc::new(registry)),
                version: watch::Sender::new(0),
            }),
        }
    }

    /// The registry as it is now.
    pub fn snapshot(&self) -> Arc<ToolRegistry> {
        Arc::clone(
            &self
                .inner
                .current
                .read()
                .unwrap_or_else(PoisonError::into_inner),
        )
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
        let mut next = ToolRegistry::clone(&slot);
        let out = change(&mut next)?;
        *slot = Arc::new(next);
        drop(slot);
        self.inner.version.send_modify(|v| *v += 1);
        Ok(out)
    }

    /// A receiver that is marked changed after every successful [`update`](Self::update).
    pub fn subscribe(&self) -> watch::Receiver<u64> {
        self.inner.version.subscribe()
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
            .finish()
    }
}
