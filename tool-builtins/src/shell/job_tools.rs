//! `job_output`, `job_kill` and `job_list`: the model's side of the one job
//! registry ([`tool_core::jobs`], cross-cutting §3). They read every kind of
//! job the same way: background shell commands (`bash_command` with
//! `run_in_background`), asynchronous sub-agents (`agent` with
//! `background`), and later MCP tasks.
//!
//! Output is returned as the job wrote it since the last read, at most
//! [`JOB_READ_BYTES`] per call, with terminal escapes removed and the
//! context's secret values masked; what the 1 MiB ring dropped before it was
//! read is counted in a note.

use std::time::Duration;

use serde_json::Value;
use tool_core::jobs::{JobRead, JobRegistry, JobStatus, JobView, MAX_WAIT, PageLimits};
use tool_core::truncate::StreamMasker;
use tool_core::{ErrorKind, ToolContext, ToolError, ToolResult, tool};

use super::ansi::EscapeStripper;
use crate::fs::workspace::workspace_of;

/// Most output bytes one `job_output` call returns (48 KiB, the foreground
/// output budget of `bash_command`); the rest waits for the next call.
/// With [`JOB_READ_LINES`] a page fits the registry's default output budget
/// ([`tool_core::truncate::DEFAULT_MAX_BYTES`] and
/// [`DEFAULT_MAX_LINES`](tool_core::truncate::DEFAULT_MAX_LINES)) with room
/// for the status line, so the budget never cuts a page again and a model
/// sees each page whole (review 27 F5).
pub const JOB_READ_BYTES: usize = super::config::BASH_MAX_OUTPUT_BYTES;
/// Most output lines one `job_output` call returns (1980, as
/// `bash_command`'s line budget): see [`JOB_READ_BYTES`].
pub const JOB_READ_LINES: usize = super::config::BASH_MAX_OUTPUT_LINES;

const _: () = assert!(
    JOB_READ_BYTES + 2048 <= tool_core::truncate::DEFAULT_MAX_BYTES
        && JOB_READ_LINES + 2 <= tool_core::truncate::DEFAULT_MAX_LINES
);

fn registry_and_key(
    context: &ToolContext,
) -> Result<(JobRegistry, tool_core::state::StateKey), ToolError> {
    let jobs = JobRegistry::of_context(context)?;
    let ws = workspace_of(context)?;
    let key = JobRegistry::key(context.trace_id(), ws.root())?;
    Ok((jobs, key))
}

/// One line saying what state a job is in.
fn status_line(view: &JobView) -> String {
    let r = &view.record;
    let state = match (view.status, view.exit_code, view.signal) {
        (JobStatus::Running, ..) => "running".to_owned(),
        (JobStatus::Exited, Some(code), _) => format!("exited with code {code}"),
        (JobStatus::Exited, None, Some(sig)) => format!("ended by signal {sig}"),
        (JobStatus::Killed, ..) => "killed (job_kill)".to_owned(),
        (JobStatus::Expired, ..) => {
            format!("stopped at its lifetime cap ({} s)", r.lifetime_secs)
        }
        (JobStatus::Failed, ..) => "failed to start".to_owned(),
        (JobStatus::Lost, ..) => {
            if r.host.is_some() {
                "lost (the process running it, or the replica that started it, is gone without \
                 recording an end)"
                    .to_owned()
            } else {
                "lost (the process running it is gone without recording an end)".to_owned()
            }
        }
        (JobStatus::HostExited, ..) => {
            "stopped: the host process that started it exited".to_owned()
        }
        (JobStatus::Exited, None, None) => "exited".to_owned(),
    };
    format!("Job {} ({}, {}): {state}", r.id, r.kind, r.title)
}

fn with_view(result: ToolResult, view: &JobView) -> ToolResult {
    result
        .with_metadata(tool_core::meta::JOB_ID, view.record.id.clone())
        .with_metadata(tool_core::meta::JOB_KIND, view.record.kind.clone())
        .with_metadata(tool_core::meta::JOB_STATUS, view.status.as_str())
        .with_metadata(
            tool_core::meta::EXIT_CODE,
            view.exit_code.map_or(Value::Null, Value::from),
        )
        .with_metadata(
            tool_core::meta::SIGNAL,
            view.signal.map_or(Value::Null, Value::from),
        )
        .with_metadata(tool_core::meta::OUTPUT_BYTES, view.total_bytes)
}

/// Cleans a chunk of job output for the model: terminal escapes removed,
/// the context's secret values masked.
fn clean(text: &str, context: &ToolContext) -> String {
    let mut stripped = Vec::with_capacity(text.len());
    EscapeStripper::new().push(text.as_bytes(), &mut stripped);
    match StreamMasker::for_context(context) {
        Some(mut masker) => {
            let mut masked = Vec::with_capacity(stripped.len());
            masker.push(&stripped, &mut masked);
            masker.finish(&mut masked);
            String::from_utf8_lossy(&masked).into_owned()
        }
        None => String::from_utf8_lossy(&stripped).into_owned(),
    }
}

/// Returns what a background job printed since the last read, with its
/// status and exit code.
///
/// Works for every background job of this session: shell commands started
/// with `bash_command` and `run_in_background`, and background sub-agents.
/// At most 48 KiB or 1980 lines per call; call again for more. A job keeps only its last
/// 1 MiB of output; older output is dropped and the result says how much.
///
/// # Arguments
/// * `job_id` - The job's id (`job-` and 32 hex digits), from the call that
///   started it (`metadata.job_id`) or `job_list`.
/// * `wait` - Seconds to wait for new output or the job's end when there is
///   none yet (default 0, at most 300).
///
/// # Examples
/// ```json
/// {"job_id": "job-3f2a9c1d0b7e4a56c8d90e1f2a3b4c5d", "wait": 10}
/// ```
#[tool(kind = "read", tags = ["shell", "jobs"], read_only, timeout = "310s")]
pub async fn job_output(
    job_id: String,
    wait: Option<f64>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let wait = match wait {
        None => Duration::ZERO,
        Some(w) if w.is_finite() && w >= 0.0 && w <= MAX_WAIT.as_secs_f64() => {
            Duration::from_secs_f64(w)
        }
        Some(w) => {
            // Short: `1e308` is not shown as 309 digits (review 27 F17).
            let shown = if w.is_finite() && w.abs() < 1e9 {
                format!("{w}")
            } else {
                format!("{w:e}")
            };
            return Err(ToolError::new(
                ErrorKind::InvalidArguments,
                format!(
                    "Invalid wait value: {shown}. Give seconds from 0 to {}.",
                    MAX_WAIT.as_secs()
                ),
            ));
        }
    };
    let (jobs, key) = registry_and_key(context)?;
    let cancel = context.cancellation_token().clone();
    // A page never ends inside a secret value this context masks, so
    // each value is masked whole (review 27 F21).
    let limits = PageLimits::bytes(JOB_READ_BYTES)
        .with_max_lines(JOB_READ_LINES)
        .with_masker(StreamMasker::for_context(context));
    let read: JobRead = tool_core::run_blocking(move || {
        jobs.read_page(&key, &job_id, &limits, wait, &|| cancel.is_cancelled())
    })
    .await??;
    let mut text = status_line(&read.view);
    let output = clean(&read.text, context);
    if output.is_empty() {
        text.push_str("\n(no new output)");
    } else {
        text.push('\n');
        text.push_str(&output);
    }
    let mut result = with_view(ToolResult::ok(text), &read.view)
        .with_metadata(tool_core::meta::DROPPED_BYTES, read.dropped)
        .with_metadata(tool_core::meta::PENDING_BYTES, read.pending);
    if read.dropped > 0 {
        result = result.with_note(format!(
            "{} bytes of output were dropped before this read (a job keeps its last {} bytes); \
             read more often to see everything.",
            read.dropped,
            jobs_capacity(context)
        ));
    }
    if read.unfinished {
        result = result.with_note(
            "The output ends in an unfinished line (no line break yet: a prompt, a progress \
             bar); what follows on that line comes with a later read. A background job's \
             input is empty: it cannot get an answer to a prompt.",
        );
    }
    let held_back_only = read.view.status == JobStatus::Running
        && read.pending <= tool_core::jobs::HOLD_BACK_BYTES as u64;
    if read.pending > 0 && held_back_only {
        result = result.with_note(format!(
            "{} bytes of an unfinished last line are held back until the line ends (a read \
             that finds nothing else shows them).",
            read.pending
        ));
    } else if read.pending > 0 {
        result = result.with_note(format!(
            "{} more bytes of output wait; call job_output again.",
            read.pending
        ));
    }
    Ok(result)
}

fn jobs_capacity(context: &ToolContext) -> u64 {
    JobRegistry::of_context(context).map_or(tool_core::jobs::DEFAULT_OUTPUT_BYTES, |j| {
        j.limits().output_bytes
    })
}

/// Stops a background job and everything it started.
///
/// A job that already ended is left as it is; the result gives its status.
///
/// # Arguments
/// * `job_id` - The job's id (`job-` and 32 hex digits).
///
/// # Examples
/// ```json
/// {"job_id": "job-3f2a9c1d0b7e4a56c8d90e1f2a3b4c5d"}
/// ```
#[tool(kind = "exec", tags = ["shell", "jobs"], destructive, idempotent, timeout = "30s")]
pub async fn job_kill(job_id: String, context: &ToolContext) -> Result<ToolResult, ToolError> {
    let (jobs, key) = registry_and_key(context)?;
    let view = tool_core::run_blocking(move || jobs.kill(&key, &job_id)).await??;
    Ok(with_view(ToolResult::ok(status_line(&view)), &view))
}

/// What `job_list` says to a caller with no identity of its own
/// ([`AnonymousCaller`](tool_core::jobs::AnonymousCaller)).
pub const ANONYMOUS_LIST: &str = "No jobs are listed for a request without a client identity \
     (a stateless MCP request without params._meta.traceparent): such requests share one owner, so \
     a job's id, returned only by the call that started it, is the one handle on it. job_output and \
     job_kill work with the ids you were given. To list your jobs, send the same \
     params._meta.traceparent (W3C Trace Context) with every request, or use an MCP session.";

/// Lists this session's background jobs (shell commands and sub-agents)
/// with their status, oldest first.
#[tool(kind = "read", tags = ["shell", "jobs"], read_only, idempotent)]
pub async fn job_list(context: &ToolContext) -> Result<ToolResult, ToolError> {
    if tool_core::jobs::AnonymousCaller::is_marked(context) {
        // Review 27 F13: every anonymous client shares one trace; listing
        // it would hand each of them the others' job ids.
        return Ok(ToolResult::ok(ANONYMOUS_LIST)
            .with_metadata(tool_core::meta::JOBS, Value::Array(Vec::new())));
    }
    let (jobs, key) = registry_and_key(context)?;
    let views = tool_core::run_blocking(move || jobs.list(&key)).await??;
    if views.is_empty() {
        return Ok(ToolResult::ok("No background jobs in this session.")
            .with_metadata(tool_core::meta::JOBS, Value::Array(Vec::new())));
    }
    let lines: Vec<String> = views.iter().map(status_line).collect();
    let meta: Vec<Value> = views
        .iter()
        .map(|v| {
            serde_json::json!({
                "job_id": v.record.id,
                "kind": v.record.kind,
                "title": v.record.title,
                "status": v.status.as_str(),
                "exit_code": v.exit_code,
            })
        })
        .collect();
    Ok(ToolResult::ok(lines.join("\n")).with_metadata(tool_core::meta::JOBS, Value::Array(meta)))
}
