//! Local names of imported tools: `<server>__<tool>`, made valid.

/// The longest local tool name (OpenAI and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`).
pub const MAX_NAME_LEN: usize = 64;

/// The local name of remote tool `tool` of server `server`: `<server>__<tool>`
/// when that already matches `^[a-zA-Z0-9_-]{1,64}$` (the OpenAI and
/// Anthropic tool-name rule, which the registry enforces).
///
/// Otherwise every other character becomes `_`, the result is cut so that
/// `_` and 8 hex digits of a hash of the *original* pair fit in 64
/// characters, and that suffix is appended: two remote names that sanitise to
/// the same text still get different local names, and the same remote name
/// always gets the same local name.
///
/// ```
/// use tool_mcp::local_tool_name;
/// assert_eq!(local_tool_name("files", "read_file"), "files__read_file");
/// let dotted = local_tool_name("gh", "repo.search");
/// assert!(dotted.starts_with("gh__repo_search_") && dotted.len() == 24);
/// assert_ne!(dotted, local_tool_name("gh", "repo_search"));
/// assert_eq!(local_tool_name("srv", &"x".repeat(100)).len(), 64);
/// ```
pub fn local_tool_name(server: &str, tool: &str) -> String {
    let raw = format!("{server}__{tool}");
    let valid = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b == b'-';
    if !raw.is_empty() && raw.len() <= MAX_NAME_LEN && raw.bytes().all(valid) {
        return raw;
    }
    let suffix = format!("_{:08x}", fnv1a32(raw.as_bytes()));
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii() && valid(c as u8) {
                c
            } else {
                '_'
            }
        })
        .take(MAX_NAME_LEN - suffix.len())
        .collect();
    name.push_str(&suffix);
    name
}

/// A server name usable as the `<server>` part: invalid characters become `_`.
/// The `<server>` prefix the tools of a server named `name` get
/// (`<prefix>__<tool>`): `name` with every character outside
/// `[A-Za-z0-9-]` turned into `_`, at most 32 characters, `mcp` when empty.
/// A tool name belongs to the server when it starts with `<prefix>__`, which
/// [`local_tool_name`] keeps whatever the tool's name.
///
/// ```
/// assert_eq!(tool_mcp::server_prefix("my files"), "my_files");
/// assert!(tool_mcp::local_tool_name("my_files", "read").starts_with("my_files__"));
/// ```
pub fn server_prefix(name: &str) -> String {
    sanitize_server(name)
}

pub(crate) fn sanitize_server(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .take(32)
        .collect();
    if s.is_empty() { "mcp".to_owned() } else { s }
}

/// 32-bit FNV-1a: stable across runs and platforms (std's hasher is not).
fn fnv1a32(bytes: &[u8]) -> u32 {
    bytes.iter().fold(0x811c_9dc5_u32, |h, &b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_always_match_the_rule() {
        for (s, t) in [
            ("a", "b"),
            ("my server", "tool/with/slashes"),
            ("x", "ünïcödé"),
            ("long", &"y".repeat(300)),
            ("", ""),
        ] {
            let n = local_tool_name(s, t);
            assert!(tool_core::is_valid_tool_name(&n), "{n}");
        }
    }

    #[test]
    fn server_names_are_sanitised() {
        assert_eq!(sanitize_server("my.server"), "my_server");
        assert_eq!(sanitize_server(""), "mcp");
    }
}
