//! Tool search: a BM25 index over tool definitions, and the `tool_search`
//! tool that finds and loads deferred tools of a [`RegistryView`](crate::RegistryView).
//!
//! ```
//! use serde_json::{json, Map, Value};
//! use tool_core::search::SearchIndex;
//! use tool_core::{Tool, ToolResult, ToolSpec};
//!
//! let specs = [
//!     ToolSpec::new("github__create_issue", "Open a new issue in a repository.", json!({"type": "object"})),
//!     ToolSpec::new("slack__post_message", "Post a message to a channel.", json!({"type": "object"})),
//! ];
//! let index = SearchIndex::build(specs.iter());
//! let hits = index.search("file a bug report as an issue", 5);
//! assert_eq!(hits[0].name, "github__create_issue");
//! assert_eq!(hits.len(), 1, "the Slack tool shares no word with the query");
//! ```
//!
//! # Ranking
//!
//! Okapi BM25 with k1 = 1.2 and b = 0.75 (Robertson and Zaragoza, "The
//! Probabilistic Relevance Framework: BM25 and Beyond", 2009), idf
//! `ln(1 + (N - df + 0.5) / (df + 0.5))` (never negative), over one document
//! per tool made of weighted fields (BM25F-style: a term's frequency is the
//! sum of its occurrences times the field's weight, and so is the document
//! length):
//!
//! | field | weight |
//! |---|---|
//! | name (split at `_`, `-`, `__`, `.`, camelCase) | [`WEIGHT_NAME`] |
//! | tags | [`WEIGHT_TAGS`] |
//! | description | [`WEIGHT_DESCRIPTION`] |
//! | parameter names | [`WEIGHT_PARAM_NAME`] |
//! | parameter descriptions | [`WEIGHT_PARAM_DESCRIPTION`] |
//!
//! Words are split at non-alphanumerics and camelCase, lower-cased,
//! function words dropped, and stemmed with the Snowball English stemmer
//! (Porter2, from `rust-stemmers`: `issues` and `issue` meet, so do
//! `create`, `created` and `creating`); words with non-ASCII letters are
//! kept as written. A query's opening request for a tool ("find me a tool
//! to ...") is dropped. A query also looks, at 0.4 of a word's weight (0.7
//! for short forms and compounds), for words it did not write (documents
//! are never expanded): synonyms of generic tool words (delete / remove,
//! folder / directory, issue / ticket); the long forms of short ones
//! (`k8s` → kubernetes, `PR` → pull request, `repo` → repository, `pg` →
//! postgres); words of a tool domain that lead to the words tools use
//! (`rain` → weather, `yen` → currency, `thumbs` → reaction); neighbouring
//! words written as one (`time zone` → timezone); and the kind of a value
//! it holds (a URL adds `url`, a path such as `~/a.txt` adds `file` and
//! `path`, `OPS-77` adds `issue`, `@ann` `user`, `#general` `channel`,
//! `+15551234567` `phone`). The tables are written from the general vocabulary of tool domains, not
//! from the evaluation queries. The weights were tuned on the tuning
//! queries of the project's evaluation set (`tool-core/tests/data/tool_search/`,
//! reported in the README's "Many tools" section).
//!
//! # Queries of `tool_search`
//!
//! - `select:name_a,name_b` loads exactly those tools (names in the view);
//! - any other text is ranked as above; the best `max_results` (default
//!   [`DEFAULT_MAX_RESULTS`], at most [`MAX_RESULTS_LIMIT`]) are listed with
//!   the first line of their description and loaded.

use rustc_hash::FxHashMap;

use serde_json::Value;

use crate::spec::ToolSpec;

mod tokens;

/// The search tokens of `text` as the index sees them: split at
/// non-alphanumerics and camelCase, lower-cased, function words dropped,
/// stemmed (Snowball English; see the [module docs](self)).
///
/// ```
/// assert_eq!(tool_core::search::tokenize("listPullRequests"), ["list", "pull", "request"]);
/// assert_eq!(tool_core::search::tokenize("Created issues"), ["creat", "issu"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    tokens::tokens(text)
}

/// BM25 term-frequency saturation k1 (the classic 1.2).
pub const K1: f32 = 1.2;
/// BM25 length normalisation b (the classic 0.75).
pub const B: f32 = 0.75;
/// Weight of a word of the tool's name.
pub const WEIGHT_NAME: f32 = 3.0;
/// Weight of a word of a tag.
pub const WEIGHT_TAGS: f32 = 2.0;
/// Weight of a word of the description.
pub const WEIGHT_DESCRIPTION: f32 = 1.0;
/// Weight of a word of a parameter's name.
pub const WEIGHT_PARAM_NAME: f32 = 0.5;
/// Weight of a word of a parameter's description.
pub const WEIGHT_PARAM_DESCRIPTION: f32 = 0.25;

/// Field weights of the index (see the [module docs](self)); the default
/// is the tuned set of `WEIGHT_*` constants.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FieldWeights {
    /// Weight of a word of the tool's name.
    pub name: f32,
    /// Weight of a word of a tag.
    pub tags: f32,
    /// Weight of a word of the description.
    pub description: f32,
    /// Weight of a word of a parameter's name.
    pub param_names: f32,
    /// Weight of a word of a parameter's description.
    pub param_descriptions: f32,
}

impl Default for FieldWeights {
    fn default() -> Self {
        Self {
            name: WEIGHT_NAME,
            tags: WEIGHT_TAGS,
            description: WEIGHT_DESCRIPTION,
            param_names: WEIGHT_PARAM_NAME,
            param_descriptions: WEIGHT_PARAM_DESCRIPTION,
        }
    }
}

/// Matches `tool_search` lists when `max_results` is not given: 5.
pub const DEFAULT_MAX_RESULTS: usize = 5;
/// Largest `max_results` accepted: 50.
pub const MAX_RESULTS_LIMIT: usize = 50;
/// Longest query accepted, in bytes: 2000 (a query is a few words or a list of names).
pub const MAX_QUERY_LEN: usize = 2000;

/// One match of a [`SearchIndex::search`].
#[derive(Debug, Clone, PartialEq)]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// The BM25 score (higher is better; only comparable within one query).
    pub score: f32,
}

/// A BM25 index over tool definitions (see the [module docs](self) for the
/// fields and weights). Built once per registry version by a
/// [`RegistryView`](crate::RegistryView); build one yourself for other uses.
///
/// Each posting holds its term's whole BM25 contribution to its document
/// (idf × saturated, length-normalised frequency), computed at build time,
/// so a query only adds up postings.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    names: Vec<String>,
    terms: FxHashMap<String, u32>,
    /// Per term: (document, BM25 contribution), in document order.
    postings: Vec<Vec<(u32, f32)>>,
}

impl SearchIndex {
    /// Indexes `specs` (one document each, in the order given) with the
    /// default [`FieldWeights`].
    pub fn build<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        Self::build_with(specs, FieldWeights::default())
    }

    /// Indexes `specs` with the field weights `w`.
    pub fn build_with<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>, w: FieldWeights) -> Self {
        let mut index = Self::default();
        // First pass: weighted term frequencies per document, and lengths.
        let mut postings: Vec<Vec<(u32, f32)>> = Vec::new();
        let mut doc_len: Vec<f32> = Vec::new();
        let mut tf: FxHashMap<u32, f32> = FxHashMap::default();
        for spec in specs {
            let doc = u32::try_from(index.names.len()).unwrap_or(u32::MAX);
            tf.clear();
            let mut len = 0.0;
            let terms = &mut index.terms;
            let mut add = |text: &str, weight: f32| {
                if weight == 0.0 {
                    return;
                }
                tokens::for_each_token(text, |t| {
                    let id = match terms.get(t) {
                        Some(&id) => id,
                        None => {
                            let id = u32::try_from(terms.len()).unwrap_or(u32::MAX);
                            terms.insert(t.to_owned(), id);
                            id
                        }
                    };
                    *tf.entry(id).or_insert(0.0) += weight;
                    len += weight;
                });
            };
            add(&spec.name, w.name);
            for tag in &spec.tags {
                add(tag, w.tags);
            }
            add(&spec.description, w.description);
            if let Some(props) = spec.parameters.get("properties").and_then(Value::as_object) {
                for (name, schema) in props {
                    add(name, w.param_names);
                    if let Some(d) = schema.get("description").and_then(Value::as_str) {
                        add(d, w.param_descriptions);
                    }
                }
            }
            postings.resize_with(index.terms.len(), Vec::new);
            for (&id, &f) in &tf {
                postings[id as usize].push((doc, f));
            }
            doc_len.push(len);
            index.names.push(spec.name.clone());
        }
        // Second pass: each posting's BM25 contribution.
        #[allow(
            clippy::cast_precision_loss,
            reason = "document counts far below f32's exact range"
        )]
        let n = index.names.len() as f32;
        let avg_len = (doc_len.iter().sum::<f32>() / n.max(1.0)).max(f32::EPSILON);
        for list in &mut postings {
            list.sort_unstable_by_key(|(doc, _)| *doc);
            #[allow(
                clippy::cast_precision_loss,
                reason = "document counts far below f32's exact range"
            )]
            let df = list.len() as f32;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, tf) in list.iter_mut() {
                let norm = K1 * (1.0 - B + B * doc_len[*doc as usize] / avg_len);
                *tf = idf * *tf * (K1 + 1.0) / (*tf + norm);
            }
        }
        index.postings = postings;
        index
    }

    /// Number of documents (tools).
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// `true` when no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The at most `limit` best matches of `query`, best first (ties in name
    /// order); only tools sharing at least one token with the query (or a
    /// synonym of one of its words, see the module docs) score.
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let query_terms = tokens::query_terms(query);
        let mut scores = vec![0.0f32; self.names.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (term, weight) in &query_terms {
            let Some(&id) = self.terms.get(term.as_str()) else {
                continue;
            };
            for &(doc, impact) in &self.postings[id as usize] {
                let score = &mut scores[doc as usize];
                if *score == 0.0 {
                    touched.push(doc);
                }
                *score += weight * impact;
            }
        }
        let by_rank = |a: &u32, b: &u32| {
            scores[*b as usize]
                .total_cmp(&scores[*a as usize])
                .then_with(|| self.names[*a as usize].cmp(&self.names[*b as usize]))
        };
        if touched.len() > limit && limit > 0 {
            touched.select_nth_unstable_by(limit - 1, by_rank);
            touched.truncate(limit);
        }
        touched.sort_unstable_by(by_rank);
        touched.truncate(limit);
        touched
            .into_iter()
            .map(|d| SearchHit {
                name: self.names[d as usize].clone(),
                score: scores[d as usize],
            })
            .collect()
    }
}

/// What a `tool_search` query asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Query {
    /// `select:a,b`: exactly these names (trimmed, empty ones dropped, in order, no repeats).
    Select(Vec<String>),
    /// Free text, ranked.
    Text(String),
}

impl Query {
    pub(crate) fn parse(text: &str) -> Self {
        let trimmed = text.trim();
        // `select:` in any letter case (`SELECT:`, `Select:`): models vary it.
        let select = trimmed
            .get(..7)
            .filter(|head| head.eq_ignore_ascii_case("select:"))
            .map(|_| &trimmed[7..]);
        match select {
            Some(list) => {
                let mut names: Vec<String> = Vec::new();
                for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                    if !names.iter().any(|n| n == name) {
                        names.push(name.to_owned());
                    }
                }
                Self::Select(names)
            }
            None => Self::Text(trimmed.to_owned()),
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn spec(name: &str, description: &str) -> ToolSpec {
        ToolSpec::new(name, description, json!({"type": "object"}))
    }

    #[test]
    fn bm25_prefers_name_matches_and_rare_words() {
        let specs = [
            spec("list_files", "List the files of a folder."),
            spec("read_file", "Read a file's text."),
            spec("send_email", "Send an email; attach files if needed."),
            spec("calendar_list_events", "List the events of a calendar."),
        ];
        let index = SearchIndex::build(specs.iter());
        let hits = index.search("read a file", 5);
        assert_eq!(hits[0].name, "read_file");
        let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
        assert_eq!(names, ["read_file", "list_files", "send_email"]);
        assert!(hits[0].score > hits[1].score);
        assert_eq!(
            index.search("calendar events", 1)[0].name,
            "calendar_list_events"
        );
        assert!(index.search("zebra", 5).is_empty());
        assert!(index.search("", 5).is_empty());
    }

    #[test]
    fn parameters_and_tags_are_searched() {
        let mut tagged = spec("run_query", "Run a statement.");
        tagged.tags = vec!["postgres".to_owned()];
        let with_param = ToolSpec::new(
            "fetch",
            "Download a page.",
            json!({"type": "object", "properties": {"url": {"type": "string", "description": "The web address to fetch."}}}),
        );
        let index = SearchIndex::build([&tagged, &with_param]);
        assert_eq!(index.search("postgres", 5)[0].name, "run_query");
        assert_eq!(index.search("web address url", 5)[0].name, "fetch");
    }

    #[test]
    fn select_queries_parse() {
        assert_eq!(
            Query::parse(" select: a , b,,a "),
            Query::Select(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            Query::parse("SELECT:a,b"),
            Query::Select(vec!["a".into(), "b".into()])
        );
        assert_eq!(Query::parse("find files"), Query::Text("find files".into()));
    }
}
