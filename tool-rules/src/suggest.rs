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
    let lowered = word.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .map(|c| (strsim::jaro_winkler(&lowered, &c.to_ascii_lowercase()), c))
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    scored.into_iter().take(max).map(|(_, c)| c).collect()
}

/// `` `a`, `b` or `c` ``: a list of choices as a sentence says it.
pub fn one_of(candidates: &[&str]) -> String {
    let quoted: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
    match quoted.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
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
