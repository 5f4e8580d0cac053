//! Head/tail truncation of long tool output, with the full text spilled to a file.
//!
//! A tool that may print more than a model should read (a command's output, a
//! search with many hits) keeps the beginning and the end of its text within a
//! byte budget and a line budget, replaces the middle with one marker line that
//! says how much was left out and where the whole text was saved, and writes
//! the whole text to a spill file so the model (or a person) can read it with
//! a file tool.
//!
//! Cuts fall only on UTF-8 character boundaries, and on line boundaries when
//! the kept part holds at least one whole line.
//!
//! ```
//! use tool_core::truncate::{Truncation, truncate};
//!
//! let text: String = (0..1000).map(|i| format!("line {i}\n")).collect();
//! let dir = std::env::temp_dir().join("tool-outputs-doctest");
//! let opts = Truncation::new().max_lines(10).max_bytes(4096).spill_dir(&dir);
//! let out = truncate(&text, &opts);
//! assert!(out.truncated);
//! assert!(out.text.starts_with("line 0\n"));
//! assert!(out.text.ends_with("line 999\n"));
//! assert_eq!(out.omitted_lines, 990);
//! let saved = out.spill_path.as_ref().unwrap();
//! assert_eq!(std::fs::read_to_string(saved).unwrap(), text);
//! # std::fs::remove_file(saved).unwrap();
//! ```
//!
//! For output that arrives in pieces (a running process), [`HeadTail`] keeps
//! memory bounded whatever the total size: it stores the head, a ring of the
//! most recent bytes, and streams everything to the spill file as it comes.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Default byte budget of the kept text: 50 KiB.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;

/// Default line budget of the kept text: 2000 lines.
pub const DEFAULT_MAX_LINES: usize = 2000;

/// The default folder for spill files: `std::env::temp_dir()/tool-outputs`.
pub fn default_spill_dir() -> PathBuf {
    std::env::temp_dir().join("tool-outputs")
}

/// Budgets and spill settings for [`truncate`] and [`HeadTail`].
///
/// The budgets bound the kept head plus tail; the marker line comes on top.
/// Half of each budget goes to the head, the rest to the tail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// Most bytes kept (head plus tail). Default [`DEFAULT_MAX_BYTES`].
    pub max_bytes: usize,
    /// Most lines kept (head plus tail). Default [`DEFAULT_MAX_LINES`].
    pub max_lines: usize,
    /// Where spill files go; `None` means [`default_spill_dir`].
    pub spill_dir: Option<PathBuf>,
    /// Write the full text to a spill file when something is cut. Default `true`.
    pub spill: bool,
}

impl Default for Truncation {
    fn default() -> Self {
        Self::new()
    }
}

impl Truncation {
    /// The default budgets (50 KiB, 2000 lines), spilling to [`default_spill_dir`].
    pub fn new() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_lines: DEFAULT_MAX_LINES,
            spill_dir: None,
            spill: true,
        }
    }

    /// Sets the byte budget.
    #[must_use]
    pub fn max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// Sets the line budget.
    #[must_use]
    pub fn max_lines(mut self, max_lines: usize) -> Self {
        self.max_lines = max_lines;
        self
    }

    /// Sets the folder spill files are written to (created when needed).
    #[must_use]
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
        self
    }

    /// Turns spilling on or off.
    #[must_use]
    pub fn spill(mut self, spill: bool) -> Self {
        self.spill = spill;
        self
    }

    /// The folder spill files go to.
    pub fn resolved_spill_dir(&self) -> PathBuf {
        self.spill_dir.clone().unwrap_or_else(default_spill_dir)
    }

    fn head_budget(&self) -> (usize, usize) {
        (self.max_bytes / 2, self.max_lines.div_ceil(2))
    }

    fn tail_budget(&self) -> (usize, usize) {
        let (hb, hl) = self.head_budget();
        (self.max_bytes - hb, self.max_lines - hl)
    }
}

/// The result of [`truncate`] or [`HeadTail::finish`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncated {
    /// The text to show: the whole text, or head + marker line + tail.
    pub text: String,
    /// Whether anything was left out.
    pub truncated: bool,
    /// Bytes left out.
    pub omitted_bytes: usize,
    /// Lines left out (line breaks in the omitted part; a partial line counts as one).
    pub omitted_lines: usize,
    /// Total bytes of the original text.
    pub total_bytes: usize,
    /// Where the full text was saved, when it was cut and spilling succeeded.
    pub spill_path: Option<PathBuf>,
}

/// The byte span of the head and the start of the tail of `text` under `opts`'s
/// budgets, with no I/O: `text[..head_end]` and `text[tail_start..]` are kept.
/// Both indices are character boundaries, `head_end <= tail_start`, and they
/// are equal (nothing cut) when the text fits both budgets.
pub fn split_points(text: &str, opts: &Truncation) -> (usize, usize) {
    let len = text.len();
    let lines = count_lines(text.as_bytes());
    if len <= opts.max_bytes && lines <= opts.max_lines {
        return (len, len);
    }
    let (head_bytes, head_lines) = opts.head_budget();
    let (tail_bytes, tail_lines) = opts.tail_budget();
    let head_end = head_cut(text, head_bytes, head_lines);
    let tail_start = tail_cut(text, tail_bytes, tail_lines).max(head_end);
    (head_end, tail_start)
}

/// Truncates `text` to `opts`'s budgets, keeping head and tail; when something
/// is cut and spilling is on, writes the full text to a new file in the spill
/// folder and names it in the marker line. A failed spill is not an error: the
/// marker then says the full text was not saved.
pub fn truncate(text: &str, opts: &Truncation) -> Truncated {
    let (head_end, tail_start) = split_points(text, opts);
    if head_end == text.len() {
        return Truncated {
            text: text.to_owned(),
            truncated: false,
            omitted_bytes: 0,
            omitted_lines: 0,
            total_bytes: text.len(),
            spill_path: None,
        };
    }
    let omitted = &text[head_end..tail_start];
    let omitted_lines = count_lines(omitted.as_bytes());
    let spill_path = if opts.spill {
        spill_to_file(&opts.resolved_spill_dir(), text.as_bytes()).ok()
    } else {
        None
    };
    let marker = marker_line(omitted.len(), omitted_lines, spill_path.as_deref());
    let mut out = String::with_capacity(head_end + marker.len() + text.len() - tail_start + 2);
    out.push_str(&text[..head_end]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&marker);
    out.push('\n');
    out.push_str(&text[tail_start..]);
    Truncated {
        text: out,
        truncated: true,
        omitted_bytes: omitted.len(),
        omitted_lines,
        total_bytes: text.len(),
        spill_path,
    }
}

/// The marker line that stands for the omitted middle (no trailing newline).
pub fn marker_line(omitted_bytes: usize, omitted_lines: usize, spill: Option<&Path>) -> String {
    let what = format!(
        "... {omitted_lines} line{} ({omitted_bytes} bytes) omitted",
        if omitted_lines == 1 { "" } else { "s" }
    );
    match spill {
        Some(p) => format!(
            "{what}; the full output was saved to {} (read it with offset/limit, or search it) ...",
            p.display()
        ),
        None => format!("{what}; the full output was not saved ..."),
    }
}

/// Number of lines in `bytes`: line breaks, plus one for a final line without a break.
pub fn count_lines(bytes: &[u8]) -> usize {
    let breaks = bytes.iter().filter(|&&b| b == b'\n').count();
    breaks + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// The largest index `<= i` that is a character boundary of `s` (`s.len()` when `i` is past the end).
pub fn floor_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The smallest index `>= i` that is a character boundary of `s` (`s.len()` when `i` is past the end).
pub fn ceil_char_boundary(s: &str, i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    let mut i = i;
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// End of the head: at most `max_bytes` bytes and `max_lines` lines, ending
/// after a line break when the kept part holds one.
fn head_cut(text: &str, max_bytes: usize, max_lines: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = floor_char_boundary(text, max_bytes);
    // Line budget: stop after the `max_lines`-th break.
    if let Some(pos) = bytes[..end]
        .iter()
        .enumerate()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i)
        .nth(max_lines.saturating_sub(1))
    {
        end = pos + 1;
    }
    if max_lines == 0 {
        return 0;
    }
    // Prefer a whole-line cut when the head holds a break and we cut inside a line.
    if end < bytes.len() && end > 0 && bytes[end - 1] != b'\n' {
        if let Some(pos) = bytes[..end].iter().rposition(|&b| b == b'\n') {
            end = pos + 1;
        }
    }
    end
}

/// Start of the tail: at most `max_bytes` bytes and `max_lines` lines, starting
/// at a line start when the kept part holds one.
fn tail_cut(text: &str, max_bytes: usize, max_lines: usize) -> usize {
    let bytes = text.as_bytes();
    let len = bytes.len();
    if max_lines == 0 {
        return len;
    }
    let mut start = ceil_char_boundary(text, len.saturating_sub(max_bytes));
    // Line budget: the tail holds at most `max_lines` lines; a final line
    // without a break counts as one.
    let ends_with_break = bytes.last() == Some(&b'\n');
    let skip = usize::from(ends_with_break);
    if let Some(pos) = bytes[start..]
        .iter()
        .enumerate()
        .rev()
        .filter(|&(_, &b)| b == b'\n')
        .map(|(i, _)| i + start)
        .nth(max_lines - 1 + skip)
    {
        start = pos + 1;
    }
    // Prefer starting at a line start when we cut inside a line and the tail holds a break.
    if start > 0 && start < len && bytes[start - 1] != b'\n' {
        if let Some(pos) = bytes[start..].iter().position(|&b| b == b'\n') {
            if start + pos + 1 < len {
                start = start + pos + 1;
            }
        }
    }
    start
}

static SPILL_COUNTER: AtomicU64 = AtomicU64::new(0);

fn spill_file_name() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = SPILL_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("output-{}-{nanos}-{n}.txt", std::process::id())
}

fn create_spill_file(dir: &Path) -> io::Result<(File, PathBuf)> {
    fs::create_dir_all(dir)?;
    let path = dir.join(spill_file_name());
    let file = File::options().write(true).create_new(true).open(&path)?;
    Ok((file, path))
}

/// Writes `bytes` to a new file in `dir` (created when missing) and returns its path.
///
/// # Errors
/// Any I/O error creating the folder or writing the file.
pub fn spill_to_file(dir: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let (mut file, path) = create_spill_file(dir)?;
    file.write_all(bytes)?;
    Ok(path)
}

/// A bounded-memory accumulator for output that arrives in pieces.
///
/// Keeps the first half of the budget as the head, a ring of the most recent
/// bytes as the tail, and (when spilling is on) streams every byte to a spill
/// file as it arrives, so memory stays bounded whatever the total.
/// [`finish`](Self::finish) decodes the kept bytes (invalid UTF-8 becomes
/// U+FFFD) and applies the line budget.
///
/// ```
/// use tool_core::truncate::{HeadTail, Truncation};
///
/// let dir = std::env::temp_dir().join("tool-outputs-doctest");
/// let mut acc = HeadTail::new(Truncation::new().max_bytes(100).spill_dir(&dir));
/// for i in 0..10_000 {
///     acc.push(format!("row {i}\n").as_bytes());
/// }
/// let out = acc.finish();
/// assert!(out.truncated);
/// assert!(out.text.starts_with("row 0\n"));
/// assert!(out.text.ends_with("row 9999\n"));
/// # if let Some(p) = out.spill_path { std::fs::remove_file(p).unwrap(); }
/// ```
#[derive(Debug)]
pub struct HeadTail {
    opts: Truncation,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: usize,
    spill: Option<(File, PathBuf)>,
    spill_failed: bool,
}

impl HeadTail {
    /// An empty accumulator with the given budgets.
    pub fn new(opts: Truncation) -> Self {
        Self {
            opts,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            spill: None,
            spill_failed: false,
        }
    }

    /// Total bytes pushed so far.
    pub fn total_bytes(&self) -> usize {
        self.total
    }

    /// Appends a piece of output.
    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len();
        if self.opts.spill && !self.spill_failed {
            if self.spill.is_none() {
                match create_spill_file(&self.opts.resolved_spill_dir()) {
                    Ok(s) => self.spill = Some(s),
                    Err(_) => self.spill_failed = true,
                }
            }
            if let Some((file, _)) = &mut self.spill {
                if file.write_all(bytes).is_err() {
                    self.spill_failed = true;
                }
            }
        }
        // The head takes its whole byte budget; the tail is a ring of the
        // other half plus a few bytes so a character cut at its start can be dropped.
        let head_room = self.opts.max_bytes.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(head_room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        let ring = self.opts.max_bytes / 2 + 4;
        if rest.len() >= ring {
            self.tail.clear();
            self.tail.extend(&rest[rest.len() - ring..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(ring);
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// Finishes: the kept text with the marker line when something was cut.
    /// The spill file (if any) holds every byte pushed; it is removed when
    /// nothing was cut.
    pub fn finish(mut self) -> Truncated {
        let spill = self.spill.take();
        let head_full = self.head.len() >= self.opts.max_bytes;
        let dropped = self.total - self.head.len() - self.tail.len();
        if dropped == 0 {
            // Everything is still in memory: the ordinary path.
            let mut all = std::mem::take(&mut self.head);
            all.extend(self.tail.iter());
            let text = String::from_utf8_lossy(&all).into_owned();
            let opts = self.opts.clone().spill(false);
            let mut out = truncate(&text, &opts);
            out.total_bytes = self.total;
            if out.truncated {
                out.spill_path = spill.map(|(_, p)| p);
                out.text = rebuild_with_marker(&text, &self.opts, out.spill_path.as_deref());
            } else if let Some((_, p)) = spill {
                let _ = fs::remove_file(p);
            }
            return out;
        }
        debug_assert!(head_full);
        let head = String::from_utf8_lossy(&self.head).into_owned();
        let tail_bytes: Vec<u8> = self.tail.iter().copied().collect();
        // Drop a partial character at the start of the ring.
        let skip = tail_bytes
            .iter()
            .take(4)
            .take_while(|&&b| (b & 0xC0) == 0x80)
            .count();
        let tail = String::from_utf8_lossy(&tail_bytes[skip..]).into_owned();
        let (head_bytes, head_lines) = self.opts.head_budget();
        let (tail_bytes_budget, tail_lines) = self.opts.tail_budget();
        let head_end = head_cut(&head, head_bytes, head_lines);
        let tail_start = tail_cut(&tail, tail_bytes_budget, tail_lines);
        let omitted_bytes = self.total - head_end - (tail.len() - tail_start);
        let omitted_lines = count_lines(&self.head[head_end..])
            + usize::from(dropped > 0 || skip > 0)
            + count_lines(&tail.as_bytes()[..tail_start]);
        let spill_path = spill.map(|(_, p)| p);
        let marker = marker_line(omitted_bytes, omitted_lines, spill_path.as_deref());
        let mut text = String::with_capacity(head_end + marker.len() + tail.len() + 2);
        text.push_str(&head[..head_end]);
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&marker);
        text.push('\n');
        text.push_str(&tail[tail_start..]);
        Truncated {
            text,
            truncated: true,
            omitted_bytes,
            omitted_lines,
            total_bytes: self.total,
            spill_path,
        }
    }
}

fn rebuild_with_marker(text: &str, opts: &Truncation, spill: Option<&Path>) -> String {
    let (head_end, tail_start) = split_points(text, opts);
    let omitted = &text[head_end..tail_start];
    let marker = marker_line(omitted.len(), count_lines(omitted.as_bytes()), spill);
    let mut out = String::with_capacity(head_end + marker.len() + text.len() - tail_start + 2);
    out.push_str(&text[..head_end]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&marker);
    out.push('\n');
    out.push_str(&text[tail_start..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A small deterministic generator (xorshift64*), so the property test
    /// needs no extra dependency and every failure reproduces.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }

        fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
    }

    fn random_text(rng: &mut Rng, chars: usize) -> String {
        const POOL: &[char] = &['a', 'b', ' ', '\n', 'é', 'ß', '中', '文', '🚀', '\r', '\t'];
        (0..chars)
            .map(|_| {
                let i = usize::try_from(rng.below(POOL.len() as u64)).unwrap();
                POOL[i]
            })
            .collect()
    }

    fn no_spill() -> Truncation {
        Truncation::new().spill(false)
    }

    #[test]
    fn short_text_is_untouched() {
        let out = truncate("hello\nworld", &no_spill());
        assert!(!out.truncated);
        assert_eq!(out.text, "hello\nworld");
        assert_eq!(out.spill_path, None);
    }

    #[test]
    fn every_byte_budget_cuts_on_char_boundaries() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        for round in 0..40 {
            let text = random_text(&mut rng, 20 + round * 3);
            let lines = count_lines(text.as_bytes());
            for max_bytes in 0..=text.len() + 1 {
                let max_lines = usize::try_from(rng.below(lines as u64 + 2)).unwrap();
                let opts = no_spill().max_bytes(max_bytes).max_lines(max_lines);
                let (h, t) = split_points(&text, &opts);
                assert!(text.is_char_boundary(h) && text.is_char_boundary(t));
                assert!(h <= t, "head past tail for {text:?} at {max_bytes}");
                if h == t && h == text.len() {
                    assert!(text.len() <= max_bytes && lines <= max_lines);
                    continue;
                }
                let kept = h + (text.len() - t);
                assert!(kept <= max_bytes, "{kept} > {max_bytes} for {text:?}");
                assert!(
                    count_lines(&text.as_bytes()[..h]) + count_lines(&text.as_bytes()[t..])
                        <= max_lines
                );
                let out = truncate(&text, &opts);
                assert!(out.truncated);
                assert_eq!(out.omitted_bytes, t - h);
                assert!(out.text.starts_with(&text[..h]));
                assert!(out.text.ends_with(&text[t..]));
                assert!(out.text.contains("omitted"));
            }
        }
    }

    #[test]
    fn whole_lines_are_preferred() {
        let text: String = (0..100).map(|i| format!("line number {i}\n")).collect();
        let opts = no_spill().max_bytes(200).max_lines(1000);
        let (h, t) = split_points(&text, &opts);
        assert_eq!(text.as_bytes()[h - 1], b'\n');
        assert_eq!(text.as_bytes()[t - 1], b'\n');
    }

    #[test]
    fn one_giant_line_keeps_both_ends() {
        let text = "é".repeat(10_000);
        let out = truncate(&text, &no_spill().max_bytes(101));
        assert!(out.truncated);
        assert!(out.text.starts_with("éé"));
        assert!(out.text.ends_with("éé"));
        assert!(out.text.contains("the full output was not saved"));
    }

    #[test]
    fn spill_file_holds_the_full_text() {
        let dir = std::env::temp_dir().join(format!("tool-core-spill-test-{}", std::process::id()));
        let text = "x\n".repeat(5000);
        let out = truncate(&text, &Truncation::new().max_lines(10).spill_dir(&dir));
        let path = out.spill_path.clone().unwrap();
        assert!(path.starts_with(&dir));
        assert!(out.text.contains(&path.display().to_string()));
        assert_eq!(fs::read_to_string(&path).unwrap(), text);
        assert_eq!(out.omitted_lines, 4990);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn head_tail_streaming_matches_budgets() {
        let dir = std::env::temp_dir().join(format!("tool-core-ht-test-{}", std::process::id()));
        let opts = Truncation::new()
            .max_bytes(1000)
            .max_lines(20)
            .spill_dir(&dir);
        let mut acc = HeadTail::new(opts);
        let mut all = Vec::new();
        for i in 0..50_000 {
            let piece = format!("ünïcode row {i}\n");
            all.extend_from_slice(piece.as_bytes());
            // Push in uneven pieces, cutting characters apart.
            let (a, b) = piece.as_bytes().split_at(2);
            acc.push(a);
            acc.push(b);
        }
        let out = acc.finish();
        assert!(out.truncated);
        assert!(out.text.starts_with("ünïcode row 0\n"));
        assert!(out.text.ends_with("ünïcode row 49999\n"));
        assert!(!out.text.contains('\u{FFFD}'));
        assert!(count_lines(out.text.as_bytes()) <= 21);
        assert_eq!(out.total_bytes, all.len());
        let path = out.spill_path.unwrap();
        assert_eq!(fs::read(&path).unwrap(), all);
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn head_tail_small_output_is_whole_and_leaves_no_file() {
        let dir = std::env::temp_dir().join(format!("tool-core-ht-small-{}", std::process::id()));
        let mut acc = HeadTail::new(Truncation::new().spill_dir(&dir));
        acc.push(b"short\n");
        let out = acc.finish();
        assert!(!out.truncated);
        assert_eq!(out.text, "short\n");
        assert_eq!(out.spill_path, None);
        assert_eq!(fs::read_dir(&dir).unwrap().count(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }
}
