//! Diagnostics after edits: after `write_file`, `edit_file`, `multi_edit`
//! or `apply_patch` changes a file, the language server configured for its
//! extension is told the new text and the errors and warnings it publishes
//! for it are appended to the tool's result (text and `diagnostics`
//! metadata). Off unless a server is configured ([`LspConfig`]).
//!
//! ```no_run
//! use tool_builtins::diagnostics::{Diagnostics, LspConfig};
//! use tool_core::ToolContext;
//!
//! let lsp = Diagnostics::new(LspConfig::default().with_server("py=pylsp".parse()?));
//! let ctx = lsp.install(ToolContext::new()); // plus the workspace, ledger, … of the file tools
//! // … edit_file on a .py file now ends with e.g.
//! // "Diagnostics (pylsp): 1 error, 0 warnings in app.py:\napp.py:3:7: error: undefined name 'x' [pyflakes]"
//! lsp.shutdown(); // also done when the last handle is dropped
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # How
//! [`Diagnostics`] is a write hook ([`AfterWrite`], `fs::after_write`),
//! called by the one write orchestrator after the write succeeded. For each
//! changed file whose extension a server serves:
//! - the server of that (workspace, server) pair is started on first use
//!   (lazily), spoken to over stdio with the Language Server Protocol 3.17
//!   and kept for the next writes of the process: `initialize` once
//!   (bounded by [`LspConfig::start_timeout`]), then `didOpen` with the
//!   file's text the first time and `didChange` (whole text, next version)
//!   after; a deleted file gets `didClose`, a moved one `didClose` and
//!   `didOpen` at its new path;
//! - the hook waits at most [`LspConfig::wait`] (default 2 s) for
//!   `textDocument/publishDiagnostics` of that version, and stops waiting
//!   as soon as every changed file has its diagnostics;
//! - errors and warnings (not information or hints) are listed errors
//!   first, at most [`LspConfig::max_diagnostics`], each as
//!   `PATH:LINE:COLUMN: error|warning: MESSAGE [SOURCE CODE]` (1-based
//!   line and character column), messages cut with `tool_rules::text::clip`;
//!   the metadata `diagnostics` holds `errors`, `warnings`, `omitted`,
//!   `files` and `items` (path, line, column, severity, message, source,
//!   code).
//!
//! # Failures never fail the write
//! The write already happened; the hook only adds. A server that is
//! missing, cannot start, crashes, does not answer `initialize` within
//! the start timeout, publishes nothing within the wait, stops reading its
//! input, or sends a message over [`LspConfig::max_message_bytes`] or
//! outside LSP framing gives a note on the result saying so, and the
//! result stays a success. A server that stopped is started again on the
//! next write, at most [`MAX_STARTS`] times per process.
//!
//! # Bounds on what a server sends
//! One message: [`LspConfig::max_message_bytes`] (default 4 MiB), header
//! lines 1 KiB, 32 of them. Diagnostics are kept only for files this client
//! opened, the latest publication each, at most [`MAX_KEPT_PER_PUBLISH`]
//! each; its stderr only as its last 1 000 bytes. Requests the server sends
//! (`workspace/configuration`, `client/registerCapability`, …) are answered
//! at once with empty results. Writes to the server go through a queue of
//! 256 messages drained by their own thread, so a server that stops reading
//! cannot block a write tool.
//!
//! # Sandbox
//! When the context's `bash_command` sandbox is on ([`BashConfig::sandbox`]
//! not `off`; a context without a [`BashConfig`] has the default policy,
//! on, as for `bash_command`), the server runs in that sandbox
//! (`tool_sandbox`: the same mode, hidden paths and limits) without any
//! network, whatever hosts `bash_command` may reach. With `--sandbox off` it
//! runs as a plain child process. Either way secret-looking environment
//! variables are withheld (`tool_core::governance::secret_env`).
//!
//! # Lifetime
//! Servers live as long as the [`Diagnostics`] value: [`Diagnostics::shutdown`]
//! (or dropping the last handle) sends `shutdown` and `exit` and kills a
//! server still there after a second each.
//!
//! # Crate choice
//! The LSP message types come from `lsp-types` (the types of the LSP 3.17
//! specification with their serde forms, used by most Rust LSP clients and
//! servers), so no message shape is written by hand; the JSON-RPC framing
//! (a `Content-Length` header) is a few lines here, bounded as above.
//!
//! # Check commands
//! Where no server serves a file's extension, a configured
//! [`CheckCommand`] (e.g. `["python3", "-m", "pyflakes", "{file}"]` for
//! `py`) runs on the changed file after the write, in the workspace root and
//! the same sandbox as a server (no network), killed at its timeout
//! (default [`DEFAULT_CHECK_TIMEOUT`], 10 s); its `PATH:LINE[:COLUMN]:
//! MESSAGE` lines land in the same section and metadata as a server's
//! diagnostics (a failure with other output is kept raw in a note, cut to
//! [`CHECK_RAW_CHARS`] characters). See [`LspConfig::from_json`] for the
//! configuration file.
//!
//! [`AfterWrite`]: crate::fs::after_write::AfterWrite
//! [`BashConfig::sandbox`]: crate::shell::BashConfig::sandbox
//! [`BashConfig`]: crate::shell::BashConfig

mod check;
mod config;
mod framing;
mod render;
mod server;

pub use check::{MAX_OUTPUT_BYTES as MAX_CHECK_OUTPUT_BYTES, RAW_CHARS as CHECK_RAW_CHARS};
pub use config::{
    CheckCommand, DEFAULT_CHECK_TIMEOUT, DEFAULT_MAX_DIAGNOSTICS, DEFAULT_MAX_MESSAGE_BYTES,
    DEFAULT_MESSAGE_CHARS, DEFAULT_START_TIMEOUT, DEFAULT_WAIT, LspConfig, LspConfigError,
    LspServer, MAX_CHECK_TIMEOUT, MAX_CONFIG_ENTRIES, MAX_FILE_BYTES, MAX_KEPT_PER_PUBLISH,
    MAX_STARTS, language_id,
};

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use serde_json::Value;
use tool_core::ToolContext;
use tool_core::meta::MetaKey;

use crate::fs::after_write::{AfterWrite, AfterWriteHooks, ChangedPath, HookReport};
use render::FileDiagnostics;
use server::{Server, Waited};

/// The metadata key of the diagnostics a write's result carries.
pub const DIAGNOSTICS: &str = "diagnostics";

/// A slot's key: the workspace's root and the server's index in the configuration.
type SlotKey = (PathBuf, usize);

/// One server slot: the running server of a (workspace, server) pair, how
/// many times it was started, and why it last stopped.
#[derive(Default)]
struct Slot {
    server: Option<Arc<Server>>,
    starts: u32,
    last_error: Option<String>,
}

/// Diagnostics after edits: the write hook and the language servers it
/// started. Make one per host with [`Diagnostics::new`] and add it to each
/// context with [`Diagnostics::install`]; servers are started on first use
/// and kept until [`Diagnostics::shutdown`] or the last handle is dropped.
pub struct Diagnostics {
    config: LspConfig,
    slots: Mutex<HashMap<SlotKey, Arc<Mutex<Slot>>>>,
    closed: AtomicBool,
}

impl fmt::Debug for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Diagnostics")
            .field("config", &self.config)
            .field("running", &self.running().len())
            .finish()
    }
}

/// One changed file a server is told about.
enum Work {
    Open(PathBuf),
    Close(PathBuf),
}

impl Diagnostics {
    /// The hook for `config` (no server started yet).
    pub fn new(config: LspConfig) -> Arc<Self> {
        Arc::new(Self {
            config,
            slots: Mutex::new(HashMap::new()),
            closed: AtomicBool::new(false),
        })
    }

    /// The configuration.
    pub fn config(&self) -> &LspConfig {
        &self.config
    }

    /// `ctx` with this hook added to its write hooks
    /// ([`AfterWriteHooks::add_shared`]); `ctx` unchanged when no server is
    /// configured, so the write tools' results stay exactly as they were.
    #[must_use]
    pub fn install(self: &Arc<Self>, ctx: ToolContext) -> ToolContext {
        if self.config.is_off() {
            return ctx;
        }
        let hook: Arc<dyn AfterWrite> = self.clone();
        AfterWriteHooks::add_shared(ctx, hook)
    }

    /// The process ids of the servers running now.
    pub fn running(&self) -> Vec<u32> {
        let slots: Vec<_> = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .cloned()
            .collect();
        slots
            .iter()
            .filter_map(|s| {
                let slot = s.lock().unwrap_or_else(PoisonError::into_inner);
                slot.server.as_ref().and_then(|s| s.pid())
            })
            .collect()
    }

    /// Stops every server (`shutdown`, `exit`, then a kill after a second
    /// each) and starts none after: later writes get no diagnostics.
    pub fn shutdown(&self) {
        self.closed.store(true, Ordering::SeqCst);
        let slots: Vec<_> = self
            .slots
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(_, s)| s)
            .collect();
        for slot in slots {
            let server = slot
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .server
                .take();
            if let Some(server) = server {
                server.stop();
            }
        }
    }

    /// The running server `index` for `root`, started when there is none.
    fn server(
        &self,
        root: &Path,
        index: usize,
        sandbox: Option<&tool_core::SandboxPolicy>,
    ) -> Result<Arc<Server>, String> {
        let spec = &self.config.servers[index];
        let slot = Arc::clone(
            self.slots
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry((root.to_path_buf(), index))
                .or_default(),
        );
        let mut slot = slot.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(server) = &slot.server {
            match server.ended() {
                None => return Ok(Arc::clone(server)),
                Some(why) => {
                    server.stop();
                    slot.last_error = Some(format!("`{}` stopped: {why}", server.name()));
                    slot.server = None;
                }
            }
        }
        if self.closed.load(Ordering::SeqCst) {
            return Err("the language servers were shut down".to_owned());
        }
        if slot.starts >= MAX_STARTS {
            return Err(format!(
                "{}; it was started {MAX_STARTS} times in this process, so no more diagnostics \
                 come from it until the host restarts",
                slot.last_error
                    .clone()
                    .unwrap_or_else(|| format!("`{}` is not running", spec.name()))
            ));
        }
        slot.starts += 1;
        match Server::start(spec, root, sandbox, &self.config) {
            Ok(server) => {
                let server = Arc::new(server);
                slot.server = Some(Arc::clone(&server));
                Ok(server)
            }
            Err(e) => {
                slot.last_error = Some(e.clone());
                Err(e)
            }
        }
    }

    /// The diagnostics of the files in `paths` for a write in `root`
    /// (sandboxed by `sandbox` when given): what [`AfterWrite::report`]
    /// returns for a context with that workspace and sandbox.
    pub fn check(
        &self,
        root: &Path,
        paths: &[ChangedPath],
        sandbox: Option<&tool_core::SandboxPolicy>,
    ) -> HookReport {
        let mut report = HookReport::default();
        if self.config.is_off() {
            return report;
        }
        let shown = |p: &Path| p.strip_prefix(root).unwrap_or(p).display().to_string();
        let mut work: BTreeMap<usize, Vec<Work>> = BTreeMap::new();
        let mut checks: Vec<(&CheckCommand, PathBuf)> = Vec::new();
        let mut add = |path: &Path, open: bool| {
            if open && let Some(check) = self.config.check_for(path) {
                checks.push((check, path.to_path_buf()));
            }
            if let Some((index, _)) = self.config.server_for(path) {
                let item = if open {
                    Work::Open(path.to_path_buf())
                } else {
                    Work::Close(path.to_path_buf())
                };
                work.entry(index).or_default().push(item);
            }
        };
        for changed in paths {
            match changed {
                ChangedPath::Created(p) | ChangedPath::Modified(p) => add(p, true),
                ChangedPath::Deleted(p) => add(p, false),
                ChangedPath::Renamed { from, to } => {
                    add(from, false);
                    add(to, true);
                }
            }
        }
        if work.is_empty() && checks.is_empty() {
            return report;
        }
        let mut files = Vec::new();
        for (check, path) in checks {
            let name = check.name();
            match read_text(&path) {
                Err(why) => report.notes.push(format!(
                    "No diagnostics for {} ({name}): {why}.",
                    shown(&path)
                )),
                Ok(text) => {
                    let file = shown(&path);
                    let checked = check::run(check, root, &file, &text, sandbox);
                    // A check that failed without a line read as a
                    // diagnostic says so in its note alone, not as "no errors".
                    if checked.note.is_none() || !checked.diagnostics.is_empty() {
                        files.push(FileDiagnostics {
                            path: file,
                            server: name,
                            text,
                            diagnostics: checked.diagnostics,
                        });
                    }
                    report.notes.extend(checked.note);
                }
            }
        }
        let mut waiting = Vec::new();
        for (index, items) in work {
            let name = self.config.servers[index].name();
            let server = match self.server(root, index, sandbox) {
                Ok(server) => server,
                Err(e) => {
                    let files: Vec<String> = items
                        .iter()
                        .filter_map(|w| match w {
                            Work::Open(p) => Some(shown(p)),
                            Work::Close(_) => None,
                        })
                        .collect();
                    if !files.is_empty() {
                        report.notes.push(format!(
                            "No diagnostics for {} ({name}): {e}. The write itself succeeded.",
                            files.join(", ")
                        ));
                    }
                    continue;
                }
            };
            for item in items {
                match item {
                    Work::Close(path) => server.close(&path),
                    Work::Open(path) => match read_text(&path) {
                        Err(why) => report.notes.push(format!(
                            "No diagnostics for {} ({name}): {why}.",
                            shown(&path)
                        )),
                        Ok(text) => {
                            let language = self.config.servers[index].language_for(&path);
                            match server.sync(&path, &language, text.clone()) {
                                Ok((version, seq)) => {
                                    waiting.push((Arc::clone(&server), path, version, seq, text));
                                }
                                Err(e) => report.notes.push(format!(
                                    "No diagnostics for {} ({name}): {e}. The write itself \
                                     succeeded.",
                                    shown(&path)
                                )),
                            }
                        }
                    },
                }
            }
        }
        let deadline = Instant::now() + self.config.wait;
        for (server, path, version, seq, text) in waiting {
            match server.wait(&path, version, seq, deadline) {
                Waited::Published(published) => {
                    if published.malformed > 0 {
                        report.notes.push(format!(
                            "`{}` sent {} malformed diagnostic{} for {} (not LSP diagnostics, \
                             e.g. a negative line); skipped.",
                            server.name(),
                            published.malformed,
                            if published.malformed == 1 { "" } else { "s" },
                            shown(&path)
                        ));
                    }
                    files.push(FileDiagnostics {
                        path: shown(&path),
                        server: server.name().to_owned(),
                        text,
                        diagnostics: published.diagnostics,
                    });
                }
                Waited::TimedOut => report.notes.push(format!(
                    "`{}` published no diagnostics for {} within {} s (the wait for diagnostics); \
                     the write itself succeeded.",
                    server.name(),
                    shown(&path),
                    self.config.wait.as_secs_f64()
                )),
                Waited::Ended(why) => {
                    server.stop();
                    report.notes.push(format!(
                        "No diagnostics for {}: `{}` stopped ({why}); it is started again on the \
                         next write. The write itself succeeded.",
                        shown(&path),
                        server.name()
                    ));
                }
            }
        }
        let (text, metadata) = render::render(
            &files,
            self.config.max_diagnostics,
            self.config.message_chars,
        );
        report.text = text;
        if !files.is_empty() || !report.notes.is_empty() {
            report
                .metadata
                .push((MetaKey::custom(DIAGNOSTICS), metadata));
        }
        report
    }
}

/// The text of a changed file, at most [`MAX_FILE_BYTES`] and UTF-8.
fn read_text(path: &Path) -> Result<String, String> {
    let len = std::fs::metadata(path)
        .map_err(|e| format!("it could not be read ({e})"))?
        .len();
    if len > MAX_FILE_BYTES {
        return Err(format!(
            "it is {len} bytes, more than the {MAX_FILE_BYTES} bytes sent to a language server"
        ));
    }
    let bytes = std::fs::read(path).map_err(|e| format!("it could not be read ({e})"))?;
    String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_owned())
}

impl AfterWrite for Diagnostics {
    fn changed(&self, ctx: &ToolContext, paths: &[ChangedPath]) -> Option<String> {
        self.report(ctx, paths).text
    }

    fn report(&self, ctx: &ToolContext, paths: &[ChangedPath]) -> HookReport {
        let Ok(workspace) = crate::fs::workspace::workspace_of(ctx) else {
            return HookReport::default();
        };
        // The policy `bash_command` would use: the context's, else the default (on).
        let sandbox = ctx
            .state::<crate::shell::BashConfig>()
            .map_or_else(tool_core::SandboxPolicy::default, |c| c.sandbox.clone());
        let sandbox = Some(sandbox).filter(|p| p.mode != tool_core::SandboxMode::Off);
        self.check(workspace.root(), paths, sandbox.as_ref())
    }
}

impl Drop for Diagnostics {
    fn drop(&mut self) {
        self.shutdown();
    }
}

/// The `diagnostics` metadata of a result, when it has some.
pub fn of_result(result: &tool_core::ToolResult) -> Option<&Value> {
    result.metadata.get(DIAGNOSTICS)
}
