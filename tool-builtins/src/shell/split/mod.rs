//! [`split_command`]: a shell command line cut into the simple commands it
//! would run, the ones inside substitutions, `-c` text and wrappers included
//! (what is recognised, and why, is in [`crate::shell::policy`]).
//!
//! One concern in one file, though long: the lexer's states (quotes,
//! substitutions, here-documents, nesting) interlock, and splitting them
//! apart would spread one grammar over several files. The wrapper table
//! lives beside it in `wrappers`, the word type both read in `word`.

mod word;
mod wrappers;

pub(crate) use word::Word;
pub(crate) use wrappers::SHELLS;
use wrappers::{WATCH, WRAPPERS, Wrapper, is_assignment, option_value, skip_options};

/// Longest command [`split_command`] reads: 131 071 bytes, the kernel's limit
/// on one argument (`MAX_ARG_STRLEN`, 128 KiB with the terminating NUL), so
/// no longer command could run as `bash -c COMMAND` anyway. Longer text is
/// not read at all ([`CommandParts::limit`]).
pub const MAX_COMMAND_BYTES: usize = 128 * 1024 - 1;

/// Deepest nesting [`split_command`] reads: 64 levels of `$(…)`, backticks,
/// `<(…)`, `${…}`, `$((…))`, subshells, double quotes and code run by a
/// shell's `-c`, `eval` and the like, counted together (and of wrapper
/// commands such as `env nice sudo …`). Reading stops at the limit
/// ([`CommandParts::limit`]), so the lexer's recursion and work stay bounded.
pub const MAX_NESTING: usize = 64;

/// The simple commands of a shell command line, as [`split_command`] finds them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CommandParts {
    /// Normalised simple commands, including those inside substitutions.
    pub segments: Vec<String>,
    /// `$(…)`, backticks or `<(…)`/`>(…)` appear (outside single quotes), or
    /// an unquoted here-document body contains one.
    pub has_substitution: bool,
    /// The command runs text the rules cannot see: `eval …`, a shell's
    /// `-c …`, a shell reading standard input (`… | bash`, `bash <<EOF`), a
    /// command name that is an expansion or a pattern (`$x`, `$(…)`, `/bin/r?`),
    /// `sudo -s` and the like. The text of `-c` and `eval` is split too, and
    /// its segments are in `segments`.
    pub dynamic: bool,
    /// The first reason `dynamic` was set, as a phrase.
    pub dynamic_why: Option<String>,
    /// The text ended inside a quote or a substitution.
    pub incomplete: bool,
    /// The command exceeded a limit ([`MAX_COMMAND_BYTES`], [`MAX_NESTING`]),
    /// said as a phrase naming it; reading stopped there, so `segments` is
    /// incomplete.
    pub limit: Option<String>,
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
    split_nested(command, 0).parts
}

/// [`split_command`], and the words of each simple command it found (each
/// command a wrapper runs too, as in `segments`), as the lexer read them:
/// unquoted, redirections included, with what the shell would still expand.
/// The default guard reads these, so a quoted argument with spaces stays
/// one word.
pub(crate) fn split_words(command: &str) -> (CommandParts, Vec<Vec<Word>>) {
    let split = split_nested(command, 0);
    (split.parts, split.commands)
}

/// What [`split_nested`] returns: the parts and the words of each command.
struct Split {
    parts: CommandParts,
    commands: Vec<Vec<Word>>,
}

/// Keywords that may precede a command in the same segment.
const LEADING_KEYWORDS: &[&str] = &[
    "!", "{", "if", "then", "else", "elif", "do", "while", "until", "coproc",
];
/// Words that end a compound command; a segment holding only these is dropped.
const CLOSERS: &[&str] = &["fi", "done", "esac", "}", "then", "do", "else"];
/// Segments starting with these are headers of compound commands, not commands.
const HEADERS: &[&str] = &["for", "case", "select", "function"];

struct Lexer<'a> {
    chars: &'a [char],
    pos: usize,
    parts: CommandParts,
    /// The words of each simple command pushed (see [`split_words`]).
    commands: Vec<Vec<Word>>,
    /// Levels of `$(`, backticks, `<(`, `${`, `$((`, subshells and double
    /// quotes open around the current position (including the levels of the
    /// text this lexer was started on, for nested lexers).
    nesting: usize,
    /// Here-documents whose bodies start after the next newline: (delimiter, strip tabs, quoted).
    heredocs: Vec<(String, bool, bool)>,
}

/// The words of the segment being read.
#[derive(Default)]
struct Segment {
    words: Vec<Word>,
    word: Word,
    in_word: bool,
    /// The current word has an unquoted `[` / `{`.
    bracket: bool,
    brace: bool,
}

impl Segment {
    fn end_word(&mut self) {
        if self.in_word {
            let mut word = std::mem::take(&mut self.word);
            let text = &word.text;
            let only_brackets = text.bytes().all(|b| b == b'[' || b == b']');
            if self.bracket && !only_brackets && text.contains(']') {
                word.pattern = true;
            }
            if self.brace && text != "{" && (text.contains(',') || text.contains("..")) {
                word.pattern = true;
            }
            self.words.push(word);
            self.in_word = false;
            self.bracket = false;
            self.brace = false;
        }
    }

    fn push(&mut self, c: char) {
        self.word.text.push(c);
        self.in_word = true;
    }

    /// An unquoted character, which may make the word a pattern.
    fn push_unquoted(&mut self, c: char) {
        match c {
            '*' | '?' => self.word.pattern = true,
            '[' => self.bracket = true,
            '{' => self.brace = true,
            _ => {}
        }
        self.push(c);
    }

    fn push_str(&mut self, s: &str) {
        self.word.text.push_str(s);
        self.in_word = true;
    }

    /// Marks the current word as holding an expansion.
    fn expands(&mut self) {
        self.word.expands = true;
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
        let mut rest: &[Word] = &words;
        loop {
            match rest.first() {
                Some(w)
                    if LEADING_KEYWORDS.contains(&w.text.as_str()) || is_assignment(&w.text) =>
                {
                    rest = &rest[1..];
                }
                _ => break,
            }
        }
        let Some(first) = rest.first() else { return };
        if HEADERS.contains(&first.text.as_str())
            || rest.iter().all(|w| CLOSERS.contains(&w.text.as_str()))
        {
            return;
        }
        self.command(rest);
    }

    /// Enters one more level of nesting; at [`MAX_NESTING`] stops reading
    /// (see [`CommandParts::limit`]) and returns `false`.
    fn enter(&mut self) -> bool {
        if self.nesting >= MAX_NESTING {
            self.hit_limit(format!(
                "it nests `$(...)`, backticks, `<(...)`, `${{...}}`, `$((...))`, subshells, \
                 double quotes or code run by a shell more than {MAX_NESTING} levels deep \
                 (the limit MAX_NESTING)"
            ));
            return false;
        }
        self.nesting += 1;
        true
    }

    fn leave(&mut self) {
        self.nesting = self.nesting.saturating_sub(1);
    }

    /// Records the first limit hit and stops reading.
    fn hit_limit(&mut self, why: String) {
        if self.parts.limit.is_none() {
            self.parts.limit = Some(why);
        }
        self.pos = self.chars.len();
    }

    /// Marks the command as running text the rules cannot see, keeping the first reason.
    fn dynamic(&mut self, why: String) {
        self.parts.dynamic = true;
        if self.parts.dynamic_why.is_none() {
            self.parts.dynamic_why = Some(why);
        }
    }

    /// Splits `code` (a shell's `-c` text, `eval`'s arguments, ...) one level
    /// deeper and adds its segments and flags.
    fn code(&mut self, code: &str) {
        if self.parts.limit.is_some() {
            return;
        }
        let inner = split_nested(code, self.nesting + 1);
        self.commands.extend(inner.commands);
        self.merge(inner.parts);
    }

    fn merge(&mut self, inner: CommandParts) {
        self.parts.segments.extend(inner.segments);
        self.parts.has_substitution |= inner.has_substitution;
        self.parts.incomplete |= inner.incomplete;
        if inner.dynamic {
            self.dynamic(inner.dynamic_why.unwrap_or_default());
        }
        if let Some(limit) = inner.limit {
            self.hit_limit(limit);
        }
    }

    /// Adds a simple command (and the commands it runs, see the module docs)
    /// to the segments.
    fn command(&mut self, words: &[Word]) {
        // The command and each command it wraps, pushed once the chain is
        // known to be within the limit (each is a suffix of `words`).
        let mut views: Vec<&[Word]> = Vec::new();
        self.unwrap_into(words, &mut views);
        if self.parts.limit.is_none() {
            for view in views {
                self.push_views(view);
            }
        }
    }

    /// Follows the chain of wrappers from `words`, collecting each command
    /// of it in `views`, flagging what runs unseen code and splitting code.
    fn unwrap_into<'w>(&mut self, words: &'w [Word], views: &mut Vec<&'w [Word]>) {
        let mut current = words;
        for _ in 0..MAX_NESTING {
            let Some(first) = current.first() else {
                return;
            };
            views.push(current);
            if first.expands || first.pattern {
                self.dynamic(format!(
                    "the command name `{}` is an expansion or a pattern, known only when it runs",
                    first.text
                ));
            }
            let name = file_name(&first.text);
            let args = &current[1..];
            if SHELLS.contains(&name) {
                self.shell(name, args);
                return;
            }
            match name {
                "eval" => {
                    self.dynamic("`eval` runs its arguments as code".to_owned());
                    self.code(&join(args));
                    return;
                }
                "source" | "." => {
                    if args.first().is_none_or(|f| reads_stdin(&f.text)) {
                        self.dynamic(format!("`{name}` runs what it reads from standard input"));
                    }
                    return;
                }
                "su" => {
                    match option_value(args, 'c', "command") {
                        Some(code) => {
                            self.dynamic("`su -c` runs text as code".to_owned());
                            self.code(&code);
                        }
                        None => self.dynamic(
                            "`su` without `-c` starts a shell reading standard input".to_owned(),
                        ),
                    }
                    return;
                }
                "watch" => {
                    let start = skip_options(args, &WATCH, &mut false).0;
                    self.code(&join(&args[start.min(args.len())..]));
                    return;
                }
                "find" => {
                    self.find_exec(args);
                    return;
                }
                _ => {}
            }
            let Some(spec) = WRAPPERS.iter().find(|w| w.names.contains(&name)) else {
                return;
            };
            let mut starts_shell = spec.shell_when_empty;
            let (mut start, mut code, mut stop) = skip_options(args, spec, &mut starts_shell);
            if spec.options_after_operands {
                let after = Wrapper {
                    operands: 0,
                    ..*spec
                };
                let rest = args.get(start..).unwrap_or_default();
                let (more, more_code, more_stop) = skip_options(rest, &after, &mut starts_shell);
                start += more;
                code.extend(more_code);
                stop |= more_stop;
            }
            for c in code {
                self.dynamic(format!("`{name}` runs an option's text as code"));
                self.code(&c);
            }
            if stop {
                return;
            }
            let inner = args.get(start..).unwrap_or_default();
            if inner.is_empty() {
                if starts_shell {
                    self.dynamic(format!(
                        "`{name}` without a command starts a shell reading standard input"
                    ));
                }
                return;
            }
            current = inner;
        }
        self.hit_limit(format!(
            "it nests wrapper commands (`env`, `nice`, `sudo`, ...) more than {MAX_NESTING} deep \
             (the limit MAX_NESTING)"
        ));
    }

    /// Pushes the segment, and the same without its redirections when it has any.
    fn push_views(&mut self, words: &[Word]) {
        self.parts.segments.push(join(words));
        self.commands.push(words.to_vec());
        let mut kept = Vec::new();
        let mut skip_next = false;
        let mut removed = false;
        for w in words {
            if std::mem::take(&mut skip_next) {
                continue;
            }
            match redirection(&w.text) {
                Some(bare) => {
                    skip_next = bare;
                    removed = true;
                }
                None => kept.push(w.text.as_str()),
            }
        }
        if removed && !kept.is_empty() {
            self.parts.segments.push(kept.join(" "));
        }
    }

    /// A shell started with `args`: `-c` runs its first operand as code,
    /// `-s`, `-`, no operand or `/dev/stdin` read code from standard input.
    fn shell(&mut self, name: &str, args: &[Word]) {
        let mut i = 0;
        let mut has_c = false;
        let mut stdin = false;
        let mut operand = None;
        while let Some(w) = args.get(i) {
            let t = w.text.as_str();
            if let Some(bare) = redirection(t) {
                i += if bare { 2 } else { 1 };
                continue;
            }
            if t == "--" {
                operand = args.get(i + 1);
                break;
            }
            if t.starts_with("--") {
                i += if matches!(t, "--rcfile" | "--init-file") {
                    2
                } else {
                    1
                };
                continue;
            }
            if t.len() > 1 && (t.starts_with('-') || t.starts_with('+')) {
                if t.starts_with('-') {
                    has_c |= t.contains('c');
                    stdin |= t.contains('s');
                }
                i += if t.ends_with('o') || t.ends_with('O') {
                    2
                } else {
                    1
                };
                continue;
            }
            operand = Some(w);
            break;
        }
        if has_c {
            self.dynamic(format!("`{name} -c` runs text as code"));
            if let Some(code) = operand {
                self.code(&code.text);
            }
        } else if stdin || operand.is_none_or(|o| reads_stdin(&o.text)) {
            self.dynamic(format!(
                "`{name}` runs the commands it reads from standard input (a pipe, a \
                 here-document or a redirection), which the rules cannot see"
            ));
        }
    }

    /// `find ... -exec CMD ... ;` (also `-execdir`, `-ok`, `-okdir`): checks each CMD.
    fn find_exec(&mut self, args: &[Word]) {
        let mut i = 0;
        while i < args.len() {
            if matches!(
                args[i].text.as_str(),
                "-exec" | "-execdir" | "-ok" | "-okdir"
            ) {
                let start = i + 1;
                let mut end = start;
                while end < args.len() && !matches!(args[end].text.as_str(), ";" | "+") {
                    end += 1;
                }
                if self.enter() {
                    let mut views = Vec::new();
                    self.unwrap_into(&args[start..end], &mut views);
                    if self.parts.limit.is_none() {
                        for view in views {
                            self.push_views(view);
                        }
                    }
                    self.leave();
                }
                i = end;
            }
            i += 1;
        }
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
                    } else if seg.in_word
                        && (seg.word.text.ends_with('>') || seg.word.text.ends_with('<'))
                    {
                        // `2>&1`, `<&3`.
                        seg.push('&');
                        self.pos += 1;
                    } else {
                        self.pos += if next == Some('&') { 2 } else { 1 };
                        self.finish(&mut seg);
                    }
                }
                '|' if seg.in_word && seg.word.text.ends_with('>') => {
                    // `>|file` (noclobber override): a redirection, not a pipe.
                    seg.push('|');
                    self.pos += 1;
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
                        if !self.enter() {
                            break;
                        }
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
                        self.leave();
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
                    seg.expands();
                }
                '$' => self.dollar(&mut seg),
                '<' | '>' if self.peek_at(1) == Some('(') && !seg.in_word => {
                    self.pos += 2;
                    self.substitution(')');
                    seg.push_str("<(...)");
                    seg.expands();
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
                                seg.word.text.push(ch);
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
                    seg.push_unquoted(c);
                    self.pos += 1;
                }
            }
        }
        self.nesting = self.nesting.saturating_sub(depth);
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
        if self.enter() {
            self.list(Some(close));
            self.leave();
        }
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
                seg.expands();
            }
            (Some('('), _) => {
                self.pos += 2;
                self.substitution(')');
                seg.push_str("$(...)");
                seg.expands();
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
                seg.expands();
            }
            (Some('\''), _) => {
                // `$'...'` (ANSI-C quoting): its value is known before the
                // command runs, so it is decoded, not treated as an expansion
                // (review 23 F7: `rm -rf $'/'` read as `$/`).
                self.pos += 2;
                seg.in_word = true;
                let text = self.ansi_c_quoted();
                seg.word.text.push_str(&text);
            }
            (next, _) => {
                // `$name`, `$1`, `$@`, ...; `$"..."` is translated by the
                // shell too.
                let expands =
                    next.is_some_and(|c| c.is_ascii_alphanumeric() || "_@*#?$!-'\"".contains(c));
                seg.push('$');
                if expands {
                    seg.expands();
                }
                self.pos += 1;
            }
        }
    }

    /// After `$'`: the decoded text up to the closing quote, with bash's
    /// escapes (`\n`, `\t`, `\xHH`, `\NNN` octal, `\uHHHH`, `\UHHHHHHHH`,
    /// `\\`, `\'`, ...; bash manual, "ANSI-C Quoting"). An unknown escape
    /// stays as written; a missing closing quote marks the command incomplete.
    fn ansi_c_quoted(&mut self) -> String {
        let mut out = String::new();
        loop {
            let Some(c) = self.peek_at(0) else {
                self.parts.incomplete = true;
                return out;
            };
            self.pos += 1;
            match c {
                '\'' => return out,
                '\\' => {
                    let Some(e) = self.peek_at(0) else { continue };
                    self.pos += 1;
                    let mut number = |radix: u32, max: usize, first: Option<char>| {
                        let mut value = first.and_then(|d| d.to_digit(radix)).unwrap_or(0);
                        let mut digits = usize::from(first.is_some());
                        while digits < max {
                            match self.peek_at(0).and_then(|d| d.to_digit(radix)) {
                                Some(d) => {
                                    value = value.saturating_mul(radix).saturating_add(d);
                                    self.pos += 1;
                                    digits += 1;
                                }
                                None => break,
                            }
                        }
                        (digits > 0).then(|| char::from_u32(value)).flatten()
                    };
                    let decoded = match e {
                        'n' => Some('\n'),
                        't' => Some('\t'),
                        'r' => Some('\r'),
                        'a' => Some('\u{7}'),
                        'b' => Some('\u{8}'),
                        'e' | 'E' => Some('\u{1b}'),
                        'f' => Some('\u{c}'),
                        'v' => Some('\u{b}'),
                        '\\' | '\'' | '"' | '?' => Some(e),
                        'x' => number(16, 2, None),
                        'u' => number(16, 4, None),
                        'U' => number(16, 8, None),
                        '0'..='7' => number(8, 3, Some(e)),
                        _ => None,
                    };
                    match decoded {
                        Some(d) => out.push(d),
                        None => {
                            out.push('\\');
                            out.push(e);
                        }
                    }
                }
                other => out.push(other),
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
        if !self.enter() {
            return;
        }
        loop {
            match self.peek_at(0) {
                None => {
                    self.parts.incomplete = true;
                    break;
                }
                Some('"') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    self.pos += 1;
                    match self.peek_at(0) {
                        Some('\n') => self.pos += 1,
                        Some(ch @ ('"' | '\\' | '$' | '`')) => {
                            seg.word.text.push(ch);
                            self.pos += 1;
                        }
                        Some(ch) => {
                            seg.word.text.push('\\');
                            seg.word.text.push(ch);
                            self.pos += 1;
                        }
                        None => {}
                    }
                }
                Some('$') => self.dollar(seg),
                Some('`') => {
                    self.pos += 1;
                    self.substitution('`');
                    seg.word.text.push_str("$(...)");
                    seg.expands();
                }
                Some(ch) => {
                    seg.word.text.push(ch);
                    self.pos += 1;
                }
            }
        }
        self.leave();
    }

    /// At `<<`: records a here-document whose body follows the next newline.
    fn heredoc_start(&mut self, seg: &mut Segment) {
        self.pos += 2;
        let strip_tabs = self.peek_at(0) == Some('-');
        if strip_tabs {
            self.pos += 1;
        }
        seg.end_word();
        seg.words.push(Word {
            text: "<<".to_owned(),
            ..Word::default()
        });
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
        seg.words.push(Word {
            text: delimiter.clone(),
            ..Word::default()
        });
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
/// one level deeper and adds its segments and flags to `lexer`'s.
fn split_into(lexer: &mut Lexer<'_>, text: &str) {
    lexer.code(text);
}

/// [`split_command`] of text found `nesting` levels deep in a command.
fn split_nested(command: &str, nesting: usize) -> Split {
    let mut parts = CommandParts::default();
    if command.len() > MAX_COMMAND_BYTES {
        parts.limit = Some(format!(
            "it is {} bytes long, and at most {MAX_COMMAND_BYTES} bytes are accepted (the \
             limit MAX_COMMAND_BYTES, the kernel's limit on one argument of `bash -c`)",
            command.len()
        ));
        return Split {
            parts,
            commands: Vec::new(),
        };
    }
    let chars: Vec<char> = command.chars().collect();
    let mut lexer = Lexer {
        chars: &chars,
        pos: 0,
        parts,
        commands: Vec::new(),
        nesting,
        heredocs: Vec::new(),
    };
    if nesting > MAX_NESTING {
        lexer.enter();
    } else {
        lexer.list(None);
    }
    Split {
        parts: lexer.parts,
        commands: lexer.commands,
    }
}

/// `words` joined by one space.
fn join(words: &[Word]) -> String {
    let mut out = String::new();
    for (i, w) in words.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(&w.text);
    }
    out
}

/// The file name of a command word (`/bin/rm` → `rm`).
fn file_name(word: &str) -> &str {
    word.rsplit('/')
        .next()
        .filter(|n| !n.is_empty())
        .unwrap_or(word)
}

/// Whether a script operand names standard input.
fn reads_stdin(operand: &str) -> bool {
    matches!(
        operand,
        "-" | "/dev/stdin" | "/dev/fd/0" | "/proc/self/fd/0"
    ) || operand.starts_with("<(")
}

/// When `word` is a redirection (`>f`, `2>&1`, `<<`, `&>>log`, ...): whether
/// it is the bare operator, whose target is the next word.
pub(crate) fn redirection(word: &str) -> Option<bool> {
    const OPERATORS: [&str; 12] = [
        "&>>", "<<<", "<<-", ">>", "<<", "<>", ">&", "<&", ">|", "&>", ">", "<",
    ];
    if word.starts_with("<(") || word.starts_with(">(") {
        return None; // process substitution: an argument
    }
    let rest = word.trim_start_matches(|c: char| c.is_ascii_digit());
    let op = OPERATORS.iter().find(|op| rest.starts_with(**op))?;
    if op.starts_with('&') && rest.len() != word.len() {
        return None;
    }
    Some(rest.len() == op.len())
}
