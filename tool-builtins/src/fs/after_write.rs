//! The write hook: code of the host's that runs after every successful
//! write of the file tools (`write_file`, `edit_file`, `multi_edit`,
//! `apply_patch`), before the tool returns, and may add text to the result.
//!
//! What it is for: a language server's diagnostics for the files just
//! edited, appended to the result the model reads; a search index brought
//! up to date before the next call can search it. The write orchestrator
//! (`fs/target.rs`) is the one caller, so every writer calls the hooks the
//! same way:
//!
//! - only after a write that changed the disk: a refused call (outside the
//!   workspace, not read first, read-only file, no match) or a failed write
//!   (an I/O error, a patch rolled back) calls no hook;
//! - after the folder locks are released (a slow hook does not keep other
//!   writers out) but before the tool returns;
//! - on a blocking thread (`tool_core::run_blocking`), so a hook may block:
//!   wait on a channel, or `tokio::runtime::Handle::current().block_on(..)`
//!   its async work;
//! - with the absolute physical paths the call changed ([`ChangedPath`]),
//!   in the order the tool changed them;
//! - hooks run in the order they were added; each one's text, when it
//!   returns some, is appended to the result's output after a blank line,
//!   cut to [`HOOK_TEXT_CHARS`] characters. A hook that panics adds nothing
//!   (the write stands and the result says so on a note).
//!
//! Hooks are registered per context, like every other setting of the file
//! tools (the workspace, the ledger, the snapshot hook):
//!
//! ```
//! use tool_builtins::fs::after_write::{AfterWriteHooks, ChangedPath};
//! use tool_core::ToolContext;
//!
//! let ctx = AfterWriteHooks::add(ToolContext::new(), |_: &ToolContext, paths: &[ChangedPath]| {
//!     Some(format!("{} file(s) changed", paths.len()))
//! });
//! assert_eq!(AfterWriteHooks::of(&ctx).len(), 1);
//! ```

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::Value;
use tool_core::ToolContext;
use tool_core::meta::MetaKey;

/// Most characters of one hook's text kept in the result (about 16 k): a
/// hook that returns a whole build log does not flood the model's context.
/// A longer text is cut and ends with `… (N more bytes)`.
pub const HOOK_TEXT_CHARS: usize = 16_000;

/// One path a write changed, absolute and physical (symlinks resolved, as
/// the tools wrote it).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChangedPath {
    /// A file that did not exist before the call.
    Created(PathBuf),
    /// A file whose content the call replaced.
    Modified(PathBuf),
    /// A file the call removed.
    Deleted(PathBuf),
    /// A file moved (`apply_patch`'s `*** Move to:`), its content possibly changed too.
    Renamed {
        /// Where the file was.
        from: PathBuf,
        /// Where it is now.
        to: PathBuf,
    },
}

impl ChangedPath {
    /// The path as it is after the call (`to` for a rename; the removed
    /// path for a deletion).
    pub fn path(&self) -> &Path {
        match self {
            Self::Created(p) | Self::Modified(p) | Self::Deleted(p) => p,
            Self::Renamed { to, .. } => to,
        }
    }
}

/// Code a host runs after every successful write of the file tools (see
/// the [module docs](self) for when and how it is called).
///
/// Implemented for closures `Fn(&ToolContext, &[ChangedPath]) -> Option<String>`.
pub trait AfterWrite: Send + Sync {
    /// Called once per successful tool call with the paths it changed (never
    /// empty). The returned text, when `Some` and not blank, is appended to
    /// the result's output after a blank line.
    fn changed(&self, ctx: &ToolContext, paths: &[ChangedPath]) -> Option<String>;

    /// What the hook adds to the result: text (as [`AfterWrite::changed`]),
    /// metadata entries and notes. The orchestrator calls this one; the
    /// default gives [`AfterWrite::changed`]'s text alone. A hook that
    /// reports more (diagnostics after edits: metadata `diagnostics`, a note
    /// for a server that did not answer) overrides it. Metadata values are
    /// not cut by the orchestrator: the hook bounds them.
    fn report(&self, ctx: &ToolContext, paths: &[ChangedPath]) -> HookReport {
        HookReport {
            text: self.changed(ctx, paths),
            ..HookReport::default()
        }
    }
}

/// What one hook adds to a write's result ([`AfterWrite::report`]).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct HookReport {
    /// Appended to the output after a blank line (when not blank), cut to
    /// [`HOOK_TEXT_CHARS`].
    pub text: Option<String>,
    /// Metadata entries set on the result, in order (a later entry of the
    /// same key replaces an earlier one).
    pub metadata: Vec<(MetaKey, Value)>,
    /// Notes added to the result (each shown after the output), each cut to
    /// [`HOOK_TEXT_CHARS`].
    pub notes: Vec<String>,
}

impl HookReport {
    /// A report of `text` alone.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// The same report with the metadata entry `key` = `value` added.
    #[must_use]
    pub fn with_metadata(mut self, key: impl Into<MetaKey>, value: impl Into<Value>) -> Self {
        self.metadata.push((key.into(), value.into()));
        self
    }

    /// The same report with `note` added.
    #[must_use]
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }
}

impl<F> AfterWrite for F
where
    F: Fn(&ToolContext, &[ChangedPath]) -> Option<String> + Send + Sync,
{
    fn changed(&self, ctx: &ToolContext, paths: &[ChangedPath]) -> Option<String> {
        self(ctx, paths)
    }
}

/// The write hooks of a context, in the order they were added. Stored with
/// [`ToolContext::with_state`]; add one with [`AfterWriteHooks::add`],
/// which keeps the ones already there.
#[derive(Clone, Default)]
pub struct AfterWriteHooks(Vec<Arc<dyn AfterWrite>>);

impl AfterWriteHooks {
    /// `ctx` with `hook` added after the hooks it already has.
    #[must_use]
    pub fn add(ctx: ToolContext, hook: impl AfterWrite + 'static) -> ToolContext {
        Self::add_shared(ctx, Arc::new(hook))
    }

    /// [`AfterWriteHooks::add`] for a hook the host also keeps.
    #[must_use]
    pub fn add_shared(ctx: ToolContext, hook: Arc<dyn AfterWrite>) -> ToolContext {
        let mut hooks = Self::of(&ctx);
        hooks.0.push(hook);
        ctx.with_state(hooks)
    }

    /// The hooks of `ctx` (none when it has no [`AfterWriteHooks`]).
    pub fn of(ctx: &ToolContext) -> Self {
        ctx.state::<Self>()
            .map(|s| (*s.0).clone())
            .unwrap_or_default()
    }

    /// How many hooks there are.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Runs every hook on `paths` (blocking; call it on a blocking thread)
    /// and gives their reports, texts and notes each cut to
    /// [`HOOK_TEXT_CHARS`], and whether one of them panicked.
    pub(crate) fn run(&self, ctx: &ToolContext, paths: &[ChangedPath]) -> (Vec<HookReport>, bool) {
        let mut reports = Vec::new();
        let mut panicked = false;
        if paths.is_empty() {
            return (reports, panicked);
        }
        let cut = |text: &str| {
            tool_rules::text::clip(
                text,
                tool_rules::text::Clip::chars(HOOK_TEXT_CHARS).counting_rest(),
            )
            .into_owned()
        };
        for hook in &self.0 {
            let called =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| hook.report(ctx, paths)));
            match called {
                Ok(mut report) => {
                    report.text = report
                        .text
                        .filter(|t| !t.trim().is_empty())
                        .map(|t| cut(&t));
                    report.notes = report.notes.iter().map(|n| cut(n)).collect();
                    reports.push(report);
                }
                Err(_) => panicked = true,
            }
        }
        (reports, panicked)
    }
}

impl fmt::Debug for AfterWriteHooks {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AfterWriteHooks({} hooks)", self.0.len())
    }
}
