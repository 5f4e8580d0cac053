//! [`NetworkPolicy`]: which hosts a tool's network traffic may reach — the one
//! policy shared by the sandbox's proxy and the web tools
//! (`../shared/design/cross-cutting.md` §5).
//!
//! Work in progress (issue 22): the type and its constructors are fixed here
//! so that the sandbox and the proxy agree on it; host matching, address
//! checks and resolution are added by the proxy work.

use super::url_pattern::UrlPattern;

/// Which hosts may be contacted, and whether private addresses may be.
///
/// Default: nothing is allowed (the sandbox's network is off).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    allow: Vec<UrlPattern>,
    allow_private: bool,
}

impl NetworkPolicy {
    /// A policy that allows nothing (the default).
    pub fn deny_all() -> Self {
        Self::default()
    }

    /// Adds an allowed host pattern (the URL-pattern grammar of
    /// [`UrlPattern`], e.g. `*.crates.io` or `https://registry.npmjs.org`).
    #[must_use]
    pub fn allow(mut self, pattern: UrlPattern) -> Self {
        self.allow.push(pattern);
        self
    }

    /// Allows private, loopback and link-local addresses (refused by default
    /// even when the host name matches a pattern). Tests that need a loopback
    /// server set this explicitly.
    #[must_use]
    pub fn allow_private(mut self, allow: bool) -> Self {
        self.allow_private = allow;
        self
    }

    /// The allowed host patterns, in the order added.
    pub fn patterns(&self) -> &[UrlPattern] {
        &self.allow
    }

    /// Whether private, loopback and link-local addresses may be contacted.
    pub fn private_allowed(&self) -> bool {
        self.allow_private
    }

    /// Whether any host at all may be contacted.
    pub fn is_deny_all(&self) -> bool {
        self.allow.is_empty()
    }
}
