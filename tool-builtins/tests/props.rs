//! Property and fuzz tests of the built-in tools (issue 17, item 1), on
//! stable Rust with `proptest`, through the registry as a host calls them,
//! each case in its own temporary workspace:
//! - `execute` of every built-in with arbitrary JSON and arbitrary text as
//!   arguments: never a panic, always a result, a failure always with a kind
//!   other than `panicked` and a message. `bash_command` runs under a
//!   deny-all policy and a shell that does not exist, so no random text is
//!   ever run;
//! - a patch built from a real diff of two random files applies and gives
//!   the second file;
//! - an edit changes exactly the span the matcher reports (`replace::plan`)
//!   or changes nothing; `multi_edit` is all or nothing;
//! - the bash policy lexer never panics and its work and output are bounded.
//!
//! Case counts come from `FUZZ_CASES` (default 10 000), each property
//! taking its share (see [`cases`]): the `execute` fuzz all of it (10 000
//! calls in CI), patches 5 %, edits and `multi_edit` 3 % each, the lexer
//! 15 %. `PROPTEST_CASES` sets every property to the same count instead.
//! `scripts/fuzz-big` runs a million.

use std::time::{Duration, Instant};

use proptest::prelude::*;
use serde_json::{Value, json};
use tool_builtins::fs::replace;
use tool_builtins::shell::split::{MAX_COMMAND_BYTES, MAX_NESTING};
use tool_builtins::{BashConfig, CommandPolicy, PolicyAction, split_command};
use tool_core::{ErrorKind, ToolArgs, ToolContext, ToolRegistry, ToolResult};

/// The built-in tools' names, as `registry()` finds them (by crate).
fn builtin_names() -> Vec<String> {
    tool_builtins::registry()
        .names()
        .into_iter()
        .map(str::to_owned)
        .collect()
}

#[path = "../../tests/support/fuzz.rs"]
mod fuzz;
use fuzz::{block_on, cases, tick};

/// The registry, built once (building it parses every tool's docs).
static REGISTRY: std::sync::LazyLock<ToolRegistry> =
    std::sync::LazyLock::new(tool_builtins::registry);

/// A workspace with a few files, its context (bash: deny-all, no shell) and
/// `a.txt` already read, so edits of it get past the ledger.
fn workspace(registry: &ToolRegistry) -> (tempfile::TempDir, ToolContext) {
    let dir = tempfile::tempdir_in(scratch_root()).expect("a temp dir");
    std::fs::write(dir.path().join("a.txt"), "alpha\nbeta\ngamma\n").expect("write");
    std::fs::create_dir(dir.path().join("sub")).expect("mkdir");
    std::fs::write(
        dir.path().join("sub/b.rs"),
        "fn main() {\n    println!(\"hi\");\n}\n",
    )
    .expect("write");
    std::fs::write(dir.path().join("bin.dat"), [0u8, 159, 146, 150, 0, 1]).expect("write");
    let ctx = tool_builtins::context(dir.path())
        .expect("a context")
        .with_state(deny_all());
    let read = block_on(registry.execute("read_file", json!({"file_path": "a.txt"}), &ctx));
    assert_eq!(read.error, None);
    (dir, ctx)
}

/// Where the workspaces go: `FUZZ_TMPDIR`, else `/dev/shm` when it is a
/// folder (memory-backed: every write `fsync`s, and on a busy disk that
/// costs up to 200 ms a case; durability is what `crash_writes` measures,
/// not these properties), else the temp dir.
fn scratch_root() -> std::path::PathBuf {
    if let Some(dir) = std::env::var_os("FUZZ_TMPDIR") {
        return dir.into();
    }
    let shm = std::path::Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_owned()
    } else {
        std::env::temp_dir()
    }
}

/// The bash configuration of every fuzz case: every command denied, and a
/// shell path that does not exist should anything ever get past the policy.
fn deny_all() -> BashConfig {
    BashConfig::default()
        .with_policy(CommandPolicy::new(PolicyAction::Deny))
        .with_shell("/nonexistent/fuzz-never-runs-a-shell")
}

const PARAM_NAMES: &[&str] = &[
    "file_path",
    "content",
    "old_string",
    "new_string",
    "replace_all",
    "edits",
    "patch",
    "command",
    "timeout",
    "workdir",
    "description",
    "pattern",
    "path",
    "include",
    "ignore",
    "offset",
    "limit",
];

fn arb_string() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => prop::sample::select(vec![
            "a.txt", "sub/b.rs", "sub", ".", "", "..", "../x", "/etc/passwd", "bin.dat", "new.txt",
            "sub/../a.txt", "a.txt/", "nope/deep/x", "*", "**/*.rs", "alpha", "beta\n", "gamma\n",
            "fn main", "[", "(?", "\\", "a.txt\0", "~", "$HOME", "rm -rf /", "ls", "echo hi",
        ])
        .prop_map(str::to_owned),
        2 => ".{0,40}",
        1 => "[a-z\n ]{0,80}",
        1 => arb_patch_text(),
    ]
}

/// Text shaped like a patch: header lines mixed with lines of any kind.
fn arb_patch_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        Just("*** Begin Patch".to_owned()),
        Just("*** End Patch".to_owned()),
        Just("*** Update File: a.txt".to_owned()),
        Just("*** Add File: new.txt".to_owned()),
        Just("*** Delete File: a.txt".to_owned()),
        Just("*** Move to: moved.txt".to_owned()),
        Just("*** End of File".to_owned()),
        Just("@@".to_owned()),
        Just("@@ alpha".to_owned()),
        Just(" alpha".to_owned()),
        Just("-beta".to_owned()),
        Just("+delta".to_owned()),
        Just("<<'EOF'".to_owned()),
        Just("EOF".to_owned()),
        "[ +-][a-z]{0,6}",
        ".{0,12}",
    ];
    prop::collection::vec(line, 0..14).prop_map(|lines| lines.join("\n"))
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (-5i64..5).prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        arb_string().prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 5, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(arb_key(), inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => prop::sample::select(PARAM_NAMES.to_vec()).prop_map(str::to_owned),
        1 => ".{0,10}",
    ]
}

fn arb_args() -> impl Strategy<Value = ToolArgs> {
    prop_oneof![
        6 => prop::collection::btree_map(arb_key(), arb_value(), 0..5)
            .prop_map(|m| ToolArgs::Value(Value::Object(m.into_iter().collect()))),
        1 => arb_value().prop_map(ToolArgs::Value),
        1 => arb_value().prop_map(|v| ToolArgs::Text(v.to_string())),
        1 => ".{0,120}".prop_map(ToolArgs::Text),
    ]
}

/// What every call must give, whatever it was sent.
fn check_sane(name: &str, result: &ToolResult) -> Result<(), TestCaseError> {
    if let Some(err) = &result.error {
        prop_assert_ne!(
            err.kind,
            ErrorKind::Panicked,
            "{} panicked: {}",
            name,
            err.message
        );
        prop_assert!(
            err.message.trim().len() >= 10,
            "{}: message too short: {:?}",
            name,
            err.message
        );
    }
    if name == "bash_command" {
        // Deny-all: nothing runs; only an argument error or the denial.
        let kind = result.error.as_ref().map(|e| e.kind);
        prop_assert!(
            matches!(kind, Some(ErrorKind::Denied | ErrorKind::InvalidArguments)),
            "bash_command was not refused: {:?} {:?}",
            kind,
            result.output
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(100))]
    #[test]
    fn execute_every_builtin_never_panics(name in prop::sample::select(builtin_names()), args in arb_args()) {
        tick("execute_every_builtin_never_panics");
        let registry = &*REGISTRY;
        let (_dir, ctx) = workspace(registry);
        let result = block_on(registry.execute(&name, args, &ctx));
        check_sane(&name, &result)?;
    }
}

/// The deny-all policy answers `denied` for a plain command, and the fuzz
/// reaches the tools' own code: a well-formed call succeeds.
#[test]
fn fuzz_setup_denies_bash_and_reaches_the_tools() {
    let registry = &*REGISTRY;
    let (dir, ctx) = workspace(registry);
    for command in ["echo hi", "true", "ls -la", "touch pwned"] {
        let r = block_on(registry.execute("bash_command", json!({"command": command}), &ctx));
        assert_eq!(
            r.error.as_ref().map(|e| e.kind),
            Some(ErrorKind::Denied),
            "{command}: {r:?}"
        );
    }
    assert!(!dir.path().join("pwned").exists());
    let r = block_on(registry.execute(
        "edit_file",
        json!({"file_path": "a.txt", "old_string": "beta", "new_string": "BETA"}),
        &ctx,
    ));
    assert_eq!(r.error, None);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
        "alpha\nBETA\ngamma\n"
    );
}

/// Lines of a random file: a small alphabet, so lines repeat (hard for a
/// patch applier that finds its place by context).
fn arb_lines() -> impl Strategy<Value = Vec<String>> {
    prop::collection::vec(
        prop_oneof![
            4 => prop::sample::select(vec!["a", "b", "c", "", "x = 1", "  indented", "}"]).prop_map(str::to_owned),
            1 => "[a-z ]{1,8}",
            1 => "[a-zé😀]{1,4}",
        ],
        0..30,
    )
}

fn join_lines(lines: &[String]) -> String {
    lines.iter().map(|l| format!("{l}\n")).collect()
}

/// A Codex-grammar patch turning `old` into `new` (both `\n`-terminated
/// lines), from `similar`'s line diff with three lines of context.
fn codex_patch(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut patch = format!("*** Begin Patch\n*** Update File: {path}\n");
    let old_len = old.lines().count();
    for group in diff.grouped_ops(3) {
        patch.push_str("@@\n");
        let mut ends_file = false;
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                };
                patch.push(sign);
                patch.push_str(change.value().strip_suffix('\n').unwrap_or(change.value()));
                patch.push('\n');
            }
            ends_file = op.old_range().end == old_len;
        }
        if ends_file {
            patch.push_str("*** End of File\n");
        }
    }
    patch.push_str("*** End Patch");
    patch
}

proptest! {
    #![proptest_config(cases(5))]
    #[test]
    fn a_patch_from_a_real_diff_gives_the_new_file(old in arb_lines(), new in arb_lines()) {
        tick("a_patch_from_a_real_diff_gives_the_new_file");
        let (old, new) = (join_lines(&old), join_lines(&new));
        if old == new {
            // Not a rejection: a million cases would pass proptest's reject limit.
            return Ok(());
        }
        let registry = &*REGISTRY;
        let (dir, ctx) = workspace(registry);
        let file = dir.path().join("f.txt");
        std::fs::write(&file, &old).expect("write");
        let read = block_on(registry.execute("read_file", json!({"file_path": "f.txt"}), &ctx));
        prop_assert_eq!(read.error, None);
        let patch = codex_patch("f.txt", &old, &new);
        let result = block_on(registry.execute("apply_patch", json!({"patch": patch}), &ctx));
        prop_assert_eq!(&result.error, &None, "patch:\n{}", patch);
        let got = std::fs::read_to_string(&file).expect("read back");
        prop_assert_eq!(got, new, "patch:\n{}", patch);
    }
}

/// File content for the edit properties: `\n` line breaks only.
fn arb_content() -> impl Strategy<Value = String> {
    prop_oneof![
        "[ab \n]{1,60}",
        "(( {0,4}|\t)[a-c]{0,4}\n){1,10}",
        "[a-zé😀\n ]{1,40}",
    ]
}

/// An `old_string` for `content`: a piece of it (maybe with its spaces
/// changed), or anything.
fn arb_find(content: String) -> impl Strategy<Value = (String, String)> {
    let len = content.len();
    (Just(content), 0..=len, 0..=len, 0u8..4, "[ab \n]{1,6}").prop_map(|(c, i, j, how, other)| {
        let (i, j) = (i.min(j), i.max(j));
        let (i, j) = (floor(&c, i), floor(&c, j));
        let piece = c[i..j].to_owned();
        let find = match how {
            0 | 1 => piece,
            2 => piece.replace(' ', "  ").replace('\t', "    "),
            _ => other,
        };
        (c, find)
    })
}

fn floor(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The content after applying a plan's replacements: the oracle.
fn apply_plan(content: &str, plan: &replace::Plan) -> String {
    let mut out = String::new();
    let mut at = 0;
    for r in &plan.replacements {
        out.push_str(&content[at..r.span.start]);
        out.push_str(&r.text);
        at = r.span.end;
    }
    out.push_str(&content[at..]);
    out
}

/// Spans sorted, disjoint, in bounds and on character boundaries.
fn check_plan(content: &str, plan: &replace::Plan, replace_all: bool) -> Result<(), TestCaseError> {
    let mut end = 0;
    prop_assert!(!plan.replacements.is_empty());
    prop_assert!(replace_all || plan.replacements.len() == 1);
    for r in &plan.replacements {
        prop_assert!(
            r.span.start >= end && r.span.start <= r.span.end && r.span.end <= content.len()
        );
        prop_assert!(
            content.is_char_boundary(r.span.start) && content.is_char_boundary(r.span.end)
        );
        end = r.span.end;
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(3))]
    #[test]
    fn an_edit_changes_the_matched_span_or_nothing(
        (content, find) in arb_content().prop_flat_map(arb_find),
        new in "[ab xy\n]{0,8}",
        replace_all in any::<bool>(),
    ) {
        tick("an_edit_changes_the_matched_span_or_nothing");
        if find.is_empty() || find == new {
            // Not a rejection: a million cases would pass proptest's reject limit.
            return Ok(());
        }
        let registry = &*REGISTRY;
        let (dir, ctx) = workspace(registry);
        let file = dir.path().join("e.txt");
        std::fs::write(&file, &content).expect("write");
        let read = block_on(registry.execute("read_file", json!({"file_path": "e.txt"}), &ctx));
        prop_assert_eq!(read.error, None);
        let expected = replace::plan(&content, &find, &new, replace_all);
        let result = block_on(registry.execute(
            "edit_file",
            json!({"file_path": "e.txt", "old_string": find, "new_string": new, "replace_all": replace_all}),
            &ctx,
        ));
        let got = std::fs::read_to_string(&file).expect("read back");
        match expected {
            Ok(plan) => {
                check_plan(&content, &plan, replace_all)?;
                if matches!(plan.strategy, replace::Strategy::Exact | replace::Strategy::CanonicalNfc) {
                    prop_assert!(plan.replacements.iter().all(|r| r.text == new));
                }
                let want = apply_plan(&content, &plan);
                if want == content {
                    // A loose match whose text already equals new_string: nothing to change.
                    let err = result.error.as_ref().map(|e| e.message.as_str()).unwrap_or_default();
                    prop_assert!(err.starts_with("No changes to apply: the edit leaves the file"), "{}", err);
                } else {
                    prop_assert_eq!(&result.error, &None);
                }
                prop_assert_eq!(got, want);
            }
            Err(_) => {
                prop_assert!(result.error.is_some(), "the edit succeeded where the matcher found nothing");
                prop_assert_eq!(got, content, "a failed edit changed the file");
            }
        }
    }

    #[test]
    fn multi_edit_is_all_or_nothing(
        content in arb_content(),
        edits in prop::collection::vec(("[ab \n]{1,4}", "[xy\n]{0,4}", any::<bool>()), 1..5),
    ) {
        tick("multi_edit_is_all_or_nothing");
        let registry = &*REGISTRY;
        let (dir, ctx) = workspace(registry);
        let file = dir.path().join("m.txt");
        std::fs::write(&file, &content).expect("write");
        let read = block_on(registry.execute("read_file", json!({"file_path": "m.txt"}), &ctx));
        prop_assert_eq!(read.error, None);
        // The oracle: each edit planned on the result of the ones before.
        let mut expected = Some(content.clone());
        for (find, new, all) in &edits {
            expected = expected.and_then(|text| {
                if find == new {
                    return None;
                }
                replace::plan(&text, find, new, *all).ok().map(|p| apply_plan(&text, &p))
            });
        }
        let list: Vec<Value> = edits
            .iter()
            .map(|(o, n, a)| json!({"old_string": o, "new_string": n, "replace_all": a}))
            .collect();
        let result = block_on(registry.execute("multi_edit", json!({"file_path": "m.txt", "edits": list}), &ctx));
        let got = std::fs::read_to_string(&file).expect("read back");
        match expected.filter(|text| *text != content) {
            Some(text) => {
                prop_assert_eq!(&result.error, &None);
                prop_assert_eq!(got, text);
            }
            None => {
                // An edit failed, or together they change nothing: an error either way.
                prop_assert!(result.error.is_some(), "multi_edit succeeded where an edit should fail");
                prop_assert_eq!(got, content, "a failed multi_edit changed the file");
            }
        }
    }
}

fn arb_shell() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "$(",
            ")",
            "`",
            "'",
            "\"",
            "\\",
            "&&",
            "||",
            ";",
            "|",
            "|&",
            "&",
            "\n",
            "(",
            "{",
            "}",
            "<(",
            ">(",
            "${",
            "$((",
            "<<EOF\n",
            "EOF\n",
            "<<-'X'\n",
            "X\n",
            " ",
            "sudo ",
            "env -i A=1 ",
            "timeout -s KILL 5 ",
            "sh -c ",
            "bash -c '",
            "eval ",
            "find . -exec ",
            " \\;",
            "xargs ",
            "rm -rf ",
            "/",
            "~",
            "$x",
            "*",
            "?",
            "[a]",
            "#",
            "if ",
            "then ",
            "fi",
            "for i in ",
            "do ",
            "done",
            "case x in ",
            "esac",
            "FOO=1 ",
            "2>/dev/null ",
            "nice -n 5 ",
            "$'\\x41'",
            "é",
        ])
        .prop_map(str::to_owned),
        "[a-z]{1,5}",
        ".{0,3}",
    ];
    prop_oneof![
        4 => prop::collection::vec(piece, 0..40).prop_map(|p| p.concat()),
        1 => ".{0,200}",
        1 => (1usize..200, prop::sample::select(vec!["$(", "`", "(", "\"$(", "${", "sh -c \"", "env "]))
            .prop_map(|(n, open)| open.repeat(n)),
    ]
}

proptest! {
    #![proptest_config(cases(15))]
    #[test]
    fn the_policy_lexer_never_panics_and_is_bounded(command in arb_shell()) {
        tick("the_policy_lexer_never_panics_and_is_bounded");
        let started = Instant::now();
        let parts = split_command(&command);
        let policy = CommandPolicy::new(PolicyAction::Ask).allow("ls *").deny("rm -rf *").allow("git status");
        let decision = policy.check(&command);
        prop_assert!(started.elapsed() < Duration::from_secs(2), "took {:?}", started.elapsed());
        // Output bounded by the input: every segment comes from the text
        // (wrappers yield one segment per level, at most MAX_NESTING + 1).
        let total: usize = parts.segments.iter().map(String::len).sum();
        let bound = (command.len() + 16) * (MAX_NESTING + 2);
        prop_assert!(total <= bound, "{} segment bytes for {} input bytes", total, command.len());
        prop_assert!(parts.segments.len() <= command.len() * (MAX_NESTING + 2) + 1);
        // Never allowed when the text could not be read through.
        if parts.incomplete || parts.limit.is_some() || parts.has_substitution || parts.dynamic {
            prop_assert_ne!(decision.action, PolicyAction::Allow, "{:?}", command);
        }
    }
}

/// Commands over the lexer's limits are refused with the limit named.
#[test]
fn policy_lexer_limits_are_reported() {
    let long = "a".repeat(MAX_COMMAND_BYTES + 1);
    assert!(split_command(&long).limit.is_some());
    let deep = "$(".repeat(MAX_NESTING + 5);
    let parts = split_command(&deep);
    assert!(parts.limit.is_some() || parts.incomplete, "{parts:?}");
    let deep_ok = format!("{}ls{}", "$(".repeat(10), ")".repeat(10));
    assert_eq!(split_command(&deep_ok).limit, None);
    let wrappers = "env ".repeat(MAX_NESTING + 5) + "rm x";
    let decision = CommandPolicy::new(PolicyAction::Allow)
        .deny("rm *")
        .check(&wrappers);
    assert_ne!(decision.action, PolicyAction::Allow, "{decision:?}");
}

/// Regression (found by `a_patch_from_a_real_diff_gives_the_new_file`,
/// minimal input `old = ["a"], new = []`): a patch removing every line of a
/// file left a lone line break instead of an empty file.
#[test]
fn regression_patch_removing_every_line_leaves_an_empty_file() {
    let registry = &*REGISTRY;
    let cases: &[(&str, &str)] = &[
        ("a\n", "-a\n*** End of File\n"),
        ("a\n", "-a\n"),
        ("x\ny\nz\n", "-x\n-y\n-z\n*** End of File\n"),
        ("x\r\ny\r\n", "-x\n-y\n"),
        ("no final break", "-no final break\n"),
    ];
    for (old, body) in cases {
        let (dir, ctx) = workspace(registry);
        std::fs::write(dir.path().join("f.txt"), old).expect("write");
        let read = block_on(registry.execute("read_file", json!({"file_path": "f.txt"}), &ctx));
        assert_eq!(read.error, None);
        let patch = format!("*** Begin Patch\n*** Update File: f.txt\n@@\n{body}*** End Patch");
        let result = block_on(registry.execute("apply_patch", json!({"patch": patch}), &ctx));
        assert_eq!(result.error, None, "{old:?}");
        assert_eq!(
            std::fs::read(dir.path().join("f.txt")).expect("read"),
            b"",
            "{old:?}"
        );
    }
    // A patch leaving one empty line keeps that line's break.
    let (dir, ctx) = workspace(registry);
    std::fs::write(dir.path().join("f.txt"), "a\n").expect("write");
    block_on(registry.execute("read_file", json!({"file_path": "f.txt"}), &ctx));
    let patch = "*** Begin Patch\n*** Update File: f.txt\n@@\n-a\n+\n*** End Patch";
    let result = block_on(registry.execute("apply_patch", json!({"patch": patch}), &ctx));
    assert_eq!(result.error, None);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("f.txt")).expect("read"),
        "\n"
    );
}

/// Regression (found by `an_edit_changes_the_matched_span_or_nothing` in the
/// big run, minimal input: content `"a\n"`, `old_string` `"a "`,
/// `new_string` `"a"`): an edit that matched loosely and would change
/// nothing was refused with "`old_string` and `new_string` are identical",
/// which they are not. It is still refused (nothing to write), saying why.
#[test]
fn regression_a_loose_edit_that_changes_nothing_says_so() {
    let registry = &*REGISTRY;
    let cases: &[(&str, &str, &str)] = &[
        ("a\n", "a ", "a"),
        ("    fn x() {}\n", "fn x() {}  ", "fn x() {}"),
        ("one two\n", "one   two", "one two"),
        ("a\nb\n", "a \nb", "a\nb"),
    ];
    for (content, old, new) in cases {
        let (dir, ctx) = workspace(registry);
        std::fs::write(dir.path().join("e.txt"), content).expect("write");
        block_on(registry.execute("read_file", json!({"file_path": "e.txt"}), &ctx));
        let result = block_on(registry.execute(
            "edit_file",
            json!({"file_path": "e.txt", "old_string": old, "new_string": new}),
            &ctx,
        ));
        let err = result.error.expect("refused");
        assert_eq!(err.kind, ErrorKind::Failed);
        assert!(
            err.message
                .starts_with("No changes to apply: the edit leaves the file as it is"),
            "{old:?}: {}",
            err.message
        );
        assert!(!err.message.contains("are identical"), "{}", err.message);
        assert_eq!(
            std::fs::read_to_string(dir.path().join("e.txt")).expect("read"),
            *content
        );
    }
    // multi_edit: a later edit undoing an earlier one.
    let (dir, ctx) = workspace(registry);
    block_on(registry.execute("read_file", json!({"file_path": "a.txt"}), &ctx));
    let result = block_on(registry.execute(
        "multi_edit",
        json!({"file_path": "a.txt", "edits": [
            {"old_string": "beta", "new_string": "BETA"},
            {"old_string": "BETA", "new_string": "beta"}
        ]}),
        &ctx,
    ));
    let err = result.error.expect("refused");
    assert!(
        err.message
            .starts_with("No changes to apply: the edit leaves the file as it is"),
        "{}",
        err.message
    );
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).expect("read"),
        "alpha\nbeta\ngamma\n"
    );
}
