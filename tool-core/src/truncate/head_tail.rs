//! [`HeadTail`]: bounded head and tail of output that arrives in pieces,
//! the whole streamed to a spill file.

use super::*;

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
