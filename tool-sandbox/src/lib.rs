//! The kernel sandbox every process a tool starts can run in (Linux): the
//! mechanism behind [`tool_core::SandboxPolicy`].
//!
//! ```no_run
//! use std::path::Path;
//! use std::process::Command;
//! use std::sync::Arc;
//! use tool_core::SandboxPolicy;
//! use tool_sandbox::Sandbox;
//!
//! let workspace = Path::new("/tmp");
//! let sandbox = Arc::new(Sandbox::prepare(&SandboxPolicy::default(), workspace, None)?);
//! let mut command = Command::new("sh");
//! command.arg("-c").arg("echo hi > note.txt; cat ~/.ssh/id_rsa").current_dir(workspace);
//! sandbox.apply(&mut command);
//! let output = command.output()?;
//! println!("{} tier: {}", sandbox.tier(), String::from_utf8_lossy(&output.stdout));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! (The example is `no_run` only because doctests may run where user
//! namespaces are blocked; `tests/` runs the same on real processes.)
//!
//! # Tiers
//! - **full** (the default where unprivileged user namespaces work): the
//!   process that will start the command `unshare(2)`s user, mount, PID,
//!   network, IPC and UTS namespaces, maps its own user and group to
//!   themselves (`user_namespaces(7)`), builds the mount view below, forks
//!   the first process of the new PID namespace (which mounts a `/proc` of
//!   that namespace, `pid_namespaces(7)`, and brings `lo` up), and that
//!   process forks the command, which applies the limits, Landlock and
//!   seccomp and `exec`s. When the namespace's first process ends, the
//!   kernel kills every process left in it (`pid_namespaces(7)`, "the
//!   kernel terminates all of the processes in the namespace via a SIGKILL")
//!   — whatever the command did to its supervisor.
//! - **no-namespaces** (`--sandbox-tier no-namespaces`, or automatically
//!   where user namespaces are blocked): Landlock for files (read
//!   everywhere but the hidden paths, write in the workspace, the extra
//!   writable paths and a private per-call temp folder exported as
//!   `TMPDIR`), Landlock TCP bind/connect refused, Landlock scoping,
//!   seccomp including the socket-family filter, resource limits; the
//!   caller's supervisor kills the session. Other processes' `/proc/<pid>`
//!   memory files (`environ`, `mem`, `maps`) are closed by Landlock's ptrace
//!   rule (`Documentation/userspace-api/landlock.rst`, "Ptrace
//!   restrictions"), which holds only because the command's capabilities
//!   are dropped (see "Processes" below). It does not cover: host `/tmp`
//!   readable; metadata changes of outside files (`chmod`, `chown`,
//!   `touch -d`: Landlock governs no metadata, and seccomp cannot see the
//!   path a call names, so no sound mechanism exists in this tier — a
//!   seccomp user-notification supervisor reads the path from the caller's
//!   memory, which another thread can change after the check,
//!   `seccomp_unotify(2)`, "NOTES"); read-only or hidden paths inside a
//!   writable one (`.git/hooks` and `.git/config` are restored after the
//!   call instead, see "Git").
//!
//! # Files (full tier)
//! Mount order, so that hidden > read-only > writable
//! (`../shared/design/cross-cutting.md` §6): propagation made private
//! (`mount_namespaces(7)`); policy paths under `/tmp` or `/dev/shm`
//! copied aside (`open_tree(2)`); writable paths bound onto themselves;
//! every other mount remounted read-only (keeping its locked flags,
//! `mount_namespaces(7)` "Restrictions"); fresh `tmpfs` on `/tmp` and
//! `/dev/shm`; the copies attached again at their own paths; the
//! workspace's `.git` bound onto itself (see "Git"); read-only
//! paths (skills folders, `.git/hooks`, `.git/config`, a `gitdir:` target)
//! bound read-only; hidden paths covered by an empty read-only `tmpfs`
//! (directories) or `/dev/null` (files). The secrets hidden by default are
//! listed in [`default_hidden`]. Landlock (`Documentation/userspace-api/landlock.rst`)
//! then allows reading everywhere and writing in the writable paths and the
//! fresh `/tmp` and `/dev/shm`.
//!
//! # Git
//! Both tiers check the workspace's `.git` after every call, never
//! following a link (`git_guard` module): `.git/hooks`, `.git/config` and
//! `.git/commondir` go back to what they held; a link planted in their
//! place is removed, not written through; a repository the command created
//! where none was keeps only its sample hooks and the settings `git init`,
//! `git remote add` and `git branch -u` write. The full tier also binds
//! `.git` onto itself, so that `mv .git .git-old && git init` fails
//! (`rename(2)`: `EBUSY` for a mount point), and a `.git` file (`gitdir:`)
//! read-only.
//!
//! # Processes
//! Before `exec`, in both tiers: the capabilities a command never needs are
//! dropped from the bounding, inheritable, ambient, permitted and effective
//! sets (`capabilities(7)`; the list and the reason for each are in the
//! `child` module), `CAP_SYS_ADMIN` and `CAP_PERFMON` above all: the kernel
//! lets a `perfmon_capable()` process read another's memory files
//! (`/proc/<pid>/environ`) before any LSM is asked, which made root's
//! commands read the environment of `tool` and its ancestors past Landlock
//! in the no-namespaces tier. Every descriptor above 2 is marked
//! close-on-exec (`close_range(2)`, `CLOSE_RANGE_CLOEXEC`): a folder the
//! host inherited open from its own parent would otherwise reach past the
//! hidden paths through `/proc/self/fd/N`.
//!
//! # Unix sockets
//! `socket(AF_UNIX, …)` is refused with `EPERM` in both tiers unless
//! [`tool_core::SandboxPolicy::unix_sockets`] allows it (CLI
//! `--sandbox-allow-unix-sockets`): a pathname socket is reachable through
//! any view of the file system that shows it, and neither namespaces,
//! read-only mounts nor Landlock (before ABI 9) stop `connect(2)` to it.
//! `socketpair(2)` stays allowed. The proxy forwarder (network hook) runs
//! in a process forked before the filter is applied, so it keeps its own
//! socket to the host's proxy.
//!
//! # Limits
//! [`tool_core::SandboxLimits`]: `processes` through a cgroup's `pids.max`
//! where the cgroup tree is writable (cgroup v2 child of the caller's
//! cgroup, else the v1 `pids` hierarchy), and always `RLIMIT_NPROC`
//! (`getrlimit(2)`: counted per user inside the user namespace; the kernel
//! does not apply it to root, hence the cgroup); `memory` as `RLIMIT_DATA`
//! per process (not `RLIMIT_AS`, which breaks V8 and JVMs) and, when set
//! explicitly, for all the call's processes together through the same
//! cgroups: `memory.max` (v2) or `memory.limit_in_bytes` (the v1 `memory`
//! hierarchy, writable as root); the kernel's OOM killer ends a process of
//! the call when it is reached, and [`Sandbox::finish`] names the limit.
//! Where no such cgroup can be made (no delegated v2 subtree, not root on
//! v1), [`Sandbox::watch_memory`] starts a watchdog that sums the resident
//! memory of the call's processes every [`WATCHDOG_PERIOD`] and ends them
//! when the sum passes the limit (`bash_command` starts it; a host using
//! [`Sandbox::apply`] starts it after `spawn`), with a note saying so.
//! Both tiers use the same mechanism (the cgroups are joined before any
//! namespace is entered). `file-size` as `RLIMIT_FSIZE` (`SIGXFSZ`); `cpu`
//! as `RLIMIT_CPU` (`SIGXCPU`); `open-files` as `RLIMIT_NOFILE`.
//!
//! # Network hook
//! With allowed hosts, the caller starts a [`ProxyServer`] on a host Unix
//! socket and passes [`ProxyHook::new`]`(proxy.socket_path())`; the mount
//! view binds that socket at [`PROXY_SOCKET_IN_SANDBOX`] (inside the hidden
//! `/run`). In the namespace's first process, [`Sandbox::enter_init`] binds
//! the [`Forwarder`]'s listeners on `127.0.0.1` and `[::1]`
//! ([`ProxyHook::forwarder_port`], default 3128) and forks the forwarder
//! process, which keeps only those listeners (`/dev/null` on 0–2, every
//! other descriptor closed) and relays to the socket; it is not under the
//! command's Landlock and seccomp rules, and dies with the namespace. The
//! caller sets [`ProxyHook::env`]'s variables (`HTTP_PROXY`, ...) in the
//! command's environment, ends the forwarder once the command's processes
//! are gone (`enter_init` returns its pid) and, after the call, takes the
//! [`NetworkReport`] from [`ProxyServer::shutdown`]. `bash_command` does all
//! of this per call. The no-namespaces tier ignores the hook (no network
//! namespace to bind the socket into; SECURITY.md says why no TCP variant
//! is served).
//!
//! # Cost
//! What a spawn pays is measured by `benches/spawn.rs` (in process) and
//! `benches/sandbox.sh` (through `tool call`). Kept off the caller's path:
//! the seccomp programs are compiled once per process; the kernel probes
//! run once per process, and the user-namespace probe forks without
//! `exec`; hidden paths that do not exist get no mount; the caller of
//! [`Sandbox::apply`] gets the command's status from the process std forked
//! as soon as it is known, while the namespace's first process (a child of
//! it, cloned straight into the new namespaces, so no process owns them
//! besides it) exits — unmounting the copied tree waits for an RCU grace
//! period — after; the no-namespaces tier makes one Landlock rule per entry
//! of each folder on the way to a hidden path and reads each entry's kind
//! from the descriptor it opened for the rule.
//!
//! # Crates
//! `landlock` (the Landlock maintainers' own crate: ABI detection and
//! best-effort downgrade) builds the ruleset before the fork;
//! `seccompiler` (Firecracker's filter compiler, pure Rust) builds the BPF;
//! `libc` makes the raw system calls after the fork (the `child` module
//! docs say why only those).
//!
//! Crates chosen for the network proxy ([`proxy`]): `tokio` (already the
//! workspace's runtime) serves many idle tunnels from one thread with
//! timeouts on every read; `httparse` parses request heads (a small,
//! zero-copy, widely used parser, fuzzed as part of hyper, with a bound on
//! the header count), so no HTTP parsing is hand-written; `url` parses
//! absolute-form request targets with the same rules `NetworkPolicy`
//! matches with; `tempfile` creates the private 0700 per-call directory and
//! removes it; `libc` for the `SIOCSIFFLAGS` ioctl that brings loopback up
//! (neither std nor rustix wraps it, and a netlink crate would be far larger
//! for one flag); `serde` so that the `NetworkReport` goes into metadata
//! as JSON.
//!
//! Other platforms: [`Sandbox::prepare`] refuses (unsupported).

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::os::unix::fs::MetadataExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, OnceLock};

use tool_core::{SandboxMode, SandboxPolicy, SandboxTier};

mod child;
mod explain;
mod filter;
mod git_guard;
mod git_plants;
mod limits;
mod links;
mod paths;
mod plan;
mod probe;
pub mod proxy;
mod watchdog;

pub use proxy::{
    DEFAULT_FORWARDER_PORT, Forwarder, NetworkReport, ProxyEnv, ProxyLimits, ProxyServer,
    bring_up_loopback,
};

pub use explain::refusal_notes;
pub use links::{LinkScan, scan_hard_links};
pub use paths::default_hidden;
pub use watchdog::{MemoryWatchdog, WATCHDOG_PERIOD};

use plan::{Prepared, c_path};

/// Where [`ProxyHook::host_socket`] appears inside the sandbox.
pub const PROXY_SOCKET_IN_SANDBOX: &str = "/run/agent-tools/proxy.sock";

/// The tier a sandbox runs in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Tier {
    /// Namespaces, mounts, Landlock, seccomp, limits.
    Full,
    /// Landlock, seccomp, limits; no namespaces.
    NoNamespaces,
}

impl Tier {
    /// `full` or `no-namespaces`, as in result metadata.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Full => "full",
            Self::NoNamespaces => "no-namespaces",
        }
    }
}

impl fmt::Display for Tier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The network hook (see the crate docs, "Network hook"): where the host
/// proxy listens, and the port the forwarder serves inside the sandbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProxyHook {
    /// The proxy's listening Unix socket on the host
    /// ([`ProxyServer::socket_path`]); bound at [`PROXY_SOCKET_IN_SANDBOX`]
    /// inside the sandbox (full tier).
    pub host_socket: PathBuf,
    /// The port the forwarder listens on at `127.0.0.1` and `[::1]` inside
    /// the sandbox's network namespace (full tier); the command's
    /// `HTTP_PROXY` points there ([`ProxyHook::env`]). Default
    /// [`DEFAULT_FORWARDER_PORT`] (3128).
    pub forwarder_port: u16,
}

impl ProxyHook {
    /// The hook for a proxy listening on `host_socket`, forwarder on
    /// [`DEFAULT_FORWARDER_PORT`].
    pub fn new(host_socket: impl Into<PathBuf>) -> Self {
        Self {
            host_socket: host_socket.into(),
            forwarder_port: DEFAULT_FORWARDER_PORT,
        }
    }

    /// The proxy variables for the command (`HTTP_PROXY`, `HTTPS_PROXY`,
    /// `ALL_PROXY`, their lower-case forms, empty `NO_PROXY`), pointing at
    /// the forwarder.
    pub fn env(&self) -> ProxyEnv {
        ProxyEnv::for_port(self.forwarder_port)
    }
}

/// Why a sandbox could not be prepared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SandboxErrorKind {
    /// The kernel lacks a layer the policy needs (user namespaces, Landlock).
    Unsupported,
    /// The policy itself is wrong (a missing writable path, ...).
    Policy,
    /// A step of preparing failed (I/O).
    Setup,
}

/// A sandbox that could not be prepared; the message says what to change.
#[derive(Debug, Clone)]
pub struct SandboxError {
    kind: SandboxErrorKind,
    message: String,
}

impl SandboxError {
    /// What went wrong.
    pub fn kind(&self) -> SandboxErrorKind {
        self.kind
    }

    pub(crate) fn unsupported(message: impl Into<String>) -> Self {
        Self {
            kind: SandboxErrorKind::Unsupported,
            message: message.into(),
        }
    }

    pub(crate) fn policy(message: impl Into<String>) -> Self {
        Self {
            kind: SandboxErrorKind::Policy,
            message: message.into(),
        }
    }

    pub(crate) fn setup(step: &str, cause: impl fmt::Display) -> Self {
        Self {
            kind: SandboxErrorKind::Setup,
            message: format!("the sandbox could not be set up ({step}): {cause}"),
        }
    }
}

impl fmt::Display for SandboxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for SandboxError {}

/// One prepared sandbox: everything a spawn needs, computed before the fork.
/// Prepare one per command (the cgroup and temp folder are per call); it
/// removes them when dropped.
#[derive(Debug)]
pub struct Sandbox {
    prepared: Prepared,
    policy: SandboxPolicy,
    notes: Vec<String>,
    cgroups: limits::Cgroups,
    tmpdir: Option<PathBuf>,
    workspace: PathBuf,
    proxy: Option<ProxyHook>,
    git_guard: Option<git_guard::GitGuard>,
    /// Whether the memory limit needs the watchdog (set explicitly, no
    /// memory cgroup), and whether the watchdog found it passed.
    memory_watchdog: bool,
    memory_watchdog_hit: Arc<std::sync::atomic::AtomicBool>,
}

/// Line prefixed to what the no-namespaces tier does not cover.
pub const NO_NAMESPACES_NOTE: &str = "Sandbox tier no-namespaces (no user namespaces): \
     Landlock, seccomp and limits only; not covered: host /tmp readable, chmod/chown/touch of \
     files outside (Landlock does not govern metadata), read-only or hidden paths inside the \
     workspace (.git/hooks and .git/config are restored after the call).";

impl Sandbox {
    /// Prepares a sandbox for commands run in `workspace` (made absolute and
    /// resolved). `workdir` (inside the sandbox's view) is where the command
    /// starts; `None` keeps the command's own `current_dir`.
    ///
    /// # Errors
    /// [`SandboxErrorKind::Unsupported`] where the kernel lacks user
    /// namespaces (tier `full`) or Landlock, unless `best_effort` (the
    /// message says how to configure `--sandbox-best-effort` or
    /// `--sandbox off`); [`SandboxErrorKind::Policy`] for a policy that cannot
    /// hold (mode `off`: nothing to prepare; a writable path that does not
    /// exist; hard links to outside files in the no-namespaces tier);
    /// [`SandboxErrorKind::Setup`] when a step fails.
    pub fn prepare(
        policy: &SandboxPolicy,
        workspace: &Path,
        workdir: Option<&Path>,
    ) -> Result<Self, SandboxError> {
        Self::prepare_with_proxy(policy, workspace, workdir, None)
    }

    /// [`Sandbox::prepare`] with the network hook (see the crate docs).
    ///
    /// # Errors
    /// As [`Sandbox::prepare`].
    pub fn prepare_with_proxy(
        policy: &SandboxPolicy,
        workspace: &Path,
        workdir: Option<&Path>,
        proxy: Option<ProxyHook>,
    ) -> Result<Self, SandboxError> {
        if !cfg!(target_os = "linux") {
            return Err(SandboxError::unsupported(
                "the sandbox supports Linux only; run with `--sandbox off` to run commands unsandboxed",
            ));
        }
        if policy.mode == SandboxMode::Off {
            return Err(SandboxError::policy(
                "the sandbox policy is `off`: run the command without a sandbox",
            ));
        }
        let mut notes = Vec::new();
        let tier = choose_tier(policy, &mut notes)?;
        let abi = probe::landlock_abi();
        if abi == landlock::ABI::Unsupported {
            if !policy.best_effort {
                return Err(SandboxError::unsupported(
                    "the kernel has no Landlock (Linux 5.13+ with `lsm=landlock`), so commands \
                     cannot be confined: run with `--sandbox-best-effort` to go on with the other \
                     layers, or `--sandbox off` to run unsandboxed",
                ));
            }
            notes.push(
                "Landlock unavailable: file and TCP rules not enforced by Landlock.".to_owned(),
            );
        }
        let workspace = std::fs::canonicalize(workspace).map_err(|e| {
            SandboxError::policy(format!(
                "the workspace {} cannot be resolved: {e}",
                workspace.display()
            ))
        })?;
        let resolved = paths::resolve(policy, &workspace, tier)?;
        let scan = links::scan_hard_links(&workspace, links::SCAN_BUDGET);
        if let Some(note) = scan.note() {
            notes.push(note);
        }
        let mut hidden = resolved.hidden.clone();
        if !scan.outside.is_empty() {
            if tier == Tier::NoNamespaces {
                return Err(SandboxError::policy(format!(
                    "the workspace holds hard links to files outside it ({}); the no-namespaces \
                     tier cannot contain them: remove them, or run where the full tier works",
                    scan.describe()
                )));
            }
            hidden.extend(scan.outside.iter().cloned());
        }
        let workdir_info = match workdir {
            Some(dir) => {
                let meta = std::fs::metadata(dir).map_err(|e| {
                    SandboxError::policy(format!("the working directory {}: {e}", dir.display()))
                })?;
                Some((c_path(dir)?, meta.dev(), meta.ino()))
            }
            None => None,
        };
        let (uid, gid) = (rustix::process::getuid(), rustix::process::getgid());
        let uid_map = format!("{0} {0} 1", uid.as_raw());
        let gid_map = format!("{0} {0} 1", gid.as_raw());
        let mut tmpdir = None;
        let (mounts, landlock, late) = match tier {
            Tier::Full => {
                let plan = paths::mount_plan(&resolved, &hidden, proxy.as_ref())?;
                let mut writable = resolved.writable.clone();
                writable.retain(|w| !paths::under_tmp(w));
                let ll = plan::landlock_ruleset(abi, &[PathBuf::from("/")], &[], &writable, false)?;
                let late = plan.fresh_tmp.clone();
                (Some(plan), ll, late)
            }
            Tier::NoNamespaces => {
                let dir = paths::private_tmpdir()?;
                let mut writable = resolved.writable.clone();
                writable.push(dir.clone());
                tmpdir = Some(dir);
                let (roots, list_only) = plan::read_roots_except(&hidden)?;
                let ll = plan::landlock_ruleset(abi, &roots, &list_only, &writable, true)?;
                (None, ll, Vec::new())
            }
        };
        let write_access = plan::access_sets(abi).1.bits();
        let seccomp = filters(tier, policy.unix_sockets)?;
        // Moving a process into a cgroup costs tens of milliseconds on
        // cgroup v1 (the migration waits for an RCU grace period), so
        // cgroups are only made for limits set explicitly; the defaults are
        // RLIMIT_NPROC and RLIMIT_DATA alone.
        let processes = Some(policy.limits.processes)
            .filter(|&n| n != tool_core::governance::sandbox::DEFAULT_SANDBOX_PROCESSES);
        let memory = Some(policy.limits.memory)
            .filter(|&n| n != tool_core::governance::sandbox::DEFAULT_SANDBOX_MEMORY);
        let cgroups = limits::Cgroups::create(processes, memory);
        if processes.is_some() && !cgroups.pids && rustix::process::getuid().is_root() {
            notes.push(format!(
                "No writable cgroup: the processes limit ({}) falls back to RLIMIT_NPROC, which \
                 the kernel does not apply to root.",
                policy.limits.processes
            ));
        }
        let memory_watchdog = memory.is_some() && !cgroups.memory;
        if memory_watchdog {
            notes.push(format!(
                "No writable memory cgroup: the memory limit ({} bytes) for the command's \
                 processes together is kept by a watchdog sampling their resident memory every \
                 {} ms where the host starts it (bash_command does), else per process only \
                 (RLIMIT_DATA).",
                policy.limits.memory,
                WATCHDOG_PERIOD.as_millis()
            ));
        }
        let git_guard = git_guard::GitGuard::snapshot(&workspace);
        let prepared = Prepared {
            tier,
            uid_map,
            gid_map,
            mounts,
            landlock,
            landlock_late_writable: late,
            landlock_write_access: write_access,
            seccomp,
            rlimits: limits::rlimits(&policy.limits),
            cgroup_procs: cgroups.procs_paths()?,
            workdir: workdir_info,
        };
        Ok(Self {
            prepared,
            policy: policy.clone(),
            notes,
            cgroups,
            tmpdir,
            workspace,
            proxy,
            git_guard,
            memory_watchdog,
            memory_watchdog_hit: Arc::default(),
        })
    }

    /// Starts the memory watchdog ([`MemoryWatchdog`]) for a call whose
    /// processes all descend from `root` (the supervisor or the process
    /// [`Sandbox::apply`] made), when the memory limit was set explicitly
    /// and no memory cgroup could be made; `None` when it is not needed (or
    /// its thread could not start: the limit then holds per process). Keep
    /// it until the call ended; [`Sandbox::finish`] names the limit when it
    /// ended the call.
    pub fn watch_memory(&self, root: u32) -> Option<MemoryWatchdog> {
        if !self.memory_watchdog {
            return None;
        }
        MemoryWatchdog::start(
            root,
            self.policy.limits.memory,
            Arc::clone(&self.memory_watchdog_hit),
        )
        .ok()
    }

    /// The tier in force.
    pub fn tier(&self) -> Tier {
        self.prepared.tier
    }

    /// The policy this sandbox enforces.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.policy
    }

    /// The resolved workspace.
    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    /// One-line notes about layers not in force (best effort, the
    /// no-namespaces tier, a limit that cannot be enforced).
    pub fn notes(&self) -> &[String] {
        &self.notes
    }

    /// Variables to add to the command's environment: `TMPDIR` (and `TMP`,
    /// `TEMP`) pointing at the private per-call temp folder in the
    /// no-namespaces tier; nothing in the full tier (its `/tmp` is private).
    pub fn env(&self) -> Vec<(OsString, OsString)> {
        match &self.tmpdir {
            Some(dir) => ["TMPDIR", "TMP", "TEMP"]
                .into_iter()
                .map(|k| (OsString::from(k), dir.clone().into_os_string()))
                .collect(),
            None => Vec::new(),
        }
    }

    /// Whether the command runs in its own PID namespace, so that the
    /// caller must fork a first process ([`Sandbox::enter_init`]) between
    /// [`Sandbox::enter_supervisor`] and [`Sandbox::enter_command`].
    pub fn has_pid_namespace(&self) -> bool {
        self.prepared.tier == Tier::Full
    }

    /// Step 1, after `fork`, in the process that will fork the command (or
    /// the namespace's first process): joins the cgroup, and in the full
    /// tier unshares the namespaces and builds the mount view.
    /// Async-signal-safe.
    ///
    /// # Errors
    /// The failing system call's error.
    pub fn enter_supervisor(&self) -> io::Result<()> {
        child::join_cgroup(&self.prepared)?;
        if let Some(mounts) = &self.prepared.mounts {
            child::enter_namespaces(&self.prepared)?;
            child::build_mounts(mounts)?;
        }
        Ok(())
    }

    /// Step 2 (full tier), in the first process of the new PID namespace:
    /// mounts its `/proc`, brings `lo` up and, with a [`ProxyHook`], binds
    /// the forwarder's listeners and forks the forwarder process (it keeps
    /// only its listeners, see the crate docs, "Network hook"). Returns the
    /// forwarder's pid (in the namespace), so that the caller can end it
    /// once the command's processes are gone. Async-signal-safe apart from
    /// binding the listeners, which allocates (sound after glibc's `fork`).
    ///
    /// # Errors
    /// The failing system call's error (binding the forwarder's port
    /// included).
    pub fn enter_init(&self) -> io::Result<Option<i32>> {
        child::enter_init()?;
        match &self.proxy {
            Some(hook) if self.prepared.tier == Tier::Full => {
                let forwarder =
                    Forwarder::bind(hook.forwarder_port, Path::new(PROXY_SOCKET_IN_SANDBOX))?;
                child::fork_forwarder(forwarder).map(Some)
            }
            _ => Ok(None),
        }
    }

    /// Step 3, in the process that will `exec` the command: changes into
    /// the working directory (checked to be the one given to `prepare`), sets
    /// the limits, `PR_SET_NO_NEW_PRIVS`, Landlock and seccomp.
    /// Async-signal-safe.
    ///
    /// # Errors
    /// The failing system call's error (`ESTALE` when the working directory
    /// is no longer the one checked).
    pub fn enter_command(&self) -> io::Result<()> {
        if let Some((path, dev, ino)) = &self.prepared.workdir {
            child::enter_workdir(path, *dev, *ino)?;
        }
        child::confine(&self.prepared)
    }

    /// Sandboxes `command` for hosts without a supervisor of their own: a
    /// `pre_exec` hook runs the three steps, forking the namespace's first
    /// process in the full tier (the returned child waits for it and exits
    /// with the command's code, or 128 + its signal).
    pub fn apply(self: &Arc<Self>, command: &mut Command) {
        let me = Arc::clone(self);
        command.envs(self.env());
        let hook = move || -> io::Result<()> { child::run_nested(&me) };
        // SAFETY: the hook makes raw system calls on prepared data only
        // (see `child`), and forks with `libc::fork` from the child std
        // forked, which has one thread.
        #[allow(
            unsafe_code,
            reason = "pre_exec has no safe form; the hook is async-signal-safe"
        )]
        unsafe {
            command.pre_exec(hook);
        }
    }

    /// After the command ended (every process of the call gone): the
    /// one-line notes naming what the sandbox refused, from the command's
    /// exit and output (see [`refusal_notes`]), plus a processes or memory
    /// limit breach seen by the call's cgroups; and the after-call check of
    /// the workspace's `.git` (both tiers): hooks, `config` and `commondir`
    /// put back as they were, a repository the command created stripped of
    /// planted hooks and program-running settings, never following a link
    /// (see the crate docs, "Git").
    pub fn finish(&self, exit_code: Option<i32>, signal: Option<i32>, output: &str) -> Vec<String> {
        let hit = self.cgroups.pids_limit_hit();
        let mut notes = refusal_notes(&self.policy, exit_code, signal, output, hit);
        if self.cgroups.memory_limit_hit() {
            notes.retain(|n| !n.contains("memory limit"));
            notes.push(format!(
                "Refused by the sandbox: the memory limit ({} bytes for all the command's \
                 processes together) was hit and the kernel ended a process; a person can raise \
                 it with --sandbox-limit memory=SIZE.",
                self.policy.limits.memory
            ));
        }
        if self
            .memory_watchdog_hit
            .load(std::sync::atomic::Ordering::SeqCst)
        {
            notes.retain(|n| !n.contains("memory limit"));
            notes.push(format!(
                "Refused by the sandbox: the memory limit ({} bytes for all the command's \
                 processes together, measured by the watchdog) was passed and the command's \
                 processes were ended; a person can raise it with --sandbox-limit memory=SIZE.",
                self.policy.limits.memory
            ));
        }
        notes.extend(self.check_git());
        notes
    }

    /// The after-call check of the workspace's `.git` alone (the last step
    /// of [`Sandbox::finish`]): one note per path the command changed and
    /// whether it was undone; empty when nothing changed. A background job's
    /// supervisor runs it when the job ends (exit, `job_kill`, lifetime cap)
    /// and every process of the job is gone (breakout review E3: jobs skipped
    /// it). Reads and writes through the workspace folder opened by
    /// [`Sandbox::prepare`], so it works from inside the sandbox's mount
    /// namespace too. Allocates: after `fork` it relies on glibc's `fork`
    /// leaving the allocator usable in the child, as the proxy forwarder
    /// does.
    ///
    /// A caller that closes descriptors before it (a job's supervisor does)
    /// must keep [`Sandbox::check_git_fd`] open.
    pub fn check_git(&self) -> Vec<String> {
        self.git_guard
            .as_ref()
            .map(git_guard::GitGuard::restore)
            .unwrap_or_default()
    }

    /// The descriptor [`Sandbox::check_git`] works through (the workspace
    /// folder opened by [`Sandbox::prepare`]), if any: a process that
    /// closes its other descriptors keeps this one.
    pub fn check_git_fd(&self) -> Option<std::os::fd::RawFd> {
        self.git_guard.as_ref().map(git_guard::GitGuard::raw_fd)
    }
}

impl Drop for Sandbox {
    fn drop(&mut self) {
        if let Some(dir) = &self.tmpdir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn filters(
    tier: Tier,
    unix_sockets: bool,
) -> Result<&'static [seccompiler::BpfProgram], SandboxError> {
    type Cell = OnceLock<Result<Vec<seccompiler::BpfProgram>, SandboxError>>;
    static CELLS: [Cell; 4] = [const { OnceLock::new() }; 4];
    let no_ns = tier == Tier::NoNamespaces;
    let cell = &CELLS[usize::from(no_ns) * 2 + usize::from(unix_sockets)];
    cell.get_or_init(|| filter::programs(no_ns, unix_sockets))
        .as_ref()
        .map(Vec::as_slice)
        .map_err(Clone::clone)
}

fn choose_tier(policy: &SandboxPolicy, notes: &mut Vec<String>) -> Result<Tier, SandboxError> {
    match policy.tier {
        SandboxTier::NoNamespaces => {
            notes.push(NO_NAMESPACES_NOTE.to_owned());
            Ok(Tier::NoNamespaces)
        }
        SandboxTier::Full => match probe::user_namespaces() {
            Ok(()) => Ok(Tier::Full),
            Err(_) if policy.best_effort => {
                notes.push(NO_NAMESPACES_NOTE.to_owned());
                Ok(Tier::NoNamespaces)
            }
            Err(why) => Err(SandboxError::unsupported(format!(
                "the full sandbox tier needs unprivileged user namespaces, and this system refused \
                 them ({why}; on Ubuntu 24.04 the AppArmor rule does this, see SECURITY.md): run \
                 with `--sandbox-tier no-namespaces` or `--sandbox-best-effort`, or `--sandbox off` \
                 to run unsandboxed",
            ))),
        },
        SandboxTier::Auto => {
            if probe::user_namespaces().is_ok() {
                Ok(Tier::Full)
            } else {
                notes.push(NO_NAMESPACES_NOTE.to_owned());
                Ok(Tier::NoNamespaces)
            }
        }
    }
}
