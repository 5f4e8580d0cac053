//! The file tools' side of the read cache ([`tool_core::read_cache`]): the
//! fingerprint a cached answer is checked against before it is reused, and
//! the constructor hosts use.
//!
//! The fingerprint of a `read_file`, `list_dir`, `glob_files`,
//! `grep_content` or `read_images` call is the stamp (device, inode, size,
//! modification and change times in nanoseconds) of each path the call
//! names (`file_path`, `path` with `.` as default, `paths`), resolved in the
//! context's workspace as the tool resolves it. So a file changed on disk
//! by anything (a person's editor, a background job) is read again at once.
//!
//! A search or listing of a *folder* (`list_dir`, `glob_files`,
//! `grep_content` whose path is a directory) depends on every file below
//! it, which no stamp of the folder shows. Such a call is answered from the
//! cache only while a [`ContentIndex`] in the context watches the
//! workspace and vouches for it: its fingerprint then also holds
//! [`ContentIndex::current_version`], which changes with every change the
//! watcher or the host reported. Without one (`tool serve --no-index`, a
//! workspace under the index's size threshold, a watcher that failed) the
//! call bypasses the cache and reads the folder again. Every write through
//! the tools or the shell empties the cache anyway.
//!
//! ```
//! use tool_core::ToolContext;
//! use tool_core::read_cache::ReadCache;
//!
//! let ctx = ToolContext::new().with_state(tool_builtins::fs::read_cache::new_read_cache());
//! assert!(ctx.state::<ReadCache>().is_some());
//! ```

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use serde_json::{Map, Value};
use tool_core::ToolContext;
use tool_core::read_cache::{ReadCache, ReadCacheLimits};

use super::workspace::workspace_of;
use crate::search::index::ContentIndex;

/// A [`ReadCache`] with the default limits, [`fingerprint`] checked on
/// reuse and [`bypass`] asked first.
pub fn new_read_cache() -> ReadCache {
    ReadCache::new(ReadCacheLimits::default())
        .with_fingerprint(fingerprint)
        .with_bypass(bypass)
}

/// The folder a `list_dir`, `glob_files` or `grep_content` call covers,
/// resolved in the context's workspace, when it is a directory.
fn searched_folder(ctx: &ToolContext, tool: &str, args: &Map<String, Value>) -> Option<PathBuf> {
    if !matches!(tool, "list_dir" | "glob_files" | "grep_content") {
        return None;
    }
    let path = args.get("path").and_then(Value::as_str).unwrap_or(".");
    let abs = workspace_of(ctx).ok()?.resolve_for_read(path).ok()?;
    abs.is_dir().then_some(abs)
}

/// `true` for a search or listing of a folder when no [`ContentIndex`] in
/// the context can vouch that nothing below it changed (see the module
/// docs): such a call runs as without a cache.
pub fn bypass(ctx: &ToolContext, tool: &str, args: &Map<String, Value>) -> bool {
    searched_folder(ctx, tool, args).is_some()
        && ctx
            .state::<ContentIndex>()
            .and_then(|index| index.current_version())
            .is_none()
}

/// The stamps of the paths a file tool's call names (see the module docs);
/// `None` for a call that names none (another tool), or without a workspace.
pub fn fingerprint(ctx: &ToolContext, tool: &str, args: &Map<String, Value>) -> Option<Vec<u8>> {
    let paths: Vec<&str> = match tool {
        "read_file" => vec![args.get("file_path")?.as_str()?],
        "list_dir" | "glob_files" | "grep_content" => {
            vec![args.get("path").and_then(Value::as_str).unwrap_or(".")]
        }
        "read_images" => args
            .get("paths")?
            .as_array()?
            .iter()
            .filter_map(Value::as_str)
            .take(64)
            .collect(),
        _ => return None,
    };
    let ws = workspace_of(ctx).ok()?;
    let mut out = Vec::with_capacity(paths.len() * 48);
    for p in paths {
        match ws
            .resolve_for_read(p)
            .ok()
            .and_then(|abs| std::fs::metadata(abs).ok())
        {
            Some(m) => {
                for n in [m.dev(), m.ino(), m.size()] {
                    out.extend_from_slice(&n.to_le_bytes());
                }
                for t in [m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()] {
                    out.extend_from_slice(&t.to_le_bytes());
                }
            }
            // A missing path has a stamp too: absent.
            None => out.push(0),
        }
    }
    if searched_folder(ctx, tool, args).is_some() {
        // `bypass` let the call through: an index vouches for the folder.
        let version = ctx.state::<ContentIndex>()?.current_version()?;
        out.extend_from_slice(&version.to_le_bytes());
    }
    Some(out)
}
