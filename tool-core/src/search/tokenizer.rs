//! Tokens of tool names, descriptions and queries for the search index.
//!
//! One tokeniser serves documents and queries alike, so a word is written the
//! same way on both sides:
//!
//! 1. split at every character that is not a letter or digit (so `_`, `-`,
//!    `__`, `.`, `/` and spaces all separate words) and at camelCase
//!    boundaries (`createPullRequest` → `create`, `pull`, `request`;
//!    `HTTPServer` → `http`, `server`);
//! 2. lower-case;
//! 3. drop a short list of English function words ("the", "a", "to", ...)
//!    that carry no meaning for finding a tool, and single letters;
//! 4. stem with the Snowball English stemmer (Porter2, the `rust-stemmers`
//!    crate): `issues` → `issu`, `queries` → `queri`, `running` → `run`,
//!    `create`, `created` and `creating` → `creat`, so that singular and
//!    plural, and the forms of one verb, meet. Words with a non-ASCII letter
//!    and words over 40 bytes (cut there) are not stemmed; a handful of
//!    forms Porter2 splits from their base word are fixed
//!    ([`STEM_EXCEPTIONS`]: `adding` stays with `add`).
//!
//! A query that opens by asking for a tool ("find me a tool to ...") loses
//! that opening ([`strip_request_for_tools`]). It then gains, at lower
//! weights, words it did not write ([`query_terms`]; documents are never
//! expanded):
//!
//! - synonyms of generic tool words ([`SYNONYMS`]: delete / remove,
//!   folder / directory, issue / ticket, ...), both ways;
//! - the long forms of short ones ([`ALIASES`]: `k8s` → `kubernetes`,
//!   `PR` → `pull request`, `repo` → `repository`), one way;
//! - words of a tool domain that lead to the words tools describe
//!   themselves with ([`RELATED`]: `rain` → `weather`, `yen` → `currency`,
//!   `thumbs` → `reaction`), one way;
//! - neighbouring words written as one ([`compounds`]: `time zone` →
//!   `timezone`, `log in` → `login`);
//! - the kind of a value written in the query ([`value_kinds`]: a URL adds
//!   `url`, a path `file` and `path`, `OPS-77` `issue`, `+15551234567`
//!   `phone`).
//!
//! The query's payload (quoted text, file names, what a command rules
//! out; see [`split_payload`]) weighs [`PAYLOAD_WEIGHT`] rather than 1.0.

/// Function words left out of the index and of queries: they occur in most
/// descriptions and queries ("a tool to ... the ...") and find nothing; with
/// them the leftovers of contractions split at the apostrophe (`isn't` →
/// `isn`, `t`; `we'll` → `we`, `ll`).
pub(crate) const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "aren", "as", "at", "be", "by", "can",
    "couldn", "didn", "do", "does", "doesn", "don", "for", "from", "get", "hasn", "haven", "how",
    "i", "if", "in", "into", "is", "isn", "it", "its", "ll", "me", "my", "of", "on", "or", "our",
    "please", "should", "shouldn", "so", "some", "that", "the", "their", "them", "then", "there",
    "these", "this", "to", "tool", "up", "us", "use", "ve", "want", "was", "wasn", "we", "weren",
    "what", "when", "which", "will", "with", "would", "wouldn", "you", "your",
];

/// Groups of words that stand for one another in a query: generic verbs
/// and nouns of software tools (create / make / new, delete / remove,
/// folder / directory, issue / ticket, pull request / PR, ...). A query word
/// of a group also looks for the group's other words, at
/// [`SYNONYM_WEIGHT`] of its own weight; documents are not expanded.
/// Words are written plainly and stemmed like everything else.
const SYNONYMS: &[&[&str]] = &[
    &["create", "make", "new", "add"],
    &[
        "delete", "remove", "erase", "drop", "destroy", "discard", "purge", "rm",
    ],
    &["find", "search", "look", "lookup", "locate", "query"],
    &[
        "show", "get", "read", "view", "display", "print", "retrieve", "cat", "see", "fetch",
        "inspect",
    ],
    &["list", "enumerate", "ls", "all"],
    &[
        "update", "edit", "modify", "change", "replace", "set", "alter",
    ],
    &["send", "post", "write", "message", "notify"],
    &["download", "fetch", "pull", "retrieve", "clone"],
    &["upload", "push", "put", "publish"],
    &["copy", "duplicate", "clone"],
    &["move", "rename", "relocate", "reschedule"],
    &[
        "run", "execute", "exec", "start", "launch", "invoke", "trigger",
    ],
    &["stop", "kill", "halt", "terminate", "cancel", "abort"],
    &["folder", "directory", "dir"],
    &["file", "document", "doc"],
    &["issue", "ticket", "bug"],
    &["pr", "pull", "merge"],
    &["repository", "repo"],
    &["image", "picture", "photo", "screenshot", "screen"],
    &["email", "mail", "inbox"],
    &["meeting", "event", "appointment"],
    &["chat", "message", "dm", "conversation"],
    &["comment", "reply", "note", "respond"],
    &["label", "tag"],
    &["user", "person", "people", "member", "account"],
    &["database", "db", "table"],
    &["size", "big", "large", "metadata", "info"],
    &["content", "contents", "text", "inside", "body"],
    &["status", "state", "changed", "pending"],
    &["close", "resolve", "complete", "finish", "done"],
    &["save", "store", "persist"],
    &["detail", "details", "info", "information", "describe"],
    &["revert", "undo", "rollback", "reset"],
    &["restart", "rerun", "retry", "reload"],
    &["latest", "newest", "recent", "current"],
    &["install", "setup"],
    &["tree", "structure", "hierarchy"],
    &["star", "favorite", "favourite", "bookmark"],
];

/// Words of the tool domains that point at the words tools describe
/// themselves with: a query word on the left also looks for the words on
/// the right, at [`RELATED_WEIGHT`] (one way: a query for "weather" is not
/// widened to "rain"). Written from the general vocabulary of each domain
/// (what people call the things a kind of tool works on: weather, money,
/// maps, calendars, chat, incidents, clusters, ...), not from the
/// evaluation queries. Stemmed like everything else.
const RELATED: &[(&[&str], &[&str])] = &[
    // Weather.
    (
        &[
            "rain",
            "raining",
            "rainy",
            "snow",
            "snowing",
            "sunny",
            "umbrella",
            "temperature",
            "degrees",
            "humidity",
            "humid",
            "windy",
            "storm",
            "cloudy",
            "celsius",
            "fahrenheit",
        ],
        &["weather", "forecast"],
    ),
    // Money and markets.
    (
        &[
            "euro", "euros", "dollar", "dollars", "yen", "pound", "sterling", "usd", "eur", "gbp",
            "jpy", "chf", "franc", "rupee", "yuan", "peso", "forex",
        ],
        &["currency", "exchange", "rate", "convert"],
    ),
    (
        &["ticker", "trading", "nasdaq", "nyse", "equity"],
        &["stock", "quote", "price"],
    ),
    (&["bill", "bills", "billing"], &["invoice", "payment"]),
    (&["buyer"], &["customer", "contact"]),
    (&["spend", "spending", "costs"], &["cost"]),
    // Languages.
    (
        &[
            "english",
            "spanish",
            "french",
            "german",
            "portuguese",
            "italian",
            "japanese",
            "chinese",
            "korean",
            "russian",
            "arabic",
            "dutch",
            "hindi",
            "polish",
            "turkish",
            "swedish",
        ],
        &["translate", "language"],
    ),
    // Phones, chat and mail.
    (&["sms", "texting", "phone"], &["sms", "call", "phone"]),
    (&["emoji", "react", "thumbs"], &["reaction", "emoji"]),
    (&["thread", "replies"], &["thread", "reply"]),
    // Maps and travel.
    (
        &[
            "driving", "walking", "commute", "far", "travel", "km", "miles",
        ],
        &["directions", "distance", "route"],
    ),
    (
        &[
            "train", "bus", "subway", "metro", "tram", "transit", "ferry", "bike", "cycling",
        ],
        &["directions", "route", "transit"],
    ),
    (&["altitude"], &["elevation"]),
    (
        &["nearby", "restaurant", "restaurants", "cafe", "hotel"],
        &["place", "local"],
    ),
    (
        &[
            "plane",
            "fly",
            "flying",
            "airline",
            "airport",
            "departure",
            "arrival",
            "landed",
        ],
        &["flight"],
    ),
    (&["timezone", "clock"], &["time", "timezone"]),
    // Calendars and tasks.
    (
        &[
            "appointment",
            "reschedule",
            "agenda",
            "availability",
            "busy",
            "booked",
        ],
        &["event", "calendar", "meeting"],
    ),
    (&["reminder", "remind", "chore"], &["task"]),
    // Web.
    (
        &["online", "internet", "web", "website"],
        &["web", "search"],
    ),
    (&["headline", "headlines", "news"], &["news"]),
    (&["webpage", "website", "site", "url"], &["page", "url"]),
    (&["button", "tap"], &["click"]),
    (&["viewport", "width", "height"], &["resize", "viewport"]),
    // Incidents, errors, monitoring.
    (
        &["outage", "downtime", "paging", "oncall", "escalate"],
        &["incident", "oncall"],
    ),
    (
        &["crash", "crashes", "exception", "stacktrace", "traceback"],
        &["error", "exception", "issue"],
    ),
    (
        &["cpu", "latency", "throughput", "usage"],
        &["metric", "usage"],
    ),
    (&["deploy", "ship", "rollout"], &["deployment", "deploy"]),
    // Code hosting and git.
    (
        &["uncommitted", "unstaged", "staged", "dirty"],
        &["status", "diff", "change"],
    ),
    (
        &["ci", "pipeline", "actions"],
        &["workflow", "pipeline", "run"],
    ),
    // Generic questions and things.
    (&["many", "total", "tally"], &["count", "number"]),
    (&["exist", "available"], &["list"]),
    (&["history", "past", "earlier"], &["history", "log"]),
    (
        &["difference", "differences", "changes", "changed"],
        &["diff", "compare", "change"],
    ),
    (
        &["output", "stdout", "stderr", "console"],
        &["log", "output"],
    ),
    (
        &["env", "secret", "secrets"],
        &["environment", "variable", "config"],
    ),
    (
        &["permission", "permissions", "access"],
        &["share", "permission", "policy"],
    ),
    (
        &["coordinates", "latitude", "longitude", "lat", "lng", "gps"],
        &["geocode", "location", "coordinates"],
    ),
    (&["expire", "expiry", "expiration"], &["ttl", "expire"]),
    (&["now", "currently", "moment"], &["current"]),
    (&["lead", "prospect"], &["contact", "deal"]),
    (&["opportunity"], &["deal"]),
    (&["purchase", "purchases", "bought"], &["order"]),
    (&["sku", "merchandise"], &["product"]),
    (&["coupon", "promo", "voucher"], &["discount", "code"]),
    (&["reimburse", "chargeback"], &["refund", "dispute"]),
    (&["recurring"], &["subscription"]),
    (&["funds", "money"], &["balance"]),
    (&["mtg", "appt"], &["meeting", "event", "appointment"]),
    (
        &["auth", "creds", "login"],
        &["authentication", "credentials", "token"],
    ),
    (&["settings"], &["config", "configuration"]),
    (&["sql"], &["query", "database"]),
    // Documents, notes and knowledge.
    (&["wiki", "kb"], &["page", "space", "article"]),
    (&["encyclopedia"], &["wikipedia", "article"]),
    (
        &["spreadsheet", "sheet", "excel", "cells"],
        &["spreadsheet", "range", "row"],
    ),
    (&["notebook", "vault"], &["note"]),
    (
        &["remember", "recall", "knowledge", "fact", "facts"],
        &["memory", "observation", "entity"],
    ),
    (
        &["paper", "papers", "preprint", "research"],
        &["paper", "arxiv"],
    ),
    // Media.
    (
        &["song", "songs", "music", "album", "artist"],
        &["play", "track", "playlist"],
    ),
    (&["video", "clip"], &["video"]),
    (&["captions", "subtitles"], &["transcript"]),
    (
        &["draw", "illustration", "logo", "art"],
        &["image", "generate"],
    ),
    // Packages and shells.
    (
        &["library", "libraries", "dependency", "module", "crate"],
        &["package"],
    ),
    (&["terminal", "bash"], &["command", "shell"]),
    (&["pid", "process", "processes"], &["process"]),
];

/// Short forms and nicknames that mean exactly their long form (`k8s` is
/// Kubernetes, `repo` a repository, `PR` a pull request): a query word on
/// the left also looks for the words on the right, at [`ALIAS_WEIGHT`]
/// (one way). Stemmed like everything else.
const ALIASES: &[(&[&str], &[&str])] = &[
    (&["pr", "prs"], &["pull", "request"]),
    (&["mr", "mrs"], &["merge", "request"]),
    (&["dm", "dms"], &["direct", "message"]),
    (&["repo", "repos"], &["repository"]),
    (&["dir", "dirs"], &["directory"]),
    (&["db", "dbs"], &["database"]),
    (&["msg", "msgs"], &["message"]),
    (&["img", "imgs", "pic", "pics"], &["image"]),
    (&["vid", "vids"], &["video"]),
    (&["txn", "txns"], &["transaction"]),
    (&["acct", "accts"], &["account"]),
    (&["org", "orgs"], &["organization", "organisation"]),
    (&["pkg", "pkgs"], &["package"]),
    (&["deps"], &["dependency"]),
    (&["ns"], &["namespace"]),
    (&["svc"], &["service"]),
    (&["desc"], &["description"]),
    (&["tz"], &["timezone"]),
    (&["cfg", "conf"], &["config", "configuration"]),
    (&["kubectl", "k8s", "kube"], &["kubernetes"]),
    (&["mongo"], &["mongodb"]),
    (&["psql", "pg", "postgresql"], &["postgres"]),
    (&["gh"], &["github"]),
    (&["gl"], &["gitlab"]),
    (&["yt"], &["youtube"]),
    // HTTP over TLS is HTTP (RFC 9110 §4.2.2).
    (&["https"], &["http"]),
];

/// Weight of the words a jargon word stands for (see
/// [`jargon`](super::jargon): `mkdir` → create directory, `unstage` → reset).
pub(crate) const JARGON_WEIGHT: f32 = 0.7;
/// Weight of a synonym relative to the query word it came from.
pub(crate) const SYNONYM_WEIGHT: f32 = 0.4;
/// Weight of the long form of a short one (see [`ALIASES`]).
pub(crate) const ALIAS_WEIGHT: f32 = 0.7;
/// Weight of a related domain word (see [`RELATED`]).
pub(crate) const RELATED_WEIGHT: f32 = 0.4;
/// Weight of two neighbouring query words written as one (see [`compounds`]).
pub(crate) const COMPOUND_WEIGHT: f32 = 0.7;
/// Weight of the kind word of a value the query holds (see [`value_kinds`]).
pub(crate) const VALUE_KIND_WEIGHT: f32 = 0.4;
/// Weight of the kind words of values whose form leaves no doubt about
/// the thing ([`CLEAR_KINDS`]: a `gs://` URL is a bucket's object,
/// `nginx:1.25` an image, `48.85,2.35` coordinates): 0.7, as a long form.
pub(crate) const CLEAR_KIND_WEIGHT: f32 = 0.7;
/// Weight of the name of a query language the query is written in
/// ([`LANGUAGE_KINDS`], recognised by its syntax): 1.0, as a word the
/// query wrote. A query that is a JQL filter asks for the tool that runs
/// JQL; its field names and values (`project`, `status`) say what to
/// filter, not which tool (issue 31's third round).
pub(crate) const LANGUAGE_KIND_WEIGHT: f32 = 1.0;
/// The query languages [`value_kinds`] names at [`LANGUAGE_KIND_WEIGHT`].
const LANGUAGE_KINDS: &[&str] = &["cql", "jql", "logql", "promql", "soql"];
/// The kind words [`value_kinds`] gives at [`CLEAR_KIND_WEIGHT`].
const CLEAR_KINDS: &[&str] = &[
    "bucket",
    "object",
    "port",
    "image",
    "latitude",
    "longitude",
    "coordinates",
    "promql",
    "prometheus",
    "logql",
    "loki",
    "jql",
    "cql",
    "sql",
    "redis",
    "arxiv",
    "paper",
    "stock",
    "soql",
    "datadog",
    "slack",
    "stripe",
    "timezone",
    "translate",
    "python",
    "gmail",
    "github",
    "gitlab",
    "sentry",
    "mongodb",
    "aws",
    "pypi",
    "npm",
    "range",
];

/// The query's terms with weights: each distinct token at 1.0 (after a
/// leading request for a tool is cut, see [`strip_request_for_tools`]); the
/// synonyms of each (see [`SYNONYMS`]) at [`SYNONYM_WEIGHT`]; the long forms
/// of short ones (see [`ALIASES`]) at [`ALIAS_WEIGHT`]; related domain
/// words (see [`RELATED`]) at [`RELATED_WEIGHT`]; neighbouring words
/// written as one (see [`compounds`]) at [`COMPOUND_WEIGHT`]; and the kind words
/// of values written in the query (see [`value_kinds`]) at
/// [`VALUE_KIND_WEIGHT`]. A word reached several ways keeps its highest
/// weight.
#[cfg(test)]
pub(crate) fn query_terms(query: &str) -> Vec<QueryTerm> {
    query_terms_with(query, true)
}

/// [`query_terms`], with the [`jargon`](super::jargon) lexicon's
/// meanings at [`JARGON_WEIGHT`] when `jargon` is set (the default
/// [`Signals`](super::Signals); off to measure what it adds).
pub(crate) fn query_terms_with(query: &str, jargon: bool) -> Vec<QueryTerm> {
    let (intent, payload) = split_payload(strip_request_for_tools(query));
    let mut own: Vec<(String, f32, Origin)> = tokens(&intent)
        .into_iter()
        .map(|t| (t, 1.0, Origin::Query))
        .collect();
    own.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    own.dedup_by(|a, b| a.0 == b.0);
    let mut aside = tokens(&payload);
    aside.sort_unstable();
    aside.dedup();
    aside.retain(|t| own.binary_search_by(|o| o.0.as_str().cmp(t)).is_err());
    own.extend(
        aside
            .into_iter()
            .map(|t| (t, PAYLOAD_WEIGHT, Origin::Payload)),
    );
    let mut terms: Vec<QueryTerm> = own
        .iter()
        .map(|(t, weight, origin)| QueryTerm {
            term: t.clone(),
            weight: *weight,
            origin: *origin,
        })
        .collect();
    let mut add =
        |w: &str, weight: f32, origin: Origin| match terms.iter_mut().find(|q| q.term == w) {
            Some(had) => {
                if weight > had.weight {
                    had.weight = weight;
                    had.origin = origin;
                }
            }
            None => terms.push(QueryTerm {
                term: w.to_owned(),
                weight,
                origin,
            }),
        };
    let expansions = expansions();
    let jargon = jargon.then(jargon_expansions);
    for (t, own_weight, _) in &own {
        let more = [Some(expansions), jargon]
            .into_iter()
            .flatten()
            .filter_map(|map| map.get(t.as_str()))
            .flatten();
        for (w, weight, origin) in more {
            add(w, weight * own_weight, *origin);
        }
    }
    let mut joined: Vec<String> = Vec::new();
    compounds(query, |c| {
        add(c, COMPOUND_WEIGHT, Origin::Compound);
        joined.push(c.to_owned());
    });
    // A phrasal verb or compound written in two words (`look up`, `roll
    // back`, `spin up`, `hand over`) means what its one-word form means:
    // the tables' entries for the joined form apply, at their own weights
    // times the compound's.
    for c in &joined {
        let more = [Some(expansions), jargon]
            .into_iter()
            .flatten()
            .filter_map(|map| map.get(c.as_str()))
            .flatten();
        for (w, weight, origin) in more {
            add(w, weight * COMPOUND_WEIGHT, *origin);
        }
    }
    value_kinds(query, |kind| {
        let weight = if LANGUAGE_KINDS.contains(&kind) {
            LANGUAGE_KIND_WEIGHT
        } else if CLEAR_KINDS.contains(&kind) {
            CLEAR_KIND_WEIGHT
        } else {
            VALUE_KIND_WEIGHT
        };
        let mut k = kind.to_owned();
        stem(&mut k);
        add(&k, weight, Origin::ValueKind);
    });
    // The syntax words of a query language the query is written in
    // (`project`, `status`, `ORDER BY` in JQL; `SELECT … WHERE` in SQL)
    // say how to filter, not which tool: they weigh as payload.
    let languages: Vec<&str> = ["jql", "cql", "sql", "soql"]
        .into_iter()
        .filter(|l| {
            terms
                .iter()
                .any(|t| t.origin == Origin::ValueKind && t.term == *l)
        })
        .collect();
    if !languages.is_empty() {
        let syntax = |w: &str| {
            languages.iter().any(|l| {
                let fields: &[&str] = match *l {
                    "jql" => JQL_FIELDS,
                    "cql" => CQL_FIELDS,
                    _ => SQL_KEYWORDS,
                };
                fields
                    .iter()
                    .chain(if *l == "jql" || *l == "cql" {
                        FILTER_KEYWORDS
                    } else {
                        &[]
                    })
                    .any(|f| {
                        let mut f = (*f).to_owned();
                        stem(&mut f);
                        f == w
                    })
            })
        };
        for t in terms.iter_mut() {
            if t.origin == Origin::Query && syntax(&t.term) {
                t.weight = PAYLOAD_WEIGHT;
                t.origin = Origin::Payload;
            }
        }
    }
    terms
}

/// The query's own words as [`query_terms_with`] reads them, each as
/// written (lower case) and stemmed, in query order (with repeats); the
/// typo signal looks an unknown word up both ways (see `typo.rs`).
pub(crate) fn query_words(query: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let (intent, _) = split_payload(strip_request_for_tools(query));
    for word in intent
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        camel_parts(word, |part| {
            let lower = acronym_singular(part).to_lowercase();
            if lower.len() < 2 || STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
                return;
            }
            let mut stemmed = lower.clone();
            stem(&mut stemmed);
            out.push((lower, stemmed));
        });
    }
    out
}

/// Weight of a word the query wrote as payload rather than as its request
/// (see [`split_payload`]): quoted text, and what a negation rules out.
pub(crate) const PAYLOAD_WEIGHT: f32 = 0.3;

/// Most words a negation rules out (see [`split_payload`]): 2.
const NEGATION_SCOPE: usize = 2;

/// Words that rule out what follows them (`without pulling`, `no
/// cleanup`, `skipping the backups`), lower case, sorted; `do not` and
/// `don't` too (see [`split_payload`]).
const NEGATIONS: &[&str] = &[
    "except",
    "excluding",
    "never",
    "no",
    "skip",
    "skipping",
    "without",
];

/// `query` cut in two (issue 31's third round): the request itself, and
/// its payload, each with the other's bytes blanked out (so byte offsets
/// agree). The payload is
///
/// - quoted text: between `"…"`, `“…”`, `` `…` ``, or single quotes
///   `'…'` / `‘…’` that open after a non-letter and close before one (so
///   `today's` is no quote): the message to post, a name, a value;
/// - what a negation rules out: the next [`NEGATION_SCOPE`] words that
///   are not function words after `do not`, `don't`, `without`, `no`,
///   `skip(ping)`, `never`, `except`, `excluding`, up to the next
///   punctuation mark.
///
/// Its words say what to send or what not to do, not which tool to use
/// ("post 'server restart in 5 min'"; "queue it, do not send it now"), so
/// they weigh [`PAYLOAD_WEIGHT`]. When the payload holds every word of
/// the query, there is no payload (a query that is one quoted phrase is
/// its own request).
pub(crate) fn split_payload(query: &str) -> (std::borrow::Cow<'_, str>, String) {
    use std::borrow::Cow;
    let bytes = query.as_bytes();
    let mut payload = vec![false; bytes.len()];
    let mut any = false;
    // Only a query with a quote mark is read character by character.
    let quoted = query.contains(['"', '\'', '`', '“', '‘']);
    let chars: Vec<(usize, char)> = if quoted {
        query.char_indices().collect()
    } else {
        Vec::new()
    };
    let alnum_at = |i: usize| chars.get(i).is_some_and(|(_, c)| c.is_alphanumeric());
    let mut i = 0;
    while i < chars.len() {
        let (at, c) = chars[i];
        let close: Option<&[char]> = match c {
            '"' => Some(&['"']),
            '“' => Some(&['”', '"']),
            '`' => Some(&['`']),
            '\'' | '‘' if (i == 0 || !alnum_at(i - 1)) && alnum_at(i + 1) => Some(&['\'', '’']),
            _ => None,
        };
        if let Some(close) = close {
            let single = matches!(c, '\'' | '‘');
            let end = (i + 1..chars.len()).find(|&k| {
                close.contains(&chars[k].1) && (!single || (!alnum_at(k + 1) && k > i + 1))
            });
            if let Some(k) = end {
                let to = chars.get(k + 1).map_or(bytes.len(), |(b, _)| *b);
                payload[at..to].iter_mut().for_each(|p| *p = true);
                any = true;
                i = k + 1;
                continue;
            }
        }
        i += 1;
    }
    // File names and paths (`notes.txt`, `~/pics/a.jpg`): what to act on,
    // not how (their kind words come from `value_kinds`).
    let mut from = 0;
    for piece in query.split_inclusive(char::is_whitespace) {
        let at = from;
        from += piece.len();
        let word = piece.trim_end();
        let trimmed = word
            .trim_start_matches(['"', '\'', '(', '`'])
            .trim_end_matches(['"', '\'', ')', '`', ',', ';', '.', '?', '!', ':']);
        if trimmed.is_empty() || !trimmed.contains(['.', '/']) {
            continue;
        }
        let lower = trimmed.to_ascii_lowercase();
        if !lower.contains("://") && is_path(&lower) {
            payload[at..at + word.len()]
                .iter_mut()
                .for_each(|p| *p = true);
            any = true;
        }
    }
    // Negations: word by word, as runs of letters and digits.
    let mut scope = 0usize;
    let mut start = None;
    let mut prev_word = "";
    for (at, c) in query
        .char_indices()
        .chain(std::iter::once((bytes.len(), ' ')))
    {
        if c.is_alphanumeric() {
            start.get_or_insert(at);
            continue;
        }
        if let Some(from) = start.take() {
            let word = &query[from..at];
            // `not` and `n't` rule out only as commands (`do not`,
            // `don't`): elsewhere they describe a state the thing wanted
            // is in (`edits I haven't staged`, `PRs not merged`).
            let is = |a: &str, b: &str| a.eq_ignore_ascii_case(b);
            let negation = NEGATIONS.iter().any(|n| is(word, n))
                || (is(word, "not") && is(prev_word, "do"))
                || (is(word, "t") && query[..from].ends_with('\'') && is(prev_word, "don"));
            if negation {
                scope = NEGATION_SCOPE;
            } else if scope > 0
                && STOP_WORDS
                    .binary_search(&word.to_lowercase().as_str())
                    .is_err()
            {
                payload[from..at].iter_mut().for_each(|p| *p = true);
                any = true;
                scope -= 1;
            }
            prev_word = word;
        }
        if matches!(c, ',' | '.' | ';' | ':' | '!' | '?' | '(' | ')' | '—' | '–') {
            scope = 0;
        }
    }
    if !any {
        return (Cow::Borrowed(query), String::new());
    }
    let mut intent = String::with_capacity(query.len());
    let mut aside = String::with_capacity(query.len());
    for (at, c) in query.char_indices() {
        let (keep, blank) = if payload[at] {
            (&mut aside, &mut intent)
        } else {
            (&mut intent, &mut aside)
        };
        keep.push(c);
        (0..c.len_utf8()).for_each(|_| blank.push(' '));
    }
    if tokens(&intent).is_empty() {
        return (Cow::Borrowed(query), String::new());
    }
    (Cow::Owned(intent), aside)
}

/// Where a term of a query comes from (see the [module docs](super)); shown to hosts
/// by [`Explanation`](super::Explanation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Origin {
    /// A word the query wrote (stemmed).
    Query,
    /// A synonym of a generic tool word (weight 0.4).
    Synonym,
    /// The long form of a short one, `k8s` → kubernetes (weight 0.7).
    Alias,
    /// What a word of the trade's jargon stands for, `mkdir` → create
    /// directory, `unstage` → reset (weight 0.7; see the lexicon in
    /// `search/jargon.rs`).
    Jargon,
    /// A word of a tool domain a query word leads to, `rain` → weather (weight 0.4).
    Related,
    /// Two neighbouring query words written as one (weight 0.7).
    Compound,
    /// The kind of a value in the query, a URL → `url` (weight 0.4).
    ValueKind,
    /// The index word a misspelt query word is one edit from
    /// ([`TYPO_WEIGHT`](super::TYPO_WEIGHT), through `tool_rules::suggest`).
    Typo,
    /// An index word a clipped query word no tool has begins (`ack` →
    /// acknowledge, `cal` → calendar; at most
    /// [`PREFIX_MAX_TERMS`](super::PREFIX_MAX_TERMS) of them), weight
    /// [`PREFIX_WEIGHT`](super::PREFIX_WEIGHT) (issue 31's fifth round).
    Prefix,
    /// A word the query wrote as payload, not as its request: quoted text
    /// (a message to post, a name) or what a negation rules out ("do not
    /// send"); weight 0.3 (issue 31's third round).
    Payload,
}

impl Origin {
    /// Whether a match through this origin says the tool does what the
    /// query asked in the query's own words: the words themselves, their
    /// long forms, compounds and typo corrections. Synonyms, related words
    /// and value kinds alone make a weak match.
    pub fn is_strong(self) -> bool {
        matches!(
            self,
            Self::Query | Self::Alias | Self::Jargon | Self::Compound | Self::Typo | Self::Prefix
        )
    }
}

/// One term a query looks for, with its weight (1.0 for the query's own words).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct QueryTerm {
    pub(crate) term: String,
    pub(crate) weight: f32,
    pub(crate) origin: Origin,
}

/// Words that ask for a tool rather than say what it does, when they come
/// before the word "tool" ("find a tool that lists pods", "search tools
/// for sending SMS"): there they say nothing about the tool wanted, and
/// `find` / `search` would favour search tools.
const TOOL_REQUEST_WORDS: &[&str] = &[
    "discover",
    "find",
    "load",
    "locate",
    "look",
    "need",
    "recommend",
    "search",
    "suggest",
];

/// `query` from just after its first "tool" / "tools" when every word
/// before it is a function word or one of [`TOOL_REQUEST_WORDS`] ("find me
/// a tool to list pods" → " to list pods"); otherwise `query` itself.
fn strip_request_for_tools(query: &str) -> &str {
    let mut end = 0;
    for piece in query.split_inclusive(|c: char| !c.is_alphanumeric()) {
        end += piece.len();
        let word = piece.trim_end_matches(|c: char| !c.is_alphanumeric());
        if word.is_empty() {
            continue;
        }
        let word = word.to_lowercase();
        if word == "tool" || word == "tools" {
            // `end` is past the separator after the word: a character boundary.
            return &query[end..];
        }
        if STOP_WORDS.binary_search(&word.as_str()).is_err()
            && TOOL_REQUEST_WORDS.binary_search(&word.as_str()).is_err()
        {
            return query;
        }
    }
    query
}

/// Per stemmed query word, the words it also looks for and their weights
/// ([`SYNONYMS`], [`RELATED`] and [`ALIASES`], stemmed once).
fn expansions() -> &'static Expansions {
    static MAP: std::sync::OnceLock<Expansions> = std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        let stemmed = |w: &str| {
            let mut w = w.to_lowercase();
            stem(&mut w);
            w
        };
        let mut map: Expansions = rustc_hash::FxHashMap::default();
        let mut link = |from: String, to: String, weight: f32, origin: Origin| {
            if from == to {
                return;
            }
            let list = map.entry(from).or_default();
            match list.iter_mut().find(|(t, _, _)| *t == to) {
                Some((_, had, was)) => {
                    if weight > *had {
                        *had = weight;
                        *was = origin;
                    }
                }
                None => list.push((to, weight, origin)),
            }
        };
        for group in SYNONYMS {
            for a in *group {
                for b in *group {
                    link(stemmed(a), stemmed(b), SYNONYM_WEIGHT, Origin::Synonym);
                }
            }
        }
        for (table, weight, origin) in [
            (RELATED, RELATED_WEIGHT, Origin::Related),
            (ALIASES, ALIAS_WEIGHT, Origin::Alias),
        ] {
            for (cues, targets) in table {
                for a in *cues {
                    for b in *targets {
                        link(stemmed(a), stemmed(b), weight, origin);
                    }
                }
            }
        }
        map
    })
}

/// Per stemmed jargon word, what it stands for ([`jargon`](super::jargon),
/// stemmed once), at [`JARGON_WEIGHT`].
fn jargon_expansions() -> &'static Expansions {
    static MAP: std::sync::OnceLock<Expansions> = std::sync::OnceLock::new();
    MAP.get_or_init(|| {
        let stemmed = |w: &str| {
            let mut w = w.to_lowercase();
            stem(&mut w);
            w
        };
        let mut map: Expansions = rustc_hash::FxHashMap::default();
        for entry in super::jargon::JARGON {
            for a in entry.cues {
                let list = map.entry(stemmed(a)).or_default();
                for b in entry.means {
                    let b = stemmed(b);
                    if b != stemmed(a) && !list.iter().any(|(t, _, _)| *t == b) {
                        list.push((b, JARGON_WEIGHT, Origin::Jargon));
                    }
                }
            }
        }
        map
    })
}

/// Per stemmed word: the words it also looks for, their weights and origins.
type Expansions = rustc_hash::FxHashMap<String, Vec<(String, f32, Origin)>>;

/// Calls `emit` with each pair of neighbouring words of `query` written as
/// one and stemmed (`time zone` → `timezon`, `log in` → `login`,
/// `e-mail` → `email`), so that a compound meets its spaced or hyphenated
/// form; function words count here (`set up`), and joins shorter than 5
/// bytes are left out.
fn compounds(query: &str, mut emit: impl FnMut(&str)) {
    let mut prev = String::new();
    let mut joined = String::new();
    for word in query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        let lower = word.to_lowercase();
        if !prev.is_empty() && lower.chars().all(char::is_alphabetic) {
            joined.clear();
            joined.push_str(&prev);
            joined.push_str(&lower);
            if joined.len() >= 5 && joined.len() <= MAX_WORD {
                stem(&mut joined);
                emit(&joined);
            }
        }
        prev = if lower.chars().all(char::is_alphabetic) {
            lower
        } else {
            String::new()
        };
    }
}

/// Calls `emit` with the kind words of each value written in `query` that
/// has a recognisable form (the query says "open ~/notes/a.txt", the tool
/// says "file" or "path"):
///
/// | value | example | kind words |
/// |---|---|---|
/// | URL | `https://x.org/a`, `www.x.org` | `url`, `web` |
/// | e-mail address | `ann@example.com` | `email` |
/// | file path | `~/a`, `/tmp/a`, `./a`, `report.md` (a known file extension) | `file`, `path`; the extension, and `image` for a picture |
/// | `@name` | `@ann` | `user` |
/// | `#name` | `#general` | `channel` |
/// | issue key | `OPS-77` (upper-case letters, `-`, digits) | `issue` |
/// | phone number | `+15551234567` (`+` and 7 to 15 digits) | `phone`, `sms`, `number` |
/// | storage URL | `gs://b/a`, `s3://b/` (a scheme other than the web's) | `bucket`, `object` |
/// | a folder | a path or storage URL ending in `/` (`~/src/`, `gs://b/2024/`) | `list` |
/// | local address | `localhost:3000`, `127.0.0.1:8080` | `port` |
/// | image reference | `nginx:1.25`, `node:20-alpine` (a dotted version or a distro tag) | `image` |
/// | coordinates | `48.85,2.35`, `40.7484, -73.9857` (two decimals, latitude first) | `latitude`, `longitude`, `coordinates` |
///
/// | glob pattern | `*.toml`, `src/**/*.rs` | `pattern`, `file` |
/// | phone number written in groups | `+1 415 555 0100`, `+44 (20) 7946-0958` | `phone`, `sms`, `number` |
///
/// The last five rows of the first table came with issue 31's tuning round: values an agent
/// copies from a task (a bucket listing, a tunnel, an image to pull, a
/// point on a map) whose tools the query does not name.
fn value_kinds(query: &str, mut emit: impl FnMut(&str)) {
    if has_coordinates(query) {
        for k in ["latitude", "longitude", "coordinates"] {
            emit(k);
        }
    }
    query_language(query, &mut emit);
    if redis_command(query) {
        emit("redis");
    }
    code_and_notations(query, &mut emit);
    for word in query.split_whitespace() {
        if let Some(kinds) = id_kind(word) {
            kinds.iter().for_each(|k| emit(k));
            continue;
        }
        let word = word
            .trim_start_matches(['"', '\'', '(', '`'])
            .trim_end_matches(['"', '\'', ')', '`', ',', ';', '.', '?', '!', ':']);
        if word.is_empty() {
            continue;
        }
        let lower = word.to_ascii_lowercase();
        let folder = lower.len() > 1 && lower.ends_with('/');
        if let Some((scheme, _)) = lower.split_once("://")
            && !matches!(scheme, "http" | "https" | "file" | "ftp" | "ws" | "wss")
            && !scheme.is_empty()
            && scheme.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            for k in ["bucket", "object"] {
                emit(k);
            }
            if folder {
                emit("list");
            }
        } else if let Some(kind) = address_kind(&lower) {
            emit(kind);
        } else if lower.starts_with("http://")
            || lower.starts_with("https://")
            || lower.starts_with("www.")
        {
            for k in ["url", "web"] {
                emit(k);
            }
        } else if let Some((user, host)) = word.split_once('@') {
            if user.is_empty() {
                emit("user");
            } else if host.contains('.') {
                emit("email");
            }
        } else if let Some(rest) = word.strip_prefix('#') {
            if rest.starts_with(char::is_alphabetic) {
                emit("channel");
            }
        } else if let Some(digits) = word.strip_prefix('+') {
            if (7..=15).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit()) {
                for k in ["phone", "sms", "number"] {
                    emit(k);
                }
            }
        } else if is_glob(word) {
            for k in ["pattern", "file"] {
                emit(k);
            }
        } else if is_issue_key(word) {
            emit("issue");
        } else if is_path(&lower) {
            emit("file");
            emit("path");
            if lower.starts_with("~/")
                || lower.starts_with("./")
                || lower.starts_with("../")
                || lower.starts_with('/')
            {
                // A path of this machine's file system.
                emit("local");
            }
            if folder {
                emit("list");
            }
            // The file's type: its extension, and `image` for pictures.
            if let Some((_, ext)) = lower.rsplit_once('.')
                && let Ok(at) = FILE_EXTENSIONS.binary_search(&ext)
            {
                emit(FILE_EXTENSIONS[at]);
                if IMAGE_EXTENSIONS.contains(&ext) {
                    emit("image");
                }
            }
        }
    }
}

/// The kind words of a query written in a query language, by the
/// language's own syntax (issue 31: a query that is only a `PromQL`
/// expression shares no word with the tool that runs it):
///
/// | language | recognised by | kind words |
/// |---|---|---|
/// | `LogQL` (Grafana Loki) | a stream selector `{app="x"}` followed by a line filter (`\|=`, `\|~`, `!=`, `!~`) or a parser stage (`\| json`, `\| logfmt`) | `logql`, `loki`, `log` |
/// | `PromQL` (Prometheus) | a metric with a label matcher `up{job="api"}`, a range `[5m]`, or a `PromQL` function call `rate(`, `histogram_quantile(` | `promql`, `prometheus`, `metric` |
/// | SQL | `SELECT … FROM`, `INSERT INTO`, `UPDATE … SET`, `DELETE FROM` in capitals, or `select *` | `sql`, `query` |
/// | JQL (Jira) / CQL (Confluence) | two or more clauses `field = value` (`=`, `!=`, `~`, `in`) on the fields of the one language (`project`, `assignee`, `status` / `space`, `title`, `ancestor`), or one with a function (`currentUser()`) | `jql` / `cql`, `search` |
/// | cron | five fields of digits, `*`, `/`, `,`, `-`, one at least a `*` (`*/5 * * * *`) | `cron`, `schedule` |
///
/// The field and function lists are the languages' documented ones
/// (Prometheus's query functions, Loki's log pipeline, Jira's and
/// Confluence's advanced search fields).
fn query_language(query: &str, emit: &mut impl FnMut(&str)) {
    let lower = query.to_ascii_lowercase();
    let selector = lower.find('{').is_some_and(|open| {
        lower[open..]
            .find('}')
            .is_some_and(|close| lower[open..open + close].contains('='))
    });
    let line_filter = [
        "|=",
        "|~",
        "!~",
        "| json",
        "| logfmt",
        "| pattern",
        "| line_format",
    ]
    .iter()
    .any(|f| lower.contains(f))
        || lower.contains("} !=");
    if selector && line_filter {
        for k in ["logql", "loki", "log"] {
            emit(k);
        }
    } else {
        let metric_selector = lower.match_indices('{').any(|(at, _)| {
            selector
                && lower[..at]
                    .bytes()
                    .last()
                    .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
        });
        let range = lower.match_indices('[').any(|(at, _)| {
            let inner = lower[at + 1..].split(']').next().unwrap_or("");
            inner.len() >= 2
                && inner.len() < lower.len() - at - 1
                && inner[..inner.len() - 1].bytes().all(|b| b.is_ascii_digit())
                && matches!(
                    inner.as_bytes().last(),
                    Some(b's' | b'm' | b'h' | b'd' | b'w' | b'y')
                )
        });
        let function = PROMQL_FUNCTIONS.iter().any(|f| {
            lower.match_indices(f).any(|(at, _)| {
                lower[at + f.len()..].starts_with('(')
                    && !lower[..at]
                        .bytes()
                        .last()
                        .is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
        });
        if metric_selector || range || function {
            for k in ["promql", "prometheus", "metric"] {
                emit(k);
            }
        }
    }
    let words: Vec<&str> = query.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    let sql = (has("SELECT") && has("FROM"))
        || (has("UPDATE") && has("SET"))
        || words.windows(2).any(|p| {
            matches!(p, ["INSERT", "INTO"] | ["DELETE", "FROM"])
                || (p[0].eq_ignore_ascii_case("select")
                    && (p[1] == "*" || p[1].starts_with("count(")))
        });
    if sql {
        for k in ["sql", "query"] {
            emit(k);
        }
    }
    // JQL / CQL clauses: `field op value`, the field a word of its own.
    let (mut jql, mut cql) = (0, 0);
    let tokens: Vec<&str> = lower
        .split(|c: char| c.is_whitespace())
        .filter(|w| !w.is_empty())
        .collect();
    for (i, t) in tokens.iter().enumerate() {
        // `status=Done` or `status = Done` or `status in (...)`.
        let (field, op_follows) = match t.find(['=', '~', '!']) {
            Some(at) if at > 0 => (&t[..at], true),
            _ => (
                *t,
                tokens.get(i + 1).is_some_and(|n| {
                    matches!(*n, "=" | "!=" | "~" | "!~" | "in" | "was")
                        || n.starts_with('=')
                        || n.starts_with("~")
                }),
            ),
        };
        if !op_follows {
            continue;
        }
        jql += usize::from(JQL_FIELDS.binary_search(&field).is_ok());
        cql += usize::from(CQL_FIELDS.binary_search(&field).is_ok());
    }
    let function = [
        "currentuser()",
        "opensprints()",
        "now()",
        "startofweek()",
        "membersof(",
    ]
    .iter()
    .any(|f| lower.contains(f));
    let clauses = |n: usize| n >= 2 || (n == 1 && function);
    if clauses(jql) && jql > cql {
        for k in ["jql", "search"] {
            emit(k);
        }
    } else if clauses(cql) && cql > jql {
        for k in ["cql", "search"] {
            emit(k);
        }
    }
    // cron: five fields of digits and `*/,-`, one a `*`.
    let cron = words.windows(5).any(|w| {
        w.iter().all(|f| {
            f.bytes()
                .all(|b| b.is_ascii_digit() || matches!(b, b'*' | b'/' | b',' | b'-'))
        }) && w.iter().any(|f| f.contains('*'))
    });
    if cron {
        for k in ["cron", "schedule"] {
            emit(k);
        }
    }
}

/// Prometheus query functions that are not ordinary words (the functions
/// of Prometheus's "Query functions" page whose names say `PromQL`), sorted.
const PROMQL_FUNCTIONS: &[&str] = &[
    "avg_over_time",
    "count_over_time",
    "delta",
    "deriv",
    "histogram_quantile",
    "holt_winters",
    "increase",
    "irate",
    "label_replace",
    "max_over_time",
    "min_over_time",
    "predict_linear",
    "quantile_over_time",
    "rate",
    "sum_over_time",
];

/// Fields of Jira's advanced search (JQL) that Confluence's CQL lacks,
/// lower case, sorted.
const JQL_FIELDS: &[&str] = &[
    "affectedversion",
    "assignee",
    "component",
    "duedate",
    "epic",
    "fixversion",
    "issuetype",
    "priority",
    "project",
    "reporter",
    "resolution",
    "sprint",
    "status",
];

/// Keywords of JQL and CQL filters besides their fields (Atlassian's
/// advanced search reference: operators and the `ORDER BY` clause).
const FILTER_KEYWORDS: &[&str] = &[
    "and", "asc", "by", "desc", "empty", "in", "is", "not", "null", "or", "order", "was",
];

/// SQL's keywords of a query or a change (SQL-92 reserved words most
/// queries use; SOQL shares them).
const SQL_KEYWORDS: &[&str] = &[
    "and", "as", "asc", "by", "count", "delete", "desc", "from", "group", "having", "insert",
    "into", "join", "limit", "not", "null", "on", "or", "order", "select", "set", "update",
    "values", "where",
];

/// Fields of Confluence's CQL that JQL lacks, lower case, sorted.
const CQL_FIELDS: &[&str] = &[
    "ancestor",
    "contributor",
    "creator",
    "lastmodified",
    "mention",
    "space",
    "text",
    "title",
    "type",
];

/// The kind words of an identifier whose form names its kind (issue 31):
///
/// | value | example | kind words |
/// |---|---|---|
/// | arXiv identifier (`YYMM.NNNNN`, month 01–12, optional version) | `2305.10601`, `arXiv:2401.01234v2` | `arxiv`, `paper` |
/// | ISO 8601 calendar date | `2020-03-16` | `date` |
/// | a cashtag (`$` and 1 to 5 capitals, the markets' ticker notation) | `$TSLA` | `stock`, `quote` |
/// | a Redis command in capitals, first in the text (Redis's command reference) | `HGETALL user:1` | `redis` |
fn id_kind(word: &str) -> Option<&'static [&'static str]> {
    let word = word
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '(' | ')' | '`' | ',' | ';' | '?' | '!'));
    let word = word.strip_suffix('.').unwrap_or(word);
    let bare = word
        .get(..6)
        .filter(|p| p.eq_ignore_ascii_case("arxiv:"))
        .map_or(word, |_| &word[6..]);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if let Some((yymm, rest)) = bare.split_once('.') {
        let number = rest
            .split_once('v')
            .map_or(rest, |(n, v)| if digits(v) { n } else { "" });
        let month = yymm.get(2..).and_then(|m| m.parse::<u8>().ok());
        if yymm.len() == 4
            && digits(yymm)
            && (4..=5).contains(&number.len())
            && digits(number)
            && month.is_some_and(|m| (1..=12).contains(&m))
        {
            return Some(&["arxiv", "paper"]);
        }
    }
    let parts: Vec<&str> = word.split('-').collect();
    if let [y, m, d] = parts[..]
        && y.len() == 4
        && m.len() == 2
        && d.len() == 2
        && digits(y)
        && digits(m)
        && digits(d)
    {
        return Some(&["date"]);
    }
    if let Some(ticker) = word.strip_prefix('$')
        && (1..=5).contains(&ticker.len())
        && ticker.bytes().all(|b| b.is_ascii_uppercase())
    {
        return Some(&["stock", "quote"]);
    }
    // A Slack message timestamp (`ts`): seconds, `.`, six digits.
    if let Some((secs, micros)) = word.split_once('.')
        && secs.len() == 10
        && micros.len() == 6
        && digits(secs)
        && digits(micros)
    {
        return Some(&["slack", "message"]);
    }
    if let Some(kinds) = stripe_id(word) {
        return Some(kinds);
    }
    if let Some(kinds) = search_operator(word) {
        return Some(kinds);
    }
    if let Some(kinds) = cloud_id(word) {
        return Some(kinds);
    }
    if let Some(kinds) = package_spec(word) {
        return Some(kinds);
    }
    if let Some(kinds) = code_host_ref(word) {
        return Some(kinds);
    }
    if is_commit_sha(word) {
        return Some(&["commit"]);
    }
    if is_a1_range(word) {
        return Some(&["range", "spreadsheet", "cell"]);
    }
    if is_currency_pair(word) {
        return Some(&["currency", "exchange", "rate"]);
    }
    if is_time_zone_name(word) {
        return Some(&["timezone", "time"]);
    }
    None
}

/// The kind words of a Stripe object id: a documented prefix, `_`, and a
/// random part of at least 6 letters and digits, not all lower case
/// (`pi_3NxYz8`, `cus_NffrFeUfNV2Hib`; `in_progress` is no id). Prefixes
/// from the Stripe API reference's object ids.
fn stripe_id(word: &str) -> Option<&'static [&'static str]> {
    const PREFIXES: &[(&str, &[&str])] = &[
        ("acct", &["stripe", "account"]),
        ("ch", &["stripe", "charge", "payment"]),
        ("cs", &["stripe", "checkout", "session"]),
        ("cus", &["stripe", "customer"]),
        ("dp", &["stripe", "dispute"]),
        ("evt", &["stripe", "event"]),
        ("in", &["stripe", "invoice"]),
        ("pi", &["stripe", "payment", "intent"]),
        ("plink", &["stripe", "payment", "link"]),
        ("pm", &["stripe", "payment", "method"]),
        ("po", &["stripe", "payout"]),
        ("price", &["stripe", "price"]),
        ("prod", &["stripe", "product"]),
        ("re", &["stripe", "refund"]),
        ("sub", &["stripe", "subscription"]),
        ("txn", &["stripe", "balance", "transaction"]),
    ];
    let (prefix, rest) = word.split_once('_')?;
    let rest = rest
        .strip_prefix("test_")
        .or_else(|| rest.strip_prefix("live_"))
        .unwrap_or(rest);
    if rest.len() < 6
        || !rest.bytes().all(|b| b.is_ascii_alphanumeric())
        || !rest
            .bytes()
            .any(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
    {
        return None;
    }
    PREFIXES
        .binary_search_by_key(&prefix, |(p, _)| p)
        .ok()
        .map(|at| PREFIXES[at].1)
}

/// The kind words of a search operator that belongs to one product's
/// search syntax (each product's search help): Gmail's (`has:attachment`,
/// `newer_than:7d`, `in:inbox`, `is:unread`), GitHub's (`is:pr`,
/// `repo:acme/web`, `review-requested:@me`), Slack's (`in:#general`,
/// `from:@ana`) and Sentry's (`is:unresolved`).
fn search_operator(word: &str) -> Option<&'static [&'static str]> {
    let (op, value) = word.split_once(':')?;
    if value.is_empty()
        || !op
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b == b'-' || b == b'_')
    {
        return None;
    }
    let value = value.to_ascii_lowercase();
    let gmail: &'static [&'static str] = &["gmail", "email", "search"];
    let github: &'static [&'static str] = &["github", "search"];
    let slack: &'static [&'static str] = &["slack", "message", "search"];
    match (op, value.as_str()) {
        ("has", "attachment" | "drive" | "userlabels" | "nouserlabels")
        | ("newer_than" | "older_than" | "filename" | "category" | "deliveredto", _)
        | ("in", "inbox" | "spam" | "trash" | "sent" | "anywhere" | "snoozed")
        | ("is", "unread" | "starred" | "important" | "snoozed") => Some(gmail),
        ("is", "pr" | "issue" | "merged" | "draft")
        | ("review-requested" | "involves" | "reviewed-by" | "assignee" | "stars", _) => {
            Some(github)
        }
        ("repo", v) if v.contains('/') => Some(github),
        ("in", v) if v.starts_with('#') => Some(slack),
        ("from", v) if v.starts_with('@') => Some(slack),
        ("is", "unresolved" | "ignored" | "for_review") => Some(&["sentry", "issue", "search"]),
        _ => None,
    }
}

/// The kind words of an AWS identifier (AWS's reference of ARNs, EC2
/// resource ids and region codes): an ARN (`arn:aws:s3:::bucket`, its
/// service the third field), an EC2 instance id (`i-` and 8 or 17 hex
/// digits), a region (`us-east-1`, `eu-central-1`, `ap-southeast-2`).
fn cloud_id(word: &str) -> Option<&'static [&'static str]> {
    let word =
        word.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ';' | '.' | ')' | '('));
    if let Some(rest) = word.strip_prefix("arn:aws:") {
        return Some(match rest.split(':').next().unwrap_or("") {
            "s3" => &["aws", "s3", "bucket", "object"],
            "lambda" => &["aws", "lambda", "function"],
            "ec2" => &["aws", "ec2", "instance"],
            "logs" => &["aws", "cloudwatch", "log"],
            _ => &["aws"],
        });
    }
    let hex = |s: &str| {
        s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    };
    if let Some(id) = word.strip_prefix("i-")
        && (id.len() == 8 || id.len() == 17)
        && hex(id)
    {
        return Some(&["aws", "ec2", "instance"]);
    }
    let mut parts = word.split('-');
    if let (Some(area), Some(direction), Some(number), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
        && matches!(
            area,
            "us" | "eu" | "ap" | "sa" | "ca" | "me" | "af" | "il" | "mx"
        )
        && matches!(
            direction,
            "east"
                | "west"
                | "north"
                | "south"
                | "central"
                | "northeast"
                | "northwest"
                | "southeast"
                | "southwest"
        )
        && number.len() == 1
        && number.bytes().all(|b| b.is_ascii_digit())
    {
        return Some(&["aws", "region"]);
    }
    None
}

/// The kind words of a package with its version, as package managers
/// write it: pip's `requests==2.31.0` (`PyPI`) and npm's `lodash@4.17.21`
/// or `@scope/name@^1.2` (the npm registry).
fn package_spec(word: &str) -> Option<&'static [&'static str]> {
    let word = word.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ';' | ')' | '('));
    let name_ok = |n: &str| {
        !n.is_empty()
            && n.starts_with(|c: char| c.is_ascii_alphabetic() || c == '@')
            && n.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'/' | b'@'))
    };
    let version_ok = |v: &str| {
        let v = v.trim_start_matches(['^', '~', '=', '>', '<']);
        v.starts_with(|c: char| c.is_ascii_digit())
            && v.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'+' | b'*'))
    };
    if let Some((name, version)) = word.split_once("==")
        && name_ok(name)
        && version_ok(version)
    {
        return Some(&["pypi", "package", "version"]);
    }
    let (name, version) = word.rsplit_once('@')?;
    (name_ok(name) && !name.ends_with('/') && version_ok(version) && version.contains('.'))
        .then_some(&["npm", "package", "version"])
}

/// The kind words of a reference into a code host: `owner/repo#123`
/// (GitHub's autolinked issues and pull requests) and `group/project!123`
/// (a GitLab merge request).
fn code_host_ref(word: &str) -> Option<&'static [&'static str]> {
    let word =
        word.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ';' | '.' | ')' | '('));
    let repo_ok = |r: &str| {
        r.split('/').count() >= 2
            && r.split('/').all(|p| {
                !p.is_empty()
                    && p.bytes()
                        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            })
    };
    let number_ok = |n: &str| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit());
    if let Some((repo, n)) = word.split_once('#')
        && repo_ok(repo)
        && number_ok(n)
    {
        return Some(&["github", "issue", "pull"]);
    }
    if let Some((repo, n)) = word.split_once('!')
        && repo_ok(repo)
        && number_ok(n)
    {
        return Some(&["gitlab", "merge", "request"]);
    }
    None
}

/// A currency pair as markets write it, `EUR/USD` or `GBP/JPY`: two
/// ISO 4217 codes (see [`CURRENCY_CODES`]) in capitals, with a `/`.
fn is_currency_pair(word: &str) -> bool {
    let word = word.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '/');
    word.split_once('/').is_some_and(|(a, b)| {
        [a, b]
            .iter()
            .all(|c| c.len() == 3 && CURRENCY_CODES.binary_search(c).is_ok())
            && a != b
    })
}

/// ISO 4217 codes of the most traded currencies, sorted.
const CURRENCY_CODES: &[&str] = &[
    "AED", "ARS", "AUD", "BRL", "CAD", "CHF", "CLP", "CNY", "COP", "CZK", "DKK", "EUR", "GBP",
    "HKD", "HUF", "IDR", "ILS", "INR", "JPY", "KRW", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN",
    "RON", "RUB", "SAR", "SEK", "SGD", "THB", "TRY", "TWD", "UAH", "USD", "VND", "ZAR",
];

/// A git commit id: 7 to 40 lower-case hex digits, with a letter and a digit.
fn is_commit_sha(word: &str) -> bool {
    let word = word
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ';' | '.' | ')' | '(' | '?'));
    (7..=40).contains(&word.len())
        && word
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        && word.bytes().any(|b| b.is_ascii_digit())
        && word.bytes().any(|b| b.is_ascii_alphabetic())
}

/// A spreadsheet range in A1 notation, `B2:D40` or `Sheet1!A1:C10`
/// (columns of 1 to 3 capitals, rows of digits).
fn is_a1_range(word: &str) -> bool {
    let word = word
        .trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ';' | '.' | ')' | '(' | '?'));
    let range = word.rsplit_once('!').map_or(word, |(_, r)| r);
    let cell = |c: &str| {
        let letters = c.bytes().take_while(u8::is_ascii_uppercase).count();
        (1..=3).contains(&letters)
            && c.len() > letters
            && c[letters..].bytes().all(|b| b.is_ascii_digit())
    };
    range
        .split_once(':')
        .is_some_and(|(a, b)| cell(a) && cell(b))
}

/// Whether `word` is a time zone name of the tz database (`Area/Location`,
/// e.g. `America/Chicago`, `Europe/Paris`, `America/Argentina/Salta`):
/// one of its areas, then one or two capitalised parts.
fn is_time_zone_name(word: &str) -> bool {
    const AREAS: &[&str] = &[
        "Africa",
        "America",
        "Antarctica",
        "Arctic",
        "Asia",
        "Atlantic",
        "Australia",
        "Etc",
        "Europe",
        "Indian",
        "Pacific",
    ];
    let word = word.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
    let mut parts = word.split('/');
    let area = parts.next().unwrap_or("");
    let rest: Vec<&str> = parts.collect();
    AREAS.binary_search(&area).is_ok()
        && (1..=2).contains(&rest.len())
        && rest.iter().all(|p| {
            p.starts_with(|c: char| c.is_ascii_uppercase())
                && p.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'+'))
        })
}

/// A glob pattern: a word with `*` or `?` wildcards next to a `.` or `/`
/// (`*.toml`, `src/**/*.rs`, `log-?.txt`), or a `**` run.
fn is_glob(word: &str) -> bool {
    let word = word.trim_matches(|c: char| matches!(c, '"' | '\'' | '`' | ',' | ';'));
    word.len() >= 3
        && (word.contains("**")
            || ((word.contains("*.") || word.contains("/*") || word.contains("?."))
                && word
                    .bytes()
                    .all(|b| b.is_ascii_graphic() && !matches!(b, b'(' | b')' | b'=' | b'$'))))
}

/// Value kinds recognised across words (issue 31's third round):
///
/// | text | recognised by | kind words |
/// |---|---|---|
/// | a Datadog metric query | `avg:system.cpu.user{env:prod}`: a space aggregator (`avg`, `sum`, `min`, `max`), `:`, a dotted metric name, then `{` or the end (Datadog's metric query syntax) | `datadog`, `metric`, `query` |
/// | SOQL (Salesforce) | SQL (see [`query_language`]) with a SOQL date literal (`THIS_QUARTER`, `LAST_N_DAYS:30`, ...) or a custom field or relation (`Stage__c`, `Account__r`) | `soql` |
/// | Python code | `import x as y`, `import x;`, `from x import`, `print(`, `def f(`, a `>>>` prompt | `python`, `code` |
/// | a language pair | two ISO 639-1 codes joined by an arrow (`EN→JA`, `en->de`, `fr => es`) | `translate`, `language` |
/// | a phone number written in groups | `+`, then 7 to 15 digits in groups separated by spaces, `-`, `.` or `( )` | `phone`, `sms`, `number` |
fn code_and_notations(query: &str, emit: &mut impl FnMut(&str)) {
    let datadog = query.split_whitespace().any(|w| {
        let Some((agg, rest)) = w.split_once(':') else {
            return false;
        };
        let metric = rest.split('{').next().unwrap_or("");
        matches!(agg, "avg" | "sum" | "min" | "max")
            && metric.contains('.')
            && metric.starts_with(|c: char| c.is_ascii_lowercase())
            && metric
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || matches!(b, b'.' | b'_'))
            && (rest.len() == metric.len() || rest[metric.len()..].starts_with('{'))
    });
    if datadog {
        for k in ["datadog", "metric", "query"] {
            emit(k);
        }
    }
    let words: Vec<&str> = query.split_whitespace().collect();
    let has = |w: &str| words.contains(&w);
    if (has("SELECT") && has("FROM")) || (has("UPDATE") && has("SET")) {
        let soql = words.iter().any(|w| {
            let bare = w.trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '_');
            let literal = bare.split(':').next().unwrap_or("");
            SOQL_DATE_LITERALS.binary_search(&literal).is_ok()
                || bare.ends_with("__c")
                || bare.contains("__r")
        });
        if soql {
            emit("soql");
        }
    }
    let python = query.contains(">>> ")
        || query.contains("print(")
        || words.windows(2).any(|p| {
            (p[0] == "import" && p[1].ends_with(';')) || (p[0] == "def" && p[1].contains('('))
        })
        || words
            .windows(3)
            .any(|p| (p[0] == "import" && p[2] == "as") || (p[0] == "from" && p[2] == "import"));
    if python {
        for k in ["python", "code"] {
            emit(k);
        }
    }
    // MongoDB's shell: `db.orders.find(`, or a query operator (`$gt`, `$set`).
    let mongo = query.match_indices("db.").any(|(at, _)| {
        let rest = &query[at + 3..];
        let method = rest.split_once('.').map_or("", |(_, m)| m);
        MONGO_METHODS
            .iter()
            .any(|m| method.starts_with(m) && method[m.len()..].starts_with('('))
    }) || words.iter().any(|w| {
        let w = w.trim_matches(|c: char| matches!(c, '{' | '}' | '"' | '\'' | ',' | ':'));
        w.strip_prefix('$')
            .is_some_and(|op| MONGO_OPERATORS.binary_search(&op).is_ok())
    });
    if mongo {
        for k in ["mongodb", "query"] {
            emit(k);
        }
    }
    if language_pair(query) {
        for k in ["translate", "language"] {
            emit(k);
        }
    }
    if grouped_phone_number(query) {
        for k in ["phone", "sms", "number"] {
            emit(k);
        }
    }
}

/// Methods of a collection in the `MongoDB` shell (`db.coll.find(`).
const MONGO_METHODS: &[&str] = &[
    "aggregate",
    "countDocuments",
    "createIndex",
    "deleteMany",
    "deleteOne",
    "distinct",
    "find",
    "insertMany",
    "insertOne",
    "updateMany",
    "updateOne",
];

/// `MongoDB`'s query, update and aggregation operators (without `$`),
/// sorted: lower-case words after `$` (a cashtag is in capitals).
const MONGO_OPERATORS: &[&str] = &[
    "addToSet",
    "and",
    "elemMatch",
    "eq",
    "exists",
    "group",
    "gt",
    "gte",
    "in",
    "inc",
    "lookup",
    "lt",
    "lte",
    "match",
    "ne",
    "nin",
    "or",
    "project",
    "pull",
    "push",
    "regex",
    "set",
    "sort",
    "unset",
    "unwind",
];

/// SOQL's date literals (Salesforce's SOQL and SOSL reference, "Date
/// Formats and Date Literals"), the `_N_` ones without their `:n`, sorted.
const SOQL_DATE_LITERALS: &[&str] = &[
    "LAST_90_DAYS",
    "LAST_FISCAL_QUARTER",
    "LAST_FISCAL_YEAR",
    "LAST_MONTH",
    "LAST_N_DAYS",
    "LAST_N_MONTHS",
    "LAST_N_QUARTERS",
    "LAST_N_WEEKS",
    "LAST_N_YEARS",
    "LAST_QUARTER",
    "LAST_WEEK",
    "LAST_YEAR",
    "NEXT_90_DAYS",
    "NEXT_FISCAL_QUARTER",
    "NEXT_FISCAL_YEAR",
    "NEXT_MONTH",
    "NEXT_N_DAYS",
    "NEXT_N_MONTHS",
    "NEXT_N_QUARTERS",
    "NEXT_N_WEEKS",
    "NEXT_N_YEARS",
    "NEXT_QUARTER",
    "NEXT_WEEK",
    "NEXT_YEAR",
    "THIS_FISCAL_QUARTER",
    "THIS_FISCAL_YEAR",
    "THIS_MONTH",
    "THIS_QUARTER",
    "THIS_WEEK",
    "THIS_YEAR",
    "TODAY",
    "TOMORROW",
    "YESTERDAY",
];

/// ISO 639-1 codes of the languages most translated to and from (lower
/// case, sorted): a language pair names two of them.
const LANGUAGE_CODES: &[&str] = &[
    "af", "ar", "bg", "bn", "ca", "cs", "cy", "da", "de", "el", "en", "es", "et", "fa", "fi", "fr",
    "ga", "gu", "he", "hi", "hr", "hu", "hy", "id", "is", "it", "ja", "ka", "kk", "km", "kn", "ko",
    "lt", "lv", "mk", "ml", "mn", "mr", "ms", "mt", "my", "ne", "nl", "no", "pa", "pl", "pt", "ro",
    "ru", "sk", "sl", "sq", "sr", "sv", "sw", "ta", "te", "th", "tl", "tr", "uk", "ur", "uz", "vi",
    "zh",
];

/// Whether `query` holds a language pair: two ISO 639-1 codes (see
/// [`LANGUAGE_CODES`]) joined by `→`, `->` or `=>`, spaces allowed
/// around the arrow, the two codes in the same case (`EN→JA`, `en -> de`).
fn language_pair(query: &str) -> bool {
    let code = |s: &str| {
        s.len() == 2
            && (s.bytes().all(|b| b.is_ascii_lowercase())
                || s.bytes().all(|b| b.is_ascii_uppercase()))
            && LANGUAGE_CODES
                .binary_search(&s.to_ascii_lowercase().as_str())
                .is_ok()
    };
    ["→", "->", "=>"].iter().any(|arrow| {
        query.match_indices(arrow).any(|(at, _)| {
            let before = query[..at]
                .trim_end()
                .rsplit(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or("");
            let after = query[at + arrow.len()..]
                .trim_start()
                .split(|c: char| !c.is_ascii_alphanumeric())
                .next()
                .unwrap_or("");
            code(before)
                && code(after)
                && before.bytes().next().map(|b| b.is_ascii_uppercase())
                    == after.bytes().next().map(|b| b.is_ascii_uppercase())
        })
    })
}

/// Whether `query` holds a phone number written in groups: `+`, then
/// digits in at least two groups separated by single spaces, `-`, `.` or
/// parentheses, 7 to 15 digits in all (E.164's length).
fn grouped_phone_number(query: &str) -> bool {
    query.match_indices('+').any(|(at, _)| {
        let mut digits = 0;
        let mut groups = 0;
        let mut in_group = false;
        let mut last_sep = false;
        for b in query[at + 1..].bytes() {
            if b.is_ascii_digit() {
                digits += 1;
                if !in_group {
                    groups += 1;
                    in_group = true;
                }
                last_sep = false;
            } else if matches!(b, b' ' | b'-' | b'.' | b'(' | b')') && !last_sep && digits > 0 {
                in_group = false;
                last_sep = b == b' ' || b == b'-' || b == b'.';
            } else {
                break;
            }
        }
        groups >= 2 && (7..=15).contains(&digits)
    })
}

/// Redis commands whose names are no English word (Redis's command
/// reference), upper case, sorted: a query that opens with one in
/// capitals is a Redis command.
const REDIS_COMMANDS: &[&str] = &[
    "BLPOP",
    "BRPOP",
    "DECRBY",
    "EXPIRE",
    "FLUSHALL",
    "FLUSHDB",
    "HDEL",
    "HGET",
    "HGETALL",
    "HINCRBY",
    "HKEYS",
    "HMGET",
    "HSET",
    "INCR",
    "INCRBY",
    "LLEN",
    "LPOP",
    "LPUSH",
    "LRANGE",
    "MGET",
    "MSET",
    "PEXPIRE",
    "PTTL",
    "RPOP",
    "RPUSH",
    "SADD",
    "SCARD",
    "SETEX",
    "SETNX",
    "SISMEMBER",
    "SMEMBERS",
    "SREM",
    "TTL",
    "XADD",
    "XRANGE",
    "ZADD",
    "ZRANGE",
    "ZRANK",
    "ZREM",
    "ZSCORE",
];

/// Whether `query` opens with a Redis command in capitals (see [`REDIS_COMMANDS`]).
fn redis_command(query: &str) -> bool {
    query
        .split_whitespace()
        .next()
        .is_some_and(|w| REDIS_COMMANDS.binary_search(&w).is_ok())
}

/// The kind of a `name:tag` word: `port` for a local address
/// (`localhost:3000`, `127.0.0.1:8080`), `image` for a container image
/// reference whose tag is a dotted version or a distribution tag
/// (`nginx:1.25`, `node:20-alpine`, `app:latest`). Other `a:b` words
/// (`user:42`, a key; `9:30`, a time) are neither.
fn address_kind(lower: &str) -> Option<&'static str> {
    let (left, right) = lower.split_once(':')?;
    if left.is_empty() || right.is_empty() || right.starts_with('/') {
        return None;
    }
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let ip = left.split('.').count() == 4 && left.split('.').all(digits);
    if (left == "localhost" || ip) && digits(right) {
        return Some("port");
    }
    let name_ok = left.bytes().any(|b| b.is_ascii_alphabetic())
        && left
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_' | b'/'));
    let version = right.starts_with(|c: char| c.is_ascii_digit())
        && right.contains('.')
        && right
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'));
    let distro = [
        "latest", "alpine", "slim", "bookworm", "bullseye", "jammy", "noble",
    ]
    .iter()
    .any(|t| right.contains(t));
    (name_ok && (version || distro)).then_some("image")
}

/// Whether `query` holds a latitude and a longitude: two decimal numbers
/// (each with a `.`) separated by a comma, the first within ±90 and the
/// second within ±180 (`48.85,2.35`, `40.7484, -73.9857`).
fn has_coordinates(query: &str) -> bool {
    let number = |s: &str| -> Option<f64> {
        let s = s.trim_matches(|c: char| !c.is_ascii_digit() && c != '.' && c != '-');
        if !s.contains('.')
            || !s
                .bytes()
                .all(|b| b.is_ascii_digit() || b == b'.' || b == b'-')
        {
            return None;
        }
        s.parse().ok()
    };
    query.match_indices(',').any(|(at, _)| {
        let before = query[..at]
            .rsplit(|c: char| c.is_whitespace() || c == '(')
            .next()
            .unwrap_or("");
        let after = query[at + 1..]
            .trim_start()
            .split(|c: char| c.is_whitespace() || c == ')' || c == ',')
            .next()
            .unwrap_or("");
        matches!(
            (number(before), number(after)),
            (Some(lat), Some(lng)) if lat.abs() <= 90.0 && lng.abs() <= 180.0
        )
    })
}

/// `OPS-77`: upper-case ASCII letters (and digits after the first), `-`, digits;
/// not the names of standards and models written the same way (`UTF-8`,
/// `SHA-256`, `ISO-8601`, `RFC-3339`, `GPT-4`, see [`NOT_ISSUE_KEYS`]).
fn is_issue_key(word: &str) -> bool {
    let Some((project, number)) = word.split_once('-') else {
        return false;
    };
    project.len() >= 2
        && project.starts_with(|c: char| c.is_ascii_uppercase())
        && project
            .bytes()
            .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && NOT_ISSUE_KEYS.binary_search(&project).is_err()
}

/// Prefixes of `ABC-123` words that name a standard, an algorithm or a
/// model rather than an issue (sorted).
const NOT_ISSUE_KEYS: &[&str] = &[
    "AES", "CVE", "GPT", "HTTP", "IEEE", "ISO", "MD", "RFC", "RSA", "SHA", "TLS", "UTF", "WCAG",
];

/// File extensions that mark a word as a file name (`notes.txt`), lower case, sorted.
const FILE_EXTENSIONS: &[&str] = &[
    "c", "cfg", "conf", "cpp", "css", "csv", "doc", "docx", "env", "gif", "go", "gz", "h", "html",
    "ini", "java", "jpeg", "jpg", "js", "json", "jsx", "lock", "log", "md", "pdf", "png", "py",
    "rb", "rs", "sh", "sql", "svg", "tar", "toml", "ts", "tsx", "txt", "xls", "xlsx", "xml",
    "yaml", "yml", "zip",
];

/// The extensions of [`FILE_EXTENSIONS`] that are pictures.
const IMAGE_EXTENSIONS: &[&str] = &["gif", "jpeg", "jpg", "png", "svg"];

/// Whether `lower` ends in a known file extension (`notes.md`, `a.rs`).
pub(crate) fn is_file_name(lower: &str) -> bool {
    lower
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && FILE_EXTENSIONS.binary_search(&ext).is_ok())
}

/// `~/a`, `/tmp/a`, `./a`, `../a`, or a name ending in a known file extension.
fn is_path(lower: &str) -> bool {
    if lower.starts_with("~/")
        || lower.starts_with("./")
        || lower.starts_with("../")
        || (lower.starts_with('/') && lower.len() > 1)
    {
        return true;
    }
    lower
        .rsplit_once('.')
        .is_some_and(|(stem, ext)| !stem.is_empty() && FILE_EXTENSIONS.binary_search(&ext).is_ok())
}

/// Longest word kept, in bytes; longer runs (hashes, base64) are cut here.
const MAX_WORD: usize = 40;

/// Calls `emit` with every token of `text`, in order. One buffer is reused
/// for every token (no allocation per token).
pub(crate) fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    let mut buf = String::new();
    // One borrow of the stem cache for the whole text (not one per word);
    // if `emit` itself tokenises, the inner call stems without the cache.
    STEMS.with(|cache| {
        let mut cache = cache.try_borrow_mut().ok();
        for word in text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
        {
            camel_parts(word, |part| {
                let part = acronym_singular(part);
                buf.clear();
                if part.is_ascii() {
                    buf.push_str(part);
                    buf.make_ascii_lowercase();
                } else {
                    for c in part.chars() {
                        buf.extend(c.to_lowercase());
                    }
                }
                if buf.len() < 2 || STOP_WORDS.binary_search(&buf.as_str()).is_ok() {
                    return;
                }
                stem_with(cache.as_deref_mut(), &mut buf);
                emit(&buf);
            });
        }
    });
}

/// The tokens of `text`, in order (with repeats).
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t.to_owned()));
    out
}

/// Calls `f` with the parts of `word` split at camelCase boundaries (a
/// lower-case letter or digit followed by an upper-case one; an upper-case
/// run followed by upper + lower: `HTTPServer` → `HTTP`, `Server`).
/// The parts of `word` at its camelCase changes (see `camel_parts`).
pub(crate) fn camel_words(word: &str, f: impl FnMut(&str)) {
    camel_parts(word, f);
}

fn camel_parts(word: &str, mut f: impl FnMut(&str)) {
    if word.is_ascii() {
        // The same rule on bytes, without decoding characters.
        let b = word.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            let (p, c) = (b[i - 1], b[i]);
            let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase)
                && !plural_s(b.get(i + 1..i + 3).unwrap_or(&b[i + 1..]));
            if c.is_ascii_uppercase()
                && (p.is_ascii_lowercase()
                    || p.is_ascii_digit()
                    || (p.is_ascii_uppercase() && next_lower))
            {
                f(&word[start..i]);
                start = i;
            }
        }
        f(&word[start..]);
        return;
    }
    let mut start = 0;
    let mut prev: Option<char> = None;
    let mut chars = word.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if let Some(p) = prev {
            let next_lower = chars.peek().is_some_and(|&(n_at, n)| {
                n.is_lowercase()
                    && !plural_s({
                        let rest = &word.as_bytes()[n_at..];
                        rest.get(..2).unwrap_or(rest)
                    })
            });
            if c.is_uppercase()
                && (p.is_lowercase() || p.is_ascii_digit() || (p.is_uppercase() && next_lower))
            {
                f(&word[start..at]);
                start = at;
            }
        }
        prev = Some(c);
    }
    f(&word[start..]);
}

/// An acronym's plural without its `s` (`XHRs` → `XHR`, `PRs` → `PR`,
/// `CVEs` → `CVE`): a part of two or more upper-case letters (digits
/// allowed after the first) and a final lower-case `s`. The plural of an
/// acronym is the acronym (issue 31): without this, `XHRs` would be the
/// term `xhrs` (Porter2 keeps an `s` after consonants only), which meets
/// neither `XHR` nor the lexicon's `xhr`. Other parts are returned as they are.
fn acronym_singular(part: &str) -> &str {
    match part.strip_suffix('s') {
        Some(run)
            if run.chars().count() >= 2
                && run.chars().next().is_some_and(char::is_uppercase)
                && run.chars().all(|c| c.is_uppercase() || c.is_ascii_digit()) =>
        {
            run
        }
        _ => part,
    }
}

/// Whether `rest` (the one or two bytes after an upper-case run) is the
/// plural `s` of an acronym: `s` at the end of the word or before an
/// upper-case letter or digit (`PRs`, `PIDs`, `URLsFor`). Such an `s` stays
/// with its run (`PRs` → `prs`, not `p` + `rs`), so that the plural meets
/// the acronym like any other plural (issue 31).
fn plural_s(rest: &[u8]) -> bool {
    match rest {
        [b's'] => true,
        [b's', after] => !after.is_ascii_lowercase(),
        _ => false,
    }
}

/// Stems `word` (lower case) with the Snowball English stemmer (Porter2);
/// words longer than [`MAX_WORD`] are first cut there, and words with a
/// non-ASCII letter are left as they are (the English rules would mangle
/// them). A few forms the rules get wrong for tool words are fixed first
/// (see [`STEM_EXCEPTIONS`]).
///
/// Stems are remembered per thread (up to [`STEM_CACHE_LIMIT`] words, then
/// forgotten all at once): the same few thousand words recur in every tool
/// definition, and a lookup costs a fraction of running the rules, which
/// allocate.
pub(crate) fn stem(word: &mut String) {
    STEMS.with(|cache| stem_with(cache.try_borrow_mut().ok().as_deref_mut(), word));
}

/// [`stem`] with the cache already borrowed (`None`: without the cache).
fn stem_with(cache: Option<&mut StemCache>, word: &mut String) {
    if word.len() > MAX_WORD {
        let mut cut = MAX_WORD;
        while !word.is_char_boundary(cut) {
            cut -= 1;
        }
        word.truncate(cut);
    }
    // Porter2 leaves words of one or two letters as they are.
    if word.len() <= 2 || !word.is_ascii() {
        return;
    }
    if let Some(stemmed) = cache.as_ref().and_then(|c| c.get(word.as_str())) {
        word.clear();
        word.push_str(stemmed);
        return;
    }
    let stemmed = match STEM_EXCEPTIONS.binary_search_by_key(&word.as_str(), |(w, _)| w) {
        Ok(at) => STEM_EXCEPTIONS[at].1.to_owned(),
        Err(_) => ENGLISH.stem(word).into_owned(),
    };
    if let Some(cache) = cache {
        if cache.len() >= STEM_CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(word.as_str().into(), stemmed.as_str().into());
    }
    *word = stemmed;
}

/// Stemmed form per word, see [`stem`].
type StemCache = rustc_hash::FxHashMap<Box<str>, Box<str>>;

/// Most words remembered by [`stem`]'s per-thread cache: 65 536 (a few MB at most).
const STEM_CACHE_LIMIT: usize = 1 << 16;

thread_local! {
    static STEMS: std::cell::RefCell<StemCache> = std::cell::RefCell::default();
}

static ENGLISH: std::sync::LazyLock<rust_stemmers::Stemmer> =
    std::sync::LazyLock::new(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));

/// Forms that Porter2 stems apart from their base word, and the stem they
/// get instead (sorted): Porter2 undoubles a final `dd`, so `adding` and
/// `added` would become `ad` while `add` stays `add`; it cuts `-ed` from
/// `embed` (`emb`) but undoubles `embedded` to `embed`.
const STEM_EXCEPTIONS: &[(&str, &str)] = &[
    ("added", "add"),
    ("adding", "add"),
    ("adds", "add"),
    ("embed", "embed"),
    ("embeds", "embed"),
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_split_at_separators_and_camel_case() {
        assert_eq!(
            tokens("github__create_pull-request"),
            ["github", "creat", "pull", "request"]
        );
        assert_eq!(tokens("createPullRequest"), ["creat", "pull", "request"]);
        assert_eq!(tokens("HTTPServer v2Api"), ["http", "server", "v2", "api"]);
        assert_eq!(tokens("ÜberGröße straße"), ["über", "größe", "straße"]);
        assert_eq!(
            tokens("browser.take_screenshot"),
            ["browser", "take", "screenshot"]
        );
    }

    #[test]
    fn acronym_plurals_stay_whole() {
        // Issue 31: `PRs` was split into `P` + `Rs`, `PIDs` into `PI` + `Ds`.
        // The plural of an acronym is the acronym (`XHRs` → `xhr`).
        assert_eq!(tokens("PRs"), ["pr"]);
        assert_eq!(tokens("PIDs"), ["pid"]);
        assert_eq!(tokens("XHRs CVEs"), ["xhr", "cve"]);
        assert_eq!(tokens("open PRs"), tokens("open PR"));
        assert_eq!(tokens("list URLs and IDs"), ["list", "url", "id"]);
        assert_eq!(tokens("listPRsForRepo"), ["list", "pr", "repo"]);
        assert_eq!(tokens("ÜBERs"), ["über"]);
        // Lower-case and mixed words keep their `s` for the stemmer.
        assert_eq!(tokens("prs Docs"), ["prs", "doc"]);
        // Other upper-case runs still split before their last capital.
        assert_eq!(
            tokens("HTTPServer HTTPSProxy"),
            ["http", "server", "https", "proxi"]
        );
        assert_eq!(tokens("IOStream"), ["io", "stream"]);
    }

    #[test]
    fn snowball_stemming_meets_singular_plural_and_verb_forms() {
        assert_eq!(
            tokens("issues issue queries query"),
            ["issu", "issu", "queri", "queri"]
        );
        assert_eq!(tokens("boxes branches"), ["box", "branch"]);
        assert_eq!(
            tokens("running listed lists status"),
            ["run", "list", "list", "status"]
        );
        assert_eq!(tokens("the tool to list all of my files"), ["list", "file"]);
        assert_eq!(
            tokens("create created creating creation"),
            ["creat", "creat", "creat", "creation"]
        );
        assert_eq!(tokens("directory directories"), ["directori", "directori"]);
        // Porter2 alone would give `ad` for the last two, `emb` for `embed`.
        assert_eq!(tokens("add added adding"), ["add", "add", "add"]);
        assert_eq!(tokens("embed embedded"), ["embed", "embed"]);
        // Non-ASCII words and one- or two-letter words are kept as written.
        assert_eq!(tokens("größen pr db"), ["größen", "pr", "db"]);
        // Cached and uncached stems agree.
        let mut word = "deployments".to_owned();
        stem_with(None, &mut word);
        assert_eq!(word, "deploy");
        assert_eq!(tokens("deployments deployments"), ["deploy", "deploy"]);
    }

    #[test]
    fn tables_are_sorted_for_binary_search() {
        assert!(STOP_WORDS.is_sorted());
        assert!(STEM_EXCEPTIONS.is_sorted());
        assert!(TOOL_REQUEST_WORDS.is_sorted());
        assert!(NOT_ISSUE_KEYS.is_sorted());
        assert!(FILE_EXTENSIONS.is_sorted());
        assert!(PROMQL_FUNCTIONS.is_sorted());
        assert!(JQL_FIELDS.is_sorted());
        assert!(CQL_FIELDS.is_sorted());
        assert!(REDIS_COMMANDS.is_sorted());
    }

    fn weight(terms: &[QueryTerm], word: &str) -> Option<f32> {
        terms.iter().find(|q| q.term == word).map(|q| q.weight)
    }

    #[test]
    fn queries_gain_synonyms_and_related_words_at_lower_weight() {
        let terms = query_terms("remove the repo");
        assert_eq!(weight(&terms, "remov"), Some(1.0));
        assert_eq!(weight(&terms, "delet"), Some(SYNONYM_WEIGHT));
        assert_eq!(weight(&terms, "repositori"), Some(ALIAS_WEIGHT));
        let terms = query_terms("restart the k8s pod");
        assert_eq!(weight(&terms, "kubernet"), Some(ALIAS_WEIGHT));
        assert_eq!(weight(&terms, "rerun"), Some(SYNONYM_WEIGHT));
        let terms = query_terms("will it rain in Oslo");
        assert_eq!(weight(&terms, "rain"), Some(1.0));
        assert_eq!(weight(&terms, "weather"), Some(RELATED_WEIGHT));
        // Related words go one way: "weather" does not look for "rain".
        assert_eq!(weight(&query_terms("weather in Oslo"), "rain"), None);
        // A word of the query keeps its own weight when also a synonym.
        let terms = query_terms("delete remove");
        assert_eq!(weight(&terms, "delet"), Some(1.0));
        assert_eq!(weight(&terms, "remov"), Some(1.0));
    }

    #[test]
    fn a_request_for_a_tool_is_not_part_of_what_it_does() {
        assert_eq!(
            strip_request_for_tools("find me a tool to list pods"),
            "to list pods"
        );
        assert_eq!(
            strip_request_for_tools("Search tools: send SMS"),
            " send SMS"
        );
        assert_eq!(strip_request_for_tools("is there a tool"), "");
        // Other words before "tool", or no "tool": the query as written.
        for q in [
            "search issues with the jira tool",
            "find files",
            "find a toolbox",
        ] {
            assert_eq!(strip_request_for_tools(q), q);
        }
        let terms = query_terms("I need a tool that can search my mail");
        assert_eq!(weight(&terms, "need"), None);
        assert_eq!(weight(&terms, "search"), Some(1.0));
        assert_eq!(weight(&terms, "mail"), Some(1.0));
    }

    #[test]
    fn neighbouring_words_meet_their_compound() {
        let terms = query_terms("which time zone, and log in via e-mail");
        assert_eq!(weight(&terms, "timezon"), Some(COMPOUND_WEIGHT));
        assert_eq!(weight(&terms, "login"), Some(COMPOUND_WEIGHT));
        assert_eq!(weight(&terms, "email"), Some(COMPOUND_WEIGHT));
        // Under 5 bytes joined: no compound.
        assert_eq!(weight(&query_terms("a b"), "ab"), None);
    }

    fn kinds(query: &str) -> Vec<String> {
        let mut out = Vec::new();
        value_kinds(query, |k| out.push(k.to_owned()));
        out
    }

    #[test]
    fn values_in_queries_bring_their_kind_words() {
        assert_eq!(kinds("fetch https://docs.rs/serde now"), ["url", "web"]);
        assert_eq!(kinds("www.example.org"), ["url", "web"]);
        assert_eq!(kinds("write to ann@example.com"), ["email"]);
        assert_eq!(kinds("ping @ann in #general"), ["user", "channel"]);
        assert_eq!(
            kinds("open ~/notes/a.txt"),
            ["file", "path", "local", "txt"]
        );
        assert_eq!(
            kinds("cat /etc/hosts, ./run.sh and \"Cargo.toml\"."),
            [
                "file", "path", "local", "file", "path", "local", "sh", "file", "path", "toml"
            ]
        );
        assert_eq!(kinds("edit art/fox.png"), ["file", "path", "png", "image"]);
        assert_eq!(kinds("move OPS-77 to done"), ["issue"]);
        assert!(kinds("decode UTF-8, hash with SHA-256, dates in ISO-8601").is_empty());
        assert_eq!(kinds("text +15551234567"), ["phone", "sms", "number"]);
        assert_eq!(
            kinds("what's in gs://exports/2024/ ?"),
            ["bucket", "object", "list"]
        );
        assert_eq!(kinds("ls ~/projects/"), ["file", "path", "local", "list"]);
        assert_eq!(
            kinds("forward localhost:3000 and 10.0.0.2:22"),
            ["port", "port"]
        );
        assert_eq!(
            kinds("pull nginx:1.25 and node:20-alpine"),
            ["image", "image"]
        );
        assert_eq!(
            kinds("what is at 40.7484, -73.9857"),
            ["latitude", "longitude", "coordinates"]
        );
        assert_eq!(
            kinds("TZ at 48.85,2.35?"),
            ["latitude", "longitude", "coordinates"]
        );
        // Query languages, by their syntax.
        assert_eq!(
            kinds(r#"sum(rate(http_requests_total{code="500"}[5m])) by (job)"#),
            ["promql", "prometheus", "metric"]
        );
        assert_eq!(
            kinds("up{job=\"node\"} == 0"),
            ["promql", "prometheus", "metric"]
        );
        assert_eq!(
            kinds(r#"{namespace="prod"} |~ "timeout" | json"#),
            ["logql", "loki", "log"]
        );
        assert_eq!(
            kinds("SELECT name FROM users WHERE id = 3"),
            ["sql", "query"]
        );
        assert_eq!(
            kinds("assignee = currentUser() AND status != Done"),
            ["jql", "search"]
        );
        assert_eq!(
            kinds("space = DOCS and title ~ \"release\""),
            ["cql", "search"]
        );
        assert_eq!(kinds("*/15 * * * * run backups"), ["cron", "schedule"]);
        assert_eq!(kinds("HGETALL session:9"), ["redis"]);
        // Identifiers whose form names their kind.
        assert_eq!(kinds("summarise 2401.01234v2"), ["arxiv", "paper"]);
        assert_eq!(kinds("rain on 2021-06-30?"), ["date"]);
        assert_eq!(kinds("price of $NVDA"), ["stock", "quote"]);
        // Not these: a single clause, plain words, a version, a price.
        assert!(
            kinds("rows where Status = Done, select the best from the rest, v1.2.3 at $20")
                .is_empty()
        );
        assert!(kinds("rate the app, get version 2024.13, sum(a, b)").is_empty());
        // Keys, times, prices and lists are none of these.
        assert!(kinds("get user:42 at 9:30, or 12.5,200.1").is_empty());
        // Not values: an issue number, a repository, a version, a domain, a lone `/`.
        assert!(kinds("issue #482 in acme/web v1.2.0 example.org / Ops-7 +12").is_empty());
    }

    #[test]
    fn notations_and_ids_bring_their_kind_words() {
        assert_eq!(
            kinds("avg:system.cpu.user{env:prod} by {host}"),
            ["datadog", "metric", "query"]
        );
        assert_eq!(
            kinds("SELECT Id FROM Lead WHERE CreatedDate = LAST_N_DAYS:7"),
            ["sql", "query", "soql"]
        );
        assert_eq!(
            kinds("SELECT Name FROM Account WHERE Tier__c = 'Gold'"),
            ["sql", "query", "soql"]
        );
        assert_eq!(
            kinds("run import pandas as pd; print(pd.__version__)"),
            ["python", "code"]
        );
        assert_eq!(kinds("EN→JA please"), ["translate", "language"]);
        assert_eq!(kinds("de -> fr"), ["translate", "language"]);
        assert_eq!(
            kinds("call +1 415 555 0100 now"),
            ["phone", "sms", "number"]
        );
        assert_eq!(kinds("reply under 1712345678.000200"), ["slack", "message"]);
        assert_eq!(kinds("refund pi_3NxYz8"), ["stripe", "payment", "intent"]);
        assert_eq!(kinds("cus_NffrFeUfNV2Hib"), ["stripe", "customer"]);
        assert_eq!(kinds("9:30 America/Chicago"), ["timezone", "time"]);
        assert_eq!(kinds("every *.toml under src/"), ["pattern", "file"]);
        // Plain SQL is no SOQL.
        assert_eq!(kinds("SELECT a FROM b WHERE c = 1"), ["sql", "query"]);
        // Not these: English, a version, a lone number, a trip.
        assert!(
            kinds(
                "import the csv into sqlite, in_progress tasks, go -> home, \
                 v1.2.3, +12 points, Europe/trip, 1712345678"
            )
            .is_empty()
        );
    }

    fn split(query: &str) -> (String, String) {
        let (intent, payload) = split_payload(query);
        let squeeze = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        (squeeze(&intent), squeeze(&payload))
    }

    #[test]
    fn quoted_text_and_what_a_negation_rules_out_are_payload() {
        assert_eq!(
            split("post 'server restart in 5 min' in #ops"),
            ("post in #ops".into(), "'server restart in 5 min'".into())
        );
        assert_eq!(
            split(r#"open "Q3 report" in Drive"#),
            ("open in Drive".into(), r#""Q3 report""#.into())
        );
        // Apostrophes are no quotes.
        assert_eq!(split("today's news, the team's board").1, String::new());
        // Commands that rule out: up to two words, until punctuation.
        assert_eq!(split("queue it, do not send it now").1, "send now");
        assert_eq!(split("don't send it yet, queue it").1, "send yet");
        assert_eq!(split("the body, no cleanup").1, "cleanup");
        assert_eq!(
            split("get the size without pulling the file").1,
            "pulling file"
        );
        // A state is no command: `haven't staged`, `not merged`.
        assert_eq!(split("edits I haven't staged").1, String::new());
        assert_eq!(split("PRs not merged yet").1, String::new());
        // File names and paths are what to act on.
        assert_eq!(split("rename notes.txt to old.txt").1, "notes.txt old.txt");
        // A query that is all payload is its own request.
        assert_eq!(split("'weather in Paris'").1, String::new());
    }

    #[test]
    fn payload_words_weigh_less_and_query_syntax_is_payload() {
        let terms = query_terms("post 'server restart' to discord");
        assert_eq!(weight(&terms, "post"), Some(1.0));
        assert_eq!(weight(&terms, "restart"), Some(PAYLOAD_WEIGHT));
        // Its synonyms weigh less with it.
        assert!(weight(&terms, "rerun").is_some_and(|w| w < SYNONYM_WEIGHT));
        // A word both asked for and quoted is asked for.
        assert_eq!(
            weight(&query_terms("restart 'restart'"), "restart"),
            Some(1.0)
        );
        // JQL: the language at 1.0, its fields and keywords as payload.
        let terms = query_terms(r#"project = OPS AND status = "In Review" ORDER BY updated"#);
        assert_eq!(weight(&terms, "jql"), Some(LANGUAGE_KIND_WEIGHT));
        assert_eq!(weight(&terms, "project"), Some(PAYLOAD_WEIGHT));
        assert_eq!(weight(&terms, "order"), Some(PAYLOAD_WEIGHT));
        assert_eq!(weight(&terms, "updat"), Some(1.0));
    }

    #[test]
    fn search_operators_cloud_ids_packages_and_refs_bring_their_kind_words() {
        assert_eq!(
            kinds("from:boss has:attachment newer_than:7d"),
            ["gmail", "email", "search", "gmail", "email", "search"]
        );
        assert_eq!(
            kinds("is:pr is:open repo:acme/web"),
            ["github", "search", "github", "search"]
        );
        assert_eq!(
            kinds("in:#deploys from:@ana"),
            ["slack", "message", "search", "slack", "message", "search"]
        );
        assert_eq!(kinds("is:unresolved"), ["sentry", "issue", "search"]);
        assert_eq!(kinds("db.orders.find({status: 'x'})"), ["mongodb", "query"]);
        assert_eq!(kinds("{ total: { $gt: 100 } }"), ["mongodb", "query"]);
        assert_eq!(
            kinds("arn:aws:s3:::logs"),
            ["aws", "s3", "bucket", "object"]
        );
        assert_eq!(
            kinds("stop i-0abc1234def567890"),
            ["aws", "ec2", "instance"]
        );
        assert_eq!(kinds("in eu-central-1"), ["aws", "region"]);
        assert_eq!(kinds("requests==2.31.0"), ["pypi", "package", "version"]);
        assert_eq!(kinds("lodash@4.17.21"), ["npm", "package", "version"]);
        assert_eq!(kinds("@types/node@^20.1"), ["npm", "package", "version"]);
        assert_eq!(kinds("see acme/web#42"), ["github", "issue", "pull"]);
        assert_eq!(kinds("group/app!7"), ["gitlab", "merge", "request"]);
        assert_eq!(kinds("revert 9f3c2a1"), ["commit"]);
        assert_eq!(kinds("Sheet1!A1:C10"), ["range", "spreadsheet", "cell"]);
        assert_eq!(kinds("EUR/USD fixing"), ["currency", "exchange", "rate"]);
        // Not these: words with colons, a price, hex without a digit, a
        // version, a key, a time, a hyphenated word (the e-mail is one).
        assert_eq!(
            kinds("note: is:it, has:x, ann@example.com, $20, deadbeef? v1.2.3 a:b 9:30 x-y-z"),
            ["email"]
        );
    }

    #[test]
    fn the_new_tables_are_sorted() {
        for table in [
            SOQL_DATE_LITERALS,
            LANGUAGE_CODES,
            NEGATIONS,
            FILTER_KEYWORDS,
            SQL_KEYWORDS,
            MONGO_METHODS,
            MONGO_OPERATORS,
            CURRENCY_CODES,
        ] {
            assert!(table.windows(2).all(|w| w[0] < w[1]), "{table:?}");
        }
    }
}
