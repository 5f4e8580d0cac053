//! Service awareness: the servers a query names or implies.
//!
//! A tool's server is the part of its name before `__` (the MCP import
//! convention `<server>__<tool>`, e.g. `github__create_issue`). A query
//! names a server when
//!
//! - one of its own words (or a long form of one, `gh` → `github`) is the
//!   server's name or the first word of it (`outlook` for
//!   `outlook_calendar`), and that word is clearly the server's: at least
//!   half the tools whose text contains it belong to that server (so a
//!   server called `time` or `memory` is not named by the everyday word);
//! - it names a product or host that stands for a service ([`PRODUCTS`]:
//!   `gsutil` → `gcs`, `SFDC` → `salesforce`, `O365` → `outlook`);
//! - it holds a URL whose scheme or host names one (`gs://bucket/a` →
//!   `gcs`, `s3://`, `https://github.com/...` → `github`,
//!   `acme.atlassian.net` → `jira`, `confluence`).
//!
//! The named servers' matching tools get their score multiplied by
//! 1 + [`SERVICE_BOOST`](super::SERVICE_BOOST): a bounded boost. Tools with
//! no match stay unlisted, and other servers' tools stay in the list.

/// Products, nicknames and hosts, and the server names they stand for
/// (lower case; a server matches when its name, with `_` and `-` removed,
/// is one of them, or its first word is). Written from what the products
/// are called, not from evaluation queries.
pub(crate) const PRODUCTS: &[(&[&str], &[&str])] = &[
    (
        &[
            "gs",
            "gsutil",
            "gcs",
            "gcloud",
            "googlecloudstorage",
            "cloudstorage",
        ],
        &["gcs", "googlecloudstorage"],
    ),
    (&["s3", "aws"], &["s3", "aws"]),
    (&["sfdc", "salesforce"], &["salesforce"]),
    (
        &["o365", "office365", "m365", "outlook", "hotmail"],
        &["outlook", "office365"],
    ),
    (
        &["teams", "microsoftteams", "msteams"],
        &["msteams", "teams", "microsoftteams"],
    ),
    (&["gh", "github"], &["github"]),
    (&["gl", "gitlab"], &["gitlab"]),
    (&["k8s", "kubectl", "kube"], &["kubernetes", "k8s"]),
    (&["gcal", "googlecalendar"], &["gcal", "googlecalendar"]),
    (
        &["gdrive", "drive", "googledrive"],
        &["gdrive", "googledrive"],
    ),
    (
        &["gsheets", "sheets", "googlesheets"],
        &["gsheets", "googlesheets"],
    ),
    (&["gmail"], &["gmail"]),
    (&["atlassian"], &["jira", "confluence"]),
    (
        &["psql", "pg", "postgresql", "postgres"],
        &["postgres", "postgresql"],
    ),
    (&["mongo", "mongodb"], &["mongodb"]),
    (&["pd", "pagerduty"], &["pagerduty"]),
    (&["yt", "youtube", "youtu"], &["youtube"]),
    (&["npmjs", "npm"], &["npm", "npmregistry"]),
    (&["pypi", "pip"], &["pypi"]),
    (&["dd", "datadog", "datadoghq"], &["datadog"]),
    (&["wiki", "wikipedia"], &["wikipedia"]),
    // Issue 31's third round: pptr.dev is Puppeteer's own site and name.
    (&["pptr", "puppeteer"], &["puppeteer"]),
];

/// The server-name lists of [`PRODUCTS`] that `cue` (lower case) is a
/// name in: one hash look-up (the table is indexed on first use), so a
/// query's words and word pairs cost a look-up each.
pub(crate) fn products_of(cue: &str) -> &'static [&'static [&'static str]] {
    static BY_NAME: std::sync::OnceLock<
        rustc_hash::FxHashMap<&'static str, Vec<&'static [&'static str]>>,
    > = std::sync::OnceLock::new();
    BY_NAME
        .get_or_init(|| {
            let mut map: rustc_hash::FxHashMap<&'static str, Vec<&'static [&'static str]>> =
                rustc_hash::FxHashMap::default();
            for (names, servers) in PRODUCTS {
                for name in *names {
                    map.entry(*name).or_default().push(*servers);
                }
            }
            map
        })
        .get(cue)
        .map_or(&[], Vec::as_slice)
}

/// Value kinds whose syntax belongs to one service (issue 31's third
/// round; see the tokeniser's value kinds): a query holding JQL is about
/// Jira, a Slack `ts` about Slack, a Stripe id about Stripe. Each kind
/// (as the tokeniser emits it) and the server names it stands for (as in
/// [`PRODUCTS`]). Sources: the languages' and APIs' own documentation
/// (Jira's JQL, Confluence's CQL, Salesforce's SOQL, Grafana's Prometheus
/// and Loki data sources, Datadog's metric queries, Slack's message
/// timestamps and search modifiers, Stripe's object ids, Redis's commands,
/// arXiv's identifiers, Gmail's, GitHub's and Sentry's search operators,
/// the `MongoDB` shell, AWS's ARNs, instance ids and regions, pip's and npm's
/// package specifiers, GitHub's and GitLab's references).
pub(crate) const KIND_SERVICES: &[(&str, &[&str])] = &[
    ("arxiv", &["arxiv"]),
    ("aws", &["aws"]),
    ("github", &["github"]),
    ("gitlab", &["gitlab"]),
    ("gmail", &["gmail"]),
    ("mongodb", &["mongodb"]),
    ("npm", &["npm", "npmregistry"]),
    ("pypi", &["pypi"]),
    ("sentry", &["sentry"]),
    ("cql", &["confluence"]),
    ("datadog", &["datadog"]),
    ("jql", &["jira"]),
    ("logql", &["grafana", "loki"]),
    ("promql", &["grafana", "prometheus"]),
    ("python", &["python", "pythonsandbox"]),
    ("redis", &["redis"]),
    ("slack", &["slack"]),
    ("soql", &["salesforce"]),
    ("stripe", &["stripe"]),
];

/// Value kinds that imply a service less surely than [`KIND_SERVICES`]
/// (a path of this machine, `~/notes/a.txt`, is most often the file
/// system's, but git and the shell take paths too): they boost it as an
/// implied service (see `SearchIndex::explain`), when the query names none.
pub(crate) const KIND_IMPLIES: &[(&str, &[&str])] = &[("local", &["filesystem"])];

/// Calls `emit` with the service words of each URL-like word of `query`:
/// the scheme of `scheme://` (not `http`, `https`, `file`), and the labels
/// of the host, without `www` and the public suffix (`github.com` →
/// `github`; `acme.atlassian.net` → `acme`, `atlassian`), lower case.
pub(crate) fn url_words(query: &str, mut emit: impl FnMut(&str)) {
    for word in query.split_whitespace() {
        let word = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '/' && c != ':');
        let lower = word.to_ascii_lowercase();
        let (scheme, rest) = match lower.split_once("://") {
            Some((s, r)) => (Some(s), r),
            None => (None, lower.as_str()),
        };
        if let Some(s) = scheme
            && !matches!(s, "http" | "https" | "file" | "ftp")
            && s.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            emit(s);
        }
        let host = rest.split(['/', '?', '#', ':']).next().unwrap_or("");
        if scheme.is_none() && !host.contains('.') {
            continue;
        }
        // A known public suffix (not the wildcard rule), and not a file
        // name (`report.md`: `.md` is a country's domain too).
        let Some(suffix) = psl::suffix(host.as_bytes()).filter(psl::Suffix::is_known) else {
            continue;
        };
        let Ok(suffix) = std::str::from_utf8(suffix.as_bytes()) else {
            continue;
        };
        if suffix == host
            || !host.ends_with(suffix)
            || (scheme.is_none() && super::tokenizer::is_file_name(host))
        {
            continue;
        }
        let labels = &host[..host.len() - suffix.len()];
        for label in labels.split('.').filter(|l| !l.is_empty() && *l != "www") {
            if label
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && label.bytes().any(|b| b.is_ascii_alphabetic())
            {
                emit(label);
            }
        }
    }
}

/// The server of a tool name: the part before `__`, lower case, or `None`.
pub(crate) fn server_of(name: &str) -> Option<&str> {
    name.split_once("__")
        .map(|(s, _)| s)
        .filter(|s| !s.is_empty())
}

/// The keys a server answers to: its name with `_` and `-` removed, and
/// its first word (`outlook_calendar` → `outlookcalendar`, `outlook`).
pub(crate) fn server_keys(server: &str) -> Vec<String> {
    let lower = server.to_ascii_lowercase();
    let joined: String = lower.chars().filter(|c| *c != '_' && *c != '-').collect();
    let first = lower.split(['_', '-']).next().unwrap_or("").to_owned();
    let mut keys = vec![joined];
    if !first.is_empty() && first != keys[0] {
        keys.push(first);
    }
    keys
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(q: &str) -> Vec<String> {
        let mut out = Vec::new();
        url_words(q, |w| out.push(w.to_owned()));
        out
    }

    #[test]
    fn urls_name_their_services() {
        assert_eq!(words("copy gs://logs/a.txt here"), ["gs"]);
        assert_eq!(words("ls s3://bucket/key"), ["s3"]);
        assert_eq!(words("see https://github.com/acme/web/pull/3"), ["github"]);
        assert_eq!(
            words("acme.atlassian.net/browse/OPS-1"),
            ["acme", "atlassian"]
        );
        assert_eq!(words("www.youtube.com/watch?v=1"), ["youtube"]);
        assert!(words("version 1.2.3 and report.md, e.g. this").is_empty());
    }

    #[test]
    fn servers_and_their_keys() {
        assert_eq!(server_of("github__create_issue"), Some("github"));
        assert_eq!(server_of("read_file"), None);
        assert_eq!(
            server_keys("outlook_calendar"),
            ["outlookcalendar", "outlook"]
        );
        assert_eq!(server_keys("github"), ["github"]);
    }
}
