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
//! naming pattern (`.<name>.agent-tools-<pid>-<n>.tmp`) that belong to this
//! user, are older than a minute and whose process is gone (looking at most at the first
//! 10 000 entries of the folder).

use std::ffi::{OsStr, OsString};
use std::fs;
use std::io::{self, Write};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rustix::fs::{AtFlags, Mode, OFlags};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Bytes of the file's name kept in a temporary file's name: the rest
/// (`.`, pid, counter, `.tmp`: at most 33 bytes) keeps it under 255 bytes.
const TEMP_NAME_PREFIX: usize = 64;

/// Age after which a temporary file of a dead writer is removed: 1 minute.
pub(crate) const STALE_AFTER: Duration = Duration::from_secs(60);

/// The marker in this module's temporary names, so that the sweep never
/// takes a file of another program for one of ours.
const TEMP_MARK: &str = ".agent-tools-";

/// The temporary name for writing `name`: `.<name, cut>.agent-tools-<pid>-<counter>.tmp`.
fn temp_name(name: &OsStr) -> OsString {
    let bytes = name.as_bytes();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(TEMP_NAME_PREFIX)]);
    let cut = tool_core::truncate::floor_char_boundary(&text, TEMP_NAME_PREFIX);
    OsString::from(format!(
        ".{}{TEMP_MARK}{}-{}.tmp",
        &text[..cut],
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ))
}

/// The mode bits a new file gets: `0666` less the process's umask (read
/// from `/proc/self/status`, which does not change it; `022` if unknown).
fn new_file_mode() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|m| u32::from_str_radix(m.trim(), 8).ok())
        })
        .map_or(0o644, |umask| 0o666 & !umask)
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
    // Created 0600 and given its final mode only once the content is in:
    // while it is being written, no other user can open it.
    let fd = rustix::fs::openat(
        dir,
        temp.as_os_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_raw_mode(0o600),
    )?;
    let result = (|| -> io::Result<()> {
        let mut file = std::fs::File::from(fd);
        file.write_all(bytes)?;
        // Root keeps the old file's owner (an edit must not hand a user's file to root).
        if rustix::process::geteuid().is_root() {
            if let Ok(old) = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                let _ = rustix::fs::fchown(
                    &file,
                    Some(rustix::fs::Uid::from_raw(old.st_uid)),
                    Some(rustix::fs::Gid::from_raw(old.st_gid)),
                );
            }
        }
        let final_mode = mode.map_or_else(new_file_mode, |m| m & 0o7777);
        rustix::fs::fchmod(&file, Mode::from_raw_mode(final_mode))?;
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
    let rest = std::str::from_utf8(name.strip_prefix(b".")?.strip_suffix(b".tmp")?).ok()?;
    let (_, tail) = rest.rsplit_once(TEMP_MARK)?;
    let (pid, counter) = tail.split_once('-')?;
    let digits = |t: &str| !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit());
    if !digits(pid) || !digits(counter) {
        return None;
    }
    pid.parse().ok()
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
            || st.st_uid != rustix::process::geteuid().as_raw()
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

/// The model-facing refusal for an existing regular file that must not be
/// changed in place, `None` when it may be (or does not exist).
///
/// A file is read-only when its mode has no write bit at all (`0444`: the
/// owner marked it so, and root must not ignore that either) or when this
/// process could not open it for writing (`access(W_OK)`). An atomic write
/// renames a new file over the old one, which only needs the folder to be
/// writable, so without this check a read-only file would be replaced.
///
/// `path` is resolved as given (symlinks followed), for hosts; the tools
/// check through the folder handle they write through (`read_only_at`).
pub fn read_only(path: &Path) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let meta = fs::metadata(path).ok()?;
    if !meta.is_file() {
        return None;
    }
    let real = fs::canonicalize(path).ok()?;
    let dir = rustix::fs::open(
        real.parent()?,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .ok();
    read_only_at(
        dir.as_ref().map(AsFd::as_fd),
        real.file_name()?,
        meta.permissions().mode(),
        &path.display().to_string(),
    )
}

/// [`read_only`] for the regular file `name` in the folder `dir` (`None`
/// when the folder could not be opened: then the file counts as read-only),
/// whose `st_mode` the caller has; `shown` is the file as named to the
/// model. The one check behind [`read_only`] and the tools' write path.
pub(crate) fn read_only_at(
    dir: Option<BorrowedFd<'_>>,
    name: &OsStr,
    st_mode: u32,
    shown: &str,
) -> Option<String> {
    let mode = st_mode & 0o777;
    let accessible = dir.is_some_and(|dir| {
        rustix::fs::accessat(
            dir,
            name,
            rustix::fs::Access::WRITE_OK,
            AtFlags::SYMLINK_NOFOLLOW,
        )
        .is_ok()
    });
    (mode & 0o222 == 0 || !accessible).then(|| read_only_message(shown, mode))
}

/// The refusal [`read_only_at`] gives: `shown` is the file as named to the model.
fn read_only_message(shown: &str, mode: u32) -> String {
    format!(
        "File {shown} is read-only (mode {:04o}); it was not changed. Make it writable first \
         (for example with `chmod u+w`) if it should be changed.",
        mode & 0o777
    )
}

/// Writes `bytes` to `path` atomically: a temporary file in the same folder,
/// flushed to disk, then renamed over `path`. Parent folders are created; an
/// existing file's permissions are kept. Readers see the old or the new
/// content, never a mix; a crash leaves the old file intact. For hosts (it
/// resolves `path` as given, e.g. to rewind a
/// [`ChangeLog`](super::changes::ChangeLog)); the tools
/// write through the workspace's folder handles instead.
///
/// # Errors
/// `PermissionDenied` with [`read_only`]'s message when `path` is a
/// read-only file; any I/O error; the temporary file is removed on failure.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let parent = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent folder"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    if let Some(message) = read_only(path) {
        return Err(io::Error::new(io::ErrorKind::PermissionDenied, message));
    }
    fs::create_dir_all(parent)?;
    let mode = {
        use std::os::unix::fs::PermissionsExt;
        fs::metadata(path).ok().map(|m| m.permissions().mode())
    };
    let dir = rustix::fs::open(
        parent,
        rustix::fs::OFlags::PATH | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    write_at(dir.as_fd(), name, bytes, mode)
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
        assert_eq!(temp_pid(b".a.b.agent-tools-123-4.tmp"), Some(123));
        for not in [
            &b".a.b.123.4.tmp"[..],
            b"a.agent-tools-123-4.tmp",
            b".a.agent-tools-x-4.tmp",
            b".a.agent-tools-123-4.txt",
            b".a.agent-tools-123-.tmp",
            b".notes.txt.999999.0.tmp",
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
        let dead = d.path().join(".f.agent-tools-999999999-0.tmp");
        fs::write(&dead, "partial").unwrap();
        let live = d
            .path()
            .join(format!(".f.agent-tools-{}-7.tmp", std::process::id()));
        fs::write(&live, "in flight").unwrap();
        let other = d.path().join(".f.999999999.0.tmp");
        fs::write(&other, "not ours").unwrap();
        let fd = dir_fd(d.path());
        // Too young at a one-minute age; gone at zero.
        assert_eq!(sweep(fd.as_fd(), STALE_AFTER).unwrap(), 0);
        assert!(dead.exists());
        assert_eq!(sweep(fd.as_fd(), Duration::ZERO).unwrap(), 1);
        assert!(!dead.exists() && live.exists() && other.exists());
    }
}
