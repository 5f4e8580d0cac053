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

    /// Whether no server is configured (diagnostics off).
    pub fn is_off(&self) -> bool {
        self.servers.is_empty()
    }

    /// The index and entry of the first server serving `path`.
    pub fn server_for(&self, path: &Path) -> Option<(usize, &LspServer)> {
        self.servers
            .iter()
            .enumerate()
            .find(|(_, s)| s.serves(path))
    }
}
