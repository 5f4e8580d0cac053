//! The read cache: identical read-only calls within one trace answered from
//! a short-lived, bounded cache (issue 27), so a model that reads the same
//! file or runs the same search twice in a turn does not pay twice.
//!
//! ```
//! use std::time::Duration;
//! use tool_core::read_cache::{ReadCache, ReadCacheLimits};
//! use tool_core::ToolContext;
//!
//! let cache = ReadCache::new(ReadCacheLimits::default().with_ttl(Duration::from_secs(10)));
//! let ctx = ToolContext::new().with_trace_id("trace-1").with_state(cache);
//! // registry.execute("read_file", args, &ctx) twice: the second answer comes
//! // from the cache, with `metadata.cached == true`.
//! assert!(ctx.state::<ReadCache>().is_some());
//! ```
//!
//! # What is cached
//! A host turns the cache on by putting a [`ReadCache`] in the context
//! ([`ToolContext::with_state`]); without one nothing changes. The execute
//! pipeline then answers a call from the cache when all of these hold:
//! - the tool is `read_only`, `idempotent` and `concurrency_safe` and not
//!   `open_world` (the file tools `read_file`, `list_dir`, `glob_files`,
//!   `grep_content`, `read_images`; not `job_output`, whose answer moves on,
//!   nor `web_fetch`, which keeps its own cache);
//! - the call has a trace id (the cache is per trace) and no `<secret>`
//!   placeholder was substituted into its arguments;
//! - an earlier call in the same trace had the same tool, the same arguments
//!   (as the tool received them: repaired, approved) and the same page URL,
//!   ended without an error, and its entry is younger than the TTL;
//! - the entry's fingerprint ([`ReadCache::with_fingerprint`], the file
//!   tools give the stamp of the path they were asked for) is unchanged;
//! - the host's bypass check ([`ReadCache::with_bypass`]) lets it: the file
//!   tools keep out searches and listings of a folder unless a content
//!   index that watches the workspace vouches that nothing in it changed.
//!
//! # Invalidation
//! Every call of a tool that is not `read_only` (`write_file`, `edit_file`,
//! `bash_command`, `agent`, ...: a shell command may write anything) empties
//! the whole cache before it runs and again after it ends, whatever its
//! outcome, in every trace (traces may share a workspace). A host or tool
//! that learns of a change some other way calls [`ReadCache::invalidate`]
//! (the file tools' write orchestrator does after each write, and their
//! read-before-write check does when it finds a file changed on disk). A
//! read that was running while the cache was emptied does not store its
//! answer. Changes made outside the tools (a person's editor, a background
//! job) are seen at once when they change the fingerprint; with the file
//! tools' fingerprint and bypass, that is every change a later uncached
//! call would see.
//!
//! # Identity
//! A cached answer is the uncached one: the same output, error, notes,
//! attachments and metadata, plus `metadata.cached = true` so a host can
//! tell (the model-facing text is unchanged). The pipeline's later stages
//! (output budget, statistics, events) run on it as on any answer.
//!
//! # Bounds
//! [`ReadCacheLimits`]: at most 256 entries and 8 MiB (the JSON size of the
//! arguments and the answer) in all, an answer over 1 MiB is not kept, and
//! an entry lives 30 s; past a bound the oldest entries go first.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use crate::result::{ToolResult, meta};
use crate::tool::context::ToolContext;

/// Entries kept at most (all traces together): 256.
pub const DEFAULT_MAX_ENTRIES: usize = 256;
/// Bytes kept at most (all traces together): 8 MiB, counted as the JSON
/// size of each entry's arguments and answer.
pub const DEFAULT_MAX_BYTES: usize = 8 << 20;
/// Largest answer kept: 1 MiB (JSON size); a larger one is not cached.
pub const DEFAULT_MAX_ENTRY_BYTES: usize = 1 << 20;
/// How long an entry answers: 30 s.
pub const DEFAULT_TTL: Duration = Duration::from_secs(30);

/// The bounds of a [`ReadCache`] (defaults: the constants of this module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ReadCacheLimits {
    /// Entries at most ([`DEFAULT_MAX_ENTRIES`]).
    pub max_entries: usize,
    /// Bytes at most ([`DEFAULT_MAX_BYTES`]).
    pub max_bytes: usize,
    /// Largest entry ([`DEFAULT_MAX_ENTRY_BYTES`]).
    pub max_entry_bytes: usize,
    /// Lifetime of an entry ([`DEFAULT_TTL`]).
    pub ttl: Duration,
}

impl Default for ReadCacheLimits {
    fn default() -> Self {
        Self {
            max_entries: DEFAULT_MAX_ENTRIES,
            max_bytes: DEFAULT_MAX_BYTES,
            max_entry_bytes: DEFAULT_MAX_ENTRY_BYTES,
            ttl: DEFAULT_TTL,
        }
    }
}

impl ReadCacheLimits {
    /// These limits with entries living `ttl`.
    #[must_use]
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// These limits with at most `entries` entries and `bytes` bytes.
    #[must_use]
    pub fn with_size(mut self, entries: usize, bytes: usize) -> Self {
        self.max_entries = entries;
        self.max_bytes = bytes;
        self
    }
}

/// A fingerprint of what a call's answer depends on, computed when the
/// answer is stored and again before it is reused: a different value (or
/// `None` now) means the entry is stale. Arguments: the context, the tool
/// name and the arguments the tool received.
pub type Fingerprint =
    dyn Fn(&ToolContext, &str, &Map<String, Value>) -> Option<Vec<u8>> + Send + Sync;

/// Whether a call must neither be answered from the cache nor stored in it
/// (`true`), asked before its fingerprint: for answers no fingerprint can
/// vouch for. Arguments as for [`Fingerprint`].
pub type Bypass = dyn Fn(&ToolContext, &str, &Map<String, Value>) -> bool + Send + Sync;

/// The short-lived cache of read-only answers (see the [module docs](self)).
/// Put one in a context with [`ToolContext::with_state`]; clones of the
/// context share it.
pub struct ReadCache {
    limits: ReadCacheLimits,
    fingerprint: Option<Arc<Fingerprint>>,
    bypass: Option<Arc<Bypass>>,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Bumped by every invalidation; an answer computed across one is not stored.
    generation: u64,
    entries: HashMap<String, Entry>,
    /// Keys, oldest first (may name entries already gone).
    order: VecDeque<String>,
    bytes: usize,
}

struct Entry {
    result: ToolResult,
    stored: Instant,
    size: usize,
    fingerprint: Option<Vec<u8>>,
}

impl std::fmt::Debug for ReadCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let entries = self.inner.lock().map_or(0, |i| i.entries.len());
        f.debug_struct("ReadCache")
            .field("limits", &self.limits)
            .field("entries", &entries)
            .finish_non_exhaustive()
    }
}

impl Default for ReadCache {
    fn default() -> Self {
        Self::new(ReadCacheLimits::default())
    }
}

/// Where a call stands with the cache, decided before it runs.
pub(crate) enum Plan {
    /// Not cacheable and not a write: nothing to do.
    Bypass,
    /// A write: empty the cache before and after.
    Invalidate,
    /// Answered.
    Hit(ToolResult),
    /// Not there: store the answer under `key` unless the cache was emptied since `generation`.
    Miss {
        key: String,
        generation: u64,
        fingerprint: Option<Vec<u8>>,
    },
}

impl ReadCache {
    /// An empty cache with `limits`.
    pub fn new(limits: ReadCacheLimits) -> Self {
        Self {
            limits,
            fingerprint: None,
            bypass: None,
            inner: Mutex::new(Inner::default()),
        }
    }

    /// This cache with `fingerprint` checked on every reuse (see [`Fingerprint`]).
    #[must_use]
    pub fn with_fingerprint(
        mut self,
        fingerprint: impl Fn(&ToolContext, &str, &Map<String, Value>) -> Option<Vec<u8>>
        + Send
        + Sync
        + 'static,
    ) -> Self {
        self.fingerprint = Some(Arc::new(fingerprint));
        self
    }

    /// This cache with `bypass` asked first for every cacheable call: when
    /// it answers `true` the call runs as without a cache and its answer is
    /// not kept (see [`Bypass`]; the file tools' folder searches without an
    /// index to vouch for the folder).
    #[must_use]
    pub fn with_bypass(
        mut self,
        bypass: impl Fn(&ToolContext, &str, &Map<String, Value>) -> bool + Send + Sync + 'static,
    ) -> Self {
        self.bypass = Some(Arc::new(bypass));
        self
    }

    /// The limits.
    pub fn limits(&self) -> ReadCacheLimits {
        self.limits
    }

    /// Entries held now.
    pub fn len(&self) -> usize {
        self.inner.lock().map_or(0, |i| i.entries.len())
    }

    /// Whether no entry is held.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Empties the cache (every trace), and keeps answers computed while
    /// this ran from being stored.
    pub fn invalidate(&self) {
        if let Ok(mut inner) = self.inner.lock() {
            inner.generation = inner.generation.wrapping_add(1);
            inner.entries.clear();
            inner.order.clear();
            inner.bytes = 0;
        }
    }

    /// [`invalidate`](Self::invalidate) on the cache of `ctx`, if it has one.
    pub fn invalidate_context(ctx: &ToolContext) {
        if let Some(cache) = ctx.state::<ReadCache>() {
            cache.invalidate();
        }
    }

    /// Whether the tool with `flags` may be answered from the cache.
    pub fn cacheable(flags: &tool_rules::ToolFlags) -> bool {
        flags.read_only && flags.idempotent && flags.concurrency_safe && !flags.open_world
    }

    /// Decides for one call before it runs.
    pub(crate) fn plan(
        &self,
        ctx: &ToolContext,
        flags: &tool_rules::ToolFlags,
        tool: &str,
        args: &Map<String, Value>,
        secrets_used: bool,
    ) -> Plan {
        if !flags.read_only {
            self.invalidate();
            return Plan::Invalidate;
        }
        let Some(trace) = ctx.trace_id() else {
            return Plan::Bypass;
        };
        if !Self::cacheable(flags) || secrets_used {
            return Plan::Bypass;
        }
        if self.bypass.as_ref().is_some_and(|b| b(ctx, tool, args)) {
            return Plan::Bypass;
        }
        let Ok(args_text) = serde_json::to_string(args) else {
            return Plan::Bypass;
        };
        let key = format!(
            "{}\u{0}{tool}\u{0}{}\u{0}{args_text}",
            trace.replace('\u{0}', ""),
            ctx.page_url().unwrap_or("")
        );
        let fingerprint = self.fingerprint.as_ref().and_then(|f| f(ctx, tool, args));
        let Ok(mut inner) = self.inner.lock() else {
            return Plan::Bypass;
        };
        let fresh = inner
            .entries
            .get(&key)
            .map(|e| e.stored.elapsed() < self.limits.ttl && e.fingerprint == fingerprint);
        match fresh {
            Some(true) => {
                if let Some(e) = inner.entries.get(&key) {
                    let mut result = e.result.clone();
                    result
                        .metadata
                        .insert(meta::CACHED.to_owned(), Value::Bool(true));
                    return Plan::Hit(result);
                }
            }
            Some(false) => {
                if let Some(e) = inner.entries.remove(&key) {
                    inner.bytes = inner.bytes.saturating_sub(e.size);
                }
            }
            None => {}
        }
        Plan::Miss {
            key,
            generation: inner.generation,
            fingerprint,
        }
    }

    /// Stores `result` after a [`Plan::Miss`] (an error answer, one too
    /// large, or one computed while the cache was emptied is not kept).
    pub(crate) fn store(
        &self,
        key: String,
        generation: u64,
        fingerprint: Option<Vec<u8>>,
        result: &ToolResult,
    ) {
        if result.error.is_some() {
            return;
        }
        let size = key.len() + serde_json::to_vec(result).map_or(usize::MAX, |v| v.len());
        if size > self.limits.max_entry_bytes || size > self.limits.max_bytes {
            return;
        }
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.generation != generation {
            return;
        }
        if let Some(old) = inner.entries.remove(&key) {
            inner.bytes = inner.bytes.saturating_sub(old.size);
        }
        // Drop expired and then the oldest entries until the new one fits.
        while inner.entries.len() >= self.limits.max_entries.max(1)
            || inner.bytes + size > self.limits.max_bytes
        {
            let Some(oldest) = inner.order.pop_front() else {
                break;
            };
            if let Some(gone) = inner.entries.remove(&oldest) {
                inner.bytes = inner.bytes.saturating_sub(gone.size);
            }
        }
        if self.limits.max_entries == 0 {
            return;
        }
        inner.order.retain(|k| k != &key);
        inner.order.push_back(key.clone());
        inner.bytes += size;
        inner.entries.insert(
            key,
            Entry {
                result: result.clone(),
                stored: Instant::now(),
                size,
                fingerprint,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(read_only: bool) -> tool_rules::ToolFlags {
        tool_rules::ToolFlags {
            read_only,
            idempotent: true,
            concurrency_safe: true,
            ..Default::default()
        }
    }

    fn args(path: &str) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("file_path".into(), Value::from(path));
        m
    }

    fn miss(plan: Plan) -> (String, u64, Option<Vec<u8>>) {
        match plan {
            Plan::Miss {
                key,
                generation,
                fingerprint,
            } => (key, generation, fingerprint),
            _ => panic!("expected a miss"),
        }
    }

    #[test]
    fn a_stored_answer_is_reused_in_its_trace_only_and_marked() {
        let cache = ReadCache::default();
        let ctx = ToolContext::new().with_trace_id("t1");
        let (k, g, f) = miss(cache.plan(&ctx, &flags(true), "read_file", &args("a"), false));
        cache.store(k, g, f, &ToolResult::ok("alpha"));
        match cache.plan(&ctx, &flags(true), "read_file", &args("a"), false) {
            Plan::Hit(r) => {
                assert_eq!(r.output, "alpha");
                assert_eq!(r.metadata[meta::CACHED], true);
            }
            _ => panic!("expected a hit"),
        }
        let other = ToolContext::new().with_trace_id("t2");
        miss(cache.plan(&other, &flags(true), "read_file", &args("a"), false));
        miss(cache.plan(&ctx, &flags(true), "read_file", &args("b"), false));
        assert!(matches!(
            cache.plan(&ctx, &flags(true), "read_file", &args("a"), true),
            Plan::Bypass
        ));
        let untraced = ToolContext::new();
        assert!(matches!(
            cache.plan(&untraced, &flags(true), "read_file", &args("a"), false),
            Plan::Bypass
        ));
    }

    #[test]
    fn a_write_empties_it_and_an_answer_computed_across_the_write_is_not_kept() {
        let cache = ReadCache::default();
        let ctx = ToolContext::new().with_trace_id("t1");
        let (k, g, f) = miss(cache.plan(&ctx, &flags(true), "read_file", &args("a"), false));
        assert!(matches!(
            cache.plan(&ctx, &flags(false), "write_file", &args("a"), false),
            Plan::Invalidate
        ));
        cache.store(k, g, f, &ToolResult::ok("stale"));
        assert_eq!(cache.len(), 0);
    }

    #[test]
    fn bounds_hold_entries_bytes_ttl_and_errors() {
        let cache = ReadCache::new(ReadCacheLimits::default().with_size(2, 1 << 20));
        let ctx = ToolContext::new().with_trace_id("t1");
        for p in ["a", "b", "c"] {
            let (k, g, f) = miss(cache.plan(&ctx, &flags(true), "read_file", &args(p), false));
            cache.store(k, g, f, &ToolResult::ok(p));
        }
        assert_eq!(cache.len(), 2);
        miss(cache.plan(&ctx, &flags(true), "read_file", &args("a"), false));
        let (k, g, f) = miss(cache.plan(&ctx, &flags(true), "read_file", &args("e"), false));
        cache.store(
            k,
            g,
            f,
            &ToolResult::error(crate::ErrorKind::InvalidArguments, "no such file"),
        );
        miss(cache.plan(&ctx, &flags(true), "read_file", &args("e"), false));
        let big = ToolResult::ok("x".repeat(DEFAULT_MAX_ENTRY_BYTES + 1));
        let (k, g, f) = miss(cache.plan(&ctx, &flags(true), "read_file", &args("big"), false));
        cache.store(k, g, f, &big);
        miss(cache.plan(&ctx, &flags(true), "read_file", &args("big"), false));
        let short = ReadCache::new(ReadCacheLimits::default().with_ttl(Duration::ZERO));
        let (k, g, f) = miss(short.plan(&ctx, &flags(true), "read_file", &args("a"), false));
        short.store(k, g, f, &ToolResult::ok("a"));
        miss(short.plan(&ctx, &flags(true), "read_file", &args("a"), false));
    }

    #[test]
    fn a_bypassed_call_is_neither_answered_nor_stored() {
        let cache = ReadCache::default().with_bypass(|_, tool, _| tool == "folder_search");
        let ctx = ToolContext::new().with_trace_id("t");
        for tool in ["folder_search", "read_file"] {
            let plan = cache.plan(&ctx, &flags(true), tool, &args("a"), false);
            match tool {
                "folder_search" => assert!(matches!(plan, Plan::Bypass)),
                _ => assert!(matches!(plan, Plan::Miss { .. })),
            }
        }
    }

    #[test]
    fn a_changed_fingerprint_is_a_miss() {
        let stamp = Arc::new(std::sync::atomic::AtomicU8::new(1));
        let seen = stamp.clone();
        let cache = ReadCache::default().with_fingerprint(move |_, _, _| {
            Some(vec![seen.load(std::sync::atomic::Ordering::SeqCst)])
        });
        let ctx = ToolContext::new().with_trace_id("t1");
        let (k, g, f) = miss(cache.plan(&ctx, &flags(true), "read_file", &args("a"), false));
        cache.store(k, g, f, &ToolResult::ok("one"));
        assert!(matches!(
            cache.plan(&ctx, &flags(true), "read_file", &args("a"), false),
            Plan::Hit(_)
        ));
        stamp.store(2, std::sync::atomic::Ordering::SeqCst);
        miss(cache.plan(&ctx, &flags(true), "read_file", &args("a"), false));
    }
}
