//! `--skills-dir` / `$AGENT_TOOLS_SKILLS`: loading the skills, adding the
//! `skill` tool to the registry and the skills folders to the workspace's
//! read-only roots; `tool skills`; and `serve --skills-as-prompts` (the
//! skills as MCP prompts, their files as resources).

use std::io::{self, Write};
use std::sync::Arc;

use serde_json::json;
use tool_builtins::skills::{Skill, SkillSet};
use tool_core::{OnConflict, ToolContext, ToolRegistry};
use tool_mcp::catalog::{Prompt, Resource, ResourceBody, ResourceTemplate};
use tool_mcp::rmcp::model::{PromptMessage, Role};

use crate::cli::{CommonOptions, SKILLS_ENV};
use crate::failure::Failure;

/// Loads the configured skills, reporting each diagnostic on `err` as a
/// `warning:` line; `None` when no folder is configured.
pub(crate) fn load(common: &CommonOptions, err: &mut impl Write) -> Option<SkillSet> {
    let folders = common.skills_folders();
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

/// Characters kept as they are in the path of a `skill://NAME/PATH` URI:
/// RFC 3986's unreserved ones and `/`; every other byte is `%XX`.
const URI_PATH: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Skill names listed in an "unknown skill" error, at most.
const NAMES_IN_ERROR: usize = 40;

/// The description of a skill prompt's optional `task` argument.
const TASK_ARGUMENT: &str = "What to do with the skill (appended to its instructions).";

/// `serve --skills-as-prompts`: the catalog offering the configured skills,
/// or `None` (with a warning on `err`) when no skills folder is configured.
/// Diagnostics are not repeated here (the `skill` tool's loading reports them).
pub(crate) fn catalog_for_serve(
    common: &CommonOptions,
    err: &mut impl Write,
) -> Option<tool_mcp::Catalog> {
    let Some(set) = load(common, &mut io::sink()) else {
        let _ = writeln!(
            err,
            "warning: --skills-as-prompts: no skills folder (give --skills-dir DIR or set \
             {SKILLS_ENV}); no skill is offered as a prompt"
        );
        return None;
    };
    Some(catalog(&set))
}

/// The skills of `set` as MCP prompts and their files as resources:
/// - one prompt per skill, named and described as the skill, with an
///   optional `task` argument; `prompts/get` answers one user message, the
///   body of its `SKILL.md` (front matter stripped), then `Task: TASK`;
/// - one resource `skill://NAME/PATH` per file [`Skill::files`] lists (at
///   most [`MAX_LISTED_FILES`](tool_builtins::skills::MAX_LISTED_FILES) per
///   skill), MIME type by extension, size listed; text types are read as
///   text, others (and text that is not UTF-8) as a base64 blob;
/// - the template `skill://{skill}/{+path}`, reading any other file of a
///   skill's folder the same way (percent-decoded).
///
/// Every read goes through [`Skill::read_file`]: inside the skill's folder
/// after symbolic links, no `..`, regular files only, at most
/// [`MAX_SKILL_FILE_BYTES`](tool_builtins::skills::MAX_SKILL_FILE_BYTES).
pub(crate) fn catalog(set: &SkillSet) -> tool_mcp::Catalog {
    let catalog = tool_mcp::Catalog::new();
    let skills: Arc<Vec<Arc<Skill>>> =
        Arc::new(set.skills().iter().cloned().map(Arc::new).collect());
    for skill in skills.iter() {
        let body = Arc::new(skill.body.clone());
        catalog.add_prompt(
            Prompt::new(
                skill.name.clone(),
                skill.description.clone(),
                move |args: tool_mcp::catalog::Arguments| {
                    let body = Arc::clone(&body);
                    async move {
                        let text = match args.get("task").map(|t| t.trim()) {
                            Some(task) if !task.is_empty() => format!("{body}\n\nTask: {task}"),
                            _ => body.to_string(),
                        };
                        Ok::<_, String>(vec![PromptMessage::new_text(Role::User, text)])
                    }
                },
            )
            .with_argument("task", TASK_ARGUMENT, false),
        );
        for file in skill.files() {
            let encoded = percent_encoding::utf8_percent_encode(&file.path, URI_PATH);
            let uri = format!("skill://{}/{encoded}", skill.name);
            let name = format!("{}/{}", skill.name, file.path);
            let (skill, mime, path) = (Arc::clone(skill), file.mime_type, file.path);
            catalog.add_resource(
                Resource::new(uri, name, move || {
                    read_skill_file(Arc::clone(&skill), path.clone(), mime)
                })
                .with_mime_type(mime)
                .with_size(file.bytes),
            );
        }
    }
    let template = ResourceTemplate::new(
        "skill://{skill}/{+path}",
        "skill-file",
        move |_uri, vars: tool_mcp::catalog::Arguments| {
            let skills = Arc::clone(&skills);
            async move {
                let name = vars.get("skill").map_or("", String::as_str);
                let Some(skill) = skills.iter().find(|s| s.name == name) else {
                    return Err(unknown_skill(&skills, name));
                };
                let raw = vars.get("path").map_or("", String::as_str);
                let path = percent_encoding::percent_decode_str(raw)
                    .decode_utf8()
                    .map_err(|_| {
                        format!("skill `{name}`: the path is not UTF-8 once percent-decoded")
                    })?
                    .into_owned();
                let mime = tool_builtins::skills::mime_type(&path);
                read_skill_file(Arc::clone(skill), path, mime).await
            }
        },
    );
    // The template text is a constant that parses; a failure would only
    // leave unlisted files unreadable.
    if let Ok(template) = template {
        catalog.add_template(template.with_description(
            "A file in a skill's folder: skill://NAME/PATH, PATH relative to the folder.",
        ));
    }
    catalog
}

/// Reads `path` of `skill` on the blocking pool: text for a text MIME type
/// that is valid UTF-8, else bytes. Errors name the skill and say why.
async fn read_skill_file(
    skill: Arc<Skill>,
    path: String,
    mime: &'static str,
) -> Result<ResourceBody, String> {
    let name = skill.name.clone();
    let read = tokio::task::spawn_blocking(move || skill.read_file(&path)).await;
    let bytes = match read {
        Ok(Ok(bytes)) => bytes,
        Ok(Err(e)) => return Err(format!("skill `{name}`: {e}")),
        Err(e) => return Err(format!("skill `{name}`: the read stopped: {e}")),
    };
    if tool_builtins::skills::is_text(mime) {
        return Ok(match String::from_utf8(bytes) {
            Ok(text) => ResourceBody::from(text),
            Err(e) => ResourceBody::from(e.into_bytes()),
        });
    }
    Ok(ResourceBody::from(bytes))
}

/// "no skill named `NAME` (skills: A, B, ...)".
fn unknown_skill(skills: &[Arc<Skill>], name: &str) -> String {
    let shown: String = name.chars().take(64).collect();
    let mut names: Vec<&str> = skills
        .iter()
        .take(NAMES_IN_ERROR)
        .map(|s| s.name.as_str())
        .collect();
    let more = skills.len().saturating_sub(NAMES_IN_ERROR);
    let more = if more > 0 {
        format!(" and {more} more")
    } else {
        String::new()
    };
    if names.is_empty() {
        names.push("none");
    }
    format!(
        "no skill named `{shown}` (skills: {}{more})",
        names.join(", ")
    )
}
