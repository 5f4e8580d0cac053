//! URL patterns for `url_patterns = [...]`: which pages a tool is offered on.
//!
//! Forms (hosts compare case-insensitively on the parsed URL, never on the raw string):
//! - `*.google.com`: any subdomain of `google.com`, not `google.com` itself;
//! - `www.google.*`: `www.google.` followed by a top-level suffix: one label
//!   (`.com`, `.de`) or a short second-level one plus a label (`.co.uk`,
//!   `.com.au`); `www.google.evil.com` does not match;
//! - `github.com`: exactly that host; `localhost:8080`: that host on that port
//!   (without a port, any port); Unicode host names match their punycode form;
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
    port: Option<u16>,
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
        let (host, port) = match host.rsplit_once(':') {
            Some((h, p)) if !h.is_empty() => {
                let port = p
                    .parse::<u16>()
                    .map_err(|_| err(pattern, "the port must be a number from 0 to 65535"))?;
                (h.to_owned(), Some(port))
            }
            _ => (host, None),
        };
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
            port,
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
            HostPattern::AnySuffix(prefix) => host
                .strip_prefix(prefix.as_str())
                .is_some_and(is_top_level_suffix),
        };
        if !host_ok {
            return false;
        }
        if let Some(port) = self.port
            && url.port_or_known_default() != Some(port)
        {
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
            .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
        {
            return Err(err(
                pattern,
                format!("the host label {label:?} has characters hosts cannot have"),
            ));
        }
    }
    // Compare in the form `Url::host_str` gives: lower-case ASCII, punycode for Unicode names.
    let ascii = match Url::parse(&format!("http://{core}/")) {
        Ok(u) => u.host_str().unwrap_or(core).to_owned(),
        Err(e) => {
            return Err(err(
                pattern,
                format!("the host is not a valid host name ({e})"),
            ));
        }
    };
    Ok(match kind {
        "sub" => HostPattern::Subdomains(format!(".{ascii}")),
        "suffix" => HostPattern::AnySuffix(format!("{ascii}.")),
        _ => HostPattern::Exact(ascii),
    })
}

/// Whether path segments match pattern segments (`**` = any number of
/// segments). Dynamic programming over (pattern, path) positions: linear in
/// their product, whatever the number of `**` (a page URL is untrusted input).
fn match_segments(pattern: &[&str], path: &[&str]) -> bool {
    // reachable[j]: pattern[..i] can match path[..j].
    let mut reachable = vec![false; path.len() + 1];
    reachable[0] = true;
    for p in pattern {
        let mut next = vec![false; path.len() + 1];
        if *p == "**" {
            let mut any = false;
            for j in 0..=path.len() {
                any |= reachable[j];
                next[j] = any;
            }
        } else {
            for j in 1..=path.len() {
                next[j] = reachable[j - 1] && match_segment(p, path[j - 1]);
            }
        }
        reachable = next;
    }
    reachable[path.len()]
}

/// A top-level suffix after `www.example.`: one label, or a label of at most
/// three characters followed by one more (`co.uk`, `com.au`).
fn is_top_level_suffix(rest: &str) -> bool {
    let labels: Vec<&str> = rest.split('.').collect();
    match labels.as_slice() {
        [one] => !one.is_empty(),
        [second, top] => !second.is_empty() && second.len() <= 3 && !top.is_empty(),
        _ => false,
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
    fn suffix_wildcard_does_not_cross_into_other_domains() {
        assert!(!m("www.google.*", "https://www.google.evil.com/"));
        assert!(m("www.google.*", "https://www.google.com.au/"));
    }

    #[test]
    fn ports_and_unicode_hosts() {
        assert!(m("localhost:3000", "http://localhost:3000/x"));
        assert!(!m("localhost:3000", "http://localhost:3001/x"));
        assert!(m("localhost", "http://localhost:3001/x"));
        assert!(m("https://*.example.com:443/x", "https://a.example.com/x"));
        assert!(m("bücher.de", "https://bücher.de/"));
        assert!(m("bücher.de", "https://xn--bcher-kva.de/"));
        assert!(m("*.BÜCHER.de", "https://shop.xn--bcher-kva.de/"));
        assert!(m(
            "http://127.0.0.1:8080/api/*",
            "http://127.0.0.1:8080/api/v1"
        ));
        assert!(UrlPattern::parse("localhost:http").is_err());
    }

    #[test]
    fn many_double_stars_stay_fast() {
        let p = UrlPattern::parse("https://x.test/**/a/**/a/**/a/**/b").unwrap();
        let url = format!("https://x.test/{}", vec!["a"; 5000].join("/"));
        assert!(!p.matches_str(&url));
        assert!(p.matches_str(&format!("{url}/b")));
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
