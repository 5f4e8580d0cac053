//! The index on disk: one file, `grams.idx`, in the workspace's folder of
//! the private state folder, written to a temporary name and renamed into
//! place (a reader never sees half a file).
//!
//! Layout, all integers little-endian:
//! ```text
//! "ATGRAM08"                          magic and version
//! zeros up to byte 4096               (rows aligned for direct writes)
//! shards, for s from 0:               the signature rows (`sigs`), per shard
//!   bits times: w times u64           of ids s * 64 Ki.. (w = its ids / 64, rounded up):
//!                                     row after row, bit i of word j = id 64 j + i
//! bits times: u32                     each row's count of ids set
//! shards times bits times: u32        CRC-32 of each row of each shard (its w words)
//! u32 len, bytes                      the workspace root it indexes
//! u32 n                               files, then n times:
//!   u32 len, bytes                    path relative to the root
//!   u64 size, i64 mtime s, u32 ns,    as stat gave them when read
//!   i64 ctime s, u32 ns, u64 dev,
//!   u64 inode
//!   u8 kind                           0 text, 1 binary, 2 always searched
//!   u32 first, u32 slots              the piece ids of its pieces
//!   varint p, p times varint, varint  where its pieces after the first start:
//!                                     byte offset and line number, each as
//!                                     the step from the piece before (0, 1)
//! u64 table start, u32 ids,           the footer: where the root is, the ids
//!   u32 log2 bits, u32 hashes,        given out, and the signatures' shape
//!   u32 gram lengths (bit n: grams of n bytes)
//!   u32 CRC-32                        of the magic and everything from the row
//!                                     counts to here (counts, row checksums,
//!                                     root, file table, footer)
//! ```
//! The rows come first so that a build writes each shard as it is done;
//! the file table follows once every file is read. Older versions
//! (`ATGRAM01` to `ATGRAM05`: posting lists of trigrams or sparse grams;
//! `ATGRAM06`: these rows without checksums, ctime or inode; `ATGRAM07`:
//! grams keyed with their length in the top byte), and an index
//! of another signature shape, are not read: such a file is rebuilt. A
//! serving process holds the file table, the row counts (32 KiB) and the
//! row checksums (32 KiB per shard of 64 Ki pieces); a row is read with
//! one positioned read per shard.
//!
//! Checksums: CRC-32 (`crc32fast`, already in the workspace's lock file
//! through `flate2`; hardware-accelerated, several GB/s). The one of the
//! table is checked when the file is loaded; a row's, each time the row is
//! read (a few KiB, well under a microsecond). A mismatch is a corrupt
//! file ([`io::ErrorKind::InvalidData`]): the index is rebuilt, so a byte
//! changed on disk can neither move line numbers nor drop candidates.

use std::fs::File;
use std::io::{self, BufWriter, Read, Seek, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use super::sigs::{self, Params};
use super::{Entry, Kind};

const MAGIC: &[u8; 8] = b"ATGRAM08";

/// Where the rows start: at 4 KiB (the magic, then zeros), so that a
/// build can write full shards' rows with direct writes.
const ROWS_AT: u64 = 4096;
/// Longest stored path, in bytes (Linux's `PATH_MAX`); a longer one means a corrupt file.
const MAX_PATH: usize = 4096;
/// Bytes of the footer.
const FOOTER: usize = 28;

/// The signature rows of an index: read from its file on demand, or held
/// in memory (an index that is not stored).
pub(crate) struct Rows {
    pub(crate) params: Params,
    /// The piece ids the rows cover: `0..ids`.
    pub(crate) ids: u32,
    /// Each row's count of ids set.
    counts: Vec<u32>,
    /// The CRC-32 of each row of each shard (shard after shard; empty in memory).
    crcs: Vec<u32>,
    source: Source,
}

enum Source {
    /// The index file and where its rows start.
    Disk(File),
    /// Each shard's rows, row after row.
    Memory(Vec<Vec<u64>>),
}

impl Rows {
    /// Rows of no ids (before a build has any).
    pub(crate) fn empty(params: Params) -> Self {
        Self {
            params,
            ids: 0,
            counts: vec![0; params.bits()],
            crcs: Vec::new(),
            source: Source::Memory(Vec::new()),
        }
    }

    /// Rows held in memory: `shards` as the build made them, of ids `0..ids`.
    pub(crate) fn memory(params: Params, ids: u32, shards: Vec<Vec<u64>>) -> Self {
        let mut counts = vec![0u32; params.bits()];
        for (s, words) in shards.iter().enumerate() {
            #[allow(clippy::cast_possible_truncation, reason = "shards fit u32")]
            let blocks = sigs::shard_blocks(ids, s as u32);
            add_counts(&mut counts, words, blocks);
        }
        Self {
            params,
            ids,
            counts,
            crcs: Vec::new(),
            source: Source::Memory(shards),
        }
    }

    /// Words of a row: `ids / 64`, rounded up.
    pub(crate) fn words(&self) -> usize {
        (self.ids as usize).div_ceil(64)
    }

    /// Writes row `row` into `out[..self.words()]` (bit `i` of word `j`:
    /// id `64 j + i`).
    ///
    /// # Errors
    /// An I/O error, a row past the signature's bits, or a row whose
    /// checksum does not match (a corrupt file, [`io::ErrorKind::InvalidData`]).
    pub(crate) fn row(&self, row: u32, out: &mut [u64]) -> io::Result<()> {
        let bits = self.params.bits();
        let r = row as usize;
        if r >= bits || out.len() < self.words() {
            return Err(io::Error::other("row out of range"));
        }
        let mut at = 0usize;
        let mut offset = ROWS_AT;
        let mut bytes = Vec::new();
        for s in 0..sigs::shard_count(self.ids) {
            let blocks = sigs::shard_blocks(self.ids, s);
            let part = &mut out[at..at + blocks];
            match &self.source {
                Source::Memory(shards) => {
                    let words = shards
                        .get(s as usize)
                        .and_then(|w| w.get(r * blocks..(r + 1) * blocks))
                        .ok_or_else(|| io::Error::other("rows missing"))?;
                    part.copy_from_slice(words);
                }
                Source::Disk(file) => {
                    bytes.resize(blocks * 8, 0);
                    file.read_exact_at(&mut bytes, offset + (r * blocks * 8) as u64)
                        .map_err(cut_short)?;
                    let want = self.crcs.get(s as usize * bits + r);
                    if want != Some(&crc32fast::hash(&bytes)) {
                        return Err(corrupt("a row's checksum does not match"));
                    }
                    for (w, b) in part.iter_mut().zip(bytes.chunks_exact(8)) {
                        *w = u64::from_le_bytes(b.try_into().unwrap_or_default());
                    }
                }
            }
            offset += (bits * blocks * 8) as u64;
            at += blocks;
        }
        Ok(())
    }

    /// How many ids have row `row` set (0 past the bits).
    pub(crate) fn weight(&self, row: u32) -> u64 {
        self.counts.get(row as usize).map_or(0, |&c| u64::from(c))
    }
}

/// Adds to `counts` the ones of each row of a shard's `words` (`blocks` a row).
fn add_counts(counts: &mut [u32], words: &[u64], blocks: usize) {
    if blocks == 0 {
        return;
    }
    for (c, row) in counts.iter_mut().zip(words.chunks_exact(blocks)) {
        *c += row.iter().map(|w| w.count_ones()).sum::<u32>();
    }
}

/// Bytes of the rows of an index of `ids` piece ids.
pub(crate) fn rows_bytes(params: Params, ids: u32) -> u64 {
    (0..sigs::shard_count(ids))
        .map(|s| (sigs::shard_blocks(ids, s) * params.bits() * 8) as u64)
        .sum()
}

/// An index file being written: shards first, then [`Writer::finish`].
/// Dropped unfinished, it leaves nothing behind.
pub(crate) struct Writer {
    file: Option<File>,
    /// The same file opened for direct writes (`O_DIRECT`), where the file
    /// system allows them: the rows of full shards go from the build's
    /// buffers to the disk without page-cache pages of their own (on a
    /// virtual machine whose freed memory goes back to the host, each new
    /// page costs microseconds; 280 MB of them took 0.7 s of CPU here).
    direct: Option<File>,
    tmp: PathBuf,
    path: PathBuf,
    params: Params,
    ids: u32,
    counts: Vec<u32>,
    /// CRC-32 of each row written, shard after shard.
    crcs: Vec<u32>,
    shards: u32,
    max_bytes: u64,
}

impl Writer {
    /// Starts the index file of `ids` piece ids at `path`.
    ///
    /// # Errors
    /// An I/O error, or rows alone over `max_bytes` (nothing is written then).
    pub(crate) fn create(
        path: &Path,
        params: Params,
        ids: u32,
        max_bytes: u64,
    ) -> io::Result<Self> {
        check_cap(ROWS_AT + rows_bytes(params, ids), max_bytes)?;
        let tmp = path.with_extension("tmp");
        let file = File::create(&tmp)?;
        // Made at once, so that a failed write below removes the file.
        let mut this = Self {
            file: None,
            direct: None,
            tmp,
            path: path.to_path_buf(),
            params,
            ids,
            counts: vec![0; params.bits()],
            crcs: Vec::new(),
            shards: 0,
            max_bytes,
        };
        let mut head = vec![0u8; ROWS_AT as usize];
        head[..MAGIC.len()].copy_from_slice(MAGIC);
        file.write_all_at(&head, 0)?;
        this.file = Some(file);
        this.direct = std::fs::OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_DIRECT)
            .open(&this.tmp)
            .ok();
        Ok(this)
    }

    /// Writes `bytes`, whole rows of shard `shard` from row `first` (each
    /// its words as little-endian bytes), at their place in the file:
    /// positioned writes, so the threads of a build write the rows of a
    /// shard at once; direct where the place, length and memory are
    /// aligned to 4 KiB (a full shard's rows from `sigs::ShardRows::encode`),
    /// else, or when the direct write fails, through the page cache.
    /// [`Writer::shard`] then records the shard.
    ///
    /// # Errors
    /// An I/O error, or rows of the wrong size.
    pub(crate) fn write_rows(&self, shard: u32, first: usize, bytes: &[u8]) -> io::Result<()> {
        let row = sigs::shard_blocks(self.ids, shard) * 8;
        if shard >= sigs::shard_count(self.ids)
            || row == 0
            || bytes.len() % row != 0
            || first + bytes.len() / row > self.params.bits()
        {
            return Err(io::Error::other("rows of a shard of the wrong size"));
        }
        let full = (sigs::shard_blocks(sigs::SHARD_IDS, 0) * self.params.bits() * 8) as u64;
        let at = ROWS_AT + u64::from(shard) * full + (first * row) as u64;
        let align = sigs::ALIGN as u64;
        if let Some(direct) = &self.direct {
            if at % align == 0
                && bytes.len() as u64 % align == 0
                && bytes.as_ptr().align_offset(sigs::ALIGN) == 0
                && direct.write_all_at(bytes, at).is_ok()
            {
                return Ok(());
            }
        }
        let file = self
            .file
            .as_ref()
            .ok_or_else(|| io::Error::other("finished"))?;
        file.write_all_at(bytes, at)
    }

    /// Records the next shard, its rows written by [`Writer::write_rows`]
    /// in `parts` (in row order): their counts and checksums.
    ///
    /// # Errors
    /// Parts that are not the shard's rows in order.
    pub(crate) fn shard(&mut self, parts: &[sigs::EncodedRows]) -> io::Result<()> {
        let mut next_row = 0;
        for p in parts {
            if p.rows.start != next_row
                || p.crcs.len() != p.rows.len()
                || p.counts.len() != p.rows.len()
            {
                return Err(io::Error::other("a shard of the wrong size"));
            }
            next_row = p.rows.end;
        }
        if next_row != self.params.bits() || self.shards >= sigs::shard_count(self.ids) {
            return Err(io::Error::other("a shard of the wrong size"));
        }
        for p in parts {
            for (c, add) in self.counts[p.rows.clone()].iter_mut().zip(&p.counts) {
                *c += add;
            }
            self.crcs.extend_from_slice(&p.crcs);
        }
        self.shards += 1;
        Ok(())
    }

    /// Writes the row counts, the file table and the footer, and renames
    /// the file into place; its size in bytes, and its rows as [`load`]
    /// would read them (the counts and checksums held here, the file opened
    /// again read-only), with no second read of the file table.
    ///
    /// # Errors
    /// An I/O error, shards missing, or a file over the cap; nothing is
    /// left at the path then.
    pub(crate) fn finish(mut self, root: &Path, entries: &[Entry]) -> io::Result<(u64, Rows)> {
        if self.shards != sigs::shard_count(self.ids) {
            return Err(io::Error::other("shards missing"));
        }
        let file = self
            .file
            .take()
            .ok_or_else(|| io::Error::other("finished"))?;
        let mut out = BufWriter::with_capacity(1 << 20, file);
        out.seek(io::SeekFrom::Start(
            ROWS_AT + rows_bytes(self.params, self.ids),
        ))?;
        let mut out = Hashing::new(out);
        let mut counts = Vec::with_capacity((self.counts.len() + self.crcs.len()) * 4);
        for c in self.counts.iter().chain(&self.crcs) {
            counts.extend_from_slice(&c.to_le_bytes());
        }
        out.write_all(&counts)?;
        let table_start = ROWS_AT + rows_bytes(self.params, self.ids) + counts.len() as u64;
        let table = write_table(&mut out, root, entries)?;
        check_cap(table_start + table + FOOTER as u64, self.max_bytes)?;
        out.write_all(&table_start.to_le_bytes())?;
        for v in [
            self.ids,
            self.params.log2_bits,
            self.params.hashes,
            self.params.lengths,
        ] {
            out.write_all(&v.to_le_bytes())?;
        }
        let (mut out, crc) = out.finish();
        out.write_all(&crc.to_le_bytes())?;
        // No fsync: the index is a cache, and a file cut short or holding
        // lost pages after a crash fails its checksums and is rebuilt.
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        let size = file.metadata()?.len();
        let read = File::open(&self.tmp)?;
        std::fs::rename(&self.tmp, &self.path)?;
        let rows = Rows {
            params: self.params,
            ids: self.ids,
            counts: std::mem::take(&mut self.counts),
            crcs: std::mem::take(&mut self.crcs),
            source: Source::Disk(read),
        };
        Ok((size, rows))
    }
}

/// A writer that keeps the CRC-32 of what goes through it, the magic first.
struct Hashing<W> {
    out: W,
    hasher: crc32fast::Hasher,
}

impl<W: Write> Hashing<W> {
    fn new(out: W) -> Self {
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(MAGIC);
        Self { out, hasher }
    }

    fn finish(self) -> (W, u32) {
        (self.out, self.hasher.finalize())
    }
}

impl<W: Write> Write for Hashing<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.out.write(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        // Unfinished or failed: no partial file stays.
        let _ = std::fs::remove_file(&self.tmp);
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

/// Writes the root and the file table; the bytes written.
fn write_table(out: &mut impl Write, root: &Path, entries: &[Entry]) -> io::Result<u64> {
    let mut head = Vec::with_capacity(1 << 16);
    push_bytes(&mut head, root.as_os_str().as_bytes())?;
    push_u32(&mut head, entries.len())?;
    let mut written = 0u64;
    for e in entries {
        let rel = e.path.strip_prefix(root).unwrap_or(&e.path);
        push_bytes(&mut head, rel.as_os_str().as_bytes())?;
        head.extend_from_slice(&e.size.to_le_bytes());
        head.extend_from_slice(&e.mtime.0.to_le_bytes());
        head.extend_from_slice(&e.mtime.1.to_le_bytes());
        head.extend_from_slice(&e.ctime.0.to_le_bytes());
        head.extend_from_slice(&e.ctime.1.to_le_bytes());
        head.extend_from_slice(&e.dev.to_le_bytes());
        head.extend_from_slice(&e.ino.to_le_bytes());
        head.push(e.kind as u8);
        head.extend_from_slice(&e.first.to_le_bytes());
        head.extend_from_slice(&e.slots.to_le_bytes());
        put_varint(&mut head, e.pieces.len() as u64);
        let mut last = (0u64, 1u64);
        for &(offset, line) in &e.pieces {
            put_varint(&mut head, offset - last.0);
            put_varint(&mut head, line - last.1);
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
/// rows. `Ok(None)` when it indexes another root.
///
/// # Errors
/// An I/O error or a corrupt file ([`io::ErrorKind::InvalidData`]: cut
/// short, a checksum that does not match, an older version, or signatures
/// of another shape than [`Params::current`]; it is rebuilt).
pub(crate) fn load(path: &Path, root: &Path) -> io::Result<Option<(Vec<Entry>, Rows)>> {
    load_file(path, root).map_err(cut_short)
}

fn load_file(path: &Path, root: &Path) -> io::Result<Option<(Vec<Entry>, Rows)>> {
    let file = File::open(path)?;
    let total = file.metadata()?.len();
    if total < ROWS_AT + FOOTER as u64 {
        return Err(corrupt("the file is cut short"));
    }
    let mut magic = [0u8; 8];
    file.read_exact_at(&mut magic, 0).map_err(cut_short)?;
    if &magic != MAGIC {
        return Err(corrupt("not an index file of this version"));
    }
    let footer_at = total
        .checked_sub(FOOTER as u64)
        .ok_or_else(|| corrupt("no footer"))?;
    let mut footer = [0u8; FOOTER];
    file.read_exact_at(&mut footer, footer_at)
        .map_err(cut_short)?;
    let u32_at = |i: usize| u32::from_le_bytes(footer[i..i + 4].try_into().unwrap_or_default());
    let table_start = u64::from_le_bytes(footer[0..8].try_into().unwrap_or_default());
    let ids = u32_at(8);
    let params = Params {
        log2_bits: u32_at(12),
        hashes: u32_at(16),
        lengths: u32_at(20),
    };
    if !params.valid() {
        return Err(corrupt("footer does not match the file"));
    }
    if params != Params::current() {
        return Err(corrupt("signatures of another shape"));
    }
    let counts_at = ROWS_AT + rows_bytes(params, ids);
    let shards = sigs::shard_count(ids) as usize;
    if counts_at + 4 * (params.bits() * (1 + shards)) as u64 != table_start
        || table_start > footer_at
    {
        return Err(corrupt("footer does not match the file"));
    }
    // Everything the checksum covers but the magic and the rows: counts,
    // row checksums, root, file table and footer (bounded by the file's size).
    let tail_len = usize::try_from(total - counts_at)
        .map_err(|_| corrupt("footer does not match the file"))?;
    let mut tail = vec![0u8; tail_len];
    file.read_exact_at(&mut tail, counts_at)
        .map_err(cut_short)?;
    let (covered, stored_crc) = tail.split_at(tail_len - 4);
    let mut hasher = crc32fast::Hasher::new();
    hasher.update(MAGIC);
    hasher.update(covered);
    if stored_crc != hasher.finalize().to_le_bytes() {
        return Err(corrupt("the checksum of the file table does not match"));
    }
    let words: Vec<u32> = covered[..4 * params.bits() * (1 + shards)]
        .chunks_exact(4)
        .map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()))
        .collect();
    let (counts, crcs) = words.split_at(params.bits());
    let (counts, crcs) = (counts.to_vec(), crcs.to_vec());
    if counts.iter().any(|&c| c > ids) {
        return Err(corrupt("row counts over the ids"));
    }
    let table_len = usize::try_from(footer_at - table_start).unwrap_or(usize::MAX);
    let table_at = (table_start - counts_at) as usize;
    let mut input = covered
        .get(table_at..table_at.saturating_add(table_len))
        .ok_or_else(|| corrupt("footer does not match the file"))?;
    let input = &mut input;
    let stored_root = read_bytes(input)?;
    if stored_root != root.as_os_str().as_bytes() {
        return Ok(None);
    }
    let n = read_u32(input)?;
    let mut entries: Vec<Entry> = Vec::with_capacity(n.min(1 << 20));
    for _ in 0..n {
        let rel = read_bytes(input)?;
        let size = u64::from_le_bytes(read_array(input)?);
        let secs = i64::from_le_bytes(read_array(input)?);
        let nanos = u32::from_le_bytes(read_array(input)?);
        let ctime_secs = i64::from_le_bytes(read_array(input)?);
        let ctime_nanos = u32::from_le_bytes(read_array(input)?);
        let dev = u64::from_le_bytes(read_array(input)?);
        let ino = u64::from_le_bytes(read_array(input)?);
        let [kind] = read_array::<1>(input)?;
        let kind = match kind {
            0 => Kind::Text,
            1 => Kind::Binary,
            2 => Kind::Always,
            _ => return Err(corrupt("unknown file kind")),
        };
        let first = u32::from_le_bytes(read_array(input)?);
        let slots = u32::from_le_bytes(read_array(input)?);
        let count = read_varint(input)?;
        // Ids ascend from file to file; pieces are fewer than the ids, and
        // start in order inside the file.
        let after = entries.last().map_or(0, |e| e.first + e.slots);
        if first < after
            || slots == 0
            || first.checked_add(slots).is_none_or(|end| end > ids)
            || count >= u64::from(slots)
        {
            return Err(corrupt("piece ids out of order"));
        }
        let mut pieces = Vec::with_capacity(usize::try_from(count).unwrap_or(0));
        let mut last = (0u64, 1u64);
        for _ in 0..count {
            let offset = last.0.checked_add(read_varint(input)?);
            let line = last.1.checked_add(read_varint(input)?);
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
            ctime: (ctime_secs, ctime_nanos),
            dev,
            ino,
            kind,
            first,
            slots,
            pieces,
        });
    }
    let mut rest = [0u8; 1];
    if input.read(&mut rest)? != 0 {
        return Err(corrupt("footer does not match the file"));
    }
    Ok(Some((
        entries,
        Rows {
            params,
            ids,
            counts,
            crcs,
            source: Source::Disk(file),
        },
    )))
}

/// Appends `v` as a LEB128 varint.
fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        #[allow(clippy::cast_possible_truncation, reason = "low 7 bits")]
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation, reason = "under 0x80")]
    out.push(v as u8);
}

/// A read past the end of the file is a corrupt (cut short) file.
fn cut_short(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::UnexpectedEof {
        corrupt("the file is cut short")
    } else {
        e
    }
}

/// The error of a file that is not a valid index.
fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt index file: {what}"),
    )
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
    use super::*;

    /// A stored index of `files` files of 10 pieces each, piece `id`
    /// holding the line `piece {id % 7}`; its file, root and rows' ids.
    fn stored(dir: &Path, files: u32) -> (PathBuf, PathBuf) {
        stored_with(dir, files, true)
    }

    /// [`stored`], with direct writes where the file system allows them
    /// or never.
    fn stored_with(dir: &Path, files: u32, direct: bool) -> (PathBuf, PathBuf) {
        let root = dir.join("root");
        let entries: Vec<Entry> = (0..files)
            .map(|f| Entry {
                path: root.join(format!("f{f}.rs")),
                size: 100_000,
                mtime: (1_700_000_000, 5),
                ctime: (1_700_000_001, 6),
                dev: 7,
                ino: u64::from(f) + 100,
                kind: Kind::Text,
                first: f * 10,
                slots: 10,
                pieces: (1..10).map(|p| (p * 4096, p * 100 + 1)).collect(),
            })
            .collect();
        let ids = files * 10;
        let params = Params::current();
        let path = dir.join("grams.idx");
        let mut writer = Writer::create(&path, params, ids, 1 << 30).unwrap();
        if !direct {
            writer.direct = None;
        }
        let mut sig = sigs::Signature::new(params);
        for s in 0..sigs::shard_count(ids) {
            let first = s * sigs::SHARD_IDS;
            let end = ids.min(first + sigs::SHARD_IDS);
            let shard = sigs::ShardRows::new(params, first, end);
            let mut t = sigs::Transposer::new(params);
            for id in first..end {
                sig.clear();
                sig.add_text(format!("piece {}", id % 7).as_bytes());
                sig.pack();
                t.add(id, &sig, &shard);
            }
            t.flush(&shard);
            let mut rows = sigs::EncodedRows::default();
            shard
                .encode(0..params.bits(), &mut rows, &mut |first, buf| {
                    writer.write_rows(s, first, buf.bytes())
                })
                .unwrap();
            writer.shard(std::slice::from_ref(&rows)).unwrap();
        }
        let (_, rows) = writer.finish(&root, &entries).unwrap();
        // What the writer hands back is what a load reads.
        let (_, loaded) = load(&path, &root).unwrap().unwrap();
        assert_eq!((&rows.counts, &rows.crcs), (&loaded.counts, &loaded.crcs));
        let (mut a, mut b) = (vec![0; rows.words()], vec![0; loaded.words()]);
        for r in [0, 1, params.bits() as u32 / 2, params.bits() as u32 - 1] {
            rows.row(r, &mut a).unwrap();
            loaded.row(r, &mut b).unwrap();
            assert_eq!(a, b, "row {r}");
        }
        (path, root)
    }

    /// Rows of full shards go out with direct writes (where the file
    /// system allows them), the rest through the page cache: the file is
    /// the same byte for byte as one written through the page cache alone.
    #[test]
    fn direct_and_buffered_writes_make_the_same_file() {
        let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        let files = sigs::SHARD_IDS / 10 + 30;
        let (direct, _) = stored_with(a.path(), files, true);
        let (buffered, _) = stored_with(b.path(), files, false);
        let (direct, buffered) = (
            std::fs::read(direct).unwrap(),
            std::fs::read(buffered).unwrap(),
        );
        assert_eq!(direct.len(), buffered.len());
        // All but the file table, which names each folder's own root.
        let ids = files * 10;
        let bits = Params::current().bits();
        let shards = sigs::shard_count(ids) as usize;
        let end =
            (ROWS_AT + rows_bytes(Params::current(), ids)) as usize + (bits + shards * bits) * 4;
        assert!(direct[..end] == buffered[..end], "the rows differ");
        assert_eq!(&direct[..8], MAGIC);
        assert!(direct[8..ROWS_AT as usize].iter().all(|&b| b == 0));
    }

    #[test]
    fn a_stored_index_answers_every_gram_with_at_least_its_pieces() {
        let dir = tempfile::tempdir().unwrap();
        // Over one shard of ids.
        let files = sigs::SHARD_IDS / 10 + 30;
        let (path, root) = stored(dir.path(), files);
        let (entries, rows) = load(&path, &root).unwrap().unwrap();
        assert_eq!(entries.len(), files as usize);
        assert_eq!(entries[7].pieces[2], (3 * 4096, 301));
        assert_eq!(entries[7].mtime, (1_700_000_000, 5));
        let params = rows.params;
        let mut words = vec![0u64; rows.words()];
        let mut acc = vec![0u64; rows.words()];
        for k in 0..7u32 {
            acc.iter_mut().for_each(|w| *w = !0);
            for g in super::super::grams::covering(format!("piece {k}").as_bytes()) {
                for r in params.rows(g) {
                    rows.row(r, &mut words).unwrap();
                    acc.iter_mut().zip(&words).for_each(|(a, w)| *a &= w);
                }
            }
            // Every piece holding it is named; the rows' counts agree.
            for id in (k..files * 10).step_by(7) {
                assert!(acc[id as usize / 64] >> (id % 64) & 1 == 1, "{k} {id}");
            }
            let named: u32 = acc.iter().map(|w| w.count_ones()).sum();
            assert!(named < files * 10 / 2, "{k}: {named}");
        }
        let total: u64 = (0..params.bits() as u32).map(|r| rows.weight(r)).sum();
        assert!(total > 0);
        // Another root's file is not this index.
        assert!(load(&path, &dir.path().join("other")).unwrap().is_none());
    }

    /// Review 29, F3: a one-byte change that still decodes is caught by
    /// the checksums (of the table on load, of a row when it is read).
    #[test]
    fn a_changed_byte_in_the_table_or_a_row_is_caught_by_its_checksum() {
        let dir = tempfile::tempdir().unwrap();
        let (path, root) = stored(dir.path(), 20);
        let bytes = std::fs::read(&path).unwrap();
        let broken = dir.path().join("broken.idx");
        // The last file's last line step (100, right before the footer):
        // 101 still decodes, and would move the piece's line numbers.
        let mut changed = bytes.clone();
        let at = changed.len() - FOOTER - 1;
        assert_eq!(changed[at], 100);
        changed[at] = 101;
        std::fs::write(&broken, &changed).unwrap();
        let e = load(&broken, &root).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            "corrupt index file: the checksum of the file table does not match"
        );
        // A bit of row 0: the file loads, reading that row fails, others read.
        let mut changed = bytes.clone();
        changed[ROWS_AT as usize + 3] ^= 0x10;
        std::fs::write(&broken, &changed).unwrap();
        let (_, rows) = load(&broken, &root).unwrap().unwrap();
        let mut words = vec![0u64; rows.words()];
        let e = rows.row(0, &mut words).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            e.to_string(),
            "corrupt index file: a row's checksum does not match"
        );
        rows.row(1, &mut words).unwrap();
        // Cut short: said so, not "failed to fill whole buffer".
        for cut in [0, 5, 100, bytes.len() / 2, bytes.len() - 1] {
            std::fs::write(&broken, &bytes[..cut]).unwrap();
            let e = load(&broken, &root).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::InvalidData, "cut at {cut}");
            assert!(e.to_string().starts_with("corrupt index file: "), "{e}");
        }
    }

    #[test]
    fn a_cut_or_changed_index_file_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let (path, root) = stored(dir.path(), 20);
        let bytes = std::fs::read(&path).unwrap();
        let broken = dir.path().join("broken.idx");
        for cut in (0..bytes.len()).step_by(97) {
            std::fs::write(&broken, &bytes[..cut]).unwrap();
            assert!(load(&broken, &root).is_err(), "cut at {cut}");
        }
        // The footer's count of ids no longer covers the files.
        let mut changed = bytes.clone();
        let at = changed.len() - 16;
        changed[at..at + 4].copy_from_slice(&5u32.to_le_bytes());
        std::fs::write(&broken, &changed).unwrap();
        assert!(load(&broken, &root).is_err());
        // Signatures of another shape: rebuilt, not misread.
        let mut changed = bytes.clone();
        let at = changed.len() - 8;
        changed[at..at + 4].copy_from_slice(&3u32.to_le_bytes());
        std::fs::write(&broken, &changed).unwrap();
        assert!(load(&broken, &root).is_err());
    }
}
