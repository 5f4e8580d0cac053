//! Locating `old_string` in a file for `edit_file` and `multi_edit`.
//!
//! Models quote code imperfectly: indentation drifts, trailing spaces vanish,
//! escapes get doubled, typographic quotes sneak in. The strategies below run
//! in order, from strict to lenient; the first that finds anything decides.
//! Each strategy collects every span it matches before deciding, so two
//! equally good spans without `replace_all` are reported as ambiguous instead
//! of silently editing the first.
//!
//! Everything here works on text whose line breaks are `\n` (the caller
//! normalises `\r\n` and maps spans back); spans are byte ranges of that text.

use std::ops::Range;

/// A way of matching `old_string` against the file, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The exact text.
    Exact,
    /// Whole lines equal after trimming each line.
    LineTrimmed,
    /// A block (3+ lines) whose first and last lines match and whose middle resembles `old_string`'s.
    BlockAnchor,
    /// The same words with any runs of whitespace between them.
    WhitespaceNormalized,
    /// The same lines after removing the block's common indentation.
    IndentationFlexible,
    /// `old_string` with backslash escapes (`\n`, `\t`, `\"` ...) interpreted.
    EscapeNormalized,
    /// `old_string` without its leading and trailing whitespace.
    TrimmedBoundary,
    /// First and last lines match and at least half of the middle lines match.
    ContextAware,
    /// Typographic quotes, dashes, ellipses and odd spaces equal their ASCII forms (for locating only).
    UnicodeNormalized,
}

impl Strategy {
    /// Every strategy, in the order tried.
    pub const ALL: [Self; 9] = [
        Self::Exact,
        Self::LineTrimmed,
        Self::BlockAnchor,
        Self::WhitespaceNormalized,
        Self::IndentationFlexible,
        Self::EscapeNormalized,
        Self::TrimmedBoundary,
        Self::ContextAware,
        Self::UnicodeNormalized,
    ];

    /// The `snake_case` name reported in metadata (`strategy`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::LineTrimmed => "line_trimmed",
            Self::BlockAnchor => "block_anchor",
            Self::WhitespaceNormalized => "whitespace_normalized",
            Self::IndentationFlexible => "indentation_flexible",
            Self::EscapeNormalized => "escape_normalized",
            Self::TrimmedBoundary => "trimmed_boundary",
            Self::ContextAware => "context_aware",
            Self::UnicodeNormalized => "unicode_normalized",
        }
    }

    fn spans(self, content: &str, find: &str, replace_all: bool) -> Vec<Range<usize>> {
        match self {
            Self::Exact => exact(content, find),
            Self::LineTrimmed => line_trimmed(content, find),
            Self::BlockAnchor => block_anchor(content, find, replace_all),
            Self::WhitespaceNormalized => whitespace_normalized(content, find),
            Self::IndentationFlexible => indentation_flexible(content, find),
            Self::EscapeNormalized => escape_normalized(content, find),
            Self::TrimmedBoundary => trimmed_boundary(content, find),
            Self::ContextAware => context_aware(content, find),
            Self::UnicodeNormalized => unicode_normalized(content, find),
        }
    }
}

/// Why `old_string` could not be located.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchError {
    /// No strategy found it.
    NotFound,
    /// The first strategy that found it found more than one place (and `replace_all` was off).
    Multiple {
        /// The strategy that found several places.
        strategy: Strategy,
        /// How many.
        count: usize,
    },
}

/// Where `old_string` is: the strategy that found it and the spans (sorted, disjoint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The strategy that matched.
    pub strategy: Strategy,
    /// Byte ranges of the content to replace; exactly one unless `replace_all`.
    pub spans: Vec<Range<usize>>,
}

/// Locates `find` in `content` (both with `\n` line breaks).
///
/// # Errors
/// [`MatchError::NotFound`], or [`MatchError::Multiple`] when the first
/// matching strategy found several places and `replace_all` is off.
pub fn locate(content: &str, find: &str, replace_all: bool) -> Result<Found, MatchError> {
    if find.is_empty() {
        return Err(MatchError::NotFound);
    }
    for strategy in Strategy::ALL {
        let mut spans = strategy.spans(content, find, replace_all);
        if find.ends_with('\n') && strategy != Strategy::TrimmedBoundary {
            take_final_newline(content, &mut spans);
        }
        let spans = disjoint(spans);
        match spans.len() {
            0 => {}
            1 => return Ok(Found { strategy, spans }),
            count if !replace_all => return Err(MatchError::Multiple { strategy, count }),
            _ => return Ok(Found { strategy, spans }),
        }
    }
    Err(MatchError::NotFound)
}

/// Line-based strategies match whole lines without their `\n`: when
/// `old_string` ends with a line break, the span takes the line break that
/// follows it too, so a `new_string` ending with one does not add a blank line.
fn take_final_newline(content: &str, spans: &mut [Range<usize>]) {
    for span in spans {
        let ends_line = span.end > span.start && content.as_bytes()[span.end - 1] == b'\n';
        if !ends_line && content.as_bytes().get(span.end) == Some(&b'\n') {
            span.end += 1;
        }
    }
}

/// Whether `span` of `content` starts and ends on token boundaries: a span
/// starting (ending) with a word character (alphanumeric or `_`) is not
/// preceded (followed) by one. The lenient strategies use it so that they
/// never match part of a word (`foo` inside `foobar`).
fn on_token_boundaries(content: &str, span: &Range<usize>) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let inner = &content[span.clone()];
    let before = content[..span.start].chars().next_back();
    let after = content[span.end..].chars().next();
    let starts_ok = !inner.chars().next().is_some_and(word) || !before.is_some_and(word);
    let ends_ok = !inner.chars().next_back().is_some_and(word) || !after.is_some_and(word);
    starts_ok && ends_ok
}

/// Keeps spans in the order found, dropping empty ones and any that overlap
/// one already kept (two sub-rules of one strategy finding the same place),
/// then sorts them.
fn disjoint(spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
    let mut kept: Vec<Range<usize>> = Vec::with_capacity(spans.len());
    for s in spans {
        if s.is_empty() {
            continue;
        }
        if kept.iter().all(|k| s.end <= k.start || s.start >= k.end) {
            kept.push(s);
        }
    }
    kept.sort_by_key(|r| r.start);
    kept
}

// ---------------------------------------------------------------------------
// Line helpers

/// Byte ranges of the lines of `content` (without their `\n`).
fn line_ranges(content: &str) -> Vec<Range<usize>> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', content.as_bytes()) {
        out.push(start..i);
        start = i + 1;
    }
    out.push(start..content.len());
    out
}

/// The lines of `find`, without a final empty line (a trailing `\n`).
fn find_lines(find: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = find.split('\n').collect();
    if lines.len() > 1 && lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// The span covering lines `first..=last`.
fn block(lines: &[Range<usize>], first: usize, last: usize) -> Range<usize> {
    lines[first].start..lines[last].end
}

// ---------------------------------------------------------------------------
// Strategies

fn exact(content: &str, find: &str) -> Vec<Range<usize>> {
    content
        .match_indices(find)
        .map(|(i, m)| i..i + m.len())
        .collect()
}

fn line_trimmed(content: &str, find: &str) -> Vec<Range<usize>> {
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
fn windows(lines: &[Range<usize>], len: usize) -> impl Iterator<Item = usize> {
    let count = if len == 0 || len > lines.len() {
        0
    } else {
        lines.len() - len + 1
    };
    0..count
}

/// Lowest similarity of the middle lines for a block-anchor match. Below it,
/// the block's first and last lines match but its body is something else.
const BLOCK_ANCHOR_MIN_SIMILARITY: f64 = 0.5;

fn block_anchor(content: &str, find: &str, replace_all: bool) -> Vec<Range<usize>> {
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
fn similarity(a: &[&str], b: &[&str]) -> f64 {
    let n = a.len().max(b.len());
    if n == 0 {
        return 1.0;
    }
    let total: f64 = (0..n)
        .map(|k| match (a.get(k), b.get(k)) {
            (Some(x), Some(y)) => strsim::normalized_levenshtein(x, y),
            _ => 0.0,
        })
        .sum();
    #[allow(clippy::cast_precision_loss, reason = "line counts are far below 2^52")]
    let n = n as f64;
    total / n
}

fn whitespace_normalized(content: &str, find: &str) -> Vec<Range<usize>> {
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
fn match_words(content: &str, start: usize, words: &[&str]) -> Option<usize> {
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
fn dedent(lines: &[&str]) -> Vec<String> {
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

fn indentation_flexible(content: &str, find: &str) -> Vec<Range<usize>> {
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
fn unescape(s: &str) -> String {
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

fn escape_normalized(content: &str, find: &str) -> Vec<Range<usize>> {
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

fn trimmed_boundary(content: &str, find: &str) -> Vec<Range<usize>> {
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

fn context_aware(content: &str, find: &str) -> Vec<Range<usize>> {
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
fn ascii_form(c: char) -> Option<&'static str> {
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
fn ascii_folded(s: &str) -> (String, Vec<usize>) {
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

fn has_typographic(s: &str) -> bool {
    s.chars().any(|c| ascii_form(c).is_some())
}

fn unicode_normalized(content: &str, find: &str) -> Vec<Range<usize>> {
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

    fn apply(
        content: &str,
        find: &str,
        new: &str,
        all: bool,
    ) -> Result<(String, Strategy), MatchError> {
        let found = locate(content, find, all)?;
        let mut out = content.to_owned();
        for r in found.spans.iter().rev() {
            out.replace_range(r.clone(), new);
        }
        Ok((out, found.strategy))
    }

    #[test]
    fn exact_unique_and_ambiguous() {
        assert_eq!(
            apply("old content here", "old content", "new content", false).unwrap(),
            ("new content here".into(), Strategy::Exact)
        );
        assert_eq!(
            apply("foo bar foo", "foo", "x", false),
            Err(MatchError::Multiple {
                strategy: Strategy::Exact,
                count: 2
            })
        );
        assert_eq!(apply("foo bar foo", "foo", "x", true).unwrap().0, "x bar x");
        assert_eq!(apply("abc", "zzz", "x", false), Err(MatchError::NotFound));
    }

    #[test]
    fn line_trimmed_takes_the_whole_lines() {
        let (out, s) = apply(
            "function f() {\n    return 1;\n}\n",
            "function f() {\nreturn 1;\n}",
            "function f() {\n    return 2;\n}",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::LineTrimmed);
        assert_eq!(out, "function f() {\n    return 2;\n}\n");
        let (out, _) = apply(
            "let a = 1;   \nlet b = 2;\n",
            "let a = 1;\nlet b = 2;",
            "let a = 10;\nlet b = 2;",
            false,
        )
        .unwrap();
        assert_eq!(out, "let a = 10;\nlet b = 2;\n");
    }

    #[test]
    fn block_anchor_picks_the_most_similar_body() {
        let file = "if (a) {\n  x = 1;\n}\nif (a) {\n  y = 2;\n}\n";
        let (out, s) = apply(
            file,
            "if (a) {\n  y = 3;\n}",
            "if (a) {\n  y = 4;\n}",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::BlockAnchor);
        assert_eq!(out, "if (a) {\n  x = 1;\n}\nif (a) {\n  y = 4;\n}\n");
        assert_eq!(
            apply(file, "if (a) {\n  zzzzzzzzzzzzzzzzzz;\n}", "Q", false),
            Err(MatchError::NotFound)
        );
    }

    #[test]
    fn block_anchor_refuses_a_dissimilar_single_candidate() {
        let file = "fn a() {\n    completely();\n    different();\n    body();\n}\n";
        assert_eq!(
            apply(
                file,
                "fn a() {\n    nothing_like_it_at_all_here();\n}",
                "X",
                false
            ),
            Err(MatchError::NotFound)
        );
    }

    #[test]
    fn whitespace_normalized_keeps_surroundings() {
        let (out, s) = apply("const   x =   5;\n", "const x = 5;", "const x = 6;", false).unwrap();
        assert_eq!(s, Strategy::WhitespaceNormalized);
        assert_eq!(out, "const x = 6;\n");
        let (out, _) = apply("alpha beta gamma\n", "  beta  ", "BETA", false).unwrap();
        assert_eq!(out, "alpha BETA gamma\n");
        // Leading indentation in old_string takes the line's indentation along.
        let (out, _) = apply(
            "    const   x = 5;\n",
            "    const x = 5;",
            "    const x = 6;",
            false,
        )
        .unwrap();
        assert_eq!(out, "    const x = 6;\n");
    }

    #[test]
    fn indentation_flexible_matches_shifted_blocks() {
        let file = "    if x:\n        y()\n";
        let (out, s) = apply(file, "if x:\n    y()", "if x:\n    z()", false).unwrap();
        // Line-trimmed gets there first here; both keep the outside intact.
        assert!(matches!(
            s,
            Strategy::LineTrimmed | Strategy::IndentationFlexible
        ));
        assert_eq!(out, "if x:\n    z()\n");
        let spans = indentation_flexible("  a\n    b\n", "a\n  b");
        assert_eq!(spans, vec![0..9]);
    }

    #[test]
    fn escape_normalized_interprets_backslashes() {
        let file = "say(\"hi\")\nnext\n";
        let (out, s) = apply(file, "say(\\\"hi\\\")\\nnext", "done", false).unwrap();
        assert_eq!(s, Strategy::EscapeNormalized);
        assert_eq!(out, "done\n");
    }

    #[test]
    fn trimmed_boundary_and_context_aware() {
        assert_eq!(
            trimmed_boundary("a\nkey = 1\nb", "\n\nkey = 1\n\n"),
            vec![2..9, 2..9]
        );
        let file = "start {\n  one\n  two\n  three\n}\n";
        let spans = context_aware(file, "start {\n  one\n  TWO\n  three\n}");
        assert_eq!(spans, vec![0..file.len() - 1]);
        assert!(context_aware(file, "start {\n  x\n  y\n  z\n}").is_empty());
    }

    #[test]
    fn unicode_quotes_locate_only() {
        let (out, s) = apply(
            "print(\u{201C}hi\u{201D})\n",
            "print(\"hi\")",
            "print(\"bye\")",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::UnicodeNormalized);
        assert_eq!(out, "print(\"bye\")\n");
        let (out, _) = apply("a \u{2013} b\u{2026} end", "a - b...", "X", false).unwrap();
        assert_eq!(out, "X end");
    }

    #[test]
    fn typographic_old_string_finds_ascii_text() {
        let (out, s) = apply(
            "say \"hi\" - now\n",
            "say \u{201C}hi\u{201D} \u{2014} now",
            "X",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::UnicodeNormalized);
        assert_eq!(out, "X\n");
    }

    #[test]
    fn lenient_strategies_never_match_part_of_a_word() {
        assert_eq!(
            apply("foobar\nbaz\n", "\nfoo\n", "X", false),
            Err(MatchError::NotFound)
        );
        assert_eq!(
            apply("foobar baz\n", "foo  bar", "X", false),
            Err(MatchError::NotFound)
        );
        assert_eq!(
            apply("xfoo  bar\n", "foo bar", "X", false),
            Err(MatchError::NotFound)
        );
        assert_eq!(
            apply("say(\"hi\")x\n", "say(\\\"hi\\\")", "X", false)
                .unwrap()
                .0,
            "Xx\n",
            "a token ending in punctuation may touch a word"
        );
        // Whole words still match.
        let (out, s) = apply("a foo   bar;\n", "foo bar", "X", false).unwrap();
        assert_eq!(
            (out.as_str(), s),
            ("a X;\n", Strategy::WhitespaceNormalized)
        );
    }

    #[test]
    fn line_strategies_take_old_strings_final_newline() {
        let (out, s) = apply("  foo  \nnext\n", "foo\n", "bar\n", false).unwrap();
        assert_eq!(s, Strategy::LineTrimmed);
        assert_eq!(out, "bar\nnext\n");
        let (out, _) = apply(
            "    if x:\n        y()\nz\n",
            "if x:\n    y()\n",
            "w\n",
            false,
        )
        .unwrap();
        assert_eq!(out, "w\nz\n");
        // Without a final newline in old_string the line break stays.
        let (out, _) = apply("  foo  \nnext\n", " foo\t", "bar", false).unwrap();
        assert_eq!(out, "bar\nnext\n");
    }

    #[test]
    fn multiple_identical_lines_are_ambiguous_in_every_strategy() {
        assert!(matches!(
            apply("foo\nfoo\n", "foo", "bar", false),
            Err(MatchError::Multiple { .. })
        ));
    }
}
