//! Sparse grams of file text and the gram query a regular expression implies.
//!
//! A *sparse gram* is a piece of a line (ASCII letters folded to lower
//! case), 3 to [`MAX_GRAM`] bytes long, whose two end pairs of bytes both
//! weigh more than every pair inside it — the selection GitHub's code search
//! and Cursor's local index (2026) describe. Each pair's weight comes from a
//! static table of pair rarity in source code (`pairs.rs`, made by
//! `scripts/pair-classes`), so a gram runs between rare pairs over common
//! ones. Every trigram is a sparse gram (no pair inside). Whether a string
//! is a sparse gram depends on its bytes alone, so the index stores *all*
//! sparse grams of each line and a literal asks only for its *covering*
//! grams, those inside no longer gram of it ([`covering`]). Grams are cut
//! at 6 bytes: longer ones (up to 12 were tried) made the index up to 4
//! times larger for little pruning once postings name 4 KiB pieces of
//! files (measured in `docs/benchmarks.md`, "Indexed search").
//!
//! A gram's key ([`key`]) is 32 bits: a gram of up to 4 bytes is packed
//! and mixed by a bijection, so no two of them share a key (a 4-gram
//! cannot start with a NUL byte in a text file, so it never meets a
//! trigram's key); a longer one is hashed, and may share its key with
//! another gram, which only adds candidates. Grams never hold a `\n`:
//! `grep_content` matches within one line. Folding lets one posting list
//! serve both `Handler` and `(?i)handler`; a case-sensitive query then
//! finds a few more candidates than it needs, which the grep engine
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

/// A gram's key: 32 bits (see [`key`]).
pub(crate) type Gram = u32;

/// Longest gram, in bytes; 3 is the shortest (a trigram).
pub(crate) const MAX_GRAM: usize = 6;

/// The slot of each byte in the pair table: tab, the printable ASCII
/// bytes, and one slot (96) for every other byte.
const SLOTS: [u8; 256] = {
    let mut t = [96u8; 256];
    t[b'\t' as usize] = 0;
    let mut b = 0x20;
    while b <= 0x7e {
        t[b] = (b - 0x1f) as u8;
        b += 1;
    }
    t
};

/// [`pairs::PAIR_CLASSES`] decoded: one rarity class (0 common to 15
/// unseen) per pair of slots.
const CLASSES: [u8; 97 * 97] = {
    let mut t = [15u8; 97 * 97];
    let mut i = 0;
    while i < t.len() && i < pairs::PAIR_CLASSES.len() {
        let d = pairs::PAIR_CLASSES[i];
        t[i] = match d {
            b'0'..=b'9' => d - b'0',
            b'a'..=b'f' => d - b'a' + 10,
            _ => 15,
        };
        i += 1;
    }
    t
};

/// The weight of the pair `a b` (both folded): its rarity class in the
/// high bits, and a fixed hash of the pair below, which orders pairs of
/// one class.
fn weight(a: u8, b: u8) -> u16 {
    let class =
        CLASSES[usize::from(SLOTS[usize::from(a)]) * 97 + usize::from(SLOTS[usize::from(b)])];
    let mix = (u32::from(a) << 8 | u32::from(b)).wrapping_mul(0x9e37_79b1) >> 20;
    #[allow(clippy::cast_possible_truncation, reason = "class < 16, mix < 4096")]
    let w = (u32::from(class) << 12 | mix) as u16;
    w
}

/// [`weight`] of every pair of bytes, `a << 8 | b` (128 KiB, made once).
fn weight_table() -> &'static [u16] {
    static TABLE: std::sync::OnceLock<Vec<u16>> = std::sync::OnceLock::new();
    TABLE.get_or_init(|| {
        (0..=u16::MAX)
            .map(|p| {
                let [a, b] = p.to_be_bytes();
                weight(a, b)
            })
            .collect()
    })
}

/// A bijection of 32-bit values (the `MurmurHash3` finaliser): spreads packed
/// grams over the key space, so that the top bits pick a bucket evenly.
#[inline]
fn mix(mut h: u32) -> u32 {
    h ^= h >> 16;
    h = h.wrapping_mul(0x85eb_ca6b);
    h ^= h >> 13;
    h = h.wrapping_mul(0xc2b2_ae35);
    h ^ (h >> 16)
}

/// The key of a gram of 3 to [`MAX_GRAM`] folded bytes (longer input is
/// cut): the bytes packed big-endian; up to 4 of them [`mix`]ed (distinct
/// keys), more hashed to 32 bits (the `SplitMix64` finaliser, high half).
/// Stable across builds and platforms.
#[inline]
pub(crate) fn key(gram: &[u8]) -> Gram {
    let mut v = 0u64;
    for &b in gram.iter().take(MAX_GRAM) {
        v = v << 8 | u64::from(b);
    }
    packed_key(v, gram.len())
}

/// [`key`] of a gram of `len` bytes packed big-endian into `v`.
#[inline]
fn packed_key(mut v: u64, len: usize) -> Gram {
    if len <= 4 {
        #[allow(clippy::cast_possible_truncation, reason = "4 bytes at most")]
        return mix(v as u32);
    }
    v = (v ^ (v >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    v = (v ^ (v >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    #[allow(clippy::cast_possible_truncation, reason = "the high half")]
    let k = ((v ^ (v >> 31)) >> 32) as u32;
    k
}

/// Calls `emit(start, end)` for every sparse gram `text[start..end]` of a
/// line of folded bytes (no `\n`); `weights` is scratch space.
///
/// Pair `i` is `text[i..i + 2]`. The bytes from pair `i` to pair `j > i`
/// form a sparse gram when every pair strictly between them weighs less
/// than both: every trigram is one (no pair between). At most
/// [`MAX_GRAM`] - 2 grams start at a byte; a gram from pair `i` ends at
/// the first pair inside that outweighs pair `i`, so the scan from each
/// byte stops there.
#[inline]
pub(crate) fn sparse_grams(
    text: &[u8],
    weights: &mut Vec<u16>,
    mut emit: impl FnMut(usize, usize),
) {
    let n = text.len();
    if n < 3 {
        return;
    }
    let table = weight_table();
    weights.clear();
    weights.extend(
        text.windows(2)
            .map(|w| table[usize::from(w[0]) << 8 | usize::from(w[1])]),
    );
    let w = &weights[..];
    for i in 0..n - 2 {
        emit(i, i + 3);
        let wi = w[i];
        // The heaviest pair strictly inside, as the gram grows.
        let mut inner = 0u16;
        for j in i + 2..=(i + MAX_GRAM - 2).min(n - 2) {
            inner = inner.max(w[j - 1]);
            if inner >= wi {
                break;
            }
            if inner < w[j] {
                emit(i, j + 2);
            }
        }
    }
}

/// Adds the keys of every gram of `text` (whole lines, any case; folded in
/// place) to `seen`: what the index stores for one piece.
#[cfg(test)]
pub(crate) fn text_grams(text: &mut [u8], seen: &mut GramSet) {
    text.make_ascii_lowercase();
    for line in text.split(|&b| b == b'\n') {
        line_grams(line, seen);
    }
}

/// Adds the keys of every gram of one folded `line` (no `\n`) to `seen`:
/// the grams of [`sparse_grams`], each gram's bytes packed as the scan
/// from its first byte grows (the keys are [`key`]'s).
pub(crate) fn line_grams(line: &[u8], seen: &mut GramSet) {
    let n = line.len();
    if n < 3 {
        return;
    }
    let table = weight_table();
    let mut w = std::mem::take(&mut seen.weights);
    w.clear();
    w.extend(
        line.windows(2)
            .map(|p| table[usize::from(p[0]) << 8 | usize::from(p[1])]),
    );
    for i in 0..n - 2 {
        seen.insert_trigram(line[i], line[i + 1], line[i + 2]);
        let mut packed =
            u64::from(line[i]) << 16 | u64::from(line[i + 1]) << 8 | u64::from(line[i + 2]);
        let wi = w[i];
        let mut inner = 0u16;
        for j in i + 2..=(i + MAX_GRAM - 2).min(n - 2) {
            inner = inner.max(w[j - 1]);
            if inner >= wi {
                break;
            }
            packed = packed << 8 | u64::from(line[j + 1]);
            if inner < w[j] {
                seen.insert(packed_key(packed, j + 2 - i));
            }
        }
    }
    seen.weights = w;
}

/// The gram keys of one piece, in the order first added, each once but
/// for a rare case: a gram of 5 or 6 bytes whose hashed key equals a
/// trigram's is held twice (the run builder drops the repeat). Emptied in
/// constant time ([`GramSet::clear`]: slots of older generations count as
/// empty), so a small piece after a large one costs no sweep.
pub(crate) struct GramSet {
    /// Open addressing: generation in the high 32 bits, key in the low.
    slots: Vec<u64>,
    generation: u32,
    keys: Vec<Gram>,
    /// Trigrams of tab and printable ASCII bytes (most of a text's grams):
    /// one bit each, by their bytes' slots (96^3 bits, 108 KiB, which a
    /// processor's cache holds), and the words set, to clear.
    trigrams: Vec<u64>,
    trigram_words: Vec<u32>,
    /// Scratch space of [`line_grams`]: the pair weights of a line.
    weights: Vec<u16>,
}

/// Slots of the trigram bitmap: tab and the printable ASCII bytes.
const TRIGRAM_SLOTS: usize = 96;

impl Default for GramSet {
    fn default() -> Self {
        Self {
            slots: vec![0; 1 << 12],
            generation: 1,
            keys: Vec::new(),
            trigrams: vec![0; (TRIGRAM_SLOTS * TRIGRAM_SLOTS * TRIGRAM_SLOTS).div_ceil(64)],
            trigram_words: Vec::new(),
            weights: Vec::new(),
        }
    }
}

impl GramSet {
    /// Adds the key of the trigram `a b c` (folded bytes).
    #[inline]
    fn insert_trigram(&mut self, a: u8, b: u8, c: u8) {
        let packed = u32::from(a) << 16 | u32::from(b) << 8 | u32::from(c);
        let (x, y, z) = (
            usize::from(SLOTS[usize::from(a)]),
            usize::from(SLOTS[usize::from(b)]),
            usize::from(SLOTS[usize::from(c)]),
        );
        if x >= TRIGRAM_SLOTS || y >= TRIGRAM_SLOTS || z >= TRIGRAM_SLOTS {
            self.insert(mix(packed));
            return;
        }
        let bit = (x * TRIGRAM_SLOTS + y) * TRIGRAM_SLOTS + z;
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        if self.trigrams[word] & mask != 0 {
            return;
        }
        if self.trigrams[word] == 0 {
            #[allow(clippy::cast_possible_truncation, reason = "under 96^3 / 64")]
            self.trigram_words.push(word as u32);
        }
        self.trigrams[word] |= mask;
        self.keys.push(mix(packed));
    }

    /// Adds `k`.
    #[inline]
    pub(crate) fn insert(&mut self, k: Gram) {
        if (self.keys.len() + 1) * 2 > self.slots.len() {
            self.grow();
        }
        let mask = self.slots.len() - 1;
        let tag = u64::from(self.generation) << 32;
        // Keys are mixed already: their low bits spread.
        let mut i = k as usize & mask;
        loop {
            let s = self.slots[i];
            if s == tag | u64::from(k) {
                return;
            }
            if s & 0xffff_ffff_0000_0000 != tag {
                self.slots[i] = tag | u64::from(k);
                self.keys.push(k);
                return;
            }
            i = (i + 1) & mask;
        }
    }

    fn grow(&mut self) {
        self.slots = vec![0; self.slots.len() * 2];
        self.generation = 1;
        let keys = std::mem::take(&mut self.keys);
        for &k in &keys {
            self.insert(k);
        }
        self.keys = keys;
    }

    /// The keys held, in the order first added.
    pub(crate) fn keys(&self) -> &[Gram] {
        &self.keys
    }

    /// How many keys are held.
    pub(crate) fn len(&self) -> usize {
        self.keys.len()
    }

    /// Empties the set, keeping its memory unless it grew past 1 Mi slots.
    pub(crate) fn clear(&mut self) {
        self.keys.clear();
        for &w in &self.trigram_words {
            self.trigrams[w as usize] = 0;
        }
        self.trigram_words.clear();
        if self.slots.len() > 1 << 20 {
            *self = Self::default();
            return;
        }
        self.generation = self.generation.wrapping_add(1);
        if self.generation == 0 {
            self.slots.iter_mut().for_each(|s| *s = 0);
            self.generation = 1;
        }
    }
}

/// The grams a text holding `literal` (folded) surely holds: the covering
/// sparse grams of the literal — those inside no longer one (the others add
/// nothing). Empty when the literal is shorter than 3 bytes.
pub(crate) fn covering(literal: &[u8]) -> Vec<Gram> {
    let mut spans = std::collections::HashSet::new();
    sparse_grams(literal, &mut Vec::new(), |s, e| {
        spans.insert((s, e));
    });
    let inside_another = |&(s, e): &(usize, usize)| {
        (s.saturating_sub(MAX_GRAM - 3)..=s)
            .any(|s2| (e..=s2 + MAX_GRAM).any(|e2| (s2, e2) != (s, e) && spans.contains(&(s2, e2))))
    };
    let mut out: Vec<Gram> = spans
        .iter()
        .filter(|span| !inside_another(span))
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
        sparse_grams(t.as_bytes(), &mut Vec::new(), |s, e| {
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
        // Longer grams exist.
        assert!(grams.iter().any(|g| g.len() > 4));
        assert!(grams.len() <= (MAX_GRAM - 2) * (text.len() - 1));
        // Shorter than a trigram: none.
        assert!(all("ab").is_empty());
        assert_eq!(all("abc"), vec!["abc".to_owned()]);
    }

    #[test]
    fn a_sparse_gram_is_one_by_its_bytes_alone() {
        // The defining property: pairs strictly inside weigh less than both ends.
        let text = b"quibarfoo_vexdun == 42; // TODO: gorhan";
        let mut spans = Vec::new();
        sparse_grams(text, &mut Vec::new(), |s, e| spans.push((s, e)));
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
            text_grams(&mut text, &mut set);
            let held: std::collections::HashSet<Gram> = set.keys().iter().copied().collect();
            let folded: Vec<u8> = literal.iter().map(|&b| fold(b)).collect();
            let cover = covering(&folded);
            assert_eq!(cover.is_empty(), literal.len() < 3, "round {round}");
            for k in cover {
                assert!(held.contains(&k), "round {round}: {literal:?} in {line:?}");
            }
        }
    }

    #[test]
    fn the_index_and_queries_find_the_same_grams() {
        // `line_grams` (the index) packs keys as it scans; `sparse_grams`
        // and `key` (queries) take each gram whole: the same keys.
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut set = GramSet::default();
        for round in 0..2000 {
            let len = (rng.next() % 40) as usize;
            let line = rng.text(len).to_ascii_lowercase();
            set.clear();
            line_grams(&line, &mut set);
            let mut got = set.keys().to_vec();
            let mut want = Vec::new();
            sparse_grams(&line, &mut Vec::new(), |s, e| want.push(key(&line[s..e])));
            got.sort_unstable();
            got.dedup();
            want.sort_unstable();
            want.dedup();
            assert_eq!(got, want, "round {round}: {line:?}");
        }
    }

    #[test]
    fn distinct_grams_have_distinct_keys() {
        // Packing is exact and the mix a bijection: no two grams of up to
        // 4 bytes (a 4-gram never starting with NUL) share a key.
        let mut seen = std::collections::HashMap::new();
        let bytes = b"ab_z\t\xc3";
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
        assert_eq!(seen.len(), 6 * 6 * 6 * 7);
    }

    #[test]
    fn a_gram_set_dedups_and_clears_in_constant_time() {
        let mut set = GramSet::default();
        for round in 0..3u32 {
            for k in 0..10_000u32 {
                set.insert(mix(k % 7_000 + round));
            }
            assert_eq!(set.len(), 7_000);
            let mut keys = set.keys().to_vec();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), 7_000);
            set.clear();
            assert_eq!(set.len(), 0);
        }
        // After a clear, earlier keys are gone.
        set.insert(5);
        assert_eq!(set.keys(), &[5]);
        // Trigrams of ASCII text go through the bitmap: each once, and gone
        // after a clear; others (é) through the table.
        for _ in 0..2 {
            set.clear();
            for _ in 0..3 {
                line_grams(b"abcabc\tabc caf\xc3\xa9 caf\xc3\xa9", &mut set);
            }
            let mut keys = set.keys().to_vec();
            keys.sort_unstable();
            keys.dedup();
            assert_eq!(keys.len(), set.len());
            for t in [
                &b"abc"[..],
                b"bca",
                b"c\ta",
                b"caf",
                b"af\xc3",
                b"\xc3\xa9 ",
            ] {
                assert!(set.keys().contains(&key(t)), "{t:?}");
            }
            assert!(!set.keys().contains(&key(b"xyz")));
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
