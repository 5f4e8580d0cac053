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
//! assert!(!hits[0].weak, "it shares the query's words");
//! // The Slack tool shares no word with the query; if listed at all, it is weak.
//! assert!(hits[1..].iter().all(|h| h.weak));
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
//! # Signals besides BM25 (issue 31)
//!
//! - **Typos**: a query word no tool contains is corrected to the index
//!   word one edit away that `tool_rules::suggest::did_you_mean` picks,
//!   at [`TYPO_WEIGHT`] (see `typo.rs`: at most 4 words, a few thousand
//!   hash lookups each at most), looked up first as written among the
//!   tools' words as written (`stirpe` → `stripe`, whose stems are two
//!   edits apart; `pasue` → `pause`), then by its stem. A word of English
//!   (one the semantic model has a token for: `stuck`, `park`) is never
//!   corrected, with the default feature `semantic`.
//! - **Services**: a query that names a server (`github`), a product or
//!   nickname of one (`gsutil` → `gcs`, `SFDC` → `salesforce`) or a host
//!   or URL scheme of one (`github.com`, `gs://`) multiplies the matching
//!   tools of that server by 1 + [`SERVICE_BOOST`]; other servers' tools
//!   stay in the list (see `service.rs`).
//! - **Semantic**: with the default feature `semantic`, each tool and the
//!   query get a vector from static word vectors distilled from
//!   all-MiniLM-L6-v2 (Apache-2.0, vendored in `embed/` with its licence
//!   and the script that made it); a tool's fused score is its BM25 score
//!   over the query's best BM25 score plus [`SEMANTIC_WEIGHT`] × the
//!   cosine similarity, and tools that share no word but are close
//!   (cosine above [`SEMANTIC_MIN`]) can be listed.
//! - **Never empty**: when no tool shares a term with the query, the
//!   semantic signal (or, without it, the closest names) answers, and the
//!   hits are flagged [`SearchHit::weak`]; `tool_search` then says the
//!   matches are weak and sets `metadata.weak`.
//! - **Jargon** (issue 31's tuning round): a query word of the trade's
//!   jargon also looks for what it stands for, at 0.7 ([`Origin::Jargon`],
//!   a strong match): POSIX commands (`mkdir` → create directory, `ps` →
//!   process list), git porcelain (`unstage` → reset, `shelve` → stash),
//!   slang (`nuke`, `wipe` → delete; `spin up` → create / start),
//!   abbreviations (`cols`, `idx`, `tbl`, `FX`, `ETA`, `a11y`, `GHA`),
//!   time-zone abbreviations and query languages (`SOQL`, `JQL`,
//!   `PromQL`). The lexicon is data, each entry with its source
//!   (`search/jargon.rs`).
//! - **Implied services** (same round): when the query names no server, a
//!   word of it that 2 to [`IMPLIED_MAX_TOOLS`] tools are named or tagged
//!   with, all of one server (`helm`), multiplies that server's matching
//!   tools by 1 + [`IMPLIED_BOOST`].
//! - Values whose form leaves no doubt about the thing (a `gs://` URL, an
//!   image reference `nginx:1.25`, `localhost:3000`, coordinates
//!   `48.85,2.35`) bring their kind words at 0.7 instead of 0.4; so do
//!   query languages recognised by their syntax (`PromQL`, `LogQL`, SQL,
//!   JQL, CQL, a Redis command) and identifiers whose form names their
//!   kind (an arXiv id, a cashtag; issue 31's second round).
//! - **Payload** (issue 31's third round): the words of quoted text, of
//!   file names and paths, and what a command rules out (`do not send`,
//!   `without pulling`, `no cleanup`) weigh 0.3 ([`Origin::Payload`]):
//!   they say what to send or act on, not which tool. In a query written
//!   in a query language (JQL, CQL, SQL, SOQL), the language's field names
//!   and keywords are payload and the language itself weighs 1.0.
//! - **Values name their service** (same round): a value whose syntax is
//!   one service's names that service like its name would (a JQL filter,
//!   SOQL date literals, a Datadog metric query, a Slack `ts`, a Stripe id,
//!   Gmail/GitHub/Slack/Sentry search operators, the `MongoDB` shell, AWS
//!   ids, package specifiers, `owner/repo#12`); a path of this machine
//!   implies the file system (see `service.rs`).
//! - **Read or change** (issue 31's fourth round): a query that asks to
//!   look (a question, or "show", "list", "find" …, with no verb of change
//!   such as `create`, `send`, `delete`) divides the score of the tools
//!   whose names say they change things by 1 + [`READ_INTENT_DAMP`]: "which
//!   branches exist" finds `list_branches` before `create_branch` (see
//!   `intent.rs`; [`Explanation::asks_to_read`]).
//! - **Two-word service names, clipped words, the server prior** (issue
//!   31's fifth round): a pair of neighbouring query words names a server
//!   as one word would (`Google Calendar` → `gcal`); a query word of 3 to
//!   6 letters no tool has, not a typo, is read as the 1 to
//!   [`PREFIX_MAX_TERMS`] index words it begins ([`Origin::Prefix`], at
//!   [`PREFIX_WEIGHT`]: `ack` → acknowledge, `coords` → coordinates); and
//!   every matching tool also scores [`SERVER_PRIOR`] × its server's best
//!   score over the query's best ([`Signals::server_prior`]), so a
//!   server with a strong match lifts its siblings.
//! - [`SearchIndex::explain`] tells hosts which signal matched what.
//!
//! What each adds on the tuning sets is printed by the `signal_ablation`
//! tuning aid of `tests/tool_search_eval.rs`; [`Signals`] turns each off.
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

#[cfg(feature = "semantic")]
mod embed;
mod intent;
mod jargon;
mod service;
mod tokenizer;
mod typo;

pub use tokenizer::Origin;

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

/// Weight of the index word a misspelt query word was corrected to
/// (see [`Origin::Typo`]): 0.7 of an exact word's.
pub const TYPO_WEIGHT: f32 = 0.7;
/// Bound of the service boost: the matching tools of a server the query
/// names score `1 + SERVICE_BOOST` times as much (0.5: half again).
pub const SERVICE_BOOST: f32 = 0.5;

/// Bound of the boost of a server the query implies without naming it
/// (see [`Explanation::implied`]): its matching tools score
/// `1 + IMPLIED_BOOST` times as much (0.25), only when the query names no
/// server.
pub const IMPLIED_BOOST: f32 = 0.25;
/// Most tools a query word may be in to imply their server: 64 (a word
/// in more tools is not one server's thing; the bound also caps the
/// work per word).
pub const IMPLIED_MAX_TOOLS: usize = 64;

/// Damping of the tools whose names say they change things (`create_`,
/// `delete_`, `send_` …) for a query that asks to read (a question or a
/// request to look, with no verb of change; see `intent.rs`): their fused
/// score is divided by `1 + READ_INTENT_DAMP` (0.2). They stay in the list.
pub const READ_INTENT_DAMP: f32 = 0.2;

/// Weight of the index words a clipped query word stands for (see
/// [`Origin::Prefix`]: `ack` → acknowledge, `cal` → calendar): 0.5 of an
/// exact word's (issue 31's fifth round).
pub const PREFIX_WEIGHT: f32 = 0.5;
/// Most index terms a clipped query word may stand for: 3 (a shorter
/// prefix of more words says too little; `con` is left alone).
pub const PREFIX_MAX_TERMS: usize = 3;

/// Weight of the server prior (see [`Signals::server_prior`]): every
/// matching tool also scores 0.2 × the best fused score among its
/// server's tools, over the query's best (issue 31's fifth round).
pub const SERVER_PRIOR: f32 = 0.2;

/// Weight of the semantic signal in the fused score (see [`Signals`]):
/// a tool scores its BM25 score divided by the best BM25 score of the
/// query, plus `SEMANTIC_WEIGHT` times the cosine similarity of the query's
/// and the tool's vectors (when above 0).
pub const SEMANTIC_WEIGHT: f32 = 1.0;
/// Least cosine similarity for a tool that shares no word with the query to
/// be listed through the semantic signal alone when other tools do share
/// one (such hits are weak): 0.4. When no tool shares a word, the closest
/// tools by cosine are listed, whatever their similarity (the fallback).
/// Unrelated tool texts sit near 0 to 0.1, related ones from about 0.2.
pub const SEMANTIC_MIN: f32 = 0.4;

/// Which signals besides BM25 a [`SearchIndex`] uses; the default is all of
/// them, as tuned (see the module docs and `docs/tool-search.md`).
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct Signals {
    /// Correct misspelt query words ([`Origin::Typo`]). Default: on.
    pub typos: bool,
    /// Boost the tools of servers the query names (see [`SERVICE_BOOST`]). Default: on.
    pub services: bool,
    /// Widen queries with the jargon lexicon of developer tooling
    /// ([`Origin::Jargon`]: `mkdir` → create directory, `unstage` → reset).
    /// Default: on.
    pub jargon: bool,
    /// Boost, less, the tools of a server the query implies (a word only
    /// that server's tools contain; see [`IMPLIED_BOOST`]). Default: on.
    pub implied: bool,
    /// Weight of the semantic signal, 0 to leave it out (then tools are not
    /// embedded either, when the index is built with it at 0). Default:
    /// [`SEMANTIC_WEIGHT`] with the `semantic` feature (on by default), 0 without.
    pub semantic: f32,
    /// Damping of the tools that change things when the query asks to read
    /// (see [`READ_INTENT_DAMP`]), 0 to leave it out. Default:
    /// [`READ_INTENT_DAMP`].
    pub intent: f32,
    /// Read a clipped query word no tool has (`ack`, `cal`, `coords`) as
    /// the index words it begins, when there are at most
    /// [`PREFIX_MAX_TERMS`] of them ([`Origin::Prefix`], weight
    /// [`PREFIX_WEIGHT`]). Default: on.
    pub prefixes: bool,
    /// Weight of the server prior, 0 to leave it out: the server is picked
    /// with the tool, each matching tool also scoring this weight times
    /// the best fused score among its server's tools over the query's best
    /// (in units of the fused score: 1 with the semantic signal, the best
    /// BM25 score without it), so a server with one strong match lifts its
    /// siblings over other servers' weak matches (the order within a
    /// server does not change). Default: [`SERVER_PRIOR`].
    pub server_prior: f32,
}

impl Default for Signals {
    fn default() -> Self {
        Self {
            typos: true,
            services: true,
            implied: true,
            jargon: true,
            semantic: if cfg!(feature = "semantic") {
                SEMANTIC_WEIGHT
            } else {
                0.0
            },
            intent: READ_INTENT_DAMP,
            prefixes: true,
            server_prior: SERVER_PRIOR,
        }
    }
}

/// One match of a [`SearchIndex::search`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SearchHit {
    /// The tool's name.
    pub name: String,
    /// The fused score (higher is better; only comparable within one query).
    pub score: f32,
    /// The BM25 part of the score, service boost included (0 when the tool
    /// shares no word with the query).
    pub lexical: f32,
    /// `true` when the tool matched none of the query's own words (nor
    /// their long forms, compounds or typo corrections): it was found only
    /// through synonyms, related words, value kinds, the semantic signal or
    /// the fallback. A model should rephrase rather than trust it.
    pub weak: bool,
    /// `true` when the tool's server is one the query names (see
    /// [`Explanation::services`]).
    pub service: bool,
    /// The query terms (stemmed) the tool's text contains.
    pub matched: Vec<String>,
    /// Cosine similarity of the query's and the tool's vectors (0 without
    /// the semantic signal).
    pub semantic: f32,
}

/// One term a query looked for, as [`SearchIndex::explain`] reports it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct ExplainedTerm {
    /// The term, stemmed as the index stores it.
    pub term: String,
    /// Its weight (1.0 for the query's own words).
    pub weight: f32,
    /// How the query came to it.
    pub origin: Origin,
    /// Number of indexed tools whose text contains it.
    pub tools: usize,
}

/// Why a query found what it found, for hosts debugging a search
/// ([`SearchIndex::explain`]); the model sees only [`weak`](Self::weak).
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct Explanation {
    /// Every term looked for, with its weight and origin.
    pub terms: Vec<ExplainedTerm>,
    /// Corrections of misspelt words: (the query's word, the index word), both stemmed.
    pub corrections: Vec<(String, String)>,
    /// Servers the query names (by name, product, nickname or host), whose
    /// matching tools were boosted by [`SERVICE_BOOST`].
    pub services: Vec<String>,
    /// Servers the query implies without naming any (a word only their
    /// tools contain), whose matching tools were boosted by [`IMPLIED_BOOST`].
    pub implied: Vec<String>,
    /// `true` when no tool shares a word with the query and the hits come
    /// from the fallback: the semantic signal alone, or (without it, or
    /// when it finds nothing) the tools with the closest names.
    pub fallback: bool,
    /// `true` when the query asks to read (a question or a request to look
    /// with no verb of change), so the tools whose names say they change
    /// things were damped by [`READ_INTENT_DAMP`].
    pub asks_to_read: bool,
    /// `true` when the semantic signal took part.
    pub semantic: bool,
    /// `true` when the best hit is weak (see [`SearchHit::weak`]), or there is none.
    pub weak: bool,
    /// The hits, best first.
    pub hits: Vec<SearchHit>,
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
    signals: Signals,
    /// Term text → term id. Terms are never forgotten (a term whose
    /// tools all left has no postings); the vocabulary of tool texts is small.
    terms: FxHashMap<Box<str>, u32>,
    /// Word as written in tool texts (lower case, ASCII, one term) → its
    /// term id: the typo signal's second look-up (see `typo.rs`). Kept like
    /// `terms`.
    surface: FxHashMap<Box<str>, u32>,
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
    /// Its normalised vector (see [`embed`](self)), when the semantic signal is on.
    vector: Option<Box<[f32]>>,
}

/// Postings with their BM25 contribution, for one state of the documents:
/// the postings of term `t` are `postings[offsets[t]..offsets[t + 1]]`,
/// (document id, contribution) in document order.
#[derive(Debug, Clone, Default)]
struct Impacts {
    offsets: Vec<u32>,
    postings: Vec<(u32, f32)>,
    /// The servers of the documents (see [`service::server_of`]).
    servers: Vec<Box<str>>,
    /// Per document: its server's id in `servers`, or [`NO_SERVER`].
    doc_server: Vec<u32>,
    /// Server key (see [`service::server_keys`]) → the servers answering to it.
    server_keys: FxHashMap<String, Vec<u32>>,
    /// Per document: what its name says it does (see `intent.rs`).
    doc_action: Vec<intent::Action>,
    /// The tools' words as written (lower case) with their term ids, in
    /// byte order, for the prefix look-ups of clipped query words; sorted
    /// on the first query that needs it, so building pays nothing for it.
    prefixes: OnceLock<Vec<(Box<str>, u32)>>,
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
    /// Word → its summed token vector and token count (semantic signal).
    #[cfg(feature = "semantic")]
    word_vectors: FxHashMap<Box<str>, ([f32; embed::DIMS], usize)>,
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
        Self::build_with_signals(specs, w, Signals::default())
    }

    /// Indexes `specs` with the field weights `w` and the signals `signals`
    /// (`Signals { semantic: 0.0, .. }` builds a BM25-only index: no tool
    /// vectors are computed).
    pub fn build_with_signals<'a>(
        specs: impl IntoIterator<Item = &'a ToolSpec>,
        w: FieldWeights,
        signals: Signals,
    ) -> Self {
        let specs = specs.into_iter();
        let hint = specs.size_hint().0;
        let mut index = Self {
            weights: w,
            signals,
            // Tool texts share most words: about one new term per tool.
            terms: FxHashMap::with_capacity_and_hasher(hint.max(64), Default::default()),
            surface: FxHashMap::with_capacity_and_hasher(hint.max(64), Default::default()),
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
        let vector = self.doc_vector(spec, scratch);
        let Scratch {
            tf,
            seen,
            words,
            word_terms,
            ..
        } = scratch;
        seen.clear();
        let mut len = 0.0f32;
        let terms = &mut self.terms;
        let surface = &mut self.surface;
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
                        if run.1 == 1 && word.is_ascii() && !surface.contains_key(word) {
                            let lower = word.to_ascii_lowercase();
                            if !surface.contains_key(lower.as_str()) {
                                surface.insert(lower.into(), word_terms[from]);
                            }
                        }
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
            vector,
        });
        self.impacts = OnceLock::new();
    }

    /// The normalised vector of a tool's name, tags and description, when
    /// the semantic signal is on; words already seen in this build reuse
    /// their tokens' vectors.
    #[cfg(feature = "semantic")]
    fn doc_vector(&self, spec: &ToolSpec, scratch: &mut Scratch) -> Option<Box<[f32]>> {
        if self.signals.semantic <= 0.0 {
            return None;
        }
        let model = embed::model()?;
        let mut acc = [0.0f32; embed::DIMS];
        let mut n = 0;
        let cache = &mut scratch.word_vectors;
        let mut add = |text: &str| {
            embed::for_each_word(text, |w| {
                let (v, count) = cache.entry(w.into()).or_insert_with(|| {
                    let mut v = [0.0f32; embed::DIMS];
                    let count = model.add_word(w, &mut v);
                    (v, count)
                });
                acc.iter_mut().zip(v.iter()).for_each(|(a, x)| *a += x);
                n += *count;
            });
        };
        add(&spec.name);
        for tag in &spec.tags {
            add(tag);
        }
        add(&spec.description);
        (n > 0 && embed::normalise(&mut acc)).then(|| acc.to_vec().into_boxed_slice())
    }

    #[cfg(not(feature = "semantic"))]
    #[allow(clippy::unused_self, reason = "the same signature as with the feature")]
    fn doc_vector(&self, _: &ToolSpec, _: &mut Scratch) -> Option<Box<[f32]>> {
        None
    }

    /// Per document, the cosine similarity of its vector and `query`'s;
    /// empty when the semantic signal is off or the query has no vector.
    #[cfg(feature = "semantic")]
    fn semantic_scores(&self, query: &str) -> Vec<f32> {
        if self.signals.semantic <= 0.0 {
            return Vec::new();
        }
        let Some(q) = embed::model().and_then(|m| embed::embed(m, query)) else {
            return Vec::new();
        };
        self.docs
            .iter()
            .map(|d| d.vector.as_deref().map_or(0.0, |v| embed::dot(&q, v)))
            .collect()
    }

    #[cfg(not(feature = "semantic"))]
    #[allow(clippy::unused_self, reason = "the same signature as with the feature")]
    fn semantic_scores(&self, _: &str) -> Vec<f32> {
        Vec::new()
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
        let mut servers: Vec<Box<str>> = Vec::new();
        let mut server_ids: FxHashMap<&str, u32> = FxHashMap::default();
        let mut server_keys: FxHashMap<String, Vec<u32>> = FxHashMap::default();
        let doc_server = self
            .docs
            .iter()
            .map(|d| match service::server_of(&d.name) {
                None => NO_SERVER,
                Some(server) => *server_ids.entry(server).or_insert_with(|| {
                    let id = u32::try_from(servers.len()).unwrap_or(NO_SERVER);
                    servers.push(server.into());
                    for key in service::server_keys(server) {
                        // Query words arrive stemmed, products and URL parts as written.
                        let mut stemmed = key.clone();
                        tokenizer::stem(&mut stemmed);
                        for k in [key, stemmed] {
                            let list = server_keys.entry(k).or_default();
                            if !list.contains(&id) {
                                list.push(id);
                            }
                        }
                    }
                    id
                }),
            })
            .collect();
        let doc_action = self
            .docs
            .iter()
            .map(|d| intent::action_of(&d.name))
            .collect();
        Impacts {
            offsets,
            postings,
            servers,
            doc_server,
            server_keys,
            doc_action,
            prefixes: OnceLock::new(),
        }
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
    /// order). Tools sharing a term with the query (its words, their
    /// expansions and typo corrections, see the module docs) are ranked by
    /// BM25, boosted when their server is named; when no tool shares one,
    /// the fallback lists the tools whose names are closest to the query,
    /// flagged weak, so the list is empty only when the index is (or
    /// `limit` is 0). The first search after a change computes the
    /// contributions again (see the type's docs).
    pub fn search(&self, query: &str, limit: usize) -> Vec<SearchHit> {
        self.explain(query, limit).hits
    }

    /// [`search`](Self::search) with the reasons: the terms looked for and
    /// where they came from, typo corrections, the servers named, whether
    /// the fallback answered, and per hit which terms matched.
    pub fn explain(&self, query: &str, limit: usize) -> Explanation {
        let impacts = self.impacts();
        let mut terms = tokenizer::query_terms_with(query, self.signals.jargon);
        let df = |term: &str| -> u32 {
            self.terms.get(term).map_or(0, |&id| {
                impacts.offsets[id as usize + 1] - impacts.offsets[id as usize]
            })
        };
        // Typo tolerance: the query's own words no tool contains, the
        // first few that could be corrected, each by its stem and then as
        // written (see `typo.rs`).
        let mut corrections = Vec::new();
        let mut unknown: Vec<(String, String)> = Vec::new();
        // The query's words (lower case as written, stemmed), for the
        // typo and prefix look-ups; only the words no tool has are kept.
        let missing: Vec<(String, String)> = if self.signals.typos || self.signals.prefixes {
            tokenizer::query_words(query)
                .into_iter()
                .filter(|(_, stemmed)| df(stemmed) == 0)
                .collect()
        } else {
            Vec::new()
        };
        if self.signals.typos {
            for (lower, stemmed) in missing.iter().cloned() {
                if unknown.len() < typo::MAX_WORDS
                    && df(&stemmed) == 0
                    && stemmed.len().max(lower.len()) >= typo::MIN_LEN
                    && !unknown.iter().any(|(_, s)| *s == stemmed)
                    && !known_word(&lower)
                {
                    unknown.push((lower, stemmed));
                }
            }
        }
        let surface_df = |word: &str| -> u32 {
            self.surface.get(word).map_or(0, |&id| {
                impacts.offsets[id as usize + 1] - impacts.offsets[id as usize]
            })
        };
        for (lower, word) in unknown {
            // A word as written that is one term: its term is its token.
            // As written first: the letters the user typed are closer to
            // the word meant than its stem is (`pasue` is `pause` swapped,
            // but its stem `pasu` is one letter from `past`).
            let fix = typo::correct(&lower, surface_df)
                .and_then(|w| tokenizer::tokens(&w).into_iter().next())
                .or_else(|| typo::correct(&word, df));
            if let Some(fix) = fix {
                match terms.iter_mut().find(|q| q.term == fix) {
                    Some(q) if q.weight >= TYPO_WEIGHT => {}
                    Some(q) => {
                        q.weight = TYPO_WEIGHT;
                        q.origin = Origin::Typo;
                    }
                    None => terms.push(tokenizer::QueryTerm {
                        term: fix.clone(),
                        weight: TYPO_WEIGHT,
                        origin: Origin::Typo,
                    }),
                }
                corrections.push((word, fix));
            }
        }
        // Clipped words (`ack`, `cal`, `coords`): a query word no tool has,
        // not corrected as a typo, read as the few index words it begins.
        if self.signals.prefixes {
            for (lower, stemmed) in &missing {
                if corrections.iter().any(|(w, _)| w == stemmed) {
                    continue;
                }
                for id in self.prefix_terms(lower, impacts) {
                    let Some(term) = self.term_text(id) else {
                        continue;
                    };
                    if !terms.iter().any(|q| q.term == term) {
                        terms.push(tokenizer::QueryTerm {
                            term,
                            weight: PREFIX_WEIGHT,
                            origin: Origin::Prefix,
                        });
                    }
                }
            }
        }
        let n = self.docs.len();
        let mut scores = vec![0.0f32; n];
        let mut strong = vec![false; n];
        let mut touched: Vec<u32> = Vec::new();
        let mut ids: Vec<(u32, usize)> = Vec::new();
        for (at, q) in terms.iter().enumerate() {
            let Some(&id) = self.terms.get(q.term.as_str()) else {
                continue;
            };
            ids.push((id, at));
            let (from, to) = (
                impacts.offsets[id as usize] as usize,
                impacts.offsets[id as usize + 1] as usize,
            );
            let is_strong = q.origin.is_strong();
            for &(doc, impact) in &impacts.postings[from..to] {
                let score = &mut scores[doc as usize];
                if *score == 0.0 {
                    touched.push(doc);
                }
                *score += q.weight * impact;
                strong[doc as usize] |= is_strong;
            }
        }
        let services = if self.signals.services {
            self.named_services(query, &terms, impacts)
        } else {
            Vec::new()
        };
        // A service only implied counts when the query names none.
        let implied = if self.signals.implied && services.is_empty() {
            self.implied_services(&terms, impacts)
        } else {
            Vec::new()
        };
        let mut boosted = vec![false; impacts.servers.len()];
        for &s in &services {
            boosted[s as usize] = true;
        }
        let mut factor = vec![1.0f32; impacts.servers.len()];
        for &s in &implied {
            factor[s as usize] = 1.0 + IMPLIED_BOOST;
        }
        for &s in &services {
            factor[s as usize] = 1.0 + SERVICE_BOOST;
        }
        if !services.is_empty() || !implied.is_empty() {
            for &doc in &touched {
                let s = impacts.doc_server[doc as usize];
                if s != NO_SERVER {
                    scores[doc as usize] *= factor[s as usize];
                }
            }
        }
        let fallback = touched.is_empty() && n > 0 && limit > 0;
        let lexical = scores.clone();
        let semantic = self.semantic_scores(query);
        if !semantic.is_empty() {
            // Score fusion: BM25 over the query's best BM25, plus the
            // weighted cosine; tools with no shared word enter when close.
            let best = touched
                .iter()
                .map(|&d| scores[d as usize])
                .fold(0.0f32, f32::max);
            let inv = if best > 0.0 { 1.0 / best } else { 0.0 };
            let floor = if touched.is_empty() {
                0.0
            } else {
                SEMANTIC_MIN
            };
            touched.clear();
            for (d, (score, &cos)) in scores.iter_mut().zip(&semantic).enumerate() {
                let lex = *score;
                *score = lex * inv + self.signals.semantic * cos.max(0.0);
                if lex > 0.0 || (cos > floor && cos >= f32::EPSILON) {
                    touched.push(u32::try_from(d).unwrap_or(u32::MAX));
                }
            }
        }
        // The server prior: a server is picked with the tool (each tool
        // also scores a share of its server's best score).
        if self.signals.server_prior > 0.0 && !touched.is_empty() {
            let mut best_of = vec![0.0f32; impacts.servers.len()];
            let mut best = 0.0f32;
            for &d in &touched {
                let score = scores[d as usize];
                best = best.max(score);
                let s = impacts.doc_server[d as usize];
                if s != NO_SERVER {
                    let b = &mut best_of[s as usize];
                    *b = b.max(score);
                }
            }
            if best > 0.0 {
                // In units of the fused score: 1 with the semantic signal
                // (BM25 over the best BM25, plus the cosine), the best BM25
                // score without it.
                let unit = if semantic.is_empty() { best } else { 1.0 };
                let w = self.signals.server_prior * unit / best;
                // A floor under the `limit`-th best final score: each
                // server's best tool ends at least at (1 + w) × its score,
                // divided by the read-or-change damping it may get. A tool
                // below it even with its bonus cannot be listed, so it is
                // dropped here rather than ranked (the list is the same;
                // the ranking's selection gets far fewer tools).
                let mut tops: Vec<f32> = best_of.iter().copied().filter(|&b| b > 0.0).collect();
                let floor = if limit > 0 && tops.len() >= limit {
                    let (_, nth, _) = tops.select_nth_unstable_by(limit - 1, |a, b| b.total_cmp(a));
                    *nth * (1.0 + w) / (1.0 + self.signals.intent.max(0.0))
                } else {
                    0.0
                };
                touched.retain(|&d| {
                    let s = impacts.doc_server[d as usize];
                    let bonus = if s == NO_SERVER {
                        0.0
                    } else {
                        w * best_of[s as usize]
                    };
                    let score = &mut scores[d as usize];
                    *score += bonus;
                    *score >= floor
                });
            }
        }
        // Read or change (see `intent.rs`): a query that asks to look
        // damps the tools that change things.
        let asks_to_read = self.signals.intent > 0.0
            && intent::asks_to_read(query, || {
                tokenizer::query_words(query)
                    .into_iter()
                    .map(|(w, _)| w)
                    .collect()
            });
        if asks_to_read {
            let damp = 1.0 / (1.0 + self.signals.intent);
            for &doc in &touched {
                if impacts.doc_action[doc as usize] == intent::Action::Write {
                    scores[doc as usize] *= damp;
                }
            }
        }
        if touched.is_empty() && n > 0 && limit > 0 {
            touched = self.closest_names(query, limit, &mut scores);
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
        let hits: Vec<SearchHit> = touched
            .into_iter()
            .map(|d| {
                let doc = &self.docs[d as usize];
                let own = self.terms_of(doc);
                let matched = ids
                    .iter()
                    .filter(|(id, _)| own.iter().any(|(t, _)| t == id))
                    .map(|&(_, at)| terms[at].term.clone())
                    .collect();
                let s = impacts.doc_server[d as usize];
                SearchHit {
                    name: doc.name.to_string(),
                    score: scores[d as usize],
                    lexical: lexical[d as usize],
                    weak: lexical[d as usize] <= 0.0 || !strong[d as usize],
                    service: s != NO_SERVER && boosted[s as usize],
                    matched,
                    semantic: semantic.get(d as usize).copied().unwrap_or(0.0),
                }
            })
            .collect();
        Explanation {
            terms: terms
                .iter()
                .map(|q| ExplainedTerm {
                    term: q.term.clone(),
                    weight: q.weight,
                    origin: q.origin,
                    tools: df(&q.term) as usize,
                })
                .collect(),
            corrections,
            services: services
                .iter()
                .map(|&s| impacts.servers[s as usize].to_string())
                .collect(),
            implied: implied
                .iter()
                .map(|&s| impacts.servers[s as usize].to_string())
                .collect(),
            fallback,
            asks_to_read,
            semantic: !semantic.is_empty(),
            weak: hits.first().is_none_or(|h| h.weak),
            hits,
        }
    }

    /// The servers (ids in [`Impacts::servers`]) `query` names or implies:
    /// see [`service`]'s docs for the rules.
    fn named_services(
        &self,
        query: &str,
        terms: &[tokenizer::QueryTerm],
        impacts: &Impacts,
    ) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        if impacts.servers.is_empty() {
            return found;
        }
        let mut add = |s: u32| {
            if !found.contains(&s) {
                found.push(s);
            }
        };
        let by_key = |key: &str, add: &mut dyn FnMut(u32)| {
            if let Some(list) = impacts.server_keys.get(key) {
                list.iter().for_each(|&s| add(s));
            }
        };
        // Products, nicknames and URL parts: clear by themselves.
        let mut cues: Vec<String> = Vec::new();
        for word in query
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            cues.push(word.to_lowercase());
        }
        // Names written in two words (`Google Calendar`, `Brave Search`,
        // `MS Teams`, `vector memory`): each pair of neighbouring words,
        // joined, is a cue too, and is looked up among the servers' keys
        // (issue 31's fifth round).
        for i in 1..cues.len() {
            let joined = format!("{}{}", cues[i - 1], cues[i]);
            by_key(&joined, &mut add);
            cues.push(joined);
        }
        service::url_words(query, |w| cues.push(w.to_owned()));
        for cue in &cues {
            for servers in service::products_of(cue) {
                for s in *servers {
                    by_key(s, &mut add);
                }
            }
        }
        service::url_words(query, |w| by_key(w, &mut add));
        // Values whose syntax is one service's (JQL, a Slack `ts`, a Stripe id).
        for q in terms.iter().filter(|q| q.origin == Origin::ValueKind) {
            for (kind, servers) in kind_services() {
                if *kind == q.term {
                    servers.iter().for_each(|s| by_key(s, &mut add));
                }
            }
        }
        // The query's own words (and long forms) that are a server's name,
        // when most tools containing the word are that server's.
        for q in terms.iter().filter(|q| {
            matches!(
                q.origin,
                Origin::Query | Origin::Alias | Origin::Typo | Origin::Prefix
            )
        }) {
            let Some(list) = impacts.server_keys.get(q.term.as_str()) else {
                continue;
            };
            let postings = self.terms.get(q.term.as_str()).map(|&id| {
                &impacts.postings[impacts.offsets[id as usize] as usize
                    ..impacts.offsets[id as usize + 1] as usize]
            });
            for &s in list {
                let clear = postings.is_none_or(|p| {
                    let inside = p
                        .iter()
                        .filter(|(d, _)| impacts.doc_server[*d as usize] == s)
                        .count();
                    inside * 2 >= p.len()
                });
                if clear {
                    add(s);
                }
            }
        }
        found
    }

    /// The servers (ids in [`Impacts::servers`]) a query implies without
    /// naming them: a word of the query's own (or its long form, jargon
    /// meaning or typo correction) that at least 2 and at most
    /// [`IMPLIED_MAX_TOOLS`] tools contain, all of one server: the query
    /// names a thing only that server deals with (`helm`, in the names of
    /// the Kubernetes server's Helm tools). A word those tools' descriptions
    /// or parameters merely mention (a `db` parameter) implies nothing: the
    /// word must weigh at least a tag word in each tool (be in its name or
    /// tags, or come back in its text). Looks at each
    /// such word's postings once: at most
    /// [`IMPLIED_MAX_TOOLS`] per word.
    fn implied_services(&self, terms: &[tokenizer::QueryTerm], impacts: &Impacts) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        // Values that point at a service (a path of this machine).
        for q in terms.iter().filter(|q| q.origin == Origin::ValueKind) {
            for (kind, servers) in service::KIND_IMPLIES {
                if *kind == q.term {
                    for s in *servers {
                        for &id in impacts.server_keys.get(*s).into_iter().flatten() {
                            if !found.contains(&id) {
                                found.push(id);
                            }
                        }
                    }
                }
            }
        }
        for q in terms.iter().filter(|q| {
            matches!(
                q.origin,
                Origin::Query | Origin::Alias | Origin::Jargon | Origin::Typo | Origin::Prefix
            )
        }) {
            let Some(&id) = self.terms.get(q.term.as_str()) else {
                continue;
            };
            let p = &impacts.postings
                [impacts.offsets[id as usize] as usize..impacts.offsets[id as usize + 1] as usize];
            if p.len() < 2 || p.len() > IMPLIED_MAX_TOOLS {
                continue;
            }
            let s = impacts.doc_server[p[0].0 as usize];
            if s != NO_SERVER
                && p.iter().all(|(d, _)| {
                    let doc = &self.docs[*d as usize];
                    impacts.doc_server[*d as usize] == s
                        && self
                            .terms_of(doc)
                            .iter()
                            .any(|&(t, tf)| t == id && tf >= self.weights.tags)
                })
                && !found.contains(&s)
            {
                found.push(s);
            }
        }
        found
    }

    /// The term ids a clipped query word `lower` (lower case, as written)
    /// stands for: the terms of the tools' words that begin with it and are
    /// longer, when there are 1 to [`PREFIX_MAX_TERMS`] of them; a word
    /// ending in `s` with none is tried once more without it (`coords`,
    /// `vids`). Only words of 3 to 6 ASCII letters that are not function
    /// words ([`PREFIX_SKIP`]) are read so: longer ones are words, not
    /// clippings. Bounded: two binary searches in the sorted word list and
    /// at most [`PREFIX_SCAN`] words looked at each.
    fn prefix_terms(&self, lower: &str, impacts: &Impacts) -> Vec<u32> {
        let mut found: Vec<u32> = Vec::new();
        if !(3..=6).contains(&lower.len())
            || !lower.bytes().all(|b| b.is_ascii_lowercase())
            || PREFIX_SKIP.binary_search(&lower).is_ok()
        {
            return found;
        }
        let list = impacts.prefixes.get_or_init(|| {
            let mut v: Vec<(Box<str>, u32)> = self
                .surface
                .iter()
                .map(|(w, &id)| (w.clone(), id))
                .collect();
            v.sort_unstable();
            v
        });
        let live = |id: u32| impacts.offsets[id as usize + 1] > impacts.offsets[id as usize];
        let mut base = lower;
        loop {
            let from = list.partition_point(|(w, _)| &**w < base);
            for (w, id) in list[from..].iter().take(PREFIX_SCAN) {
                if !w.starts_with(base) || found.len() > PREFIX_MAX_TERMS {
                    break;
                }
                if w.len() > base.len() && !found.contains(id) && live(*id) {
                    found.push(*id);
                }
            }
            match base.strip_suffix('s') {
                Some(shorter) if found.is_empty() && shorter.len() >= 3 && base == lower => {
                    base = shorter;
                }
                _ => break,
            }
        }
        if found.len() > PREFIX_MAX_TERMS {
            found.clear();
        }
        found
    }

    /// The text of term `id` (a scan of the vocabulary: called for the few
    /// terms of clipped words only).
    fn term_text(&self, id: u32) -> Option<String> {
        self.terms
            .iter()
            .find(|&(_, &t)| t == id)
            .map(|(text, _)| text.to_string())
    }

    /// The fallback of a query no tool shares a term with: the `limit`
    /// tools whose names are closest to the query
    /// (`tool_rules::suggest::ranked`, spaces read as `_`), then the others
    /// in name order; each scored below any real match.
    fn closest_names(&self, query: &str, limit: usize, scores: &mut [f32]) -> Vec<u32> {
        let target = query.trim().to_lowercase().replace(' ', "_");
        let names: Vec<&str> = self.docs.iter().map(|d| &*d.name).collect();
        let ranked = tool_rules::suggest::ranked(&target, names.iter().copied(), limit);
        let mut out: Vec<u32> = Vec::with_capacity(limit);
        for name in ranked {
            if let Some(&d) = self.by_name.get(name) {
                out.push(d);
            }
        }
        // Then the first names in name order: the same list however the
        // index came to hold its tools.
        let need = limit.saturating_sub(out.len());
        if need > 0 {
            let mut rest: Vec<u32> = (0..self.docs.len())
                .map(|d| u32::try_from(d).unwrap_or(u32::MAX))
                .filter(|d| !out.contains(d))
                .collect();
            let by_name = |a: &u32, b: &u32| {
                self.docs[*a as usize]
                    .name
                    .cmp(&self.docs[*b as usize].name)
            };
            if rest.len() > need {
                rest.select_nth_unstable_by(need - 1, by_name);
                rest.truncate(need);
            }
            rest.sort_unstable_by(by_name);
            out.extend(rest);
        }
        #[allow(clippy::cast_precision_loss, reason = "at most MAX_RESULTS_LIMIT")]
        for (rank, &d) in out.iter().enumerate() {
            scores[d as usize] = 1e-3 / (rank as f32 + 1.0);
        }
        out
    }
}

/// Whether `lower` (a query word as written, lower case) is a word of
/// English the semantic model has a token of its own for (see
/// `embed::Model::is_word`): such a word is not a typo, even when no tool
/// uses it (`stuck` is not a misspelt `stock`, nor `park` of `mark`).
/// Without the `semantic` feature there is no word list: every unknown
/// word may be corrected.
#[cfg(feature = "semantic")]
fn known_word(lower: &str) -> bool {
    embed::model().is_some_and(|m| m.is_word(lower))
}

#[cfg(not(feature = "semantic"))]
fn known_word(_: &str) -> bool {
    false
}

/// Function words that are never a clipped word (pronouns, determiners,
/// adverbs of degree: `his` is not `history`, `every` not `everything`).
const PREFIX_SKIP: &[&str] = &[
    "ago", "also", "each", "every", "few", "her", "hers", "him", "his", "just", "many", "much",
    "nor", "not", "only", "own", "same", "such", "than", "too", "very", "yet",
];

/// Most words of the sorted word list a prefix look-up reads: 64.
const PREFIX_SCAN: usize = 64;

/// [`service::KIND_SERVICES`] with each kind stemmed as query terms are.
fn kind_services() -> &'static [(String, &'static [&'static str])] {
    static STEMMED: OnceLock<Vec<(String, &'static [&'static str])>> = OnceLock::new();
    STEMMED.get_or_init(|| {
        service::KIND_SERVICES
            .iter()
            .map(|(kind, servers)| {
                let mut k = (*kind).to_owned();
                tokenizer::stem(&mut k);
                (k, *servers)
            })
            .collect()
    })
}

/// [`Impacts::doc_server`] of a tool whose name has no `<server>__` part.
const NO_SERVER: u32 = u32::MAX;

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
    fn a_question_damps_the_siblings_that_change_things() {
        let specs = [
            spec(
                "github__create_branch",
                "Create a branch: a new branch of a GitHub repository from a base branch.",
            ),
            spec(
                "github__list_branches",
                "List the branches of a GitHub repository and their latest commits.",
            ),
        ];
        let index = SearchIndex::build(specs.iter());
        let e = index.explain("which branches exist in the acme/web repo", 2);
        assert!(e.asks_to_read);
        assert_eq!(e.hits[0].name, "github__list_branches");
        assert_eq!(
            e.hits[1].name, "github__create_branch",
            "damped, not hidden"
        );
        let e = index.explain("make a new branch in acme/web", 2);
        assert!(!e.asks_to_read);
        assert_eq!(e.hits[0].name, "github__create_branch");
        let off = SearchIndex::build_with_signals(
            specs.iter(),
            FieldWeights::default(),
            Signals {
                intent: 0.0,
                ..Signals::default()
            },
        );
        let q = "which branches exist in the acme/web repo";
        let (on, off) = (index.explain(q, 2), off.explain(q, 2));
        assert!(!off.asks_to_read);
        let score = |e: &Explanation, name: &str| {
            e.hits
                .iter()
                .find(|h| h.name == name)
                .map(|h| h.score)
                .unwrap_or_default()
        };
        let ratio = score(&off, "github__create_branch") / score(&on, "github__create_branch");
        assert!((ratio - (1.0 + READ_INTENT_DAMP)).abs() < 1e-4, "{ratio}");
        assert!(
            (score(&off, "github__list_branches") - score(&on, "github__list_branches")).abs()
                < 1e-6,
            "readers keep their score"
        );
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
        // No shared word: the fallback still lists tools, flagged weak.
        let fallback = index.explain("zebra", 5);
        assert!(fallback.fallback && fallback.weak);
        assert_eq!(fallback.hits.len(), 4);
        assert!(fallback.hits.iter().all(|h| h.weak && h.lexical == 0.0));
        assert!(index.search("zebra", 0).is_empty());
        assert!(SearchIndex::build([].iter()).search("zebra", 5).is_empty());
    }

    #[test]
    fn weak_hits_matched_only_through_looser_signals() {
        let specs = [
            spec("weather__forecast", "Weather forecast for a city."),
            spec("files__read_file", "Read a file's text."),
        ];
        let index = SearchIndex::build(specs.iter());
        // `rain` is only a related word of `weather`.
        let e = index.explain("will it rain", 5);
        assert_eq!(e.hits[0].name, "weather__forecast");
        assert!(e.weak && e.hits[0].weak && !e.fallback);
        let rel = e
            .terms
            .iter()
            .find(|t| t.term == "weather")
            .map(|t| t.origin);
        assert_eq!(rel, Some(Origin::Related));
        let e = index.explain("weather in Oslo", 5);
        assert!(!e.weak && !e.hits[0].weak);
        assert_eq!(e.hits[0].matched, ["weather"]);
    }

    #[test]
    fn misspelt_words_are_corrected_below_exact_ones() {
        let specs = [
            spec("github__search_code", "Search code in repositories."),
            spec("slack__post_message", "Post a message to a channel."),
        ];
        let index = SearchIndex::build(specs.iter());
        let e = index.explain("serach the repositries", 5);
        assert_eq!(
            e.corrections,
            [
                ("serach".to_owned(), "search".to_owned()),
                ("repositri".to_owned(), "repositori".to_owned())
            ]
        );
        assert_eq!(e.hits[0].name, "github__search_code");
        assert!(!e.weak, "a corrected word is a strong match");
        let exact = index.explain("search the repositories", 5).hits[0].score;
        assert!(e.hits[0].score < exact, "{} < {exact}", e.hits[0].score);
    }

    #[test]
    fn misspelt_words_are_also_corrected_as_written() {
        // The stems of `stirpe` and `custmer` (`stirp`, `custmer`) are two
        // edits from `stripe` and `custom` (the stem of `customer`); the
        // words as written are one edit from words of the tools.
        let specs = [
            spec("stripe__list_customers", "Find a Stripe customer by email."),
            spec("stripe__create_refund", "Refund a charge."),
            spec("kubernetes__list_pods", "List the pods of a namespace."),
            spec(
                "vercel__list_deployments",
                "List deployments in production.",
            ),
        ];
        let index = SearchIndex::build(specs.iter());
        let e = index.explain("stirpe custmer lookup", 5);
        assert_eq!(
            e.corrections,
            [
                ("stirp".to_owned(), "stripe".to_owned()),
                ("custmer".to_owned(), "custom".to_owned())
            ]
        );
        assert_eq!(e.services, ["stripe"], "a corrected word names its server");
        assert_eq!(e.hits[0].name, "stripe__list_customers");
        // `prod` is not a misspelt `pod` (no deletion from four letters).
        let e = index.explain("deploymnets in prod", 5);
        assert_eq!(
            e.corrections,
            [("deploymnet".to_owned(), "deploy".to_owned())]
        );
        assert_eq!(e.hits[0].name, "vercel__list_deployments");
    }

    #[test]
    fn a_named_service_is_boosted_and_others_stay() {
        let specs = [
            spec("github__list_issues", "List the issues of a repository."),
            spec("gitlab__list_issues", "List the issues of a project."),
            spec("gcs__list_objects", "List the objects in a bucket."),
            spec("s3__list_objects", "List the objects in a bucket."),
        ];
        let index = SearchIndex::build(specs.iter());
        let e = index.explain("list the issues on gitlab", 5);
        assert_eq!(e.services, ["gitlab"]);
        assert_eq!(e.hits[0].name, "gitlab__list_issues");
        assert!(e.hits[0].service);
        assert!(
            e.hits
                .iter()
                .any(|h| h.name == "github__list_issues" && !h.service)
        );
        let e = index.explain("list the objects in gs://backups/2024/", 5);
        assert_eq!(e.services, ["gcs"]);
        assert_eq!(e.hits[0].name, "gcs__list_objects");
        let plain = index.explain("list the objects", 5);
        assert!(plain.services.is_empty());
        let boosted = e.hits[0].score / plain.hits[0].score;
        assert!(boosted <= 1.0 + SERVICE_BOOST + 1e-4, "bounded: {boosted}");
        assert_eq!(
            e.hits[1].name, "s3__list_objects",
            "the other server's bucket tool stays"
        );
    }

    #[test]
    fn a_service_named_in_two_words_is_named() {
        let specs = [
            spec("gcal__list_events", "List the events of a calendar."),
            spec(
                "outlook_calendar__list_events",
                "List the events of a calendar.",
            ),
            spec("brave_search__web_search", "Search the web."),
            spec("github__search_code", "Search code in repositories."),
        ];
        let index = SearchIndex::build(specs.iter());
        let e = index.explain("events on my Google Calendar this week", 5);
        assert_eq!(e.services, ["gcal"]);
        assert_eq!(e.hits[0].name, "gcal__list_events");
        assert_eq!(
            e.hits[1].name, "outlook_calendar__list_events",
            "others stay"
        );
        let e = index.explain("use brave search for rust async runtimes", 5);
        assert_eq!(e.services, ["brave_search"]);
        // One word of a two-word name is not the name.
        assert!(index.explain("search the calendar", 5).services.is_empty());
    }

    #[test]
    fn clipped_words_read_as_the_words_they_begin() {
        let specs = [
            spec(
                "pd__resolve_incident",
                "Resolve an incident: the incident is closed.",
            ),
            spec("pd__acknowledge_incident", "Acknowledge an incident."),
            spec("maps__geocode", "Coordinates of an address or a place."),
            spec("git__log", "Show the commit history."),
        ];
        let index = SearchIndex::build(specs.iter());
        let e = index.explain("ack incident 42", 5);
        assert!(
            e.terms
                .iter()
                .any(|t| t.term == "acknowledg" && t.origin == Origin::Prefix),
            "{:?}",
            e.terms
        );
        assert_eq!(e.hits[0].name, "pd__acknowledge_incident");
        assert_eq!(e.hits[1].name, "pd__resolve_incident", "the sibling stays");
        // A plural clipping: `coords` → `coord` → coordinates.
        let e = index.explain("coords of the Brandenburger Tor", 5);
        assert_eq!(e.hits[0].name, "maps__geocode");
        assert!(!e.fallback && !e.hits[0].weak, "{e:?}");
        // Function words are not clippings (`his` is not `history`).
        let e = index.explain("his incidents", 5);
        assert!(e.terms.iter().all(|t| t.origin != Origin::Prefix));
        // Without the signal the clipped word finds nothing.
        let off = Signals {
            prefixes: false,
            ..Signals::default()
        };
        let plain = SearchIndex::build_with_signals(specs.iter(), FieldWeights::default(), off);
        assert_eq!(
            plain.explain("ack incident 42", 5).hits[0].name,
            "pd__resolve_incident"
        );
    }

    #[test]
    fn the_server_prior_lifts_the_siblings_of_a_strong_match() {
        let specs = [
            spec("acme__sync_widgets", "Sync the widgets of the ledger."),
            spec("acme__ledger_report", "Report of the ledger."),
            spec(
                "other__ledger_notes",
                "Notes on a ledger, ledger entries and ledgers.",
            ),
        ];
        let mut s = Signals {
            semantic: 0.0,
            ..Signals::default()
        };
        let with = SearchIndex::build_with_signals(specs.iter(), FieldWeights::default(), s);
        s.server_prior = 0.0;
        let without = SearchIndex::build_with_signals(specs.iter(), FieldWeights::default(), s);
        let names = |i: &SearchIndex| -> Vec<String> {
            i.search("sync widgets ledger", 5)
                .into_iter()
                .map(|h| h.name)
                .collect()
        };
        assert_eq!(
            names(&without),
            [
                "acme__sync_widgets",
                "other__ledger_notes",
                "acme__ledger_report"
            ]
        );
        assert_eq!(
            names(&with),
            [
                "acme__sync_widgets",
                "acme__ledger_report",
                "other__ledger_notes"
            ]
        );
    }

    #[test]
    fn a_short_list_is_the_head_of_a_long_one() {
        // The server prior drops the tools that cannot reach the list
        // before ranking: the first k of 50 are the list of k.
        let specs = [
            spec("a__list_items", "List the items of a ledger."),
            spec("a__create_item", "Create an item in a ledger."),
            spec("b__list_entries", "List ledger entries."),
            spec("b__delete_entry", "Delete a ledger entry."),
            spec("c__items", "Items and entries, listed."),
            spec("d__ledger", "Show a ledger."),
            spec("e__report", "A report of items."),
            spec("f__notes", "Notes on entries of a ledger."),
        ];
        for semantic in [0.0, 1.0] {
            let s = Signals {
                semantic,
                ..Signals::default()
            };
            let index = SearchIndex::build_with_signals(specs.iter(), FieldWeights::default(), s);
            for q in [
                "list the ledger items",
                "which entries are there?",
                "delete an entry",
            ] {
                let all: Vec<String> = index.search(q, 50).into_iter().map(|h| h.name).collect();
                for k in 1..=all.len() {
                    let head: Vec<String> =
                        index.search(q, k).into_iter().map(|h| h.name).collect();
                    assert_eq!(head, all[..k], "{q:?}, limit {k}, semantic {semantic}");
                }
            }
        }
    }

    #[test]
    fn a_word_only_one_server_names_its_tools_with_implies_that_server() {
        let specs = [
            spec("kubernetes__helm_list", "List the releases in the cluster."),
            spec("kubernetes__helm_install", "Install a chart as a release."),
            spec("sentry__list_releases", "List the releases of a project."),
            spec("mongodb__count", "Count the documents of a collection."),
            spec("mongodb__find", "Find documents; count them with a filter."),
            spec("sqlite__read_query", "Run a SELECT query, e.g. a count."),
        ];
        let index = SearchIndex::build(specs.iter());
        let e = index.explain("list helm releases", 3);
        assert_eq!(e.implied, ["kubernetes"]);
        assert!(e.services.is_empty());
        assert_eq!(e.hits[0].name, "kubernetes__helm_list");
        assert_eq!(e.hits[1].name, "sentry__list_releases", "never hidden");
        let plain = SearchIndex::build_with_signals(
            specs.iter(),
            FieldWeights::default(),
            Signals {
                implied: false,
                semantic: 0.0,
                ..Signals::default()
            },
        );
        let no_sem = SearchIndex::build_with_signals(
            specs.iter(),
            FieldWeights::default(),
            Signals {
                semantic: 0.0,
                ..Signals::default()
            },
        );
        let (a, b) = (
            no_sem.search("list helm releases", 1),
            plain.search("list helm releases", 1),
        );
        let boost = a[0].score / b[0].score;
        assert!(
            (boost - (1.0 + IMPLIED_BOOST)).abs() < 1e-4,
            "bounded: {boost}"
        );
        // `count` names one MongoDB tool but the other only mentions it:
        // no server is implied.
        assert!(index.explain("count rows", 3).implied.is_empty());
        // A query that names a server implies no other.
        let named = index.explain("helm releases in sentry", 3);
        assert_eq!(named.services, ["sentry"]);
        assert!(named.implied.is_empty());
    }

    #[test]
    fn jargon_reaches_the_words_tools_use() {
        let specs = [
            spec("filesystem__create_directory", "Make a directory."),
            spec("filesystem__list_directory", "List a directory's entries."),
            spec("git__reset", "Unstage all staged changes."),
            spec(
                "git__diff_unstaged",
                "Show unstaged changes in the working tree.",
            ),
            spec(
                "maps__timezone_at",
                "Time zone at a latitude and longitude.",
            ),
            spec("docker__pull_image", "Pull an image from a registry."),
            spec("git__pull", "Pull from the remote."),
        ];
        let index = SearchIndex::build(specs.iter());
        let first = |q: &str| index.search(q, 1)[0].name.clone();
        assert_eq!(first("mkdir reports"), "filesystem__create_directory");
        assert_eq!(first("ls -la ~/projects"), "filesystem__list_directory");
        assert_eq!(first("unstage everything"), "git__reset");
        assert_eq!(first("TZ at 48.85,2.35"), "maps__timezone_at");
        assert_eq!(first("pull nginx:1.25"), "docker__pull_image");
        let e = index.explain("mkdir reports", 1);
        assert!(
            e.terms
                .iter()
                .any(|t| t.term == "directori" && t.origin == Origin::Jargon)
        );
        assert!(!e.weak, "jargon is the query's own word for the thing");
    }

    #[test]
    fn acronym_plurals_rank_as_lower_case() {
        // Issue 31: "open PRs on GitHub" ranked the tool 12th, "open prs" 1st.
        let specs = [
            spec(
                "github__list_pull_requests",
                "List pull requests of a repository.",
            ),
            spec(
                "github__list_issues",
                "List the open issues of a repository.",
            ),
            spec(
                "shell__list_processes",
                "List running processes with their PIDs.",
            ),
            spec("shell__kill", "Stop a process by its pid."),
        ];
        let index = SearchIndex::build(specs.iter());
        assert_eq!(
            index.search("open PRs on GitHub", 1)[0].name,
            "github__list_pull_requests"
        );
        assert_eq!(
            index.search("PIDs of my processes", 1)[0].name,
            "shell__list_processes"
        );
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
