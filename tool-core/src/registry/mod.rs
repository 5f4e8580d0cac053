//! [`ToolRegistry`]: the set of tools an agent may call.

pub(crate) mod error;
pub(crate) mod history;
pub mod live;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};
use std::time::Duration;

use serde_json::Value;

use crate::format::{self, Format, FormatError, OnRefusal, RenderError, Rendered, ToolSchemas};
use crate::governance::stats::{StatsOrder, ToolObserver, ToolStats, ToolStatsSnapshot};
use crate::layer::ToolLayer;
use crate::registry::error::RegistryError;
use crate::tool::Tool;
use crate::tool::spec::ToolSpec;
use crate::tool::statics::StaticTool;
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
    /// Middleware around every call, outermost first.
    pub(crate) layers: Vec<Arc<dyn ToolLayer>>,
    pub(crate) call_ids: Arc<AtomicU64>,
    /// Provider renderings of the tool list, per format; cleared whenever `tools` changes.
    pub(crate) rendered: RenderCache,
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
            .field("layers", &self.layer_names())
            .finish()
    }
}

impl Default for ToolRegistry {
    fn default() -> Self {
        Self::new()
    }
}

/// A crate of tools that stays out of [`ToolRegistry::global`] (and
/// [`ToolRegistry::from_inventory`]): its tools reach a registry only when an
/// application asks for them, through [`ToolRegistry::of_crate`] or the
/// crate's own constructor. Declared once per crate with
/// [`opt_in_tools!`](crate::opt_in_tools); `tool-builtins` is one.
#[derive(Debug)]
pub struct OptInTools {
    crate_name: &'static str,
}

impl OptInTools {
    /// For [`opt_in_tools!`](crate::opt_in_tools): `module_path` is the
    /// `module_path!()` of the declaring crate (its first segment is the
    /// crate's name).
    #[doc(hidden)]
    #[must_use]
    pub const fn __new(module_path: &'static str) -> Self {
        Self {
            crate_name: module_path,
        }
    }

    /// The declaring crate's name as Rust spells it in paths (`tool_builtins`).
    #[must_use]
    pub fn crate_name(&self) -> &'static str {
        crate_of(self.crate_name)
    }
}

inventory::collect!(OptInTools);

/// The crate of a `module_path!()`: its first segment.
fn crate_of(module_path: &str) -> &str {
    module_path.split("::").next().unwrap_or(module_path)
}

/// Declares the calling crate an opt-in tool library: its `#[tool]` fns are
/// left out of [`ToolRegistry::global`] and reach a registry only through
/// [`ToolRegistry::of_crate`] (or a constructor the crate offers). Write it
/// once, anywhere in the crate; a library of powerful tools (a shell, file
/// writes) uses it so that depending on it never hands those tools to an
/// application's model by surprise.
///
/// ```ignore
/// // in the library crate `shop_tools`:
/// tool_core::opt_in_tools!();
/// // in the application:
/// let tools = tool_core::ToolRegistry::of_crate("shop_tools")?;
/// ```
#[macro_export]
macro_rules! opt_in_tools {
    () => {
        $crate::__private::inventory::submit! {
            $crate::OptInTools::__new(::core::module_path!())
        }
    };
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
            layers: Vec::new(),
            call_ids: Arc::default(),
            rendered: RenderCache::default(),
        }
    }

    /// The `#[tool]` fns linked into this binary, built on first use and
    /// cached: the tools the application declares, plus those of every
    /// linked crate that did not declare itself an [opt-in tool
    /// library](crate::opt_in_tools). The built-in coding tools of
    /// `tool-builtins` (`bash_command`, `write_file`, `apply_patch` …) are
    /// such a library: they are **not** here even when `tool-builtins` is
    /// linked (through `tool-agent`'s `builtins` feature, say). Add them on
    /// purpose with `tool_builtins::registry()` (alone, or merged:
    /// `registry.merge(&tool_builtins::registry(), OnConflict::Error)`), or
    /// pick an opt-in crate's tools with [`of_crate`](Self::of_crate).
    ///
    /// Changed in 0.1 (issue 24): `global()` used to hold the built-ins too,
    /// so an app's agent or MCP server offered a shell without asking for it.
    ///
    /// # Panics
    /// When two `#[tool]` fns share a name (the message names both
    /// definitions, `file:line`), or a spec is invalid (a field of an
    /// `#[arg(flatten)]` struct named like another parameter among them). Use
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
    /// [`RegistryError::Duplicate`] when tool names collide,
    /// [`RegistryError::ParameterCollision`] when a field of an
    /// `#[arg(flatten)]` struct collides with another parameter of its tool,
    /// [`RegistryError::InvalidSpec`] for any other invalid tool; several
    /// problems come as one [`RegistryError::Many`] listing each. No tool
    /// is left out silently: the registry is built only when every linked
    /// tool is valid.
    pub fn try_global() -> Result<&'static ToolRegistry, &'static RegistryError> {
        GLOBAL.get_or_init(Self::from_inventory).as_ref()
    }

    /// A fresh registry of every `#[tool]` fn linked into this binary (not cached).
    ///
    /// # Errors
    /// As [`try_global`](Self::try_global); every problem is reported, not just the first.
    pub fn from_inventory() -> Result<Self, RegistryError> {
        let opt_in: Vec<&str> = inventory::iter::<OptInTools>
            .into_iter()
            .map(OptInTools::crate_name)
            .collect();
        Self::from_static_where(|def| !opt_in.contains(&crate_of(def.module_path)))
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
    /// let error = ToolRegistry::of_crate("no_such_crate").unwrap_err();
    /// assert!(error.to_string().contains("crates with tools"));
    /// ```
    ///
    /// # Errors
    /// As [`from_inventory`](Self::from_inventory), for the selected tools
    /// only; [`RegistryError::NoToolsInCrate`] when no linked `#[tool]` fn
    /// belongs to `crate_name` (a misspelt name, a bin's own name, or a bin
    /// that never references the library holding the tools), naming the
    /// crates that have tools and the closest one.
    pub fn of_crate(crate_name: &str) -> Result<Self, RegistryError> {
        let wanted = crate_name.replace('-', "_");
        let mut known: Vec<&str> = inventory::iter::<StaticTool>
            .into_iter()
            .map(|def| crate_of(def.module_path))
            .collect();
        if !known.contains(&wanted.as_str()) {
            known.sort_unstable();
            known.dedup();
            // The closest by spelling, else a crate whose name is a whole
            // `_`-separated part at either end of the one asked for (`shop`
            // for `shop_app`, a package named after its library plus a suffix).
            let suggestion = tool_rules::suggest::did_you_mean(&wanted, known.iter().copied())
                .or_else(|| {
                    known.iter().copied().find(|k| {
                        wanted.starts_with(&format!("{k}_")) || wanted.ends_with(&format!("_{k}"))
                    })
                })
                .map(str::to_owned);
            return Err(RegistryError::NoToolsInCrate {
                crate_name: wanted,
                suggestion,
                known: known.iter().take(20).map(|c| (*c).to_owned()).collect(),
            });
        }
        Self::from_static_where(|def| crate_of(def.module_path) == wanted)
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
        RegistryError::from_all(errors).map(|()| registry)
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

    /// Adds a middleware [`ToolLayer`] around every call of this registry
    /// (and of its clones made afterwards). Layers run in the order added,
    /// the first outermost (see [`layer`](crate::layer)); a view's own
    /// layers ([`RegistryView::layer`](crate::RegistryView::layer)) run
    /// outside these.
    #[must_use]
    pub fn with_layer(mut self, layer: impl ToolLayer) -> Self {
        self.layers.push(Arc::new(layer));
        self
    }

    /// Adds a middleware layer shared with other registries or views (as
    /// [`with_layer`](Self::with_layer)).
    #[must_use]
    pub fn with_shared_layer(mut self, layer: Arc<dyn ToolLayer>) -> Self {
        self.layers.push(layer);
        self
    }

    /// The names of the registry's layers, outermost first.
    pub fn layer_names(&self) -> Vec<&str> {
        self.layers.iter().map(|l| l.name()).collect()
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
                a.average_duration
                    .cmp(&b.average_duration)
                    .then_with(|| a.name.cmp(&b.name))
            }),
            StatsOrder::SlowestFirst => all.sort_by(|a, b| {
                b.average_duration
                    .cmp(&a.average_duration)
                    .then_with(|| a.name.cmp(&b.name))
            }),
        }
        all.truncate(limit);
        all
    }

    /// The names of [`top_tools`](Self::top_tools), in the same order (the
    /// seed's `get_top_tools(limit, by)`, which answers with names).
    pub fn top_tool_names(&self, limit: usize, order: StatsOrder) -> Vec<String> {
        self.top_tools(limit, order)
            .into_iter()
            .map(|s| s.name)
            .collect()
    }

    /// The canonical schema of every tool, in name order: one
    /// `{"name", "description", "parameters"}` object per tool, `parameters`
    /// being JSON Schema 2020-12 with root `type: object`.
    pub fn schemas(&self) -> Vec<Value> {
        self.specs().map(ToolSpec::canonical_schema).collect()
    }

    /// The canonical schemas (as [`schemas`](Self::schemas)) of the tools
    /// `names`, in the order given: for a prompt that lists the most used
    /// tools first (order the names by [`top_tool_names`](Self::top_tool_names)
    /// or [`stats`](Self::stats), then ask for their schemas). A name given
    /// twice is listed once, at its first place.
    ///
    /// ```
    /// use serde_json::{json, Map, Value};
    /// use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};
    ///
    /// let mut registry = ToolRegistry::new();
    /// for name in ["alpha", "beta", "gamma"] {
    ///     let spec = ToolSpec::new(name, "A tool.", json!({"type": "object"}));
    ///     registry.register(Tool::new(spec, |_: Map<String, Value>, _| async { ToolResult::ok("") })?)?;
    /// }
    /// let listed = registry.schemas_named(&["gamma", "alpha"])?;
    /// assert_eq!((listed[0]["name"].as_str(), listed[1]["name"].as_str()), (Some("gamma"), Some("alpha")));
    /// assert!(registry.schemas_named(&["alpah"]).unwrap_err().to_string().contains("did you mean `alpha`"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RegistryError::UnknownTool`] (with "did you mean") for each name
    /// that is not registered, several at once as [`RegistryError::Many`].
    pub fn schemas_named<S: AsRef<str>>(&self, names: &[S]) -> Result<Vec<Value>, RegistryError> {
        let mut seen = std::collections::HashSet::new();
        let mut out = Vec::with_capacity(names.len());
        let mut unknown = Vec::new();
        for name in names.iter().map(AsRef::as_ref) {
            match self.tools.get(name) {
                Some(e) if seen.insert(name) => out.push(e.tool.spec().canonical_schema()),
                Some(_) => {}
                None => unknown.push(RegistryError::UnknownTool {
                    name: name.to_owned(),
                    suggestion: self.suggest(name).first().map(|s| (*s).to_owned()),
                }),
            }
        }
        RegistryError::from_all(unknown)?;
        Ok(out)
    }

    /// The names closest to `name` (edit distance), best first, at most 3.
    pub fn suggest(&self, name: &str) -> Vec<&str> {
        tool_rules::suggest::ranked(name, self.tools.keys().map(String::as_str), 3)
    }
}

/// Provider renderings of the tool list (the rendering itself is [`format`](mod@format)'s).
impl ToolRegistry {
    /// Every tool rendered for `format`, in name order, as the request's tool
    /// list (see [`ToolSchemas`]), each in the strictest form it can take
    /// ([`OnRefusal::Fallback`]: a tool strict mode cannot express is sent
    /// without it, recorded in [`ToolSchemas::fallbacks`]). Rendered once per
    /// format and cached until the registry's tools change; later calls are a
    /// lookup and a reference-count bump.
    ///
    /// [`schemas`](Self::schemas) (no argument) stays the canonical list;
    /// `schemas_in(Format::Json)` wraps the same objects.
    ///
    /// ```
    /// use serde_json::{json, Map, Value};
    /// use tool_core::format::{Format, OnRefusal};
    /// use tool_core::{Tool, ToolRegistry, ToolResult, ToolSpec};
    ///
    /// let tool = |name: &str, param: Value| {
    ///     let spec = ToolSpec::new(name, "A tool.", json!({
    ///         "type": "object", "properties": {"p": param}, "required": ["p"]
    ///     }));
    ///     Tool::new(spec, |_: Map<String, Value>, _| async { ToolResult::ok("") }).unwrap()
    /// };
    /// let mut registry = ToolRegistry::new();
    /// registry.register(tool("counts", json!({"type": "object", "additionalProperties": {"type": "integer"}})))?;
    /// registry.register(tool("plain", json!({"type": "string"})))?;
    ///
    /// let strict = registry.schemas_in(Format::OpenAiChat { strict: true })?;
    /// assert_eq!(strict[0]["function"]["strict"], false, "the map tool falls back");
    /// assert_eq!(strict[1]["function"]["strict"], true);
    /// assert_eq!(strict.fallbacks()[0].tool, "counts");
    ///
    /// let refused = registry.schemas_with(Format::OpenAiChat { strict: true }, OnRefusal::Refuse);
    /// assert_eq!(refused.unwrap_err().errors()[0].tool, "counts");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    ///
    /// # Errors
    /// [`RenderError`] listing the tools that cannot be rendered for this
    /// format even in its looser form (each a [`FormatError`] with path, rule
    /// and source); its [`partial`](RenderError::partial) holds the other tools.
    pub fn schemas_in(&self, format: Format) -> Result<ToolSchemas, RenderError> {
        self.schemas_with(format, OnRefusal::Fallback)
    }

    /// [`schemas_in`](Self::schemas_in) with the choice of what to do with a
    /// tool that cannot take the format's strictest form ([`OnRefusal`]).
    /// Cached per format and mode.
    ///
    /// # Errors
    /// [`RenderError`] listing the tools left out; with [`OnRefusal::Refuse`]
    /// that includes every tool that would have fallen back.
    pub fn schemas_with(
        &self,
        format: Format,
        on_refusal: OnRefusal,
    ) -> Result<ToolSchemas, RenderError> {
        let key = (format, on_refusal);
        if let Some(hit) = self.rendered.get(key) {
            return hit;
        }
        let rendered = format::render_all(self.specs(), format, on_refusal);
        self.rendered.put(key, rendered.clone());
        rendered
    }

    /// Every tool that cannot be rendered for one of `formats`, even in the
    /// format's looser form, with the reason; empty when all render. Run it at
    /// start-up to fail early. (Tools that fall back are not errors: see
    /// [`ToolSchemas::fallbacks`], or refuse them with [`OnRefusal::Refuse`].)
    pub fn check_formats(&self, formats: &[Format]) -> Vec<FormatError> {
        formats
            .iter()
            .filter_map(|f| self.schemas_in(*f).err())
            .flat_map(|e| e.errors.iter().cloned().collect::<Vec<_>>())
            .collect()
    }
}

/// Per-registry cache of renderings, one entry per format and refusal mode;
/// the registry clears it whenever its set of tools changes.
#[derive(Default)]
pub(crate) struct RenderCache {
    slots: RwLock<Vec<(CacheKey, Rendered)>>,
}

type CacheKey = (Format, OnRefusal);

impl RenderCache {
    /// Forgets every rendering (the tools changed).
    pub(crate) fn clear(&mut self) {
        self.slots
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner)
            .clear();
    }

    fn get(&self, format: CacheKey) -> Option<Rendered> {
        let slots = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        slots
            .iter()
            .find(|(f, _)| *f == format)
            .map(|(_, r)| r.clone())
    }

    fn put(&self, format: CacheKey, rendered: Rendered) {
        let mut slots = self.slots.write().unwrap_or_else(PoisonError::into_inner);
        if !slots.iter().any(|(f, _)| *f == format) {
            slots.push((format, rendered));
        }
    }
}

impl Clone for RenderCache {
    fn clone(&self) -> Self {
        let slots = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        Self {
            slots: RwLock::new(slots.clone()),
        }
    }
}

impl fmt::Debug for RenderCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let slots = self.slots.read().unwrap_or_else(PoisonError::into_inner);
        f.debug_struct("RenderCache")
            .field(
                "formats",
                &slots.iter().map(|(f, _)| *f).collect::<Vec<_>>(),
            )
            .finish()
    }
}
