//! Writing `SKILL.md` files for tools: the other direction of the loader.
//!
//! A program's tools, one tool, or an imported MCP server's tools become
//! one skill whose body says, in few lines, what the tools do and how to
//! call them: from a shell (`<program> call NAME --key=value`, for agents
//! such as Claude Code that run commands) or by name as tool calls (for a
//! host that defers those tools' schemas and offers the skill instead, so
//! a server of N tools costs one line of the `skill` tool's description
//! until the model needs it).
//!
//! What is written always loads back with [`SkillSet::load`](super::SkillSet::load)
//! (the module's round-trip test): the name follows the specification's
//! rule ([`skill_name`] makes one from any text), the description is one
//! YAML double-quoted line of at most [`MAX_DESCRIPTION_CHARS`] characters,
//! and the body stays under [`MAX_BODY_BYTES`] (tools past it are named in
//! a last line instead of described).

use serde_json::Value;
use tool_core::ToolSpec;
use tool_rules::text::{Clip, clip};

use super::{MAX_BODY_BYTES, MAX_DESCRIPTION_CHARS, MAX_NAME_CHARS, front_matter};

/// Longest one-line summary of a tool or parameter in a generated body, in characters.
const SUMMARY_CHARS: usize = 200;

/// How the generated body tells the reader to call the tools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallStyle {
    /// From a shell: `program call NAME --key=value` (`program` as given,
    /// best an absolute path, with any global options it needs).
    Command {
        /// The command that runs the tools, e.g. `/usr/local/bin/tool --workspace /src`.
        program: String,
    },
    /// As tool calls by name with a JSON object of arguments (the host
    /// accepts calls of these names without listing their schemas).
    ToolCall,
}

/// One `SKILL.md`: front matter `name` and `description`, and the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDoc {
    /// The skill's name (and its folder's name).
    pub name: String,
    /// What the skill is for and when to use it (one line).
    pub description: String,
    /// The Markdown body.
    pub body: String,
}

impl SkillDoc {
    /// The file's text: `---`, `name:`, `description:` (YAML double-quoted),
    /// `---`, the body.
    ///
    /// # Errors
    /// A name that breaks the specification's rule, an empty description,
    /// or a body over [`MAX_BODY_BYTES`], each with the rule.
    pub fn to_markdown(&self) -> Result<String, String> {
        front_matter::check_name(&self.name, &self.name)?;
        let description = self.description.split_whitespace().collect::<Vec<_>>();
        let description = description.join(" ");
        if description.is_empty() {
            return Err("a skill needs a description: what it does and when to use it".into());
        }
        let description = clip(&description, Clip::chars(MAX_DESCRIPTION_CHARS));
        if self.body.len() > MAX_BODY_BYTES {
            return Err(format!(
                "the body is {} bytes; a SKILL.md body holds at most {MAX_BODY_BYTES}",
                self.body.len()
            ));
        }
        // A JSON string is a YAML double-quoted scalar: every character escaped alike.
        let quoted = serde_json::to_string(description.as_ref()).map_err(|e| e.to_string())?;
        Ok(format!(
            "---\nname: {}\ndescription: {quoted}\n---\n\n{}\n",
            self.name,
            self.body.trim()
        ))
    }
}

/// A valid skill name made from `raw`: lowercase ASCII letters and digits,
/// every other run of characters one hyphen, no hyphen at either end, at
/// most [`MAX_NAME_CHARS`] characters; `tools` when nothing is left.
///
/// ```
/// use tool_builtins::skills::write::skill_name;
/// assert_eq!(skill_name("GitHub__search_issues"), "github-search-issues");
/// assert_eq!(skill_name("--"), "tools");
/// ```
pub fn skill_name(raw: &str) -> String {
    let mut name = String::new();
    for c in raw.chars() {
        if c.is_ascii_alphanumeric() {
            name.push(c.to_ascii_lowercase());
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let mut name: String = name.chars().take(MAX_NAME_CHARS).collect();
    while name.ends_with('-') {
        name.pop();
    }
    if name.is_empty() {
        "tools".to_owned()
    } else {
        name
    }
}

/// One line of text: white space collapsed, cut to `max` characters.
fn one_line(text: &str, max: usize) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    clip(&line, Clip::chars(max)).into_owned()
}

/// The JSON Schema type of a property, in words (`string`, `integer`,
/// `array of string`, `one of: a | b`: a bar between choices, so the comma before `required` is never read as one); a `$ref` into the root's `$defs`
/// (or `definitions`) is followed once.
fn type_of(schema: &Value, root: &Value) -> String {
    if let Some(target) = schema.get("$ref").and_then(Value::as_str) {
        let found = target
            .strip_prefix("#/$defs/")
            .and_then(|n| root.get("$defs")?.get(n))
            .or_else(|| {
                target
                    .strip_prefix("#/definitions/")
                    .and_then(|n| root.get("definitions")?.get(n))
            });
        return match found {
            Some(def) if def.get("$ref").is_none() => type_of(def, root),
            _ => "object".to_owned(),
        };
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect();
        return format!("one of: {}", one_line(&names.join(" | "), 120));
    }
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .filter(|t| *t != "null")
            .collect::<Vec<_>>()
            .join(" or "),
        _ => {
            let any = schema
                .get("anyOf")
                .or_else(|| schema.get("oneOf"))
                .and_then(Value::as_array);
            let consts: Option<Vec<String>> = any.and_then(|options| {
                options
                    .iter()
                    .map(|o| {
                        o.get("const")
                            .or_else(|| o.get("enum").and_then(|e| e.get(0)))
                            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                    })
                    .collect()
            });
            if let Some(values) = consts.filter(|v| !v.is_empty()) {
                return format!("one of: {}", one_line(&values.join(" | "), 120));
            }
            return match any {
                Some(options) => options
                    .iter()
                    .filter(|o| o.get("type").and_then(Value::as_str) != Some("null"))
                    .map(|o| type_of(o, root))
                    .collect::<Vec<_>>()
                    .join(" or "),
                None => "any".to_owned(),
            };
        }
    };
    if ty == "array" {
        if let Some(items) = schema.get("items") {
            return format!("array of {}", type_of(items, root));
        }
    }
    ty
}

/// One line per parameter of `spec`: `` - `--name=…` (type, required): what it is``.
fn parameter_lines(spec: &ToolSpec, style: &CallStyle) -> Vec<String> {
    let schema = &spec.parameters;
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(props) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut names: Vec<&String> = props.keys().collect();
    // Required ones first, each group in the schema's order.
    names.sort_by_key(|n| !required.contains(&n.as_str()));
    names
        .into_iter()
        .filter(|n| !spec.hidden_params.contains(n))
        .map(|name| {
            let prop = &props[name];
            let mut facts = vec![type_of(prop, schema)];
            if required.contains(&name.as_str()) {
                facts.push("required".to_owned());
            }
            if let Some(d) = prop.get("default") {
                facts.push(format!("default {d}"));
            }
            let shown = match style {
                CallStyle::Command { .. } => format!("--{name}=…"),
                CallStyle::ToolCall => name.clone(),
            };
            let about = prop
                .get("description")
                .and_then(Value::as_str)
                .map(|d| format!(": {}", one_line(d, SUMMARY_CHARS)))
                .unwrap_or_default();
            format!("- `{shown}` ({}){about}", facts.join(", "))
        })
        .collect()
}

/// The usage line of `spec`: its required parameters as arguments.
fn usage(spec: &ToolSpec, style: &CallStyle) -> String {
    let required: Vec<&str> = spec
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match style {
        CallStyle::Command { program } => {
            let args: String = required.iter().map(|r| format!(" --{r}=…")).collect();
            format!("{program} call {}{args}", spec.name)
        }
        CallStyle::ToolCall => {
            let args: Vec<String> = required.iter().map(|r| format!("\"{r}\": …")).collect();
            format!("{} {{{}}}", spec.name, args.join(", "))
        }
    }
}

/// The section of one tool: a heading, its summary (left out when the
/// skill is this one tool's, whose intro says it), its usage, its parameters.
fn tool_section(spec: &ToolSpec, style: &CallStyle, with_summary: bool) -> String {
    let summary = if with_summary {
        format!("{}\n\n", one_line(spec.summary(), 2 * SUMMARY_CHARS))
    } else {
        String::new()
    };
    let mut text = format!("### `{}`\n\n{summary}`{}`\n", spec.name, usage(spec, style));
    let params = parameter_lines(spec, style);
    if !params.is_empty() {
        text.push('\n');
        text.push_str(&params.join("\n"));
        text.push('\n');
    }
    text
}

/// How to call, for the top of the body.
fn how_to_call(style: &CallStyle, several: bool) -> String {
    match style {
        CallStyle::Command { program } => format!(
            "Run from a shell; the answer is one JSON object on stdout (`output`, and `error` \
             when it failed). Arguments go as `--key=value` (lists and objects as JSON), or \
             all at once as one JSON object:\n\n```bash\n{program} call NAME --key=value\n\
             {program} call NAME '{{\"key\": \"value\"}}'\n```\n\n`{program} schema NAME` \
             prints a tool's full JSON Schema{}.",
            if several { "; `list` lists them" } else { "" }
        ),
        CallStyle::ToolCall => "Call these tools by name, with a JSON object of the arguments \
             listed: they are not in your tool list, but calls to them are accepted."
            .to_owned(),
    }
}

/// A skill for `specs` (one tool or many) under `name`, introduced by
/// `intro` (a sentence or two about what the tools are for): how to call
/// them, then one section per tool (summary, usage line, parameters,
/// required first; hidden parameters left out). Tools past the body's
/// [`MAX_BODY_BYTES`] are only named at the end. The description is
/// `description`, or the intro when that is empty.
///
/// ```
/// use tool_builtins::skills::write::{CallStyle, for_tools};
///
/// let registry = tool_builtins::registry();
/// let read = registry.get("read_file").unwrap().spec().clone();
/// let style = CallStyle::Command { program: "/usr/bin/tool".into() };
/// let doc = for_tools("read-file", "", "Read a text file of the workspace.", &[read], &style);
/// let text = doc.to_markdown().unwrap();
/// assert!(text.starts_with("---\nname: read-file\ndescription: \"Read a text file"));
/// assert!(text.contains("`/usr/bin/tool call read_file --file_path=…`"));
/// ```
pub fn for_tools(
    name: &str,
    description: &str,
    intro: &str,
    specs: &[ToolSpec],
    style: &CallStyle,
) -> SkillDoc {
    let name = skill_name(name);
    let several = specs.len() > 1;
    let mut body = format!(
        "# {name}\n\n{}\n\n{}\n",
        intro.trim(),
        how_to_call(style, several)
    );
    if several {
        body.push_str("\n## Tools\n");
    }
    let mut left_out = Vec::new();
    for spec in specs {
        let section = tool_section(spec, style, several);
        // Room kept for the closing line naming the tools left out.
        if left_out.is_empty() && body.len() + section.len() + 1 + 4096 <= MAX_BODY_BYTES {
            body.push('\n');
            body.push_str(&section);
        } else {
            left_out.push(spec.name.as_str());
        }
    }
    if !left_out.is_empty() {
        let names = clip(&left_out.join(", "), Clip::chars(3000)).into_owned();
        body.push_str(&format!(
            "\n{} more tools, not described here for length: {names}.\n",
            left_out.len()
        ));
    }
    let description = if description.trim().is_empty() {
        intro
    } else {
        description
    };
    SkillDoc {
        name,
        description: one_line(description, MAX_DESCRIPTION_CHARS),
        body,
    }
}

/// A skill for a whole program of tools: how to call, then one line per
/// tool (name, kind, summary) and where the parameters are (`schema
/// NAME`), so the file stays short however many tools there are (the
/// design notes ask for about 20 lines; this is as many as the tools).
pub fn for_program(
    name: &str,
    description: &str,
    intro: &str,
    specs: &[ToolSpec],
    style: &CallStyle,
) -> SkillDoc {
    let name = skill_name(name);
    let mut body = format!(
        "# {name}\n\n{}\n\n{}\n\n## Tools\n\n",
        intro.trim(),
        how_to_call(style, true)
    );
    let mut shown = 0;
    for spec in specs {
        let line = format!(
            "- `{}` ({}): {}\n",
            spec.name,
            spec.kind.as_str(),
            one_line(spec.summary(), SUMMARY_CHARS)
        );
        if body.len() + line.len() + 200 > MAX_BODY_BYTES {
            break;
        }
        body.push_str(&line);
        shown += 1;
    }
    if shown < specs.len() {
        body.push_str(&format!(
            "- … and {} more: list them all with `list`.\n",
            specs.len() - shown
        ));
    }
    SkillDoc {
        name,
        description: one_line(description, MAX_DESCRIPTION_CHARS),
        body,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::skills::SkillSet;

    #[test]
    fn choices_are_barred_so_required_is_not_read_as_one() {
        let spec = ToolSpec::new(
            "pick",
            "Picks.",
            serde_json::json!({"type": "object",
                "properties": {"action": {"type": "string", "enum": ["add", "update", "list"]}},
                "required": ["action"]}),
        );
        let lines = parameter_lines(&spec, &CallStyle::ToolCall);
        assert_eq!(
            lines,
            vec!["- `action` (one of: add | update | list, required)".to_owned()]
        );
    }

    #[test]
    fn names_follow_the_specification() {
        assert_eq!(skill_name("My Tool!"), "my-tool");
        assert_eq!(skill_name("a__b--c"), "a-b-c");
        assert_eq!(skill_name(&"x".repeat(80)).len(), MAX_NAME_CHARS);
        assert_eq!(skill_name(&format!("{}-y", "x".repeat(63))), "x".repeat(63));
        assert_eq!(skill_name("日本"), "tools");
    }

    #[test]
    fn a_generated_file_loads_back_with_its_description_intact() {
        let dir = tempfile::tempdir().unwrap();
        let registry = crate::registry();
        let specs: Vec<ToolSpec> = ["read_file", "grep_content"]
            .iter()
            .map(|n| registry.get(n).unwrap().spec().clone())
            .collect();
        let tricky = "Search: \"quotes\", colons: and # hashes — plus a\nline break.";
        let doc = for_tools(
            "Code Search",
            tricky,
            "Read and search code.",
            &specs,
            &CallStyle::ToolCall,
        );
        let text = doc.to_markdown().unwrap();
        let folder = dir.path().join(&doc.name);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join("SKILL.md"), &text).unwrap();
        let set = SkillSet::load([dir.path()]);
        assert!(set.diagnostics().is_empty(), "{:?}", set.diagnostics());
        let skill = set.get("code-search").unwrap();
        assert_eq!(
            skill.description,
            "Search: \"quotes\", colons: and # hashes — plus a line break."
        );
        assert!(
            skill
                .body
                .starts_with("# code-search\n\nRead and search code.")
        );
        let grep = registry
            .get("grep_content")
            .unwrap()
            .spec()
            .summary()
            .to_owned();
        let first_words: String = grep
            .split_whitespace()
            .take(4)
            .collect::<Vec<_>>()
            .join(" ");
        assert!(
            skill
                .body
                .contains(&format!("### `grep_content`\n\n{first_words}")),
            "{}",
            skill.body
        );
        assert!(
            skill.body.contains("`grep_content {\"pattern\": …}`"),
            "{}",
            skill.body
        );
        assert!(
            skill.body.contains("- `file_path` (string, required): "),
            "{}",
            skill.body
        );
        assert!(
            skill.body.contains("- `offset` (integer, default 1)"),
            "{}",
            skill.body
        );
        assert!(
            !skill.body.contains("`context`"),
            "hidden parameters stay out"
        );
    }

    #[test]
    fn bad_docs_are_refused_with_the_rule() {
        let doc = SkillDoc {
            name: "Bad Name".into(),
            description: "d".into(),
            body: String::new(),
        };
        assert!(
            doc.to_markdown()
                .unwrap_err()
                .contains("not a valid skill name")
        );
        let doc = SkillDoc {
            name: "ok".into(),
            description: "  ".into(),
            body: String::new(),
        };
        assert!(
            doc.to_markdown()
                .unwrap_err()
                .contains("needs a description")
        );
        // Too many tools for one body: the rest are named, the file still loads.
        let spec = crate::registry().get("read_file").unwrap().spec().clone();
        let many: Vec<ToolSpec> = (0..400)
            .map(|i| {
                let mut s = spec.clone();
                s.name = format!("read_file_{i}");
                s
            })
            .collect();
        let doc = for_tools("many", "", "Many tools.", &many, &CallStyle::ToolCall);
        assert!(doc.body.len() <= MAX_BODY_BYTES, "{}", doc.body.len());
        assert!(
            doc.body
                .contains("more tools, not described here for length: read_file_")
        );
        assert!(doc.to_markdown().is_ok());
    }
}
