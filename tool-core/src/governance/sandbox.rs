//! [`SandboxPolicy`]: what a sandboxed command may touch — the files it may
//! write, the paths hidden from it, its resource limits and its network — as
//! hosts and the `tool` program configure it. The mechanism that enforces it
//! lives in the `tool-sandbox` crate (Linux namespaces, Landlock, seccomp,
//! resource limits); this module only describes the policy, so every crate
//! can carry one without depending on the mechanism.
//!
//! Precedence where paths overlap (`../shared/design/cross-cutting.md` §6):
//! hidden > read-only > writable.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;
use std::time::Duration;

use super::network::NetworkPolicy;

/// How much of the file system a sandboxed command may change.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SandboxMode {
    /// The whole tree read-only; the workspace, a private empty `/tmp` (and
    /// `/dev/shm`) and the extra writable paths writable. The default.
    #[default]
    WorkspaceWrite,
    /// The whole tree read-only, the workspace included; only the private
    /// `/tmp` (and `/dev/shm`) is writable.
    ReadOnly,
    /// No sandbox at all. Only by explicit configuration (`--sandbox off`),
    /// and named in every result's output and metadata.
    Off,
}

impl SandboxMode {
    /// The name used on the command line and in result metadata:
    /// `workspace-write`, `read-only` or `off`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::WorkspaceWrite => "workspace-write",
            Self::ReadOnly => "read-only",
            Self::Off => "off",
        }
    }
}

impl fmt::Display for SandboxMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxMode {
    type Err = SandboxPolicyError;

    /// Parses `workspace-write`, `read-only` or `off`.
    ///
    /// # Errors
    /// Any other text, with the accepted names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "workspace-write" => Ok(Self::WorkspaceWrite),
            "read-only" => Ok(Self::ReadOnly),
            "off" => Ok(Self::Off),
            other => Err(SandboxPolicyError(format!(
                "unknown sandbox policy `{other}`: use workspace-write (the default), read-only or off"
            ))),
        }
    }
}

/// Which layers of the kernel the sandbox uses.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SandboxTier {
    /// `full` where unprivileged user namespaces work, else `no-namespaces`
    /// with a one-line note of what that tier does not cover. The default.
    #[default]
    Auto,
    /// User, mount, PID, network, IPC and UTS namespaces, then Landlock,
    /// seccomp and resource limits.
    Full,
    /// Landlock (files, TCP, scoping), seccomp (including the socket-family
    /// filter), resource limits and session kill; no namespaces.
    NoNamespaces,
}

impl SandboxTier {
    /// The name used on the command line and in result metadata: `auto`,
    /// `full` or `no-namespaces`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Full => "full",
            Self::NoNamespaces => "no-namespaces",
        }
    }
}

impl fmt::Display for SandboxTier {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SandboxTier {
    type Err = SandboxPolicyError;

    /// Parses `auto`, `full` or `no-namespaces`.
    ///
    /// # Errors
    /// Any other text, with the accepted names.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "full" => Ok(Self::Full),
            "no-namespaces" => Ok(Self::NoNamespaces),
            other => Err(SandboxPolicyError(format!(
                "unknown sandbox tier `{other}`: use auto (the default), full or no-namespaces"
            ))),
        }
    }
}

/// Default of [`SandboxLimits::processes`]: 4096 processes and threads. A
/// `cargo build -j2` runs a few dozen processes with a few hundred threads.
pub const DEFAULT_SANDBOX_PROCESSES: u64 = 4096;
/// Default of [`SandboxLimits::memory`]: 16 GiB of data segment per process
/// (`RLIMIT_DATA`): more than `rustc` or `node` use to build large projects.
pub const DEFAULT_SANDBOX_MEMORY: u64 = 16 << 30;
/// Default of [`SandboxLimits::file_size`]: 16 GiB per file written.
pub const DEFAULT_SANDBOX_FILE_SIZE: u64 = 16 << 30;
/// Default of [`SandboxLimits::cpu`]: 3600 CPU seconds per process (the
/// command's timeout, at most 600 s of wall time, ends it first unless it
/// runs many threads).
pub const DEFAULT_SANDBOX_CPU: Duration = Duration::from_secs(3600);
/// Default of [`SandboxLimits::open_files`]: 16384 descriptors per process
/// (never above the caller's own hard limit).
pub const DEFAULT_SANDBOX_OPEN_FILES: u64 = 16384;

/// Resource limits of a sandboxed command. Each has a default that a build
/// (`cargo build`, `npm install`) never reaches; a breach ends the call with
/// a note naming the limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct SandboxLimits {
    /// Processes and threads alive at once in the sandbox (cgroup
    /// `pids.max` where the cgroup tree is writable, else `RLIMIT_NPROC`
    /// inside the user namespace). Default [`DEFAULT_SANDBOX_PROCESSES`].
    pub processes: u64,
    /// Bytes of data segment (heap and private mappings) per process,
    /// `RLIMIT_DATA` (not `RLIMIT_AS`, which breaks V8 and JVMs that reserve
    /// address space). Default [`DEFAULT_SANDBOX_MEMORY`].
    pub memory: u64,
    /// Largest file a process may write, in bytes, `RLIMIT_FSIZE`.
    /// Default [`DEFAULT_SANDBOX_FILE_SIZE`].
    pub file_size: u64,
    /// CPU time per process, `RLIMIT_CPU` (whole seconds, rounded up).
    /// Default [`DEFAULT_SANDBOX_CPU`].
    pub cpu: Duration,
    /// Open file descriptors per process, `RLIMIT_NOFILE`.
    /// Default [`DEFAULT_SANDBOX_OPEN_FILES`].
    pub open_files: u64,
}

impl Default for SandboxLimits {
    fn default() -> Self {
        Self {
            processes: DEFAULT_SANDBOX_PROCESSES,
            memory: DEFAULT_SANDBOX_MEMORY,
            file_size: DEFAULT_SANDBOX_FILE_SIZE,
            cpu: DEFAULT_SANDBOX_CPU,
            open_files: DEFAULT_SANDBOX_OPEN_FILES,
        }
    }
}

/// The limit names [`SandboxLimits::set`] accepts.
pub const SANDBOX_LIMIT_NAMES: [&str; 5] =
    ["processes", "memory", "file-size", "cpu", "open-files"];

impl SandboxLimits {
    /// Sets one limit from `NAME=VALUE` text, as `--sandbox-limit` takes it:
    /// `processes=64`, `open-files=256` (counts); `memory=256MiB`,
    /// `file-size=1G` (bytes, with an optional unit `K`/`KB`/`KiB`, `M`..,
    /// `G`.., `T`..; decimal and binary units both mean powers of 1024, as
    /// for `ulimit`); `cpu=10s`, `cpu=2m`, `cpu=1h` (seconds when no unit).
    ///
    /// # Errors
    /// An unknown name (with a "did you mean"), a missing `=`, a value that is
    /// not a positive number with a known unit, or zero.
    pub fn set(&mut self, assignment: &str) -> Result<(), SandboxPolicyError> {
        let Some((name, value)) = assignment.split_once('=') else {
            return Err(SandboxPolicyError(format!(
                "`{assignment}` is not NAME=VALUE: write e.g. `processes=64`, `memory=256MiB`, \
                 `file-size=1GiB`, `cpu=10s` or `open-files=1024`"
            )));
        };
        let (name, value) = (name.trim(), value.trim());
        match name {
            "processes" => self.processes = parse_count(name, value)?,
            "open-files" => self.open_files = parse_count(name, value)?,
            "memory" => self.memory = parse_bytes(name, value)?,
            "file-size" => self.file_size = parse_bytes(name, value)?,
            "cpu" => self.cpu = parse_seconds(name, value)?,
            other => {
                return Err(SandboxPolicyError(tool_rules::suggest::unknown_message(
                    "sandbox limit",
                    other,
                    &SANDBOX_LIMIT_NAMES,
                )));
            }
        }
        Ok(())
    }
}

fn positive(name: &str, value: u64, text: &str) -> Result<u64, SandboxPolicyError> {
    if value == 0 {
        return Err(SandboxPolicyError(format!(
            "sandbox limit {name}={text} is zero: give a positive value"
        )));
    }
    Ok(value)
}

fn parse_count(name: &str, text: &str) -> Result<u64, SandboxPolicyError> {
    let value = text.parse::<u64>().map_err(|_| {
        SandboxPolicyError(format!(
            "sandbox limit {name}={text}: the value must be a whole number, e.g. {name}=64"
        ))
    })?;
    positive(name, value, text)
}

fn split_unit(text: &str) -> (&str, &str) {
    let at = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    (&text[..at], text[at..].trim())
}

fn parse_bytes(name: &str, text: &str) -> Result<u64, SandboxPolicyError> {
    let (digits, unit) = split_unit(text);
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        _ => {
            return Err(SandboxPolicyError(format!(
                "sandbox limit {name}={text}: unknown unit `{unit}`; use B, KiB, MiB, GiB or TiB, \
                 e.g. {name}=256MiB"
            )));
        }
    };
    let value = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1_u64 << shift))
        .ok_or_else(|| {
            SandboxPolicyError(format!(
                "sandbox limit {name}={text}: the value must be a whole number of bytes with an \
                 optional unit, e.g. {name}=256MiB"
            ))
        })?;
    positive(name, value, text)
}

fn parse_seconds(name: &str, text: &str) -> Result<Duration, SandboxPolicyError> {
    let (digits, unit) = split_unit(text);
    let factor = match unit {
        "" | "s" => 1,
        "m" | "min" => 60,
        "h" => 3600,
        _ => {
            return Err(SandboxPolicyError(format!(
                "sandbox limit {name}={text}: unknown unit `{unit}`; use s, m or h, e.g. {name}=10s"
            )));
        }
    };
    let value = digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(factor))
        .ok_or_else(|| {
            SandboxPolicyError(format!(
                "sandbox limit {name}={text}: the value must be a whole number of seconds, e.g. \
                 {name}=10s"
            ))
        })?;
    positive(name, value, text).map(Duration::from_secs)
}

/// A sandbox setting that could not be understood; the message says what
/// is accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicyError(String);

impl fmt::Display for SandboxPolicyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SandboxPolicyError {}

/// What a sandboxed command may touch. The default is the `workspace-write`
/// policy in the `auto` tier, refusing to run where the kernel cannot
/// enforce it, with the default [`SandboxLimits`] and no network.
///
/// Paths are taken as given (made absolute against the workspace by the
/// mechanism); `~` is not expanded here.
///
/// ```
/// use tool_core::{NetworkPolicy, SandboxMode, SandboxPolicy};
///
/// let mut policy = SandboxPolicy::default().writable("/root/.cargo/registry");
/// policy.limits.set("memory=256MiB").unwrap();
/// assert_eq!(policy.mode, SandboxMode::WorkspaceWrite);
/// assert_eq!(policy.limits.memory, 256 << 20);
/// assert!(policy.network.is_deny_all());
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SandboxPolicy {
    /// What may be written. Default [`SandboxMode::WorkspaceWrite`].
    pub mode: SandboxMode,
    /// Which kernel layers are used. Default [`SandboxTier::Auto`].
    pub tier: SandboxTier,
    /// Run with whatever layers the kernel offers (with a note naming the
    /// missing ones) instead of refusing. Default `false`.
    pub best_effort: bool,
    /// Extra writable paths (build caches such as `~/.cargo/registry`).
    pub writable: Vec<PathBuf>,
    /// Extra read-only paths, even inside the workspace (skills folders).
    pub read_only: Vec<PathBuf>,
    /// Extra hidden paths (unreadable), on top of the built-in secret list.
    pub hidden: Vec<PathBuf>,
    /// Resource limits.
    pub limits: SandboxLimits,
    /// Hosts the command may reach through the sandbox's proxy. Default:
    /// none (own, empty network namespace).
    pub network: NetworkPolicy,
    /// Let commands create Unix domain sockets (`socket(AF_UNIX, …)`), and
    /// so connect to any pathname socket they can see (a database's, an
    /// IDE's, the SSH agent's where it is not hidden). Default `false`: the
    /// seccomp filter refuses them with `EPERM` in both tiers;
    /// `socketpair(2)` stays allowed. CLI: `--sandbox-allow-unix-sockets`.
    pub unix_sockets: bool,
}

impl SandboxPolicy {
    /// The policy with no sandbox at all ([`SandboxMode::Off`]).
    pub fn off() -> Self {
        Self {
            mode: SandboxMode::Off,
            ..Self::default()
        }
    }

    /// Sets the mode.
    #[must_use]
    pub fn with_mode(mut self, mode: SandboxMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the tier.
    #[must_use]
    pub fn with_tier(mut self, tier: SandboxTier) -> Self {
        self.tier = tier;
        self
    }

    /// Sets best-effort mode (see [`SandboxPolicy::best_effort`]).
    #[must_use]
    pub fn with_best_effort(mut self, on: bool) -> Self {
        self.best_effort = on;
        self
    }

    /// Adds an extra writable path.
    #[must_use]
    pub fn writable(mut self, path: impl Into<PathBuf>) -> Self {
        self.writable.push(path.into());
        self
    }

    /// Adds an extra read-only path (a skills folder, say).
    ///
    /// A relative `path` is resolved here, once, against the current folder
    /// (as the file tools and the skill loader resolve it), then made
    /// canonical as far as it exists: the sandbox, which resolves paths
    /// against the workspace, must protect the same folder the file tools
    /// refuse, whatever the current folder was (review 23, F1). When the
    /// current folder cannot be read the path is kept as given.
    #[must_use]
    pub fn read_only(mut self, path: impl Into<PathBuf>) -> Self {
        self.read_only.push(resolve_configured(path.into()));
        self
    }

    /// Adds an extra hidden path.
    #[must_use]
    pub fn hidden(mut self, path: impl Into<PathBuf>) -> Self {
        self.hidden.push(path.into());
        self
    }

    /// Sets the limits.
    #[must_use]
    pub fn with_limits(mut self, limits: SandboxLimits) -> Self {
        self.limits = limits;
        self
    }

    /// Sets the network policy.
    #[must_use]
    pub fn with_network(mut self, network: NetworkPolicy) -> Self {
        self.network = network;
        self
    }

    /// Allows or refuses Unix domain sockets (see
    /// [`SandboxPolicy::unix_sockets`]).
    #[must_use]
    pub fn with_unix_sockets(mut self, allow: bool) -> Self {
        self.unix_sockets = allow;
        self
    }

    /// Whether commands run unsandboxed.
    pub fn is_off(&self) -> bool {
        self.mode == SandboxMode::Off
    }
}

/// `path` made absolute against the current folder, then canonical for its
/// longest existing ancestor (the rest appended as given); `path` unchanged
/// when the current folder is unreadable.
fn resolve_configured(path: PathBuf) -> PathBuf {
    let Ok(abs) = std::path::absolute(&path) else {
        return path;
    };
    let mut base = abs.as_path();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(base) {
            return rest.iter().rev().fold(real, |p, c| p.join(c));
        }
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_os_string());
                base = parent;
            }
            _ => return abs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_parse_counts_bytes_and_seconds() {
        let mut l = SandboxLimits::default();
        l.set("processes=64").unwrap();
        l.set("memory=256MiB").unwrap();
        l.set("file-size=1G").unwrap();
        l.set("cpu=10s").unwrap();
        l.set("open-files = 512").unwrap();
        assert_eq!(l.processes, 64);
        assert_eq!(l.memory, 256 * 1024 * 1024);
        assert_eq!(l.file_size, 1 << 30);
        assert_eq!(l.cpu, Duration::from_secs(10));
        assert_eq!(l.open_files, 512);
        l.set("cpu=2m").unwrap();
        assert_eq!(l.cpu, Duration::from_secs(120));
    }

    #[test]
    fn bad_limits_say_what_is_accepted() {
        let mut l = SandboxLimits::default();
        let e = l.set("proceses=64").unwrap_err().to_string();
        assert!(e.contains("did you mean `processes`?"), "{e}");
        let e = l.set("memory=12XB").unwrap_err().to_string();
        assert!(e.contains("unknown unit `XB`"), "{e}");
        assert!(
            l.set("processes=0")
                .unwrap_err()
                .to_string()
                .contains("zero")
        );
        assert!(
            l.set("memory")
                .unwrap_err()
                .to_string()
                .contains("NAME=VALUE")
        );
        assert!(l.set("memory=99999999999999TiB").is_err());
        assert_eq!(l, SandboxLimits::default());
    }

    #[test]
    fn modes_and_tiers_round_trip() {
        for m in [
            SandboxMode::WorkspaceWrite,
            SandboxMode::ReadOnly,
            SandboxMode::Off,
        ] {
            assert_eq!(m.as_str().parse::<SandboxMode>().unwrap(), m);
        }
        for t in [
            SandboxTier::Auto,
            SandboxTier::Full,
            SandboxTier::NoNamespaces,
        ] {
            assert_eq!(t.as_str().parse::<SandboxTier>().unwrap(), t);
        }
        assert!(
            "none"
                .parse::<SandboxMode>()
                .unwrap_err()
                .to_string()
                .contains("read-only")
        );
    }
}
