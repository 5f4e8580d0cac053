//! Locating `old_string` in a file for `edit_file` and `multi_edit`, and
//! fitting `new_string` to what was found.
//!
//! Models quote code imperfectly: indentation drifts, trailing spaces vanish,
//! escapes get doubled, typographic quotes sneak in, and text copied from a
//! macOS file system arrives in a different Unicode form. The strategies
//! below run in order, from strict to lenient; the first that finds anything
//! decides. Each strategy collects every span it matches before deciding, so
//! two equally good spans without `replace_all` are reported as ambiguous
//! (with their line numbers) instead of silently editing the first.
//!
//! [`plan`] adds what the caller writes: when a lenient strategy matched a
//! block whose indentation differs from `old_string`'s (the model dropped or
//! shifted it), `new_string` is re-indented by the same difference, or the
//! edit is refused when that cannot be done faithfully; it is never written
//! at the wrong depth. Every lenient match carries a one-line note for the
//! model ([`Strategy::note`], [`note_line`]).
//!
//! Everything here works on text whose line breaks are `\n` (the caller
//! normalises `\r\n` and maps spans back); spans are byte ranges of that text.

use std::fmt;
use std::ops::Range;

mod indent;
mod spans;
mod strategies;

use indent::*;
use spans::*;
use strategies::*;

/// A way of matching `old_string` against the file, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// The exact text.
    Exact,
    /// The exact text once both sides are in Unicode Normalization Form C
    /// (`e` + U+0301 equals U+00E9); the span never splits a base character
    /// from its combining marks.
    CanonicalNfc,
    /// Whole lines equal after trimming each line.
    LineTrimmed,
    /// A block (3+ lines) whose first and last lines match and whose middle resembles `old_string`'s.
    BlockAnchor,
    /// The same words with any runs of whitespace between them.
    WhitespaceNormalized,
    /// The same lines after removing the block's common indentation.
    IndentationFlexible,
    /// `old_string` with backslash escapes (`\n`, `\t`, `\"` ...) interpreted.
    EscapeNormalized,
    /// `old_string` without its leading and trailing whitespace.
    TrimmedBoundary,
    /// First and last lines match and at least half of the middle lines match.
    ContextAware,
    /// Typographic quotes, dashes, ellipses and odd spaces equal their ASCII forms (for locating only).
    UnicodeNormalized,
}

impl Strategy {
    /// Every strategy, in the order tried.
    pub const ALL: [Self; 10] = [
        Self::Exact,
        Self::CanonicalNfc,
        Self::LineTrimmed,
        Self::BlockAnchor,
        Self::WhitespaceNormalized,
        Self::IndentationFlexible,
        Self::EscapeNormalized,
        Self::TrimmedBoundary,
        Self::ContextAware,
        Self::UnicodeNormalized,
    ];

    /// The `snake_case` name reported in metadata (`strategy`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Exact => "exact",
            Self::CanonicalNfc => "unicode_nfc",
            Self::LineTrimmed => "line_trimmed",
            Self::BlockAnchor => "block_anchor",
            Self::WhitespaceNormalized => "whitespace_normalized",
            Self::IndentationFlexible => "indentation_flexible",
            Self::EscapeNormalized => "escape_normalized",
            Self::TrimmedBoundary => "trimmed_boundary",
            Self::ContextAware => "context_aware",
            Self::UnicodeNormalized => "unicode_normalized",
        }
    }

    /// What a lenient strategy overlooked, as the end of a sentence starting
    /// "`old_string` matched ..."; `None` for [`Strategy::Exact`].
    ///
    /// This is the single source of the model-visible note about lenient
    /// matches (see [`note_line`]), so that it can move to a generic result
    /// note mechanism in one place.
    pub fn note(self) -> Option<&'static str> {
        Some(match self {
            Self::Exact => return None,
            Self::CanonicalNfc => "after normalising Unicode (NFC)",
            Self::LineTrimmed => "after ignoring whitespace at the start and end of lines",
            Self::BlockAnchor => {
                "by its first and last lines only; the lines between differ from old_string"
            }
            Self::WhitespaceNormalized => "after treating runs of whitespace as equal",
            Self::IndentationFlexible => "after ignoring indentation",
            Self::EscapeNormalized => "after interpreting backslash escapes in old_string",
            Self::TrimmedBoundary => "after trimming whitespace at the ends of old_string",
            Self::ContextAware => {
                "by its first and last lines and half of the lines between; the rest differ"
            }
            Self::UnicodeNormalized => {
                "after treating typographic quotes, dashes and spaces as their ASCII forms"
            }
        })
    }

    /// Whether the strategy compares the text as it is (up to Unicode
    /// canonical equivalence): its matches need no re-indentation.
    fn is_strict(self) -> bool {
        matches!(self, Self::Exact | Self::CanonicalNfc)
    }

    fn spans(self, content: &str, find: &str, replace_all: bool) -> Vec<Range<usize>> {
        match self {
            Self::Exact => exact(content, find),
            Self::CanonicalNfc => canonical_nfc(content, find),
            Self::LineTrimmed => line_trimmed(content, find),
            Self::BlockAnchor => block_anchor(content, find, replace_all),
            Self::WhitespaceNormalized => whitespace_normalized(content, find),
            Self::IndentationFlexible => indentation_flexible(content, find),
            Self::EscapeNormalized => escape_normalized(content, find),
            Self::TrimmedBoundary => trimmed_boundary(content, find),
            Self::ContextAware => context_aware(content, find),
            Self::UnicodeNormalized => unicode_normalized(content, find),
        }
    }
}

/// The message for an `old_string` that no strategy found.
pub const NOT_FOUND: &str = "Could not find old_string in the file. It must match exactly, including whitespace, indentation, and line endings.";

/// How many line numbers a [`MatchError::Multiple`] lists at most.
pub const MAX_LISTED_LINES: usize = 10;

/// Why `old_string` could not be located, or `new_string` not fitted.
///
/// The `Display` form is the model-facing message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MatchError {
    /// No strategy found it ([`NOT_FOUND`]).
    NotFound,
    /// The first strategy that found it found more than one place (and `replace_all` was off).
    Multiple {
        /// The strategy that found several places.
        strategy: Strategy,
        /// How many.
        count: usize,
        /// The distinct 1-based line numbers where places start, the first
        /// [`MAX_LISTED_LINES`] of them.
        lines: Vec<usize>,
        /// Places start on more lines than `lines` lists.
        more_lines: bool,
    },
    /// A lenient strategy matched lines indented differently from
    /// `old_string`, and `new_string` cannot be moved to the file's indentation.
    Indentation {
        /// The strategy that matched.
        strategy: Strategy,
        /// The 1-based line number where the matched block starts.
        line: usize,
        /// Why re-indenting failed, a sentence fragment.
        reason: &'static str,
    },
}

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound => f.write_str(NOT_FOUND),
            Self::Multiple {
                count,
                lines,
                more_lines,
                ..
            } => {
                write!(
                    f,
                    "Found multiple matches for old_string: {count} matches, {}. \
                     Add more surrounding context to make the match unique, or set replace_all to change every one.",
                    list_lines(lines, *more_lines)
                )
            }
            Self::Indentation {
                strategy,
                line,
                reason,
            } => {
                write!(
                    f,
                    "old_string matched at line {line} {}, but new_string cannot be re-indented to fit: {reason}. \
                     Nothing was changed; copy old_string and new_string with the file's exact indentation.",
                    strategy.note().unwrap_or("exactly")
                )
            }
        }
    }
}

impl std::error::Error for MatchError {}

/// "on line 4", "at lines 1 and 2", "at lines 1, 5 and 9", "at lines 1, 2, ..., 10 and later lines".
fn list_lines(lines: &[usize], more: bool) -> String {
    let shown: Vec<String> = lines.iter().map(usize::to_string).collect();
    match shown.split_last() {
        None => "in several places".to_owned(),
        Some((only, [])) if !more => format!("on line {only}"),
        Some((last, rest)) if !more => format!("at lines {} and {last}", rest.join(", ")),
        Some(_) => format!("at lines {} and later lines", shown.join(", ")),
    }
}

/// Where `old_string` is: the strategy that found it and the spans (sorted, disjoint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// The strategy that matched.
    pub strategy: Strategy,
    /// Byte ranges of the content to replace; exactly one unless `replace_all`.
    pub spans: Vec<Range<usize>>,
}

/// Locates `find` in `content` (both with `\n` line breaks).
///
/// # Errors
/// [`MatchError::NotFound`] (also for an empty `find`), or
/// [`MatchError::Multiple`] when the first matching strategy found several
/// places and `replace_all` is off.
pub fn locate(content: &str, find: &str, replace_all: bool) -> Result<Found, MatchError> {
    if find.is_empty() {
        return Err(MatchError::NotFound);
    }
    for strategy in Strategy::ALL {
        let mut spans = strategy.spans(content, find, replace_all);
        if find.ends_with('\n') && strategy != Strategy::TrimmedBoundary {
            take_final_newline(content, &mut spans);
        }
        let spans = disjoint(spans);
        match spans.len() {
            0 => {}
            1 => return Ok(Found { strategy, spans }),
            count if !replace_all => {
                let mut lines: Vec<usize> = Vec::new();
                let mut more_lines = false;
                for span in &spans {
                    let line = line_number(content, span.start);
                    if lines.last() == Some(&line) {
                        continue;
                    }
                    if lines.len() == MAX_LISTED_LINES {
                        more_lines = true;
                        break;
                    }
                    lines.push(line);
                }
                return Err(MatchError::Multiple {
                    strategy,
                    count,
                    lines,
                    more_lines,
                });
            }
            _ => return Ok(Found { strategy, spans }),
        }
    }
    Err(MatchError::NotFound)
}

/// The 1-based number of the line holding byte `at` of `content`.
fn line_number(content: &str, at: usize) -> usize {
    memchr::memchr_iter(b'\n', &content.as_bytes()[..at]).count() + 1
}

/// One replacement of a [`Plan`]: a span of the content and its new text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Byte range of the content (`\n` line breaks) to replace.
    pub span: Range<usize>,
    /// The text to put there: `new_string` as given, or re-indented.
    pub text: String,
}

/// What an edit writes: the strategy that matched and each replacement
/// (sorted, disjoint; exactly one unless `replace_all`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// The strategy that matched.
    pub strategy: Strategy,
    /// The spans and their new text.
    pub replacements: Vec<Replacement>,
    /// At least one replacement is `new_string` re-indented to the file's indentation.
    pub reindented: bool,
}

impl Plan {
    /// The note for this edit (see [`Strategy::note`]): `None` for an exact
    /// match, else e.g. "`old_string` matched after ignoring indentation;
    /// `new_string` was re-indented to the file's indentation".
    pub fn note(&self) -> Option<String> {
        let how = self.strategy.note()?;
        let mut note = format!("old_string matched {how}");
        if self.reindented {
            note.push_str("; new_string was re-indented to the file's indentation");
        }
        Some(note)
    }
}

/// Locates `find` in `content` and fits `replace` to each place found.
///
/// Strict matches ([`Strategy::Exact`], [`Strategy::CanonicalNfc`]) get
/// `replace` exactly as given. A lenient match that starts a line (or
/// follows only the line's indentation) is compared by indentation: the
/// common leading whitespace of the matched lines against that of `find`.
/// When they differ, every non-blank line of `replace` has `find`'s common
/// indentation swapped for the file's (a line indented less than `find`'s
/// common indentation loses the same amount from the file's), and the span
/// is widened to the start of its line so the indentation is written once.
///
/// # Errors
/// Those of [`locate`], and [`MatchError::Indentation`] when `replace`
/// cannot be re-indented faithfully: a line outdented past the file's
/// indentation or by whitespace it does not have, or indentation of tabs
/// where the matched lines use spaces (or the other way round).
pub fn plan(
    content: &str,
    find: &str,
    replace: &str,
    replace_all: bool,
) -> Result<Plan, MatchError> {
    let found = locate(content, find, replace_all)?;
    let strategy = found.strategy;
    let mut replacements: Vec<Replacement> = Vec::with_capacity(found.spans.len());
    let mut reindented = false;
    for span in found.spans {
        let floor = replacements.last().map_or(0, |r| r.span.end);
        let fitted = if strategy.is_strict() {
            None
        } else {
            fit_indentation(content, &span, floor, find, replace).map_err(|reason| {
                MatchError::Indentation {
                    strategy,
                    line: line_number(content, span.start),
                    reason,
                }
            })?
        };
        match fitted {
            Some((span, text)) => {
                reindented = true;
                replacements.push(Replacement { span, text });
            }
            None => replacements.push(Replacement {
                span,
                text: replace.to_owned(),
            }),
        }
    }
    Ok(Plan {
        strategy,
        replacements,
        reindented,
    })
}

/// The one model-visible line about lenient matches in a call, `None` when
/// every edit matched exactly. `notes` holds each edit's [`Plan::note`] in
/// order; with several edits each note names its edit ("edit 2 of 3 ...").
pub fn note_line(notes: &[Option<String>]) -> Option<String> {
    let total = notes.len();
    let parts: Vec<String> = notes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| {
            let n = n.as_deref()?;
            Some(if total > 1 {
                format!("edit {} of {total}: {n}", i + 1)
            } else {
                n.to_owned()
            })
        })
        .collect();
    (!parts.is_empty()).then(|| format!("Note: {}.", parts.join("; ")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(
        content: &str,
        find: &str,
        new: &str,
        all: bool,
    ) -> Result<(String, Strategy), MatchError> {
        let plan = plan(content, find, new, all)?;
        let mut out = content.to_owned();
        for r in plan.replacements.iter().rev() {
            out.replace_range(r.span.clone(), &r.text);
        }
        Ok((out, plan.strategy))
    }

    #[test]
    fn exact_unique_and_ambiguous() {
        assert_eq!(
            apply("old content here", "old content", "new content", false).unwrap(),
            ("new content here".into(), Strategy::Exact)
        );
        assert_eq!(
            apply("foo bar foo", "foo", "x", false),
            Err(MatchError::Multiple {
                strategy: Strategy::Exact,
                count: 2,
                lines: vec![1],
                more_lines: false,
            })
        );
        assert_eq!(apply("foo bar foo", "foo", "x", true).unwrap().0, "x bar x");
        assert_eq!(apply("abc", "zzz", "x", false), Err(MatchError::NotFound));
    }

    #[test]
    fn line_trimmed_takes_the_whole_lines() {
        let (out, s) = apply(
            "function f() {\n    return 1;\n}\n",
            "function f() {\nreturn 1;\n}",
            "function f() {\n    return 2;\n}",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::LineTrimmed);
        assert_eq!(out, "function f() {\n    return 2;\n}\n");
        let (out, _) = apply(
            "let a = 1;   \nlet b = 2;\n",
            "let a = 1;\nlet b = 2;",
            "let a = 10;\nlet b = 2;",
            false,
        )
        .unwrap();
        assert_eq!(out, "let a = 10;\nlet b = 2;\n");
    }

    #[test]
    fn block_anchor_picks_the_most_similar_body() {
        let file = "if (a) {\n  x = 1;\n}\nif (a) {\n  y = 2;\n}\n";
        let (out, s) = apply(
            file,
            "if (a) {\n  y = 3;\n}",
            "if (a) {\n  y = 4;\n}",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::BlockAnchor);
        assert_eq!(out, "if (a) {\n  x = 1;\n}\nif (a) {\n  y = 4;\n}\n");
        assert_eq!(
            apply(file, "if (a) {\n  zzzzzzzzzzzzzzzzzz;\n}", "Q", false),
            Err(MatchError::NotFound)
        );
    }

    #[test]
    fn block_anchor_refuses_a_dissimilar_single_candidate() {
        let file = "fn a() {\n    completely();\n    different();\n    body();\n}\n";
        assert_eq!(
            apply(
                file,
                "fn a() {\n    nothing_like_it_at_all_here();\n}",
                "X",
                false
            ),
            Err(MatchError::NotFound)
        );
    }

    #[test]
    fn whitespace_normalized_keeps_surroundings() {
        let (out, s) = apply("const   x =   5;\n", "const x = 5;", "const x = 6;", false).unwrap();
        assert_eq!(s, Strategy::WhitespaceNormalized);
        assert_eq!(out, "const x = 6;\n");
        let (out, _) = apply("alpha beta gamma\n", "  beta  ", "BETA", false).unwrap();
        assert_eq!(out, "alpha BETA gamma\n");
        // Leading indentation in old_string takes the line's indentation along.
        let (out, _) = apply(
            "    const   x = 5;\n",
            "    const x = 5;",
            "    const x = 6;",
            false,
        )
        .unwrap();
        assert_eq!(out, "    const x = 6;\n");
    }

    #[test]
    fn indentation_flexible_matches_shifted_blocks() {
        let file = "    if x:\n        y()\n";
        let (out, s) = apply(file, "if x:\n    y()", "if x:\n    z()", false).unwrap();
        // Line-trimmed gets there first here; both keep the outside intact
        // and put new_string at the file's indentation.
        assert!(matches!(
            s,
            Strategy::LineTrimmed | Strategy::IndentationFlexible
        ));
        assert_eq!(out, "    if x:\n        z()\n");
        let spans = indentation_flexible("  a\n    b\n", "a\n  b");
        assert_eq!(spans, vec![0..9]);
    }

    #[test]
    fn escape_normalized_interprets_backslashes() {
        let file = "say(\"hi\")\nnext\n";
        let (out, s) = apply(file, "say(\\\"hi\\\")\\nnext", "done", false).unwrap();
        assert_eq!(s, Strategy::EscapeNormalized);
        assert_eq!(out, "done\n");
    }

    #[test]
    fn trimmed_boundary_and_context_aware() {
        assert_eq!(
            trimmed_boundary("a\nkey = 1\nb", "\n\nkey = 1\n\n"),
            vec![2..9, 2..9]
        );
        let file = "start {\n  one\n  two\n  three\n}\n";
        let spans = context_aware(file, "start {\n  one\n  TWO\n  three\n}");
        assert_eq!(spans, vec![0..file.len() - 1]);
        assert!(context_aware(file, "start {\n  x\n  y\n  z\n}").is_empty());
    }

    #[test]
    fn unicode_quotes_locate_only() {
        let (out, s) = apply(
            "print(\u{201C}hi\u{201D})\n",
            "print(\"hi\")",
            "print(\"bye\")",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::UnicodeNormalized);
        assert_eq!(out, "print(\"bye\")\n");
        let (out, _) = apply("a \u{2013} b\u{2026} end", "a - b...", "X", false).unwrap();
        assert_eq!(out, "X end");
    }

    #[test]
    fn typographic_old_string_finds_ascii_text() {
        let (out, s) = apply(
            "say \"hi\" - now\n",
            "say \u{201C}hi\u{201D} \u{2014} now",
            "X",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::UnicodeNormalized);
        assert_eq!(out, "X\n");
    }

    #[test]
    fn lenient_strategies_never_match_part_of_a_word() {
        assert_eq!(
            apply("foobar\nbaz\n", "\nfoo\n", "X", false),
            Err(MatchError::NotFound)
        );
        assert_eq!(
            apply("foobar baz\n", "foo  bar", "X", false),
            Err(MatchError::NotFound)
        );
        assert_eq!(
            apply("xfoo  bar\n", "foo bar", "X", false),
            Err(MatchError::NotFound)
        );
        assert_eq!(
            apply("say(\"hi\")x\n", "say(\\\"hi\\\")", "X", false)
                .unwrap()
                .0,
            "Xx\n",
            "a token ending in punctuation may touch a word"
        );
        // Whole words still match.
        let (out, s) = apply("a foo   bar;\n", "foo bar", "X", false).unwrap();
        assert_eq!(
            (out.as_str(), s),
            ("a X;\n", Strategy::WhitespaceNormalized)
        );
    }

    #[test]
    fn line_strategies_take_old_strings_final_newline() {
        // (The replacements keep the file's indentation; see the re-indentation tests.)
        let (out, s) = apply("  foo  \nnext\n", "foo\n", "bar\n", false).unwrap();
        assert_eq!(s, Strategy::LineTrimmed);
        assert_eq!(out, "  bar\nnext\n");
        let (out, _) = apply(
            "    if x:\n        y()\nz\n",
            "if x:\n    y()\n",
            "w\n",
            false,
        )
        .unwrap();
        assert_eq!(out, "    w\nz\n");
        // Without a final newline in old_string the line break stays.
        // (new_string is outdented by one space from old_string's one space.)
        let (out, _) = apply("  foo  \nnext\n", " foo\t", "bar", false).unwrap();
        assert_eq!(out, " bar\nnext\n");
    }

    #[test]
    fn multiple_identical_lines_are_ambiguous_in_every_strategy() {
        assert!(matches!(
            apply("foo\nfoo\n", "foo", "bar", false),
            Err(MatchError::Multiple { .. })
        ));
    }

    // --- Unicode canonical equivalence (NFC) --------------------------------

    #[test]
    fn nfc_matches_canonically_equal_text_and_writes_new_string_as_given() {
        // The input: the file is decomposed (macOS), old_string precomposed.
        let file = "name = \"cafe\u{301}\"\nother = 1\n";
        let (out, s) = apply(
            file,
            "name = \"caf\u{e9}\"",
            "name = \"caf\u{e9} au lait\"",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::CanonicalNfc);
        assert_eq!(out, "name = \"caf\u{e9} au lait\"\nother = 1\n");
        // The other way round: a precomposed file, a decomposed old_string.
        let (out, s) = apply("x = \"na\u{ef}ve\"\n", "nai\u{308}ve", "plain", false).unwrap();
        assert_eq!(s, Strategy::CanonicalNfc);
        assert_eq!(out, "x = \"plain\"\n");
        // Decomposed Hangul (conjoining jamo) against precomposed syllables.
        let (out, _) = apply(
            "greet(\"\u{1112}\u{1161}\u{11ab}\u{1100}\u{1173}\u{11af}\")\n",
            "greet(\"\u{d55c}\u{ae00}\")",
            "greet(\"hi\")",
            false,
        )
        .unwrap();
        assert_eq!(out, "greet(\"hi\")\n");
        // Several places, mixed forms, replace_all; bytes between are untouched.
        let file = "r\u{e9}sum\u{e9} | re\u{301}sume\u{301} | r\u{e9}sume\u{301}\n";
        let found = locate(file, "re\u{301}sum\u{e9}", true).unwrap();
        assert_eq!(found.strategy, Strategy::CanonicalNfc);
        let (out, _) = apply(file, "re\u{301}sum\u{e9}", "CV", true).unwrap();
        assert_eq!(out, "CV | CV | CV\n");
    }

    #[test]
    fn nfc_never_splits_a_character_from_its_marks() {
        // é followed by another combining mark (dot below): NFC composes
        // differently, and old_string alone must not match part of it.
        assert_eq!(
            apply("caf\u{e9}\u{323}\n", "cafe\u{301}", "X", false),
            Err(MatchError::NotFound)
        );
        // A base letter with a mark that has no precomposed form.
        assert_eq!(
            canonical_nfc("q\u{301}q\u{301}\n", "q\u{301}\u{323}"),
            Vec::<Range<usize>>::new()
        );
        // Matching up to a combining sequence and not into it is fine.
        let file = "ab\u{e9}e\u{301}\n";
        assert_eq!(canonical_nfc(file, "\u{e9}\u{e9}"), vec![2..7]);
        // Both sides already NFC: nothing for this strategy to add.
        assert!(canonical_nfc("caf\u{e9}", "caf\u{e9}").is_empty());
        assert!(canonical_nfc("plain ascii", "ascii").is_empty());
    }

    // --- Re-indentation of lenient matches ----------------------------------

    #[test]
    fn dropped_indentation_is_restored_in_new_string() {
        // The input: a method body quoted without its indentation.
        let file =
            "class A:\n    def f(self):\n        return 1\n\n    def g(self):\n        return 2\n";
        let p = plan(
            file,
            "def f(self):\n    return 1",
            "def f(self):\n    x = 1\n    return x",
            false,
        )
        .unwrap();
        assert_eq!(p.strategy, Strategy::LineTrimmed);
        assert!(p.reindented);
        let (out, _) = apply(
            file,
            "def f(self):\n    return 1",
            "def f(self):\n    x = 1\n    return x",
            false,
        )
        .unwrap();
        assert_eq!(
            out,
            "class A:\n    def f(self):\n        x = 1\n        return x\n\n    def g(self):\n        return 2\n"
        );
        assert_eq!(
            p.note().as_deref(),
            Some(
                "old_string matched after ignoring whitespace at the start and end of lines; new_string was re-indented to the file's indentation"
            )
        );
        // Every line at column 0 in old_string; blank lines of new_string stay blank.
        let (out, _) = apply(
            "def h():\n    if x:\n        y()\n    return\n",
            "if x:\ny()",
            "if x:\n    y()\n\n    z()",
            false,
        )
        .unwrap();
        assert_eq!(
            out,
            "def h():\n    if x:\n        y()\n\n        z()\n    return\n"
        );
    }

    #[test]
    fn over_indented_and_shifted_old_strings() {
        // old_string indented more than the file: new_string loses the difference.
        let (out, _) = apply(
            "x = 1\ny = 2\n",
            "    x = 1\n    y = 2",
            "    x = 10\n    y = 2",
            false,
        )
        .unwrap();
        assert_eq!(out, "x = 10\ny = 2\n");
        // A line of new_string outdented past old_string's indentation.
        let (out, _) = apply("    a\n    b\n", "  a\n  b", "a2\n  b2", false).unwrap();
        assert_eq!(out, "  a2\n    b2\n");
        // Outdented further than the file has room for: refused.
        let e = apply("  a\n  b\n", "    a\n    b", "a2\nb2", false).unwrap_err();
        assert!(
            matches!(e, MatchError::Indentation { line: 1, .. }),
            "{e:?}"
        );
        // replace_all: each place gets its own indentation.
        let file = "if a:\n    log()\nif b:\n        log()\n";
        let (out, s) = apply(file, "log()  \n", "log()\nflush()\n", true).unwrap();
        assert_eq!(s, Strategy::LineTrimmed);
        assert_eq!(
            out,
            "if a:\n    log()\n    flush()\nif b:\n        log()\n        flush()\n"
        );
        // A whitespace-normalised match after the line's indentation.
        let (out, s) = apply(
            "    const   x = 5;\n",
            "const x = 5;",
            "const x = 6;\nconst y = 7;",
            false,
        )
        .unwrap();
        assert_eq!(s, Strategy::WhitespaceNormalized);
        assert_eq!(out, "    const x = 6;\n    const y = 7;\n");
    }

    #[test]
    fn tabs_and_spaces_convert_or_refuse() {
        // The file indents with tabs, old_string and new_string with 4 spaces.
        let file = "\tif (x) {\n\t\ty();\n\t}\n";
        let (out, _) = apply(
            file,
            "    if (x) {\n        y();\n    }",
            "    if (x) {\n        z();\n        w();\n    }",
            false,
        )
        .unwrap();
        assert_eq!(out, "\tif (x) {\n\t\tz();\n\t\tw();\n\t}\n");
        // The other way round: a 2-space file, a tab-indented old_string.
        let (out, _) = apply("  a:\n    b\n", "\ta:\n\t\tb", "\ta:\n\t\tc", false).unwrap();
        assert_eq!(out, "  a:\n    c\n");
        // Widths that do not pair up are refused, and so are odd remainders.
        let file = "\tif (x) {\n\t\ty();\n\t}\n";
        let e = apply(file, "    if (x) {\n      y();\n    }", "X", false).unwrap_err();
        assert!(e.to_string().contains("tab width"), "{e}");
        let e = apply(
            file,
            "    if (x) {\n        y();\n    }",
            "    if (x) {\n          z();\n    }",
            false,
        )
        .unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
        // old_string at column 0, new_string nesting with spaces in a tab file: refused.
        let e = apply(file, "if (x) {\ny();\n}", "if (x) {\n    z();\n}", false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "old_string matched at line 1 after ignoring whitespace at the start and end of lines, but new_string cannot be re-indented to fit: new_string indents with spaces where the file's lines use tabs. Nothing was changed; copy old_string and new_string with the file's exact indentation."
        );
    }

    #[test]
    fn strict_matches_are_never_reindented() {
        // Exact: new_string as given even where the file is indented.
        let p = plan("    a()\n", "a()", "b()\nc()", false).unwrap();
        assert_eq!(p.strategy, Strategy::Exact);
        assert!(!p.reindented);
        assert_eq!(p.replacements[0].text, "b()\nc()");
        assert_eq!(p.note(), None);
        // Same indentation on both sides: nothing to do, and no claim of it.
        let p = plan("  foo  \n", "  foo\n", "  bar\n", false).unwrap();
        assert_eq!(p.strategy, Strategy::LineTrimmed);
        assert!(!p.reindented);
        assert_eq!(p.replacements[0].text, "  bar\n");
    }

    // --- Ambiguity messages ---------------------------------------------------

    #[test]
    fn multiple_matches_say_how_many_and_where() {
        // The input: a multi-line old_string found twice.
        let e = locate("\tx := 1\n\tx := 1\n", "\tx := 1\n", false).unwrap_err();
        assert_eq!(
            e.to_string(),
            "Found multiple matches for old_string: 2 matches, at lines 1 and 2. Add more surrounding context to make the match unique, or set replace_all to change every one."
        );
        let e = locate("a\nb\na\nb\nc\na\nb\n", "a\nb", false).unwrap_err();
        assert_eq!(
            e,
            MatchError::Multiple {
                strategy: Strategy::Exact,
                count: 3,
                lines: vec![1, 3, 6],
                more_lines: false
            }
        );
        assert!(
            e.to_string().contains("3 matches, at lines 1, 3 and 6."),
            "{e}"
        );
        // A lenient strategy's places are listed too.
        let e = locate("  if x:\n    y\nz\nif x:\n  y\n", "if x:\ny", false).unwrap_err();
        assert!(
            e.to_string().contains("2 matches, at lines 1 and 4."),
            "{e}"
        );
        // Two on one line; and more lines than are listed.
        let e = locate("foo foo\n", "foo", false).unwrap_err();
        assert!(e.to_string().contains("2 matches, on line 1."), "{e}");
        let many = "k = 1\n".repeat(25);
        let e = locate(&many, "k = 1\n", false).unwrap_err();
        assert!(
            e.to_string()
                .contains("25 matches, at lines 1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and later lines."),
            "{e}"
        );
    }

    // --- Notes ------------------------------------------------------------------

    #[test]
    fn every_lenient_strategy_has_a_note_and_exact_has_none() {
        for s in Strategy::ALL {
            assert_eq!(s.note().is_none(), s == Strategy::Exact, "{s:?}");
        }
        assert_eq!(note_line(&[None]), None);
        assert_eq!(
            note_line(&[Some(
                "old_string matched after normalising Unicode (NFC)".into()
            )]),
            Some("Note: old_string matched after normalising Unicode (NFC).".into())
        );
        assert_eq!(
            note_line(&[None, Some("a".into()), Some("b".into())]),
            Some("Note: edit 2 of 3: a; edit 3 of 3: b.".into())
        );
    }
}
