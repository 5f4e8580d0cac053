//! [`ToolRegistry`]: the set of tools an agent may call.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::time::Duration;

use serde_json::Value;

use crate::__private::StaticTool;
use crate::error::RegistryError;
use crate::spec::ToolSpec;
use crate::tool::Tool;

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
#[derive(Clone, Debug)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Tool>,
    pub(crate) default_timeout: Duration,
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

static GLOBAL: OnceLock<Result<ToolRegistry, RegistryError>> = OnceLock::new();

impl ToolRegistry {
    /// An empty registry with the default timeout ([`DEFAULT_TIMEOUT`]).
    pub fn new() -> Self {
        Self {
            tools: BTreeMap::new(),
            default_timeout: DEFAULT_TIMEOUT,
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
        let mut defs: Vec<&'static StaticTool> =
            inventory::iter::<StaticTool>.into_iter().collect();
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
        let Some(existing) = self.tools.get(tool.name()) else {
            let name = tool.name().to_owned();
            self.tools.insert(name.clone(), tool);
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
                self.tools.insert(name.clone(), tool);
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
                self.tools.insert(name.clone(), renamed);
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
                .filter_map(|t| {
                    self.tools
                        .get(t.name())
                        .map(|existing| RegistryError::Duplicate {
                            name: t.name().to_owned(),
                            first: existing.spec().source.clone(),
                            second: t.spec().source.clone(),
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
        for tool in other.tools.values() {
            self.register_with(tool.clone(), policy)?;
        }
        Ok(())
    }

    /// Removes and returns the tool called `name`.
    pub fn remove(&mut self, name: &str) -> Option<Tool> {
        self.tools.remove(name)
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Tool> {
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
        self.tools.values()
    }

    /// Every spec, in name order.
    pub fn specs(&self) -> impl Iterator<Item = &ToolSpec> {
        self.tools.values().map(Tool::spec)
    }

    /// The canonical schema of every tool, in name order: one
    /// `{"name", "description", "parameters"}` object per tool, `parameters`
    /// being JSON Schema 2020-12 with root `type: object`.
    pub fn schemas(&self) -> Vec<Value> {
        self.specs().map(ToolSpec::canonical_schema).collect()
    }

    /// The names closest to `name` (edit distance), best first, at most 3.
    pub fn suggest(&self, name: &str) -> Vec<&str> {
        let lowered = name.to_ascii_lowercase();
        let mut scored: Vec<(f64, &str)> = self
            .tools
            .keys()
            .map(|k| {
                (
                    strsim::jaro_winkler(&lowered, &k.to_ascii_lowercase()),
                    k.as_str(),
                )
            })
            .filter(|(score, _)| *score >= 0.75)
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
        scored.into_iter().take(3).map(|(_, k)| k).collect()
    }
}
