//! File helpers shared by the tools: text decoding that never invents
//! characters, line-ending and BOM preservation, atomic writes, change
//! snapshots for rewinding a turn, binary detection and unified diffs.

use std::borrow::Cow;
use std::fmt;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};
use tool_core::ToolContext;

/// The UTF-8 byte order mark.
pub const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

// ---------------------------------------------------------------------------
// Line endings

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

// ---------------------------------------------------------------------------
// Text decoding

/// A decoded text file and the format to write it back in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextFile {
    /// The text, without the byte order mark, line endings as in the file.
    pub text: String,
    /// The file started with a byte order mark.
    pub bom: bool,
    /// The character encoding (UTF-8 for most files).
    pub encoding: &'static Encoding,
    /// The line-ending style (of the first line break).
    pub line_ending: LineEnding,
}

/// Why bytes could not be decoded as text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// The encoding that was tried.
    pub encoding: &'static str,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the file is not valid UTF-8 and does not decode cleanly as {} either",
            self.encoding
        )
    }
}

impl std::error::Error for DecodeError {}

/// Why text could not be encoded back into a file's encoding.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EncodeError {
    /// The file's encoding.
    pub encoding: &'static str,
}

impl fmt::Display for EncodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the new text has characters that the file's encoding ({}) cannot represent",
            self.encoding
        )
    }
}

impl std::error::Error for EncodeError {}

/// Bytes at the start of a file that decide its legacy encoding: the
/// same prefix for `read_file` (which streams) and the editing tools (which
/// hold the whole file), so both decode a file the same way.
pub const DETECT_PREFIX_BYTES: usize = 1024 * 1024;

/// The most likely legacy encoding of `bytes` (not UTF-8), by `chardetng`.
pub fn detect_encoding(bytes: &[u8]) -> &'static Encoding {
    let mut det = chardetng::EncodingDetector::new();
    det.feed(bytes, true);
    det.guess(None, false)
}

/// The legacy encoding of a file that is not valid UTF-8, decided by its
/// first [`DETECT_PREFIX_BYTES`] (`prefix` may be longer: the rest is ignored).
///
/// This is the one decision for a whole file: every line is then decoded in
/// this encoding, also lines that happen to be valid UTF-8, because that is
/// how the file is written back.
pub fn file_encoding(prefix: &[u8]) -> &'static Encoding {
    let end = prefix.len().min(DETECT_PREFIX_BYTES);
    detect_encoding(&prefix[..end])
}

/// Validates UTF-8 arriving in pieces (a character may be split between
/// two), in constant memory.
#[derive(Debug, Default, Clone)]
pub struct Utf8Validator {
    pending: [u8; 4],
    pending_len: usize,
    invalid: bool,
}

impl Utf8Validator {
    /// A validator that has seen nothing yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Checks the next piece.
    pub fn feed(&mut self, mut bytes: &[u8]) {
        if self.invalid {
            return;
        }
        if self.pending_len > 0 {
            let width = match self.pending[0] {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                _ => 4,
            };
            let take = (width - self.pending_len).min(bytes.len());
            self.pending[self.pending_len..self.pending_len + take].copy_from_slice(&bytes[..take]);
            self.pending_len += take;
            bytes = &bytes[take..];
            if self.pending_len < width {
                // Still incomplete: the prefix so far must be valid.
                if std::str::from_utf8(&self.pending[..self.pending_len])
                    .is_err_and(|e| e.error_len().is_some())
                {
                    self.invalid = true;
                }
                return;
            }
            if std::str::from_utf8(&self.pending[..width]).is_err() {
                self.invalid = true;
                return;
            }
            self.pending_len = 0;
        }
        match std::str::from_utf8(bytes) {
            Ok(_) => {}
            Err(e) if e.error_len().is_none() => {
                let tail = &bytes[e.valid_up_to()..];
                self.pending[..tail.len()].copy_from_slice(tail);
                self.pending_len = tail.len();
            }
            Err(_) => self.invalid = true,
        }
    }

    /// Whether an invalid sequence has been seen already.
    pub fn failed(&self) -> bool {
        self.invalid
    }

    /// Whether everything fed was valid UTF-8 and no character was left unfinished.
    pub fn is_valid(&self) -> bool {
        !self.invalid && self.pending_len == 0
    }
}

/// Decodes `bytes` without lossy replacement, in `encoding`. UTF-8 and
/// UTF-16 need no detection; `None` when a byte sequence is invalid.
pub fn decode_exact(bytes: &[u8], encoding: &'static Encoding) -> Option<String> {
    if encoding == UTF_8 {
        return std::str::from_utf8(bytes).ok().map(str::to_owned);
    }
    encoding
        .decode_without_bom_handling_and_without_replacement(bytes)
        .map(Cow::into_owned)
}

impl TextFile {
    /// Decodes a file's bytes: a byte order mark decides (UTF-8, UTF-16LE/BE);
    /// otherwise a file that is valid UTF-8 as a whole is UTF-8, and anything
    /// else is decoded, every line alike, with the encoding [`file_encoding`]
    /// detects, with no replacement characters. `read_file` makes the same
    /// decision, so what it shows is what the editing tools match.
    ///
    /// # Errors
    /// [`DecodeError`] when the bytes are not valid in the chosen encoding.
    pub fn decode(bytes: &[u8]) -> Result<Self, DecodeError> {
        let (encoding, bom, body) = if let Some(rest) = bytes.strip_prefix(UTF8_BOM) {
            (UTF_8, true, rest)
        } else if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
            (UTF_16LE, true, rest)
        } else if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
            (UTF_16BE, true, rest)
        } else if std::str::from_utf8(bytes).is_ok() {
            (UTF_8, false, bytes)
        } else {
            (file_encoding(bytes), false, bytes)
        };
        let text = decode_exact(body, encoding).ok_or(DecodeError {
            encoding: encoding.name(),
        })?;
        Ok(Self {
            line_ending: LineEnding::detect(&text),
            text,
            bom,
            encoding,
        })
    }

    /// Encodes `text` (already in the line-ending style wanted) in this
    /// file's encoding, with its byte order mark if it had one.
    ///
    /// # Errors
    /// [`EncodeError`] when `text` has a character the encoding cannot represent.
    pub fn encode(&self, text: &str) -> Result<Vec<u8>, EncodeError> {
        let mut out = Vec::with_capacity(text.len() + 3);
        if self.encoding == UTF_8 {
            if self.bom {
                out.extend_from_slice(UTF8_BOM);
            }
            out.extend_from_slice(text.as_bytes());
        } else if self.encoding == UTF_16LE || self.encoding == UTF_16BE {
            let le = self.encoding == UTF_16LE;
            if self.bom {
                out.extend_from_slice(if le { b"\xFF\xFE" } else { b"\xFE\xFF" });
            }
            for unit in text.encode_utf16() {
                out.extend_from_slice(&if le {
                    unit.to_le_bytes()
                } else {
                    unit.to_be_bytes()
                });
            }
        } else {
            let (bytes, _, had_errors) = self.encoding.encode(text);
            if had_errors {
                return Err(EncodeError {
                    encoding: self.encoding.name(),
                });
            }
            out.extend_from_slice(&bytes);
        }
        Ok(out)
    }

    /// Whether the file is plain UTF-8 (with or without a BOM).
    pub fn is_utf8(&self) -> bool {
        self.encoding == UTF_8
    }
}

// ---------------------------------------------------------------------------
// Binary detection

/// Extensions of files that are binary whatever their first bytes look like.
pub const BINARY_EXTENSIONS: &[&str] = &[
    "zip", "tar", "gz", "tgz", "bz2", "xz", "zst", "7z", "rar", "jar", "war", "ear", "exe", "dll",
    "so", "dylib", "a", "lib", "o", "obj", "class", "pyc", "pyo", "wasm", "bin", "dat", "iso",
    "img", "dmg", "deb", "rpm", "apk", "ipa", "doc", "docx", "xls", "xlsx", "ppt", "pptx", "odt",
    "ods", "odp", "sqlite", "db", "mp3", "mp4", "avi", "mov", "mkv", "wav", "flac", "ogg", "ttf",
    "otf", "woff", "woff2", "eot", "ico", "bmp", "tif", "tiff", "psd", "pdf",
];

/// Whether `path`'s extension is in [`BINARY_EXTENSIONS`] (case-insensitive).
pub fn has_binary_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| BINARY_EXTENSIONS.iter().any(|b| b.eq_ignore_ascii_case(e)))
}

/// Whether the first bytes of a file look binary: a NUL byte, or more than
/// 30 % control bytes (other than tab, line feed, form feed, carriage return,
/// backspace and escape). A UTF-16 byte order mark means text.
pub fn looks_binary(sample: &[u8]) -> bool {
    if sample.starts_with(b"\xFF\xFE") || sample.starts_with(b"\xFE\xFF") {
        return false;
    }
    if sample.contains(&0) {
        return true;
    }
    if sample.is_empty() {
        return false;
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\t' | b'\n' | b'\x0C' | b'\r' | b'\x08' | 0x1B))
        .count();
    control * 10 > sample.len() * 3
}

// ---------------------------------------------------------------------------
// Atomic writes

/// The model-facing refusal for an existing regular file that must not be
/// changed in place, `None` when it may be (or does not exist).
///
/// A file is read-only when its mode has no write bit at all (`0444`: the
/// owner marked it so, and root must not ignore that either) or when this
/// process could not open it for writing (`access(W_OK)`). An atomic write
/// renames a new file over the old one, which only needs the folder to be
/// writable, so without this check a read-only file would be replaced.
pub fn read_only(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let mode = meta.permissions().mode() & 0o777;
    let writable =
        mode & 0o222 != 0 && rustix::fs::access(path, rustix::fs::Access::WRITE_OK).is_ok();
    (!writable).then(|| read_only_message(&path.display().to_string(), mode))
}

/// The refusal [`read_only`] gives (and the tools' write path, which checks
/// through the folder handle): `shown` is the file as named to the model.
pub(crate) fn read_only_message(shown: &str, mode: u32) -> String {
    format!(
        "File {shown} is read-only (mode {:04o}); it was not changed. Make it writable first \
         (for example with `chmod u+w`) if it should be changed.",
        mode & 0o777
    )
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder,
/// flushed to disk, then renamed over `path`. Parent folders are created; an
/// existing file's permissions are kept. Readers see the old or the new
/// content, never a mix; a crash leaves the old file intact. For hosts (it
/// resolves `path` as given, e.g. to rewind a [`ChangeLog`]); the tools
/// write through the workspace's folder handles instead.
///
/// # Errors
/// `PermissionDenied` with [`read_only`]'s message when `path` is a
/// read-only file; any I/O error; the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    if let Some(message) = read_only(path) {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, message));
    }
    fs::create_dir_all(parent)?;
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).ok().map(|m| m.permissions().mode())
    };
    let dir = rustix::fs::open(
        parent,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    crate::fs::atomic::write_at(std::os::fd::AsFd::as_fd(&dir), name, bytes, mode)
}

// ---------------------------------------------------------------------------
// Change snapshots

/// One change a tool made to a file, for a host that wants to rewind a turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The file (canonical path).
    pub path: PathBuf,
    /// The content before the change; `None` when the file did not exist, or
    /// existed but could not be read (then `existed` is `true`).
    pub before: Option<Vec<u8>>,
    /// Whether the file existed before the change.
    pub existed: bool,
    /// The content after the change; `None` when the file was deleted.
    pub after: Option<Vec<u8>>,
}

impl Change {
    /// The file existed but its old content could not be read, so this change
    /// cannot be undone by restoring it.
    pub fn before_unreadable(&self) -> bool {
        self.existed && self.before.is_none()
    }
}

/// Receives every [`Change`] the built-in tools make.
pub trait SnapshotHook: Send + Sync {
    /// Called after a change was written to disk.
    fn record(&self, change: &Change);
}

/// The snapshot hook of a context: store one with
/// `ctx.with_state(Snapshots::new(hook))`; without it changes are not recorded.
#[derive(Clone)]
pub struct Snapshots(pub Arc<dyn SnapshotHook>);

impl Snapshots {
    /// Wraps a hook for [`ToolContext::with_state`].
    pub fn new(hook: impl SnapshotHook + 'static) -> Self {
        Self(Arc::new(hook))
    }
}

impl fmt::Debug for Snapshots {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Snapshots(..)")
    }
}

/// A ready-made [`SnapshotHook`] that keeps every change in memory and can undo them.
///
/// ```
/// use std::sync::Arc;
/// use tool_builtins::fsutil::{ChangeLog, Snapshots};
/// use tool_core::ToolContext;
///
/// let log = Arc::new(ChangeLog::default());
/// let ctx = ToolContext::new().with_state(Snapshots(log.clone()));
/// assert!(log.changes().is_empty());
/// ```
#[derive(Debug, Default)]
pub struct ChangeLog {
    changes: Mutex<Vec<Change>>,
}

impl ChangeLog {
    /// Every change recorded so far, oldest first.
    pub fn changes(&self) -> Vec<Change> {
        self.changes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// Removes and returns every change recorded so far.
    pub fn take(&self) -> Vec<Change> {
        std::mem::take(
            &mut *self
                .changes
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }

    /// Undoes every recorded change, newest first, and forgets them: files
    /// that did not exist are removed, others get their old content back.
    ///
    /// # Errors
    /// The first I/O error, or `InvalidData` for a change whose old content
    /// was unreadable (that file is left as it is; the rest are undone).
    pub fn rewind(&self) -> io::Result<()> {
        let mut first_err = None;
        for change in self.take().into_iter().rev() {
            let r = match (&change.before, change.existed) {
                (Some(old), _) => write_atomic(&change.path, old),
                (None, false) => match fs::remove_file(&change.path) {
                    Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
                    r => r,
                },
                (None, true) => Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "the old content of {} was not readable",
                        change.path.display()
                    ),
                )),
            };
            if let Err(e) = r {
                first_err.get_or_insert(e);
            }
        }
        first_err.map_or(Ok(()), Err)
    }
}

impl SnapshotHook for ChangeLog {
    fn record(&self, change: &Change) {
        self.changes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .push(change.clone());
    }
}

/// The old state of a file, as captured before changing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Before {
    /// The old bytes, when the file existed and could be read.
    pub content: Option<Vec<u8>>,
    /// Whether the file existed.
    pub existed: bool,
}

impl Before {
    /// Reads the current state of `path`. A file that exists but cannot be
    /// read is `existed: true, content: None`, never "did not exist".
    pub fn capture(path: &Path) -> Self {
        match fs::read(path) {
            Ok(bytes) => Self {
                content: Some(bytes),
                existed: true,
            },
            Err(_) => Self {
                content: None,
                existed: fs::symlink_metadata(path).is_ok(),
            },
        }
    }

    /// A state known without reading again (the caller already holds the bytes).
    pub fn known(content: Option<Vec<u8>>) -> Self {
        Self {
            existed: content.is_some(),
            content,
        }
    }
}

/// Whether the context has a snapshot hook (so the old content is worth keeping).
pub fn wants_snapshots(ctx: &ToolContext) -> bool {
    ctx.state::<Snapshots>().is_some()
}

/// Sends a change to the context's snapshot hook, if it has one (the new
/// content is copied only then).
pub fn record_change(ctx: &ToolContext, path: &Path, before: Before, after: Option<&[u8]>) {
    if let Some(state) = ctx.state::<Snapshots>() {
        let snapshots: &Snapshots = &state;
        snapshots.0.record(&Change {
            path: path.to_path_buf(),
            before: before.content,
            existed: before.existed,
            after: after.map(<[u8]>::to_vec),
        });
    }
}

// ---------------------------------------------------------------------------
// Diffs

/// Lines of context around each change in a unified diff.
const DIFF_CONTEXT: usize = 3;

/// Bytes of unified diff a tool keeps in its metadata (64 KiB): a rewrite
/// of a huge file must not put the whole file, twice, into every result.
pub const DIFF_LIMIT: usize = 64 * 1024;

/// Cuts `unified` to at most `limit` bytes on a line boundary and appends a
/// note saying how many lines were left out; `true` when it cut.
pub fn cap_diff(unified: &mut String, limit: usize) -> bool {
    if unified.len() <= limit {
        return false;
    }
    let keep = unified.as_bytes()[..limit]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    let omitted = memchr::memchr_iter(b'\n', &unified.as_bytes()[keep..]).count()
        + usize::from(!unified.ends_with('\n'));
    unified.truncate(keep);
    unified.push_str(&truncation_note(omitted, limit));
    true
}

fn truncation_note(omitted_lines: usize, limit: usize) -> String {
    format!(
        "... (diff truncated to {} KiB: {omitted_lines} more lines not shown)\n",
        limit / 1024
    )
}

/// A unified diff and its line counts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diff {
    /// The unified diff text (`---`/`+++` header, `@@` hunks); empty when nothing changed.
    pub unified: String,
    /// Lines added.
    pub additions: usize,
    /// Lines removed.
    pub deletions: usize,
    /// `unified` was cut at [`DIFF_LIMIT`] (a note at its end says so);
    /// `additions` and `deletions` still count every line.
    pub truncated: bool,
}

impl Diff {
    /// Diffs `old` → `new` line by line, three lines of context, headed with `path`.
    ///
    /// The common prefix and suffix are skipped before `similar` runs, so a
    /// small edit of a huge file costs a scan of it, not a diff of every line.
    /// The text is cut at [`DIFF_LIMIT`] bytes (see [`Diff::compute_with_limit`]).
    pub fn compute(path: &str, old: &str, new: &str) -> Self {
        Self::compute_with_limit(path, old, new, DIFF_LIMIT)
    }

    /// [`Diff::compute`] keeping at most `limit` bytes of unified text, cut on
    /// a line boundary, plus a note with the number of lines left out. Lines
    /// past the limit are counted, never stored.
    pub fn compute_with_limit(path: &str, old: &str, new: &str, limit: usize) -> Self {
        let (start, old_end, new_end) = changed_region(old, new);
        let first_line = memchr::memchr_iter(b'\n', &old.as_bytes()[..start]).count();
        let diff = similar::TextDiff::from_lines(&old[start..old_end], &new[start..new_end]);
        let mut additions = 0;
        let mut deletions = 0;
        let mut unified = String::new();
        let mut omitted = 0usize;
        let mut first_group = true;
        // Appends one line (or a line and its "no newline" marker) while it fits.
        let mut push = |unified: &mut String, line: &str, lines: usize| {
            if omitted == 0 && unified.len() + line.len() <= limit {
                unified.push_str(line);
            } else {
                omitted += lines;
            }
        };
        for group in diff.grouped_ops(DIFF_CONTEXT) {
            let (Some(first), Some(last)) = (group.first(), group.last()) else {
                continue;
            };
            let old_range = first.old_range().start..last.old_range().end;
            let new_range = first.new_range().start..last.new_range().end;
            if first_group {
                first_group = false;
                push(&mut unified, &format!("--- {path}\n+++ {path}\n"), 2);
            }
            let header = format!(
                "@@ -{} +{} @@\n",
                hunk_range(first_line + old_range.start, old_range.len()),
                hunk_range(first_line + new_range.start, new_range.len())
            );
            push(&mut unified, &header, 1);
            for op in &group {
                for change in diff.iter_changes(op) {
                    let sign = match change.tag() {
                        similar::ChangeTag::Equal => ' ',
                        similar::ChangeTag::Delete => {
                            deletions += 1;
                            '-'
                        }
                        similar::ChangeTag::Insert => {
                            additions += 1;
                            '+'
                        }
                    };
                    let mut line = String::with_capacity(change.value().len() + 1);
                    line.push(sign);
                    line.push_str(change.value());
                    let mut lines = 1;
                    if change.missing_newline() {
                        line.push_str("\n\\ No newline at end of file\n");
                        lines = 2;
                    }
                    push(&mut unified, &line, lines);
                }
            }
        }
        let truncated = omitted > 0;
        if truncated {
            unified.push_str(&truncation_note(omitted, limit));
        }
        Self {
            unified,
            additions,
            deletions,
            truncated,
        }
    }
}

/// `start,len` of a unified-diff hunk header (1-based; an empty range names the line before it).
fn hunk_range(start: usize, len: usize) -> String {
    if len == 0 {
        format!("{start},0")
    } else {
        format!("{},{len}", start + 1)
    }
}

/// The byte range that differs between `old` and `new`, widened to whole
/// lines plus [`DIFF_CONTEXT`] lines on each side: `(start, old_end, new_end)`,
/// `start` being the same in both.
fn changed_region(old: &str, new: &str) -> (usize, usize, usize) {
    let (ob, nb) = (old.as_bytes(), new.as_bytes());
    let same = ob.iter().zip(nb).take_while(|(a, b)| a == b).count();
    // Back to the start of the line, then DIFF_CONTEXT more lines.
    let mut start = ob[..same]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    for _ in 0..DIFF_CONTEXT {
        if start == 0 {
            break;
        }
        start = ob[..start - 1]
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
    }
    let max_suffix = (ob.len() - same).min(nb.len() - same);
    let mut suffix = ob
        .iter()
        .rev()
        .zip(nb.iter().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    // The suffix must start a line in both texts: inside the common part,
    // move to just after its first line break.
    let at_line_start = |bytes: &[u8], pos: usize| pos == 0 || bytes[pos - 1] == b'\n';
    if suffix > 0 && !(at_line_start(ob, ob.len() - suffix) && at_line_start(nb, nb.len() - suffix))
    {
        let from = ob.len() - suffix;
        suffix = ob[from..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(0, |i| suffix - i - 1);
    }
    // Give back DIFF_CONTEXT lines of the suffix as context.
    let mut old_end = ob.len() - suffix;
    for _ in 0..DIFF_CONTEXT {
        if old_end == ob.len() {
            break;
        }
        old_end = ob[old_end..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(ob.len(), |i| old_end + i + 1);
    }
    let new_end = nb.len() - (ob.len() - old_end);
    (start, old_end, new_end)
}

/// A unified diff of `old` → `new` with three lines of context, headed with `path`.
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    Diff::compute(path, old, new).unified
}

/// Lines added and removed between `old` and `new`.
pub fn diff_stats(old: &str, new: &str) -> (usize, usize) {
    let d = Diff::compute("", old, new);
    (d.additions, d.deletions)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

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

    #[test]
    fn decode_keeps_bom_and_detects_legacy_encodings() {
        let t = TextFile::decode(b"\xEF\xBB\xBFx = 1\r\n").unwrap();
        assert!(t.bom && t.is_utf8());
        assert_eq!(t.text, "x = 1\r\n");
        assert_eq!(t.line_ending, LineEnding::CrLf);
        assert_eq!(t.encode(&t.text).unwrap(), b"\xEF\xBB\xBFx = 1\r\n");

        let latin1 = "caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9} ".repeat(50);
        let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&latin1);
        let t = TextFile::decode(&bytes).unwrap();
        assert_eq!(t.text, latin1);
        assert!(!t.text.contains('\u{FFFD}'));
        assert!(!t.is_utf8());
        assert_eq!(t.encode("café").unwrap(), b"caf\xE9");
        assert!(t.encode("日本").is_err());
    }

    #[test]
    fn utf16_with_bom_round_trips() {
        let mut bytes = vec![0xFF, 0xFE];
        for u in "hé\n".encode_utf16() {
            bytes.extend_from_slice(&u.to_le_bytes());
        }
        let t = TextFile::decode(&bytes).unwrap();
        assert_eq!(t.text, "hé\n");
        assert_eq!(t.encode(&t.text).unwrap(), bytes);
        assert!(!looks_binary(&bytes));
    }

    #[test]
    fn utf8_validator_handles_split_characters() {
        let text = "a\u{e9}\u{2014}\u{1F600}z".as_bytes();
        for split in 0..=text.len() {
            for second in split..=text.len() {
                let mut v = Utf8Validator::new();
                v.feed(&text[..split]);
                v.feed(&text[split..second]);
                v.feed(&text[second..]);
                assert!(v.is_valid(), "split at {split}/{second}");
            }
        }
        let mut v = Utf8Validator::new();
        v.feed(b"ok \xC3");
        assert!(!v.is_valid() && !v.failed(), "unfinished, not yet wrong");
        v.feed(b"(");
        assert!(v.failed());
        let mut v = Utf8Validator::new();
        v.feed(b"caf\xE9 latin-1\n");
        assert!(v.failed());
    }

    #[test]
    fn binary_detection() {
        assert!(looks_binary(b"abc\0def"));
        assert!(looks_binary(&[1, 2, 3, 4, b'a']));
        assert!(!looks_binary(b"plain text\n\twith tabs\r\n"));
        assert!(!looks_binary(b""));
        assert!(has_binary_extension(Path::new("x/notes.ZIP")));
        assert!(!has_binary_extension(Path::new("x/notes.txt")));
    }

    #[test]
    fn atomic_write_keeps_permissions_and_leaves_no_temp() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("script.sh");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        write_atomic(&p, b"new").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o751
        );
        let names: Vec<_> = fs::read_dir(d.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("script.sh")]);
        write_atomic(&d.path().join("a/b/c.txt"), b"deep").unwrap();
        assert_eq!(fs::read(d.path().join("a/b/c.txt")).unwrap(), b"deep");
    }

    #[test]
    fn atomic_write_refuses_read_only_files() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("locked.txt");
        fs::write(&p, "keep").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
        let e = write_atomic(&p, b"new").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
        assert!(e.to_string().contains("is read-only (mode 0444)"), "{e}");
        assert_eq!(fs::read(&p).unwrap(), b"keep");
        assert!(read_only(&d.path().join("missing")).is_none());
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        assert!(read_only(&p).is_none());
    }

    #[test]
    fn files_with_names_near_the_length_limit_can_be_written() {
        let d = tempfile::tempdir().unwrap();
        for name in ["n".repeat(255), format!("{}.txt", "é".repeat(125))] {
            let p = d.path().join(&name);
            write_atomic(&p, b"first").unwrap();
            write_atomic(&p, b"second").unwrap();
            assert_eq!(fs::read(&p).unwrap(), b"second");
        }
        assert_eq!(
            fs::read_dir(d.path()).unwrap().count(),
            2,
            "no temp file left"
        );
    }

    #[test]
    fn before_capture_distinguishes_missing_from_unreadable() {
        let d = tempfile::tempdir().unwrap();
        let missing = Before::capture(&d.path().join("nope"));
        assert_eq!(
            missing,
            Before {
                content: None,
                existed: false
            }
        );
        // A directory exists but cannot be read as a file.
        let dir = Before::capture(d.path());
        assert!(dir.existed && dir.content.is_none());
        let c = Change {
            path: d.path().into(),
            before: dir.content,
            existed: dir.existed,
            after: None,
        };
        assert!(c.before_unreadable());
    }

    #[test]
    fn change_log_rewinds() {
        let d = tempfile::tempdir().unwrap();
        let a = d.path().join("a.txt");
        let b = d.path().join("b.txt");
        fs::write(&a, "old").unwrap();
        let log = Arc::new(ChangeLog::default());
        let ctx = ToolContext::new().with_state(Snapshots(log.clone()));
        write_atomic(&a, b"new").unwrap();
        record_change(&ctx, &a, Before::known(Some(b"old".to_vec())), Some(b"new"));
        write_atomic(&b, b"created").unwrap();
        record_change(&ctx, &b, Before::known(None), Some(b"created"));
        assert_eq!(log.changes().len(), 2);
        log.rewind().unwrap();
        assert_eq!(fs::read(&a).unwrap(), b"old");
        assert!(!b.exists());
    }

    #[test]
    fn diffs_of_small_edits_in_large_texts_match_a_full_diff() {
        let old: String = (0..2000).map(|i| format!("line {i}\n")).collect();
        let cases = [
            old.replace("line 1000\n", "line 1000 changed\n"),
            old.replace("line 0\n", ""),
            old.replace("line 1999\n", "line 1999\nextra"),
            old.replace("line 5\n", "a\nb\n").replace("line 1990\n", ""),
            String::new(),
            old.clone(),
        ];
        for new in cases {
            let full = similar::TextDiff::from_lines(old.as_str(), new.as_str())
                .unified_diff()
                .context_radius(3)
                .header("f", "f")
                .to_string();
            let ours = Diff::compute("f", &old, &new);
            assert_eq!(ours.unified, full, "for {:?}", &new[..new.len().min(40)]);
        }
        let d = Diff::compute("f", "", "a\nb\n");
        assert_eq!((d.additions, d.deletions), (2, 0));
        assert!(d.unified.contains("@@ -0,0 +1,2 @@"), "{}", d.unified);
    }

    #[test]
    fn large_diffs_are_cut_on_a_line_boundary() {
        let new: String = (0..20_000).map(|i| format!("line {i}\n")).collect();
        let d = Diff::compute("f", "", &new);
        assert!(d.truncated);
        assert_eq!((d.additions, d.deletions), (20_000, 0));
        assert!(d.unified.len() <= DIFF_LIMIT + 100, "{}", d.unified.len());
        let (body, note) = d.unified.rsplit_once("... (diff truncated").unwrap();
        assert!(body.ends_with('\n'));
        let shown = body.lines().filter(|l| l.starts_with('+')).count() - 1; // minus "+++"
        assert!(
            note.contains(&format!(" {} more lines not shown", 20_000 - shown)),
            "{note}"
        );
        assert!(!Diff::compute("f", "a\n", "b\n").truncated);

        let mut text = "one\ntwo\nthree\n".to_owned();
        assert!(cap_diff(&mut text, 9));
        assert_eq!(
            text,
            "one\ntwo\n... (diff truncated to 0 KiB: 1 more lines not shown)\n"
        );
        let mut short = "x\n".to_owned();
        assert!(!cap_diff(&mut short, 9));
    }

    #[test]
    fn diffs() {
        let d = unified_diff("f.txt", "a\nb\n", "a\nc\n");
        assert!(d.contains("-b\n+c\n"), "{d}");
        assert_eq!(diff_stats("a\nb\n", "a\nc\nd\n"), (2, 1));
    }
}
