//! The index on disk: one file, `grams.idx`, in the workspace's folder of
//! the private state folder, written to a temporary name and renamed into
//! place (a reader never sees half a file).
//!
//! Layout, all integers little-endian:
//! ```text
//! "ATGRAM03"                          magic and version
//! u32 len, bytes                      the workspace root it indexes
//! u32 n                               files, then n times:
//!   u32 len, bytes                    path relative to the root
//!   u64 size, i64 mtime s, u32 ns     as stat gave them when read
//!   u8 kind                           0 text, 1 binary, 2 always searched
//!   u32 first, u32 slots              the posting ids of its pieces
//!   u32 p, p times u64 offset, u64 line   where its pieces after the first start
//! blob                                the postings of every piece (ids), per gram in key order:
//!   u8 0, varint count, varint ids    a short list: the first id, then gaps
//!   u8 1, roaring bitmap              a longer one, in roaring's portable format
//! g times: u64 key, u32 length        the gram table, ascending keys, each
//!                                     posting's length in the blob
//! u64 blob start, u64 table start, u64 g    the footer
//! ```
//! Older versions (`ATGRAM01`: trigrams; `ATGRAM02`: postings of whole
//! files) are not read: such a file is rebuilt.
//! A serving process holds the file table and one key and offset per
//! [`BLOCK`] grams; a lookup reads one block of the gram table and one
//! posting list with positioned reads.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use roaring::RoaringBitmap;

use super::grams::Gram;
use super::runs::Merge;
use super::{Entry, Kind};

const MAGIC: &[u8; 8] = b"ATGRAM03";
/// Longest stored path, in bytes (Linux's `PATH_MAX`); a longer one means a corrupt file.
const MAX_PATH: usize = 4096;
/// Grams per block of the gram table: one key and offset per block stay in memory.
const BLOCK: usize = 256;
/// Bytes of one gram table row: the key and the posting's length.
const ROW: usize = 12;
/// Longest posting list stored as a list of gaps; longer ones are roaring bitmaps.
const MAX_LIST: usize = 24;

/// Postings read from an index file on demand.
pub(crate) struct DiskPostings {
    file: File,
    /// The first key of each block of the gram table, and where its first posting starts in the blob.
    blocks: Vec<(Gram, u64)>,
    grams: u64,
    blob_start: u64,
    table_start: u64,
}

/// Where a gram's postings are in the blob: offset and length in bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Span {
    pub(crate) offset: u64,
    pub(crate) len: u32,
}

impl DiskPostings {
    /// Where `gram`'s postings are, `None` when no file holds it.
    pub(crate) fn find(&self, gram: Gram) -> io::Result<Option<Span>> {
        let b = self.blocks.partition_point(|&(k, _)| k <= gram);
        let Some(b) = b.checked_sub(1) else {
            return Ok(None);
        };
        let first = (b * BLOCK) as u64;
        let rows = usize::try_from((self.grams - first).min(BLOCK as u64)).unwrap_or(BLOCK);
        let mut buf = vec![0u8; rows * ROW];
        self.file
            .read_exact_at(&mut buf, self.table_start + first * ROW as u64)?;
        let mut offset = self.blocks[b].1;
        for row in buf.chunks_exact(ROW) {
            let (k, len) = row.split_at(8);
            let k = u64::from_le_bytes(k.try_into().unwrap_or_default());
            let len = u32::from_le_bytes(len.try_into().unwrap_or_default());
            if k == gram {
                return Ok(Some(Span { offset, len }));
            }
            if k > gram {
                break;
            }
            offset += u64::from(len);
        }
        Ok(None)
    }

    /// The files of the postings at `span`.
    pub(crate) fn read(&self, span: Span) -> io::Result<RoaringBitmap> {
        let mut buf = vec![0u8; span.len as usize];
        self.file
            .read_exact_at(&mut buf, self.blob_start + span.offset)?;
        decode(&buf)
    }
}

/// The postings `ids` (ascending) in the blob's encoding, appended to `out`.
pub(crate) fn encode(ids: &[u32], out: &mut Vec<u8>) -> io::Result<()> {
    if ids.len() <= MAX_LIST {
        out.push(0);
        put_varint(out, ids.len() as u64);
        let mut last = 0u32;
        for (i, &id) in ids.iter().enumerate() {
            put_varint(out, u64::from(if i == 0 { id } else { id - last }));
            last = id;
        }
        return Ok(());
    }
    out.push(1);
    let bitmap = RoaringBitmap::from_sorted_iter(ids.iter().copied())
        .map_err(|_| io::Error::other("posting ids out of order"))?;
    bitmap.serialize_into(out)
}

/// The files of one encoded posting list.
fn decode(buf: &[u8]) -> io::Result<RoaringBitmap> {
    match buf.split_first() {
        Some((0, mut rest)) => {
            let n = get_varint(&mut rest)?;
            let mut ids = Vec::with_capacity(usize::try_from(n.min(MAX_LIST as u64)).unwrap_or(0));
            let mut last = 0u64;
            for i in 0..n {
                let v = get_varint(&mut rest)?;
                last = if i == 0 { v } else { last + v };
                ids.push(u32::try_from(last).map_err(|_| corrupt("file id past 2^32"))?);
            }
            RoaringBitmap::from_sorted_iter(ids).map_err(|_| corrupt("posting ids out of order"))
        }
        Some((1, rest)) => RoaringBitmap::deserialize_from(rest),
        _ => Err(corrupt("unknown posting encoding")),
    }
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        #[allow(clippy::cast_possible_truncation, reason = "low 7 bits")]
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation, reason = "under 0x80")]
    out.push(v as u8);
}

fn get_varint(input: &mut &[u8]) -> io::Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = input
            .split_first()
            .ok_or_else(|| corrupt("truncated posting list"))?;
        *input = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(corrupt("varint too long"))
}

/// Writes an index file at `path` (through `path.tmp`): the file table of
/// `entries`, then the postings `postings` yields (ascending key order,
/// each list ascending). Returns the size written.
///
/// # Errors
/// Any I/O error, keys out of order, or a file over `max_bytes`; nothing
/// is left at `path` then.
pub(crate) fn save(
    path: &Path,
    root: &Path,
    entries: &[Entry],
    postings: &mut Merge,
    max_bytes: u64,
) -> io::Result<u64> {
    let tmp = path.with_extension("tmp");
    let table_tmp = path.with_extension("table.tmp");
    let result = (|| {
        let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
        out.write_all(MAGIC)?;
        write_bytes(&mut out, root.as_os_str().as_bytes())?;
        write_u32(&mut out, entries.len())?;
        let mut written = 8 + 4 + root.as_os_str().len() as u64 + 4;
        for e in entries {
            let rel = e.path.strip_prefix(root).unwrap_or(&e.path);
            write_bytes(&mut out, rel.as_os_str().as_bytes())?;
            out.write_all(&e.size.to_le_bytes())?;
            out.write_all(&e.mtime.0.to_le_bytes())?;
            out.write_all(&e.mtime.1.to_le_bytes())?;
            out.write_all(&[e.kind as u8])?;
            out.write_all(&e.first.to_le_bytes())?;
            out.write_all(&e.slots.to_le_bytes())?;
            write_u32(&mut out, e.pieces.len())?;
            for &(offset, line) in &e.pieces {
                out.write_all(&offset.to_le_bytes())?;
                out.write_all(&line.to_le_bytes())?;
            }
            written += 4 + rel.as_os_str().len() as u64 + 21 + 12 + 16 * e.pieces.len() as u64;
        }
        let blob_start = written;
        let mut table = BufWriter::with_capacity(1 << 20, File::create(&table_tmp)?);
        let mut buf = Vec::new();
        let (mut grams, mut last) = (0u64, None::<Gram>);
        let mut ids = Vec::new();
        while let Some(key) = postings.next_into(&mut ids) {
            if last.is_some_and(|l| l >= key) {
                return Err(io::Error::other("gram keys out of order"));
            }
            last = Some(key);
            buf.clear();
            encode(&ids, &mut buf)?;
            let len =
                u32::try_from(buf.len()).map_err(|_| io::Error::other("posting over 4 GiB"))?;
            out.write_all(&buf)?;
            table.write_all(&key.to_le_bytes())?;
            table.write_all(&len.to_le_bytes())?;
            written += u64::from(len) + ROW as u64;
            grams += 1;
            if written > max_bytes {
                return Err(io::Error::other(format!(
                    "the index would take over {} MiB, the cap (IndexConfig::max_disk_bytes)",
                    max_bytes >> 20
                )));
            }
        }
        let table_start = written - grams * ROW as u64;
        let table = table.into_inner().map_err(io::IntoInnerError::into_error)?;
        drop(table);
        io::copy(&mut File::open(&table_tmp)?, &mut out)?;
        out.write_all(&blob_start.to_le_bytes())?;
        out.write_all(&table_start.to_le_bytes())?;
        out.write_all(&grams.to_le_bytes())?;
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        let size = file.metadata()?.len();
        std::fs::rename(&tmp, path)?;
        Ok(size)
    })();
    let _ = std::fs::remove_file(&table_tmp);
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
        let count = read_u32(&mut input)?;
        // Ids ascend from file to file; pieces are fewer than the ids, and
        // start in order inside the file.
        let after = entries.last().map_or(0, |e| e.first + e.slots);
        if first < after
            || slots == 0
            || first.checked_add(slots).is_none()
            || count >= slots as usize
        {
            return Err(corrupt("piece ids out of order"));
        }
        let mut pieces = Vec::with_capacity(count);
        let mut last = (0u64, 1u64);
        for _ in 0..count {
            let offset = u64::from_le_bytes(read_array(&mut input)?);
            let line = u64::from_le_bytes(read_array(&mut input)?);
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
    let footer_at = total.checked_sub(24).ok_or_else(|| corrupt("no footer"))?;
    let mut footer = [0u8; 24];
    file.read_exact_at(&mut footer, footer_at)?;
    let field =
        |i: usize| u64::from_le_bytes(footer[i * 8..i * 8 + 8].try_into().unwrap_or_default());
    let (blob_start, table_start, grams) = (field(0), field(1), field(2));
    if blob_start != here
        || table_start < blob_start
        || grams
            .checked_mul(ROW as u64)
            .and_then(|t| t.checked_add(table_start))
            != Some(footer_at)
    {
        return Err(corrupt("footer does not match the file"));
    }
    // One pass over the gram table: its order, its lengths, the block index.
    input
        .seek_relative(i64::try_from(table_start - here).map_err(|_| corrupt("blob too large"))?)?;
    let mut blocks = Vec::with_capacity(usize::try_from(grams / BLOCK as u64 + 1).unwrap_or(0));
    let (mut offset, mut last) = (0u64, None::<Gram>);
    for i in 0..grams {
        let key = u64::from_le_bytes(read_array(&mut input)?);
        let len = u32::from_le_bytes(read_array(&mut input)?);
        if last.is_some_and(|l| l >= key) {
            return Err(corrupt("gram table out of order"));
        }
        last = Some(key);
        if i % BLOCK as u64 == 0 {
            blocks.push((key, offset));
        }
        offset += u64::from(len);
    }
    if blob_start + offset != table_start {
        return Err(corrupt("postings do not fill the blob"));
    }
    Ok(Some((
        entries,
        DiskPostings {
            file,
            blocks,
            grams,
            blob_start,
            table_start,
        },
    )))
}

/// In-memory postings (an index that is not stored), gram by gram.
pub(crate) fn to_memory(postings: &mut Merge) -> io::Result<HashMap<Gram, RoaringBitmap>> {
    let mut out = HashMap::new();
    let mut ids = Vec::new();
    while let Some(k) = postings.next_into(&mut ids) {
        let bitmap = RoaringBitmap::from_sorted_iter(ids.iter().copied())
            .map_err(|_| io::Error::other("posting ids out of order"))?;
        out.insert(k, bitmap);
    }
    Ok(out)
}

fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt index file: {what}"),
    )
}

fn write_u32(out: &mut impl Write, n: usize) -> io::Result<()> {
    let n = u32::try_from(n).map_err(|_| io::Error::other("more than 2^32 entries"))?;
    out.write_all(&n.to_le_bytes())
}

fn write_bytes(out: &mut impl Write, bytes: &[u8]) -> io::Result<()> {
    write_u32(out, bytes.len())?;
    out.write_all(bytes)
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
