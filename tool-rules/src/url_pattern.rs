//! The grammar of URL patterns (`url_patterns = [...]`, domain-scoped
//! secrets): what a pattern may say and the limits on it. Matching, and the
//! conversion of Unicode hosts to their punycode form, stay in `tool-core`
//! (they need the `url` crate); the macro checks patterns at compile time with
//! [`parse`], the runtime parses them with it again at registration.
//!
//! Forms: `*.google.com` (any subdomain), `www.google.*` (one public suffix),
//! `github.com` (exactly that host), `localhost:8080` (host and port), `*`
//! (any host), each optionally preceded by a scheme (`http://`, `https://`,
//! `*://`) and followed by a path where `*` stays inside one segment and `**`
//! is a whole segment crossing any number of them.

/// Longest URL pattern accepted: 2 048 bytes, counted on the text as given
/// (surrounding whitespace included).
pub const MAX_URL_PATTERN_LEN: usize = 2048;
/// Most wildcards in one pattern: 16. A `*` (in the host or inside a path
/// segment) counts one, a `**` path segment counts one.
pub const MAX_URL_PATTERN_WILDCARDS: usize = 16;
/// Most labels in a pattern's host (`a.b.example.com` has 4): 32.
pub const MAX_URL_PATTERN_LABELS: usize = 32;
/// Most path segments in a pattern (`/a/**/b` has 3): 64.
pub const MAX_URL_PATTERN_SEGMENTS: usize = 64;

/// A pattern split into its parts (all lower-case ASCII but the path).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternParts {
    /// `http` or `https`; `None` for `*://` or no scheme (both mean either).
    pub scheme: Option<String>,
    /// The host part.
    pub host: HostShape,
    /// The port, when one is given.
    pub port: Option<u16>,
    /// The path segments after the host (leading `/` removed), when a path is given.
    pub path: Option<Vec<String>>,
}

/// The host part of a pattern; the strings hold the host without its wildcard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostShape {
    /// `example.com`.
    Exact(String),
    /// `*.example.com`: holds `example.com`.
    Subdomains(String),
    /// `www.example.*`: holds `www.example`.
    AnySuffix(String),
    /// `*`.
    Any,
}

fn over_limit(what: &str, found: usize, limit: usize, name: &str) -> String {
    format!("{what} {found}, over the limit of {limit} ({name})")
}

/// Splits `pattern` into its parts.
///
/// # Errors
/// The reason the pattern is refused, as a sentence fragment ("the host is
/// empty"): an empty pattern, whitespace or control characters, a scheme
/// other than `http`/`https`/`*`, user info, a port that is not a number, an
/// empty host label, a `*` inside a host label other than the leading `*.` or
/// trailing `.*`, `**` outside a whole path segment, or a limit exceeded (the
/// message names the limit and the value found).
pub fn parse(pattern: &str) -> Result<PatternParts, String> {
    if pattern.len() > MAX_URL_PATTERN_LEN {
        return Err(over_limit(
            "the pattern's length in bytes is",
            pattern.len(),
            MAX_URL_PATTERN_LEN,
            "MAX_URL_PATTERN_LEN",
        ));
    }
    let p = pattern.trim();
    if p.is_empty() {
        return Err("the pattern is empty".to_owned());
    }
    if p.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err("patterns cannot contain whitespace or control characters".to_owned());
    }
    if p.contains("***") {
        return Err("`***` is not a wildcard: use `*` within one label or segment, `**` for any number of path segments".to_owned());
    }
    let (scheme, rest) = match p.split_once("://") {
        Some((s, rest)) => {
            let s = s.to_ascii_lowercase();
            if !matches!(s.as_str(), "http" | "https" | "*") {
                return Err("the scheme must be `http`, `https` or `*`".to_owned());
            }
            (Some(s).filter(|s| s != "*"), rest)
        }
        None => (None, p),
    };
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], Some(&rest[i..])),
        None => (rest, None),
    };
    let host = host.to_ascii_lowercase();
    if host.contains('@') {
        return Err("user info (`@`) is not allowed: a pattern names a host".to_owned());
    }
    let (host, port) = match host.rsplit_once(':') {
        Some((h, p)) if !h.is_empty() => {
            let port = p
                .parse::<u16>()
                .map_err(|_| "the port must be a number from 0 to 65535".to_owned())?;
            (h.to_owned(), Some(port))
        }
        _ => (host, None),
    };
    let host = parse_host(&host)?;
    let path = path.map(|p| {
        p.trim_start_matches('/')
            .split('/')
            .map(str::to_owned)
            .collect::<Vec<_>>()
    });
    if let Some(segments) = &path {
        if segments.iter().any(|s| s.contains("**") && s != "**") {
            return Err("`**` must be a whole path segment, as in `/**/issues`".to_owned());
        }
        if segments.len() > MAX_URL_PATTERN_SEGMENTS {
            return Err(over_limit(
                "the number of path segments is",
                segments.len(),
                MAX_URL_PATTERN_SEGMENTS,
                "MAX_URL_PATTERN_SEGMENTS",
            ));
        }
    }
    let host_wildcards = usize::from(!matches!(host, HostShape::Exact(_)));
    let path_wildcards: usize = path
        .iter()
        .flatten()
        .map(|s| if s == "**" { 1 } else { s.matches('*').count() })
        .sum();
    let wildcards = host_wildcards + path_wildcards;
    if wildcards > MAX_URL_PATTERN_WILDCARDS {
        return Err(over_limit(
            "the number of wildcards is",
            wildcards,
            MAX_URL_PATTERN_WILDCARDS,
            "MAX_URL_PATTERN_WILDCARDS",
        ));
    }
    Ok(PatternParts {
        scheme,
        host,
        port,
        path,
    })
}

fn parse_host(host: &str) -> Result<HostShape, String> {
    if host.is_empty() {
        return Err("the host is missing".to_owned());
    }
    if host == "*" {
        return Ok(HostShape::Any);
    }
    if host.contains("**") {
        return Err("`**` is only allowed in the path; use `*.` or `.*` in the host".to_owned());
    }
    let (shape, core): (fn(String) -> HostShape, &str) = if let Some(rest) = host.strip_prefix("*.")
    {
        (HostShape::Subdomains, rest)
    } else if let Some(rest) = host.strip_suffix(".*") {
        (HostShape::AnySuffix, rest)
    } else {
        (HostShape::Exact, host)
    };
    let labels = core.split('.').count() + usize::from(core.len() != host.len());
    if labels > MAX_URL_PATTERN_LABELS {
        return Err(over_limit(
            "the number of host labels is",
            labels,
            MAX_URL_PATTERN_LABELS,
            "MAX_URL_PATTERN_LABELS",
        ));
    }
    for label in core.split('.') {
        if label.is_empty() {
            return Err(
                "empty host label (two dots in a row, or a leading or trailing dot)".to_owned(),
            );
        }
        if label.contains('*') {
            return Err("`*` must be a whole host label at the start (`*.google.com`) or the end (`www.google.*`)".to_owned());
        }
        if !label
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            return Err(format!(
                "the host label {label:?} has characters hosts cannot have: letters, digits, `-` and `_` only"
            ));
        }
    }
    Ok(shape(core.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepted_forms() {
        for ok in [
            "*.google.com",
            "www.google.*",
            "google.com",
            "localhost:8080",
            "https://github.com/**/issues",
            "*://example.com/*",
            "http://127.0.0.1:3000/api/*",
            "github.com/*/issues",
            "HTTPS://docs.rs/**",
            "*",
        ] {
            assert!(parse(ok).is_ok(), "{ok}");
        }
        assert_eq!(
            parse("https://Docs.rs:8080/a/**").unwrap(),
            PatternParts {
                scheme: Some("https".into()),
                host: HostShape::Exact("docs.rs".into()),
                port: Some(8080),
                path: Some(vec!["a".into(), "**".into()]),
            }
        );
        assert_eq!(
            parse("*.x.com").unwrap().host,
            HostShape::Subdomains("x.com".into())
        );
        assert_eq!(
            parse("www.x.*").unwrap().host,
            HostShape::AnySuffix("www.x".into())
        );
    }

    #[test]
    fn refused_forms() {
        for bad in [
            "",
            "go*gle.com",
            "a..b",
            "***",
            "ftp://x.com",
            "https://",
            "**.google.com",
            "example.com:http",
            "exa mple.com",
            ".example.com",
            "user@example.com",
            "www.*.com",
            "localhost:*",
            "https://github.com/a**/x",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        assert_eq!(
            parse("a..b").unwrap_err(),
            "empty host label (two dots in a row, or a leading or trailing dot)"
        );
    }
}
