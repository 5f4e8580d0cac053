//! `bash_command`: run a shell command in the workspace and return its
//! output (the hazards it handles are listed in [`crate::shell`]).

use std::collections::BTreeMap;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Map, Value};
use tool_core::governance::confirm::{self, Confirmation};
use tool_core::truncate::StreamMasker;
use tool_core::{
    ApprovalDefault, ApprovalRequest, ErrorKind, ToolContext, ToolError, ToolKind, ToolResult,
    meta, tool,
};

use super::config::*;
use super::env::*;
use super::policy::{CommandPolicy, PolicyAction};
use super::run::*;
use super::split::MAX_COMMAND_BYTES;
use crate::fs::workspace::workspace_of;

/// Runs a shell command in the workspace and returns its combined output.
///
/// Standard output and standard error are merged in the order they were
/// written; standard input is empty. Long output keeps its beginning and end,
/// and the full text is saved to a file named in the output. Commands left
/// running in the background are stopped when the call ends. A non-zero exit code
/// or a timeout is reported in the output, not as an error.
///
/// # Arguments
/// * `command` - The command to run, as you would type it in bash.
/// * `timeout` - Timeout in seconds (default 120, at most 600). On timeout
///   the command and everything it started are stopped. With
///   `run_in_background`, the job's lifetime instead (default and at most 3600).
/// * `workdir` - Folder to run in, relative to the workspace root (default: the root).
/// * `description` - A short description of what the command does, in 5-10 words.
/// * `run_in_background` - Start the command as a background job and return
///   at once with its job id (for long builds and test runs, watchers); read
///   its output with `job_output`, stop it with `job_kill`. A background job
///   has no network: nothing can reach a server it starts.
///
/// # Examples
/// ```json
/// {"command": "cargo test -q", "timeout": 300, "description": "Run the tests"}
/// {"command": "cargo build --release", "run_in_background": true}
/// ```
#[tool(kind = "exec", tags = ["shell"], destructive, open_world, timeout = "610s")]
pub async fn bash_command(
    command: String,
    timeout: Option<f64>,
    workdir: Option<String>,
    description: Option<String>,
    run_in_background: Option<bool>,
    context: &ToolContext,
) -> Result<ToolResult, ToolError> {
    let config = context
        .state::<BashConfig>()
        .map_or_else(BashConfig::default, |c| (*c).clone());
    let background = run_in_background.unwrap_or(false);
    let jobs = if background {
        Some(tool_core::jobs::JobRegistry::of_context(context)?)
    } else {
        None
    };
    let lifetime = match &jobs {
        Some(jobs) => Some(check_lifetime(timeout, jobs.limits().lifetime)?),
        None => None,
    };
    let timeout = if background {
        config.default_timeout
    } else {
        check_timeout(timeout, &config)?
    };
    if command.trim().is_empty() {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            "The command is empty. Give the shell command to run.",
        ));
    }
    if command.len() > MAX_COMMAND_BYTES {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "The command is {} bytes long; at most {MAX_COMMAND_BYTES} bytes are accepted (the \
                 limit MAX_COMMAND_BYTES, the kernel's limit on one argument of `bash -c`). Write \
                 long content to a file with write_file and use the file in a short command.",
                command.len()
            ),
        ));
    }
    if config.guard {
        let root = workspace_of(context)
            .map(|ws| ws.root().to_path_buf())
            .unwrap_or_default();
        if let Some(why) = crate::shell::guard::refuses(&command, &root, config.policy.as_ref()) {
            return Err(ToolError::new(ErrorKind::Denied, why));
        }
    }
    let command = match &config.policy {
        None => command,
        Some(policy) => apply_policy(policy, command, description.as_deref(), context).await?,
    };
    let ws = workspace_of(context)?;
    // The folder is resolved beneath the workspace's handle and opened; the
    // command starts in that handle (`fchdir`), so a folder swapped for a
    // symlink after the check cannot move it outside.
    let wanted = workdir
        .filter(|w| !w.trim().is_empty())
        .unwrap_or_else(|| ".".to_owned());
    let (dir, dir_fd) = match ws.beneath(&wanted, crate::fs::beneath::Missing::AllowLast) {
        Ok(b) if b.file_type() == Some(rustix::fs::FileType::Directory) => match b.open_dir() {
            Ok(fd) => (b.path, fd),
            Err(e) => {
                return Err(ToolError::new(
                    ErrorKind::Failed,
                    format!(
                        "Cannot open the working directory {}: {e}",
                        b.path.display()
                    ),
                ));
            }
        },
        Ok(b) if b.exists() => {
            return Err(ToolError::new(
                ErrorKind::Failed,
                format!("Working directory is not a directory: {}", b.path.display()),
            ));
        }
        Ok(b) => {
            return Err(ToolError::new(
                ErrorKind::Failed,
                format!("Working directory not found: {}", b.path.display()),
            ));
        }
        Err(e) => return Err(e.into()),
    };
    let (env, withheld) = split_env(
        config
            .base_env
            .clone()
            .unwrap_or_else(|| std::env::vars_os().collect()),
        &config.secret_env_patterns,
    );
    let withheld_note = withheld_note(&command, &withheld);
    let mut job_notes = Vec::new();
    let (sandbox, proxy) = if config.sandbox.is_off() {
        (None, None)
    } else {
        // Preparing reads the file system (mount table, hard-link scan) and
        // may probe the kernel once: off the async runtime's threads.
        let mut policy = config.sandbox.clone();
        if background {
            // The proxy lives as long as a call; a job outlives it.
            let allowed = !policy.network.is_deny_all();
            policy.network = tool_core::NetworkPolicy::deny_all();
            job_notes.push(no_network_note(allowed));
        }
        let (root, at) = (ws.root().to_path_buf(), dir.clone());
        let prepared =
            tool_core::run_blocking(move || prepare_sandbox(&policy, &root, &at)).await?;
        match prepared {
            Ok((s, proxy)) => (Some(std::sync::Arc::new(s)), proxy),
            Err(e) => {
                return Err(ToolError::new(
                    ErrorKind::Failed,
                    format!("The command was not run: {e}"),
                ));
            }
        }
    };
    let mut env = env;
    if let Some(s) = &sandbox {
        let mut extra = s.env();
        if proxy.is_some() {
            let vars =
                tool_sandbox::ProxyEnv::for_port(tool_sandbox::DEFAULT_FORWARDER_PORT).vars();
            extra.extend(vars.into_iter().map(|(k, v)| (k.into(), v.into())));
        }
        env.retain(|(k, _)| !extra.iter().any(|(sk, _)| sk == k));
        env.extend(extra);
    }
    let spec = RunSpec {
        shell: config.shell.clone().unwrap_or_else(default_shell),
        command,
        workdir: dir,
        workdir_fd: Some(dir_fd),
        env,
        timeout,
        drain: config.drain.min(MAX_BASH_GRACE),
        kill_grace: config.kill_grace.min(MAX_BASH_GRACE),
        truncation: config.truncation.clone().for_trace(context.trace_id()),
        masker: StreamMasker::for_context_and_env(context, &withheld),
        sandbox: sandbox.clone(),
    };
    let title = description
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| spec.command.clone());
    // The title is stored in the job's record: never a secret value.
    let title = match spec.masker.clone() {
        Some(mut masker) => {
            let mut masked = Vec::new();
            masker.push(title.as_bytes(), &mut masked);
            masker.finish(&mut masked);
            String::from_utf8_lossy(&masked).into_owned()
        }
        None => title,
    };
    if let (Some(jobs), Some(lifetime)) = (jobs, lifetime) {
        if let Some(s) = &sandbox {
            if s.tier() != tool_sandbox::Tier::Full {
                return Err(ToolError::new(
                    ErrorKind::Denied,
                    super::background::NEEDS_FULL_TIER,
                ));
            }
            job_notes.extend(s.notes().iter().cloned());
        } else {
            job_notes.push(
                "SANDBOX OFF: this job runs unsandboxed (--sandbox off): it can write anywhere, \
                 read every secret and reach the network."
                    .to_owned(),
            );
        }
        let key = tool_core::jobs::JobRegistry::key(context.trace_id(), ws.root())?;
        let started = tool_core::run_blocking(move || {
            super::background::start(&jobs, &key, &spec, &title, lifetime)
        })
        .await??;
        let mut result = started;
        if tool_core::jobs::AnonymousCaller::is_marked(context) {
            job_notes.push(
                "This request has no client identity (no params._meta.traceparent): the job id \
                 is the only handle on this job and job_list will not show it; keep the id."
                    .to_owned(),
            );
        }
        for note in job_notes.into_iter().chain(withheld_note) {
            result = result.with_note(note);
        }
        return Ok(result);
    }
    // The command stops when the context is cancelled, and when this call is
    // dropped half-way (the guard cancels the child token on drop).
    let cancel = context.cancellation_token().child_token();
    let _stop_when_dropped = cancel.clone().drop_guard();
    let shell = spec.shell.clone();
    let watched = tool_core::run_blocking(move || run(&spec, &|| cancel.is_cancelled()));
    let outcome = watched.await;
    // The call is over: stop the proxy (closing any tunnel a background
    // process kept open) and take its record of hosts.
    let network = proxy.map(tool_sandbox::ProxyServer::shutdown);
    let result = match outcome {
        Ok(Ok(outcome)) => {
            let (code, signal) = (
                outcome.status.and_then(|s| s.code()),
                outcome.status.and_then(|s| s.signal()),
            );
            let refused = sandbox.as_ref().map(|s| {
                let text = outcome.output.text.clone();
                s.finish(code, signal, &text)
            });
            let result = outcome.into_result(timeout);
            let result = with_sandbox_report(result, &config.sandbox, sandbox.as_deref(), refused);
            with_network_report(result, network.as_ref())
        }
        Ok(Err(e)) => ToolResult::failed(format!(
            "Could not run the command with {}: {e}",
            shell.display()
        )),
        Err(e) => ToolResult::from(e),
    }
    .with_title(title);
    Ok(match withheld_note {
        Some(note) => result.with_note(note),
        None => result,
    })
}

/// What the start of a sandboxed background job says about its network:
/// it has none (its own empty network namespace), so downloads fail and a
/// server it starts is reachable by nothing, not even another command.
/// `allowed`: hosts were allowed with `--allow-net` (served to foreground
/// calls only).
fn no_network_note(allowed: bool) -> String {
    let why = if allowed {
        "the hosts allowed with --allow-net are served to foreground commands only (the \
         sandbox's proxy lives as long as one call)"
    } else {
        "the sandbox gives background jobs none"
    };
    format!(
        "This job has no network ({why}): downloads fail, and a server it starts can be \
         reached by nothing, not even another command. Run network steps in the foreground."
    )
}

/// Adds the `sandbox` metadata (`policy`, `tier`, `refused`, `limits`) and
/// one note per refusal, per layer not in force, or for a sandbox turned off.
fn with_sandbox_report(
    mut result: ToolResult,
    policy: &tool_core::SandboxPolicy,
    sandbox: Option<&tool_sandbox::Sandbox>,
    refused: Option<Vec<String>>,
) -> ToolResult {
    let refused = refused.unwrap_or_default();
    let limits = &policy.limits;
    let meta = match sandbox {
        Some(s) => serde_json::json!({
            "policy": policy.mode.as_str(),
            "tier": s.tier().as_str(),
            "refused": refused,
            "limits": {
                "processes": limits.processes,
                "memory": limits.memory,
                "file-size": limits.file_size,
                "cpu": limits.cpu.as_secs(),
                "open-files": limits.open_files,
            },
        }),
        None => serde_json::json!({
            "policy": "off",
            "tier": "off",
            "refused": [],
            "limits": null,
        }),
    };
    result = result.with_metadata(meta::SANDBOX, meta);
    match sandbox {
        None => {
            result = result.with_note(
                "SANDBOX OFF: this command ran unsandboxed (--sandbox off): it could write \
                 anywhere, read every secret and reach the network.",
            );
        }
        Some(s) => {
            for note in s.notes().iter().chain(&refused) {
                result = result.with_note(note.clone());
            }
            if !policy.network.is_deny_all() && s.tier() != tool_sandbox::Tier::Full {
                result = result.with_note(NO_NAMESPACES_NETWORK_NOTE);
            }
        }
    }
    result
}

/// Said when hosts are allowed but the sandbox runs in the no-namespaces
/// tier, which has no network namespace to bind the proxy's socket into.
const NO_NAMESPACES_NETWORK_NOTE: &str = "The allowed hosts (--allow-net) are served in the full \
     sandbox tier only; in the no-namespaces tier commands have no network. Run where user \
     namespaces are allowed (see SECURITY.md), or with --sandbox off to reach the network.";

/// Starts the proxy for a policy that allows some hosts (full tier), then
/// prepares the sandbox with its hook. In the no-namespaces tier the proxy
/// is not started (see [`NO_NAMESPACES_NETWORK_NOTE`]).
fn prepare_sandbox(
    policy: &tool_core::SandboxPolicy,
    root: &std::path::Path,
    at: &std::path::Path,
) -> Result<(tool_sandbox::Sandbox, Option<tool_sandbox::ProxyServer>), String> {
    let error = |e: tool_sandbox::SandboxError| e.to_string();
    if policy.network.is_deny_all() {
        return tool_sandbox::Sandbox::prepare(policy, root, Some(at))
            .map(|s| (s, None))
            .map_err(error);
    }
    let proxy = tool_sandbox::ProxyServer::start(
        policy.network.clone(),
        tool_sandbox::ProxyLimits::default(),
        None,
    )
    .map_err(|e| format!("the sandbox's network proxy could not start: {e}"))?;
    let hook = tool_sandbox::ProxyHook::new(proxy.socket_path());
    let sandbox = tool_sandbox::Sandbox::prepare_with_proxy(policy, root, Some(at), Some(hook))
        .map_err(error)?;
    if sandbox.tier() == tool_sandbox::Tier::Full {
        Ok((sandbox, Some(proxy)))
    } else {
        Ok((sandbox, None))
    }
}

/// Adds the `network` metadata of a call whose sandbox served allowed hosts
/// (`contacted` and `refused`: `host:port` lists, deduplicated, at most
/// [`tool_sandbox::proxy::MAX_REPORTED_HOSTS`] each; `omitted` when more),
/// and one note naming the first refused host and how a person allows it.
fn with_network_report(
    mut result: ToolResult,
    report: Option<&tool_sandbox::NetworkReport>,
) -> ToolResult {
    let Some(report) = report else {
        return result;
    };
    let mut meta = serde_json::json!({
        "contacted": report.contacted,
        "refused": report.refused,
    });
    if report.omitted > 0 {
        meta["omitted"] = Value::from(report.omitted);
    }
    result = result.with_metadata(meta::NETWORK, meta);
    if let Some(first) = report.refusals.first() {
        let more = report.refused.len() - 1;
        let tail = if more > 0 {
            format!(" ({more} more refused hosts in metadata.network.refused)")
        } else {
            String::new()
        };
        result = result.with_note(format!("Refused by the sandbox: {first}.{tail}"));
    }
    result
}

/// Checks `command` against the policy: `Deny` refuses, `Ask` goes to the
/// context's approver (the governance confirmation gate; none configured
/// means refused), which may also edit the command. Returns the command to run.
async fn apply_policy(
    policy: &CommandPolicy,
    command: String,
    description: Option<&str>,
    context: &ToolContext,
) -> Result<String, ToolError> {
    let denied = |reason: &str| {
        ToolError::new(
            ErrorKind::Denied,
            format!("This command is not allowed by the command policy: {reason}"),
        )
    };
    let too_big = |limit: &str| {
        ToolError::new(
            ErrorKind::InvalidArguments,
            format!("The command was not run: {limit}. Split it into simpler commands."),
        )
    };
    let decision = policy.check(&command);
    if let Some(limit) = &decision.limit {
        return Err(too_big(limit));
    }
    match decision.action {
        PolicyAction::Allow => return Ok(command),
        PolicyAction::Deny => return Err(denied(&decision.reason)),
        PolicyAction::Ask => {}
    }
    let mut arguments = Map::new();
    arguments.insert("command".to_owned(), Value::from(command.clone()));
    if let Some(d) = description {
        arguments.insert("description".to_owned(), Value::from(d));
    }
    let request = ApprovalRequest {
        tool: "bash_command".to_owned(),
        kind: ToolKind::Exec,
        display: BTreeMap::new(),
        arguments,
        editable_params: vec!["command".to_owned()],
        trace_id: context.trace_id().map(str::to_owned),
        injected: Map::new(),
        editable_schemas: Map::new(),
        defaults: Map::new(),
    };
    // The core approval gate: approver panics, cancellation and edits of
    // anything but `command` are handled there, once.
    match confirm::ask(context, request).await {
        Confirmation::Approved
        | Confirmation::TimedOut {
            default: ApprovalDefault::Approve,
            ..
        } => Ok(command),
        Confirmation::Edited { arguments, .. } => {
            let Some(edited) = arguments.get("command").and_then(Value::as_str) else {
                return Err(ToolError::new(
                    ErrorKind::Denied,
                    "The approval removed the command or made it not text, so nothing was run.",
                ));
            };
            // A person approved this text; only a deny rule still stops it.
            let again = policy.check(edited);
            if let Some(limit) = &again.limit {
                return Err(too_big(limit));
            }
            if again.action == PolicyAction::Deny {
                return Err(denied(&again.reason));
            }
            Ok(edited.to_owned())
        }
        Confirmation::NoApprover => Err(ToolError::new(
            ErrorKind::Denied,
            format!(
                "This command needs confirmation and no approver is configured, so it was not run. {}",
                decision.reason
            ),
        )),
        Confirmation::Denied(reason) => Err(ToolError::new(
            ErrorKind::Denied,
            format!(
                "The command was not approved: {reason}. {} It was not run: rewrite it so that the \
                 command policy allows it without confirmation (for example, run the inner command \
                 of a substitution on its own first), or ask the user to run it.",
                decision.reason
            ),
        )),
        other => Err(other
            .refusal("bash_command")
            .and_then(|r| r.error)
            .unwrap_or_else(|| {
                ToolError::new(
                    ErrorKind::Denied,
                    "The approval gave no answer, so the command was not run.",
                )
            })),
    }
}

/// A background job's lifetime in seconds: the model's `timeout` when
/// given (greater than 0, at most `max`), else `max` (the registry's cap).
fn check_lifetime(timeout: Option<f64>, max: Duration) -> Result<u64, ToolError> {
    let Some(secs) = timeout else {
        return Ok(max.as_secs().max(1));
    };
    if !(secs.is_finite() && secs >= 1.0 && secs <= max.as_secs_f64()) {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "Invalid timeout value for a background job: {secs}. Give its lifetime in \
                 seconds, at least 1 and at most {} (the job lifetime cap), or leave it out.",
                max.as_secs()
            ),
        ));
    }
    // Whole seconds; the bound was checked above.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "finite, between 1 and the cap"
    )]
    Ok(secs as u64)
}

/// The model's timeout in seconds, checked against the configured bounds.
fn check_timeout(timeout: Option<f64>, config: &BashConfig) -> Result<Duration, ToolError> {
    let max = config.max_timeout.min(MAX_BASH_TIMEOUT);
    let Some(secs) = timeout else {
        return Ok(config.default_timeout.min(max));
    };
    let valid = secs.is_finite() && secs > 0.0 && secs <= max.as_secs_f64();
    if !valid {
        return Err(ToolError::new(
            ErrorKind::InvalidArguments,
            format!(
                "Invalid timeout value: {secs}. Give the timeout in seconds, greater than 0 and at most {}.",
                max.as_secs_f64()
            ),
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn default_shell() -> PathBuf {
    ["/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash"]
        .iter()
        .map(PathBuf::from)
        .find(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from("/bin/sh"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::OwnedFd;

    #[test]
    fn workdir_fd_is_used_over_the_path() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("by-fd")).unwrap();
        std::fs::create_dir(dir.path().join("by-path")).unwrap();
        let spec = |fd: Option<OwnedFd>| RunSpec {
            shell: default_shell(),
            command: "pwd".to_owned(),
            workdir: dir.path().join("by-path"),
            workdir_fd: fd,
            env: Vec::new(),
            timeout: Duration::from_secs(10),
            drain: Duration::from_millis(100),
            kill_grace: Duration::from_millis(100),
            truncation: BashConfig::default().truncation,
            masker: None,
            sandbox: None,
        };
        let open = |name: &str| -> OwnedFd {
            rustix::fs::open(
                dir.path().join(name),
                rustix::fs::OFlags::PATH
                    | rustix::fs::OFlags::DIRECTORY
                    | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .unwrap()
        };
        let out = |spec: RunSpec| {
            let outcome = run(&spec, &|| false).unwrap();
            outcome.output.text
        };
        assert!(
            out(spec(Some(open("by-fd"))))
                .trim_end()
                .ends_with("/by-fd")
        );
        assert!(out(spec(None)).trim_end().ends_with("/by-path"));
        // A descriptor of a file, not a directory: the spawn fails with ENOTDIR.
        std::fs::write(dir.path().join("file"), "x").unwrap();
        let file = rustix::fs::open(
            dir.path().join("file"),
            rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        let err = run(&spec(Some(file)), &|| false).unwrap_err();
        assert_eq!(err.raw_os_error(), Some(20), "{err}");
    }
}
