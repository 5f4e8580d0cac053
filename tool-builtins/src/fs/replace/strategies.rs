//! The matching strategies, strict to lenient, each returning every span
//! it matches in `\n`-normalised text.

use std::borrow::Cow;
use std::ops::Range;

use super::spans::*;

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{IsNormalized, UnicodeNormalization, is_nfc, is_nfc_quick};

pub(super) fn exact(content: &str, find: &str) -> Vec<Range<usize>> {
    content
        .match_indices(find)
        .map(|(i, m)| i..i + m.len())
        .collect()
}

/// Whether normalisation can restart before `c`: a character of combining
/// class 0 that is NFC as it stands and never composes with the character
/// before it (NFC quick check "yes"). NFC of a text is the NFC of its pieces
/// cut before such characters, and a match boundary anywhere else would
/// split a base character from its combining marks.
pub(super) fn nfc_boundary_before(c: char) -> bool {
    c.is_ascii()
        || (canonical_combining_class(c) == 0
            && is_nfc_quick(std::iter::once(c)) == IsNormalized::Yes)
}

/// A piece of a text that NFC changes: its range in the NFC text and in the original.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct NfcPiece {
    nfc: Range<usize>,
    original: Range<usize>,
}

/// A text in NFC with the map back to the original's bytes: only the pieces
/// NFC changed are stored; between them offsets differ by a constant.
pub(super) struct NfcText<'a> {
    nfc: Cow<'a, str>,
    changed: Vec<NfcPiece>,
}

impl<'a> NfcText<'a> {
    fn new(s: &'a str) -> Self {
        if is_nfc(s) {
            return Self {
                nfc: Cow::Borrowed(s),
                changed: Vec::new(),
            };
        }
        let mut out = String::with_capacity(s.len());
        let mut changed = Vec::new();
        let mut push = |start: usize, end: usize, out: &mut String| {
            let piece = &s[start..end];
            let at = out.len();
            if is_nfc_quick(piece.chars()) == IsNormalized::Yes {
                out.push_str(piece);
                return;
            }
            out.extend(piece.nfc());
            if out[at..] != *piece {
                changed.push(NfcPiece {
                    nfc: at..out.len(),
                    original: start..end,
                });
            }
        };
        let mut start = 0;
        for (i, c) in s.char_indices() {
            if i > start && nfc_boundary_before(c) {
                push(start, i, &mut out);
                start = i;
            }
        }
        push(start, s.len(), &mut out);
        Self {
            nfc: Cow::Owned(out),
            changed,
        }
    }

    /// The original offset of NFC offset `at`, or `None` when `at` is not a
    /// piece boundary (it would split a character from its combining marks).
    fn to_original(&self, at: usize) -> Option<usize> {
        let text = self.nfc.as_ref();
        let boundary = at == 0
            || at == text.len()
            || text[at..].chars().next().is_some_and(nfc_boundary_before);
        let idx = self.changed.partition_point(|p| p.nfc.start <= at);
        let Some(piece) = idx.checked_sub(1).map(|i| &self.changed[i]) else {
            return boundary.then_some(at);
        };
        if at == piece.nfc.start {
            Some(piece.original.start)
        } else if at < piece.nfc.end {
            None
        } else {
            boundary.then(|| piece.original.end + (at - piece.nfc.end))
        }
    }
}

pub(super) fn canonical_nfc(content: &str, find: &str) -> Vec<Range<usize>> {
    if find.is_ascii() && content.is_ascii() {
        return Vec::new();
    }
    let find_nfc: Cow<'_, str> = if is_nfc(find) {
        Cow::Borrowed(find)
    } else {
        Cow::Owned(find.nfc().collect())
    };
    let text = NfcText::new(content);
    if matches!((&find_nfc, &text.nfc), (Cow::Borrowed(_), Cow::Borrowed(_))) {
        return Vec::new(); // both already NFC: the exact strategy has decided
    }
    exact(&text.nfc, &find_nfc)
        .into_iter()
        .filter_map(|r| Some(text.to_original(r.start)?..text.to_original(r.end)?))
        .collect()
}

pub(super) fn line_trimmed(content: &str, find: &str) -> Vec<Range<usize>> {
    let wanted: Vec<&str> = find_lines(find).into_iter().map(str::trim).collect();
    if wanted.iter().all(|l| l.is_empty()) {
        return Vec::new();
    }
    let lines = line_ranges(content);
    windows(&lines, wanted.len())
        .filter(|&i| {
            wanted
                .iter()
                .enumerate()
                .all(|(k, w)| content[lines[i + k].clone()].trim() == *w)
        })
        .map(|i| block(&lines, i, i + wanted.len() - 1))
        .collect()
}

/// Start indices of every window of `len` lines.
pub(super) fn windows(lines: &[Range<usize>], len: usize) -> impl Iterator<Item = usize> {
    let count = if len == 0 || len > lines.len() {
        0
    } else {
        lines.len() - len + 1
    };
    0..count
}

/// Lowest similarity of the middle lines for a block-anchor match. Below it,
/// the block's first and last lines match but its body is something else.
pub(super) const BLOCK_ANCHOR_MIN_SIMILARITY: f64 = 0.5;

pub(super) fn block_anchor(content: &str, find: &str, replace_all: bool) -> Vec<Range<usize>> {
    let wanted = find_lines(find);
    if wanted.len() < 3 {
        return Vec::new();
    }
    let first = wanted[0].trim();
    let last = wanted[wanted.len() - 1].trim();
    if first.is_empty() || last.is_empty() {
        return Vec::new();
    }
    let middle: Vec<&str> = wanted[1..wanted.len() - 1]
        .iter()
        .map(|l| l.trim())
        .collect();
    let lines = line_ranges(content);
    let text = |i: usize| content[lines[i].clone()].trim();
    let mut scored: Vec<(f64, Range<usize>)> = Vec::new();
    for i in 0..lines.len() {
        if text(i) != first {
            continue;
        }
        let Some(j) = (i + 2..lines.len()).find(|&j| text(j) == last) else {
            continue;
        };
        let body: Vec<&str> = (i + 1..j).map(text).collect();
        let score = similarity(&middle, &body);
        if score >= BLOCK_ANCHOR_MIN_SIMILARITY {
            scored.push((score, block(&lines, i, j)));
        }
    }
    if replace_all {
        return scored.into_iter().map(|(_, r)| r).collect();
    }
    let best = scored.iter().map(|(s, _)| *s).fold(f64::NAN, f64::max);
    scored
        .into_iter()
        .filter(|(s, _)| (*s - best).abs() < 1e-9)
        .map(|(_, r)| r)
        .collect()
}

/// Line-by-line similarity of two blocks (trimmed lines), 0..=1: the mean of
/// each pair's normalised Levenshtein similarity, a missing line counting 0.
pub(super) fn similarity(a: &[&str], b: &[&str]) -> f64 {
    let n = a.len().max(b.len());
    if n == 0 {
        return 1.0;
    }
    let total: f64 = (0..n)
        .map(|k| match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) => tool_rules::suggest::similarity(x, y),
            _ => 0.0,
        })
        .sum();
    #[allow(clippy::cast_precision_loss, reason = "line counts are far below 2^52")]
    let n = n as f64;
    total / n
}

pub(super) fn whitespace_normalized(content: &str, find: &str) -> Vec<Range<usize>> {
    let words: Vec<&str> = find.split_whitespace().collect();
    if words.is_empty() {
        return Vec::new();
    }
    let lead = find.starts_with(|c: char| c.is_whitespace());
    let trail = find.ends_with(|c: char| c.is_whitespace());
    let trail_newline = find.ends_with('\n');
    let bytes = content.as_bytes();
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = content[from..].find(words[0]) {
        let start = from + pos;
        from = start + words[0].len();
        let Some(end) = match_words(content, start, &words) else {
            continue;
        };
        // Whole tokens only; and whitespace at an end of `old_string` must be
        // whitespace (or the file's edge) in the file too.
        let ws_before = content[..start]
            .chars()
            .next_back()
            .is_none_or(char::is_whitespace);
        let ws_after = content[end..]
            .chars()
            .next()
            .is_none_or(char::is_whitespace);
        if !on_token_boundaries(content, &(start..end))
            || (lead && !ws_before)
            || (trail && !ws_after)
        {
            continue;
        }
        let mut span = start..end;
        // `old_string` that starts with indentation takes the line's
        // indentation along when the match starts the line, so the
        // replacement's own indentation is not added to it.
        if lead {
            let line_start = content[..start].rfind('\n').map_or(0, |i| i + 1);
            if content[line_start..start]
                .chars()
                .all(|c| c == ' ' || c == '\t')
            {
                span.start = line_start;
            }
        }
        if trail {
            let line_end = content[end..].find('\n').map_or(content.len(), |i| end + i);
            if content[end..line_end]
                .chars()
                .all(|c| c == ' ' || c == '\t')
            {
                span.end = line_end;
                if trail_newline && bytes.get(line_end) == Some(&b'\n') {
                    span.end += 1;
                }
            }
        }
        from = end.max(from);
        out.push(span);
    }
    out
}

/// End of the match of `words` starting at `start`, words separated by at least one whitespace character.
pub(super) fn match_words(content: &str, start: usize, words: &[&str]) -> Option<usize> {
    let mut at = start + words[0].len();
    for w in &words[1..] {
        let rest = &content[at..];
        let ws = rest.len() - rest.trim_start().len();
        if ws == 0 || !rest[ws..].starts_with(w) {
            return None;
        }
        at += ws + w.len();
    }
    Some(at)
}

/// `lines` with their common leading whitespace removed (blank lines ignored for the minimum).
pub(super) fn dedent(lines: &[&str]) -> Vec<String> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                l.get(indent..).unwrap_or(l).to_owned()
            }
        })
        .collect()
}

pub(super) fn indentation_flexible(content: &str, find: &str) -> Vec<Range<usize>> {
    let wanted_lines = find_lines(find);
    let wanted = dedent(&wanted_lines);
    if wanted.iter().all(String::is_empty) {
        return Vec::new();
    }
    let first = wanted_lines[0].trim();
    let lines = line_ranges(content);
    windows(&lines, wanted.len())
        .filter(|&i| content[lines[i].clone()].trim() == first)
        .filter(|&i| {
            let candidate: Vec<&str> = (i..i + wanted.len())
                .map(|k| &content[lines[k].clone()])
                .collect();
            dedent(&candidate) == wanted
        })
        .map(|i| block(&lines, i, i + wanted.len() - 1))
        .collect()
}

/// `s` with backslash escapes interpreted: `\n`, `\t`, `\r`, `\'`, `\"`, `` \` ``, `\\`, `\$`.
pub(super) fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.peek().copied() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('r') => out.push('\r'),
            Some(q @ ('\'' | '"' | '`' | '\\' | '$')) => out.push(q),
            Some('\n') => out.push('\n'),
            _ => {
                out.push('\\');
                continue;
            }
        }
        chars.next();
    }
    out
}

pub(super) fn escape_normalized(content: &str, find: &str) -> Vec<Range<usize>> {
    let unescaped = unescape(find);
    if unescaped == find || unescaped.is_empty() {
        return Vec::new();
    }
    let mut out = exact(content, &unescaped);
    out.retain(|span| on_token_boundaries(content, span));
    // The file may hold the escapes while the model sent them interpreted or
    // half-interpreted: compare blocks with their escapes interpreted too.
    let wanted = find_lines(&unescaped).len();
    let lines = line_ranges(content);
    out.extend(
        windows(&lines, wanted)
            .map(|i| block(&lines, i, i + wanted - 1))
            .filter(|r| unescape(&content[r.clone()]) == unescaped),
    );
    out
}

pub(super) fn trimmed_boundary(content: &str, find: &str) -> Vec<Range<usize>> {
    let trimmed = find.trim();
    if trimmed == find || trimmed.is_empty() {
        return Vec::new();
    }
    let mut out = exact(content, trimmed);
    out.retain(|span| on_token_boundaries(content, span));
    let wanted = find_lines(trimmed).len();
    let lines = line_ranges(content);
    out.extend(
        windows(&lines, wanted)
            .map(|i| block(&lines, i, i + wanted - 1))
            .filter(|r| content[r.clone()].trim() == trimmed),
    );
    out
}

pub(super) fn context_aware(content: &str, find: &str) -> Vec<Range<usize>> {
    let wanted = find_lines(find);
    if wanted.len() < 3 {
        return Vec::new();
    }
    let first = wanted[0].trim();
    let last = wanted[wanted.len() - 1].trim();
    if first.is_empty() || last.is_empty() {
        return Vec::new();
    }
    let lines = line_ranges(content);
    let text = |i: usize| content[lines[i].clone()].trim();
    let n = wanted.len();
    windows(&lines, n)
        .filter(|&i| text(i) == first && text(i + n - 1) == last)
        .filter(|&i| {
            let middle = &wanted[1..n - 1];
            let same = middle
                .iter()
                .enumerate()
                .filter(|(k, w)| text(i + 1 + k) == w.trim())
                .count();
            middle.is_empty() || same * 2 >= middle.len()
        })
        .map(|i| block(&lines, i, i + n - 1))
        .collect()
}

/// The ASCII form of a typographic character, or `None` to keep it.
pub(super) fn ascii_form(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => "'",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => "\"",
        '\u{2010}' | '\u{2011}' | '\u{2012}' | '\u{2013}' | '\u{2014}' | '\u{2015}'
        | '\u{2212}' => "-",
        '\u{2026}' => "...",
        '\u{00A0}' | '\u{2000}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => " ",
        _ => return None,
    })
}

/// `s` with typographic characters in ASCII form, and for each byte of the
/// result the offset in `s` of the character it came from (plus one final
/// entry, `s.len()`).
pub(super) fn ascii_folded(s: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(s.len());
    let mut map = Vec::with_capacity(s.len() + 1);
    for (i, c) in s.char_indices() {
        match ascii_form(c) {
            Some(a) => {
                out.push_str(a);
                map.extend(std::iter::repeat_n(i, a.len()));
            }
            None => {
                out.push(c);
                map.extend(i..i + c.len_utf8());
            }
        }
    }
    map.push(s.len());
    (out, map)
}

pub(super) fn has_typographic(s: &str) -> bool {
    s.chars().any(|c| ascii_form(c).is_some())
}

pub(super) fn unicode_normalized(content: &str, find: &str) -> Vec<Range<usize>> {
    let find_folded = if has_typographic(find) {
        ascii_folded(find).0
    } else if has_typographic(content) {
        find.to_owned()
    } else {
        return Vec::new();
    };
    if !has_typographic(content) {
        // Only old_string had typographic characters: no offset map needed.
        let mut spans = exact(content, &find_folded);
        if spans.is_empty() {
            spans = line_trimmed(content, &find_folded);
        }
        return spans;
    }
    let (folded, map) = ascii_folded(content);
    let mut spans = exact(&folded, &find_folded);
    if spans.is_empty() {
        spans = line_trimmed(&folded, &find_folded);
    }
    spans
        .into_iter()
        .map(|r| {
            let start = map[r.start];
            // The end maps to the start of the character after the span.
            let end = if r.end >= folded.len() {
                content.len()
            } else {
                map[r.end]
            };
            start..end
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nfc_map_agrees_with_whole_text_normalisation() {
        let samples = [
            "cafe\u{301} cre\u{300}me bru\u{302}le\u{301}e",
            "\u{301}leading mark, then e\u{323}\u{302}",
            "\u{1112}\u{1161}\u{11ab}\u{1100}\u{1173}\u{11af} \u{d55c}",
            "\u{958}\u{959} devanagari qa khha, \u{f73} tibetan",
            "Vi\u{1ec7}t Nam, Vie\u{323}\u{302}t Nam, Vie\u{302}\u{323}t",
            "\u{212b}ngstr\u{f6}m \u{2126}",
            "x\u{301}\u{327}y \u{1e9b}\u{323}",
        ];
        for s in samples {
            let t = NfcText::new(s);
            let whole: String = s.nfc().collect();
            assert_eq!(t.nfc, whole, "{s:?}");
            // Every mapped offset is a character boundary of the original,
            // and offsets map in order.
            let mut last = 0;
            for at in (0..=t.nfc.len()).filter(|&i| t.nfc.is_char_boundary(i)) {
                if let Some(o) = t.to_original(at) {
                    assert!(s.is_char_boundary(o) && o >= last, "{s:?} {at} -> {o}");
                    last = o;
                }
            }
            assert_eq!(t.to_original(t.nfc.len()), Some(s.len()));
        }
    }
}
