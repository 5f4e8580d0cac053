//! `tool index status|build|drop` and the index `tool serve` builds in the
//! background (issue 29). One-shot commands (`tool call`, `tool batch`)
//! never build one: a single search scans faster than an index is built.

use std::io::Write;

use tool_builtins::{ContentIndex, IndexConfig, IndexStatus};

use crate::cli::{CommonOptions, IndexAction};
use crate::failure::Failure;
use crate::session::Session;

/// The index of `common`'s workspace, with the default settings.
fn open(common: &CommonOptions, watch: bool) -> Result<ContentIndex, Failure> {
    let root =
        crate::workspace::resolve_root(common.workspace.as_deref()).map_err(Failure::Usage)?;
    let ws = tool_builtins::Workspace::new(&root)
        .map_err(|e| Failure::Usage(format!("workspace {}: {e}", root.display())))?;
    // `tool index build` is a one-shot process: nothing changes between its
    // walk and its exit that a watcher could report.
    let config = IndexConfig::default()
        .with_watch(watch)
        .with_trusted_writes(!watch);
    Ok(ContentIndex::new(&ws, config))
}

/// Runs `tool index ACTION`, printing to `out`.
///
/// # Errors
/// A usage error for a bad workspace; an I/O error reading or deleting the
/// index; [`Failure::ToolError`] (exit 1, the reason printed) when `build`
/// is refused or fails (a state folder inside the workspace or not
/// writable, a file over the disk cap), not when the files are too few to
/// need an index.
pub(crate) fn run(
    action: IndexAction,
    common: &CommonOptions,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let index = open(common, false)?;
    let location = index.location().map_or_else(
        || "(no state folder: set XDG_STATE_HOME or HOME)".to_owned(),
        |p| p.display().to_string(),
    );
    match action {
        IndexAction::Status if index.refusal().is_some() => {
            let reason = index.refusal().unwrap_or_default();
            writeln!(out, "no index: {reason}; searches scan")?;
        }
        IndexAction::Status => match index.stored().map_err(Failure::Io)? {
            Some((files, bytes)) => writeln!(
                out,
                "stored: {files} files, index {:.1} MiB at {location}",
                bytes as f64 / 1_048_576.0
            )?,
            None => match hosts(&index).as_slice() {
                [] => writeln!(
                    out,
                    "no index stored (it would live at {location}); searches scan"
                )?,
                pids => writeln!(
                    out,
                    "no index stored (it would live at {location}); running hosts still \
                     search with the index they had until they exit ({}); new hosts build one",
                    pid_list(pids)
                )?,
            },
        },
        IndexAction::Build => {
            // Brings the stored index up to date: written again when any
            // file changed since it was stored.
            let status = index.update();
            writeln!(out, "{status}")?;
            match status {
                IndexStatus::Ready { .. } => writeln!(out, "at {location}")?,
                // Refused or failed (not merely small): a script must see it.
                IndexStatus::Off { .. } => return Err(Failure::ToolError),
                _ => {}
            }
        }
        IndexAction::Drop => {
            if index.drop_index().map_err(Failure::Io)? {
                write!(out, "deleted the index at {location}")?;
                match hosts(&index).as_slice() {
                    [] => writeln!(out)?,
                    pids => writeln!(
                        out,
                        "; running hosts keep searching with it until they exit ({}), \
                         and its disk space is freed then",
                        pid_list(pids)
                    )?,
                }
            } else {
                writeln!(out, "no index stored at {location}")?;
            }
        }
    }
    Ok(())
}

/// The processes serving from an index of this workspace: each running
/// host keeps a `sentinels-<pid>` folder next to the index file (removed
/// when it stops; one of a process no longer running is left out).
fn hosts(index: &ContentIndex) -> Vec<u32> {
    let Some(dir) = index
        .location()
        .and_then(|p| p.parent().map(std::path::Path::to_path_buf))
    else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut pids: Vec<u32> = entries
        .flatten()
        .filter_map(|e| {
            e.file_name()
                .to_str()
                .and_then(|n| n.strip_prefix("sentinels-"))
                .and_then(|p| p.parse::<u32>().ok())
        })
        .filter(|&pid| {
            pid != std::process::id()
                && std::path::Path::new("/proc").join(pid.to_string()).exists()
        })
        .collect();
    pids.sort_unstable();
    pids
}

/// "pid 12" or "pids 12, 34".
fn pid_list(pids: &[u32]) -> String {
    let list: Vec<String> = pids.iter().map(u32::to_string).collect();
    let noun = if pids.len() == 1 { "pid" } else { "pids" };
    format!("{noun} {}", list.join(", "))
}

/// Adds an index of the session's workspace to its context (`tool serve`);
/// [`start`] builds it in the background once the server's banner is out.
/// Searches scan until it is ready. Progress and problems go to stderr, the
/// server's log.
pub(crate) fn attach(session: &mut Session) {
    let Some(ws) = session.ctx.state::<tool_builtins::Workspace>() else {
        return;
    };
    let index = ContentIndex::new(&ws, IndexConfig::default());
    // The file tools tell the index what they wrote (the watcher sees it
    // too, later; the hook makes the very next search current).
    let ctx = session.ctx.clone().with_state(index.clone());
    session.ctx = tool_builtins::AfterWriteHooks::add(ctx, index);
}

/// Starts building the index [`attach`] added, if any: after the banner, so
/// that the banner stays the first line a person (or a script) reads.
pub(crate) fn start(ctx: &tool_core::ToolContext) {
    if let Some(index) = ctx.state::<ContentIndex>() {
        drop(index.build_in_background());
    }
}
