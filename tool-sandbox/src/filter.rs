//! The seccomp filters (`seccomp(2)`, `Documentation/userspace-api/seccomp_filter.rst`):
//! kernel surfaces a command has no business reaching return `EPERM` (never
//! a kill, so a shell that tries one goes on).
//!
//! Built with `seccompiler` (the filter compiler of Firecracker: pure Rust,
//! no C library to install, BPF built before the fork so that applying it is
//! one `seccomp(2)` call). Three programs, all installed:
//! 1. the refusal list below (`EPERM`), after an architecture check whose
//!    mismatch also returns `EPERM` (seccompiler's default kills; it is
//!    patched so that a 32-bit system call fails instead);
//! 2. `clone3` returns `ENOSYS`: its flags sit in memory a filter cannot
//!    read, and C libraries fall back to `clone`, whose flags it can;
//! 3. on x86-64, every x32 system call (number with bit 30 set) returns
//!    `EPERM`: the x32 numbers of the calls in 1 would otherwise pass.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch, sock_filter,
};

use crate::SandboxError;

/// Calls refused outright: `io_uring`, `bpf`, `perf_event_open`, `userfaultfd`, the
/// key store, mount and its new API, namespace switching, module and kexec
/// calls, ptrace and cross-process memory access, and privileged calls that
/// only matter to root outside a user namespace (no-namespaces tier).
const REFUSED: &[libc::c_long] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_bpf,
    libc::SYS_perf_event_open,
    libc::SYS_userfaultfd,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_setns,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_kcmp,
    libc::SYS_open_by_handle_at,
    libc::SYS_fanotify_init,
    libc::SYS_acct,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_reboot,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
];

/// Namespace flags refused in `unshare` and `clone`.
const NAMESPACE_FLAGS: [libc::c_int; 8] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
    0x80, // CLONE_NEWTIME
];

/// Socket families refused in the no-namespaces tier (there the network is
/// the host's): IPv4, IPv6, netlink and raw packets.
const REFUSED_FAMILIES: [libc::c_int; 4] = [
    libc::AF_INET,
    libc::AF_INET6,
    libc::AF_NETLINK,
    libc::AF_PACKET,
];

/// Socket families refused in both tiers (breakout review E11): none is
/// needed by a command, and none is covered by a network namespace. vsock
/// (`vsock(7)`) reaches the hypervisor and other VMs whatever the
/// namespace; the rest are rarely used kernel protocol code (Bluetooth, CAN,
/// TIPC, RDS, XDP, `PF_KEY`, the crypto API's `AF_ALG`, LLC, `PPPoX`, X.25,
/// AX.25, IPX, `AppleTalk`, NFC, KCM, Qualcomm IPC router, SMC, MCTP).
const ALWAYS_REFUSED_FAMILIES: [libc::c_int; 19] = [
    libc::AF_VSOCK,
    libc::AF_BLUETOOTH,
    libc::AF_CAN,
    libc::AF_TIPC,
    libc::AF_RDS,
    libc::AF_XDP,
    libc::AF_KEY,
    libc::AF_ALG,
    libc::AF_LLC,
    libc::AF_PPPOX,
    libc::AF_X25,
    libc::AF_AX25,
    libc::AF_IPX,
    libc::AF_APPLETALK,
    libc::AF_NFC,
    41, // AF_KCM
    42, // AF_QIPCRTR
    43, // AF_SMC
    45, // AF_MCTP
];

/// `_IOW('f', 2, long)` on 64-bit (`linux/fs.h`).
const FS_IOC_SETFLAGS: u64 = 0x4008_6602;
/// `_IOW('X', 32, struct fsxattr)` (`linux/fs.h`).
const FS_IOC_FSSETXATTR: u64 = 0x401c_5820;

fn cond(
    arg: u8,
    len: SeccompCmpArgLen,
    op: SeccompCmpOp,
    value: u64,
) -> Result<SeccompCondition, SandboxError> {
    SeccompCondition::new(arg, len, op, value).map_err(|e| SandboxError::setup("seccomp", e))
}

fn rule(conds: Vec<SeccompCondition>) -> Result<SeccompRule, SandboxError> {
    SeccompRule::new(conds).map_err(|e| SandboxError::setup("seccomp", e))
}

fn flag_rules(arg: u8, flags: &[libc::c_int]) -> Result<Vec<SeccompRule>, SandboxError> {
    flags
        .iter()
        .map(|&f| {
            let f = u64::from(f.unsigned_abs());
            rule(vec![cond(
                arg,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(f),
                f,
            )?])
        })
        .collect()
}

fn arch() -> Result<TargetArch, SandboxError> {
    TargetArch::try_from(std::env::consts::ARCH).map_err(|e| SandboxError::setup("seccomp", e))
}

/// The filters for one tier (`socket_families`: refuse the network
/// families; `unix_sockets`: allow `socket(AF_UNIX, …)`, refused otherwise).
///
/// Why `AF_UNIX` sockets are refused by default in both tiers: a pathname
/// Unix socket lives in the file system, and neither a network namespace
/// (`network_namespaces(7)` covers abstract sockets only) nor a read-only
/// mount (`connect(2)` on a socket needs write permission on the socket
/// file, not on its file system; `unix(7)`, "Pathname sockets") nor
/// Landlock before ABI 9 stops `connect(2)` to one that is visible: a
/// database's, an IDE's, the SSH agent's. `socketpair(2)` stays allowed (a
/// pair has no name: pipes between the command's own processes), and so do
/// descriptors the command's own processes pass each other.
pub(crate) fn programs(
    socket_families: bool,
    unix_sockets: bool,
) -> Result<Vec<BpfProgram>, SandboxError> {
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    for &nr in REFUSED {
        rules.insert(nr, Vec::new());
    }
    rules.insert(libc::SYS_unshare, flag_rules(0, &NAMESPACE_FLAGS)?);
    rules.insert(libc::SYS_clone, flag_rules(0, &NAMESPACE_FLAGS)?);
    // TIOCSTI pushes input into a terminal, TIOCLINUX reaches the console:
    // both drive the user's shell from inside (ioctl_tty(2)).
    rules.insert(
        libc::SYS_ioctl,
        vec![
            rule(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                libc::TIOCSTI,
            )?])?,
            rule(vec![cond(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                libc::TIOCLINUX,
            )?])?,
        ],
    );
    if socket_families {
        // No-namespaces tier (breakout review E12): files outside are the
        // host's, and Landlock governs no metadata change. Refused: the
        // set-user-ID and set-group-ID bits (`chmod 4755` of a root file
        // as root; `inode(7)`, "The file type and mode"), from `chmod`,
        // `fchmod`, `fchmodat` and `fchmodat2`; and the inode flags ioctls
        // (`chattr`, `ioctl_iflags(2)`: `FS_IOC_SETFLAGS`,
        // `FS_IOC_FSSETXATTR`). Other mode bits, owners and times of
        // outside files stay open (SECURITY.md, W15/W16).
        for (nr, arg) in [
            (libc::SYS_chmod, 1),
            (libc::SYS_fchmod, 1),
            (libc::SYS_fchmodat, 2),
            (452, 2), // fchmodat2 (Linux 6.6)
        ] {
            rules.insert(
                nr,
                flag_rules(
                    arg,
                    &[libc::S_ISUID as libc::c_int, libc::S_ISGID as libc::c_int],
                )?,
            );
        }
        if let Some(ioctls) = rules.get_mut(&libc::SYS_ioctl) {
            for request in [FS_IOC_SETFLAGS, FS_IOC_FSSETXATTR] {
                ioctls.push(rule(vec![cond(
                    1,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    request,
                )?])?);
            }
        }
    }
    // personality(2): only the default (0) and the query (0xffffffff).
    rules.insert(
        libc::SYS_personality,
        vec![rule(vec![
            cond(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0)?,
            cond(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0xffff_ffff)?,
        ])?],
    );
    // Other processes' priorities and limits (renice, prlimit): only the
    // caller itself (`who`/`pid` 0).
    rules.insert(
        libc::SYS_setpriority,
        vec![rule(vec![cond(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            0,
        )?])?],
    );
    rules.insert(
        libc::SYS_prlimit64,
        vec![rule(vec![
            cond(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, 0)?,
            cond(2, SeccompCmpArgLen::Qword, SeccompCmpOp::Ne, 0)?,
        ])?],
    );
    let mut refused_families: Vec<libc::c_int> = ALWAYS_REFUSED_FAMILIES.to_vec();
    if socket_families {
        refused_families.extend(REFUSED_FAMILIES);
    }
    if !unix_sockets {
        refused_families.push(libc::AF_UNIX);
    }
    {
        let families = refused_families
            .iter()
            .map(|&f| {
                rule(vec![cond(
                    0,
                    SeccompCmpArgLen::Dword,
                    SeccompCmpOp::Eq,
                    u64::from(f.unsigned_abs()),
                )?])
            })
            .collect::<Result<Vec<_>, _>>()?;
        rules.insert(libc::SYS_socket, families);
    }
    let eperm = SeccompAction::Errno(libc::EPERM.unsigned_abs());
    let main = SeccompFilter::new(rules, SeccompAction::Allow, eperm, arch()?)
        .map_err(|e| SandboxError::setup("seccomp", e))?;
    let mut main: BpfProgram = main
        .try_into()
        .map_err(|e: seccompiler::BackendError| SandboxError::setup("seccomp", e))?;
    soften_arch_check(&mut main)?;
    let mut clone3 = BTreeMap::new();
    clone3.insert(libc::SYS_clone3, Vec::new());
    let clone3 = SeccompFilter::new(
        clone3,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::ENOSYS.unsigned_abs()),
        arch()?,
    )
    .map_err(|e| SandboxError::setup("seccomp", e))?;
    let mut clone3: BpfProgram = clone3
        .try_into()
        .map_err(|e: seccompiler::BackendError| SandboxError::setup("seccomp", e))?;
    soften_arch_check(&mut clone3)?;
    let mut out = vec![main, clone3];
    if cfg!(target_arch = "x86_64") {
        out.push(x32_refusal());
    }
    Ok(out)
}

const SECCOMP_RET_KILL_PROCESS: u32 = 0x8000_0000;
const SECCOMP_RET_ERRNO: u32 = 0x0005_0000;
const SECCOMP_RET_ALLOW: u32 = 0x7fff_0000;

/// seccompiler opens each program with "load arch; equal → skip; kill
/// process". Turn that kill into `EPERM`.
fn soften_arch_check(program: &mut BpfProgram) -> Result<(), SandboxError> {
    match program.get_mut(2) {
        Some(ins) if ins.code == 0x06 && ins.k == SECCOMP_RET_KILL_PROCESS => {
            ins.k = SECCOMP_RET_ERRNO | libc::EPERM.unsigned_abs();
            Ok(())
        }
        _ => Err(SandboxError::setup(
            "seccomp",
            "the filter does not open with the expected architecture check",
        )),
    }
}

/// `EPERM` for every x32 system call (`nr & 0x40000000`).
fn x32_refusal() -> BpfProgram {
    const LD_W_ABS: u16 = 0x20;
    const JSET_K: u16 = 0x05 | 0x40;
    const RET_K: u16 = 0x06;
    vec![
        sock_filter {
            code: LD_W_ABS,
            jt: 0,
            jf: 0,
            k: 0, // seccomp_data.nr
        },
        sock_filter {
            code: JSET_K,
            jt: 0,
            jf: 1,
            k: 0x4000_0000,
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: SECCOMP_RET_ERRNO | libc::EPERM.unsigned_abs(),
        },
        sock_filter {
            code: RET_K,
            jt: 0,
            jf: 0,
            k: SECCOMP_RET_ALLOW,
        },
    ]
}
