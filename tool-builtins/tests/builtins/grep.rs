//! Black-box tests of `grep` (moved from `search/grep/mod.rs`).

use crate::util::*;
use std::fs;
use std::os::unix::fs::symlink;
use std::time::Duration;
use tool_builtins::search::grep::*;
use tool_builtins::*;

fn setup(files: &[(&str, &str)]) -> (tempfile::TempDir, ToolContext) {
    workspace_with(files)
}

fn set_mtime(path: &Path, secs: u64) {
    let t = SystemTime::UNIX_EPOCH + Duration::from_secs(secs);
    fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(t)
        .unwrap();
}

fn grep(ctx: &ToolContext, pattern: &str, path: Option<&str>, include: Option<&str>) -> ToolResult {
    grep_content(
        pattern.to_owned(),
        path.map(str::to_owned),
        include.map(str::to_owned),
        None,
        ctx,
    )
    .into_tool_result()
}

fn root(ctx: &ToolContext) -> PathBuf {
    ctx.state::<Workspace>().unwrap().root().to_path_buf()
}

/// Makes a FIFO at `path`; `false` when this machine has no `mkfifo`.
fn mkfifo(path: &Path) -> bool {
    std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `f` on another thread and fails the test if it blocks.
fn within_seconds(f: impl FnOnce() -> ToolResult + Send + 'static) -> ToolResult {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(10))
        .expect("grep_content blocked on a pipe")
}

#[test]
fn pipes_are_refused_or_skipped_without_blocking() {
    let (d, ctx) = setup(&[("a.txt", "needle\n")]);
    if !mkfifo(&d.path().join("pipe")) {
        return;
    }
    symlink("pipe", d.path().join("pipe-link")).unwrap();
    for named in ["pipe", "pipe-link"] {
        let c = ctx.clone();
        let r = within_seconds(move || grep(&c, "needle", Some(named), None));
        let msg = r.error.map(|e| e.message).unwrap_or_default();
        assert!(msg.contains("not a regular file"), "{named}: {msg}");
    }
    // The walker passes over the pipe (and the link to it).
    let c = ctx.clone();
    let r = within_seconds(move || grep(&c, "needle", None, None));
    assert!(r.output.starts_with("Found 1 matches"), "{}", r.output);
}

#[test]
fn grouped_by_file_newest_first() {
    let (d, ctx) = setup(&[
        ("old.txt", "needle one\nhay\nneedle two\n"),
        ("new.txt", "needle\n"),
    ]);
    set_mtime(&d.path().join("old.txt"), 1_000_000_000);
    set_mtime(&d.path().join("new.txt"), 1_700_000_000);
    let r = grep(&ctx, "needle", None, None);
    let root = root(&ctx);
    let expected = format!(
        "Found 3 matches\n\n{}:\n  Line 1: needle\n\n{}:\n  Line 1: needle one\n  Line 3: needle two",
        root.join("new.txt").display(),
        root.join("old.txt").display()
    );
    assert_eq!(r.output, expected);
    assert_eq!(r.metadata["matches"], 3);
    assert_eq!(r.metadata["truncated"], false);
}

#[test]
fn no_match_is_not_an_error() {
    let (_d, ctx) = setup(&[("a.txt", "hello world")]);
    let r = grep(&ctx, "xyznonexistent", None, None);
    assert!(r.is_ok());
    assert_eq!(r.output, "No files found");
    assert_eq!(r.metadata["matches"], 0);
    assert_eq!(r.metadata["truncated"], false);
}

#[test]
fn include_filters_files() {
    let (_d, ctx) = setup(&[
        ("a.ts", "needle\n"),
        ("b.js", "needle\n"),
        ("s/c.tsx", "needle\n"),
    ]);
    let r = grep(&ctx, "needle", None, Some("*.ts"));
    assert!(r.output.contains("a.ts") && !r.output.contains("b.js"));
    let r = grep(&ctx, "needle", None, Some("*.{ts,tsx}"));
    assert_eq!(r.metadata["matches"], 2);
}

#[test]
fn more_than_the_limit_is_truncated() {
    let text: String = (0..80).map(|i| format!("needle {i}\n")).collect();
    let (d, ctx) = setup(&[("a.txt", &text), ("b.txt", &text)]);
    set_mtime(&d.path().join("a.txt"), 1_700_000_000);
    set_mtime(&d.path().join("b.txt"), 1_600_000_000);
    let r = grep(&ctx, "needle", None, None);
    assert_eq!(r.metadata["matches"], 160);
    assert_eq!(r.metadata["truncated"], true);
    assert!(
        r.output
            .starts_with("Found 160 matches (showing first 100)\n")
    );
    assert_eq!(r.output.matches("  Line ").count(), 100);
    assert!(
        r.output
            .contains("  Line 20: needle 19\n\n(Results are truncated")
    );
    assert!(r.output.contains(
        "more specific path or pattern.)\n(Showing matches 1-100 of 160. Use offset=100 to see the next page.)"
    ));
    // The page says its order shifts when files change between pages.
    assert!(
        r.output.ends_with(
            "(Files are in newest-modified-first order: a file written between pages moves to \
             the front and shifts the pages, so search again from offset 0 after editing.)"
        ),
        "{}",
        r.output
    );
    assert_eq!(r.metadata["next_offset"], 100);
}

/// Pages follow on across files: the second page starts at the 101st line
/// (b.txt's 21st match, b.txt being older), the last has no next offset.
#[test]
fn pages_follow_on_across_files() {
    let text: String = (0..80).map(|i| format!("needle {i}\n")).collect();
    let (d, ctx) = setup(&[("a.txt", &text), ("b.txt", &text)]);
    set_mtime(&d.path().join("a.txt"), 1_700_000_000);
    set_mtime(&d.path().join("b.txt"), 1_600_000_000);
    let page = |offset: i64| {
        grep_content("needle".to_owned(), None, None, Some(offset), &ctx).into_tool_result()
    };
    let second = page(100);
    assert_eq!(second.metadata["matches"], 160);
    assert_eq!(second.metadata["truncated"], false);
    assert!(second.metadata.get("next_offset").is_none());
    assert_eq!(
        second.output.lines().next(),
        Some("Found 160 matches (showing 101-160)")
    );
    assert_eq!(second.output.matches("  Line ").count(), 60);
    let b = root(&ctx).join("b.txt").display().to_string();
    assert!(
        second
            .output
            .contains(&format!("{b}:\n  Line 21: needle 20\n")),
        "{}",
        second.output
    );
    assert!(!second.output.contains("a.txt"), "{}", second.output);
    // A middle page says where the next starts.
    let middle = page(50);
    assert_eq!(middle.metadata["next_offset"], 150);
    assert!(
        middle
            .output
            .starts_with("Found 160 matches (showing 51-150)\n")
    );
    assert!(
        middle.output.contains(
            "\n\n(Showing matches 51-150 of 160. Use offset=150 to see the next page.)\n"
        )
    );
    let past = page(160);
    // Past the end the header claims no range ("showing 161-160").
    assert_eq!(past.output.lines().next(), Some("Found 160 matches"));
    assert!(
        past.output
            .ends_with("(No matches past offset 160: there are 160. Use a smaller offset.)"),
        "{}",
        past.output
    );
}

/// Pages inside one file: the lines past the first page are kept for the
/// later pages (a page is not cut at the first 100 lines of a file).
#[test]
fn pages_follow_on_inside_one_file() {
    let text: String = (0..160).map(|i| format!("needle {i}\n")).collect();
    let (_d, ctx) = setup(&[("a.txt", &text)]);
    let page = |offset: i64| {
        grep_content("needle".to_owned(), None, None, Some(offset), &ctx).into_tool_result()
    };
    let middle = page(50);
    assert_eq!(middle.metadata["next_offset"], 150);
    assert_eq!(
        middle.output.matches("  Line ").count(),
        100,
        "{}",
        middle.output
    );
    assert!(middle.output.contains("  Line 51: needle 50\n"));
    assert!(middle.output.contains("  Line 150: needle 149\n"));
    assert!(!middle.output.contains("  Line 151:"));
    let last = page(100);
    assert_eq!(last.metadata["truncated"], false);
    assert_eq!(
        last.output.matches("  Line ").count(),
        60,
        "{}",
        last.output
    );
    assert!(last.output.contains("  Line 101: needle 100\n"));
    assert!(
        last.output.ends_with("  Line 160: needle 159"),
        "{}",
        last.output
    );
}

#[test]
fn long_lines_are_cut_and_crlf_trimmed() {
    let long = format!("needle{}\r\n", "é".repeat(3000));
    let (_d, ctx) = setup(&[("a.txt", &long)]);
    let r = grep(&ctx, "needle", None, None);
    let line = r
        .output
        .lines()
        .find(|l| l.starts_with("  Line 1: "))
        .unwrap();
    assert!(line.ends_with("..."));
    assert_eq!(line.trim_start_matches("  Line 1: ").chars().count(), 2003);
    assert!(!r.output.contains('\r'));
}

/// The lines of `output` that show matches ("  Line N: text").
fn shown(output: &str) -> Vec<&str> {
    output
        .lines()
        .filter(|l| l.starts_with("  Line "))
        .collect()
}

#[test]
fn anchors_match_lines_of_crlf_files() {
    // The issue's input: `^needle$` on a CRLF file.
    let (_d, ctx) = setup(&[("c.txt", "alpha needle\r\nneedle\r\nbeta\r\n")]);
    let r = grep(&ctx, "^needle$", None, None);
    assert_eq!(r.metadata["matches"], 1, "{}", r.output);
    assert_eq!(shown(&r.output), ["  Line 2: needle"]);
    assert!(!r.output.contains('\r'));
    // `$` after other text, on the last line without a final break, and in an LF file alike.
    let (_d, ctx) = setup(&[
        ("w.txt", "let x = 1;\r\nlet y = 2;\r\nend;"),
        ("l.txt", "let z = 3;\nx\n"),
    ]);
    let r = grep(&ctx, r"= \d;$", None, None);
    assert_eq!(r.metadata["matches"], 3, "{}", r.output);
    let r = grep(&ctx, "^end;$", None, None);
    assert_eq!(shown(&r.output), ["  Line 3: end;"]);
    // `.` does not swallow the carriage return: `y = .$` still anchors.
    let r = grep(&ctx, r"^let y = .;$", None, None);
    assert_eq!(shown(&r.output), ["  Line 2: let y = 2;"]);
    // An explicitly named CRLF file searches the same way.
    let r = grep(&ctx, "^let x = 1;$", Some("w.txt"), None);
    assert_eq!(shown(&r.output), ["  Line 1: let x = 1;"]);
}

#[test]
fn a_pattern_naming_the_carriage_return_still_searches() {
    let (_d, ctx) = setup(&[("c.txt", "a\r\nb\n"), ("l.txt", "x\n")]);
    for pattern in [r"\r$", r"\r", r"a\r"] {
        let r = grep(&ctx, pattern, None, None);
        assert!(r.is_ok(), "{pattern}: {r:?}");
        assert_eq!(shown(&r.output), ["  Line 1: a"], "{pattern}");
    }
    let r = grep(&ctx, "a(", None, None);
    assert!(
        r.error
            .unwrap()
            .message
            .starts_with("Invalid regular expression `a(`"),
        "bad patterns are still refused"
    );
}

#[test]
fn binary_files_are_skipped() {
    let (_d, ctx) = setup(&[("bin.dat", "needle\0\x01\x02"), ("t.txt", "needle\n")]);
    let r = grep(&ctx, "needle", None, None);
    assert_eq!(r.metadata["matches"], 1);
    assert!(!r.output.contains("bin.dat"));
}

#[test]
fn search_path_errors() {
    let (_d, ctx) = setup(&[("a.txt", "x\n")]);
    let r = grep(&ctx, "x", Some("does-not-exist"), None);
    let e = r.error.unwrap();
    assert!(
        e.message.starts_with("Search path not found: "),
        "{}",
        e.message
    );
    assert!(e.message.ends_with("does-not-exist"));
    let r = grep(&ctx, "x", Some("/etc"), None);
    assert!(r.error.unwrap().message.contains("outside the workspace"));
    let r = grep(&ctx, "(unclosed", None, None);
    assert_eq!(r.error.unwrap().kind, ErrorKind::InvalidArguments);
}

#[test]
fn ignore_files_vs_explicit_paths() {
    let (d, ctx) = setup(&[
        ("src/a.rs", "needle\n"),
        ("target/gen.rs", "needle\n"),
        ("app.log", "needle\n"),
    ]);
    fs::create_dir(d.path().join(".git")).unwrap();
    fs::write(d.path().join(".gitignore"), "target/\n*.log\n").unwrap();
    let r = grep(&ctx, "needle", None, None);
    assert_eq!(r.metadata["matches"], 1, "{}", r.output);
    let r = grep(&ctx, "needle", Some("target"), None);
    assert_eq!(r.metadata["matches"], 1, "{}", r.output);
    let r = grep(&ctx, "needle", Some("app.log"), None);
    assert_eq!(r.metadata["matches"], 1, "{}", r.output);
}

#[test]
fn symlinks_never_lead_out_of_the_workspace() {
    let outside = tempfile::tempdir().unwrap();
    fs::write(outside.path().join("secret.txt"), "needle\n").unwrap();
    let (d, ctx) = setup(&[("in/a.txt", "needle\n")]);
    symlink(outside.path(), d.path().join("out")).unwrap();
    symlink(outside.path().join("secret.txt"), d.path().join("s.txt")).unwrap();
    symlink("..", d.path().join("in/loop")).unwrap();
    let r = grep(&ctx, "needle", None, None);
    assert_eq!(r.metadata["matches"], 1, "{}", r.output);
    assert!(!r.output.contains("secret"));
}

#[test]
fn hostile_patterns_and_includes_are_refused_not_crashing() {
    let (_d, ctx) = workspace_with(&[("a.rs", "needle\n")]);
    let nested = format!("{}a{}", "{".repeat(15_000), "}".repeat(15_000));
    for include in [
        nested.as_str(),
        &"*".repeat(100_000),
        "{a,{b,{c,{d,{e,{f,{g,{h,{i,j}}}}}}}}}",
    ] {
        let e = grep(&ctx, "needle", None, Some(include))
            .error
            .expect("refused");
        assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
        assert!(e.message.len() < 600);
    }
    for pattern in [
        "(".repeat(15_000) + &")".repeat(15_000),
        "a".repeat(20_000),
        "[".repeat(30_000),
    ] {
        let e = grep(&ctx, &pattern, None, None).error.expect("refused");
        assert_eq!(e.kind, ErrorKind::InvalidArguments, "{}", e.message);
        assert!(e.message.len() < 1_000, "{}", e.message.len());
    }
    assert!(
        grep(&ctx, "needle", None, Some("*.rs"))
            .output
            .contains("a.rs")
    );
}

/// A context whose grep searches lines up to `cap` bytes.
fn with_cap(ctx: ToolContext, cap: usize) -> ToolContext {
    ctx.with_state(SearchConfig::default().with_max_line_bytes(cap))
}

/// The note naming lines cut at `cap` ("1 KiB"), listing `named`.
fn cut_note(cap: &str, named: &str) -> String {
    format!(
        "\n\n(Lines longer than {cap} were searched only in their first {cap}; matches after \
         that point are not found or counted: {named})"
    )
}

#[test]
fn a_one_line_file_longer_than_the_cap_is_cut_and_says_so() {
    // The issue's input, scaled to the default cap: one line of 5 MiB
    // (no line break at all) whose only match lies past the first 4 MiB.
    let big = format!("{}needle", "x".repeat(5 * 1024 * 1024));
    let (_d, ctx) = setup(&[("one.txt", big.as_str())]);
    let r = grep(&ctx, "needle", None, None);
    let path = root(&ctx).join("one.txt");
    let expected = format!(
        "No files found{}",
        cut_note("4 MiB", &format!("{}:1", path.display()))
    );
    assert_eq!(r.output, expected);
    assert_eq!(r.metadata["matches"], 0);
    assert_eq!(r.metadata["cut_lines"], 1);
    // A match inside the searched part is found, shown cut with `...`.
    let r = grep(&ctx, "^xxx", None, None);
    assert_eq!(r.metadata["matches"], 1);
    let shown = shown(&r.output);
    assert_eq!(shown.len(), 1);
    assert_eq!(shown[0], format!("  Line 1: {}...", "x".repeat(2000)));
    assert!(
        r.output
            .ends_with(&cut_note("4 MiB", &format!("{}:1", path.display())))
    );
}

#[test]
fn cut_lines_are_named_with_their_line_numbers() {
    let long = "z".repeat(3000);
    let a = format!("one\ntwo needle\n{long} needle\nfour needle\n{long}\nsix needle\n");
    let crlf = format!("a\r\n{long}\r\nneedle\r\n");
    let (d, ctx) = setup(&[("a.txt", a.as_str()), ("c.txt", crlf.as_str())]);
    set_mtime(&d.path().join("a.txt"), 1_700_000_000);
    set_mtime(&d.path().join("c.txt"), 1_600_000_000);
    let ctx = with_cap(ctx, 1000);
    let r = grep(&ctx, "needle", None, None);
    // Lines 3 and 5 of a.txt and line 2 of c.txt are cut; line 3's match lies past the cut.
    assert_eq!(r.metadata["matches"], 4, "{}", r.output);
    assert_eq!(r.metadata["cut_lines"], 3);
    assert_eq!(
        shown(&r.output),
        [
            "  Line 2: two needle",
            "  Line 4: four needle",
            "  Line 6: six needle",
            "  Line 3: needle"
        ]
    );
    let root = root(&ctx);
    let named = |file: &str, lines: &[u64]| {
        lines
            .iter()
            .map(|l| format!("{}:{l}", root.join(file).display()))
            .collect::<Vec<_>>()
    };
    // The two files are searched in either order; each names its own lines in order.
    let first = [named("a.txt", &[3, 5]), named("c.txt", &[2])]
        .concat()
        .join(", ");
    let second = [named("c.txt", &[2]), named("a.txt", &[3, 5])]
        .concat()
        .join(", ");
    assert!(
        r.output.ends_with(&cut_note("1000 bytes", &first))
            || r.output.ends_with(&cut_note("1000 bytes", &second)),
        "{}",
        r.output
    );
    // A line of exactly the cap is not cut (nor one ending `\r\n` at
    // the cap); one byte more is, and is shown ending with `...`.
    let q = |n: usize| "q".repeat(n);
    let text = format!("{}\n{}\r\nneedle\n", q(1000), q(999));
    let (_d, ctx) = setup(&[("e.txt", text.as_str())]);
    let ctx = with_cap(ctx, 1000);
    let r = grep(&ctx, "needle|^q", None, None);
    assert_eq!(r.metadata["matches"], 3, "{}", r.output);
    assert!(r.metadata.get("cut_lines").is_none());
    assert!(!r.output.contains("Lines longer"));
    assert_eq!(
        shown(&r.output),
        [
            format!("  Line 1: {}", q(1000)),
            format!("  Line 2: {}", q(999)),
            "  Line 3: needle".to_owned()
        ]
    );
    let text = format!("{}\n{}\n{}\n", q(1001), q(1000), q(5000));
    let (_d, ctx) = setup(&[("f.txt", text.as_str())]);
    let r = grep(&with_cap(ctx, 1000), "^q", None, None);
    assert_eq!(r.metadata["cut_lines"], 2);
    assert_eq!(
        shown(&r.output),
        [
            format!("  Line 1: {}...", q(1000)),
            format!("  Line 2: {}", q(1000)),
            format!("  Line 3: {}...", q(1000))
        ]
    );
}

#[test]
fn a_nul_in_the_dropped_part_still_marks_the_file_binary() {
    let bin = format!("needle {}\0tail\nneedle\n", "b".repeat(5000));
    let (_d, ctx) = setup(&[("bin.dat", bin.as_str()), ("t.txt", "needle\n")]);
    let r = grep(&with_cap(ctx, 100), "needle", None, None);
    assert_eq!(r.metadata["matches"], 1, "{}", r.output);
    assert!(!r.output.contains("bin.dat"));
    assert!(r.metadata.get("cut_lines").is_none());
}

/// A page of long lines stops before the registry's output budget would cut
/// its middle out, and `next_offset` is the first match not shown: following
/// it skips nothing.
#[test]
fn a_page_of_long_lines_fits_the_output_budget_and_skips_nothing() {
    let long = "z".repeat(5000);
    let text: String = (1..=150).map(|i| format!("hit {i} {long}\n")).collect();
    let (_d, ctx) = setup(&[("l.txt", &text)]);
    let page = |offset: i64| {
        grep_content("hit".to_owned(), None, None, Some(offset), &ctx).into_tool_result()
    };
    let first = page(0);
    let shown = first.output.matches("  Line ").count();
    assert!(shown > 0 && shown < 100, "{shown}");
    assert!(
        first.output.len() < tool_core::truncate::DEFAULT_MAX_BYTES,
        "{}",
        first.output.len()
    );
    assert_eq!(first.metadata["next_offset"], shown);
    assert!(
        first
            .output
            .starts_with(&format!("Found 150 matches (showing first {shown})\n")),
        "{}",
        &first.output[..80]
    );
    assert!(
        first
            .output
            .contains(&format!("(This page stops after {shown} matches"))
    );
    assert!(
        first
            .output
            .contains(&format!("  Line {shown}: hit {shown} z"))
    );
    let second = page(i64::try_from(shown).unwrap());
    let next = shown + 1;
    assert!(
        second
            .output
            .contains(&format!("  Line {next}: hit {next} z")),
        "{}",
        &second.output[..200]
    );
    assert!(!second.output.contains(&format!("  Line {shown}: ")));
}
