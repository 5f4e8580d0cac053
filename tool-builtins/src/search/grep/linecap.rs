//! Reading a file for the searcher with every line cut at the byte cap, so
//! a file of one huge line is searched in bounded memory, and the cut lines
//! are counted and found again by number.

use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::FileExt;

/// Most bytes [`LineCap`] reads at once: 64 KiB, the searcher's own buffer
/// size, so that the cheap path (no line can reach the cap within one read)
/// holds even after the buffer grew for a long line.
pub(super) const READ_CHUNK: usize = 64 * 1024;

/// Most cut lines named per file (the rest are counted).
pub(super) const MAX_CUT_LINES_PER_FILE: usize = 10;

/// The line numbers (1-based) of the lines starting at `starts` (ascending
/// byte offsets) in `file`, counted by reading the file up to the last of
/// them in 64 KiB chunks. Only run for files with a cut line. A read error
/// leaves the rest at the count so far.
pub(super) fn line_numbers(file: &File, starts: &[u64]) -> Vec<u64> {
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
pub(super) struct LineCap<R> {
    pub(super) inner: R,
    pub(super) cap: usize,
    pub(super) size: Option<u64>,
    /// Bytes of the current line passed on so far.
    pub(super) run: usize,
    /// Dropping the rest of a line longer than `cap`.
    pub(super) skipping: bool,
    /// Bytes read from `inner`.
    pub(super) offset: u64,
    /// Offset of the current line's first byte.
    pub(super) line_start: u64,
    /// Start offsets of the first cut lines, ascending.
    pub(super) cut_starts: Vec<u64>,
    /// All cut lines.
    pub(super) cut_count: u64,
    /// Where the first [`MAX_CUT_MARKS`] cut lines start in the text passed
    /// on (ascending), for the sink to mark them (`...`) when shown.
    pub(super) cut_marks: CutMarks,
    /// Bytes dropped so far, less the NUL passed on in their place.
    pub(super) dropped: u64,
    /// A dropped NUL was passed on already.
    pub(super) nul_sent: bool,
}

/// Start offsets of cut lines in the text the searcher sees, shared by a
/// file's [`LineCap`] and [`FileSink`] (one thread).
pub(super) type CutMarks = std::rc::Rc<std::cell::RefCell<Vec<u64>>>;

/// Most cut lines per file whose start is kept for marking them when shown;
/// past that, any matched line of the cap's full length is marked.
pub(super) const MAX_CUT_MARKS: usize = 1000;

impl<R: Read> LineCap<R> {
    pub(super) fn new(inner: R, cap: usize, size: Option<u64>) -> Self {
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
    pub(super) fn filter(&mut self, buf: &mut [u8], n: usize, base: u64) -> usize {
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
