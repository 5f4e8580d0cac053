//! [`SearxngSearch`]: a SearXNG instance's JSON API.
//!
//! Request (SearXNG documentation, "Search API"): `GET
//! {base}/search?q=QUERY&format=json`; the instance answers 403 unless its
//! `settings.yml` lists `json` under `search.formats`. Answer: a JSON
//! object whose `results` array holds the hits, each with `url`, `title`
//! and `content` (the snippet). SearXNG has no count parameter: the first
//! `count` hits are kept.

use serde::Deserialize;

use super::{SearchError, SearchFuture, SearchHit, SearchProvider, SearchQuery};

/// A SearXNG instance (self-hosted, or one whose operator allows API use).
#[derive(Debug)]
pub struct SearxngSearch {
    base: url::Url,
    http: Result<reqwest::Client, String>,
}

impl SearxngSearch {
    /// The instance at `base` (e.g. `http://localhost:8888`).
    ///
    /// # Errors
    /// When `base` is not an http(s) URL.
    pub fn new(base: &str) -> Result<Self, String> {
        Ok(Self {
            base: super::base_url("SEARXNG_URL", base)?,
            http: super::http_client(),
        })
    }
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    results: Vec<Hit>,
}

#[derive(Deserialize)]
struct Hit {
    #[serde(default)]
    title: String,
    url: String,
    #[serde(default)]
    content: String,
}

impl SearchProvider for SearxngSearch {
    fn name(&self) -> &str {
        "searxng"
    }

    fn search<'a>(&'a self, query: &'a SearchQuery) -> SearchFuture<'a> {
        Box::pin(async move {
            let mut url = self
                .base
                .join("search")
                .map_err(|e| SearchError::new(format!("bad SearXNG base URL ({e})")))?;
            url.query_pairs_mut()
                .append_pair("q", &query.query)
                .append_pair("format", "json");
            let service = format!("the SearXNG instance at {}", self.base);
            let answer: Answer = super::get_json(
                "SearXNG",
                &service,
                &self.http,
                |http| http.get(url),
                |status| {
                    (status == 403).then(|| {
                        "the instance does not serve JSON: list `json` under `search.formats` in \
                         its settings.yml"
                            .to_owned()
                    })
                },
            )
            .await?;
            Ok(answer
                .results
                .into_iter()
                .take(query.count)
                .map(|h| SearchHit {
                    title: h.title,
                    url: h.url,
                    snippet: h.content,
                })
                .collect())
        })
    }
}
