//! Scanning helpers shared by the formats: where a start pattern begins in
//! streamed text (or may begin, once more text arrives), and where a JSON or
//! Python bracketed value ends, resumably, so that a growing buffer is read
//! once in all (linear in the input, never rescanned per chunk).

/// A pattern that starts call markup (a format lists its patterns in
/// [`TextCallFormat::starts`](super::types::TextCallFormat::starts); the
/// pattern's index there is its `kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartPattern {
    /// A literal marker such as `<tool_call>` or `[TOOL_CALLS]`.
    Marker(&'static str),
    /// `{` then optional whitespace, `"name"`, optional whitespace and `:`:
    /// a bare JSON call object (Llama 3 JSON, xLAM).
    NameObject,
    /// `[` then optional whitespace and `{`: a bare JSON array of call objects
    /// (xLAM, Granite).
    ObjectArray,
    /// `[` then an identifier and `(`: a Python list of calls (pythonic).
    CallList,
}

/// Longest stretch of whitespace or identifier characters a bare pattern may
/// hold back while it waits to see whether it becomes a call (bytes).
const PATTERN_SLACK: usize = 64;

/// What a scan of unreleased text found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Markup starts at byte `pos`, matched by pattern number `kind`.
    At {
        /// Byte offset in the scanned text.
        pos: usize,
        /// Index of the matching pattern.
        kind: usize,
    },
    /// Text from byte `pos` on could still become markup: hold it back (at
    /// most the longest marker or 64 bytes), release what is before.
    Maybe(usize),
    /// No markup starts in the text, nor could it with more text.
    None,
}

/// Finds the earliest pattern of `patterns` in `text`. Ties go to the pattern
/// listed first. A pattern cut by the end of `text` is [`Start::Maybe`].
#[cfg(test)]
pub(crate) fn find_start(text: &str, patterns: &[StartPattern]) -> Start {
    let mut best: Option<(usize, usize)> = None;
    let mut maybe: Option<usize> = None;
    for (kind, p) in patterns.iter().enumerate() {
        let (at, partial) = find_one(text, *p);
        if let Some(at) = at {
            if best.is_none_or(|(b, _)| at < b) {
                best = Some((at, kind));
            }
        }
        if let Some(p) = partial {
            maybe = Some(maybe.map_or(p, |m: usize| m.min(p)));
        }
    }
    match (best, maybe) {
        (Some((pos, _)), Some(m)) if m < pos => Start::Maybe(m),
        (Some((pos, kind)), _) => Start::At { pos, kind },
        (None, Some(m)) => Start::Maybe(m),
        (None, None) => Start::None,
    }
}

/// The first match of one pattern in `text`, and where a match cut by the
/// end of `text` may begin (only when no whole match comes before it).
pub(crate) fn find_one(text: &str, p: StartPattern) -> (Option<usize>, Option<usize>) {
    let bytes = text.as_bytes();
    match p {
        StartPattern::Marker(m) => find_marker(text, m),
        StartPattern::NameObject => find_shape(bytes, b'{', name_object_rest),
        StartPattern::ObjectArray => find_shape(bytes, b'[', object_array_rest),
        StartPattern::CallList => find_shape(bytes, b'[', call_list_rest),
    }
}

/// The first whole occurrence of `marker`, and where a cut occurrence may
/// begin at the end of `text` (a suffix of `text` that is a proper prefix of `marker`).
fn find_marker(text: &str, marker: &str) -> (Option<usize>, Option<usize>) {
    let found = memchr::memmem::find(text.as_bytes(), marker.as_bytes());
    let limit = found.unwrap_or(text.len());
    let bytes = text.as_bytes();
    let m = marker.as_bytes();
    let from = text.len().saturating_sub(m.len() - 1);
    let partial =
        (from..text.len()).find(|&i| i < limit && bytes[i] == m[0] && m.starts_with(&bytes[i..]));
    (found, partial)
}

/// Match state of a bare pattern after its opening byte.
enum Rest {
    Yes,
    No,
    /// The text ended before it could tell.
    Cut,
}

/// Every position of `open` whose following bytes `rest` accepts; the first
/// accepted one, and the first cut one.
fn find_shape(bytes: &[u8], open: u8, rest: fn(&[u8]) -> Rest) -> (Option<usize>, Option<usize>) {
    for at in memchr::memchr_iter(open, bytes) {
        match rest(&bytes[at + 1..]) {
            Rest::Yes => return (Some(at), None),
            Rest::Cut => return (None, Some(at)),
            Rest::No => {}
        }
    }
    (None, None)
}

/// Skips JSON whitespace, up to [`PATTERN_SLACK`] bytes; `None` if the slack ran out.
fn skip_ws(b: &[u8]) -> Option<usize> {
    let n = b
        .iter()
        .take(PATTERN_SLACK)
        .take_while(|c| c.is_ascii_whitespace())
        .count();
    (n < PATTERN_SLACK).then_some(n)
}

fn expect(b: &[u8], word: &[u8]) -> Rest {
    let n = b.len().min(word.len());
    if b[..n] != word[..n] {
        Rest::No
    } else if n < word.len() {
        Rest::Cut
    } else {
        Rest::Yes
    }
}

fn name_object_rest(b: &[u8]) -> Rest {
    let Some(i) = skip_ws(b) else { return Rest::No };
    if i == b.len() {
        return Rest::Cut;
    }
    match expect(&b[i..], b"\"name\"") {
        Rest::Yes => {}
        other => return other,
    }
    let after = &b[i + 6..];
    let Some(j) = skip_ws(after) else {
        return Rest::No;
    };
    match after.get(j) {
        None => Rest::Cut,
        Some(b':') => Rest::Yes,
        Some(_) => Rest::No,
    }
}

fn object_array_rest(b: &[u8]) -> Rest {
    let Some(i) = skip_ws(b) else { return Rest::No };
    match b.get(i) {
        None => Rest::Cut,
        Some(b'{') => Rest::Yes,
        Some(_) => Rest::No,
    }
}

fn call_list_rest(b: &[u8]) -> Rest {
    let Some(i) = skip_ws(b) else { return Rest::No };
    let ident = b[i..]
        .iter()
        .take(PATTERN_SLACK)
        .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_' || **c == b'.')
        .count();
    match b.get(i + ident) {
        None if ident < PATTERN_SLACK => Rest::Cut,
        Some(b'(') if ident > 0 && !b[i].is_ascii_digit() => Rest::Yes,
        _ => Rest::No,
    }
}

/// A resumable scanner for the end of one bracketed value (JSON, or a
/// Python literal with `'` strings too): feed it the whole buffer each time;
/// it continues where it stopped.
#[derive(Debug, Default, Clone)]
pub struct ValueEnd {
    /// Next byte to read (absolute in the buffer).
    pos: usize,
    depth: usize,
    /// The quote byte of the string being read, if in one.
    quote: Option<u8>,
    escaped: bool,
    started: bool,
}

/// What [`ValueEnd::scan`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueScan {
    /// The value ends before this byte offset.
    End(usize),
    /// The buffer ended inside the value.
    More,
    /// The first byte after whitespace at the start offset opens no `{`, `[`
    /// or `(` (or a closer does not match): not a bracketed value.
    Invalid(usize),
}

impl ValueEnd {
    /// A scanner that starts reading at byte `from`.
    pub fn at(from: usize) -> Self {
        Self {
            pos: from,
            ..Self::default()
        }
    }

    /// Where the value starting at the scanner's first offset ends in `buf`.
    /// `python` also reads `'…'` strings.
    pub fn scan(&mut self, buf: &str, python: bool) -> ValueScan {
        let b = buf.as_bytes();
        while self.pos < b.len() {
            let c = b[self.pos];
            self.pos += 1;
            if let Some(q) = self.quote {
                if self.escaped {
                    self.escaped = false;
                } else if c == b'\\' {
                    self.escaped = true;
                } else if c == q {
                    self.quote = None;
                }
                continue;
            }
            if !self.started {
                if c.is_ascii_whitespace() {
                    continue;
                }
                if !matches!(c, b'{' | b'[' | b'(') {
                    return ValueScan::Invalid(self.pos - 1);
                }
                self.started = true;
            }
            match c {
                b'"' => self.quote = Some(c),
                b'\'' if python => self.quote = Some(c),
                b'{' | b'[' | b'(' => self.depth += 1,
                b'}' | b']' | b')' => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == 0 {
                        return ValueScan::End(self.pos);
                    }
                }
                _ => {}
            }
        }
        ValueScan::More
    }
}

/// The first occurrence of `needle` in `hay` at or after `from`, searching
/// from `resume` (bytes already known not to start it) on.
pub(crate) fn find_from(hay: &str, needle: &str, from: usize, resume: usize) -> Option<usize> {
    let start = from.max(resume.saturating_sub(needle.len().saturating_sub(1)));
    if start > hay.len() {
        return None;
    }
    memchr::memmem::find(&hay.as_bytes()[start..], needle.as_bytes()).map(|i| i + start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_cut_markers() {
        let p = [StartPattern::Marker("<tool_call>")];
        assert_eq!(
            find_start("hi <tool_call>{", &p),
            Start::At { pos: 3, kind: 0 }
        );
        assert_eq!(find_start("hi <tool_c", &p), Start::Maybe(3));
        assert_eq!(find_start("a < b", &p), Start::None);
        assert_eq!(find_start("a <", &p), Start::Maybe(2));
    }

    #[test]
    fn bare_shapes() {
        let p = [StartPattern::NameObject, StartPattern::CallList];
        assert_eq!(
            find_start("x {\"name\": 1", &p),
            Start::At { pos: 2, kind: 0 }
        );
        assert_eq!(find_start("x {\"na", &p), Start::Maybe(2));
        assert_eq!(find_start("x {\"id\": 1}", &p), Start::None);
        assert_eq!(find_start("[get(a=1)]", &p), Start::At { pos: 0, kind: 1 });
        assert_eq!(find_start("see [1] and [get", &p), Start::Maybe(12));
    }

    #[test]
    fn value_end_resumes_over_chunks() {
        let mut s = ValueEnd::at(0);
        assert_eq!(s.scan("{\"a\": \"}", false), ValueScan::More);
        assert_eq!(s.scan("{\"a\": \"}\\\"\"}", false), ValueScan::End(12));
        let mut s = ValueEnd::at(0);
        assert_eq!(s.scan("[f(a=')')] tail", true), ValueScan::End(10));
        assert_eq!(
            ValueEnd::at(0).scan("  hello", false),
            ValueScan::Invalid(2)
        );
    }
}
