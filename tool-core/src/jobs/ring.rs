//! The output file of one job: a fixed header and a ring of the last
//! [`capacity`](RingHeader) bytes the job printed, so a job that prints
//! forever uses a bounded file and every reader a bounded buffer.
//!
//! # Layout (all integers little-endian)
//! | bytes | field |
//! | --- | --- |
//! | 0..8 | magic `ATJOBv1\0` |
//! | 8..16 | total bytes ever written (`u64`) |
//! | 16..20 | end state (`u32`: 0 running, then [`JobEnd`] codes) |
//! | 20..24 | the end's value (`i32`: a raw wait status for processes, an exit code otherwise) |
//! | 24..32 | ring capacity in bytes (`u64`) |
//! | 32.. | the ring: the byte written at absolute offset `n` sits at `32 + n % capacity` |
//!
//! Writers write the data first and the total after it, so a reader that
//! saw total `T` finds every byte below `T` in place; a reader re-reads the
//! total after copying and drops what a concurrent writer may have
//! overwritten meanwhile (everything below the new `total - capacity`).
//!
//! The writing functions take a borrowed descriptor and fixed slices and
//! allocate nothing, so a forked supervisor (async-signal-safe code only)
//! can call them.

use std::io;
use std::os::fd::AsFd;

/// The first 8 bytes of every job output file.
pub const MAGIC: &[u8; 8] = b"ATJOBv1\0";
/// Size of the header before the ring, in bytes (32).
pub const HEADER_BYTES: u64 = 32;

/// How a job ended, as recorded in its output file's header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JobEnd {
    /// It ended on its own (a process exited, an in-process task returned).
    Exited,
    /// `job_kill` (or the host) stopped it.
    Killed,
    /// It ran past its lifetime cap and was stopped.
    Expired,
    /// It could not start.
    Failed,
    /// The host process that started it exited (or was killed) while it
    /// ran, and its supervisor stopped it: nobody could have reached it
    /// afterwards (see `JobRegistry::with_jobs_outliving_host`).
    HostExited,
}

impl JobEnd {
    fn code(self) -> u32 {
        match self {
            Self::Exited => 1,
            Self::Killed => 2,
            Self::Expired => 3,
            Self::Failed => 4,
            Self::HostExited => 5,
        }
    }

    fn from_code(code: u32) -> Option<Self> {
        Some(match code {
            1 => Self::Exited,
            2 => Self::Killed,
            3 => Self::Expired,
            4 => Self::Failed,
            5 => Self::HostExited,
            _ => return None,
        })
    }
}

/// A job output file's header, as read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RingHeader {
    /// Bytes ever written.
    pub total: u64,
    /// How the job ended; `None` while it runs.
    pub end: Option<(JobEnd, i32)>,
    /// The ring's capacity in bytes.
    pub capacity: u64,
}

/// Writes a fresh header (nothing written, running, `capacity` bytes of
/// ring). Allocates nothing.
///
/// # Errors
/// The `pwrite(2)` error.
pub fn init(fd: impl AsFd, capacity: u64) -> io::Result<()> {
    let mut header = [0_u8; HEADER_BYTES as usize];
    header[..8].copy_from_slice(MAGIC);
    header[24..32].copy_from_slice(&capacity.to_le_bytes());
    write_all_at(fd.as_fd(), &header, 0)
}

/// Appends `bytes` to the ring whose total so far is `total` (the caller
/// keeps it: one writer per file), then records the new total, which is
/// returned. Of a slice longer than the capacity only its end is written.
/// Allocates nothing.
///
/// # Errors
/// The `pwrite(2)` error; the total is then not advanced.
pub fn append(fd: impl AsFd, capacity: u64, total: u64, bytes: &[u8]) -> io::Result<u64> {
    let fd = fd.as_fd();
    if capacity == 0 {
        return Ok(total);
    }
    let len = bytes.len() as u64;
    let keep = len.min(capacity);
    let skipped = len - keep;
    let mut at = total + skipped;
    let mut rest = &bytes[usize::try_from(skipped).unwrap_or(0)..];
    while !rest.is_empty() {
        let pos = at % capacity;
        let room = usize::try_from(capacity - pos).unwrap_or(usize::MAX);
        let n = rest.len().min(room);
        write_all_at(fd, &rest[..n], HEADER_BYTES + pos)?;
        rest = &rest[n..];
        at += n as u64;
    }
    let new_total = total + len;
    write_all_at(fd, &new_total.to_le_bytes(), 8)?;
    Ok(new_total)
}

/// Records how the job ended (`value`: a raw wait status or an exit code).
/// Allocates nothing.
///
/// # Errors
/// The `pwrite(2)` error.
pub fn set_end(fd: impl AsFd, end: JobEnd, value: i32) -> io::Result<()> {
    let mut bytes = [0_u8; 8];
    bytes[..4].copy_from_slice(&end.code().to_le_bytes());
    bytes[4..].copy_from_slice(&value.to_le_bytes());
    write_all_at(fd.as_fd(), &bytes, 16)
}

fn write_all_at(fd: std::os::fd::BorrowedFd<'_>, mut bytes: &[u8], mut at: u64) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::pwrite(fd, bytes, at) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::WriteZero)),
            Ok(n) => {
                bytes = &bytes[n..];
                at += n as u64;
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

fn read_exact_at(fd: std::os::fd::BorrowedFd<'_>, buf: &mut [u8], mut at: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(fd, &mut buf[done..], at) {
            Ok(0) => return Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
            Ok(n) => {
                done += n;
                at += n as u64;
            }
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

/// Reads the header.
///
/// # Errors
/// `InvalidData` when the magic or the capacity is wrong; the read error.
pub fn header(fd: impl AsFd) -> io::Result<RingHeader> {
    let mut raw = [0_u8; HEADER_BYTES as usize];
    read_exact_at(fd.as_fd(), &mut raw, 0)?;
    if &raw[..8] != MAGIC {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "not a job output file (wrong magic)",
        ));
    }
    let word = |r: std::ops::Range<usize>| {
        let mut b = [0_u8; 8];
        b[..r.len()].copy_from_slice(&raw[r]);
        u64::from_le_bytes(b)
    };
    let total = word(8..16);
    let code = u32::try_from(word(16..20)).unwrap_or(0);
    let value = i32::from_le_bytes([raw[20], raw[21], raw[22], raw[23]]);
    let capacity = word(24..32);
    if capacity == 0 || capacity > super::MAX_OUTPUT_CAPACITY {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "job output file with an impossible capacity",
        ));
    }
    Ok(RingHeader {
        total,
        end: JobEnd::from_code(code).map(|e| (e, value)),
        capacity,
    })
}

/// What [`read_since`] found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RingRead {
    /// The bytes from `start` on (at most the `max` asked for).
    pub bytes: Vec<u8>,
    /// Absolute offset of the first byte returned.
    pub start: u64,
    /// Bytes after the reader's offset that were overwritten before it
    /// read them (the ring keeps only the last `capacity` bytes).
    pub dropped: u64,
    /// The header as it was after the copy.
    pub header: RingHeader,
}

/// Reads what was written from absolute offset `from` on, at most `max`
/// bytes (so a reader's memory is bounded by `max`, whatever the job printed).
///
/// # Errors
/// As [`header`].
pub fn read_since(fd: impl AsFd, from: u64, max: usize) -> io::Result<RingRead> {
    let fd = fd.as_fd();
    let before = header(fd)?;
    let cap = before.capacity;
    let oldest = before.total.saturating_sub(cap);
    let start = from.max(oldest).min(before.total);
    let len = usize::try_from(before.total - start)
        .unwrap_or(usize::MAX)
        .min(max);
    let mut bytes = vec![0_u8; len];
    let mut done = 0;
    while done < len {
        let at = start + done as u64;
        let pos = at % cap;
        let room = usize::try_from(cap - pos).unwrap_or(usize::MAX);
        let n = (len - done).min(room);
        read_exact_at(fd, &mut bytes[done..done + n], HEADER_BYTES + pos)?;
        done += n;
    }
    // A writer may have wrapped over the start of what was copied.
    let after = header(fd)?;
    let safe_from = after.total.saturating_sub(cap);
    let (bytes, start) = if safe_from > start {
        let cut = usize::try_from(safe_from - start)
            .unwrap_or(usize::MAX)
            .min(bytes.len());
        (bytes[cut..].to_vec(), start + cut as u64)
    } else {
        (bytes, start)
    };
    Ok(RingRead {
        dropped: start.saturating_sub(from),
        bytes,
        start,
        header: after,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file() -> std::fs::File {
        tempfile::tempfile().unwrap()
    }

    #[test]
    fn the_ring_keeps_the_last_capacity_bytes_and_counts_the_dropped() {
        let f = file();
        init(&f, 8).unwrap();
        let mut total = 0;
        total = append(&f, 8, total, b"abcdef").unwrap();
        let r = read_since(&f, 0, 100).unwrap();
        assert_eq!(
            (r.bytes.as_slice(), r.dropped, r.start),
            (&b"abcdef"[..], 0, 0)
        );
        total = append(&f, 8, total, b"ghijk").unwrap();
        assert_eq!(total, 11);
        let r = read_since(&f, 2, 100).unwrap();
        // 11 written, 8 kept: offsets 3..11 ("defghijk"); offset 2 was dropped.
        assert_eq!(
            (r.bytes.as_slice(), r.dropped, r.start),
            (&b"defghijk"[..], 1, 3)
        );
        let r = read_since(&f, 9, 1).unwrap();
        assert_eq!((r.bytes.as_slice(), r.start), (&b"j"[..], 9));
        // Longer than the ring: only its end is kept.
        total = append(&f, 8, total, b"0123456789").unwrap();
        assert_eq!(total, 21);
        assert_eq!(read_since(&f, 0, 100).unwrap().bytes, b"23456789");
        assert_eq!(header(&f).unwrap().end, None);
        set_end(&f, JobEnd::Exited, 256).unwrap();
        assert_eq!(header(&f).unwrap().end, Some((JobEnd::Exited, 256)));
    }

    #[test]
    fn a_file_that_is_not_a_job_output_is_refused() {
        let f = file();
        std::io::Write::write_all(&mut &f, &[7_u8; 64]).unwrap();
        let err = header(&f).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData);
        assert!(err.to_string().contains("magic"), "{err}");
    }
}
