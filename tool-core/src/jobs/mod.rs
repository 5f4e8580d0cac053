//! The one job registry (cross-cutting decision §3): background shell
//! commands, asynchronous sub-agents and (later) MCP tasks are *jobs*, work
//! that outlives the call that started it, read with `job_output` and ended
//! with `job_kill`.
//!
//! ```
//! use std::sync::Arc;
//! use tool_core::jobs::{JobEnd, JobRegistry, JobStatus};
//! use tool_core::state::FileStore;
//!
//! let dir = tempfile::tempdir()?;
//! let jobs = JobRegistry::new(Arc::new(FileStore::new(dir.path().join("state"))), dir.path().join("jobs"));
//! let key = JobRegistry::key(Some("trace-1"), dir.path())?;
//! // An in-process job: the host writes its output and ends it.
//! let (job, _cancel) = jobs.start_local(&key, "agent", "summarise the logs")?;
//! assert!(job.id().starts_with("job-"));
//! let mut writer = job.writer()?;
//! writer.write(b"step 1 done\n")?;
//! writer.finish(JobEnd::Exited, 0)?;
//! let read = jobs.read(&key, job.id(), 1024, std::time::Duration::ZERO, &|| false)?;
//! assert_eq!(read.text, "step 1 done\n");
//! assert_eq!(read.view.status, JobStatus::Exited);
//! // Another trace does not see it.
//! let other = JobRegistry::key(Some("trace-2"), dir.path())?;
//! assert!(jobs.read(&other, job.id(), 1024, std::time::Duration::ZERO, &|| false).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Model
//! - **Id**: `job-` and 32 lowercase hex digits from the operating system's
//!   random source (128 bits, unguessable); returned as `metadata.job_id`.
//! - **Owner**: the trace that started it, in its workspace: the records
//!   live in the [`StateStore`] under space [`STATE_SPACE`] and the
//!   [`StateKey`] of trace and workspace, so another trace never sees them.
//!   A caller with no identity of its own (an MCP stateless-era request
//!   without a `traceparent`, marked [`AnonymousCaller`]) shares its trace
//!   with every other such caller: for it the id is the only handle, and
//!   `job_list` lists nothing.
//! - **Host**: a background shell job ([`Control::Fifo`]) ends when the
//!   process that started it exits, whatever ends that process (`SIGKILL`
//!   included): its supervisor notices within 100 ms, sends `SIGTERM` to
//!   the job's processes, `SIGKILL` [`HOST_EXIT_GRACE`] (2 s) later, and
//!   records [`JobStatus::HostExited`]. Hosts whose jobs later processes
//!   read by naming the trace (`tool call`) opt out with
//!   [`JobRegistry::with_jobs_outliving_host`].
//! - **Output**: a file per job in a `0700` folder under the private state
//!   folder (`$XDG_STATE_HOME/agent-tools/job-output/<id>/output`, hidden from
//!   the sandbox and refused by the file tools, cross-cutting §6) holding
//!   the last [`JobLimits::output_bytes`] (1 MiB) the job printed in a ring
//!   ([`ring`]): older output is dropped and the next read says how much.
//!   Each reader reads at most what it asks for, so polling a job that
//!   prints without end keeps every process's memory bounded.
//! - **Status**: running, then exited / killed / expired / failed as the
//!   job's writer records it in the output file's header; *lost* when the
//!   process that writes it is gone without recording an end (a machine
//!   restart, a `SIGKILL`ed supervisor, an in-process job whose host ended).
//! - **Caps** ([`JobLimits`]): 16 running jobs per trace (the 17th start is
//!   refused with a message naming the cap and how to free a slot), 64
//!   running in one jobs folder across every trace and process (counted
//!   under a `flock` of the folder, so two processes cannot both take the
//!   last slot), 64 records per trace (the oldest ended ones are forgotten first), a
//!   lifetime of 1 h after which the writer stops the job. Nothing ends a
//!   job when its trace's state expires: the lifetime cap is the bound, and
//!   it is below the state store's value lifetime (1 day by default,
//!   [`crate::state::DEFAULT_LIFETIME`]), so a job ends before its record
//!   can expire. With a store whose values live under 1 h, a running job's
//!   record can expire first; the job then runs on to its cap, out of
//!   reach of `job_output` and `job_kill`.
//! - **Hosts sharing a store** ([`JobRegistry::shared_by_hosts`]: `tool
//!   serve --state redis://...` replicas): a job runs on the host that
//!   started it, which mirrors its status and output tail into the store
//!   ([`mirror`]); any host lists, reads and kills it from there, and a
//!   job whose host went silent reads as lost.
//! - **Control**: a job started by one process can be read and killed from
//!   another ([`Control::Fifo`]: a FIFO in the job's folder its supervisor
//!   watches); an in-process job ([`Control::Local`]) is killed through its
//!   cancellation token by the process that runs it.
//!
//! The registry's calls are synchronous (file I/O and short waits): async
//! callers wrap them in [`run_blocking`](crate::run_blocking).

pub mod mirror;
pub mod ring;

use std::collections::HashMap;
use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use tokio_util::sync::CancellationToken;

use crate::result::{ErrorKind, ToolError};
#[cfg(test)]
use crate::state::FileStore;
use crate::state::{StateKey, StateStore};
use crate::truncate::StreamMasker;
pub use ring::JobEnd;

/// The [`StateKey`] space of job records: `jobs`.
pub const STATE_SPACE: &str = "jobs";
/// Running jobs one trace may have at once: 16.
pub const MAX_RUNNING_PER_TRACE: usize = 16;
/// Running jobs one jobs folder may hold at once, across every trace and
/// every process that shares it (an MCP server's sessions, one-shot `tool
/// call`s with fresh trace ids): 64. Without it each new trace would bring a
/// fresh quota of [`MAX_RUNNING_PER_TRACE`].
pub const MAX_RUNNING_TOTAL: usize = 64;
/// Job records one trace keeps (running and ended): 64; the oldest ended
/// ones are forgotten, output and all, to make room.
pub const MAX_RECORDS_PER_TRACE: usize = 64;
/// Output kept per job: the last 1 MiB.
pub const DEFAULT_OUTPUT_BYTES: u64 = 1 << 20;
/// Largest output ring a registry may be configured with: 64 MiB.
pub const MAX_OUTPUT_CAPACITY: u64 = 64 << 20;
/// How long a job may run: 1 h; then its writer stops it (status `expired`).
pub const DEFAULT_LIFETIME: Duration = Duration::from_secs(3600);
/// Longest wait a reader may ask for: 300 s.
pub const MAX_WAIT: Duration = Duration::from_secs(300);
/// Longest title kept in a record, in characters (200).
pub const MAX_TITLE_CHARS: usize = 200;
/// While a job runs, an unfinished last line of at most this many bytes is
/// held back until its end arrives (4096) when whole lines come before it,
/// so a line is rarely shown in two halves. (Secret values are kept whole
/// by [`PageLimits::masker`], not by this.)
pub const HOLD_BACK_BYTES: usize = 4096;
/// How long a job bound to its host
/// ([`JobRegistry::with_jobs_outliving_host`]) gets between the `SIGTERM`
/// its supervisor sends when the host is gone and the `SIGKILL` that
/// follows: 2 s.
pub const HOST_EXIT_GRACE: Duration = Duration::from_secs(2);
/// How long [`JobRegistry::kill`] waits for the job's writer to record the
/// end before it stops the writer process itself: 5 s.
pub const KILL_WAIT: Duration = Duration::from_secs(5);

/// The bounds a [`JobRegistry`] keeps (defaults: the constants of this module).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct JobLimits {
    /// Running jobs per trace ([`MAX_RUNNING_PER_TRACE`]).
    pub max_running: usize,
    /// Running jobs in the whole jobs folder, every trace and process
    /// together ([`MAX_RUNNING_TOTAL`]).
    pub max_running_total: usize,
    /// Records per trace ([`MAX_RECORDS_PER_TRACE`]).
    pub max_records: usize,
    /// Output bytes kept per job ([`DEFAULT_OUTPUT_BYTES`]; at most [`MAX_OUTPUT_CAPACITY`]).
    pub output_bytes: u64,
    /// Lifetime of a job ([`DEFAULT_LIFETIME`]).
    pub lifetime: Duration,
}

impl Default for JobLimits {
    fn default() -> Self {
        Self {
            max_running: MAX_RUNNING_PER_TRACE,
            max_running_total: MAX_RUNNING_TOTAL,
            max_records: MAX_RECORDS_PER_TRACE,
            output_bytes: DEFAULT_OUTPUT_BYTES,
            lifetime: DEFAULT_LIFETIME,
        }
    }
}

impl JobLimits {
    /// Limits with `max_running` running jobs per trace and `lifetime`;
    /// the rest as the defaults.
    pub fn new(max_running: usize, lifetime: Duration) -> Self {
        Self {
            max_running,
            lifetime,
            ..Self::default()
        }
    }
}

/// How a job is stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Control {
    /// A FIFO at `<job folder>/control` that the job's supervisor watches:
    /// one byte written to it stops the job, from any process.
    Fifo,
    /// A cancellation token held by the process that runs the job.
    Local,
}

/// Marks a context whose caller has no identity of its own that a later
/// request could present: an MCP stateless-era (2026-07-28) request without
/// a valid `params._meta.traceparent` (`tool_mcp` inserts it,
/// `ToolContext::with_state(AnonymousCaller)`). Such callers all share one
/// trace, so the job tools treat a job's id (128 random bits) as the only
/// handle on it: `job_list` lists nothing for them, `job_output` and
/// `job_kill` work for whoever holds the id, which only the call that
/// started the job returned.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AnonymousCaller;

impl AnonymousCaller {
    /// Whether `ctx` is marked as serving an anonymous caller.
    pub fn is_marked(ctx: &crate::tool::context::ToolContext) -> bool {
        ctx.state::<Self>().is_some()
    }
}

/// A process identified across pid reuse: its pid and its start time in
/// clock ticks since boot (`/proc/<pid>/stat`, field 22, `proc(5)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessStamp {
    /// The process id.
    pub pid: i32,
    /// Its start time (clock ticks after boot).
    pub start: u64,
}

impl ProcessStamp {
    /// The stamp of the live process `pid`; `None` when it is gone.
    pub fn of(pid: i32) -> Option<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let after = &stat[stat.rfind(')')? + 1..];
        // Field 3 (state) is the first after the command name; 22 is the 20th.
        let start = after.split_whitespace().nth(19)?.parse().ok()?;
        Some(Self { pid, start })
    }

    /// The stamp of this process.
    pub fn current() -> Option<Self> {
        Self::of(i32::try_from(std::process::id()).ok()?)
    }

    /// Whether the same process still runs (and is not a zombie).
    pub fn is_alive(&self) -> bool {
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{}/stat", self.pid)) else {
            return false;
        };
        let zombie = stat
            .rfind(')')
            .and_then(|i| stat[i + 1..].split_whitespace().next())
            .is_some_and(|s| s == "Z" || s == "X");
        !zombie && Self::of(self.pid).is_some_and(|s| s.start == self.start)
    }
}

/// One job as the store keeps it (serialised as JSON in the trace's map).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobRecord {
    /// `job-<32 hex>` (`job-<16 hex>` for records of earlier releases).
    pub id: String,
    /// What runs: `shell`, `agent`, ... (the end value of a `shell` job is a
    /// raw wait status, of others an exit code).
    pub kind: String,
    /// A short description for people and models (at most [`MAX_TITLE_CHARS`]).
    pub title: String,
    /// Start time, milliseconds since the Unix epoch.
    pub started_ms: u64,
    /// The lifetime cap in seconds.
    pub lifetime_secs: u64,
    /// The process that writes the output (a supervisor, or the host), once known.
    pub writer: Option<ProcessStamp>,
    /// How it is stopped.
    pub control: Control,
    /// Absolute output offset up to which `job_output` has returned text.
    pub read_offset: u64,
    /// The host process that runs the job, when the registry is shared by
    /// hosts ([`JobRegistry::shared_by_hosts`]): its random id
    /// (`host-<16 hex>`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Another host asked the job's host to stop it
    /// ([`JobRegistry::kill`] of a job running elsewhere).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub stop_requested: bool,
}

/// A job's state as a reader sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JobStatus {
    /// Still running.
    Running,
    /// Ended on its own.
    Exited,
    /// Stopped by `job_kill`.
    Killed,
    /// Stopped at its lifetime cap.
    Expired,
    /// Could not start.
    Failed,
    /// Its writer is gone without recording an end (for a job another
    /// host runs, [`JobRegistry::shared_by_hosts`]: that host stopped
    /// mirroring it, [`mirror::HOST_SILENT`]).
    Lost,
    /// Stopped by its supervisor because the host process that started it
    /// exited (or was killed): a job bound to its host
    /// ([`JobRegistry::with_jobs_outliving_host`] not set) ends with it.
    HostExited,
}

impl JobStatus {
    /// The `snake_case` name (`running`, `exited`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Exited => "exited",
            Self::Killed => "killed",
            Self::Expired => "expired",
            Self::Failed => "failed",
            Self::Lost => "lost",
            Self::HostExited => "host_exited",
        }
    }
}

/// A job record with its status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobView {
    /// The record.
    pub record: JobRecord,
    /// Its status now.
    pub status: JobStatus,
    /// The exit code, once ended with one.
    pub exit_code: Option<i32>,
    /// The signal that ended a `shell` job's command, if one did.
    pub signal: Option<i32>,
    /// Bytes the job has written in all.
    pub total_bytes: u64,
}

/// What [`JobRegistry::read`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobRead {
    /// The job after the read.
    pub view: JobView,
    /// Output since the last read (UTF-8, invalid bytes replaced), at most
    /// the bytes asked for.
    pub text: String,
    /// Output written since the last read that the ring no longer held.
    pub dropped: u64,
    /// Output kept and not returned yet (beyond the bytes asked for, or a
    /// held-back unfinished line).
    pub pending: u64,
    /// `text` ends with the unfinished last line of a running job (no line
    /// break yet): returned because it was all there was when the wait
    /// ended. Its end may arrive with the next read.
    pub unfinished: bool,
}

/// How [`JobRegistry::read_page`] cuts one page of a job's output.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PageLimits {
    /// Most bytes (at least 1).
    pub max_bytes: usize,
    /// Most lines (line breaks; at least 1).
    pub max_lines: usize,
    /// The secret values the reader masks: a page that more output follows
    /// never ends inside one ([`StreamMasker::page_len`]). `None`: none.
    pub masker: Option<StreamMasker>,
}

impl PageLimits {
    /// Pages of at most `max_bytes` bytes, any number of lines, no masker.
    pub fn bytes(max_bytes: usize) -> Self {
        Self {
            max_bytes,
            max_lines: usize::MAX,
            masker: None,
        }
    }

    /// The same with at most `max_lines` lines.
    #[must_use]
    pub fn with_max_lines(mut self, max_lines: usize) -> Self {
        self.max_lines = max_lines;
        self
    }

    /// The same, never cutting a page inside a value `masker` masks.
    #[must_use]
    pub fn with_masker(mut self, masker: Option<StreamMasker>) -> Self {
        self.masker = masker;
        self
    }
}

/// What [`JobRegistry::peek`] returns: the job's output from its first
/// kept byte, without moving the readers' offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JobPeek {
    /// The job now.
    pub view: JobView,
    /// The output the ring still holds, from its oldest byte, at most the
    /// bytes asked for.
    pub bytes: Vec<u8>,
    /// Bytes written before `bytes` that the ring no longer holds.
    pub dropped: u64,
    /// When the output file last changed (a write or the end), milliseconds
    /// since the Unix epoch; the start time when it cannot be read.
    pub updated_ms: u64,
}

/// A job just started: its id, folder and record.
#[derive(Debug)]
pub struct Job {
    record: JobRecord,
    dir: PathBuf,
    capacity: u64,
}

impl Job {
    /// The id (`job-<32 hex>`).
    pub fn id(&self) -> &str {
        &self.record.id
    }

    /// The job's private folder (`output`, `control`).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Its output file's path.
    pub fn output_path(&self) -> PathBuf {
        self.dir.join("output")
    }

    /// Its control FIFO's path ([`Control::Fifo`] jobs).
    pub fn control_path(&self) -> PathBuf {
        self.dir.join("control")
    }

    /// The ring capacity of its output file, in bytes.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// The record as started.
    pub fn record(&self) -> &JobRecord {
        &self.record
    }

    /// A writer of the job's output, for jobs the host runs itself.
    ///
    /// # Errors
    /// The error of opening the output file.
    pub fn writer(&self) -> io::Result<JobWriter> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(self.output_path())?;
        let total = ring::header(&file)?.total;
        Ok(JobWriter {
            file,
            capacity: self.capacity,
            total,
        })
    }
}

/// Appends to a job's output ring and records its end (one writer per job).
#[derive(Debug)]
pub struct JobWriter {
    file: File,
    capacity: u64,
    total: u64,
}

impl JobWriter {
    /// Appends `bytes` (only the last capacity bytes of a longer slice are kept).
    ///
    /// # Errors
    /// The write error.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.total = ring::append(&self.file, self.capacity, self.total, bytes)?;
        Ok(())
    }

    /// Records the end (`value`: an exit code; 0 for success).
    ///
    /// # Errors
    /// The write error.
    pub fn finish(&mut self, end: JobEnd, value: i32) -> io::Result<()> {
        ring::set_end(&self.file, end, value)
    }
}

/// The job registry: records in a [`StateStore`], output files in a
/// private folder. Cheap to clone.
#[derive(Debug, Clone)]
pub struct JobRegistry {
    store: Arc<dyn StateStore>,
    dir: PathBuf,
    limits: JobLimits,
    outlive_host: bool,
    /// The store is shared by several hosts ([`Self::shared_by_hosts`]).
    shared: bool,
}

/// Cancellation tokens of the in-process jobs of this process.
fn local_jobs() -> &'static Mutex<HashMap<String, CancellationToken>> {
    static LOCAL: OnceLock<Mutex<HashMap<String, CancellationToken>>> = OnceLock::new();
    LOCAL.get_or_init(Mutex::default)
}

/// The jobs this process started: (output folder of the registry, key, id).
/// Entries of jobs that ended are pruned at each start.
type Started = Vec<(PathBuf, StateKey, String)>;

fn started_here() -> &'static Mutex<Started> {
    static STARTED: OnceLock<Mutex<Started>> = OnceLock::new();
    STARTED.get_or_init(Mutex::default)
}

fn now_ms() -> u64 {
    u64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default()
            .as_millis(),
    )
    .unwrap_or(u64::MAX)
}

fn failed(message: impl Into<String>) -> ToolError {
    ToolError::new(ErrorKind::Failed, message)
}

fn store_error(e: &crate::state::StateError) -> ToolError {
    failed(format!("The job registry's state store failed: {e}"))
}

/// How long a job whose writer is not noted yet counts as running in the
/// folder-wide count: 60 s (a starter between `start` and `set_writer`).
pub const WRITERLESS_GRACE: Duration = Duration::from_secs(60);

/// Whether the process a job's `writer` file names (`pid start`) still runs.
fn writer_alive(text: &str) -> bool {
    let mut words = text.split_whitespace();
    let pid = words.next().and_then(|w| w.parse::<i32>().ok());
    let start = words.next().and_then(|w| w.parse::<u64>().ok());
    match (pid, start) {
        (Some(pid), Some(start)) => ProcessStamp::of(pid) == Some(ProcessStamp { pid, start }),
        _ => false,
    }
}

/// `job-` and 32 lowercase hex digits (128 bits) from the OS's random
/// source: unguessable, since for a caller with no identity of its own
/// ([`AnonymousCaller`]) the id is the only handle on its job.
fn new_id() -> Result<String, ToolError> {
    let mut bytes = [0_u8; 16];
    getrandom::fill(&mut bytes)
        .map_err(|e| failed(format!("No random source for a job id: {e}")))?;
    Ok(format!("job-{:032x}", u128::from_le_bytes(bytes)))
}

/// Whether `id` has the shape of a job id: `job-` and 32 lowercase hex
/// digits (16 for the ids of earlier releases, still read).
pub fn is_job_id(id: &str) -> bool {
    id.strip_prefix("job-").is_some_and(|h| {
        matches!(h.len(), 16 | 32) && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
    })
}

impl JobRegistry {
    /// A registry keeping records in `store` and output under `dir`
    /// (created `0700` when first needed), with the default [`JobLimits`].
    pub fn new(store: Arc<dyn StateStore>, dir: impl Into<PathBuf>) -> Self {
        Self {
            store,
            dir: dir.into(),
            limits: JobLimits::default(),
            outlive_host: false,
            shared: false,
        }
    }

    /// The same registry, whose store several hosts share (the replicas
    /// of `tool serve --state redis://...` behind a load balancer): a job
    /// still runs on the host that starts it (its processes and output
    /// ring are local), which names itself in the record and mirrors the
    /// job's status and the last [`mirror::MIRROR_TAIL_BYTES`] of its
    /// output into the store every [`mirror::MIRROR_INTERVAL`] and at its
    /// end; any host lists and reads it from the store, and
    /// [`kill`](Self::kill) on another host leaves a stop request the
    /// owning host carries out. A job whose host stopped mirroring for
    /// [`mirror::HOST_SILENT`] reads as [`JobStatus::Lost`]. Starting a
    /// job needs the store: when it cannot be written, nothing starts.
    /// See the [`mirror`] module.
    #[must_use]
    pub fn shared_by_hosts(mut self) -> Self {
        self.shared = true;
        self
    }

    /// Whether the store is shared by hosts ([`shared_by_hosts`](Self::shared_by_hosts)).
    pub fn is_shared_by_hosts(&self) -> bool {
        self.shared
    }

    /// The same registry, whose process-run jobs ([`Control::Fifo`]: a
    /// background shell command) outlive the process that starts them when
    /// `outlive` is `true`. By default (`false`) a job is bound to its host:
    /// its supervisor checks every 100 ms whether the process that started
    /// it still runs (it is that process's child: its parent changes when
    /// the host exits, whatever ends it, `SIGKILL` included) and, once it is
    /// gone, sends `SIGTERM` to every process of the job, `SIGKILL` to what
    /// is left [`HOST_EXIT_GRACE`] later, and records the end as
    /// [`JobStatus::HostExited`]. Outliving is for hosts whose jobs a later
    /// process reaches by naming the trace: the `tool call` and `tool
    /// batch` commands (`tool --trace-id T call job_output` reads a job an
    /// earlier `tool call` started). A host whose clients cannot be named
    /// again (an MCP server's sessions) keeps the default.
    #[must_use]
    pub fn with_jobs_outliving_host(mut self, outlive: bool) -> Self {
        self.outlive_host = outlive;
        self
    }

    /// Whether the jobs this registry starts outlive the process that starts
    /// them ([`with_jobs_outliving_host`](Self::with_jobs_outliving_host)).
    pub fn jobs_outlive_host(&self) -> bool {
        self.outlive_host
    }

    /// The same registry with other limits.
    #[must_use]
    pub fn with_limits(mut self, limits: JobLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The limits.
    pub fn limits(&self) -> JobLimits {
        self.limits
    }

    /// The per-user registry: records in the [`FileStore`](crate::state::FileStore) at
    /// [`state_dir`](crate::state::state_dir), output under its `jobs`
    /// folder; one per process.
    ///
    /// # Errors
    /// `missing_context` when neither `XDG_STATE_HOME` nor `HOME` gives a folder.
    pub fn shared() -> Result<Self, ToolError> {
        static SHARED: OnceLock<Option<JobRegistry>> = OnceLock::new();
        SHARED
            .get_or_init(|| {
                let dir = crate::state::state_dir()?;
                let store = crate::state::shared_store()?;
                Some(Self::new(store, dir.join("job-output")))
            })
            .clone()
            .ok_or_else(|| {
                ToolError::new(
                    ErrorKind::MissingContext,
                    "Background jobs need a private state folder and neither XDG_STATE_HOME nor \
                     HOME names one; set one of them, or give the context a JobRegistry.",
                )
            })
    }

    /// The context's registry (`ToolContext::with_state(JobRegistry)`),
    /// else [`shared`](Self::shared).
    ///
    /// # Errors
    /// As [`shared`](Self::shared).
    pub fn of_context(ctx: &crate::tool::context::ToolContext) -> Result<Self, ToolError> {
        match ctx.state::<Self>() {
            Some(r) => Ok((*r).clone()),
            None => Self::shared(),
        }
    }

    /// The key of `trace`'s jobs in `workspace` (an absolute path). Calls
    /// without a trace id share the owner `untraced`.
    ///
    /// # Errors
    /// `invalid_arguments` when the trace id or workspace breaks [`StateKey::new`]'s rules.
    pub fn key(trace: Option<&str>, workspace: &Path) -> Result<StateKey, ToolError> {
        StateKey::new(STATE_SPACE, trace.unwrap_or("untraced"), workspace)
            .map_err(|e| ToolError::new(ErrorKind::InvalidArguments, e.to_string()))
    }

    /// Starts a job the caller runs itself (a sub-agent): registered with
    /// [`Control::Local`], writer this process; returns it with the token
    /// that [`kill`](Self::kill) cancels. The caller writes through
    /// [`Job::writer`], records the end, and calls [`forget_local`](Self::forget_local).
    ///
    /// # Errors
    /// As [`start`](Self::start).
    pub fn start_local(
        &self,
        key: &StateKey,
        kind: &str,
        title: &str,
    ) -> Result<(Job, CancellationToken), ToolError> {
        let mut job = self.start(key, kind, title, Control::Local, self.limits.lifetime)?;
        let token = CancellationToken::new();
        if let Ok(mut map) = local_jobs().lock() {
            map.insert(job.record.id.clone(), token.clone());
        }
        job.record.writer = ProcessStamp::current();
        self.update(key, job.id(), |r| r.writer = job.record.writer)?;
        if let Some(writer) = job.record.writer {
            self.note_writer(job.id(), writer);
        }
        Ok((job, token))
    }

    /// Forgets the cancellation token of an in-process job that ended.
    pub fn forget_local(id: &str) {
        if let Ok(mut map) = local_jobs().lock() {
            map.remove(id);
        }
    }

    /// Registers a new job of `kind` for `key`'s trace, to run at most
    /// `lifetime` (capped at [`JobLimits::lifetime`]): checks the running
    /// cap, forgets the oldest ended records past [`JobLimits::max_records`],
    /// makes the job's folder and empty output file, and stores the record
    /// (no writer yet: [`set_writer`](Self::set_writer)).
    ///
    /// # Errors
    /// `denied` at the trace's running cap or at the folder's
    /// ([`JobLimits::max_running_total`]; the message names the cap and how
    /// to free a slot); `failed` when the folder or store cannot be written.
    pub fn start(
        &self,
        key: &StateKey,
        kind: &str,
        title: &str,
        control: Control,
        lifetime: Duration,
    ) -> Result<Job, ToolError> {
        let id = new_id()?;
        let capacity = self.limits.output_bytes.clamp(1, MAX_OUTPUT_CAPACITY);
        crate::truncate::ensure_private_dir(&self.dir)
            .map_err(|e| failed(format!("The jobs folder is unusable: {e}")))?;
        // Counting and creating the folder under one lock, so two processes
        // starting at once cannot both take the last slot.
        let starting = self.lock_starts()?;
        let running = self.running_in_folder();
        if running >= self.limits.max_running_total {
            return Err(ToolError::new(
                ErrorKind::Denied,
                format!(
                    "{running} background jobs are running here, across every trace and process, \
                     the most this host runs at once ({}); nothing was started. End one of yours \
                     with job_kill, or wait for jobs to finish, then try again.",
                    self.limits.max_running_total
                ),
            ));
        }
        let dir = self.dir.join(&id);
        crate::truncate::ensure_private_dir(&dir)
            .map_err(|e| failed(format!("The job's folder is unusable: {e}")))?;
        let output = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(dir.join("output"))
            .and_then(|f| ring::init(&f, capacity).map(|()| f))
            .map_err(|e| failed(format!("Cannot create the job's output file: {e}")))?;
        drop(output);
        drop(starting);
        let title =
            tool_rules::text::clip(title.trim(), tool_rules::text::Clip::chars(MAX_TITLE_CHARS))
                .into_owned();
        let record = JobRecord {
            id: id.clone(),
            kind: kind.to_owned(),
            title,
            started_ms: now_ms(),
            lifetime_secs: lifetime.min(self.limits.lifetime).as_secs().max(1),
            writer: None,
            control,
            read_offset: 0,
            host: self.shared.then(|| mirror::host_id().to_owned()),
            stop_requested: false,
        };
        if let Err(e) = self.reserve(key, &id) {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(e);
        }
        let text = serde_json::to_string(&record).map_err(|e| failed(e.to_string()))?;
        if let Err(e) = self.store.put(key, &id, &text) {
            let _ = std::fs::remove_dir_all(&dir);
            return Err(store_error(&e));
        }
        if self.shared {
            if let Err(e) = self.first_mirror(key, &record) {
                let _ = self.store.delete(key, &id);
                let _ = std::fs::remove_dir_all(&dir);
                return Err(e);
            }
            mirror::follow(self, key, &id);
        }
        if let Ok(mut started) = started_here().lock() {
            started.retain(|(root, _, id)| {
                std::fs::File::open(root.join(id).join("output"))
                    .ok()
                    .and_then(|f| ring::header(f).ok())
                    .is_some_and(|h| h.end.is_none())
            });
            started.push((self.dir.clone(), key.clone(), id));
        }
        Ok(Job {
            record,
            dir,
            capacity,
        })
    }

    /// Stops every job this process started through this registry (the
    /// same output folder) that still runs, as [`kill`](Self::kill) does,
    /// all at once (so within about [`KILL_WAIT`] in all); returns how many
    /// were running. For a host whose jobs nobody could reach once it is
    /// gone: `tool serve` calls it when it stops, since each MCP session
    /// has a trace id of its own that no later process can name. A `tool
    /// call` does not: its jobs are read by later calls of the same trace.
    pub fn stop_started_here(&self) -> usize {
        self.stop_started_here_if(|_| true)
    }

    /// Stops, as [`stop_started_here`](Self::stop_started_here) does, only
    /// the jobs this process started for `owner` (a trace or session id,
    /// [`StateKey::owner`]); returns how many were running. An MCP server
    /// calls it when a session ends (closed by its client or idle past its
    /// timeout), since nobody can name that session's trace afterwards.
    pub fn stop_owner_started_here(&self, owner: &str) -> usize {
        self.stop_started_here_if(|key| key.owner() == owner)
    }

    fn stop_started_here_if(&self, owned: impl Fn(&StateKey) -> bool) -> usize {
        let mine: Started = match started_here().lock() {
            Ok(mut started) => {
                let (mine, rest) = std::mem::take(&mut *started)
                    .into_iter()
                    .partition(|(root, key, _)| *root == self.dir && owned(key));
                *started = rest;
                mine
            }
            Err(_) => return 0,
        };
        std::thread::scope(|scope| {
            let stops: Vec<_> = mine
                .iter()
                .map(|(_, key, id)| {
                    scope.spawn(move || {
                        let running = self
                            .view(key, id)
                            .is_ok_and(|v| v.status == JobStatus::Running);
                        if running {
                            let _ = self.kill(key, id);
                        }
                        running
                    })
                })
                .collect();
            stops
                .into_iter()
                .map(|s| matches!(s.join(), Ok(true)))
                .filter(|stopped| *stopped)
                .count()
        })
    }

    /// An exclusive `flock` on `<jobs folder>/.starting`, held while a start
    /// counts the running jobs and creates its own folder.
    fn lock_starts(&self) -> Result<File, ToolError> {
        let path = self.dir.join(".starting");
        let lock = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .open(&path)
            .map_err(|e| failed(format!("Cannot open the jobs folder's lock: {e}")))?;
        rustix::fs::flock(&lock, rustix::fs::FlockOperation::LockExclusive)
            .map_err(|e| failed(format!("Cannot lock the jobs folder: {e}")))?;
        Ok(lock)
    }

    /// Jobs of this folder that may still be running, whoever started them:
    /// an output file with no end recorded, written within the lifetime cap,
    /// whose writer process (`<job folder>/writer`) is alive; a job with no
    /// writer noted yet counts for [`WRITERLESS_GRACE`] after its start (its
    /// starter is between [`start`](Self::start) and
    /// [`set_writer`](Self::set_writer)). A job whose writer died without
    /// recording its end (a `SIGKILL`ed host) no longer counts at once.
    fn running_in_folder(&self) -> usize {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return 0;
        };
        let since = SystemTime::now()
            .checked_sub(self.limits.lifetime)
            .unwrap_or(UNIX_EPOCH);
        entries
            .flatten()
            .filter(|e| e.file_name().to_str().is_some_and(is_job_id))
            .filter(|e| {
                let Ok(file) = File::open(e.path().join("output")) else {
                    return false;
                };
                let modified = file.metadata().and_then(|m| m.modified()).ok();
                let recent = modified.is_some_and(|t| t >= since);
                if !recent || !ring::header(&file).is_ok_and(|h| h.end.is_none()) {
                    return false;
                }
                match std::fs::read_to_string(e.path().join("writer")) {
                    Ok(text) => writer_alive(&text),
                    Err(_) => {
                        modified.is_some_and(|t| t.elapsed().unwrap_or_default() < WRITERLESS_GRACE)
                    }
                }
            })
            .count()
    }

    /// Adds `id` to the trace's index under the caps (compare-and-set, so
    /// concurrent starts from several processes never pass the cap).
    fn reserve(&self, key: &StateKey, id: &str) -> Result<(), ToolError> {
        for _ in 0..64 {
            let old = self.store.get(key, "index").map_err(|e| store_error(&e))?;
            let mut ids: Vec<String> = old
                .as_deref()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or_default();
            let views: Vec<Option<JobView>> = ids.iter().map(|i| self.view(key, i).ok()).collect();
            let running = views
                .iter()
                .flatten()
                .filter(|v| v.status == JobStatus::Running)
                .count();
            if running >= self.limits.max_running {
                return Err(ToolError::new(
                    ErrorKind::Denied,
                    format!(
                        "{running} background jobs of this trace are running, the most one trace may \
                         run at once ({}); nothing was started. End one with job_kill, or wait for \
                         one to finish (job_output with wait), then try again.",
                        self.limits.max_running
                    ),
                ));
            }
            // Forget records that no longer exist, then the oldest ended ones.
            let mut keep: Vec<(String, bool)> = ids
                .drain(..)
                .zip(views)
                .filter_map(|(i, v)| v.map(|v| (i, v.status == JobStatus::Running)))
                .collect();
            let mut forget = Vec::new();
            while keep.len() >= self.limits.max_records.max(1) {
                match keep.iter().position(|(_, running)| !running) {
                    Some(at) => forget.push(keep.remove(at).0),
                    None => break,
                }
            }
            let mut next: Vec<String> = keep.into_iter().map(|(i, _)| i).collect();
            next.push(id.to_owned());
            let text = serde_json::to_string(&next).map_err(|e| failed(e.to_string()))?;
            if self
                .store
                .compare_and_set(key, "index", old.as_deref(), Some(&text))
                .map_err(|e| store_error(&e))?
            {
                for gone in forget {
                    let _ = self.store.delete(key, &gone);
                    let _ = self.store.delete(key, &mirror::field(&gone));
                    if is_job_id(&gone) {
                        let _ = std::fs::remove_dir_all(self.dir.join(&gone));
                    }
                }
                return Ok(());
            }
        }
        Err(failed(
            "Could not register the job: the trace's job index kept changing; try again.",
        ))
    }

    /// Records the process that writes the job's output (a supervisor).
    ///
    /// # Errors
    /// `invalid_arguments` for an unknown id; `failed` when the store cannot be written.
    pub fn set_writer(
        &self,
        key: &StateKey,
        id: &str,
        writer: ProcessStamp,
    ) -> Result<(), ToolError> {
        self.update(key, id, |r| r.writer = Some(writer))?;
        self.note_writer(id, writer);
        Ok(())
    }

    /// Writes `<job folder>/writer` (`pid start`), which the folder-wide
    /// running count reads to tell a live job from one whose writer died
    /// without recording its end. Best effort: without the file the job
    /// counts only while it is young ([`WRITERLESS_GRACE`]).
    fn note_writer(&self, id: &str, writer: ProcessStamp) {
        let path = self.dir.join(id).join("writer");
        let _ = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(path)
            .and_then(|mut f| {
                use std::io::Write as _;
                writeln!(f, "{} {}", writer.pid, writer.start)
            });
    }

    fn record(&self, key: &StateKey, id: &str) -> Result<(JobRecord, String), ToolError> {
        let unknown = || {
            ToolError::new(
                ErrorKind::InvalidArguments,
                format!(
                    "No job `{}` in this trace. Job ids look like `job-` and 32 hex digits and are \
                     returned by the call that started the job (metadata.job_id); job_list shows \
                     this trace's jobs.",
                    tool_rules::text::clip(id, tool_rules::text::Clip::chars(40))
                ),
            )
        };
        if !is_job_id(id) {
            return Err(unknown());
        }
        let text = self.store.get(key, id).map_err(|e| store_error(&e))?;
        let text = text.ok_or_else(unknown)?;
        let record: JobRecord = serde_json::from_str(&text)
            .map_err(|e| failed(format!("The job's record is unreadable: {e}")))?;
        Ok((record, text))
    }

    fn update(
        &self,
        key: &StateKey,
        id: &str,
        change: impl Fn(&mut JobRecord),
    ) -> Result<(), ToolError> {
        for _ in 0..64 {
            let (mut record, old) = self.record(key, id)?;
            change(&mut record);
            let new = serde_json::to_string(&record).map_err(|e| failed(e.to_string()))?;
            if self
                .store
                .compare_and_set(key, id, Some(&old), Some(&new))
                .map_err(|e| store_error(&e))?
            {
                return Ok(());
            }
        }
        Err(failed(
            "Could not update the job's record: it kept changing; try again.",
        ))
    }

    fn open_output(&self, id: &str) -> Result<File, ToolError> {
        File::open(self.dir.join(id).join("output"))
            .map_err(|e| failed(format!("The job's output file is gone or unreadable: {e}")))
    }

    fn view_of(&self, record: JobRecord, header: ring::RingHeader) -> JobView {
        let (status, exit_code, signal) = match header.end {
            Some((end, value)) => {
                let status = match end {
                    JobEnd::Exited => JobStatus::Exited,
                    JobEnd::Killed => JobStatus::Killed,
                    JobEnd::Expired => JobStatus::Expired,
                    JobEnd::Failed => JobStatus::Failed,
                    JobEnd::HostExited => JobStatus::HostExited,
                };
                let (code, signal) = if record.kind == "shell" {
                    // A raw wait status (wait(2)): low 7 bits the signal, else the code above them.
                    if value & 0x7f == 0 {
                        (Some((value >> 8) & 0xff), None)
                    } else {
                        (None, Some(value & 0x7f))
                    }
                } else {
                    (Some(value), None)
                };
                (status, code, signal)
            }
            None => {
                let local = local_jobs()
                    .lock()
                    .is_ok_and(|m| m.contains_key(&record.id));
                let alive = local || record.writer.is_some_and(|w| w.is_alive());
                // A job whose writer was never recorded gets a minute to start.
                let starting =
                    record.writer.is_none() && now_ms().saturating_sub(record.started_ms) < 60_000;
                if alive || starting {
                    (JobStatus::Running, None, None)
                } else {
                    // The header was read before the liveness check: a writer
                    // that recorded its end and exited in between (a job_kill
                    // answered) looks gone without an end. It records the end
                    // before it exits, so a header read now, after it was seen
                    // gone, holds that end if there is one.
                    let again = self
                        .open_output(&record.id)
                        .ok()
                        .and_then(|f| ring::header(f).ok())
                        .filter(|h| h.end.is_some());
                    if let Some(h) = again {
                        return self.view_of(record, h);
                    }
                    (JobStatus::Lost, None, None)
                }
            }
        };
        JobView {
            record,
            status,
            exit_code,
            signal,
            total_bytes: header.total,
        }
    }

    /// The job `id` of `key`'s trace, with its status now.
    ///
    /// # Errors
    /// `invalid_arguments` for an id this trace does not have; `failed`
    /// when its files are unreadable.
    pub fn view(&self, key: &StateKey, id: &str) -> Result<JobView, ToolError> {
        let (record, _) = self.record(key, id)?;
        if self.is_remote(&record) {
            return self.remote_view(key, record).map(|(view, _)| view);
        }
        let header = ring::header(self.open_output(id)?)
            .map_err(|e| failed(format!("The job's output file is unreadable: {e}")))?;
        Ok(self.view_of(record, header))
    }

    /// Every job of `key`'s trace, oldest first.
    ///
    /// # Errors
    /// As [`view`](Self::view) for the store.
    pub fn list(&self, key: &StateKey) -> Result<Vec<JobView>, ToolError> {
        let index = self.store.get(key, "index").map_err(|e| store_error(&e))?;
        let ids: Vec<String> = index
            .as_deref()
            .and_then(|t| serde_json::from_str(t).ok())
            .unwrap_or_default();
        Ok(ids.iter().filter_map(|i| self.view(key, i).ok()).collect())
    }

    /// Job `id` of `key`'s trace with the output its ring holds, from the
    /// oldest kept byte, at most `max_bytes`; unlike [`read`](Self::read) it
    /// neither waits nor moves the read offset, so a caller that keeps one
    /// whole value in the output (an MCP task's result) reads it every time.
    ///
    /// # Errors
    /// As [`view`](Self::view).
    pub fn peek(&self, key: &StateKey, id: &str, max_bytes: usize) -> Result<JobPeek, ToolError> {
        let (record, _) = self.record(key, id)?;
        if self.is_remote(&record) {
            let (view, mirror) = self.remote_view(key, record)?;
            let got = Self::remote_read(mirror.as_ref(), 0, max_bytes.max(1));
            return Ok(JobPeek {
                updated_ms: Self::remote_updated_ms(mirror.as_ref(), &view.record),
                view,
                bytes: got.bytes,
                dropped: got.dropped,
            });
        }
        let file = self.open_output(id)?;
        let updated_ms = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(record.started_ms, |d| {
                u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
            });
        let got = ring::read_since(&file, 0, max_bytes.max(1))
            .map_err(|e| failed(format!("The job's output file is unreadable: {e}")))?;
        Ok(JobPeek {
            view: self.view_of(record, got.header),
            bytes: got.bytes,
            dropped: got.dropped,
            updated_ms,
        })
    }

    /// Output of job `id` since the last read, at most `max_bytes`: as
    /// [`read_page`](Self::read_page) with [`PageLimits::bytes`].
    ///
    /// # Errors
    /// As [`view`](Self::view).
    pub fn read(
        &self,
        key: &StateKey,
        id: &str,
        max_bytes: usize,
        wait: Duration,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<JobRead, ToolError> {
        self.read_page(key, id, &PageLimits::bytes(max_bytes), wait, cancelled)
    }

    /// Output of job `id` since the last read, one page as `limits` cuts it,
    /// waiting up to `wait` (capped at [`MAX_WAIT`]) for new output or the
    /// end when there is none yet; `cancelled` is checked every 50 ms.
    /// Advances the record's read offset past what is returned.
    ///
    /// While the job runs, an unfinished last line of at most
    /// [`HOLD_BACK_BYTES`] is held back when whole lines come before it;
    /// when it is all there is and the wait is over, it is returned and
    /// [`JobRead::unfinished`] says so (a prompt, a progress bar). A page
    /// followed by more output never ends inside a UTF-8 character, nor
    /// inside (or at the possible start of) a secret value of
    /// [`PageLimits::masker`]: those bytes open the next page.
    ///
    /// # Errors
    /// As [`view`](Self::view).
    pub fn read_page(
        &self,
        key: &StateKey,
        id: &str,
        limits: &PageLimits,
        wait: Duration,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<JobRead, ToolError> {
        let until = Instant::now() + wait.min(MAX_WAIT);
        // Checks ownership before the file is opened; another host's job
        // is read from its mirror in the store.
        let (first, _) = self.record(key, id)?;
        let file = if self.is_remote(&first) {
            None
        } else {
            Some(self.open_output(id)?)
        };
        loop {
            let (record, _) = self.record(key, id)?;
            let (view, got) = match &file {
                Some(file) => {
                    let got = ring::read_since(file, record.read_offset, limits.max_bytes.max(1))
                        .map_err(|e| {
                        failed(format!("The job's output file is unreadable: {e}"))
                    })?;
                    (self.view_of(record, got.header), got)
                }
                None => {
                    let offset = record.read_offset;
                    let (view, mirror) = self.remote_view(key, record)?;
                    let got = Self::remote_read(mirror.as_ref(), offset, limits.max_bytes.max(1));
                    (view, got)
                }
            };
            let running = view.status == JobStatus::Running;
            let waited_enough = Instant::now() >= until || cancelled();
            let mut bytes = got.bytes;
            let follows = |len: usize| running || got.start + (len as u64) < view.total_bytes;
            // At most `max_lines` lines.
            if let Some(at) = bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .nth(limits.max_lines.max(1) - 1)
                .map(|(i, _)| i)
            {
                bytes.truncate(at + 1);
            }
            let mut unfinished = false;
            if running {
                // Hold back an unfinished last line (bounded) when whole
                // lines precede it; shown alone once the wait is over.
                if let Some(last_nl) = bytes.iter().rposition(|&b| b == b'\n') {
                    if bytes.len() - last_nl - 1 <= HOLD_BACK_BYTES {
                        bytes.truncate(last_nl + 1);
                    }
                } else if bytes.len() <= HOLD_BACK_BYTES
                    && got.start + (bytes.len() as u64) == view.total_bytes
                {
                    if waited_enough {
                        unfinished = true;
                    } else {
                        bytes.clear();
                    }
                }
            }
            // A page cut inside a character leaves the character's bytes
            // for the next read, whole (more output follows the page).
            if follows(bytes.len()) {
                let keep = bytes.len() - incomplete_utf8_tail(&bytes);
                // Never down to nothing: a page too small for one character
                // still moves on.
                if keep > 0 {
                    bytes.truncate(keep);
                }
            }
            // Nor inside a secret value, nor at what may be its start: the
            // next page shows it whole, so it is masked whole.
            if let Some(masker) = &limits.masker
                && follows(bytes.len())
            {
                let keep = masker.page_len(&bytes);
                if keep > 0 || bytes.len() < limits.max_bytes {
                    bytes.truncate(keep);
                }
            }
            let unfinished = unfinished && !bytes.is_empty();
            // After dropped output a page may start inside a character: its
            // continuation bytes are counted as dropped, never shown as U+FFFD.
            let mut skipped = 0;
            if got.dropped > 0 {
                skipped = bytes
                    .iter()
                    .take(3)
                    .take_while(|&&b| b & 0xC0 == 0x80)
                    .count();
            }
            if !bytes.is_empty() || !running || waited_enough {
                let end = got.start + bytes.len() as u64;
                let moved = end > view.record.read_offset;
                if moved {
                    self.update(key, id, |r| r.read_offset = r.read_offset.max(end))?;
                }
                let mut view = view;
                view.record.read_offset = view.record.read_offset.max(end);
                return Ok(JobRead {
                    pending: view.total_bytes.saturating_sub(end),
                    text: String::from_utf8_lossy(&bytes[skipped..]).into_owned(),
                    dropped: got.dropped + skipped as u64,
                    unfinished,
                    view,
                });
            }
            // Another host's mirror changes every MIRROR_INTERVAL at most.
            std::thread::sleep(Duration::from_millis(if file.is_some() { 50 } else { 250 }));
        }
    }

    /// Stops job `id`: writes to its control FIFO (or cancels its token),
    /// waits up to [`KILL_WAIT`] for the end to be recorded, then stops the
    /// writer process itself (`SIGKILL`, when it is still the same process)
    /// and records the end as killed. A job that already ended is returned
    /// as it is. A job another host runs (a registry
    /// [`shared_by_hosts`](Self::shared_by_hosts)) is stopped by that host:
    /// the record asks it to, and the call waits up to
    /// [`mirror::REMOTE_KILL_WAIT`] for the end in the job's mirror.
    ///
    /// # Errors
    /// As [`view`](Self::view); `failed` for an in-process job of another
    /// live process (only its host can stop it), or another host's job
    /// whose end was not reported in time.
    pub fn kill(&self, key: &StateKey, id: &str) -> Result<JobView, ToolError> {
        let view = self.view(key, id)?;
        if view.status != JobStatus::Running {
            return Ok(view);
        }
        if self.is_remote(&view.record) {
            return self.kill_remote(key, id);
        }
        self.kill_here(key, id)
    }

    /// [`kill`](Self::kill) of a job this host runs.
    fn kill_here(&self, key: &StateKey, id: &str) -> Result<JobView, ToolError> {
        let view = self.view(key, id)?;
        if view.status != JobStatus::Running {
            return Ok(view);
        }
        match view.record.control {
            Control::Fifo => {
                let path = self.dir.join(id).join("control");
                // O_NONBLOCK: a FIFO nobody reads fails with ENXIO instead of blocking.
                if let Ok(fifo) = rustix::fs::open(
                    &path,
                    rustix::fs::OFlags::WRONLY
                        | rustix::fs::OFlags::NONBLOCK
                        | rustix::fs::OFlags::CLOEXEC
                        | rustix::fs::OFlags::NOFOLLOW,
                    rustix::fs::Mode::empty(),
                ) {
                    let _ = rustix::io::write(&fifo, b"k");
                }
            }
            Control::Local => {
                let token = local_jobs().lock().ok().and_then(|m| m.get(id).cloned());
                match token {
                    Some(t) => t.cancel(),
                    None => {
                        return Err(failed(format!(
                            "Job {id} runs inside another process ({}) that is still alive; only \
                             that process can stop it.",
                            view.record.writer.map_or(0, |w| w.pid)
                        )));
                    }
                }
            }
        }
        let until = Instant::now() + KILL_WAIT;
        loop {
            let now = self.view(key, id)?;
            if now.status != JobStatus::Running {
                return Ok(now);
            }
            if Instant::now() >= until {
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        // The writer did not answer: stop it, and record the end for it.
        if view.record.control == Control::Fifo
            && let Some(w) = view.record.writer
            && w.is_alive()
            && let Some(pid) = rustix::process::Pid::from_raw(w.pid)
        {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
        if let Ok(f) = std::fs::OpenOptions::new()
            .write(true)
            .open(self.dir.join(id).join("output"))
        {
            let _ = ring::set_end(&f, JobEnd::Killed, 9);
        }
        self.view(key, id)
    }
}

/// How many bytes at the end of `bytes` are the start of a UTF-8 character
/// whose remaining bytes are not there yet (0 to 3); 0 when the text ends
/// on a whole character or in bytes that are not UTF-8 at all.
fn incomplete_utf8_tail(bytes: &[u8]) -> usize {
    for back in 1..=bytes.len().min(3) {
        let b = bytes[bytes.len() - back];
        if b & 0xC0 == 0x80 {
            continue; // a continuation byte: look further back
        }
        let width = match b {
            0xC2..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF4 => 4,
            _ => return 0,
        };
        return if back < width { back } else { 0 };
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn registry(dir: &Path) -> JobRegistry {
        JobRegistry::new(
            Arc::new(FileStore::new(dir.join("state"))),
            dir.join("jobs"),
        )
    }

    #[test]
    fn the_running_cap_refuses_the_next_start_and_frees_a_slot_when_one_ends() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path()).with_limits(JobLimits::new(3, DEFAULT_LIFETIME));
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let started: Vec<_> = (0..3)
            .map(|_| jobs.start_local(&key, "agent", "x").unwrap().0)
            .collect();
        let err = jobs.start_local(&key, "agent", "x").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Denied);
        assert!(
            err.message
                .contains("3 background jobs of this trace are running"),
            "{err}"
        );
        assert!(err.message.contains("job_kill"), "{err}");
        started[0]
            .writer()
            .unwrap()
            .finish(JobEnd::Exited, 0)
            .unwrap();
        assert!(jobs.start_local(&key, "agent", "x").is_ok());
        // Another trace has its own cap.
        let other = JobRegistry::key(Some("u"), dir.path()).unwrap();
        assert!(jobs.start_local(&other, "agent", "x").is_ok());
        assert_eq!(jobs.list(&key).unwrap().len(), 4);
    }

    #[test]
    fn the_folder_cap_counts_every_trace_and_every_registry_of_the_folder() {
        let dir = tempfile::tempdir().unwrap();
        let limits = JobLimits {
            max_running_total: 4,
            ..JobLimits::default()
        };
        // Two registries on one folder stand for two processes.
        let a = registry(dir.path()).with_limits(limits);
        let b = registry(dir.path()).with_limits(limits);
        let mut started = Vec::new();
        for (n, jobs) in [&a, &b, &a, &b].into_iter().enumerate() {
            let key = JobRegistry::key(Some(&format!("t{n}")), dir.path()).unwrap();
            started.push(jobs.start_local(&key, "agent", "x").unwrap().0);
        }
        let fresh = JobRegistry::key(Some("t-new"), dir.path()).unwrap();
        let err = b.start_local(&fresh, "agent", "x").unwrap_err();
        assert_eq!(err.kind, ErrorKind::Denied);
        assert!(
            err.message
                .contains("4 background jobs are running here, across every trace"),
            "{err}"
        );
        assert!(err.message.contains("(4)"), "{err}");
        started[1]
            .writer()
            .unwrap()
            .finish(JobEnd::Exited, 0)
            .unwrap();
        assert!(a.start_local(&fresh, "agent", "x").is_ok());
        assert_eq!(
            a.start_local(&fresh, "agent", "x").unwrap_err().kind,
            ErrorKind::Denied
        );
        // A job whose writer died without recording its end (a SIGKILLed
        // host) frees its slot at once, not a lifetime later (review 26 F7).
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        let stamp = ProcessStamp::of(pid).unwrap();
        a.set_writer(
            &JobRegistry::key(Some("t0"), dir.path()).unwrap(),
            started[0].id(),
            stamp,
        )
        .unwrap();
        assert_eq!(
            a.start_local(&fresh, "agent", "x").unwrap_err().kind,
            ErrorKind::Denied,
            "its writer still runs"
        );
        child.kill().unwrap();
        child.wait().unwrap();
        assert!(a.start_local(&fresh, "agent", "x").is_ok());
    }

    #[test]
    fn peek_reads_the_whole_kept_output_every_time_without_moving_the_offset() {
        let dir = tempfile::tempdir().unwrap();
        let limits = JobLimits {
            output_bytes: 8,
            ..JobLimits::default()
        };
        let jobs = registry(dir.path()).with_limits(limits);
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let (job, _) = jobs.start_local(&key, "mcp-task", "x").unwrap();
        let mut w = job.writer().unwrap();
        w.write(b"{\"a\":1}").unwrap();
        w.finish(JobEnd::Exited, 0).unwrap();
        for _ in 0..2 {
            let p = jobs.peek(&key, job.id(), 100).unwrap();
            assert_eq!(p.bytes, b"{\"a\":1}");
            assert_eq!((p.dropped, p.view.status), (0, JobStatus::Exited));
            assert!(p.updated_ms >= p.view.record.started_ms);
        }
        // `max_bytes` bounds what is read; past the ring's capacity the
        // oldest bytes are gone and counted.
        assert_eq!(jobs.peek(&key, job.id(), 3).unwrap().bytes, b"{\"a");
        let (big, _) = jobs.start_local(&key, "mcp-task", "y").unwrap();
        big.writer().unwrap().write(b"0123456789").unwrap();
        let p = jobs.peek(&key, big.id(), 100).unwrap();
        assert_eq!((p.bytes.as_slice(), p.dropped), (&b"23456789"[..], 2));
        JobRegistry::forget_local(job.id());
        JobRegistry::forget_local(big.id());
        // Another trace does not see it.
        let other = JobRegistry::key(Some("u"), dir.path()).unwrap();
        assert!(jobs.peek(&other, job.id(), 100).is_err());
    }

    #[test]
    fn pages_never_cut_a_character_in_two() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let (job, _) = jobs.start_local(&key, "agent", "x").unwrap();
        let mut w = job.writer().unwrap();
        // 'a' then 20 three-byte euro signs: 61 bytes, pages of 8 bytes.
        let text = format!("a{}\n", "€".repeat(20));
        w.write(text.as_bytes()).unwrap();
        w.finish(JobEnd::Exited, 0).unwrap();
        let mut seen = String::new();
        for _ in 0..30 {
            let r = jobs
                .read(&key, job.id(), 8, Duration::ZERO, &|| false)
                .unwrap();
            assert!(!r.text.contains('\u{fffd}'), "{:?}", r.text);
            seen.push_str(&r.text);
            if r.pending == 0 {
                break;
            }
        }
        assert_eq!(seen, text);
        JobRegistry::forget_local(job.id());
        assert_eq!(incomplete_utf8_tail("a€".as_bytes()), 0);
        assert_eq!(incomplete_utf8_tail(&"a€".as_bytes()[..3]), 2);
        assert_eq!(incomplete_utf8_tail(&"😀".as_bytes()[..3]), 3);
        assert_eq!(incomplete_utf8_tail(b"\xff\x80"), 0);
    }

    fn api_masker() -> StreamMasker {
        let store = crate::SecretStore::new()
            .with_secret("api", "Zq9SuperSecretValue42")
            .unwrap();
        StreamMasker::for_context(&crate::ToolContext::new().with_secrets(store)).unwrap()
    }

    /// Review 27 F21: a value straddling a page cut came out in two halves,
    /// each unmasked. With the reader's masker no page cuts into one.
    #[test]
    fn no_page_ends_inside_a_secret_value() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let secret = "Zq9SuperSecretValue42";
        for running in [false, true] {
            for lead in 0..40 {
                let (job, _) = jobs.start_local(&key, "agent", "x").unwrap();
                let mut w = job.writer().unwrap();
                let text = format!("{}{secret}{}\n", "a".repeat(lead), "b".repeat(30));
                w.write(text.as_bytes()).unwrap();
                if !running {
                    w.finish(JobEnd::Exited, 0).unwrap();
                }
                let limits = PageLimits::bytes(32).with_masker(Some(api_masker()));
                let mut seen = String::new();
                for _ in 0..20 {
                    let r = jobs
                        .read_page(&key, job.id(), &limits, Duration::ZERO, &|| false)
                        .unwrap();
                    // Each page is masked on its own, as job_output does.
                    let mut page = Vec::new();
                    let mut m = api_masker();
                    m.push(r.text.as_bytes(), &mut page);
                    m.finish(&mut page);
                    let page = String::from_utf8(page).unwrap();
                    assert!(!page.contains("Zq9S") && !page.contains("e42"), "{page:?}");
                    seen.push_str(&page);
                    if r.pending == 0 {
                        break;
                    }
                }
                let expected = format!(
                    "{}<secret>api</secret>{}\n",
                    "a".repeat(lead),
                    "b".repeat(30)
                );
                assert_eq!(seen, expected, "lead {lead}, running {running}");
                w.finish(JobEnd::Exited, 0).unwrap();
                JobRegistry::forget_local(job.id());
            }
        }
    }

    /// Review 27 F24: a running job's unfinished last line (a prompt) was
    /// held back and the read said there was no new output.
    #[test]
    fn an_unfinished_line_alone_is_shown_once_the_wait_is_over() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let (job, _) = jobs.start_local(&key, "agent", "x").unwrap();
        let mut w = job.writer().unwrap();
        w.write(b"Continue? [y/N] ").unwrap();
        let started = Instant::now();
        let r = jobs
            .read(&key, job.id(), 100, Duration::from_millis(300), &|| false)
            .unwrap();
        assert!(started.elapsed() >= Duration::from_millis(300));
        assert_eq!(
            (r.text.as_str(), r.unfinished, r.pending),
            ("Continue? [y/N] ", true, 0)
        );
        // Whole lines before it: they come first, the rest waits.
        w.write(b"y\ndone\nstep 3 of 9").unwrap();
        let r = jobs
            .read(&key, job.id(), 100, Duration::ZERO, &|| false)
            .unwrap();
        assert_eq!(
            (r.text.as_str(), r.unfinished, r.pending),
            ("y\ndone\n", false, 11)
        );
        JobRegistry::forget_local(job.id());
    }

    /// Review 27 F5: a page holds at most `max_lines` lines.
    #[test]
    fn a_page_holds_at_most_its_lines() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let (job, _) = jobs.start_local(&key, "agent", "x").unwrap();
        let mut w = job.writer().unwrap();
        w.write(b"1\n2\n3\n4\n5\n").unwrap();
        w.finish(JobEnd::Exited, 0).unwrap();
        let limits = PageLimits::bytes(100).with_max_lines(2);
        let read = |jobs: &JobRegistry| {
            jobs.read_page(&key, job.id(), &limits, Duration::ZERO, &|| false)
                .unwrap()
        };
        let r = read(&jobs);
        assert_eq!((r.text.as_str(), r.pending), ("1\n2\n", 6));
        assert_eq!(read(&jobs).text, "3\n4\n");
        assert_eq!((read(&jobs).text.as_str(), read(&jobs).pending), ("5\n", 0));
        JobRegistry::forget_local(job.id());
    }

    /// Review 27 F15: the jobs a host started are stopped when it says so;
    /// another registry's are not.
    #[test]
    fn stop_started_here_stops_this_registrys_running_jobs() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let other = registry(&dir.path().join("other"));
        let key = JobRegistry::key(Some("mcp-session-1"), dir.path()).unwrap();
        let mut workers = Vec::new();
        let mut ids = Vec::new();
        for r in [&jobs, &jobs, &other] {
            let (job, token) = r.start_local(&key, "agent", "x").unwrap();
            let mut w = job.writer().unwrap();
            ids.push(job.id().to_owned());
            workers.push(std::thread::spawn(move || {
                let until = Instant::now() + Duration::from_secs(20);
                while !token.is_cancelled() && Instant::now() < until {
                    std::thread::sleep(Duration::from_millis(5));
                }
                w.finish(JobEnd::Killed, 130).unwrap();
            }));
        }
        // One ended on its own before: not counted.
        let (done, _) = jobs.start_local(&key, "agent", "y").unwrap();
        done.writer().unwrap().finish(JobEnd::Exited, 0).unwrap();
        assert_eq!(jobs.stop_started_here(), 2);
        for id in &ids[..2] {
            assert_eq!(jobs.view(&key, id).unwrap().status, JobStatus::Killed);
        }
        assert_eq!(
            other.view(&key, &ids[2]).unwrap().status,
            JobStatus::Running
        );
        assert_eq!(jobs.stop_started_here(), 0);
        assert_eq!(other.stop_started_here(), 1);
        for w in workers {
            w.join().unwrap();
        }
        for id in ids.iter().chain([&done.id().to_owned()]) {
            JobRegistry::forget_local(id);
        }
    }

    #[test]
    fn reads_resume_where_the_last_one_ended_and_report_dropped_output() {
        let dir = tempfile::tempdir().unwrap();
        let limits = JobLimits {
            output_bytes: 16,
            ..JobLimits::default()
        };
        let jobs = registry(dir.path()).with_limits(limits);
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let (job, _) = jobs.start_local(&key, "agent", "x").unwrap();
        let mut w = job.writer().unwrap();
        w.write(b"one\ntw").unwrap();
        let r = jobs
            .read(&key, job.id(), 100, Duration::ZERO, &|| false)
            .unwrap();
        // The unfinished line is held back while the job runs.
        assert_eq!((r.text.as_str(), r.pending, r.dropped), ("one\n", 2, 0));
        w.write(b"o\n0123456789abcdefXYZ\n").unwrap();
        let r = jobs
            .read(&key, job.id(), 100, Duration::ZERO, &|| false)
            .unwrap();
        assert_eq!(r.text, "456789abcdefXYZ\n");
        assert_eq!(r.dropped, 8);
        w.finish(JobEnd::Exited, 3).unwrap();
        let r = jobs
            .read(&key, job.id(), 100, Duration::ZERO, &|| false)
            .unwrap();
        assert_eq!(
            (r.text.as_str(), r.view.status, r.view.exit_code),
            ("", JobStatus::Exited, Some(3))
        );
    }

    #[test]
    fn kill_cancels_an_in_process_job_and_waits_for_its_end() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let (job, token) = jobs.start_local(&key, "agent", "x").unwrap();
        let mut w = job.writer().unwrap();
        let worker = std::thread::spawn(move || {
            while !token.is_cancelled() {
                std::thread::sleep(Duration::from_millis(5));
            }
            w.finish(JobEnd::Killed, 130).unwrap();
        });
        let view = jobs.kill(&key, job.id()).unwrap();
        worker.join().unwrap();
        assert_eq!(view.status, JobStatus::Killed);
        JobRegistry::forget_local(job.id());
        // A job whose writer is gone without an end is lost.
        let (lost, _) = jobs.start_local(&key, "agent", "y").unwrap();
        JobRegistry::forget_local(lost.id());
        jobs.update(&key, lost.id(), |r| {
            r.writer = Some(ProcessStamp {
                pid: i32::MAX,
                start: 1,
            });
        })
        .unwrap();
        assert_eq!(jobs.view(&key, lost.id()).unwrap().status, JobStatus::Lost);
    }

    /// The cause of a `lost` job under load (issue 27): the reader read the
    /// header (no end), the supervisor recorded its end and exited, then the
    /// reader saw it gone. The status must be the recorded end.
    #[test]
    fn a_writer_that_ends_between_the_header_read_and_the_liveness_check_is_not_lost() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        let job = jobs
            .start(&key, "agent", "x", Control::Fifo, DEFAULT_LIFETIME)
            .unwrap();
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let stamp = ProcessStamp::of(i32::try_from(child.id()).unwrap()).unwrap();
        jobs.set_writer(&key, job.id(), stamp).unwrap();
        let (record, _) = jobs.record(&key, job.id()).unwrap();
        let stale = ring::header(jobs.open_output(job.id()).unwrap()).unwrap();
        assert!(stale.end.is_none());
        assert_eq!(
            jobs.view_of(record.clone(), stale).status,
            JobStatus::Running
        );
        job.writer().unwrap().finish(JobEnd::Killed, 9).unwrap();
        child.kill().unwrap();
        child.wait().unwrap();
        let view = jobs.view_of(record.clone(), stale);
        assert_eq!((view.status, view.exit_code), (JobStatus::Killed, Some(9)));
        // Gone with no end recorded at all: lost.
        let other = jobs
            .start(&key, "agent", "y", Control::Fifo, DEFAULT_LIFETIME)
            .unwrap();
        jobs.set_writer(&key, other.id(), stamp).unwrap();
        assert_eq!(jobs.view(&key, other.id()).unwrap().status, JobStatus::Lost);
    }

    #[test]
    fn ids_are_checked_before_any_file_is_touched() {
        let dir = tempfile::tempdir().unwrap();
        let jobs = registry(dir.path());
        let key = JobRegistry::key(Some("t"), dir.path()).unwrap();
        for bad in ["../../etc", "job-xyz", "job-0123456789ABCDEF", ""] {
            let err = jobs.view(&key, bad).unwrap_err();
            assert_eq!(err.kind, ErrorKind::InvalidArguments, "{bad}");
            assert!(err.message.contains("No job"), "{err}");
        }
        assert!(
            is_job_id("job-0123456789abcdef"),
            "an id of an earlier release"
        );
        assert!(is_job_id("job-0123456789abcdef0123456789abcdef"));
        assert!(!is_job_id("job-0123456789abcdef0"));
        // New ids hold 128 random bits: 32 hex digits, all distinct.
        let ids: std::collections::BTreeSet<String> = (0..64).map(|_| new_id().unwrap()).collect();
        assert_eq!(ids.len(), 64);
        assert!(ids.iter().all(|i| i.len() == 36 && is_job_id(i)), "{ids:?}");
    }
}
