//! Stdio servers in the kernel sandbox `bash_command` runs in
//! (`tool-sandbox`, issue 22): the `"sandbox"` key of an `.mcp.json` entry,
//! [`McpToolSource::with_sandbox`](crate::McpToolSource::with_sandbox) and
//! [`McpToolSource::with_default_sandbox`](crate::McpToolSource::with_default_sandbox).
//!
//! The server process is started through [`tool_sandbox::Sandbox::apply`]:
//! its stdin, stdout and stderr pass through unchanged (the MCP messages),
//! while the file system, network, processes and limits are those of
//! `bash_command` under the same [`SandboxPolicy`]. Allowed hosts are
//! served by a [`ProxyServer`] that lives as long as the server process
//! (full tier only, as for `bash_command`). Once the process has ended, the
//! sandbox's after-call check of the workspace's `.git` runs
//! ([`tool_sandbox::Sandbox::finish`]).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use tool_core::{SandboxPolicy, UrlPattern};
use tool_sandbox::{MemoryWatchdog, ProxyHook, ProxyLimits, ProxyServer, Sandbox, Tier};

/// How long [`SandboxHold`]'s drop waits for the server process to end
/// before the after-call check runs anyway: 5 s.
pub(crate) const EXIT_WAIT: Duration = Duration::from_secs(5);

/// The object form of an entry's `"sandbox"` (every key optional; unknown
/// keys are an error, so a misspelt one is not silently ignored).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct SandboxObject {
    #[serde(default)]
    write: Vec<PathBuf>,
    #[serde(default)]
    hide: Vec<PathBuf>,
    #[serde(default, rename = "allowNet")]
    allow_net: Vec<String>,
    workspace: Option<PathBuf>,
}

/// What an entry's `"sandbox"` asks for on top of the host's base policy.
#[derive(Debug, Clone, Default)]
pub(crate) struct SandboxRequest {
    write: Vec<PathBuf>,
    hide: Vec<PathBuf>,
    allow_net: Vec<UrlPattern>,
    workspace: Option<PathBuf>,
}

impl SandboxRequest {
    /// `base` with this request's writable and hidden paths and allowed
    /// hosts added, and the workspace: the request's own, else `workspace`.
    /// Relative paths are made absolute against the current folder.
    pub(crate) fn apply(&self, base: &SandboxPolicy, workspace: &Path) -> (SandboxPolicy, PathBuf) {
        let abs = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
        let mut policy = base.clone();
        for w in &self.write {
            policy = policy.writable(abs(w));
        }
        for h in &self.hide {
            policy = policy.hidden(abs(h));
        }
        let mut network = policy.network.clone();
        for p in &self.allow_net {
            network = network.allow(p.clone());
        }
        policy = policy.with_network(network);
        let ws = self
            .workspace
            .as_deref()
            .map_or_else(|| abs(workspace), abs);
        (policy, ws)
    }
}

/// An entry's `"sandbox"` value: `false` (`None`: never sandboxed), `true`
/// or an object `{"write": [PATH], "hide": [PATH], "allowNet": [PATTERN],
/// "workspace": PATH}` (`Some`).
///
/// # Errors
/// A message naming the key at fault: not a boolean or object, an unknown
/// key, or an `allowNet` pattern that does not parse.
pub(crate) fn parse_request(value: serde_json::Value) -> Result<Option<SandboxRequest>, String> {
    let object = match value {
        serde_json::Value::Bool(false) => return Ok(None),
        serde_json::Value::Bool(true) => SandboxObject::default(),
        value @ serde_json::Value::Object(_) => {
            serde_json::from_value(value).map_err(|e| format!("`sandbox`: {e}"))?
        }
        _ => {
            return Err(
                "`sandbox` is true, false or an object {\"write\": [PATH], \"hide\": [PATH], \
                 \"allowNet\": [PATTERN], \"workspace\": PATH}"
                    .to_owned(),
            );
        }
    };
    let allow_net = object
        .allow_net
        .iter()
        .map(|p| UrlPattern::parse(p).map_err(|e| format!("`sandbox.allowNet` {p}: {e}")))
        .collect::<Result<_, _>>()?;
    Ok(Some(SandboxRequest {
        write: object.write,
        hide: object.hide,
        allow_net,
        workspace: object.workspace,
    }))
}

/// A sandboxed server process's sandbox, proxy and watchdog, kept as long
/// as the process runs; dropping it ends the process (`SIGKILL` through a
/// pidfd taken at start, so never another process that reused the pid),
/// waits (at most [`EXIT_WAIT`]) for it to be gone, stops the proxy and
/// runs the after-call check.
pub(crate) struct SandboxHold {
    sandbox: Arc<Sandbox>,
    proxy: Option<ProxyServer>,
    watchdog: Option<MemoryWatchdog>,
    pidfd: Option<std::os::fd::OwnedFd>,
    label: String,
}

impl std::fmt::Debug for SandboxHold {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SandboxHold")
            .field("tier", &self.sandbox.tier())
            .field("proxy", &self.proxy.is_some())
            .finish_non_exhaustive()
    }
}

/// Prepares the sandbox of a server (blocking: it reads the mount table and
/// scans the workspace), starts the proxy when `policy` allows hosts and
/// the tier is full, and makes `command` start in it: its working folder is
/// `workspace`, and the sandbox's variables (`TMPDIR` in the no-namespaces
/// tier, the proxy's `HTTP_PROXY` ...) are added to its environment.
///
/// # Errors
/// The sandbox's own message ([`tool_sandbox::SandboxError`]: a kernel
/// without the layers the policy needs, a workspace that cannot be
/// resolved, ...) or the proxy's.
pub(crate) fn confine(
    command: &mut std::process::Command,
    policy: &SandboxPolicy,
    workspace: &Path,
    label: &str,
) -> Result<SandboxHold, String> {
    let (sandbox, proxy) = if policy.network.is_deny_all() {
        (
            Sandbox::prepare(policy, workspace, Some(workspace)).map_err(|e| e.to_string())?,
            None,
        )
    } else {
        let proxy = ProxyServer::start(policy.network.clone(), ProxyLimits::default(), None)
            .map_err(|e| format!("the sandbox's network proxy could not start: {e}"))?;
        let hook = ProxyHook::new(proxy.socket_path());
        let env = hook.env();
        let sandbox = Sandbox::prepare_with_proxy(policy, workspace, Some(workspace), Some(hook))
            .map_err(|e| e.to_string())?;
        if sandbox.tier() == Tier::Full {
            for (k, v) in env.vars() {
                command.env(k, v);
            }
            (sandbox, Some(proxy))
        } else {
            tracing::warn!(
                "MCP server {label}: the allowed hosts are served in the full sandbox tier \
                 only; in the no-namespaces tier the server has no network"
            );
            (sandbox, None)
        }
    };
    for note in sandbox.notes() {
        tracing::warn!("MCP server {label}: {note}");
    }
    let sandbox = Arc::new(sandbox);
    command.current_dir(workspace).envs(sandbox.env());
    sandbox.apply(command);
    Ok(SandboxHold {
        sandbox,
        proxy,
        watchdog: None,
        pidfd: None,
        label: label.to_owned(),
    })
}

impl SandboxHold {
    /// Called with the started process's id: keeps a pidfd to know when it
    /// ended, and starts the memory watchdog where the sandbox needs one.
    pub(crate) fn started(&mut self, pid: Option<u32>) {
        let Some(pid) = pid else {
            return;
        };
        self.watchdog = self.sandbox.watch_memory(pid);
        self.pidfd = i32::try_from(pid)
            .ok()
            .and_then(rustix::process::Pid::from_raw)
            .and_then(|p| {
                rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()).ok()
            });
    }
}

impl Drop for SandboxHold {
    fn drop(&mut self) {
        if let Some(fd) = &self.pidfd {
            // The connection is over: the process must be too (rmcp kills
            // it as well, from a task that may not run any more). In the
            // full tier its end takes the whole PID namespace with it.
            let _ = rustix::process::pidfd_send_signal(fd, rustix::process::Signal::KILL);
            let mut fds = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
            let timeout = rustix::event::Timespec {
                tv_sec: EXIT_WAIT.as_secs().try_into().unwrap_or(5),
                tv_nsec: 0,
            };
            let _ = rustix::event::poll(&mut fds, Some(&timeout));
        }
        drop(self.watchdog.take());
        if let Some(proxy) = self.proxy.take() {
            let _ = proxy.shutdown();
        }
        for note in self.sandbox.finish(None, None, "") {
            tracing::warn!("MCP server {}: {note}", self.label);
        }
    }
}
