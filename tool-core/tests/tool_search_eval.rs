//! Retrieval quality of `tool_search` on the project's evaluation set
//! (`tests/data/tool_search/`, written by someone who did not tune the
//! ranker; see its README): every tool registered as a runtime tool in one
//! deferred view, one `tool_search` call per query, recall@1 and recall@5.
//!
//! The tuning set (`queries.json`) must reach recall@5 ≥ 0.9. The other
//! sets are reported separately, each when present, and asserted only to
//! be answered:
//!
//! - `queries_holdout.json`, `queries_holdout2.json`: written without seeing
//!   the ranker; issue 31 tuned on them;
//! - `queries_holdout3.json`: 193 queries written for issue 31 by a reviewer
//!   who never saw the ranker, measured once as a held-out set (recall@1
//!   0.705, recall@5 0.881) and **used for tuning since** (issue 31's
//!   tuning round), with a per-style table;
//! - `queries_holdout4.json`: 186 queries written for issue 31 by a reviewer
//!   who never saw the ranker, measured once as a held-out set (recall@1
//!   0.747, recall@5 0.909) and **used for tuning since** (issue 31's
//!   second round), with a per-style table;
//! - `queries_holdout5.json`: 190 queries written for issue 31 by a reviewer
//!   who never saw the ranker, measured once as a held-out set (recall@1
//!   0.737, recall@5 0.911) and **used for tuning since** (issue 31's
//!   third round), with a per-style table;
//! - `queries_holdout6.json`: 207 queries written for issue 31 by a reviewer
//!   who never saw the ranker, measured once as a held-out set (recall@1
//!   0.700, recall@5 0.879) and **used for tuning since** (issue 31's fifth
//!   round), with a per-style table;
//! - `queries_holdout7.json` (210 queries) and `queries_holdout8.json` (212),
//!   each written by a reviewer who never saw the ranker nor its tuning,
//!   sealed during issue 31's fifth round and measured once after it
//!   (0.814 / 0.962 and 0.764 / 0.962). Each is reported on its own line
//!   with the per-style table and issue 31's targets (recall@5 ≥ 0.95,
//!   recall@1 ≥ 0.75), never asserted, and its misses are never printed; a
//!   later round may tune on them and then needs a new held-out set.
//!
//! Run with `--nocapture` to see the figures:
//! `cargo test -p tool-core --test tool_search_eval -- --nocapture`
//! (`TOOL_SEARCH_MISSES=1` also lists the misses of the sets used for tuning).

use std::path::Path;

use serde::Deserialize;
use serde_json::{Map, Value, json};
use tool_core::{RegistryView, Tool, ToolContext, ToolRegistry, ToolResult, ToolSpec};

#[derive(Deserialize)]
struct ToolDef {
    name: String,
    description: String,
    #[serde(default)]
    tags: Vec<String>,
    parameters: Value,
}

#[derive(Deserialize)]
struct Case {
    query: String,
    expected: String,
    /// The query's style in the later sets (terse, question, task,
    /// abbreviation, implied, typo, synonym).
    #[serde(default)]
    style: Option<String>,
}

fn data(file: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/tool_search")
        .join(file)
}

fn view() -> RegistryView {
    let text = std::fs::read_to_string(data("tools.json")).expect("tools.json");
    let defs: Vec<ToolDef> = serde_json::from_str(&text).expect("tools.json parses");
    let mut registry = ToolRegistry::new();
    for d in defs {
        let spec = ToolSpec::new(d.name, d.description, d.parameters).with_tags(d.tags);
        let tool = Tool::new(spec, |_: Map<String, Value>, _| async {
            ToolResult::ok("")
        })
        .expect("valid tool");
        registry.register(tool).expect("unique names");
    }
    RegistryView::new(registry).defer(["*"])
}

struct Recall {
    cases: usize,
    at1: usize,
    at5: usize,
    /// The queries whose tool was not first ("low" when it was in the top 5).
    misses: Vec<String>,
    /// Per style (sets that give one): [queries, hits at 1, hits at 5].
    styles: std::collections::BTreeMap<String, [usize; 3]>,
}

async fn evaluate(view: &RegistryView, file: &str) -> Option<Recall> {
    let text = std::fs::read_to_string(data(file)).ok()?;
    let cases: Vec<Case> = serde_json::from_str(&text).expect("queries parse");
    let mut recall = Recall {
        cases: cases.len(),
        at1: 0,
        at5: 0,
        misses: Vec::new(),
        styles: std::collections::BTreeMap::new(),
    };
    for (i, case) in cases.iter().enumerate() {
        assert!(
            view.contains(&case.expected),
            "{file}: unknown tool {}",
            case.expected
        );
        let ctx = ToolContext::new().with_trace_id(format!("eval-{i}"));
        let result = view
            .execute(
                "tool_search",
                json!({"query": case.query, "max_results": 5}),
                &ctx,
            )
            .await;
        assert!(result.error.is_none(), "{:?}", result.error);
        let matches: Vec<&str> = result.metadata["matches"]
            .as_array()
            .expect("matches")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let at1 = matches.first() == Some(&case.expected.as_str());
        let at5 = matches.contains(&case.expected.as_str());
        if let Some(style) = &case.style {
            let row = recall.styles.entry(style.clone()).or_default();
            row[0] += 1;
            row[1] += usize::from(at1);
            row[2] += usize::from(at5);
        }
        recall.at1 += usize::from(at1);
        recall.at5 += usize::from(at5);
        if !at1 {
            let what = if at5 { "low " } else { "miss" };
            let style = case.style.as_deref().unwrap_or("-");
            recall.misses.push(format!(
                "{what} [{style}] {:?} expected {} got {:?}",
                case.query, case.expected, matches
            ));
        }
    }
    Some(recall)
}

/// The query sets used while tuning (misses may be printed, the ablation
/// reports them); every other set is held out.
const TUNING_SETS: [&str; 7] = [
    "queries.json",
    "queries_holdout.json",
    "queries_holdout2.json",
    "queries_holdout3.json",
    "queries_holdout4.json",
    "queries_holdout5.json",
    "queries_holdout6.json",
];

/// The held-out sets, each written by someone who never saw the ranker and
/// measured once before any round tunes on it; see the module docs. Sets
/// 7 and 8 were both first measured after the fifth round.
const HELD_OUT: [&str; 2] = ["queries_holdout7.json", "queries_holdout8.json"];

#[allow(clippy::cast_precision_loss, reason = "a few hundred cases")]
fn report(file: &str, r: &Recall) -> (f64, f64) {
    let at1 = r.at1 as f64 / r.cases as f64;
    let at5 = r.at5 as f64 / r.cases as f64;
    println!(
        "tool_search {file}: {} queries, recall@1 {at1:.3}, recall@5 {at5:.3}",
        r.cases
    );
    if !r.styles.is_empty() {
        println!("| style | queries | recall@1 | recall@5 |\n| --- | --- | --- | --- |");
        for (style, [n, at1, at5]) in &r.styles {
            #[allow(clippy::cast_precision_loss, reason = "a few hundred cases")]
            let (r1, r5) = (*at1 as f64 / *n as f64, *at5 as f64 / *n as f64);
            println!("| {style} | {n} | {r1:.3} | {r5:.3} |");
        }
    }
    // Misses of the sets used for tuning only: a held-out set's are not
    // for tuning.
    if TUNING_SETS.contains(&file) && std::env::var_os("TOOL_SEARCH_MISSES").is_some() {
        for m in &r.misses {
            println!("  {m}");
        }
    }
    (at1, at5)
}

#[tokio::test]
async fn recall_on_the_evaluation_set() {
    let view = view();
    assert!(
        view.deferred().len() >= 300,
        "{} tools",
        view.deferred().len()
    );
    let tuning = evaluate(&view, "queries.json").await.expect("queries.json");
    assert!(tuning.cases >= 200, "{} queries", tuning.cases);
    let (_, at5) = report("queries.json", &tuning);
    assert!(at5 >= 0.9, "recall@5 {at5:.3} is under 0.9");
    for set in &TUNING_SETS[1..] {
        if let Some(r) = evaluate(&view, set).await {
            assert!(r.cases > 0, "{set} is empty");
            report(set, &r);
        }
    }
    // The held-out set of the next round, written by someone who never saw
    // the ranker: reported on its own line with a per-style table. Its
    // targets (issue 31: recall@5 ≥ 0.95, recall@1 ≥ 0.75) are reported
    // against, not asserted: a held-out figure is what it is.
    for set in HELD_OUT {
        if let Some(r) = evaluate(&view, set).await {
            assert!(r.cases > 0, "{set} is empty");
            let (at1, at5) = report(set, &r);
            println!(
                "{set} (held out) targets: recall@5 {at5:.3} (target 0.95), recall@1 {at1:.3} (target 0.75)"
            );
        } else {
            println!("{set} (held out): not present, skipped");
        }
    }
}

/// The evaluation tools as specs, and the tuning queries (`queries.json`
/// only) each with its half: servers in name order go alternately to half
/// 0 and half 1, so the two halves share no server (a change tuned on one
/// half and checked on the other meets new tools and new vocabulary).
fn tuning_material() -> (Vec<ToolSpec>, Vec<(Case, usize)>) {
    let text = std::fs::read_to_string(data("tools.json")).expect("tools.json");
    let defs: Vec<ToolDef> = serde_json::from_str(&text).expect("tools.json parses");
    let specs: Vec<ToolSpec> = defs
        .into_iter()
        .map(|d| ToolSpec::new(d.name, d.description, d.parameters).with_tags(d.tags))
        .collect();
    let cases: Vec<Case> =
        serde_json::from_str(&std::fs::read_to_string(data("queries.json")).expect("queries"))
            .expect("queries parse");
    let server = |name: &str| name.split("__").next().unwrap_or("").to_owned();
    let mut servers: Vec<String> = specs.iter().map(|s| server(&s.name)).collect();
    servers.sort_unstable();
    servers.dedup();
    let cases = cases
        .into_iter()
        .map(|c| {
            let at = servers.binary_search(&server(&c.expected)).unwrap_or(0);
            (c, at % 2)
        })
        .collect();
    (specs, cases)
}

/// Per half: [queries, hits at 1, hits at 5].
fn recall_by_half(
    index: &tool_core::search::SearchIndex,
    cases: &[(Case, usize)],
    mut miss: impl FnMut(&Case, bool, &[&str]),
) -> [[usize; 3]; 2] {
    let mut tally = [[0usize; 3]; 2];
    for (c, half) in cases {
        let hits = index.search(&c.query, 5);
        let names: Vec<&str> = hits.iter().map(|h| h.name.as_str()).collect();
        let at1 = names.first() == Some(&c.expected.as_str());
        let at5 = names.contains(&c.expected.as_str());
        tally[*half][0] += 1;
        tally[*half][1] += usize::from(at1);
        tally[*half][2] += usize::from(at5);
        if !at1 {
            miss(c, at5, &names);
        }
    }
    tally
}

/// Grid search over the field weights on the tuning set only (`queries.json`),
/// run by hand when the tokeniser or the fields change:
/// `cargo test -p tool-core --test tool_search_eval -- --ignored --nocapture`.
/// Prints the best weights overall, and the cross-check: the weights best
/// on one half (see [`tuning_material`]) with their recall on the other.
#[test]
#[ignore = "a tuning aid, not a check"]
fn tune_field_weights() {
    use tool_core::search::{FieldWeights, SearchIndex};
    let (specs, cases) = tuning_material();
    let mut results = Vec::new();
    for name in [2.0, 3.0, 4.0, 6.0] {
        for tags in [1.0, 2.0, 3.0, 4.0] {
            for param_names in [0.0, 0.5, 1.0] {
                for param_descriptions in [0.0, 0.25, 0.5, 1.0] {
                    let w = FieldWeights {
                        name,
                        tags,
                        description: 1.0,
                        param_names,
                        param_descriptions,
                    };
                    let index = SearchIndex::build_with(specs.iter(), w);
                    let t = recall_by_half(&index, &cases, |_, _, _| {});
                    results.push((t, w));
                }
            }
        }
    }
    let n = cases.len();
    let key = |t: &[[usize; 3]; 2], half: Option<usize>| match half {
        Some(h) => (t[h][2], t[h][1]),
        None => (t[0][2] + t[1][2], t[0][1] + t[1][1]),
    };
    results.sort_by_key(|(t, _)| std::cmp::Reverse(key(t, None)));
    for (t, w) in results.iter().take(10) {
        let (at5, at1) = key(t, None);
        println!("@5 {at5} @1 {at1} of {n}: {w:?}");
    }
    for (tuned, checked) in [(0, 1), (1, 0)] {
        let (t, w) = results
            .iter()
            .max_by_key(|(t, _)| key(t, Some(tuned)))
            .expect("a grid");
        let [q, at1, at5] = t[checked];
        println!("best on half {tuned}: {w:?}; on half {checked}: @5 {at5} @1 {at1} of {q}");
    }
}

/// Recall on the tuning set and on its two halves (see [`tuning_material`]);
/// run by hand, `TOOL_SEARCH_MISSES=1` also lists the queries whose tool
/// was not first:
/// `cargo test -p tool-core --test tool_search_eval halves -- --ignored --nocapture`.
#[test]
#[ignore = "a tuning aid, not a check"]
fn recall_on_halves_of_the_tuning_set() {
    let (specs, cases) = tuning_material();
    let index = tool_core::search::SearchIndex::build(specs.iter());
    let show = std::env::var_os("TOOL_SEARCH_MISSES").is_some();
    let t = recall_by_half(&index, &cases, |c, at5, got| {
        if show {
            let what = if at5 { "low " } else { "miss" };
            println!("  {what} {:?} expected {} got {got:?}", c.query, c.expected);
        }
    });
    let all = [0, 1, 2].map(|i| t[0][i] + t[1][i]);
    for (label, [n, at1, at5]) in [("all", all), ("half 0", t[0]), ("half 1", t[1])] {
        #[allow(clippy::cast_precision_loss, reason = "a few hundred cases")]
        let (r1, r5) = (at1 as f64 / n as f64, at5 as f64 / n as f64);
        println!("{label}: {n} queries, recall@1 {r1:.3}, recall@5 {r5:.3}");
    }
}

/// What each signal adds (issue 31): recall@1 / recall@5 on the sets used
/// while tuning ([`TUNING_SETS`]; never a held-out set), for BM25 alone
/// and with the signals added one by one, and for a few semantic weights.
/// Run by hand:
/// `cargo test -p tool-core --test tool_search_eval ablation -- --ignored --nocapture`.
#[test]
#[ignore = "a tuning aid, not a check"]
fn signal_ablation() {
    use tool_core::search::{FieldWeights, SearchIndex, Signals};
    let (specs, _) = tuning_material();
    let sets: Vec<(&str, Vec<Case>)> = TUNING_SETS
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(data(f)).expect("queries");
            (f, serde_json::from_str(&text).expect("queries parse"))
        })
        .collect();
    let mut variants: Vec<(String, Signals)> = Vec::new();
    let mut s = Signals::default();
    s.typos = false;
    s.services = false;
    s.implied = false;
    s.jargon = false;
    s.semantic = 0.0;
    s.intent = 0.0;
    s.prefixes = false;
    s.server_prior = 0.0;
    variants.push(("BM25 only".into(), s));
    s.jargon = true;
    variants.push(("+ jargon".into(), s));
    s.typos = true;
    variants.push(("+ jargon + typos".into(), s));
    s.services = true;
    variants.push(("+ jargon + typos + services".into(), s));
    s.implied = true;
    variants.push(("+ jargon + typos + services + implied".into(), s));
    for w in [0.3, 0.5, 0.8, 1.0, 1.5] {
        s.semantic = w;
        variants.push((format!("+ all four + semantic {w}"), s));
    }
    s.semantic = Signals::default().semantic;
    s.intent = Signals::default().intent;
    variants.push(("+ read intent (issue 31's fourth round)".into(), s));
    s.prefixes = true;
    variants.push(("+ clipped words".into(), s));
    s.server_prior = Signals::default().server_prior;
    variants.push(("+ the server prior (= the default)".into(), s));
    let mut s7 = Signals::default();
    s7.prefixes = false;
    variants.push(("all but clipped words (default weights)".into(), s7));
    let mut s6 = Signals::default();
    s6.server_prior = 0.0;
    variants.push(("all but the server prior (default weights)".into(), s6));
    let mut s5 = Signals::default();
    s5.intent = 0.0;
    variants.push(("all but read intent (default weights)".into(), s5));
    let mut s4 = Signals::default();
    s4.jargon = false;
    variants.push(("all but jargon (default weights)".into(), s4));
    let mut s3 = Signals::default();
    s3.implied = false;
    variants.push(("all but implied (default weights)".into(), s3));
    let mut s2 = Signals::default();
    s2.typos = false;
    s2.services = false;
    s2.implied = false;
    s2.jargon = false;
    s2.intent = 0.0;
    s2.prefixes = false;
    s2.server_prior = 0.0;
    variants.push(("BM25 + semantic (default weight)".into(), s2));
    for (label, signals) in variants {
        let index = SearchIndex::build_with_signals(specs.iter(), FieldWeights::default(), signals);
        let mut line = format!("{label:<50}");
        for (file, cases) in &sets {
            let (mut at1, mut at5) = (0usize, 0usize);
            for c in cases {
                let hits = index.search(&c.query, 5);
                at1 += usize::from(hits.first().is_some_and(|h| h.name == c.expected));
                at5 += usize::from(hits.iter().any(|h| h.name == c.expected));
            }
            #[allow(clippy::cast_precision_loss, reason = "a few hundred cases")]
            let n = cases.len() as f64;
            #[allow(clippy::cast_precision_loss, reason = "a few hundred cases")]
            line.push_str(&format!(
                " | {file}: {:.3} / {:.3}",
                at1 as f64 / n,
                at5 as f64 / n
            ));
        }
        println!("{line}");
    }
}

/// What the ranker made of a few queries (`SearchIndex::explain`), for
/// tuning by hand: the queries come from `TOOL_SEARCH_EXPLAIN`, separated
/// by `|`:
/// `TOOL_SEARCH_EXPLAIN='unstage all|ls ~/src' cargo test -p tool-core --test tool_search_eval explain -- --ignored --nocapture`.
#[test]
#[ignore = "a tuning aid, not a check"]
fn explain_queries() {
    let (specs, _) = tuning_material();
    let index = tool_core::search::SearchIndex::build(specs.iter());
    let queries = std::env::var("TOOL_SEARCH_EXPLAIN").unwrap_or_default();
    for q in queries.split('|').filter(|q| !q.trim().is_empty()) {
        let e = index.explain(q, 5);
        println!("== {q:?}");
        for t in &e.terms {
            println!(
                "  term {} {:.2} {:?} in {} tools",
                t.term, t.weight, t.origin, t.tools
            );
        }
        println!(
            "  corrections {:?} services {:?} implied {:?} weak {}",
            e.corrections, e.services, e.implied, e.weak
        );
        for h in &e.hits {
            println!(
                "  {:.3} lex {:.3} cos {:.3} {} {:?}",
                h.score, h.lexical, h.semantic, h.name, h.matched
            );
        }
    }
}

/// Leave-one-set-out tuning aid (issue 31's fifth round): recall@1,
/// recall@5 and recall@50 per tuning set ([`TUNING_SETS`] only, never the
/// held-out set), straight from [`SearchIndex::search`](tool_core::search::SearchIndex::search).
/// `TOOL_SEARCH_STUDY` names the sets (comma-separated file names) whose
/// misses to print, each with the expected tool's rank in the top 50, so
/// that a change studied on some sets is checked on the others without
/// looking at their misses:
/// `TOOL_SEARCH_STUDY=queries_holdout6.json cargo test -p tool-core --test tool_search_eval by_set -- --ignored --nocapture`.
#[test]
#[ignore = "a tuning aid, not a check"]
fn recall_by_set() {
    let (specs, _) = tuning_material();
    let index = tool_core::search::SearchIndex::build(specs.iter());
    let study = std::env::var("TOOL_SEARCH_STUDY").unwrap_or_default();
    for file in TUNING_SETS {
        let text = std::fs::read_to_string(data(file)).expect("queries");
        let cases: Vec<Case> = serde_json::from_str(&text).expect("queries parse");
        let show = study.split(',').any(|s| s == file);
        let (mut at1, mut at5, mut at50) = (0usize, 0usize, 0usize);
        for c in &cases {
            let hits = index.search(&c.query, 50);
            let rank = hits.iter().position(|h| h.name == c.expected);
            at1 += usize::from(rank == Some(0));
            at5 += usize::from(rank.is_some_and(|r| r < 5));
            at50 += usize::from(rank.is_some());
            if show && rank != Some(0) {
                let top: Vec<&str> = hits.iter().take(3).map(|h| h.name.as_str()).collect();
                let style = c.style.as_deref().unwrap_or("-");
                println!(
                    "  {} [{style}] {:?} expected {} got {top:?}",
                    rank.map_or("-".to_owned(), |r| (r + 1).to_string()),
                    c.query,
                    c.expected
                );
            }
        }
        #[allow(clippy::cast_precision_loss, reason = "a few hundred cases")]
        let n = cases.len() as f64;
        #[allow(clippy::cast_precision_loss, reason = "a few hundred cases")]
        let line = format!(
            "{file}: {} queries, @1 {:.3} @5 {:.3} @50 {:.3}",
            cases.len(),
            at1 as f64 / n,
            at5 as f64 / n,
            at50 as f64 / n
        );
        println!("{line}");
    }
}
