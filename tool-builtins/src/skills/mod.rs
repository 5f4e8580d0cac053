//! Skills: task instructions in `SKILL.md` folders, offered to the model by
//! the built-in `skill` tool.
//!
//! A skill is a folder holding a `SKILL.md` (YAML front matter with `name`
//! and `description`, then a Markdown body) and, optionally, files beside it
//! (references, scripts, templates) that the body points at. The model sees
//! only each skill's name and description, in the `skill` tool's
//! description; it calls `skill` with a name when a task fits, and gets the
//! body, with its relative paths rewritten so that `read_file` opens them.
//! This is the convention of the Agent Skills specification (agentskills.io)
//! that Claude Code, Codex and opencode load, so a skill written for one of
//! them loads here.
//!
//! ```
//! use tool_builtins::skills::SkillSet;
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! let dir = tempfile::tempdir().unwrap();
//! let skill = dir.path().join("release-notes");
//! std::fs::create_dir_all(&skill).unwrap();
//! std::fs::write(skill.join("SKILL.md"), "---\n\
//!     name: release-notes\n\
//!     description: Write release notes from the changelog.\n\
//!     ---\n\
//!     Follow [the template](template.md).\n").unwrap();
//! std::fs::write(skill.join("template.md"), "## Added\n").unwrap();
//!
//! let skills = SkillSet::load([dir.path()]);
//! assert!(skills.diagnostics().is_empty());
//! assert_eq!(skills.skills()[0].name, "release-notes");
//!
//! let tool = skills.tool().unwrap();
//! assert!(tool.spec().description.contains("- release-notes: Write release notes"));
//!
//! // With the skills folder readable by read_file (a read-only root of the workspace):
//! let workspace = tempfile::tempdir().unwrap();
//! let ctx = tool_builtins::context(workspace.path()).unwrap();
//! let ctx = skills.make_readable(ctx);
//! let mut registry = tool_core::ToolRegistry::new();
//! registry.register(tool).unwrap();
//! let result = registry.execute("skill", r#"{"name": "release-notes"}"#, &ctx).await;
//! let template = skill.canonicalize().unwrap().join("template.md");
//! assert!(result.output.contains(&format!("[the template]({})", template.display())));
//! # });
//! ```
//!
//! # Layout
//! Each configured skills folder holds one folder per skill, named as the
//! skill: `DIR/<name>/SKILL.md`, with the skill's other files anywhere
//! under `DIR/<name>/`. Entries of `DIR` whose names start with `.` are
//! skipped; a folder without `SKILL.md` and a `SKILL.md` directly in `DIR`
//! are reported (the latter with the layout to use). Folders are read in
//! the order given, entries in name order; when two folders hold a skill of
//! one name, the first folder's wins and the other is reported.
//!
//! # `SKILL.md`
//! - The file starts with a line `---`; the front matter (YAML) runs to the
//!   next line `---`; the rest is the body. A byte order mark and `\r\n`
//!   line ends are accepted; the file must be UTF-8.
//! - `name` (required): 1 to 64 characters, lowercase ASCII letters, digits
//!   and hyphens, no hyphen at either end, no two in a row, equal to the
//!   skill's folder name (the Agent Skills specification's rule).
//! - `description` (required): what the skill does and when to use it, 1 to
//!   1024 characters (the specification's limit); runs of white space
//!   (folded YAML lines) become one space.
//! - Other keys (`license`, `compatibility`, `metadata`, `allowed-tools`, a
//!   host's own) are accepted and ignored.
//!
//! # Limits
//! Front matter at most [`MAX_FRONT_MATTER_BYTES`], body at most
//! [`MAX_BODY_BYTES`], at most [`MAX_SKILLS`] skills in a set; in the
//! `skill` tool's description each skill's line is cut to
//! [`LISTED_DESCRIPTION_CHARS`] characters, and a call lists at most
//! [`MAX_LISTED_FILES`] files beside the skill ([`Skill::files`]);
//! [`Skill::read_file`] reads a file of at most [`MAX_SKILL_FILE_BYTES`].
//!
//! # Errors do not stop the others
//! [`SkillSet::load`] never fails: every file that cannot be used (a missing
//! folder, no `SKILL.md`, YAML that does not parse, a missing or invalid
//! `name`, a name that does not match its folder, a duplicate, a file over
//! the limits) becomes a [`Diagnostic`] naming the file and, where it
//! applies, the line, and the other skills still load.
//!
//! # Reading the files beside a skill
//! In the `skill` tool's answer, a relative path in the body (a Markdown
//! link or image target, or an inline code span holding only a path) that
//! names an existing file inside the skill's folder is rewritten: relative to
//! the workspace when the skill lies inside it, else absolute. `read_file`
//! opens an absolute path outside the workspace only beneath a read-only
//! root of the [`Workspace`](crate::fs::workspace::Workspace): add each loaded skill's own
//! folder with [`SkillSet::make_readable`] (never the configured parent
//! folders, whose other files and left-out skills stay unreadable); the
//! tool's answer says so when a host did not. Nothing the tools write may go
//! there.
//!
//! A host that serves the files itself (`tool serve --skills-as-prompts`
//! offers them as MCP resources) lists them with [`Skill::files`] and reads
//! one with [`Skill::read_file`]: the path must be relative without `..`,
//! lead to a regular file inside the skill's folder once symbolic links are
//! followed (checked by the code that reads `SKILL.md`), and hold at most
//! [`MAX_SKILL_FILE_BYTES`].
//!
//! # Dependency and why
//! `yaml-rust2`: a maintained YAML 1.2 parser in safe Rust whose errors carry
//! the line and column, with no C code and no `unsafe-libyaml`. The serde
//! YAML crates were weighed first: `serde_yaml` is unmaintained (archived in
//! 2024), `serde_yml` is deprecated, `serde_norway` (last release 2024) still
//! builds on the unmaintained `unsafe-libyaml`, and `serde-saphyr` (the
//! maintained serde one) needs Rust 1.89, above this workspace's 1.85. Two
//! text fields need no serde: the front matter is read into a YAML node and
//! `name` and `description` are taken from it. Aliases are refused before
//! loading (the loader copies the node at each alias, the "billion laughs"
//! blow-up), and so is nesting deeper than 32 levels.

mod files;
mod front_matter;
mod paths;
mod tool;
pub mod write;

use std::fmt;
use std::path::{Path, PathBuf};

use tool_core::ToolContext;

pub use files::{MAX_SKILL_FILE_BYTES, SkillFile, SkillFileError, is_text, mime_type};
pub use tool::TOOL_NAME;

/// Largest front matter, in bytes, between the two `---` lines (8 KiB:
/// a description is at most 1024 characters; the rest is room for other keys).
pub const MAX_FRONT_MATTER_BYTES: usize = 8 * 1024;

/// Largest body, in bytes (64 KiB, about 16 000 tokens: the specification
/// advises bodies under 5 000 tokens and moving detail into files beside).
pub const MAX_BODY_BYTES: usize = 64 * 1024;

/// Most skills in one [`SkillSet`]; later ones are reported and skipped (every
/// skill costs a line of the `skill` tool's description on every request).
pub const MAX_SKILLS: usize = 256;

/// Longest skill name, in characters (Agent Skills specification).
pub const MAX_NAME_CHARS: usize = 64;

/// Longest description, in characters (Agent Skills specification).
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// Characters of a skill's description shown in the `skill` tool's
/// description (one line per skill); longer ones are cut with `…`. The
/// full description is in [`Skill::description`].
pub const LISTED_DESCRIPTION_CHARS: usize = 250;

/// Most files beside a skill listed in a `skill` call's answer (up to 3
/// folder levels deep, hidden entries skipped).
pub const MAX_LISTED_FILES: usize = 50;

/// The file name of a skill's instructions.
pub const SKILL_FILE: &str = "SKILL.md";

/// One loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skill {
    /// The name (front matter `name`, equal to the folder's name).
    pub name: String,
    /// The description (front matter `description`, white space collapsed).
    pub description: String,
    /// The skill's folder, canonical.
    pub folder: PathBuf,
    /// The Markdown body, trimmed, as written (paths not yet rewritten).
    pub body: String,
}

impl Skill {
    /// The path of the skill's `SKILL.md`.
    pub fn file(&self) -> PathBuf {
        self.folder.join(SKILL_FILE)
    }
}

/// A file that could not be loaded as a skill, or a skill that was left out.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Diagnostic {
    /// The file or folder concerned.
    pub path: PathBuf,
    /// The 1-based line of `path` the problem is on, when it is on one.
    pub line: Option<u64>,
    /// What is wrong and what to do, in one sentence.
    pub message: String,
}

impl fmt::Display for Diagnostic {
    /// `PATH:LINE: MESSAGE` (or `PATH: MESSAGE`), as compilers write it.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{}:{line}: {}", self.path.display(), self.message),
            None => write!(f, "{}: {}", self.path.display(), self.message),
        }
    }
}

/// The skills loaded from a list of folders, with the problems found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillSet {
    skills: Vec<Skill>,
    diagnostics: Vec<Diagnostic>,
    folders: Vec<PathBuf>,
    /// Every folder given, absolute (listable or not): the write-protected ones.
    configured: Vec<PathBuf>,
}

impl SkillSet {
    /// Loads every skill of `folders` (see the module docs for the layout and
    /// rules). Never fails: problems are [`diagnostics`](Self::diagnostics).
    /// Skills are kept in name order.
    pub fn load<P: AsRef<Path>>(folders: impl IntoIterator<Item = P>) -> Self {
        let mut set = Self::default();
        for folder in folders {
            set.load_folder(folder.as_ref());
        }
        set.skills.sort_by(|a, b| a.name.cmp(&b.name));
        set
    }

    fn report(&mut self, path: impl Into<PathBuf>, line: Option<u64>, message: impl Into<String>) {
        self.diagnostics.push(Diagnostic {
            path: path.into(),
            line,
            message: message.into(),
        });
    }

    fn load_folder(&mut self, given: &Path) {
        let absolute = std::path::absolute(given).unwrap_or_else(|_| given.to_path_buf());
        if !self.configured.contains(&absolute) {
            self.configured.push(absolute);
        }
        let folder = match given.canonicalize() {
            Ok(f) if f.is_dir() => f,
            Ok(_) => return self.report(given, None, "the skills folder is not a folder"),
            Err(e) => {
                return self.report(given, None, format!("cannot open the skills folder: {e}"));
            }
        };
        let mut entries: Vec<_> = match std::fs::read_dir(&folder) {
            Ok(read) => read.filter_map(Result::ok).collect(),
            Err(e) => {
                return self.report(&folder, None, format!("cannot list the skills folder: {e}"));
            }
        };
        if !self.folders.contains(&folder) {
            self.folders.push(folder.clone());
        }
        entries.sort_by_key(std::fs::DirEntry::file_name);
        for entry in entries {
            let file_name = entry.file_name();
            let name = file_name.to_string_lossy();
            let path = entry.path();
            if name.starts_with('.') {
                continue;
            }
            if name == SKILL_FILE && path.is_file() {
                self.report(
                    &path,
                    None,
                    format!(
                        "a skills folder holds one folder per skill: move this file to {}",
                        folder.join("<name>").join(SKILL_FILE).display()
                    ),
                );
                continue;
            }
            if !path.is_dir() {
                // A symbolic link that leads nowhere is reported like one
                // that leads out (review 23 F11: it was left out silently).
                if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                    let target = std::fs::read_link(&path)
                        .map(|t| t.display().to_string())
                        .unwrap_or_default();
                    self.report(
                        &path,
                        None,
                        format!(
                            "left out: this entry is a symbolic link to `{target}`, which is not \
                             a folder that exists; a skill is a folder inside the skills folder"
                        ),
                    );
                }
                continue;
            }
            if self.skills.len() >= MAX_SKILLS {
                self.report(
                    &path,
                    None,
                    format!("skipped: a skill set holds at most {MAX_SKILLS} skills"),
                );
                return;
            }
            self.load_skill(&folder, &path, &name);
        }
    }

    fn load_skill(&mut self, skills_folder: &Path, path: &Path, folder_name: &str) {
        let file = path.join(SKILL_FILE);
        // A skill folder (or its SKILL.md) that is a symbolic link leading
        // out of the skills folder would make its target a readable root:
        // only what lies inside the configured folder is loaded.
        let real = match path.canonicalize() {
            Ok(real) if real.starts_with(skills_folder) => real,
            Ok(real) => {
                return self.report(
                    path,
                    None,
                    format!(
                        "left out: this skill folder is a symbolic link to {}, outside the \
                         skills folder {}; a skill is loaded only from inside its skills folder \
                         (move the skill in, or give its real parent folder as a skills folder)",
                        real.display(),
                        skills_folder.display()
                    ),
                );
            }
            Err(e) => return self.report(path, None, format!("cannot open the skill folder: {e}")),
        };
        let text = match read_bounded(&file, &real) {
            Ok(text) => text,
            Err(message) => return self.report(&file, None, message),
        };
        let parsed = match front_matter::parse(&text, folder_name) {
            Ok(parsed) => parsed,
            Err(problem) => return self.report(&file, problem.line, problem.message),
        };
        if parsed.body.len() > MAX_BODY_BYTES {
            return self.report(
                &file,
                None,
                format!(
                    "the body is {} bytes; the limit is {MAX_BODY_BYTES}: move detail into files beside it",
                    parsed.body.len()
                ),
            );
        }
        if let Some(first) = self.skills.iter().find(|s| s.name == parsed.name) {
            let message = format!(
                "skipped: a skill named `{}` was already loaded from {}",
                parsed.name,
                first.file().display()
            );
            return self.report(&file, None, message);
        }
        self.skills.push(Skill {
            name: parsed.name,
            description: parsed.description,
            folder: real,
            body: parsed.body,
        });
    }

    /// The loaded skills, in name order.
    pub fn skills(&self) -> &[Skill] {
        &self.skills
    }

    /// The skill named `name`.
    pub fn get(&self, name: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// The problems found while loading, in the order found.
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    /// The skills folders that could be listed, canonical, in the order
    /// given (each once): the folders to make readable by `read_file`.
    pub fn folders(&self) -> &[PathBuf] {
        &self.folders
    }

    /// Every configured skills folder, absolute, in the order given (each
    /// once), whether it could be listed or not: the folders no tool may
    /// write into (see [`SkillSet::make_readable`]).
    pub fn configured_folders(&self) -> &[PathBuf] {
        &self.configured
    }

    /// `ctx` with the folder of each loaded skill added as a read-only root
    /// of its [`Workspace`](crate::fs::workspace::Workspace), so that `read_file` and
    /// `grep_content` may read the files a skill ships, and with every
    /// configured skills folder [write-protected](crate::fs::workspace::Workspace::with_write_protected):
    /// no file tool may change a skill or add a file there, even when the
    /// folder is inside the workspace (cross-cutting §6; README promises a
    /// loaded skill's folder is read-only). Only loaded skills' folders are
    /// readable: a file beside them in a configured folder, or a skill left
    /// out for a problem, stays unreadable. A context without a workspace is
    /// returned unchanged.
    pub fn make_readable(&self, ctx: ToolContext) -> ToolContext {
        let Some(ws) = ctx.state::<crate::fs::workspace::Workspace>() else {
            return ctx;
        };
        // Each loaded skill's own folder, never the configured parent: a
        // stray file beside the skill folders, or a skill that was left out,
        // stays unreadable (and `--skills-dir ~` does not open the home folder).
        let ws = self.skills.iter().fold((*ws).clone(), |ws, s| {
            ws.with_read_only_root(s.folder.clone())
        });
        let ws = self
            .configured
            .iter()
            .fold(ws, crate::fs::workspace::Workspace::with_write_protected);
        ctx.with_state(ws)
    }

    /// The `skill` tool offering these skills (see [`TOOL_NAME`]); its
    /// description lists each skill on one line.
    ///
    /// # Errors
    /// As [`tool_core::Tool::new`]; cannot happen for the spec built here.
    pub fn tool(&self) -> Result<tool_core::Tool, tool_core::RegistryError> {
        tool::build(self)
    }
}

/// Reads `file` as UTF-8 through [`files::read_inside`], refusing one
/// larger than a skill may be, one that is not a regular file (a FIFO would
/// block every command that loads skills), and one that leads out of the
/// skill's folder `real` (canonical).
fn read_bounded(file: &Path, real: &Path) -> Result<String, String> {
    const LIMIT: usize = MAX_FRONT_MATTER_BYTES + MAX_BODY_BYTES + 64;
    let bytes = files::read_inside(file, real, LIMIT as u64).map_err(|refusal| match refusal {
        files::Refusal::NotFound => {
            format!("this skill folder has no {SKILL_FILE}; add one or remove the folder")
        }
        files::Refusal::Directory => format!(
            "{SKILL_FILE} is a directory, not a file; put the skill's instructions in a file \
             named {SKILL_FILE}"
        ),
        files::Refusal::NotRegular => format!(
            "{SKILL_FILE} is not a regular file (a FIFO, socket or device); replace it with a \
             file"
        ),
        files::Refusal::Outside => format!(
            "{SKILL_FILE} is a symbolic link leading out of the skill's folder; a skill's \
             instructions must lie inside its folder"
        ),
        files::Refusal::TooLarge(_) => format!(
            "the file is larger than {LIMIT} bytes (front matter at most \
             {MAX_FRONT_MATTER_BYTES}, body at most {MAX_BODY_BYTES})"
        ),
        files::Refusal::Io(e) => format!("cannot read: {e}"),
    })?;
    String::from_utf8(bytes).map_err(|e| {
        format!(
            "the file is not UTF-8 (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        )
    })
}
