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

mod hits;
mod linecap;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::SystemTime;

use grep_matcher::LineTerminator;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use rustix::fs::FileType;
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, meta, tool};

use crate::fs::workspace::{Workspace, workspace_of};
use crate::search::index::{Candidate, Part};
use crate::search::{self, GlobFilter, SearchConfig};
use hits::*;
use linecap::*;

/// Most bytes of matching lines on one page: the registry's default output
/// budget (`tool_core::truncate::DEFAULT_MAX_BYTES`, 50 KiB) less 4 KiB for
/// the header, the notes and the paging lines. A page reaching it ends
/// early, and its `next_offset` is the first match not shown.
pub const PAGE_BYTES: usize = tool_core::truncate::DEFAULT_MAX_BYTES - 4096;

/// Searches file contents with a regular expression.
///
/// Fast on any codebase size. Supports full regex syntax (`log.*Error`,
/// `fn\s+\w+`). Filter files with `include` (`*.js`, `*.{ts,tsx}`). Returns
/// the matching lines grouped by file, files with the newest modification
/// first, at most 100 lines; a truncated result names the `offset` of the
/// next page. Binary files are skipped.
///
/// # Arguments
/// * `pattern` - The regular expression to search for in file contents.
/// * `path` - The folder or file to search in, relative to the workspace
///   root or absolute (default: the workspace root).
/// * `include` - File pattern to search (e.g. `*.js`, `*.{ts,tsx}`).
/// * `offset` - Matching lines to skip, for the next page of a truncated
///   result (default 0).
///
/// # Examples
/// ```json
/// {"pattern": "fn\\s+main", "include": "*.rs"}
/// {"pattern": "TODO", "path": "src", "offset": 100}
/// ```
#[tool(kind = "read", tags = ["fs", "search"], read_only, idempotent, concurrency_safe)]
pub fn grep_content(
    pattern: String,
    path: Option<String>,
    include: Option<String>,
    offset: Option<i64>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let config = SearchConfig::from_context(context);
    let offset = search::check_offset(offset)?;
    let ws = workspace_of(context)?;
    if pattern.is_empty() {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            "The pattern is empty. Give a regular expression to search for.",
        ));
    }
    if pattern.len() > search::MAX_REGEX_BYTES {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "The pattern is {} bytes long; the limit is {} bytes. Search for a shorter \
                 expression (or several, one call each). Pattern: {}",
                pattern.len(),
                search::MAX_REGEX_BYTES,
                tool_rules::text::clip(&pattern, crate::fs::MESSAGE_VALUE).into_owned()
            ),
        ));
    }
    let (matcher, crlf) = match build_matcher(&pattern, true) {
        Ok(m) => (m, true),
        // CRLF mode refuses a pattern that names `\r` itself (`\r$`, to
        // find CRLF lines): that one searches with `\n` lines instead.
        Err(e) => match build_matcher(&pattern, false) {
            Ok(m) => (m, false),
            Err(_) => {
                return Err(ToolError::new(
                    ErrorKind::InvalidArguments,
                    format!(
                        "Invalid regular expression `{}`: {}",
                        tool_rules::text::clip(&pattern, crate::fs::MESSAGE_VALUE).into_owned(),
                        tool_rules::text::clip(&e.to_string(), crate::fs::MESSAGE_VALUE)
                            .into_owned()
                    ),
                ));
            }
        },
    };
    let filter = match include.as_deref().map(str::trim).filter(|i| !i.is_empty()) {
        None => None,
        Some(glob) => match GlobFilter::new(glob) {
            Ok(f) => Some(f),
            Err(message) => return Err(ToolError::new(ErrorKind::InvalidArguments, message)),
        },
    };
    let read_roots = crate::roots::read_roots(context);
    let (target, file_type) = match path.as_deref().filter(|p| !p.trim().is_empty()) {
        None => (ws.root().to_path_buf(), Some(FileType::Directory)),
        Some(p) => match crate::roots::resolve_for_read(context, &ws, p) {
            Ok(t) if t.exists() => {
                let file_type = t.file_type();
                (t.path, file_type)
            }
            Ok(_) => return Err(search::not_found(&ws.absolute(p))),
            Err(e) => return Err(e.into()),
        },
    };
    let is_dir = file_type == Some(FileType::Directory);
    // Never open a pipe or device: reading it could block forever.
    if !is_dir && file_type != Some(FileType::RegularFile) {
        return Err(ToolError::new(
            ErrorKind::Failed,
            format!(
                "Cannot search {}: it is not a regular file or folder (a device, socket or pipe).",
                target.display()
            ),
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
        hidden: crate::fs::workspace::HiddenAreas::now(),
        limit: config.result_limit,
        offset,
        max_line_chars: config.max_line_chars,
        max_line_bytes: config.max_line_bytes.max(1),
        // The skipped lines are kept too: they decide where the page starts.
        hits: Mutex::new(Hits::new(offset.saturating_add(config.result_limit))),
        inaccessible: AtomicBool::new(false),
        incomplete: Mutex::new(Incomplete::default()),
    };
    if is_dir {
        // A long-running host's index names the files that can match (and
        // of a large file, the pieces); the same engine searches them, so
        // the result is the scan's.
        let candidates = context
            .state::<search::index::ContentIndex>()
            .and_then(|index| index.candidates(&target, &pattern, job.crlf, job.max_line_bytes));
        match candidates {
            Some(files) => run_files(&job, &files, config.threads),
            None => run_walk(&ws, &target, &job, config.threads),
        }
    } else {
        // A file named explicitly is searched whatever the ignore files say.
        let mut searchers = Searchers::new(job.crlf, job.max_line_bytes);
        job.search_file(&mut searchers, &job.matcher, &target, None);
    }
    Ok(job.render(&pattern))
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
    /// The folders no file is opened in, looked up as the search started
    /// ([`Workspace::open_walked`]).
    hidden: crate::fs::workspace::HiddenAreas,
    limit: usize,
    /// Matching lines skipped before the page starts (newest files first).
    offset: usize,
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
    /// With an index's `candidate`, only its pieces are searched while the
    /// file still has the size and time they were read at (else all of it).
    fn search_file(
        &self,
        searchers: &mut Searchers,
        matcher: &RegexMatcher,
        path: &Path,
        candidate: Option<&Candidate>,
    ) {
        if let Some(filter) = &self.filter {
            let relative = path.strip_prefix(&self.base).unwrap_or(path);
            if !filter.is_match(relative) {
                return;
            }
        }
        let Ok(file) = self.ws.open_walked(path, &self.read_roots, &self.hidden) else {
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
            line_base: 0,
        };
        if let Some(c) = candidate.filter(|c| {
            !c.parts.is_empty()
                && u64::try_from(stat.st_size).ok() == Some(c.size)
                && (stat.st_mtime, u32::try_from(stat.st_mtime_nsec).ok())
                    == (c.mtime.0, Some(c.mtime.1))
        }) {
            if search_parts(searcher, matcher, &file, &c.parts, &mut sink) {
                if !sink.binary && sink.count > 0 {
                    let (count, lines, modified) = (sink.count, sink.lines, sink.modified);
                    let mut hits = self
                        .hits
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner);
                    hits.add(path.to_path_buf(), modified, count, lines);
                }
                return;
            }
            // A piece could not be read: search the whole file afresh.
            sink.lines.clear();
            sink.count = 0;
            sink.collect = collect;
            sink.binary = false;
            sink.line_base = 0;
        }
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
                    incomplete.partial.push((
                        path.to_path_buf(),
                        tool_rules::text::clip(&e.to_string(), crate::fs::MESSAGE_VALUE)
                            .into_owned(),
                    ));
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
                    .with_metadata(meta::MATCHES, 0)
                    .with_metadata(meta::TRUNCATED, false),
                &incomplete,
            );
        }
        // The page's lines, stopping early when the next line would take
        // the page past [`PAGE_BYTES`]: the registry would cut the middle
        // out of a longer answer, and `next_offset` would then skip lines
        // the model never saw.
        let mut body = String::new();
        let mut skipped = 0usize;
        let mut shown = 0usize;
        let mut full = false;
        'files: for ((_, path), file) in &hits.files {
            if shown >= self.limit {
                break;
            }
            let skip = (self.offset - skipped).min(file.lines.len());
            skipped += skip;
            if skip == file.lines.len() {
                continue;
            }
            let header = format!("\n\n{}:", path.to_string_lossy());
            let mut header = Some(header);
            for (number, text) in file.lines.iter().skip(skip).take(self.limit - shown) {
                let line = format!("\n  Line {number}: {text}");
                let extra = header.as_ref().map_or(0, String::len) + line.len();
                if shown > 0 && body.len() + extra > PAGE_BYTES {
                    full = true;
                    break 'files;
                }
                if let Some(h) = header.take() {
                    body.push_str(&h);
                }
                body.push_str(&line);
                shown += 1;
            }
        }
        let end = if full {
            self.offset + shown
        } else {
            self.offset.saturating_add(self.limit)
        };
        // More matches after this page.
        let truncated = total > end as u64;
        let mut out = format!("Found {total} matches");
        if self.offset > 0 && shown > 0 {
            let last = (end as u64).min(total);
            out.push_str(&format!(" (showing {}-{last})", self.offset + 1));
        } else if truncated && shown > 0 {
            out.push_str(&format!(" (showing first {shown})"));
        }
        out.push_str(&body);
        if self.offset > 0 && shown == 0 {
            out.push_str(&format!(
                "\n\n(No matches past offset {}: there are {total}. Use a smaller offset.)",
                self.offset
            ));
        }
        if truncated {
            if full {
                out.push_str(&format!(
                    "\n\n(This page stops after {shown} matches to stay within the output budget \
                     of {PAGE_BYTES} bytes.)"
                ));
            }
            if self.offset == 0 {
                out.push_str(&format!(
                    "\n\n(Results are truncated: showing {shown} of {total} matches. Consider using a more specific path or pattern.)\n",
                ));
            } else {
                out.push_str("\n\n");
            }
            out.push_str(&search::next_page_line(
                "matches",
                self.offset + 1,
                end,
                total,
            ));
            out.push_str(
                "\n(Files are in newest-modified-first order: a file written between pages moves to \
                 the front and shifts the pages, so search again from offset 0 after editing.)",
            );
        }
        out.push_str(&notes);
        if inaccessible {
            out.push_str("\n\n(Some paths were inaccessible and skipped)");
        }
        let result = with_incomplete_metadata(
            ToolResult::ok(out)
                .with_title(pattern)
                .with_metadata(meta::MATCHES, total)
                .with_metadata(meta::TRUNCATED, truncated),
            &incomplete,
        );
        if truncated {
            result.with_metadata(meta::NEXT_OFFSET, end)
        } else {
            result
        }
    }
}

/// Adds `cut_lines` (lines searched only up to the cap) and `partial_files`
/// (files whose search stopped midway) to `result` when either is non-zero.
fn with_incomplete_metadata(result: ToolResult, incomplete: &Incomplete) -> ToolResult {
    let mut result = result;
    if incomplete.cut_count > 0 {
        result = result.with_metadata(meta::CUT_LINES, incomplete.cut_count);
    }
    if incomplete.partial_count > 0 {
        result = result.with_metadata(meta::PARTIAL_FILES, incomplete.partial_count);
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

/// Walks `dir` in parallel, one searcher per thread.
fn run_walk(ws: &Workspace, dir: &Path, job: &Job, threads: usize) {
    let honour_ignores = !search::explicitly_ignored(ws, dir);
    let mut builder = VisitorBuilder { job };
    search::walker(ws, dir, honour_ignores, threads)
        .build_parallel()
        .visit(&mut builder);
}

/// Searches the pieces `parts` of `file` (ascending, from an index) with
/// `sink`, numbering lines from each piece's first line. `false` when a
/// piece could not be read whole (the file shrank): the caller searches the
/// whole file instead. A NUL byte makes the sink's file binary, as a whole-file
/// search would.
fn search_parts(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &std::fs::File,
    parts: &[Part],
    sink: &mut FileSink<'_>,
) -> bool {
    use std::os::unix::fs::FileExt;
    let mut buf = Vec::new();
    for part in parts {
        let Ok(len) = usize::try_from(part.end.saturating_sub(part.start)) else {
            return false;
        };
        buf.resize(len, 0);
        if file.read_exact_at(&mut buf, part.start).is_err() {
            return false;
        }
        sink.line_base = part.line.saturating_sub(1);
        if searcher.search_slice(matcher, &buf, &mut *sink).is_err() {
            return false;
        }
        if sink.binary {
            break;
        }
    }
    true
}

/// Searches `files` (an index's candidates) in parallel, one searcher per thread.
fn run_files(job: &Job, files: &[Candidate], threads: usize) {
    let threads = if threads == 0 {
        std::thread::available_parallelism().map_or(1, |n| n.get().min(12))
    } else {
        threads
    }
    .min(files.len().div_ceil(16))
    .max(1);
    let next = std::sync::atomic::AtomicUsize::new(0);
    let work = || {
        let matcher = job.matcher.clone();
        let mut searchers = Searchers::new(job.crlf, job.max_line_bytes);
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(c) = files.get(i) else { break };
            job.search_file(&mut searchers, &matcher, &c.path, Some(c));
        }
    };
    if threads == 1 {
        work();
        return;
    }
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(work);
        }
    });
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
                    .search_file(&mut self.searchers, &self.matcher, entry.path(), None);
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
/// of the first `offset + limit` only while the file can still reach the output
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
    /// Lines before the text searched (a piece of the file starts at line `line_base + 1`).
    line_base: u64,
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
        let first = mat.line_number().unwrap_or(0) + self.line_base;
        let mut offset = mat.absolute_byte_offset();
        for (i, line) in mat.lines().enumerate() {
            self.count += 1;
            let start = offset;
            offset += line.len() as u64;
            // A page after `offset` may start inside this file: keep as
            // many lines as the skipped ones plus the page.
            if self.lines.len() < self.job.offset.saturating_add(self.job.limit) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::workspace_with;
    use std::fs::{self, File};
    use std::io::Read;
    use std::time::Duration;
    use tool_core::IntoToolResult;

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
    fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
        workspace_with(files)
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
            None,
            ctx,
        )
        .into_tool_result()
    }

    fn root(ctx: &ToolContext) -> PathBuf {
        ctx.state::<Workspace>().unwrap().root().to_path_buf()
    }

    /// The lines of `output` that show matches ("  Line N: text").
    fn shown(output: &str) -> Vec<&str> {
        output
            .lines()
            .filter(|l| l.starts_with("  Line "))
            .collect()
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
