//! `grep_content`: search file contents with a regular expression.
//!
//! Built on ripgrep's library crates: `grep-regex` compiles the pattern (Rust
//! regex syntax, line-oriented), `grep-searcher` reads each file with one
//! reusable buffer per thread and skips binary files (a NUL byte), and the
//! `ignore` parallel walker feeds it files under the rules of
//! [`crate::search`]. Only files with matches are stat'ed, for the
//! newest-first order. Memory is bounded: each file keeps at most the shown
//! number of lines, and files that can no longer reach the output are
//! dropped as soon as newer ones fill it.

use std::cmp::Reverse;
use std::collections::BTreeMap;
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
#[tool(kind = "read", read_only, idempotent, concurrency_safe)]
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
        hits: Mutex::new(Hits::new(config.result_limit)),
        inaccessible: AtomicBool::new(false),
    };
    if is_dir {
        run_walk(&ws, &target, &job, config.threads);
    } else {
        // A file named explicitly is searched whatever the ignore files say.
        let mut searcher = new_searcher(job.crlf);
        job.search_file(&mut searcher, &target, None);
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
    builder.multi_line(true);
    if crlf {
        builder.crlf(true);
    } else {
        builder.line_terminator(Some(b'\n'));
    }
    builder.build(pattern)
}

/// A searcher whose line terminator is the matcher's: with `crlf` lines end
/// at `\n` and a `\r` before it belongs to the terminator.
fn new_searcher(crlf: bool) -> Searcher {
    let terminator = if crlf {
        LineTerminator::crlf()
    } else {
        LineTerminator::byte(b'\n')
    };
    SearcherBuilder::new()
        .line_terminator(terminator)
        .line_number(true)
        .binary_detection(BinaryDetection::quit(b'\x00'))
        .build()
}

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
    hits: Mutex<Hits>,
    inaccessible: AtomicBool,
}

impl Job {
    /// Searches one file and records its matches (binary files are skipped).
    fn search_file(&self, searcher: &mut Searcher, path: &Path, entry: Option<&DirEntry>) {
        if let Some(filter) = &self.filter {
            let relative = path.strip_prefix(&self.base).unwrap_or(path);
            if !filter.is_match(relative) {
                return;
            }
        }
        let mut sink = FileSink {
            lines: Vec::new(),
            count: 0,
            keep: self.limit,
            max_line_chars: self.max_line_chars,
            binary: false,
        };
        let searched = self
            .ws
            .open_walked(path, &self.read_roots)
            .and_then(|file| searcher.search_file(&self.matcher, &file, &mut sink));
        if searched.is_err() {
            self.inaccessible.store(true, Ordering::Relaxed);
            return;
        }
        if sink.binary || sink.count == 0 {
            return;
        }
        let metadata = match entry {
            Some(e) => e.metadata().ok(),
            None => std::fs::metadata(path).ok(),
        };
        let modified = metadata.and_then(|m| m.modified().ok());
        let mut hits = self
            .hits
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        hits.add(path.to_path_buf(), modified, sink.count, sink.lines);
    }

    fn render(self, pattern: &str) -> ToolResult {
        let hits = self
            .hits
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let inaccessible = self.inaccessible.into_inner();
        let total = hits.total;
        if total == 0 {
            let mut output = "No files found".to_owned();
            if inaccessible {
                output.push_str("\n\n(Some paths were inaccessible and skipped)");
            }
            return ToolResult::ok(output)
                .with_title(pattern)
                .with_metadata("matches", 0)
                .with_metadata("truncated", false);
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
        if inaccessible {
            out.push_str("\n\n(Some paths were inaccessible and skipped)");
        }
        ToolResult::ok(out)
            .with_title(pattern)
            .with_metadata("matches", total)
            .with_metadata("truncated", truncated)
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
            searcher: new_searcher(self.job.crlf),
        })
    }
}

struct Visitor<'s> {
    job: &'s Job,
    searcher: Searcher,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        match entry {
            Ok(entry) if entry.file_type().is_some_and(|t| t.is_file()) => {
                self.job
                    .search_file(&mut self.searcher, entry.path(), Some(&entry));
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

/// Collects one file's matching lines.
struct FileSink {
    lines: Vec<(u64, String)>,
    count: u64,
    keep: usize,
    max_line_chars: usize,
    binary: bool,
}

impl Sink for FileSink {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = mat.line_number().unwrap_or(0);
        for (i, line) in mat.lines().enumerate() {
            self.count += 1;
            if self.lines.len() < self.keep {
                self.lines
                    .push((first + i as u64, display_line(line, self.max_line_chars)));
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
/// invalid UTF-8 replaced, cut after `max_chars` characters with `...`.
fn display_line(line: &[u8], max_chars: usize) -> String {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    let end = line.iter().rposition(|&b| b != b'\r').map_or(0, |i| i + 1);
    let text = String::from_utf8_lossy(&line[..end]);
    let text = if text.contains('\r') {
        std::borrow::Cow::Owned(text.replace('\r', "\u{240D}"))
    } else {
        text
    };
    match text.char_indices().nth(max_chars) {
        None => text.into_owned(),
        Some((cut, _)) => format!("{}...", &text[..cut]),
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
        assert_eq!(display_line(b"a\r\r\n", 100), "a");
        assert_eq!(display_line(b"\r\n", 100), "");
        assert_eq!(display_line(b"x\ry", 100), "x\u{240D}y");
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
}
