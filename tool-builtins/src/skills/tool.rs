//! The built-in `skill` tool: a runtime tool, since its description is built
//! from the skills loaded.

use std::fmt::Write as _;
use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tool_core::{ErrorKind, Tool, ToolContext, ToolKind, ToolResult, ToolSpec, meta};
use tool_rules::suggest;
use tool_rules::text::{Clip, clip};

use super::{LISTED_DESCRIPTION_CHARS, SkillSet, paths};
use crate::fs::workspace::Workspace;

/// The tool's name.
pub const TOOL_NAME: &str = "skill";

/// Most names listed in an "unknown skill" error.
const NAMES_IN_ERROR: usize = 40;

/// The tool's description: what it is for, then one line per skill.
fn description(set: &SkillSet) -> String {
    let mut text = String::from(
        "Load a skill: instructions (and files) for a kind of task. When a task matches a skill \
         below, call this with its name first and follow what it returns.\n\nSkills:",
    );
    if set.skills().is_empty() {
        text.push_str(" none are installed.");
    }
    for skill in set.skills() {
        let _ = write!(
            text,
            "\n- {}: {}",
            skill.name,
            clip(&skill.description, Clip::chars(LISTED_DESCRIPTION_CHARS))
        );
    }
    text
}

/// The arguments of `skill`.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
struct SkillArgs {
    /// The skill's name, as listed.
    name: String,
}

pub(super) fn build(set: &SkillSet) -> Result<Tool, tool_core::RegistryError> {
    let mut spec = ToolSpec::new(TOOL_NAME, "", Value::Null)
        .with_description(description(set))
        .with_kind(ToolKind::Read)
        .read_only();
    spec.flags.idempotent = true;
    spec.flags.concurrency_safe = true;
    let set = Arc::new(set.clone());
    Tool::typed(spec, move |args: SkillArgs, ctx: ToolContext| {
        let set = Arc::clone(&set);
        async move { call(&set, &args.name, &ctx) }
    })
}

fn call(set: &SkillSet, name: &str, ctx: &ToolContext) -> ToolResult {
    let Some(skill) = set.get(name) else {
        return unknown(set, name);
    };
    let ws = ctx.state::<Workspace>();
    let show = |p: &Path| -> String {
        match &ws {
            Some(ws) if ws.contains(p) => ws.relative(p).display().to_string(),
            _ => p.display().to_string(),
        }
    };
    let readable = ws.as_ref().is_none_or(|ws| {
        ws.contains(&skill.folder)
            || ws
                .read_only_roots()
                .iter()
                .any(|r| skill.folder.starts_with(r))
    });
    let resolved = paths::resolve(&skill.body, &skill.folder, &show);
    let folder = show(&skill.folder);
    let mut out = format!(
        "Skill `{}` (folder {folder}). Paths to files beside it are written so read_file opens \
         them; other relative paths are relative to that folder.\n\n{}\n",
        skill.name,
        resolved.body.trim_end()
    );
    let files = skill.files();
    if !files.is_empty() {
        out.push_str("\nFiles beside it:\n");
        for f in &files {
            let _ = writeln!(out, "- {}", show(&skill.folder.join(&f.path)));
        }
    }
    if !resolved.missing.is_empty() {
        let _ = writeln!(
            out,
            "\nNot found in the skill's folder: {}.",
            resolved.missing.join(", ")
        );
    }
    if !readable {
        out.push_str(
            "\nread_file cannot open files in this folder: the host has not made it readable \
             (tool_builtins::skills::SkillSet::make_readable).\n",
        );
    }
    ToolResult::ok(out)
        .with_title(format!("skill {}", skill.name))
        .with_metadata(meta::SKILL, skill.name.clone())
        .with_metadata(meta::FOLDER, skill.folder.display().to_string())
}

/// The "no such skill" error: the closest names first, then every name.
fn unknown(set: &SkillSet, name: &str) -> ToolResult {
    let shown = clip(name, Clip::chars(64));
    if set.skills().is_empty() {
        return ToolResult::error(
            ErrorKind::InvalidArguments,
            format!("No skill named `{shown}`: no skills are installed."),
        );
    }
    let mut message = format!("No skill named `{shown}`.");
    if let Some(best) =
        suggest::ranked(name, set.skills().iter().map(|s| s.name.as_str()), 1).first()
    {
        let _ = write!(message, " Did you mean `{best}`?");
    }
    let names: Vec<&str> = set
        .skills()
        .iter()
        .take(NAMES_IN_ERROR)
        .map(|s| s.name.as_str())
        .collect();
    let _ = write!(message, " Skills: {}", names.join(", "));
    if set.skills().len() > NAMES_IN_ERROR {
        let _ = write!(message, " and {} more", set.skills().len() - NAMES_IN_ERROR);
    }
    message.push('.');
    ToolResult::error(ErrorKind::InvalidArguments, message)
}
