//! `bash_command`: run a shell command in the workspace and return its output.
//!
//! The command runs as `bash -c COMMAND` (`sh -c` where bash is missing) in a
//! process group of its own, with standard input from `/dev/null` so nothing
//! waits for a keyboard. Standard output and standard error share one pipe,
//! so the model reads them interleaved exactly as they were written.
//!
//! Hazards handled:
//! - **Unbounded output**: bytes stream through [`HeadTail`]: the head and the
//!   tail are kept in memory, everything is written to a spill file whose path
//!   the output names, so memory stays bounded whatever the command prints.
//!   The spill file lies in the folder of the context's trace id, inside a
//!   per-user `0700` folder (see `tool_core::truncate`), where `read_file` and
//!   `grep_content` of the same trace can read it.
//!   The spill file is capped too (`Truncation::max_spill_bytes`, 32 MiB by
//!   default: the beginning is kept and the output says the file was cut), so
//!   `yes` cannot fill the disk.
//! - **Processes outliving the call**: the shell runs under a per-call
//!   supervisor: a fork of this process that marks itself a child subreaper
//!   (`PR_SET_CHILD_SUBREAPER`), starts the shell (with `PR_SET_PDEATHSIG`)
//!   and reaps it; so every process the command starts stays below it
//!   however it detaches (`&`, `nohup`, `setsid`, `disown`, double forks,
//!   `set -m` jobs), and the tree is found from `/proc`. The crate's private
//!   `proctree` module documents the design. Every
//!   process a call started ends with the call: on success, timeout,
//!   cancellation, and when the call's future is dropped; and when this
//!   process dies, even by `SIGKILL`, the supervisor sees its control pipe
//!   close and kills the tree.
//! - **Background children**: the call completes when the shell exits plus a
//!   short drain deadline ([`BashConfig::drain`]) for output still on its way;
//!   then whatever is still running gets `SIGTERM`, and `SIGKILL` after
//!   [`BashConfig::kill_grace`]; the output says so and the metadata carries
//!   `stopped_background: true`. A background job cannot keep the call open,
//!   nor outlive it.
//! - **Timeouts**: every process below the supervisor, and every process
//!   group they are in (job control, `set -m`, gives each job its own), gets
//!   `SIGTERM`, then `SIGKILL` after [`BashConfig::kill_grace`]. The process
//!   tree is read from `/proc`, frozen while it is read, and re-read until
//!   nothing is left. Cancellation through the context does the same, and so
//!   does dropping the call half-way.
//! - **Terminal escapes**: colours, cursor moves and OSC strings are removed,
//!   with the parser's state carried across reads.
//! - **Secrets**: environment variables whose names look like secrets
//!   (`*_KEY`, `*_TOKEN`, `*_SECRET`, … see [`BashConfig::secret_env_patterns`])
//!   are not passed on. Secret values of the context's `SecretStore` that the
//!   command prints are masked back to their `<secret>key</secret>`
//!   placeholders as the output streams in ([`StreamMasker`], also when a
//!   value is split across two reads), before anything is kept or written to
//!   the spill file.
//! - **Dangerous commands**: with a [`CommandPolicy`] in [`BashConfig::policy`],
//!   every segment of the command is checked first; denied commands are
//!   refused, and those needing confirmation go to the context's approver.
//!
//! A non-zero exit status is not a tool error, and neither is the command's
//! own timeout: the output says what happened and the metadata carries
//! `exit_code`, `timed_out`, `truncated` and `output_path`.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, Signal};
use serde_json::{Map, Value};
use tool_core::truncate::{HeadTail, StreamMasker, Truncation};
use tool_core::{
    ApprovalDecision, ApprovalRequest, ErrorKind, ToolContext, ToolKind, ToolResult, tool,
};

use crate::ansi::EscapeStripper;
use crate::bash_policy::{CommandPolicy, MAX_COMMAND_BYTES, PolicyAction};
use crate::proctree::{ProcessTree, SupervisorFds, supervise};
use crate::workspace::workspace_of;

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

/// Patterns of environment variable names that are not passed to commands
/// (`*` matches any run of characters, ASCII case is ignored). The `tool`
/// program also removes variables matching them from its own environment at
/// start-up, so a command cannot read them from `/proc/<parent>/environ`.
pub const DEFAULT_SECRET_ENV_PATTERNS: &[&str] = &[
    "*_KEY",
    "*_APIKEY",
    "*API_KEY*",
    "*_TOKEN",
    "TOKEN",
    "*_PAT",
    "SECRET",
    "*_SECRET*",
    "*PASSWORD*",
    "*_PASSWD",
    "PASSWD",
    "*_PWD",
    "*_PASS",
    "PGPASS",
    "*PASSPHRASE*",
    "JWT",
    "*_JWT",
    "*COOKIE*",
    "*PRIVATE_KEY*",
    "*WEBHOOK*",
    "*_CREDENTIALS",
];

/// Whether the environment variable `name` matches one of `patterns`
/// (`*` matches any run of characters, ASCII case is ignored), as
/// [`BashConfig::secret_env_patterns`] are matched.
///
/// ```
/// use std::ffi::OsStr;
/// use tool_builtins::bash::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_env_name};
///
/// assert!(is_secret_env_name(OsStr::new("GITHUB_TOKEN"), DEFAULT_SECRET_ENV_PATTERNS));
/// assert!(!is_secret_env_name(OsStr::new("PATH"), DEFAULT_SECRET_ENV_PATTERNS));
/// ```
pub fn is_secret_env_name<P: AsRef<str>>(name: &OsStr, patterns: &[P]) -> bool {
    let name = name.to_string_lossy().to_ascii_uppercase();
    patterns
        .iter()
        .any(|p| name_matches(p.as_ref().to_ascii_uppercase().as_bytes(), name.as_bytes()))
}

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
    /// Name patterns (`*` wildcards, ASCII case ignored) of environment
    /// variables that are not passed on. Default [`DEFAULT_SECRET_ENV_PATTERNS`].
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
    /// list is in [`crate::bash_guard`]. Default `true`.
    pub guard: bool,
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

    /// Adds a secret name pattern to the defaults.
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

    /// Sets the command policy.
    #[must_use]
    pub fn with_policy(mut self, policy: CommandPolicy) -> Self {
        self.policy = Some(policy);
        self
    }
}

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
///   the command and everything it started are stopped.
/// * `workdir` - Folder to run in, relative to the workspace root (default: the root).
/// * `description` - A short description of what the command does, in 5-10 words.
#[tool(kind = "exec", tags = ["shell"], destructive, open_world, timeout = "610s")]
pub async fn bash_command(
    command: String,
    timeout: Option<f64>,
    workdir: Option<String>,
    description: Option<String>,
    context: &ToolContext,
) -> ToolResult {
    let config = context
        .state::<BashConfig>()
        .map_or_else(BashConfig::default, |c| (*c).clone());
    let timeout = match check_timeout(timeout, &config) {
        Ok(t) => t,
        Err(result) => return result,
    };
    if command.trim().is_empty() {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            "The command is empty. Give the shell command to run.",
        );
    }
    if command.len() > MAX_COMMAND_BYTES {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!(
                "The command is {} bytes long; at most {MAX_COMMAND_BYTES} bytes are accepted (the \
                 limit MAX_COMMAND_BYTES, the kernel's limit on one argument of `bash -c`). Write \
                 long content to a file with write_file and use the file in a short command.",
                command.len()
            ),
        );
    }
    if config.guard {
        let parts = crate::bash_policy::split_command(&command);
        let root = workspace_of(context)
            .map(|ws| ws.root().to_path_buf())
            .unwrap_or_default();
        if let Some(why) =
            crate::bash_guard::refuses(&command, &parts, &root, config.policy.as_ref())
        {
            return ToolResult::error(ErrorKind::Denied, why);
        }
    }
    let command = match &config.policy {
        None => command,
        Some(policy) => {
            match apply_policy(policy, command, description.as_deref(), context).await {
                Ok(command) => command,
                Err(result) => return result,
            }
        }
    };
    let ws = match workspace_of(context) {
        Ok(ws) => ws,
        Err(result) => return result,
    };
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
                return ToolResult::failed(format!(
                    "Cannot open the working directory {}: {e}",
                    b.path.display()
                ));
            }
        },
        Ok(b) if b.exists() => {
            return ToolResult::failed(format!(
                "Working directory is not a directory: {}",
                b.path.display()
            ));
        }
        Ok(b) => {
            return ToolResult::failed(format!(
                "Working directory not found: {}",
                b.path.display()
            ));
        }
        Err(e) => return e.to_result(),
    };
    let (env, withheld) = split_env(
        config
            .base_env
            .clone()
            .unwrap_or_else(|| std::env::vars_os().collect()),
        &config.secret_env_patterns,
    );
    let withheld_note = withheld_note(&command, &withheld);
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
        masker: StreamMasker::for_context(context),
    };
    let title = description
        .filter(|d| !d.trim().is_empty())
        .unwrap_or_else(|| spec.command.clone());
    // The command stops when the context is cancelled, and when this call is
    // dropped half-way (the guard cancels the child token on drop).
    let cancel = context.cancellation_token().child_token();
    let _stop_when_dropped = cancel.clone().drop_guard();
    let shell = spec.shell.clone();
    let watched = tokio::task::spawn_blocking(move || run(&spec, &|| cancel.is_cancelled()));
    let result = match watched.await {
        Ok(Ok(outcome)) => outcome.into_result(timeout).with_title(title),
        Ok(Err(e)) => ToolResult::failed(format!(
            "Could not run the command with {}: {e}",
            shell.display()
        ))
        .with_title(title),
        Err(e) => ToolResult::error(
            ErrorKind::Panicked,
            format!("Running the command failed unexpectedly: {e}"),
        )
        .with_title(title),
    };
    match withheld_note {
        Some(note) => result.with_note(note),
        None => result,
    }
}

/// Checks `command` against the policy: `Deny` refuses, `Ask` goes to the
/// context's approver (the governance confirmation gate; none configured
/// means refused), which may also edit the command. Returns the command to run.
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's final result; it is returned at once"
)]
async fn apply_policy(
    policy: &CommandPolicy,
    command: String,
    description: Option<&str>,
    context: &ToolContext,
) -> Result<String, ToolResult> {
    let denied = |reason: &str| {
        ToolResult::error(
            ErrorKind::Denied,
            format!("This command is not allowed by the command policy: {reason}"),
        )
    };
    let too_big = |limit: &str| {
        ToolResult::error(
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
    let Some(approver) = context.approver() else {
        return Err(ToolResult::error(
            ErrorKind::Denied,
            format!(
                "This command needs confirmation and no approver is configured, so it was not run. {}",
                decision.reason
            ),
        ));
    };
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
    };
    match approver.approve(request).await {
        ApprovalDecision::Approve => Ok(command),
        ApprovalDecision::ApproveWithEdits(edited) => {
            let edited = edited
                .get("command")
                .and_then(Value::as_str)
                .map_or(command, str::to_owned);
            // A person approved this text; only a deny rule still stops it.
            let again = policy.check(&edited);
            if let Some(limit) = &again.limit {
                return Err(too_big(limit));
            }
            if again.action == PolicyAction::Deny {
                return Err(denied(&again.reason));
            }
            Ok(edited)
        }
        ApprovalDecision::Deny(reason) => Err(ToolResult::error(
            ErrorKind::Denied,
            format!(
                "The user denied the command: {reason}. {} It was not run: rewrite it so that the \
                 command policy allows it without confirmation (for example, run the inner command \
                 of a substitution on its own first), or ask the user to run it.",
                decision.reason
            ),
        )),
    }
}

/// The model's timeout in seconds, checked against the configured bounds.
#[allow(
    clippy::result_large_err,
    reason = "the error is the tool's final result; it is returned at once"
)]
fn check_timeout(timeout: Option<f64>, config: &BashConfig) -> Result<Duration, ToolResult> {
    let max = config.max_timeout.min(MAX_BASH_TIMEOUT);
    let Some(secs) = timeout else {
        return Ok(config.default_timeout.min(max));
    };
    let valid = secs.is_finite() && secs > 0.0 && secs <= max.as_secs_f64();
    if !valid {
        return Err(ToolResult::error(
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

/// Splits `vars` into those passed to commands and the names of those
/// withheld as secret-looking ([`is_secret_env`] with `patterns`).
pub(crate) fn split_env(
    vars: Vec<(OsString, OsString)>,
    patterns: &[String],
) -> (Vec<(OsString, OsString)>, Vec<String>) {
    let mut withheld = Vec::new();
    let kept = vars
        .into_iter()
        .filter(|(name, value)| {
            let secret = is_secret_env(name, value, patterns);
            if secret {
                withheld.push(name.to_string_lossy().into_owned());
            }
            !secret
        })
        .collect();
    (kept, withheld)
}

/// The model-visible note when `command` refers to a withheld variable
/// (`$NAME` or `${NAME`): the command will see it empty, and the model
/// should know why rather than debug an empty value.
fn withheld_note(command: &str, withheld: &[String]) -> Option<String> {
    let named: Vec<&str> = withheld
        .iter()
        .filter(|n| {
            let plain = format!("${n}");
            let braced = format!("${{{n}");
            command.match_indices(&plain).any(|(i, m)| {
                !command[i + m.len()..]
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            }) || command.contains(&braced)
        })
        .map(String::as_str)
        .collect();
    (!named.is_empty()).then(|| {
        format!(
            "{} {} not passed to the command (secret-looking variables are withheld); \
             it is empty there. Use a secret placeholder if the command needs the value.",
            named.join(", "),
            if named.len() == 1 { "was" } else { "were" }
        )
    })
}

/// Whether the variable `name=value` looks like a secret, by the rule the
/// `tool` program also scrubs its own environment with. ASCII case ignored:
/// - its name matches one of `patterns` ([`DEFAULT_SECRET_ENV_PATTERNS`]:
///   `*_KEY`, `*_TOKEN`, `*PASSWORD*`, `*_CREDENTIALS`, ...);
/// - its name contains `CRED` (`CREDENTIALS_JSON`, `GIT_CREDS`);
/// - its name contains `AUTH` (`NPM_AUTH`, `HTTP_AUTHORIZATION`), except in
///   the words `AUTHOR` and `AUTHORS` between underscores, so
///   `GIT_AUTHOR_NAME` stays;
/// - its name holds `CONN` or `DSN` and its value a `Password=` or `Pwd=`
///   (a connection string);
/// - its name is `URL`, `URI` or `DSN` or ends in `_URL`, `_URI` or `_DSN`,
///   and its value is a URL with a password (`scheme://user:password@host`;
///   the user may be empty): `DATABASE_URL=postgres://u:p@h/db` goes,
///   `REPO_URL=ssh://git@github.com/x` stays.
///
/// Not covered: a token as a URL's user without a password
/// (`https://TOKEN@host`), credentials in other values (proxy variables are
/// kept so commands reach the network), secrets in files.
///
/// ```
/// use std::ffi::OsStr;
/// use tool_builtins::bash::{DEFAULT_SECRET_ENV_PATTERNS, is_secret_env};
///
/// let secret = |n: &str, v: &str| is_secret_env(OsStr::new(n), OsStr::new(v), DEFAULT_SECRET_ENV_PATTERNS);
/// assert!(secret("DATABASE_URL", "postgres://u:pw@db/app"));
/// assert!(secret("NPM_AUTH", "x") && secret("CREDENTIALS_JSON", "{}"));
/// assert!(!secret("GIT_AUTHOR_NAME", "Ada") && !secret("API_URL", "https://h/a"));
/// ```
pub fn is_secret_env<P: AsRef<str>>(name: &OsStr, value: &OsStr, patterns: &[P]) -> bool {
    if is_secret_env_name(name, patterns) {
        return true;
    }
    let upper = name.to_string_lossy().to_ascii_uppercase();
    if upper.contains("CRED") || has_auth_word(&upper) {
        return true;
    }
    let text = value.to_string_lossy();
    // A connection string with a password (`Server=…;Password=…`).
    if (upper.contains("CONN") || upper.contains("DSN"))
        && (text.to_ascii_lowercase().contains("password=")
            || text.to_ascii_lowercase().contains("pwd="))
    {
        return true;
    }
    is_url_name(&upper) && has_url_password(&text)
}

/// Whether an upper-case name holds `AUTH` other than in the words
/// `AUTHOR`/`AUTHORS` (words are the parts between `_`).
fn has_auth_word(upper: &str) -> bool {
    upper
        .split('_')
        .any(|word| word.contains("AUTH") && word != "AUTHOR" && word != "AUTHORS")
}

fn is_url_name(upper: &str) -> bool {
    ["_URL", "_URI", "_DSN"]
        .iter()
        .any(|suffix| upper.ends_with(suffix) || upper == &suffix[1..])
}

/// Whether `value` is `scheme://[user]:password@...`: the authority (from
/// `://` to the first `/`, `?` or `#`) has user info (before its last `@`)
/// holding a `:`.
fn has_url_password(value: &str) -> bool {
    let Some((scheme, rest)) = value.split_once("://") else {
        return false;
    };
    if scheme.is_empty() {
        return false;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    authority
        .rsplit_once('@')
        .is_some_and(|(userinfo, _)| userinfo.contains(':'))
}

/// `*` matches any run of bytes; everything else literally.
fn name_matches(pattern: &[u8], name: &[u8]) -> bool {
    match pattern.split_first() {
        None => name.is_empty(),
        Some((b'*', rest)) => (0..=name.len()).any(|i| name_matches(rest, &name[i..])),
        Some((c, rest)) => name.first() == Some(c) && name_matches(rest, &name[1..]),
    }
}

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
}

/// Why the command was stopped before the shell exited on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stop {
    Timeout,
    Cancelled,
}

/// What happened to one command.
#[derive(Debug)]
pub(crate) struct Outcome {
    status: Option<ExitStatus>,
    stop: Option<Stop>,
    /// The shell exited on its own, but processes it started were still
    /// running after the drain deadline and were stopped.
    stopped_background: bool,
    output: tool_core::truncate::Truncated,
}

impl Outcome {
    fn into_result(self, timeout: Duration) -> ToolResult {
        let exit_code = self.status.and_then(|s| s.code());
        let signal = self.status.and_then(|s| s.signal());
        let mut notes = Vec::new();
        match self.stop {
            Some(Stop::Timeout) => notes.push(format!(
                "Command timed out after {} and was stopped (SIGTERM, then SIGKILL, to every process it started).",
                seconds(timeout)
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
            .with_metadata("exit_code", exit_code.map_or(Value::Null, Value::from))
            .with_metadata("timed_out", self.stop == Some(Stop::Timeout))
            .with_metadata("truncated", self.output.truncated)
            .with_metadata("output_path", output_path)
            .with_metadata("output_bytes", self.output.total_bytes);
        if let Some(sig) = signal {
            result = result.with_metadata("signal", sig);
        }
        if self.stopped_background {
            result = result.with_metadata("stopped_background", true);
        }
        if self.stop == Some(Stop::Cancelled) {
            result = result.with_metadata("cancelled", true);
        }
        result
    }
}

fn seconds(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s.fract() == 0.0 {
        format!("{s:.0} s")
    } else {
        format!("{s} s")
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

    fn read_status(&mut self) {
        let mut raw = [0_u8; 4];
        if let Ok(4) = rustix::io::read(&self.status_pipe, &mut raw) {
            self.shell = Some(ExitStatus::from_raw(i32::from_ne_bytes(raw)));
        }
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
    /// Waits up to `wait` for output and consumes what is there.
    /// Sleeps instead once the pipe is closed.
    fn pump(&mut self, wait: Duration) -> io::Result<()> {
        if self.eof {
            std::thread::sleep(wait.min(EXIT_POLL));
            return Ok(());
        }
        let timeout = Timespec::try_from(wait).unwrap_or(Timespec {
            tv_sec: 0,
            tv_nsec: 25_000_000,
        });
        let mut fds = [PollFd::new(&self.pipe, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) => return Ok(()),
            Ok(_) => {}
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
            self.pump(Duration::ZERO)?;
        }
        Ok(())
    }
}

/// A descriptor numbered 3 or above (the same one when it already is), so that
/// the child's `dup2` onto 0, 1 and 2 can never overwrite it.
fn above_stdio(fd: OwnedFd) -> io::Result<OwnedFd> {
    if fd.as_raw_fd() > 2 {
        return Ok(fd);
    }
    Ok(rustix::io::fcntl_dupfd_cloexec(&fd, 3)?)
}

/// Starts the command under a supervisor ([`crate::proctree`]) and watches it
/// to completion, timeout or cancellation. Whatever way it ends, every process
/// the command started is stopped before this returns.
/// The environment variable that carries the command text to the shell.
const COMMAND_VAR: &str = "AGENT_TOOLS_COMMAND";

/// The shell's `-c` script: take the command from [`COMMAND_VAR`], drop the
/// variable, run the command (POSIX `sh` and `bash` alike).
const COMMAND_RUNNER: &str =
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
        },
    );
    let spawned = command.spawn();
    // The command still holds our copies of the write end (and the
    // supervisor's pipe ends): close them now, or the pipe would never report
    // end of file.
    drop(command);
    let child = spawned?;
    let mut sup = Supervised {
        child,
        control: Some(control_write),
        status_pipe: status_read,
        shell: None,
        exited: false,
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
        cap.pump(wait.min(POLL_SLICE))?;
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
    // The supervisor exits on its own once nothing is left below it.
    if sup.has_exited()? {
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
        cap.pump(until.saturating_duration_since(now).min(POLL_SLICE))?;
    }
    sup.finish(KILL_WAIT)?;
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::Workspace;
    use std::path::Path;
    use std::time::Instant;

    fn ctx_in(dir: &Path, config: BashConfig) -> ToolContext {
        ToolContext::new()
            .with_state(Workspace::new(dir).unwrap())
            .with_state(config)
    }

    fn spill_dir() -> PathBuf {
        std::env::temp_dir().join("tool-builtins-bash-tests")
    }

    fn config() -> BashConfig {
        let truncation = BashConfig::default().truncation.spill_dir(spill_dir());
        BashConfig::default().with_truncation(truncation)
    }

    /// Runs the async tool to completion on a fresh runtime.
    fn call(
        ctx: &ToolContext,
        command: &str,
        timeout: Option<f64>,
        workdir: Option<&str>,
    ) -> ToolResult {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(bash_command(
            command.to_owned(),
            timeout,
            workdir.map(str::to_owned),
            None,
            ctx,
        ))
    }

    fn run_in(dir: &Path, command: &str, timeout: Option<f64>, config: BashConfig) -> ToolResult {
        call(&ctx_in(dir, config), command, timeout, None)
    }

    /// Processes (not zombies) whose command line contains `marker`.
    fn processes_matching(marker: &str) -> Vec<String> {
        let me = std::process::id().to_string();
        let mut found = Vec::new();
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if !name.bytes().all(|b| b.is_ascii_digit()) || name == me {
                continue;
            }
            let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
                continue;
            };
            let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
            let state = stat.rsplit(')').next().unwrap_or("").trim_start();
            if state.starts_with('Z') {
                continue;
            }
            if String::from_utf8_lossy(&cmdline).contains(marker) {
                found.push(name);
            }
        }
        found
    }

    /// Kills the process groups of the processes `processes_matching(marker)` finds
    /// (groups this test started).
    fn kill_groups_of(marker: &str) {
        for pid in processes_matching(marker) {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let pgid = stat
                .rsplit(')')
                .next()
                .and_then(|rest| rest.split_whitespace().nth(2))
                .and_then(|g| g.parse::<i32>().ok())
                .and_then(Pid::from_raw);
            // Never our own group: only the groups bash_command created.
            if let Some(pgid) = pgid.filter(|g| *g != rustix::process::getpgrp()) {
                let _ = rustix::process::kill_process_group(pgid, Signal::KILL);
            }
        }
    }

    #[test]
    fn stdout_is_captured_with_exit_code_zero() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(dir.path(), "echo hello", None, config());
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(r.output, "hello\n");
        assert_eq!(r.metadata["exit_code"], 0);
        assert_eq!(r.metadata["timed_out"], false);
        assert_eq!(r.metadata["truncated"], false);
        assert_eq!(r.metadata["output_path"], Value::Null);
        assert_eq!(r.title.as_deref(), Some("echo hello"));
    }

    #[test]
    fn non_zero_exit_is_not_an_error_and_empty_output_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(dir.path(), "exit 3", None, config());
        assert!(r.is_ok());
        assert!(r.output.starts_with("(no output)\n"), "{}", r.output);
        assert!(r.output.contains("Command exited with code 3."));
        assert_eq!(r.metadata["exit_code"], 3);
    }

    #[test]
    fn stdout_and_stderr_are_merged_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(
            dir.path(),
            "echo one; echo two >&2; echo three; echo four >&2",
            None,
            config(),
        );
        assert_eq!(r.output, "one\ntwo\nthree\nfour\n");
    }

    #[test]
    fn stdin_is_empty() {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let r = run_in(dir.path(), "cat; read x; echo got:$x", Some(5.0), config());
        assert_eq!(r.output, "got:\n");
        assert!(start.elapsed() < Duration::from_secs(2));
    }

    #[test]
    fn background_child_holding_the_pipe_does_not_hang_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let marker = format!("marker-background-{}", std::process::id());
        let r = run_in(
            dir.path(),
            &format!("bash -c 'sleep 30; true' {marker} & echo started"),
            Some(10.0),
            config(),
        );
        assert!(
            start.elapsed() < Duration::from_secs(3),
            "{:?}",
            start.elapsed()
        );
        assert!(r.output.contains("started"));
        assert_eq!(r.metadata["exit_code"], 0);
        kill_groups_of(&marker);
    }

    #[test]
    fn background_writer_does_not_hang_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let r = run_in(
            dir.path(),
            "(while true; do echo tick; sleep 0.2; done) & sleep 1; echo done",
            Some(10.0),
            config(),
        );
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        assert!(r.output.contains("done"));
        assert_eq!(r.metadata["exit_code"], 0);
    }

    #[test]
    fn timeout_kills_the_whole_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("marker-timeout-{}", std::process::id());
        let command =
            format!("(while true; do echo {marker}; sleep 0.1; done) & sleep 300; echo {marker}");
        let start = Instant::now();
        let r = run_in(dir.path(), &command, Some(1.0), config());
        let took = start.elapsed();
        assert!(r.is_ok(), "a timeout is not a tool error: {r:?}");
        assert_eq!(r.metadata["timed_out"], true);
        assert!(r.output.contains(&marker), "{}", r.output);
        assert!(
            r.output.contains("Command timed out after 1 s"),
            "{}",
            r.output
        );
        assert!(
            took >= Duration::from_secs(1) && took < Duration::from_secs(4),
            "{took:?}"
        );
        assert!(processes_matching(&marker).is_empty());
    }

    #[test]
    fn timeout_kills_job_controlled_processes_in_their_own_groups() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("marker-jobs-{}", std::process::id());
        // With `set -m` every job gets a process group of its own.
        let command = format!(
            "set -m; (while true; do date >> f; sleep 0.2; done) & sh -c 'sleep 300; :' {marker}; echo {marker}"
        );
        let start = Instant::now();
        let r = run_in(dir.path(), &command, Some(1.0), config());
        assert_eq!(r.metadata["timed_out"], true, "{r:?}");
        assert!(
            start.elapsed() < Duration::from_secs(4),
            "{:?}",
            start.elapsed()
        );
        let leftovers = processes_matching(&marker);
        kill_groups_of(&marker);
        assert!(leftovers.is_empty(), "still running: {leftovers:?}");
        let written = std::fs::metadata(dir.path().join("f")).unwrap().len();
        std::thread::sleep(Duration::from_millis(600));
        assert_eq!(
            std::fs::metadata(dir.path().join("f")).unwrap().len(),
            written,
            "the background job still writes"
        );
    }

    #[test]
    fn processes_ignoring_term_are_killed() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("marker-noterm-{}", std::process::id());
        let command = format!("trap '' TERM; (trap '' TERM; sleep 300; echo {marker}) & sleep 300");
        let start = Instant::now();
        let r = run_in(
            dir.path(),
            &command,
            Some(0.5),
            config().with_kill_grace(Duration::from_millis(300)),
        );
        assert_eq!(r.metadata["timed_out"], true);
        assert!(start.elapsed() < Duration::from_secs(3));
        assert!(processes_matching(&marker).is_empty());
    }

    #[test]
    fn cancellation_stops_the_group() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("marker-cancel-{}", std::process::id());
        let ctx = ctx_in(dir.path(), config());
        let token = ctx.cancellation_token().clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            token.cancel();
        });
        let start = Instant::now();
        let r = call(&ctx, &format!("sleep 300; echo {marker}"), Some(60.0), None);
        canceller.join().unwrap();
        assert!(start.elapsed() < Duration::from_secs(3));
        assert_eq!(r.metadata["cancelled"], true);
        assert!(processes_matching(&marker).is_empty());
    }

    #[test]
    fn huge_output_is_bounded_and_spilled() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(
            dir.path(),
            "yes 0123456789 | head -c 30000000",
            Some(60.0),
            config(),
        );
        assert_eq!(r.metadata["truncated"], true);
        assert_eq!(r.metadata["exit_code"], 0);
        assert_eq!(r.metadata["output_bytes"], 30_000_000);
        assert!(r.output.len() < 60 * 1024, "{}", r.output.len());
        assert!(r.output.starts_with("0123456789\n"));
        let path = r.metadata["output_path"].as_str().unwrap().to_owned();
        assert!(r.output.contains(&path));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), 30_000_000);
        std::fs::remove_file(path).unwrap();
    }

    #[test]
    fn runaway_output_spill_file_is_capped() {
        let dir = tempfile::tempdir().unwrap();
        // A spill parent must be private (mode 0700).
        let spill = tempfile::Builder::new()
            .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
            .tempdir()
            .unwrap();
        let truncation = BashConfig::default()
            .truncation
            .spill_dir(spill.path())
            .max_spill_bytes(100_000);
        let r = run_in(
            dir.path(),
            "yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA | head -c 5000000",
            Some(60.0),
            config().with_truncation(truncation),
        );
        assert_eq!(r.metadata["output_bytes"], 5_000_000);
        let path = r.metadata["output_path"].as_str().unwrap();
        assert_eq!(std::fs::metadata(path).unwrap().len(), 100_000);
        assert!(
            r.output.contains("its first 100000 bytes were saved to"),
            "{}",
            r.output
        );
        // 5 000 000 bytes of 40-byte lines, less the lines shown.
        let shown = r.output.lines().filter(|l| l.starts_with("AAAA")).count();
        assert!(
            r.output.contains(&format!("... {} lines", 125_000 - shown)),
            "{}",
            r.output
        );
    }

    #[test]
    fn truncation_inside_multibyte_characters_stays_valid() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(
            dir.path(),
            r"head -c 60000 /dev/zero | tr '\0' a; printf '\360\237\230\200%.0s' $(seq 1 20000)",
            Some(30.0),
            config(),
        );
        assert_eq!(r.metadata["truncated"], true);
        assert!(!r.output.contains('\u{fffd}'));
        assert!(r.output.trim_end().ends_with('😀') || r.output.contains("😀"));
        if let Some(p) = r.metadata["output_path"].as_str() {
            std::fs::remove_file(p).unwrap();
        }
    }

    #[test]
    fn escapes_are_stripped_across_reads() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(
            dir.path(),
            r"printf '\033[1;3'; sleep 0.2; printf '1mred\033[0m \033]0;ti'; sleep 0.2; printf 'tle\007plain\n'",
            None,
            config(),
        );
        assert_eq!(r.output, "red plain\n");
    }

    #[test]
    fn unterminated_osc_and_c1_escapes_do_not_swallow_output() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(
            dir.path(),
            r"printf 'M\033]0;title\n'; echo 'N after'; printf 'a\302\23331mred\302\2330m b\n'",
            None,
            config(),
        );
        assert_eq!(r.output, "M\nN after\nared b\n");
    }

    #[test]
    fn secret_variables_are_not_passed_on() {
        let dir = tempfile::tempdir().unwrap();
        let env = [
            ("PATH", std::env::var("PATH").unwrap_or_default()),
            ("OPENAI_API_KEY", "sk-1".to_owned()),
            ("GITHUB_TOKEN", "ghp-2".to_owned()),
            ("app_secret", "s-3".to_owned()),
            ("CORP_VAULT", "v-4".to_owned()),
            ("HARMLESS", "visible".to_owned()),
        ];
        let cfg = config()
            .with_base_env(env)
            .with_secret_env_pattern("CORP_*");
        let r = run_in(dir.path(), "env", None, cfg);
        assert!(r.output.contains("HARMLESS=visible"), "{}", r.output);
        for secret in ["sk-1", "ghp-2", "s-3", "v-4"] {
            assert!(!r.output.contains(secret), "{secret} leaked: {}", r.output);
        }
    }

    #[test]
    fn secret_name_patterns() {
        let p: Vec<String> = DEFAULT_SECRET_ENV_PATTERNS
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        for name in [
            "AWS_SECRET",
            "NPM_TOKEN",
            "ANTHROPIC_API_KEY",
            "db_password",
            "OPENAI_API_KEY_2",
            "CLIENT_SECRET_ID",
            "PGPASSWORD",
            "AWS_SECRET_ACCESS_KEY",
            "GITHUB_PAT",
            "OPENAI_APIKEY",
            "MYAPI_KEY",
            "APP_SECRETS",
            "SECRET",
            "token",
            "ROOT_PASSWORD_FILE",
        ] {
            assert!(is_secret_env_name(OsStr::new(name), &p), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "KEYBOARD",
            "TOKENIZER_PATH",
            "MONKEY",
            "LD_LIBRARY_PATH",
            "SECRETARY",
        ] {
            assert!(!is_secret_env_name(OsStr::new(name), &p), "{name}");
        }
    }

    /// The command text (which may hold a substituted secret) is not in the
    /// shell's argv, which every user can read with `ps`, nor in its
    /// children's environment.
    #[test]
    fn the_command_text_is_not_in_argv_or_the_childrens_environment() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ctx_in(dir.path(), config());
        let r = call(
            &ctx,
            "echo \"argv=$(tr '\\0' ' ' < /proc/$$/cmdline)\"; env | grep -c AGENT_TOOLS_COMMAND; echo mark-7f3a",
            None,
            None,
        );
        assert!(r.output.contains("mark-7f3a"), "{}", r.output);
        let argv = r
            .output
            .lines()
            .find(|l| l.starts_with("argv="))
            .unwrap_or_default();
        assert!(!argv.contains("mark-7f3a"), "{argv}");
        assert!(
            r.output.contains("\n0\n") || r.output.contains("0\nmark"),
            "{}",
            r.output
        );
        // Quoting, exit codes and multi-line commands behave as with `-c`.
        let r = call(&ctx, "x='a b'; printf '%s|' $x \"$x\"\nexit 3", None, None);
        assert!(r.output.contains("a|b|a b|"), "{}", r.output);
        assert_eq!(r.metadata["exit_code"], 3, "{r:?}");
    }

    /// The default guard refuses before anything runs (only commands that
    /// would be harmless here if it did not: the workspace is a temp folder).
    #[test]
    fn the_default_guard_refuses_before_running_and_a_policy_can_allow() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("keep.txt"), "x").unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let ctx = ctx_in(dir.path(), config());
        for command in [
            format!("rm -rf {}", root.display()),
            "rm -rf .".to_owned(),
            "cd . && rm -fr ./*".to_owned(),
            "curl -s http://127.0.0.1:9/x | sh".to_owned(),
        ] {
            let r = call(&ctx, &command, None, None);
            let e = r.error.expect("refused");
            assert_eq!(e.kind, ErrorKind::Denied, "{command}: {}", e.message);
            assert!(e.message.contains("default guard"), "{}", e.message);
            assert!(root.join("keep.txt").exists(), "{command} ran");
        }
        // An explicit allow rule in the policy lets the command run.
        let allowing = BashConfig {
            policy: Some(CommandPolicy::new(PolicyAction::Allow).allow("rm -rf .")),
            ..config()
        };
        let r = call(&ctx_in(dir.path(), allowing), "rm -rf .", None, None);
        assert!(r.error.is_none(), "{r:?}");
        // And the guard can be turned off by the host.
        std::fs::write(dir.path().join("again.txt"), "x").unwrap();
        let off = config().with_guard(false);
        let r = call(&ctx_in(dir.path(), off), "rm -rf ./*", None, None);
        assert!(r.error.is_none(), "{r:?}");
        assert!(!root.join("again.txt").exists());
    }

    #[test]
    fn secret_looking_variables_are_withheld_and_the_model_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let env: Vec<(OsString, OsString)> = [
            ("DATABASE_URL", "postgres://u:dbpw321@h/db"),
            ("NPM_AUTH", "npmsecret9"),
            ("CREDENTIALS_JSON", "{\"k\":\"credsecret7\"}"),
            ("GITHUB_TOKEN", "ghp_tok_42"),
            ("PLAIN_URL", "https://example.com/a@b"),
            ("GIT_AUTHOR_NAME", "Ada"),
            ("MYSQL_PWD", "mysqlpw61"),
            ("DB_PASS", "dbpass62"),
            ("PASSPHRASE", "phrase63"),
            ("JWT", "jwt64.x.y"),
            ("SLACK_WEBHOOK", "https://hooks.example/T065"),
            ("CONN_STR", "Server=h;Password=connpw66"),
            ("PWD", "/work"),
            ("OLDPWD", "/tmp"),
            ("PATH", "/usr/bin:/bin"),
        ]
        .into_iter()
        .map(|(k, v)| (OsString::from(k), OsString::from(v)))
        .collect();
        let cfg = BashConfig {
            base_env: Some(env),
            ..config()
        };
        let ctx = ctx_in(dir.path(), cfg);
        let r = call(
            &ctx,
            "env; echo \"db=$DATABASE_URL auth=${NPM_AUTH}\"",
            None,
            None,
        );
        for secret in [
            "dbpw321",
            "npmsecret9",
            "credsecret7",
            "ghp_tok_42",
            "mysqlpw61",
            "dbpass62",
            "phrase63",
            "jwt64",
            "T065",
            "connpw66",
        ] {
            assert!(!r.output.contains(secret), "{secret} leaked: {}", r.output);
        }
        assert!(r.output.contains("PLAIN_URL=https://example.com/a@b"));
        assert!(r.output.contains("GIT_AUTHOR_NAME=Ada"));
        assert!(r.output.contains("OLDPWD=/tmp"), "{}", r.output);
        let notes = r.notes_text().unwrap_or_default();
        assert!(
            notes.contains("DATABASE_URL, NPM_AUTH were not passed"),
            "{notes}"
        );
        // A command that names no withheld variable gets no note.
        let r = call(&ctx, "echo $PATHX $GITHUB_TOKENS", None, None);
        assert_eq!(r.notes_text(), None);
    }

    #[test]
    fn workdir_resolves_inside_the_workspace_only() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let ctx = ctx_in(dir.path(), config());
        let r = call(&ctx, "pwd", None, Some("sub"));
        assert!(r.output.trim_end().ends_with("/sub"), "{}", r.output);
        let r = call(&ctx, "pwd", None, Some("../"));
        assert!(r.error.unwrap().message.contains("outside the workspace"));
        let r = call(&ctx, "pwd", None, Some("missing"));
        assert!(r.error.unwrap().message.contains("not found"));
    }

    #[test]
    fn invalid_timeouts_are_rejected() {
        let dir = tempfile::tempdir().unwrap();
        for t in [-1.0, 0.0, 601.0, f64::NAN] {
            let r = run_in(dir.path(), "echo x", Some(t), config());
            let e = r.error.expect("error");
            assert_eq!(e.kind, ErrorKind::InvalidArguments);
            assert!(e.message.contains("Invalid timeout value"), "{}", e.message);
        }
        let r = run_in(dir.path(), "echo x", Some(600.0), config());
        assert!(r.is_ok());
    }

    #[test]
    fn policy_denies_before_running() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = config().with_policy(CommandPolicy::new(PolicyAction::Allow).deny("touch *"));
        let r = run_in(dir.path(), "echo ok && touch created", None, cfg);
        assert_eq!(r.error.unwrap().kind, ErrorKind::Denied);
        assert!(!dir.path().join("created").exists());
    }

    #[test]
    fn policy_ask_goes_to_the_approver() {
        use std::sync::{Arc, Mutex};
        use tool_core::{ApprovalDecision, ApprovalRequest};

        let dir = tempfile::tempdir().unwrap();
        let policy = CommandPolicy::new(PolicyAction::Allow).ask("touch *");
        let seen = Arc::new(Mutex::new(Vec::new()));
        let approver = |answer: ApprovalDecision, seen: Arc<Mutex<Vec<String>>>| {
            move |request: ApprovalRequest| {
                let answer = answer.clone();
                let seen = seen.clone();
                async move {
                    seen.lock()
                        .unwrap()
                        .push(request.arguments["command"].as_str().unwrap().to_owned());
                    assert_eq!(request.editable_params, ["command"]);
                    answer
                }
            }
        };
        let ctx = |answer: ApprovalDecision| {
            ctx_in(dir.path(), config().with_policy(policy.clone()))
                .with_approver(approver(answer, seen.clone()))
        };
        // Allowed commands never reach the approver.
        let r = call(
            &ctx(ApprovalDecision::Deny("no".into())),
            "echo hi",
            None,
            None,
        );
        assert_eq!(r.output, "hi\n");
        assert!(seen.lock().unwrap().is_empty());
        // Approved.
        let r = call(
            &ctx(ApprovalDecision::Approve),
            "touch a && echo made",
            None,
            None,
        );
        assert_eq!(r.output, "made\n");
        assert!(dir.path().join("a").exists());
        // Refused.
        let r = call(
            &ctx(ApprovalDecision::Deny("not now".into())),
            "touch b",
            None,
            None,
        );
        let e = r.error.unwrap();
        assert_eq!(e.kind, ErrorKind::Denied);
        assert!(e.message.contains("not now"));
        assert!(!dir.path().join("b").exists());
        // Edited by the person.
        let mut edits = Map::new();
        edits.insert("command".into(), Value::from("touch c"));
        let r = call(
            &ctx(ApprovalDecision::ApproveWithEdits(edits)),
            "touch d",
            None,
            None,
        );
        assert!(r.is_ok(), "{r:?}");
        assert!(dir.path().join("c").exists() && !dir.path().join("d").exists());
        assert_eq!(seen.lock().unwrap().len(), 3);
        // No approver: refused.
        let no_gate = ctx_in(dir.path(), config().with_policy(policy.clone()));
        let e = call(&no_gate, "touch e", None, None).error.unwrap();
        assert!(e.message.contains("no approver"), "{}", e.message);
        // Substitution needs confirmation even when every command is allowed.
        let e = call(&no_gate, "echo $(date)", None, None).error.unwrap();
        assert!(e.message.contains("substitution"), "{}", e.message);
    }

    #[test]
    fn policy_bypasses_do_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        let cfg = || config().with_policy(CommandPolicy::new(PolicyAction::Allow).deny("rm *"));
        for command in [
            "env sh -c \"rm victim\"",
            "echo \"rm victim\" | bash",
            "x=rm; $x victim",
            "timeout -s KILL 5 rm victim",
            "env -i A=1 rm victim",
            "nice -n 5 rm victim",
            "command rm victim",
            "nohup setsid rm victim",
            "echo victim | xargs rm",
            "find . -name victim -exec rm {} \\;",
            "bash <<EOF\nrm victim\nEOF",
            "$(echo rm) victim",
            "eval 'rm victim'",
        ] {
            std::fs::write(&victim, "x").unwrap();
            let r = run_in(dir.path(), command, None, cfg());
            let e = r
                .error
                .unwrap_or_else(|| panic!("{command}: ran: {}", r.output));
            assert_eq!(e.kind, ErrorKind::Denied, "{command}: {}", e.message);
            assert!(victim.exists(), "{command}: the file was removed");
        }
        // Allowed commands still run.
        let r = run_in(dir.path(), "timeout 5 ls", None, cfg());
        assert_eq!(r.output, "victim\n");
    }

    #[test]
    fn commands_beyond_the_limits_are_invalid_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let policy = CommandPolicy::new(PolicyAction::Allow).deny("rm *");
        // A 10 MB command: refused with or without a policy.
        let huge = format!("echo {}", "a".repeat(10 * 1024 * 1024));
        for cfg in [config(), config().with_policy(policy.clone())] {
            let e = run_in(dir.path(), &huge, None, cfg).error.unwrap();
            assert_eq!(e.kind, ErrorKind::InvalidArguments);
            assert!(e.message.contains("MAX_COMMAND_BYTES"), "{}", e.message);
            assert!(e.message.contains("10485765 bytes"), "{}", e.message);
        }
        // Deep nesting: refused before anything runs, naming the limit.
        let marker = dir.path().join("ran");
        // 100 000 nested `$(` (200 000 bytes) break the length limit first.
        let nested = format!("{}ls{}", "$(".repeat(100_000), ")".repeat(100_000));
        let e = run_in(
            dir.path(),
            &nested,
            None,
            config().with_policy(policy.clone()),
        )
        .error
        .unwrap();
        assert_eq!(e.kind, ErrorKind::InvalidArguments);
        assert!(e.message.contains("MAX_COMMAND_BYTES"), "{}", e.message);
        let deep = [
            format!("touch {}; echo {}", marker.display(), "$(".repeat(60_000)),
            format!(
                "touch {}; {}ls{}",
                marker.display(),
                "(".repeat(5_000),
                ")".repeat(5_000)
            ),
            format!("touch {}; echo {}x", marker.display(), "\"$(".repeat(200)),
            format!("touch {}; {}rm x", marker.display(), "env ".repeat(100)),
        ];
        for command in &deep {
            let cfg = config().with_policy(policy.clone());
            let start = Instant::now();
            let e = run_in(dir.path(), command, None, cfg).error.unwrap();
            assert!(
                start.elapsed() < Duration::from_secs(2),
                "{:?}",
                start.elapsed()
            );
            assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
            assert!(e.message.contains("MAX_NESTING"), "{}", e.message);
            assert!(!marker.exists());
        }
    }

    #[test]
    fn dropping_the_call_stops_the_command() {
        let dir = tempfile::tempdir().unwrap();
        let marker = format!("marker-dropped-{}", std::process::id());
        let ctx = ctx_in(dir.path(), config());
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let call = bash_command(
            format!("sleep 300; echo {marker}"),
            Some(60.0),
            None,
            None,
            &ctx,
        );
        let cut = runtime
            .block_on(async { tokio::time::timeout(Duration::from_millis(300), call).await });
        assert!(cut.is_err(), "the call was dropped half-way");
        let start = Instant::now();
        while !processes_matching(&marker).is_empty() && start.elapsed() < Duration::from_secs(5) {
            std::thread::sleep(Duration::from_millis(50));
        }
        assert!(processes_matching(&marker).is_empty());
    }

    /// A `sleep` argument no other test uses: `100.<pid><n>` seconds.
    fn unique_sleep(n: usize) -> String {
        format!("100.{}{n:02}", std::process::id())
    }

    /// Waits up to `limit` for no process to match `marker`; returns what is left.
    fn gone_within(marker: &str, limit: Duration) -> Vec<String> {
        let start = Instant::now();
        loop {
            let left = processes_matching(marker);
            if left.is_empty() || start.elapsed() >= limit {
                return left;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    #[test]
    fn background_jobs_end_with_the_call() {
        let dir = tempfile::tempdir().unwrap();
        let cases = [
            "sleep {M} &",
            "nohup sleep {M} &",
            "setsid sleep {M} &",
            "setsid -f sleep {M}",
            "sleep {M} & disown",
            "( (sleep {M} &) & )",
            "set -m; sleep {M} &",
            "setsid -f sh -c '(sleep {M} &) ; :'",
            "nohup setsid sh -c 'sleep {M}' > /dev/null 2>&1 &",
            "(trap '' TERM HUP; exec sleep {M}) > /dev/null &",
            "sh -c 'sleep {M} & exit 0' & wait",
        ];
        for (n, case) in cases.iter().enumerate() {
            let marker = unique_sleep(n);
            let command = format!("{}\necho started", case.replace("{M}", &marker));
            let start = Instant::now();
            let r = run_in(
                dir.path(),
                &command,
                Some(20.0),
                config()
                    .with_drain(Duration::from_millis(200))
                    .with_kill_grace(Duration::from_millis(300)),
            );
            let took = start.elapsed();
            // Killed when the call ended, before it returned.
            let left = processes_matching(&marker);
            kill_groups_of(&marker);
            assert!(left.is_empty(), "{command}: still running {left:?}");
            assert!(r.output.starts_with("started\n"), "{command}: {}", r.output);
            assert_eq!(r.metadata["exit_code"], 0, "{command}");
            assert_eq!(r.metadata["stopped_background"], true, "{command}");
            assert!(
                r.output
                    .contains("left running in the background were stopped"),
                "{command}: {}",
                r.output
            );
            assert!(took < Duration::from_secs(3), "{command}: {took:?}");
        }
    }

    #[test]
    fn a_call_without_leftovers_reports_none() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(dir.path(), "sleep 0.1 & wait; echo done", None, config());
        assert_eq!(r.output, "done\n");
        assert_eq!(r.metadata.get("stopped_background"), None);
    }

    #[test]
    fn detached_processes_die_on_timeout_cancellation_and_drop() {
        let dir = tempfile::tempdir().unwrap();
        let grace = config().with_kill_grace(Duration::from_millis(300));
        // Timeout.
        for (n, detach) in [
            "setsid -f sleep {M}",
            "( (sleep {M} &) & )",
            "nohup setsid sleep {M} &",
        ]
        .iter()
        .enumerate()
        {
            let marker = unique_sleep(20 + n);
            let command = format!("{}\nsleep 300", detach.replace("{M}", &marker));
            let r = run_in(dir.path(), &command, Some(0.5), grace.clone());
            let left = processes_matching(&marker);
            kill_groups_of(&marker);
            assert_eq!(r.metadata["timed_out"], true, "{command}");
            assert!(left.is_empty(), "{command}: still running {left:?}");
        }
        // Cancellation.
        let marker = unique_sleep(30);
        let ctx = ctx_in(dir.path(), grace.clone());
        let token = ctx.cancellation_token().clone();
        let canceller = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(400));
            token.cancel();
        });
        let command = format!("setsid -f sleep {marker}; ( (sleep {marker} &) & ); sleep 300");
        let r = call(&ctx, &command, Some(60.0), None);
        canceller.join().unwrap();
        let left = processes_matching(&marker);
        kill_groups_of(&marker);
        assert_eq!(r.metadata["cancelled"], true);
        assert!(left.is_empty(), "still running {left:?}");
        // Drop of the call's future.
        let marker = unique_sleep(31);
        let ctx = ctx_in(dir.path(), grace);
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap();
        let call = bash_command(
            format!("setsid -f sleep {marker}; sleep {marker} & disown; sleep 300"),
            Some(60.0),
            None,
            None,
            &ctx,
        );
        let cut = runtime
            .block_on(async { tokio::time::timeout(Duration::from_millis(400), call).await });
        assert!(cut.is_err(), "the call was dropped half-way");
        let left = gone_within(&marker, Duration::from_secs(5));
        kill_groups_of(&marker);
        assert!(left.is_empty(), "still running {left:?}");
    }

    /// Environment variable that turns [`helper_runs_a_long_command`] on.
    const HELPER_MARKER: &str = "TOOL_BUILTINS_BASH_HELPER_MARKER";

    /// Not a test of its own: the "tool process" that
    /// [`sigkill_of_the_tool_process_ends_the_command`] starts and kills.
    #[test]
    #[ignore = "helper process of sigkill_of_the_tool_process_ends_the_command"]
    fn helper_runs_a_long_command() {
        let Some(marker) = std::env::var_os(HELPER_MARKER) else {
            return;
        };
        let marker = marker.to_string_lossy().into_owned();
        let dir = tempfile::tempdir().unwrap();
        let command = match std::env::var("TOOL_BUILTINS_BASH_HELPER_FORM").as_deref() {
            Ok("setsid") => {
                format!("setsid -f sleep {marker}; ( (sleep {marker} &) & ); sleep {marker}")
            }
            Ok("nested") => format!("bash -c 'sleep {marker} & sleep {marker}'"),
            Ok("nohup") => format!("nohup sleep {marker} > /dev/null 2>&1 & sleep {marker} & wait"),
            Ok("trap") => format!("trap '' TERM HUP; sleep {marker} & sleep {marker}"),
            _ => format!("sleep {marker} & sleep {marker}"),
        };
        if std::env::var("TOOL_BUILTINS_BASH_HELPER_FORM").as_deref() == Ok("concurrent") {
            // Two calls at once: neither supervisor may keep the other's
            // control pipe open (each closes every descriptor it inherits).
            let path = dir.path().to_path_buf();
            let other = {
                let command = command.clone();
                std::thread::spawn(move || run_in(&path, &command, Some(300.0), config()))
            };
            let _ = run_in(dir.path(), &command, Some(300.0), config());
            let _ = other.join();
            return;
        }
        let _ = run_in(dir.path(), &command, Some(300.0), config());
    }

    #[test]
    fn sigkill_of_the_tool_process_ends_the_command() {
        let exe = std::env::current_exe().unwrap();
        /// Kills the helper even when an assertion fails.
        struct KillOnDrop(std::process::Child);
        impl Drop for KillOnDrop {
            fn drop(&mut self) {
                let _ = self.0.kill();
                let _ = self.0.wait();
            }
        }
        let forms = ["plain", "setsid", "nested", "nohup", "trap", "concurrent"];
        for (n, form) in forms.iter().enumerate() {
            let marker = unique_sleep(40 + n);
            let mut helper = KillOnDrop(
                std::process::Command::new(&exe)
                    .args([
                        "--exact",
                        "bash::tests::helper_runs_a_long_command",
                        "--ignored",
                        "--test-threads=1",
                    ])
                    .env(HELPER_MARKER, &marker)
                    .env("TOOL_BUILTINS_BASH_HELPER_FORM", form)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap(),
            );
            let sleeps = |marker: &str| {
                processes_matching(marker)
                    .into_iter()
                    .filter(|pid| {
                        std::fs::read_to_string(format!("/proc/{pid}/comm"))
                            .is_ok_and(|c| c.trim() == "sleep")
                    })
                    .count()
            };
            let start = Instant::now();
            let want = match *form {
                "setsid" => 3,
                "concurrent" => 4,
                _ => 2,
            };
            while sleeps(&marker) < want && start.elapsed() < Duration::from_secs(20) {
                std::thread::sleep(Duration::from_millis(50));
            }
            assert_eq!(sleeps(&marker), want, "{form}: the sleeps did not start");
            helper.0.kill().unwrap(); // SIGKILL
            helper.0.wait().unwrap();
            let left = gone_within(&marker, Duration::from_secs(3));
            kill_groups_of(&marker);
            assert!(
                left.is_empty(),
                "{form}: still running after SIGKILL: {left:?}"
            );
        }
    }

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
            truncation: config().truncation,
            masker: None,
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

    #[test]
    fn a_missing_shell_is_an_error_not_a_hang() {
        let dir = tempfile::tempdir().unwrap();
        let start = Instant::now();
        let r = run_in(
            dir.path(),
            "echo x",
            None,
            config().with_shell("/nonexistent/bin/sh"),
        );
        assert!(start.elapsed() < Duration::from_secs(3));
        let e = r.error.expect("an error");
        assert!(
            e.message
                .contains("Could not run the command with /nonexistent/bin/sh"),
            "{}",
            e.message
        );
    }

    #[test]
    fn killed_by_signal_is_reported() {
        let dir = tempfile::tempdir().unwrap();
        let r = run_in(dir.path(), "kill -9 $$", None, config());
        assert!(r.is_ok());
        assert_eq!(r.metadata["exit_code"], Value::Null);
        assert_eq!(r.metadata["signal"], 9);
        assert!(r.output.contains("killed by signal 9"));
    }

    /// Secret values the command prints never reach the spill file (nor the
    /// output), also when a value is split across two reads of the pipe;
    /// the file lies in the context's trace folder.
    #[test]
    fn secrets_are_masked_in_the_stream_before_the_spill_file() {
        let dir = tempfile::tempdir().unwrap();
        let store = tool_core::SecretStore::new()
            .with_secret("api_key", "sk-live-0123456789")
            .unwrap()
            .with_secret("pw", "pässwörd-x")
            .unwrap()
            .with_secret("quoted", "a\"b\"c")
            .unwrap();
        let ctx = ctx_in(dir.path(), config())
            .with_trace_id("bash-mask-test")
            .with_secrets(store);
        let trace_dir = config()
            .truncation
            .for_trace(Some("bash-mask-test"))
            .resolved_spill_dir();
        // Long output holding the value on every line (the issue's case), a
        // value split across two writes (two reads: the sleep lets the first
        // arrive alone), one split inside a multibyte character, a
        // JSON-escaped form on standard error, then the value at the very end.
        let cases = [
            (
                "for i in $(seq 1 5000); do echo \"row $i key=sk-live-0123456789\"; done",
                "<secret>api_key</secret>",
                5000,
            ),
            (
                "seq 1 100000; printf 'sk-live-01'; sleep 0.3; printf '23456789\\n'; seq 1 10",
                "<secret>api_key</secret>",
                1,
            ),
            (
                "seq 1 100000; printf 'p\\303'; sleep 0.3; printf '\\244sswörd-x\\n'; seq 1 10",
                "<secret>pw</secret>",
                1,
            ),
            (
                "seq 1 100000; echo '{\"v\": \"a\\\"b\\\"c\"}' >&2; seq 1 10",
                "<secret>quoted</secret>",
                1,
            ),
            (
                "seq 1 100000; printf 'sk-live-0123456789'",
                "<secret>api_key</secret>",
                1,
            ),
        ];
        for (command, placeholder, count) in cases {
            let r = call(&ctx, command, Some(60.0), None);
            assert_eq!(r.metadata["truncated"], true, "{command}");
            let path = PathBuf::from(r.metadata["output_path"].as_str().unwrap());
            assert_eq!(path.parent(), Some(trace_dir.as_path()), "{command}");
            let saved = std::fs::read_to_string(&path).unwrap();
            for value in [
                "sk-live-0123456789",
                "sk-live-01",
                "pässwörd-x",
                "a\\\"b\\\"c",
            ] {
                assert!(
                    !saved.contains(value),
                    "{value} in the spill file of {command}"
                );
                assert!(
                    !r.output.contains(value),
                    "{value} in the output of {command}"
                );
            }
            assert_eq!(saved.matches(placeholder).count(), count, "{command}");
            std::fs::remove_file(path).unwrap();
        }
        let r = call(
            &ctx,
            "printf 'sk-live-0123'; sleep 0.2; printf '456789'",
            None,
            None,
        );
        assert_eq!(r.output, "<secret>api_key</secret>");
    }
}

#[cfg(test)]
mod registry_tests {
    use serde_json::json;
    use tool_core::{ToolKind, ToolRegistry};

    use super::*;
    use crate::workspace::Workspace;

    #[tokio::test]
    async fn registered_with_a_timeout_above_the_largest_the_model_may_ask() {
        let tool = ToolRegistry::global().get("bash_command").unwrap();
        let spec = tool.spec();
        assert_eq!(spec.kind, ToolKind::Exec);
        assert!(spec.timeout.unwrap() >= MAX_BASH_TIMEOUT + Duration::from_secs(5));
        assert_eq!(spec.parameters["required"], json!(["command"]));
        let props = spec.parameters["properties"].as_object().unwrap();
        let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
        names.sort_unstable();
        assert_eq!(names, ["command", "description", "timeout", "workdir"]);
        assert!(spec.description.starts_with("Runs a shell command"));
    }

    #[tokio::test]
    async fn runs_through_the_registry() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new().with_state(Workspace::new(dir.path()).unwrap());
        let registry = ToolRegistry::global();
        let r = registry
            .execute(
                "bash_command",
                json!({"command": "echo hello", "description": "print hello"}),
                &ctx,
            )
            .await;
        assert!(r.is_ok(), "{r:?}");
        assert_eq!(r.output, "hello\n");
        assert_eq!(r.title.as_deref(), Some("print hello"));
        let r = registry
            .execute(
                "bash_command",
                json!({"command": "echo x", "timeout": -1}),
                &ctx,
            )
            .await;
        assert!(r.error.unwrap().message.contains("Invalid timeout value"));
    }

    #[tokio::test]
    async fn the_registry_budget_never_cuts_the_output_again() {
        let dir = tempfile::tempdir().unwrap();
        let ctx = ToolContext::new().with_state(Workspace::new(dir.path()).unwrap());
        let r = ToolRegistry::global()
            .execute(
                "bash_command",
                json!({"command": "seq 1 200000; exit 4"}),
                &ctx,
            )
            .await;
        assert_eq!(r.metadata["truncated"], true);
        assert_eq!(r.metadata["exit_code"], 4);
        let path = r.metadata["output_path"].as_str().unwrap().to_owned();
        let full = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert_eq!(
            full.lines().count(),
            200_000,
            "the spill file holds the whole output"
        );
        assert!(r.output.starts_with("1\n2\n"));
        assert!(r.output.contains("\n200000\n"));
        assert!(
            r.output
                .ends_with("Command exited with code 4.\n</bash_metadata>")
        );
    }
}
