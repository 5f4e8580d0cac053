//! `tool skill-md`: a `SKILL.md` for this program, for named tools, or for
//! an imported MCP server's tools (the writer is tool-builtins'
//! `skills::write`, so what is written loads back with the skills loader).

use std::io::Write;
use std::path::{Path, PathBuf};

use tool_builtins::skills::write::{CallStyle, SkillDoc, for_program, for_tools};
use tool_core::{ToolRegistry, ToolSpec};

use crate::cli::CommonOptions;
use crate::failure::Failure;

/// How to run this program from a shell: its absolute path, with the
/// `--workspace` and `--mcp-config` given (absolute), so the command works
/// from any folder.
fn program_command(common: &CommonOptions) -> String {
    let exe = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| crate::app::program_name());
    let mut command = quote(&exe);
    let absolute = |p: &Path| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf());
    if let Some(ws) = &common.workspace {
        command.push_str(&format!(
            " --workspace {}",
            quote(&absolute(ws).display().to_string())
        ));
    }
    if let Some(config) = &common.mcp_config {
        command.push_str(&format!(
            " --mcp-config {}",
            quote(&absolute(config).display().to_string())
        ));
    }
    command
}

/// `text` as one shell word: as it is when it holds only safe characters,
/// else in single quotes.
fn quote(text: &str) -> String {
    if !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:@,".contains(&b))
    {
        text.to_owned()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// Runs `skill-md`.
///
/// # Errors
/// Usage: an unknown tool or server, several skills without `--dir`, a
/// folder that cannot be written.
pub(crate) fn run(
    registry: &ToolRegistry,
    common: &CommonOptions,
    names: &[String],
    dir: Option<&Path>,
    mcp: Option<&str>,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let program = crate::app::program_name();
    let style = CallStyle::Command {
        program: program_command(common),
    };
    let docs: Vec<SkillDoc> = if let Some(server) = mcp {
        let prefix = format!("{}__", tool_mcp::server_prefix(server));
        let specs: Vec<ToolSpec> = registry
            .specs()
            .filter(|s| s.name.starts_with(&prefix))
            .cloned()
            .collect();
        if specs.is_empty() {
            return Err(Failure::Usage(format!(
                "no tools named `{prefix}…`: is `{server}` a server of --mcp-config, and did it \
                 start? `{program} list` shows the imported tools"
            )));
        }
        let names: Vec<&str> = specs
            .iter()
            .map(|s| s.name.strip_prefix(&prefix).unwrap_or(&s.name))
            .collect();
        let intro = format!(
            "The tools of the MCP server `{server}` ({} tools), imported as `{prefix}<tool>`.",
            specs.len()
        );
        let description = format!(
            "Use the `{server}` MCP server's tools: {}.",
            names.join(", ")
        );
        vec![for_tools(
            &format!("mcp-{server}"),
            &description,
            &intro,
            &specs,
            &CallStyle::ToolCall,
        )]
    } else if names.is_empty() {
        let specs: Vec<ToolSpec> = registry.specs().cloned().collect();
        let description = format!(
            "Run the `{program}` command-line tools ({}): {}.",
            specs.len(),
            specs
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
        vec![for_program(
            &program,
            &description,
            &format!("`{program}` runs these tools from the command line, one call per run."),
            &specs,
            &style,
        )]
    } else {
        let unknown: Vec<String> = names
            .iter()
            .filter(|n| !registry.contains(n))
            .map(|n| crate::commands::unknown_tool_message(registry, n))
            .collect();
        if !unknown.is_empty() {
            return Err(Failure::Usage(unknown.join("\n")));
        }
        names
            .iter()
            .filter_map(|n| registry.get(n))
            .map(|tool| {
                let spec = tool.spec();
                for_tools(
                    &spec.name,
                    spec.summary(),
                    spec.summary(),
                    std::slice::from_ref(spec),
                    &style,
                )
            })
            .collect()
    };
    let texts = docs
        .iter()
        .map(|d| d.to_markdown().map(|t| (d.name.as_str(), t)))
        .collect::<Result<Vec<_>, _>>()
        .map_err(Failure::Usage)?;
    match dir {
        None if texts.len() > 1 => Err(Failure::Usage(format!(
            "{} skills asked for: give --dir DIR to write DIR/<skill>/SKILL.md for each, or \
             name one tool",
            texts.len()
        ))),
        None => {
            for (_, text) in &texts {
                out.write_all(text.as_bytes())?;
            }
            Ok(())
        }
        Some(dir) => {
            for (name, text) in &texts {
                let folder: PathBuf = dir.join(name);
                let file = folder.join("SKILL.md");
                std::fs::create_dir_all(&folder)
                    .and_then(|()| std::fs::write(&file, text))
                    .map_err(|e| Failure::Usage(format!("cannot write {}: {e}", file.display())))?;
                writeln!(out, "{}", file.display())?;
            }
            Ok(())
        }
    }
}
