//! The one `*`/`?` matcher of the shell wing, for command-policy rules and
//! secret environment-variable names.
//!
//! Hand-written on purpose: a rule is matched against every segment of a
//! model-sent command (up to 128 KiB) for each of up to 1000 rules, so the
//! match must be linear in the text. `wildmatch` (tried) backtracks to the
//! last star and is O(text × pattern) on `*aaa…a0` against `aaa…a`: the
//! bounded-time test of the policy (1000 such rules, a 128 KiB command)
//! ran for more than 60 s with it, against about 40 ms with this one.

/// `*` = any run of bytes, `?` = one character; everything else literal.
///
/// The pattern is cut at its stars into chunks: the first must match at the
/// start, the last at the end, and those between are found left to right,
/// each at its leftmost place after the one before (which is optimal). A chunk
/// without `?` is found with `memchr::memmem`, so matching takes time linear
/// in the text; a chunk with `?` is tried at each position (at most text
/// length × chunk length steps, and chunks of policy rules are at most
/// [`MAX_PATTERN_BYTES`](super::policy::MAX_PATTERN_BYTES) bytes).
pub(crate) fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    let mut chunks = pattern.split(|&b| b == b'*');
    let first = chunks.next().unwrap_or_default();
    let rest: Vec<&[u8]> = chunks.collect();
    let Some((last, middle)) = rest.split_last() else {
        return match_here(first, text, 0) == Some(text.len());
    };
    let Some(mut pos) = match_here(first, text, 0) else {
        return false;
    };
    for chunk in middle.iter().filter(|c| !c.is_empty()) {
        match find_chunk(chunk, text, pos) {
            Some(end) => pos = end,
            None => return false,
        }
    }
    ends_with_chunk(last, text, pos)
}

/// Where `chunk` (no `*`) matching at `at` ends, if it matches there.
fn match_here(chunk: &[u8], text: &[u8], at: usize) -> Option<usize> {
    let mut t = at;
    for &p in chunk {
        let c = *text.get(t)?;
        if p == b'?' {
            t += utf8_len(c);
        } else if p == c {
            t += 1;
        } else {
            return None;
        }
    }
    Some(t.min(text.len()))
}

/// Where the leftmost match of `chunk` at or after `from` ends.
fn find_chunk(chunk: &[u8], text: &[u8], from: usize) -> Option<usize> {
    let hay = text.get(from..)?;
    if !chunk.contains(&b'?') {
        return memchr::memmem::find(hay, chunk).map(|i| from + i + chunk.len());
    }
    (from..text.len())
        .filter(|&s| !is_continuation(text[s]))
        .find_map(|s| match_here(chunk, text, s))
}

/// Whether `chunk` matches the end of `text`, starting at or after `from`.
fn ends_with_chunk(chunk: &[u8], text: &[u8], from: usize) -> bool {
    // The chunk matches a fixed number of characters.
    let chars = chunk.iter().filter(|&&b| !is_continuation(b)).count();
    let mut start = text.len();
    for _ in 0..chars {
        if start == 0 {
            return false;
        }
        start -= 1;
        while start > 0 && is_continuation(text[start]) {
            start -= 1;
        }
    }
    start >= from && match_here(chunk, text, start) == Some(text.len())
}

fn is_continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}
