//! `agent` with `background: true`: the sub-agent runs as a job of the one
//! job registry ([`tool_core::jobs`], cross-cutting §3) and the call returns
//! at once with its id (`metadata.job_id`). `job_output` reads its result
//! (the summary JSON the foreground call returns, written when it ends),
//! `job_kill` cancels it, `job_list` lists it beside background commands.
//!
//! The job runs in this process (a task on the async runtime, registered
//! with [`JobRegistry::start_local`]): it lives as long as the host does.
//! Its record lives in the trace's state (owner the trace id, workspace the
//! context's named value `workspace`, else the current folder), so another
//! process of the trace sees it, as `lost` once this process has ended.
//! The registry's caps hold: 16 running jobs per trace, 1 h lifetime
//! (status `expired`), 1 MiB of output.

use std::sync::Arc;

use serde_json::Value;
use tool_core::jobs::{JobEnd, JobRegistry};
use tool_core::{ToolContext, ToolResult};

use super::SubAgents;

impl SubAgents {
    /// Starts an `agent` call (its arguments without `background`) as a
    /// background job; the result names the job id.
    pub(crate) fn start_background(
        self: Arc<Self>,
        args: super::AgentArgs,
        ctx: &ToolContext,
    ) -> ToolResult {
        let started = (|| {
            let jobs = JobRegistry::of_context(ctx)?;
            let workspace = ctx
                .value_str("workspace")
                .map(std::path::PathBuf::from)
                .filter(|p| p.is_absolute())
                .or_else(|| std::env::current_dir().ok())
                .unwrap_or_else(|| std::path::PathBuf::from("/"));
            let key = JobRegistry::key(ctx.trace_id(), &workspace)?;
            let title = match &args.task {
                super::Task::One(t) => t.clone(),
                super::Task::Many(tasks) => tasks.join("; "),
            };
            let (job, token) = jobs.start_local(&key, "agent", &title)?;
            let writer = job.writer().map_err(|e| {
                tool_core::ToolError::new(
                    tool_core::ErrorKind::Failed,
                    format!("The sub-agent's job output cannot be opened: {e}"),
                )
            })?;
            Ok::<_, tool_core::ToolError>((jobs, job, token, writer))
        })();
        let (jobs, job, token, mut writer) = match started {
            Ok(s) => s,
            Err(e) => return ToolResult::from(e),
        };
        let id = job.id().to_owned();
        let lifetime = jobs.limits().lifetime;
        // Its own token: the job outlives this call; `job_kill` cancels it.
        let run_ctx = ctx.clone().with_cancellation_token(token.clone());
        let job_id = id.clone();
        tokio::spawn(async move {
            let run = tokio::time::timeout(lifetime, self.agent(args, &run_ctx));
            // Biased: a cancelled sub-agent also returns, and a kill must read as one.
            let (text, end, code) = tokio::select! {
                biased;
                () = token.cancelled() => ("The sub-agent was cancelled (job_kill).".to_owned(), JobEnd::Killed, 130),
                outcome = run => match outcome {
                    // A run the kill stopped: tokio-util cancels a token's
                    // children before the token itself reads as cancelled,
                    // so the run can end (stop "cancelled") while `token`
                    // still looks live; its only canceller is `job_kill`.
                    Ok(Ok(summary)) if stopped_by_cancel(&summary) => {
                        ("The sub-agent was cancelled (job_kill).".to_owned(), JobEnd::Killed, 130)
                    }
                    Ok(Ok(summary)) => {
                        let text = serde_json::to_string_pretty(&summary).unwrap_or_default();
                        let failed = summary
                            .get("results")
                            .and_then(Value::as_array)
                            .is_some_and(|r| !r.is_empty() && r.iter().all(|x| x.get("error").is_some()));
                        (text, JobEnd::Exited, i32::from(failed))
                    }
                    Ok(Err(message)) => (message, JobEnd::Exited, 1),
                    Err(_) => ("The sub-agent ran past its lifetime and was stopped.".to_owned(), JobEnd::Expired, 124),
                },
            };
            let _ = writer.write(text.as_bytes());
            let _ = writer.write(b"\n");
            let _ = writer.finish(end, code);
            JobRegistry::forget_local(&job_id);
        });
        ToolResult::ok(format!(
            "Started background sub-agent job {id}. Read its result with job_output (job_id \
             \"{id}\", optionally wait seconds); cancel it with job_kill."
        ))
        .with_metadata(tool_core::meta::MetaKey::custom("job_id"), id)
        .with_metadata(tool_core::meta::MetaKey::custom("status"), "running")
    }
}

/// `true` when every sub-agent of the summary stopped because its run was
/// cancelled (`"stop": "cancelled"`).
fn stopped_by_cancel(summary: &Value) -> bool {
    summary
        .get("results")
        .and_then(Value::as_array)
        .is_some_and(|r| {
            !r.is_empty()
                && r.iter()
                    .all(|x| x.get("stop").and_then(Value::as_str) == Some("cancelled"))
        })
}
