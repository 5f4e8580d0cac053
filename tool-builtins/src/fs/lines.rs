//! Line endings: a file's style, normalising `\r\n` for matching, and the
//! map from normalised offsets back to the file's own bytes.

use std::borrow::Cow;

/// A file's line-ending style.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LineEnding {
    /// `\n` (Unix).
    #[default]
    Lf,
    /// `\r\n` (Windows).
    CrLf,
}

impl LineEnding {
    /// The style of `text`: the style of its first line break (`Lf` when it has none).
    pub fn detect(text: &str) -> Self {
        match text.find('\n') {
            Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => Self::CrLf,
            _ => Self::Lf,
        }
    }

    /// The break itself.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lf => "\n",
            Self::CrLf => "\r\n",
        }
    }

    /// `text` with every line break (`\n` or `\r\n`) in this style.
    pub fn apply(self, text: &str) -> String {
        let lf = normalize_newlines(text);
        match self {
            Self::Lf => lf.into_owned(),
            Self::CrLf => lf.replace('\n', "\r\n"),
        }
    }
}

/// `text` with every `\r\n` turned into `\n` (a lone `\r` is kept).
pub fn normalize_newlines(text: &str) -> Cow<'_, str> {
    if text.contains("\r\n") {
        Cow::Owned(text.replace("\r\n", "\n"))
    } else {
        Cow::Borrowed(text)
    }
}

/// Maps byte offsets of `normalize_newlines(original)` back to offsets of `original`.
///
/// Used to apply an edit found in normalised text to the original bytes, so
/// that nothing outside the edited span changes (not even a mixed line ending).
#[derive(Debug, Clone)]
pub struct NewlineMap {
    /// Offsets in the original of every `\r` that normalisation removed.
    removed: Vec<usize>,
}

impl NewlineMap {
    /// The map for `original`.
    pub fn new(original: &str) -> Self {
        let bytes = original.as_bytes();
        let removed = memchr::memchr_iter(b'\n', bytes)
            .filter(|&i| i > 0 && bytes[i - 1] == b'\r')
            .map(|i| i - 1)
            .collect();
        Self { removed }
    }

    /// The original offset of normalised offset `n`. A `\r\n` pair maps as a
    /// unit: a span starting at the `\n` starts at the `\r`, a span ending
    /// after it ends after the `\n`, a span ending before it leaves the `\r` alone.
    pub fn to_original(&self, n: usize) -> usize {
        // The k-th removed CR sits at normalised offset removed[k] - k (where its `\n` is).
        let mut lo = 0usize;
        let mut hi = self.removed.len();
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if self.removed[mid] - mid < n {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        n + lo
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_endings_detect_and_apply() {
        assert_eq!(LineEnding::detect("a\r\nb\n"), LineEnding::CrLf);
        assert_eq!(LineEnding::detect("a\nb\r\n"), LineEnding::Lf);
        assert_eq!(LineEnding::detect("no break"), LineEnding::Lf);
        assert_eq!(LineEnding::CrLf.apply("a\nb\r\nc"), "a\r\nb\r\nc");
        assert_eq!(LineEnding::Lf.apply("a\r\nb"), "a\nb");
    }

    #[test]
    fn newline_map_maps_spans_back() {
        let original = "ab\r\ncd\r\nef\nx";
        let norm = normalize_newlines(original);
        assert_eq!(norm, "ab\ncd\nef\nx");
        let m = NewlineMap::new(original);
        // "cd" at 3..5 normalised -> 4..6 original.
        assert_eq!((m.to_original(3), m.to_original(5)), (4, 6));
        // A span starting at a "\n" starts at its "\r".
        assert_eq!(m.to_original(2), 2);
        // A span ending after the "\n" ends after it.
        assert_eq!(m.to_original(6), 8);
        assert_eq!(
            &original[m.to_original(0)..m.to_original(6)],
            "ab\r\ncd\r\n"
        );
        // Lone LF region after the CRLFs.
        assert_eq!(m.to_original(9), 11);
    }
}
