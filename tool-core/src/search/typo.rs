//! Typo tolerance: the index word a misspelt query word most likely meant.
//!
//! A query word (stemmed) that no indexed tool contains, of
//! [`MIN_LEN`]..=[`MAX_LEN`] ASCII letters and digits, is looked up with
//! every spelling one edit away (a letter deleted, inserted, replaced, or
//! two neighbours swapped: Norvig's candidate generation, about 54 × its
//! length lookups in the index's term table, no other index). The words
//! found there are handed, most frequent first, to
//! `tool_rules::suggest::did_you_mean` (optimal string alignment, the
//! project's one did-you-mean metric, cross-cutting decision §1), which
//! picks the correction. At most [`MAX_WORDS`] words of a query are looked
//! at, so a query costs at most a few thousand hash lookups more.
//!
//! The stem of a misspelt word can be two edits from the right stem when
//! the stemmer cut the two words differently (`stirpe` → `stirp`, but
//! `stripe` stays; `custmer` is not `custom`, the stem of `customer`), or
//! one edit from a wrong one (`pasue` → `pasu`, one letter from `past`;
//! as written it is `pause` with two letters swapped). So a word is
//! looked up first as written (lower case) among the index's words as
//! written, the correction being that word's stem, and only then by its
//! stem (issue 31's third round; before, the stem came first). A word of
//! English the semantic model knows (`stuck`, `lock`, `park`) is not
//! corrected at all (see `SearchIndex::explain`).

/// Shortest query word (stemmed, in bytes) that is corrected: 4; shorter
/// words are one edit from too many others.
pub(crate) const MIN_LEN: usize = 4;
/// Longest query word that is corrected: 24 bytes.
pub(crate) const MAX_LEN: usize = 24;
/// Most words of one query that are corrected: 4.
pub(crate) const MAX_WORDS: usize = 4;

const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz";

/// Shortest word (in bytes) a deleted letter may correct: 5. A four-letter
/// word less one letter is a three-letter word, and those are too many
/// (`prod` is not a misspelt `pod`); swaps, replacements and insertions
/// still correct four-letter words (`lsit` → `list`, `slak` → `slack`).
pub(crate) const MIN_LEN_DELETION: usize = 5;

/// The index word `word` most likely meant, if any: among the words one
/// edit away for which `df` gives a document frequency above 0, the one
/// `tool_rules::suggest::did_you_mean` picks (ties to the most frequent).
pub(crate) fn correct(word: &str, df: impl Fn(&str) -> u32) -> Option<String> {
    let b = word.as_bytes();
    if !(MIN_LEN..=MAX_LEN).contains(&b.len())
        || !b
            .iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
    {
        return None;
    }
    let mut found: Vec<(u32, String)> = Vec::new();
    edits(b, |buf| {
        // Only ASCII bytes were written: always UTF-8.
        let Ok(text) = std::str::from_utf8(buf) else {
            return;
        };
        let n = df(text);
        if n > 0 && !found.iter().any(|(_, w)| w == text) {
            found.push((n, text.to_owned()));
        }
    });
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    tool_rules::suggest::did_you_mean(word, found.iter().map(|(_, w)| w.as_str()))
        .map(str::to_owned)
}

/// Calls `check` with every spelling one edit from `b` (Norvig's
/// candidates: a letter deleted, two neighbours swapped, a letter replaced
/// or inserted); deletions only from words of [`MIN_LEN_DELETION`] bytes
/// or more.
fn edits(b: &[u8], mut check: impl FnMut(&[u8])) {
    let mut buf: Vec<u8> = Vec::with_capacity(b.len() + 1);
    for i in 0..b.len() {
        if b.len() >= MIN_LEN_DELETION {
            buf.clear();
            buf.extend_from_slice(&b[..i]);
            buf.extend_from_slice(&b[i + 1..]);
            check(&buf);
        }
        // Swap with the next.
        if i + 1 < b.len() && b[i] != b[i + 1] {
            buf.clear();
            buf.extend_from_slice(b);
            buf.swap(i, i + 1);
            check(&buf);
        }
        // Replacement.
        for &c in ALPHABET {
            if c != b[i] {
                buf.clear();
                buf.extend_from_slice(b);
                buf[i] = c;
                check(&buf);
            }
        }
    }
    // Insertion.
    for i in 0..=b.len() {
        for &c in ALPHABET {
            buf.clear();
            buf.extend_from_slice(&b[..i]);
            buf.push(c);
            buf.extend_from_slice(&b[i..]);
            check(&buf);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab(word: &str) -> u32 {
        match word {
            "search" => 9,
            "repositori" => 5,
            "kubernet" => 3,
            "delet" => 4,
            "seach" => 1,
            _ => 0,
        }
    }

    #[test]
    fn one_edit_away_is_corrected() {
        assert_eq!(correct("serach", vocab).as_deref(), Some("search"), "swap");
        assert_eq!(
            correct("repositri", vocab).as_deref(),
            Some("repositori"),
            "insert"
        );
        assert_eq!(
            correct("kuberet", vocab).as_deref(),
            Some("kubernet"),
            "insert"
        );
        assert_eq!(correct("delett", vocab).as_deref(), Some("delet"), "delete");
        assert_eq!(
            correct("lsit", |w| u32::from(w == "list")).as_deref(),
            Some("list")
        );
        assert_eq!(correct("deoet", vocab).as_deref(), Some("delet"), "replace");
        // Ties go to the more frequent word.
        assert_eq!(correct("seaxch", vocab).as_deref(), Some("search"));
    }

    #[test]
    fn short_long_far_or_unusual_words_are_not() {
        assert_eq!(correct("srch", vocab), None, "two edits");
        assert_eq!(correct("del", vocab), None, "too short");
        assert_eq!(correct(&"a".repeat(30), vocab), None, "too long");
        assert_eq!(correct("délet", vocab), None, "not ASCII");
        assert_eq!(correct("zebra", vocab), None);
        // A four-letter word is not corrected by deleting a letter.
        assert_eq!(correct("prod", |w| u32::from(w == "pod")), None);
    }
}
