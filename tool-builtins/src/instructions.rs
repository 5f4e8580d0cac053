//! Nested `AGENTS.md` files (001 `OnInstructions`): when `read_file` reads
//! a path inside the workspace, the `AGENTS.md` files of the folders on the
//! way down from the workspace root to it are handed to the host through an
//! [`InstructionsHook`] in the context, each once per trace. The host
//! decides what to do with them (add them to the system prompt, show them);
//! the model's result is unchanged.
//!
//! Which folders: every folder below the root down to the file's folder
//! (for a folder read, the folder itself too). The root's own `AGENTS.md` is
//! not reported (hosts load it when a session starts), nor the file being
//! read (the model is reading it). Each file is found and opened beneath the
//! workspace's handle like any read (a symlink leading outside is not
//! followed), must be a regular file, and is read up to
//! [`MAX_INSTRUCTIONS_BYTES`]. Reads of the extra roots report nothing.

use std::collections::HashSet;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::FileType;
use tool_core::ToolContext;

use crate::fs::beneath::Missing;
use crate::fs::workspace::Workspace;

/// The file name looked for in each folder.
pub const INSTRUCTIONS_FILE: &str = "AGENTS.md";

/// The most of one `AGENTS.md` handed to the host, in bytes (64 KiB); a
/// longer file is cut there (at a character boundary) and marked
/// [`truncated`](NestedInstructions::truncated).
pub const MAX_INSTRUCTIONS_BYTES: usize = 64 * 1024;

/// The most (trace, file) pairs a hook remembers; past it the memory is
/// emptied, so a long-lived host may be told of a file a second time.
pub const MAX_REMEMBERED: usize = 4096;

/// One nested `AGENTS.md`, as handed to the host.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct NestedInstructions {
    /// The file's physical path (symlinks inside the workspace resolved).
    pub path: PathBuf,
    /// The same path relative to the workspace root (`pkg/AGENTS.md`).
    pub relative: PathBuf,
    /// The file's text (invalid UTF-8 replaced by U+FFFD), at most
    /// [`MAX_INSTRUCTIONS_BYTES`].
    pub text: String,
    /// `true` when the file was longer than [`MAX_INSTRUCTIONS_BYTES`] and cut.
    pub truncated: bool,
}

/// What an [`InstructionsHook`] calls: the trace id (if any) and the file found.
pub type InstructionsListener = dyn Fn(Option<&str>, &NestedInstructions) + Send + Sync;

/// Told of each nested `AGENTS.md` `read_file` meets on the way to what it
/// reads, once per trace and file (see the [module docs](self)); put one in
/// the context with `ToolContext::with_state(InstructionsHook::new(...))`.
/// Called on the tool's task, top folder first: hand the text to a channel
/// rather than block.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tool_builtins::instructions::InstructionsHook;
///
/// let found = Arc::new(Mutex::new(Vec::new()));
/// let sink = found.clone();
/// let hook = InstructionsHook::new(move |trace, file| {
///     sink.lock().unwrap().push((trace.map(str::to_owned), file.relative.clone()));
/// });
/// let ctx = tool_core::ToolContext::new().with_state(hook);
/// # let _ = ctx;
/// ```
#[derive(Clone)]
pub struct InstructionsHook(Arc<Inner>);

struct Inner {
    listener: Box<InstructionsListener>,
    /// (trace id or "", physical path) of every file already handed over.
    seen: Mutex<HashSet<(String, PathBuf)>>,
}

impl InstructionsHook {
    /// A hook calling `f` with the trace id (if any) and each file found.
    pub fn new(f: impl Fn(Option<&str>, &NestedInstructions) + Send + Sync + 'static) -> Self {
        Self(Arc::new(Inner {
            listener: Box::new(f),
            seen: Mutex::new(HashSet::new()),
        }))
    }

    fn was_seen(&self, trace: &str, path: &Path) -> bool {
        let seen = self.0.seen.lock().unwrap_or_else(PoisonError::into_inner);
        seen.contains(&(trace.to_owned(), path.to_path_buf()))
    }

    /// Records the file as handed over; `false` when it already was (another call raced this one).
    fn remember(&self, trace: &str, path: &Path) -> bool {
        let mut seen = self.0.seen.lock().unwrap_or_else(PoisonError::into_inner);
        if seen.len() >= MAX_REMEMBERED {
            seen.clear();
        }
        seen.insert((trace.to_owned(), path.to_path_buf()))
    }
}

impl std::fmt::Debug for InstructionsHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("InstructionsHook")
    }
}

/// The folders between the root (excluded) and `target`, top first, as
/// paths relative to the root: the target's folder and its ancestors, the
/// target itself too when it is a folder.
fn folders_on_the_way(ws: &Workspace, target: &Path, is_dir: bool) -> Vec<PathBuf> {
    let Ok(rel) = target.strip_prefix(ws.root()) else {
        return Vec::new();
    };
    let last = if is_dir { Some(rel) } else { rel.parent() };
    let mut folders: Vec<PathBuf> = last
        .into_iter()
        .flat_map(Path::ancestors)
        .filter(|p| !p.as_os_str().is_empty())
        .map(Path::to_path_buf)
        .collect();
    folders.reverse();
    folders
}

/// Reads one candidate beneath the workspace's handle: `None` when there is
/// no such regular file or it cannot be read.
fn read_one(ws: &Workspace, folder: &Path) -> Option<NestedInstructions> {
    let rel = folder.join(INSTRUCTIONS_FILE);
    let found = ws
        .beneath_for_read(&rel.to_string_lossy(), &[], Missing::Refuse)
        .ok()?;
    if found.file_type() != Some(FileType::RegularFile) {
        return None;
    }
    let file = found.open_file().ok()?;
    let mut bytes = Vec::new();
    file.take(MAX_INSTRUCTIONS_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .ok()?;
    let truncated = bytes.len() > MAX_INSTRUCTIONS_BYTES;
    bytes.truncate(MAX_INSTRUCTIONS_BYTES);
    let mut text = String::from_utf8_lossy(&bytes).into_owned();
    if truncated {
        // A cut inside a character leaves one replacement character at the end.
        if text.ends_with('\u{FFFD}') {
            text.pop();
        }
    }
    Some(NestedInstructions {
        relative: ws.relative(&found.path).to_path_buf(),
        path: found.path,
        text,
        truncated,
    })
}

/// Hands the nested `AGENTS.md` files on the way to `target` to the
/// context's [`InstructionsHook`], if it has one (see the module docs).
pub(crate) async fn report(context: &ToolContext, ws: &Workspace, target: &Path, is_dir: bool) {
    let Some(hook) = context.state::<InstructionsHook>() else {
        return;
    };
    let trace = context.trace_id().unwrap_or("").to_owned();
    let folders: Vec<PathBuf> = folders_on_the_way(ws, target, is_dir)
        .into_iter()
        .filter(|f| {
            let candidate = ws.root().join(f).join(INSTRUCTIONS_FILE);
            candidate != target && !hook.was_seen(&trace, &candidate)
        })
        .collect();
    if folders.is_empty() {
        return;
    }
    let ws = ws.clone();
    let target = target.to_path_buf();
    let found = tool_core::run_blocking(move || {
        folders
            .iter()
            .filter_map(|f| read_one(&ws, f))
            .filter(|n| n.path != target)
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    for file in found {
        if hook.remember(&trace, &file.path) {
            (hook.0.0.listener)(context.trace_id(), &file);
        }
    }
}
