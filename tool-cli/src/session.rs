//! One run's context: trace id, workspace, timeout, approval policy, secrets,
//! page URL, output folder; and the call path every command shares.

use std::hash::{BuildHasher, Hasher};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tool_core::{SecretStore, ToolArgs, ToolContext, ToolRegistry, ToolResult};

use crate::cli::CommonOptions;
use crate::workspace;

/// The state of one `tool` run: a single context that every call of the run shares.
pub(crate) struct Session {
    pub(crate) ctx: ToolContext,
    pub(crate) trace_id: String,
    /// `--out`, else `None` for the per-trace temporary folder.
    pub(crate) out_dir: Option<PathBuf>,
    /// The `--lsp` servers' hook, shut down with the session.
    diagnostics: Option<Arc<tool_builtins::diagnostics::Diagnostics>>,
}

impl Drop for Session {
    /// Stops the `--lsp` servers the session started (`shutdown`, `exit`).
    fn drop(&mut self) {
        if let Some(lsp) = &self.diagnostics {
            lsp.shutdown();
        }
    }
}

impl Session {
    /// Builds the context from the common options, on top of `base` (an
    /// application's own context: its state and named values; the options
    /// then add the trace id, workspace, approver and the rest).
    ///
    /// # Errors
    /// A usage message when the workspace or the secret store is unusable.
    pub(crate) fn open(common: &CommonOptions, base: Option<ToolContext>) -> Result<Self, String> {
        let env_trace = std::env::var("TRACE_ID").ok();
        let trace_id = resolve_trace_id(common.trace_id.as_deref(), env_trace.as_deref());
        // A trace id given by the caller names a session that several `tool`
        // processes may share, so its read-before-write ledger lives in a
        // state store (see `FileLedger::for_trace`), bound to the trace and
        // the workspace; a generated one is this
        // process's alone.
        let shared_trace = common
            .trace_id
            .as_deref()
            .or(env_trace.as_deref())
            .is_some_and(|t| !t.trim().is_empty());
        let root = workspace::resolve_root(common.workspace.as_deref())?;
        let approve = common.approve.unwrap_or_default();
        let mut ctx = base
            .unwrap_or_default()
            .with_trace_id(trace_id.clone())
            .with_value("approval_policy", approve.as_str())
            .with_approver(approve.policy(&crate::app::program_name()))
            .with_asker(crate::approve::terminal_asker());
        ctx = workspace::wire(ctx, &root)?;
        if shared_trace {
            let ledger = tool_builtins::FileLedger::for_trace(&trace_id, &root)
                .map_err(|e| format!("--trace-id: the session's read ledger: {e}"))?;
            ctx = ctx.with_state(ledger);
        }
        ctx = crate::skills::make_readable(ctx, common);
        if let Some(url) = &common.page_url {
            ctx = ctx.with_page_url(url.clone());
        }
        let program = crate::app::program_name();
        ctx = ctx.with_page_url_hint(if crate::app::serving() {
            format!("start the server with `{program} serve --page-url URL`")
        } else {
            format!("give it with `{program} --page-url URL call …`")
        });
        if let Some(timeout) = common.timeout {
            ctx = ctx.with_timeout(timeout);
        }
        if let Some(path) = &common.secrets {
            ctx = ctx.with_secrets(load_secrets(path)?);
        }
        let sandbox = common.sandbox_policy()?;
        // web_fetch obeys the same --allow-net patterns as sandboxed commands;
        // web_search uses the provider the environment configures. An
        // application's own WebConfig (in `base`) is kept as it made it.
        if ctx.state::<tool_builtins::WebConfig>().is_none() {
            ctx = ctx.with_state(
                tool_builtins::WebConfig::new(sandbox.network.clone()).with_search_from_env(),
            );
        }
        let mut bash = tool_builtins::BashConfig::default().with_sandbox(sandbox);
        if let Some(path) = &common.bash_policy {
            // "ask" verdicts go to the approver set above (from --approve).
            bash = bash.with_policy(crate::bash_policy::load(path)?);
        }
        ctx = ctx.with_state(bash);
        let diagnostics = lsp_hook(common)?;
        if let Some(lsp) = &diagnostics {
            ctx = lsp.install(ctx);
        }
        Ok(Self {
            ctx,
            trace_id,
            out_dir: common.out.clone(),
            diagnostics,
        })
    }

    /// The same session, whose background jobs outlive this process: for
    /// `tool call` and `tool batch`, whose jobs later processes of the same
    /// `--trace-id` read and stop (README, "Background jobs"). Without it a
    /// job ends when the process that started it exits (`tool serve`, a
    /// host built on this crate), since nobody could reach it afterwards.
    /// Without a jobs registry (no state folder) the context is unchanged.
    #[must_use]
    pub(crate) fn with_jobs_outliving_this_process(mut self) -> Self {
        if let Ok(jobs) = tool_core::jobs::JobRegistry::of_context(&self.ctx) {
            let ctx = std::mem::take(&mut self.ctx);
            self.ctx = ctx.with_state(jobs.with_jobs_outliving_host(true));
        }
        self
    }

    /// Runs one call in this session's context through the registry's
    /// pipeline (lookup, argument checks, approval, secrets, timeout, panic
    /// containment).
    pub(crate) async fn call(
        &self,
        registry: &ToolRegistry,
        name: &str,
        args: impl Into<ToolArgs>,
    ) -> ToolResult {
        registry.execute(name, args, &self.ctx).await
    }
}

/// What [`lsp_hook`] gives: the hook, or none when diagnostics are off.
type LspHook = Option<Arc<tool_builtins::diagnostics::Diagnostics>>;

/// The diagnostics hook of `--lsp` and `--lsp-config` (and `--lsp-wait`),
/// when a server or check command is given: the `--lsp` servers first, then
/// the file's; `--lsp-wait` over the file's `wait_secs`.
///
/// # Errors
/// A usage message naming the file and what is wrong in it.
fn lsp_hook(common: &CommonOptions) -> Result<LspHook, String> {
    let mut config = match &common.lsp_config {
        Some(path) => {
            let text = crate::small_file::read_config(
                path,
                "--lsp-config",
                "a diagnostics configuration (JSON)",
            )?;
            tool_builtins::diagnostics::LspConfig::from_json(&text)
                .map_err(|e| format!("--lsp-config {}: {e}", path.display()))?
        }
        None => tool_builtins::diagnostics::LspConfig::default(),
    };
    let mut servers = common.lsp.clone();
    servers.append(&mut config.servers);
    config.servers = servers;
    if config.is_off() {
        return Ok(None);
    }
    if let Some(wait) = common.lsp_wait {
        config.wait = wait;
    }
    Ok(Some(tool_builtins::diagnostics::Diagnostics::new(config)))
}

/// Reads the `--secrets` file. Messages name the file and, for a bad entry,
/// its key; never a value (`serde_json`'s syntax errors quote no input, and the
/// file is parsed into a `Value`, never into a typed struct whose errors would).
fn load_secrets(path: &Path) -> Result<SecretStore, String> {
    let text = crate::small_file::read_config(path, "--secrets", "a secret store (JSON)")?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "the secret store {} is not valid JSON (line {}, column {})",
            path.display(),
            e.line(),
            e.column()
        )
    })?;
    SecretStore::from_json(&value).map_err(|e| format!("{}: {e}", path.display()))
}

/// The trace id: `--trace-id`, else `$TRACE_ID`, else a generated `cli-xxxxxxxx`.
/// Empty values count as absent.
pub(crate) fn resolve_trace_id(flag: Option<&str>, env: Option<&str>) -> String {
    flag.filter(|s| !s.trim().is_empty())
        .or(env.filter(|s| !s.trim().is_empty()))
        .map_or_else(generate_trace_id, str::to_owned)
}

/// `cli-` and 8 lowercase hex digits from the standard library's per-process
/// random hash keys, the time and the process id (no RNG dependency needed
/// for an id that only has to differ between runs).
fn generate_trace_id() -> String {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u32(std::process::id());
    if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
        hasher.write_u128(now.as_nanos());
    }
    format!("cli-{:08x}", hasher.finish() & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trace_id_fallback_order() {
        assert_eq!(resolve_trace_id(Some("flag"), Some("env")), "flag");
        assert_eq!(resolve_trace_id(None, Some("env")), "env");
        assert_eq!(resolve_trace_id(Some(" "), Some("env")), "env");
        let generated = resolve_trace_id(None, Some(""));
        assert!(generated.starts_with("cli-"), "{generated}");
        assert_eq!(generated.len(), 12);
        assert!(generated[4..].bytes().all(|b| b.is_ascii_hexdigit()));
    }
}
