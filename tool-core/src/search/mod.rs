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
//! `+15551234567` `phone`). The tables are written from the general
//! vocabulary of tool domains, not from the evaluation queries. The weights
//! were tuned on the tuning queries of the project's evaluation set
//! (`tool-core/tests/data/tool_search/`, reported in the README's "Many
//! tools" section).
//!
//! # Queries of `tool_search`
//!
//! - `select:name_a,name_b` loads exactly those tools (names in the view);
//! - any other text is ranked as above; the best `max_results` (default
//!   [`DEFAULT_MAX_RESULTS`], at most [`MAX_RESULTS_LIMIT`]) are listed with
//!   the first line of their description and loaded.

use std::sync::{Arc, OnceLock};

use rustc_hash::FxHashMap;

use serde_json::Value;

use crate::tool::spec::ToolSpec;

mod tokenizer;

/// The search tokens of `text` as the index sees them: split at
/// non-alphanumerics and camelCase, lower-cased, function words dropped,
/// stemmed (Snowball English; see the [module docs](self)).
///
/// ```
/// assert_eq!(tool_core::search::tokenize("listPullRequests"), ["list", "pull", "request"]);
/// assert_eq!(tool_core::search::tokenize("Created issues"), ["creat", "issu"]);
/// ```
pub fn tokenize(text: &str) -> Vec<String> {
    tokenizer::tokens(text)
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
/// fields and weights), kept current as tools come and go: a
/// [`RegistryView`](crate::RegistryView) builds it once and then applies
/// each registry version's additions and removals
/// ([`insert`](Self::insert), [`remove`](Self::remove)).
///
/// # Layout, and why
///
/// What the index keeps is what does not depend on the other documents:
/// per tool its weighted term frequencies and its length. A BM25
/// contribution also depends on the number of documents N, the term's
/// document frequency and the average length, which every insert or remove
/// changes for all postings; so the contributions (idf × saturated,
/// length-normalised frequency) are computed from the kept frequencies in
/// one pass over them, into one flat posting array (term → its documents'
/// contributions, in document order), when the index is built and again on
/// the first search after a change. A query then only adds up
/// precomputed contributions, as fast as in an index that never changes
/// (the `tool_search` bench: p50 ≤ 100 µs over 10 000 tools), and a change
/// costs the tokens of the changed tools plus that pass (no re-tokenising,
/// no walking of the other tools' JSON): see the `index_update_10k` bench.
/// Computing contributions at query time instead would add a division per
/// posting to every query, which are far more frequent than changes.
/// That pass is O(postings): about 0.7 ms for 10 000 tools, against about
/// 20 ms of CPU time for indexing them from scratch.
///
/// Building tokenises each distinct word once (tool texts repeat their
/// words: "the repository owner", "page number") and reuses its terms for
/// every later occurrence; the per-tool frequencies live in one array, not
/// a vector per tool or per term.
///
/// Removed tools' terms stay in the vocabulary (with no postings), so an
/// index whose tools are replaced again and again with new words grows by
/// those words; a view's index follows one registry, whose tool texts come
/// back to the same words.
#[derive(Debug, Clone, Default)]
pub struct SearchIndex {
    weights: FieldWeights,
    /// Term text → term id. Terms are never forgotten (a term whose
    /// tools all left has no postings); the vocabulary of tool texts is small.
    terms: FxHashMap<Box<str>, u32>,
    /// The documents; a document's id is its position (removal moves the last one into the gap).
    docs: Vec<Doc>,
    /// Every document's (term id, weighted frequency) pairs, each document's
    /// in one run (`Doc::start`, `Doc::count`); runs of removed documents
    /// are garbage until [`compact`](Self::compact) drops them.
    doc_terms: Vec<(u32, f32)>,
    /// Pairs of `doc_terms` that belong to no document.
    garbage: usize,
    /// Tool name → document id.
    by_name: FxHashMap<Arc<str>, u32>,
    /// The BM25 contributions for the documents as they are now; emptied by every change.
    impacts: OnceLock<Impacts>,
}

/// One indexed tool.
#[derive(Debug, Clone)]
struct Doc {
    name: Arc<str>,
    /// Weighted length: the sum of the weights of its tokens.
    len: f32,
    /// Its run in `SearchIndex::doc_terms`: each of its terms once.
    start: u32,
    count: u32,
}

/// Postings with their BM25 contribution, for one state of the documents:
/// the postings of term `t` are `postings[offsets[t]..offsets[t + 1]]`,
/// (document id, contribution) in document order.
#[derive(Debug, Clone, Default)]
struct Impacts {
    offsets: Vec<u32>,
    postings: Vec<(u32, f32)>,
}

/// Reused buffers of [`SearchIndex::add_doc`], shared by the documents of one build.
#[derive(Default)]
struct Scratch {
    /// Per term id: its weighted frequency in the document being added (0 when absent).
    tf: Vec<f32>,
    /// The term ids of that document, in order of first occurrence.
    seen: Vec<u32>,
    /// Word (a run of letters and digits, as written) → its run in `word_terms`.
    words: FxHashMap<Box<str>, (u32, u32)>,
    /// The term ids of each word of `words`, in order.
    word_terms: Vec<u32>,
}

impl SearchIndex {
    /// Indexes `specs` (one document each, in the order given) with the
    /// default [`FieldWeights`]. A later spec with the name of an earlier
    /// one replaces it.
    pub fn build<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>) -> Self {
        Self::build_with(specs, FieldWeights::default())
    }

    /// Indexes `specs` with the field weights `w` (each at least 0; a
    /// field of weight 0 is left out).
    pub fn build_with<'a>(specs: impl IntoIterator<Item = &'a ToolSpec>, w: FieldWeights) -> Self {
        let specs = specs.into_iter();
        let hint = specs.size_hint().0;
        let mut index = Self {
            weights: w,
            // Tool texts share most words: about one new term per tool.
            terms: FxHashMap::with_capacity_and_hasher(hint.max(64), Default::default()),
            docs: Vec::with_capacity(hint),
            // About 25 distinct terms per tool of the evaluation set.
            doc_terms: Vec::with_capacity(hint * 32),
            garbage: 0,
            by_name: FxHashMap::with_capacity_and_hasher(hint, Default::default()),
            impacts: OnceLock::new(),
        };
        let mut scratch = Scratch::default();
        for spec in specs {
            index.add_doc(spec, &mut scratch);
        }
        let impacts = index.compute_impacts();
        let _ = index.impacts.set(impacts);
        index
    }

    /// Adds `spec` as one more document (replacing the document of a tool
    /// of the same name). Scores of every document change with it (N, the
    /// document frequencies and the average length do); they are computed
    /// again on the next [`search`](Self::search).
    pub fn insert(&mut self, spec: &ToolSpec) {
        self.add_doc(spec, &mut Scratch::default());
    }

    /// [`insert`](Self::insert)s each of `specs`, sharing the work of
    /// tokenising the words they have in common.
    pub fn insert_all<'a>(&mut self, specs: impl IntoIterator<Item = &'a ToolSpec>) {
        let mut scratch = Scratch::default();
        for spec in specs {
            self.add_doc(spec, &mut scratch);
        }
    }

    /// Removes the tool called `name`; `false` when it is not indexed.
    pub fn remove(&mut self, name: &str) -> bool {
        let Some(doc) = self.by_name.remove(name) else {
            return false;
        };
        let gone = self.docs.swap_remove(doc as usize);
        self.garbage += gone.count as usize;
        if let Some(moved) = self.docs.get(doc as usize)
            && let Some(id) = self.by_name.get_mut(&*moved.name)
        {
            *id = doc;
        }
        if self.garbage > self.doc_terms.len() / 2 {
            self.compact();
        }
        self.impacts = OnceLock::new();
        true
    }

    /// Whether a tool called `name` is indexed.
    pub fn contains(&self, name: &str) -> bool {
        self.by_name.contains_key(name)
    }

    /// Drops the term runs of removed documents.
    fn compact(&mut self) {
        let mut kept = Vec::with_capacity(self.doc_terms.len() - self.garbage);
        for doc in &mut self.docs {
            let run = doc.start as usize..(doc.start + doc.count) as usize;
            doc.start = u32::try_from(kept.len()).unwrap_or(u32::MAX);
            kept.extend_from_slice(&self.doc_terms[run]);
        }
        self.doc_terms = kept;
        self.garbage = 0;
    }

    /// Indexes one tool: its fields' tokens, each counted with its field's
    /// weight, summed per term in the order the tokens come (so a document
    /// scores the same however it came into the index).
    fn add_doc(&mut self, spec: &ToolSpec, scratch: &mut Scratch) {
        if self.by_name.contains_key(spec.name.as_str()) {
            self.remove(&spec.name);
        }
        let w = self.weights;
        let Scratch {
            tf,
            seen,
            words,
            word_terms,
        } = scratch;
        seen.clear();
        let mut len = 0.0f32;
        let terms = &mut self.terms;
        // `tf` covers every term id (terms added by other scratch buffers too).
        tf.resize(terms.len(), 0.0);
        let mut add = |text: &str, weight: f32| {
            if weight == 0.0 {
                return;
            }
            // The tokeniser treats each word on its own (it splits at every
            // character that is not a letter or digit first; tested below),
            // so a word's terms are looked up once per build, not once per
            // occurrence: tool texts repeat their words a lot.
            for_each_word(text, |word| {
                let (from, count) = match words.get(word) {
                    Some(&run) => run,
                    None => {
                        let from = word_terms.len();
                        tokenizer::for_each_token(word, |t| {
                            let id = match terms.get(t) {
                                Some(&id) => id,
                                None => {
                                    let id = u32::try_from(terms.len()).unwrap_or(u32::MAX);
                                    terms.insert(t.into(), id);
                                    tf.push(0.0);
                                    id
                                }
                            };
                            word_terms.push(id);
                        });
                        let run = (
                            u32::try_from(from).unwrap_or(u32::MAX),
                            u32::try_from(word_terms.len() - from).unwrap_or(u32::MAX),
                        );
                        words.insert(word.into(), run);
                        run
                    }
                };
                for &id in &word_terms[from as usize..(from + count) as usize] {
                    let slot = &mut tf[id as usize];
                    if *slot == 0.0 {
                        seen.push(id);
                    }
                    *slot += weight;
                    len += weight;
                }
            });
        };
        add(&spec.name, w.name);
        for tag in &spec.tags {
            add(tag, w.tags);
        }
        add(&spec.description, w.description);
        if let Some(props) = field(&spec.parameters, "properties").and_then(Value::as_object) {
            for (name, schema) in props {
                add(name, w.param_names);
                if let Some(d) = field(schema, "description").and_then(Value::as_str) {
                    add(d, w.param_descriptions);
                }
            }
        }
        let start = u32::try_from(self.doc_terms.len()).unwrap_or(u32::MAX);
        for &id in seen.iter() {
            let slot = &mut tf[id as usize];
            self.doc_terms.push((id, *slot));
            *slot = 0.0;
        }
        let name: Arc<str> = spec.name.as_str().into();
        let doc = u32::try_from(self.docs.len()).unwrap_or(u32::MAX);
        self.by_name.insert(Arc::clone(&name), doc);
        self.docs.push(Doc {
            name,
            len,
            start,
            count: u32::try_from(seen.len()).unwrap_or(u32::MAX),
        });
        self.impacts = OnceLock::new();
    }

    /// Every posting's BM25 contribution for the documents as they are now.
    fn compute_impacts(&self) -> Impacts {
        let terms = self.terms.len();
        let mut offsets = vec![0u32; terms + 1];
        for doc in &self.docs {
            for &(t, _) in self.terms_of(doc) {
                offsets[t as usize + 1] += 1;
            }
        }
        for t in 0..terms {
            offsets[t + 1] += offsets[t];
        }
        #[allow(
            clippy::cast_precision_loss,
            reason = "document counts far below f32's exact range"
        )]
        let n = self.docs.len() as f32;
        let avg_len = (self.docs.iter().map(|d| d.len).sum::<f32>() / n.max(1.0)).max(f32::EPSILON);
        let idf: Vec<f32> = offsets
            .windows(2)
            .map(|w| {
                #[allow(
                    clippy::cast_precision_loss,
                    reason = "document counts far below f32's exact range"
                )]
                let df = (w[1] - w[0]) as f32;
                (1.0 + (n - df + 0.5) / (df + 0.5)).ln()
            })
            .collect();
        let total = offsets[terms] as usize;
        let mut postings = vec![(0u32, 0.0f32); total];
        let mut next: Vec<u32> = offsets[..terms].to_vec();
        for (doc, d) in self.docs.iter().enumerate() {
            let doc = u32::try_from(doc).unwrap_or(u32::MAX);
            let norm = K1 * (1.0 - B + B * d.len / avg_len);
            for &(t, tf) in self.terms_of(d) {
                let slot = &mut next[t as usize];
                postings[*slot as usize] = (doc, idf[t as usize] * tf * (K1 + 1.0) / (tf + norm));
                *slot += 1;
            }
        }
        Impacts { offsets, postings }
    }

    /// `doc`'s (term id, weighted frequency) pairs.
    fn terms_of(&self, doc: &Doc) -> &[(u32, f32)] {
        &self.doc_terms[doc.start as usize..(doc.start + doc.count) as usize]
    }

    fn impacts(&self) -> &Impacts {
        self.impacts.get_or_init(|| self.compute_impacts())
    }

    /// Number of documents (tools).
    pub fn len(&self) -> usize {
        self.docs.len()
    }

    /// `true` when no tool is indexed.
    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }

    /// The at most `limit` best matches of `query`, best first (ties in name
    /// order); only tools sharing at least one token with the query (or a
    /// synonym of one of its words, see the module docs) score. The first
    /// search after a change computes the contributions again (see the
    /// type's docs).
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        let query_terms = tokenizer::query_terms(query);
        let impacts = self.impacts();
        let mut scores = vec![0.0f32; self.docs.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (term, weight) in &query_terms {
            let Some(&id) = self.terms.get(term.as_str()) else {
                continue;
            };
            let (from, to) = (
                impacts.offsets[id as usize] as usize,
                impacts.offsets[id as usize + 1] as usize,
            );
            for &(doc, impact) in &impacts.postings[from..to] {
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
                .then_with(|| {
                    self.docs[*a as usize]
                        .name
                        .cmp(&self.docs[*b as usize].name)
                })
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
                name: self.docs[d as usize].name.to_string(),
                score: scores[d as usize],
            })
            .collect()
    }
}

/// Calls `f` with each word of `text` as the tokeniser's first step cuts
/// them: the runs of letters and digits. ASCII text (nearly all tool text)
/// is cut on bytes, the same cut without decoding characters.
fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    if !text.is_ascii() {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .for_each(f);
        return;
    }
    let mut start = None;
    for (at, b) in text.bytes().enumerate() {
        if b.is_ascii_alphanumeric() {
            start.get_or_insert(at);
        } else if let Some(from) = start.take() {
            f(&text[from..at]);
        }
    }
    if let Some(from) = start {
        f(&text[from..]);
    }
}

/// `value[key]` of a JSON object by a walk over its entries: schema objects
/// have a handful of keys, for which that is faster than the map's hashed lookup.
fn field<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value
        .as_object()?
        .iter()
        .find(|(k, _)| k.as_str() == key)
        .map(|(_, v)| v)
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

    fn assert_same_ranking(a: &SearchIndex, b: &SearchIndex, queries: &[&str]) {
        for q in queries {
            let (x, y) = (a.search(q, 10), b.search(q, 10));
            assert_eq!(
                x.iter().map(|h| &h.name).collect::<Vec<_>>(),
                y.iter().map(|h| &h.name).collect::<Vec<_>>(),
                "{q}"
            );
            for (h, g) in x.iter().zip(&y) {
                assert!((h.score - g.score).abs() <= 1e-5, "{q}: {h:?} {g:?}");
            }
        }
    }

    #[test]
    fn inserts_and_removes_score_as_a_fresh_build() {
        let specs = [
            spec("list_files", "List the files of a folder."),
            spec("read_file", "Read a file's text."),
            spec("send_email", "Send an email; attach files if needed."),
            spec("calendar_list_events", "List the events of a calendar."),
            spec("github__create_issue", "Open an issue in a repository."),
        ];
        let mut index = SearchIndex::build(specs[..3].iter());
        let queries = ["read a file", "list events", "open an issue", "email files"];
        index.search("warm", 1);
        index.insert(&specs[3]);
        index.insert(&specs[4]);
        assert!(index.remove("list_files"));
        assert!(!index.remove("list_files"), "already gone");
        assert!(!index.contains("list_files"));
        let changed = spec("read_file", "Read a calendar's events.");
        index.insert(&changed);
        assert_eq!(index.len(), 4);
        let fresh = SearchIndex::build([&specs[1], &specs[2], &specs[3], &specs[4], &changed]);
        assert_eq!(fresh.len(), 4, "the later read_file replaced the earlier");
        assert_same_ranking(&index, &fresh, &queries);
        let fresh = SearchIndex::build([&specs[2], &specs[3], &specs[4], &changed]);
        assert_same_ranking(&index, &fresh, &queries);
        assert_eq!(
            index.search("list events", 5)[0].name,
            "calendar_list_events"
        );
        for name in [
            "read_file",
            "send_email",
            "calendar_list_events",
            "github__create_issue",
        ] {
            assert!(index.remove(name));
        }
        assert!(index.is_empty());
        assert!(index.search("read a file", 5).is_empty());
    }

    #[test]
    fn the_tokeniser_treats_each_word_on_its_own() {
        // The index tokenises each word once per build (`add_doc`): that is
        // only right while a text's tokens are its words' tokens in order.
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/data/tool_search/tools.json"
        );
        let defs: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap_or_default())
                .unwrap_or_default();
        assert!(defs.len() > 300, "the evaluation set's tools");
        let mut texts: Vec<String> = vec![
            "listPullRequests HTTPServer v2Api ÜberGröße a-b__c.d/e".to_owned(),
            "The tool to list all of my files, created issues".to_owned(),
        ];
        for d in &defs {
            texts.push(d.to_string());
        }
        for text in &texts {
            let mut by_word: Vec<String> = Vec::new();
            for_each_word(text, |word| by_word.extend(tokenize(word)));
            assert_eq!(tokenize(text), by_word, "{text}");
        }
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
