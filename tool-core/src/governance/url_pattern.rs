//! URL patterns for `url_patterns = [...]`: which pages a tool is offered on.
//!
//! Forms (hosts compare case-insensitively on the parsed URL, never on the raw string):
//! - `*.google.com`: any subdomain of `google.com`, not `google.com` itself;
//! - `www.google.*`: `www.google.` followed by exactly one public suffix of
//!   the ICANN section of the [Public Suffix List](https://publicsuffix.org/)
//!   (`com`, `de`, `co.uk`, `com.au`, `xn--p1ai`), as compiled into the `psl`
//!   crate: `www.google.abc.com`, `www.google.com.evil.net` and
//!   `www.google.co.uk.attacker.io` do not match (their public suffix is
//!   `com`, `net`, `io`, and what the `*` would stand for is more than that).
//!   Suffixes of the list's private section (`github.io`, `blogspot.com`)
//!   and names the list does not know (`www.google.internal`) do not match
//!   either: anyone can register a name under a private suffix;
//! - `github.com`: exactly that host; `localhost:8080`: that host on that port
//!   (without a port, any port); Unicode host names match their punycode form;
//! - a full URL such as `https://github.com/**/issues`: scheme (`http`, `https`
//!   or `*`), host pattern as above, and a path pattern where `*` stays inside
//!   one path segment and `**` crosses segments. A host pattern may also be
//!   followed by a path without a scheme (`github.com/*/issues`).
//!
//! # Limits
//!
//! A pattern is at most [`MAX_URL_PATTERN_LEN`] bytes long, with at most
//! [`MAX_URL_PATTERN_WILDCARDS`] wildcards (each `*` counts one, a `**`
//! segment one), [`MAX_URL_PATTERN_LABELS`] host labels and
//! [`MAX_URL_PATTERN_SEGMENTS`] path segments; a longer one is refused with a
//! [`UrlPatternError`] naming the limit and the value found. A URL to match is
//! at most [`MAX_MATCHED_URL_LEN`] bytes long; a longer one matches no pattern.
//! Matching takes time linear in the URL's length for a given pattern (see
//! `match_segments`), so no pattern within the limits is slow on any URL.
//!
//! A URL that carries user info (`https://docs.example.com@evil.test/`) never
//! matches: its host is `evil.test`, and user info in a page URL is a classic
//! way to make a host look like another.

use std::fmt;

use tool_rules::url_pattern::{self, HostShape};
use url::Url;

pub use tool_rules::url_pattern::{
    MAX_URL_PATTERN_LABELS, MAX_URL_PATTERN_LEN, MAX_URL_PATTERN_SEGMENTS,
    MAX_URL_PATTERN_WILDCARDS,
};
/// Longest URL that can match a pattern, in bytes: 16 384 (16 KiB). A page
/// URL over it matches no pattern (URL-scoped tools are not offered and
/// domain-scoped secrets are not available there).
pub const MAX_MATCHED_URL_LEN: usize = 16 * 1024;

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

/// Why a URL pattern was refused. Its message quotes at most the first 100
/// characters of the pattern.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid URL pattern {}: {reason}", quoted(.pattern))]
pub struct UrlPatternError {
    /// The pattern as given (whole, however long).
    pub pattern: String,
    /// What is wrong with it.
    pub reason: String,
}

/// The pattern as the error message shows it: `Debug`-quoted, cut after 100
/// characters with the full length said.
fn quoted(pattern: &str) -> String {
    const SHOWN: usize = 100;
    match pattern.char_indices().nth(SHOWN) {
        None => format!("{pattern:?}"),
        Some((cut, _)) => format!("{:?}… ({} bytes)", &pattern[..cut], pattern.len()),
    }
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
    /// `http`/`https`/`*`, `**` outside the path, and patterns over a limit
    /// (module docs: length, wildcards, host labels, path segments).
    pub fn parse(pattern: &str) -> Result<Self, UrlPatternError> {
        // The grammar (and its messages) is shared with the `#[tool]` macro,
        // which checks `url_patterns` at compile time with the same fn.
        let parts = url_pattern::parse(pattern).map_err(|reason| err(pattern, reason))?;
        Ok(Self {
            source: pattern.to_owned(),
            scheme: parts.scheme,
            host: normalise_host(pattern, parts.host)?,
            port: parts.port,
            path: parts.path,
        })
    }

    /// The pattern as written.
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The port the pattern names (`localhost:8080` gives `Some(8080)`), or
    /// `None` when it names none (then any port matches).
    pub fn port(&self) -> Option<u16> {
        self.port
    }

    /// Whether the pattern restricts the path (`github.com/*/issues`,
    /// `https://x.test/**/a`). Such a pattern can only be checked against a
    /// full URL, never against a bare host (an HTTPS tunnel hides the path).
    pub fn restricts_path(&self) -> bool {
        self.path.is_some()
    }

    /// Whether the URL text matches. Unparsable URLs, and URLs longer than
    /// [`MAX_MATCHED_URL_LEN`] bytes, never match.
    pub fn matches_str(&self, url: &str) -> bool {
        url.len() <= MAX_MATCHED_URL_LEN && Url::parse(url).is_ok_and(|u| self.matches(&u))
    }

    /// Whether a parsed URL matches. URLs longer than [`MAX_MATCHED_URL_LEN`]
    /// bytes (in their serialised form) never match.
    pub fn matches(&self, url: &Url) -> bool {
        if url.as_str().len() > MAX_MATCHED_URL_LEN {
            return false;
        }
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
                .is_some_and(is_public_suffix),
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

/// The host part in the form `Url::host_str` gives (lower-case ASCII,
/// punycode for Unicode names), with the wildcard's dot kept for matching.
fn normalise_host(pattern: &str, host: HostShape) -> Result<HostPattern, UrlPatternError> {
    let ascii = |core: &str| match Url::parse(&format!("http://{core}/")) {
        Ok(u) => Ok(u.host_str().unwrap_or(core).to_owned()),
        Err(e) => Err(err(
            pattern,
            format!("the host is not a valid host name ({e})"),
        )),
    };
    Ok(match host {
        HostShape::Any => HostPattern::Any,
        HostShape::Exact(core) => HostPattern::Exact(ascii(&core)?),
        HostShape::Subdomains(core) => HostPattern::Subdomains(format!(".{}", ascii(&core)?)),
        HostShape::AnySuffix(core) => HostPattern::AnySuffix(format!("{}.", ascii(&core)?)),
    })
}

/// Whether path segments match pattern segments (`**` = any number of
/// segments).
///
/// Linear by construction, whatever the number of `**` (a page URL is
/// untrusted input): dynamic programming over (pattern, path) positions, no
/// backtracking. Each pattern segment is one pass over `reachable`; a `**`
/// pass is a running OR (O(path segments)), any other pass calls
/// [`match_segment`] once per path segment, which is linear in that segment's
/// length plus the pattern segment's. So the whole match costs
/// O(P x (URL length + path segments x pattern length)), with P at most
/// [`MAX_URL_PATTERN_SEGMENTS`] and the pattern at most
/// [`MAX_URL_PATTERN_LEN`] bytes: linear in the URL's length for any pattern,
/// and bounded by [`MAX_MATCHED_URL_LEN`] overall.
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

/// Whether `rest` (what the `*` of `www.example.*` stands for, lower-case
/// ASCII as `Url::host_str` gives it) is exactly one public suffix of the
/// Public Suffix List's ICANN section: `com`, `co.uk`, `com.au`, yes;
/// `abc.com` (suffix `com`), `github.io` (private section) and unknown names,
/// no. The list looks at labels from the right, so the suffix it finds for
/// `rest` is also the one it finds for that tail of the whole host.
fn is_public_suffix(rest: &str) -> bool {
    psl::suffix(rest.as_bytes()).is_some_and(|s| {
        s.typ() == Some(psl::Type::Icann) && !s.is_fqdn() && s.as_bytes().len() == rest.len()
    })
}

/// `*` matches any run of characters within one segment.
///
/// Linear, no backtracking: the fixed prefix and suffix are compared in
/// place, then each middle part is found leftmost in what is left
/// (`str::find` is the two-way algorithm, linear in its input) and the
/// search resumes after it. Taking the leftmost occurrence is always right:
/// it leaves the longest remainder for the parts after it.
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
    let Some(url) = url
        .filter(|u| u.len() <= MAX_MATCHED_URL_LEN)
        .and_then(|u| Url::parse(u).ok())
    else {
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
    fn suffix_wildcard_matches_exactly_one_public_suffix() {
        // The case: `abc` is no public suffix, so `abc.com` is two labels too many.
        assert!(!m("www.google.*", "https://www.google.abc.com/"));
        for url in [
            "https://www.google.com/",
            "https://www.google.co.uk/",
            "https://www.google.com.au/",
            "https://www.google.de/",
            "https://www.google.co.jp/x",
            // .рф in punycode, as `Url` gives the host.
            "https://www.google.xn--p1ai/",
            "https://www.google.рф/",
        ] {
            assert!(m("www.google.*", url), "{url} should match");
        }
        for url in [
            "https://www.google.com.evil.net/",
            "https://www.google.co.uk.attacker.io/",
            "https://www.google.com.au.evil.org/",
            "https://www.google.evil.co.uk/",
            "https://www.google.uk.com.cn/",
            // Private-section suffixes: anyone can register names under them.
            "https://www.google.github.io/",
            "https://www.google.blogspot.com/",
            // Not on the list at all.
            "https://www.google.notatld/",
            "https://www.google.internal/",
        ] {
            assert!(!m("www.google.*", url), "{url} should not match");
        }
        assert!(m("shop.*", "https://shop.com.au/"));
        assert!(!m("shop.*", "https://shop.com.au.evil.net/"));
        assert!(m("https://docs.rs.*/a/*", "https://docs.rs.co.uk/a/b"));
    }

    #[test]
    fn patterns_over_a_limit_are_refused_naming_it() {
        let long = format!("{}.com", "a".repeat(MAX_URL_PATTERN_LEN));
        let e = UrlPattern::parse(&long).unwrap_err();
        assert_eq!(
            e.reason,
            "the pattern's length in bytes is 2052, over the limit of 2048 (MAX_URL_PATTERN_LEN)"
        );
        // The message quotes a cut pattern, never the whole of it.
        let message = e.to_string();
        assert!(message.len() < 300, "{message}");
        assert!(message.contains("… (2052 bytes)"), "{message}");
        assert_eq!(e.pattern, long);

        let stars = format!("x.test/{}", vec!["*"; 17].join("/"));
        assert_eq!(
            UrlPattern::parse(&stars).unwrap_err().reason,
            "the number of wildcards is 17, over the limit of 16 (MAX_URL_PATTERN_WILDCARDS)"
        );
        let in_one_segment = format!("*.x.test/a{}", "*b".repeat(16));
        assert_eq!(
            UrlPattern::parse(&in_one_segment).unwrap_err().reason,
            "the number of wildcards is 17, over the limit of 16 (MAX_URL_PATTERN_WILDCARDS)"
        );
        assert!(UrlPattern::parse(&format!("*.x.test/a{}", "*b".repeat(15))).is_ok());
        let labels = format!("{}com", "a.".repeat(32));
        assert_eq!(
            UrlPattern::parse(&labels).unwrap_err().reason,
            "the number of host labels is 33, over the limit of 32 (MAX_URL_PATTERN_LABELS)"
        );
        assert!(UrlPattern::parse(&format!("{}com", "a.".repeat(31))).is_ok());
        let segments = format!("https://x.test/{}", vec!["s"; 65].join("/"));
        assert_eq!(
            UrlPattern::parse(&segments).unwrap_err().reason,
            "the number of path segments is 65, over the limit of 64 (MAX_URL_PATTERN_SEGMENTS)"
        );
        assert!(UrlPattern::parse(&format!("https://x.test/{}", vec!["s"; 64].join("/"))).is_ok());
    }

    #[test]
    fn urls_over_the_length_limit_match_nothing() {
        let p = UrlPattern::parse("x.test").unwrap();
        let base = "https://x.test/";
        let fits = format!("{base}{}", "a".repeat(MAX_MATCHED_URL_LEN - base.len()));
        assert!(p.matches_str(&fits));
        assert!(any_match(std::slice::from_ref(&p), Some(&fits)));
        let over = format!("{fits}a");
        assert!(!p.matches_str(&over));
        assert!(!p.matches(&Url::parse(&over).unwrap()));
        assert!(!any_match(std::slice::from_ref(&p), Some(&over)));
        assert!(!UrlPattern::parse("*").unwrap().matches_str(&over));
    }

    #[test]
    fn pathological_patterns_of_the_largest_size_complete() {
        // 16 `**` segments (every wildcard allowed) among 48 literal ones,
        // against the longest URL allowed, made of the segment the pattern
        // repeats so that every `**` has the most places to stop. A
        // backtracking matcher would take about (8000 choose 16) steps; this
        // one is one pass per pattern segment (see `match_segments`).
        let mut segments = Vec::new();
        for i in 0..MAX_URL_PATTERN_SEGMENTS - 1 {
            segments.push(if i % 4 == 0 { "**" } else { "a" });
        }
        segments.push("b");
        assert_eq!(segments.len(), MAX_URL_PATTERN_SEGMENTS);
        let pattern = format!("https://x.test/{}", segments.join("/"));
        let p = UrlPattern::parse(&pattern).unwrap();
        let base = "https://x.test/";
        let n = (MAX_MATCHED_URL_LEN - base.len() - 2) / 2;
        let url = format!("{base}{}", vec!["a"; n].join("/"));
        assert!(url.len() <= MAX_MATCHED_URL_LEN);
        assert!(!p.matches_str(&url));
        let url_b = format!("{}/b", &url[..url.len() - 2]);
        assert!(p.matches_str(&url_b), "{pattern}");

        // Within one segment: 16 `*` against a 16 000-character segment that
        // almost matches everywhere.
        let p = UrlPattern::parse(&format!("https://x.test/{}c", "*a".repeat(16))).unwrap();
        let long = format!("{base}{}", "a".repeat(MAX_MATCHED_URL_LEN - base.len() - 1));
        assert!(!p.matches_str(&format!("{long}b")));
        assert!(p.matches_str(&format!("{long}c")));
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
