//! Allow / ask / deny rules for shell commands, checked on every segment of a
//! compound command.
//!
//! A model can hide `rm -rf ~` behind `echo ok && …`, inside `$(…)`, after a
//! newline or in a pipe, so rules are never matched against the raw string.
//! [`split_command`] cuts a command into the simple commands it would run
//! (at `&&`, `||`, `;`, `|`, `|&`, `&`, newlines and subshell parentheses),
//! removes quoting, leading `NAME=value` assignments and keywords such as `if`
//! and `then`, and also collects the commands inside `$(…)`, backticks and
//! `<(…)`/`>(…)`. [`CommandPolicy::check`] matches each of those segments
//! against the rules; the strictest verdict wins. Command substitution, `eval`
//! and `sh -c` run text the rules cannot fully see, so they need at least a
//! confirmation, and so does a command the splitter could not read to the end
//! (an unterminated quote or substitution).
//!
//! ```
//! use tool_builtins::{CommandPolicy, PolicyAction};
//!
//! let policy = CommandPolicy::new(PolicyAction::Ask)
//!     .allow("git status *")
//!     .allow("ls *")
//!     .deny("rm -rf *");
//! assert_eq!(policy.check("git status --short").action, PolicyAction::Allow);
//! assert_eq!(policy.check("ls && rm -rf /tmp/x").action, PolicyAction::Deny);
//! assert_eq!(policy.check("ls $(cat list)").action, PolicyAction::Ask);
//! assert_eq!(policy.check("cargo build").action, PolicyAction::Ask);
//! ```
//!
//! The splitter reads shell syntax well enough for policy decisions, not to
//! run it: here-document bodies are skipped, `case` patterns and function
//! definitions come out as odd segments that only ever match broad rules or
//! the default. It errs towards more segments, never fewer.

use std::fmt;

/// What a policy says about a command.
///
/// Ordered from most to least permissive: `Allow < Ask < Deny`, so the
/// verdict for a compound command is the maximum over its segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PolicyAction {
    /// Run without asking.
    Allow,
    /// Ask a person (the confirmation gate) before running.
    Ask,
    /// Refuse to run.
    Deny,
}

impl PolicyAction {
    /// `"allow"`, `"ask"` or `"deny"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Ask => "ask",
            Self::Deny => "deny",
        }
    }
}

impl fmt::Display for PolicyAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One rule: a wildcard pattern over a normalised simple command, and its action.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rule {
    pattern: String,
    action: PolicyAction,
    /// Non-wildcard characters in the pattern: the more, the more specific.
    specificity: usize,
}

/// Allow / ask / deny patterns for shell commands.
///
/// Patterns are matched against each simple command of a compound command,
/// normalised: words unquoted and joined by one space, leading `NAME=value`
/// assignments and shell keywords removed, substitutions shown as `$(...)`.
/// `*` matches any run of characters (spaces included), `?` one character; a
/// pattern ending in ` *` also matches the command without arguments
/// (`git push *` matches `git push`). A command run by path (`/bin/rm`) is
/// also tried under its file name (`rm`).
///
/// When several rules match a segment, the most specific one (most
/// non-wildcard characters) decides; among equally specific rules the one
/// added last wins. A segment no rule matches gets the default action.
///
/// [`Default`] is `CommandPolicy::new(PolicyAction::Ask)`: no rules, every
/// command needs confirmation (fail closed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandPolicy {
    rules: Vec<Rule>,
    default: PolicyAction,
}

impl Default for CommandPolicy {
    fn default() -> Self {
        Self::new(PolicyAction::Ask)
    }
}

/// The verdict of [`CommandPolicy::check`] on a whole command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyDecision {
    /// The strictest verdict over all segments, raised to at least
    /// [`PolicyAction::Ask`] when the command has substitutions, runs
    /// dynamic code or could not be read to the end.
    pub action: PolicyAction,
    /// Each simple command found, with its own verdict.
    pub segments: Vec<SegmentVerdict>,
    /// A sentence saying why, naming the deciding segment and rule.
    pub reason: String,
}

/// The verdict on one simple command of a compound command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentVerdict {
    /// The normalised simple command.
    pub segment: String,
    /// The action of the deciding rule, or the default.
    pub action: PolicyAction,
    /// The deciding rule's pattern; `None` when the default applied.
    pub rule: Option<String>,
}

impl CommandPolicy {
    /// A policy with no rules whose unmatched segments get `default`.
    pub fn new(default: PolicyAction) -> Self {
        Self {
            rules: Vec::new(),
            default,
        }
    }

    /// Adds a rule with the given action.
    #[must_use]
    pub fn rule(mut self, pattern: impl Into<String>, action: PolicyAction) -> Self {
        let pattern = normalise_pattern(&pattern.into());
        let specificity = pattern.chars().filter(|c| !matches!(c, '*' | '?')).count();
        self.rules.push(Rule {
            pattern,
            action,
            specificity,
        });
        self
    }

    /// Adds an allow rule.
    #[must_use]
    pub fn allow(self, pattern: impl Into<String>) -> Self {
        self.rule(pattern, PolicyAction::Allow)
    }

    /// Adds an ask rule.
    #[must_use]
    pub fn ask(self, pattern: impl Into<String>) -> Self {
        self.rule(pattern, PolicyAction::Ask)
    }

    /// Adds a deny rule.
    #[must_use]
    pub fn deny(self, pattern: impl Into<String>) -> Self {
        self.rule(pattern, PolicyAction::Deny)
    }

    /// The action for segments no rule matches.
    pub fn default_action(&self) -> PolicyAction {
        self.default
    }

    /// Checks every segment of `command` (see the module docs) and returns
    /// the strictest verdict with the reason.
    pub fn check(&self, command: &str) -> PolicyDecision {
        let parts = split_command(command);
        let segments: Vec<SegmentVerdict> = parts
            .segments
            .iter()
            .map(|segment| self.check_segment(segment))
            .collect();
        let strictest = segments.iter().max_by_key(|v| v.action);
        let mut action = strictest.map_or(PolicyAction::Allow, |v| v.action);
        let mut reason = match strictest {
            None => "The command is empty.".to_owned(),
            Some(v) => match &v.rule {
                Some(rule) => format!("`{}` matches the {} rule `{rule}`.", v.segment, v.action),
                None => format!(
                    "`{}` matches no rule; the default is {}.",
                    v.segment, v.action
                ),
            },
        };
        if action < PolicyAction::Ask {
            let why = if parts.has_substitution {
                Some("it uses command substitution, whose commands are only known when it runs")
            } else if parts.dynamic {
                Some("it runs text as code (`eval` or a shell's `-c`)")
            } else if parts.incomplete {
                Some("it could not be read to the end (an unterminated quote or substitution)")
            } else {
                None
            };
            if let Some(why) = why {
                action = PolicyAction::Ask;
                reason = format!("The command needs confirmation: {why}.");
            }
        }
        PolicyDecision {
            action,
            segments,
            reason,
        }
    }

    fn check_segment(&self, segment: &str) -> SegmentVerdict {
        let by_name = command_by_file_name(segment);
        let best = self
            .rules
            .iter()
            .filter(|r| {
                rule_matches(&r.pattern, segment)
                    || by_name
                        .as_deref()
                        .is_some_and(|s| rule_matches(&r.pattern, s))
            })
            // max_by_key returns the last of equal maxima: later rules win ties.
            .max_by_key(|r| r.specificity);
        SegmentVerdict {
            segment: segment.to_owned(),
            action: best.map_or(self.default, |r| r.action),
            rule: best.map(|r| r.pattern.clone()),
        }
    }
}

/// Collapses runs of whitespace in a pattern to one space and trims it.
fn normalise_pattern(pattern: &str) -> String {
    pattern.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `segment` with its first word reduced to its file name, when that differs.
fn command_by_file_name(segment: &str) -> Option<String> {
    let (first, rest) = segment.split_once(' ').unwrap_or((segment, ""));
    let name = first.rsplit('/').next().filter(|n| !n.is_empty())?;
    (name != first).then(|| {
        if rest.is_empty() {
            name.to_owned()
        } else {
            format!("{name} {rest}")
        }
    })
}

fn rule_matches(pattern: &str, text: &str) -> bool {
    wildcard_match(pattern.as_bytes(), text.as_bytes())
        || pattern
            .strip_suffix(" *")
            .is_some_and(|bare| wildcard_match(bare.as_bytes(), text.as_bytes()))
}

/// `*` = any run of bytes, `?` = one character; everything else literal.
fn wildcard_match(pattern: &[u8], text: &[u8]) -> bool {
    let (mut p, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while t < text.len() {
        if p < pattern.len() && pattern[p] == b'*' {
            star = Some((p, t));
            p += 1;
        } else if p < pattern.len() && pattern[p] == b'?' {
            p += 1;
            t += utf8_len(text[t]);
        } else if p < pattern.len() && pattern[p] == text[t] {
            p += 1;
            t += 1;
        } else if let Some((sp, st)) = star {
            p = sp + 1;
            t = st + 1;
            star = Some((sp, st + 1));
        } else {
            return false;
        }
    }
    pattern[p..].iter().all(|&b| b == b'*')
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0.. => 4,
        0xe0.. => 3,
        0xc0.. => 2,
        _ => 1,
    }
}

/// The simple commands of a shell command line, as [`split_command`] finds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandParts {
    /// Normalised simple commands, including those inside substitutions.
    pub segments: Vec<String>,
    /// `$(…)`, backticks or `<(…)`/`>(…)` appear (outside single quotes), or
    /// an unquoted here-document body contains one.
    pub has_substitution: bool,
    /// A segment runs text as code: `eval …` or `sh|bash|zsh|dash|ksh -c …`.
    pub dynamic: bool,
    /// The text ended inside a quote or a substitution.
    pub incomplete: bool,
}

/// Splits a shell command line into the simple commands it would run.
/// See the module docs for what is recognised.
///
/// ```
/// use tool_builtins::split_command;
///
/// let parts = split_command("cd src && FOO=1 'rm' -rf build; echo \"$(date)\" | tee log &\nls");
/// assert_eq!(parts.segments, ["cd src", "rm -rf build", "date", "echo $(...)", "tee log", "ls"]);
/// assert!(parts.has_substitution);
/// ```
pub fn split_command(command: &str) -> CommandParts {
    let chars: Vec<char> = command.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        pos: 0,
        parts: CommandParts::default(),
        heredocs: Vec::new(),
    };
    lexer.list(None);
    let mut parts = lexer.parts;
    parts.dynamic = parts.segments.iter().any(|s| runs_code(s));
    parts
}

/// Keywords that may precede a command in the same segment.
const LEADING_KEYWORDS: &[&str] = &[
    "!", "{", "if", "then", "else", "elif", "do", "while", "until", "time",
];
/// Words that end a compound command; a segment holding only these is dropped.
const CLOSERS: &[&str] = &["fi", "done", "esac", "}", "then", "do", "else"];
/// Segments starting with these are headers of compound commands, not commands.
const HEADERS: &[&str] = &["for", "case", "select", "function"];

fn runs_code(segment: &str) -> bool {
    let mut words = segment.split(' ');
    let first = words.next().unwrap_or_default();
    let name = first.rsplit('/').next().unwrap_or(first);
    match name {
        "eval" => true,
        "sh" | "bash" | "zsh" | "dash" | "ksh" => {
            words.any(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
        }
        _ => false,
    }
}

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    parts: CommandParts,
    /// Here-documents whose bodies start after the next newline: (delimiter, strip tabs, quoted).
    heredocs: Vec<(String, bool, bool)>,
}

/// The words of the segment being read.
#[derive(Default)]
struct Segment {
    words: Vec<String>,
    word: String,
    in_word: bool,
}

impl Segment {
    fn end_word(&mut self) {
        if self.in_word {
            self.words.push(std::mem::take(&mut self.word));
            self.in_word = false;
        }
    }

    fn push(&mut self, c: char) {
        self.word.push(c);
        self.in_word = true;
    }

    fn push_str(&mut self, s: &str) {
        self.word.push_str(s);
        self.in_word = true;
    }

    fn is_empty(&self) -> bool {
        self.words.is_empty() && !self.in_word
    }
}

impl Lexer<'_> {
    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    fn finish(&mut self, seg: &mut Segment) {
        seg.end_word();
        let words = std::mem::take(&mut seg.words);
        let mut rest: &[String] = &words;
        loop {
            match rest.first() {
                Some(w) if LEADING_KEYWORDS.contains(&w.as_str()) || is_assignment(w) => {
                    rest = &rest[1..];
                }
                _ => break,
            }
        }
        let Some(first) = rest.first() else { return };
        if HEADERS.contains(&first.as_str()) || rest.iter().all(|w| CLOSERS.contains(&w.as_str())) {
            return;
        }
        self.parts.segments.push(rest.join(" "));
    }

    /// Reads a command list until `close` (`)` or a backtick) or the end.
    /// Returns whether `close` was found (always `true` when `close` is `None`).
    fn list(&mut self, close: Option<char>) -> bool {
        let mut seg = Segment::default();
        let mut depth = 0usize;
        while let Some(c) = self.peek_at(0) {
            match c {
                ' ' | '\t' | '\r' => {
                    seg.end_word();
                    self.pos += 1;
                }
                '\n' => {
                    self.finish(&mut seg);
                    self.pos += 1;
                    self.skip_heredoc_bodies();
                }
                ';' => {
                    self.finish(&mut seg);
                    self.pos += 1;
                }
                '&' => {
                    let next = self.peek_at(1);
                    if next == Some('>') {
                        // `&>file`: a redirection, not a separator.
                        seg.push_str("&>");
                        self.pos += 2;
                    } else if seg.in_word && (seg.word.ends_with('>') || seg.word.ends_with('<')) {
                        // `2>&1`, `<&3`.
                        seg.push('&');
                        self.pos += 1;
                    } else {
                        self.pos += if next == Some('&') { 2 } else { 1 };
                        self.finish(&mut seg);
                    }
                }
                '|' => {
                    self.pos += if matches!(self.peek_at(1), Some('|' | '&')) {
                        2
                    } else {
                        1
                    };
                    self.finish(&mut seg);
                }
                '(' => {
                    self.pos += 1;
                    if seg.is_empty() {
                        depth += 1;
                    } else {
                        // e.g. a function definition `f()`; keep it in the word.
                        seg.push('(');
                    }
                }
                ')' => {
                    self.pos += 1;
                    self.finish(&mut seg);
                    if depth > 0 {
                        depth -= 1;
                    } else if close == Some(')') {
                        return true;
                    }
                }
                '`' => {
                    self.pos += 1;
                    if close == Some('`') {
                        self.finish(&mut seg);
                        return true;
                    }
                    self.substitution('`');
                    seg.push_str("$(...)");
                }
                '$' => self.dollar(&mut seg),
                '<' | '>' if self.peek_at(1) == Some('(') && !seg.in_word => {
                    self.pos += 2;
                    self.substitution(')');
                    seg.push_str("<(...)");
                }
                '<' if self.peek_at(1) == Some('<') && self.peek_at(2) != Some('<') => {
                    self.heredoc_start(&mut seg);
                }
                '\'' => {
                    self.pos += 1;
                    seg.in_word = true;
                    loop {
                        match self.peek_at(0) {
                            None => {
                                self.parts.incomplete = true;
                                break;
                            }
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(ch) => {
                                seg.word.push(ch);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => {
                    self.pos += 1;
                    self.double_quoted(&mut seg);
                }
                '\\' => {
                    self.pos += 1;
                    match self.peek_at(0) {
                        Some('\n') => self.pos += 1, // line continuation
                        Some(ch) => {
                            seg.push(ch);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                '#' if !seg.in_word => {
                    while self.peek_at(0).is_some_and(|ch| ch != '\n') {
                        self.pos += 1;
                    }
                }
                _ => {
                    seg.push(c);
                    self.pos += 1;
                }
            }
        }
        self.finish(&mut seg);
        if close.is_some() {
            self.parts.incomplete = true;
            return false;
        }
        true
    }

    /// After the opening of `$(`, a backtick or `<(`: reads the inner commands.
    fn substitution(&mut self, close: char) {
        self.parts.has_substitution = true;
        self.list(Some(close));
    }

    /// At a `$`: substitution, arithmetic, parameter expansion or a plain `$`.
    fn dollar(&mut self, seg: &mut Segment) {
        match (self.peek_at(1), self.peek_at(2)) {
            (Some('('), Some('(')) => {
                self.pos += 3;
                let body = self.balanced('(', ')', 2);
                if body.contains("$(") || body.contains('`') {
                    self.parts.has_substitution = true;
                    split_into(self, &body);
                }
                seg.push_str("$((...))");
            }
            (Some('('), _) => {
                self.pos += 2;
                self.substitution(')');
                seg.push_str("$(...)");
            }
            (Some('{'), _) => {
                self.pos += 2;
                let body = self.balanced('{', '}', 1);
                if body.contains("$(") || body.contains('`') {
                    self.parts.has_substitution = true;
                    split_into(self, &body);
                }
                seg.push_str("${");
                seg.push_str(&body);
                seg.push('}');
            }
            _ => {
                seg.push('$');
                self.pos += 1;
            }
        }
    }

    /// Reads up to the point where `depth` levels of `open`/`close` are closed;
    /// returns the text inside (without the final closers).
    fn balanced(&mut self, open: char, close: char, mut depth: usize) -> String {
        let start = self.pos;
        while let Some(c) = self.peek_at(0) {
            self.pos += 1;
            if c == '\\' {
                self.pos += 1;
            } else if c == open {
                depth += 1;
            } else if c == close {
                depth -= 1;
                if depth == 0 {
                    let end = self.pos - 1;
                    let body: String = self.chars[start..end].iter().collect();
                    return body.trim_end_matches(close).to_owned();
                }
            }
        }
        self.parts.incomplete = true;
        self.chars[start..].iter().collect()
    }

    /// After an opening `"`: reads to the closing quote, handling escapes and substitutions.
    fn double_quoted(&mut self, seg: &mut Segment) {
        seg.in_word = true;
        loop {
            match self.peek_at(0) {
                None => {
                    self.parts.incomplete = true;
                    return;
                }
                Some('"') => {
                    self.pos += 1;
                    return;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek_at(0) {
                        Some('\n') => self.pos += 1,
                        Some(ch @ ('"' | '\\' | '$' | '`')) => {
                            seg.word.push(ch);
                            self.pos += 1;
                        }
                        Some(ch) => {
                            seg.word.push('\\');
                            seg.word.push(ch);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                Some('$') => self.dollar(seg),
                Some('`') => {
                    self.pos += 1;
                    self.substitution('`');
                    seg.word.push_str("$(...)");
                }
                Some(ch) => {
                    seg.word.push(ch);
                    self.pos += 1;
                }
            }
        }
    }

    /// At `<<`: records a here-document whose body follows the next newline.
    fn heredoc_start(&mut self, seg: &mut Segment) {
        self.pos += 2;
        let strip_tabs = self.peek_at(0) == Some('-');
        if strip_tabs {
            self.pos += 1;
        }
        seg.end_word();
        seg.words.push("<<".to_owned());
        while matches!(self.peek_at(0), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let mut delimiter = String::new();
        let mut quoted = false;
        while let Some(c) = self.peek_at(0) {
            match c {
                '\'' | '"' => {
                    quoted = true;
                    self.pos += 1;
                }
                '\\' => {
                    quoted = true;
                    self.pos += 1;
                }
                ' ' | '\t' | '\n' | ';' | '&' | '|' | '<' | '>' | '(' | ')' => break,
                _ => {
                    delimiter.push(c);
                    self.pos += 1;
                }
            }
        }
        seg.words.push(delimiter.clone());
        self.heredocs.push((delimiter, strip_tabs, quoted));
    }

    /// Just after a newline: skips the bodies of pending here-documents.
    fn skip_heredoc_bodies(&mut self) {
        for (delimiter, strip_tabs, quoted) in std::mem::take(&mut self.heredocs) {
            loop {
                if self.pos >= self.chars.len() {
                    return;
                }
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |i| self.pos + i);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let candidate = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line.as_str()
                };
                if candidate == delimiter {
                    break;
                }
                if !quoted && (line.contains("$(") || line.contains('`')) {
                    self.parts.has_substitution = true;
                    split_into(self, &line);
                }
            }
        }
    }
}

/// Splits `text` (found inside an arithmetic, a `${…}` or a here-document)
/// and adds its segments and flags to `lexer`'s.
fn split_into(lexer: &mut Lexer<'_>, text: &str) {
    let inner = split_command(text);
    lexer.parts.segments.extend(inner.segments);
    lexer.parts.has_substitution |= inner.has_substitution;
    lexer.parts.incomplete |= inner.incomplete;
}

fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segs(cmd: &str) -> Vec<String> {
        split_command(cmd).segments
    }

    #[test]
    fn splits_at_every_operator() {
        assert_eq!(
            segs("a 1 && b 2 || c; d | e |& f & g\nh"),
            ["a 1", "b 2", "c", "d", "e", "f", "g", "h"]
        );
    }

    #[test]
    fn redirections_with_ampersand_are_not_separators() {
        assert_eq!(segs("make 2>&1 | tee log"), ["make 2>&1", "tee log"]);
        assert_eq!(segs("make &>log; ls"), ["make &>log", "ls"]);
    }

    #[test]
    fn quotes_hide_operators_and_are_removed() {
        assert_eq!(segs("echo 'a && b' \"c; d\""), ["echo a && b c; d"]);
        assert_eq!(segs("r'm' -rf /"), ["rm -rf /"]);
        assert_eq!(segs(r"echo a\;b"), ["echo a;b"]);
    }

    #[test]
    fn substitutions_are_flagged_and_their_commands_collected() {
        let p = split_command("echo $(rm -rf /) `id` <(ls)");
        assert!(p.has_substitution);
        assert_eq!(
            p.segments,
            ["rm -rf /", "id", "ls", "echo $(...) $(...) <(...)"]
        );
        let p = split_command("echo \"now: $(date)\"");
        assert!(p.has_substitution);
        assert_eq!(p.segments, ["date", "echo now: $(...)"]);
        let p = split_command("echo '$(date)'");
        assert!(!p.has_substitution);
        assert_eq!(p.segments, ["echo $(date)"]);
    }

    #[test]
    fn arithmetic_and_parameter_expansion_are_not_substitutions() {
        let p = split_command("echo $((1 + 2)) ${HOME:-/tmp}");
        assert!(!p.has_substitution);
        assert_eq!(p.segments, ["echo $((...)) ${HOME:-/tmp}"]);
        let p = split_command("echo ${X:-$(whoami)}");
        assert!(p.has_substitution);
        assert!(p.segments.contains(&"whoami".to_owned()));
    }

    #[test]
    fn keywords_assignments_and_subshells() {
        assert_eq!(
            segs("if test -f x; then FOO=1 BAR=2 rm x; fi"),
            ["test -f x", "rm x"]
        );
        assert_eq!(segs("for f in *.rs; do wc -l \"$f\"; done"), ["wc -l $f"]);
        assert_eq!(segs("(cd sub && make) | cat"), ["cd sub", "make", "cat"]);
        assert_eq!(segs("{ ls; pwd; }"), ["ls", "pwd"]);
        assert_eq!(segs("! grep -q x f"), ["grep -q x f"]);
    }

    #[test]
    fn comments_and_continuations() {
        assert_eq!(segs("ls # rm -rf /\npwd"), ["ls", "pwd"]);
        assert_eq!(segs("echo a \\\n  b"), ["echo a b"]);
        assert_eq!(segs("echo a#b"), ["echo a#b"]);
    }

    #[test]
    fn heredoc_bodies_are_skipped_unless_they_substitute() {
        let p = split_command("cat <<EOF > f\nrm -rf /\nEOF\nls");
        assert_eq!(p.segments, ["cat << EOF > f", "ls"]);
        assert!(!p.has_substitution);
        let p = split_command("cat <<'EOF'\n$(rm -rf /)\nEOF");
        assert!(!p.has_substitution);
        let p = split_command("cat <<EOF\n$(rm -rf /)\nEOF");
        assert!(p.has_substitution);
        assert!(p.segments.contains(&"rm -rf /".to_owned()));
    }

    #[test]
    fn unterminated_input_is_incomplete() {
        assert!(split_command("echo 'abc").incomplete);
        assert!(split_command("echo \"abc").incomplete);
        assert!(split_command("echo $(ls").incomplete);
        assert!(!split_command("echo abc").incomplete);
    }

    #[test]
    fn dynamic_code_is_detected() {
        assert!(split_command("eval \"$CMD\"").dynamic);
        assert!(split_command("bash -c 'rm -rf /'").dynamic);
        assert!(split_command("/bin/sh -ec 'x'").dynamic);
        assert!(!split_command("bash script.sh").dynamic);
    }

    fn policy() -> CommandPolicy {
        CommandPolicy::new(PolicyAction::Ask)
            .allow("ls *")
            .allow("git *")
            .ask("git push *")
            .deny("git push --force *")
            .deny("rm -rf *")
            .allow("echo *")
    }

    #[test]
    fn strictest_segment_wins() {
        let p = policy();
        assert_eq!(p.check("ls -la").action, PolicyAction::Allow);
        assert_eq!(p.check("ls && git status").action, PolicyAction::Allow);
        assert_eq!(p.check("ls && git push").action, PolicyAction::Ask);
        let d = p.check("ls; echo hi | rm -rf /");
        assert_eq!(d.action, PolicyAction::Deny);
        assert!(d.reason.contains("rm -rf *"), "{}", d.reason);
        assert_eq!(p.check("ls\nrm -rf ~").action, PolicyAction::Deny);
        assert_eq!(p.check("ls & rm -rf ~").action, PolicyAction::Deny);
    }

    #[test]
    fn most_specific_rule_wins() {
        let p = policy();
        assert_eq!(p.check("git log").action, PolicyAction::Allow);
        assert_eq!(p.check("git push origin").action, PolicyAction::Ask);
        assert_eq!(
            p.check("git push --force origin").action,
            PolicyAction::Deny
        );
        let v = &p.check("git push --force").segments[0];
        assert_eq!(v.rule.as_deref(), Some("git push --force *"));
    }

    #[test]
    fn unmatched_segments_get_the_default() {
        let p = policy();
        let d = p.check("cargo build");
        assert_eq!(d.action, PolicyAction::Ask);
        assert_eq!(d.segments[0].rule, None);
        let open = CommandPolicy::new(PolicyAction::Allow).deny("rm *");
        assert_eq!(open.check("cargo build").action, PolicyAction::Allow);
        assert_eq!(open.check("").action, PolicyAction::Allow);
    }

    #[test]
    fn substitution_and_dynamic_code_need_confirmation() {
        let p = policy();
        let d = p.check("echo $(ls)");
        assert_eq!(d.action, PolicyAction::Ask);
        assert!(d.reason.contains("substitution"));
        assert_eq!(p.check("echo `ls`").action, PolicyAction::Ask);
        // A deny inside the substitution still denies.
        assert_eq!(p.check("echo $(rm -rf /)").action, PolicyAction::Deny);
        let open = CommandPolicy::new(PolicyAction::Allow);
        assert_eq!(open.check("eval ls").action, PolicyAction::Ask);
        assert_eq!(open.check("echo 'unterminated").action, PolicyAction::Ask);
    }

    #[test]
    fn commands_by_path_and_quoting_tricks_are_caught() {
        let p = policy();
        assert_eq!(p.check("/bin/rm -rf /").action, PolicyAction::Deny);
        assert_eq!(p.check("\"rm\" '-rf' /").action, PolicyAction::Deny);
        assert_eq!(p.check("FOO=1 rm -rf /").action, PolicyAction::Deny);
        assert_eq!(p.check("ls;rm -rf /").action, PolicyAction::Deny);
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match(b"a*c", b"abbbc"));
        assert!(wildcard_match(b"a?c", "aéc".as_bytes()));
        assert!(!wildcard_match(b"a?c", b"ac"));
        assert!(wildcard_match(b"*", b""));
        assert!(rule_matches("git push *", "git push"));
        assert!(!rule_matches("git push *", "git pushx"));
        assert_eq!(normalise_pattern("  git   push  * "), "git push *");
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;

    /// xorshift64*: a small deterministic generator for the property test.
    fn next(state: &mut u64) -> u64 {
        *state ^= *state >> 12;
        *state ^= *state << 25;
        *state ^= *state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    #[test]
    fn never_panics_on_arbitrary_shell_text() {
        const PIECES: &[&str] = &[
            "a", " ", "'", "\"", "\\", "$", "(", ")", "((", "))", "{", "}", "`", "|", "||", "&",
            "&&", ";", "\n", "<", "<<", "<<-", ">", "#", "=", "é", "EOF", "$(", "${", "<(", "2>&1",
            "if", "then", "fi", "for", "do", "done", "*", "?",
        ];
        let policy = CommandPolicy::new(PolicyAction::Allow)
            .deny("rm *")
            .allow("ls *");
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        for _ in 0..20_000 {
            let len = (next(&mut state) % 24) as usize;
            let text: String = (0..len)
                .map(|_| PIECES[(next(&mut state) % PIECES.len() as u64) as usize])
                .collect();
            let decision = policy.check(&text);
            assert!(decision.action >= PolicyAction::Allow);
        }
    }
}
