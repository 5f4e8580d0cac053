//! Built-in coding tools for agents, confined to a workspace.
//!
//! The file tools every coding agent expects (read, write, edit, multi-edit,
//! patch, shell, glob, grep, list), with the model-facing envelopes and
//! messages of opencode and the patch grammar of Codex, so prompts written for
//! those keep working. Every path is resolved inside a [`Workspace`]; writes
//! follow the read-before-write rule of a [`FileLedger`], are atomic, keep the
//! file's permissions, byte order mark and line endings, and can be recorded
//! for rewinding through a [`Snapshots`] hook.
//!
//! ```
//! use tool_builtins::{ChangeLog, Snapshots, context};
//! use std::sync::Arc;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! std::fs::write(dir.path().join("notes.txt"), "alpha\r\nbeta\r\n").unwrap();
//!
//! // One context per agent session: the workspace, the ledger, and (optionally) a change log.
//! let log = Arc::new(ChangeLog::default());
//! let ctx = context(dir.path()).unwrap().with_state(Snapshots(log.clone()));
//!
//! // The workspace confines every path.
//! let ws = ctx.state::<tool_builtins::Workspace>().unwrap();
//! let err = ws.resolve("../outside.txt").unwrap_err();
//! assert!(err.to_string().contains("outside the workspace"));
//!
//! // Record a read in the ledger, as read_file does; then a write may proceed.
//! let ledger = ctx.state::<tool_builtins::FileLedger>().unwrap();
//! let path = ws.resolve("notes.txt").unwrap();
//! assert!(ledger.check(&path).is_err());
//! ledger.record_bytes(&path, &std::fs::read(&path).unwrap()).unwrap();
//! assert!(ledger.check(&path).is_ok());
//! assert!(log.changes().is_empty());
//! # });
//! ```
//!
//! # Tools
//! | tool | module | what it does |
//! | --- | --- | --- |
//! | `read_file` | [`read`] | numbered window of a text file (streamed), a folder's entries, an image |
//! | `read_images` | [`media`] | several images as one numbered grid, or each scaled on its own |
//! | `write_file` | [`write`](mod@write) | a whole file, verbatim; read-before-write for existing files |
//! | `edit_file` | [`edit`] | one replacement, located by the strategies of [`fs::replace`] |
//! | `multi_edit` | [`multi_edit`](mod@multi_edit) | several replacements in one file, all or nothing |
//! | `apply_patch` | [`patch`] (`parse`, `apply`) | Codex-style patch over many files, verified before writing |
//! | `bash_command` | [`shell::bash`] | a shell command in its own process group, bounded output |
//! | `glob_files` | [`search::glob`] | files by glob, newest first |
//! | `grep_content` | [`search::grep`] | regex search with ripgrep's engine |
//! | `list_dir` | [`search::list`] | a folder tree |
//! | `job_output`, `job_kill`, `job_list` | [`shell::job_tools`] | a background job's output, stopping it, the session's jobs |
//! | `ask_user` | [`ask`](mod@ask) | a question for the person, through the context's `Asker` |
//! | `todo_write`, `todo_read` | [`todo`](mod@todo) | the session's task list, kept per trace |
//! | `goal` | [`goal`](mod@goal) | the trace's goal tree: goals with criteria, status, summaries |
//! | `skill` | [`skills`] | a skill's instructions, from `SKILL.md` folders (a runtime tool: [`SkillSet::tool`]) |
//! | `web_fetch` | [`web::fetch`] | one URL under a [`WebConfig`]'s network policy: HTML as Markdown, text, an image, a PDF |
//! | `web_search` | [`web::search`] | title/URL/snippet hits from a configured provider (Brave, SearXNG) |
//!
//! Each is a `#[tool]` fn: linking this crate adds them to
//! [`ToolRegistry::global`]; [`registry`] gives a registry of just these.
//! The fns can also be called directly (`read_file(&ctx, path, 1, None).await`).
//!
//! # Modules
//! The tools of one kind sit in one wing with what only they use; the file
//! tools (`read`, `write`, `edit`, `multi_edit`) sit at the top, one per file.
//! - [`fs`]: the file system as the tools use it: [`Workspace`]
//!   confinement, the [`FileLedger`] (read-before-write), text decoding and
//!   encodings, line endings, binary sniffing, the `edit_file` matching
//!   strategies ([`fs::replace`]), atomic writes, change snapshots, diffs, and
//!   the one write path every file-changing tool goes through.
//! - [`instructions`]: the nested `AGENTS.md` files `read_file` meets on its
//!   way down, handed to the host's [`InstructionsHook`] once per trace.
//! - [`shell`]: `bash_command` with its [`BashConfig`], the environment filter,
//!   the runner (process group, supervisor, capture, stop sequence), the
//!   [`CommandPolicy`] and [`split_command`] (allow / ask / deny on every
//!   segment of a compound command), the default guard, ANSI stripping.
//! - [`search`]: `glob_files`, `grep_content`, `list_dir` and what they
//!   share: the walker that stays in the workspace, explicitly named paths
//!   versus ignore files, [`SearchConfig`], the parallel top-K collector.
//! - [`patch`]: `apply_patch`: the grammar apart from plan/apply/rollback.
//! - [`skills`]: [`SkillSet`], `SKILL.md` folders loaded with per-file
//!   diagnostics, and the `skill` tool built from them.
//! - [`web`]: `web_fetch` and `web_search`, the [`WebConfig`] they read
//!   (network policy, limits, search provider), the page cache.
//! - [`diagnostics`]: diagnostics after edits, a write hook that tells the
//!   configured language server (LSP over stdio) of each written file and
//!   appends the errors and warnings it publishes to the result.
//! - Head/tail truncation with spill files lives in `tool_core::truncate`.
//!
//! What may import what (checked on the `use crate::` lines): the tools and
//! `patch` → `fs`; `shell` → `fs`; `search` → `fs`; the read-only spill
//! roots (`roots`, beside `lib.rs`) → `fs` and `shell::config`; `web` →
//! `media` (images and PDFs of fetched pages); `diagnostics` → `fs` and
//! `shell::config`. `fs` imports none of the other wings.
//!
//! # Setting up a context
//! The tools read their environment from the [`ToolContext`] as typed state:
//! a [`Workspace`] (required), a [`FileLedger`] (required by the tools that
//! write) and a [`Snapshots`] hook (optional). [`context`]
//! builds a context with the first two. [`BashConfig`] (shell, limits, which
//! environment variables count as secrets, a [`CommandPolicy`]) and
//! [`SearchConfig`] (result limit, line cut, threads, list ignores) are
//! optional state too; without them the documented defaults apply.
//!
//! # Dependencies and why
//! - `tool-core`: the runtime (results, context, registry), `truncate`, and
//!   `run_blocking` (file I/O off the async workers; one panic policy).
//! - `humantime`: the ledger's RFC 3339 timestamps and `bash_command`'s
//!   timeout text, instead of a hand-written civil-date conversion and
//!   seconds formatter.
//! - Kept by hand, with the reason: `fs::atomic::write_at` (it fsyncs the
//!   file and the folder, more than `tempfile::persist`); the `*`/`?`
//!   matcher of policy rules and secret names (`shell/wildcard.rs`: it must
//!   be linear in a model-sent command, and `wildmatch` measured quadratic,
//!   over 60 s against 40 ms on the bounded-time test); the streaming ANSI
//!   stripper (`shell/ansi.rs`: `vte` reads UTF-8 C1 controls as single
//!   controls, does not end a sequence at a line feed and buffers an
//!   unterminated OSC string without bound, three behaviours the stripper
//!   keeps).
//! - `tokio` (`sync`): the per-file async locks of the ledger, and
//!   `spawn_blocking` for file I/O off the async workers.
//! - `serde`, `serde_json`, `schemars`: typed arguments (`multi_edit`'s edit
//!   list) and JSON metadata.
//! - `similar`: unified diffs for the metadata of every write; a mature,
//!   dependency-free diff crate; its own hunk header and line form are used,
//!   around a prefix/suffix skip and a byte cap of ours.
//! - `chardetng` + `encoding_rs`: text that is not UTF-8 is decoded with a
//!   detected encoding (and written back in it) instead of being shown with
//!   replacement characters; the detector and converter Firefox uses.
//!   `encoding_rs`'s streaming decoder also validates UTF-8 read in chunks.
//! - `base64`: images returned to the model are base64 in [`tool_core::Image`].
//! - `image` (features `png`, `jpeg`, `gif`, `webp`, `bmp` only; no default
//!   features, so no AVIF/TIFF/EXR codecs or `rayon`): decoding with
//!   allocation limits, area-sampled downscaling and PNG/JPEG encoding for
//!   `read_images` and `read_file`'s images; the maintained pure-Rust codecs
//!   (zune-jpeg, png, image-webp), so no hand-written decoder and no C library.
//! - `ab_glyph`: rasterises the index digits of a `read_images` grid from the
//!   bundled DejaVu Sans Mono Bold subset (digits only, 2 KiB, Bitstream Vera
//!   licence in `assets/fonts/LICENSE`); small, no system font lookup.
//! - `memchr`: fast line counting when streaming a window out of a huge file.
//! - `tool-rules`: the one home of small shared rules (cross-cutting §1):
//!   message clipping (`tool_rules::text::clip`), "did you mean" and the
//!   line similarity of `edit_file`'s block-anchor matching
//!   (`tool_rules::suggest`); no other crate of the workspace uses `strsim`.
//! - `tempfile` (tests only): real files in throw-away folders for every hazard test.
//! - `proptest` (tests only): the property and fuzz tests of `tests/props.rs`
//!   (every tool's `execute` with arbitrary arguments, patches from real
//!   diffs, edits against the matcher, the policy lexer) on stable Rust, with
//!   shrinking to a minimal failing input.
//! - `ignore`, `globset`, `grep-searcher`, `grep-regex`: ripgrep's own
//!   library crates behind `glob_files`, `grep_content` and `list_dir`: its
//!   parallel walker with `.gitignore`/`.ignore` semantics and symlink-loop
//!   detection, its glob engine, and its line-oriented searcher with binary
//!   detection. Using the engine `rg` is built from keeps results identical to
//!   `rg --hidden --follow` and the speed within reach of it.
//! - `grep-matcher`: the `LineTerminator` type of ripgrep's crates, to give
//!   the searcher the CRLF line terminator the matcher uses (`--crlf` mode).
//! - `unicode-normalization`: Unicode Normalization Form C and its quick
//!   check, so that `edit_file`, `multi_edit` and `apply_patch` match text
//!   that is canonically equal (a decomposed `e` + U+0301 from a macOS file
//!   system against U+00E9); the unicode-rs implementation, already in the tree.
//! - `rustix`: safe wrappers for what `bash_command` needs beyond `std`:
//!   signalling a whole process group (`kill(-pgid)`, `SIGTERM` then
//!   `SIGKILL`), one pipe shared by stdout and stderr, and `poll` with a
//!   timeout, `prctl`, `pidfd_open`, `waitpid` and `/proc` reads without
//!   allocation for the per-call supervisor. `rustix` is smaller than `nix`,
//!   talks to Linux without libc, and is already in the tree (through
//!   `tempfile`).
//! - `yaml-rust2`: the YAML front matter of `SKILL.md` files (see [`skills`]
//!   for the choice among YAML crates).
//! - `reqwest`, `htmd`, `url`, `httpdate`: `web_fetch` and `web_search`
//!   (HTTP, HTML to Markdown, URLs, `Retry-After` dates); each choice and
//!   its reason is in the [`web`] module's docs.
//! - `lsp-types`: the Language Server Protocol 3.17 message types for
//!   [`diagnostics`] (the crate most Rust LSP clients and servers use; no
//!   message shape written by hand); the framing is ours, bounded.
//! - `libc`: the calls of the supervisor that `rustix` has no stable
//!   safe form for (`fork`, `_exit`, `signal(SIG_IGN)`, `close_range`),
//!   made in the one function of the workspace allowed to use `unsafe`
//!   (`proctree::supervise`, audited; the workspace lint is `deny`). Already
//!   in the tree (through `memmap2` and `tokio`).

use std::io;
use std::path::{Path, PathBuf};

use tool_core::{ToolContext, ToolRegistry};

pub mod ask;
pub mod diagnostics;
pub mod edit;
mod error;
pub mod fs;
pub mod goal;
pub mod instructions;
pub mod media;
pub mod multi_edit;
pub mod patch;
pub mod read;
mod roots;
pub mod search;
pub mod shell;
pub mod skills;
pub mod todo;
pub mod web;
pub mod write;

/// The `image` crate (0.25) this crate decodes and draws images with,
/// re-exported so that callers of [`media::grid::build_image_grid`] (which
/// takes and returns `image::DynamicImage`) need no dependency of their own
/// that could resolve to another version.
pub use image;

pub use ask::ask_user;
pub use edit::edit_file;
pub use fs::after_write::{AfterWrite, AfterWriteHooks, ChangedPath, HookReport};
pub use fs::changes::{Change, ChangeLog, SnapshotHook, Snapshots};
pub use fs::ledger::FileLedger;
pub use fs::workspace::{PathError, Workspace};
pub use goal::{Goal, GoalAction, GoalKind, GoalStatus, goal};
pub use instructions::{InstructionsHook, NestedInstructions};
pub use media::{ImageLayout, read_images};
pub use multi_edit::{Edit, multi_edit};
pub use patch::apply_patch;
pub use read::{ReadOptions, read_file};
pub use write::write_file;

pub use search::SearchConfig;
pub use search::glob::glob_files;
pub use search::grep::grep_content;
pub use search::index::{ContentIndex, IndexConfig, IndexStatus};
pub use search::list::list_dir;
pub use shell::policy::{CommandPolicy, PolicyAction, PolicyDecision, SegmentVerdict};
pub use shell::split::{CommandParts, split_command};
pub use shell::{BashConfig, bash_command, job_kill, job_list, job_output};
pub use skills::{Skill, SkillSet};
pub use todo::{TodoHook, TodoItem, TodoStatus, todo_read, todo_write};
pub use web::{WebConfig, web_fetch, web_search};

// The built-ins are an opt-in library: linking this crate does not put a
// shell and file writes into an application's `ToolRegistry::global()`.
tool_core::opt_in_tools!();

/// A registry holding only the built-in tools, for hosts that opt in to them
/// explicitly (or merge them into a registry of their own).
///
/// The built-ins are not in [`ToolRegistry::global`] (this crate declares
/// itself opt-in with [`tool_core::opt_in_tools!`]), so this, or
/// [`ToolRegistry::merge`] of it into the application's registry, is how a
/// host offers them; this one holds the `#[tool]` fns of this crate
/// ([`ToolRegistry::of_crate`]: each tool records the `module_path!()` it is
/// defined in), so a new built-in is in it without being listed anywhere and
/// a host tool that happens to share a name is never picked up. It does not
/// go through the global registry, so a name clash among the host's own tools
/// cannot make it fail.
///
/// ```
/// let registry = tool_builtins::registry();
/// assert!(registry.contains("read_file"));
/// assert!(registry.contains("apply_patch"));
/// assert_eq!(registry.get("read_file").unwrap().spec().kind, tool_core::ToolKind::Read);
/// ```
pub fn registry() -> ToolRegistry {
    // The specs are fixed at compile time and covered by this crate's tests
    // (`builtins_are_registered`); a spec that failed to build would be a bug
    // here, not input, so an error leaves an empty registry those tests catch.
    ToolRegistry::of_crate("tool_builtins").unwrap_or_default()
}

/// A context for the built-in tools: a [`Workspace`] rooted at `root` and a
/// fresh [`FileLedger`]. Add a [`Snapshots`] hook with
/// [`ToolContext::with_state`] to record changes.
///
/// # Errors
/// The I/O error of canonicalising `root` (e.g. it does not exist).
pub fn context(root: impl AsRef<Path>) -> io::Result<ToolContext> {
    with_builtins(ToolContext::new(), root)
}

/// `ctx` plus what the built-in tools read from a context: a [`Workspace`]
/// rooted at `root`, a fresh [`FileLedger`] (replacing any already there)
/// and, unless `ctx` has one, the read cache
/// ([`fs::read_cache::new_read_cache`]: identical read-only calls of one
/// trace answered for 30 s, emptied by every call that may write; see
/// [`tool_core::read_cache`]).
///
/// # Errors
/// The I/O error of canonicalising `root` (e.g. it does not exist).
pub fn with_builtins(ctx: ToolContext, root: impl AsRef<Path>) -> io::Result<ToolContext> {
    let ctx = if ctx.state::<tool_core::read_cache::ReadCache>().is_some() {
        ctx
    } else {
        ctx.with_state(fs::read_cache::new_read_cache())
    };
    Ok(ctx
        .with_state(Workspace::new(root)?)
        .with_state(FileLedger::new()))
}

/// `ctx` for one client session of a server that serves many (an MCP
/// session of `tool serve --http`, or one stateless-era request without a
/// trace): the context's [`FileLedger`] replaced by a fresh, in-memory one,
/// so that a file one session read does not count as read in another. The
/// session lives in this process, and so does its ledger. A context
/// without a ledger is returned unchanged.
pub fn for_session(ctx: ToolContext) -> ToolContext {
    if ctx.state::<FileLedger>().is_some() {
        ctx.with_state(FileLedger::new())
    } else {
        ctx
    }
}

/// `ctx` for one client-supplied trace of a server that serves many (MCP's
/// stateless era: every request of the trace is a new context): the
/// context's [`FileLedger`] replaced by the persistent ledger of `trace` in
/// the context's workspace, in the base ledger's store when it has one,
/// else in the per-user store ([`FileLedger::for_trace`]); an in-memory
/// ledger (shared by nothing) when neither can be had. A context without a
/// ledger or workspace is returned unchanged.
pub fn for_trace(ctx: ToolContext, trace: &str) -> ToolContext {
    let (Some(ledger), Some(ws)) = (ctx.state::<FileLedger>(), ctx.state::<Workspace>()) else {
        return ctx;
    };
    let own = if ledger.state_key().is_some() {
        ledger.for_owner(trace)
    } else {
        FileLedger::for_trace(trace, ws.root()).unwrap_or_default()
    };
    ctx.with_state(own)
}

/// The folders of `ctx` that no file tool may write, for layers that must
/// enforce the same rule (the sandbox): see [`ProtectedFolders`].
pub fn protected_folders(ctx: &ToolContext) -> ProtectedFolders {
    let read_only = ctx
        .state::<Workspace>()
        .map(|ws| ws.write_protected().to_vec())
        .unwrap_or_default();
    ProtectedFolders {
        hidden: fs::workspace::hidden_folders(),
        read_only,
    }
}

/// What [`protected_folders`] returns: the rule of cross-cutting §6, whose
/// precedence where paths overlap is hidden > read-only > writable.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct ProtectedFolders {
    /// Folders neither read nor written by any file tool: the private
    /// runtime folder ([`tool_core::truncate::private_dir_location`]; a
    /// trace's own spill folder inside it stays readable) and the
    /// persistent state folder ([`tool_core::state::state_dir`]: ledgers,
    /// token caches, job output). As absolute paths, canonical where they exist.
    pub hidden: Vec<PathBuf>,
    /// Folders the file tools read but never write: every configured
    /// skills folder ([`skills::SkillSet::make_readable`] adds them,
    /// [`Workspace::with_write_protected`] for others). Canonical.
    pub read_only: Vec<PathBuf>,
}

/// Helpers shared by the tools' unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use tool_core::ToolContext;

    /// A temporary workspace holding `files` (relative path, content), with
    /// the context [`crate::context`] builds for it.
    pub(crate) fn workspace_with<C: AsRef<[u8]>>(
        files: &[(&str, C)],
    ) -> (tempfile::TempDir, ToolContext) {
        let dir = tempfile::tempdir().unwrap();
        for (name, content) in files {
            let p = dir.path().join(name);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        let ctx = crate::context(dir.path()).unwrap();
        (dir, ctx)
    }
}
