//! `bash_command` with `run_in_background: true`: the command becomes a job
//! of the one job registry ([`tool_core::jobs`], cross-cutting §3) and the
//! call returns at once with its id.
//!
//! The shell runs under a supervisor like a foreground command (the same
//! fork, subreaper, sandbox, process groups; see the private `proctree`
//! module), but a supervisor that outlives this process: it leaves this
//! process's session, watches a FIFO in the job's private folder instead
//! of a pipe this process holds, and copies the output into the job's
//! 1 MiB ring itself. So a job started by one `tool` process is read
//! (`job_output`) and killed (`job_kill`) by a later `tool --trace-id T`
//! process, and ends with `job_kill`, 1 s after its shell ends (what the
//! shell left running is stopped then, as for a foreground command), or at
//! its lifetime cap (1 h, or the call's `timeout` when shorter). Unless the
//! registry lets jobs outlive their host
//! ([`JobRegistry::with_jobs_outliving_host`], what `tool call` does), it
//! also ends when this process exits, however it ends (review 27 F9).
//!
//! Limits, and why:
//! - The sandbox must be the full tier (or off, a person's choice): the
//!   no-namespaces tier puts `.git` hooks and config back after each call
//!   (Landlock cannot make them read-only), which a job that outlives its
//!   call cannot have; refused with a message saying so.
//! - No network proxy: hosts allowed with `--allow-net` are served by a
//!   proxy that lives as long as the call; a job runs with no network and a
//!   note says so.
//! - When the job ends (its shell's exit, `job_kill`, the lifetime cap)
//!   and every process of it is gone, its supervisor runs the sandbox's
//!   after-call `.git` check, as a foreground call's end does, and appends
//!   its notes to the job's output (breakout review E3).
//! - The sandbox's memory limit holds through its cgroup; where only the
//!   in-process watchdog would enforce it (no delegated memory cgroup), it
//!   does not watch a job (a note says so).

use std::os::fd::OwnedFd;
use std::process::{Command, Stdio};

use tool_core::jobs::{Control, JobRegistry, ProcessStamp};
use tool_core::{ErrorKind, ToolError, ToolResult};

use super::proctree::{JobFds, SupervisorFds, supervise};
use super::run::{COMMAND_RUNNER, COMMAND_VAR, RunSpec, above_stdio};

/// Why a job is refused in the no-namespaces tier.
pub(crate) const NEEDS_FULL_TIER: &str = "Background jobs need the full sandbox tier (user \
     namespaces): the no-namespaces tier puts .git hooks and config back after each call, which a \
     job that outlives its call cannot have. Run the command in the foreground (without \
     run_in_background), or ask the person to run where user namespaces are allowed.";

/// Starts `spec` as a background job of `key`'s trace in `jobs`; returns
/// the result the model sees (the job id in the text and `metadata.job_id`).
///
/// # Errors
/// The registry's refusal (the running cap) or a failure to start.
pub(crate) fn start(
    jobs: &JobRegistry,
    key: &tool_core::state::StateKey,
    spec: &RunSpec,
    title: &str,
    lifetime_secs: u64,
) -> Result<ToolResult, ToolError> {
    let job = jobs.start(
        key,
        "shell",
        title,
        Control::Fifo,
        std::time::Duration::from_secs(lifetime_secs),
    )?;
    let failed = |what: &str, e: std::io::Error| {
        ToolError::new(
            ErrorKind::Failed,
            format!("The background job could not start ({what}: {e}); nothing runs."),
        )
    };
    let fifo = job.control_path();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        &fifo,
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o600),
        0,
    )
    .map_err(|e| failed("control FIFO", e.into()))?;
    // Read-write: the supervisor's end never reads end of file, and
    // opening does not wait for a writer (fifo(7)).
    let control: OwnedFd = rustix::fs::open(
        &fifo,
        rustix::fs::OFlags::RDWR | rustix::fs::OFlags::CLOEXEC | rustix::fs::OFlags::NOFOLLOW,
        rustix::fs::Mode::empty(),
    )
    .map_err(|e| failed("control FIFO", e.into()))?;
    let ring: OwnedFd = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(job.output_path())
        .map(OwnedFd::from)
        .map_err(|e| failed("output file", e))?;
    let pipe = |flags| rustix::pipe::pipe_with(flags).map_err(|e| failed("pipe", e.into()));
    let (read_end, write_end) = pipe(rustix::pipe::PipeFlags::CLOEXEC)?;
    let write_err = write_end.try_clone().map_err(|e| failed("pipe", e))?;
    let (status_read, status_write) =
        pipe(rustix::pipe::PipeFlags::CLOEXEC | rustix::pipe::PipeFlags::NONBLOCK)?;
    let workdir = match &spec.workdir_fd {
        Some(fd) => Some(
            fd.try_clone()
                .and_then(above_stdio)
                .map_err(|e| failed("working directory", e))?,
        ),
        None => None,
    };
    let mut command = Command::new(&spec.shell);
    command
        .arg("-c")
        .arg(COMMAND_RUNNER)
        .env_clear()
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .env(COMMAND_VAR, &spec.command)
        .stdin(Stdio::null())
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::from(write_err));
    if workdir.is_none() {
        command.current_dir(&spec.workdir);
    }
    let above = |fd: OwnedFd| above_stdio(fd).map_err(|e| failed("descriptor", e));
    supervise(
        &mut command,
        SupervisorFds {
            control: above(control)?,
            status: above(status_write)?,
            workdir,
            job: Some(JobFds {
                output: above(read_end)?,
                status_read: above(status_read)?,
                ring: above(ring)?,
                capacity: job.capacity(),
                lifetime_secs,
                masker: spec.masker.clone(),
                host: (!jobs.jobs_outlive_host()).then(rustix::process::getpid),
            }),
        },
        spec.sandbox.clone(),
    );
    let spawned = command.spawn();
    drop(command);
    let mut child = spawned.map_err(|e| failed("spawn", e))?;
    let pid = i32::try_from(child.id()).unwrap_or(i32::MAX);
    if let Some(stamp) = ProcessStamp::of(pid) {
        jobs.set_writer(key, job.id(), stamp)?;
    }
    // Reap the supervisor when it ends, so a long-lived host keeps no
    // zombie; a `tool` process that exits first leaves it to init.
    let _ = std::thread::Builder::new()
        .name("job-reaper".into())
        .spawn(move || {
            let _ = child.wait();
        });
    let id = job.id().to_owned();
    let host = if jobs.jobs_outlive_host() {
        ""
    } else {
        " or until this host process exits"
    };
    let text = format!(
        "Started background job {id}: {title}\nIt runs for at most {}{host}; read its output \
         with job_output (job_id \"{id}\", optionally wait seconds) and stop it with job_kill.",
        humantime::format_duration(std::time::Duration::from_secs(lifetime_secs)),
    );
    Ok(ToolResult::ok(text)
        .with_metadata(tool_core::meta::JOB_ID, id)
        .with_metadata(tool_core::meta::JOB_STATUS, "running")
        .with_metadata(tool_core::meta::LIFETIME_SECS, lifetime_secs))
}
