//! Reading the small files named on the command line (`--token-file`,
//! `--secrets`, `--bash-policy`, `--mcp-config`): regular files only, read
//! with a size cap, so a FIFO, a device (`/dev/zero`, a terminal) or a huge
//! file gets a clear error at once instead of a hang or an unbounded read
//! (review 23 F9).

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Largest `--secrets`, `--bash-policy` or `--mcp-config` file, in bytes
/// (1 MiB): each is a hand-written JSON file of a few KiB.
pub(crate) const MAX_CONFIG_FILE_BYTES: u64 = 1024 * 1024;

/// The bytes of the regular file `path`, at most `max` of them.
///
/// The file is opened non-blocking (a FIFO's open does not wait for a
/// writer), must be a regular file after symlinks, and at most `max + 1`
/// bytes are read whatever it grows to meanwhile.
///
/// # Errors
/// A message starting with `option` and the path: cannot be opened, not a
/// regular file (`what` says what belongs there), or larger than `max`.
pub(crate) fn read(path: &Path, option: &str, what: &str, max: u64) -> Result<Vec<u8>, String> {
    read_checked(path, option, what, max, false)
}

/// [`read`] of a file holding a secret (`--state-file`'s Redis password,
/// `--token-file`'s bearer token): refused, unread, when its mode lets group
/// or others read or write it (any of the bits `0o077`), as OpenSSH refuses a
/// private key others can read.
///
/// # Errors
/// Those of [`read`], and a message saying to `chmod 600` the file.
pub(crate) fn read_private(
    path: &Path,
    option: &str,
    what: &str,
    max: u64,
) -> Result<Vec<u8>, String> {
    read_checked(path, option, what, max, true)
}

fn read_checked(
    path: &Path,
    option: &str,
    what: &str,
    max: u64,
    private: bool,
) -> Result<Vec<u8>, String> {
    let shown = path.display();
    let file = std::fs::OpenOptions::new()
        .read(true)
        // O_NONBLOCK is 0o4000: the `as` keeps the bits.
        .custom_flags(rustix::fs::OFlags::NONBLOCK.bits() as i32)
        .open(path)
        .map_err(|e| format!("{option} {shown}: cannot read {what}: {e}"))?;
    let meta = file
        .metadata()
        .map_err(|e| format!("{option} {shown}: {e}"))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a folder"
        } else {
            "a FIFO, socket or device"
        };
        return Err(format!(
            "{option} {shown}: not a regular file ({kind}); give the path of {what}"
        ));
    }
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions());
    if private && mode & 0o077 != 0 {
        return Err(format!(
            "{option} {shown}: group or others may access the file (mode {:03o}) and it holds a \
             secret; make it private with `chmod 600 {shown}`",
            mode & 0o777
        ));
    }
    let mut bytes = Vec::new();
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("{option} {shown}: {e}"))?;
    if bytes.len() as u64 > max {
        return Err(format!(
            "{option} {shown}: the file is larger than {max} bytes, more than {what} needs"
        ));
    }
    Ok(bytes)
}

/// [`read`] with [`MAX_CONFIG_FILE_BYTES`], as UTF-8 text.
///
/// # Errors
/// Those of [`read`], and a message when the file is not UTF-8.
pub(crate) fn read_config(path: &Path, option: &str, what: &str) -> Result<String, String> {
    let bytes = read(path, option, what, MAX_CONFIG_FILE_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| format!("{option} {}: the file is not UTF-8 text", path.display()))
}
