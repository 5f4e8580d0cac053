//! Running one command: the shell under its per-call supervisor, one pipe
//! for stdout and stderr read with `poll`, output through the ANSI stripper,
//! the secret masker and the head/tail budget, and the stop sequence
//! (`SIGTERM`, then `SIGKILL`) on timeout, cancellation and for background
//! processes left behind.

use std::ffi::OsString;
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};
use serde_json::Value;
use tool_core::ToolResult;
use tool_core::meta;
use tool_core::truncate::{HeadTail, StreamMasker, Truncation};

use super::ansi::EscapeStripper;
use super::proctree::{NOTHING_LEFT, ProcessTree, SupervisorFds, supervise};

/// Everything [`run`] needs to start and watch one command.
#[derive(Debug)]
pub(crate) struct RunSpec {
    pub(crate) shell: PathBuf,
    pub(crate) command: String,
    /// The directory to run in, by path: used when `workdir_fd` is `None`,
    /// and in messages.
    pub(crate) workdir: PathBuf,
    /// The directory to run in, as an open descriptor (for example one opened
    /// with `O_PATH | O_DIRECTORY` below the workspace root, so that no
    /// symbolic link swapped in after the check can move the command
    /// elsewhere): the shell `fchdir`s into it before `exec`. When set,
    /// `workdir` is not used to change directory.
    pub(crate) workdir_fd: Option<OwnedFd>,
    pub(crate) env: Vec<(OsString, OsString)>,
    pub(crate) timeout: Duration,
    pub(crate) drain: Duration,
    pub(crate) kill_grace: Duration,
    pub(crate) truncation: Truncation,
    /// Masks the context's secret values in the output before it is kept or spilled.
    pub(crate) masker: Option<StreamMasker>,
    /// The sandbox the shell runs in; `None` runs it unsandboxed.
    pub(crate) sandbox: Option<std::sync::Arc<tool_sandbox::Sandbox>>,
}

/// Why the command was stopped before the shell exited on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    Timeout,
    Cancelled,
}

/// What happened to one command.
#[derive(Debug)]
pub(crate) struct Outcome {
    pub(crate) status: Option<ExitStatus>,
    pub(crate) stop: Option<Stop>,
    /// The shell exited on its own, but processes it started were still
    /// running after the drain deadline and were stopped.
    pub(crate) stopped_background: bool,
    pub(crate) output: tool_core::truncate::Truncated,
}

impl Outcome {
    pub(crate) fn into_result(self, timeout: Duration) -> ToolResult {
        let exit_code = self.status.and_then(|s| s.code());
        let signal = self.status.and_then(|s| s.signal());
        let mut notes = Vec::new();
        match self.stop {
            Some(Stop::Timeout) => notes.push(format!(
                "Command timed out after {} and was stopped (SIGTERM, then SIGKILL, to every process it started).",
                humantime::format_duration(timeout)
            )),
            Some(Stop::Cancelled) => {
                notes.push(
                    "Command was cancelled and every process it started was stopped.".to_owned(),
                );
            }
            None => match (exit_code, signal) {
                (Some(0), _) => {}
                (Some(code), _) => notes.push(format!("Command exited with code {code}.")),
                (None, Some(sig)) => notes.push(format!("Command was killed by signal {sig}.")),
                (None, None) => {}
            },
        }
        if self.stopped_background {
            notes.push(
                "Processes the command left running in the background were stopped when it \
                 ended (background jobs do not outlive a call)."
                    .to_owned(),
            );
        }
        let mut text = if self.output.text.is_empty() {
            "(no output)".to_owned()
        } else {
            self.output.text
        };
        if !notes.is_empty() {
            if !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str("\n<bash_metadata>\n");
            text.push_str(&notes.join("\n"));
            text.push_str("\n</bash_metadata>");
        }
        let output_path = self.output.spill_path.as_ref().map_or(Value::Null, |p| {
            Value::from(p.to_string_lossy().into_owned())
        });
        let mut result = ToolResult::ok(text)
            .with_metadata(meta::EXIT_CODE, exit_code.map_or(Value::Null, Value::from))
            .with_metadata(meta::TIMED_OUT, self.stop == Some(Stop::Timeout))
            .with_metadata(meta::TRUNCATED, self.output.truncated)
            .with_metadata(meta::OUTPUT_PATH, output_path)
            .with_metadata(meta::OUTPUT_BYTES, self.output.total_bytes);
        if let Some(sig) = signal {
            result = result.with_metadata(meta::SIGNAL, sig);
        }
        if self.stopped_background {
            result = result.with_metadata(meta::STOPPED_BACKGROUND, true);
        }
        if self.stop == Some(Stop::Cancelled) {
            result = result.with_metadata(meta::CANCELLED, true);
        }
        result
    }
}

/// Longest single wait while nothing happens: bounds how late an exit
/// (with a background child holding the pipe), a deadline or a
/// cancellation is noticed.
const POLL_SLICE: Duration = Duration::from_millis(25);
/// Pause between checks once the pipe is closed but the shell still runs.
const EXIT_POLL: Duration = Duration::from_millis(5);
/// How long to wait for the processes to disappear after `SIGKILL`, and for
/// the supervisor to exit once told to.
const KILL_WAIT: Duration = Duration::from_secs(1);
/// How long the end of a call waits for the supervisor to exit on its own
/// once the shell has ended and the output pipe is closed, before it looks
/// for processes left behind (it exits within a moment when none are).
const SETTLE: Duration = Duration::from_millis(20);
/// Size of one read from the pipe.
const READ_CHUNK: usize = 64 * 1024;

/// A call's supervisor (see [`crate::proctree`]), with the write end of its
/// control pipe and the read end of its status pipe. When dropped while armed
/// (an error or a panic half-way), the control pipe is closed, so the
/// supervisor kills everything below it, and the supervisor is reaped: no
/// failure path leaves the command running or a zombie behind.
struct Supervised {
    child: Child,
    /// Closing it (`None`) tells the supervisor to kill everything and exit.
    control: Option<OwnedFd>,
    /// Non-blocking; the supervisor writes the shell's raw wait status here.
    status_pipe: OwnedFd,
    /// The shell's exit status, once known.
    shell: Option<ExitStatus>,
    /// Whether the supervisor has exited (and was reaped).
    exited: bool,
    /// The sandbox's first process reported that no process is left
    /// ([`NOTHING_LEFT`]).
    nothing_left: bool,
    armed: bool,
}

impl Supervised {
    /// The supervisor's pid. Only used to anchor a [`ProcessTree`] while the
    /// supervisor is not reaped (`exited` is false), so it is never another
    /// process's.
    fn pid(&self) -> Pid {
        Pid::from_child(&self.child)
    }

    /// Whether the supervisor has exited; it does so on its own once nothing
    /// is left below it.
    fn has_exited(&mut self) -> io::Result<bool> {
        if !self.exited {
            self.exited = self.child.try_wait()?.is_some();
        }
        Ok(self.exited)
    }

    /// The shell's exit status if it has ended. A supervisor gone without
    /// reporting one (killed from outside) counts as the shell killed by `SIGKILL`.
    fn shell_status(&mut self) -> io::Result<Option<ExitStatus>> {
        if self.shell.is_none() {
            self.read_status();
            if self.shell.is_none() && self.has_exited()? {
                self.read_status();
                if self.shell.is_none() {
                    self.shell = Some(ExitStatus::from_raw(Signal::KILL.as_raw()));
                }
            }
        }
        Ok(self.shell)
    }

    /// Reads what the supervisor has written: the shell's wait status, then
    /// possibly [`NOTHING_LEFT`] (4 bytes each; pipe writes this small are
    /// atomic, `pipe(7)`).
    fn read_status(&mut self) {
        for _ in 0..2 {
            let mut raw = [0_u8; 4];
            let Ok(4) = rustix::io::read(&self.status_pipe, &mut raw) else {
                return;
            };
            let value = i32::from_ne_bytes(raw);
            if self.shell.is_none() {
                self.shell = Some(ExitStatus::from_raw(value));
            } else if value == NOTHING_LEFT {
                self.nothing_left = true;
            }
        }
    }

    /// Waits up to `limit` for the supervisor to exit, to have no child
    /// left, or for the sandbox's first process to report that nothing is
    /// left; checks at least every millisecond (polling a pidfd of the
    /// supervisor and the status pipe, so either ends the wait at once).
    fn await_quiet(&mut self, limit: Duration) {
        let pidfd = rustix::process::pidfd_open(self.pid(), rustix::process::PidfdFlags::empty());
        let until = Instant::now() + limit;
        let tick = Timespec {
            tv_sec: 0,
            tv_nsec: 1_000_000,
        };
        loop {
            self.read_status();
            let quiet = self.nothing_left || self.has_exited().unwrap_or(true) || self.childless();
            if quiet || Instant::now() >= until {
                break;
            }
            match &pidfd {
                Ok(fd) => {
                    let mut fds = [
                        PollFd::new(fd, PollFlags::IN),
                        PollFd::new(&self.status_pipe, PollFlags::IN),
                    ];
                    let _ = rustix::event::poll(&mut fds, Some(&tick));
                }
                Err(_) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }

    /// Whether the (unreaped) supervisor has no child, from
    /// `/proc/<pid>/task/<pid>/children` (`proc(5)`): an exited child not yet
    /// reaped is still listed, and every process the command left behind is
    /// a descendant of a child (it is a child subreaper). `false` when the
    /// file cannot be read.
    fn childless(&self) -> bool {
        if self.exited {
            return true;
        }
        let pid = self.pid().as_raw_nonzero();
        std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children"))
            .is_ok_and(|c| c.trim().is_empty())
    }

    /// Closes the control pipe and waits up to `limit` for the supervisor to
    /// kill what is left and exit.
    fn finish(&mut self, limit: Duration) -> io::Result<()> {
        self.control = None;
        let until = Instant::now() + limit;
        while !self.has_exited()? && Instant::now() < until {
            std::thread::sleep(EXIT_POLL);
        }
        Ok(())
    }
}

impl Drop for Supervised {
    fn drop(&mut self) {
        if self.armed {
            // Only while the supervisor is not reaped: until then its pid
            // cannot belong to another process.
            if !self.has_exited().unwrap_or(true) {
                ProcessTree::under(self.pid()).sweep(Signal::KILL);
            }
            let _ = self.finish(KILL_WAIT);
        }
        if !self.has_exited().unwrap_or(true) {
            // A supervisor with nothing left below it, still exiting: reap
            // it on a thread of its own rather than leave a zombie or make
            // the call wait. (If no thread can start, it stays a zombie
            // until this process ends.)
            let pid = self.pid();
            let _ = std::thread::Builder::new()
                .name("bash-reaper".into())
                .spawn(move || {
                    let _ =
                        rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::empty());
                });
        }
    }
}

/// The output side of a running command: the pipe, the escape stripper and the accumulator.
struct Capture {
    pipe: File,
    eof: bool,
    strip: EscapeStripper,
    acc: HeadTail,
    buf: Vec<u8>,
    clean: Vec<u8>,
}

impl Capture {
    /// Waits up to `wait` for output and consumes what is there. With
    /// `wake`, returns early as soon as that descriptor is readable too (the
    /// status pipe: the shell's exit is noticed when it is reported, not at
    /// the next poll slice). Once the pipe is closed, waits on `wake` alone,
    /// or sleeps.
    fn pump(&mut self, wait: Duration, wake: Option<BorrowedFd<'_>>) -> io::Result<()> {
        let timeout = Timespec::try_from(wait).unwrap_or(Timespec {
            tv_sec: 0,
            tv_nsec: 25_000_000,
        });
        if self.eof {
            match wake {
                Some(fd) => {
                    let mut fds = [PollFd::new(&fd, PollFlags::IN)];
                    let _ = rustix::event::poll(&mut fds, Some(&timeout));
                }
                None => std::thread::sleep(wait.min(EXIT_POLL)),
            }
            return Ok(());
        }
        let polled = match wake {
            Some(fd) => {
                let mut fds = [
                    PollFd::new(&self.pipe, PollFlags::IN),
                    PollFd::new(&fd, PollFlags::IN),
                ];
                rustix::event::poll(&mut fds, Some(&timeout)).map(|_| !fds[0].revents().is_empty())
            }
            None => {
                let mut fds = [PollFd::new(&self.pipe, PollFlags::IN)];
                rustix::event::poll(&mut fds, Some(&timeout)).map(|n| n > 0)
            }
        };
        match polled {
            Ok(false) => return Ok(()),
            Ok(true) => {}
            Err(rustix::io::Errno::INTR) => return Ok(()),
            Err(e) => return Err(e.into()),
        }
        match self.pipe.read(&mut self.buf) {
            Ok(0) => self.eof = true,
            Ok(n) => {
                self.clean.clear();
                self.strip.push(&self.buf[..n], &mut self.clean);
                self.acc.push(&self.clean);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
        Ok(())
    }

    /// Reads whatever is already in the pipe without waiting.
    fn drain_now(&mut self) -> io::Result<()> {
        for _ in 0..64 {
            if self.eof {
                break;
            }
            let mut fds = [PollFd::new(&self.pipe, PollFlags::IN)];
            let ready = rustix::event::poll(&mut fds, Some(&Timespec::default())).unwrap_or(0);
            if ready == 0 {
                break;
            }
            self.pump(Duration::ZERO, None)?;
        }
        Ok(())
    }
}

/// A descriptor numbered 3 or above (the same one when it already is), so that
/// the child's `dup2` onto 0, 1 and 2 can never overwrite it.
pub(crate) fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// Starts the command under a supervisor ([`crate::proctree`]) and watches it
/// to completion, timeout or cancellation. Whatever way it ends, every process
/// the command started is stopped before this returns.
/// The environment variable that carries the command text to the shell.
pub(crate) const COMMAND_VAR: &str = "AGENT_TOOLS_COMMAND";

/// The shell's `-c` script: take the command from [`COMMAND_VAR`], drop the
/// variable, run the command (POSIX `sh` and `bash` alike).
pub(crate) const COMMAND_RUNNER: &str =
    "__agent_tools_c=$AGENT_TOOLS_COMMAND; unset AGENT_TOOLS_COMMAND; eval \"$__agent_tools_c\"";

pub(crate) fn run(spec: &RunSpec, cancelled: &dyn Fn() -> bool) -> io::Result<Outcome> {
    let (read_end, write_end) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let write_err = write_end.try_clone()?;
    let (control_read, control_write) = rustix::pipe::pipe_with(rustix::pipe::PipeFlags::CLOEXEC)?;
    let (status_read, status_write) = rustix::pipe::pipe_with(
        rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK,
    )?;
    let workdir_fd = match &spec.workdir_fd {
        Some(fd) => Some(above_stdio(fd.try_clone()?)?),
        None => None,
    };
    let mut command = Command::new(&spec.shell);
    // The command text reaches the shell in its environment, not in its
    // argv: argv is readable by every user (`ps`), and the text may hold a
    // substituted secret; the environment is readable by the same user only,
    // and the variable is removed before the command runs, so its children
    // do not inherit it.
    command
        .arg("-c")
        .arg(COMMAND_RUNNER)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(COMMAND_VAR, &spec.command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::from(write_err))
        .process_group(0);
    if workdir_fd.is_none() {
        command.current_dir(&spec.workdir);
    }
    supervise(
        &mut command,
        SupervisorFds {
            control: above_stdio(control_read)?,
            status: above_stdio(status_write)?,
            workdir: workdir_fd,
            job: None,
        },
        spec.sandbox.clone(),
    );
    let spawned = command.spawn();
    // The command still holds our copies of the write end (and the
    // supervisor's pipe ends): close them now, or the pipe would never report
    // end of file.
    drop(command);
    let child = spawned?;
    // Where no memory cgroup holds an explicit memory limit, the sandbox's
    // watchdog sums the call's resident memory until the call ends.
    let _memory_watchdog = spec
        .sandbox
        .as_ref()
        .and_then(|s| s.watch_memory(child.id()));
    let mut sup = Supervised {
        child,
        control: Some(control_write),
        status_pipe: status_read,
        shell: None,
        exited: false,
        nothing_left: false,
        armed: true,
    };
    let mut cap = Capture {
        pipe: File::from(read_end),
        eof: false,
        strip: EscapeStripper::new(),
        acc: HeadTail::new(spec.truncation.clone()).with_masker(spec.masker.clone()),
        buf: vec![0; READ_CHUNK],
        clean: Vec::with_capacity(READ_CHUNK),
    };
    let deadline = Instant::now() + spec.timeout;
    let mut drain_until = None;
    let stop = loop {
        if drain_until.is_none() && sup.shell_status()?.is_some() {
            drain_until = Some(Instant::now() + spec.drain);
        }
        let now = Instant::now();
        let wait = match drain_until {
            Some(until) => {
                if cap.eof || now >= until {
                    break None;
                }
                until - now
            }
            None => {
                if now >= deadline {
                    break Some(Stop::Timeout);
                }
                if cancelled() {
                    break Some(Stop::Cancelled);
                }
                deadline - now
            }
        };
        let wake = drain_until.is_none().then(|| sup.status_pipe.as_fd());
        cap.pump(wait.min(POLL_SLICE), wake)?;
    };
    let leftovers = stop_everything(&mut sup, spec.kill_grace, &mut cap)?;
    let status = sup.shell_status()?;
    sup.armed = false;
    cap.drain_now()?;
    Ok(Outcome {
        status,
        stop,
        stopped_background: stop.is_none() && leftovers,
        output: cap.acc.finish(),
    })
}

/// Ends the call: `SIGTERM` to every process below the supervisor and to
/// their process groups (job control gives each job a group of its own),
/// output read meanwhile; `SIGKILL` after `grace`. The tree is read from
/// `/proc` on every round ([`ProcessTree`]); since the supervisor is a child
/// subreaper, processes that detached (`setsid`, double forks) are still
/// below it. Then the control pipe is closed, so the supervisor kills what is
/// left and exits. Returns whether anything besides the shell was still
/// running (or the shell itself, on timeout and cancellation).
fn stop_everything(sup: &mut Supervised, grace: Duration, cap: &mut Capture) -> io::Result<bool> {
    // The supervisor exits on its own once nothing is left below it. When
    // the shell has ended and the pipe is closed it normally does so within
    // a moment: wait for that (on a pidfd) rather than read the whole of
    // /proc to find nothing.
    if cap.eof && sup.shell.is_some() {
        sup.await_quiet(SETTLE);
    }
    // No child left: the supervisor is on its way out. Its exit can take
    // tens of milliseconds in the full tier (the kernel tearing down the
    // namespaces it made); it is reaped off this path (see `Drop`).
    if sup.nothing_left || sup.has_exited()? || sup.childless() {
        return Ok(false);
    }
    let mut tree = ProcessTree::under(sup.pid());
    let mut signal = Signal::TERM;
    let mut until = Instant::now() + grace;
    let mut found = false;
    loop {
        let alive = tree.sweep(signal);
        found |= alive > 0;
        let shell_done = sup.shell_status()?.is_some();
        if (shell_done && alive == 0) || sup.has_exited()? {
            break;
        }
        let now = Instant::now();
        if now >= until {
            if signal == Signal::KILL {
                break;
            }
            signal = Signal::KILL;
            until = now + KILL_WAIT;
            continue;
        }
        cap.pump(until.saturating_duration_since(now).min(POLL_SLICE), None)?;
    }
    sup.finish(KILL_WAIT)?;
    Ok(found)
}
