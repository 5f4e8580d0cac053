//! Grams of file text and the gram query a regular expression implies.
//!
//! A *gram* is a substring of 3, 5 or 7 bytes of one line, ASCII letters
//! folded to lower case; its key ([`key`]) packs its bytes and length, so
//! no two grams share one. The index (`sigs`) hashes every gram of every
//! line into the signature of its piece; a literal asks for all of its
//! grams ([`covering`]). (Until `ATGRAM05` the index kept posting lists of
//! *sparse* grams of 3 to 6 bytes; extracting and sorting them made the
//! build 50 times slower than one `rg` scan, `docs/benchmarks.md`.) Grams
//! never hold a `\n`: `grep_content` matches within one line. Folding lets
//! one row serve both `Handler` and `(?i)handler`; a case-sensitive query
//! then finds a few more candidates than it needs, which the grep engine
//! rejects.
//!
//! The query of a pattern is computed from its `regex-syntax` HIR the way
//! Russ Cox's "Regular Expression Matching with a Trigram Index" (2012)
//! describes, in a reduced form: each node yields either a small set of
//! *exact* strings (every string it can match, when there are few) or a
//! boolean query that every text containing a match satisfies. Strings
//! shorter than three bytes imply nothing, so a pattern such as `.`, `\w+`
//! or `a` yields [`Query::All`] and `grep_content` scans.

use regex_syntax::hir::{Class, Hir, HirKind};

pub(crate) use super::sigs::{Gram, key};

/// Most strings an exact set holds before it is turned into a query.
const MAX_EXACT: usize = 64;
/// Longest string kept in an exact set, in bytes; longer ones are cut into a query.
const MAX_EXACT_BYTES: usize = 256;
/// Most characters of a class expanded into exact strings.
const MAX_CLASS: usize = 16;

/// A boolean query over grams: which files can hold a match.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Query {
    /// Every file (nothing prunes).
    All,
    /// Files holding this gram.
    Gram(Gram),
    /// Files satisfying every part.
    And(Vec<Query>),
    /// Files satisfying any part; `Or(vec![])` is no file.
    Or(Vec<Query>),
}

impl Query {
    fn and(parts: Vec<Query>) -> Query {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Query::All => {}
                Query::And(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        out.sort_by_key(Query::rank);
        out.dedup();
        match out.len() {
            0 => Query::All,
            1 => out.pop().unwrap_or(Query::All),
            _ => Query::And(out),
        }
    }

    fn or(parts: Vec<Query>) -> Query {
        let mut out = Vec::new();
        for p in parts {
            match p {
                Query::All => return Query::All,
                Query::Or(inner) => out.extend(inner),
                other => out.push(other),
            }
        }
        out.dedup();
        if out.len() == 1 {
            return out.pop().unwrap_or(Query::All);
        }
        Query::Or(out)
    }

    /// Grams first, so that `and` can dedup them.
    fn rank(q: &Query) -> (u8, Gram) {
        match q {
            Query::Gram(g) => (0, *g),
            Query::And(_) => (1, 0),
            Query::Or(_) => (2, 0),
            Query::All => (3, 0),
        }
    }

    /// Whether the query prunes nothing.
    pub(crate) fn is_all(&self) -> bool {
        matches!(self, Query::All)
    }
}

/// ASCII lower case, the folding grams use.
fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

/// The grams a text holding `literal` (folded) surely holds: every
/// substring of a length the signatures hash (3 and 7 bytes) that holds
/// no `\n` (grams never cross a line end), deduplicated. Empty when no
/// part of the literal between line ends is 3 bytes long.
pub(crate) fn covering(literal: &[u8]) -> Vec<Gram> {
    let params = super::sigs::Params::current();
    let mut out = Vec::new();
    for part in literal.split(|&b| b == b'\n') {
        for len in params.gram_lengths() {
            out.extend(part.windows(len).map(key));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// The query implied by `pattern` as `grep_content` compiles it (multi-line
/// anchors, CRLF mode as given). `None` when the pattern does not parse here
/// (the grep engine reports its own error) — the caller then scans.
pub(crate) fn query_of(pattern: &str, crlf: bool) -> Option<Query> {
    let hir = regex_syntax::ParserBuilder::new()
        .multi_line(true)
        .crlf(crlf)
        .build()
        .parse(pattern)
        .ok()?;
    Some(info(&hir).into_query())
}

/// What a node tells: its exact strings, or a query.
struct Info {
    /// Every string the node matches (folded), when few and short.
    exact: Option<Vec<Vec<u8>>>,
    /// The query when `exact` is `None`.
    query: Query,
}

impl Info {
    fn exact(mut set: Vec<Vec<u8>>) -> Info {
        set.sort();
        set.dedup();
        if set.len() > MAX_EXACT || set.iter().any(|s| s.len() > MAX_EXACT_BYTES) {
            return Info::query(strings_query(&set));
        }
        Info {
            exact: Some(set),
            query: Query::All,
        }
    }

    fn query(query: Query) -> Info {
        Info { exact: None, query }
    }

    fn into_query(self) -> Query {
        match self.exact {
            Some(set) => strings_query(&set),
            None => self.query,
        }
    }
}

/// Files holding one of `set`: OR over the strings of the AND of their
/// covering grams; a string shorter than three bytes makes it [`Query::All`].
fn strings_query(set: &[Vec<u8>]) -> Query {
    Query::or(
        set.iter()
            .map(|s| {
                if s.len() < 3 {
                    return Query::All;
                }
                Query::and(covering(s).into_iter().map(Query::Gram).collect())
            })
            .collect(),
    )
}

fn info(hir: &Hir) -> Info {
    match hir.kind() {
        HirKind::Empty | HirKind::Look(_) => Info::exact(vec![Vec::new()]),
        HirKind::Literal(lit) => Info::exact(vec![lit.0.iter().map(|&b| fold(b)).collect()]),
        HirKind::Class(class) => class_info(class),
        HirKind::Capture(cap) => info(&cap.sub),
        HirKind::Repetition(rep) => {
            let sub = info(&rep.sub);
            match (rep.min, rep.max) {
                (0, Some(1)) => match sub.exact {
                    Some(mut set) => {
                        set.push(Vec::new());
                        Info::exact(set)
                    }
                    None => Info::query(Query::All),
                },
                (0, _) => Info::query(Query::All),
                (1, Some(1)) => sub,
                _ => Info::query(sub.into_query()),
            }
        }
        HirKind::Concat(parts) => concat_info(parts),
        HirKind::Alternation(parts) => {
            let infos: Vec<Info> = parts.iter().map(info).collect();
            if infos.iter().all(|i| i.exact.is_some()) {
                let set: Vec<Vec<u8>> = infos
                    .into_iter()
                    .flat_map(|i| i.exact.unwrap_or_default())
                    .collect();
                return Info::exact(set);
            }
            Info::query(Query::or(infos.into_iter().map(Info::into_query).collect()))
        }
    }
}

/// A class of few characters is an exact set of their (folded) encodings.
fn class_info(class: &Class) -> Info {
    let mut set: Vec<Vec<u8>> = Vec::new();
    match class {
        Class::Unicode(u) => {
            let mut count = 0usize;
            for r in u.ranges() {
                count += (u32::from(r.end()) - u32::from(r.start()) + 1) as usize;
                if count > MAX_CLASS * 2 {
                    return Info::query(Query::All);
                }
                for c in r.start()..=r.end() {
                    let mut buf = [0u8; 4];
                    set.push(c.encode_utf8(&mut buf).bytes().map(fold).collect());
                }
            }
        }
        Class::Bytes(b) => {
            let mut count = 0usize;
            for r in b.ranges() {
                count += usize::from(r.end() - r.start()) + 1;
                if count > MAX_CLASS * 2 {
                    return Info::query(Query::All);
                }
                for c in r.start()..=r.end() {
                    set.push(vec![fold(c)]);
                }
            }
        }
    }
    set.sort();
    set.dedup();
    if set.len() > MAX_CLASS {
        return Info::query(Query::All);
    }
    Info::exact(set)
}

/// A concatenation: exact sets multiply while small; a part that is not
/// exact closes the run, whose strings join the query.
fn concat_info(parts: &[Hir]) -> Info {
    let mut queries = Vec::new();
    let mut run: Option<Vec<Vec<u8>>> = Some(vec![Vec::new()]);
    let mut all_exact = true;
    for part in parts {
        let i = info(part);
        match i.exact {
            Some(set) => {
                let current = run.take().unwrap_or_else(|| vec![Vec::new()]);
                if current.len() * set.len() > MAX_EXACT
                    || current.iter().any(|s| s.len() >= MAX_EXACT_BYTES)
                {
                    all_exact = false;
                    queries.push(strings_query(&current));
                    run = Some(set);
                } else {
                    let mut product = Vec::with_capacity(current.len() * set.len());
                    for a in &current {
                        for b in &set {
                            let mut s = a.clone();
                            s.extend_from_slice(b);
                            product.push(s);
                        }
                    }
                    product.sort();
                    product.dedup();
                    run = Some(product);
                }
            }
            None => {
                all_exact = false;
                if let Some(current) = run.take() {
                    queries.push(strings_query(&current));
                }
                queries.push(i.query);
                run = Some(vec![Vec::new()]);
            }
        }
    }
    let run = run.unwrap_or_else(|| vec![Vec::new()]);
    if all_exact {
        return Info::exact(run);
    }
    queries.push(strings_query(&run));
    Info::query(Query::and(queries))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(s: &str) -> Query {
        Query::Gram(key(s.as_bytes()))
    }

    fn and_of(s: &str) -> Query {
        Query::and(
            covering(s.as_bytes())
                .into_iter()
                .map(Query::Gram)
                .collect(),
        )
    }

    #[test]
    fn distinct_grams_have_distinct_keys() {
        let mut seen = std::collections::HashMap::new();
        let bytes = b"ab_z\t\xc3\0";
        for a in bytes {
            for b in bytes {
                for c in bytes {
                    for d in std::iter::once(None).chain(bytes.iter().map(Some)) {
                        let mut g = vec![*a, *b, *c];
                        g.extend(d);
                        if let Some(prev) = seen.insert(key(&g), g.clone()) {
                            assert_eq!(prev, g);
                        }
                    }
                }
            }
        }
        assert_eq!(seen.len(), 7 * 7 * 7 * 8);
    }

    #[test]
    fn a_literal_needs_its_grams_of_3_and_7_bytes_but_none_across_a_line_end() {
        let want: Vec<Gram> = {
            let mut v: Vec<Gram> = ["abc", "bcd", "cde", "def"]
                .iter()
                .map(|s| key(s.as_bytes()))
                .collect();
            v.sort_unstable();
            v
        };
        assert_eq!(covering(b"abcdef"), want);
        assert!(covering(b"abcdefg").contains(&key(b"abcdefg")));
        assert_eq!(covering(b"abcdefgh").len(), 6 + 2);
        // "ab\ncde": only `cde` is whole on one line.
        assert_eq!(covering(b"ab\ncde"), vec![key(b"cde")]);
        assert!(covering(b"ab").is_empty());
        // Distinct grams only: 3 trigrams.
        assert_eq!(covering(b"abcabc").len(), 3);
        assert_eq!(covering(b"abcabcabc").len(), 3 + 3);
    }

    #[test]
    fn literals_need_their_grams() {
        // A trigram literal is its own gram.
        assert_eq!(query_of("abc", true), Some(g("abc")));
        let handler = query_of("Handler", true).unwrap();
        assert_eq!(handler, and_of("handler"));
        // Folded: case-insensitive and upper-case queries are the same.
        assert_eq!(query_of("(?i)HANDLER", true).unwrap(), handler);
        match handler {
            // 5 trigrams and 1 7-gram.
            Query::And(parts) => assert_eq!(parts.len(), 6),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn unprunable_patterns_are_all() {
        for p in [
            ".", r"\w+", "a", "ab", "a|bcd", "x*", "[a-z]+", "(?s).*", "é",
        ] {
            assert_eq!(query_of(p, true), Some(Query::All), "{p}");
        }
    }

    #[test]
    fn unicode_literals_use_their_utf8_bytes() {
        // "café" is 5 bytes: its grams span the two-byte é.
        let q = query_of("café", true).unwrap();
        assert_eq!(q, and_of("café"));
        assert!(!q.is_all());
        // Case-insensitive non-ASCII: É and é are both tried.
        match query_of("(?i)cafÉ", true).unwrap() {
            Query::Or(parts) => assert_eq!(parts.len(), 2),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn alternations_and_gaps() {
        assert_eq!(
            query_of("abc|xyz", true),
            Some(Query::Or(vec![g("abc"), g("xyz")]))
        );
        assert_eq!(
            query_of(r"fn\s+\w+_handler", true),
            Some(and_of("_handler"))
        );
        assert_eq!(query_of(r"^foo$", true), Some(g("foo")));
        // A multi-line literal asks only for the grams of each line.
        assert_eq!(query_of("abcd\nxy", true), Some(and_of("abcd")));
    }
}
