//! Read or change: the action a tool's name says it takes, and whether a
//! query asks to look at something rather than to change it.
//!
//! Servers offer siblings that share their nouns (`list_pull_requests`,
//! `create_pull_request`; `list_monitors`, `mute_monitor`): a query's nouns
//! cannot tell them apart, its form can. A question ("which branches
//! exist", "what pods are running?", "how many documents …") or a request
//! to look ("show me …", "find …") that holds no verb of change asks to
//! read. Such a query damps the tools whose names say they change things,
//! by [`READ_INTENT_DAMP`](super::READ_INTENT_DAMP); they stay in the list,
//! and the tools that read or whose names say neither keep their score
//! (damping, not lifting readers: a lift would also raise other servers'
//! readers over a tool named by neither, `weather__current`).
//!
//! The verbs are the generic verbs of tool names (CRUD, messaging, process
//! and version-control verbs), written from what tool APIs call their
//! operations, not from evaluation queries.

/// What a tool does, by the first action word of its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action {
    /// Looks at things: `list_`, `get_`, `search_`, `read_`, `describe_` ….
    Read,
    /// Changes things: `create_`, `delete_`, `send_`, `update_` ….
    Write,
    /// The name says neither (`translate_text`, `directions`, `aggregate`).
    Other,
}

/// Words of tool names that read (as written in names, lower case).
const READ_VERBS: &[&str] = &[
    "browse", "count", "describe", "diff", "download", "fetch", "find", "get", "history", "info",
    "inspect", "list", "log", "logs", "lookup", "query", "read", "recall", "search", "show",
    "stat", "stats", "status", "top", "view",
];

/// Words that change things, in tool names and in queries (stemmed when
/// compared with query words).
const WRITE_VERBS: &[&str] = &[
    "acknowledge",
    "add",
    "append",
    "apply",
    "approve",
    "archive",
    "assign",
    "cancel",
    "capture",
    "charge",
    "clear",
    "clone",
    "close",
    "comment",
    "commit",
    "complete",
    "copy",
    "create",
    "delete",
    "deploy",
    "disable",
    "drop",
    "edit",
    "enable",
    "exec",
    "execute",
    "fill",
    "forget",
    "fork",
    "forward",
    "insert",
    "install",
    "invite",
    "kill",
    "label",
    "link",
    "merge",
    "modify",
    "move",
    "mute",
    "new",
    "pause",
    "play",
    "post",
    "publish",
    "purge",
    "push",
    "put",
    "remove",
    "rename",
    "reply",
    "rerun",
    "reset",
    "resolve",
    "restart",
    "retry",
    "revert",
    "rollback",
    "run",
    "save",
    "scale",
    "schedule",
    "send",
    "set",
    "start",
    "stop",
    "store",
    "submit",
    "transfer",
    "trigger",
    "uninstall",
    "update",
    "upload",
    "write",
];

/// Words that open a question or a request to look (lower case).
const READ_OPENERS: &[&str] = &[
    "any", "anything", "are", "check", "did", "display", "do", "does", "find", "has", "have",
    "how", "is", "list", "look", "see", "show", "view", "was", "were", "what", "whats", "when",
    "where", "which", "who", "whom", "whose", "why",
];

/// The action of a tool called `name` (`<server>__<tool>` or bare): its
/// first word (split at `_`, `-` and camelCase, after the server part)
/// that is a read or a write verb.
pub(crate) fn action_of(name: &str) -> Action {
    let tool = name.split_once("__").map_or(name, |(_, t)| t);
    let mut found = Action::Other;
    for word in tool.split(['_', '-', '.']).filter(|w| !w.is_empty()) {
        let mut done = false;
        super::tokenizer::camel_words(word, |part| {
            if done {
                return;
            }
            let lower = part.to_ascii_lowercase();
            if READ_VERBS.contains(&lower.as_str()) {
                found = Action::Read;
                done = true;
            } else if WRITE_VERBS.contains(&lower.as_str()) {
                found = Action::Write;
                done = true;
            }
        });
        if done {
            break;
        }
    }
    found
}

/// Whether `query` asks to read: it opens with a question word or a
/// request to look, or ends with a question mark, and none of its own
/// words (`words` gives them in lower case as written; called only for
/// such a query) is a verb of change in its plain form. A verb ending in
/// `-ing` or `-ed` tells a state, not a command ("what pods are
/// running", "installed charts"), so words are compared as written.
pub(crate) fn asks_to_read(query: &str, words: impl FnOnce() -> Vec<String>) -> bool {
    let first = query
        .split(|c: char| !c.is_alphanumeric() && c != '\'')
        .find(|w| !w.is_empty())
        .map(|w| w.to_lowercase().replace('\'', ""));
    let opens = first.is_some_and(|w| {
        READ_OPENERS.contains(&w.as_str()) || w.starts_with("what") || w.starts_with("who")
    });
    if !(opens || query.trim_end().ends_with('?')) {
        return false;
    }
    !words()
        .iter()
        .any(|w| WRITE_VERBS.binary_search(&w.as_str()).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(q: &str) -> Vec<String> {
        super::super::tokenizer::query_words(q)
            .into_iter()
            .map(|(w, _)| w)
            .collect()
    }

    #[test]
    fn the_verb_lists_are_sorted() {
        for list in [READ_VERBS, WRITE_VERBS, READ_OPENERS] {
            assert!(list.windows(2).all(|w| w[0] < w[1]), "{list:?}");
        }
    }

    #[test]
    fn tool_names_say_what_they_do() {
        assert_eq!(action_of("github__list_pull_requests"), Action::Read);
        assert_eq!(action_of("github__create_pull_request"), Action::Write);
        assert_eq!(action_of("playwright__tab_list"), Action::Read);
        assert_eq!(action_of("datadog__muteMonitor"), Action::Write);
        assert_eq!(action_of("translate__translate_text"), Action::Other);
        assert_eq!(action_of("get_weather"), Action::Read);
    }

    #[test]
    fn questions_without_a_verb_of_change_ask_to_read() {
        for q in [
            "which branches exist in acme/web",
            "what pods are running in payments",
            "How many documents are in events",
            "show me the open issues",
            "slack channels we have?",
        ] {
            assert!(asks_to_read(q, || words(q)), "{q}");
        }
        for q in [
            "create a branch called x",
            "what's the fastest way to delete the old branch",
            "can you send the report?",
            "list files then remove the tmp ones",
            "open a bug about the login page",
        ] {
            assert!(!asks_to_read(q, || words(q)), "{q}");
        }
    }
}
