//! The steps that run after `fork` and before `exec`: raw system calls on
//! data prepared before the fork ([`crate::plan`]), so that nothing here
//! allocates or takes a lock another thread of the parent may have held at
//! the fork (`fork(2)`: "the child process is created with a single thread
//! ... the child can safely perform only async-signal-safe operations").
//!
//! Every function returns the first error as an [`io::Error`] from `errno`
//! and changes nothing else after it.

#![allow(
    unsafe_code,
    reason = "raw system calls after fork: mount, unshare, landlock, seccomp, setrlimit; audited, see SAFETY"
)]

use std::ffi::{CStr, c_void};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

use crate::plan::{Carried, MountPlan, Prepared, RlimitSet};

fn check(r: libc::c_long) -> io::Result<libc::c_long> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn check_int(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

/// Writes `data` to the file at `path` (opened write-only, no creation).
pub(crate) fn write_file(path: &CStr, data: &[u8]) -> io::Result<()> {
    // SAFETY: open(2) with a NUL-terminated path; the descriptor is closed below.
    let fd = check_int(unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) })?;
    // SAFETY: write(2) from a live slice.
    let n = unsafe { libc::write(fd, data.as_ptr().cast::<c_void>(), data.len()) };
    let err = io::Error::last_os_error();
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    if n < 0 {
        return Err(err);
    }
    Ok(())
}

fn mount(
    source: Option<&CStr>,
    target: &CStr,
    fstype: Option<&CStr>,
    flags: libc::c_ulong,
    data: Option<&CStr>,
) -> io::Result<()> {
    let ptr = |s: Option<&CStr>| s.map_or(std::ptr::null(), CStr::as_ptr);
    // SAFETY: mount(2) with NUL-terminated strings or null pointers.
    check_int(unsafe {
        libc::mount(
            ptr(source),
            target.as_ptr(),
            ptr(fstype),
            flags,
            ptr(data).cast::<c_void>(),
        )
    })
    .map(drop)
}

/// The per-mount flags a read-only remount must keep (a mount namespace
/// owned by a user namespace may not clear "locked" flags, see
/// `mount_namespaces(7)`, "Restrictions on mount namespaces").
fn kept_flags(target: &CStr) -> libc::c_ulong {
    let mut st = std::mem::MaybeUninit::<libc::statvfs>::zeroed();
    // SAFETY: statvfs(3) on a NUL-terminated path into a zeroed buffer.
    if unsafe { libc::statvfs(target.as_ptr(), st.as_mut_ptr()) } != 0 {
        return 0;
    }
    // SAFETY: statvfs succeeded and filled the buffer.
    let f = unsafe { st.assume_init() }.f_flag;
    let mut flags = 0;
    for (st_flag, ms_flag) in [
        (libc::ST_NOSUID, libc::MS_NOSUID),
        (libc::ST_NODEV, libc::MS_NODEV),
        (libc::ST_NOEXEC, libc::MS_NOEXEC),
        (libc::ST_NOATIME, libc::MS_NOATIME),
        (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
        (libc::ST_RELATIME, libc::MS_RELATIME),
    ] {
        if f & st_flag != 0 {
            flags |= ms_flag;
        }
    }
    flags
}

fn remount_read_only(target: &CStr) -> io::Result<()> {
    mount(
        None,
        target,
        None,
        libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | kept_flags(target),
        None,
    )
}

fn bind_self(path: &CStr) -> io::Result<()> {
    mount(Some(path), path, None, libc::MS_BIND | libc::MS_REC, None)
}

/// `mkdir` each of `dirs` in order, an existing one being fine.
fn make_dirs(dirs: &[std::ffi::CString]) -> io::Result<()> {
    for d in dirs {
        // SAFETY: mkdir(2) with a NUL-terminated path.
        if unsafe { libc::mkdir(d.as_ptr(), 0o755) } != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EEXIST) {
                return Err(e);
            }
        }
    }
    Ok(())
}

fn make_file(path: &CStr) -> io::Result<()> {
    // SAFETY: open(2) with O_CREAT and a mode; the descriptor is closed at once.
    let fd = check_int(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_CLOEXEC,
            0o600 as libc::c_uint,
        )
    })?;
    // SAFETY: closing the descriptor just opened.
    unsafe { libc::close(fd) };
    Ok(())
}

const OPEN_TREE_CLONE: libc::c_ulong = 1;
const OPEN_TREE_CLOEXEC: libc::c_ulong = libc::O_CLOEXEC as libc::c_ulong;
const AT_RECURSIVE: libc::c_ulong = 0x8000;
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_ulong = 0x4;

/// A detached copy of the mount tree at `path` (`open_tree(2)` with
/// `OPEN_TREE_CLONE | AT_RECURSIVE`), to attach again once `/tmp` is covered.
fn clone_tree(path: &CStr) -> io::Result<RawFd> {
    // SAFETY: open_tree(2) with a NUL-terminated path and flag integers.
    let fd = check(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE,
        )
    })?;
    RawFd::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))
}

fn attach_tree(fd: RawFd, target: &CStr) -> io::Result<()> {
    // SAFETY: move_mount(2) of a detached tree (fd, empty path) onto a path.
    check(unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            target.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    })
    .map(drop)
}

/// Unshares the namespaces and maps this process's user and group to
/// themselves inside the new user namespace (`user_namespaces(7)`, "Defining
/// user and group ID mappings": a process may map its own IDs after writing
/// `deny` to `setgroups`).
pub(crate) fn enter_namespaces(p: &Prepared) -> io::Result<()> {
    // SAFETY: unshare(2) with flag integers.
    check_int(unsafe { libc::unshare(NAMESPACE_FLAGS) })?;
    map_self(p)
}

/// The namespaces every full-tier command gets (`namespaces(7)`).
const NAMESPACE_FLAGS: libc::c_int = libc::CLONE_NEWUSER
    | libc::CLONE_NEWNS
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUTS;

/// In a process that just entered a new user namespace (by `unshare(2)` or
/// `clone(2)`): maps its user and group to themselves (see
/// [`write_id_maps`]) and names the UTS namespace's host `sandbox`.
fn map_self(p: &Prepared) -> io::Result<()> {
    write_id_maps(p.uid_map.as_bytes(), p.gid_map.as_bytes()).map_err(|(_, e)| e)?;
    let name = b"sandbox";
    // SAFETY: sethostname(2) from a live slice (own UTS namespace).
    let _ = unsafe { libc::sethostname(name.as_ptr().cast(), name.len()) };
    Ok(())
}

/// The step of [`write_id_maps`] that failed: 1 `setgroups`, 2 `uid_map`,
/// 3 `gid_map` (0: `unshare` itself, 4: the first mount, in the probe).
pub(crate) type MapStep = i32;

/// Writes `deny` to `/proc/self/setgroups`, then the user and group maps,
/// right after `unshare(CLONE_NEWUSER)`.
///
/// The `tool` program marks itself not dumpable (`PR_SET_DUMPABLE` 0, so
/// that a command cannot read its `/proc/<pid>/environ`), and a forked
/// supervisor inherits the mark. The kernel then makes root the owner of the
/// process's `/proc/self` files (`proc(5)`, "/proc/pid": "if the process's
/// dumpable attribute has a value other than 1, ... the files are owned by
/// root"), so a non-root process cannot open its own `setgroups` or
/// `uid_map` for writing (`EACCES`), and the full tier failed for every user
/// but root. So the process is dumpable for these three writes only and
/// marked not dumpable again at once, whether they worked or not. In that
/// window (three small writes) only a process of the same user outside the
/// sandbox could attach to it: no command of this call runs yet, and the
/// commands of other calls live in their own PID namespaces.
pub(crate) fn write_id_maps(uid_map: &[u8], gid_map: &[u8]) -> Result<(), (MapStep, io::Error)> {
    // SAFETY: prctl(2) PR_GET_DUMPABLE with integer arguments.
    let was = unsafe { libc::prctl(libc::PR_GET_DUMPABLE, 0, 0, 0, 0) };
    if was != 1 {
        // SAFETY: prctl(2) PR_SET_DUMPABLE with integer arguments.
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0) };
    }
    let r = write_file(c"/proc/self/setgroups", b"deny")
        .map_err(|e| (1, e))
        .and_then(|()| write_file(c"/proc/self/uid_map", uid_map).map_err(|e| (2, e)))
        .and_then(|()| write_file(c"/proc/self/gid_map", gid_map).map_err(|e| (3, e)));
    if was != 1 {
        // SAFETY: prctl(2) PR_SET_DUMPABLE with integer arguments (0: not
        // dumpable; the kernel accepts only 0 and 1 here).
        unsafe { libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0) };
    }
    r
}

/// Builds the mount view (see the crate docs, "Files"), in this order:
/// private propagation; copies of the policy paths under `/tmp` and
/// `/dev/shm`; writable paths bound onto themselves; every other mount made
/// read-only; fresh `/tmp` and `/dev/shm`; the copies attached again; the
/// pinned folders (`.git`) bound onto themselves; read-only paths; hidden
/// paths last (hidden > read-only > writable).
pub(crate) fn build_mounts(m: &MountPlan) -> io::Result<()> {
    mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None)?;
    let mut fds: [RawFd; crate::plan::MAX_CARRIED] = [-1; crate::plan::MAX_CARRIED];
    for (slot, c) in fds.iter_mut().zip(&m.carried) {
        *slot = clone_tree(&c.path)?;
    }
    let proxy_tree = match &m.proxy_socket {
        Some((host, _, _)) => Some(clone_tree(host)?),
        None => None,
    };
    for w in &m.writable {
        bind_self(w)?;
    }
    for mp in &m.remount_read_only {
        match remount_read_only(mp) {
            Ok(()) => {}
            Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => {}
            Err(e) => return Err(e),
        }
    }
    for t in &m.fresh_tmp {
        mount(
            Some(c"tmpfs"),
            t,
            Some(c"tmpfs"),
            libc::MS_NOSUID | libc::MS_NODEV,
            Some(c"mode=1777"),
        )?;
    }
    for (fd, c) in fds.iter().zip(&m.carried) {
        attach_carried(*fd, c)?;
    }
    for p in &m.pinned {
        bind_self(p)?;
    }
    for (path, _) in &m.read_only {
        bind_self(path)?;
        remount_read_only(path)?;
    }
    for (path, is_dir) in &m.hidden {
        if *is_dir {
            mount(
                Some(c"tmpfs"),
                path,
                Some(c"tmpfs"),
                libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                Some(c"mode=000,size=4k"),
            )?;
        } else {
            mount(Some(c"/dev/null"), path, None, libc::MS_BIND, None)?;
            remount_read_only(path)?;
        }
    }
    if let (Some(fd), Some((_, inside, dirs))) = (proxy_tree, &m.proxy_socket) {
        make_dirs(dirs)?;
        make_file(inside)?;
        let r = attach_tree(fd, inside);
        // SAFETY: closing the tree descriptor opened by clone_tree.
        unsafe { libc::close(fd) };
        r?;
    }
    for (path, is_dir) in &m.hidden {
        if *is_dir {
            mount(
                None,
                path,
                None,
                libc::MS_REMOUNT
                    | libc::MS_RDONLY
                    | libc::MS_NOSUID
                    | libc::MS_NODEV
                    | libc::MS_NOEXEC,
                None,
            )?;
        }
    }
    Ok(())
}

fn attach_carried(fd: RawFd, c: &Carried) -> io::Result<()> {
    make_dirs(&c.ancestors)?;
    if c.is_dir {
        make_dirs(std::slice::from_ref(&c.path))?;
    } else {
        make_file(&c.path)?;
    }
    let r = attach_tree(fd, &c.path);
    // SAFETY: closing the tree descriptor opened by clone_tree.
    unsafe { libc::close(fd) };
    r?;
    if c.read_only {
        remount_read_only(&c.path)?;
    }
    Ok(())
}

/// In the new PID namespace's first process: a `/proc` of that namespace
/// (`pid_namespaces(7)`, "Mounting a procfs filesystem"), and the loopback
/// interface up in the new network namespace.
pub(crate) fn enter_init() -> io::Result<()> {
    mount(
        Some(c"proc"),
        c"/proc",
        Some(c"proc"),
        libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
        None,
    )?;
    loopback_up();
    Ok(())
}

/// `ip link set lo up`, through `SIOCSIFFLAGS` (`netdevice(7)`). Failure
/// only means no loopback inside the sandbox.
fn loopback_up() {
    // SAFETY: socket(2) with constants; closed below.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if fd < 0 {
        return;
    }
    // SAFETY: ifreq is plain data; all-zero is a valid value.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (dst, src) in req.ifr_name.iter_mut().zip(b"lo\0") {
        *dst = *src as libc::c_char;
    }
    // SAFETY: ioctl(2) SIOCGIFFLAGS/SIOCSIFFLAGS with a live ifreq.
    unsafe {
        if libc::ioctl(fd, libc::SIOCGIFFLAGS, &mut req) == 0 {
            req.ifr_ifru.ifru_flags |= libc::IFF_UP as libc::c_short;
            let _ = libc::ioctl(fd, libc::SIOCSIFFLAGS, &req);
        }
        libc::close(fd);
    }
}

/// Changes into the working directory by path (after the mounts, so that
/// the directory is seen through them) and checks it is the directory that
/// was opened before the fork (same device and inode).
pub(crate) fn enter_workdir(path: &CStr, dev: u64, ino: u64) -> io::Result<()> {
    // SAFETY: chdir(2) with a NUL-terminated path.
    check_int(unsafe { libc::chdir(path.as_ptr()) })?;
    let mut st = std::mem::MaybeUninit::<libc::stat>::zeroed();
    // SAFETY: stat(2) of "." into a zeroed buffer.
    check_int(unsafe { libc::stat(c".".as_ptr(), st.as_mut_ptr()) })?;
    // SAFETY: stat succeeded and filled the buffer.
    let st = unsafe { st.assume_init() };
    if st.st_dev != dev || st.st_ino != ino {
        return Err(io::Error::from_raw_os_error(libc::ESTALE));
    }
    Ok(())
}

/// Sets the resource limits (soft and hard; never above the current hard limit).
pub(crate) fn set_limits(limits: &RlimitSet) -> io::Result<()> {
    for &(resource, value) in &limits.0 {
        let mut cur = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit(2) into a live struct.
        check_int(unsafe { libc::getrlimit(resource as _, &mut cur) })?;
        let v = value.min(cur.rlim_max);
        let new = libc::rlimit {
            rlim_cur: v,
            rlim_max: v,
        };
        // SAFETY: setrlimit(2) from a live struct.
        check_int(unsafe { libc::setrlimit(resource as _, &new) })?;
    }
    Ok(())
}

#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

/// Adds a path-beneath rule to a Landlock ruleset (`landlock_add_rule(2)`).
fn landlock_add_path(ruleset: RawFd, path: &CStr, access: u64) -> io::Result<()> {
    // SAFETY: open(2) with O_PATH; closed below.
    let fd = check_int(unsafe {
        libc::open(
            path.as_ptr(),
            libc::O_PATH | libc::O_CLOEXEC | libc::O_DIRECTORY,
        )
    })?;
    let attr = PathBeneathAttr {
        allowed_access: access,
        parent_fd: fd,
    };
    // SAFETY: landlock_add_rule(2) with a live, packed attribute struct.
    let r = unsafe {
        libc::syscall(
            libc::SYS_landlock_add_rule,
            ruleset,
            LANDLOCK_RULE_PATH_BENEATH,
            std::ptr::from_ref(&attr),
            0_u32,
        )
    };
    let err = io::Error::last_os_error();
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    if r < 0 {
        return Err(err);
    }
    Ok(())
}

/// Capabilities a command never keeps (`capabilities(7)`), dropped from the
/// bounding, inheritable and ambient sets so that no program it `exec`s gets
/// them back, root's programs included. The reason for each:
/// `CAP_SYS_ADMIN` and `CAP_PERFMON` let a reader of `/proc/<pid>/environ`,
/// `maps` or `mem` past Landlock's ptrace rule (the kernel's `mm_access`
/// allows `PTRACE_MODE_READ` to a `perfmon_capable()` caller before the LSM
/// is asked); `CAP_SYS_RESOURCE` would raise the hard resource limits;
/// `CAP_SYS_PTRACE`, `CAP_KILL`, `CAP_SYS_NICE` reach other users'
/// processes; `CAP_SETFCAP` and `CAP_LINUX_IMMUTABLE` mark files the user
/// later runs; the rest (`CAP_SYS_MODULE`, `CAP_SYS_RAWIO`, `CAP_SYS_BOOT`,
/// `CAP_SYS_TIME`, `CAP_SYSLOG`, `CAP_MAC_*`, `CAP_NET_ADMIN`, `CAP_NET_RAW`,
/// `CAP_SYS_PACCT`, `CAP_AUDIT_CONTROL`, `CAP_AUDIT_READ`, `CAP_WAKE_ALARM`,
/// `CAP_BLOCK_SUSPEND`, `CAP_BPF`, `CAP_CHECKPOINT_RESTORE`,
/// `CAP_SYS_TTY_CONFIG`, `CAP_MKNOD`, `CAP_SETPCAP`) are kernel surfaces a
/// command has no business with.
pub(crate) const DROPPED_CAPS: [u32; 27] = [
    5,  // CAP_KILL
    8,  // CAP_SETPCAP
    9,  // CAP_LINUX_IMMUTABLE
    12, // CAP_NET_ADMIN
    13, // CAP_NET_RAW
    16, // CAP_SYS_MODULE
    17, // CAP_SYS_RAWIO
    19, // CAP_SYS_PTRACE
    20, // CAP_SYS_PACCT
    21, // CAP_SYS_ADMIN
    22, // CAP_SYS_BOOT
    23, // CAP_SYS_NICE
    24, // CAP_SYS_RESOURCE
    25, // CAP_SYS_TIME
    26, // CAP_SYS_TTY_CONFIG
    27, // CAP_MKNOD
    30, // CAP_AUDIT_CONTROL
    31, // CAP_SETFCAP
    32, // CAP_MAC_OVERRIDE
    33, // CAP_MAC_ADMIN
    34, // CAP_SYSLOG
    35, // CAP_WAKE_ALARM
    36, // CAP_BLOCK_SUSPEND
    37, // CAP_AUDIT_READ
    38, // CAP_PERFMON
    39, // CAP_BPF
    40, // CAP_CHECKPOINT_RESTORE
];

#[repr(C)]
#[derive(Clone, Copy)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

const CAP_VERSION_3: u32 = 0x2008_0522;

/// Drops [`DROPPED_CAPS`] from the bounding set (`PR_CAPBSET_DROP`; `EINVAL`
/// for a capability the kernel does not know and `EPERM` without
/// `CAP_SETPCAP` are fine: then there is nothing to drop), the ambient set,
/// and the effective, permitted and inheritable sets (`capset(2)`).
pub(crate) fn drop_capabilities() -> io::Result<()> {
    let mut mask = [0_u32; 2];
    for &cap in &DROPPED_CAPS {
        mask[(cap / 32) as usize] |= 1 << (cap % 32);
    }
    for &cap in &DROPPED_CAPS {
        // SAFETY: prctl(2) PR_CAPBSET_DROP with integer arguments.
        if unsafe { libc::prctl(libc::PR_CAPBSET_DROP, libc::c_ulong::from(cap), 0, 0, 0) } != 0 {
            let e = io::Error::last_os_error();
            if !matches!(e.raw_os_error(), Some(libc::EINVAL | libc::EPERM)) {
                return Err(e);
            }
        }
    }
    // SAFETY: prctl(2) PR_CAP_AMBIENT_CLEAR_ALL with integer arguments
    // (EINVAL before Linux 4.3: no ambient set, nothing to clear).
    let _ = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    let mut header = CapHeader {
        version: CAP_VERSION_3,
        pid: 0,
    };
    let mut data = [CapData::default(); 2];
    // SAFETY: capget(2) with a version-3 header and two data structs.
    check(unsafe {
        libc::syscall(
            libc::SYS_capget,
            std::ptr::from_mut(&mut header),
            data.as_mut_ptr(),
        )
    })?;
    for (d, m) in data.iter_mut().zip(mask) {
        d.effective &= !m;
        d.permitted &= !m;
        d.inheritable &= !m;
    }
    // SAFETY: capset(2) with the same header and the narrowed sets (only
    // ever fewer capabilities, which needs no privilege).
    check(unsafe {
        libc::syscall(
            libc::SYS_capset,
            std::ptr::from_mut(&mut header),
            data.as_ptr(),
        )
    })
    .map(drop)
}

/// Marks every descriptor above 2 close-on-exec (`close_range(2)` with
/// `CLOSE_RANGE_CLOEXEC`, Linux 5.11; one by one with `fcntl(2)` before),
/// so that the command starts with its standard streams only: a descriptor
/// the host process inherited from its own parent (an open folder, a
/// socket) would reach past the mount view and the hidden paths.
pub(crate) fn cloexec_inherited_fds() {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range(2) takes plain integers.
    let r = unsafe { libc::syscall(libc::SYS_close_range, 3_u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if r == 0 {
        return;
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit(2) into a live struct.
    let top = if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur.min(1 << 16)
    } else {
        1 << 16
    };
    for fd in 3..top {
        let Ok(fd) = libc::c_int::try_from(fd) else {
            break;
        };
        // SAFETY: fcntl(2) F_GETFD/F_SETFD on a number; a closed one fails.
        unsafe {
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags >= 0 {
                libc::fcntl(fd, libc::F_SETFD, flags | libc::FD_CLOEXEC);
            }
        }
    }
}

/// The last steps before `exec`: limits, capabilities dropped,
/// `PR_SET_NO_NEW_PRIVS`, Landlock (with the rules for the fresh `/tmp` and
/// `/dev/shm`, whose inodes exist only now), the seccomp filters, and every
/// descriptor above 2 marked close-on-exec.
pub(crate) fn confine(p: &Prepared) -> io::Result<()> {
    set_limits(&p.rlimits)?;
    drop_capabilities()?;
    // SAFETY: prctl(2) PR_SET_NO_NEW_PRIVS with integer arguments.
    check_int(unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) })?;
    if let Some(ruleset) = &p.landlock {
        let fd = ruleset.as_raw_fd();
        for path in &p.landlock_late_writable {
            landlock_add_path(fd, path, p.landlock_write_access)?;
        }
        // SAFETY: landlock_restrict_self(2) with a ruleset descriptor.
        check(unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0_u32) })?;
    }
    for program in p.seccomp {
        let prog = libc::sock_fprog {
            len: u16::try_from(program.len())
                .map_err(|_| io::Error::from_raw_os_error(libc::E2BIG))?,
            filter: program.as_ptr().cast_mut().cast::<libc::sock_filter>(),
        };
        // SAFETY: seccomp(2) SECCOMP_SET_MODE_FILTER with a live program;
        // seccompiler's sock_filter has the kernel's layout.
        check(unsafe {
            libc::syscall(
                libc::SYS_seccomp,
                libc::SECCOMP_SET_MODE_FILTER,
                0_u32,
                std::ptr::from_ref(&prog),
            )
        })?;
    }
    cloexec_inherited_fds();
    Ok(())
}

/// Joins the prepared cgroup (writes `0`, "this process", to its
/// `cgroup.procs`), before any namespace is entered.
pub(crate) fn join_cgroup(p: &Prepared) -> io::Result<()> {
    for procs in &p.cgroup_procs {
        write_file(procs, b"0")?;
    }
    Ok(())
}

fn fork() -> io::Result<libc::pid_t> {
    // SAFETY: fork(2) from a process with one thread (a child of std's
    // fork, or of this module's); both sides keep to raw system calls.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(pid)
}

/// `clone(2)` without a new stack (so, like `fork`, the child goes on from
/// here on a copy of this one) into new [`NAMESPACE_FLAGS`] namespaces: the
/// child is the first process of the new PID namespace, this process stays
/// in its own ones. One process fewer than `unshare` + `fork`, which needs a
/// process to own the namespaces besides the namespace's first process.
fn clone_into_namespaces() -> io::Result<libc::pid_t> {
    let flags = libc::c_ulong::try_from(NAMESPACE_FLAGS | libc::SIGCHLD)
        .map_err(|_| io::Error::from_raw_os_error(libc::EINVAL))?;
    // SAFETY: clone(2) with a null stack behaves as fork(2) (the child gets
    // a copy-on-write copy of this stack); the other arguments are unused
    // without CLONE_*SETTID / CLONE_SETTLS. This process has one thread,
    // and both sides keep to raw system calls.
    let pid = unsafe { libc::syscall(libc::SYS_clone, flags, 0_usize, 0_usize, 0_usize, 0_usize) };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    libc::pid_t::try_from(pid).map_err(|_| io::Error::from_raw_os_error(libc::ECHILD))
}

fn exit(code: i32) -> ! {
    // SAFETY: _exit(2) runs no destructors or atexit handlers.
    unsafe { libc::_exit(code) }
}

/// The exit code a wait status stands for: the code, or 128 + the signal.
fn code_of(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else if libc::WIFSIGNALED(status) {
        128 + libc::WTERMSIG(status)
    } else {
        1
    }
}

fn die_with_parent() {
    // SAFETY: prctl(2) PR_SET_PDEATHSIG with integer arguments.
    unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
}

/// [`crate::Sandbox::apply`]'s hook: the three steps. In the full tier the
/// process std forked (`P`) joins the cgroup and `clone(2)`s the namespace's
/// first process (`I`) straight into new namespaces; `I` maps its user,
/// builds the mount view, mounts its `/proc` and forks the command; it
/// reaps everything, reports the command's code on a pipe and exits with it
/// once nothing is left (the proxy forwarder, if any, is killed when the
/// command exits). `P` never enters the namespaces: it exits with the code
/// as soon as it reads it, while the kernel's teardown of the namespaces
/// (unmounting the copied tree waits for an RCU grace period,
/// `namespace_unlock`) happens in `I`'s exit, after the caller already has
/// its status. `I` is then reaped by the system's init (or the nearest child
/// subreaper). A setup error in `I` is passed back to `P`, whose hook
/// returns it, so `spawn` fails with it as before.
///
/// Four processes from the caller to the command's exit would cost a fork
/// and a wake-up more on every call (`benches/spawn_min.rs`): until
/// 2026-12-02 a separate owner process unshared the namespaces and forked
/// `I`.
pub(crate) fn run_nested(s: &crate::Sandbox) -> io::Result<()> {
    if !s.has_pid_namespace() {
        s.enter_supervisor()?;
        return s.enter_command();
    }
    join_cgroup(&s.prepared)?;
    let mut ends = [-1 as RawFd; 2];
    // SAFETY: pipe2(2) into a live two-element array.
    check_int(unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) })?;
    let [report_read, report_write] = ends;
    let init = match clone_into_namespaces() {
        Ok(pid) => pid,
        Err(e) => {
            // SAFETY: closing the pipe made above.
            unsafe {
                libc::close(report_read);
                libc::close(report_write);
            }
            return Err(e);
        }
    };
    if init == 0 {
        die_with_parent();
        // SAFETY: closing this process's copy of the read end.
        unsafe { libc::close(report_read) };
        let setup = match &s.prepared.mounts {
            Some(mounts) => map_self(&s.prepared).and_then(|()| build_mounts(mounts)),
            None => Ok(()),
        };
        if let Err(e) = setup {
            send(report_write, 1, e.raw_os_error().unwrap_or(libc::EIO));
            exit(126);
        }
        send(report_write, 2, 0);
        return run_init(s, report_write);
    }
    // SAFETY: closing this process's copy of the write end.
    unsafe { libc::close(report_write) };
    match receive(report_read) {
        Some((2, _)) => {}
        Some((1, errno)) => {
            wait_for(init);
            return Err(io::Error::from_raw_os_error(errno));
        }
        Some((0, code)) => exit(code),
        _ => exit(wait_for(init)),
    }
    keep_only(report_read, report_read);
    match receive(report_read) {
        Some((0, code)) => exit(code),
        _ => exit(wait_for(init)),
    }
}

/// The namespace's first process of [`run_nested`]: its `/proc` and the
/// forwarder, the command below it, then reaps until nothing is left,
/// reports the command's code on `report` and exits with it.
fn run_init(s: &crate::Sandbox, report: RawFd) -> io::Result<()> {
    die_with_parent();
    let Ok(forwarder) = s.enter_init() else {
        send(report, 0, 126);
        exit(126);
    };
    let command = fork().unwrap_or(-1);
    if command == 0 {
        die_with_parent();
        return s.enter_command();
    }
    keep_only(report, report);
    if command < 0 {
        send(report, 0, 126);
        exit(126);
    }
    let mut code = 1;
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) into a live integer.
        let pid = unsafe { libc::waitpid(-1, &mut status, 0) };
        if pid == command {
            code = code_of(status);
            // The forwarder serves the command: it ends with it (else
            // it would keep this process waiting for ever).
            if let Some(f) = forwarder {
                // SAFETY: kill(2) of this process's own child.
                unsafe { libc::kill(f, libc::SIGKILL) };
            }
        } else if pid < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            send(report, 0, code);
            exit(code);
        }
    }
}

/// Waits for the child `pid`; its exit code, or 128 + its signal (1 when
/// it cannot be waited for).
fn wait_for(pid: libc::pid_t) -> i32 {
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) into a live integer.
        let r = unsafe { libc::waitpid(pid, &mut status, 0) };
        if r == pid {
            return code_of(status);
        }
        if r < 0 && io::Error::last_os_error().raw_os_error() != Some(libc::EINTR) {
            return 1;
        }
    }
}

/// Writes one report (`kind`: 0 exit code, 1 setup errno, 2 set up) of
/// 8 bytes; a pipe write this small is atomic (`pipe(7)`, `PIPE_BUF`).
fn send(fd: RawFd, kind: i32, value: i32) {
    let mut buf = [0_u8; 8];
    buf[..4].copy_from_slice(&kind.to_ne_bytes());
    buf[4..].copy_from_slice(&value.to_ne_bytes());
    // SAFETY: write(2) from a live buffer.
    let _ = unsafe { libc::write(fd, buf.as_ptr().cast::<c_void>(), buf.len()) };
}

/// Reads one report written by [`send`]; `None` at end of file (the writer
/// died) or on an error.
fn receive(fd: RawFd) -> Option<(i32, i32)> {
    let mut buf = [0_u8; 8];
    loop {
        // SAFETY: read(2) into a live buffer.
        let n = unsafe { libc::read(fd, buf.as_mut_ptr().cast::<c_void>(), buf.len()) };
        if n == 8 {
            let kind = i32::from_ne_bytes([buf[0], buf[1], buf[2], buf[3]]);
            let value = i32::from_ne_bytes([buf[4], buf[5], buf[6], buf[7]]);
            return Some((kind, value));
        }
        if n < 0 && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR) {
            continue;
        }
        return None;
    }
}

/// Forks the proxy forwarder, whose listeners are already bound (so the
/// command's first connection finds them), and returns its pid. The child
/// keeps nothing of its parent's but those listeners: `/dev/null` on
/// descriptors 0–2 and every other descriptor closed (`close_range(2)`), so
/// it never holds the command's output pipe or the supervisor's pipes open
/// (a forwarder holding them made the call wait for its drain deadline);
/// it dies with its parent (`PR_SET_PDEATHSIG`) and with the PID namespace.
///
/// The child then starts threads (`Forwarder::serve`): sound after
/// `fork`, since its parent (the namespace's first process) has one thread
/// and glibc's `fork` leaves the allocator's locks usable in the child.
pub(crate) fn fork_forwarder(
    forwarder: crate::proxy::forwarder::Forwarder,
) -> io::Result<libc::pid_t> {
    let pid = fork()?;
    if pid == 0 {
        die_with_parent();
        let (v4, v6) = forwarder.raw_fds();
        if v4 < 3 || v6.is_some_and(|fd| fd < 3) {
            exit(126);
        }
        keep_only(v4, v6.unwrap_or(v4));
        let _ = forwarder.serve();
        exit(0);
    }
    drop(forwarder);
    Ok(pid)
}

/// `/dev/null` on descriptors 0, 1 and 2 (closed when it cannot be opened)
/// and every descriptor from 3 up closed but `a` and `b` (both at least 3;
/// both below 3, e.g. -1: none kept).
fn keep_only(a: RawFd, b: RawFd) {
    // SAFETY: open(2) with a NUL-terminated path.
    let null = unsafe { libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) };
    for fd in 0..3 {
        if null >= 0 {
            if null != fd {
                // SAFETY: dup2(2) of a descriptor this process owns.
                unsafe { libc::dup2(null, fd) };
            }
        } else {
            // SAFETY: close(2) of a number.
            unsafe { libc::close(fd) };
        }
    }
    if a < 3 && b < 3 {
        close_range(3, RawFd::MAX);
        return;
    }
    let (low, high) = (a.min(b), a.max(b));
    let ranges = [(3, low - 1), (low + 1, high - 1), (high + 1, RawFd::MAX)];
    for (from, to) in ranges {
        if from <= to {
            close_range(from, to);
        }
    }
}

/// Closes descriptors `from..=to` (`close_range(2)`; one by one up to
/// 1024 below Linux 5.9).
fn close_range(from: RawFd, to: RawFd) {
    let (Ok(lo), Ok(hi)) = (u32::try_from(from), u32::try_from(to)) else {
        return;
    };
    // SAFETY: close_range(2) takes plain integers.
    let r = unsafe { libc::syscall(libc::SYS_close_range, lo, hi, 0_u32) };
    if r != 0 {
        for fd in from..=to.min(1023) {
            // SAFETY: close(2) of a number.
            unsafe { libc::close(fd) };
        }
    }
}

/// The kernel's Landlock ABI version (`landlock_create_ruleset(2)` with
/// `LANDLOCK_CREATE_RULESET_VERSION`), 0 without Landlock.
pub(crate) fn landlock_version() -> i32 {
    // SAFETY: landlock_create_ruleset(2) with a null attribute and the
    // version flag creates nothing.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<c_void>(),
            0_usize,
            1_u32,
        )
    };
    i32::try_from(v).unwrap_or(0).max(0)
}

/// Whether this system lets an unprivileged process create a user
/// namespace and the others with it: a forked child (no `exec`) tries it and
/// reports the step that failed and its `errno` on a pipe (`Err((step,
/// errno))`, see [`MapStep`]). Runs once per process (the `tool` program
/// pays it on every call), so it forks rather than starting a shell.
pub(crate) fn try_user_namespaces() -> Result<(), (MapStep, i32)> {
    let map = format!("{0} {0} 1", rustix::process::getuid().as_raw());
    let gmap = format!("{0} {0} 1", rustix::process::getgid().as_raw());
    let attempt = || -> Result<(), (MapStep, io::Error)> {
        let flags =
            libc::CLONE_NEWUSER | libc::CLONE_NEWNS | libc::CLONE_NEWPID | libc::CLONE_NEWNET;
        // SAFETY: unshare(2) with flag integers.
        check_int(unsafe { libc::unshare(flags) }).map_err(|e| (0, e))?;
        write_id_maps(map.as_bytes(), gmap.as_bytes())?;
        mount(None, c"/", None, libc::MS_REC | libc::MS_PRIVATE, None).map_err(|e| (4, e))
    };
    let mut ends = [-1 as RawFd; 2];
    // SAFETY: pipe2(2) into a live two-element array.
    if unsafe { libc::pipe2(ends.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err((
            0,
            io::Error::last_os_error()
                .raw_os_error()
                .unwrap_or(libc::EIO),
        ));
    }
    let [read_end, write_end] = ends;
    // SAFETY: fork(2); the child makes only raw system calls on data
    // prepared above (no allocation, no lock) and leaves with _exit(2). A
    // multithreaded caller is fine: the child touches nothing another thread
    // may have held.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        let code = match attempt() {
            Ok(()) => 0,
            Err((step, e)) => {
                send(write_end, step, e.raw_os_error().unwrap_or(libc::EIO));
                1
            }
        };
        exit(code);
    }
    let fork_errno = io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO);
    // SAFETY: closing this process's copy of the write end.
    unsafe { libc::close(write_end) };
    let result = if pid < 0 {
        Err((0, fork_errno))
    } else {
        let report = receive(read_end);
        match (wait_for(pid), report) {
            (0, _) => Ok(()),
            (_, Some((step, errno))) => Err((step, errno)),
            (_, None) => Err((0, libc::EIO)),
        }
    };
    // SAFETY: closing the read end opened above.
    unsafe { libc::close(read_end) };
    result
}
