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
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::context::ToolContext;
use crate::governance::secrets::Masker;

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
const RUNTIME_DIR_NAME: &str = "agent-tools";

/// Longest trace id used as its folder name unchanged (64 characters).
const MAX_PLAIN_TRACE_NAME: usize = 64;

/// The per-user private folder of this crate's files, as a path (nothing is
/// created or checked here; [`private_dir`] does that):
/// `$XDG_RUNTIME_DIR/agent-tools` when `XDG_RUNTIME_DIR` is set to an
/// absolute path of a folder owned by the current user, else
/// `<temp dir>/agent-tools-<uid>` (`std::env::temp_dir()`; on systems
/// without user ids, `<temp dir>/agent-tools`).
pub fn private_dir_location() -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let uid = current_uid();
        if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
            && run.is_absolute()
            && fs::metadata(&run).is_ok_and(|m| m.is_dir() && m.uid() == uid)
        {
            return run.join(RUNTIME_DIR_NAME);
        }
        std::env::temp_dir().join(format!("agent-tools-{uid}"))
    }
    #[cfg(not(unix))]
    {
        std::env::temp_dir().join("agent-tools")
    }
}

/// The per-user private folder ([`private_dir_location`]), created with mode
/// `0700` when missing and checked by [`ensure_private_dir`]. Spill files
/// (`<private dir>/spill/<trace>`) and the `tool` program's binary output
/// (`<private dir>/out/<trace>`) live below it.
///
/// # Errors
/// The I/O error of creating it, or `PermissionDenied` with a message naming
/// the folder when it is a symbolic link, not a folder, owned by another
/// user or not mode `0700`.
pub fn private_dir() -> io::Result<PathBuf> {
    let dir = private_dir_location();
    ensure_private_dir(&dir)?;
    Ok(dir)
}

/// Creates `dir` (and missing parents) with mode `0700` when it does not
/// exist, then checks it with [`check_private_dir`].
///
/// # Errors
/// As [`check_private_dir`], or the I/O error of creating the folder
/// (naming it).
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    if fs::symlink_metadata(dir).is_err() {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create the folder {}: {e}", dir.display()),
            )
        })?;
    }
    check_private_dir(dir)
}

/// Checks that `dir` is a folder only the current user can use: not a
/// symbolic link (checked without following it), a folder, owned by the
/// current user, with permission bits exactly `0700`. On systems without
/// user ids only the first two are checked.
///
/// # Errors
/// `NotFound` when it does not exist; `PermissionDenied` saying which rule
/// failed and how to fix it.
pub fn check_private_dir(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot read the folder {}: {e}", dir.display()),
        )
    })?;
    let refuse = |why: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("refusing to use {}: {why}", dir.display()),
        ))
    };
    if meta.file_type().is_symlink() {
        return refuse(
            "it is a symbolic link, which could point anywhere (remove it; it is recreated as a private folder)"
                .to_owned(),
        );
    }
    if !meta.is_dir() {
        return refuse("it is not a folder (remove it)".to_owned());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let uid = current_uid();
        if meta.uid() != uid {
            return refuse(format!(
                "it is owned by user id {}, not by the current user (id {uid})",
                meta.uid()
            ));
        }
        let mode = meta.mode() & 0o7777;
        if mode != 0o700 {
            return refuse(format!(
                "its mode is {mode:04o}, but it must be 0700 so that only its owner can use it (chmod 700 it)"
            ));
        }
    }
    Ok(())
}

#[cfg(unix)]
fn current_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// The default spill parent: `<private dir>/spill`
/// ([`private_dir_location`]). Trace folders go inside it; see the
/// [module docs](self#where-spill-files-go). A path only: nothing is created.
pub fn default_spill_dir() -> PathBuf {
    private_dir_location().join("spill")
}

/// The folder name of a trace id inside a spill parent (or the `tool`
/// program's output folder), one path component:
/// - a trace id of 1 to 64 characters from `[A-Za-z0-9_-]` is used as it is;
/// - any other trace id becomes its first 32 characters with every other
///   character replaced by `_`, a `.` and 16 hex digits of its FNV-1a hash
///   (so `../x` cannot leave the parent, and two ids differing only in
///   replaced characters get different folders; the `.` keeps these names
///   apart from the plain ones);
/// - no trace id becomes `untraced.<pid>.<random hex>`, fixed for the life
///   of the process: calls without a trace id share one folder per process,
///   which no other process's file tools accept.
pub fn trace_folder_name(trace_id: Option<&str>) -> String {
    match trace_id {
        Some(id)
            if !id.is_empty()
                && id.len() <= MAX_PLAIN_TRACE_NAME
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
        {
            id.to_owned()
        }
        Some(id) => {
            let mut prefix: String = id
                .chars()
                .take(32)
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if prefix.is_empty() {
                prefix.push_str("trace");
            }
            format!("{prefix}.{:016x}", fnv1a(id.as_bytes()))
        }
        None => untraced_folder_name().to_owned(),
    }
}

/// 64-bit FNV-1a: a stable hash (the same in every process and build), for
/// folder names only; it does not need to resist collisions made on purpose,
/// as trace ids come from the host, not from the model.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn untraced_folder_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // The standard library's per-process random hash keys.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        if let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) {
            hasher.write_u128(now.as_nanos());
        }
        format!("untraced.{}.{:016x}", std::process::id(), hasher.finish())
    })
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
    /// [`ToolContext::trace_id`].
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

static SPILL_COUNTER: AtomicU64 = AtomicU64::new(0);

fn spill_file_name() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = SPILL_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("output-{}-{nanos}-{n}.txt", std::process::id())
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

/// Whether `name` is one of this module's spill file names (`output-*.txt`).
fn is_spill_file_name(name: &str) -> bool {
    name.starts_with("output-") && name.ends_with(".txt")
}

/// Cleans the spill files of every trace folder of `parent`: removes those
/// last modified more than `max_age` ago, then the oldest while all of them
/// together hold more than `max_total` bytes; then removes trace folders that
/// are empty and were last modified more than `max_age` ago. Only plain files
/// named like spill files (`output-*.txt`) in real folders (symbolic links
/// are neither followed nor removed) are touched. Best effort: errors are
/// ignored. Returns how many spill files were removed.
///
/// Called whenever a spill file is created; never when a process exits.
pub fn clean_spill_parent(
    parent: &Path,
    max_age: Option<Duration>,
    max_total: Option<u64>,
) -> usize {
    let cutoff = max_age.and_then(|age| SystemTime::now().checked_sub(age));
    let Ok(traces) = fs::read_dir(parent) else {
        return 0;
    };
    let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    let mut old_folders = Vec::new();
    for trace in traces.flatten() {
        // `file_type` does not follow symlinks.
        if !trace.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let folder = trace.path();
        if let (Some(cutoff), Ok(modified)) = (cutoff, trace.metadata().and_then(|m| m.modified()))
            && modified < cutoff
        {
            old_folders.push(folder.clone());
        }
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let plain = entry.file_type().is_ok_and(|t| t.is_file());
            let named = entry.file_name().to_str().is_some_and(is_spill_file_name);
            if !(plain && named) {
                continue;
            }
            if let Ok(meta) = entry.metadata() {
                let modified = meta.modified().unwrap_or(UNIX_EPOCH);
                files.push((modified, meta.len(), entry.path()));
            }
        }
    }
    files.sort();
    let mut removed = 0;
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    for (modified, len, path) in &files {
        let too_old = cutoff.is_some_and(|c| *modified < c);
        let over_cap = max_total.is_some_and(|cap| total > cap);
        if !(too_old || over_cap) {
            // Sorted oldest first: the rest is newer and (once under the cap) fits.
            break;
        }
        if fs::remove_file(path).is_ok() {
            removed += 1;
        }
        total -= len;
    }
    for folder in old_folders {
        // Fails, as it should, when the folder still holds something.
        let _ = fs::remove_dir(folder);
    }
    removed
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

/// Masks the secret values of a context's [`SecretStore`](crate::SecretStore)
/// in a byte stream, piece by piece, with the same result as masking the
/// whole stream at once (the pipeline's masking of results): each value, in
/// every form the pipeline masks (raw, JSON-escaped, `Debug`-escaped),
/// becomes its `<secret>key</secret>` placeholder, also when a value is split
/// across two or more pieces.
///
/// It holds back the last `longest form - 1` bytes of what it was given (a
/// value could start there) until more arrives or [`finish`](Self::finish)
/// is called, so its memory is bounded by the longest secret value.
/// A store holds no value shorter than
/// [`MIN_SECRET_LEN`](crate::governance::secrets::MIN_SECRET_LEN) (it refuses
/// them when built), so every stored value is masked. TOTP codes (`*_bu_2fa_code` keys) are
/// computed per call and are not known here: the pipeline masks them in the
/// result only.
///
/// ```
/// use tool_core::{SecretStore, ToolContext};
/// use tool_core::truncate::StreamMasker;
///
/// let store = SecretStore::new().with_secret("key", "sk-12345").unwrap();
/// let ctx = ToolContext::new().with_secrets(store);
/// let mut masker = StreamMasker::for_context(&ctx).unwrap();
/// let mut out = Vec::new();
/// masker.push(b"token: sk-1", &mut out);
/// masker.push(b"2345 done", &mut out);
/// masker.finish(&mut out);
/// assert_eq!(out, b"token: <secret>key</secret> done");
/// ```
#[derive(Clone)]
pub struct StreamMasker {
    masker: Arc<Masker>,
    /// Bytes held back: the longest form minus one.
    keep: usize,
    pending: Vec<u8>,
}

impl std::fmt::Debug for StreamMasker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the pending bytes: they may hold the start of a secret.
        f.debug_struct("StreamMasker")
            .field("keep", &self.keep)
            .field("pending_bytes", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl StreamMasker {
    /// A masker for the secret values of `ctx`'s secret store; `None` when the
    /// context has no store, or none of its values is long enough to be masked.
    pub fn for_context(ctx: &ToolContext) -> Option<Self> {
        let masker = crate::governance::secrets::masker_for(ctx.secrets(), &[])?;
        let keep = masker.automaton()?.max_pattern_len().saturating_sub(1);
        Some(Self {
            masker,
            keep,
            pending: Vec::new(),
        })
    }

    /// Masks `bytes` (after what was held back) and appends to `out` all that
    /// can no longer be part of a secret value.
    pub fn push(&mut self, bytes: &[u8], out: &mut Vec<u8>) {
        self.pending.extend_from_slice(bytes);
        // Every occurrence that starts before `cut` ends within `pending`, so
        // the leftmost-longest choice among them is final.
        let cut = self.pending.len().saturating_sub(self.keep);
        let emitted = self.mask_before(cut, out);
        self.pending.drain(..emitted);
    }

    /// Masks and appends everything held back.
    pub fn finish(&mut self, out: &mut Vec<u8>) {
        let emitted = self.mask_before(self.pending.len(), out);
        self.pending.drain(..emitted);
    }

    /// Appends `pending` up to `cut` to `out`, masked; a match starting before
    /// `cut` is replaced whole, even when it ends after it. Returns how many
    /// bytes of `pending` were consumed.
    fn mask_before(&self, cut: usize, out: &mut Vec<u8>) -> usize {
        let mut pos = 0;
        if let Some(ac) = self.masker.automaton() {
            for m in ac.find_iter(&self.pending[..]) {
                if m.start() >= cut {
                    break;
                }
                out.extend_from_slice(&self.pending[pos..m.start()]);
                out.extend_from_slice(self.masker.replacement(m.pattern().as_usize()).as_bytes());
                pos = m.end();
            }
        }
        let end = cut.max(pos);
        out.extend_from_slice(&self.pending[pos..end]);
        end
    }
}

/// A bounded-memory accumulator for output that arrives in pieces.
///
/// Keeps the first half of the budget as the head, a ring of the most recent
/// bytes as the tail, and (when spilling is on) streams every byte to a spill
/// file as it arrives, so memory stays bounded whatever the total.
/// [`finish`](Self::finish) decodes the kept bytes (invalid UTF-8 becomes
/// U+FFFD) and applies the line budget. With a [`StreamMasker`]
/// ([`HeadTail::with_masker`]) every piece is masked before it is kept or
/// spilled, so neither the shown text nor the spill file holds a secret
/// value; byte and line counts are then those of the masked text.
///
/// ```
/// use tool_core::truncate::{HeadTail, Truncation};
///
/// let mut acc = HeadTail::new(Truncation::new().max_bytes(100).for_trace(Some("doc-run")));
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
    /// Why spilling stopped (or never started), when it failed.
    spill_error: Option<String>,
    /// Bytes written to the spill file.
    spilled: u64,
    /// The last byte that left the tail ring (the end of the dropped middle).
    before_tail: Option<u8>,
    masker: Option<StreamMasker>,
    /// Scratch buffer for masked pieces.
    masked: Vec<u8>,
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
            spill_error: None,
            spilled: 0,
            before_tail: None,
            masker: None,
            masked: Vec::new(),
        }
    }

    /// Masks every piece with `masker` (when `Some`) before it is kept or
    /// spilled. Get one with [`StreamMasker::for_context`].
    #[must_use]
    pub fn with_masker(mut self, masker: Option<StreamMasker>) -> Self {
        self.masker = masker;
        self
    }

    /// Total bytes taken in so far (after masking; bytes a masker still holds
    /// back are not counted yet).
    pub fn total_bytes(&self) -> usize {
        self.total
    }

    /// Appends a piece of output (masked first when a masker is set).
    pub fn push(&mut self, bytes: &[u8]) {
        match self.masker.as_mut() {
            None => self.take(bytes),
            Some(masker) => {
                let mut masked = std::mem::take(&mut self.masked);
                masked.clear();
                masker.push(bytes, &mut masked);
                self.take(&masked);
                self.masked = masked;
            }
        }
    }

    /// Keeps and spills a piece that needs no more masking.
    fn take(&mut self, bytes: &[u8]) {
        self.total += bytes.len();
        self.breaks += memchr::memchr_iter(b'\n', bytes).count();
        let room = self.opts.max_spill_bytes.saturating_sub(self.spilled);
        if self.opts.spill && self.spill_error.is_none() && room > 0 && !bytes.is_empty() {
            if self.spill.is_none() {
                match create_spill_file(&self.opts) {
                    Ok(s) => self.spill = Some(s),
                    Err(e) => self.spill_error = Some(e.to_string()),
                }
            }
            if let Some((file, _)) = &mut self.spill {
                let part = &bytes[..saved_len(bytes.len(), room)];
                if let Err(e) = file.write_all(part) {
                    self.spill_error = Some(format!("writing the spill file failed: {e}"));
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
        if let Some(mut masker) = self.masker.take() {
            let mut rest = Vec::new();
            masker.finish(&mut rest);
            self.take(&rest);
        }
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
                out.spill_error = self.spill_error.take().filter(|_| out.spill_path.is_none());
                out.text = rebuild_with_marker(
                    &text,
                    &self.opts,
                    out.spill_path.as_deref(),
                    saved_cut,
                    out.spill_error.as_deref(),
                );
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
        let spill_error = self.spill_error.take().filter(|_| spill_path.is_none());
        let marker = marker_text(
            omitted_bytes,
            omitted_lines,
            spill_path.as_deref(),
            saved_cut,
            spill_error.as_deref(),
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
            spill_error,
        }
    }
}

fn rebuild_with_marker(
    text: &str,
    opts: &Truncation,
    spill: Option<&Path>,
    saved_cut: Option<usize>,
    failure: Option<&str>,
) -> String {
    let (head_end, tail_start) = split_points(text, opts);
    let omitted = &text[head_end..tail_start];
    let marker = marker_text(
        omitted.len(),
        count_lines(omitted.as_bytes()),
        spill,
        saved_cut,
        failure,
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
