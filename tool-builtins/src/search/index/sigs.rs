//! Bit-sliced signatures: each piece of text gets a Bloom filter of
//! [`Params::bits`] bits, and the filters are stored *transposed*, one
//! row per bit position with one bit per piece (as in signature files and
//! `BitFunnel`). A gram sets [`Params::hashes`] bits (one multiply-shift
//! each) of the filter of every piece holding it, so the pieces that may
//! hold a gram are the AND of its rows: a few rows read per query, and a
//! build that hashes each gram once, with no sort and no per-gram table.
//! A bit set by another gram only adds a candidate (the grep engine checks
//! every candidate); a gram a piece holds always has its bits set, so no
//! match is ever missed.
//!
//! Grams are the 3- and 7-byte substrings of each line, ASCII letters
//! folded to lower case (see [`Gram`]; a build also adds those across the
//! line ends of a piece, which no query asks for: [`Signature::add_text`]):
//! two bits per byte of text; adding
//! 5-byte grams prunes slightly better but costs a third more hashing
//! (`docs/benchmarks.md`). Rows are grouped in *shards* of
//! [`SHARD_IDS`] piece ids, so a build holds one shard's rows at a time.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// A gram's key: its bytes packed big-endian from the top byte down
/// (see [`key`]).
pub(crate) type Gram = u64;

/// The key of a gram of 3 to 7 folded bytes (longer input is cut to 7):
/// its bytes packed big-endian from the top byte down, its length in the
/// lowest byte, so distinct grams have distinct keys. Stable across builds
/// and platforms (the signatures hash it, `sigs`); a build computes the
/// same value from the window of the last `n` bytes shifted to the top
/// ([`Signature::add_text`]).
#[inline]
pub(crate) fn key(gram: &[u8]) -> Gram {
    let gram = &gram[..gram.len().min(7)];
    let mut v = 0u64;
    for &b in gram {
        v = v << 8 | u64::from(b);
    }
    #[allow(clippy::cast_possible_truncation, reason = "at most 7")]
    let n = gram.len() as u32;
    v.checked_shl(64 - 8 * n).unwrap_or(0) | u64::from(n)
}

/// Piece ids per shard: 64 Ki (a row of a full shard is 8 KiB).
pub(crate) const SHARD_IDS: u32 = 1 << 16;

/// The shape of the signatures; stored with the index, which is rebuilt
/// when they differ from [`PARAMS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Params {
    /// Bits per signature: `1 << log2_bits`.
    pub(crate) log2_bits: u32,
    /// Bits each gram sets (1 to 3).
    pub(crate) hashes: u32,
    /// The lengths of the grams hashed: bit `n` for grams of `n` bytes
    /// (3 to 7).
    pub(crate) lengths: u32,
}

/// The signatures this build writes: 8192 bits (1 KiB) per piece of 4 KiB,
/// one bit per gram, grams of 3 and 7 bytes (chosen in `docs/benchmarks.md`).
pub(crate) const PARAMS: Params = Params {
    log2_bits: 13,
    hashes: 1,
    lengths: 1 << 3 | 1 << 7,
};

/// Odd multipliers of the multiply-shift hashes, one per bit of a gram.
const MULTIPLIERS: [u64; 3] = [
    0x9e37_79b9_7f4a_7c15,
    0xc2b2_ae3d_27d4_eb4f,
    0x1656_67b1_9e37_79f9,
];

impl Params {
    /// The shape in force: [`PARAMS`].
    #[cfg(not(test))]
    pub(crate) fn current() -> Params {
        PARAMS
    }

    /// The shape in force: [`PARAMS`], or for measurements (the ignored
    /// `candidate_counts`) the environment variables `ATGRAM_LOG2_BITS`,
    /// `ATGRAM_HASHES` and `ATGRAM_LENGTHS` (a mask: bit n for n-byte grams).
    #[cfg(test)]
    pub(crate) fn current() -> Params {
        static CURRENT: std::sync::OnceLock<Params> = std::sync::OnceLock::new();
        *CURRENT.get_or_init(|| {
            let get = |name: &str, default: u32, range: std::ops::RangeInclusive<u32>| {
                std::env::var(name)
                    .ok()
                    .and_then(|v| v.parse().ok())
                    .filter(|v| range.contains(v))
                    .unwrap_or(default)
            };
            Params {
                log2_bits: get("ATGRAM_LOG2_BITS", PARAMS.log2_bits, 8..=16),
                hashes: get("ATGRAM_HASHES", PARAMS.hashes, 1..=3),
                lengths: get("ATGRAM_LENGTHS", PARAMS.lengths, 8..=255) & 0xf8,
            }
        })
    }

    /// Whether a stored shape can be read (bits 2^8 to 2^16, 1 to 3
    /// hashes, grams of some lengths from 3 to 7 bytes).
    pub(crate) fn valid(&self) -> bool {
        (8..=16).contains(&self.log2_bits)
            && (1..=3).contains(&self.hashes)
            && self.lengths & 0xf8 != 0
            && self.lengths & !0xf8 == 0
    }

    /// The gram lengths hashed, ascending.
    pub(crate) fn gram_lengths(&self) -> impl Iterator<Item = usize> + '_ {
        (3..=7).filter(|n| self.lengths >> n & 1 == 1)
    }

    /// Bits per signature (rows of the index).
    pub(crate) fn bits(&self) -> usize {
        1 << self.log2_bits
    }

    /// The rows (bit positions) of `gram`: multiply-shift hashes of its
    /// bytes (the key without its length byte, which text grams never
    /// need: one that ends in zero bytes would hold NUL bytes).
    #[inline]
    pub(crate) fn rows(&self, gram: Gram) -> impl Iterator<Item = u32> + '_ {
        let shift = 64 - self.log2_bits;
        let gram = gram & !0xff;
        MULTIPLIERS[..self.hashes as usize].iter().map(move |&m| {
            #[allow(clippy::cast_possible_truncation, reason = "below 2^16")]
            let r = (gram.wrapping_mul(m) >> shift) as u32;
            r
        })
    }
}

/// The signature of one piece: a Bloom filter of its grams.
pub(crate) struct Signature {
    params: Params,
    /// One byte per bit while text is added (a plain store per gram, no
    /// read): the bit is set when its byte equals `mark`. Each
    /// [`Signature::pack`] moves `mark` on instead of clearing the bytes
    /// (8 KiB for every 4 KiB piece), so they are zeroed only once every
    /// 255 packs, when `mark` wraps.
    bytes: Vec<u8>,
    /// The value that marks a set bit in `bytes` (1 to 255).
    mark: u8,
    /// The bits packed by [`Signature::pack`].
    words: Vec<u64>,
}

impl Signature {
    pub(crate) fn new(params: Params) -> Self {
        Self {
            params,
            bytes: vec![0; params.bits()],
            mark: 1,
            words: vec![0; params.bits() / 64],
        }
    }

    /// Adds every gram of folded `text`, which may hold several lines:
    /// the grams across a `\n` are added too (bits no query asks for,
    /// as a line's grams never hold a `\n`), which costs less than
    /// cutting the text into lines.
    #[inline]
    pub(crate) fn add_text(&mut self, text: &[u8]) {
        if self.params == PARAMS {
            self.add_text_fixed(text);
        } else {
            self.add_text_any(text);
        }
    }

    /// [`Signature::add_text`] for [`PARAMS`]: grams of 3 and 7 bytes,
    /// one bit each, with no loop over lengths or hashes. The window `v`
    /// holds the last 8 bytes, the newest lowest; shifting it left by
    /// `64 - 8 n` leaves the last `n` bytes at the top: [`key`] without
    /// its length byte, what [`Params::rows`] hashes.
    #[inline]
    fn add_text_fixed(&mut self, text: &[u8]) {
        const SHIFT: u32 = 64 - PARAMS.log2_bits;
        const M: u64 = MULTIPLIERS[0];
        let Ok(bytes) = <&mut [u8; 1 << PARAMS.log2_bits]>::try_from(&mut self.bytes[..]) else {
            return self.add_text_any(text);
        };
        // One multiply serves both lengths: `(v << s) * M` is
        // `(v * M) << s` (mod 2^64), so the top bits of the shifted gram's
        // product, which [`Params::rows`] takes, are bits `SHIFT - s` up of
        // `v * M`: bits 11..24 for the 3-byte gram (`s` = 40), 43..56 for
        // the 7-byte one (`s` = 8). Masked to 13 bits: no bounds check.
        const MASK: u64 = (1 << PARAMS.log2_bits) - 1;
        #[allow(clippy::cast_possible_truncation, reason = "below 2^13")]
        let row = |p: u64, s: u32| (p >> (SHIFT - s) & MASK) as usize;
        let mark = self.mark;
        let step = |v: u64, b: u8| v << 8 | u64::from(b);
        let mut v = 0u64;
        let head = text.len().min(6);
        for (i, &b) in text[..head].iter().enumerate() {
            v = step(v, b);
            if i >= 2 {
                bytes[row(v.wrapping_mul(M), 40)] = mark;
            }
        }
        let mut body = &text[head..];
        // A long text is taken as two halves at once: two windows, so two
        // chains of dependent steps that the processor overlaps (a build
        // 9 % faster than with one). The second window starts with the 6
        // bytes before its half (a 7-byte gram's other bytes), whose own
        // grams the first half adds.
        if body.len() >= 64 {
            let half = body.len() / 2;
            let (one, two) = body.split_at(half);
            let mut w = text[head + half - 6..head + half]
                .iter()
                .fold(0, |w, &b| step(w, b));
            for (&a, &b) in one.iter().zip(two) {
                v = step(v, a);
                w = step(w, b);
                let (p, q) = (v.wrapping_mul(M), w.wrapping_mul(M));
                bytes[row(p, 40)] = mark;
                bytes[row(p, 8)] = mark;
                bytes[row(q, 40)] = mark;
                bytes[row(q, 8)] = mark;
            }
            v = w;
            body = &two[half..];
        }
        for &b in body {
            v = step(v, b);
            let p = v.wrapping_mul(M);
            bytes[row(p, 40)] = mark;
            bytes[row(p, 8)] = mark;
        }
    }

    /// [`Signature::add_text`] for any [`Params`] (measurements).
    fn add_text_any(&mut self, text: &[u8]) {
        let shift = 64 - self.params.log2_bits;
        let hashes = self.params.hashes as usize;
        let mark = self.mark;
        let bytes = &mut self.bytes[..];
        let lengths: Vec<usize> = self.params.gram_lengths().collect();
        let mut v = 0u64;
        for (i, &b) in text.iter().enumerate() {
            v = v << 8 | u64::from(b);
            for &n in &lengths {
                if i + 1 < n {
                    break;
                }
                let gram = v << (64 - 8 * n);
                for &m in &MULTIPLIERS[..hashes] {
                    #[allow(clippy::cast_possible_truncation, reason = "below 2^16")]
                    let bit = (gram.wrapping_mul(m) >> shift) as usize;
                    if let Some(b) = bytes.get_mut(bit) {
                        *b = mark;
                    }
                }
            }
        }
    }

    /// Packs the lines added since the last call into the bits that
    /// [`Signature::ones`], [`Signature::count`] and [`Transposer::add`] read.
    pub(crate) fn pack(&mut self) {
        let mark = self.mark;
        for (w, chunk) in self.words.iter_mut().zip(self.bytes.chunks_exact(64)) {
            *w |= marked(chunk, mark);
        }
        self.next_mark();
    }

    /// Moves [`Signature::mark`] on, which unsets every byte; zeroes them
    /// when it wraps.
    fn next_mark(&mut self) {
        if self.mark == u8::MAX {
            self.bytes.fill(0);
            self.mark = 1;
        } else {
            self.mark += 1;
        }
    }

    /// Clears every bit.
    pub(crate) fn clear(&mut self) {
        self.next_mark();
        self.words.fill(0);
    }

    /// Clears every bit after [`Signature::pack`] (which left no line's
    /// bits unpacked): only the packed words.
    pub(crate) fn clear_packed(&mut self) {
        self.words.fill(0);
    }

    /// The rows (bit positions) set, ascending.
    pub(crate) fn ones(&self) -> impl Iterator<Item = u32> + '_ {
        self.words.iter().enumerate().flat_map(|(i, &w)| {
            let mut w = w;
            std::iter::from_fn(move || {
                if w == 0 {
                    return None;
                }
                let t = w.trailing_zeros();
                w &= w - 1;
                #[allow(clippy::cast_possible_truncation, reason = "below 2^16")]
                Some(i as u32 * 64 + t)
            })
        })
    }

    /// Bits set.
    pub(crate) fn count(&self) -> u64 {
        self.words.iter().map(|w| u64::from(w.count_ones())).sum()
    }
}

/// Bit `k` set where `chunk[k] == mark` (`chunk` is 64 bytes; any more
/// are ignored): 16 bytes per compare and byte mask (SSE2, which every
/// x86-64 processor has).
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[inline]
fn marked(chunk: &[u8], mark: u8) -> u64 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8, _mm_set1_epi8,
    };
    let mut x = 0u64;
    for (k, sixteen) in chunk.chunks_exact(16).take(4).enumerate() {
        #[allow(
            unsafe_code,
            reason = "SSE2 intrinsics: a 16-byte load, compare and mask"
        )]
        #[allow(
            clippy::cast_possible_wrap,
            reason = "the byte's bits, as the intrinsic takes them"
        )]
        // SAFETY: SSE2 is part of every x86-64 target, so the intrinsics
        // run; `sixteen` is 16 initialised bytes and `_mm_loadu_si128`
        // reads exactly 16 bytes from its pointer, with no alignment
        // requirement.
        let bits = unsafe {
            let v = _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(mark as i8)))
        };
        #[allow(clippy::cast_sign_loss, reason = "16 mask bits, the rest zero")]
        let bits = bits as u32;
        x |= u64::from(bits) << (16 * k);
    }
    x
}

/// Bit `k` set where `chunk[k] == mark` (`chunk` is 64 bytes).
#[cfg(not(all(target_arch = "x86_64", target_feature = "sse2")))]
#[inline]
fn marked(chunk: &[u8], mark: u8) -> u64 {
    chunk
        .iter()
        .take(64)
        .enumerate()
        .fold(0, |x, (k, &b)| x | u64::from(b == mark) << k)
}

/// The rows of one shard being built: ids `first..end`, the word of row
/// `r` for block `b` (ids `first + 64 b..`, one bit per id) at
/// `b * stride + r`, so a block's rows are written in order. Threads OR
/// whole words into it.
pub(crate) struct ShardRows {
    pub(crate) first: u32,
    pub(crate) end: u32,
    pub(crate) blocks: usize,
    bits: usize,
    /// Words from one block's rows to the next: the rows and a cache line
    /// more, so that the same row of successive blocks (read together when
    /// rows are written) falls in different cache sets, not all in one.
    stride: usize,
    words: Vec<AtomicU64>,
    /// Per group of [`GATHER`] rows, whether [`ShardRows::encode`] has
    /// read and zeroed it: once all are, the memory is zero again and
    /// [`ShardRows::reset`] has nothing to clear.
    cleared: Vec<AtomicBool>,
}

/// `n` zero words in memory the allocator hands over zeroed, which this
/// thread does not write: a shard's 64 MiB are fresh pages that the kernel
/// zeroes as the threads of the build first touch them, in parallel,
/// rather than one thread writing zeros over them before any piece is
/// read. (Huge pages were tried here: where the kernel has none free it
/// compacts memory first, which stalled a build for up to 190 ms.)
fn zeroed_words(n: usize) -> Vec<AtomicU64> {
    let Ok(layout) = std::alloc::Layout::array::<AtomicU64>(n) else {
        return (0..n).map(|_| AtomicU64::new(0)).collect();
    };
    if layout.size() == 0 {
        return Vec::new();
    }
    #[allow(unsafe_code, reason = "a zeroed allocation taken as atomics")]
    // SAFETY: the layout's size is not zero (checked above).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<AtomicU64>();
    if ptr.is_null() {
        std::alloc::handle_alloc_error(layout);
    }
    #[allow(unsafe_code, reason = "a zeroed allocation taken as atomics")]
    // SAFETY: `ptr` comes from the global allocator with the layout of
    // `n` `AtomicU64`s (their size and alignment, so capacity `n`), and
    // all `n` are initialised: zero bytes are a valid `AtomicU64`, which
    // has the size and bit validity of `u64`.
    unsafe {
        Vec::from_raw_parts(ptr, n, n)
    }
}

/// Words between blocks beyond their rows ([`ShardRows`]): one cache line.
const BLOCK_PAD: usize = 8;

impl ShardRows {
    /// Zeroed rows for ids `first..end` (`first` a multiple of 64).
    pub(crate) fn new(params: Params, first: u32, end: u32) -> Self {
        Self::in_memory(Vec::new(), params, first, end, false)
    }

    /// These rows' memory made zeroed rows for ids `first..end` (`first` a
    /// multiple of 64): a build reuses the memory of a shard written to
    /// disk rather than mapping fresh pages for each (64 MiB a shard). When
    /// every row was encoded (which zeroes what it reads) and the shape is
    /// the same, the memory is zero already and is not cleared again.
    pub(crate) fn reset(self, params: Params, first: u32, end: u32) -> Self {
        let zero =
            self.bits == params.bits() && self.cleared.iter().all(|c| c.load(Ordering::Relaxed));
        Self::in_memory(self.words, params, first, end, zero)
    }

    /// Zeroed rows for ids `first..end` in `words`' memory (grown or cut
    /// to size); `zero` when its words are all zero already.
    fn in_memory(
        mut words: Vec<AtomicU64>,
        params: Params,
        first: u32,
        end: u32,
        zero: bool,
    ) -> Self {
        let blocks = ((end - first) as usize).div_ceil(64);
        let stride = params.bits() + BLOCK_PAD;
        let len = blocks * stride;
        if words.capacity() < len {
            words = zeroed_words(len);
        } else {
            words.truncate(len);
            if !zero {
                for w in &mut words {
                    *w.get_mut() = 0;
                }
            }
            words.resize_with(len, || AtomicU64::new(0));
        }
        Self {
            first,
            end,
            blocks,
            bits: params.bits(),
            stride,
            words,
            cleared: (0..params.bits().div_ceil(GATHER))
                .map(|_| AtomicBool::new(false))
                .collect(),
        }
    }

    /// Whether `id` is in the shard.
    pub(crate) fn holds(&self, id: u32) -> bool {
        (self.first..self.end).contains(&id)
    }

    /// Rows `rows` (a range of multiples of 64, or ending at the last row)
    /// as the index file stores them: each row's words (one per block,
    /// ids ascending) as little-endian bytes, handed to `put` (first row,
    /// a buffer of whole rows aligned to 4 KiB for direct writes)
    /// [`ENCODE_ROWS`] rows at a time, with each row's CRC-32 and count of
    /// set bits kept in `out`. `put` may keep the buffer it is handed by
    /// swapping in another (empty, as large: see [`BufferPool`]); the one
    /// left is cleared and filled again. 64 rows (eight cache lines of
    /// each block) are gathered at a time; threads encode disjoint ranges
    /// of one shard at once. The words read are zeroed as they are read
    /// (the cache lines are at hand), so a shard wholly encoded needs no
    /// clearing before its memory holds the next ([`ShardRows::reset`]).
    ///
    /// # Errors
    /// The first error `put` returns.
    pub(crate) fn encode(
        &self,
        rows: std::ops::Range<usize>,
        out: &mut EncodedRows,
        put: &mut dyn FnMut(usize, &mut AlignedBuf) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let (blocks, stride) = (self.blocks, self.stride);
        out.rows = rows.start..rows.end.min(self.bits);
        out.crcs.clear();
        out.counts.clear();
        let chunk = encoded_bytes(blocks);
        out.bytes.clear();
        if out.bytes.capacity() < chunk {
            out.bytes = AlignedBuf::with_capacity(chunk);
        }
        let mut eight = vec![0u64; GATHER * blocks];
        let mut first = out.rows.start;
        for r0 in out.rows.clone().step_by(GATHER) {
            let n = GATHER.min(out.rows.end - r0);
            for (k, row) in eight.chunks_exact_mut(blocks.max(1)).take(n).enumerate() {
                for (b, w) in row.iter_mut().enumerate() {
                    let word = &self.words[b * stride + r0 + k];
                    *w = word.load(Ordering::Relaxed);
                    word.store(0, Ordering::Relaxed);
                }
            }
            for row in eight.chunks_exact(blocks.max(1)).take(n) {
                let bytes = out.bytes.push_words(row);
                out.crcs.push(crc32fast::hash(bytes));
                out.counts.push(row.iter().map(|w| w.count_ones()).sum());
            }
            if r0 % GATHER == 0 && (n == GATHER || r0 + n == self.bits) {
                if let Some(c) = self.cleared.get(r0 / GATHER) {
                    c.store(true, Ordering::Relaxed);
                }
            }
            if out.bytes.len() >= chunk || r0 + n == out.rows.end {
                put(first, &mut out.bytes)?;
                first = r0 + n;
                out.bytes.clear();
                if out.bytes.capacity() < chunk {
                    out.bytes = AlignedBuf::with_capacity(chunk);
                }
            }
        }
        Ok(())
    }

    /// The rows as plain words, row after row (row `r` the words
    /// `r * blocks..(r + 1) * blocks`); encoding them leaves the shard zero.
    #[cfg(test)]
    pub(crate) fn to_words(&self) -> Vec<u64> {
        let mut words = Vec::new();
        let _ = self.encode(0..self.bits, &mut EncodedRows::default(), &mut |_, buf| {
            words.extend(le_words(buf.bytes()));
            Ok(())
        });
        words
    }
}

/// The bytes [`ShardRows::encode`] hands on at a time for a shard of
/// `blocks` blocks: [`ENCODE_ROWS`] rows (4 MiB for a full shard).
pub(crate) fn encoded_bytes(blocks: usize) -> usize {
    ENCODE_ROWS * blocks * 8
}

/// A byte buffer whose contents start at a multiple of [`ALIGN`] in
/// memory, as direct writes need: it never grows past the capacity it was
/// made with, so its start never moves.
#[derive(Default)]
pub(crate) struct AlignedBuf {
    vec: Vec<u8>,
    /// Bytes before the aligned start.
    skip: usize,
}

impl AlignedBuf {
    /// An empty buffer for `bytes` bytes.
    pub(crate) fn with_capacity(bytes: usize) -> Self {
        let vec: Vec<u8> = Vec::with_capacity(bytes + ALIGN);
        let skip = vec.as_ptr().align_offset(ALIGN).min(ALIGN);
        let mut buf = Self { vec, skip };
        buf.clear();
        buf
    }

    /// The bytes it holds.
    pub(crate) fn bytes(&self) -> &[u8] {
        self.vec.get(self.skip..).unwrap_or_default()
    }

    /// How many bytes it holds.
    pub(crate) fn len(&self) -> usize {
        self.vec.len().saturating_sub(self.skip)
    }

    /// How many bytes it can hold without moving.
    pub(crate) fn capacity(&self) -> usize {
        self.vec.capacity().saturating_sub(self.skip)
    }

    /// Empties it (its memory kept).
    pub(crate) fn clear(&mut self) {
        self.vec.clear();
        self.vec.resize(self.skip, 0);
    }

    /// Appends `words` as little-endian bytes; the bytes appended.
    fn push_words(&mut self, words: &[u64]) -> &[u8] {
        let at = self.vec.len();
        self.vec.resize(at + words.len() * 8, 0);
        let out = &mut self.vec[at..];
        for (bytes, w) in out.chunks_exact_mut(8).zip(words) {
            bytes.copy_from_slice(&w.to_le_bytes());
        }
        out
    }
}

/// Buffers of one size that a build's encoding threads fill and its
/// writing thread empties ([`ShardRows::encode`]): at most `limit` exist,
/// and [`BufferPool::take`] waits for one to come back past that, which
/// bounds the rows waiting to be written (`limit` x the size).
pub(crate) struct BufferPool {
    size: usize,
    limit: usize,
    state: std::sync::Mutex<PoolState>,
    returned: std::sync::Condvar,
}

#[derive(Default)]
struct PoolState {
    free: Vec<AlignedBuf>,
    made: usize,
    /// No buffer comes back any more (the writer is gone): take makes new ones.
    closed: bool,
}

impl BufferPool {
    /// A pool of at most `limit` buffers of `size` bytes, made as needed.
    pub(crate) fn new(size: usize, limit: usize) -> Self {
        Self {
            size,
            limit: limit.max(1),
            state: std::sync::Mutex::default(),
            returned: std::sync::Condvar::new(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, PoolState> {
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// An empty buffer: a free one, a new one while fewer than the limit
    /// exist (or once the pool is closed), else the next one given back.
    pub(crate) fn take(&self) -> AlignedBuf {
        let mut state = self.lock();
        loop {
            if let Some(buf) = state.free.pop() {
                return buf;
            }
            if state.made < self.limit || state.closed {
                state.made += 1;
                drop(state);
                return AlignedBuf::with_capacity(self.size);
            }
            state = self
                .returned
                .wait(state)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
    }

    /// Gives `buf` back, emptied.
    pub(crate) fn give(&self, mut buf: AlignedBuf) {
        buf.clear();
        if buf.capacity() >= self.size {
            self.lock().free.push(buf);
            self.returned.notify_one();
        }
    }

    /// No more buffers will be given back: waiting takes make new ones.
    pub(crate) fn close(&self) {
        self.lock().closed = true;
        self.returned.notify_all();
    }
}

/// Rows gathered at a time from the block-by-block layout: 64 (eight
/// adjacent cache lines of each block, 512 KiB of scratch for a full shard).
const GATHER: usize = 64;

/// Rows a thread encodes before handing them on ([`ShardRows::encode`]):
/// 512 (4 MiB of a full shard).
pub(crate) const ENCODE_ROWS: usize = 512;

/// The alignment of encoded rows in memory: 4 KiB, as direct writes need.
pub(crate) const ALIGN: usize = 4096;

/// What [`ShardRows::encode`] keeps of the rows it encoded: their range,
/// and each one's CRC-32 and count of set bits; and its buffer.
#[derive(Default)]
pub(crate) struct EncodedRows {
    /// The rows encoded, of the shard's [`Params::bits`].
    pub(crate) rows: std::ops::Range<usize>,
    pub(crate) crcs: Vec<u32>,
    pub(crate) counts: Vec<u32>,
    bytes: AlignedBuf,
}

impl EncodedRows {
    /// The rows, checksums and counts, without the buffer.
    pub(crate) fn summary(&self) -> Self {
        Self {
            rows: self.rows.clone(),
            crcs: self.crcs.clone(),
            counts: self.counts.clone(),
            bytes: AlignedBuf::default(),
        }
    }
}

/// Little-endian bytes (whole words) as words.
pub(crate) fn le_words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes.chunks_exact(8).map(|b| {
        let mut w = [0u8; 8];
        w.copy_from_slice(b);
        u64::from_le_bytes(w)
    })
}

/// Turns the signatures of 64 consecutive ids (a *block*) into one word
/// per row: one build thread's scratch (64 signatures, 64 KiB at 8192 bits).
pub(crate) struct Transposer {
    /// Signature of id `64 * block + j` at words `j * per..(j + 1) * per`.
    sigs: Vec<u64>,
    per: usize,
    /// The ids of the block gathered so far (bit `j`).
    present: u64,
    /// The block (id / 64) being gathered.
    block: Option<u32>,
    /// The ids only this transposer adds to its shard (the unit being
    /// read): a block wholly inside is stored with plain stores, not
    /// atomic ORs.
    own: std::ops::Range<u32>,
}

impl Transposer {
    pub(crate) fn new(params: Params) -> Self {
        Self {
            sigs: vec![0; params.bits()],
            per: params.bits() / 64,
            present: 0,
            block: None,
            own: 0..0,
        }
    }

    /// Starts a unit whose ids `own` no other transposer adds to the
    /// shard (the block gathered so far is flushed first).
    pub(crate) fn own(&mut self, own: std::ops::Range<u32>, shard: &ShardRows) {
        self.flush(shard);
        self.own = own;
    }

    /// Adds the signature of piece `id` (in `shard`).
    pub(crate) fn add(&mut self, id: u32, sig: &Signature, shard: &ShardRows) {
        let block = id / 64;
        if self.block != Some(block) {
            self.flush(shard);
            self.block = Some(block);
        }
        let j = (id & 63) as usize;
        if let Some(slot) = self.sigs.get_mut(j * self.per..(j + 1) * self.per) {
            for (s, w) in slot.iter_mut().zip(&sig.words) {
                *s |= w;
            }
        }
        self.present |= 1 << j;
    }

    /// ORs the gathered block into `shard`: word `w` of the 64 signatures,
    /// transposed, is rows `64 w..64 w + 64`.
    pub(crate) fn flush(&mut self, shard: &ShardRows) {
        let Some(block) = self.block.take() else {
            return;
        };
        let at = (block - shard.first / 64) as usize;
        // A block wholly in `own` is this transposer's alone, and flushed
        // once (ids ascend within a unit): its words are still zero.
        let ids = u64::from(block) * 64..u64::from(block) * 64 + 64;
        let alone = u64::from(self.own.start) <= ids.start && ids.end <= u64::from(self.own.end);
        let mut a = [0u64; 64];
        let per = self.per;
        for w in 0..per {
            // Slots of ids not added are zero (cleared after each flush).
            for (x, sig) in a.iter_mut().zip(self.sigs[w..].iter().step_by(per)) {
                *x = *sig;
            }
            transpose64(&mut a);
            let at = at * shard.stride + w * 64;
            let Some(words) = shard.words.get(at..at + 64) else {
                continue;
            };
            if alone {
                // Every word, zeros too: no branch per word.
                for (word, &x) in words.iter().zip(&a) {
                    word.store(x, Ordering::Relaxed);
                }
            } else {
                for (word, &x) in words.iter().zip(&a) {
                    if x != 0 {
                        word.fetch_or(x, Ordering::Relaxed);
                    }
                }
            }
        }
        for j in 0..64 {
            if self.present >> j & 1 == 1 {
                self.sigs[j * self.per..(j + 1) * self.per]
                    .iter_mut()
                    .for_each(|x| *x = 0);
            }
        }
        self.present = 0;
    }
}

/// Transposes a 64 x 64 bit matrix in place: bit `j` of `a[i]` goes to
/// bit `i` of `a[j]` (swapping off-diagonal blocks of 32, 16, ..., 1).
fn transpose64(a: &mut [u64; 64]) {
    let mut s = 32;
    let mut mask: u64 = 0x0000_0000_ffff_ffff;
    while s != 0 {
        let mut k = 0;
        while k < 64 {
            for i in k..k + s {
                let t = ((a[i] >> s) ^ a[i + s]) & mask;
                a[i] ^= t << s;
                a[i + s] ^= t;
            }
            k += 2 * s;
        }
        s >>= 1;
        mask ^= mask << s;
    }
}

/// The words of one row over ids `0..ids` of shards stored row after row
/// (`read(shard, row, out)` fills one shard's part).
pub(crate) fn shard_blocks(ids: u32, shard: u32) -> usize {
    let first = shard * SHARD_IDS;
    (ids.saturating_sub(first).min(SHARD_IDS) as usize).div_ceil(64)
}

/// Shards of an index of `ids` piece ids.
pub(crate) fn shard_count(ids: u32) -> u32 {
    ids.div_ceil(SHARD_IDS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_aligned_buffer_starts_aligned_and_never_moves() {
        let mut buf = AlignedBuf::with_capacity(3 * ALIGN);
        let start = buf.bytes().as_ptr();
        assert_eq!(start.align_offset(ALIGN), 0);
        assert!(buf.capacity() >= 3 * ALIGN);
        let words: Vec<u64> = (0..(3 * ALIGN / 8) as u64).collect();
        let pushed = buf.push_words(&words).to_vec();
        assert_eq!(pushed.len(), 3 * ALIGN);
        assert_eq!(buf.len(), 3 * ALIGN);
        assert_eq!(buf.bytes().as_ptr(), start);
        assert_eq!(le_words(buf.bytes()).collect::<Vec<_>>(), words);
        buf.clear();
        assert_eq!(buf.len(), 0);
        assert_eq!(buf.bytes().as_ptr(), start);
    }

    /// The pool makes at most its limit of buffers; a take past it waits
    /// for one given back, and a closed pool makes new ones instead.
    #[test]
    fn the_pool_bounds_its_buffers_and_a_closed_one_never_waits() {
        let pool = BufferPool::new(ALIGN, 2);
        let (a, b) = (pool.take(), pool.take());
        let given = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let c = pool.take();
                // Only the buffer given back can have come.
                assert!(given.load(Ordering::SeqCst));
                c
            });
            std::thread::sleep(std::time::Duration::from_millis(100));
            assert!(
                !waiter.is_finished(),
                "a third buffer was made past the limit"
            );
            given.store(true, Ordering::SeqCst);
            pool.give(a);
            let c = waiter.join().unwrap();
            assert!(c.capacity() >= ALIGN);
            assert_eq!(c.len(), 0);
        });
        pool.close();
        let d = pool.take();
        assert!(d.capacity() >= ALIGN);
        drop(b);
    }

    #[test]
    fn a_line_sets_the_rows_of_its_grams() {
        let p = PARAMS;
        let mut sig = Signature::new(p);
        sig.add_text(b"kalomiren");
        sig.pack();
        let ones: Vec<u32> = sig.ones().collect();
        for g in [
            &b"kal"[..],
            b"mir",
            b"ren",
            b"kalomir",
            b"alomire",
            b"lomiren",
        ] {
            for r in p.rows(key(g)) {
                assert!(ones.contains(&r), "{g:?}");
            }
        }
        // 7 trigrams and 3 7-grams, a bit each: at most 10 bits.
        assert!(sig.count() <= 10 && sig.count() >= 7, "{}", sig.count());
        // A gram the line does not hold sets no bit of its own here (the
        // line's 10 bits of 8192 all differ from its row).
        let absent = p.rows(key(b"zzq")).next().unwrap();
        assert!(!ones.contains(&absent));
        sig.clear();
        assert_eq!(sig.count(), 0);
    }

    #[test]
    fn packing_keeps_every_bit_in_its_place() {
        let mut sig = Signature::new(PARAMS);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut want = vec![0u64; PARAMS.bits() / 64];
        for (i, b) in sig.bytes.iter_mut().enumerate() {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            if rng & 3 == 0 {
                *b = 1;
                want[i / 64] |= 1 << (i % 64);
            }
        }
        sig.pack();
        assert_eq!(sig.words, want);
        assert!(sig.count() > 1500, "{}", sig.count());
        // The bytes marked for that piece count as unset from now on.
        sig.clear_packed();
        sig.pack();
        assert_eq!(sig.count(), 0);
    }

    #[test]
    fn every_piece_packs_only_its_own_grams_across_the_marks_wrap() {
        // 600 pieces: the mark wraps twice; each piece's bits must equal
        // those of a fresh signature given the same line.
        let mut sig = Signature::new(PARAMS);
        for round in 0..600u32 {
            let line = format!("piece {round} holds {} and {}", round * 7919, round % 13);
            sig.add_text(line.as_bytes());
            sig.pack();
            let mut fresh = Signature::new(PARAMS);
            fresh.add_text(line.as_bytes());
            fresh.pack();
            assert_eq!(sig.words, fresh.words, "piece {round}");
            if round % 2 == 0 {
                sig.clear_packed();
            } else {
                sig.clear();
                // A file given up midway: its grams, added and cleared
                // unpacked, must not reach the next piece.
                sig.add_text(b"half of a binary file");
                sig.clear();
            }
        }
    }

    #[test]
    fn the_fixed_path_sets_exactly_the_bits_of_the_general_one() {
        // `add_text_fixed` takes both grams' rows from one product; the
        // general path shifts each gram to the top and multiplies it.
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        for round in 0..2000 {
            // Up to 300 bytes: texts of 70 bytes or more are taken as two
            // halves at once.
            let len = (next() % 300) as usize;
            let line: Vec<u8> = (0..len)
                .map(|_| {
                    if round % 2 == 0 {
                        (next() % 26) as u8 + b'a'
                    } else {
                        next() as u8
                    }
                })
                .collect();
            let (mut fixed, mut any) = (Signature::new(PARAMS), Signature::new(PARAMS));
            fixed.add_text_fixed(&line);
            any.add_text_any(&line);
            fixed.pack();
            any.pack();
            assert_eq!(fixed.words, any.words, "{line:?}");
            let grams = len.saturating_sub(2) + len.saturating_sub(6);
            assert!(fixed.count() as usize <= grams, "{line:?}");
            assert_eq!(fixed.count() == 0, len < 3, "{line:?}");
        }
    }

    #[test]
    fn a_key_is_the_window_the_build_hashes() {
        assert_eq!(key(b"abc"), 0x6162_6300_0000_0003);
        assert_eq!(key(b"abcdefgh"), key(b"abcdefg"));
        assert_ne!(key(b"abc"), key(b"abcde"));
        assert_eq!(key(b""), 0);
        assert_ne!(key(b"ab\0"), key(b"ab\0\0\0"));
    }

    #[test]
    fn a_transpose_moves_bit_j_of_word_i_to_bit_i_of_word_j() {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut a = [0u64; 64];
        for x in &mut a {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            *x = rng;
        }
        let before = a;
        transpose64(&mut a);
        for (i, row) in before.iter().enumerate() {
            for (j, col) in a.iter().enumerate() {
                assert_eq!(row >> j & 1, col >> i & 1, "{i} {j}");
            }
        }
    }

    #[test]
    fn a_reset_shard_is_zero_however_much_of_it_was_encoded() {
        let p = PARAMS;
        let fill = |shard: &ShardRows| {
            let (mut t, mut sig) = (Transposer::new(p), Signature::new(p));
            for id in shard.first..shard.end {
                sig.clear();
                sig.add_text(format!("piece {id} of the shard").as_bytes());
                sig.pack();
                t.add(id, &sig, shard);
            }
            t.flush(shard);
        };
        let mut shard = ShardRows::new(p, 0, 200);
        // All rows encoded; half of them; a put failing after the first
        // buffer; none.
        for round in 0..4 {
            fill(&shard);
            let mut calls = 0;
            let mut put = |_: usize, _: &mut AlignedBuf| {
                calls += 1;
                if round == 2 && calls > 1 {
                    Err(std::io::Error::other("disk full"))
                } else {
                    Ok(())
                }
            };
            let rows = match round {
                0 | 2 => 0..p.bits(),
                1 => 0..p.bits() / 2,
                _ => 0..0,
            };
            let mut out = EncodedRows::default();
            let done = shard.encode(rows, &mut out, &mut put);
            assert_eq!(done.is_err(), round == 2, "round {round}");
            shard = shard.reset(p, 0, 130);
            assert_eq!(shard.blocks, 3);
            assert!(shard.to_words().iter().all(|&w| w == 0), "round {round}");
            shard = shard.reset(p, 0, 200);
        }
    }

    #[test]
    fn transposed_rows_hold_each_piece_bit() {
        let p = PARAMS;
        let shard = ShardRows::new(p, 0, 200);
        let mut t = Transposer::new(p);
        let mut sig = Signature::new(p);
        for id in [3u32, 64, 65, 199] {
            sig.clear();
            sig.add_text(format!("piece number {id}").as_bytes());
            sig.pack();
            t.add(id, &sig, &shard);
        }
        t.flush(&shard);
        let blocks = shard.blocks;
        let words = shard.to_words();
        sig.clear();
        sig.add_text(b"piece number 65");
        sig.pack();
        for r in sig.ones() {
            let row = &words[r as usize * blocks..(r as usize + 1) * blocks];
            assert!(row[1] & 2 != 0, "row {r}");
        }
        assert_eq!(blocks, 4);
    }
}
