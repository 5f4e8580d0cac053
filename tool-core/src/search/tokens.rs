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
//! 4. light stemming: a few English suffixes are cut (`issues` → `issue`,
//!    `queries` → `query`, `running` → `run`; `create`, `created` and
//!    `creating` → `creat`), so that
//!    singular and plural, and the forms of one verb, meet. It is
//!    deliberately weak (no dictionary): a wrong cut only merges rare words.

/// Function words left out of the index and of queries: they occur in most
/// descriptions and queries ("a tool to ... the ...") and find nothing.
const STOP_WORDS: &[&str] = &[
    "a", "about", "all", "an", "and", "any", "are", "as", "at", "be", "by", "can", "do", "does",
    "for", "from", "get", "how", "i", "if", "in", "into", "is", "it", "its", "me", "my", "of",
    "on", "or", "our", "please", "should", "so", "some", "that", "the", "their", "them", "then",
    "there", "these", "this", "to", "tool", "up", "us", "use", "want", "was", "we", "what", "when",
    "which", "will", "with", "would", "you", "your",
];

/// Groups of words that stand for one another in a query: generic verbs
/// and nouns of software tools (create / make / new, delete / remove,
/// folder / directory, issue / ticket, pull request / PR, ...). A query word
/// of a group also looks for the group's other words, at
/// [`SYNONYM_WEIGHT`] of its own weight; documents are not expanded.
/// Words are written plainly and stemmed like everything else.
const SYNONYMS: &[&[&str]] = &[
    &["create", "make", "new", "add", "open"],
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
];

/// Weight of a synonym relative to the query word it came from.
pub(crate) const SYNONYM_WEIGHT: f32 = 0.4;

/// The query's terms with weights: each distinct token at 1.0, and the
/// synonyms of each (see [`SYNONYMS`]) at [`SYNONYM_WEIGHT`] unless the
/// query has them itself.
pub(crate) fn query_terms(query: &str) -> Vec<(String, f32)> {
    let mut own = tokens(query);
    own.sort_unstable();
    own.dedup();
    let mut terms: Vec<(String, f32)> = own.iter().map(|t| (t.clone(), 1.0)).collect();
    for group in synonym_groups() {
        if !group.iter().any(|w| own.contains(w)) {
            continue;
        }
        for w in group {
            if !terms.iter().any(|(t, _)| t == w) {
                terms.push((w.clone(), SYNONYM_WEIGHT));
            }
        }
    }
    terms
}

/// [`SYNONYMS`] tokenised once.
fn synonym_groups() -> &'static [Vec<String>] {
    static GROUPS: std::sync::OnceLock<Vec<Vec<String>>> = std::sync::OnceLock::new();
    GROUPS.get_or_init(|| {
        SYNONYMS
            .iter()
            .map(|g| g.iter().map(|w| stem(w.to_lowercase())).collect())
            .collect()
    })
}

/// Longest word kept, in bytes; longer runs (hashes, base64) are cut here.
const MAX_WORD: usize = 40;

/// Calls `emit` with every token of `text`, in order.
pub(crate) fn for_each_token(text: &str, mut emit: impl FnMut(String)) {
    for word in words(text) {
        let lower = word.to_lowercase();
        if lower.len() < 2 || STOP_WORDS.binary_search(&lower.as_str()).is_ok() {
            continue;
        }
        emit(stem(lower));
    }
}

/// The tokens of `text`, in order (with repeats).
pub(crate) fn tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for_each_token(text, |t| out.push(t));
    out
}

/// The words of `text`: runs of letters and digits, split again at
/// camelCase boundaries (a lower-case letter or digit followed by an
/// upper-case one; an upper-case run followed by upper + lower).
fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .flat_map(camel_parts)
}

fn camel_parts(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        let boundary = c.is_uppercase()
            && ((prev.is_lowercase() || prev.is_ascii_digit())
                || (prev.is_uppercase() && next_lower));
        if boundary {
            parts.push(&word[start..at]);
            start = at;
        }
    }
    parts.push(&word[start..]);
    parts
}

/// Cuts a few English suffixes (see the module docs); `word` is lower case.
fn stem(mut word: String) -> String {
    if word.len() > MAX_WORD {
        let mut cut = MAX_WORD;
        while !word.is_char_boundary(cut) {
            cut -= 1;
        }
        word.truncate(cut);
    }
    if !word.is_ascii() {
        return word;
    }
    let len = word.len();
    let ends = |s: &str| word.ends_with(s);
    if len > 4 && ends("ies") {
        word.truncate(len - 3);
        word.push('y');
    } else if len > 4 && (ends("sses") || ends("xes") || ends("ches") || ends("shes")) {
        word.truncate(len - 2);
    } else if len > 3 && ends("s") && !ends("ss") && !ends("us") && !ends("is") {
        word.truncate(len - 1);
    } else if len > 5 && ends("ing") {
        word.truncate(len - 3);
        undouble(&mut word);
    } else if len > 4 && ends("ed") && !ends("eed") {
        word.truncate(len - 2);
        undouble(&mut word);
    }
    // `create`, `created` and `creating` all become `creat`.
    if word.len() > 4 && word.ends_with('e') && !word.ends_with("ee") {
        word.pop();
    }
    word
}

/// `runn` → `run`, `stopp` → `stop` (after cutting `-ing` / `-ed`); `add` stays.
fn undouble(word: &mut String) {
    let bytes = word.as_bytes();
    let n = bytes.len();
    if n >= 4 && bytes[n - 1] == bytes[n - 2] && !matches!(bytes[n - 1], b'l' | b's' | b'z') {
        word.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_words_are_sorted_for_binary_search() {
        let mut sorted = STOP_WORDS.to_vec();
        sorted.sort_unstable();
        assert_eq!(sorted, STOP_WORDS);
    }

    #[test]
    fn names_split_at_separators_and_camel_case() {
        assert_eq!(
            tokens("github__create_pull-request"),
            ["github", "creat", "pull", "request"]
        );
        assert_eq!(tokens("createPullRequest"), ["creat", "pull", "request"]);
        assert_eq!(tokens("HTTPServer v2Api"), ["http", "server", "v2", "api"]);
        assert_eq!(
            tokens("browser.take_screenshot"),
            ["browser", "take", "screenshot"]
        );
    }

    #[test]
    fn light_stemming_meets_singular_and_plural() {
        assert_eq!(tokens("issues issue queries"), ["issu", "issu", "query"]);
        assert_eq!(tokens("boxes branches"), ["box", "branch"]);
        assert_eq!(
            tokens("running listed lists status"),
            ["run", "list", "list", "status"]
        );
        assert_eq!(tokens("the tool to list all of my files"), ["list", "file"]);
        assert_eq!(
            tokens("create created creating"),
            ["creat", "creat", "creat"]
        );
        assert_eq!(tokens("add added adding"), ["add", "add", "add"]);
    }
}
