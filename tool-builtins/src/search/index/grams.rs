//! Trigrams of file text and the trigram query a regular expression implies.
//!
//! A *gram* is three consecutive bytes of a line with ASCII letters folded to
//! lower case, packed big-endian into the low 24 bits of a `u32`. Grams that
//! hold a `\n` are never stored: `grep_content` matches within one line, so
//! no match contains one. Folding lets one posting list serve both
//! `Handler` and `(?i)handler`; a case-sensitive query then finds a few
//! more candidates than it needs, which the grep engine rejects.
//!
//! The query of a pattern is computed from its `regex-syntax` HIR the way
//! Russ Cox's "Regular Expression Matching with a Trigram Index" (2012)
//! describes, in a reduced form: each node yields either a small set of
//! *exact* strings (every string it can match, when there are few) or a
//! boolean query that every text containing a match satisfies. Strings
//! shorter than three bytes imply nothing, so a pattern such as `.`, `\w+`
//! or `a` yields [`Query::All`] and `grep_content` scans.

use regex_syntax::hir::{Class, Hir, HirKind};

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
    Gram(u32),
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
    fn rank(q: &Query) -> (u8, u32) {
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

/// The gram of three (folded) bytes.
pub(crate) fn gram(a: u8, b: u8, c: u8) -> u32 {
    (u32::from(fold(a)) << 16) | (u32::from(fold(b)) << 8) | u32::from(fold(c))
}

/// Gram extraction over text fed in pieces (a file read in chunks): the
/// grams of a line are the same however its bytes are split.
#[derive(Default)]
pub(crate) struct GramScan {
    /// The last three (folded) bytes.
    window: u32,
    /// Bytes since the last `\n`, at most 2.
    run: u8,
}

impl GramScan {
    /// Marks every gram of `text` in `seen` (a bitset of 2^24 bits) and
    /// pushes each first-seen gram onto `out`. Grams holding `\n` are skipped.
    pub(crate) fn feed(&mut self, text: &[u8], seen: &mut [u64], out: &mut Vec<u32>) {
        for &b in text {
            if b == b'\n' {
                self.run = 0;
                continue;
            }
            self.window = ((self.window << 8) | u32::from(fold(b))) & 0x00ff_ffff;
            if self.run < 2 {
                self.run += 1;
                continue;
            }
            let g = self.window;
            let (word, bit) = ((g >> 6) as usize, g & 63);
            if seen[word] & (1 << bit) == 0 {
                seen[word] |= 1 << bit;
                out.push(g);
            }
        }
    }
}

/// [`GramScan::feed`] over the whole of `text`.
#[cfg(test)]
fn collect_grams(text: &[u8], seen: &mut [u64], out: &mut Vec<u32>) {
    GramScan::default().feed(text, seen, out);
}

/// The size of the bitset [`GramScan::feed`] needs, in `u64` words.
pub(crate) const SEEN_WORDS: usize = (1 << 24) / 64;

/// Clears the bits of `grams` in `seen` (cheaper than zeroing 2 MiB per file).
pub(crate) fn clear_grams(grams: &[u32], seen: &mut [u64]) {
    for &g in grams {
        seen[(g >> 6) as usize] = 0;
    }
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
/// grams; a string shorter than three bytes makes it [`Query::All`].
fn strings_query(set: &[Vec<u8>]) -> Query {
    Query::or(
        set.iter()
            .map(|s| {
                if s.len() < 3 {
                    return Query::All;
                }
                Query::and(
                    s.windows(3)
                        .map(|w| Query::Gram(gram(w[0], w[1], w[2])))
                        .collect(),
                )
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
        let b = s.as_bytes();
        Query::Gram(gram(b[0], b[1], b[2]))
    }

    #[test]
    fn literals_need_all_their_grams() {
        assert_eq!(
            query_of("Handler", true),
            Some(Query::and(vec![
                g("han"),
                g("and"),
                g("ndl"),
                g("dle"),
                g("ler")
            ]))
        );
        assert_eq!(
            query_of("(?i)abcd", true),
            Some(Query::and(vec![g("abc"), g("bcd")]))
        );
    }

    #[test]
    fn unprunable_patterns_are_all() {
        for p in [".", r"\w+", "a", "ab", "a|bcd", "x*", "[a-z]+", "(?s).*"] {
            assert_eq!(query_of(p, true), Some(Query::All), "{p}");
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
            Some(Query::and(vec![
                g("_ha"),
                g("han"),
                g("and"),
                g("ndl"),
                g("dle"),
                g("ler")
            ]))
        );
        // A small class multiplies out: ab[cd]e needs abc+bce or abd+bde.
        assert_eq!(
            query_of("ab[cd]e", true),
            Some(Query::Or(vec![
                Query::and(vec![g("abc"), g("bce")]),
                Query::and(vec![g("abd"), g("bde")])
            ]))
        );
        assert_eq!(query_of(r"^foo$", true), Some(g("foo")));
    }

    #[test]
    fn grams_skip_newlines_and_fold() {
        let mut seen = vec![0u64; SEEN_WORDS];
        let mut out = Vec::new();
        collect_grams(b"AbC\nabcd", &mut seen, &mut out);
        assert_eq!(out, vec![gram(b'a', b'b', b'c'), gram(b'b', b'c', b'd')]);
        // Split anywhere, the same grams.
        let text = b"xy\nHandler zz\nq";
        let mut whole = Vec::new();
        clear_grams(&out, &mut seen);
        collect_grams(text, &mut seen, &mut whole);
        for cut in 0..text.len() {
            clear_grams(&whole, &mut seen);
            let mut parts = Vec::new();
            let mut scan = GramScan::default();
            scan.feed(&text[..cut], &mut seen, &mut parts);
            scan.feed(&text[cut..], &mut seen, &mut parts);
            assert_eq!(parts, whole, "cut at {cut}");
        }
        clear_grams(&whole, &mut seen);
        assert!(seen.iter().all(|&w| w == 0));
    }
}
