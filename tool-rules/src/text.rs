//! Clipping text for messages: the one place that decides how much of a
//! long value (a model's argument, a path, an error body) a message quotes
//! back, in what unit, and how the cut is marked.
//!
//! Every crate of the workspace clips through [`clip`]; no other clipping
//! function exists (cross-cutting decision §1, checked in CI by
//! `scripts/test`'s structure stage). The limits themselves stay with the
//! message that quotes the text: a [`Clip`] value names the unit (characters
//! or bytes), the maximum, and the mark.
//!
//! ```
//! use tool_rules::text::{Clip, clip};
//!
//! assert_eq!(clip("abcdef", Clip::chars(3)), "abc…");
//! assert_eq!(clip("abcdef", Clip::chars(3).counting_rest()), "abc… (3 more bytes)");
//! assert_eq!(clip("héllo", Clip::bytes(2).unmarked()), "h");
//! assert_eq!(clip("short", Clip::chars(10)), "short");
//! ```

use std::borrow::Cow;

/// What a [`Clip`]'s maximum counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Unicode scalar values (`char`s): what a reader sees as letters.
    Chars,
    /// UTF-8 bytes, the cut moved back to the nearest character boundary
    /// (for limits on what is stored or logged).
    Bytes,
}

/// How a cut text ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// Nothing: the kept prefix alone (log fields with a known limit).
    None,
    /// `…` (U+2026) after the kept prefix.
    Ellipsis,
    /// `… (N more bytes)`: the ellipsis and how many UTF-8 bytes were left
    /// out, so the reader knows the value was long, not just cut.
    CountingRest,
}

/// How much of a text to keep and how to mark a cut: a maximum in a
/// [`Unit`], and a [`Mark`]. Built with [`Clip::chars`] or [`Clip::bytes`]
/// (mark: [`Mark::Ellipsis`]), then optionally [`Clip::counting_rest`] or
/// [`Clip::unmarked`]. The mark is added after the kept part, so a cut text
/// is at most the maximum plus the mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Clip {
    /// The most kept, in `unit`s.
    pub max: usize,
    /// What `max` counts.
    pub unit: Unit,
    /// What follows a cut text.
    pub mark: Mark,
}

impl Clip {
    /// Keep at most `max` characters; a cut ends with `…`.
    #[must_use]
    pub const fn chars(max: usize) -> Self {
        Self {
            max,
            unit: Unit::Chars,
            mark: Mark::Ellipsis,
        }
    }

    /// Keep at most `max` UTF-8 bytes (never half a character); a cut ends with `…`.
    #[must_use]
    pub const fn bytes(max: usize) -> Self {
        Self {
            max,
            unit: Unit::Bytes,
            mark: Mark::Ellipsis,
        }
    }

    /// The same limit, a cut ending with `… (N more bytes)`.
    #[must_use]
    pub const fn counting_rest(self) -> Self {
        Self {
            mark: Mark::CountingRest,
            ..self
        }
    }

    /// The same limit, a cut text ending where it was cut, unmarked.
    #[must_use]
    pub const fn unmarked(self) -> Self {
        Self {
            mark: Mark::None,
            ..self
        }
    }
}

/// `text` as a message quotes it under `how`: unchanged (borrowed) when it
/// fits, else its first `how.max` characters or bytes (a byte limit moves back
/// to a character boundary, so the result is always valid UTF-8) followed by
/// `how.mark`. Never panics, for any text and any maximum (0 keeps nothing
/// but the mark).
#[must_use]
pub fn clip(text: &str, how: Clip) -> Cow<'_, str> {
    let at = match how.unit {
        Unit::Chars => match text.char_indices().nth(how.max) {
            None => return Cow::Borrowed(text),
            Some((at, _)) => at,
        },
        Unit::Bytes => {
            if text.len() <= how.max {
                return Cow::Borrowed(text);
            }
            let mut end = how.max;
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            end
        }
    };
    let kept = &text[..at];
    match how.mark {
        Mark::None => Cow::Borrowed(kept),
        Mark::Ellipsis => Cow::Owned(format!("{kept}…")),
        Mark::CountingRest => Cow::Owned(format!("{kept}… ({} more bytes)", text.len() - at)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fits_borrowed_and_cut_marked() {
        assert!(matches!(clip("abc", Clip::chars(3)), Cow::Borrowed("abc")));
        assert!(matches!(clip("abc", Clip::bytes(3)), Cow::Borrowed("abc")));
        assert_eq!(clip("abcd", Clip::chars(3)), "abc…");
        assert_eq!(clip("abcd", Clip::bytes(3)), "abc…");
        assert_eq!(clip("abcd", Clip::chars(0)), "…");
        assert_eq!(clip("abcd", Clip::chars(2).unmarked()), "ab");
    }

    #[test]
    fn characters_are_never_split() {
        // "é" is 2 bytes: a 2-byte cut after "h" would split it.
        assert_eq!(clip("héllo", Clip::bytes(2)), "h…");
        assert_eq!(clip("héllo", Clip::bytes(3)), "hé…");
        assert_eq!(clip("héllo", Clip::chars(2)), "hé…");
        assert_eq!(clip("日本語", Clip::bytes(4).unmarked()), "日");
    }

    #[test]
    fn counting_rest_counts_bytes_left_out() {
        assert_eq!(
            clip("héllo wörld", Clip::chars(5).counting_rest()),
            "héllo… (7 more bytes)"
        );
        assert_eq!(
            clip(&"x".repeat(250), Clip::chars(200).counting_rest()).len(),
            200 + "… (50 more bytes)".len()
        );
    }
}
