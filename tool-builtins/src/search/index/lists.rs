//! Posting lists in bytes: each list (ascending distinct ids) is stored in
//! the smallest of three encodings, chosen per list.
//!
//! ```text
//! (no bytes)                                the empty list
//! u8 1, varint n, varint first, u8 k, bits  Rice codes of the gaps: after `first`,
//!                                           each id minus the one before minus 1,
//!                                           as a unary quotient (zeros, then a one)
//!                                           and k low bits, least significant first
//! u8 2, varint lo, varint len, len bytes    a bitmap of ids 8*lo .. 8*(lo+len),
//!                                           least significant bit first
//! u8 3, varint u, then a Rice body          every id below u but those listed
//!                                           (a gram that nearly every piece holds)
//! ```
//!
//! Rice codes take about `2 + log2(mean gap)` bits per id: a gram in one
//! piece in 64 costs 8 bits a posting, where roaring's arrays take 16; a
//! bitmap takes one bit per id of its range, the least for a gram in more
//! than a quarter of the pieces; the complement, for one in nearly all.

use std::io;

use roaring::RoaringBitmap;

const RICE: u8 = 1;
const BITMAP: u8 = 2;
const COMPLEMENT: u8 = 3;

/// Appends the encoding of `ids` (ascending, distinct, all below
/// `universe`) to `out`: nothing for an empty list.
pub(crate) fn encode(ids: &[u32], universe: u32, out: &mut Vec<u8>) {
    let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
        return;
    };
    let (k, bits) = rice_params(ids);
    let rice =
        1 + varint_len(ids.len() as u64) + varint_len(u64::from(first)) + 1 + bits.div_ceil(8);
    let (lo, hi) = (first / 8, last / 8);
    let bitmap_len = (hi - lo + 1) as usize;
    let bitmap = 1 + varint_len(u64::from(lo)) + varint_len(bitmap_len as u64) + bitmap_len;
    // The complement pays only when most ids are in.
    let universe = universe.max(last.saturating_add(1));
    let absent = universe as usize - ids.len();
    if absent < ids.len() / 2 && absent < rice.min(bitmap) {
        let excluded = complement(ids, universe);
        let mut body = Vec::new();
        rice_body(&excluded, &mut body);
        if 1 + varint_len(u64::from(universe)) + body.len() < rice.min(bitmap) {
            out.push(COMPLEMENT);
            put_varint(out, u64::from(universe));
            out.extend_from_slice(&body);
            return;
        }
    }
    if bitmap < rice {
        out.push(BITMAP);
        put_varint(out, u64::from(lo));
        put_varint(out, bitmap_len as u64);
        let at = out.len();
        out.resize(at + bitmap_len, 0);
        for &id in ids {
            let bit = (id - lo * 8) as usize;
            out[at + bit / 8] |= 1 << (bit % 8);
        }
        return;
    }
    out.push(RICE);
    write_rice(ids, k, out);
}

/// The ids below `universe` not in `ids`.
fn complement(ids: &[u32], universe: u32) -> Vec<u32> {
    let mut out = Vec::with_capacity(universe as usize - ids.len());
    let mut next = 0u32;
    for &id in ids {
        out.extend(next..id);
        next = id + 1;
    }
    out.extend(next..universe);
    out
}

/// A Rice body of `ids` (possibly empty): count, first id, parameter, codes.
fn rice_body(ids: &[u32], out: &mut Vec<u8>) {
    if ids.is_empty() {
        put_varint(out, 0);
        return;
    }
    let (k, _) = rice_params(ids);
    write_rice(ids, k, out);
}

fn write_rice(ids: &[u32], k: u32, out: &mut Vec<u8>) {
    put_varint(out, ids.len() as u64);
    put_varint(out, u64::from(ids[0]));
    #[allow(clippy::cast_possible_truncation, reason = "k < 32")]
    out.push(k as u8);
    let mut bits = BitWriter::new(out);
    for w in ids.windows(2) {
        let v = u64::from(w[1] - w[0] - 1);
        bits.unary(v >> k);
        bits.put(v & ((1 << k) - 1), k);
    }
    bits.finish();
}

/// A Rice parameter for the gaps of `ids` (ascending, distinct) and at
/// most how many bits the codes take, from their count and span alone: `k`
/// is the binary logarithm of the mean gap, and the codes take
/// `(k + 1)` bits each plus at most (sum of gaps) >> k bits of quotients.
fn rice_params(ids: &[u32]) -> (u32, usize) {
    let (Some(&first), Some(&last)) = (ids.first(), ids.last()) else {
        return (0, 0);
    };
    let gaps = ids.len() as u64 - 1;
    if gaps == 0 {
        return (0, 0);
    }
    // The gaps less one each (what is coded) add up to this.
    let sum = u64::from(last - first) - gaps;
    let k = (sum / gaps).max(1).ilog2().min(31);
    let bits = gaps * u64::from(k + 1) + (sum >> k);
    (k, usize::try_from(bits).unwrap_or(usize::MAX))
}

/// The ids of an encoded list whose ids are all below `limit` (the
/// index's count of ids: a complement past it is refused, so a corrupt
/// file cannot make a huge bitmap).
///
/// # Errors
/// A corrupt list (unknown encoding, truncated, ids past 2^32 or out of
/// order, a complement past `limit`).
pub(crate) fn decode(buf: &[u8], limit: u32) -> io::Result<RoaringBitmap> {
    let Some((&tag, mut rest)) = buf.split_first() else {
        return Ok(RoaringBitmap::new());
    };
    match tag {
        BITMAP => {
            let (lo, bytes) = bitmap_parts(&mut rest)?;
            Ok(RoaringBitmap::from_lsb0_bytes(lo, bytes))
        }
        COMPLEMENT => {
            let universe = universe(&mut rest)?;
            if universe > limit {
                return Err(corrupt("complement past the index's ids"));
            }
            let mut all = RoaringBitmap::new();
            all.insert_range(0..universe);
            read_rice(rest, |id| {
                if all.remove(id) {
                    Ok(())
                } else {
                    Err(corrupt("complement past its range"))
                }
            })?;
            Ok(all)
        }
        RICE => {
            let mut ids = Vec::new();
            read_rice(rest, |id| {
                ids.push(id);
                Ok(())
            })?;
            RoaringBitmap::from_sorted_iter(ids).map_err(|_| corrupt("ids out of order"))
        }
        _ => Err(corrupt("unknown posting encoding")),
    }
}

/// Appends `base +` each id of an encoded list to `ids`.
///
/// # Errors
/// A corrupt list, or an id past 2^32 once `base` is added.
pub(crate) fn decode_into(buf: &[u8], base: u32, ids: &mut Vec<u32>) -> io::Result<()> {
    let Some((&tag, mut rest)) = buf.split_first() else {
        return Ok(());
    };
    let mut push = |id: u32| -> io::Result<()> {
        ids.push(
            base.checked_add(id)
                .ok_or_else(|| corrupt("id past 2^32"))?,
        );
        Ok(())
    };
    match tag {
        BITMAP => {
            let (lo, bytes) = bitmap_parts(&mut rest)?;
            for (i, &byte) in bytes.iter().enumerate() {
                let mut b = byte;
                while b != 0 {
                    let bit = b.trailing_zeros();
                    b &= b - 1;
                    let id = u32::try_from(i * 8)
                        .ok()
                        .and_then(|at| lo.checked_add(at + bit))
                        .ok_or_else(|| corrupt("id past 2^32"))?;
                    push(id)?;
                }
            }
            Ok(())
        }
        COMPLEMENT => {
            let universe = universe(&mut rest)?;
            let mut next = 0u32;
            read_rice(rest, |id| {
                if id >= universe {
                    return Err(corrupt("complement past its range"));
                }
                for i in next..id {
                    push(i)?;
                }
                next = id + 1;
                Ok(())
            })?;
            for i in next..universe {
                push(i)?;
            }
            Ok(())
        }
        RICE => read_rice(rest, push),
        _ => Err(corrupt("unknown posting encoding")),
    }
}

fn universe(rest: &mut &[u8]) -> io::Result<u32> {
    u32::try_from(get_varint(rest)?).map_err(|_| corrupt("universe past 2^32"))
}

/// The first id and the bytes of a bitmap list.
fn bitmap_parts<'a>(rest: &mut &'a [u8]) -> io::Result<(u32, &'a [u8])> {
    let lo = get_varint(rest)?;
    let len = get_varint(rest)?;
    let bytes = usize::try_from(len)
        .ok()
        .and_then(|len| rest.get(..len))
        .ok_or_else(|| corrupt("truncated bitmap"))?;
    let lo = lo
        .checked_mul(8)
        .filter(|&lo| lo.checked_add(len * 8).is_some_and(|end| end <= 1 << 32))
        .and_then(|lo| u32::try_from(lo).ok())
        .ok_or_else(|| corrupt("bitmap past 2^32"))?;
    Ok((lo, bytes))
}

/// Calls `each` with the ids of a Rice body, ascending.
fn read_rice(mut rest: &[u8], mut each: impl FnMut(u32) -> io::Result<()>) -> io::Result<()> {
    let n = get_varint(&mut rest)?;
    if n == 0 {
        return Ok(());
    }
    let first = get_varint(&mut rest)?;
    let (&k, rest) = rest
        .split_first()
        .ok_or_else(|| corrupt("truncated posting list"))?;
    let k = u32::from(k);
    // Every code takes a bit at least.
    if k > 31 || n - 1 > rest.len() as u64 * 8 {
        return Err(corrupt("bad posting list header"));
    }
    let mut id = u32::try_from(first).map_err(|_| corrupt("id past 2^32"))?;
    each(id)?;
    let mut bits = BitReader::new(rest);
    for _ in 1..n {
        let q = bits.unary()?;
        let r = bits.get(k)?;
        let gap = q
            .checked_shl(k)
            .filter(|g| g >> k == q)
            .map(|g| g | r)
            .ok_or_else(|| corrupt("gap past 2^64"))?;
        id = u64::from(id)
            .checked_add(gap + 1)
            .and_then(|v| u32::try_from(v).ok())
            .ok_or_else(|| corrupt("id past 2^32"))?;
        each(id)?;
    }
    Ok(())
}

/// Writes bits least significant first.
struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    len: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        Self {
            out,
            acc: 0,
            len: 0,
        }
    }

    /// The low `width` (at most 32) bits of `v`.
    fn put(&mut self, v: u64, width: u32) {
        self.acc |= v << self.len;
        self.len += width;
        while self.len >= 8 {
            #[allow(clippy::cast_possible_truncation, reason = "the low byte")]
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.len -= 8;
        }
    }

    /// `q` zeros, then a one.
    fn unary(&mut self, mut q: u64) {
        while q >= 32 {
            self.put(0, 32);
            q -= 32;
        }
        #[allow(clippy::cast_possible_truncation, reason = "q < 32")]
        self.put(1 << q, q as u32 + 1);
    }

    fn finish(self) {
        if self.len > 0 {
            #[allow(clippy::cast_possible_truncation, reason = "the last bits")]
            self.out.push(self.acc as u8);
        }
    }
}

/// Reads what [`BitWriter`] wrote.
struct BitReader<'a> {
    input: &'a [u8],
    acc: u64,
    len: u32,
}

impl<'a> BitReader<'a> {
    fn new(input: &'a [u8]) -> Self {
        Self {
            input,
            acc: 0,
            len: 0,
        }
    }

    fn refill(&mut self) {
        while self.len <= 56 {
            let Some((&b, rest)) = self.input.split_first() else {
                return;
            };
            self.acc |= u64::from(b) << self.len;
            self.len += 8;
            self.input = rest;
        }
    }

    fn unary(&mut self) -> io::Result<u64> {
        let mut q = 0u64;
        loop {
            self.refill();
            if self.len == 0 {
                return Err(corrupt("truncated posting list"));
            }
            let zeros = self.acc.trailing_zeros();
            if zeros < self.len {
                q += u64::from(zeros);
                self.acc = self.acc.checked_shr(zeros + 1).unwrap_or(0);
                self.len -= zeros + 1;
                return Ok(q);
            }
            q += u64::from(self.len);
            self.acc = 0;
            self.len = 0;
        }
    }

    fn get(&mut self, width: u32) -> io::Result<u64> {
        if width == 0 {
            return Ok(0);
        }
        self.refill();
        if self.len < width {
            return Err(corrupt("truncated posting list"));
        }
        let v = self.acc & ((1u64 << width) - 1);
        self.acc >>= width;
        self.len -= width;
        Ok(v)
    }
}

/// Appends `v` as a LEB128 varint.
pub(crate) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        #[allow(clippy::cast_possible_truncation, reason = "low 7 bits")]
        out.push((v as u8 & 0x7f) | 0x80);
        v >>= 7;
    }
    #[allow(clippy::cast_possible_truncation, reason = "under 0x80")]
    out.push(v as u8);
}

fn varint_len(mut v: u64) -> usize {
    let mut n = 1;
    while v >= 0x80 {
        v >>= 7;
        n += 1;
    }
    n
}

/// Reads a LEB128 varint from the front of `input`.
///
/// # Errors
/// Truncated or longer than 64 bits.
pub(crate) fn get_varint(input: &mut &[u8]) -> io::Result<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, rest) = input
            .split_first()
            .ok_or_else(|| corrupt("truncated varint"))?;
        *input = rest;
        v |= u64::from(b & 0x7f) << shift;
        if b < 0x80 {
            return Ok(v);
        }
    }
    Err(corrupt("varint too long"))
}

pub(crate) fn corrupt(what: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidData,
        format!("corrupt index file: {what}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(ids: &[u32], universe: u32) -> Vec<u8> {
        let mut buf = Vec::new();
        encode(ids, universe, &mut buf);
        let bitmap = decode(&buf, universe.max(ids.last().map_or(0, |&l| l + 1))).unwrap();
        assert_eq!(bitmap.iter().collect::<Vec<_>>(), ids);
        let mut got = vec![7];
        decode_into(&buf, 10, &mut got).unwrap();
        let want: Vec<u32> = std::iter::once(7)
            .chain(ids.iter().map(|i| i + 10))
            .collect();
        assert_eq!(got, want);
        buf
    }

    #[test]
    fn every_encoding_round_trips_and_the_smallest_is_chosen() {
        assert!(round_trip(&[], 100).is_empty());
        // Sparse: Rice codes.
        let sparse: Vec<u32> = (0..200).map(|i| i * 997 + i % 7).collect();
        let buf = round_trip(&sparse, 200_000);
        assert_eq!(buf[0], RICE);
        // About 2 + log2(997) bits an id.
        assert!(buf.len() < 200 * 13 / 8, "{}", buf.len());
        // Half the ids: a bitmap.
        let half: Vec<u32> = (1000..9000).filter(|i| i % 2 == 0 || i % 3 == 0).collect();
        let buf = round_trip(&half, 10_000);
        assert_eq!(buf[0], BITMAP);
        assert!(buf.len() < 1010, "{}", buf.len());
        // Nearly all: the complement.
        let most: Vec<u32> = (0..50_000).filter(|i| i % 1000 != 3).collect();
        let buf = round_trip(&most, 50_000);
        assert_eq!(buf[0], COMPLEMENT);
        assert!(buf.len() < 100, "{}", buf.len());
        // All of them, one id, ids at the ends of the range.
        assert_eq!(
            round_trip(&(0..5000).collect::<Vec<_>>(), 5000)[0],
            COMPLEMENT
        );
        round_trip(&[0], 1);
        round_trip(&[u32::MAX - 20], u32::MAX);
        round_trip(&[0, u32::MAX - 20], u32::MAX);
        round_trip(&[3, 4, 5, 6, 7, 1 << 30], u32::MAX);
    }

    #[test]
    fn random_lists_round_trip() {
        let mut x = 0x2545_f491_4f6c_dd1d_u64;
        for round in 0..500 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let universe = 1 + (x % 5000) as u32;
            let density = (x >> 20) % 101;
            let mut ids = Vec::new();
            let mut y = x;
            for id in 0..universe {
                y ^= y << 13;
                y ^= y >> 7;
                y ^= y << 17;
                if y % 100 < density {
                    ids.push(id);
                }
            }
            let buf = round_trip(&ids, universe);
            // Never much more than a bitmap of the whole range.
            assert!(
                buf.len() <= universe as usize / 8 + 12,
                "round {round}: {}",
                buf.len()
            );
        }
    }

    #[test]
    fn corrupt_lists_are_errors_not_panics() {
        let mut buf = Vec::new();
        encode(
            &(0..300).map(|i| i * 31).collect::<Vec<_>>(),
            10_000,
            &mut buf,
        );
        for cut in 1..buf.len() {
            let _ = decode(&buf[..cut], 10_000);
            let _ = decode_into(&buf[..cut], u32::MAX - 5, &mut Vec::new());
        }
        assert!(decode(&[9, 1, 2], 100).is_err());
        assert!(decode(&[RICE, 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0], 100).is_err());
        assert!(decode(&[BITMAP, 0xff, 0xff, 0xff, 0xff, 0x0f, 1, 1], 100).is_err());
        // A complement of 2^32 - 1 ids in an index of 100: refused, not built.
        assert!(decode(&[COMPLEMENT, 0xff, 0xff, 0xff, 0xff, 0x0f, 0], 100).is_err());
        assert!(decode(&[COMPLEMENT, 100, 0], 100).is_ok());
        assert!(decode_into(&[COMPLEMENT, 5, 1, 9, 0], 0, &mut Vec::new()).is_err());
    }
}
