//! [`ToolRegistry`]: the set of tools an agent may call.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;

use crate::__private::StaticTool;
use crate::error::RegistryError;
use crate::governance::stats::{StatsOrder, ToolObserver, ToolStats, ToolStatsSnapshot};
use crate::spec::ToolSpec;
use crate::tool::Tool;
use crate::truncate::Truncation;

/// The timeout a call gets when neither the tool nor the context sets one: 120 s.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(120);

/// What [`ToolRegistry::register_with`] and [`ToolRegistry::merge`] do when a name is taken.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum OnConflict {
    /// Fail with [`RegistryError::Duplicate`] naming both definition sites. The default.
    #[default]
    Error,
    /// Replace the registered tool with the newcomer.
    Override,
    /// Keep the registered tool, drop the newcomer.
    Skip,
    /// Register the newcomer as `<name>_2` (then `_3`, …), cutting the base so
    /// the result stays within 64 characters.
    Rename,
}

/// A set of tools by name, in name order.
///
/// - [`ToolRegistry::global`]: every `#[tool]` fn linked into the binary, built once.
/// - [`ToolRegistry::new`] + [`register`](Self::register): a registry of your choosing.
///
/// Cloning is cheap (tools are reference-counted), so a host can derive a
/// per-agent registry from the global one and add or remove tools.
///
/// Statistics are kept per registry and shared by its clones.
#[derive(Clone)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Entry>,
    pub(crate) default_timeout: Duration,
    pub(crate) observers: Vec<Arc<dyn ToolObserver>>,
    pub(crate) truncation: Option<Truncation>,
    pub(crate) call_ids: Arc<AtomicU64>,
    /// Provider renderings of the tool list, per format; cleared whenever `tools` changes.
    pub(crate) rendered: crate::format::RenderCache,
}

#[derive(Clone)]
pub(crate) struct Entry {
    pub(crate) tool: Tool,
    pub(crate) stats: Arc<ToolStats>,
}

impl Entry {
    fn new(tool: Tool) -> Self {
        Self {
            tool,
            stats: Arc::default(),
        }
    }
}

impl fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ToolRegistry")
            .field("tools", &self.names())
            .field("default_timeout", &self.default_timeout)
            .field("observers", &self.observers.len())
            .field("truncation", &self.truncation)
            .finish()
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

static GLOBAL: OnceLock<Result<ToolRegistry, RegistryError>> = OnceLock::new();

impl ToolRegistry {
    /// An empty registry with the default timeout ([`DEFAULT_TIMEOUT`]) and
    /// the default output budget ([`Truncation::new`]: 50 KiB or 2000 lines,
    /// full text spilled to a file).
    pub fn new() -> Self {
        Self {
            tools: BTreeMap::new(),
            default_timeout: DEFAULT_TIMEOUT,
            observers: Vec::new(),
            truncation: Some(Truncation::new()),
            call_ids: Arc::default(),
            rendered: crate::format::RenderCache::default(),
        }
    }

    /// Every `#[tool]` fn linked into this binary, built on first use and cached.
    ///
    /// # Panics
    /// When two `#[tool]` fns share a name (the message names both
    /// definitions, `file:line`), or a spec is invalid. Use
    /// [`try_global`](Self::try_global) to handle that as an error.
    pub fn global() -> &'static ToolRegistry {
        match Self::try_global() {
            Ok(r) => r,
            Err(e) => panic!("the global tool registry cannot be built: {e}"),
        }
    }

    /// Like [`global`](Self::global), returning the error instead of panicking.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] (or [`RegistryError::Many`] listing every
    /// duplicate) when names collide.
    pub fn try_global() -> Result<&'static ToolRegistry, &'static RegistryError> {
        GLOBAL.get_or_init(Self::from_inventory).as_ref()
    }

    /// A fresh registry of every `#[tool]` fn linked into this binary (not cached).
    ///
    /// # Errors
    /// As [`try_global`](Self::try_global); every problem is reported, not just the first.
    pub fn from_inventory() -> Result<Self, RegistryError> {
        Self::from_static_where(|_| true)
    }

    /// A fresh registry of the `#[tool]` fns defined in the crate called
    /// `crate_name` (as Rust spells it in paths: `tool_builtins`; a `-` is
    /// read as `_`), among those linked into this binary. The crate of a tool
    /// is the first segment of the `module_path!()` its `#[tool]` expansion
    /// recorded, so a tool of another crate that happens to share a name is
    /// never picked up, and nothing is listed by hand.
    ///
    /// ```
    /// # use tool_core::{tool, ToolRegistry};
    /// /// Say hello.
    /// #[tool]
    /// fn hello() -> String { "hi".into() }
    ///
    /// // This (doctest) crate's name: the first segment of `module_path!()`.
    /// let this_crate = module_path!().split("::").next().unwrap();
    /// let registry = ToolRegistry::of_crate(this_crate).unwrap();
    /// assert!(registry.contains("hello"));
    /// assert!(ToolRegistry::of_crate("no_such_crate").unwrap().is_empty());
    /// ```
    ///
    /// # Errors
    /// As [`from_inventory`](Self::from_inventory), for the selected tools only.
    pub fn of_crate(crate_name: &str) -> Result<Self, RegistryError> {
        let wanted = crate_name.replace('-', "_");
        Self::from_static_where(|def| def.module_path.split("::").next() == Some(wanted.as_str()))
    }

    /// The registry of the link-time tools `keep` selects; every problem is reported.
    fn from_static_where(keep: impl Fn(&StaticTool) -> bool) -> Result<Self, RegistryError> {
        let mut defs: Vec<&'static StaticTool> = inventory::iter::<StaticTool>
            .into_iter()
            .filter(|def| keep(def))
            .collect();
        // Deterministic order for error messages whatever the link order.
        defs.sort_by_key(|d| (d.name, d.file, d.line));
        let mut registry = Self::new();
        let mut errors = Vec::new();
        for def in defs {
            match Tool::from_static(def).and_then(|t| registry.register(t)) {
                Ok(()) => {}
                Err(e) => errors.push(e),
            }
        }
        match errors.len() {
            0 => Ok(registry),
            1 => Err(errors.remove(0)),
            _ => Err(RegistryError::Many(errors)),
        }
    }

    /// Sets the timeout for calls whose tool and context set none.
    #[must_use]
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets the output budget applied to every result (`None`: never truncate).
    #[must_use]
    pub fn with_truncation(mut self, truncation: Option<Truncation>) -> Self {
        self.truncation = truncation;
        self
    }

    /// Adds an observer of call lifecycle events.
    #[must_use]
    pub fn with_observer(mut self, observer: impl ToolObserver) -> Self {
        self.observers.push(Arc::new(observer));
        self
    }

    /// Adds a tool.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] when the name is taken.
    pub fn register(&mut self, tool: Tool) -> Result<(), RegistryError> {
        self.register_with(tool, OnConflict::Error).map(|_| ())
    }

    /// Adds a tool, resolving a name collision with `policy`. Returns the name
    /// the tool was registered under, or `None` when it was skipped.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] under [`OnConflict::Error`].
    pub fn register_with(
        &mut self,
        tool: Tool,
        policy: OnConflict,
    ) -> Result<Option<String>, RegistryError> {
        self.rendered.clear();
        let Some(existing) = self.tools.get(tool.name()).map(|e| &e.tool) else {
            let name = tool.name().to_owned();
            self.tools.insert(name.clone(), Entry::new(tool));
            return Ok(Some(name));
        };
        match policy {
            OnConflict::Error => Err(RegistryError::Duplicate {
                name: tool.name().to_owned(),
                first: existing.spec().source.clone(),
                second: tool.spec().source.clone(),
            }),
            OnConflict::Override => {
                let name = tool.name().to_owned();
                self.tools.insert(name.clone(), Entry::new(tool));
                Ok(Some(name))
            }
            OnConflict::Skip => Ok(None),
            OnConflict::Rename => {
                let base = tool.name().to_owned();
                let name = (2u32..)
                    .map(|n| {
                        let suffix = format!("_{n}");
                        let keep = base.len().min(64 - suffix.len());
                        format!("{}{suffix}", &base[..keep])
                    })
                    .find(|candidate| !self.tools.contains_key(candidate))
                    .unwrap_or(base);
                let renamed = tool.renamed(name.clone())?;
                self.tools.insert(name.clone(), Entry::new(renamed));
                Ok(Some(name))
            }
        }
    }

    /// Adds every tool of `other`, resolving collisions with `policy`. All
    /// collisions are reported at once under [`OnConflict::Error`], and then
    /// nothing is added.
    ///
    /// # Errors
    /// [`RegistryError::Duplicate`] / [`RegistryError::Many`] under [`OnConflict::Error`].
    pub fn merge(&mut self, other: &ToolRegistry, policy: OnConflict) -> Result<(), RegistryError> {
        if policy == OnConflict::Error {
            let mut errors: Vec<RegistryError> = other
                .tools
                .values()
                .filter_map(|e| {
                    self.tools
                        .get(e.tool.name())
                        .map(|existing| RegistryError::Duplicate {
                            name: e.tool.name().to_owned(),
                            first: existing.tool.spec().source.clone(),
                            second: e.tool.spec().source.clone(),
                        })
                })
                .collect();
            if errors.len() == 1 {
                return Err(errors.remove(0));
            }
            if !errors.is_empty() {
                return Err(RegistryError::Many(errors));
            }
        }
        for entry in other.tools.values() {
            self.register_with(entry.tool.clone(), policy)?;
        }
        Ok(())
    }

    /// Removes and returns the tool called `name`.
    pub fn remove(&mut self, name: &str) -> Option<Tool> {
        self.rendered.clear();
        self.tools.remove(name).map(|e| e.tool)
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name).map(|e| &e.tool)
    }

    pub(crate) fn entry(&self, name: &str) -> Option<&Entry> {
        self.tools.get(name)
    }

    /// Whether a tool called `name` is registered.
    pub fn contains(&self, name: &str) -> bool {
        self.tools.contains_key(name)
    }

    /// Tool names in order.
    pub fn names(&self) -> Vec<&str> {
        self.tools.keys().map(String::as_str).collect()
    }

    /// Number of tools.
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// `true` when no tool is registered.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Every tool, in name order.
    pub fn tools(&self) -> impl Iterator<Item = &Tool> {
        self.tools.values().map(|e| &e.tool)
    }

    /// Every spec, in name order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools().map(Tool::spec)
    }

    /// Names of the tools offered on `page_url`: tools without `url_patterns`
    /// plus those with a pattern matching the URL. `None` (no page) lists only
    /// the tools without patterns.
    pub fn tool_names(&self, page_url: Option<&str>) -> Vec<&str> {
        self.tools()
            .filter(|t| t.available_on(page_url))
            .map(Tool::name)
            .collect()
    }

    /// The canonical schemas of the tools offered on `page_url` (see [`tool_names`](Self::tool_names)).
    pub fn schemas_for_url(&self, page_url: Option<&str>) -> Vec<Value> {
        self.tools()
            .filter(|t| t.available_on(page_url))
            .map(|t| t.spec().canonical_schema())
            .collect()
    }

    /// Statistics of every tool, in name order.
    pub fn stats(&self) -> Vec<ToolStatsSnapshot> {
        self.tools
            .iter()
            .map(|(n, e)| e.stats.snapshot(n))
            .collect()
    }

    /// Statistics of one tool.
    pub fn stats_for(&self, name: &str) -> Option<ToolStatsSnapshot> {
        self.tools.get(name).map(|e| e.stats.snapshot(name))
    }

    /// The `limit` tools first by `order` (tools never called are left out).
    pub fn top_tools(&self, limit: usize, order: StatsOrder) -> Vec<ToolStatsSnapshot> {
        let mut all: Vec<ToolStatsSnapshot> = self
            .stats()
            .into_iter()
            .filter(|s| s.call_count > 0)
            .collect();
        match order {
            StatsOrder::CallCount => all.sort_by(|a, b| {
                b.call_count
                    .cmp(&a.call_count)
                    .then_with(|| a.name.cmp(&b.name))
            }),
            StatsOrder::SuccessRate => all.sort_by(|a, b| {
                b.success_rate
                    .total_cmp(&a.success_rate)
                    .then_with(|| b.call_count.cmp(&a.call_count))
                    .then_with(|| a.name.cmp(&b.name))
            }),
            StatsOrder::AverageDuration => all.sort_by(|a, b| {
                b.average_duration
                    .cmp(&a.average_duration)
                    .then_with(|| a.name.cmp(&b.name))
            }),
        }
        all.truncate(limit);
        all
    }

    /// The canonical schema of every tool, in name order: one
    /// `{"name", "description", "parameters"}` object per tool, `parameters`
    /// being JSON Schema 2020-12 with root `type: object`.
    pub fn schemas(&self) -> Vec<Value> {
        self.specs().map(ToolSpec::canonical_schema).collect()
    }

    /// The names closest to `name` (edit distance), best first, at most 3.
    pub fn suggest(&self, name: &str) -> Vec<&str> {
        tool_rules::suggest::ranked(name, self.tools.keys().map(String::as_str), 3)
    }
}
