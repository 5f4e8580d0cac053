//! Sparse n-grams of file text and the gram query a regular expression implies.
//!
//! A *sparse gram* is a piece of a line (ASCII letters folded to lower
//! case), 3 to [`MAX_GRAM`] bytes long, whose two end pairs of bytes are
//! both rarer than every pair inside it — the selection GitHub's code
//! search and Cursor's local index (2026) describe. Each pair's weight
//! comes from a static table of pair rarity in source code (`pairs.rs`,
//! made by `scripts/pair-classes`), so a gram runs between rare pairs over
//! common ones: `kalomiren` yields grams longer than three bytes that few
//! files hold, where each of its trigrams is in most large files. Every
//! trigram is a sparse gram too (no pair inside). Whether a string is a
//! sparse gram depends on its bytes alone, so the index stores *all*
//! sparse grams of each line (at most two per byte; [`sparse_grams`]) and
//! a literal asks only for its *covering* grams, those inside no longer
//! gram of the literal ([`covering`]). Grams are stored by a 64-bit hash
//! of their bytes ([`key`]); a collision only adds candidates. Grams never
//! hold a `\n`: `grep_content` matches within one line. Folding lets one
//! posting list serve both `Handler` and `(?i)handler`; a case-sensitive
//! query then finds a few more candidates than it needs, which the grep
//! engine rejects.
//!
//! The query of a pattern is computed from its `regex-syntax` HIR the way
//! Russ Cox's "Regular Expression Matching with a Trigram Index" (2012)
//! describes, in a reduced form: each node yields either a small set of
//! *exact* strings (every string it can match, when there are few) or a
//! boolean query that every text containing a match satisfies. Strings
//! shorter than three bytes imply nothing, so a pattern such as `.`, `\w+`
//! or `a` yields [`Query::All`] and `grep_content` scans.

use regex_syntax::hir::{Class, Hir, HirKind};

use super::pairs;

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

/// A gram's key: a 64-bit hash of its folded bytes (see [`key`]).
pub(crate) type Gram = u64;

/// Longest sparse gram, in bytes. Longer grams would prune a little more
/// and cost index size; 3 is the shortest (a trigram).
pub(crate) const MAX_GRAM: usize = 12;

/// The slot of a byte in the pair table: tab, the printable ASCII bytes,
/// and one slot for every other byte.
fn slot(b: u8) -> usize {
    match b {
        b'\t' => 0,
        0x20..=0x7e => usize::from(b) - 0x1f,
        _ => 96,
    }
}

/// The weight of the pair `a b` (both folded): its rarity class (0 common
/// to 15 unseen, from [`pairs::PAIR_CLASSES`]) in the high bits, and a
/// fixed hash of the pair below, which orders pairs of one class.
fn weight(a: u8, b: u8) -> u16 {
    let class = pairs::PAIR_CLASSES
        .get(slot(a) * 97 + slot(b))
        .map_or(15, |&d| (d as char).to_digit(16).unwrap_or(15));
    let mix = (u32::from(a) << 8 | u32::from(b)).wrapping_mul(0x9e37_79b1) >> 20;
    #[allow(clippy::cast_possible_truncation, reason = "class < 16, mix < 4096")]
    let w = (class << 12 | mix) as u16;
    w
}

/// The key of a gram of folded bytes: FNV-1a over the bytes, then a
/// final mix (stable across builds and platforms, unlike std's hasher).
pub(crate) fn key(gram: &[u8]) -> Gram {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in gram {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 29;
    h = h.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h ^ (h >> 32)
}

/// Reusable buffers of [`sparse_grams`].
#[derive(Default)]
pub(crate) struct Scratch {
    weights: Vec<u16>,
    stack: Vec<usize>,
}

/// Calls `emit(start, end)` for every sparse gram `text[start..end]` of a
/// line of folded bytes (no `\n`), longest [`MAX_GRAM`] bytes.
///
/// Pair `i` is `text[i..i + 2]`. The bytes from pair `i` to pair `j > i`
/// form a sparse gram when every pair strictly between them weighs less
/// than both: every trigram is one (no pair between), and a longer gram
/// runs between two rare pairs over common ones. Whether a string is a
/// sparse gram depends on its bytes alone, so a text holding a literal
/// holds every sparse gram of the literal. A stack of the pairs that
/// outweigh every later one finds them in one pass: at most 2 per pair.
pub(crate) fn sparse_grams(text: &[u8], scratch: &mut Scratch, mut emit: impl FnMut(usize, usize)) {
    if text.len() < 3 {
        return;
    }
    let Scratch { weights, stack } = scratch;
    weights.clear();
    weights.extend(text.windows(2).map(|w| weight(w[0], w[1])));
    stack.clear();
    for j in 0..weights.len() {
        let wj = weights[j];
        while let Some(&i) = stack.last() {
            if weights[i] > wj {
                break;
            }
            stack.pop();
            if j - i < MAX_GRAM - 1 {
                emit(i, j + 2);
            }
        }
        if let Some(&i) = stack.last() {
            if j - i < MAX_GRAM - 1 {
                emit(i, j + 2);
            }
        }
        stack.push(j);
    }
}

/// Adds the keys of every sparse gram of `text` (whole lines, any case;
/// folded in place) to `seen`: what the index stores for one file.
/// `scratch` holds reusable buffers.
#[cfg(test)]
pub(crate) fn text_grams(text: &mut [u8], scratch: &mut Scratch, seen: &mut GramSet) {
    text.make_ascii_lowercase();
    for line in text.split(|&b| b == b'\n') {
        line_grams(line, scratch, seen);
    }
}

/// Adds the keys of every sparse gram of one folded `line` (no `\n`) to `seen`.
pub(crate) fn line_grams(line: &[u8], scratch: &mut Scratch, seen: &mut GramSet) {
    sparse_grams(line, scratch, |s, e| seen.insert(key(&line[s..e])));
}

/// A set of gram keys (open addressing; keys are hashes already, and 0 marks
/// an empty slot — the one key 0 is remapped to 1, harmless: a shared
/// key only adds candidates).
#[derive(Default)]
pub(crate) struct GramSet {
    slots: Vec<Gram>,
    len: usize,
}

impl GramSet {
    /// Adds `k`.
    pub(crate) fn insert(&mut self, k: Gram) {
        let k = k.max(1);
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        #[allow(clippy::cast_possible_truncation, reason = "masked")]
        let mut i = (k as usize) & mask;
        loop {
            let s = self.slots[i];
            if s == k {
                return;
            }
            if s == 0 {
                self.slots[i] = k;
                self.len += 1;
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        let old = std::mem::take(&mut self.slots);
        self.slots = vec![0; (old.len() * 2).max(1024)];
        self.len = 0;
        for k in old {
            if k != 0 {
                self.insert(k);
            }
        }
    }

    /// The keys held, in no order.
    pub(crate) fn keys(&self) -> impl Iterator<Item = Gram> + '_ {
        self.slots.iter().copied().filter(|&k| k != 0)
    }

    /// How many keys are held.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Empties the set, keeping its memory unless it grew past 1 Mi slots.
    pub(crate) fn clear(&mut self) {
        if self.slots.len() > 1 << 20 {
            self.slots = Vec::new();
        } else {
            self.slots.iter_mut().for_each(|s| *s = 0);
        }
        self.len = 0;
    }
}

/// The grams a text holding `literal` (folded) surely holds: the covering
/// sparse grams of the literal — those inside no longer one (the others add
/// nothing). Empty when the literal is shorter than 3 bytes.
pub(crate) fn covering(literal: &[u8]) -> Vec<Gram> {
    let mut spans = Vec::new();
    sparse_grams(literal, &mut Scratch::default(), |s, e| spans.push((s, e)));
    let mut out: Vec<Gram> = spans
        .iter()
        .filter(|&&(s, e)| {
            !spans
                .iter()
                .any(|&(s2, e2)| (s2, e2) != (s, e) && s2 <= s && e <= e2)
        })
        .map(|&(s, e)| key(&literal[s..e]))
        .collect();
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

    /// Every sparse gram of `text` (folded), as strings.
    fn all(text: &str) -> Vec<String> {
        let t = text.to_ascii_lowercase();
        let mut out = Vec::new();
        sparse_grams(t.as_bytes(), &mut Scratch::default(), |s, e| {
            out.push(t[s..e].to_owned());
        });
        out
    }

    fn g(s: &str) -> Query {
        Query::Gram(key(s.as_bytes()))
    }

    /// A small deterministic generator (xorshift) for the property tests.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn text(&mut self, len: usize) -> Vec<u8> {
            const ALPHABET: &[u8] = b"kalomirentozaquibrfxelvdsgh_ ();=.AZ09\t\xc3\xa9";
            (0..len)
                .map(|_| ALPHABET[(self.next() % ALPHABET.len() as u64) as usize])
                .collect()
        }
    }

    #[test]
    fn the_pair_table_has_97_rows_of_97_hex_digits() {
        assert_eq!(pairs::PAIR_CLASSES.len(), 97 * 97);
        assert!(pairs::PAIR_CLASSES.iter().all(u8::is_ascii_hexdigit));
        // A common pair of code outweighs nothing rare: `e ` is commoner than `q#`.
        assert!(weight(b'e', b' ') < weight(b'q', b'#'));
    }

    #[test]
    fn every_trigram_is_a_sparse_gram_and_none_is_longer_than_the_cap() {
        let text = "fn kalomiren_handler(x: u32) { return xelxel_wu; }";
        let grams = all(text);
        for w in text.as_bytes().windows(3) {
            let tri = std::str::from_utf8(w).unwrap().to_ascii_lowercase();
            assert!(grams.contains(&tri), "{tri}");
        }
        assert!(grams.iter().all(|g| (3..=MAX_GRAM).contains(&g.len())));
        // Longer grams exist, and there are at most 2 per pair.
        assert!(grams.iter().any(|g| g.len() > 3));
        assert!(grams.len() <= 2 * (text.len() - 1));
        // Shorter than a trigram: none.
        assert!(all("ab").is_empty());
        assert_eq!(all("abc"), vec!["abc".to_owned()]);
    }

    #[test]
    fn a_sparse_gram_is_one_by_its_bytes_alone() {
        // The defining property: pairs strictly inside weigh less than both ends.
        let text = b"quibarfoo_vexdun == 42; // TODO: gorhan";
        let mut spans = Vec::new();
        sparse_grams(text, &mut Scratch::default(), |s, e| spans.push((s, e)));
        let w: Vec<u16> = text.windows(2).map(|p| weight(p[0], p[1])).collect();
        for i in 0..w.len() {
            for j in i + 1..w.len().min(i + MAX_GRAM - 1) {
                let inner = w[i + 1..j].iter().all(|&m| m < w[i].min(w[j]));
                assert_eq!(spans.contains(&(i, j + 2)), inner, "{i}..{j}");
            }
        }
    }

    #[test]
    fn a_text_holding_a_literal_holds_its_covering_grams() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..2000 {
            let lit_len = 1 + (rng.next() % 20) as usize;
            let literal = rng.text(lit_len);
            let n = (rng.next() % 30) as usize;
            let before = rng.text(n);
            let n = (rng.next() % 30) as usize;
            let after = rng.text(n);
            let mut line = before;
            line.extend_from_slice(&literal);
            line.extend_from_slice(&after);
            let mut set = GramSet::default();
            let mut text = line.clone();
            text_grams(&mut text, &mut Scratch::default(), &mut set);
            let held: std::collections::HashSet<Gram> = set.keys().collect();
            let folded: Vec<u8> = literal.iter().map(|&b| fold(b)).collect();
            let cover = covering(&folded);
            assert_eq!(cover.is_empty(), literal.len() < 3, "round {round}");
            for k in cover {
                assert!(
                    held.contains(&k.max(1)),
                    "round {round}: {literal:?} in {line:?}"
                );
            }
        }
    }

    #[test]
    fn literals_need_their_covering_grams() {
        // A trigram literal is its own gram.
        assert_eq!(query_of("abc", true), Some(g("abc")));
        let handler = query_of("Handler", true).unwrap();
        assert_eq!(
            handler,
            Query::and(covering(b"handler").into_iter().map(Query::Gram).collect())
        );
        // Folded: case-insensitive and upper-case queries are the same.
        assert_eq!(query_of("(?i)HANDLER", true).unwrap(), handler);
        // Covering grams are fewer than the trigrams, and none is inside another.
        let cover = covering(b"kalomiren_handler");
        assert!(cover.len() < "kalomiren_handler".len() - 2, "{cover:?}");
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
        let want = Query::and(
            covering("café".as_bytes())
                .into_iter()
                .map(Query::Gram)
                .collect(),
        );
        assert_eq!(q, want);
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
        let want = Query::and(covering(b"_handler").into_iter().map(Query::Gram).collect());
        assert_eq!(query_of(r"fn\s+\w+_handler", true), Some(want));
        assert_eq!(query_of(r"^foo$", true), Some(g("foo")));
    }
}
