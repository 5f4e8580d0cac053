//! `web_search`: a query sent to the configured [`SearchProvider`], the hits
//! returned as a numbered title / URL / snippet list (and as
//! `metadata.results`).
//!
//! # Providers
//! Two are built in, each speaking its service's documented API:
//! - [`BraveSearch`]: the Brave Search API, `GET /res/v1/web/search` with
//!   the key in the `X-Subscription-Token` header; hits from `web.results`
//!   (`title`, `url`, `description`).
//! - [`SearxngSearch`]: a SearXNG instance's JSON API, `GET /search?q=…&format=json`
//!   (the instance must list `json` under `search.formats` in its
//!   `settings.yml`; it answers 403 otherwise); hits from `results`
//!   (`title`, `url`, `content`).
//!
//! A host may implement [`SearchProvider`] for any other service.
//!
//! # Configuration ([`provider_from_env`])
//! | variable | meaning |
//! |---|---|
//! | `AGENT_TOOLS_SEARCH` | `brave` or `searxng`; unset: Brave when its key is set, else SearXNG when its URL is set, else none |
//! | `BRAVE_SEARCH_API_KEY` | the Brave Search API key (required for `brave`) |
//! | `BRAVE_SEARCH_URL` | another base URL for the Brave API (default `https://api.search.brave.com`) |
//! | `SEARXNG_URL` | the SearXNG instance's base URL, e.g. `http://localhost:8888` (required for `searxng`) |
//!
//! Without a provider, `web_search` answers with an error naming these
//! variables. The key is read by the host process (cross-cutting §7: it is
//! withheld from sandboxed commands like every secret-looking variable) and
//! never shown: every text the tool returns is masked with
//! [`StreamMasker::for_context_and_env`] (`<withheld:BRAVE_SEARCH_API_KEY>`),
//! whatever a provider's error echoes.
//!
//! The provider's endpoint was chosen by a person, so it is contacted
//! whatever `web_fetch`'s network policy says (a self-hosted SearXNG on
//! `localhost` is the common case); proxies from the environment
//! (`HTTPS_PROXY`) are honoured for it.
//!
//! # Bounds
//! Query: 1 to [`MAX_QUERY_CHARS`] characters (Brave's documented maximum).
//! Results: 1 to [`MAX_RESULTS`] (default [`DEFAULT_RESULTS`]). Domain
//! lists: at most [`MAX_DOMAINS`] entries each. A provider's answer: at most
//! [`MAX_ANSWER_BYTES`], within [`SEARCH_TIMEOUT`]. Titles are cut at 200
//! and snippets at 500 characters.

mod brave;
mod searxng;

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use serde::Serialize;
use tool_core::truncate::StreamMasker;
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, tool};
use tool_rules::text::{Clip, clip};

pub use brave::{BRAVE_BASE_URL, BraveSearch};
pub use searxng::SearxngSearch;

use super::WebConfig;

/// Longest query, in characters: 400 (the Brave Search API's limit for `q`).
pub const MAX_QUERY_CHARS: usize = 400;
/// Most results one call returns: 20 (the Brave Search API's `count` maximum).
pub const MAX_RESULTS: usize = 20;
/// Results returned when `max_results` is not given: 10.
pub const DEFAULT_RESULTS: usize = 10;
/// Most entries in `allowed_domains`, and in `blocked_domains`: 32.
pub const MAX_DOMAINS: usize = 32;
/// Largest provider answer read, in bytes: 4 MiB.
pub const MAX_ANSWER_BYTES: usize = 4 * 1024 * 1024;
/// Time for one provider request, answer included: 20 s.
pub const SEARCH_TIMEOUT: Duration = Duration::from_secs(20);

/// Characters of a title kept: 200.
const TITLE_CHARS: usize = 200;
/// Characters of a snippet kept: 500.
const SNIPPET_CHARS: usize = 500;

/// What to search for.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SearchQuery {
    /// The query text (1 to [`MAX_QUERY_CHARS`] characters).
    pub query: String,
    /// How many hits to ask the provider for (1 to [`MAX_RESULTS`]).
    pub count: usize,
}

impl SearchQuery {
    /// A query asking for `count` hits (clamped to 1..=[`MAX_RESULTS`]).
    pub fn new(query: impl Into<String>, count: usize) -> Self {
        Self {
            query: query.into(),
            count: count.clamp(1, MAX_RESULTS),
        }
    }
}

/// One search hit.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SearchHit {
    /// The page's title (plain text).
    pub title: String,
    /// The page's URL.
    pub url: String,
    /// The provider's extract of the page (plain text; may be empty).
    pub snippet: String,
}

/// A provider's failure: one sentence a model or person can act on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SearchError(String);

impl SearchError {
    /// An error with `message`.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SearchError {}

/// The future a [`SearchProvider`] returns.
pub type SearchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Vec<SearchHit>, SearchError>> + Send + 'a>>;

/// A web search service.
pub trait SearchProvider: Send + Sync + fmt::Debug {
    /// The provider's name in results and messages (`brave`, `searxng`).
    fn name(&self) -> &str;

    /// Runs `query`, returning at most `query.count` hits, best first.
    fn search<'a>(&'a self, query: &'a SearchQuery) -> SearchFuture<'a>;

    /// Secret values this provider holds, as `(name, value)` (e.g.
    /// `("BRAVE_SEARCH_API_KEY", key)`): masked as `<withheld:NAME>` in
    /// everything `web_search` returns. Default: none.
    fn secret_values(&self) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// The provider the environment configures (table in the [module
/// docs](self)); `Ok(None)` when it configures none.
///
/// # Errors
/// A sentence naming the variable that is missing or wrong.
pub fn provider_from_env() -> Result<Option<Arc<dyn SearchProvider>>, String> {
    let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
    let brave = || -> Result<Arc<dyn SearchProvider>, String> {
        let key = var("BRAVE_SEARCH_API_KEY").ok_or_else(|| {
            "AGENT_TOOLS_SEARCH=brave needs BRAVE_SEARCH_API_KEY (a Brave Search API key)"
                .to_owned()
        })?;
        let mut provider = BraveSearch::new(key);
        if let Some(base) = var("BRAVE_SEARCH_URL") {
            provider = provider.with_base_url(&base)?;
        }
        Ok(Arc::new(provider))
    };
    let searxng = || -> Result<Arc<dyn SearchProvider>, String> {
        let base = var("SEARXNG_URL").ok_or_else(|| {
            "AGENT_TOOLS_SEARCH=searxng needs SEARXNG_URL (the instance's base URL)".to_owned()
        })?;
        Ok(Arc::new(SearxngSearch::new(&base)?))
    };
    match var("AGENT_TOOLS_SEARCH").map(|v| v.trim().to_ascii_lowercase()) {
        Some(v) if v == "brave" => brave().map(Some),
        Some(v) if v == "searxng" => searxng().map(Some),
        Some(v) => Err(format!(
            "AGENT_TOOLS_SEARCH={:?} names no search provider; use `brave` or `searxng`",
            clip(&v, Clip::chars(40))
        )),
        None if var("BRAVE_SEARCH_API_KEY").is_some() => brave().map(Some),
        None if var("SEARXNG_URL").is_some() => searxng().map(Some),
        None => Ok(None),
    }
}

/// The provider of a configuration that names one but is wrong: every
/// search fails with the configuration's message.
#[derive(Debug)]
pub(crate) struct Misconfigured(pub(crate) String);

impl SearchProvider for Misconfigured {
    fn name(&self) -> &str {
        "configuration"
    }

    fn search<'a>(&'a self, _: &'a SearchQuery) -> SearchFuture<'a> {
        let message = self.0.clone();
        Box::pin(async move { Err(SearchError::new(message)) })
    }
}

/// Searches the web and returns results as a list of title, URL and snippet.
///
/// Use `web_fetch` to read a result.
///
/// # Arguments
/// * `query` - What to search for.
/// * `allowed_domains` - Only return results from these domains (subdomains included).
/// * `blocked_domains` - Never return results from these domains.
/// * `max_results` - Most results to return (default 10, at most 20).
///
/// # Examples
/// ```json
/// {"query": "tokio select cancellation safety"}
/// {"query": "rust release notes", "allowed_domains": ["blog.rust-lang.org"], "max_results": 5}
/// ```
#[tool(
    kind = "network",
    tags = ["web"],
    read_only,
    open_world,
    concurrency_safe,
    timeout = "60s"
)]
pub async fn web_search(
    query: String,
    allowed_domains: Option<Vec<String>>,
    blocked_domains: Option<Vec<String>>,
    max_results: Option<u64>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let invalid = |m: String| ToolError::new(ErrorKind::InvalidArguments, m);
    let query = query.trim().to_owned();
    let chars = query.chars().count();
    if chars == 0 {
        return Err(invalid("query is empty; say what to search for".to_owned()));
    }
    if chars > MAX_QUERY_CHARS {
        return Err(invalid(format!(
            "query has {chars} characters, over the limit of {MAX_QUERY_CHARS}; shorten it"
        )));
    }
    let wanted = match max_results {
        None => DEFAULT_RESULTS,
        Some(n) if n == 0 || n > MAX_RESULTS as u64 => {
            return Err(invalid(format!(
                "max_results is {n}; it must be from 1 to {MAX_RESULTS}"
            )));
        }
        Some(n) => usize::try_from(n).unwrap_or(MAX_RESULTS),
    };
    let allowed = domains("allowed_domains", allowed_domains).map_err(invalid)?;
    let blocked = domains("blocked_domains", blocked_domains).map_err(invalid)?;
    let Some(provider) = context
        .state::<WebConfig>()
        .and_then(|c| c.search_provider().cloned())
    else {
        return Ok(ToolResult::error(
            ErrorKind::Failed,
            "web_search has no search provider configured. A person configures one with \
             AGENT_TOOLS_SEARCH=brave and BRAVE_SEARCH_API_KEY, or AGENT_TOOLS_SEARCH=searxng and \
             SEARXNG_URL (a SearXNG instance with the JSON format enabled)",
        )
        .with_metadata(
            tool_core::meta::MetaKey::custom("failure"),
            "not_configured",
        ));
    };
    // Ask for the most the provider gives when hits may be filtered out.
    let ask = if allowed.is_empty() && blocked.is_empty() {
        wanted
    } else {
        MAX_RESULTS
    };
    let request = SearchQuery::new(query.clone(), ask);
    let searched = tokio::time::timeout(SEARCH_TIMEOUT, provider.search(&request)).await;
    let result = match searched {
        Err(_) => ToolResult::error(
            ErrorKind::Timeout,
            format!(
                "the {} search provider did not answer within {} s",
                provider.name(),
                SEARCH_TIMEOUT.as_secs()
            ),
        )
        .with_metadata(tool_core::meta::MetaKey::custom("failure"), "timeout"),
        Ok(Err(e)) => ToolResult::error(ErrorKind::Failed, format!("{}: {e}", provider.name()))
            .with_metadata(tool_core::meta::MetaKey::custom("failure"), "provider"),
        Ok(Ok(hits)) => render(&query, provider.name(), hits, &allowed, &blocked, wanted),
    };
    Ok(mask(result, provider.as_ref(), context))
}

/// A domain list argument: trimmed, lower case, a leading `*.`, `www.` or
/// scheme removed; each a host name of at most 253 bytes.
fn domains(name: &str, given: Option<Vec<String>>) -> Result<Vec<String>, String> {
    let given = given.unwrap_or_default();
    if given.len() > MAX_DOMAINS {
        return Err(format!(
            "{name} has {} entries, over the limit of {MAX_DOMAINS}",
            given.len()
        ));
    }
    let mut out = Vec::new();
    for d in given {
        let d = d.trim().to_ascii_lowercase();
        let d = d
            .strip_prefix("https://")
            .or_else(|| d.strip_prefix("http://"))
            .unwrap_or(&d);
        let d = d.split('/').next().unwrap_or_default();
        let d = d.strip_prefix("*.").unwrap_or(d);
        let d = d.strip_prefix("www.").unwrap_or(d).trim_end_matches('.');
        let host_like = !d.is_empty()
            && d.len() <= tool_core::governance::network::MAX_HOST_LEN
            && d.split('.').all(|l| {
                !l.is_empty()
                    && l.chars()
                        .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
            });
        if !host_like {
            return Err(format!(
                "{name}: {:?} is not a domain; give names such as `docs.rs` or `rust-lang.org`",
                clip(d, Clip::chars(80))
            ));
        }
        out.push(d.to_owned());
    }
    Ok(out)
}

/// Whether `url`'s host is `domain` or one of its subdomains.
fn in_domain(url: &str, domain: &str) -> bool {
    let Some(host) = url::Url::parse(url)
        .ok()
        .and_then(|u| u.host_str().map(str::to_ascii_lowercase))
    else {
        return false;
    };
    let host = host.trim_end_matches('.');
    host == domain || host.ends_with(&format!(".{domain}"))
}

/// The hits kept by the domain lists (blocked wins), at most `wanted`, as
/// a numbered list and `metadata.results`.
fn render(
    query: &str,
    provider: &str,
    hits: Vec<SearchHit>,
    allowed: &[String],
    blocked: &[String],
    wanted: usize,
) -> ToolResult {
    let total = hits.len();
    let kept: Vec<SearchHit> = hits
        .into_iter()
        .filter(|h| allowed.is_empty() || allowed.iter().any(|d| in_domain(&h.url, d)))
        .filter(|h| !blocked.iter().any(|d| in_domain(&h.url, d)))
        .map(|h| SearchHit {
            title: clip(&plain(&h.title), Clip::chars(TITLE_CHARS)).into_owned(),
            url: h.url,
            snippet: clip(&plain(&h.snippet), Clip::chars(SNIPPET_CHARS)).into_owned(),
        })
        .take(wanted)
        .collect();
    let mut text = String::new();
    for (i, h) in kept.iter().enumerate() {
        text.push_str(&format!("{}. {}\n   {}\n", i + 1, h.title, h.url));
        if !h.snippet.is_empty() {
            text.push_str(&format!("   {}\n", h.snippet));
        }
    }
    let mut result = if kept.is_empty() {
        let why = if total > 0 {
            format!(" ({total} found, none in the allowed domains or all blocked)")
        } else {
            String::new()
        };
        ToolResult::ok(format!("No results for {query:?}{why}."))
    } else {
        ToolResult::ok(text.trim_end().to_owned())
    };
    result = result
        .with_title(format!("Searched for {}", clip(query, Clip::chars(80))))
        .with_metadata(tool_core::meta::MetaKey::custom("provider"), provider)
        .with_metadata(tool_core::meta::MetaKey::custom("query"), query)
        .with_metadata(tool_core::meta::MetaKey::custom("count"), kept.len())
        .with_metadata(
            tool_core::meta::MetaKey::custom("filtered_out"),
            total.saturating_sub(kept.len()).min(total),
        )
        .with_metadata(
            tool_core::meta::MetaKey::custom("results"),
            serde_json::to_value(&kept).unwrap_or(serde_json::Value::Null),
        );
    result
}

/// Provider text as plain text: tags such as Brave's `<strong>` dropped, the
/// five XML entities and `&#39;` decoded, whitespace runs made one space.
fn plain(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if !in_tag => out.push(c),
            _ => {}
        }
    }
    let out = out
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&apos;", "'")
        .replace("&amp;", "&");
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `result` with the provider's secret values (and the context's secrets)
/// masked in its output, error message and metadata.
fn mask(mut result: ToolResult, provider: &dyn SearchProvider, ctx: &ToolContext) -> ToolResult {
    let values: Vec<(String, std::ffi::OsString)> = provider
        .secret_values()
        .into_iter()
        .map(|(name, value)| (name, value.into()))
        .collect();
    let Some(masker) = StreamMasker::for_context_and_env(ctx, &values) else {
        return result;
    };
    let masked = |text: &str| {
        let mut m = masker.clone();
        let mut out = Vec::new();
        m.push(text.as_bytes(), &mut out);
        m.finish(&mut out);
        String::from_utf8_lossy(&out).into_owned()
    };
    result.output = masked(&result.output);
    if let Some(e) = &mut result.error {
        e.message = masked(&e.message);
    }
    if !result.metadata.is_empty()
        && let Ok(text) = serde_json::to_string(&result.metadata)
    {
        let text = masked(&text);
        if let Ok(map) = serde_json::from_str(&text) {
            result.metadata = map;
        }
    }
    result
}

/// The request frame both providers share: `request` (a GET the provider
/// built, with its own headers) is sent with `Accept: application/json`
/// through `http` (the provider's client, or the reason it could not be set
/// up), and the answer read as [`read_json`] does. `service` names what was
/// unreachable in the error ("the Brave Search API").
async fn get_json<T: serde::de::DeserializeOwned>(
    provider: &str,
    service: &str,
    http: &Result<reqwest::Client, String>,
    request: impl FnOnce(&reqwest::Client) -> reqwest::RequestBuilder,
    on_status: impl FnOnce(u16) -> Option<String>,
) -> Result<T, SearchError> {
    let http = http.as_ref().map_err(|e| SearchError::new(e.clone()))?;
    let response = request(http)
        .header("Accept", "application/json")
        .send()
        .await
        .map_err(|e| SearchError::new(format!("{service} is unreachable ({e})")))?;
    read_json(provider, response, on_status).await
}

/// Reads a provider's answer: the status checked, at most
/// [`MAX_ANSWER_BYTES`] read, parsed as JSON into `T`.
async fn read_json<T: serde::de::DeserializeOwned>(
    provider: &str,
    mut response: reqwest::Response,
    on_status: impl FnOnce(u16) -> Option<String>,
) -> Result<T, SearchError> {
    let status = response.status();
    if !status.is_success() {
        let hint = on_status(status.as_u16())
            .map(|h| format!("; {h}"))
            .unwrap_or_default();
        return Err(SearchError::new(format!(
            "the {provider} search API answered {status}{hint}"
        )));
    }
    let mut body = Vec::new();
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| SearchError::new(format!("reading the {provider} answer failed: {e}")))?
    {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(SearchError::new(format!(
                "the {provider} answer is over {MAX_ANSWER_BYTES} bytes (the limit)"
            )));
        }
        body.extend_from_slice(&chunk);
    }
    serde_json::from_slice(&body).map_err(|e| {
        SearchError::new(format!(
            "the {provider} answer is not the JSON its API documents ({e})"
        ))
    })
}

/// The HTTP client of the providers: timeouts, the project's user agent.
fn http_client() -> Result<reqwest::Client, String> {
    reqwest::Client::builder()
        .user_agent(concat!(
            "agent-tools-web-search/",
            env!("CARGO_PKG_VERSION")
        ))
        .connect_timeout(Duration::from_secs(10))
        .timeout(SEARCH_TIMEOUT)
        .build()
        .map_err(|e| format!("the HTTP client could not be set up: {e}"))
}

/// `base` parsed as an http(s) base URL with a trailing `/`, so that
/// joining a relative path keeps its own path (`http://h/searx/`).
fn base_url(what: &str, base: &str) -> Result<url::Url, String> {
    let mut url = url::Url::parse(base.trim()).map_err(|e| {
        format!(
            "{what}: {:?} is not a URL ({e})",
            clip(base, Clip::chars(200))
        )
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(format!("{what}: the URL must be http:// or https://"));
    }
    if !url.path().ends_with('/') {
        let path = format!("{}/", url.path());
        url.set_path(&path);
    }
    url.set_query(None);
    url.set_fragment(None);
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_are_normalised_and_bounded() {
        assert_eq!(
            domains(
                "allowed_domains",
                Some(vec![
                    " https://www.Docs.rs/x ".into(),
                    "*.rust-lang.org".into(),
                    "crates.io.".into()
                ])
            )
            .unwrap(),
            ["docs.rs", "rust-lang.org", "crates.io"]
        );
        let e = domains("blocked_domains", Some(vec!["a b".into()])).unwrap_err();
        assert!(e.contains("is not a domain"), "{e}");
        let many = (0..=MAX_DOMAINS).map(|i| format!("d{i}.test")).collect();
        let e = domains("allowed_domains", Some(many)).unwrap_err();
        assert!(e.contains("over the limit of 32"), "{e}");
    }

    #[test]
    fn domain_matching_takes_subdomains_only() {
        assert!(in_domain("https://docs.rs/x", "docs.rs"));
        assert!(in_domain("https://a.b.docs.rs/", "docs.rs"));
        assert!(!in_domain("https://notdocs.rs/", "docs.rs"));
        assert!(!in_domain("not a url", "docs.rs"));
    }

    #[test]
    fn provider_text_becomes_plain() {
        assert_eq!(
            plain("The <strong>Rust</strong> &amp; Cargo\n book &#39;24"),
            "The Rust & Cargo book '24"
        );
    }

    #[test]
    fn filters_apply_blocked_first_and_count() {
        let hit = |u: &str| SearchHit {
            title: "t".into(),
            url: u.into(),
            snippet: String::new(),
        };
        let hits = vec![
            hit("https://docs.rs/a"),
            hit("https://spam.docs.rs/b"),
            hit("https://other.test/c"),
        ];
        let r = render(
            "q",
            "p",
            hits,
            &["docs.rs".into()],
            &["spam.docs.rs".into()],
            10,
        );
        assert_eq!(r.metadata["count"], 1);
        assert_eq!(r.metadata["filtered_out"], 2);
        assert_eq!(r.output, "1. t\n   https://docs.rs/a");
    }

    #[test]
    fn base_urls_keep_their_path() {
        let u = base_url("SEARXNG_URL", "http://h:8888/searx").unwrap();
        assert_eq!(
            u.join("search").unwrap().as_str(),
            "http://h:8888/searx/search"
        );
        assert!(base_url("SEARXNG_URL", "ftp://h/").is_err());
        assert!(base_url("SEARXNG_URL", "nope").is_err());
    }
}
