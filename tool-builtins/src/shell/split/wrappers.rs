//! Programs that run other programs (`env`, `sudo`, `timeout`, `xargs`, …):
//! how each reads its own options, so the splitter finds the command it runs.

use super::word::Word;

/// How a program that runs another program reads its own options.
#[derive(Clone, Copy)]
pub(super) struct Wrapper {
    pub(super) names: &'static [&'static str],
    /// Short options that take an argument (attached or the next word).
    pub(super) short_args: &'static str,
    /// Long options (without `--`) that take the next word as argument when
    /// not written `--name=value`.
    pub(super) long_args: &'static [&'static str],
    /// `NAME=value` words may come before the command (`env`).
    pub(super) assignments: bool,
    /// Operands before the command (`timeout`'s duration, `chroot`'s root).
    pub(super) operands: usize,
    /// Short options whose argument is shell code (`env -S`, `flock -c`).
    pub(super) code_short: &'static str,
    /// Short options after which no command follows (`command -v`).
    pub(super) no_command: &'static str,
    /// Without a command, the program starts an interactive shell.
    pub(super) shell_when_empty: bool,
    /// Short options that make it start a shell when no command follows
    /// (`sudo -s`, `sudo -i`, `doas -s`).
    pub(super) shell_flags: &'static str,
    /// Options may also follow the operands (`flock FILE -c CODE`).
    pub(super) options_after_operands: bool,
}

const NO_OPTIONS: Wrapper = Wrapper {
    names: &[],
    short_args: "",
    long_args: &[],
    assignments: false,
    operands: 0,
    code_short: "",
    no_command: "",
    shell_when_empty: false,
    shell_flags: "",
    options_after_operands: false,
};

/// `watch`'s options; the rest of its arguments is joined into shell code.
pub(super) const WATCH: Wrapper = Wrapper {
    names: &["watch"],
    short_args: "nq",
    long_args: &["interval", "equexit"],
    ..NO_OPTIONS
};

/// Programs that run the rest of their arguments as a command: the command
/// is checked too (see the module docs).
pub(super) const WRAPPERS: &[Wrapper] = &[
    Wrapper {
        names: &["env"],
        short_args: "uCS",
        long_args: &["unset", "chdir", "split-string"],
        assignments: true,
        code_short: "S",
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["command"],
        no_command: "vV",
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["exec"],
        short_args: "a",
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["nice"],
        short_args: "n",
        long_args: &["adjustment"],
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["timeout"],
        short_args: "sk",
        long_args: &["signal", "kill-after"],
        operands: 1,
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["xargs"],
        short_args: "adEILnPs",
        long_args: &[
            "arg-file",
            "delimiter",
            "eof",
            "replace",
            "max-lines",
            "max-args",
            "max-procs",
            "max-chars",
            "process-slot-var",
        ],
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["nohup", "builtin", "busybox", "unbuffer", "setsid"],
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["sudo"],
        short_args: "ugCDprtTUh",
        long_args: &[
            "user",
            "group",
            "close-from",
            "chdir",
            "prompt",
            "role",
            "type",
            "command-timeout",
            "other-user",
            "host",
        ],
        no_command: "lvkK",
        shell_flags: "si",
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["doas"],
        short_args: "uC",
        shell_flags: "s",
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["time"],
        short_args: "fo",
        long_args: &["format", "output"],
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["stdbuf"],
        short_args: "ioe",
        long_args: &["input", "output", "error"],
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["ionice"],
        short_args: "cnpPu",
        long_args: &["class", "classdata", "pid", "pgid", "uid"],
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["chroot"],
        long_args: &["userspec", "groups"],
        operands: 1,
        shell_when_empty: true,
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["flock"],
        short_args: "wEc",
        long_args: &["timeout", "conflict-exit-code", "command"],
        operands: 1,
        code_short: "c",
        options_after_operands: true,
        ..NO_OPTIONS
    },
    Wrapper {
        names: &["taskset"],
        operands: 1,
        ..NO_OPTIONS
    },
];

/// Shells: `-c TEXT` runs TEXT; without a script they read standard input.
pub(crate) const SHELLS: &[&str] = &[
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "yash", "posh", "fish", "csh", "tcsh",
];

/// Skips `spec`'s options (and their arguments) and operands in `args`.
/// Returns where the command starts, the arguments of code options, and
/// whether an option says no command follows. Sets `shell` when one of the
/// `shell_flags` is given.
pub(super) fn skip_options(
    args: &[Word],
    spec: &Wrapper,
    shell: &mut bool,
) -> (usize, Vec<String>, bool) {
    let mut i = 0;
    let mut code = Vec::new();
    let mut stop = false;
    while let Some(w) = args.get(i) {
        let t = w.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if spec.assignments && is_assignment(t) {
            i += 1;
            continue;
        }
        if let Some(long) = t.strip_prefix("--").filter(|l| !l.is_empty()) {
            let takes = !long.contains('=') && spec.long_args.contains(&long);
            if takes && long == "split-string" {
                code.extend(args.get(i + 1).map(|w| w.text.clone()));
            }
            if let Some(v) = long.strip_prefix("split-string=") {
                code.push(v.to_owned());
            }
            i += if takes { 2 } else { 1 };
            continue;
        }
        if let Some(letters) = t.strip_prefix('-').filter(|l| !l.is_empty()) {
            i += 1;
            for (k, c) in letters.char_indices() {
                stop |= spec.no_command.contains(c);
                *shell |= spec.shell_flags.contains(c);
                if spec.short_args.contains(c) {
                    let attached = &letters[k + c.len_utf8()..];
                    let value = if attached.is_empty() {
                        i += 1;
                        args.get(i - 1).map(|w| w.text.clone())
                    } else {
                        Some(attached.to_owned())
                    };
                    if spec.code_short.contains(c) {
                        code.extend(value);
                    }
                    break;
                }
            }
            continue;
        }
        break;
    }
    (i + spec.operands, code, stop)
}

/// The value of option `-c VALUE` / `-cVALUE` / `--long=VALUE` / `--long VALUE` in `args`.
pub(super) fn option_value(args: &[Word], short: char, long: &str) -> Option<String> {
    let mut words = args.iter().map(|w| w.text.as_str());
    while let Some(t) = words.next() {
        if let Some(l) = t.strip_prefix("--") {
            if l == long {
                return words.next().map(str::to_owned);
            }
            if let Some(v) = l.strip_prefix(long).and_then(|v| v.strip_prefix('=')) {
                return Some(v.to_owned());
            }
        } else if let Some(letters) = t.strip_prefix('-') {
            if let Some(k) = letters.find(short) {
                let attached = &letters[k + short.len_utf8()..];
                return if attached.is_empty() {
                    words.next().map(str::to_owned)
                } else {
                    Some(attached.to_owned())
                };
            }
        }
    }
    None
}

pub(super) fn is_assignment(word: &str) -> bool {
    let Some((name, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
