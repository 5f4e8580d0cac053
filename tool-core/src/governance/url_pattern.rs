//! URL patterns for `url_patterns = [...]`: which pages a tool is offered on.
//!
//! Forms (hosts compare case-insensitively on the parsed URL, never on the raw string):
//! - `*.google.com`: any subdomain of `google.com`, not `google.com` itself;
//! - `www.google.*`: `www.google.` followed by any suffix (`.com`, `.co.uk`);
//! - `github.com`: exactly that host;
//! - a full URL such as `https://github.com/**/issues`: scheme (`http`, `https`
//!   or `*`), host pattern as above, and a path pattern where `*` stays inside
//!   one path segment and `**` crosses segments. A host pattern may also be
//!   followed by a path without a scheme (`github.com/*/issues`).
//!
//! A URL that carries user info (`https://docs.example.com@evil.test/`) never
//! matches: its host is `evil.test`, and user info in a page URL is a classic
//! way to make a host look like another.

use std::fmt;

use url::Url;

/// A parsed URL pattern. Build with [`UrlPattern::parse`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UrlPattern {
    source: String,
    scheme: Option<String>,
    host: HostPattern,
    path: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// `example.com`
    Exact(String),
    /// `*.example.com`: stores `.example.com`.
    Subdomains(String),
    /// `www.example.*`: stores `www.example.`.
    AnySuffix(String),
    /// `*`
    Any,
}

/// Why a URL pattern was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URL pattern {pattern:?}: {reason}")]
pub struct UrlPatternError {
    /// The pattern as given.
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

fn err(pattern: &str, reason: impl Into<String>) -> UrlPatternError {
    UrlPatternError {
        pattern: pattern.to_owned(),
        reason: reason.into(),
    }
}

impl UrlPattern {
    /// Parses a pattern (forms in the module docs).
    ///
    /// # Errors
    /// Empty patterns, whitespace, a `*` inside a host label other than the
    /// leading `*.` or trailing `.*`, empty labels, schemes other than
    /// `http`/`https`/`*`, and `**` outside the path.
    pub fn parse(pattern: &str) -> Result<Self, UrlPatternError> {
        let p = pattern.trim();
        if p.is_empty() {
            return Err(err(pattern, "the pattern is empty"));
        }
        if p.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(err(pattern, "patterns cannot contain whitespace"));
        }
        let (scheme, rest) = match p.split_once("://") {
            Some((s, rest)) => {
                let s = s.to_ascii_lowercase();
                if !matches!(s.as_str(), "http" | "https" | "*") {
                    return Err(err(pattern, "the scheme must be http, https or *"));
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
            return Err(err(pattern, "patterns cannot contain user info (`@`)"));
        }
        let host = parse_host(pattern, &host)?;
        let path = path.map(|p| {
            p.trim_start_matches('/')
                .split('/')
                .map(str::to_owned)
                .collect::<Vec<_>>()
        });
        if let Some(segments) = &path {
            for s in segments {
                if s.contains("**") && s != "**" {
                    return Err(err(pattern, "`**` must be a whole path segment"));
                }
            }
        }
        Ok(Self {
            source: pattern.to_owned(),
            scheme,
            host,
            path,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// Whether the URL text matches. Unparsable URLs never match.
    pub fn matches_str(&self, url: &str) -> bool {
        Url::parse(url).is_ok_and(|u| self.matches(&u))
    }

    /// Whether a parsed URL matches.
    pub fn matches(&self, url: &Url) -> bool {
        if !url.username().is_empty() || url.password().is_some() {
            return false;
        }
        let Some(host) = url.host_str() else {
            return false;
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if let Some(s) = &self.scheme
            && s != url.scheme()
        {
            return false;
        }
        if self.scheme.is_none() && !matches!(url.scheme(), "http" | "https") {
            return false;
        }
        let host_ok = match &self.host {
            HostPattern::Any => true,
            HostPattern::Exact(h) => host == *h,
            HostPattern::Subdomains(suffix) => {
                host.len() > suffix.len() && host.ends_with(suffix.as_str())
            }
            HostPattern::AnySuffix(prefix) => {
                host.len() > prefix.len() && host.starts_with(prefix.as_str())
            }
        };
        if !host_ok {
            return false;
        }
        match &self.path {
            None => true,
            Some(pattern) => {
                let segments: Vec<&str> = url.path().trim_start_matches('/').split('/').collect();
                let pattern: Vec<&str> = pattern.iter().map(String::as_str).collect();
                match_segments(&pattern, &segments)
            }
        }
    }
}

impl fmt::Display for UrlPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

fn parse_host(pattern: &str, host: &str) -> Result<HostPattern, UrlPatternError> {
    if host.is_empty() {
        return Err(err(pattern, "the host is empty"));
    }
    if host == "*" {
        return Ok(HostPattern::Any);
    }
    let (kind, core) = if let Some(rest) = host.strip_prefix("*.") {
        ("sub", rest)
    } else if let Some(rest) = host.strip_suffix(".*") {
        ("suffix", rest)
    } else {
        ("exact", host)
    };
    for label in core.split('.') {
        if label.is_empty() {
            return Err(err(
                pattern,
                "the host has an empty label (`..` or a leading/trailing dot)",
            ));
        }
        if label.contains('*') {
            return Err(err(
                pattern,
                "`*` may only stand for whole labels at the start (`*.example.com`) or end (`www.example.*`) of the host",
            ));
        }
        if !label
            .chars()
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_' || c == ':')
        {
            return Err(err(
                pattern,
                format!("the host label {label:?} has characters hosts cannot have"),
            ));
        }
    }
    Ok(match kind {
        "sub" => HostPattern::Subdomains(format!(".{core}")),
        "suffix" => HostPattern::AnySuffix(format!("{core}.")),
        _ => HostPattern::Exact(core.to_owned()),
    })
}

fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    match pattern.split_first() {
        None => path.is_empty(),
        Some((&"**", rest)) => (0..=path.len()).any(|skip| match_segments(rest, &path[skip..])),
        Some((first, rest)) => match path.split_first() {
            Some((seg, path_rest)) => match_segment(first, seg) && match_segments(rest, path_rest),
            None => false,
        },
    }
}

/// `*` matches any run of characters within one segment.
fn match_segment(pattern: &str, segment: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == segment;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !segment.starts_with(first)
        || segment.len() < first.len() + last.len()
        || !segment.ends_with(last)
    {
        return false;
    }
    let mut rest = &segment[first.len()..segment.len() - last.len()];
    for middle in &parts[1..parts.len() - 1] {
        match rest.find(middle) {
            Some(i) => rest = &rest[i + middle.len()..],
            None => return false,
        }
    }
    true
}

/// Whether any of `patterns` matches `url` (an empty list matches everything).
pub(crate) fn any_match(patterns: &[UrlPattern], url: Option<&str>) -> bool {
    if patterns.is_empty() {
        return true;
    }
    let Some(url) = url.and_then(|u| Url::parse(u).ok()) else {
        return false;
    };
    patterns.iter().any(|p| p.matches(&url))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, url: &str) -> bool {
        UrlPattern::parse(p).unwrap().matches_str(url)
    }

    #[test]
    fn subdomain_wildcard_excludes_bare_domain() {
        assert!(m("*.google.com", "https://mail.google.com/x"));
        assert!(m("*.google.com", "https://a.b.GOOGLE.com"));
        assert!(!m("*.google.com", "https://google.com/"));
        assert!(!m("*.google.com", "https://evilgoogle.com/"));
        assert!(!m("*.google.com", "https://google.com.evil.test/"));
    }

    #[test]
    fn suffix_wildcard() {
        assert!(m("www.google.*", "https://www.google.com/search"));
        assert!(m("www.google.*", "http://www.google.co.uk"));
        assert!(!m("www.google.*", "https://www.google/"));
        assert!(!m("www.google.*", "https://mail.google.com"));
    }

    #[test]
    fn bare_host_and_userinfo() {
        assert!(m("github.com", "https://github.com/a/b"));
        assert!(!m("github.com", "https://gist.github.com/"));
        assert!(!m(
            "docs.example.com",
            "https://docs.example.com@evil.test/"
        ));
        assert!(!m("*.test", "https://docs.example.com@evil.test/"));
        assert!(!m("github.com", "ftp://github.com/"));
        assert!(!m("github.com", "not a url"));
    }

    #[test]
    fn full_url_patterns() {
        let p = "https://github.com/**/issues";
        assert!(m(p, "https://github.com/org/repo/issues"));
        assert!(m(p, "https://github.com/issues"));
        assert!(!m(p, "http://github.com/org/repo/issues"));
        assert!(!m(p, "https://github.com/org/repo/pulls"));
        assert!(m(
            "https://github.com/*/issues",
            "https://github.com/org/issues"
        ));
        assert!(!m(
            "https://github.com/*/issues",
            "https://github.com/org/repo/issues"
        ));
        assert!(m(
            "*://github.com/*-docs/**",
            "http://github.com/rust-docs/a/b"
        ));
        assert!(m("github.com/*/issues", "https://github.com/x/issues"));
    }

    #[test]
    fn bad_patterns_are_refused() {
        for p in [
            "",
            "go*gle.com",
            "a..b",
            "ftp://x.com",
            "x.com/a**",
            "has space.com",
            "u@x.com",
            "*",
        ] {
            if p == "*" {
                assert!(UrlPattern::parse(p).is_ok());
                continue;
            }
            assert!(UrlPattern::parse(p).is_err(), "{p} should be refused");
        }
    }

    #[test]
    fn empty_list_matches_everything() {
        assert!(any_match(&[], None));
        let ps = vec![UrlPattern::parse("*.github.com").unwrap()];
        assert!(!any_match(&ps, None));
        assert!(any_match(&ps, Some("https://api.github.com")));
    }
}
