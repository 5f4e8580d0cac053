//! [`RegistryView`]: a filtered window on a [`LiveRegistry`] that follows its
//! changes, with deferred tools and the `tool_search` tool that loads them.
//!
//! ```
//! use serde_json::{json, Map, Value};
//! use tool_core::format::Format;
//! use tool_core::{LiveRegistry, RegistryView, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};
//!
//! let tool = |name: &str, description: &str| {
//!     let spec = ToolSpec::new(name, description, json!({"type": "object"}));
//!     Tool::new(spec, |_: Map<String, Value>, _| async { ToolResult::ok("done") }).unwrap()
//! };
//! let live = LiveRegistry::new(ToolRegistry::new());
//! live.update(|r| {
//!     r.register(tool("read_file", "Read a file."))?;
//!     r.register(tool("github__create_issue", "Open an issue in a repository."))?;
//!     r.register(tool("github__merge_pull_request", "Merge a pull request."))
//! })?;
//!
//! // Only GitHub's tools, and those deferred: a session starts with `tool_search` alone.
//! let view = RegistryView::new(live.clone()).allow(["github__*"]).defer(["*"]);
//! assert_eq!(view.names(), ["github__create_issue", "github__merge_pull_request", "tool_search"]);
//! let first = view.schemas_for(Format::Json, Some("s1"))?;
//! assert_eq!(first.as_array().unwrap().len(), 1);
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let ctx = ToolContext::new().with_trace_id("s1");
//! let found = view.execute("tool_search", json!({"query": "open an issue"}), &ctx).await;
//! assert!(found.output.contains("github__create_issue"), "{}", found.output);
//! // Out of view: unknown, and suggestions come from the view only.
//! let outside = view.execute("read_file", json!({}), &ctx).await;
//! assert_eq!(outside.error.unwrap().kind, tool_core::ErrorKind::UnknownTool);
//! # });
//! // The next rendering for trace s1 has the loaded tool after `tool_search`.
//! let next = view.schemas_for(Format::Json, Some("s1"))?;
//! assert_eq!(next[1]["name"], "github__create_issue");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # What is in a view
//!
//! A tool is in the view when every rule admits it. Rules are added by the
//! builder methods and each narrows the view; a view built from another
//! (`view.clone().deny(..)`) keeps the other's rules: views compose.
//!
//! - [`allow`](RegistryView::allow): the name matches one of the patterns;
//! - [`deny`](RegistryView::deny): the name matches none of them;
//! - [`kinds`](RegistryView::kinds): the [`ToolKind`] is one of these;
//! - [`tags`](RegistryView::tags): the tool has at least one of these tags;
//! - [`read_only`](RegistryView::read_only): the tool is `read_only`;
//! - [`without`](RegistryView::without): the name is none of these.
//!
//! Name patterns are [`NamePattern`]s: `*` stands for any run of characters
//! (`github__*`, `*_file`, `*`), everything else is literal.
//!
//! # Deferred tools and `tool_search`
//!
//! [`defer`](RegistryView::defer) marks tools whose schemas are not sent
//! until asked for. A view with deferred tools has one more tool,
//! [`TOOL_SEARCH`] (always loaded; it replaces a registry tool of that name),
//! which finds tools by `select:a,b` or by text (BM25, see
//! [`search`](crate::search)) and *loads* the matches for the rest of the
//! session: the trace id of the call's context (calls without a trace id
//! share one session, as the read ledger's are). Renderings for a trace
//! ([`schemas_for`](RegistryView::schemas_for)) list the always-loaded
//! tools in name order, then `tool_search`, then the loaded tools in the
//! order they were loaded: a new load appends, so the previous turn's list
//! is a prefix of the next one and a provider's prompt cache stays warm.
//! Calls to a deferred tool that is not loaded are still accepted by name
//! (it is in the view; a model may know the name from a search result).
//!
//! By default a view keeps the loaded sets in its own memory (at most
//! [`MAX_SESSIONS`] sessions). A view built with
//! [`with_state_store`](RegistryView::with_state_store) keeps each trace's
//! loaded set in a [`StateStore`] instead (space [`LOADED_SPACE`], owner
//! the trace id), so views in other processes that share the store (a
//! `tool serve --state redis://…` replica, an agent run resumed on another
//! worker) list the same tools in the same order; see there.
//!
//! Hosts without sessions (MCP's stateless era) put [`InlineSchemas`] in the
//! context: `tool_search` then answers with the matches' full definitions
//! and records no load.
//!
//! For Anthropic, [`Format::AnthropicToolSearch`] renders the view the
//! other way: every tool, the deferred ones with `"defer_loading": true`,
//! and Anthropic's own server-side search tool in place of `tool_search`.
//!
//! # What is built when
//!
//! The view materialises its tools once per registry version (an
//! `Arc<ToolRegistry>` holding the tools in the view; tools are shared, not
//! copied). Its search index is built on the first search and from then on
//! follows the registry: a search at a new version first removes, adds and
//! re-indexes the tools that left, came or changed since the version the
//! index was at ([`SearchIndex::insert`], [`SearchIndex::remove`]), instead
//! of indexing every tool again. Tool lists are rendered once per version,
//! format and loaded set and then shared ([`schemas_for`](RegistryView::schemas_for)).

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock, Weak};

use serde_json::{Value, json};
use tokio::sync::watch;

use crate::args::ToolArgs;
use crate::format::{
    Format, OnRefusal, RenderError, ToolCall, ToolSchemas, render_tool, render_tool_with_fallback,
};
use crate::layer::{Layers, ToolLayer};
use crate::registry::live::LiveRegistry;
use crate::registry::{OnConflict, ToolRegistry};
use crate::result::{ErrorKind, ToolResult};
use crate::search::{
    DEFAULT_MAX_RESULTS, MAX_QUERY_LEN, MAX_RESULTS_LIMIT, Query, SearchHit, SearchIndex,
};
use crate::state::{StateError, StateErrorKind, StateKey, StateStore};
use crate::tool::Tool;
use crate::tool::context::ToolContext;
use crate::tool::spec::{ToolKind, ToolSpec};

mod search_tool;

use search_tool::search_tool;

/// Name of the built-in search tool a view with deferred tools adds.
pub const TOOL_SEARCH: &str = "tool_search";

/// Most sessions (trace ids) whose loaded tools a view remembers in its
/// memory: 4096. The session loaded longest ago is forgotten first (its
/// next rendering starts again from the always-loaded tools). A view with a
/// [state store](RegistryView::with_state_store) keeps only calls without a
/// trace id in memory; the store's own bounds hold for the traces.
pub const MAX_SESSIONS: usize = 4096;

/// The [`StateStore`] space of the loaded sets of a view built with
/// [`with_state_store`](RegistryView::with_state_store): `loaded`.
pub const LOADED_SPACE: &str = "loaded";

/// The one field of a trace's map in [`LOADED_SPACE`]: `order`, whose value
/// is the JSON array of the loaded tool names in load order.
const LOADED_FIELD: &str = "order";

/// Most compare-and-set rounds one load makes against a shared store before
/// it gives up (32): each lost round means another process loaded tools for
/// the same trace in between, so this is only reached under a storm.
const MAX_LOAD_ROUNDS: usize = 32;

/// Most tool lists (per format and loaded set) a view with deferred tools
/// keeps rendered for one registry version: 256; beyond that the kept ones
/// are dropped and rendered again when asked for.
pub const MAX_CACHED_LISTS: usize = 256;

/// A tool-name pattern: `*` matches any run of characters (also none),
/// every other character itself. Case-sensitive, matched against the whole
/// name: `github__*`, `*_file`, `read_file`, `*`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamePattern {
    text: String,
}

impl NamePattern {
    /// The pattern `text`. Any text is a pattern; one with characters tool
    /// names cannot have simply matches nothing.
    pub fn new(text: impl Into<String>) -> Self {
        Self { text: text.into() }
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Whether `name` matches the whole pattern.
    pub fn matches(&self, name: &str) -> bool {
        let mut parts = self.text.split('*');
        let first = parts.next().unwrap_or_default();
        let Some(mut rest) = name.strip_prefix(first) else {
            return false;
        };
        let parts: Vec<&str> = parts.collect();
        let Some((last, middle)) = parts.split_last() else {
            return rest.is_empty();
        };
        for part in middle {
            match rest.find(part) {
                Some(at) => rest = &rest[at + part.len()..],
                None => return false,
            }
        }
        rest.len() >= last.len() && rest.ends_with(last)
    }
}

impl fmt::Display for NamePattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl From<&str> for NamePattern {
    fn from(s: &str) -> Self {
        Self::new(s)
    }
}

impl From<String> for NamePattern {
    fn from(s: String) -> Self {
        Self::new(s)
    }
}

/// Context state that makes `tool_search` answer with the full definitions
/// of its matches, rendered in this format, instead of loading them (for
/// hosts without sessions, such as MCP's stateless 2026-07-28 era).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InlineSchemas(pub Format);

/// Context state naming the session whose loaded tools `tool_search`
/// changes, in place of the context's trace id (an MCP server puts one per
/// client session when the base context has no trace id).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchSession(pub String);

#[derive(Debug, Clone)]
enum Rule {
    Allow(Vec<NamePattern>),
    Deny(Vec<NamePattern>),
    Kinds(Vec<ToolKind>),
    Tags(Vec<String>),
    ReadOnly,
    Without(Vec<String>),
    /// The page URL (`None`: no page) whose URL-scoped tools are admitted.
    Page(Option<String>),
}

impl Rule {
    fn admits(&self, spec: &ToolSpec) -> bool {
        match self {
            Self::Allow(p) => p.iter().any(|p| p.matches(&spec.name)),
            Self::Deny(p) => !p.iter().any(|p| p.matches(&spec.name)),
            Self::Kinds(k) => k.contains(&spec.kind),
            Self::Tags(t) => spec.tags.iter().any(|tag| t.contains(tag)),
            Self::ReadOnly => spec.flags.read_only,
            Self::Without(n) => !n.contains(&spec.name),
            Self::Page(url) => {
                // The patterns were checked when the tool was built.
                let patterns: Vec<crate::governance::url_pattern::UrlPattern> = spec
                    .url_patterns
                    .iter()
                    .filter_map(|p| crate::governance::url_pattern::UrlPattern::parse(p).ok())
                    .collect();
                crate::governance::url_pattern::any_match(&patterns, url.as_deref())
            }
        }
    }
}

/// What a view is made of: copied into every view built from it.
#[derive(Debug, Clone)]
struct Config {
    live: LiveRegistry,
    rules: Vec<Rule>,
    defer: Vec<NamePattern>,
    keep: Vec<NamePattern>,
    /// The view's middleware, run outside the registry's.
    layers: Layers,
    /// Where the loaded sets of traces are kept when not in memory.
    shared: Option<SharedLoads>,
}

/// A view's loaded sets in a [`StateStore`]: per trace, one JSON array of
/// tool names in load order, changed by compare-and-set only.
#[derive(Debug, Clone)]
struct SharedLoads {
    store: Arc<dyn StateStore>,
    workspace: PathBuf,
}

impl SharedLoads {
    fn key(&self, trace: &str) -> Result<StateKey, StateError> {
        StateKey::new(LOADED_SPACE, trace, &self.workspace)
    }

    /// The stored value and the names it holds.
    fn read(&self, key: &StateKey) -> Result<(Option<String>, Vec<String>), StateError> {
        let raw = self.store.get(key, LOADED_FIELD)?;
        let names = match raw.as_deref() {
            None => Vec::new(),
            Some(text) => serde_json::from_str(text).map_err(|e| {
                StateError::new(
                    StateErrorKind::Corrupt,
                    format!(
                        "the loaded tools of trace `{}` in the state store are not a JSON list \
                         of names ({e}); delete the key or let it expire",
                        key.owner()
                    ),
                )
            })?,
        };
        Ok((raw, names))
    }

    /// Appends those of `names` not stored yet, in their order, with
    /// compare-and-set rounds: a load by another process in between is
    /// read again and kept, never overwritten. Returns the names added.
    fn append(&self, trace: &str, names: &[&str]) -> Result<Vec<String>, StateError> {
        let key = self.key(trace)?;
        for _ in 0..MAX_LOAD_ROUNDS {
            let (raw, mut list) = self.read(&key)?;
            let mut added = Vec::new();
            for name in names {
                if !list.iter().any(|n| n == name) && !added.iter().any(|n: &String| n == name) {
                    added.push((*name).to_owned());
                }
            }
            if added.is_empty() {
                return Ok(added);
            }
            list.extend(added.iter().cloned());
            let new = serde_json::to_string(&list).map_err(|e| {
                StateError::new(StateErrorKind::Invalid, format!("cannot encode names: {e}"))
            })?;
            if self
                .store
                .compare_and_set(&key, LOADED_FIELD, raw.as_deref(), Some(&new))?
            {
                return Ok(added);
            }
        }
        Err(StateError::new(
            StateErrorKind::Io,
            format!(
                "the loaded tools of trace `{trace}` changed {MAX_LOAD_ROUNDS} times while this \
                 load was written; nothing was loaded by it, search again"
            ),
        ))
    }
}

/// A cheap, filtered view of a [`LiveRegistry`] that follows its changes
/// (see the [module docs](self)): what it admits, which of those are
/// deferred, and per session which deferred tools are loaded.
///
/// Cloning shares everything, loaded tools included; the builder methods
/// make a new view (the rules of this one plus one more, its own loaded
/// sets) over the same live registry.
#[derive(Clone)]
pub struct RegistryView {
    inner: Arc<Inner>,
}

struct Inner {
    config: Config,
    materialized: Mutex<Option<Arc<Materialized>>>,
    sessions: Mutex<Sessions>,
    loads: watch::Sender<u64>,
    /// The search index, kept across versions: built on the first search,
    /// then updated with each version's added, removed and replaced tools.
    index: RwLock<Option<Indexed>>,
}

/// The view's search index and the version (and tools) it indexes.
struct Indexed {
    version: u64,
    registry: Arc<ToolRegistry>,
    index: SearchIndex,
}

/// The view at one registry version.
struct Materialized {
    version: u64,
    registry: Arc<ToolRegistry>,
    /// Deferred tools in the view.
    deferred: HashSet<String>,
    /// Renderings of a view with deferred tools: (format, refusal mode, loaded tools) → tool list.
    lists: Mutex<HashMap<ListKey, Rendered>>,
}

/// What a view's rendering depends on besides the version: format, refusal mode, loaded tools.
type ListKey = (Format, OnRefusal, Vec<String>);

/// A rendering of the view's tool list, or the error listing the tools left out.
type Rendered = Result<ToolSchemas, RenderError>;

#[derive(Default)]
struct Sessions {
    loaded: HashMap<String, Loaded>,
    /// Session keys, oldest first, for forgetting beyond [`MAX_SESSIONS`].
    order: VecDeque<String>,
}

/// The tools one session loaded: in load order, and as a set.
#[derive(Default)]
struct Loaded {
    order: Vec<String>,
    set: HashSet<String>,
}

impl fmt::Debug for RegistryView {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RegistryView")
            .field("rules", &self.inner.config.rules)
            .field("defer", &self.inner.config.defer)
            .field("tools", &self.names())
            .finish()
    }
}

impl From<LiveRegistry> for RegistryView {
    fn from(live: LiveRegistry) -> Self {
        Self::new(live)
    }
}

impl From<ToolRegistry> for RegistryView {
    fn from(registry: ToolRegistry) -> Self {
        Self::new(registry)
    }
}

impl From<&LiveRegistry> for RegistryView {
    fn from(live: &LiveRegistry) -> Self {
        Self::new(live.clone())
    }
}

impl RegistryView {
    /// A view of every tool of `live`, nothing deferred.
    pub fn new(live: impl Into<LiveRegistry>) -> Self {
        Self::from_config(Config {
            live: live.into(),
            rules: Vec::new(),
            defer: Vec::new(),
            keep: Vec::new(),
            layers: Layers::default(),
            shared: None,
        })
    }

    fn from_config(config: Config) -> Self {
        Self {
            inner: Arc::new(Inner {
                config,
                materialized: Mutex::new(None),
                sessions: Mutex::new(Sessions::default()),
                loads: watch::Sender::new(0),
                index: RwLock::new(None),
            }),
        }
    }

    fn with(&self, change: impl FnOnce(&mut Config)) -> Self {
        let mut config = self.inner.config.clone();
        change(&mut config);
        Self::from_config(config)
    }

    /// Keeps only tools whose name matches one of `patterns` (an empty list keeps none).
    #[must_use]
    pub fn allow(self, patterns: impl IntoIterator<Item = impl Into<NamePattern>>) -> Self {
        let p = patterns.into_iter().map(Into::into).collect();
        self.with(|c| c.rules.push(Rule::Allow(p)))
    }

    /// Leaves out tools whose name matches one of `patterns`.
    #[must_use]
    pub fn deny(self, patterns: impl IntoIterator<Item = impl Into<NamePattern>>) -> Self {
        let p = patterns.into_iter().map(Into::into).collect();
        self.with(|c| c.rules.push(Rule::Deny(p)))
    }

    /// Keeps only tools of one of `kinds`.
    #[must_use]
    pub fn kinds(self, kinds: impl IntoIterator<Item = ToolKind>) -> Self {
        let k = kinds.into_iter().collect();
        self.with(|c| c.rules.push(Rule::Kinds(k)))
    }

    /// Keeps only tools with at least one of `tags` ([`ToolSpec::tags`]).
    #[must_use]
    pub fn tags(self, tags: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let t = tags.into_iter().map(Into::into).collect();
        self.with(|c| c.rules.push(Rule::Tags(t)))
    }

    /// Keeps only `read_only` tools.
    #[must_use]
    pub fn read_only(self) -> Self {
        self.with(|c| c.rules.push(Rule::ReadOnly))
    }

    /// Keeps only the tools offered on `page_url`: those without
    /// `url_patterns`, and those whose patterns match it (no page: the
    /// unscoped ones alone). This is the rule `execute`'s URL-scope stage
    /// applies to a context with that `page_url`, so a model is offered
    /// what it may call there (as MCP `tools/list` does). A second call
    /// replaces the page of the first.
    #[must_use]
    pub fn on_page(self, page_url: Option<&str>) -> Self {
        let page = page_url.map(str::to_owned);
        self.with(|c| {
            c.rules.retain(|r| !matches!(r, Rule::Page(_)));
            c.rules.push(Rule::Page(page));
        })
    }

    /// Leaves out the tools called `names` (exact names).
    #[must_use]
    pub fn without(self, names: &[&str]) -> Self {
        let n = names.iter().map(|s| (*s).to_owned()).collect();
        self.with(|c| c.rules.push(Rule::Without(n)))
    }

    /// Defers the tools whose name matches one of `patterns` (`["*"]`: all):
    /// their names stay known, their schemas are sent only once
    /// `tool_search` loaded them. Adds [`TOOL_SEARCH`] to the view.
    #[must_use]
    pub fn defer(self, patterns: impl IntoIterator<Item = impl Into<NamePattern>>) -> Self {
        let p: Vec<NamePattern> = patterns.into_iter().map(Into::into).collect();
        self.with(|c| c.defer.extend(p))
    }

    /// Keeps the tools matching `patterns` loaded although a
    /// [`defer`](Self::defer) pattern matches them (the few core tools of a
    /// `defer(["*"])` view).
    #[must_use]
    pub fn keep_loaded(self, patterns: impl IntoIterator<Item = impl Into<NamePattern>>) -> Self {
        let p: Vec<NamePattern> = patterns.into_iter().map(Into::into).collect();
        self.with(|c| c.keep.extend(p))
    }

    /// Adds a middleware [`ToolLayer`] around every call made through this
    /// view (its `execute*` methods and the registry of
    /// [`registry`](Self::registry)). A view's layers run in the order
    /// added, outside the registry's own
    /// ([`ToolRegistry::with_layer`]); other views of the same registry do
    /// not get them.
    #[must_use]
    pub fn layer(self, layer: impl ToolLayer) -> Self {
        self.shared_layer(Arc::new(layer))
    }

    /// Adds a middleware layer shared with other views or registries (as [`layer`](Self::layer)).
    #[must_use]
    pub fn shared_layer(self, layer: Arc<dyn ToolLayer>) -> Self {
        self.with(|c| c.layers.0.push(layer))
    }

    /// Keeps the loaded sets of traces in `store` (space [`LOADED_SPACE`],
    /// owner the trace id, one field `order` holding the JSON array of
    /// names in load order, in `workspace`: the absolute folder the
    /// deployment works in, so a trace id reused in another project starts
    /// empty) instead of this view's memory. Every view in any process that
    /// shares the store and workspace then lists the same loaded tools for
    /// a trace, in the same load order. Loads are compare-and-set rounds
    /// on that one value (at most 32), so two processes loading for one
    /// trace at once both keep their tools. The set lives for the store's
    /// [`lifetime`](StateStore::lifetime) after its last load (one day by
    /// default), and the store's bounds apply instead of [`MAX_SESSIONS`]
    /// (the file store's 10 000 keys per space, least recently written
    /// forgotten first; Redis's TTLs). Calls without a trace id keep their
    /// one shared set in memory. Every [`loaded`](Self::loaded) and
    /// [`schemas_for`](Self::schemas_for) with a trace id reads the store
    /// (one `get`), so they block for a store round trip; `tool_search`
    /// runs on the blocking pool then. [`subscribe_loads`](Self::subscribe_loads)
    /// still reports this process's loads only.
    ///
    /// # Errors
    /// [`StateErrorKind::Invalid`] when `workspace` is not an absolute path
    /// of at most 4096 bytes.
    pub fn with_state_store(
        self,
        store: Arc<dyn StateStore>,
        workspace: impl AsRef<Path>,
    ) -> Result<Self, StateError> {
        let workspace = workspace.as_ref().to_path_buf();
        StateKey::new(LOADED_SPACE, "-", &workspace)?;
        let shared = SharedLoads { store, workspace };
        Ok(self.with(|c| c.shared = Some(shared)))
    }

    /// Whether the loaded sets of traces are kept in a [`StateStore`]
    /// ([`with_state_store`](Self::with_state_store)).
    pub fn has_state_store(&self) -> bool {
        self.inner.config.shared.is_some()
    }

    /// The live registry this view follows.
    pub fn live(&self) -> &LiveRegistry {
        &self.inner.config.live
    }

    /// Whether this view (with its rules) admits `spec`.
    pub fn admits(&self, spec: &ToolSpec) -> bool {
        self.inner.config.rules.iter().all(|r| r.admits(spec))
    }

    fn defers(&self, name: &str) -> bool {
        let c = &self.inner.config;
        name != TOOL_SEARCH
            && c.defer.iter().any(|p| p.matches(name))
            && !c.keep.iter().any(|p| p.matches(name))
    }

    /// The view at the live registry's current version, built on first use per version.
    fn current(&self) -> Arc<Materialized> {
        let (snapshot, version) = self.inner.config.live.versioned();
        let mut slot = self
            .inner
            .materialized
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(m) = slot.as_ref().filter(|m| m.version == version) {
            return Arc::clone(m);
        }
        let m = Arc::new(self.materialize(&snapshot, version));
        *slot = Some(Arc::clone(&m));
        m
    }

    fn materialize(&self, snapshot: &Arc<ToolRegistry>, version: u64) -> Materialized {
        let outside: HashSet<&str> = snapshot
            .specs()
            .filter(|s| !self.admits(s))
            .map(|s| s.name.as_str())
            .collect();
        let deferred: HashSet<String> = snapshot
            .names()
            .into_iter()
            .filter(|n| !outside.contains(n) && self.defers(n))
            .map(str::to_owned)
            .collect();
        let layers = &self.inner.config.layers.0;
        let registry = if outside.is_empty() && deferred.is_empty() && layers.is_empty() {
            Arc::clone(snapshot)
        } else {
            let mut r = ToolRegistry::clone(snapshot);
            if !layers.is_empty() {
                let own = std::mem::take(&mut r.layers);
                r.layers = layers.iter().cloned().chain(own).collect();
            }
            for name in &outside {
                r.remove(name);
            }
            if !deferred.is_empty() {
                // Registered under its fixed, valid name: cannot fail.
                let _ = r.register_with(
                    search_tool(Arc::downgrade(&self.inner)),
                    OnConflict::Override,
                );
            }
            Arc::new(r)
        };
        Materialized {
            version,
            registry,
            deferred,
            lists: Mutex::new(HashMap::new()),
        }
    }

    /// The tools in the view now, as a registry of their own (shared tools,
    /// the registry's settings and statistics), with `tool_search` when
    /// tools are deferred. Rebuilt only when the live registry changed.
    pub fn registry(&self) -> Arc<ToolRegistry> {
        Arc::clone(&self.current().registry)
    }

    /// The live registry's version this view was last built at (see [`LiveRegistry::versioned`]).
    pub fn version(&self) -> u64 {
        self.current().version
    }

    /// Names of the tools in the view, in name order (`tool_search` included when present).
    pub fn names(&self) -> Vec<String> {
        self.registry()
            .names()
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// Whether `name` is in the view.
    pub fn contains(&self, name: &str) -> bool {
        self.current().registry.contains(name)
    }

    /// Whether `name` is in the view and deferred.
    pub fn is_deferred(&self, name: &str) -> bool {
        self.current().deferred.contains(name)
    }

    /// The deferred tools in the view, in name order.
    pub fn deferred(&self) -> Vec<String> {
        let mut names: Vec<String> = self.current().deferred.iter().cloned().collect();
        names.sort_unstable();
        names
    }

    /// Searches the view's tools (`tool_search` itself left out) without
    /// loading anything: the best `limit` BM25 matches of `query`.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.search_in(&self.current(), query, limit)
    }

    /// [`search`](Self::search) over the view at `m`'s version: the index
    /// is brought to that version first, by building it (the first time)
    /// or by applying the tools added, removed and replaced since the
    /// version it indexes ([`SearchIndex::insert`], [`SearchIndex::remove`]).
    fn search_in(&self, m: &Materialized, query: &str, limit: usize) -> Vec<SearchHit> {
        {
            let slot = self
                .inner
                .index
                .read()
                .unwrap_or_else(PoisonError::into_inner);
            if let Some(ix) = slot.as_ref().filter(|ix| ix.version == m.version) {
                return ix.index.search(query, limit);
            }
        }
        let mut slot = self
            .inner
            .index
            .write()
            .unwrap_or_else(PoisonError::into_inner);
        match slot.as_mut() {
            Some(ix) if ix.version == m.version => {}
            Some(ix) => {
                apply_changes(&mut ix.index, &ix.registry, &m.registry);
                ix.version = m.version;
                ix.registry = Arc::clone(&m.registry);
            }
            None => {
                *slot = Some(Indexed {
                    version: m.version,
                    registry: Arc::clone(&m.registry),
                    index: SearchIndex::build(searchable(&m.registry)),
                });
            }
        }
        slot.as_ref()
            .map(|ix| ix.index.search(query, limit))
            .unwrap_or_default()
    }

    /// The deferred tools loaded for `trace_id` (`None`: calls without a
    /// trace id), in the order they were loaded. Tools that left the view
    /// since are not listed. With a [state store](Self::with_state_store)
    /// that fails, none are listed (a `warn` event says why): use
    /// [`try_loaded`](Self::try_loaded) to see the error.
    pub fn loaded(&self, trace_id: Option<&str>) -> Vec<String> {
        self.try_loaded(trace_id).unwrap_or_else(|e| {
            tracing::warn!(target: "tool_core", "loaded tools not read: {e}");
            Vec::new()
        })
    }

    /// [`loaded`](Self::loaded), with the state store's error.
    ///
    /// # Errors
    /// The [`StateStore`]'s error when the view keeps its loaded sets in
    /// one ([`with_state_store`](Self::with_state_store)) and `trace_id` is
    /// `Some`: unreachable, or a stored value that is not a list of names
    /// ([`StateErrorKind::Corrupt`]).
    pub fn try_loaded(&self, trace_id: Option<&str>) -> Result<Vec<String>, StateError> {
        let m = self.current();
        let in_view = |names: &[String]| -> Vec<String> {
            names
                .iter()
                .filter(|n| m.deferred.contains(*n))
                .cloned()
                .collect()
        };
        if let (Some(shared), Some(trace)) = (&self.inner.config.shared, trace_id) {
            let (_, names) = shared.read(&shared.key(trace)?)?;
            return Ok(in_view(&names));
        }
        let sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        Ok(sessions
            .loaded
            .get(trace_id.unwrap_or_default())
            .map(|names| in_view(&names.order))
            .unwrap_or_default())
    }

    /// Loads `names` for `trace_id` (as `tool_search` does): deferred tools
    /// of the view not yet loaded are appended in the order given. Returns
    /// the names newly loaded; names that are not deferred tools of the
    /// view, or already loaded, are skipped. With a
    /// [state store](Self::with_state_store) that fails, nothing is loaded
    /// (a `warn` event says why): use [`try_load`](Self::try_load) to see
    /// the error.
    pub fn load(&self, trace_id: Option<&str>, names: &[&str]) -> Vec<String> {
        self.try_load(trace_id, names).unwrap_or_else(|e| {
            tracing::warn!(target: "tool_core", "tools not loaded: {e}");
            Vec::new()
        })
    }

    /// [`load`](Self::load), with the state store's error.
    ///
    /// # Errors
    /// The [`StateStore`]'s error when the view keeps its loaded sets in
    /// one and `trace_id` is `Some`: unreachable, full, a stored value that
    /// is not a list of names, or 32 compare-and-set rounds lost to other
    /// loads of the same trace ([`StateErrorKind::Io`]). Nothing of this
    /// load is stored then.
    pub fn try_load(
        &self,
        trace_id: Option<&str>,
        names: &[&str],
    ) -> Result<Vec<String>, StateError> {
        let m = self.current();
        let names: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| m.deferred.contains(*n))
            .collect();
        let added = match (&self.inner.config.shared, trace_id) {
            (Some(shared), Some(trace)) if !names.is_empty() => shared.append(trace, &names)?,
            (Some(_), Some(_)) => Vec::new(),
            _ => self.load_in_memory(trace_id.unwrap_or_default(), &names),
        };
        if !added.is_empty() {
            self.inner.loads.send_modify(|n| *n += 1);
        }
        Ok(added)
    }

    /// [`load`](Self::load) into this view's memory (at most
    /// [`MAX_SESSIONS`] sessions) of names already known to be deferred.
    fn load_in_memory(&self, key: &str, names: &[&str]) -> Vec<String> {
        let mut added = Vec::new();
        let mut sessions = self
            .inner
            .sessions
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let sessions = &mut *sessions;
        if !sessions.loaded.contains_key(key) {
            if sessions.order.len() >= MAX_SESSIONS
                && let Some(oldest) = sessions.order.pop_front()
            {
                sessions.loaded.remove(&oldest);
            }
            sessions.order.push_back(key.to_owned());
        }
        let list = sessions.loaded.entry(key.to_owned()).or_default();
        for name in names {
            if list.set.insert((*name).to_owned()) {
                list.order.push((*name).to_owned());
                added.push((*name).to_owned());
            }
        }
        added
    }

    /// A receiver marked changed whenever some session's loaded set grows
    /// (an MCP server turns it into `notifications/tools/list_changed`).
    pub fn subscribe_loads(&self) -> watch::Receiver<u64> {
        self.inner.loads.subscribe()
    }

    /// The view's tool list for `format` as seen by calls without a trace
    /// id: [`schemas_for`](Self::schemas_for) with `None`.
    ///
    /// # Errors
    /// As [`ToolRegistry::schemas_in`], for the tools listed.
    pub fn schemas_in(&self, format: Format) -> Result<ToolSchemas, RenderError> {
        self.schemas_for(format, None)
    }

    /// The view's tool list for `format` for session `trace_id`: the
    /// always-loaded tools in name order, then `tool_search`, then the tools
    /// loaded for that trace in load order (see the [module docs](self));
    /// for [`Format::AnthropicToolSearch`] every tool of the view (see
    /// there), whatever the trace loaded. A view with nothing deferred
    /// gives its registry's cached rendering; otherwise the list is
    /// rendered once per registry version, format and loaded set (only the
    /// tools listed), kept (at most [`MAX_CACHED_LISTS`] per version) and
    /// shared by later calls, not copied.
    ///
    /// # Errors
    /// As [`ToolRegistry::schemas_in`], for the tools listed; the partial
    /// rendering keeps the same order.
    pub fn schemas_for(
        &self,
        format: Format,
        trace_id: Option<&str>,
    ) -> Result<ToolSchemas, RenderError> {
        let loaded = self.loaded(trace_id);
        self.render(format, &loaded, OnRefusal::Fallback)
    }

    /// [`schemas_in`](Self::schemas_in) with the choice of what to do with
    /// a tool that cannot take the format's strictest form (as
    /// [`ToolRegistry::schemas_with`]).
    ///
    /// # Errors
    /// As [`ToolRegistry::schemas_with`], for the tools listed.
    pub fn schemas_with(
        &self,
        format: Format,
        on_refusal: OnRefusal,
    ) -> Result<ToolSchemas, RenderError> {
        let loaded = self.loaded(None);
        self.render(format, &loaded, on_refusal)
    }

    /// The tool list a new session starts with: the always-loaded tools and
    /// `tool_search`, nothing loaded (what MCP's stateless era lists).
    ///
    /// # Errors
    /// As [`schemas_for`](Self::schemas_for).
    pub fn schemas_new_session(&self, format: Format) -> Result<ToolSchemas, RenderError> {
        self.render(format, &[], OnRefusal::Fallback)
    }

    /// The tool list for `format` with `loaded` appended (see
    /// [`schemas_for`](Self::schemas_for)). A view with nothing deferred
    /// lists what its registry does, taken from the registry's cache. Other
    /// lists are rendered once per registry version, format and loaded set
    /// (each listed tool rendered on its own, not the whole registry) and
    /// kept, at most [`MAX_CACHED_LISTS`] per version; a rendering from the
    /// cache is shared, not copied.
    fn render(
        &self,
        format: Format,
        loaded: &[String],
        on_refusal: OnRefusal,
    ) -> Result<ToolSchemas, RenderError> {
        let m = self.current();
        if m.deferred.is_empty() {
            return m.registry.schemas_with(format, on_refusal);
        }
        let server_search = format.server_search().is_some();
        // Anthropic's server search lists every tool, whatever was loaded here.
        let loaded = if server_search { &[] } else { loaded };
        let mut lists = m.lists.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (format, on_refusal, loaded.to_vec());
        if let Some(hit) = lists.get(&key) {
            return hit.clone();
        }
        let order: Vec<&str> = if server_search {
            m.registry
                .names()
                .into_iter()
                .filter(|n| *n != TOOL_SEARCH)
                .collect()
        } else {
            let mut order: Vec<&str> = m
                .registry
                .names()
                .into_iter()
                .filter(|n| *n != TOOL_SEARCH && !m.deferred.contains(*n))
                .collect();
            order.push(TOOL_SEARCH);
            order.extend(loaded.iter().map(String::as_str));
            order
        };
        let mut tools = Vec::with_capacity(order.len());
        let mut fallbacks = Vec::new();
        let mut errors = Vec::new();
        for name in order {
            let Some(tool) = m.registry.get(name) else {
                continue;
            };
            let rendered = match on_refusal {
                OnRefusal::Refuse => render_tool(tool.spec(), format).map(|t| (t, None)),
                OnRefusal::Fallback => render_tool_with_fallback(tool.spec(), format),
            };
            match rendered {
                Ok((mut item, fallback)) => {
                    if server_search
                        && m.deferred.contains(name)
                        && let Some(o) = item.as_object_mut()
                    {
                        o.insert("defer_loading".to_owned(), Value::Bool(true));
                    }
                    tools.push(item);
                    fallbacks.extend(fallback);
                }
                Err(e) => errors.push(e),
            }
        }
        let schemas = ToolSchemas::from_parts(crate::format::tool_list(format, tools), fallbacks);
        let rendered = finish(schemas, Some(errors).filter(|e| !e.is_empty()));
        if lists.len() >= MAX_CACHED_LISTS {
            lists.clear();
        }
        lists.insert(key, rendered.clone());
        rendered
    }

    /// Executes one call on the view: [`ToolRegistry::execute`] on the
    /// tools in the view ([`registry`](Self::registry)), so a tool outside
    /// it is `unknown_tool` and the did-you-mean names only tools inside it.
    pub async fn execute(
        &self,
        name: &str,
        args: impl Into<ToolArgs>,
        ctx: &ToolContext,
    ) -> ToolResult {
        self.registry().execute(name, args, ctx).await
    }

    /// [`ToolRegistry::execute_call`] on the tools in the view.
    pub async fn execute_call(&self, call: &ToolCall, ctx: &ToolContext) -> ToolResult {
        self.registry().execute_call(call, ctx).await
    }

    /// [`ToolRegistry::execute_batch`] on the tools in the view.
    pub async fn execute_batch<N, A>(
        &self,
        calls: Vec<(N, A)>,
        ctx: &ToolContext,
    ) -> Vec<ToolResult>
    where
        N: AsRef<str>,
        A: Into<ToolArgs>,
    {
        self.registry().execute_batch(calls, ctx).await
    }

    /// [`ToolRegistry::execute_calls`] on the tools in the view: one turn's
    /// provider calls, grouped as a batch, each handled as by `execute_call`.
    pub async fn execute_calls(&self, calls: &[ToolCall], ctx: &ToolContext) -> Vec<ToolResult> {
        self.registry().execute_calls(calls, ctx).await
    }
}

/// The tools of a view's registry that its search index holds: all but `tool_search`.
fn searchable(registry: &ToolRegistry) -> impl Iterator<Item = &ToolSpec> {
    registry.specs().filter(|s| s.name != TOOL_SEARCH)
}

/// Updates `index` (of the tools of `old`) to the tools of `new`: one walk
/// over both name-ordered lists; a tool of both is indexed again only when
/// its spec changed (another `Arc` holding a different spec).
fn apply_changes(index: &mut SearchIndex, old: &ToolRegistry, new: &ToolRegistry) {
    let mut old = searchable(old).peekable();
    let mut new = searchable(new).peekable();
    let mut added: Vec<&ToolSpec> = Vec::new();
    loop {
        match (old.peek(), new.peek()) {
            (Some(a), Some(b)) => match a.name.cmp(&b.name) {
                std::cmp::Ordering::Less => {
                    index.remove(&a.name);
                    old.next();
                }
                std::cmp::Ordering::Greater => {
                    added.push(b);
                    new.next();
                }
                std::cmp::Ordering::Equal => {
                    if !std::ptr::eq(*a, *b) && a != b {
                        added.push(b);
                    }
                    old.next();
                    new.next();
                }
            },
            (Some(a), None) => {
                index.remove(&a.name);
                old.next();
            }
            (None, Some(b)) => {
                added.push(b);
                new.next();
            }
            (None, None) => break,
        }
    }
    index.insert_all(added);
}

fn finish(
    schemas: ToolSchemas,
    errors: Option<Vec<crate::format::FormatError>>,
) -> Result<ToolSchemas, RenderError> {
    match errors {
        None => Ok(schemas),
        Some(errors) => Err(RenderError {
            errors: errors.into(),
            partial: schemas,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_whole_names() {
        let p = NamePattern::new;
        assert!(p("github__*").matches("github__create_issue"));
        assert!(!p("github__*").matches("gitlab__create_issue"));
        assert!(p("*_file").matches("read_file"));
        assert!(!p("*_file").matches("read_files"));
        assert!(p("*").matches("anything"));
        assert!(p("a*b*c").matches("abc"));
        assert!(p("a*b*c").matches("a__b__c"));
        assert!(!p("a*b*c").matches("a__c__b"));
        assert!(!p("ab*ba").matches("aba"), "the parts may not overlap");
        assert!(p("read_file").matches("read_file"));
        assert!(!p("read_file").matches("read_file2"));
    }
}
