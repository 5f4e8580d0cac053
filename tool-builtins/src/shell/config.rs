//! [`BashConfig`]: the settings of `bash_command` a host puts in the context,
//! with the documented defaults and caps.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use tool_core::SandboxPolicy;
use tool_core::truncate::Truncation;

use super::policy::CommandPolicy;

/// Default timeout of a command: 120 s.
pub const DEFAULT_BASH_TIMEOUT: Duration = Duration::from_secs(120);
/// Longest timeout a model may ask for: 600 s. The tool's registry timeout
/// (610 s) lies above it plus the kill grace, so the registry never cuts a
/// command short of what the model asked for.
pub const MAX_BASH_TIMEOUT: Duration = Duration::from_secs(600);

/// Longest `kill_grace` and `drain` used (larger settings are capped): 4 s,
/// so that the longest call, a shell exiting just before its 600 s timeout,
/// then drain + grace + the waits after `SIGKILL` and for the supervisor
/// (1 s each), stays under the tool's 610 s registry timeout.
pub const MAX_BASH_GRACE: Duration = Duration::from_secs(4);

/// Byte budget of the output kept in memory and shown: 48 KiB. Together with
/// the marker line and the metadata block the output stays under the
/// registry's default output budget (50 KiB, 2000 lines), so the registry
/// never cuts it again (which would replace `output_path` with a file holding
/// only the cut text).
pub const BASH_MAX_OUTPUT_BYTES: usize = 48 * 1024;
/// Line budget of the output shown: 1980 lines (see [`BASH_MAX_OUTPUT_BYTES`]).
pub const BASH_MAX_OUTPUT_LINES: usize = 1980;

/// Name patterns of environment variables withheld from commands on top of
/// the built-in rule (`*` matches any run of characters, `?` one, ASCII case
/// is ignored): none. The built-in rule,
/// [`tool_core::governance::secret_env`], always applies and is the one
/// every child's environment is scrubbed by (commands, stdio MCP servers,
/// the sandbox): secret words as name segments anywhere with version,
/// encoding and plural suffixes (`GITHUB_TOKEN_2`, `SECRET_V2`,
/// `MASTER_KEY_B64`, `GCP_SA_KEY_JSON`, `CI_JOB_JWT_V2`, `MYSQL_ROOT_PW`,
/// `OTP_SEED`), and credentials in values (`scheme://user:pass@host` in any
/// variable). Add a host's own names with
/// [`BashConfig::with_secret_env_pattern`].
pub const DEFAULT_SECRET_ENV_PATTERNS: &[&str] = &[];

/// Settings of `bash_command`, read from the context
/// (`ToolContext::with_state(BashConfig { .. })`); the defaults apply without one.
///
/// ```
/// use std::time::Duration;
/// use tool_builtins::{BashConfig, CommandPolicy, PolicyAction};
///
/// let config = BashConfig::default()
///     .with_default_timeout(Duration::from_secs(30))
///     .with_secret_env_pattern("MY_COMPANY_*")
///     .with_policy(CommandPolicy::new(PolicyAction::Allow).deny("rm -rf *"));
/// assert_eq!(config.default_timeout, Duration::from_secs(30));
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct BashConfig {
    /// The shell to run `-c COMMAND` with; `None` picks `bash` (from
    /// `/bin`, `/usr/bin` or `/usr/local/bin`), else `/bin/sh`.
    pub shell: Option<PathBuf>,
    /// Timeout when the model gives none. Default [`DEFAULT_BASH_TIMEOUT`].
    pub default_timeout: Duration,
    /// Largest timeout the model may ask for, at most [`MAX_BASH_TIMEOUT`]
    /// (larger values are capped there). Default [`MAX_BASH_TIMEOUT`].
    pub max_timeout: Duration,
    /// How long output is still read after the shell exits, for children it
    /// left behind; they are stopped after it. Default 500 ms, at most
    /// [`MAX_BASH_GRACE`].
    pub drain: Duration,
    /// Time between `SIGTERM` and `SIGKILL` when a call ends with processes
    /// still running: on timeout, cancellation, and for background processes
    /// left after the drain deadline. Default 2 s, at most [`MAX_BASH_GRACE`].
    pub kill_grace: Duration,
    /// Name patterns (`*` and `?` wildcards, ASCII case ignored) of environment
    /// variables that are not passed on, besides those the built-in rule
    /// ([`tool_core::governance::secret_env`]) withholds. Default
    /// [`DEFAULT_SECRET_ENV_PATTERNS`] (none).
    pub secret_env_patterns: Vec<String>,
    /// The environment to start from instead of this process's own (still
    /// filtered by `secret_env_patterns`). Default `None`.
    pub base_env: Option<Vec<(OsString, OsString)>>,
    /// Output budgets and spill parent. Default: [`BASH_MAX_OUTPUT_BYTES`] and
    /// [`BASH_MAX_OUTPUT_LINES`], spilling to the context's trace folder in
    /// `tool_core::truncate::default_spill_dir()` (its `trace_id` is replaced
    /// by the context's for each call).
    pub truncation: Truncation,
    /// Checked before every command: `Deny` verdicts are refused with a
    /// `denied` error; `Ask` verdicts go to the context's approver
    /// (`ToolContext::with_approver`, the governance confirmation gate), which
    /// may approve, edit the command or refuse; with no approver they are
    /// refused. Default `None` (no checks).
    pub policy: Option<CommandPolicy>,
    /// Refuse the commands no user means to let a model run unasked (a
    /// recursive delete of `/`, `~` or the workspace root, a force push, a
    /// download piped into a shell, a write to a block device, a fork bomb)
    /// unless [`BashConfig::policy`] allows them with an explicit rule; the
    /// list is in [`crate::shell::guard`]. Default `true`.
    pub guard: bool,
    /// The kernel sandbox commands run in (`tool_sandbox`): default
    /// [`SandboxPolicy::default`], the `workspace-write` policy in the `auto`
    /// tier with no network. [`SandboxPolicy::off`] runs commands
    /// unsandboxed, said in every result (note and `sandbox` metadata).
    pub sandbox: SandboxPolicy,
}

impl Default for BashConfig {
    fn default() -> Self {
        Self {
            shell: None,
            default_timeout: DEFAULT_BASH_TIMEOUT,
            max_timeout: MAX_BASH_TIMEOUT,
            drain: Duration::from_millis(500),
            kill_grace: Duration::from_secs(2),
            secret_env_patterns: DEFAULT_SECRET_ENV_PATTERNS
                .iter()
                .map(|s| (*s).to_owned())
                .collect(),
            base_env: None,
            truncation: Truncation::new()
                .max_bytes(BASH_MAX_OUTPUT_BYTES)
                .max_lines(BASH_MAX_OUTPUT_LINES),
            policy: None,
            guard: true,
            sandbox: SandboxPolicy::default(),
        }
    }
}

impl BashConfig {
    /// Turns the default guard on or off (see [`BashConfig::guard`]).
    #[must_use]
    pub fn with_guard(mut self, on: bool) -> Self {
        self.guard = on;
        self
    }

    /// Sets the shell.
    #[must_use]
    pub fn with_shell(mut self, shell: impl Into<PathBuf>) -> Self {
        self.shell = Some(shell.into());
        self
    }

    /// Sets the default timeout.
    #[must_use]
    pub fn with_default_timeout(mut self, timeout: Duration) -> Self {
        self.default_timeout = timeout;
        self
    }

    /// Sets the largest timeout a model may ask for (capped at [`MAX_BASH_TIMEOUT`]).
    #[must_use]
    pub fn with_max_timeout(mut self, timeout: Duration) -> Self {
        self.max_timeout = timeout.min(MAX_BASH_TIMEOUT);
        self
    }

    /// Sets the drain deadline after the shell exits.
    #[must_use]
    pub fn with_drain(mut self, drain: Duration) -> Self {
        self.drain = drain;
        self
    }

    /// Sets the grace between `SIGTERM` and `SIGKILL`.
    #[must_use]
    pub fn with_kill_grace(mut self, grace: Duration) -> Self {
        self.kill_grace = grace;
        self
    }

    /// Adds a secret name pattern (withheld besides the built-in rule).
    #[must_use]
    pub fn with_secret_env_pattern(mut self, pattern: impl Into<String>) -> Self {
        self.secret_env_patterns.push(pattern.into());
        self
    }

    /// Starts commands from this environment instead of the process's own.
    #[must_use]
    pub fn with_base_env<K, V>(mut self, vars: impl IntoIterator<Item = (K, V)>) -> Self
    where
        K: Into<OsString>,
        V: Into<OsString>,
    {
        self.base_env = Some(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        );
        self
    }

    /// Sets the output budgets and spill folder.
    #[must_use]
    pub fn with_truncation(mut self, truncation: Truncation) -> Self {
        self.truncation = truncation;
        self
    }

    /// Sets the sandbox policy (see [`BashConfig::sandbox`]).
    #[must_use]
    pub fn with_sandbox(mut self, sandbox: SandboxPolicy) -> Self {
        self.sandbox = sandbox;
        self
    }

    /// Sets the command policy.
    #[must_use]
    pub fn with_policy(mut self, policy: CommandPolicy) -> Self {
        self.policy = Some(policy);
        self
    }
}
