//! "Did you mean": the close candidates to a misspelt word.

/// The candidate closest to `word`, if close enough to be a likely typo: at
/// most one edit per three characters (and at least one), counting
/// insertions, deletions, substitutions and swaps of two adjacent characters
/// (optimal string alignment, `strsim::osa_distance`), case-insensitively.
/// Ties go to the earlier candidate.
pub fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<&'a str> {
    let word = word.to_lowercase();
    let limit = (word.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (strsim::osa_distance(&word, &c.to_lowercase()), c))
        .filter(|&(d, _)| d <= limit)
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// The candidates similar to `word`, best first, at most `max`: Jaro-Winkler
/// similarity (case-insensitive) of at least 0.75, ties in name order. Used
/// for unknown tool names, where a prefix in common matters more than edits.
pub fn ranked<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    scored(word, candidates)
        .into_iter()
        .filter(|(score, _)| *score >= 0.75)
        .take(max)
        .map(|(_, c)| c)
        .collect()
}

/// Every candidate ranked by Jaro-Winkler similarity to `word`
/// (case-insensitive), best first, ties in name order, at most `max`, with no
/// threshold: the nearest names even when none is close. [`ranked`] is this
/// list cut at a similarity of 0.75. Used where a list of the nearest names
/// is always useful (`tool_search`'s "closest" names for a query that
/// matched nothing).
pub fn nearest<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
    max: usize,
) -> Vec<&'a str> {
    scored(word, candidates)
        .into_iter()
        .take(max)
        .map(|(_, c)| c)
        .collect()
}

/// How alike two lines are, from 0 (nothing in common) to 1 (equal):
/// 1 minus the Levenshtein distance divided by the longer length, in
/// characters, case-sensitive (`strsim::normalized_levenshtein`). Two empty
/// strings are 1. Used by `edit_file`'s block-anchor matching to score the
/// lines between two anchors.
#[must_use]
pub fn similarity(a: &str, b: &str) -> f64 {
    strsim::normalized_levenshtein(a, b)
}

/// Every candidate with its Jaro-Winkler similarity to `word` (ASCII
/// case-insensitive), best first, ties in name order.
fn scored<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<(f64, &'a str)> {
    let lowered = word.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lowered, &c.to_ascii_lowercase()), c))
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored
}

/// `` `a`, `b` or `c` ``: a list of choices as a sentence says it.
pub fn one_of(candidates: &[&str]) -> String {
    let quoted: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// Every candidate in backquotes, the last joined by "and": `a`, `b` and `c`
/// (a list that is complete, where [`one_of`] offers a choice).
pub fn all_of(candidates: &[&str]) -> String {
    let quoted: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => quoted.concat(),
    }
}

/// "unknown {what} `word`; did you mean `close`?" or, with nothing close,
/// "unknown {what} `word`; expected one of ...".
pub fn unknown_message(what: &str, word: &str, candidates: &[&str]) -> String {
    match did_you_mean(word, candidates.iter().copied()) {
        Some(close) => format!("unknown {what} `{word}`; did you mean `{close}`?"),
        None => format!(
            "unknown {what} `{word}`; expected one of {}",
            one_of(candidates)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_only_close_words() {
        let keys = ["read_only", "hidden_params", "description", "name"];
        assert_eq!(did_you_mean("readonly", keys), Some("read_only"));
        assert_eq!(did_you_mean("hiden_params", keys), Some("hidden_params"));
        assert_eq!(did_you_mean("descripton", keys), Some("description"));
        assert_eq!(did_you_mean("subjcet", ["subject"]), Some("subject"));
        assert_eq!(did_you_mean("frobnicate", keys), None);
        assert_eq!(
            ranked("read_fil", ["read_file", "write_file", "bash"], 3)[0],
            "read_file"
        );
        // `ranked` cuts at 0.75; `nearest` lists the nearest even when none is close.
        assert_eq!(ranked("zzz", ["read_file", "bash"], 3), Vec::<&str>::new());
        assert_eq!(nearest("bsh", ["read_file", "bash"], 1), ["bash"]);
        assert_eq!(nearest("zzz", ["b", "a"], 5), ["a", "b"]);
        assert!((similarity("abcd", "abce") - 0.75).abs() < 1e-9);
        assert!((similarity("", "") - 1.0).abs() < 1e-9);
    }

    #[test]
    fn lists_read_naturally() {
        assert_eq!(one_of(&["a"]), "`a`");
        assert_eq!(one_of(&["a", "b", "c"]), "`a`, `b` or `c`");
        assert_eq!(
            unknown_message("kind", "fetch", &["read", "write"]),
            "unknown kind `fetch`; expected one of `read` or `write`"
        );
    }
}
