//! What the kernel offers, probed once per process.

use std::sync::OnceLock;

/// Whether user namespaces (with mount, PID and network ones) can be
/// created: a child tries, once per process. `Err` says which step the
/// kernel refused and why, e.g. "writing `/proc/self/uid_map`:
/// Permission denied (os error 13)".
pub(crate) fn user_namespaces() -> Result<(), &'static str> {
    static CACHE: OnceLock<Result<(), String>> = OnceLock::new();
    CACHE
        .get_or_init(|| {
            crate::child::try_user_namespaces().map_err(|(step, errno)| {
                let what = match step {
                    1 => "writing /proc/self/setgroups",
                    2 => "writing /proc/self/uid_map",
                    3 => "writing /proc/self/gid_map",
                    4 => "making the new mount namespace private",
                    _ => "unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET)",
                };
                format!("{what}: {}", std::io::Error::from_raw_os_error(errno))
            })
        })
        .as_ref()
        .copied()
        .map_err(String::as_str)
}

/// The Landlock ABI in force, capped at 7 (the newest this crate was
/// tested with; `Documentation/userspace-api/landlock.rst`, "Landlock ABI versions").
pub(crate) fn landlock_abi() -> landlock::ABI {
    static CACHE: OnceLock<i32> = OnceLock::new();
    landlock::ABI::from((*CACHE.get_or_init(crate::child::landlock_version)).min(7))
}
