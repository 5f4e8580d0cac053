//! Lines and spans: the line ranges of a text, and the clean-up every
//! strategy's spans get (token boundaries, overlaps, a final newline).

use std::ops::Range;

/// Byte ranges of the lines of `content` (without their `\n`).
pub(super) fn line_ranges(content: &str) -> Vec<Range<usize>> {
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
pub(super) fn find_lines(find: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = find.split('\n').collect();
    if lines.len() > 1 && lines.last() == Some(&"") {
        lines.pop();
    }
    lines
}

/// The span covering lines `first..=last`.
pub(super) fn block(lines: &[Range<usize>], first: usize, last: usize) -> Range<usize> {
    lines[first].start..lines[last].end
}

/// Line-based strategies match whole lines without their `\n`: when
/// `old_string` ends with a line break, the span takes the line break that
/// follows it too, so a `new_string` ending with one does not add a blank line.
pub(super) fn take_final_newline(content: &str, spans: &mut [Range<usize>]) {
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
pub(super) fn on_token_boundaries(content: &str, span: &Range<usize>) -> bool {
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
pub(super) fn disjoint(spans: Vec<Range<usize>>) -> Vec<Range<usize>> {
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
