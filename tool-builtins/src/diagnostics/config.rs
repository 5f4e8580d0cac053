//! Which language server serves which files, and the bounds of every
//! exchange with one: [`LspConfig`] and [`LspServer`].

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// How long a write waits for the server's diagnostics of the new text by
/// default (2 s): the wait ends early once the server has published for the
/// version just sent.
pub const DEFAULT_WAIT: Duration = Duration::from_secs(2);

/// How long a server may take to answer `initialize` by default (10 s); a
/// server that takes longer is stopped and the write's result says so.
pub const DEFAULT_START_TIMEOUT: Duration = Duration::from_secs(10);

/// Most diagnostics listed in one write's result by default (20, errors
/// first); the rest are counted (`omitted`).
pub const DEFAULT_MAX_DIAGNOSTICS: usize = 20;

/// Most characters of one diagnostic's message kept by default (240), cut
/// with `tool_rules::text::clip` and marked `… (N more bytes)`.
pub const DEFAULT_MESSAGE_CHARS: usize = 240;

/// Largest message a server may send (4 MiB by default, the
/// `Content-Length` of one LSP frame). A server that announces more is
/// stopped: it is flooding or not speaking LSP.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 4 << 20;

/// Largest file sent to a server (2 MiB): a bigger file is not sent and the
/// result says so.
pub const MAX_FILE_BYTES: u64 = 2 << 20;

/// How many times one server of one workspace is started in a process (3):
/// a server that keeps crashing is then left stopped, said in each result.
pub const MAX_STARTS: u32 = 3;

/// Most diagnostics kept from one `textDocument/publishDiagnostics` (1 000);
/// a bigger list is cut (its length still counted).
pub const MAX_KEPT_PER_PUBLISH: usize = 1_000;

/// One language server and the files it serves.
///
/// Spoken to over stdio with the Language Server Protocol 3.17
/// (<https://microsoft.github.io/language-server-protocol/specifications/lsp/3.17/specification/>):
/// `Content-Length`-framed JSON-RPC 2.0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspServer {
    /// The program: a path, or a name looked up in `PATH` (e.g. `pylsp`).
    pub command: PathBuf,
    /// Its arguments (e.g. `["--stdio"]` for servers that need it).
    pub args: Vec<String>,
    /// File name extensions it serves, without the dot, compared ASCII
    /// case-insensitively (e.g. `["py", "pyi"]`).
    pub extensions: Vec<String>,
    /// The LSP `languageId` sent in `didOpen`; `None` derives it from the
    /// extension ([`language_id`]).
    pub language_id: Option<String>,
}

impl LspServer {
    /// `command` (no arguments) for files ending in one of `extensions`.
    pub fn new<I, S>(command: impl Into<PathBuf>, extensions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            command: command.into(),
            args: Vec::new(),
            extensions: extensions
                .into_iter()
                .map(|e| e.into().trim_start_matches('.').to_owned())
                .collect(),
            language_id: None,
        }
    }

    /// The same server started with `args`.
    #[must_use]
    pub fn with_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// The server's short name in results: its program's file name.
    pub fn name(&self) -> String {
        self.command.file_name().map_or_else(
            || self.command.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    }

    /// Whether it serves `path` (by its extension).
    pub fn serves(&self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    }

    /// The `languageId` for `path`: [`LspServer::language_id`] when set,
    /// else [`language_id`] of its extension.
    pub fn language_for(&self, path: &Path) -> String {
        if let Some(id) = &self.language_id {
            return id.clone();
        }
        language_id(path.extension().and_then(|e| e.to_str()).unwrap_or(""))
    }
}

/// The LSP `languageId` of a file extension, from the identifiers table of
/// the LSP 3.17 specification ("Text Document Item"): `py` → `python`,
/// `rs` → `rust`, `ts` → `typescript`, … ; any other extension is used as
/// it is, lower-cased.
pub fn language_id(extension: &str) -> String {
    let ext = extension.to_ascii_lowercase();
    let id = match ext.as_str() {
        "py" | "pyi" => "python",
        "rs" => "rust",
        "ts" | "mts" | "cts" => "typescript",
        "tsx" => "typescriptreact",
        "js" | "mjs" | "cjs" => "javascript",
        "jsx" => "javascriptreact",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "go" => "go",
        "java" => "java",
        "rb" => "ruby",
        "sh" | "bash" => "shellscript",
        "md" => "markdown",
        "yml" | "yaml" => "yaml",
        "cs" => "csharp",
        _ => return ext,
    };
    id.to_owned()
}

/// A server entry that cannot be used: what is wrong and how to write it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspConfigError(String);

impl fmt::Display for LspConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for LspConfigError {}

/// Longest server entry accepted by [`LspServer::from_str`] (4 KiB).
const MAX_ENTRY_BYTES: usize = 4096;

impl FromStr for LspServer {
    type Err = LspConfigError;

    /// The CLI's form `EXT[,EXT...]=COMMAND [ARG...]`, e.g.
    /// `py,pyi=pylsp` or `ts=typescript-language-server --stdio`; words are
    /// split at whitespace (an argument cannot hold a space).
    ///
    /// # Errors
    /// No `=`, no extension, an extension with `/` or a space, no command,
    /// an entry longer than 4 KiB.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let usage = "write EXT[,EXT...]=COMMAND [ARG...], e.g. py,pyi=pylsp";
        if s.len() > MAX_ENTRY_BYTES {
            return Err(LspConfigError(format!(
                "the language server entry is longer than {MAX_ENTRY_BYTES} bytes; {usage}"
            )));
        }
        let Some((exts, command)) = s.split_once('=') else {
            return Err(LspConfigError(format!(
                "`{s}` names no file extensions; {usage}"
            )));
        };
        let extensions: Vec<String> = exts
            .split(',')
            .map(|e| e.trim().trim_start_matches('.').to_owned())
            .filter(|e| !e.is_empty())
            .collect();
        if extensions.is_empty() {
            return Err(LspConfigError(format!(
                "`{s}` names no file extensions before `=`; {usage}"
            )));
        }
        if let Some(bad) = extensions
            .iter()
            .find(|e| e.contains(['/', '\\', ' ', '*']))
        {
            return Err(LspConfigError(format!(
                "`{bad}` is not a file extension (no `/`, `*` or spaces; `py`, not `*.py`); {usage}"
            )));
        }
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            return Err(LspConfigError(format!(
                "`{s}` names no command after `=`; {usage}"
            )));
        };
        Ok(Self::new(program, extensions).with_args(words))
    }
}

/// Diagnostics after edits: the servers and the bounds. Off (no servers) by
/// default.
///
/// ```
/// use std::time::Duration;
/// use tool_builtins::diagnostics::{LspConfig, LspServer};
///
/// let config = LspConfig::default()
///     .with_server("py,pyi=pylsp".parse().unwrap())
///     .with_wait(Duration::from_millis(1500));
/// assert_eq!(config.servers[0].extensions, ["py", "pyi"]);
/// assert!(config.server_for("src/app.py".as_ref()).is_some());
/// assert!(config.server_for("README.md".as_ref()).is_none());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LspConfig {
    /// The servers, first match wins for a file. Default: none (off).
    pub servers: Vec<LspServer>,
    /// The check commands, for files no server serves; first match wins.
    /// Default: none.
    pub checks: Vec<CheckCommand>,
    /// How long one write waits for diagnostics of the new text (default
    /// [`DEFAULT_WAIT`]); the wait ends as soon as every changed file has
    /// been published for.
    pub wait: Duration,
    /// How long a server may take to answer `initialize` (default
    /// [`DEFAULT_START_TIMEOUT`]); counted only for the write that starts it.
    pub start_timeout: Duration,
    /// Most diagnostics listed in one result (default
    /// [`DEFAULT_MAX_DIAGNOSTICS`]), errors first.
    pub max_diagnostics: usize,
    /// Most characters of one message (default [`DEFAULT_MESSAGE_CHARS`]).
    pub message_chars: usize,
    /// Largest message a server may send (default
    /// [`DEFAULT_MAX_MESSAGE_BYTES`]).
    pub max_message_bytes: usize,
}

impl Default for LspConfig {
    fn default() -> Self {
        Self {
            servers: Vec::new(),
            checks: Vec::new(),
            wait: DEFAULT_WAIT,
            start_timeout: DEFAULT_START_TIMEOUT,
            max_diagnostics: DEFAULT_MAX_DIAGNOSTICS,
            message_chars: DEFAULT_MESSAGE_CHARS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl LspConfig {
    /// The same configuration with `server` added after the others.
    #[must_use]
    pub fn with_server(mut self, server: LspServer) -> Self {
        self.servers.push(server);
        self
    }

    /// The same configuration with another wait for diagnostics.
    #[must_use]
    pub fn with_wait(mut self, wait: Duration) -> Self {
        self.wait = wait;
        self
    }

    /// The same configuration with another `initialize` timeout.
    #[must_use]
    pub fn with_start_timeout(mut self, timeout: Duration) -> Self {
        self.start_timeout = timeout;
        self
    }

    /// The same configuration with `check` added after the other check commands.
    #[must_use]
    pub fn with_check(mut self, check: CheckCommand) -> Self {
        self.checks.push(check);
        self
    }

    /// Whether neither a server nor a check command is configured (diagnostics off).
    pub fn is_off(&self) -> bool {
        self.servers.is_empty() && self.checks.is_empty()
    }

    /// The first check command serving `path`, when no server does.
    pub fn check_for(&self, path: &Path) -> Option<&CheckCommand> {
        if self.server_for(path).is_some() {
            return None;
        }
        self.checks.iter().find(|c| c.serves(path))
    }

    /// The configuration a diagnostics file describes (the CLI's
    /// `--lsp-config FILE`): JSON of the form
    ///
    /// ```json
    /// {
    ///   "servers": [{"extensions": ["py", "pyi"], "command": ["pylsp"]}],
    ///   "checks": [{"extensions": ["sh"], "check": ["sh", "-n", "{file}"], "timeout_secs": 10}],
    ///   "wait_secs": 2
    /// }
    /// ```
    ///
    /// `servers`: language servers, `command` the program and its
    /// arguments, `language_id` optional (see [`LspServer`]). `checks`:
    /// check commands for extensions no server serves (see
    /// [`CheckCommand`]). `wait_secs`: [`LspConfig::wait`] (more than 0,
    /// at most 60). Every key is optional; unknown keys are refused. At
    /// most [`MAX_CONFIG_ENTRIES`] servers and as many checks, 32
    /// extensions and 64 words each, 4 KiB per word.
    ///
    /// # Errors
    /// Invalid JSON (line and column), an unknown key, an entry without
    /// extensions or command, an extension with `/`, `*` or a space, a
    /// bound passed, a wait or timeout out of range; each message says
    /// which entry and how to write it.
    pub fn from_json(text: &str) -> Result<Self, LspConfigError> {
        let file: ConfigFile = serde_json::from_str(text).map_err(|e| {
            LspConfigError(format!(
                "not a diagnostics configuration (line {}, column {}): {}; write {{\"servers\":                  [{{\"extensions\": [\"py\"], \"command\": [\"pylsp\"]}}], \"checks\":                  [{{\"extensions\": [\"sh\"], \"check\": [\"sh\", \"-n\", \"{{file}}\"]}}]}}",
                e.line(),
                e.column(),
                serde_error_kind(&e)
            ))
        })?;
        let mut config = Self::default();
        if file.servers.len() > MAX_CONFIG_ENTRIES || file.checks.len() > MAX_CONFIG_ENTRIES {
            return Err(LspConfigError(format!(
                "at most {MAX_CONFIG_ENTRIES} servers and {MAX_CONFIG_ENTRIES} checks may be configured"
            )));
        }
        for (i, entry) in file.servers.into_iter().enumerate() {
            let at = format!("servers[{i}]");
            let extensions = checked_extensions(&at, entry.extensions)?;
            let words = checked_words(&at, "command", entry.command)?;
            let mut server = LspServer::new(&words[0], extensions).with_args(words[1..].to_vec());
            server.language_id = entry.language_id;
            config.servers.push(server);
        }
        for (i, entry) in file.checks.into_iter().enumerate() {
            let at = format!("checks[{i}]");
            let extensions = checked_extensions(&at, entry.extensions)?;
            let command = checked_words(&at, "check", entry.check)?;
            let timeout = match entry.timeout_secs {
                None => DEFAULT_CHECK_TIMEOUT,
                Some(t) if t > 0.0 && t <= MAX_CHECK_TIMEOUT.as_secs_f64() => {
                    Duration::from_secs_f64(t)
                }
                Some(t) => {
                    return Err(LspConfigError(format!(
                        "{at}: timeout_secs {t} is out of range (more than 0, at most {})",
                        MAX_CHECK_TIMEOUT.as_secs()
                    )));
                }
            };
            config.checks.push(CheckCommand {
                extensions,
                command,
                timeout,
            });
        }
        if let Some(wait) = file.wait_secs {
            if !(wait > 0.0 && wait <= 60.0) {
                return Err(LspConfigError(format!(
                    "wait_secs {wait} is out of range (more than 0, at most 60)"
                )));
            }
            config.wait = Duration::from_secs_f64(wait);
        }
        Ok(config)
    }

    /// The index and entry of the first server serving `path`.
    pub fn server_for(&self, path: &Path) -> Option<(usize, &LspServer)> {
        self.servers
            .iter()
            .enumerate()
            .find(|(_, s)| s.serves(path))
    }
}

/// Most servers, and most check commands, one configuration file holds (32).
pub const MAX_CONFIG_ENTRIES: usize = 32;

/// How long a check command may run by default (10 s); then it is killed
/// and the write's result says so.
pub const DEFAULT_CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// Longest timeout a check command may be given (120 s).
pub const MAX_CHECK_TIMEOUT: Duration = Duration::from_secs(120);

/// Most extensions of one entry (32) and words of one command (64).
const MAX_EXTENSIONS: usize = 32;
const MAX_WORDS: usize = 64;

/// A check command: run after a write on a changed file that no language
/// server serves, inside the `bash_command` sandbox (without network), its
/// output read as `PATH:LINE[:COLUMN]: MESSAGE` lines (see
/// [`Diagnostics`](super::Diagnostics)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckCommand {
    /// File name extensions it checks, without the dot, compared ASCII
    /// case-insensitively.
    pub extensions: Vec<String>,
    /// The program and its arguments; each `{file}` in an argument becomes
    /// the changed file's path relative to the workspace root (the command
    /// runs there). Without `{file}` the path is added as the last argument.
    pub command: Vec<String>,
    /// How long it may run ([`DEFAULT_CHECK_TIMEOUT`], at most [`MAX_CHECK_TIMEOUT`]).
    pub timeout: Duration,
}

impl CheckCommand {
    /// `command` (program then arguments) for files ending in one of `extensions`.
    pub fn new<I, S, C, W>(extensions: I, command: C) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
        C: IntoIterator<Item = W>,
        W: Into<String>,
    {
        Self {
            extensions: extensions
                .into_iter()
                .map(|e| e.into().trim_start_matches('.').to_owned())
                .collect(),
            command: command.into_iter().map(Into::into).collect(),
            timeout: DEFAULT_CHECK_TIMEOUT,
        }
    }

    /// Whether it checks `path` (by its extension).
    pub fn serves(&self, path: &Path) -> bool {
        path.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|ext| self.extensions.iter().any(|e| e.eq_ignore_ascii_case(ext)))
    }

    /// Its short name in results: the program's file name.
    pub fn name(&self) -> String {
        let program = self.command.first().map_or("", String::as_str);
        Path::new(program)
            .file_name()
            .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned())
    }

    /// The arguments after the program for `file` (`{file}` replaced, or appended).
    pub fn args_for(&self, file: &str) -> Vec<String> {
        let rest = self.command.get(1..).unwrap_or_default();
        let mut args: Vec<String> = rest.iter().map(|a| a.replace("{file}", file)).collect();
        if !rest.iter().any(|a| a.contains("{file}")) {
            args.push(file.to_owned());
        }
        args
    }
}

/// The JSON of a diagnostics configuration file ([`LspConfig::from_json`]).
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigFile {
    #[serde(default)]
    servers: Vec<ServerEntry>,
    #[serde(default)]
    checks: Vec<CheckEntry>,
    wait_secs: Option<f64>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerEntry {
    #[serde(default)]
    extensions: Vec<String>,
    #[serde(default)]
    command: Vec<String>,
    language_id: Option<String>,
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct CheckEntry {
    #[serde(default)]
    extensions: Vec<String>,
    #[serde(default)]
    check: Vec<String>,
    timeout_secs: Option<f64>,
}

/// `serde_json`'s message without the input it may quote (the location is given apart).
fn serde_error_kind(e: &serde_json::Error) -> String {
    let text = e.to_string();
    match text.rfind(" at line ") {
        Some(at) => text[..at].to_owned(),
        None => text,
    }
}

fn checked_extensions(at: &str, extensions: Vec<String>) -> Result<Vec<String>, LspConfigError> {
    let extensions: Vec<String> = extensions
        .into_iter()
        .map(|e| e.trim().trim_start_matches('.').to_owned())
        .filter(|e| !e.is_empty())
        .collect();
    if extensions.is_empty() {
        return Err(LspConfigError(format!(
            "{at}: no \"extensions\"; write e.g. \"extensions\": [\"py\", \"pyi\"]"
        )));
    }
    if extensions.len() > MAX_EXTENSIONS {
        return Err(LspConfigError(format!(
            "{at}: more than {MAX_EXTENSIONS} extensions"
        )));
    }
    if let Some(bad) = extensions
        .iter()
        .find(|e| e.len() > 64 || e.contains(['/', '\\', ' ', '*']))
    {
        return Err(LspConfigError(format!(
            "{at}: `{}` is not a file extension (no `/`, `*` or spaces; `py`, not `*.py`)",
            tool_rules::text::clip(bad, tool_rules::text::Clip::chars(40))
        )));
    }
    Ok(extensions)
}

fn checked_words(at: &str, key: &str, words: Vec<String>) -> Result<Vec<String>, LspConfigError> {
    if words.first().is_none_or(|w| w.trim().is_empty()) {
        return Err(LspConfigError(format!(
            "{at}: no \"{key}\"; write the program and its arguments as a list, e.g. \"{key}\": \
             [\"pylsp\"]"
        )));
    }
    if words.len() > MAX_WORDS || words.iter().any(|w| w.len() > MAX_ENTRY_BYTES) {
        return Err(LspConfigError(format!(
            "{at}: \"{key}\" has more than {MAX_WORDS} words or a word over {MAX_ENTRY_BYTES} bytes"
        )));
    }
    Ok(words)
}

#[cfg(test)]
mod file_tests {
    use super::*;

    #[test]
    fn a_configuration_file_gives_servers_checks_and_the_wait() {
        let config = LspConfig::from_json(
            r#"{"servers": [{"extensions": [".py", "pyi"], "command": ["pylsp", "-v"]}],
                "checks": [{"extensions": ["sh"], "check": ["sh", "-n", "{file}"], "timeout_secs": 5},
                           {"extensions": ["py", "txt"], "check": ["cat"]}],
                "wait_secs": 1.5}"#,
        )
        .unwrap();
        assert_eq!(config.servers[0].extensions, ["py", "pyi"]);
        assert_eq!(config.servers[0].args, ["-v"]);
        assert_eq!(config.wait, Duration::from_millis(1500));
        let sh = config.check_for(Path::new("a/run.sh")).unwrap();
        assert_eq!(sh.timeout, Duration::from_secs(5));
        assert_eq!(sh.args_for("a/run.sh"), ["-n", "a/run.sh"]);
        assert_eq!(sh.name(), "sh");
        // A server wins over a check for the same extension.
        assert!(config.check_for(Path::new("x.py")).is_none());
        let cat = config.check_for(Path::new("notes.TXT")).unwrap();
        assert_eq!(cat.args_for("notes.TXT"), ["notes.TXT"]);
        assert_eq!(cat.timeout, DEFAULT_CHECK_TIMEOUT);
        assert!(!config.is_off());
        assert!(LspConfig::from_json("{}").unwrap().is_off());
    }

    #[test]
    fn bad_files_are_refused_saying_where() {
        for (text, says) in [
            ("{", "line 1, column 1"),
            (r#"{"server": []}"#, "unknown field `server`"),
            (
                r#"{"servers": [{"command": ["pylsp"]}]}"#,
                "servers[0]: no \"extensions\"",
            ),
            (
                r#"{"servers": [{"extensions": ["py"]}]}"#,
                "servers[0]: no \"command\"",
            ),
            (
                r#"{"checks": [{"extensions": ["*.py"], "check": ["x"]}]}"#,
                "`*.py` is not a file extension",
            ),
            (
                r#"{"checks": [{"extensions": ["py"], "check": ["x"], "timeout_secs": 0}]}"#,
                "timeout_secs 0 is out of range",
            ),
            (r#"{"wait_secs": 61}"#, "wait_secs 61 is out of range"),
        ] {
            let err = LspConfig::from_json(text).unwrap_err().to_string();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
