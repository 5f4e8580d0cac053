//! `grep_content`: search file contents with a regular expression.
//!
//! Built on ripgrep's library crates: `grep-regex` compiles the pattern (Rust
//! regex syntax, line-oriented), `grep-searcher` reads each file with one
//! reusable buffer per thread and skips binary files (a NUL byte), and the
//! `ignore` parallel walker feeds it files under the rules of
//! [`crate::search`]. Each open file is `fstat`ed once, for its size (the
//! read at its end is spared) and its time (the newest-first order). Memory
//! is bounded: each file keeps at most the shown number of lines, a file
//! that can no longer reach the output (older than the files that already
//! fill it) is only counted, without numbering its lines or keeping their
//! text, and files pushed out by newer ones are dropped at once. Lines are searched up to [`SearchConfig::max_line_bytes`]
//! (4 MiB): `LineCap` passes the rest of a longer line by without handing
//! it to the searcher, so its buffer never holds more than that (the
//! searcher's own `heap_limit` backs this up), and the output names every
//! line so cut. A file whose search fails midway keeps the matches found so
//! far and is named as searched only in part.

use std::cmp::Reverse;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use rustix::fs::FileType;
use tool_core::{ErrorKind, ToolContext, ToolResult, tool};

use crate::search::{self, GlobFilter, SearchConfig};
use crate::workspace::{Workspace, workspace_of};

/// Searches file contents with a regular expression.
///
/// Fast on any codebase size. Supports full regex syntax (`log.*Error`,
/// `fn\s+\w+`). Filter files with `include` (`*.js`, `*.{ts,tsx}`). Returns
/// the matching lines grouped by file, files with the newest modification
/// first, at most 100 lines. Binary files are skipped.
///
/// # Arguments
/// * `pattern` - The regular expression to search for in file contents.
/// * `path` - The folder or file to search in, relative to the workspace
///   root or absolute (default: the workspace root).
/// * `include` - File pattern to search (e.g. `*.js`, `*.{ts,tsx}`).
#[tool(kind = "read", tags = ["fs", "search"], read_only, idempotent, concurrency_safe)]
pub fn grep_content(
    pattern: String,
    path: Option<String>,
    include: Option<String>,
    context: &ToolContext,
) -> ToolResult {
    let config = SearchConfig::from_context(context);
    let ws = match workspace_of(context) {
        Ok(ws) => ws,
        Err(result) => return result,
    };
    if pattern.is_empty() {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            "The pattern is empty. Give a regular expression to search for.",
        );
    }
    if pattern.len() > search::MAX_REGEX_BYTES {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "The pattern is {} bytes long; the limit is {} bytes. Search for a shorter \
                 expression (or several, one call each). Pattern: {}",
                pattern.len(),
                search::MAX_REGEX_BYTES,
                crate::fs::clip(&pattern)
            ),
        );
    }
    let (matcher, crlf) = match build_matcher(&pattern, true) {
        Ok(m) => (m, true),
        // CRLF mode refuses a pattern that names `\r` itself (`\r$`, to
        // find CRLF lines): that one searches with `\n` lines instead.
        Err(e) => match build_matcher(&pattern, false) {
            Ok(m) => (m, false),
            Err(_) => {
                return ToolResult::error(
                    ErrorKind::InvalidArguments,
                    format!(
                        "Invalid regular expression `{}`: {}",
                        crate::fs::clip(&pattern),
                        crate::fs::clip(&e.to_string())
                    ),
                );
            }
        },
    };
    let filter = match include.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
        None => None,
        Some(glob) => match GlobFilter::new(glob) {
            Ok(f) => Some(f),
            Err(message) => return ToolResult::error(ErrorKind::InvalidArguments, message),
        },
    };
    let read_roots = crate::workspace::read_roots(context);
    let (target, file_type) = match path.as_deref().filter(|p| !p.trim().is_empty()) {
        None => (ws.root().to_path_buf(), Some(FileType::Directory)),
        Some(p) => match crate::workspace::resolve_for_read(context, &ws, p) {
            Ok(t) if t.exists() => {
                let file_type = t.file_type();
                (t.path, file_type)
            }
            Ok(_) => return search::not_found(&ws.absolute(p)),
            Err(e) => return e.to_result(),
        },
    };
    let is_dir = file_type == Some(FileType::Directory);
    // Never open a pipe or device: reading it could block forever.
    if !is_dir && file_type != Some(FileType::RegularFile) {
        return ToolResult::failed(format!(
            "Cannot search {}: it is not a regular file or folder (a device, socket or pipe).",
            target.display()
        ));
    }
    let job = Job {
        matcher,
        crlf,
        filter,
        base: if is_dir {
            target.clone()
        } else {
            target
                .parent()
                .map_or_else(|| target.clone(), Path::to_path_buf)
        },
        ws: (*ws).clone(),
        read_roots,
        limit: config.result_limit,
        max_line_chars: config.max_line_chars,
        max_line_bytes: config.max_line_bytes.max(1),
        hits: Mutex::new(Hits::new(config.result_limit)),
        inaccessible: AtomicBool::new(false),
        incomplete: Mutex::new(Incomplete::default()),
    };
    if is_dir {
        run_walk(&ws, &target, &job, config.threads);
    } else {
        // A file named explicitly is searched whatever the ignore files say.
        let mut searchers = Searchers::new(job.crlf, job.max_line_bytes);
        job.search_file(&mut searchers, &job.matcher, &target);
    }
    job.render(&pattern)
}

/// The matcher for `pattern`. As ripgrep does, `^` and `$` match at line
/// boundaries (`multi_line`); with `crlf` (ripgrep's `--crlf`) they match
/// around `\r\n` too and `.` never matches `\r`, so a pattern anchored on a
/// line as `read_file` shows it finds that line in a CRLF file, and LF files
/// search the same. Without `crlf`, lines end at `\n` and a `\r` before it
/// is part of the line. The searcher must use the same line terminator
/// ([`new_searcher`]).
fn build_matcher(pattern: &str, crlf: bool) -> Result<RegexMatcher, grep_regex::Error> {
    let mut builder = RegexMatcherBuilder::new();
    // A compiled program of at most 16 MiB (the default is 100 MiB, which a
    // pattern just under the length limit can fill, slowly).
    builder
        .multi_line(true)
        .size_limit(16 << 20)
        .dfa_size_limit(16 << 20);
    if crlf {
        builder.crlf(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern)
}

/// A searcher whose line terminator is the matcher's: with `crlf` lines end
/// at `\n` and a `\r` before it belongs to the terminator. Its line buffer
/// may grow to `max_line_bytes` plus two read chunks ([`heap_limit`]); the
/// [`LineCap`] reader never hands it a longer line, so the limit is a
/// backstop: reaching it fails the file's search, which the output reports.
/// With `line_numbers` off it only finds matching lines, for files that are
/// only counted: numbering lines is a pass over all the text.
fn new_searcher(crlf: bool, max_line_bytes: usize, line_numbers: bool) -> Searcher {
    let terminator = if crlf {
        LineTerminator::crlf()
    } else {
        LineTerminator::byte(b'\n')
    };
    SearcherBuilder::new()
        .line_terminator(terminator)
        .line_number(line_numbers)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .heap_limit(Some(heap_limit(max_line_bytes)))
        .build()
}

/// One thread's searchers: one numbering lines, for files that may be shown,
/// and one without, for files that can only be counted.
struct Searchers {
    numbered: Searcher,
    counting: Searcher,
}

impl Searchers {
    fn new(crlf: bool, max_line_bytes: usize) -> Self {
        Self {
            numbered: new_searcher(crlf, max_line_bytes, true),
            counting: new_searcher(crlf, max_line_bytes, false),
        }
    }
}

/// The searcher's buffer limit for lines of at most `max_line_bytes`: the
/// line (plus the one NUL [`LineCap`] may add) and room to read into.
fn heap_limit(max_line_bytes: usize) -> usize {
    max_line_bytes.saturating_add(2 * READ_CHUNK)
}

/// Most bytes [`LineCap`] reads at once: 64 KiB, the searcher's own buffer
/// size, so that the cheap path (no line can reach the cap within one read)
/// holds even after the buffer grew for a long line.
const READ_CHUNK: usize = 64 * 1024;

/// Most cut lines named per file (the rest are counted).
const MAX_CUT_LINES_PER_FILE: usize = 10;

/// Most cut lines and partly searched files named in the output (the rest are counted).
const MAX_NOTED: usize = 10;

/// One search: the compiled pattern, the include filter and the shared results.
struct Job {
    matcher: RegexMatcher,
    /// The matcher is in CRLF mode ([`build_matcher`]).
    crlf: bool,
    filter: Option<GlobFilter>,
    /// The folder `include` patterns are relative to.
    base: PathBuf,
    /// Every file is opened beneath one of the workspace's folder handles.
    ws: Workspace,
    /// Read-only folders of this call beyond the workspace's own.
    read_roots: Vec<PathBuf>,
    limit: usize,
    max_line_chars: usize,
    /// Longest line searched, in bytes ([`LineCap`]).
    max_line_bytes: usize,
    hits: Mutex<Hits>,
    inaccessible: AtomicBool,
    /// Lines cut at `max_line_bytes` and files searched only in part.
    incomplete: Mutex<Incomplete>,
}

/// What the output must admit was not searched.
#[derive(Default)]
struct Incomplete {
    /// Lines cut at the cap: file and line number (the first [`MAX_NOTED`]).
    cut_lines: Vec<(PathBuf, u64)>,
    /// All cut lines.
    cut_count: u64,
    /// Files whose search stopped midway, with the reason (the first [`MAX_NOTED`]).
    partial: Vec<(PathBuf, String)>,
    /// All such files.
    partial_count: u64,
}

impl Job {
    /// Searches one file and records its matches (binary files are skipped).
    fn search_file(&self, searchers: &mut Searchers, matcher: &RegexMatcher, path: &Path) {
        if let Some(filter) = &self.filter {
            let relative = path.strip_prefix(&self.base).unwrap_or(path);
            if !filter.is_match(relative) {
                return;
            }
        }
        let Ok(file) = self.ws.open_walked(path, &self.read_roots) else {
            self.inaccessible.store(true, Ordering::Relaxed);
            return;
        };
        // One `fstat` gives the size (so the read at the end is spared) and
        // the time a match needs for the order.
        let Ok(stat) = rustix::fs::fstat(&file) else {
            self.inaccessible.store(true, Ordering::Relaxed);
            return;
        };
        let modified = modified_of(&stat);
        // A file older than those already filling the output is only counted.
        let collect = self
            .hits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .could_show(modified, path);
        let searcher = if collect {
            &mut searchers.numbered
        } else {
            &mut searchers.counting
        };
        let mut sink = FileSink {
            job: self,
            lines: Vec::new(),
            count: 0,
            collect,
            modified,
            cut_marks: CutMarks::default(),
            binary: false,
        };
        // A size of 0 is not trusted: some file systems (procfs, sysfs)
        // report it for files that do have content.
        let size = u64::try_from(stat.st_size).ok().filter(|&s| s > 0);
        let mut reader = LineCap::new(&file, self.max_line_bytes, size);
        sink.cut_marks = reader.cut_marks.clone();
        let searched = searcher.search_reader(matcher, &mut reader, &mut sink);
        if sink.binary {
            return;
        }
        if searched.is_err() || reader.cut_count > 0 {
            let mut incomplete = self
                .incomplete
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if let Err(e) = &searched {
                incomplete.partial_count += 1;
                if incomplete.partial.len() < MAX_NOTED {
                    incomplete
                        .partial
                        .push((path.to_path_buf(), crate::fs::clip(&e.to_string())));
                }
            }
            incomplete.cut_count += reader.cut_count;
            let room = MAX_NOTED.saturating_sub(incomplete.cut_lines.len());
            if room > 0 {
                drop(incomplete);
                let numbers = line_numbers(
                    &file,
                    &reader.cut_starts[..reader.cut_starts.len().min(room)],
                );
                let mut incomplete = self
                    .incomplete
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                for number in numbers {
                    if incomplete.cut_lines.len() < MAX_NOTED {
                        incomplete.cut_lines.push((path.to_path_buf(), number));
                    }
                }
            }
        }
        if sink.count == 0 {
            return;
        }
        let (count, lines, modified) = (sink.count, sink.lines, sink.modified);
        let mut hits = self
            .hits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        hits.add(path.to_path_buf(), modified, count, lines);
    }

    /// The notes on lines cut at the cap and files searched only in part,
    /// each starting with a blank line; empty when everything was searched.
    fn incomplete_notes(incomplete: &Incomplete, max_line_bytes: usize) -> String {
        let mut out = String::new();
        if incomplete.cut_count > 0 {
            let cap = byte_size(max_line_bytes);
            let named: Vec<String> = incomplete
                .cut_lines
                .iter()
                .map(|(path, line)| format!("{}:{line}", path.display()))
                .collect();
            let more = incomplete.cut_count - named.len() as u64;
            out.push_str(&format!(
                "\n\n(Lines longer than {cap} were searched only in their first {cap}; \
                 matches after that point are not found or counted: {}",
                named.join(", ")
            ));
            if more > 0 {
                out.push_str(&format!(" and {more} more"));
            }
            out.push(')');
        }
        if incomplete.partial_count > 0 {
            let named: Vec<String> = incomplete
                .partial
                .iter()
                .map(|(path, why)| format!("{} ({why})", path.display()))
                .collect();
            let more = incomplete.partial_count - named.len() as u64;
            out.push_str(&format!(
                "\n\n(Some files were searched only in part; their matches after the failure \
                 point are missing: {}",
                named.join(", ")
            ));
            if more > 0 {
                out.push_str(&format!(" and {more} more"));
            }
            out.push(')');
        }
        out
    }

    fn render(self, pattern: &str) -> ToolResult {
        let hits = self
            .hits
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let inaccessible = self.inaccessible.into_inner();
        let incomplete = self
            .incomplete
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let notes = Self::incomplete_notes(&incomplete, self.max_line_bytes);
        let total = hits.total;
        if total == 0 {
            let mut output = "No files found".to_owned();
            output.push_str(&notes);
            if inaccessible {
                output.push_str("\n\n(Some paths were inaccessible and skipped)");
            }
            return with_incomplete_metadata(
                ToolResult::ok(output)
                    .with_title(pattern)
                    .with_metadata("matches", 0)
                    .with_metadata("truncated", false),
                &incomplete,
            );
        }
        let truncated = total > self.limit as u64;
        let mut out = format!("Found {total} matches");
        if truncated {
            out.push_str(&format!(" (showing first {})", self.limit));
        }
        let mut shown = 0usize;
        for ((_, path), file) in &hits.files {
            if shown >= self.limit {
                break;
            }
            out.push_str("\n\n");
            out.push_str(&path.to_string_lossy());
            out.push(':');
            for (number, text) in file.lines.iter().take(self.limit - shown) {
                out.push_str(&format!("\n  Line {number}: {text}"));
                shown += 1;
            }
        }
        if truncated {
            out.push_str(&format!(
                "\n\n(Results are truncated: showing {} of {total} matches. Consider using a more specific path or pattern.)",
                self.limit
            ));
        }
        out.push_str(&notes);
        if inaccessible {
            out.push_str("\n\n(Some paths were inaccessible and skipped)");
        }
        with_incomplete_metadata(
            ToolResult::ok(out)
                .with_title(pattern)
                .with_metadata("matches", total)
                .with_metadata("truncated", truncated),
            &incomplete,
        )
    }
}

/// Adds `cut_lines` (lines searched only up to the cap) and `partial_files`
/// (files whose search stopped midway) to `result` when either is non-zero.
fn with_incomplete_metadata(result: ToolResult, incomplete: &Incomplete) -> ToolResult {
    let mut result = result;
    if incomplete.cut_count > 0 {
        result = result.with_metadata("cut_lines", incomplete.cut_count);
    }
    if incomplete.partial_count > 0 {
        result = result.with_metadata("partial_files", incomplete.partial_count);
    }
    result
}

/// The modification time in `stat`; `None` before 1970 or past `SystemTime`'s range.
fn modified_of(stat: &rustix::fs::Stat) -> Option<SystemTime> {
    let secs = u64::try_from(stat.st_mtime).ok()?;
    let nanos = u32::try_from(stat.st_mtime_nsec).ok()?;
    SystemTime::UNIX_EPOCH.checked_add(std::time::Duration::new(secs, nanos.min(999_999_999)))
}

/// `bytes` for people: "4 MiB", "64 KiB" or "1000 bytes".
fn byte_size(bytes: usize) -> String {
    const MIB: usize = 1024 * 1024;
    if bytes >= MIB && bytes % MIB == 0 {
        format!("{} MiB", bytes / MIB)
    } else if bytes >= 1024 && bytes % 1024 == 0 {
        format!("{} KiB", bytes / 1024)
    } else {
        format!("{bytes} bytes")
    }
}

/// The line numbers (1-based) of the lines starting at `starts` (ascending
/// byte offsets) in `file`, counted by reading the file up to the last of
/// them in 64 KiB chunks. Only run for files with a cut line. A read error
/// leaves the rest at the count so far.
fn line_numbers(file: &File, starts: &[u64]) -> Vec<u64> {
    let mut numbers = Vec::with_capacity(starts.len());
    let mut buf = vec![0u8; READ_CHUNK];
    let (mut offset, mut newlines) = (0u64, 0u64);
    for &start in starts {
        while offset < start {
            let want = usize::try_from(start - offset).map_or(READ_CHUNK, |n| n.min(READ_CHUNK));
            match file.read_at(&mut buf[..want], offset) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    newlines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
                    offset += n as u64;
                }
            }
        }
        numbers.push(newlines + 1);
    }
    numbers
}

/// A reader that passes on lines of at most `cap` bytes (the terminator
/// aside): of a longer line only the first `cap` bytes, then its `\n`. The
/// rest is read and dropped, never held, except that a NUL byte in it is
/// passed on once so that binary detection still sees the file as binary.
/// Line numbers stay right: every `\n` is passed on. Records the start
/// offset of the first [`MAX_CUT_LINES_PER_FILE`] cut lines and counts all.
/// Given the file's `size` (from `fstat` at open), it reports the end once
/// that many bytes were read without asking the file again: the search sees
/// the file as it was when opened, never more of a file growing meanwhile.
struct LineCap<R> {
    inner: R,
    cap: usize,
    size: Option<u64>,
    /// Bytes of the current line passed on so far.
    run: usize,
    /// Dropping the rest of a line longer than `cap`.
    skipping: bool,
    /// Bytes read from `inner`.
    offset: u64,
    /// Offset of the current line's first byte.
    line_start: u64,
    /// Start offsets of the first cut lines, ascending.
    cut_starts: Vec<u64>,
    /// All cut lines.
    cut_count: u64,
    /// Where the first [`MAX_CUT_MARKS`] cut lines start in the text passed
    /// on (ascending), for the sink to mark them (`...`) when shown.
    cut_marks: CutMarks,
    /// Bytes dropped so far, less the NUL passed on in their place.
    dropped: u64,
    /// A dropped NUL was passed on already.
    nul_sent: bool,
}

/// Start offsets of cut lines in the text the searcher sees, shared by a
/// file's [`LineCap`] and [`FileSink`] (one thread).
type CutMarks = std::rc::Rc<std::cell::RefCell<Vec<u64>>>;

/// Most cut lines per file whose start is kept for marking them when shown;
/// past that, any matched line of the cap's full length is marked.
const MAX_CUT_MARKS: usize = 1000;

impl<R: Read> LineCap<R> {
    fn new(inner: R, cap: usize, size: Option<u64>) -> Self {
        Self {
            inner,
            cap: cap.max(1),
            size,
            run: 0,
            skipping: false,
            offset: 0,
            line_start: 0,
            cut_starts: Vec::new(),
            cut_count: 0,
            cut_marks: CutMarks::default(),
            dropped: 0,
            nul_sent: false,
        }
    }

    /// Filters the `n` bytes just read at `base` in place and returns how
    /// many were kept (at the front of `buf`).
    fn filter(&mut self, buf: &mut [u8], n: usize, base: u64) -> usize {
        let (mut pos, mut out) = (0usize, 0usize);
        while pos < n {
            if self.skipping {
                let end = memchr::memchr(b'\n', &buf[pos..n]).map_or(n, |i| pos + i);
                self.dropped += (end - pos) as u64;
                if !self.nul_sent && memchr::memchr(0, &buf[pos..end]).is_some() {
                    // At least one dropped byte precedes: `out < end`.
                    buf[out] = 0;
                    out += 1;
                    self.dropped -= 1;
                    self.nul_sent = true;
                }
                if end < n {
                    // The `\n` ends the cut line; it is passed on below.
                    self.skipping = false;
                }
                pos = end;
                continue;
            }
            let room = self.cap - self.run;
            let rest = n - pos;
            // The line's remaining room, plus its possible `\n`.
            let window = rest.min(room.saturating_add(1));
            if let Some(i) = memchr::memchr(b'\n', &buf[pos..pos + window]) {
                buf.copy_within(pos..=pos + i, out);
                out += i + 1;
                pos += i + 1;
                self.run = 0;
                self.line_start = base + pos as u64;
            } else if rest <= room {
                buf.copy_within(pos..n, out);
                out += rest;
                self.run += rest;
                pos = n;
            } else {
                buf.copy_within(pos..pos + room, out);
                out += room;
                pos += room;
                self.run = self.cap;
                self.skipping = true;
                self.cut_count += 1;
                if self.cut_starts.len() < MAX_CUT_LINES_PER_FILE {
                    self.cut_starts.push(self.line_start);
                }
                let mut marks = self.cut_marks.borrow_mut();
                if marks.len() < MAX_CUT_MARKS {
                    marks.push(self.line_start - self.dropped);
                }
            }
        }
        out
    }
}

impl<R: Read> Read for LineCap<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let mut len = buf.len().min(READ_CHUNK);
        loop {
            if let Some(size) = self.size {
                let left = size.saturating_sub(self.offset);
                len = len.min(usize::try_from(left).unwrap_or(usize::MAX));
            }
            if len == 0 {
                return Ok(0);
            }
            let n = self.inner.read(&mut buf[..len])?;
            if n == 0 {
                return Ok(0);
            }
            let base = self.offset;
            self.offset += n as u64;
            // The common case: no line can reach the cap within this read.
            if !self.skipping && self.run + n <= self.cap {
                match memchr::memrchr(b'\n', &buf[..n]) {
                    Some(i) => {
                        self.run = n - i - 1;
                        self.line_start = base + i as u64 + 1;
                    }
                    None => self.run += n,
                }
                return Ok(n);
            }
            let kept = self.filter(buf, n, base);
            if kept > 0 {
                return Ok(kept);
            }
            // All of it was the dropped rest of a long line: read on (0 would mean the end).
        }
    }
}

/// Walks `dir` in parallel, one searcher per thread.
fn run_walk(ws: &Workspace, dir: &Path, job: &Job, threads: usize) {
    let honour_ignores = !search::explicitly_ignored(ws, dir);
    let mut builder = VisitorBuilder { job };
    search::walker(ws, dir, honour_ignores, threads)
        .build_parallel()
        .visit(&mut builder);
}

struct VisitorBuilder<'s> {
    job: &'s Job,
}

impl<'s> ParallelVisitorBuilder<'s> for VisitorBuilder<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            job: self.job,
            // A clone per thread: each has its own regex cache pool, so
            // threads never contend for one.
            matcher: self.job.matcher.clone(),
            searchers: Searchers::new(self.job.crlf, self.job.max_line_bytes),
        })
    }
}

struct Visitor<'s> {
    job: &'s Job,
    matcher: RegexMatcher,
    searchers: Searchers,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                self.job
                    .search_file(&mut self.searchers, &self.matcher, entry.path());
            }
            Ok(_) => {}
            Err(e) if is_permission_error(&e) => {
                self.job.inaccessible.store(true, Ordering::Relaxed);
            }
            Err(_) => {} // symlink loops and vanished files are skipped quietly
        }
        WalkState::Continue
    }
}

fn is_permission_error(e: &ignore::Error) -> bool {
    e.io_error()
        .is_some_and(|io| io.kind() == io::ErrorKind::PermissionDenied)
}

/// Collects one file's matching lines: counts every one, and keeps the text
/// of the first `limit` only while the file can still reach the output
/// (`collect`, decided before the search by [`Hits::could_show`]).
struct FileSink<'j> {
    job: &'j Job,
    lines: Vec<(u64, String)>,
    count: u64,
    /// Keep line text (until `limit` lines are kept).
    collect: bool,
    /// The file's modification time.
    modified: Option<SystemTime>,
    /// The reader's record of cut lines.
    cut_marks: CutMarks,
    binary: bool,
}

impl FileSink<'_> {
    /// Whether the line starting at `offset` (in the text searched), `len`
    /// bytes long without its `\n`, was cut at the cap.
    fn was_cut(&self, offset: u64, len: usize) -> bool {
        if len < self.job.max_line_bytes {
            return false;
        }
        let marks = self.cut_marks.borrow();
        marks.len() >= MAX_CUT_MARKS || marks.binary_search(&offset).is_ok()
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        if !self.collect {
            self.count += mat.lines().count() as u64;
            return Ok(true);
        }
        let first = mat.line_number().unwrap_or(0);
        let mut offset = mat.absolute_byte_offset();
        for (i, line) in mat.lines().enumerate() {
            self.count += 1;
            let start = offset;
            offset += line.len() as u64;
            if self.lines.len() < self.job.limit {
                let cut = self.was_cut(start, line.strip_suffix(b"\n").unwrap_or(line).len());
                self.lines.push((
                    first + i as u64,
                    display_line(line, self.job.max_line_chars, cut),
                ));
            } else {
                self.collect = false;
            }
        }
        Ok(true)
    }

    fn binary_data(&mut self, _searcher: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

/// A line as shown: line terminator (`\n`, `\r\n`, and any further `\r`
/// before it) removed, a `\r` inside the line shown as `␍` (U+240D, SYMBOL
/// FOR CARRIAGE RETURN) so that no carriage return reaches the output,
/// invalid UTF-8 replaced, cut after `max_chars` characters with `...`
/// (and ending with `...` anyway when `cut`: the line was longer than the
/// searched part).
fn display_line(line: &[u8], max_chars: usize, cut: bool) -> String {
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
type FileKey = (Reverse<SystemTime>, PathBuf);

/// One file's matches.
struct FileHits {
    lines: Vec<(u64, String)>,
}

/// Matches of all files: the total count, and the newest files that can
/// still appear in the output.
struct Hits {
    limit: usize,
    total: u64,
    files: BTreeMap<FileKey, FileHits>,
    kept_lines: usize,
}

impl Hits {
    /// Whether a file with this time and path could still appear in the
    /// output: `false` once the kept files fill it and all are newer (or
    /// equally new and first by path). Once `false` for a key it stays so,
    /// as the kept files only ever get newer.
    fn could_show(&self, modified: Option<SystemTime>, path: &Path) -> bool {
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

    fn new(limit: usize) -> Self {
        Self {
            limit,
            total: 0,
            files: BTreeMap::new(),
            kept_lines: 0,
        }
    }

    fn add(
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;
    use std::time::Duration;

    fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
        crate::test_support::workspace_with(files)
    }

    fn set_mtime(path: &Path, secs: u64) {
        let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
        fs::File::options()
            .write(true)
            .open(path)
            .unwrap()
            .set_modified(t)
            .unwrap();
    }

    fn grep(
        ctx: &ToolContext,
        pattern: &str,
        path: Option<&str>,
        include: Option<&str>,
    ) -> ToolResult {
        grep_content(
            pattern.to_owned(),
            path.map(str::to_owned),
            include.map(str::to_owned),
            ctx,
        )
    }

    fn root(ctx: &ToolContext) -> PathBuf {
        ctx.state::<Workspace>().unwrap().root().to_path_buf()
    }

    /// Makes a FIFO at `path`; `false` when this machine has no `mkfifo`.
    fn mkfifo(path: &Path) -> bool {
        std::process::Command::new("mkfifo")
            .arg(path)
            .status()
            .is_ok_and(|s| s.success())
    }

    /// Runs `f` on another thread and fails the test if it blocks.
    fn within_seconds(f: impl FnOnce() -> ToolResult + Send + 'static) -> ToolResult {
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(f());
        });
        rx.recv_timeout(Duration::from_secs(10))
            .expect("grep_content blocked on a pipe")
    }

    #[test]
    fn pipes_are_refused_or_skipped_without_blocking() {
        let (d, ctx) = setup(&[("a.txt", "needle\n")]);
        if !mkfifo(&d.path().join("pipe")) {
            return;
        }
        symlink("pipe", d.path().join("pipe-link")).unwrap();
        for named in ["pipe", "pipe-link"] {
            let c = ctx.clone();
            let r = within_seconds(move || grep(&c, "needle", Some(named), None));
            let msg = r.error.map(|e| e.message).unwrap_or_default();
            assert!(msg.contains("not a regular file"), "{named}: {msg}");
        }
        // The walker passes over the pipe (and the link to it).
        let c = ctx.clone();
        let r = within_seconds(move || grep(&c, "needle", None, None));
        assert!(r.output.starts_with("Found 1 matches"), "{}", r.output);
    }

    #[test]
    fn grouped_by_file_newest_first() {
        let (d, ctx) = setup(&[
            ("old.txt", "needle one\nhay\nneedle two\n"),
            ("new.txt", "needle\n"),
        ]);
        set_mtime(&d.path().join("old.txt"), 1_000_000_000);
        set_mtime(&d.path().join("new.txt"), 1_700_000_000);
        let r = grep(&ctx, "needle", None, None);
        let root = root(&ctx);
        let expected = format!(
            "Found 3 matches\n\n{}:\n  Line 1: needle\n\n{}:\n  Line 1: needle one\n  Line 3: needle two",
            root.join("new.txt").display(),
            root.join("old.txt").display()
        );
        assert_eq!(r.output, expected);
        assert_eq!(r.metadata["matches"], 3);
        assert_eq!(r.metadata["truncated"], false);
    }

    #[test]
    fn no_match_is_not_an_error() {
        let (_d, ctx) = setup(&[("a.txt", "hello world")]);
        let r = grep(&ctx, "xyznonexistent", None, None);
        assert!(r.is_ok());
        assert_eq!(r.output, "No files found");
        assert_eq!(r.metadata["matches"], 0);
        assert_eq!(r.metadata["truncated"], false);
    }

    #[test]
    fn include_filters_files() {
        let (_d, ctx) = setup(&[
            ("a.ts", "needle\n"),
            ("b.js", "needle\n"),
            ("s/c.tsx", "needle\n"),
        ]);
        let r = grep(&ctx, "needle", None, Some("*.ts"));
        assert!(r.output.contains("a.ts") && !r.output.contains("b.js"));
        let r = grep(&ctx, "needle", None, Some("*.{ts,tsx}"));
        assert_eq!(r.metadata["matches"], 2);
    }

    #[test]
    fn more_than_the_limit_is_truncated() {
        let text: String = (0..80).map(|i| format!("needle {i}\n")).collect();
        let (d, ctx) = setup(&[("a.txt", &text), ("b.txt", &text)]);
        set_mtime(&d.path().join("a.txt"), 1_700_000_000);
        set_mtime(&d.path().join("b.txt"), 1_600_000_000);
        let r = grep(&ctx, "needle", None, None);
        assert_eq!(r.metadata["matches"], 160);
        assert_eq!(r.metadata["truncated"], true);
        assert!(
            r.output
                .starts_with("Found 160 matches (showing first 100)\n")
        );
        assert_eq!(r.output.matches("  Line ").count(), 100);
        assert!(
            r.output
                .contains("  Line 20: needle 19\n\n(Results are truncated")
        );
    }

    #[test]
    fn long_lines_are_cut_and_crlf_trimmed() {
        let long = format!("needle{}\r\n", "é".repeat(3000));
        let (_d, ctx) = setup(&[("a.txt", &long)]);
        let r = grep(&ctx, "needle", None, None);
        let line = r
            .output
            .lines()
            .find(|l| l.starts_with("  Line 1: "))
            .unwrap();
        assert!(line.ends_with("..."));
        assert_eq!(line.trim_start_matches("  Line 1: ").chars().count(), 2003);
        assert!(!r.output.contains('\r'));
    }

    /// The lines of `output` that show matches ("  Line N: text").
    fn shown(output: &str) -> Vec<&str> {
        output
            .lines()
            .filter(|l| l.starts_with("  Line "))
            .collect()
    }

    #[test]
    fn anchors_match_lines_of_crlf_files() {
        // The issue's input: `^needle$` on a CRLF file.
        let (_d, ctx) = setup(&[("c.txt", "alpha needle\r\nneedle\r\nbeta\r\n")]);
        let r = grep(&ctx, "^needle$", None, None);
        assert_eq!(r.metadata["matches"], 1, "{}", r.output);
        assert_eq!(shown(&r.output), ["  Line 2: needle"]);
        assert!(!r.output.contains('\r'));
        // `$` after other text, on the last line without a final break, and in an LF file alike.
        let (_d, ctx) = setup(&[
            ("w.txt", "let x = 1;\r\nlet y = 2;\r\nend;"),
            ("l.txt", "let z = 3;\nx\n"),
        ]);
        let r = grep(&ctx, r"= \d;$", None, None);
        assert_eq!(r.metadata["matches"], 3, "{}", r.output);
        let r = grep(&ctx, "^end;$", None, None);
        assert_eq!(shown(&r.output), ["  Line 3: end;"]);
        // `.` does not swallow the carriage return: `y = .$` still anchors.
        let r = grep(&ctx, r"^let y = .;$", None, None);
        assert_eq!(shown(&r.output), ["  Line 2: let y = 2;"]);
        // An explicitly named CRLF file searches the same way.
        let r = grep(&ctx, "^let x = 1;$", Some("w.txt"), None);
        assert_eq!(shown(&r.output), ["  Line 1: let x = 1;"]);
    }

    #[test]
    fn a_pattern_naming_the_carriage_return_still_searches() {
        let (_d, ctx) = setup(&[("c.txt", "a\r\nb\n"), ("l.txt", "x\n")]);
        for pattern in [r"\r$", r"\r", r"a\r"] {
            let r = grep(&ctx, pattern, None, None);
            assert!(r.is_ok(), "{pattern}: {r:?}");
            assert_eq!(shown(&r.output), ["  Line 1: a"], "{pattern}");
        }
        let r = grep(&ctx, "a(", None, None);
        assert!(
            r.error
                .unwrap()
                .message
                .starts_with("Invalid regular expression `a(`"),
            "bad patterns are still refused"
        );
    }

    #[test]
    fn no_carriage_return_reaches_the_output() {
        let (_d, ctx) = setup(&[("m.txt", "one\r\r\nneedle\rmid\r\nlast needle\r")]);
        let r = grep(&ctx, "needle", None, None);
        assert!(!r.output.contains('\r'), "{:?}", r.output);
        assert_eq!(
            shown(&r.output),
            ["  Line 2: needle\u{240D}mid", "  Line 3: last needle"]
        );
        assert_eq!(display_line(b"a\r\r\n", 100, false), "a");
        assert_eq!(display_line(b"\r\n", 100, false), "");
        assert_eq!(display_line(b"x\ry", 100, false), "x\u{240D}y");
    }

    #[test]
    fn binary_files_are_skipped() {
        let (_d, ctx) = setup(&[("bin.dat", "needle\0\x01\x02"), ("t.txt", "needle\n")]);
        let r = grep(&ctx, "needle", None, None);
        assert_eq!(r.metadata["matches"], 1);
        assert!(!r.output.contains("bin.dat"));
    }

    #[test]
    fn search_path_errors() {
        let (_d, ctx) = setup(&[("a.txt", "x\n")]);
        let r = grep(&ctx, "x", Some("does-not-exist"), None);
        let e = r.error.unwrap();
        assert!(
            e.message.starts_with("Search path not found: "),
            "{}",
            e.message
        );
        assert!(e.message.ends_with("does-not-exist"));
        let r = grep(&ctx, "x", Some("/etc"), None);
        assert!(r.error.unwrap().message.contains("outside the workspace"));
        let r = grep(&ctx, "(unclosed", None, None);
        assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments);
    }

    #[test]
    fn ignore_files_vs_explicit_paths() {
        let (d, ctx) = setup(&[
            ("src/a.rs", "needle\n"),
            ("target/gen.rs", "needle\n"),
            ("app.log", "needle\n"),
        ]);
        fs::create_dir(d.path().join(".git")).unwrap();
        fs::write(d.path().join(".gitignore"), "target/\n*.log\n").unwrap();
        let r = grep(&ctx, "needle", None, None);
        assert_eq!(r.metadata["matches"], 1, "{}", r.output);
        let r = grep(&ctx, "needle", Some("target"), None);
        assert_eq!(r.metadata["matches"], 1, "{}", r.output);
        let r = grep(&ctx, "needle", Some("app.log"), None);
        assert_eq!(r.metadata["matches"], 1, "{}", r.output);
    }

    #[test]
    fn symlinks_never_lead_out_of_the_workspace() {
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("secret.txt"), "needle\n").unwrap();
        let (d, ctx) = setup(&[("in/a.txt", "needle\n")]);
        symlink(outside.path(), d.path().join("out")).unwrap();
        symlink(outside.path().join("secret.txt"), d.path().join("s.txt")).unwrap();
        symlink("..", d.path().join("in/loop")).unwrap();
        let r = grep(&ctx, "needle", None, None);
        assert_eq!(r.metadata["matches"], 1, "{}", r.output);
        assert!(!r.output.contains("secret"));
    }

    #[test]
    fn hits_keep_only_what_can_be_shown() {
        let mut hits = Hits::new(3);
        let t = |s| Some(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        let lines = |n: u64| (1..=n).map(|i| (i, String::new())).collect::<Vec<_>>();
        hits.add("a".into(), t(10), 2, lines(2));
        hits.add("b".into(), t(20), 2, lines(2));
        hits.add("c".into(), t(30), 5, lines(5));
        assert_eq!(hits.total, 9);
        let kept: Vec<_> = hits.files.keys().map(|(_, p)| p.clone()).collect();
        assert_eq!(kept, [PathBuf::from("c")]);
    }

    #[test]
    fn hostile_patterns_and_includes_are_refused_not_crashing() {
        let (_d, ctx) = crate::test_support::workspace_with(&[("a.rs", "needle\n")]);
        let nested = format!("{}a{}", "{".repeat(15_000), "}".repeat(15_000));
        for include in [
            nested.as_str(),
            &"*".repeat(100_000),
            "{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}}",
        ] {
            let e = grep(&ctx, "needle", None, Some(include))
                .error
                .expect("refused");
            assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
            assert!(e.message.len() < 600);
        }
        for pattern in [
            "(".repeat(15_000) + &")".repeat(15_000),
            "a".repeat(20_000),
            "[".repeat(30_000),
        ] {
            let e = grep(&ctx, &pattern, None, None).error.expect("refused");
            assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
            assert!(e.message.len() < 1_000, "{}", e.message.len());
        }
        assert!(
            grep(&ctx, "needle", None, Some("*.rs"))
                .output
                .contains("a.rs")
        );
    }

    /// A context whose grep searches lines up to `cap` bytes.
    fn with_cap(ctx: ToolContext, cap: usize) -> ToolContext {
        ctx.with_state(SearchConfig::default().with_max_line_bytes(cap))
    }

    /// The note naming lines cut at `cap` ("1 KiB"), listing `named`.
    fn cut_note(cap: &str, named: &str) -> String {
        format!(
            "\n\n(Lines longer than {cap} were searched only in their first {cap}; matches after \
             that point are not found or counted: {named})"
        )
    }

    #[test]
    fn a_one_line_file_longer_than_the_cap_is_cut_and_says_so() {
        // The issue's input, scaled to the default cap: one line of 5 MiB
        // (no line break at all) whose only match lies past the first 4 MiB.
        let big = format!("{}needle", "x".repeat(5 * 1024 * 1024));
        let (_d, ctx) = setup(&[("one.txt", big.as_str())]);
        let r = grep(&ctx, "needle", None, None);
        let path = root(&ctx).join("one.txt");
        let expected = format!(
            "No files found{}",
            cut_note("4 MiB", &format!("{}:1", path.display()))
        );
        assert_eq!(r.output, expected);
        assert_eq!(r.metadata["matches"], 0);
        assert_eq!(r.metadata["cut_lines"], 1);
        // A match inside the searched part is found, shown cut with `...`.
        let r = grep(&ctx, "^xxx", None, None);
        assert_eq!(r.metadata["matches"], 1);
        let shown = shown(&r.output);
        assert_eq!(shown.len(), 1);
        assert_eq!(shown[0], format!("  Line 1: {}...", "x".repeat(2000)));
        assert!(
            r.output
                .ends_with(&cut_note("4 MiB", &format!("{}:1", path.display())))
        );
    }

    #[test]
    fn a_long_line_is_searched_without_holding_it_whole() {
        // Cap 1 KiB: the searcher's buffer limit is then 1 KiB + 128 KiB, so
        // holding the 1 MiB line whole would fail the search (a "searched
        // only in part" note) instead of cutting it.
        let long = format!(
            "needle start {} needle end\nneedle two\n",
            "y".repeat(1 << 20)
        );
        let (_d, ctx) = setup(&[("long.txt", long.as_str())]);
        let ctx = with_cap(ctx, 1024);
        let r = grep(&ctx, "needle", None, None);
        let path = root(&ctx).join("long.txt");
        assert_eq!(r.metadata["matches"], 2, "{}", r.output);
        assert!(r.metadata.get("partial_files").is_none(), "{}", r.output);
        assert_eq!(r.metadata["cut_lines"], 1);
        let shown = shown(&r.output);
        assert_eq!(
            shown[0],
            format!("  Line 1: needle start {}...", "y".repeat(1024 - 13))
        );
        assert_eq!(shown[1], "  Line 2: needle two");
        assert!(
            r.output
                .ends_with(&cut_note("1 KiB", &format!("{}:1", path.display())))
        );
        // The end of the long line was not searched.
        let r = grep(&ctx, "needle end", None, None);
        assert_eq!(r.metadata["matches"], 0);
        // The same searcher reading the file without the cap runs into its
        // buffer limit: the line was never held whole above.
        let matcher = build_matcher("needle", true).unwrap();
        let file = File::open(&path).unwrap();
        let sink = grep_searcher::sinks::Lossy(|_, _| Ok(true));
        let e = new_searcher(true, 1024, true)
            .search_file(&matcher, &file, sink)
            .unwrap_err();
        assert!(e.to_string().contains("allocation limit"), "{e}");
    }

    #[test]
    fn cut_lines_are_named_with_their_line_numbers() {
        let long = "z".repeat(3000);
        let a = format!("one\ntwo needle\n{long} needle\nfour needle\n{long}\nsix needle\n");
        let crlf = format!("a\r\n{long}\r\nneedle\r\n");
        let (d, ctx) = setup(&[("a.txt", a.as_str()), ("c.txt", crlf.as_str())]);
        set_mtime(&d.path().join("a.txt"), 1_700_000_000);
        set_mtime(&d.path().join("c.txt"), 1_600_000_000);
        let ctx = with_cap(ctx, 1000);
        let r = grep(&ctx, "needle", None, None);
        // Lines 3 and 5 of a.txt and line 2 of c.txt are cut; line 3's match lies past the cut.
        assert_eq!(r.metadata["matches"], 4, "{}", r.output);
        assert_eq!(r.metadata["cut_lines"], 3);
        assert_eq!(
            shown(&r.output),
            [
                "  Line 2: two needle",
                "  Line 4: four needle",
                "  Line 6: six needle",
                "  Line 3: needle"
            ]
        );
        let root = root(&ctx);
        let named = |file: &str, lines: &[u64]| {
            lines
                .iter()
                .map(|l| format!("{}:{l}", root.join(file).display()))
                .collect::<Vec<_>>()
        };
        // The two files are searched in either order; each names its own lines in order.
        let first = [named("a.txt", &[3, 5]), named("c.txt", &[2])]
            .concat()
            .join(", ");
        let second = [named("c.txt", &[2]), named("a.txt", &[3, 5])]
            .concat()
            .join(", ");
        assert!(
            r.output.ends_with(&cut_note("1000 bytes", &first))
                || r.output.ends_with(&cut_note("1000 bytes", &second)),
            "{}",
            r.output
        );
        // A line of exactly the cap is not cut (nor one ending `\r\n` at
        // the cap); one byte more is, and is shown ending with `...`.
        let q = |n: usize| "q".repeat(n);
        let text = format!("{}\n{}\r\nneedle\n", q(1000), q(999));
        let (_d, ctx) = setup(&[("e.txt", text.as_str())]);
        let ctx = with_cap(ctx, 1000);
        let r = grep(&ctx, "needle|^q", None, None);
        assert_eq!(r.metadata["matches"], 3, "{}", r.output);
        assert!(r.metadata.get("cut_lines").is_none());
        assert!(!r.output.contains("Lines longer"));
        assert_eq!(
            shown(&r.output),
            [
                format!("  Line 1: {}", q(1000)),
                format!("  Line 2: {}", q(999)),
                "  Line 3: needle".to_owned()
            ]
        );
        let text = format!("{}\n{}\n{}\n", q(1001), q(1000), q(5000));
        let (_d, ctx) = setup(&[("f.txt", text.as_str())]);
        let r = grep(&with_cap(ctx, 1000), "^q", None, None);
        assert_eq!(r.metadata["cut_lines"], 2);
        assert_eq!(
            shown(&r.output),
            [
                format!("  Line 1: {}...", q(1000)),
                format!("  Line 2: {}", q(1000)),
                format!("  Line 3: {}...", q(1000))
            ]
        );
    }

    #[test]
    fn a_nul_in_the_dropped_part_still_marks_the_file_binary() {
        let bin = format!("needle {}\0tail\nneedle\n", "b".repeat(5000));
        let (_d, ctx) = setup(&[("bin.dat", bin.as_str()), ("t.txt", "needle\n")]);
        let r = grep(&with_cap(ctx, 100), "needle", None, None);
        assert_eq!(r.metadata["matches"], 1, "{}", r.output);
        assert!(!r.output.contains("bin.dat"));
        assert!(r.metadata.get("cut_lines").is_none());
    }

    /// A reader handing out at most `step` bytes per read.
    struct Trickle<'a> {
        data: &'a [u8],
        step: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.data.len().min(self.step).min(buf.len());
            buf[..n].copy_from_slice(&self.data[..n]);
            self.data = &self.data[n..];
            Ok(n)
        }
    }

    /// `data` through a [`LineCap`] of `cap`, read in pieces of `step`, with
    /// or without the size known: the text passed on and the cut lines' starts.
    fn capped(data: &[u8], cap: usize, step: usize, sized: bool) -> (Vec<u8>, Vec<u64>, u64) {
        let size = sized.then_some(data.len() as u64);
        let mut reader = LineCap::new(Trickle { data, step }, cap, size);
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        (out, reader.cut_starts, reader.cut_count)
    }

    #[test]
    fn line_cap_passes_short_lines_and_cuts_long_ones() {
        let data = b"abcdefgh\nab\n\nabcd\nabcde\nxyz";
        let expected = b"abcd\nab\n\nabcd\nabcd\nxyz".to_vec();
        for step in [1, 2, 3, 5, 64, 1 << 16] {
            for sized in [false, true] {
                let (out, starts, count) = capped(data, 4, step, sized);
                assert_eq!(
                    String::from_utf8_lossy(&out),
                    String::from_utf8_lossy(&expected),
                    "step {step}"
                );
                assert_eq!(starts, [0, 18], "step {step}");
                assert_eq!(count, 2);
            }
        }
        // Nothing to cut: everything passes unchanged.
        let (out, starts, _) = capped(b"one\ntwo\n", 100, 3, true);
        assert_eq!(out, b"one\ntwo\n");
        assert!(starts.is_empty());
        // A NUL in a dropped part is passed on once.
        let (out, _, _) = capped(b"ab\0\0cd\nok\n", 2, 2, false);
        assert_eq!(out, b"ab\0\nok\n");
        // The size given stops the reading there.
        let mut reader = LineCap::new(&b"12\n34\n"[..], 10, Some(3));
        let mut out = Vec::new();
        reader.read_to_end(&mut out).unwrap();
        assert_eq!(out, b"12\n");
    }

    #[test]
    fn line_numbers_count_from_the_file() {
        let (d, _ctx) = setup(&[("n.txt", "a\nb\n\nccc\nd")]);
        let file = File::open(d.path().join("n.txt")).unwrap();
        assert_eq!(line_numbers(&file, &[0, 2, 4, 5, 9]), [1, 2, 3, 4, 5]);
        assert_eq!(line_numbers(&file, &[]), Vec::<u64>::new());
    }

    #[test]
    fn partly_searched_files_are_named() {
        let incomplete = Incomplete {
            cut_lines: vec![],
            cut_count: 0,
            partial: vec![(
                "/w/a.txt".into(),
                "configured allocation limit (10) exceeded".into(),
            )],
            partial_count: 3,
        };
        assert_eq!(
            Job::incomplete_notes(&incomplete, 1 << 20),
            "\n\n(Some files were searched only in part; their matches after the failure point \
             are missing: /w/a.txt (configured allocation limit (10) exceeded) and 2 more)"
        );
        assert_eq!(Job::incomplete_notes(&Incomplete::default(), 1 << 20), "");
        assert_eq!(byte_size(4 << 20), "4 MiB");
        assert_eq!(byte_size(64 << 10), "64 KiB");
        assert_eq!(byte_size(1000), "1000 bytes");
    }

    #[test]
    fn only_the_newest_files_keep_line_text() {
        // Eight files of 40 matches each, the newest last by name; the output
        // holds 100 lines: all of h.txt and g.txt and 20 of f.txt.
        let text: String = (1..=40).map(|i| format!("needle {i}\n")).collect();
        let names = ["a", "b", "c", "d", "e", "f", "g", "h"].map(|n| format!("{n}.txt"));
        let files: Vec<(&str, &str)> = names.iter().map(|n| (n.as_str(), text.as_str())).collect();
        let (d, ctx) = setup(&files);
        for (i, name) in names.iter().enumerate() {
            set_mtime(&d.path().join(name), 1_600_000_000 + i as u64 * 1000);
        }
        let r = grep(&ctx, "needle", None, None);
        assert_eq!(r.metadata["matches"], 320);
        let root = root(&ctx);
        let headers: Vec<&str> = r.output.lines().filter(|l| l.ends_with(".txt:")).collect();
        let want: Vec<String> = ["h", "g", "f"]
            .iter()
            .map(|n| format!("{}:", root.join(format!("{n}.txt")).display()))
            .collect();
        assert_eq!(headers, want);
        assert_eq!(shown(&r.output).len(), 100);
        assert!(
            r.output
                .contains("  Line 20: needle 20\n\n(Results are truncated")
        );
        // could_show: once full, an older file (or as old, later by path) is out.
        let mut hits = Hits::new(2);
        let t = |s| Some(SystemTime::UNIX_EPOCH + Duration::from_secs(s));
        assert!(hits.could_show(t(1), Path::new("z")));
        hits.add(
            "m".into(),
            t(10),
            2,
            vec![(1, String::new()), (2, String::new())],
        );
        assert!(!hits.could_show(t(5), Path::new("a")));
        assert!(!hits.could_show(t(10), Path::new("n")));
        assert!(hits.could_show(t(10), Path::new("a")));
        assert!(hits.could_show(t(20), Path::new("z")));
        hits.add("old".into(), t(1), 7, vec![]);
        assert_eq!(hits.total, 9);
        assert_eq!(hits.files.len(), 1);
    }
}
