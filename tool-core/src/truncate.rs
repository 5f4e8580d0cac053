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
//!
//! Disk use is bounded too: a spill file holds at most
//! [`Truncation::max_spill_bytes`] (the beginning of the text; the marker line
//! then says the saved copy was cut as well), is readable by its owner only
//! (mode `0600`), and creating one removes this module's spill files older
//! than [`Truncation::spill_max_age`] from the same folder (best effort).

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Default byte budget of the kept text: 50 KiB.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;

/// Default line budget of the kept text: 2000 lines.
pub const DEFAULT_MAX_LINES: usize = 2000;

/// Default cap of one spill file: 32 MiB.
pub const DEFAULT_MAX_SPILL_BYTES: u64 = 32 * 1024 * 1024;

/// Default age after which spill files are removed: 24 hours.
pub const DEFAULT_SPILL_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

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
    /// Most bytes written to one spill file: the text's beginning is kept and
    /// the rest left out (the marker line says so). Default [`DEFAULT_MAX_SPILL_BYTES`].
    pub max_spill_bytes: u64,
    /// Spill files (this module's `output-*.txt`) older than this are removed
    /// from the spill folder when a new one is created; `None` keeps them.
    /// Default [`DEFAULT_SPILL_MAX_AGE`].
    pub spill_max_age: Option<Duration>,
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
            max_spill_bytes: DEFAULT_MAX_SPILL_BYTES,
            spill_max_age: Some(DEFAULT_SPILL_MAX_AGE),
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

    /// Sets the most bytes one spill file holds.
    #[must_use]
    pub fn max_spill_bytes(mut self, max: u64) -> Self {
        self.max_spill_bytes = max;
        self
    }

    /// Sets the age after which old spill files are removed (`None`: never).
    #[must_use]
    pub fn spill_max_age(mut self, age: Option<Duration>) -> Self {
        self.spill_max_age = age;
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
    /// Whether the spill file holds only the beginning of the text
    /// ([`Truncation::max_spill_bytes`] was reached).
    pub spill_cut: bool,
}

/// The byte span of the head and the start of the tail of `text` under `opts`'s
/// budgets, with no I/O: `text[..head_end]` and `text[tail_start..]` are kept.
/// Both indices are character boundaries, `head_end <= tail_start`, and they
/// are equal (nothing cut) when the text fits both budgets.
pub fn split_points(text: &str, opts: &Truncation) -> (usize, usize) {
    let len = text.len();
    if fits(text, opts) {
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
            spill_cut: false,
        };
    }
    let omitted = &text[head_end..tail_start];
    let omitted_lines = count_lines(omitted.as_bytes());
    let saved = saved_len(text.len(), opts.max_spill_bytes);
    let spill_cut = saved < text.len();
    let spill_path = if opts.spill {
        create_spill_file(opts)
            .and_then(|(mut file, path)| {
                file.write_all(&text.as_bytes()[..saved])?;
                Ok(path)
            })
            .ok()
    } else {
        None
    };
    let marker = marker_text(
        omitted.len(),
        omitted_lines,
        spill_path.as_deref(),
        spill_cut.then_some(saved),
    );
    Truncated {
        text: assemble(text, head_end, tail_start, &marker),
        truncated: true,
        omitted_bytes: omitted.len(),
        omitted_lines,
        total_bytes: text.len(),
        spill_path: spill_path.clone(),
        spill_cut: spill_cut && spill_path.is_some(),
    }
}

/// Like [`truncate`], for text whose full version is already saved at
/// `saved_at` (e.g. by the tool that produced it): the marker points there
/// and no new spill file is written. `spill_path` stays `None`.
pub fn truncate_saved(text: &str, opts: &Truncation, saved_at: &Path) -> Truncated {
    let (head_end, tail_start) = split_points(text, opts);
    let omitted = &text[head_end..tail_start];
    let omitted_lines = count_lines(omitted.as_bytes());
    let truncated = head_end < text.len();
    Truncated {
        text: if truncated {
            let marker = marker_line(omitted.len(), omitted_lines, Some(saved_at));
            assemble(text, head_end, tail_start, &marker)
        } else {
            text.to_owned()
        },
        truncated,
        omitted_bytes: omitted.len(),
        omitted_lines,
        total_bytes: text.len(),
        spill_path: None,
        spill_cut: false,
    }
}

/// Head, marker line, tail.
fn assemble(text: &str, head_end: usize, tail_start: usize, marker: &str) -> String {
    let mut out = String::with_capacity(head_end + marker.len() + text.len() - tail_start + 2);
    out.push_str(&text[..head_end]);
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(marker);
    out.push('\n');
    out.push_str(&text[tail_start..]);
    out
}

/// How many of `total` bytes a spill file capped at `max` holds.
fn saved_len(total: usize, max: u64) -> usize {
    usize::try_from(max).map_or(total, |max| total.min(max))
}

/// The marker line that stands for the omitted middle (no trailing newline).
pub fn marker_line(omitted_bytes: usize, omitted_lines: usize, spill: Option<&Path>) -> String {
    marker_text(omitted_bytes, omitted_lines, spill, None)
}

/// [`marker_line`], saying so when the spill file holds only the first
/// `saved_cut` bytes of the output.
fn marker_text(
    omitted_bytes: usize,
    omitted_lines: usize,
    spill: Option<&Path>,
    saved_cut: Option<usize>,
) -> String {
    let what = format!(
        "... {omitted_lines} line{} ({omitted_bytes} bytes) omitted",
        if omitted_lines == 1 { "" } else { "s" }
    );
    match (spill, saved_cut) {
        (Some(p), None) => format!(
            "{what}; the full output was saved to {} (read it with offset/limit, or search it) ...",
            p.display()
        ),
        (Some(p), Some(saved)) => format!(
            "{what}; the output was too large to save whole: its first {saved} bytes were saved to {} \
             (read it with offset/limit, or search it; the rest was not saved) ...",
            p.display()
        ),
        (None, _) => format!("{what}; the full output was not saved ..."),
    }
}

/// Number of lines in `bytes`: line breaks, plus one for a final line without a break.
pub fn count_lines(bytes: &[u8]) -> usize {
    let breaks = memchr::memchr_iter(b'\n', bytes).count();
    breaks + usize::from(bytes.last().is_some_and(|&b| b != b'\n'))
}

/// Whether `text` is within both budgets of `opts` (nothing would be cut).
pub fn fits(text: &str, opts: &Truncation) -> bool {
    text.len() <= opts.max_bytes && count_lines(text.as_bytes()) <= opts.max_lines
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

/// Creates a new spill file (mode `0600`; its folder `0700` when created) in
/// `opts`'s spill folder, first removing spill files older than
/// `opts.spill_max_age` there.
fn create_spill_file(opts: &Truncation) -> io::Result<(File, PathBuf)> {
    let dir = opts.resolved_spill_dir();
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(&dir)?;
    if let Some(age) = opts.spill_max_age {
        remove_old_spill_files(&dir, age);
    }
    let path = dir.join(spill_file_name());
    let mut options = File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let file = options.open(&path)?;
    Ok((file, path))
}

/// Removes the files of `dir` named like spill files (`output-*.txt`) that
/// were last modified more than `age` ago. Best effort: errors are ignored.
fn remove_old_spill_files(dir: &Path, age: Duration) {
    let Some(cutoff) = SystemTime::now().checked_sub(age) else {
        return;
    };
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        if !(name.starts_with("output-") && name.ends_with(".txt")) {
            continue;
        }
        let old = entry
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|modified| modified < cutoff);
        // `file_type` does not follow symlinks: only plain files are removed.
        if old && entry.file_type().is_ok_and(|t| t.is_file()) {
            let _ = fs::remove_file(entry.path());
        }
    }
}

/// Writes `bytes` to a new file in `dir` (created when missing) and returns its path.
///
/// # Errors
/// Any I/O error creating the folder or writing the file.
pub fn spill_to_file(dir: &Path, bytes: &[u8]) -> io::Result<PathBuf> {
    let (mut file, path) = create_spill_file(&Truncation::new().spill_dir(dir))?;
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
    /// Line breaks pushed so far.
    breaks: usize,
    spill: Option<(File, PathBuf)>,
    spill_failed: bool,
    /// Bytes written to the spill file.
    spilled: u64,
    /// The last byte that left the tail ring (the end of the dropped middle).
    before_tail: Option<u8>,
}

impl HeadTail {
    /// An empty accumulator with the given budgets.
    pub fn new(opts: Truncation) -> Self {
        Self {
            opts,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
            breaks: 0,
            spill: None,
            spill_failed: false,
            spilled: 0,
            before_tail: None,
        }
    }

    /// Total bytes pushed so far.
    pub fn total_bytes(&self) -> usize {
        self.total
    }

    /// Appends a piece of output.
    pub fn push(&mut self, bytes: &[u8]) {
        self.total += bytes.len();
        self.breaks += memchr::memchr_iter(b'\n', bytes).count();
        let room = self.opts.max_spill_bytes.saturating_sub(self.spilled);
        if self.opts.spill && !self.spill_failed && room > 0 {
            if self.spill.is_none() {
                match create_spill_file(&self.opts) {
                    Ok(s) => self.spill = Some(s),
                    Err(_) => self.spill_failed = true,
                }
            }
            if let Some((file, _)) = &mut self.spill {
                let part = &bytes[..saved_len(bytes.len(), room)];
                if file.write_all(part).is_err() {
                    self.spill_failed = true;
                }
                self.spilled += part.len() as u64;
            }
        }
        // The head takes its whole byte budget; the tail is a ring of the
        // other half plus a few bytes so a character cut at its start can be dropped.
        let head_room = self.opts.max_bytes.saturating_sub(self.head.len());
        let (to_head, rest) = bytes.split_at(head_room.min(bytes.len()));
        self.head.extend_from_slice(to_head);
        let ring = self.opts.max_bytes / 2 + 4;
        if rest.len() >= ring {
            let before = rest.len() - ring;
            self.before_tail = match before.checked_sub(1) {
                Some(i) => Some(rest[i]),
                None => self.tail.back().copied().or(self.before_tail),
            };
            self.tail.clear();
            self.tail.extend(&rest[before..]);
        } else {
            let overflow = (self.tail.len() + rest.len()).saturating_sub(ring);
            if overflow > 0 {
                self.before_tail = self.tail.get(overflow - 1).copied();
            }
            self.tail.drain(..overflow);
            self.tail.extend(rest);
        }
    }

    /// Finishes: the kept text with the marker line when something was cut.
    /// The spill file (if any) holds every byte pushed, up to
    /// [`Truncation::max_spill_bytes`]; it is removed when nothing was cut.
    pub fn finish(mut self) -> Truncated {
        let spill = self.spill.take();
        let spill_cut = spill.is_some() && self.spilled < self.total as u64;
        let saved_cut = spill_cut.then(|| saved_len(self.total, self.spilled));
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
                out.spill_cut = spill_cut;
                out.text =
                    rebuild_with_marker(&text, &self.opts, out.spill_path.as_deref(), saved_cut);
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
        // Every line break pushed lies in the kept head, the kept tail or the
        // omitted middle; '\n' survives the lossy decoding, so the kept parts'
        // breaks are counted on the text shown.
        let kept_breaks =
            head[..head_end].matches('\n').count() + tail[tail_start..].matches('\n').count();
        let middle_ends_with_break = if tail_start > 0 {
            tail.as_bytes()[tail_start - 1] == b'\n'
        } else {
            skip == 0 && self.before_tail == Some(b'\n')
        };
        let omitted_lines = self.breaks.saturating_sub(kept_breaks)
            + usize::from(omitted_bytes > 0 && !middle_ends_with_break);
        let spill_path = spill.map(|(_, p)| p);
        let marker = marker_text(
            omitted_bytes,
            omitted_lines,
            spill_path.as_deref(),
            saved_cut,
        );
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
            spill_cut,
        }
    }
}

fn rebuild_with_marker(
    text: &str,
    opts: &Truncation,
    spill: Option<&Path>,
    saved_cut: Option<usize>,
) -> String {
    let (head_end, tail_start) = split_points(text, opts);
    let omitted = &text[head_end..tail_start];
    let marker = marker_text(
        omitted.len(),
        count_lines(omitted.as_bytes()),
        spill,
        saved_cut,
    );
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
    fn head_tail_counts_every_omitted_line() {
        let dir = std::env::temp_dir().join(format!("tool-core-ht-lines-{}", std::process::id()));
        let opts = Truncation::new()
            .max_bytes(1000)
            .max_lines(20)
            .spill_dir(&dir);
        let mut acc = HeadTail::new(opts);
        let mut all = String::new();
        for i in 0..100_000 {
            all.push_str(&format!("line {i}\n"));
        }
        // Uneven pieces, some larger than the tail ring.
        let mut rest = all.as_bytes();
        let mut rng = Rng(7);
        while !rest.is_empty() {
            let n = usize::try_from(rng.below(3000))
                .unwrap()
                .min(rest.len())
                .max(1);
            acc.push(&rest[..n]);
            rest = &rest[n..];
        }
        let out = acc.finish();
        let shown = out.text.lines().filter(|l| l.starts_with("line ")).count();
        assert_eq!(out.omitted_lines, 100_000 - shown, "{}", out.text);
        assert!(out.text.contains(&format!("... {} lines", 100_000 - shown)));
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn spill_files_are_capped_private_and_old_ones_removed() {
        let dir = std::env::temp_dir().join(format!("tool-core-spill-cap-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let two_days_ago = SystemTime::now() - Duration::from_secs(48 * 3600);
        for name in ["output-old.txt", "unrelated-old.txt"] {
            let f = File::create(dir.join(name)).unwrap();
            f.set_modified(two_days_ago).unwrap();
        }
        fs::write(dir.join("output-recent.txt"), "x").unwrap();
        let opts = Truncation::new()
            .max_bytes(100)
            .max_spill_bytes(1000)
            .spill_dir(&dir);
        let mut acc = HeadTail::new(opts.clone());
        for _ in 0..10_000 {
            acc.push(b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
        }
        let out = acc.finish();
        let path = out.spill_path.clone().unwrap();
        assert!(out.spill_cut);
        assert_eq!(fs::metadata(&path).unwrap().len(), 1000);
        assert!(
            out.text.contains("its first 1000 bytes were saved to"),
            "{}",
            out.text
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        assert!(
            !dir.join("output-old.txt").exists(),
            "old spill file removed"
        );
        assert!(
            dir.join("unrelated-old.txt").exists(),
            "other files are kept"
        );
        assert!(
            dir.join("output-recent.txt").exists(),
            "recent files are kept"
        );
        // The one-shot path caps its file too.
        let text = "y\n".repeat(5000);
        let out = truncate(&text, &opts);
        assert!(out.spill_cut);
        assert_eq!(fs::metadata(out.spill_path.unwrap()).unwrap().len(), 1000);
        // Under the cap nothing is said.
        let out = truncate(&text, &opts.max_spill_bytes(1 << 20));
        assert!(!out.spill_cut);
        assert!(out.text.contains("the full output was saved"));
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
