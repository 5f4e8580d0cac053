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
            .map(|g| {
                g.iter()
                    .map(|w| {
                        let mut w = w.to_lowercase();
                        stem(&mut w);
                        w
                    })
                    .collect()
            })
            .collect()
    })
}

/// Longest word kept, in bytes; longer runs (hashes, base64) are cut here.
const MAX_WORD: usize = 40;

/// Calls `emit` with every token of `text`, in order. One buffer is reused
/// for every token (no allocation per token).
pub(crate) fn for_each_token(text: &str, mut emit: impl FnMut(&str)) {
    let mut buf = String::new();
    for word in text
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
    {
        camel_parts(word, |part| {
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
            stem(&mut buf);
            emit(&buf);
        });
    }
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
fn camel_parts(word: &str, mut f: impl FnMut(&str)) {
    if word.is_ascii() {
        // The same rule on bytes, without decoding characters.
        let b = word.as_bytes();
        let mut start = 0;
        for i in 1..b.len() {
            let (p, c) = (b[i - 1], b[i]);
            let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
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
            let next_lower = chars.peek().is_some_and(|(_, n)| n.is_lowercase());
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

/// Stems `word` (lower case) with the Snowball English stemmer; words
/// longer than [`MAX_WORD`] are first cut there, and words with a
/// non-ASCII letter are left as they are (the English rules would mangle
/// them).
fn stem(word: &mut String) {
    if word.len() > MAX_WORD {
        let mut cut = MAX_WORD;
        while !word.is_char_boundary(cut) {
            cut -= 1;
        }
        word.truncate(cut);
    }
    if !word.is_ascii() {
        return;
    }
    static ENGLISH: std::sync::LazyLock<rust_stemmers::Stemmer> =
        std::sync::LazyLock::new(|| rust_stemmers::Stemmer::create(rust_stemmers::Algorithm::English));
    if let std::borrow::Cow::Owned(stemmed) = ENGLISH.stem(word) {
        *word = stemmed;
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
        assert_eq!(tokens("ÜberGröße straße"), ["über", "größe", "straße"]);
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
