//! `--skills-dir` / `$AGENT_TOOLS_SKILLS`: loading the skills, adding the
//! `skill` tool to the registry and the skills folders to the workspace's
//! read-only roots; and `tool skills`.

use std::io::{self, Write};
use std::path::PathBuf;

use serde_json::json;
use tool_builtins::skills::SkillSet;
use tool_core::{OnConflict, ToolContext, ToolRegistry};

use crate::cli::CommonOptions;
use crate::failure::Failure;

/// The environment variable naming skills folders when no `--skills-dir` is
/// given: folders separated as in `PATH` (`:` on Unix).
pub(crate) const SKILLS_ENV: &str = "AGENT_TOOLS_SKILLS";

/// The configured skills folders: every `--skills-dir`, else the folders of
/// [`SKILLS_ENV`] (empty entries skipped), else none. Each is made absolute
/// against the current folder here, once, so the skill loader, the file
/// tools' refusals and the sandbox's read-only list see one path (review 23,
/// F1: the sandbox resolved a relative folder against the workspace).
pub(crate) fn folders(common: &CommonOptions) -> Vec<PathBuf> {
    let given: Vec<PathBuf> = if common.skills_dirs.is_empty() {
        std::env::var_os(SKILLS_ENV)
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default()
    } else {
        common.skills_dirs.clone()
    };
    given
        .into_iter()
        .map(|p| std::path::absolute(&p).unwrap_or(p))
        .collect()
}

/// Loads the configured skills, reporting each diagnostic on `err` as a
/// `warning:` line; `None` when no folder is configured.
pub(crate) fn load(common: &CommonOptions, err: &mut impl Write) -> Option<SkillSet> {
    let folders = folders(common);
    if folders.is_empty() {
        return None;
    }
    let set = SkillSet::load(&folders);
    for d in set.diagnostics() {
        let _ = writeln!(err, "warning: skill left out: {d}");
    }
    Some(set)
}

/// `registry` plus the `skill` tool when skills folders are configured.
///
/// # Errors
/// A usage message when the registry already has a tool named `skill`.
pub(crate) fn with_skill_tool(
    registry: &ToolRegistry,
    common: &CommonOptions,
) -> Result<ToolRegistry, Failure> {
    let Some(set) = load(common, &mut io::stderr().lock()) else {
        return Ok(registry.clone());
    };
    let tool = set
        .tool()
        .map_err(|e| Failure::Usage(format!("the skill tool: {e}")))?;
    let mut extended = registry.clone();
    extended
        .register_with(tool, OnConflict::Error)
        .map_err(|e| Failure::Usage(format!("--skills-dir: {e}")))?;
    Ok(extended)
}

/// `ctx` with the folder of each loaded skill as a read-only root of its
/// workspace ([`SkillSet::make_readable`]): only what a skill ships is
/// readable, not the configured folders' other contents. Diagnostics are not
/// repeated here (the `skill` tool's loading reports them).
pub(crate) fn make_readable(ctx: ToolContext, common: &CommonOptions) -> ToolContext {
    match load(common, &mut io::sink()) {
        Some(set) => set.make_readable(ctx),
        None => ctx,
    }
}

/// `tool skills [--json]`: one line per skill (name, description, path of
/// its `SKILL.md`), or a JSON array. Problems go to `err`; any ends with
/// [`Failure::ToolError`] after the listing.
pub(crate) fn list(
    common: &CommonOptions,
    json: bool,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<(), Failure> {
    let Some(set) = load(common, err) else {
        return Err(Failure::Usage(format!(
            "no skills folder: give --skills-dir DIR (repeatable) or set {SKILLS_ENV}"
        )));
    };
    if json {
        let rows: Vec<_> = set
            .skills()
            .iter()
            .map(|s| {
                json!({
                    "name": s.name,
                    "description": s.description,
                    "path": s.file().display().to_string(),
                })
            })
            .collect();
        serde_json::to_writer_pretty(&mut *out, &rows).map_err(io::Error::from)?;
        writeln!(out)?;
    } else {
        let width = set.skills().iter().map(|s| s.name.len()).max().unwrap_or(0);
        for s in set.skills() {
            writeln!(
                out,
                "{:<width$}  {}  ({})",
                s.name,
                s.description,
                s.file().display()
            )?;
        }
    }
    out.flush()?;
    if set.diagnostics().is_empty() {
        Ok(())
    } else {
        let loaded = match set.skills().len() {
            0 => "no skill loaded".to_owned(),
            1 => "the skill above loaded".to_owned(),
            n => format!("the {n} skills above loaded"),
        };
        writeln!(
            err,
            "{} problem(s) in the skills folders; {loaded}.",
            set.diagnostics().len()
        )?;
        Err(Failure::ToolError)
    }
}
