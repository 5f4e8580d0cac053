//! What the kernel offers, probed once per process.

use std::sync::OnceLock;

/// Whether user namespaces (with mount, PID and network ones) can be
/// created: a child tries, once per process.
pub(crate) fn user_namespaces() -> bool {
    static CACHE: OnceLock<bool> = OnceLock::new();
    *CACHE.get_or_init(crate::child::try_user_namespaces)
}

/// The Landlock ABI in force, capped at 7 (the newest this crate was
/// tested with; `Documentation/userspace-api/landlock.rst`, "Landlock ABI versions").
pub(crate) fn landlock_abi() -> landlock::ABI {
    static CACHE: OnceLock<i32> = OnceLock::new();
    landlock::ABI::from((*CACHE.get_or_init(crate::child::landlock_version)).min(7))
}
