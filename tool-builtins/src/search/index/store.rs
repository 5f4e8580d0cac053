//! The index on disk: one file, `grams.idx`, in the workspace's folder of
//! the private state folder, written to a temporary name and renamed into
//! place (a reader never sees half a file).
//!
//! Layout, all integers little-endian:
//! ```text
//! "ATGRAM01"                          magic and version
//! u32 len, bytes                      the workspace root it indexes
//! u32 n                               files, then n times:
//!   u32 len, bytes                    path relative to the root
//!   u64 size, i64 mtime s, u32 ns     as stat gave them when read
//!   u8 kind                           0 text, 1 binary, 2 always searched
//! u32 g                               grams, then g times u32 gram (ascending)
//! (g + 1) times u64                   offset of each gram's postings in the blob
//! blob                                roaring bitmaps in their portable format
//! ```
//! Postings are read with positioned reads when a query needs them, so a
//! serving process holds only the file table and the gram table in memory.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use roaring::RoaringBitmap;

use super::{Entry, Kind};

const MAGIC: &[u8; 8] = b"ATGRAM01";
/// Longest stored path, in bytes (Linux's `PATH_MAX`); a longer one means a corrupt file.
const MAX_PATH: usize = 4096;

/// Postings read from an index file on demand.
pub(crate) struct DiskPostings {
    file: File,
    grams: Vec<u32>,
    offsets: Vec<u64>,
    blob_start: u64,
}

impl DiskPostings {
    /// The files holding `gram`, `None` when no file does.
    pub(crate) fn get(&self, gram: u32) -> io::Result<Option<RoaringBitmap>> {
        let Ok(i) = self.grams.binary_search(&gram) else {
            return Ok(None);
        };
        let (start, end) = (self.offsets[i], self.offsets[i + 1]);
        let len = usize::try_from(end.saturating_sub(start))
            .map_err(|_| io::Error::other("posting list too large"))?;
        let mut buf = vec![0u8; len];
        self.file.read_exact_at(&mut buf, self.blob_start + start)?;
        RoaringBitmap::deserialize_unchecked_from(&buf[..]).map(Some)
    }

    /// The size of `gram`'s postings in bytes (0 when absent): the cost of
    /// reading it, and a rank of how common the gram is.
    pub(crate) fn weight(&self, gram: u32) -> u64 {
        self.grams
            .binary_search(&gram)
            .map_or(0, |i| self.offsets[i + 1] - self.offsets[i])
    }
}

/// Writes `entries` and `postings` to `path` (through `path.tmp`),
/// returning the size written.
///
/// # Errors
/// Any I/O error; nothing is left at `path` then.
pub(crate) fn save(
    path: &Path,
    root: &Path,
    entries: &[Entry],
    postings: &HashMap<u32, RoaringBitmap>,
) -> io::Result<u64> {
    let tmp = path.with_extension("tmp");
    let result = (|| {
        let mut out = BufWriter::new(File::create(&tmp)?);
        out.write_all(MAGIC)?;
        write_bytes(&mut out, root.as_os_str().as_bytes())?;
        write_u32(&mut out, entries.len())?;
        for e in entries {
            let rel = e.path.strip_prefix(root).unwrap_or(&e.path);
            write_bytes(&mut out, rel.as_os_str().as_bytes())?;
            out.write_all(&e.size.to_le_bytes())?;
            out.write_all(&e.mtime.0.to_le_bytes())?;
            out.write_all(&e.mtime.1.to_le_bytes())?;
            out.write_all(&[e.kind as u8])?;
        }
        let mut grams: Vec<u32> = postings.keys().copied().collect();
        grams.sort_unstable();
        write_u32(&mut out, grams.len())?;
        for g in &grams {
            out.write_all(&g.to_le_bytes())?;
        }
        let mut offset = 0u64;
        for g in &grams {
            out.write_all(&offset.to_le_bytes())?;
            offset += postings[g].serialized_size() as u64;
        }
        out.write_all(&offset.to_le_bytes())?;
        for g in &grams {
            postings[g].serialize_into(&mut out)?;
        }
        let file = out.into_inner().map_err(io::IntoInnerError::into_error)?;
        file.sync_all()?;
        let size = file.metadata()?.len();
        std::fs::rename(&tmp, path)?;
        Ok(size)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Reads the index file at `path` for `root`: its file table and its
/// postings. `Ok(None)` when it indexes another root.
///
/// # Errors
/// An I/O error or a corrupt file.
pub(crate) fn load(path: &Path, root: &Path) -> io::Result<Option<(Vec<Entry>, DiskPostings)>> {
    let file = File::open(path)?;
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
    let mut entries = Vec::with_capacity(n.min(1 << 20));
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
        entries.push(Entry {
            path: root.join(std::ffi::OsStr::from_bytes(&rel)),
            size,
            mtime: (secs, nanos),
            kind,
        });
    }
    let g = read_u32(&mut input)?;
    let mut grams = Vec::with_capacity(g.min(1 << 24));
    for _ in 0..g {
        grams.push(u32::from_le_bytes(read_array(&mut input)?));
    }
    let mut offsets = Vec::with_capacity(g.min(1 << 24) + 1);
    for _ in 0..=g {
        offsets.push(u64::from_le_bytes(read_array(&mut input)?));
    }
    if grams.windows(2).any(|w| w[0] >= w[1]) || offsets.windows(2).any(|w| w[0] > w[1]) {
        return Err(corrupt("gram table out of order"));
    }
    let blob_start = io::Seek::stream_position(&mut input)?;
    let total = file.metadata()?.len();
    if blob_start + offsets.last().copied().unwrap_or(0) != total {
        return Err(corrupt("postings do not fill the file"));
    }
    Ok(Some((
        entries,
        DiskPostings {
            file,
            grams,
            offsets,
            blob_start,
        },
    )))
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
