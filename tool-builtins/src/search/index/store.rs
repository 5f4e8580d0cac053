//! The index on disk: one file, `grams.idx`, in the workspace's folder of
//! the private state folder, written to a temporary name and renamed into
//! place (a reader never sees half a file).
//!
//! Layout, all integers little-endian:
//! ```text
//! "ATGRAM05"                          magic and version
//! u32 len, bytes                      the workspace root it indexes
//! u32 n                               files, then n times:
//!   u32 len, bytes                    path relative to the root
//!   u64 size, i64 mtime s, u32 ns     as stat gave them when read
//!   u8 kind                           0 text, 1 binary, 2 always searched
//!   u32 first, u32 slots              the posting ids of its pieces
//!   varint p, p times varint, varint  where its pieces after the first start:
//!                                     byte offset and line number, each as
//!                                     the step from the piece before (0, 1)
//! blob                                posting lists (ids of pieces), `lists`' encoding
//! e times: u32 key, u32 count,        the grams held by many pieces (at least
//!   u64 offset, u32 length            [`threshold`]), ascending keys, each with
//!                                     its own list in the blob
//! 2^b times: u64 offset, u32 length   the buckets: the union of the lists of the
//!                                     other grams, by the top b bits of their key
//! u64 blob start, u64 table start, u64 e, u32 b, u32 ids    the footer
//! ```
//! Most distinct grams are in a few pieces; folding them into buckets
//! saves a key and a list header each and only adds candidates (a gram's
//! bucket holds at least its pieces). Older versions (`ATGRAM01`:
//! trigrams; `ATGRAM02`: postings of whole files; `ATGRAM03`: 12-byte
//! grams, every gram with its key; `ATGRAM04`: a development
//! layout of this format never released) are not read: such a file is rebuilt.
//! A serving process holds the file table and the table of common grams;
//! a lookup reads one bucket row and one list with positioned reads.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use roaring::RoaringBitmap;

use super::grams::Gram;
use super::lists::{self, corrupt};
use super::runs::Merge;
use super::{Entry, Kind};

const MAGIC: &[u8; 8] = b"ATGRAM05";
/// Longest stored path, in bytes (Linux's `PATH_MAX`); a longer one means a corrupt file.
const MAX_PATH: usize = 4096;
/// Bytes of a row of the table of common grams.
const EXACT_ROW: usize = 20;
/// Bytes of a bucket row.
const BUCKET_ROW: usize = 12;
/// Bytes of the footer.
const FOOTER: usize = 32;
/// Most bucket bits: 4 Mi buckets (48 MiB of rows).
const MAX_BUCKET_BITS: u32 = 22;

/// Pieces a gram must be in to keep its own list, for an index of `ids`
/// posting ids: one in 128 (at least 4). Rarer grams share a bucket.
pub(crate) fn threshold(ids: u32) -> usize {
    (ids as usize >> 7).max(4)
}

/// Bits of the bucket number for an index of `ids` posting ids: one
/// bucket per two to four ids (at least 16 buckets, at most 4 Mi).
pub(crate) fn bucket_bits(ids: u32) -> u32 {
    ids.max(2)
        .next_power_of_two()
        .trailing_zeros()
        .saturating_sub(2)
        .clamp(4, MAX_BUCKET_BITS)
}

/// A gram with its own list.
#[derive(Debug, Clone, Copy)]
struct Common {
    key: Gram,
    count: u32,
    span: Span,
}

/// Postings read from an index file on demand.
pub(crate) struct DiskPostings {
    file: File,
    /// Grams with their own list, ascending keys.
    common: Vec<Common>,
    bucket_bits: u32,
    buckets_start: u64,
    blob_start: u64,
    blob_len: u64,
    /// The posting ids the index gave out: every list's ids are below.
    ids: u32,
}

/// Where a list is in the blob: offset and length in bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) offset: u64,
    pub(crate) len: u32,
}

impl DiskPostings {
    fn common(&self, gram: Gram) -> Option<&Common> {
        self.common
            .binary_search_by_key(&gram, |c| c.key)
            .ok()
            .map(|i| &self.common[i])
    }

    /// The pieces that may hold `gram`: its own list, or its bucket's.
    ///
    /// # Errors
    /// An I/O error or a corrupt list.
    pub(crate) fn get(&self, gram: Gram) -> io::Result<RoaringBitmap> {
        let span = match self.common(gram) {
            Some(c) => c.span,
            None => {
                let b = u64::from(gram >> (32 - self.bucket_bits));
                let mut row = [0u8; BUCKET_ROW];
                self.file
                    .read_exact_at(&mut row, self.buckets_start + b * BUCKET_ROW as u64)?;
                span_of(&row, self.blob_len)?
            }
        };
        let mut buf = vec![0u8; span.len as usize];
        self.file
            .read_exact_at(&mut buf, self.blob_start + span.offset)?;
        lists::decode(&buf, self.ids)
    }

    /// How many pieces hold `gram` when it has its own list; 0 for a gram
    /// of a bucket (few pieces hold it).
    pub(crate) fn weight(&self, gram: Gram) -> u64 {
        self.common(gram).map_or(0, |c| u64::from(c.count))
    }
}

/// The span of a bucket row (u64 offset, u32 length), checked against the blob.
fn span_of(row: &[u8; BUCKET_ROW], blob_len: u64) -> io::Result<Span> {
    let (offset, len) = row.split_at(8);
    let offset = u64::from_le_bytes(offset.try_into().unwrap_or_default());
    let len = u32::from_le_bytes(len.try_into().unwrap_or_default());
    if offset
        .checked_add(u64::from(len))
        .is_none_or(|end| end > blob_len)
    {
        return Err(corrupt("a list past the blob"));
    }
    Ok(Span { offset, len })
}

/// Writes an index file at `path` (through `path.tmp`): the file table of
/// `entries`, then the postings the two merges yield (`lower`: keys below
/// 2^31, `upper`: the others; ascending key order, each list ascending,
/// every id below `ids`). With `parallel`, the upper half is merged by a
/// second thread into `path.upper.tmp` and copied after the lower half.
/// Returns the size written.
///
/// # Errors
/// Any I/O error, keys out of order, or a file over `max_bytes`; nothing
/// is left at `path` then.
pub(crate) fn save(
    path: &Path,
    root: &Path,
    entries: &[Entry],
    halves: (&mut Merge, &mut Merge),
    ids: u32,
    max_bytes: u64,
    parallel: bool,
) -> io::Result<u64> {
    let tmp = path.with_extension("tmp");
    let upper_tmp = path.with_extension("upper.tmp");
    let (lower, upper) = halves;
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        let blob_start = write_header(&mut out, root, entries)?;
        let room = max_bytes.saturating_sub(blob_start);
        let write_upper = |upper: &mut Merge| -> io::Result<Half> {
            let mut file = BufWriter::with_capacity(1 << 20, File::create(&upper_tmp)?);
            let half = write_half(upper, &mut file, ids, room)?;
            file.flush()?;
            Ok(half)
        };
        let (low, high) = if parallel {
            std::thread::scope(|scope| {
                let high = scope.spawn(|| write_upper(upper));
                let low = write_half(lower, &mut out, ids, room);
                let high = high
                    .join()
                    .unwrap_or_else(|_| Err(io::Error::other("the merge thread panicked")));
                (low, high)
            })
        } else {
            let low = write_half(lower, &mut out, ids, room);
            (low, write_upper(upper))
        };
        let (low, high) = (low?, high?);
        check_cap(blob_start + low.len + high.len, max_bytes)?;
        io::copy(&mut File::open(&upper_tmp)?, &mut out)?;
        let table_start = blob_start + low.len + high.len;
        let shift = |span: Span| Span {
            offset: span.offset + low.len,
            len: span.len,
        };
        let common: Vec<Common> = low
            .common
            .iter()
            .copied()
            .chain(high.common.iter().map(|c| Common {
                span: shift(c.span),
                ..*c
            }))
            .collect();
        let bits = bucket_bits(ids);
        let mut buckets = vec![Span { offset: 0, len: 0 }; 1 << bits];
        for &(b, span) in &low.buckets {
            buckets[b] = span;
        }
        for &(b, span) in &high.buckets {
            buckets[b] = shift(span);
        }
        for c in &common {
            out.write_all(&c.key.to_le_bytes())?;
            out.write_all(&c.count.to_le_bytes())?;
            out.write_all(&c.span.offset.to_le_bytes())?;
            out.write_all(&c.span.len.to_le_bytes())?;
        }
        for span in &buckets {
            out.write_all(&span.offset.to_le_bytes())?;
            out.write_all(&span.len.to_le_bytes())?;
        }
        let written =
            table_start + (common.len() * EXACT_ROW + buckets.len() * BUCKET_ROW + FOOTER) as u64;
        check_cap(written, max_bytes)?;
        out.write_all(&blob_start.to_le_bytes())?;
        out.write_all(&table_start.to_le_bytes())?;
        out.write_all(&(common.len() as u64).to_le_bytes())?;
        out.write_all(&bits.to_le_bytes())?;
        out.write_all(&ids.to_le_bytes())?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        let size = file.metadata()?.len();
        std::fs::rename(&tmp, path)?;
        Ok(size)
    })();
    let _ = std::fs::remove_file(&upper_tmp);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// What one half of the merge wrote: its lists' spans (from the half's
/// start), by gram and by bucket, and its length in bytes.
struct Half {
    common: Vec<Common>,
    buckets: Vec<(usize, Span)>,
    len: u64,
}

/// Writes the lists `postings` yields to `out`: a list of its own for a
/// gram in [`threshold`] pieces or more, else into its bucket's union.
/// At most `max_bytes`.
fn write_half(
    postings: &mut Merge,
    out: &mut impl Write,
    ids: u32,
    max_bytes: u64,
) -> io::Result<Half> {
    let mut blob = Blob {
        out,
        written: 0,
        max_bytes,
    };
    let (threshold, bits) = (threshold(ids), bucket_bits(ids));
    let mut common: Vec<Common> = Vec::new();
    let mut buckets = Vec::new();
    // The bucket being gathered, and its members' ids.
    let mut bucket: Option<usize> = None;
    let mut members: Vec<u32> = Vec::new();
    let mut list = Vec::new();
    let mut ids_of = Vec::new();
    let mut last = None::<Gram>;
    loop {
        let next = postings.next_into(&mut ids_of)?;
        if let Some(key) = next {
            if last.is_some_and(|l| l >= key) {
                return Err(io::Error::other("gram keys out of order"));
            }
            last = Some(key);
            if ids_of.len() >= threshold {
                list.clear();
                lists::encode(&ids_of, ids, &mut list);
                common.push(Common {
                    key,
                    count: u32::try_from(ids_of.len()).unwrap_or(u32::MAX),
                    span: blob.put(&list)?,
                });
                continue;
            }
        }
        let b = next.map(|key| (key >> (32 - bits)) as usize);
        if bucket.is_some() && bucket != b {
            if let Some(at) = bucket {
                members.sort_unstable();
                members.dedup();
                list.clear();
                lists::encode(&members, ids, &mut list);
                buckets.push((at, blob.put(&list)?));
            }
            members.clear();
        }
        let Some(b) = b else { break };
        bucket = Some(b);
        members.extend_from_slice(&ids_of);
    }
    Ok(Half {
        common,
        buckets,
        len: blob.written,
    })
}

/// Lists being written one after the other.
struct Blob<'a, W: Write> {
    out: &'a mut W,
    /// Bytes written so far, and the most allowed.
    written: u64,
    max_bytes: u64,
}

impl<W: Write> Blob<'_, W> {
    /// Appends `list`; its span.
    fn put(&mut self, list: &[u8]) -> io::Result<Span> {
        let len = u32::try_from(list.len()).map_err(|_| io::Error::other("posting over 4 GiB"))?;
        self.out.write_all(list)?;
        let span = Span {
            offset: self.written,
            len,
        };
        self.written += u64::from(len);
        check_cap(self.written, self.max_bytes)?;
        Ok(span)
    }
}

fn check_cap(written: u64, max_bytes: u64) -> io::Result<()> {
    if written > max_bytes {
        return Err(io::Error::other(format!(
            "the index would take over {} MiB, the cap (IndexConfig::max_disk_bytes)",
            max_bytes >> 20
        )));
    }
    Ok(())
}

/// Writes the magic, the root and the file table; the bytes written.
fn write_header(out: &mut impl Write, root: &Path, entries: &[Entry]) -> io::Result<u64> {
    let mut head = Vec::with_capacity(1 << 16);
    head.extend_from_slice(MAGIC);
    push_bytes(&mut head, root.as_os_str().as_bytes())?;
    push_u32(&mut head, entries.len())?;
    let mut written = 0u64;
    for e in entries {
        let rel = e.path.strip_prefix(root).unwrap_or(&e.path);
        push_bytes(&mut head, rel.as_os_str().as_bytes())?;
        head.extend_from_slice(&e.size.to_le_bytes());
        head.extend_from_slice(&e.mtime.0.to_le_bytes());
        head.extend_from_slice(&e.mtime.1.to_le_bytes());
        head.push(e.kind as u8);
        head.extend_from_slice(&e.first.to_le_bytes());
        head.extend_from_slice(&e.slots.to_le_bytes());
        lists::put_varint(&mut head, e.pieces.len() as u64);
        let mut last = (0u64, 1u64);
        for &(offset, line) in &e.pieces {
            lists::put_varint(&mut head, offset - last.0);
            lists::put_varint(&mut head, line - last.1);
            last = (offset, line);
        }
        if head.len() >= 1 << 16 {
            out.write_all(&head)?;
            written += head.len() as u64;
            head.clear();
        }
    }
    out.write_all(&head)?;
    Ok(written + head.len() as u64)
}

/// Reads the index file at `path` for `root`: its file table and its
/// postings. `Ok(None)` when it indexes another root.
///
/// # Errors
/// An I/O error or a corrupt file (an older version is one: it is rebuilt).
pub(crate) fn load(path: &Path, root: &Path) -> io::Result<Option<(Vec<Entry>, DiskPostings)>> {
    let file = File::open(path)?;
    let total = file.metadata()?.len();
    let mut input = BufReader::new(file.try_clone()?);
    let mut magic = [0u8; 8];
    input.read_exact(&mut magic)?;
    if &magic != MAGIC {
        return Err(corrupt("not an index file of this version"));
    }
    let stored_root = read_bytes(&mut input)?;
    if stored_root != root.as_os_str().as_bytes() {
        return Ok(None);
    }
    let n = read_u32(&mut input)?;
    let mut entries: Vec<Entry> = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let rel = read_bytes(&mut input)?;
        let size = u64::from_le_bytes(read_array(&mut input)?);
        let secs = i64::from_le_bytes(read_array(&mut input)?);
        let nanos = u32::from_le_bytes(read_array(&mut input)?);
        let [kind] = read_array::<1>(&mut input)?;
        let kind = match kind {
            0 => Kind::Text,
            1 => Kind::Binary,
            2 => Kind::Always,
            _ => return Err(corrupt("unknown file kind")),
        };
        let first = u32::from_le_bytes(read_array(&mut input)?);
        let slots = u32::from_le_bytes(read_array(&mut input)?);
        let count = read_varint(&mut input)?;
        // Ids ascend from file to file; pieces are fewer than the ids, and
        // start in order inside the file.
        let after = entries.last().map_or(0, |e| e.first + e.slots);
        if first < after
            || slots == 0
            || first.checked_add(slots).is_none()
            || count >= u64::from(slots)
        {
            return Err(corrupt("piece ids out of order"));
        }
        let mut pieces = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut last = (0u64, 1u64);
        for _ in 0..count {
            let offset = last.0.checked_add(read_varint(&mut input)?);
            let line = last.1.checked_add(read_varint(&mut input)?);
            let (Some(offset), Some(line)) = (offset, line) else {
                return Err(corrupt("pieces out of order"));
            };
            if offset <= last.0 || offset >= size || line <= last.1 {
                return Err(corrupt("pieces out of order"));
            }
            last = (offset, line);
            pieces.push(last);
        }
        entries.push(Entry {
            path: root.join(std::ffi::OsStr::from_bytes(&rel)),
            size,
            mtime: (secs, nanos),
            kind,
            first,
            slots,
            pieces,
        });
    }
    let here = io::Seek::stream_position(&mut input)?;
    let footer_at = total
        .checked_sub(FOOTER as u64)
        .ok_or_else(|| corrupt("no footer"))?;
    let mut footer = [0u8; FOOTER];
    file.read_exact_at(&mut footer, footer_at)?;
    let u64_at = |i: usize| u64::from_le_bytes(footer[i..i + 8].try_into().unwrap_or_default());
    let u32_at = |i: usize| u32::from_le_bytes(footer[i..i + 4].try_into().unwrap_or_default());
    let (blob_start, table_start, count, bits, ids) =
        (u64_at(0), u64_at(8), u64_at(16), u32_at(24), u32_at(28));
    let buckets_start = count
        .checked_mul(EXACT_ROW as u64)
        .and_then(|t| t.checked_add(table_start));
    let end = buckets_start.and_then(|b| b.checked_add((BUCKET_ROW as u64) << bits.min(63)));
    if blob_start != here
        || table_start < blob_start
        || !(4..=MAX_BUCKET_BITS).contains(&bits)
        || end != Some(footer_at)
        || entries.last().is_some_and(|e| e.first + e.slots > ids)
    {
        return Err(corrupt("footer does not match the file"));
    }
    let blob_len = table_start - blob_start;
    let buckets_start = buckets_start.unwrap_or(footer_at);
    let mut table =
        vec![0u8; usize::try_from(count).map_err(|_| corrupt("table too large"))? * EXACT_ROW];
    file.read_exact_at(&mut table, table_start)?;
    let mut common: Vec<Common> = Vec::with_capacity(table.len() / EXACT_ROW);
    for row in table.chunks_exact(EXACT_ROW) {
        let key = u32::from_le_bytes(row[0..4].try_into().unwrap_or_default());
        let count = u32::from_le_bytes(row[4..8].try_into().unwrap_or_default());
        let mut span = [0u8; BUCKET_ROW];
        span.copy_from_slice(&row[8..20]);
        let span = span_of(&span, blob_len)?;
        if common.last().is_some_and(|c| c.key >= key) {
            return Err(corrupt("gram table out of order"));
        }
        common.push(Common { key, count, span });
    }
    Ok(Some((
        entries,
        DiskPostings {
            file,
            common,
            bucket_bits: bits,
            buckets_start,
            blob_start,
            blob_len,
            ids,
        },
    )))
}

/// In-memory postings (an index that is not stored), gram by gram, of
/// both halves of the merge.
///
/// # Errors
/// A run that does not decode.
pub(crate) fn to_memory(
    halves: (&mut Merge, &mut Merge),
) -> io::Result<HashMap<Gram, RoaringBitmap>> {
    let mut out = HashMap::new();
    let mut ids = Vec::new();
    for postings in [halves.0, halves.1] {
        while let Some(k) = postings.next_into(&mut ids)? {
            let bitmap = RoaringBitmap::from_sorted_iter(ids.iter().copied())
                .map_err(|_| io::Error::other("posting ids out of order"))?;
            out.insert(k, bitmap);
        }
    }
    Ok(out)
}

fn read_varint(input: &mut impl Read) -> io::Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let [b] = read_array::<1>(input)?;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(corrupt("varint too long"))
}

fn push_u32(out: &mut Vec<u8>, n: usize) -> io::Result<()> {
    let n = u32::try_from(n).map_err(|_| io::Error::other("more than 2^32 entries"))?;
    out.extend_from_slice(&n.to_le_bytes());
    Ok(())
}

fn push_bytes(out: &mut Vec<u8>, bytes: &[u8]) -> io::Result<()> {
    push_u32(out, bytes.len())?;
    out.extend_from_slice(bytes);
    Ok(())
}

fn read_array<const N: usize>(input: &mut impl Read) -> io::Result<[u8; N]> {
    let mut buf = [0u8; N];
    input.read_exact(&mut buf)?;
    Ok(buf)
}

fn read_u32(input: &mut impl Read) -> io::Result<usize> {
    Ok(u32::from_le_bytes(read_array(input)?) as usize)
}

fn read_bytes(input: &mut impl Read) -> io::Result<Vec<u8>> {
    let len = read_u32(input)?;
    if len > MAX_PATH {
        return Err(corrupt("path longer than PATH_MAX"));
    }
    let mut buf = vec![0u8; len];
    input.read_exact(&mut buf)?;
    Ok(buf)
}

/// The file an index of `root` is stored in: `<state>/index/<hash of root>/grams.idx`.
pub(crate) fn location(state: &Path, root: &Path) -> PathBuf {
    // FNV-1a, 64 bits: stable across builds, unlike std's hasher.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in root.as_os_str().as_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    state
        .join("index")
        .join(format!("{h:016x}"))
        .join("grams.idx")
}

#[cfg(test)]
mod tests {
    use super::super::runs::{RunBuilder, halves};
    use super::*;

    /// A stored index of `files` files of 10 pieces each, where gram `g`
    /// (for g in 1..=300) is in the pieces `p` with `p % g == 0`: grams
    /// from every piece down to one or two, so both common grams and
    /// buckets are written. Returns the file, the root and the truth.
    fn stored(dir: &Path, files: u32) -> (PathBuf, PathBuf, Vec<(Gram, Vec<u32>)>) {
        let root = dir.join("root");
        let entries: Vec<Entry> = (0..files)
            .map(|f| Entry {
                path: root.join(format!("f{f}.rs")),
                size: 100_000,
                mtime: (1_700_000_000, 5),
                kind: Kind::Text,
                first: f * 10,
                slots: 10,
                pieces: (1..10).map(|p| (p * 4096, p * 100 + 1)).collect(),
            })
            .collect();
        let ids = files * 10;
        let keys = |g: u32| g.wrapping_mul(0x9e37_79b9);
        let mut truth: Vec<(Gram, Vec<u32>)> = (1..=300u32)
            .map(|g| (keys(g), (0..ids).filter(|p| p % g == 0).collect()))
            .collect();
        truth.sort_unstable();
        let mut runs = Vec::new();
        let mut builder = RunBuilder::default();
        for id in 0..ids {
            let held: Vec<Gram> = (1..=300u32).filter(|g| id % g == 0).map(keys).collect();
            builder.add(id, &held);
            if id % 37 == 36 {
                runs.extend(builder.take((id as usize, 0)));
            }
        }
        runs.extend(builder.take((usize::MAX, 0)));
        let (lower, upper) = halves(runs);
        let (mut lower, mut upper) = (Merge::new(lower), Merge::new(upper));
        let path = dir.join("grams.idx");
        save(
            &path,
            &root,
            &entries,
            (&mut lower, &mut upper),
            ids,
            1 << 30,
            true,
        )
        .unwrap();
        (path, root, truth)
    }

    #[test]
    fn a_stored_index_answers_every_gram_with_at_least_its_pieces() {
        let dir = tempfile::tempdir().unwrap();
        let (path, root, truth) = stored(dir.path(), 60);
        let (entries, disk) = load(&path, &root).unwrap().unwrap();
        assert_eq!(entries.len(), 60);
        assert_eq!(entries[7].pieces[2], (3 * 4096, 301));
        assert_eq!(entries[7].mtime, (1_700_000_000, 5));
        let threshold = threshold(600);
        let (mut common, mut folded) = (0, 0);
        for (key, ids) in &truth {
            let got: Vec<u32> = disk.get(*key).unwrap().iter().collect();
            if ids.len() >= threshold {
                // Its own list: exact, and its weight is its count.
                assert_eq!(&got, ids);
                assert_eq!(disk.weight(*key), ids.len() as u64);
                common += 1;
            } else {
                // A bucket: a superset.
                assert!(ids.iter().all(|id| got.contains(id)), "{key}");
                assert_eq!(disk.weight(*key), 0);
                folded += 1;
            }
        }
        assert!(common > 50 && folded > 50, "{common} {folded}");
        // Another root's file is not this index.
        assert!(load(&path, &dir.path().join("other")).unwrap().is_none());
    }

    #[test]
    fn a_cut_or_changed_index_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let (path, root, _) = stored(dir.path(), 20);
        let bytes = std::fs::read(&path).unwrap();
        let broken = dir.path().join("broken.idx");
        for cut in (0..bytes.len()).step_by(97) {
            std::fs::write(&broken, &bytes[..cut]).unwrap();
            assert!(load(&broken, &root).is_err(), "cut at {cut}");
        }
        // The footer's count of ids no longer covers the files.
        let mut changed = bytes.clone();
        let at = changed.len() - 4;
        changed[at..].copy_from_slice(&5u32.to_le_bytes());
        std::fs::write(&broken, &changed).unwrap();
        assert!(load(&broken, &root).is_err());
    }
}
