//! The web tools: `web_fetch` (one page as Markdown, text, an image or a
//! PDF) and `web_search` (title/URL/snippet hits from a configured search
//! provider). Both are kind `network` with `openWorldHint: true`
//! (cross-cutting §5).
//!
//! # Which hosts `web_fetch` may reach
//! Every URL, and every hop of a redirect, passes the [`NetworkPolicy`] of
//! the context's [`WebConfig`] — the same type, rules and `--allow-net`
//! patterns as the sandbox's proxy:
//! 1. the URL must match an allowed pattern (`*.docs.rs`,
//!    `https://github.com/rust-lang/**`, `*` for any host; a pattern without
//!    a port allows ports 80 and 443 only);
//! 2. the host is resolved **once** on a blocking thread; loopback, private,
//!    link-local and the other special-purpose addresses are dropped from
//!    the answer (SSRF; the table is in [`tool_core::governance::network`]),
//!    and none left means a refusal;
//! 3. the connection goes to exactly those vetted addresses: the HTTP client
//!    has no resolver of its own but a table of pinned answers
//!    (`client::PinnedResolver`), so a DNS answer that changes between the
//!    check and the connection (DNS rebinding) cannot redirect it, and a
//!    name the policy never saw cannot be connected to at all. Proxies from
//!    the environment are ignored for the same reason.
//!
//! Redirects are followed by this module, hop by hop, only while each hop
//! passes all three steps; a URL seen twice is a redirect loop, and more
//! than [`FetchLimits::max_redirects`] hops is refused.
//!
//! Without a [`WebConfig`] in the context the policy allows nothing: every
//! fetch is refused with a message naming the `--allow-net` pattern a person
//! can add. The `tool` CLI gives `web_fetch` the `--allow-net` patterns of
//! the sandbox (off by default; see README "Web tools"), so one decision
//! governs both the commands' network and the model's fetches. Neither tool
//! asks for a confirmation of its own: the allowlist is the person's
//! decision, and `web_search` reaches only the provider a person configured.
//!
//! # Bounds (defaults in [`FetchLimits`])
//! Body bytes read per response (10 MiB; a longer text body is cut there and
//! said so, a longer image or PDF is refused), time for the whole fetch
//! (30 s) and between two reads of the body (10 s), connection time (10 s),
//! redirect hops (10), retries on 429 and 5xx (2, waiting what `Retry-After`
//! asks up to 10 s), characters returned (`max_length`, default 20 000, at
//! most 50 000).
//!
//! # Cache
//! A successful fetch is kept for 15 minutes per trace (the context's trace
//! id; calls without one share the untraced entry) in memory, in the
//! [`WebConfig`] (so in the process: a `tool batch` run, an MCP server, an
//! agent). At most 64 pages and 32 MiB are kept; the oldest go first. The
//! cache is not in the state store: a page is far larger than the store's
//! 64 KiB values, and a copy of remote pages on disk is not worth the
//! privacy cost for a 15-minute reuse.
//!
//! # Dependencies and why
//! - `reqwest` (no default features; `rustls` through this crate's `tls`
//!   feature): the HTTP client the workspace already uses (tool-agent, MCP);
//!   its `dns_resolver` hook carries the pinned, vetted addresses.
//! - `htmd`: HTML to Markdown. Chosen over `html2md` (unmaintained since
//!   2023, GPL-3.0+) and `html-to-markdown-rs` (a large dependency tree for
//!   features not needed here): maintained, Apache-2.0, parses with
//!   `html5ever` (the browsers' HTML5 parsing algorithm, so broken markup
//!   reads as a browser reads it), turndown.js's rules.
//! - `url`: the WHATWG URL parser the policy matches with.
//! - `httpdate`: `Retry-After` in its HTTP-date form (RFC 9110 §10.2.3).

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tool_core::NetworkPolicy;

mod body;
mod cache;
mod client;
pub mod fetch;
pub mod search;

pub use body::{DEFAULT_MAX_LENGTH, MAX_LENGTH_LIMIT};
pub use cache::{CACHE_LIFETIME, MAX_CACHED_BYTES, MAX_CACHED_PAGES};
pub use fetch::web_fetch;
pub use search::{
    BraveSearch, SearchError, SearchHit, SearchProvider, SearchQuery, SearxngSearch, web_search,
};

/// The bounds of one `web_fetch` call. [`Default`] gives the documented
/// values; hosts and tests change single fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct FetchLimits {
    /// Most body bytes read from one response: 10 MiB. A text or HTML body
    /// is cut there (the result says so); an image or a PDF over it is
    /// refused, since a cut one is unreadable.
    pub max_body_bytes: u64,
    /// Time for the whole call (every hop, retry and wait): 30 s.
    pub total_timeout: Duration,
    /// Longest silence while waiting for response headers or the next piece
    /// of the body: 10 s (a server that never answers is given up after it).
    pub read_timeout: Duration,
    /// Time to open a connection: 10 s.
    pub connect_timeout: Duration,
    /// Most redirect hops followed: 10.
    pub max_redirects: usize,
    /// Retries after a 429 or 5xx answer: 2 (three attempts in all).
    pub max_retries: u32,
    /// Longest `Retry-After` waited for: 10 s. A server asking for longer
    /// gets no retry; the result names the time it asked for.
    pub max_retry_wait: Duration,
    /// Wait before a retry when the answer has no `Retry-After`: 500 ms,
    /// doubled for each further retry.
    pub retry_backoff: Duration,
}

impl Default for FetchLimits {
    fn default() -> Self {
        Self {
            max_body_bytes: 10 * 1024 * 1024,
            total_timeout: Duration::from_secs(30),
            read_timeout: Duration::from_secs(10),
            connect_timeout: Duration::from_secs(10),
            max_redirects: 10,
            max_retries: 2,
            max_retry_wait: Duration::from_secs(10),
            retry_backoff: Duration::from_millis(500),
        }
    }
}

/// What the web tools read from a [`ToolContext`](tool_core::ToolContext):
/// the [`NetworkPolicy`] `web_fetch` obeys, its [`FetchLimits`], the search
/// provider of `web_search`, and the per-trace page cache and HTTP client
/// (shared by every context holding this value).
///
/// ```
/// use tool_builtins::web::WebConfig;
/// use tool_core::{NetworkPolicy, ToolContext};
///
/// let policy = NetworkPolicy::from_patterns(["*.docs.rs", "doc.rust-lang.org"])?;
/// let ctx = ToolContext::new().with_state(WebConfig::new(policy));
/// assert!(ctx.state::<WebConfig>().is_some());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Default)]
pub struct WebConfig {
    network: NetworkPolicy,
    limits: FetchLimits,
    search: Option<Arc<dyn SearchProvider>>,
    shared: Arc<Shared>,
}

/// The parts every clone of a [`WebConfig`] shares.
#[derive(Debug, Default)]
struct Shared {
    cache: cache::FetchCache,
    client: OnceLock<Result<client::FetchClient, String>>,
}

impl WebConfig {
    /// `web_fetch` limited to `network` (private, loopback and link-local
    /// addresses stay refused unless the policy allows them with
    /// [`NetworkPolicy::allow_private`]), default limits, no search provider.
    pub fn new(network: NetworkPolicy) -> Self {
        Self {
            network,
            ..Self::default()
        }
    }

    /// The same with other limits (a fresh cache and client).
    #[must_use]
    pub fn with_limits(mut self, limits: FetchLimits) -> Self {
        self.limits = limits;
        self.shared = Arc::default();
        self
    }

    /// The same with `provider` answering `web_search`.
    #[must_use]
    pub fn with_search(mut self, provider: Arc<dyn SearchProvider>) -> Self {
        self.search = Some(provider);
        self
    }

    /// The same with the search provider the environment configures
    /// ([`search::provider_from_env`]), when it configures one. A
    /// configuration that names a provider but is incomplete or wrong (e.g.
    /// `AGENT_TOOLS_SEARCH=brave` without `BRAVE_SEARCH_API_KEY`) does not
    /// stop the host: `web_search` then answers every call with that message.
    #[must_use]
    pub fn with_search_from_env(self) -> Self {
        match search::provider_from_env() {
            Ok(Some(provider)) => self.with_search(provider),
            Ok(None) => self,
            Err(message) => self.with_search(Arc::new(search::Misconfigured(message))),
        }
    }

    /// The policy `web_fetch` obeys.
    pub fn network(&self) -> &NetworkPolicy {
        &self.network
    }

    /// The limits of one fetch.
    pub fn limits(&self) -> &FetchLimits {
        &self.limits
    }

    /// The configured search provider, if any.
    pub fn search_provider(&self) -> Option<&Arc<dyn SearchProvider>> {
        self.search.as_ref()
    }

    fn cache(&self) -> &cache::FetchCache {
        &self.shared.cache
    }

    /// The HTTP client of `web_fetch` (built once per config).
    fn client(&self) -> Result<&client::FetchClient, String> {
        self.shared
            .client
            .get_or_init(|| client::FetchClient::new(&self.limits))
            .as_ref()
            .map_err(Clone::clone)
    }
}
