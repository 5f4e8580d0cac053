//! Where spill files live: the per-user private folder, the spill parent,
//! one folder per trace, file names, and the age and size cleanup.
//! Apart from the cutting in `truncate/mod.rs`: this half is storage.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(super) const RUNTIME_DIR_NAME: &str = "agent-tools";

/// Longest trace id used as its folder name unchanged (64 characters).
pub(super) const MAX_PLAIN_TRACE_NAME: usize = 64;

/// The per-user private folder of this crate's files, as a path (nothing is
/// created or checked here; [`private_dir`] does that):
/// `$XDG_RUNTIME_DIR/agent-tools` when `XDG_RUNTIME_DIR` is set to an
/// absolute path of a folder owned by the current user, else
/// `<temp dir>/agent-tools-<uid>` (`std::env::temp_dir()`; on systems
/// without user ids, `<temp dir>/agent-tools`).
pub fn private_dir_location() -> PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let uid = current_uid();
        if let Some(run) = std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
            && run.is_absolute()
            && fs::metadata(&run).is_ok_and(|m| m.is_dir() && m.uid() == uid)
        {
            return run.join(RUNTIME_DIR_NAME);
        }
        std::env::temp_dir().join(format!("agent-tools-{uid}"))
    }
    #[cfg(not(unix))]
    {
        std::env::temp_dir().join("agent-tools")
    }
}

/// The per-user private folder ([`private_dir_location`]), created with mode
/// `0700` when missing and checked by [`ensure_private_dir`]. Spill files
/// (`<private dir>/spill/<trace>`) and the `tool` program's binary output
/// (`<private dir>/out/<trace>`) live below it.
///
/// # Errors
/// The I/O error of creating it, or `PermissionDenied` with a message naming
/// the folder when it is a symbolic link, not a folder, owned by another
/// user or not mode `0700`.
pub fn private_dir() -> io::Result<PathBuf> {
    let dir = private_dir_location();
    ensure_private_dir(&dir)?;
    Ok(dir)
}

/// Creates `dir` (and missing parents) with mode `0700` when it does not
/// exist, then checks it with [`check_private_dir`].
///
/// # Errors
/// As [`check_private_dir`], or the I/O error of creating the folder
/// (naming it).
pub fn ensure_private_dir(dir: &Path) -> io::Result<()> {
    if fs::symlink_metadata(dir).is_err() {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(dir).map_err(|e| {
            io::Error::new(
                e.kind(),
                format!("cannot create the folder {}: {e}", dir.display()),
            )
        })?;
    }
    check_private_dir(dir)
}

/// Checks that `dir` is a folder only the current user can use: not a
/// symbolic link (checked without following it), a folder, owned by the
/// current user, with permission bits exactly `0700`. On systems without
/// user ids only the first two are checked.
///
/// # Errors
/// `NotFound` when it does not exist; `PermissionDenied` saying which rule
/// failed and how to fix it.
pub fn check_private_dir(dir: &Path) -> io::Result<()> {
    let meta = fs::symlink_metadata(dir).map_err(|e| {
        io::Error::new(
            e.kind(),
            format!("cannot read the folder {}: {e}", dir.display()),
        )
    })?;
    let refuse = |why: String| {
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("refusing to use {}: {why}", dir.display()),
        ))
    };
    if meta.file_type().is_symlink() {
        return refuse(
            "it is a symbolic link, which could point anywhere (remove it; it is recreated as a private folder)"
                .to_owned(),
        );
    }
    if !meta.is_dir() {
        return refuse("it is not a folder (remove it)".to_owned());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        let uid = current_uid();
        if meta.uid() != uid {
            return refuse(format!(
                "it is owned by user id {}, not by the current user (id {uid})",
                meta.uid()
            ));
        }
        let mode = meta.mode() & 0o7777;
        if mode != 0o700 {
            return refuse(format!(
                "its mode is {mode:04o}, but it must be 0700 so that only its owner can use it (chmod 700 it)"
            ));
        }
    }
    Ok(())
}

#[cfg(unix)]
pub(super) fn current_uid() -> u32 {
    rustix::process::getuid().as_raw()
}

/// The default spill parent: `<private dir>/spill`
/// ([`private_dir_location`]). Trace folders go inside it; see the
/// [module docs](crate::truncate#where-spill-files-go). A path only: nothing is created.
pub fn default_spill_dir() -> PathBuf {
    private_dir_location().join("spill")
}

/// The folder name of a trace id inside a spill parent (or the `tool`
/// program's output folder), one path component:
/// - a trace id of 1 to 64 characters from `[A-Za-z0-9_-]` is used as it is;
/// - any other trace id becomes its first 32 characters with every other
///   character replaced by `_`, a `.` and 16 hex digits of its FNV-1a hash
///   (so `../x` cannot leave the parent, and two ids differing only in
///   replaced characters get different folders; the `.` keeps these names
///   apart from the plain ones);
/// - no trace id becomes `untraced.<pid>.<random hex>`, fixed for the life
///   of the process: calls without a trace id share one folder per process,
///   which no other process's file tools accept.
pub fn trace_folder_name(trace_id: Option<&str>) -> String {
    match trace_id {
        Some(id)
            if !id.is_empty()
                && id.len() <= MAX_PLAIN_TRACE_NAME
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-') =>
        {
            id.to_owned()
        }
        Some(id) => {
            let mut prefix: String = id
                .chars()
                .take(32)
                .map(|c| {
                    if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                        c
                    } else {
                        '_'
                    }
                })
                .collect();
            if prefix.is_empty() {
                prefix.push_str("trace");
            }
            format!("{prefix}.{:016x}", fnv1a(id.as_bytes()))
        }
        None => untraced_folder_name().to_owned(),
    }
}

/// 64-bit FNV-1a: a stable hash (the same in every process and build), for
/// folder names only; it does not need to resist collisions made on purpose,
/// as trace ids come from the host, not from the model.
pub(super) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

pub(super) fn untraced_folder_name() -> &'static str {
    static NAME: OnceLock<String> = OnceLock::new();
    NAME.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        // The standard library's per-process random hash keys.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u32(std::process::id());
        if let Ok(now) = SystemTime::now().duration_since(UNIX_EPOCH) {
            hasher.write_u128(now.as_nanos());
        }
        format!("untraced.{}.{:016x}", std::process::id(), hasher.finish())
    })
}

pub(super) static SPILL_COUNTER: AtomicU64 = AtomicU64::new(0);

pub(super) fn spill_file_name() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let n = SPILL_COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("output-{}-{nanos}-{n}.txt", std::process::id())
}

/// Whether `name` is one of this module's spill file names (`output-*.txt`).
pub(super) fn is_spill_file_name(name: &str) -> bool {
    name.starts_with("output-") && name.ends_with(".txt")
}

/// Cleans the spill files of every trace folder of `parent`: removes those
/// last modified more than `max_age` ago, then the oldest while all of them
/// together hold more than `max_total` bytes; then removes trace folders that
/// are empty and were last modified more than `max_age` ago. Only plain files
/// named like spill files (`output-*.txt`) in real folders (symbolic links
/// are neither followed nor removed) are touched. Best effort: errors are
/// ignored. Returns how many spill files were removed.
///
/// Called whenever a spill file is created; never when a process exits.
pub fn clean_spill_parent(
    parent: &Path,
    max_age: Option<Duration>,
    max_total: Option<u64>,
) -> usize {
    let cutoff = max_age.and_then(|age| SystemTime::now().checked_sub(age));
    let Ok(traces) = fs::read_dir(parent) else {
        return 0;
    };
    let mut files: Vec<(SystemTime, u64, PathBuf)> = Vec::new();
    let mut old_folders = Vec::new();
    for trace in traces.flatten() {
        // `file_type` does not follow symlinks.
        if !trace.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let folder = trace.path();
        if let (Some(cutoff), Ok(modified)) = (cutoff, trace.metadata().and_then(|m| m.modified()))
            && modified < cutoff
        {
            old_folders.push(folder.clone());
        }
        let Ok(entries) = fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            let plain = entry.file_type().is_ok_and(|t| t.is_file());
            let named = entry.file_name().to_str().is_some_and(is_spill_file_name);
            if !(plain && named) {
                continue;
            }
            if let Ok(meta) = entry.metadata() {
                let modified = meta.modified().unwrap_or(UNIX_EPOCH);
                files.push((modified, meta.len(), entry.path()));
            }
        }
    }
    files.sort();
    let mut removed = 0;
    let mut total: u64 = files.iter().map(|(_, len, _)| len).sum();
    for (modified, len, path) in &files {
        let too_old = cutoff.is_some_and(|c| *modified < c);
        let over_cap = max_total.is_some_and(|cap| total > cap);
        if !(too_old || over_cap) {
            // Sorted oldest first: the rest is newer and (once under the cap) fits.
            break;
        }
        if fs::remove_file(path).is_ok() {
            removed += 1;
        }
        total -= len;
    }
    for folder in old_folders {
        // Fails, as it should, when the folder still holds something.
        let _ = fs::remove_dir(folder);
    }
    removed
}
