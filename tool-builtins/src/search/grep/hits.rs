//! The matches of a search as they are shown: newest files first, at most
//! the limit, lines cut to the display width.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A line as shown: line terminator (`\n`, `\r\n`, and any further `\r`
/// before it) removed, a `\r` inside the line shown as `␍` (U+240D, SYMBOL
/// FOR CARRIAGE RETURN) so that no carriage return reaches the output,
/// invalid UTF-8 replaced, cut after `max_chars` characters with `...`
/// (and ending with `...` anyway when `cut`: the line was longer than the
/// searched part).
pub(super) fn display_line(line: &[u8], max_chars: usize, cut: bool) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
    let text = String::from_utf8_lossy(&line[..end]);
    let text = if text.contains('\r') {
        std::borrow::Cow::Owned(text.replace('\r', "\u{240D}"))
    } else {
        text
    };
    match text.char_indices().nth(max_chars) {
        None if cut => format!("{text}..."),
        None => text.into_owned(),
        Some((end, _)) => format!("{}...", &text[..end]),
    }
}

/// Key of a file in the results: newest first, then by path.
pub(super) type FileKey = (Reverse<SystemTime>, PathBuf);

/// One file's matches.
pub(super) struct FileHits {
    pub(super) lines: Vec<(u64, String)>,
}

/// Matches of all files: the total count, and the newest files that can
/// still appear in the output.
pub(super) struct Hits {
    pub(super) limit: usize,
    pub(super) total: u64,
    pub(super) files: BTreeMap<FileKey, FileHits>,
    pub(super) kept_lines: usize,
}

impl Hits {
    /// Whether a file with this time and path could still appear in the
    /// output: `false` once the kept files fill it and all are newer (or
    /// equally new and first by path). Once `false` for a key it stays so,
    /// as the kept files only ever get newer.
    pub(super) fn could_show(&self, modified: Option<SystemTime>, path: &Path) -> bool {
        if self.kept_lines < self.limit {
            return true;
        }
        let Some(((Reverse(last_time), last_path), _)) = self.files.last_key_value() else {
            return true;
        };
        let time = modified.unwrap_or(SystemTime::UNIX_EPOCH);
        // Newest first: a later time sorts first.
        match time.cmp(last_time) {
            std::cmp::Ordering::Greater => true,
            std::cmp::Ordering::Less => false,
            std::cmp::Ordering::Equal => path < last_path.as_path(),
        }
    }

    pub(super) fn new(limit: usize) -> Self {
        Self {
            limit,
            total: 0,
            files: BTreeMap::new(),
            kept_lines: 0,
        }
    }

    pub(super) fn add(
        &mut self,
        path: PathBuf,
        modified: Option<SystemTime>,
        count: u64,
        lines: Vec<(u64, String)>,
    ) {
        self.total += count;
        if lines.is_empty() {
            return; // counted only ([`Hits::could_show`] said it cannot be shown)
        }
        let key = (Reverse(modified.unwrap_or(SystemTime::UNIX_EPOCH)), path);
        self.kept_lines += lines.len();
        self.files.insert(key, FileHits { lines });
        // Drop the oldest files while the newer ones alone fill the output.
        while let Some((_, last)) = self.files.last_key_value() {
            let without = self.kept_lines - last.lines.len();
            if without >= self.limit {
                self.kept_lines = without;
                self.files.pop_last();
            } else {
                break;
            }
        }
    }
}
