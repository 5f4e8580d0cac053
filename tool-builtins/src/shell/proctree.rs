//! Finding, signalling and outliving every process a command started.
//!
//! # Design: a per-call supervisor that is a child subreaper
//!
//! A process group is not enough to find everything a command started:
//! `setsid`, `set -m` job control and double forks (`( (sleep 100 &) & )`)
//! leave the group, and once an intermediate process exits its children are
//! re-parented to `init`, so the link to them is lost. Each call therefore
//! runs its shell under a **supervisor** of its own ([`supervise`]): a child
//! of this process, forked by `std::process::Command` and never `exec`ed,
//! which
//!
//! 1. marks itself a *child subreaper* (`prctl(PR_SET_CHILD_SUBREAPER)`), so
//!    every process below it whose parent dies is re-parented to the
//!    supervisor instead of `init`: as long as the supervisor lives, every
//!    process the command started, however it detached (`setsid`, `nohup`,
//!    `disown`, double forks, daemons), is its descendant, and a live chain of
//!    parents leads from each of them to it;
//! 2. forks the shell, which gets a process group of its own and
//!    `PR_SET_PDEATHSIG` = `SIGKILL` (its parent is the single-threaded
//!    supervisor, so the "parent thread exited" caveat of that signal does
//!    not apply), checks with `getppid` that the supervisor did not die
//!    before that, and `exec`s;
//! 3. reaps every child (the shell and every orphan re-parented to it),
//!    writes the shell's raw wait status (4 bytes, native byte order) to the
//!    *status pipe*, and exits on its own as soon as it has no child left;
//! 4. watches the read end of the *control pipe*, whose only write end this
//!    process holds (close-on-exec). End of file (the call ended and closed
//!    it, or this process died, even by `SIGKILL`) makes the supervisor
//!    `SIGKILL` its children over and over (`/proc/thread-self/children`, or a
//!    scan of `/proc` where that file is missing) until none is left, reaping
//!    them; orphans of the killed re-parent to it and die in the next round.
//!    Then it exits. The end of file replaces a parent-death signal for the
//!    supervisor itself: it fires whatever thread spawned it, and cannot be
//!    missed (it stays readable), unlike `PR_SET_PDEATHSIG` plus a `getppid`
//!    check.
//!
//! The supervisor ignores `SIGTERM`, `SIGINT`, `SIGHUP`, `SIGQUIT`,
//! `SIGPIPE` and the terminal stop signals, so only `SIGKILL` stops it early;
//! it closes every file descriptor but its two pipe ends. In `ps` it shows
//! with this program's command line (it is a fork of it).
//!
//! While the supervisor lives, [`ProcessTree::under`] reads the whole tree
//! below it from `/proc`, freezing it (`SIGSTOP`) while it looks, to send
//! `SIGTERM` (and later `SIGKILL`) to every process and every process group
//! in it, never to the supervisor. `bash_command` does that when a call ends
//! (timeout, cancellation, drop, or the shell exited and the drain deadline
//! passed), then closes the control pipe so that the supervisor kills what is
//! left and exits. Every process a call started therefore ends with the call.
//!
//! Limits: a process that `SIGKILL`s the supervisor itself (it runs as the
//! same user) frees the processes below it; a process that changed its user
//! (through `sudo`, a set-user-ID program) cannot be signalled by this user;
//! and a process stuck in the kernel (state `D`) dies only when it leaves it.
//!
//! Linux only: `/proc`, `prctl` and `pidfd_open` (the last is optional: without
//! it the supervisor checks on the shell every 10 ms).

use std::collections::BTreeSet;
use std::ffi::CStr;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::Arc;

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fs::{Mode, OFlags, RawDir};
use rustix::process::{Pid, PidfdFlags, Signal, WaitOptions};

/// How many freeze-and-scan rounds one [`ProcessTree::sweep`] makes at most.
const COLLECT_ROUNDS: usize = 16;

/// One live process as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy)]
struct ProcInfo {
    pid: i32,
    ppid: i32,
    pgid: i32,
}

/// Every process and process group seen descending from an anchor process
/// (those seen dead are forgotten, so a reused pid is never taken for one).
/// The anchor itself, this process and their groups are never signalled.
#[derive(Debug)]
pub(crate) struct ProcessTree {
    pids: BTreeSet<i32>,
    groups: BTreeSet<i32>,
    /// Processes and groups that already got the terminating signal.
    signalled: BTreeSet<(bool, i32)>,
    /// The process whose descendants these are (a call's supervisor).
    anchor: i32,
    /// Never signalled: this process and the anchor.
    exempt_pids: [i32; 2],
    /// Never signalled: this process's group and the anchor's.
    exempt_groups: [i32; 2],
    /// Processes seen in the anchor's own process group: the supervisor's
    /// machinery (the sandbox's first process and its proxy forwarder), not
    /// the command's. They are signalled like the rest but not counted as
    /// left behind (the shell and everything it starts run in groups of
    /// their own, and a sandboxed command cannot reach the anchor's group
    /// from its PID namespace).
    machinery: BTreeSet<i32>,
}

impl ProcessTree {
    /// The processes below `anchor` (a call's supervisor, see [`supervise`]);
    /// `anchor` and its process group are never signalled.
    pub(crate) fn under(anchor: Pid) -> Self {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let my_group = rustix::process::getpgrp().as_raw_nonzero().get();
        let anchor_raw = anchor.as_raw_nonzero().get();
        let anchor_group =
            rustix::process::getpgid(Some(anchor)).map_or(anchor_raw, |g| g.as_raw_nonzero().get());
        Self {
            pids: BTreeSet::new(),
            groups: BTreeSet::new(),
            signalled: BTreeSet::new(),
            anchor: anchor_raw,
            exempt_pids: [me, anchor_raw],
            exempt_groups: [my_group, anchor_group],
            machinery: BTreeSet::new(),
        }
    }

    /// Freezes (`SIGSTOP`) the known processes and groups and records every
    /// live process whose parent (or the anchor) or group is known, freezing
    /// it too, until a scan finds nothing new (at most [`COLLECT_ROUNDS`]
    /// times); then sends `signal` to every group and process not sent it
    /// before (`SIGKILL` is sent to all every time) and lets them all run
    /// again (`SIGCONT`), so a frozen process still receives it. Returns how
    /// many processes below the anchor are alive, not counting the
    /// supervisor's machinery (processes in the anchor's own group).
    pub(crate) fn sweep(&mut self, signal: Signal) -> usize {
        for _ in 0..COLLECT_ROUNDS {
            self.send_all(Signal::STOP);
            let before = (self.pids.clone(), self.groups.clone());
            self.scan();
            self.send_all(Signal::STOP);
            if (&self.pids, &self.groups) == (&before.0, &before.1) {
                break;
            }
        }
        let again = signal == Signal::KILL;
        for (is_group, id) in self.members() {
            if again || self.signalled.insert((is_group, id)) {
                send(is_group, id, signal);
            }
        }
        self.send_all(Signal::CONT);
        self.pids
            .iter()
            .filter(|p| !self.machinery.contains(p))
            .count()
    }

    fn members(&self) -> Vec<(bool, i32)> {
        let groups = self.groups.iter().map(|&g| (true, g));
        groups
            .chain(self.pids.iter().map(|&p| (false, p)))
            .collect()
    }

    fn send_all(&self, signal: Signal) {
        for (is_group, id) in self.members() {
            send(is_group, id, signal);
        }
    }

    /// One pass over `/proc`: adds the live processes whose parent (or the
    /// anchor) or group is known (repeating until nothing is added) and their
    /// groups, and forgets the processes and groups that are gone.
    fn scan(&mut self) {
        let procs = all_processes();
        loop {
            let mut grew = false;
            for p in &procs {
                if self.exempt_pids.contains(&p.pid) {
                    continue;
                }
                let known = self.pids.contains(&p.pid);
                let related = p.ppid == self.anchor
                    || self.pids.contains(&p.ppid)
                    || self.groups.contains(&p.pgid);
                if !known && related {
                    self.pids.insert(p.pid);
                    if p.pgid == self.exempt_groups[1] {
                        self.machinery.insert(p.pid);
                    }
                    grew = true;
                }
                if (known || related)
                    && !self.exempt_groups.contains(&p.pgid)
                    && self.groups.insert(p.pgid)
                {
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        self.pids.retain(|pid| procs.iter().any(|p| p.pid == *pid));
        let pids = &self.pids;
        self.machinery.retain(|pid| pids.contains(pid));
        let exempt = self.exempt_pids;
        self.groups.retain(|g| {
            procs
                .iter()
                .any(|p| p.pgid == *g && !exempt.contains(&p.pid))
        });
    }
}

fn send(is_group: bool, id: i32, signal: Signal) {
    if let Some(id) = Pid::from_raw(id) {
        let _ = if is_group {
            rustix::process::kill_process_group(id, signal)
        } else {
            rustix::process::kill_process(id, signal)
        };
    }
}

/// Every live (not zombie) process in `/proc`.
fn all_processes() -> Vec<ProcInfo> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            parse_stat(pid, &stat)
        })
        .collect()
}

/// Parses `pid (comm) state ppid pgrp ...`; `None` for zombies and dead processes.
fn parse_stat(pid: i32, stat: &str) -> Option<ProcInfo> {
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    if state.starts_with(['Z', 'X', 'x']) {
        return None;
    }
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(ProcInfo { pid, ppid, pgid })
}

/// The pipe ends and directory a call's supervisor gets (see the module docs).
#[derive(Debug)]
pub(crate) struct SupervisorFds {
    /// Read end of the control pipe: its end of file ends the call.
    pub(crate) control: OwnedFd,
    /// Write end of the status pipe, for the shell's raw wait status.
    pub(crate) status: OwnedFd,
    /// Directory to `fchdir` into before the shell starts; `None` keeps the
    /// command's own `current_dir` (or this process's).
    pub(crate) workdir: Option<OwnedFd>,
    /// A background job's descriptors: the supervisor then outlives this
    /// process (see [`JobFds`]).
    pub(crate) job: Option<JobFds>,
}

/// What the supervisor of a background job (`run_in_background`) holds
/// besides its pipes. Such a supervisor starts a session of its own
/// (`setsid`), so the terminal's hang-up and job-control signals never reach
/// it; its *control* is a FIFO in the job's private folder opened
/// read-write (so it never reads end of file), and one byte written to it
/// (`job_kill`, from any process) ends the job like a closed control pipe
/// ends a call. It copies the command's output into the job's output ring
/// (`tool_core::jobs::ring`, a fixed 16 KiB stack buffer, nothing
/// allocated), records the shell's wait status and how the job ended in the
/// ring's header, stops what the shell left running 1 s after the shell
/// ended (the foreground rule, with a longer drain), and stops everything
/// at the job's lifetime cap. With a [`masker`](Self::masker) it masks the
/// starting call's secret values before anything reaches the ring (review
/// 27 F22), so the output file never holds one and a reader without those
/// secrets still sees placeholders.
#[derive(Debug)]
pub(crate) struct JobFds {
    /// Read end of the pipe the shell's stdout and stderr write to.
    pub(crate) output: OwnedFd,
    /// Read end of the status pipe (non-blocking): where the first process
    /// of a sandbox's PID namespace reports the shell's wait status.
    pub(crate) status_read: OwnedFd,
    /// The job's output file, opened read-write.
    pub(crate) ring: OwnedFd,
    /// The ring's capacity in bytes.
    pub(crate) capacity: u64,
    /// The job's lifetime cap, in seconds.
    pub(crate) lifetime_secs: u64,
    /// The starting call's secret values (its store and the environment
    /// variables withheld from the command): masked as the output is
    /// copied, holding back only what may begin a value
    /// ([`StreamMasker::push_eager`](tool_core::truncate::StreamMasker::push_eager)).
    /// Masking allocates (sound after glibc's `fork`, as the `.git` check
    /// at the end); without secrets nothing is allocated.
    pub(crate) masker: Option<tool_core::truncate::StreamMasker>,
    /// The process that starts the job (this process), when the job must
    /// end with it (review 27 F9): the supervisor is its child, so its
    /// parent changes once the host is gone, however it ended (`SIGKILL`
    /// included, and never mistaken for a later process that reuses the
    /// pid: a live child's parent is its parent). Checked every pass of the
    /// job loop (at most 100 ms apart); then the job's processes get
    /// `SIGTERM`, `SIGKILL` [`HOST_EXIT_GRACE`](tool_core::jobs::HOST_EXIT_GRACE)
    /// later, and the end is recorded as `HostExited`. `None`: the job
    /// outlives its host (`tool call`).
    pub(crate) host: Option<Pid>,
}

/// Where a job's supervisor puts output: its ring, through the starting
/// call's masker when there is one.
struct RingSink<'a> {
    job: &'a JobFds,
    masker: Option<tool_core::truncate::StreamMasker>,
    masked: Vec<u8>,
    total: u64,
}

impl RingSink<'_> {
    /// Appends `bytes` (masked) to the ring.
    fn write(&mut self, bytes: &[u8]) {
        use tool_core::jobs::ring;
        let out: &[u8] = match &mut self.masker {
            Some(m) => {
                self.masked.clear();
                m.push_eager(bytes, &mut self.masked);
                &self.masked
            }
            None => bytes,
        };
        if let Ok(t) = ring::append(&self.job.ring, self.job.capacity, self.total, out) {
            self.total = t;
        }
    }

    /// Appends what the masker still holds back (the output ended).
    fn flush(&mut self) {
        use tool_core::jobs::ring;
        if let Some(m) = &mut self.masker {
            self.masked.clear();
            m.finish(&mut self.masked);
            if let Ok(t) = ring::append(&self.job.ring, self.job.capacity, self.total, &self.masked)
            {
                self.total = t;
            }
        }
    }
}

/// Signals the supervisor ignores, so that only `SIGKILL` stops it early.
const SUPERVISOR_IGNORES: [i32; 8] = [
    libc::SIGTERM,
    libc::SIGINT,
    libc::SIGHUP,
    libc::SIGQUIT,
    libc::SIGPIPE,
    libc::SIGTSTP,
    libc::SIGTTIN,
    libc::SIGTTOU,
];

/// Closes every descriptor from `low` to `high`, both included.
#[allow(
    unsafe_code,
    reason = "close_range and close have no safe form; audited, see SAFETY"
)]
fn close_fds(low: u32, high: u32) {
    if low > high {
        return;
    }
    // SAFETY: close_range(2) takes plain integers and only closes
    // descriptors; it is a raw system call, async-signal-safe.
    let r = unsafe {
        libc::syscall(
            libc::SYS_close_range,
            libc::c_uint::from(low),
            libc::c_uint::from(high),
            0 as libc::c_uint,
        )
    };
    if r != 0 {
        // Kernels before 5.9: close them one by one up to the limit.
        let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
            .current
            .unwrap_or(1 << 20)
            .min(1 << 20);
        let top = u64::from(high).min(limit);
        let mut fd = u64::from(low);
        while fd <= top {
            // SAFETY: close(2) of a number; closing one we do not own is
            // what is intended here (the supervisor keeps only its pipes).
            let _ = unsafe { libc::close(fd as libc::c_int) };
            fd += 1;
        }
    }
}

/// Closes every descriptor but those in `keep` (at most 6; no allocation).
fn close_all_but(keep: &[i32]) {
    let mut fixed = [-1_i32; 6];
    for (slot, fd) in fixed.iter_mut().zip(keep) {
        *slot = *fd;
    }
    let mut keep = fixed;
    keep.sort_unstable();
    let mut low = 0_u32;
    for fd in keep {
        let Ok(fd) = u32::try_from(fd) else {
            continue;
        };
        if fd > low {
            close_fds(low, fd - 1);
        }
        low = fd.saturating_add(1);
    }
    close_fds(low, u32::MAX);
}

/// The shell's side of the fork: a process group of its own, killed when
/// its parent dies (`parent`: checked to still be it), then the sandbox's
/// last steps; `exec` follows.
fn start_shell(parent: Option<Pid>, sandbox: Option<&tool_sandbox::Sandbox>) -> io::Result<()> {
    rustix::process::setpgid(None, None)?;
    rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
    if let Some(me) = parent
        && rustix::process::getppid() != Some(me)
    {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    if let Some(sandbox) = sandbox {
        sandbox.enter_command()?;
    }
    Ok(())
}

/// Makes `command` start under a supervisor (see the module docs): the
/// process `spawn` returns is the supervisor; the program of `command` runs
/// as its child. Linux only.
///
/// This is the one function of the workspace that may use `unsafe`: the
/// `pre_exec` hook and the `libc` calls it makes (`fork`, `signal`,
/// `close_range`/`close`, `_exit`).
#[allow(
    unsafe_code,
    reason = "pre_exec, fork and _exit have no safe form; audited, see SAFETY"
)]
pub(crate) fn supervise(
    command: &mut Command,
    fds: SupervisorFds,
    sandbox: Option<Arc<tool_sandbox::Sandbox>>,
) {
    let SupervisorFds {
        control,
        status,
        workdir,
        job,
    } = fds;
    let hook = move || -> io::Result<()> {
        if job.is_some() {
            // A background job's supervisor leaves this process's session.
            rustix::process::setsid()?;
        }
        if let Some(dir) = &workdir {
            rustix::process::fchdir(dir)?;
        }
        let me = rustix::process::getpid();
        rustix::process::set_child_subreaper(Some(me))?;
        if let Some(sandbox) = &sandbox {
            // Cgroup, namespaces and the mount view (full tier), before
            // anything is forked so that every process below inherits them.
            sandbox.enter_supervisor()?;
        }
        let nested = sandbox.as_ref().is_some_and(|s| s.has_pid_namespace());
        // SAFETY: fork(2) from the child std forked: that child has one thread,
        // and glibc's fork leaves its internal locks consistent in it, so
        // forking again is sound. Both sides then keep to async-signal-safe
        // calls (raw system calls through rustix and libc, no allocation).
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        if pid == 0 && nested {
            // The first process of the sandbox's PID namespace: its /proc,
            // then the shell below it; it reports the shell's status and
            // ends (taking every process of the namespace with it) when the
            // control pipe closes or nothing is left.
            let mut companion = None;
            if let Some(sandbox) = &sandbox {
                rustix::process::set_parent_process_death_signal(Some(Signal::KILL))?;
                match sandbox.enter_init() {
                    Ok(forwarder) => companion = forwarder.and_then(Pid::from_raw),
                    // SAFETY: _exit(2), as below.
                    Err(_) => unsafe { libc::_exit(126) },
                }
            }
            // SAFETY: as the fork above (this process has one thread).
            let shell = unsafe { libc::fork() };
            if shell == 0 {
                return start_shell(None, sandbox.as_deref());
            }
            close_all_but(&[control.as_raw_fd(), status.as_raw_fd()]);
            let code = match Pid::from_raw(shell) {
                Some(shell) => supervise_loop(
                    shell,
                    control.as_fd(),
                    Some(status.as_fd()),
                    Some(Init { companion }),
                ),
                None => 126,
            };
            // SAFETY: _exit(2), as below.
            unsafe { libc::_exit(code) }
        }
        if pid == 0 {
            return start_shell(Some(me), sandbox.as_deref());
        }
        // The supervisor. From here on it never returns to std: an error
        // returned now would make `spawn` fail while the shell runs.
        for signal in SUPERVISOR_IGNORES {
            // SAFETY: signal(2) with SIG_IGN installs no handler; it is
            // async-signal-safe.
            let _ = unsafe { libc::signal(signal, libc::SIG_IGN) };
        }
        // SAFETY: as above, with SIG_DFL: the supervisor must see its
        // children exit whatever this process does with SIGCHLD (ignored
        // would reap them unseen; a handler copied from this process would
        // run in the supervisor).
        let _ = unsafe { libc::signal(libc::SIGCHLD, libc::SIG_DFL) };
        if let Some(job) = &job {
            // The sandbox's `.git` check at the job's end works through
            // the workspace folder it opened (-1: none, matches nothing).
            let guard = sandbox
                .as_ref()
                .and_then(|s| s.check_git_fd())
                .unwrap_or(-1);
            close_all_but(&[
                control.as_raw_fd(),
                status.as_raw_fd(),
                job.output.as_raw_fd(),
                job.status_read.as_raw_fd(),
                job.ring.as_raw_fd(),
                guard,
            ]);
            let code = match Pid::from_raw(pid) {
                Some(child) => job_loop(child, control.as_fd(), job, nested, sandbox.as_deref()),
                None => 1,
            };
            // SAFETY: _exit(2), as below.
            unsafe { libc::_exit(code) }
        }
        close_all_but(&[control.as_raw_fd(), status.as_raw_fd()]);
        // With a PID namespace its first process reports the shell's status.
        let report = (!nested).then(|| status.as_fd());
        let code = match Pid::from_raw(pid) {
            Some(child) => supervise_loop(child, control.as_fd(), report, None),
            None => 1,
        };
        // SAFETY: _exit(2) ends the process without running atexit handlers or
        // destructors (which are not async-signal-safe here).
        unsafe { libc::_exit(code) }
    };
    // SAFETY: `hook` runs in the forked child before `exec`. It only makes
    // async-signal-safe calls: prctl(PR_SET_CHILD_SUBREAPER, PR_SET_PDEATHSIG),
    // getpid, getppid, setpgid, fchdir, fork, signal(SIG_IGN / SIG_DFL), close_range,
    // close, waitpid, pidfd_open, poll, read, write, open, getdents, kill and
    // _exit, all through rustix's and libc's thin system call wrappers; it
    // allocates nothing (fixed stack buffers only) and takes no lock. The
    // descriptors it uses are owned by the closure and stay open in the child.
    unsafe {
        command.pre_exec(hook);
    }
}

/// Written on the status pipe by the first process of a sandbox's PID
/// namespace after the shell's wait status, when it ends because no process
/// is left in the namespace. Not a wait status (those fit in 16 bits).
pub(crate) const NOTHING_LEFT: i32 = 0x7fff_0000;

/// What the first process of a sandbox's PID namespace knows besides the
/// shell: the proxy forwarder it started, if any.
#[derive(Debug, Clone, Copy)]
struct Init {
    /// The forwarder (a child of the namespace's first process, in its
    /// process group): not part of the command, so it is killed as soon as
    /// it is the only child left after the shell ended.
    companion: Option<Pid>,
}

/// The supervisor's life after starting the shell: reaps children, reports
/// the shell's wait status on `status`, and once `control` reads end of file
/// kills all children until none is left. Returns the exit code (0) when no
/// child is left. In a namespace's first process (`init`), the forwarder
/// does not keep it alive: once the shell was reaped and the forwarder is
/// the only child left, it is killed and reaped, so the call's end is never
/// delayed by it. Async-signal-safe: no allocation, no locks.
fn supervise_loop(
    shell: Pid,
    control: BorrowedFd<'_>,
    status: Option<BorrowedFd<'_>>,
    init: Option<Init>,
) -> i32 {
    let namespace_init = init.is_some();
    let mut companion = init.and_then(|i| i.companion);
    let mut shell_fd = rustix::process::pidfd_open(shell, PidfdFlags::empty()).ok();
    let mut shell_reaped = false;
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let mut ending = false;
    loop {
        loop {
            match rustix::process::wait(WaitOptions::NOHANG) {
                Ok(Some((pid, wait_status))) => {
                    if pid == shell {
                        shell_fd = None;
                        shell_reaped = true;
                        if let Some(status) = status {
                            let _ = rustix::io::write(status, &wait_status.as_raw().to_ne_bytes());
                        }
                    }
                    if Some(pid) == companion {
                        companion = None;
                    }
                }
                Ok(None) => break,
                Err(rustix::io::Errno::INTR) => {}
                // ECHILD: nothing is left below the supervisor. The
                // namespace's first process says so on the status pipe
                // (after the shell's status), so that the call need not
                // wait for the supervisor to reap it.
                Err(_) => {
                    if let (true, Some(status)) = (namespace_init && shell_reaped, status) {
                        let _ = rustix::io::write(status, &NOTHING_LEFT.to_ne_bytes());
                    }
                    return 0;
                }
            }
        }
        if let Some(forwarder) = companion
            && shell_reaped
            && only_child_is(forwarder)
        {
            kill_one(forwarder.as_raw_nonzero().get());
            let _ = rustix::process::waitpid(Some(forwarder), WaitOptions::empty());
            companion = None;
            continue;
        }
        if ending && namespace_init {
            // The kernel kills every other process of the namespace when
            // its first process ends.
            return 0;
        }
        if ending {
            kill_children(me);
            // In a sandbox the only child is the namespace's first process,
            // outside this process's /proc view.
            kill_one(shell.as_raw_nonzero().get());
            nap(Timespec {
                tv_sec: 0,
                tv_nsec: 2_000_000,
            });
            continue;
        }
        let slice = Timespec {
            tv_sec: 0,
            tv_nsec: if shell_fd.is_some() {
                100_000_000
            } else {
                10_000_000
            },
        };
        let control_ready = match &shell_fd {
            Some(pidfd) => {
                let mut fds = [
                    PollFd::new(&control, PollFlags::IN),
                    PollFd::new(pidfd, PollFlags::IN),
                ];
                let _ = rustix::event::poll(&mut fds, Some(&slice));
                !fds[0].revents().is_empty()
            }
            None => {
                let mut fds = [PollFd::new(&control, PollFlags::IN)];
                let _ = rustix::event::poll(&mut fds, Some(&slice));
                !fds[0].revents().is_empty()
            }
        };
        // Nobody writes to the control pipe: readiness means end of file.
        ending = control_ready;
    }
}

/// How long a background job's supervisor lets processes the shell left
/// behind run after the shell ended, still copying their output: 1 s.
const JOB_DRAIN: Timespec = Timespec {
    tv_sec: 1,
    tv_nsec: 0,
};

/// The supervisor of a background job (see [`JobFds`]): reaps, copies
/// output into the ring, ends the job on a control byte, at the lifetime
/// cap, or 1 s after the shell ended; once no child is left, runs the
/// sandbox's `.git` check ([`tool_sandbox::Sandbox::check_git`], as a
/// foreground call's end does) with its notes appended to the output,
/// records the end and returns 0. Async-signal-safe (no allocation, no
/// locks) but for that last check and the masking of secret values
/// ([`JobFds::masker`]), which allocate (sound after glibc's `fork`, see
/// `check_git`).
fn job_loop(
    shell: Pid,
    control: BorrowedFd<'_>,
    job: &JobFds,
    nested: bool,
    sandbox: Option<&tool_sandbox::Sandbox>,
) -> i32 {
    use tool_core::jobs::ring;
    let now = || rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let later = |t: Timespec, by: Timespec| Timespec {
        tv_sec: t.tv_sec.saturating_add(by.tv_sec),
        tv_nsec: t.tv_nsec,
    };
    let lifetime = Timespec {
        tv_sec: i64::try_from(job.lifetime_secs).unwrap_or(i64::MAX),
        tv_nsec: 0,
    };
    let deadline = later(now(), lifetime);
    let me = rustix::process::getpid().as_raw_nonzero().get();
    let mut buf = [0_u8; 16 * 1024];
    let mut sink = RingSink {
        job,
        masker: job.masker.clone(),
        masked: Vec::new(),
        total: 0,
    };
    let mut output_open = true;
    let mut shell_status: Option<i32> = None;
    let mut end = ring::JobEnd::Exited;
    let mut ending = false;
    let mut drain_until: Option<Timespec> = None;
    // Set once the host is seen gone: when the grace after SIGTERM ends.
    let mut host_gone_until: Option<Timespec> = None;
    let grace = Timespec {
        tv_sec: i64::try_from(tool_core::jobs::HOST_EXIT_GRACE.as_secs()).unwrap_or(2),
        tv_nsec: 0,
    };
    // Returns the bytes copied.
    let mut copy = |sink: &mut RingSink<'_>, output_open: &mut bool, wait: Timespec| -> usize {
        if !*output_open {
            return 0;
        }
        let mut fds = [PollFd::new(&job.output, PollFlags::IN)];
        if rustix::event::poll(&mut fds, Some(&wait)).unwrap_or(0) == 0 {
            return 0;
        }
        match rustix::io::read(&job.output, &mut buf) {
            Ok(0) => *output_open = false,
            Ok(n) => {
                sink.write(&buf[..n]);
                return n;
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(_) => *output_open = false,
        }
        0
    };
    loop {
        loop {
            match rustix::process::wait(WaitOptions::NOHANG) {
                Ok(Some((pid, wait_status))) => {
                    if pid == shell && !nested {
                        shell_status = Some(wait_status.as_raw());
                    }
                }
                Ok(None) => break,
                Err(rustix::io::Errno::INTR) => {}
                Err(_) => {
                    // Nothing is left: copy what is still in the pipe, record the end.
                    for _ in 0..4096 {
                        if !output_open
                            || copy(&mut sink, &mut output_open, Timespec::default()) == 0
                        {
                            break;
                        }
                    }
                    sink.flush();
                    if nested && shell_status.is_none() {
                        let mut raw = [0_u8; 4];
                        if let Ok(4) = rustix::io::read(&job.status_read, &mut raw) {
                            shell_status = Some(i32::from_ne_bytes(raw));
                        }
                    }
                    // The sandbox's first process watches the control FIFO
                    // too and may end first: a control byte still means killed.
                    let mut fds = [PollFd::new(&control, PollFlags::IN)];
                    if end == ring::JobEnd::Exited
                        && rustix::event::poll(&mut fds, Some(&Timespec::default())).unwrap_or(0)
                            > 0
                    {
                        end = ring::JobEnd::Killed;
                    }
                    // Every process of the job is gone: what it left in
                    // `.git` is checked now, as after a foreground call.
                    for note in sandbox
                        .map(tool_sandbox::Sandbox::check_git)
                        .unwrap_or_default()
                    {
                        let line = format!("\n[sandbox, at the job's end] {note}\n");
                        if let Ok(t) =
                            ring::append(&job.ring, job.capacity, sink.total, line.as_bytes())
                        {
                            sink.total = t;
                        }
                    }
                    // Killed before the shell reported: as if by SIGKILL.
                    let _ = ring::set_end(&job.ring, end, shell_status.unwrap_or(9));
                    return 0;
                }
            }
        }
        if nested && shell_status.is_none() {
            let mut raw = [0_u8; 4];
            if let Ok(4) = rustix::io::read(&job.status_read, &mut raw) {
                shell_status = Some(i32::from_ne_bytes(raw));
            }
        }
        if ending {
            kill_children(me);
            // Outside a namespace the shell's pid is free once it was reaped.
            if nested || shell_status.is_none() {
                kill_one(shell.as_raw_nonzero().get());
            }
            copy(
                &mut sink,
                &mut output_open,
                Timespec {
                    tv_sec: 0,
                    tv_nsec: 2_000_000,
                },
            );
            continue;
        }
        let t = now();
        let passed = |limit: Timespec| (t.tv_sec, t.tv_nsec) >= (limit.tv_sec, limit.tv_nsec);
        if passed(deadline) {
            end = ring::JobEnd::Expired;
            ending = true;
            continue;
        }
        if let Some(host) = job.host
            && host_gone_until.is_none()
            && rustix::process::getppid() != Some(host)
        {
            // The host is gone (review 27 F9): nobody it served can reach
            // this job any more. SIGTERM now, SIGKILL after the grace.
            end = ring::JobEnd::HostExited;
            host_gone_until = Some(later(t, grace));
            terminate_job(shell, shell_status.is_some(), nested);
        }
        if let Some(until) = host_gone_until
            && passed(until)
        {
            ending = true;
            continue;
        }
        if shell_status.is_some() && drain_until.is_none() {
            drain_until = Some(later(t, JOB_DRAIN));
        }
        if let Some(until) = drain_until
            && (passed(until) || !output_open)
        {
            ending = true;
            continue;
        }
        let slice = Timespec {
            tv_sec: 0,
            tv_nsec: 100_000_000,
        };
        let mut fds = [PollFd::new(&control, PollFlags::IN)];
        if rustix::event::poll(&mut fds, Some(&Timespec::default())).unwrap_or(0) > 0 {
            end = ring::JobEnd::Killed;
            ending = true;
            continue;
        }
        if output_open {
            copy(&mut sink, &mut output_open, slice);
        } else {
            let mut fds = [PollFd::new(&control, PollFlags::IN)];
            let _ = rustix::event::poll(
                &mut fds,
                Some(&Timespec {
                    tv_sec: 0,
                    tv_nsec: 20_000_000,
                }),
            );
        }
    }
}

/// Sends `SIGTERM` to every process of a background job, the first step of
/// stopping it when its host is gone (the `SIGKILL` rounds of the job's
/// end follow after the grace). Async-signal-safe: fixed buffers only.
///
/// Outside a PID namespace: every child of the supervisor (the shell and
/// the orphans re-parented to it) and each one's process group (the
/// shell's group holds what it started in the foreground and background).
/// In one (`nested`), the supervisor's `/proc` is the namespace's own (its
/// first process mounted it in the mount namespace they share), whose pids
/// mean nothing to `kill(2)` here: each process but the namespace's first
/// is signalled through a descriptor of its `/proc/<pid>` folder
/// (`pidfd_send_signal(2)` accepts one), which names the process whatever
/// its number. Done only when `/proc/self` does not resolve, the sign that
/// this `/proc` is not the supervisor's own namespace's.
fn terminate_job(shell: Pid, shell_reaped: bool, nested: bool) {
    if nested {
        terminate_namespace();
        return;
    }
    let me = rustix::process::getpgrp();
    let term = |pid: i32| {
        let Some(pid) = Pid::from_raw(pid) else {
            return;
        };
        let _ = rustix::process::kill_process(pid, Signal::TERM);
        if let Ok(group) = rustix::process::getpgid(Some(pid))
            && group != me
        {
            let _ = rustix::process::kill_process_group(group, Signal::TERM);
        }
    };
    if !for_each_child(term) && !shell_reaped {
        // No children file: the shell and its group at least.
        term(shell.as_raw_nonzero().get());
    }
}

/// `SIGTERM` to every process of this supervisor's PID namespace but its
/// first (see [`terminate_job`]).
fn terminate_namespace() {
    if proc_is_our_own() {
        // This /proc is our own namespace's: its pids are not the job's.
        return;
    }
    let Ok(proc_dir) = rustix::fs::open(
        c"/proc",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let Ok(dir_fd) = rustix::io::dup(&proc_dir) else {
        return;
    };
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut entries = RawDir::new(dir_fd, &mut buf);
    while let Some(Ok(entry)) = entries.next() {
        let name = entry.file_name();
        let bytes = name.to_bytes();
        if bytes.is_empty() || !bytes.iter().all(u8::is_ascii_digit) || bytes == b"1" {
            continue;
        }
        if let Ok(process) = rustix::fs::openat(
            &proc_dir,
            name,
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW,
            Mode::empty(),
        ) {
            let _ = rustix::process::pidfd_send_signal(&process, Signal::TERM);
        }
    }
}

fn nap(time: Timespec) {
    let _ = rustix::event::poll(&mut [], Some(&time));
}

/// Sends `SIGKILL` to every child of this (single-threaded) process.
///
/// The scan of `/proc` that stands in for a missing children file runs only
/// when `/proc` is this process's own namespace's: a sandboxed call's
/// supervisor shares its mount namespace with the PID namespace's first
/// process, which mounts that namespace's `/proc` over it, so there the
/// scan would read the namespace's pids and `kill(2)` would take them for
/// this namespace's, unrelated processes (review 27, found with F9). Its
/// one child there, the namespace's first process, is killed by pid.
fn kill_children(me: i32) {
    if !for_each_child(kill_one) && proc_is_our_own() {
        kill_children_by_scan(me);
    }
}

/// Whether `/proc` shows this process's own PID namespace: `/proc/self`
/// resolves only there (`proc(5)`). Async-signal-safe.
fn proc_is_our_own() -> bool {
    rustix::fs::statat(rustix::fs::CWD, c"/proc/self", rustix::fs::AtFlags::empty()).is_ok()
}

/// Whether `pid` is this (single-threaded) process's one child, from
/// `/proc/thread-self/children` (`proc(5)`); `false` when that file cannot be
/// read.
fn only_child_is(pid: Pid) -> bool {
    let wanted = pid.as_raw_nonzero().get();
    let (mut others, mut seen) = (false, false);
    let readable = for_each_child(|child| {
        if child == wanted {
            seen = true;
        } else {
            others = true;
        }
    });
    readable && seen && !others
}

/// Calls `f` with the pid of each child of this (single-threaded) process,
/// read from `/proc/thread-self/children` with a fixed buffer; `false` when
/// that file cannot be opened (kernels without `CONFIG_PROC_CHILDREN`).
fn for_each_child(mut f: impl FnMut(i32)) -> bool {
    let Ok(children) = rustix::fs::open(
        c"/proc/thread-self/children",
        OFlags::RDONLY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return false;
    };
    let mut buf = [0_u8; 512];
    let mut pid: i32 = 0;
    let mut digits = false;
    loop {
        let n = match rustix::io::read(&children, &mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &b in &buf[..n] {
            if b.is_ascii_digit() {
                pid = pid.saturating_mul(10).saturating_add(i32::from(b - b'0'));
                digits = true;
            } else {
                if digits {
                    f(pid);
                }
                pid = 0;
                digits = false;
            }
        }
    }
    if digits {
        f(pid);
    }
    true
}

fn kill_one(pid: i32) {
    if let Some(pid) = Pid::from_raw(pid) {
        let _ = rustix::process::kill_process(pid, Signal::KILL);
    }
}

/// [`kill_children`] for kernels without `/proc/<pid>/task/<tid>/children`:
/// reads every `/proc/<pid>/stat` (fixed buffers, no allocation).
fn kill_children_by_scan(me: i32) {
    let Ok(proc_dir) = rustix::fs::open(
        c"/proc",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    ) else {
        return;
    };
    let mut buf = [MaybeUninit::<u8>::uninit(); 4096];
    let mut entries = RawDir::new(proc_dir, &mut buf);
    while let Some(Ok(entry)) = entries.next() {
        let name = entry.file_name().to_bytes();
        if name.is_empty() || !name.iter().all(u8::is_ascii_digit) {
            continue;
        }
        let mut path = [0_u8; 40];
        let parts: [&[u8]; 3] = [b"/proc/", name, b"/stat\0"];
        let mut len = 0;
        let mut fits = true;
        for part in parts {
            match path.get_mut(len..len + part.len()) {
                Some(slot) => slot.copy_from_slice(part),
                None => fits = false,
            }
            len += part.len();
        }
        if !fits {
            continue;
        }
        let Ok(path) = CStr::from_bytes_with_nul(&path[..len]) else {
            continue;
        };
        let Ok(stat) = rustix::fs::open(path, OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        else {
            continue;
        };
        let mut text = [0_u8; 512];
        let Ok(n) = rustix::io::read(&stat, &mut text) else {
            continue;
        };
        if stat_ppid(&text[..n]) == Some(me) {
            let pid = name.iter().fold(0_i32, |acc, d| {
                acc.saturating_mul(10).saturating_add(i32::from(d - b'0'))
            });
            kill_one(pid);
        }
    }
}

/// The parent pid in the bytes of a `/proc/<pid>/stat` line (the fourth
/// field, after the command name in parentheses).
fn stat_ppid(stat: &[u8]) -> Option<i32> {
    let close = stat.iter().rposition(|&b| b == b')')?;
    let mut fields = stat[close + 1..]
        .split(|&b| b == b' ')
        .filter(|f| !f.is_empty());
    let _state = fields.next()?;
    let ppid = fields.next()?;
    if ppid.is_empty() || !ppid.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(ppid.iter().fold(0_i32, |acc, d| {
        acc.saturating_mul(10).saturating_add(i32::from(d - b'0'))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed_after_the_last_parenthesis() {
        let p = parse_stat(42, "42 (a) b (c)) S 7 42 42 0 -1").unwrap();
        assert_eq!((p.pid, p.ppid, p.pgid), (42, 7, 42));
        assert!(parse_stat(43, "43 (dead) Z 7 43 43").is_none());
        assert_eq!(stat_ppid(b"42 (a) b (c)) S 7 42 42 0 -1"), Some(7));
        assert_eq!(stat_ppid(b"1 (init) S 0 1 1"), Some(0));
        assert_eq!(stat_ppid(b"garbage"), None);
    }

    #[test]
    fn processes_in_the_anchors_group_are_not_counted_as_left_behind() {
        // The anchor's own group holds the supervisor's machinery (a
        // sandbox's first process and its forwarder); the command's processes
        // run in groups of their own. Regression: the first process still
        // exiting at the drain deadline was reported as a background process.
        let mut anchor = Command::new("/bin/sh")
            .args(["-c", "sleep 30 & setsid sleep 30 & wait"])
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = i32::try_from(anchor.id()).unwrap();
        let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            let children: Vec<ProcInfo> = all_processes()
                .into_iter()
                .filter(|p| p.ppid == pid)
                .collect();
            let sleeping = children.iter().all(|c| {
                std::fs::read_to_string(format!("/proc/{}/comm", c.pid))
                    .is_ok_and(|n| n.trim() == "sleep")
            });
            if children.len() == 2 && sleeping && children.iter().any(|c| c.pgid != pid) {
                break;
            }
            assert!(std::time::Instant::now() < until, "children did not start");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let mut tree = ProcessTree::under(Pid::from_raw(pid).unwrap());
        assert_eq!(tree.sweep(Signal::CONT), 1, "{:?}", tree.pids);
        assert_eq!(tree.pids.len(), 2);
        tree.sweep(Signal::KILL);
        anchor.kill().unwrap();
        anchor.wait().unwrap();
    }

    #[test]
    fn our_own_process_and_group_are_never_recorded() {
        // Anchored at this process: the test harness's other threads' children
        // may show up, but never this process or its group.
        let me = rustix::process::getpid();
        let mut tree = ProcessTree::under(me);
        tree.scan();
        let my_group = rustix::process::getpgrp().as_raw_nonzero().get();
        assert!(!tree.groups.contains(&my_group));
        assert!(!tree.pids.contains(&me.as_raw_nonzero().get()));
    }
}
