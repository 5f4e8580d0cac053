//! One running language server: the process (sandboxed when asked), a
//! writer thread (so a server that stops reading never blocks a write
//! tool), a reader thread that answers the server's requests and keeps the
//! diagnostics it publishes for the files this client opened, and a thread
//! that keeps the tail of its stderr for messages.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::str::FromStr;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use lsp_types::notification::{
    DidChangeTextDocument, DidCloseTextDocument, DidOpenTextDocument, Exit, Initialized,
    Notification, PublishDiagnostics,
};
use lsp_types::request::{Initialize, Request, Shutdown};
use lsp_types::{
    ClientCapabilities, ClientInfo, Diagnostic, DidChangeTextDocumentParams,
    DidCloseTextDocumentParams, DidOpenTextDocumentParams, InitializeParams, InitializedParams,
    PublishDiagnosticsClientCapabilities, PublishDiagnosticsParams, TextDocumentClientCapabilities,
    TextDocumentContentChangeEvent, TextDocumentIdentifier, TextDocumentItem,
    TextDocumentSyncClientCapabilities, Uri, VersionedTextDocumentIdentifier, WorkspaceFolder,
};
use serde_json::{Value, json};
use tool_core::SandboxPolicy;

use super::config::{LspConfig, LspServer, MAX_KEPT_PER_PUBLISH};
use super::framing::{FrameError, read_frame, write_frame};

/// Messages queued for the server's stdin (256): a server that reads
/// nothing while they pile up counts as hung.
const OUTBOX: usize = 256;

/// Bytes of the server's stderr kept for messages (the last 1 000).
const STDERR_TAIL: usize = 1_000;

/// How long `shutdown` may take, and then `exit`, before the process is
/// killed (1 s each).
const STOP_GRACE: Duration = Duration::from_secs(1);

/// Most entries of a `workspace/configuration` request answered (1 000).
const MAX_CONFIGURATION_ITEMS: usize = 1_000;

/// The `params` of an LSP message as JSON (the serializations of
/// `lsp-types` cannot fail: plain structs of strings and numbers).
fn to_value(params: impl serde::Serialize) -> Value {
    serde_json::to_value(params).unwrap_or(Value::Null)
}

/// `path` as a `file://` URI (percent-encoded by `url`).
pub(crate) fn uri_of(path: &Path) -> Option<Uri> {
    let url = url::Url::from_file_path(path).ok()?;
    Uri::from_str(url.as_str()).ok()
}

/// The path of a `file://` URI, whatever its percent-encoding.
fn path_of(uri: &Uri) -> Option<PathBuf> {
    url::Url::parse(uri.as_str()).ok()?.to_file_path().ok()
}

/// Diagnostics a server published for one file.
#[derive(Debug, Clone)]
pub(crate) struct Published {
    /// Order of arrival among all publications of this server.
    seq: u64,
    /// The document version they are for, when the server said.
    version: Option<i32>,
    /// The diagnostics, at most [`MAX_KEPT_PER_PUBLISH`].
    pub(crate) diagnostics: Vec<Diagnostic>,
    /// Items of the publication that were not LSP diagnostics (a negative
    /// or too large line, a missing field) and were skipped.
    pub(crate) malformed: usize,
}

/// What waiting for a file's diagnostics gave.
#[derive(Debug)]
pub(crate) enum Waited {
    /// The server published for the version sent (or later).
    Published(Published),
    /// Nothing for that version before the deadline.
    TimedOut,
    /// The server stopped (why).
    Ended(String),
}

/// What the reader, writer and stderr threads share with the client.
#[derive(Default)]
struct State {
    /// Files opened by this client (only their diagnostics are kept).
    watched: HashSet<PathBuf>,
    published: HashMap<PathBuf, Published>,
    /// Ids of requests waiting for an answer, and the answers that came.
    pending: HashSet<i64>,
    responses: HashMap<i64, Result<Value, String>>,
    /// Why the server can no longer be used, once it cannot.
    ended: Option<String>,
    seq: u64,
    stderr_tail: Vec<u8>,
}

struct Shared {
    state: Mutex<State>,
    changed: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn end(&self, why: String) {
        let mut state = self.lock();
        if state.ended.is_none() {
            state.ended = Some(why);
        }
        drop(state);
        self.changed.notify_all();
    }
}

/// A started, initialized language server.
pub(crate) struct Server {
    name: String,
    child: Mutex<Option<Child>>,
    outbox: SyncSender<Vec<u8>>,
    shared: Arc<Shared>,
    next_id: AtomicI64,
    /// Open documents and the version last sent.
    docs: Mutex<HashMap<PathBuf, i32>>,
    /// The server's sandbox, kept while it runs (its cgroup and temp
    /// folder) and finished when it stops.
    sandbox: Option<Arc<tool_sandbox::Sandbox>>,
}

impl Server {
    /// Starts `spec` in `root` (inside a sandbox of the policy `sandbox`
    /// without network, when given) and runs the `initialize` handshake
    /// within `config.start_timeout`.
    ///
    /// # Errors
    /// A sentence for the result's note: the program is missing, the
    /// sandbox cannot be prepared, the server exited or did not answer
    /// `initialize` in time, or answered with an error.
    pub(crate) fn start(
        spec: &LspServer,
        root: &Path,
        sandbox: Option<&SandboxPolicy>,
        config: &LspConfig,
    ) -> Result<Self, String> {
        let name = spec.name();
        let mut command = Command::new(&spec.command);
        command
            .args(&spec.args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_clear()
            .envs(tool_core::governance::secret_env::scrub_env(std::env::vars_os()).0);
        let sandbox = match sandbox {
            Some(policy) => {
                // The shell's policy (its mode, paths and limits) without
                // network: servers read the workspace and answer. (Not made
                // read-only: in the full tier a read-only workspace under
                // /tmp is not visible under the sandbox's fresh /tmp.)
                let mut policy = policy.clone();
                policy.network = tool_core::NetworkPolicy::deny_all();
                let prepared = tool_sandbox::Sandbox::prepare(&policy, root, Some(root))
                    .map_err(|e| format!("the sandbox for `{name}` could not be prepared: {e}"))?;
                let prepared = Arc::new(prepared);
                prepared.apply(&mut command);
                Some(prepared)
            }
            None => None,
        };
        let mut child = command.spawn().map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound if sandbox.is_none() => format!(
                "the language server `{}` was not found (is it installed and on PATH?)",
                spec.command.display()
            ),
            std::io::ErrorKind::NotFound => format!(
                "the language server `{}` was not found inside the sandbox (is it installed, on \
                 PATH and outside the hidden paths?): {e}",
                spec.command.display()
            ),
            _ => format!(
                "the language server `{}` could not start: {e}",
                spec.command.display()
            ),
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("`{name}` started without its standard streams"));
        };
        let shared = Arc::new(Shared {
            state: Mutex::new(State::default()),
            changed: Condvar::new(),
        });
        let (outbox, queued) = std::sync::mpsc::sync_channel::<Vec<u8>>(OUTBOX);
        let spawned = spawn_writer(stdin, queued, Arc::clone(&shared))
            .and_then(|()| spawn_stderr(stderr, Arc::clone(&shared)))
            .and_then(|()| {
                spawn_reader(
                    stdout,
                    outbox.clone(),
                    Arc::clone(&shared),
                    config.max_message_bytes,
                )
            });
        let server = Self {
            name,
            child: Mutex::new(Some(child)),
            outbox,
            shared,
            next_id: AtomicI64::new(1),
            docs: Mutex::new(HashMap::new()),
            sandbox,
        };
        spawned.map_err(|e| format!("could not start the threads of `{}`: {e}", server.name))?;
        if let Err(e) = server.initialize(root, config.start_timeout) {
            // No polite `shutdown` for a server that did not start: killed at once.
            server.shared.end(e.clone());
            return Err(e);
        }
        Ok(server)
    }

    /// The `initialize` request and the `initialized` notification.
    fn initialize(&self, root: &Path, timeout: Duration) -> Result<(), String> {
        let root_uri = uri_of(root);
        let capabilities = ClientCapabilities {
            text_document: Some(TextDocumentClientCapabilities {
                synchronization: Some(TextDocumentSyncClientCapabilities::default()),
                publish_diagnostics: Some(PublishDiagnosticsClientCapabilities {
                    version_support: Some(true),
                    ..PublishDiagnosticsClientCapabilities::default()
                }),
                ..TextDocumentClientCapabilities::default()
            }),
            ..ClientCapabilities::default()
        };
        #[allow(
            deprecated,
            reason = "rootUri and rootPath are what servers older than workspace folders read"
        )]
        let params = InitializeParams {
            process_id: Some(std::process::id()),
            root_path: Some(root.display().to_string()),
            root_uri: root_uri.clone(),
            capabilities,
            workspace_folders: root_uri.map(|uri| {
                vec![WorkspaceFolder {
                    uri,
                    name: root
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
                }]
            }),
            client_info: Some(ClientInfo {
                name: "agent-tools".to_owned(),
                version: Some(env!("CARGO_PKG_VERSION").to_owned()),
            }),
            ..InitializeParams::default()
        };
        let answer = self.request(
            Initialize::METHOD,
            &to_value(params),
            Instant::now() + timeout,
        );
        match answer {
            Ok(_) => self.notify(Initialized::METHOD, &to_value(InitializedParams {})),
            Err(Some(e)) => Err(format!("`{}` refused `initialize`: {e}", self.name)),
            Err(None) => Err(match self.ended() {
                Some(why) => format!("`{}` stopped while starting: {why}", self.name),
                None => format!(
                    "`{}` did not answer `initialize` within {} s",
                    self.name,
                    timeout.as_secs_f64()
                ),
            }),
        }
    }

    /// The server's short name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Why the server can no longer be used (with the tail of its stderr),
    /// once it cannot.
    pub(crate) fn ended(&self) -> Option<String> {
        let state = self.shared.lock();
        let why = state.ended.clone()?;
        let tail = String::from_utf8_lossy(&state.stderr_tail);
        let tail = tail.trim();
        Some(if tail.is_empty() {
            why
        } else {
            format!(
                "{why}; its last output: {}",
                tool_rules::text::clip(tail, tool_rules::text::Clip::chars(300))
            )
        })
    }

    /// Queues one message; a full queue means the server stopped reading.
    fn send(&self, message: &Value) -> Result<(), String> {
        let body = serde_json::to_vec(message).map_err(|e| e.to_string())?;
        match self.outbox.try_send(body) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(_)) => {
                let why = format!("it read none of the last {OUTBOX} messages sent to it");
                self.shared.end(why.clone());
                Err(format!("`{}` is not answering: {why}", self.name))
            }
            Err(TrySendError::Disconnected(_)) => Err(format!(
                "`{}` stopped: {}",
                self.name,
                self.ended()
                    .unwrap_or_else(|| "its input closed".to_owned())
            )),
        }
    }

    fn notify(&self, method: &str, params: &Value) -> Result<(), String> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
    }

    /// Sends a request and waits for its answer until `deadline`:
    /// `Err(Some(message))` for an error answer, `Err(None)` for none.
    fn request(
        &self,
        method: &str,
        params: &Value,
        deadline: Instant,
    ) -> Result<Value, Option<String>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        self.shared.lock().pending.insert(id);
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .map_err(Some)?;
        let mut state = self.shared.lock();
        loop {
            if let Some(answer) = state.responses.remove(&id) {
                return answer.map_err(Some);
            }
            let now = Instant::now();
            if state.ended.is_some() || now >= deadline {
                state.pending.remove(&id);
                return Err(None);
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Sends `text` as the new content of `path`: `didOpen` the first time,
    /// else `didChange` with the whole text. Gives the version sent and the
    /// publication count before it (for [`Server::wait`]).
    pub(crate) fn sync(
        &self,
        path: &Path,
        language_id: &str,
        text: String,
    ) -> Result<(i32, u64), String> {
        let uri = uri_of(path).ok_or_else(|| format!("{} has no file URI", path.display()))?;
        let mut docs = self.docs.lock().unwrap_or_else(PoisonError::into_inner);
        let seq = {
            let mut state = self.shared.lock();
            state.watched.insert(path.to_path_buf());
            state.seq
        };
        let version = match docs.get(path) {
            Some(v) => {
                let version = v.saturating_add(1);
                self.notify(
                    DidChangeTextDocument::METHOD,
                    &to_value(DidChangeTextDocumentParams {
                        text_document: VersionedTextDocumentIdentifier { uri, version },
                        content_changes: vec![TextDocumentContentChangeEvent {
                            range: None,
                            range_length: None,
                            text,
                        }],
                    }),
                )?;
                version
            }
            None => {
                self.notify(
                    DidOpenTextDocument::METHOD,
                    &to_value(DidOpenTextDocumentParams {
                        text_document: TextDocumentItem {
                            uri,
                            language_id: language_id.to_owned(),
                            version: 1,
                            text,
                        },
                    }),
                )?;
                1
            }
        };
        docs.insert(path.to_path_buf(), version);
        Ok((version, seq))
    }

    /// `didClose` for a file this client opened (deleted or moved away).
    pub(crate) fn close(&self, path: &Path) {
        let was_open = self
            .docs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(path)
            .is_some();
        {
            let mut state = self.shared.lock();
            state.watched.remove(path);
            state.published.remove(path);
        }
        if let (true, Some(uri)) = (was_open, uri_of(path)) {
            let _ = self.notify(
                DidCloseTextDocument::METHOD,
                &to_value(DidCloseTextDocumentParams {
                    text_document: TextDocumentIdentifier { uri },
                }),
            );
        }
    }

    /// Waits until `deadline` for diagnostics of `path` published after
    /// publication `after` for `version` or later (a publication without a
    /// version counts when it came after `after`).
    pub(crate) fn wait(&self, path: &Path, version: i32, after: u64, deadline: Instant) -> Waited {
        let mut state = self.shared.lock();
        loop {
            if let Some(p) = state.published.get(path) {
                if p.seq > after && p.version.is_none_or(|v| v >= version) {
                    return Waited::Published(p.clone());
                }
            }
            if state.ended.is_some() {
                drop(state);
                return Waited::Ended(self.ended().unwrap_or_default());
            }
            let now = Instant::now();
            if now >= deadline {
                return Waited::TimedOut;
            }
            state = self
                .shared
                .changed
                .wait_timeout(state, deadline - now)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// Stops the server: `shutdown` (answered within 1 s), `exit`, then
    /// kills the process if it is still there 1 s later. Idempotent.
    pub(crate) fn stop(&self) {
        let Some(mut child) = self
            .child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
        else {
            return;
        };
        if self.shared.lock().ended.is_none() {
            let _ = self.request(Shutdown::METHOD, &Value::Null, Instant::now() + STOP_GRACE);
            let _ = self.notify(Exit::METHOD, &Value::Null);
            let until = Instant::now() + STOP_GRACE;
            while Instant::now() < until {
                if matches!(child.try_wait(), Ok(Some(_))) {
                    break;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        if matches!(child.try_wait(), Ok(None)) {
            let _ = child.kill();
        }
        let status = child.wait().ok();
        // The sandbox's after-call checks (the workspace's `.git` put back
        // as it was, see `tool_sandbox`), as after every sandboxed command.
        if let Some(sandbox) = &self.sandbox {
            use std::os::unix::process::ExitStatusExt;
            let _ = sandbox.finish(
                status.and_then(|s| s.code()),
                status.and_then(|s| s.signal()),
                "",
            );
        }
        self.shared.end("it was stopped".to_owned());
    }

    /// The process id, while the process is ours.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.child
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_ref()
            .map(Child::id)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

/// The thread that writes queued messages to the server's stdin; it ends
/// when the client is dropped (stdin then closes) or a write fails.
fn spawn_writer(
    mut stdin: std::process::ChildStdin,
    queued: std::sync::mpsc::Receiver<Vec<u8>>,
    shared: Arc<Shared>,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("lsp-writer".to_owned())
        .spawn(move || {
            for body in queued {
                if let Err(e) = write_frame(&mut stdin, &body) {
                    shared.end(format!("writing to it failed: {e}"));
                    break;
                }
            }
        })
        .map(drop)
}

/// The thread that keeps the last [`STDERR_TAIL`] bytes of the server's
/// stderr.
fn spawn_stderr(mut stderr: std::process::ChildStderr, shared: Arc<Shared>) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("lsp-stderr".to_owned())
        .spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = stderr.read(&mut buf) {
                if n == 0 {
                    break;
                }
                let mut state = shared.lock();
                let tail = &mut state.stderr_tail;
                tail.extend_from_slice(&buf[..n]);
                if tail.len() > STDERR_TAIL {
                    let cut = tail.len() - STDERR_TAIL;
                    tail.drain(..cut);
                }
            }
        })
        .map(drop)
}

/// The thread that reads the server's messages until its output ends or
/// breaks the framing rules (the server is then marked ended).
fn spawn_reader(
    stdout: std::process::ChildStdout,
    outbox: SyncSender<Vec<u8>>,
    shared: Arc<Shared>,
    max_message: usize,
) -> std::io::Result<()> {
    std::thread::Builder::new()
        .name("lsp-reader".to_owned())
        .spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                match read_frame(&mut reader, max_message) {
                    Ok(body) => handle(&body, &outbox, &shared),
                    Err(FrameError::Eof) => {
                        shared.end("it exited (its output closed)".to_owned());
                        break;
                    }
                    Err(e) => {
                        shared.end(e.to_string());
                        break;
                    }
                }
            }
        })
        .map(drop)
}

/// One message from the server: an answer to a request of ours, a request
/// of its own (answered at once, so that it never waits on us), or a
/// notification (only `publishDiagnostics` is kept). What does not parse is
/// skipped.
fn handle(body: &[u8], outbox: &SyncSender<Vec<u8>>, shared: &Shared) {
    let Ok(message) = serde_json::from_slice::<Value>(body) else {
        return;
    };
    let method = message.get("method").and_then(Value::as_str);
    let id = message.get("id");
    match (method, id) {
        (Some(method), Some(id)) => {
            let result = if method == "workspace/configuration" {
                let items = message
                    .pointer("/params/items")
                    .and_then(Value::as_array)
                    .map_or(0, Vec::len)
                    .min(MAX_CONFIGURATION_ITEMS);
                Value::Array(vec![Value::Null; items])
            } else {
                Value::Null
            };
            let answer = json!({"jsonrpc": "2.0", "id": id, "result": result});
            if let Ok(body) = serde_json::to_vec(&answer) {
                let _ = outbox.try_send(body);
            }
        }
        (None, Some(id)) => {
            let Some(id) = id.as_i64() else { return };
            let answer = match message.get("error") {
                Some(error) => Err(tool_rules::text::clip(
                    error
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("an error without a message"),
                    tool_rules::text::Clip::chars(300),
                )
                .into_owned()),
                None => Ok(message.get("result").cloned().unwrap_or(Value::Null)),
            };
            let mut state = shared.lock();
            if state.pending.remove(&id) {
                state.responses.insert(id, answer);
                drop(state);
                shared.changed.notify_all();
            }
        }
        (Some(PublishDiagnostics::METHOD), None) => {
            let Some(mut params) = message.get("params").cloned() else {
                return;
            };
            // Each item on its own: one malformed item skips itself (and
            // is counted), not the whole publication.
            let items = params
                .get_mut("diagnostics")
                .map(Value::take)
                .unwrap_or_default();
            if let Some(p) = params.as_object_mut() {
                p.insert("diagnostics".to_owned(), Value::Array(Vec::new()));
            }
            let Ok(params) = serde_json::from_value::<PublishDiagnosticsParams>(params) else {
                return;
            };
            let Some(path) = path_of(&params.uri) else {
                return;
            };
            let Value::Array(items) = items else {
                return;
            };
            let mut malformed = 0usize;
            let mut diagnostics = Vec::new();
            for item in items {
                if diagnostics.len() >= MAX_KEPT_PER_PUBLISH {
                    break;
                }
                match serde_json::from_value::<Diagnostic>(item) {
                    Ok(d) => diagnostics.push(d),
                    Err(_) => malformed += 1,
                }
            }
            let mut state = shared.lock();
            if !state.watched.contains(&path) {
                return;
            }
            state.seq += 1;
            let seq = state.seq;
            state.published.insert(
                path,
                Published {
                    seq,
                    version: params.version,
                    diagnostics,
                    malformed,
                },
            );
            drop(state);
            shared.changed.notify_all();
        }
        _ => {}
    }
}
