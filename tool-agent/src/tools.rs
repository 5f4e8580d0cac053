//! The tool set a (sub-)agent runs with: a filtered clone of a registry.
//!
//! Until tool-core's `RegistryView` is on the main branch, sub-agents get a
//! [`ToolFilter`] applied to a clone of the parent registry (cheap: tools
//! are reference-counted). The filter's rules are the ones a view takes:
//! allow and deny name patterns (`*` and `?` globs), read-only only, and
//! names left out.

use globset::{Glob, GlobSet, GlobSetBuilder};
use tool_core::ToolRegistry;

/// Which tools of a registry a sub-agent gets.
///
/// A tool is kept when it matches an `allow` pattern (or `allow` is empty),
/// matches no `deny` pattern, is not in `without`, and is read-only when
/// [`read_only`](Self::read_only) is set. Deny wins over allow.
///
/// ```
/// use tool_agent::ToolFilter;
/// let f = ToolFilter::new().allow(["read_*", "grep_content"]).deny(["read_images"]);
/// assert!(f.keeps("read_file", false).unwrap());
/// assert!(!f.keeps("read_images", true).unwrap());
/// assert!(!f.keeps("bash_command", false).unwrap());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolFilter {
    allow: Vec<String>,
    deny: Vec<String>,
    without: Vec<String>,
    read_only: bool,
}

impl ToolFilter {
    /// Keeps every tool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds allow patterns.
    pub fn allow(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.allow.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Adds deny patterns.
    pub fn deny(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.deny.extend(patterns.into_iter().map(Into::into));
        self
    }

    /// Leaves out these exact names (e.g. `agent` and `evaluate` for sub-agents).
    pub fn without(mut self, names: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.without.extend(names.into_iter().map(Into::into));
        self
    }

    /// Keeps only tools whose spec says `read_only`.
    pub fn read_only(mut self) -> Self {
        self.read_only = true;
        self
    }

    fn set(patterns: &[String]) -> Result<Option<GlobSet>, FilterError> {
        if patterns.is_empty() {
            return Ok(None);
        }
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            b.add(Glob::new(p).map_err(|e| FilterError(format!("tool pattern `{p}`: {e}")))?);
        }
        b.build().map(Some).map_err(|e| FilterError(e.to_string()))
    }

    /// Whether a tool named `name` (read-only or not) is kept.
    ///
    /// # Errors
    /// A pattern that is not a valid glob.
    pub fn keeps(&self, name: &str, read_only: bool) -> Result<bool, FilterError> {
        let allow = Self::set(&self.allow)?;
        let deny = Self::set(&self.deny)?;
        Ok(self.keeps_with(name, read_only, allow.as_ref(), deny.as_ref()))
    }

    fn keeps_with(&self, name: &str, read_only: bool, allow: Option<&GlobSet>, deny: Option<&GlobSet>) -> bool {
        (!self.read_only || read_only)
            && !self.without.iter().any(|w| w == name)
            && allow.is_none_or(|a| a.is_match(name))
            && deny.is_none_or(|d| !d.is_match(name))
    }

    /// A clone of `registry` with only the kept tools.
    ///
    /// # Errors
    /// A pattern that is not a valid glob.
    pub fn apply(&self, registry: &ToolRegistry) -> Result<ToolRegistry, FilterError> {
        let allow = Self::set(&self.allow)?;
        let deny = Self::set(&self.deny)?;
        let drop: Vec<String> = registry
            .specs()
            .filter(|s| !self.keeps_with(&s.name, s.read_only, allow.as_ref(), deny.as_ref()))
            .map(|s| s.name.clone())
            .collect();
        let mut out = registry.clone();
        for name in drop {
            out.remove(&name);
        }
        Ok(out)
    }
}

/// A tool pattern that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FilterError(String);
