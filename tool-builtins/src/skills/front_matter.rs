//! Reading one `SKILL.md`: splitting the front matter from the body, parsing
//! the YAML, and checking `name` and `description`.

use tool_rules::text::{Clip, clip};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::ScanError;
use yaml_rust2::{Yaml, YamlLoader};

use super::{MAX_DESCRIPTION_CHARS, MAX_FRONT_MATTER_BYTES, MAX_NAME_CHARS};

/// Deepest nesting of sequences and mappings accepted in the front matter
/// (the parser recurses per level).
const MAX_DEPTH: usize = 32;

/// What a valid `SKILL.md` holds.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Parsed {
    pub(super) name: String,
    pub(super) description: String,
    pub(super) body: String,
}

/// A problem with one file: the message and the 1-based line it is on
/// (`None` when it concerns the file as a whole).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Problem {
    pub(super) line: Option<u64>,
    pub(super) message: String,
}

impl Problem {
    fn at(line: u64, message: impl Into<String>) -> Self {
        Self {
            line: Some(line),
            message: message.into(),
        }
    }
}

/// Parses `text` (a whole `SKILL.md`) of the skill in folder `folder`.
///
/// The file opens with a line `---`, then the YAML front matter, then a line
/// `---`; the rest is the body (a leading byte order mark and `\r\n` line
/// ends are accepted). Lines are counted from the file's first line, so a
/// YAML error's line is the file's.
pub(super) fn parse(text: &str, folder: &str) -> Result<Parsed, Problem> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if first.trim_end() != "---" {
        return Err(Problem::at(
            1,
            "SKILL.md must start with a line `---`, then the YAML front matter \
             (`name:` and `description:`), then a line `---`",
        ));
    }
    let yaml_start = first.len();
    let mut offset = yaml_start;
    let mut line_no = 1u64;
    let mut end = None;
    for line in lines {
        line_no += 1;
        if line.trim_end() == "---" {
            end = Some((offset, offset + line.len()));
            break;
        }
        offset += line.len();
        if offset - yaml_start > MAX_FRONT_MATTER_BYTES {
            return Err(Problem::at(
                line_no,
                format!(
                    "the front matter is longer than {MAX_FRONT_MATTER_BYTES} bytes \
                     (or its closing `---` line is missing)"
                ),
            ));
        }
    }
    let Some((yaml_end, body_start)) = end else {
        return Err(Problem::at(
            line_no,
            "the front matter has no closing `---` line",
        ));
    };
    let yaml = &text[yaml_start..yaml_end];
    let body = text[body_start..].trim().to_owned();
    let fields = load_yaml(yaml)?;
    let name_line = key_line(yaml, "name");
    let description_line = key_line(yaml, "description");
    let name = text_field(&fields, "name", name_line)?;
    check_name(&name, folder).map_err(|m| Problem::at(name_line, m))?;
    let description = text_field(&fields, "description", description_line)?
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if description.is_empty() {
        return Err(Problem::at(description_line, "`description` is empty"));
    }
    let chars = description.chars().count();
    if chars > MAX_DESCRIPTION_CHARS {
        return Err(Problem::at(
            description_line,
            format!("`description` has {chars} characters; the limit is {MAX_DESCRIPTION_CHARS}"),
        ));
    }
    Ok(Parsed {
        name,
        description,
        body,
    })
}

/// Parses the front matter (file lines from 2 on) into one YAML node.
///
/// A first pass over the parser's events refuses aliases (`*name`: the
/// loader copies the anchored node at each alias, so a few lines of nested
/// aliases would expand into billions of nodes) and nesting deeper than
/// [`MAX_DEPTH`]; then the loader builds the document.
fn load_yaml(yaml: &str) -> Result<Yaml, Problem> {
    let mut parser = Parser::new_from_str(yaml);
    let mut depth = 0usize;
    loop {
        let (event, mark) = parser.next_token().map_err(|e| scan_problem(&e))?;
        let line = mark.line() as u64 + 1;
        match event {
            Event::StreamEnd => break,
            Event::Alias(_) => {
                return Err(Problem::at(
                    line,
                    "YAML aliases (`*name`) are not accepted in the front matter; write the value out",
                ));
            }
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(Problem::at(
                        line,
                        format!("the front matter nests deeper than {MAX_DEPTH} levels"),
                    ));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let docs = YamlLoader::load_from_str(yaml).map_err(|e| scan_problem(&e))?;
    match docs.into_iter().next() {
        None => Ok(Yaml::Null),
        Some(doc @ (Yaml::Hash(_) | Yaml::Null)) => Ok(doc),
        Some(_) => Err(Problem::at(
            2,
            "the front matter must be YAML keys and values (`name: ...`, `description: ...`)",
        )),
    }
}

/// A YAML syntax error on the file's line: the front matter starts on line 2.
fn scan_problem(e: &ScanError) -> Problem {
    let line = e.marker().line().max(1) as u64 + 1;
    Problem::at(
        line,
        format!(
            "invalid YAML front matter: {} (column {})",
            e.info(),
            e.marker().col() + 1
        ),
    )
}

/// The text of the required key `key`; a number or boolean is refused
/// rather than turned into text.
fn text_field(fields: &Yaml, key: &str, line: u64) -> Result<String, Problem> {
    let value = match fields {
        Yaml::Hash(map) => map.get(&Yaml::String(key.to_owned())),
        _ => None,
    };
    match value {
        None | Some(Yaml::Null) => Err(Problem::at(2, format!("the front matter has no `{key}`"))),
        Some(Yaml::String(text)) => Ok(text.clone()),
        Some(_) => Err(Problem::at(
            line,
            format!(
                "`{key}` must be text (quote it if YAML reads it as a number, list or boolean)"
            ),
        )),
    }
}

/// The file line of the first top-level `key:` in the front matter (for
/// messages), else line 2.
fn key_line(yaml: &str, key: &str) -> u64 {
    yaml.lines()
        .position(|l| {
            l.strip_prefix(key)
                .is_some_and(|rest| rest.trim_start().starts_with(':'))
        })
        .map_or(2, |i| i as u64 + 2)
}

/// Checks a skill name by the Agent Skills specification (agentskills.io,
/// "name field"): 1 to 64 characters, lowercase ASCII letters, digits and
/// hyphens, not starting or ending with a hyphen, no two hyphens in a row,
/// and equal to the name of the folder holding `SKILL.md`. One rule for
/// every skill keeps names usable as the `skill` tool's argument and as
/// folder names on every file system.
pub(crate) fn check_name(name: &str, folder: &str) -> Result<(), String> {
    let valid = !name.is_empty()
        && name.len() <= MAX_NAME_CHARS
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--");
    if !valid {
        return Err(format!(
            "`name: {}` is not a valid skill name: 1 to {MAX_NAME_CHARS} lowercase letters, \
             digits and hyphens, no hyphen at either end, no two hyphens in a row",
            clip(name, Clip::chars(80))
        ));
    }
    if name != folder {
        return Err(format!(
            "`name: {name}` must match its folder's name `{}`; rename one of them",
            clip(folder, Clip::chars(80))
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_file() {
        let parsed = parse(
            "---\nname: pdf-forms\ndescription: >\n  Fill PDF\n  forms.\nlicense: MIT\n---\n\n# Body\n",
            "pdf-forms",
        )
        .unwrap();
        assert_eq!(parsed.name, "pdf-forms");
        assert_eq!(parsed.description, "Fill PDF forms.");
        assert_eq!(parsed.body, "# Body");
    }

    #[test]
    fn crlf_and_bom() {
        let parsed = parse(
            "\u{feff}---\r\nname: a\r\ndescription: d\r\n---\r\nbody\r\n",
            "a",
        )
        .unwrap();
        assert_eq!((parsed.name.as_str(), parsed.body.as_str()), ("a", "body"));
    }

    #[test]
    fn problems_name_the_line() {
        let p = parse("# no front matter\n", "a").unwrap_err();
        assert_eq!(p.line, Some(1));
        let p = parse("---\nname: a\ndescription: d\n", "a").unwrap_err();
        assert!(p.message.contains("no closing"), "{}", p.message);
        let p = parse("---\nname: a\ndescription: [unclosed\n---\n", "a").unwrap_err();
        assert!(p.message.starts_with("invalid YAML"), "{}", p.message);
        // The parser notices the missing `]` where the front matter ends.
        assert_eq!(p.line, Some(4), "{}", p.message);
        let p = parse("---\nname: a\ndescription: x: y\n---\n", "a").unwrap_err();
        assert_eq!(p.line, Some(3), "{}", p.message);
        assert!(
            p.message.contains("mapping values are not allowed"),
            "{}",
            p.message
        );
        let p = parse("---\ndescription: d\n---\n", "a").unwrap_err();
        assert_eq!(p.message, "the front matter has no `name`");
        let p = parse("---\ndescription: d\nname: B\n---\n", "b").unwrap_err();
        assert_eq!(p.line, Some(3));
        assert!(
            p.message.contains("not a valid skill name"),
            "{}",
            p.message
        );
        let p = parse("---\nname: a\ndescription: '  '\n---\n", "a").unwrap_err();
        assert_eq!(p.message, "`description` is empty");
        let p = parse("---\nname: a\ndescription: [1, 2]\n---\n", "a").unwrap_err();
        assert_eq!(
            (p.line, p.message.starts_with("`description` must be text")),
            (Some(3), true)
        );
        let p = parse("---\nname: 12\ndescription: d\n---\n", "12").unwrap_err();
        assert!(
            p.message.starts_with("`name` must be text"),
            "{}",
            p.message
        );
        let p = parse("---\n- a\n- b\n---\n", "a").unwrap_err();
        assert!(p.message.contains("keys and values"), "{}", p.message);
    }

    #[test]
    fn name_rules() {
        for good in ["a", "pdf", "pdf-forms-2", &"x".repeat(64)] {
            assert_eq!(check_name(good, good), Ok(()), "{good}");
        }
        for bad in [
            "",
            "-a",
            "a-",
            "a--b",
            "A",
            "a_b",
            "a b",
            "é",
            &"x".repeat(65),
        ] {
            assert!(check_name(bad, bad).is_err(), "{bad:?}");
        }
        let mismatch = check_name("pdf", "pdf-forms").unwrap_err();
        assert!(mismatch.contains("`pdf-forms`"), "{mismatch}");
    }

    #[test]
    fn aliases_and_deep_nesting_are_refused() {
        let laughs = "---\nname: a\nx: &x [l, l, l, l, l, l, l, l, l]\ny: &y [*x, *x, *x, *x]\ndescription: d\n---\n";
        let p = parse(laughs, "a").unwrap_err();
        assert_eq!(p.line, Some(4));
        assert!(p.message.contains("aliases"), "{}", p.message);
        let deep = format!(
            "---\nname: a\ndescription: d\nx: {}{}\n---\n",
            "[".repeat(40),
            "]".repeat(40)
        );
        let p = parse(&deep, "a").unwrap_err();
        assert!(p.message.contains("deeper than 32"), "{}", p.message);
    }

    #[test]
    fn front_matter_is_bounded() {
        let big = format!(
            "---\nname: a\ndescription: {}\n",
            "x ".repeat(MAX_FRONT_MATTER_BYTES)
        );
        let p = parse(&big, "a").unwrap_err();
        assert!(p.message.contains("longer than"), "{}", p.message);
        let long = format!("---\nname: a\ndescription: {}\n---\n", "x".repeat(1100));
        let p = parse(&long, "a").unwrap_err();
        assert!(p.message.contains("the limit is 1024"), "{}", p.message);
    }
}
