//! Name rules: tool names, parameter names, tags and language tags.

/// Longest tool name: 64 bytes.
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// Longest tag: 32 bytes.
pub const MAX_TAG_LEN: usize = 32;

/// The portable tool-name rule: `^[a-zA-Z0-9_-]{1,64}$`.
///
/// Source: OpenAI function names and Anthropic tool names both require it;
/// it is the strictest of the providers the framework targets.
pub const TOOL_NAME_RULE: &str =
    "OpenAI and Anthropic require tool names to match ^[a-zA-Z0-9_-]{1,64}$";

/// Whether `name` follows the tool-name rule ([`TOOL_NAME_RULE`]).
pub fn is_valid_tool_name(name: &str) -> bool {
    tool_name_problem(name).is_none()
}

/// What breaks the tool-name rule in `name`, if anything: "it is empty",
/// "`c` is not allowed" (the first bad character) or "it is N characters long".
pub fn tool_name_problem(name: &str) -> Option<String> {
    if name.is_empty() {
        Some("it is empty".to_owned())
    } else if let Some(c) = name
        .chars()
        .find(|&c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    {
        Some(format!("`{c}` is not allowed"))
    } else if name.len() > MAX_TOOL_NAME_LEN {
        Some(format!("it is {} characters long", name.len()))
    } else {
        None
    }
}

/// The parameter-name rule ([`is_valid_param_name`]) as messages state it.
///
/// Source: the intersection of what OpenAI, Anthropic and Gemini accept as
/// property names of a function's parameters.
pub const PARAM_NAME_RULE: &str =
    "parameter names must match ^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$ to be accepted by every provider";

/// The parameter-name rule: `^[a-zA-Z_][a-zA-Z0-9_.-]{0,63}$` ([`PARAM_NAME_RULE`]).
///
/// Source: the intersection of what OpenAI, Anthropic and Gemini accept as
/// property names of a function's parameters.
pub fn is_valid_param_name(name: &str) -> bool {
    let mut bytes = name.bytes();
    let first_ok = bytes
        .next()
        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_');
    first_ok
        && name.len() <= 64
        && bytes.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// The tag rule: `^[a-z0-9][a-z0-9_-]{0,31}$`, lower-case so that `--tags fs`
/// selects what `tags = ["fs"]` declared without case games.
pub const TAG_RULE: &str = "tags match ^[a-z0-9][a-z0-9_-]{0,31}$";

/// What breaks the tag rule ([`TAG_RULE`]) in `tag`, if anything.
pub fn tag_problem(tag: &str) -> Option<String> {
    if tag.is_empty() {
        return Some("a tag cannot be empty".to_owned());
    }
    if tag.len() > MAX_TAG_LEN {
        return Some(format!(
            "it is {} characters long, over {MAX_TAG_LEN}",
            tag.len()
        ));
    }
    if let Some(c) = tag
        .chars()
        .find(|&c| !(c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-'))
    {
        return Some(format!("`{c}` is not allowed"));
    }
    if tag.starts_with(['_', '-']) {
        return Some("it must start with a letter or digit".to_owned());
    }
    None
}

/// A BCP 47-like tag written as an identifier: a 2–3 letter language, then
/// `_`-separated subtags of 1–8 letters or digits (`zh`, `zh_Hans`, `es_419`).
pub fn is_language_tag(tag: &str) -> bool {
    let mut subtags = tag.split('_');
    let language_ok = subtags
        .next()
        .is_some_and(|l| (2..=3).contains(&l.len()) && l.bytes().all(|b| b.is_ascii_alphabetic()));
    language_ok
        && subtags
            .all(|s| (1..=8).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_alphanumeric()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names() {
        assert!(is_valid_tool_name("web_search-2"));
        assert_eq!(tool_name_problem("").as_deref(), Some("it is empty"));
        assert_eq!(
            tool_name_problem("a.b").as_deref(),
            Some("`.` is not allowed")
        );
        assert_eq!(
            tool_name_problem(&"a".repeat(65)).as_deref(),
            Some("it is 65 characters long")
        );
        assert!(is_valid_tool_name(&"a".repeat(64)));
    }

    #[test]
    fn param_names_tags_and_language_tags() {
        assert!(is_valid_param_name("query"));
        assert!(is_valid_param_name("_x.y-z"));
        assert!(!is_valid_param_name("9lives"));
        assert!(!is_valid_param_name("größe"));
        assert!(!is_valid_param_name(&"a".repeat(65)));
        assert_eq!(tag_problem("fs"), None);
        assert_eq!(tag_problem("web-2"), None);
        assert_eq!(tag_problem("").as_deref(), Some("a tag cannot be empty"));
        assert_eq!(tag_problem("Git").as_deref(), Some("`G` is not allowed"));
        assert_eq!(
            tag_problem("-x").as_deref(),
            Some("it must start with a letter or digit")
        );
        assert!(tag_problem(&"a".repeat(33)).is_some());
        assert!(is_language_tag("zh"));
        assert!(is_language_tag("pt_BR"));
        assert!(is_language_tag("es_419"));
        assert!(!is_language_tag("chinese"));
        assert!(!is_language_tag("z"));
        assert!(!is_language_tag("en__US"));
    }
}
