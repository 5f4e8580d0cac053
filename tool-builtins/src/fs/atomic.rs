//! Atomic replacement of a file through its folder's handle, and removal of
//! the temporary files a killed writer left behind.
//!
//! A write goes to a new temporary file in the same folder (created with
//! `O_EXCL | O_NOFOLLOW` beneath the folder handle), is flushed with
//! `fsync`, gets the old file's permissions, and is renamed over the target
//! with `renameat`; the folder is then flushed so the rename survives a
//! crash. Readers see the old or the new content, never a mix.
//!
//! A writer killed with SIGKILL between creating and renaming its temporary
//! file leaves it behind (as large as the content, hidden by its leading
//! dot). The next write in that folder removes such files of this module's
//! naming pattern (`.<name>.<pid>.<n>.tmp`) that are older than
//! [`STALE_AFTER`] and whose process is gone (looking at most at the first
//! 10 000 entries of the folder).

use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, Mode, OFlags};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Bytes of the file's name kept in a temporary file's name: the rest
/// (`.`, pid, counter, `.tmp`: at most 33 bytes) keeps it under 255 bytes.
const TEMP_NAME_PREFIX: usize = 64;

/// Age after which a temporary file of a dead writer is removed: 1 minute.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(60);

/// The temporary name for writing `name`: `.<name, cut>.<pid>.<counter>.tmp`.
fn temp_name(name: &OsStr) -> OsString {
    let bytes = name.as_bytes();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(TEMP_NAME_PREFIX)]);
    let cut = tool_core::truncate::floor_char_boundary(&text, TEMP_NAME_PREFIX);
    OsString::from(format!(
        ".{}.{}.{}.tmp",
        &text[..cut],
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Writes `bytes` as `name` in the folder `dir` atomically; `mode` (the old
/// file's permission bits) is applied when given, else the new file gets
/// `0666` less the umask.
///
/// # Errors
/// Any I/O error (a full disk: `StorageFull`); the temporary file is removed
/// on failure and the old file is untouched.
pub(crate) fn write_at(
    dir: BorrowedFd<'_>,
    name: &OsStr,
    bytes: &[u8],
    mode: Option<u32>,
) -> io::Result<()> {
    remove_stale(dir);
    let temp = temp_name(name);
    let fd = rustix::fs::openat(
        dir,
        temp.as_os_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o666),
    )?;
    let result = (|| -> io::Result<()> {
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        if let Some(m) = mode {
            rustix::fs::fchmod(&file, Mode::from_raw_mode(m & 0o7777))?;
        }
        file.sync_all()?;
        drop(file);
        rustix::fs::renameat(dir, temp.as_os_str(), dir, name)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = rustix::fs::unlinkat(dir, temp.as_os_str(), AtFlags::empty());
    } else if let Ok(d) = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) {
        // Make the rename itself durable; best effort (not every filesystem allows it).
        let _ = rustix::fs::fsync(&d);
    }
    result
}

/// The pid in a temporary name of this module's pattern, if it is one.
pub(crate) fn temp_pid(name: &[u8]) -> Option<u32> {
    let rest = name.strip_prefix(b".")?.strip_suffix(b".tmp")?;
    let mut fields = rest.rsplitn(3, |&b| b == b'.');
    let counter = fields.next()?;
    let pid = fields.next()?;
    fields.next()?;
    if counter.is_empty() || !counter.iter().all(u8::is_ascii_digit) {
        return None;
    }
    std::str::from_utf8(pid).ok()?.parse().ok()
}

fn process_alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    // ESRCH: no such process. EPERM means it exists (another user's).
    !matches!(
        rustix::process::test_kill_process(pid),
        Err(rustix::io::Errno::SRCH)
    )
}

/// Most entries of a folder looked at by one sweep: a folder of more is
/// swept in part (a write must not cost a listing of millions of names).
const SWEEP_ENTRIES: usize = 10_000;

/// Removes temporary files of dead writers from `dir` (best effort).
pub(crate) fn remove_stale(dir: BorrowedFd<'_>) {
    let _ = sweep(dir, STALE_AFTER);
}

/// Removes this module's temporary files in `dir` older than `age` whose process is gone.
pub(crate) fn sweep(dir: BorrowedFd<'_>, age: Duration) -> io::Result<usize> {
    let listing = rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let entries = rustix::fs::Dir::read_from(listing.as_fd())?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs();
    let mut removed = 0;
    for entry in entries.take(SWEEP_ENTRIES) {
        let Ok(entry) = entry else { break };
        let name = entry.file_name();
        let Some(pid) = temp_pid(name.to_bytes()) else {
            continue;
        };
        if pid == std::process::id() || process_alive(pid) {
            continue;
        }
        let Ok(st) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) else {
            continue;
        };
        let modified = u64::try_from(st.st_mtime).unwrap_or(0);
        if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile
            || now.saturating_sub(modified) < age.as_secs()
        {
            continue;
        }
        if rustix::fs::unlinkat(dir, name, AtFlags::empty()).is_ok() {
            removed += 1;
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    fn dir_fd(p: &std::path::Path) -> std::os::fd::OwnedFd {
        rustix::fs::open(p, OFlags::PATH | OFlags::DIRECTORY, Mode::empty()).unwrap()
    }

    #[test]
    fn temp_names_parse_back_to_their_pid() {
        let n = temp_name(OsStr::new("notes.md"));
        assert_eq!(temp_pid(n.as_bytes()), Some(std::process::id()));
        assert_eq!(temp_pid(b".a.b.123.4.tmp"), Some(123));
        for not in [
            &b"a.123.4.tmp"[..],
            b".a.x.4.tmp",
            b".a.123.4.txt",
            b".123.tmp",
            b".a.123..tmp",
        ] {
            assert_eq!(temp_pid(not), None, "{}", String::from_utf8_lossy(not));
        }
    }

    #[test]
    fn writes_replace_and_keep_the_mode() {
        use std::os::unix::fs::PermissionsExt;
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("f");
        fs::write(&p, "old").unwrap();
        fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
        let fd = dir_fd(d.path());
        write_at(fd.as_fd(), OsStr::new("f"), b"new", Some(0o100751)).unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"new");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o751
        );
        assert_eq!(fs::read_dir(d.path()).unwrap().count(), 1);
    }

    #[test]
    fn stale_temp_files_of_dead_writers_are_swept() {
        let d = tempfile::tempdir().unwrap();
        // A pid far above any pid_max, so no live process has it.
        let dead = d.path().join(".f.999999999.0.tmp");
        fs::write(&dead, "partial").unwrap();
        let live = d.path().join(format!(".f.{}.7.tmp", std::process::id()));
        fs::write(&live, "in flight").unwrap();
        let other = d.path().join(".f.999999999.x.tmp");
        fs::write(&other, "not ours").unwrap();
        let fd = dir_fd(d.path());
        // Too young at a one-minute age; gone at zero.
        assert_eq!(sweep(fd.as_fd(), STALE_AFTER).unwrap(), 0);
        assert!(dead.exists());
        assert_eq!(sweep(fd.as_fd(), Duration::ZERO).unwrap(), 1);
        assert!(!dead.exists() && live.exists() && other.exists());
    }
}
