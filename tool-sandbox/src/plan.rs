//! Everything prepared before the fork: the paths of the policy resolved and
//! turned into C strings, the mount plan, the Landlock ruleset, the seccomp
//! programs, the limits and the cgroup. After the fork, [`crate::child`]
//! only reads these.

use std::ffi::CString;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use landlock::{
    ABI, Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd,
    Ruleset, RulesetAttr, RulesetCreatedAttr, Scope,
};
use seccompiler::BpfProgram;

use crate::{SandboxError, Tier};

/// At most this many policy paths may live under `/tmp` or `/dev/shm`
/// (they are copied aside while those are replaced; the copies are held in a
/// fixed array after the fork).
pub(crate) const MAX_CARRIED: usize = 32;

/// A policy path under `/tmp` or `/dev/shm`, carried into the fresh one.
#[derive(Debug)]
pub(crate) struct Carried {
    pub(crate) path: CString,
    /// Its ancestors below the fresh mount, outermost first (to `mkdir`).
    pub(crate) ancestors: Vec<CString>,
    pub(crate) is_dir: bool,
    pub(crate) read_only: bool,
}

/// The mount view of the full tier (see [`crate::child::build_mounts`]).
#[derive(Debug, Default)]
pub(crate) struct MountPlan {
    pub(crate) carried: Vec<Carried>,
    pub(crate) writable: Vec<CString>,
    pub(crate) remount_read_only: Vec<CString>,
    pub(crate) fresh_tmp: Vec<CString>,
    /// Folders bound onto themselves after the writable ones (the
    /// workspace's `.git`: a mount point cannot be renamed).
    pub(crate) pinned: Vec<CString>,
    pub(crate) read_only: Vec<(CString, bool)>,
    pub(crate) hidden: Vec<(CString, bool)>,
    /// Host socket, path inside, directories to create for it.
    pub(crate) proxy_socket: Option<(CString, CString, Vec<CString>)>,
}

/// `(resource, value)` pairs for `setrlimit`.
#[derive(Debug, Default)]
pub(crate) struct RlimitSet(pub(crate) Vec<(libc::c_int, libc::rlim_t)>);

/// The prepared state of one sandboxed spawn.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) tier: Tier,
    pub(crate) uid_map: String,
    pub(crate) gid_map: String,
    pub(crate) mounts: Option<MountPlan>,
    pub(crate) landlock: Option<OwnedFd>,
    pub(crate) landlock_late_writable: Vec<CString>,
    pub(crate) landlock_write_access: u64,
    pub(crate) seccomp: &'static [BpfProgram],
    pub(crate) rlimits: RlimitSet,
    /// The `cgroup.procs` files of the call's cgroups (one per v1
    /// hierarchy, or one v2 cgroup), joined before anything else.
    pub(crate) cgroup_procs: Vec<CString>,
    pub(crate) workdir: Option<(CString, u64, u64)>,
}

/// A path as a C string (paths never hold NUL bytes; one that did is refused).
pub(crate) fn c_path(path: &Path) -> Result<CString, SandboxError> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| SandboxError::policy(format!("the path {} holds a NUL byte", path.display())))
}

/// Whether `path` is `base` or lies below it (component-wise).
pub(crate) fn is_within(path: &Path, base: &Path) -> bool {
    path.starts_with(base)
}

/// The fs access rights of the ruleset, for the kernel's Landlock version
/// (capped at ABI 7, the newest this crate was tested with).
pub(crate) fn access_sets(abi: ABI) -> (BitFlags<AccessFs>, BitFlags<AccessFs>) {
    let all = AccessFs::from_all(abi);
    let read = AccessFs::from_read(abi);
    // Writable places get everything but device creation: as root outside a
    // user namespace (no-namespaces tier) `mknod` would make a disk node.
    let write = all & !(AccessFs::MakeChar | AccessFs::MakeBlock);
    (read, write | read)
}

/// Device files a command may read and write (`/dev/null` and friends).
const DEVICES: [&str; 8] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
];

/// Builds the Landlock ruleset: read (and execute) under `read_roots`,
/// everything but device creation under `writable`, read-write on the
/// harmless devices; TCP connect and bind refused when `deny_tcp`; signals
/// and abstract Unix sockets scoped to the sandbox (ABI 6). Returns the
/// ruleset descriptor (`None` when the kernel has no Landlock).
pub(crate) fn landlock_ruleset(
    abi: ABI,
    read_roots: &[PathBuf],
    list_only: &[PathBuf],
    writable: &[PathBuf],
    deny_tcp: bool,
) -> Result<Option<OwnedFd>, SandboxError> {
    if abi == ABI::Unsupported {
        return Ok(None);
    }
    let err = |e: landlock::RulesetError| SandboxError::setup("landlock", e);
    let (read, write) = access_sets(abi);
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(err)?;
    if deny_tcp {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(err)?;
    }
    if !Scope::from_all(abi).is_empty() {
        ruleset = ruleset.scope(Scope::from_all(abi)).map_err(err)?;
    }
    let mut created = ruleset.create().map_err(err)?;
    let mut add = |path: &Path, access: BitFlags<AccessFs>| -> Result<(), SandboxError> {
        // A path that vanished since it was resolved gets no rule.
        let Ok(fd) = PathFd::new(path) else {
            return Ok(());
        };
        // The kind from the descriptor just opened (`fstat(2)`), not from
        // the path again: one path walk per rule, and no window between the
        // check and the rule. The no-namespaces tier adds one rule per entry
        // of every folder on the way to a hidden path (`/tmp` holds
        // hundreds on a shared machine).
        let is_dir = rustix::fs::fstat(&fd)
            .is_ok_and(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir());
        let access = if is_dir {
            access
        } else {
            access & AccessFs::from_file(abi)
        };
        created
            .as_mut()
            .add_rule(PathBeneath::new(fd, access))
            .map(drop)
            .map_err(err)
    };
    for root in read_roots {
        add(root, read)?;
    }
    for dir in list_only {
        add(dir, BitFlags::from(AccessFs::ReadDir))?;
    }
    for dev in DEVICES {
        let dev = Path::new(dev);
        if dev.exists() {
            let rw = AccessFs::ReadFile
                | AccessFs::WriteFile
                | (AccessFs::from_all(abi) & (AccessFs::Truncate | AccessFs::IoctlDev));
            add(dev, rw | if dev.is_dir() { read } else { BitFlags::EMPTY })?;
        }
    }
    for w in writable {
        add(w, write)?;
    }
    let fd: Option<OwnedFd> = created.into();
    Ok(fd)
}

/// `read_roots` for `/` minus `hidden`: a rule on `/` would reach the hidden
/// paths too (Landlock rules only add), so the tree is walked down along
/// each hidden path and every sibling on the way gets its own rule; the
/// directories on the way (second list) may only be listed. Bounded: at
/// most `MAX_ENTRIES` rules.
pub(crate) fn read_roots_except(
    hidden: &[PathBuf],
) -> Result<(Vec<PathBuf>, Vec<PathBuf>), SandboxError> {
    const MAX_ENTRIES: usize = 20_000;
    let mut out = Vec::new();
    let mut ancestors = Vec::new();
    let mut stack = vec![PathBuf::from("/")];
    while let Some(dir) = stack.pop() {
        if hidden.iter().any(|h| h == &dir) {
            continue;
        }
        if !hidden.iter().any(|h| is_within(h, &dir)) {
            out.push(dir);
            continue;
        }
        // An ancestor of a hidden path: it may be listed (names only), its
        // entries are walked instead.
        ancestors.push(dir.clone());
        let entries = std::fs::read_dir(&dir).map_err(|e| {
            SandboxError::setup("landlock", format!("cannot list {}: {e}", dir.display()))
        })?;
        for entry in entries.flatten() {
            stack.push(entry.path());
            if out.len() + stack.len() > MAX_ENTRIES {
                return Err(SandboxError::policy(format!(
                    "hiding {} needs more than {MAX_ENTRIES} Landlock rules; hide fewer paths or use the full tier",
                    dir.display()
                )));
            }
        }
    }
    Ok((out, ancestors))
}
