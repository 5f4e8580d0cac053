//! [`BraveSearch`]: the Brave Search API's web search.
//!
//! Request (Brave Search API reference, "Web search"): `GET
//! {base}/res/v1/web/search?q=QUERY&count=N` with the headers `Accept:
//! application/json` and `X-Subscription-Token: KEY`; `count` is at most 20.
//! Answer: a JSON object whose `web.results` array holds the hits, each
//! with `title`, `url` and `description` (which may carry `<strong>`
//! highlights). An answer without `web` (no web hits) is an empty list.

use serde::Deserialize;

use super::{SearchError, SearchFuture, SearchHit, SearchProvider, SearchQuery};

/// The Brave Search API's base URL.
pub const BRAVE_BASE_URL: &str = "https://api.search.brave.com/";

/// The environment variable the key is read from, and the name it is
/// masked under.
const KEY_NAME: &str = "BRAVE_SEARCH_API_KEY";

/// The Brave Search API (a key from <https://brave.com/search/api/>).
///
/// ```
/// use tool_builtins::web::{BraveSearch, SearchProvider};
///
/// let brave = BraveSearch::new("BSA-example-key-0000");
/// assert_eq!(brave.name(), "brave");
/// // The key is never shown, not even by Debug.
/// assert!(!format!("{brave:?}").contains("BSA-example"));
/// ```
pub struct BraveSearch {
    key: String,
    /// An http(s) URL ending in `/` ([`BRAVE_BASE_URL`] or one checked by
    /// [`BraveSearch::with_base_url`]).
    base: String,
    http: Result<reqwest::Client, String>,
}

impl std::fmt::Debug for BraveSearch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BraveSearch")
            .field("base", &self.base)
            .finish_non_exhaustive()
    }
}

impl BraveSearch {
    /// The API at [`BRAVE_BASE_URL`] with `key`.
    pub fn new(key: impl Into<String>) -> Self {
        Self {
            key: key.into(),
            base: BRAVE_BASE_URL.to_owned(),
            http: super::http_client(),
        }
    }

    /// The same API at another base URL (a gateway, or a test server).
    ///
    /// # Errors
    /// When `base` is not an http(s) URL.
    pub fn with_base_url(mut self, base: &str) -> Result<Self, String> {
        self.base = super::base_url("BRAVE_SEARCH_URL", base)?.to_string();
        Ok(self)
    }
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    web: Option<Web>,
}

#[derive(Deserialize)]
struct Web {
    #[serde(default)]
    results: Vec<Hit>,
}

#[derive(Deserialize)]
struct Hit {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    description: String,
}

impl SearchProvider for BraveSearch {
    fn name(&self) -> &str {
        "brave"
    }

    fn search<'a>(&'a self, query: &'a SearchQuery) -> SearchFuture<'a> {
        Box::pin(async move {
            let mut url = url::Url::parse(&self.base)
                .and_then(|b| b.join("res/v1/web/search"))
                .map_err(|e| SearchError::new(format!("bad Brave base URL ({e})")))?;
            url.query_pairs_mut()
                .append_pair("q", &query.query)
                .append_pair("count", &query.count.to_string());
            let answer: Answer = super::get_json(
                "Brave",
                "the Brave Search API",
                &self.http,
                |http| http.get(url).header("X-Subscription-Token", &self.key),
                |status| match status {
                    401 | 403 => Some(format!("the key in {KEY_NAME} was refused")),
                    422 => Some("the API refused the query's parameters".to_owned()),
                    429 => Some("the plan's rate limit was reached; try again later".to_owned()),
                    _ => None,
                },
            )
            .await?;
            Ok(answer
                .web
                .map(|w| w.results)
                .unwrap_or_default()
                .into_iter()
                .take(query.count)
                .map(|h| SearchHit {
                    title: h.title,
                    url: h.url,
                    snippet: h.description,
                })
                .collect())
        })
    }

    fn secret_values(&self) -> Vec<(String, String)> {
        vec![(KEY_NAME.to_owned(), self.key.clone())]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_base_url_parses() {
        let base = super::super::base_url("test", BRAVE_BASE_URL).unwrap();
        assert_eq!(base.as_str(), BRAVE_BASE_URL);
    }
}
