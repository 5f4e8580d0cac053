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
//! let opts = Truncation::new().max_lines(10).max_bytes(4096).for_trace(Some("doc-run"));
//! let out = truncate(&text, &opts);
//! assert!(out.truncated);
//! assert!(out.text.starts_with("line 0\n"));
//! assert!(out.text.ends_with("line 999\n"));
//! assert_eq!(out.omitted_lines, 990);
//! let saved = out.spill_path.as_ref().unwrap();
//! assert!(saved.starts_with(opts.resolved_spill_dir()));
//! assert_eq!(std::fs::read_to_string(saved).unwrap(), text);
//! # std::fs::remove_file(saved).unwrap();
//! ```
//!
//! For output that arrives in pieces (a running process), [`HeadTail`] keeps
//! memory bounded whatever the total size: it stores the head, a ring of the
//! most recent bytes, and streams everything to the spill file as it comes.
//! With a [`StreamMasker`] it masks secret values before anything is kept or
//! written, also when a value is split across two pieces.
//!
//! # Where spill files go
//!
//! Every spill file lies in the folder of its trace (the context's trace id,
//! [`Truncation::for_trace`]; see [`trace_folder_name`]), inside a spill
//! parent: [`default_spill_dir`] (`<private dir>/spill`, under the per-user
//! [`private_dir`]), or the folder [`Truncation::spill_dir`] names. The
//! private dir, the spill parent and the trace folder are each created with
//! mode `0700` and refused unless they are real folders (not symbolic links),
//! owned by the current user, with mode `0700` ([`ensure_private_dir`]), so
//! another user cannot plant or read them, and the file tools can be limited
//! to the current trace's folder ([`Truncation::checked_spill_dir`]).
//!
//! Disk use is bounded: a spill file holds at most
//! [`Truncation::max_spill_bytes`] (the beginning of the text; the marker line
//! then says the saved copy was cut as well), is readable by its owner only
//! (mode `0600`), and creating one removes (best effort) this module's spill
//! files in every trace folder of the spill parent that are older than
//! [`Truncation::spill_max_age`], then the oldest ones while the parent holds
//! more than [`Truncation::max_spill_total_bytes`]. Nothing is removed when a
//! process exits: a one-shot `tool call` prints the path for later reading.

use std::collections::VecDeque;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Default byte budget of the kept text: 50 KiB.
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;

/// Default line budget of the kept text: 2000 lines.
pub const DEFAULT_MAX_LINES: usize = 2000;

/// Default cap of one spill file: 32 MiB.
pub const DEFAULT_MAX_SPILL_BYTES: u64 = 32 * 1024 * 1024;

/// Default age after which spill files are removed: 24 hours.
pub const DEFAULT_SPILL_MAX_AGE: Duration = Duration::from_secs(24 * 60 * 60);

/// Default cap of all spill files of one spill parent together: 256 MiB
/// (eight full-size spill files). `$XDG_RUNTIME_DIR` is usually a small
/// memory-backed file system, so the cap stays modest.
pub const DEFAULT_MAX_SPILL_TOTAL_BYTES: u64 = 256 * 1024 * 1024;

/// Name of the private dir under `$XDG_RUNTIME_DIR`.
mod head_tail;
mod spill;
mod stream_mask;

pub use head_tail::HeadTail;
use spill::*;
pub use spill::{
    check_private_dir, clean_spill_parent, default_spill_dir, ensure_private_dir, private_dir,
    private_dir_location, trace_folder_name,
};
pub use stream_mask::StreamMasker;

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
    /// The spill parent: spill files go into its trace folder
    /// (`<spill_dir>/<trace folder>`, see [`trace_folder_name`]); `None`
    /// means [`default_spill_dir`]. It must be, or is created as, a private
    /// folder ([`ensure_private_dir`]); otherwise nothing is spilled and the
    /// marker line says why.
    pub spill_dir: Option<PathBuf>,
    /// The trace whose folder spill files go to ([`Truncation::for_trace`]);
    /// `None`: this process's untraced folder. Default `None`.
    pub trace_id: Option<String>,
    /// Write the full text to a spill file when something is cut. Default `true`.
    pub spill: bool,
    /// Most bytes written to one spill file: the text's beginning is kept and
    /// the rest left out (the marker line says so). Default [`DEFAULT_MAX_SPILL_BYTES`].
    pub max_spill_bytes: u64,
    /// Spill files (this module's `output-*.txt`, in any trace folder of the
    /// spill parent) older than this are removed when a new one is created;
    /// `None` keeps them. Default [`DEFAULT_SPILL_MAX_AGE`].
    pub spill_max_age: Option<Duration>,
    /// When the spill files of the spill parent together hold more bytes than
    /// this, the oldest are removed (when a new one is created) until they
    /// fit; `None`: no cap. Default [`DEFAULT_MAX_SPILL_TOTAL_BYTES`].
    pub max_spill_total_bytes: Option<u64>,
}

impl Default for Truncation {
    fn default() -> Self {
        Self::new()
    }
}

impl Truncation {
    /// The default budgets (50 KiB, 2000 lines), spilling to the untraced
    /// folder of [`default_spill_dir`].
    pub fn new() -> Self {
        Self {
            max_bytes: DEFAULT_MAX_BYTES,
            max_lines: DEFAULT_MAX_LINES,
            spill_dir: None,
            trace_id: None,
            spill: true,
            max_spill_bytes: DEFAULT_MAX_SPILL_BYTES,
            spill_max_age: Some(DEFAULT_SPILL_MAX_AGE),
            max_spill_total_bytes: Some(DEFAULT_MAX_SPILL_TOTAL_BYTES),
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

    /// Sets the spill parent (created as a private folder when needed).
    #[must_use]
    pub fn spill_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.spill_dir = Some(dir.into());
        self
    }

    /// Sets the trace whose folder spill files go to: pass the context's
    /// [`ToolContext::trace_id`](crate::ToolContext::trace_id).
    #[must_use]
    pub fn for_trace(mut self, trace_id: Option<&str>) -> Self {
        self.trace_id = trace_id.map(str::to_owned);
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

    /// Sets the cap of all spill files of the spill parent (`None`: no cap).
    #[must_use]
    pub fn max_spill_total_bytes(mut self, max: Option<u64>) -> Self {
        self.max_spill_total_bytes = max;
        self
    }

    /// The spill parent: [`Truncation::spill_dir`], else [`default_spill_dir`].
    pub fn spill_parent(&self) -> PathBuf {
        self.spill_dir.clone().unwrap_or_else(default_spill_dir)
    }

    /// The folder spill files go to: the trace folder inside the spill parent
    /// (a path only; nothing is created or checked).
    pub fn resolved_spill_dir(&self) -> PathBuf {
        self.spill_parent()
            .join(trace_folder_name(self.trace_id.as_deref()))
    }

    /// The trace folder ([`Truncation::resolved_spill_dir`]) when it exists
    /// and it, the spill parent and (for the default parent) the private dir
    /// all pass [`check_private_dir`]: the folder a file tool may read spill
    /// files from. Nothing is created.
    ///
    /// # Errors
    /// The first failed check's error (`NotFound` when a folder is missing).
    pub fn checked_spill_dir(&self) -> io::Result<PathBuf> {
        if self.spill_dir.is_none() {
            check_private_dir(&private_dir_location())?;
        }
        check_private_dir(&self.spill_parent())?;
        let dir = self.resolved_spill_dir();
        check_private_dir(&dir)?;
        Ok(dir)
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
    /// Why the full text was not saved, when spilling was on, something was
    /// cut and the spill file could not be written (the marker line says it too).
    pub spill_error: Option<String>,
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
            spill_error: None,
        };
    }
    let omitted = &text[head_end..tail_start];
    let omitted_lines = count_lines(omitted.as_bytes());
    let saved = saved_len(text.len(), opts.max_spill_bytes);
    let spill_cut = saved < text.len();
    let (spill_path, spill_error) = if opts.spill {
        match create_spill_file(opts).and_then(|(mut file, path)| {
            file.write_all(&text.as_bytes()[..saved])?;
            Ok(path)
        }) {
            Ok(path) => (Some(path), None),
            Err(e) => (None, Some(e.to_string())),
        }
    } else {
        (None, None)
    };
    let marker = marker_text(
        omitted.len(),
        omitted_lines,
        spill_path.as_deref(),
        spill_cut.then_some(saved),
        spill_error.as_deref(),
    );
    Truncated {
        text: assemble(text, head_end, tail_start, &marker),
        truncated: true,
        omitted_bytes: omitted.len(),
        omitted_lines,
        total_bytes: text.len(),
        spill_path: spill_path.clone(),
        spill_cut: spill_cut && spill_path.is_some(),
        spill_error,
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
        spill_error: None,
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
    marker_text(omitted_bytes, omitted_lines, spill, None, None)
}

/// [`marker_line`], saying so when the spill file holds only the first
/// `saved_cut` bytes of the output, and why nothing was saved (`failure`).
fn marker_text(
    omitted_bytes: usize,
    omitted_lines: usize,
    spill: Option<&Path>,
    saved_cut: Option<usize>,
    failure: Option<&str>,
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
        (None, _) => match failure {
            Some(why) => format!("{what}; the full output was not saved ({why}) ..."),
            None => format!("{what}; the full output was not saved ..."),
        },
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

/// Creates a new spill file (mode `0600`) in `opts`'s trace folder, after
/// making sure the private dir (for the default parent), the spill parent and
/// the trace folder are private folders ([`ensure_private_dir`]) and cleaning
/// the spill parent ([`clean_spill_parent`]).
fn create_spill_file(opts: &Truncation) -> io::Result<(File, PathBuf)> {
    if opts.spill_dir.is_none() {
        private_dir()?;
    }
    let parent = opts.spill_parent();
    ensure_private_dir(&parent)?;
    clean_spill_parent(&parent, opts.spill_max_age, opts.max_spill_total_bytes);
    let dir = opts.resolved_spill_dir();
    let mut options = File::options();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    // A second round when another process's cleaning removed the (empty,
    // old) trace folder between our check and the file's creation.
    for round in 0..2 {
        ensure_private_dir(&dir)?;
        let path = dir.join(spill_file_name());
        match options.open(&path) {
            Ok(file) => return Ok((file, path)),
            Err(e) if e.kind() == io::ErrorKind::NotFound && round == 0 => {}
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot create {}: {e}", path.display()),
                ));
            }
        }
    }
    Err(io::Error::other(format!(
        "cannot create a spill file in {}",
        dir.display()
    )))
}

/// Writes `bytes` to a new spill file in `opts`'s trace folder (see
/// [`Truncation::resolved_spill_dir`]) and returns its path. `bytes` are
/// written as given: mask secret values first ([`StreamMasker`]).
///
/// # Errors
/// The error of [`ensure_private_dir`] for a folder that is not private, or
/// any I/O error creating or writing the file.
pub fn spill_to_file(opts: &Truncation, bytes: &[u8]) -> io::Result<PathBuf> {
    let (mut file, path) = create_spill_file(opts)?;
    file.write_all(bytes)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::SystemTime;

    use crate::tool::context::ToolContext;

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
        let opts = Truncation::new()
            .max_bytes(100)
            .max_spill_bytes(1000)
            .spill_dir(&dir)
            .for_trace(Some("cap-run"));
        let trace_dir = opts.resolved_spill_dir();
        ensure_private_dir(&trace_dir).unwrap();
        let two_days_ago = SystemTime::now() - Duration::from_secs(48 * 3600);
        for name in ["output-old.txt", "unrelated-old.txt"] {
            let f = File::create(trace_dir.join(name)).unwrap();
            f.set_modified(two_days_ago).unwrap();
        }
        fs::write(trace_dir.join("output-recent.txt"), "x").unwrap();
        let mut acc = HeadTail::new(opts.clone());
        for _ in 0..10_000 {
            acc.push(b"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n");
        }
        let out = acc.finish();
        let path = out.spill_path.clone().unwrap();
        assert_eq!(path.parent(), Some(trace_dir.as_path()));
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
            !trace_dir.join("output-old.txt").exists(),
            "old spill file removed"
        );
        assert!(
            trace_dir.join("unrelated-old.txt").exists(),
            "other files are kept"
        );
        assert!(
            trace_dir.join("output-recent.txt").exists(),
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
        let opts = Truncation::new().spill_dir(&dir);
        let mut acc = HeadTail::new(opts.clone());
        acc.push(b"short\n");
        let out = acc.finish();
        assert!(!out.truncated);
        assert_eq!(out.text, "short\n");
        assert_eq!(out.spill_path, None);
        assert_eq!(fs::read_dir(opts.resolved_spill_dir()).unwrap().count(), 0);
        fs::remove_dir_all(&dir).unwrap();
    }

    fn secret_context(secrets: &[(&str, &str)]) -> ToolContext {
        let mut store = crate::SecretStore::new();
        for (k, v) in secrets {
            store = store.with_secret(*k, *v).unwrap();
        }
        ToolContext::new().with_secrets(store)
    }

    /// Masks `pieces` through a [`StreamMasker`].
    fn stream_mask(ctx: &ToolContext, pieces: &[&[u8]]) -> Vec<u8> {
        let mut masker = StreamMasker::for_context(ctx).unwrap();
        let mut out = Vec::new();
        for p in pieces {
            masker.push(p, &mut out);
        }
        masker.finish(&mut out);
        out
    }

    const SECRETS: &[(&str, &str)] = &[
        ("api_key", "sk-live-0123456789abcdef"),
        ("quoted", "pa\"ss\\word"),
        ("umlaut", "pässwörd-ü"),
        ("short", "tok-1"),
        ("long", "tok-12345"),
        ("rep", "abab"),
    ];

    #[test]
    fn stream_masking_equals_whole_text_masking_at_every_split() {
        let ctx = secret_context(SECRETS);
        let whole_masker = ctx.secrets().unwrap().masker(&[]);
        let texts = [
            "key=sk-live-0123456789abcdef; again sk-live-0123456789abcdef.".to_owned(),
            // The JSON-escaped and the Debug-escaped forms are masked too.
            r#"{"p": "pa\"ss\\word", "raw": "pa"ss\word"}"#.to_owned(),
            "ümlaut pässwörd-ü and tok-12345 then tok-1 then tok-123".to_owned(),
            "abababab ababa sk-live-0123456789abcde (one short) ".repeat(3),
        ];
        for text in &texts {
            let mut expected = text.clone();
            whole_masker.mask_string(&mut expected);
            assert!(expected.contains("<secret>"), "{expected}");
            let bytes = text.as_bytes();
            // One cut at every position, characters cut apart included.
            for i in 0..=bytes.len() {
                let out = stream_mask(&ctx, &[&bytes[..i], &bytes[i..]]);
                assert_eq!(String::from_utf8_lossy(&out), expected, "split at {i}");
            }
            // Two cuts at every pair of positions.
            for i in 0..=bytes.len() {
                for j in i..=bytes.len() {
                    let out = stream_mask(&ctx, &[&bytes[..i], &bytes[i..j], &bytes[j..]]);
                    assert_eq!(String::from_utf8_lossy(&out), expected, "splits {i} {j}");
                }
            }
            // One byte at a time.
            let singles: Vec<&[u8]> = bytes.chunks(1).collect();
            assert_eq!(
                String::from_utf8_lossy(&stream_mask(&ctx, &singles)),
                expected
            );
        }
        for (_, value) in SECRETS.iter().filter(|(k, _)| *k != "short") {
            let out = stream_mask(&ctx, &[value.as_bytes()]);
            assert!(!String::from_utf8_lossy(&out).contains(value));
        }
        assert!(StreamMasker::for_context(&ToolContext::new()).is_none());
        // Values below the masking length are refused when the store is built.
        assert!(crate::SecretStore::new().with_secret("tiny", "ab").is_err());
    }

    /// Review 27 F21/F24: eager pushing and paging give the whole text's
    /// masking at every split, and hold back only a possible value's start.
    #[test]
    fn eager_pushes_and_pages_mask_like_the_whole_text_at_every_split() {
        let ctx = secret_context(SECRETS);
        let whole_masker = ctx.secrets().unwrap().masker(&[]);
        let text = "key=sk-live-0123456789abcdef; ümlaut pässwörd-ü tok-12345 tok-1 abab \"pa\\\"ss\\\\word\" sk-live-0123";
        let mut expected = text.to_owned();
        whole_masker.mask_string(&mut expected);
        let bytes = text.as_bytes();
        let masker = StreamMasker::for_context(&ctx).unwrap();
        for i in 0..=bytes.len() {
            // Eager: two pushes split at i.
            let mut m = masker.clone();
            let mut out = Vec::new();
            m.push_eager(&bytes[..i], &mut out);
            m.push_eager(&bytes[i..], &mut out);
            m.finish(&mut out);
            assert_eq!(
                String::from_utf8_lossy(&out),
                expected,
                "eager split at {i}"
            );
            // Pages: a page of i bytes shows page_len of them, masked on
            // their own; the next page starts there.
            if !text.is_char_boundary(i) {
                continue;
            }
            let shown = masker.page_len(&bytes[..i]);
            assert!(shown <= i, "{shown} > {i}");
            let mut pages = whole_masker_text(&ctx, &bytes[..shown]);
            pages.push_str(&whole_masker_text(&ctx, &bytes[shown..]));
            assert_eq!(pages, expected, "page cut at {i} shown {shown}");
        }
        // Nothing that cannot begin a value is held back.
        let mut m = masker.clone();
        let mut out = Vec::new();
        m.push_eager(b"Continue? [y/N] ", &mut out);
        assert_eq!(out, b"Continue? [y/N] ");
        m.push_eager(b"token sk-li", &mut out);
        assert_eq!(out, b"Continue? [y/N] token ");
        assert_eq!(masker.page_len(b"x sk-live-0123"), 2);
        assert_eq!(masker.page_len(b"x sk-live-0123456789abcdef y"), 28);
    }

    fn whole_masker_text(ctx: &ToolContext, bytes: &[u8]) -> String {
        let mut s = String::from_utf8(bytes.to_vec()).unwrap();
        ctx.secrets().unwrap().masker(&[]).mask_string(&mut s);
        s
    }

    #[test]
    fn head_tail_spill_file_never_holds_a_secret_split_across_pieces() {
        let dir = std::env::temp_dir().join(format!("tool-core-ht-mask-{}", std::process::id()));
        let ctx = secret_context(SECRETS);
        let secret = "sk-live-0123456789abcdef";
        let mut text = Vec::new();
        for i in 0..3000 {
            text.extend_from_slice(format!("row {i} token={secret} pw=pässwörd-ü\n").as_bytes());
        }
        // Pieces of every size from 1 to 37 bytes, so the secret is cut at every offset.
        let opts = Truncation::new()
            .max_bytes(2000)
            .max_lines(20)
            .spill_dir(&dir)
            .for_trace(Some("mask-run"));
        let mut acc = HeadTail::new(opts).with_masker(StreamMasker::for_context(&ctx));
        let mut rest = &text[..];
        let mut n = 1;
        while !rest.is_empty() {
            let k = n.min(rest.len());
            acc.push(&rest[..k]);
            rest = &rest[k..];
            n = n % 37 + 1;
        }
        let out = acc.finish();
        assert!(out.truncated);
        let saved = fs::read_to_string(out.spill_path.as_ref().unwrap()).unwrap();
        for value in [secret, "pässwörd-ü", "sk-live", "0123456789abcdef"] {
            assert!(!saved.contains(value), "{value} in the spill file");
            assert!(!out.text.contains(value), "{value} in the output");
        }
        assert_eq!(saved.matches("<secret>api_key</secret>").count(), 3000);
        assert_eq!(saved.matches("<secret>umlaut</secret>").count(), 3000);
        assert_eq!(saved.lines().count(), 3000);
        assert_eq!(out.total_bytes, saved.len());
        assert!(
            out.text
                .starts_with("row 0 token=<secret>api_key</secret> pw=<secret>umlaut</secret>\n")
        );
        assert!(
            out.text
                .ends_with("row 2999 token=<secret>api_key</secret> pw=<secret>umlaut</secret>\n")
        );
        // The one-shot path never sees raw values in the pipeline (masked
        // first); a small output is returned whole, masked.
        let mut acc = HeadTail::new(Truncation::new().spill_dir(&dir))
            .with_masker(StreamMasker::for_context(&ctx));
        acc.push(b"x sk-live-0123");
        acc.push(b"456789abcdef y");
        assert_eq!(acc.finish().text, "x <secret>api_key</secret> y");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn trace_folder_names_are_single_safe_components() {
        assert_eq!(trace_folder_name(Some("run-1")), "run-1");
        assert_eq!(trace_folder_name(Some("cli-0a1b2c3d")), "cli-0a1b2c3d");
        for id in [
            "../x",
            "a/b",
            "..",
            ".",
            "",
            "x y",
            "日本",
            &"a".repeat(65),
            "a\0b",
        ] {
            let name = trace_folder_name(Some(id));
            assert!(
                !name.is_empty() && !name.starts_with('.'),
                "{id:?} -> {name}"
            );
            assert!(
                !name.contains('/') && !name.contains('\0'),
                "{id:?} -> {name}"
            );
            assert_eq!(Path::new(&name).components().count(), 1, "{id:?} -> {name}");
            assert!(name.len() <= 32 * 4 + 17, "{id:?} -> {name}");
            assert_eq!(trace_folder_name(Some(id)), name, "stable");
        }
        assert_ne!(
            trace_folder_name(Some("a/b")),
            trace_folder_name(Some("a_b"))
        );
        assert_ne!(
            trace_folder_name(Some("a/b")),
            trace_folder_name(Some("a:b"))
        );
        // FNV-1a 64 test vector: the names stay the same in every build.
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(
            trace_folder_name(Some("a/b")),
            format!("a_b.{:016x}", fnv1a(b"a/b"))
        );
        let untraced = trace_folder_name(None);
        assert!(untraced.starts_with(&format!("untraced.{}.", std::process::id())));
        assert_eq!(trace_folder_name(None), untraced);
    }

    #[cfg(unix)]
    fn mode_of(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        fs::symlink_metadata(path).unwrap().permissions().mode() & 0o7777
    }

    #[cfg(unix)]
    #[test]
    fn spill_folders_are_created_0700_and_files_0600() {
        let parent = std::env::temp_dir().join(format!("tool-core-modes-{}", std::process::id()));
        let _ = fs::remove_dir_all(&parent);
        for trace in ["mode-a", "mode-b", "../mode-c", "mode d"] {
            let opts = Truncation::new()
                .max_lines(2)
                .spill_dir(&parent)
                .for_trace(Some(trace));
            let out = truncate("1\n2\n3\n4\n5\n", &opts);
            let path = out.spill_path.unwrap();
            assert_eq!(path.parent().unwrap(), opts.resolved_spill_dir());
            assert!(path.starts_with(&parent), "{}", path.display());
            assert_eq!(mode_of(&parent), 0o700);
            assert_eq!(mode_of(&opts.resolved_spill_dir()), 0o700);
            assert_eq!(mode_of(&path), 0o600);
            assert_eq!(opts.checked_spill_dir().unwrap(), opts.resolved_spill_dir());
        }
        // The default parent lies in the per-user private dir.
        let private = private_dir().unwrap();
        assert_eq!(private, private_dir_location());
        assert_eq!(mode_of(&private), 0o700);
        let opts = Truncation::new()
            .max_lines(2)
            .for_trace(Some("tool-core-default-mode-test"));
        let out = truncate("1\n2\n3\n4\n5\n", &opts);
        let path = out.spill_path.unwrap();
        assert!(path.starts_with(private.join("spill").join("tool-core-default-mode-test")));
        assert_eq!(mode_of(&private.join("spill")), 0o700);
        assert_eq!(mode_of(path.parent().unwrap()), 0o700);
        fs::remove_dir_all(path.parent().unwrap()).unwrap();
        fs::remove_dir_all(&parent).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn planted_symlinks_and_loose_folders_are_refused() {
        use std::os::unix::fs::{PermissionsExt, symlink};
        let base = tempfile_dir("planted");
        let elsewhere = base.join("elsewhere");
        ensure_private_dir(&elsewhere).unwrap();
        // A symlink as the spill parent.
        let parent = base.join("parent-link");
        symlink(&elsewhere, &parent).unwrap();
        let opts = Truncation::new()
            .max_lines(2)
            .spill_dir(&parent)
            .for_trace(Some("t1"));
        let out = truncate("1\n2\n3\n4\n5\n", &opts);
        assert_eq!(out.spill_path, None);
        let why = out.spill_error.clone().unwrap();
        assert!(why.contains("is a symbolic link"), "{why}");
        assert!(
            out.text
                .contains("the full output was not saved (refusing to use"),
            "{}",
            out.text
        );
        assert!(opts.checked_spill_dir().is_err());
        let mut acc = HeadTail::new(opts.clone());
        acc.push("x\n".repeat(10_000).as_bytes());
        let streamed = acc.finish();
        assert_eq!(streamed.spill_path, None);
        assert!(
            streamed.text.contains("is a symbolic link"),
            "{}",
            streamed.text
        );
        assert_eq!(
            fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "nothing written through the link"
        );
        // A symlink as the trace folder inside a private parent.
        let parent = base.join("parent");
        ensure_private_dir(&parent).unwrap();
        symlink(&elsewhere, parent.join("t2")).unwrap();
        let opts = Truncation::new()
            .max_lines(2)
            .spill_dir(&parent)
            .for_trace(Some("t2"));
        let out = truncate("1\n2\n3\n4\n5\n", &opts);
        assert_eq!(out.spill_path, None);
        assert!(
            out.spill_error
                .unwrap()
                .contains("t2: it is a symbolic link")
        );
        let err = opts.checked_spill_dir().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::PermissionDenied);
        assert_eq!(fs::read_dir(&elsewhere).unwrap().count(), 0);
        // A symlink to a file, a plain file, a folder with a loose mode.
        let file = base.join("file");
        fs::write(&file, "x").unwrap();
        symlink(&file, base.join("file-link")).unwrap();
        assert!(
            check_private_dir(&base.join("file-link"))
                .unwrap_err()
                .to_string()
                .contains("symbolic link")
        );
        assert!(
            check_private_dir(&file)
                .unwrap_err()
                .to_string()
                .contains("not a folder")
        );
        let loose = base.join("loose");
        fs::create_dir(&loose).unwrap();
        fs::set_permissions(&loose, fs::Permissions::from_mode(0o755)).unwrap();
        let err = ensure_private_dir(&loose).unwrap_err().to_string();
        assert!(
            err.contains("its mode is 0755, but it must be 0700"),
            "{err}"
        );
        assert_eq!(
            check_private_dir(&base.join("missing")).unwrap_err().kind(),
            io::ErrorKind::NotFound
        );
        // Owned by someone else (only root can give a folder away).
        if current_uid() == 0 {
            let theirs = base.join("theirs");
            ensure_private_dir(&theirs).unwrap();
            rustix::fs::chown(&theirs, Some(rustix::fs::Uid::from_raw(65534)), None).unwrap();
            let err = check_private_dir(&theirs).unwrap_err().to_string();
            assert!(
                err.contains("owned by user id 65534, not by the current user (id 0)"),
                "{err}"
            );
        }
        fs::remove_dir_all(&base).unwrap();
    }

    /// A fresh private folder under the temp dir for one test.
    fn tempfile_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tool-core-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        ensure_private_dir(&dir).unwrap();
        dir
    }

    #[test]
    fn cleaning_removes_old_files_then_the_oldest_over_the_cap() {
        let parent = tempfile_dir("clean");
        let now = SystemTime::now();
        let hours = |h: u64| now - Duration::from_secs(h * 3600);
        let plant = |trace: &str, name: &str, len: usize, at: SystemTime| {
            let dir = parent.join(trace);
            ensure_private_dir(&dir).unwrap();
            let path = dir.join(name);
            fs::write(&path, vec![b'x'; len]).unwrap();
            File::options()
                .write(true)
                .open(&path)
                .unwrap()
                .set_modified(at)
                .unwrap();
            path
        };
        let old_a = plant("a", "output-1.txt", 10, hours(30));
        let old_b = plant("b", "output-2.txt", 10, hours(25));
        let other_old = plant("b", "notes.txt", 10, hours(40));
        let oldest_recent = plant("a", "output-3.txt", 400, hours(5));
        let middle = plant("c", "output-4.txt", 400, hours(3));
        let newest = plant("c", "output-5.txt", 400, hours(1));
        // An empty trace folder untouched for two days goes; a recent empty one stays.
        let stale = parent.join("stale");
        ensure_private_dir(&stale).unwrap();
        File::open(&stale).unwrap().set_modified(hours(48)).unwrap();
        let fresh = parent.join("fresh");
        ensure_private_dir(&fresh).unwrap();
        #[cfg(unix)]
        {
            // A symlinked trace folder and a symlink named like a spill file are not followed.
            let outside = tempfile_dir("clean-outside");
            let target = outside.join("output-9.txt");
            fs::write(&target, "keep").unwrap();
            File::options()
                .write(true)
                .open(&target)
                .unwrap()
                .set_modified(hours(50))
                .unwrap();
            std::os::unix::fs::symlink(&outside, parent.join("linked")).unwrap();
            std::os::unix::fs::symlink(&target, parent.join("a").join("output-0.txt")).unwrap();
            let removed = clean_spill_parent(&parent, Some(DEFAULT_SPILL_MAX_AGE), Some(900));
            assert_eq!(removed, 3);
            assert!(target.exists(), "a symlink's target is never removed");
            assert!(fs::symlink_metadata(parent.join("a").join("output-0.txt")).is_ok());
            fs::remove_dir_all(&outside).unwrap();
        }
        #[cfg(not(unix))]
        assert_eq!(
            clean_spill_parent(&parent, Some(DEFAULT_SPILL_MAX_AGE), Some(900)),
            3
        );
        assert!(!old_a.exists() && !old_b.exists(), "older than a day");
        assert!(
            !oldest_recent.exists(),
            "the oldest goes first while over the cap"
        );
        assert!(
            middle.exists() && newest.exists(),
            "800 bytes fit the 900-byte cap"
        );
        assert!(other_old.exists(), "only spill file names are touched");
        assert!(!stale.exists() && fresh.exists());
        // Without a cap or an age nothing more goes.
        assert_eq!(clean_spill_parent(&parent, None, None), 0);
        // A cap below the newest file's size empties the parent of spill files.
        assert_eq!(clean_spill_parent(&parent, None, Some(100)), 2);
        assert!(!newest.exists());
        // Creating a spill file cleans the whole parent.
        let kept = plant("d", "output-6.txt", 10, hours(30));
        let opts = Truncation::new()
            .max_lines(2)
            .spill_dir(&parent)
            .for_trace(Some("e"));
        assert!(truncate("1\n2\n3\n4\n5\n", &opts).spill_path.is_some());
        assert!(!kept.exists());
        fs::remove_dir_all(&parent).unwrap();
    }
}
