//! The jargon of developer tooling: words people type for what tools call
//! by another name (issue 31's tuning round).
//!
//! A query word on the left of an entry also looks for the words on the
//! right, at [`JARGON_WEIGHT`](super::tokenizer::JARGON_WEIGHT) of its own
//! weight ([`Origin::Jargon`](super::Origin::Jargon), a strong match: the
//! query said the thing, in the trade's word for it). One way only: a query
//! for "directory" is not widened to `mkdir`. Words are written plainly and
//! stemmed like everything else.
//!
//! Every entry says where its meaning comes from: the one-line purpose of a
//! POSIX utility or of a git, Docker or kubectl subcommand in its manual,
//! the expansion of a common abbreviation, or the product a query
//! language or nickname belongs to. The list is written from that general
//! vocabulary, not from evaluation queries; it is data, so adding a term
//! is adding a line (with its reason).

/// One entry: the words a query may use, the words tools use for the
/// same thing, and where the meaning comes from.
pub(crate) struct Jargon {
    /// Words as a query writes them (lower case).
    pub(crate) cues: &'static [&'static str],
    /// Words a tool's text uses for the same thing.
    pub(crate) means: &'static [&'static str],
    /// Where the meaning comes from (documentation of the table; not used at run time).
    #[allow(
        dead_code,
        reason = "the table's documentation, kept next to each entry"
    )]
    pub(crate) source: &'static str,
}

const fn j(
    cues: &'static [&'static str],
    means: &'static [&'static str],
    source: &'static str,
) -> Jargon {
    Jargon {
        cues,
        means,
        source,
    }
}

/// The lexicon (see the [module docs](self)).
pub(crate) const JARGON: &[Jargon] = &[
    // POSIX utilities and common shell commands: their manual's purpose line.
    j(
        &["ls", "ll"],
        &["list", "directory"],
        "ls(1): list directory contents",
    ),
    j(&["cp"], &["copy", "file"], "cp(1): copy files"),
    j(
        &["mv"],
        &["move", "rename", "file"],
        "mv(1): move (rename) files",
    ),
    j(
        &["mkdir"],
        &["create", "directory"],
        "mkdir(1): make directories",
    ),
    j(
        &["rmdir"],
        &["delete", "directory"],
        "rmdir(1): remove empty directories",
    ),
    j(&["rm"], &["delete", "file"], "rm(1): remove files"),
    j(
        &["touch"],
        &["create", "file"],
        "touch(1): create a file that does not exist",
    ),
    j(&["cat"], &["read", "file"], "cat(1): print files"),
    j(
        &["tail"],
        &["log", "read"],
        "tail(1) -f: follow a log's last lines",
    ),
    j(
        &["grep", "rg", "ack"],
        &["search", "content"],
        "grep(1): search file contents",
    ),
    j(
        &["ps", "pgrep", "htop"],
        &["process", "list"],
        "ps(1): report processes",
    ),
    j(
        &["pkill", "killall"],
        &["kill", "process"],
        "pkill(1): signal processes",
    ),
    j(
        &["curl", "wget"],
        &["fetch", "http", "request", "url"],
        "curl(1): transfer a URL",
    ),
    j(
        &["chmod", "chown"],
        &["permission"],
        "chmod(1): change file permissions",
    ),
    j(
        &["df", "du"],
        &["disk", "usage", "size"],
        "df(1), du(1): disk space used",
    ),
    // git porcelain (git(1) and its subcommands' manuals).
    j(
        &["unstage"],
        &["reset", "staged"],
        "git reset: unstage staged changes",
    ),
    j(
        &["shelve"],
        &["stash"],
        "git stash: shelve work in progress",
    ),
    j(
        &["upstream"],
        &["pull", "remote"],
        "git pull: integrate the upstream branch",
    ),
    j(
        &["sync"],
        &["pull"],
        "bringing a branch in sync with its remote is git pull",
    ),
    // Docker, Compose, Helm and kubectl.
    j(
        &["spin", "boot"],
        &["create", "start", "run"],
        "spin up / boot: create and start",
    ),
    j(
        &["compose"],
        &["docker"],
        "Compose is Docker's multi-container tool",
    ),
    j(
        &["charts", "chart"],
        &["helm", "release"],
        "Helm installs charts as releases",
    ),
    j(
        &["installed"],
        &["list"],
        "what is installed is what a list shows",
    ),
    // Slang for delete, call, create.
    j(
        &["nuke", "wipe", "bin", "trash", "zap", "scrap", "ditch"],
        &["delete", "remove"],
        "common slang for deleting",
    ),
    j(
        &["cut"],
        &["create"],
        "cut a release / a branch: create one",
    ),
    j(
        &["ring", "dial"],
        &["call", "phone"],
        "ring / dial someone: phone them",
    ),
    j(
        &["fare", "fares", "airfare"],
        &["flight", "price"],
        "a fare is the price of a ticket",
    ),
    // Operations slang (issue 31's second round).
    j(
        &["bounce"],
        &["restart"],
        "bounce a server or service: restart it (sysadmin slang)",
    ),
    j(
        &["crashloop", "crashlooping", "crashloopbackoff"],
        &["pod", "restart"],
        "CrashLoopBackOff: Kubernetes's state of a pod whose container keeps restarting",
    ),
    j(
        &["tunnel", "tunnels"],
        &["port", "forward"],
        "an SSH or kubectl tunnel is a port forward (ssh -L, kubectl port-forward)",
    ),
    j(
        &["dangling"],
        &["prune", "unused"],
        "docker image prune: removes dangling (untagged, unused) images",
    ),
    j(
        &["snooze", "silence", "silenced"],
        &["mute", "ignore"],
        "snoozing or silencing an alert mutes it (Alertmanager silences, PagerDuty snooze)",
    ),
    j(
        &["flush", "invalidate", "invalidation"],
        &["purge", "cache"],
        "a CDN cache is flushed, invalidated or purged (CloudFront invalidations, Fastly purge)",
    ),
    j(
        &["edge", "cdn"],
        &["cdn", "cache"],
        "edge servers are a CDN's caches",
    ),
    j(
        &["sunset", "discontinue"],
        &["cancel", "end"],
        "sunset a plan or product: end it",
    ),
    j(
        &["reassign", "delegate", "handover", "handoff"],
        &["assign"],
        "hand over work: assign it to someone else",
    ),
    j(
        &["popup", "popups", "modal", "modals"],
        &["dialog"],
        "a page's pop-up (alert, confirm, prompt) is a dialog (HTML's dialogs, MDN)",
    ),
    j(&["jot"], &["append", "note"], "jot down: add a short note"),
    // Abbreviations of the field.
    j(
        &["aqi"],
        &["air", "quality"],
        "AQI: Air Quality Index (US EPA)",
    ),
    j(
        &["ohlc"],
        &["price", "history", "stock"],
        "OHLC: open, high, low and close prices of a period",
    ),
    j(&["col", "cols"], &["column"], "abbreviation of column"),
    j(&["idx"], &["index"], "abbreviation of index"),
    j(&["tbl", "tbls"], &["table"], "abbreviation of table"),
    j(
        &["opp", "opps", "oppty"],
        &["opportunity", "deal"],
        "CRM shorthand for an opportunity",
    ),
    j(
        &["fx"],
        &["currency", "exchange", "rate"],
        "FX: foreign exchange",
    ),
    j(
        &["eta"],
        &["travel", "time", "distance"],
        "ETA: estimated time of arrival",
    ),
    j(&["a11y"], &["accessibility"], "numeronym of accessibility"),
    j(
        &["i18n"],
        &["translate", "language"],
        "numeronym of internationalisation",
    ),
    j(
        &["xhr", "ajax"],
        &["network", "request"],
        "XMLHttpRequest: a page's network request",
    ),
    j(
        &["sast"],
        &["code", "scanning", "static", "analysis"],
        "SAST: static application security testing",
    ),
    j(
        &["gha"],
        &["github", "actions", "workflow"],
        "GHA: GitHub Actions",
    ),
    j(
        &["cve", "cves", "vuln", "vulns"],
        &["vulnerability", "security"],
        "CVE: a published vulnerability",
    ),
    j(
        &["cert", "certs"],
        &["certificate"],
        "abbreviation of certificate",
    ),
    j(
        &["stats"],
        &["statistics", "metric"],
        "abbreviation of statistics",
    ),
    j(&["perf"], &["performance"], "abbreviation of performance"),
    j(&["fmt"], &["format"], "abbreviation of format"),
    j(&["proj", "projs"], &["project"], "abbreviation of project"),
    j(
        &["env", "envs"],
        &["environment", "variable"],
        "env var: environment variable",
    ),
    // Time zones written as their abbreviations (tz database).
    j(
        &[
            "utc", "gmt", "pst", "pdt", "est", "edt", "cst", "cdt", "mst", "mdt", "cet", "cest",
            "bst", "ist", "jst", "aest",
        ],
        &["timezone", "time", "convert"],
        "time zone abbreviations of the tz database",
    ),
    // Query languages and libraries, and the product they belong to.
    j(
        &["jql"],
        &["jira", "search", "issue"],
        "JQL: Jira Query Language",
    ),
    j(
        &["soql"],
        &["salesforce", "query"],
        "SOQL: Salesforce Object Query Language",
    ),
    j(
        &["promql"],
        &["prometheus", "query"],
        "PromQL: Prometheus's query language",
    ),
    j(
        &["logql"],
        &["loki", "log"],
        "LogQL: Grafana Loki's query language",
    ),
    j(
        &["numpy", "pandas", "scipy", "matplotlib"],
        &["python", "execute", "code"],
        "Python libraries: code to run in Python",
    ),
    // Issue 31's third round: whole classes of the trade's vocabulary.
    // kubectl's short names of resources (`kubectl api-resources`), those
    // that are no English word.
    j(
        &["hpa", "hpas"],
        &["autoscaler", "scale", "replicas"],
        "kubectl api-resources: hpa = HorizontalPodAutoscaler",
    ),
    j(
        &["pvc", "pvcs"],
        &["persistent", "volume", "claim"],
        "kubectl api-resources: pvc = PersistentVolumeClaim",
    ),
    j(
        &["sts"],
        &["statefulset"],
        "kubectl api-resources: sts = StatefulSet",
    ),
    j(
        &["crd", "crds"],
        &["custom", "resource", "definition"],
        "kubectl api-resources: crd = CustomResourceDefinition",
    ),
    j(
        &["netpol", "netpols"],
        &["network", "policy"],
        "kubectl api-resources: netpol = NetworkPolicy",
    ),
    j(
        &["wip"],
        &["stash", "uncommitted", "changes"],
        "git-stash(1): a stash entry is named \"WIP on <branch>\"; WIP = work in progress",
    ),
    // Issue trackers' verbs for opening a ticket.
    j(
        &["raise", "lodge", "filea", "filean"],
        &["create", "open"],
        "issue trackers: raise / lodge / file a ticket = open one (GitHub Docs: file an issue)",
    ),
    j(
        &["headline", "headlines"],
        &["news"],
        "dictionary: headlines = the main news",
    ),
    j(
        &["advisory", "advisories"],
        &["security", "vulnerability", "alert"],
        "GitHub Advisory Database: a security advisory reports a vulnerability",
    ),
    j(
        &["postpone", "postponed", "pushback"],
        &["reschedule", "due", "update"],
        "dictionary: postpone / push back = move to a later time",
    ),
    // Air pollutants of air quality indices (US EPA AQI: ozone, PM2.5,
    // PM10, CO, SO2, NO2); `PM2.5` is split at the `.`.
    j(
        &[
            "pm2",
            "pm25",
            "pm10",
            "ozone",
            "no2",
            "so2",
            "smog",
            "pollution",
            "pollutant",
        ],
        &["air", "quality"],
        "US EPA Air Quality Index: its pollutants",
    ),
    // Abbreviations common in code and in spreadsheets' column names.
    j(&["cnt"], &["count"], "abbreviation of count"),
    j(&["qty"], &["quantity"], "abbreviation of quantity"),
    j(&["amt"], &["amount"], "abbreviation of amount"),
    j(&["avg"], &["average"], "abbreviation of average"),
    j(
        &["pwd", "passwd"],
        &["password"],
        "abbreviation of password",
    ),
    j(&["addr"], &["address"], "abbreviation of address"),
    j(&["btn"], &["button"], "abbreviation of button"),
    j(
        &["attr", "attrs"],
        &["attribute"],
        "abbreviation of attribute",
    ),
    j(&["err", "errs"], &["error"], "abbreviation of error"),
    j(&["resp"], &["response"], "abbreviation of response"),
];
