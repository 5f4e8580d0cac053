//! Indexed search (issue 29) against the scan, differentially: a random
//! corpus in a real folder with a real watcher, random edits (through the
//! tools and behind their back: create, modify, append, delete, rename a
//! file or a folder, change `.gitignore`, make a file binary), and after
//! each step random regular expressions (literals, alternations, classes,
//! anchors, case-insensitive, `(?m)`/`(?s)` flags, repetitions, invalid
//! ones) through `grep_content` with and without the index, with and
//! without `path` and `include`, and `glob_files` patterns: every result
//! (output and metadata) must be the scan's.
//!
//! Comparisons: `INDEX_CASES` (default 10 000) in all, about 30 per
//! generated corpus; `INDEX_CASES=1000000` runs a million by hand.

#![allow(
    clippy::unwrap_used,
    reason = "test setup: a failure there is the test's failure"
)]

use std::fs;
use std::path::{Path, PathBuf};

use proptest::prelude::*;
use tool_builtins::{ContentIndex, IndexConfig, IndexStatus, Workspace, glob_files, grep_content};
use tool_core::{IntoToolResult, ToolContext, ToolResult};

/// Comparisons per proptest case: 6 steps of 5 comparisons.
const PER_CASE: u32 = 30;

fn total_comparisons() -> u32 {
    std::env::var("INDEX_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

const WORDS: &[&str] = &[
    "alpha",
    "Beta",
    "GAMMA",
    "delta_x",
    "fn",
    "handler",
    "foo",
    "bar",
    "baz",
    "qux",
    "ñandú",
    "Straße",
    "KELVIN",
    "ſtop",
    "x1",
    "y22",
    "z333",
    "  ",
    "\t",
    "fn req_handler()",
    "TODO:",
    "a",
    "ab",
    "let",
    "=",
    // Long literals whose 5- and 7-byte grams reach past a trigram, and grams at
    // the edges of words, pieces of words and multi-byte characters.
    "kalomiren_handler",
    "miren_hand",
    "xelxel_wu",
    "Xelxel_WU2",
    "Ünïcödé",
    "日本語のコメント",
    "café",
    "CAFÉ",
];

fn line() -> impl Strategy<Value = String> {
    (
        prop::collection::vec(prop::sample::select(WORDS), 0..6),
        prop::sample::select(&["\n", "\n", "\n", "\r\n"][..]),
    )
        .prop_map(|(words, end)| words.join(" ") + end)
}

fn text() -> impl Strategy<Value = String> {
    prop::collection::vec(line(), 0..12).prop_map(|lines| lines.concat())
}

const NAMES: &[&str] = &[
    "a.rs",
    "b.txt",
    "src/c.rs",
    "src/d.md",
    "src/deep/e.rs",
    "target/f.rs",
    "x.log",
    ".hidden",
    "src/deep/g.txt",
    "docs/h.rs",
];

/// One edit of the corpus.
#[derive(Debug, Clone)]
enum Edit {
    /// Write (create or replace) a file through `write_file`.
    ToolWrite(usize, String),
    /// Write a file behind the tools' back.
    Write(usize, String),
    Append(usize, String),
    Delete(usize),
    Rename(usize, usize),
    /// Turn a file binary (a NUL byte) or back.
    Binary(usize),
    RenameDir,
    /// Toggle `*.md` in `.gitignore`.
    Ignore,
}

fn edit() -> impl Strategy<Value = Edit> {
    let file = 0..NAMES.len();
    prop_oneof![
        (file.clone(), text()).prop_map(|(f, t)| Edit::ToolWrite(f, t)),
        (file.clone(), text()).prop_map(|(f, t)| Edit::Write(f, t)),
        (file.clone(), text()).prop_map(|(f, t)| Edit::Append(f, t)),
        file.clone().prop_map(Edit::Delete),
        (file.clone(), file.clone()).prop_map(|(a, b)| Edit::Rename(a, b)),
        file.prop_map(Edit::Binary),
        Just(Edit::RenameDir),
        Just(Edit::Ignore),
    ]
}

/// A random regular expression over the corpus's words.
fn regex() -> impl Strategy<Value = String> {
    let word = prop::sample::select(WORDS).prop_map(regex_syntax::escape);
    let atom = prop_oneof![
        6 => word.clone(),
        1 => Just("[a-d]".to_owned()),
        1 => Just("[xyz][0-9]+".to_owned()),
        1 => Just("[A-Za-z_]+".to_owned()),
        1 => Just(".".to_owned()),
        1 => Just(" +".to_owned()),
        1 => Just("[^a]".to_owned()),
    ];
    let piece = (
        atom,
        prop::sample::select(&["", "", "", "?", "*", "+", "{2}"][..]),
    )
        .prop_map(|(a, q)| {
            if q.is_empty() {
                a
            } else {
                format!("(?:{a}){q}")
            }
        });
    let seq = prop::collection::vec(piece, 1..4).prop_map(|p| p.concat());
    (
        prop::collection::vec(seq, 1..3),
        prop::sample::select(&["", "", "(?i)", "(?m)", "(?s)", "(?-u)"][..]),
        prop::sample::select(&["", "", "^", "\\b"][..]),
        prop::sample::select(&["", "", "", "$", "\\b", "\\n", "\\r$"][..]),
    )
        .prop_map(|(alts, flags, start, end)| format!("{flags}{start}(?:{}){end}", alts.join("|")))
}

/// A corpus folder, its index and two contexts.
struct World {
    _dir: tempfile::TempDir,
    _state: tempfile::TempDir,
    root: PathBuf,
    index: ContentIndex,
    indexed: ToolContext,
    scanned: ToolContext,
    runtime: tokio::runtime::Runtime,
}

impl World {
    fn new(files: &[(usize, String)]) -> World {
        let dir = tempfile::tempdir().unwrap();
        let state = tempfile::tempdir().unwrap();
        let root = fs::canonicalize(dir.path()).unwrap();
        fs::create_dir(root.join(".git")).unwrap();
        fs::write(root.join(".gitignore"), "target/\n*.log\n").unwrap();
        for (f, t) in files {
            write(&root.join(NAMES[*f]), t.as_bytes());
        }
        let ws = Workspace::new(&root).unwrap();
        let index = ContentIndex::new(
            &ws,
            IndexConfig::default()
                .with_min_bytes(0)
                .with_state_dir(state.path())
                .with_threads(2)
                // Pieces of a line or two: most files are searched in pieces.
                .with_piece_bytes(24),
        );
        let status = index.build();
        assert!(matches!(status, IndexStatus::Ready { .. }), "{status}");
        let scanned = tool_builtins::context(&root).unwrap();
        let indexed = scanned.clone().with_state(index.clone());
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        World {
            _dir: dir,
            _state: state,
            root,
            index,
            indexed,
            scanned,
            runtime,
        }
    }

    fn apply(&self, edit: &Edit) {
        let path = |f: usize| self.root.join(NAMES[f]);
        match edit {
            Edit::ToolWrite(f, t) => {
                let p = path(*f);
                if p.exists() {
                    let _ = self.runtime.block_on(tool_builtins::read_file(
                        &self.scanned,
                        p.display().to_string(),
                        1,
                        None,
                    ));
                }
                // The tool may refuse (a binary file read_file would not
                // show); the file then stays as it was.
                let _ = self.runtime.block_on(tool_builtins::write_file(
                    &self.scanned,
                    p.display().to_string(),
                    t.clone(),
                ));
            }
            Edit::Write(f, t) => write(&path(*f), t.as_bytes()),
            Edit::Append(f, t) => {
                let mut old = fs::read(path(*f)).unwrap_or_default();
                old.extend_from_slice(t.as_bytes());
                write(&path(*f), &old);
            }
            Edit::Delete(f) => {
                let _ = fs::remove_file(path(*f));
            }
            Edit::Rename(a, b) => {
                if path(*a).exists() {
                    fs::create_dir_all(path(*b).parent().unwrap()).unwrap();
                    fs::rename(path(*a), path(*b)).unwrap();
                }
            }
            Edit::Binary(f) => {
                let mut old = fs::read(path(*f)).unwrap_or_default();
                if let Some(i) = old.iter().position(|&b| b == 0) {
                    old.remove(i);
                } else {
                    old.push(0);
                }
                write(&path(*f), &old);
            }
            Edit::RenameDir => {
                let (a, b) = (self.root.join("src/deep"), self.root.join("src/moved"));
                if a.exists() && !b.exists() {
                    fs::rename(&a, &b).unwrap();
                } else if b.exists() && !a.exists() {
                    fs::rename(&b, &a).unwrap();
                }
            }
            Edit::Ignore => {
                let p = self.root.join(".gitignore");
                let old = fs::read_to_string(&p).unwrap();
                let new = if old.contains("*.md") {
                    old.replace("*.md\n", "")
                } else {
                    old + "*.md\n"
                };
                fs::write(&p, new).unwrap();
            }
        }
    }

    fn grep(
        &self,
        ctx: &ToolContext,
        pattern: &str,
        path: Option<&str>,
        include: Option<&str>,
    ) -> ToolResult {
        grep_content(
            pattern.to_owned(),
            path.map(str::to_owned),
            include.map(str::to_owned),
            None,
            ctx,
        )
        .into_tool_result()
    }
}

/// A workspace folder, a state folder and the workspace's canonical path.
fn folders() -> (tempfile::TempDir, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    (dir, state, root)
}

/// An index of any size kept in `state`.
fn small_config(state: &tempfile::TempDir) -> IndexConfig {
    IndexConfig::default()
        .with_min_bytes(0)
        .with_state_dir(state.path())
}

fn write(path: &Path, bytes: &[u8]) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, bytes).unwrap();
}

fn same(a: &ToolResult, b: &ToolResult) -> Result<(), TestCaseError> {
    prop_assert_eq!(&a.output, &b.output);
    prop_assert_eq!(&a.metadata, &b.metadata);
    prop_assert_eq!(a.is_error(), b.is_error());
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: total_comparisons().div_ceil(PER_CASE),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn indexed_results_equal_the_scan(
        files in prop::collection::vec((0..NAMES.len(), text()), 1..8),
        steps in prop::collection::vec(
            (edit(), prop::collection::vec(regex(), 4), prop::sample::select(&["", "src", "src/deep"][..]),
             prop::sample::select(&["", "*.rs", "src/**"][..])),
            6,
        ),
    ) {
        let world = World::new(&files);
        for (edit, patterns, path, include) in &steps {
            world.apply(edit);
            for (i, pattern) in patterns.iter().enumerate() {
                let (path, include) = if i == 0 {
                    ((!path.is_empty()).then_some(*path), (!include.is_empty()).then_some(*include))
                } else {
                    (None, None)
                };
                let want = world.grep(&world.scanned, pattern, path, include);
                let got = world.grep(&world.indexed, pattern, path, include);
                same(&got, &want).map_err(|e| {
                    TestCaseError::fail(format!("pattern {pattern:?} path {path:?} include {include:?}: {e}"))
                })?;
            }
            let glob = ["**/*.rs", "*"][usize::from(path.is_empty())];
            let want = glob_files(glob.to_owned(), None, None, &world.scanned).into_tool_result();
            let got = glob_files(glob.to_owned(), None, None, &world.indexed).into_tool_result();
            same(&got, &want)?;
        }
        prop_assert!(world.index.answered() > 0, "the index answered nothing");
    }
}

/// The index answers selective patterns, scans unprunable ones, and sees
/// a change made behind the tools' back before the next search.
#[test]
fn a_change_behind_the_back_is_seen_at_once() {
    let world = World::new(&[(0, "fn main() {}\n".to_owned())]);
    let before = world.index.answered();
    let r = world.grep(&world.indexed, "brand_new_ident", None, None);
    assert_eq!(r.output, "No files found");
    assert_eq!(world.index.answered(), before + 1);
    write(
        &world.root.join("src/new.rs"),
        b"let brand_new_ident = 1;\n",
    );
    let r = world.grep(&world.indexed, "brand_new_ident", None, None);
    assert_eq!(
        r.output,
        format!(
            "Found 1 matches\n\n{}:\n  Line 1: let brand_new_ident = 1;",
            world.root.join("src/new.rs").display()
        )
    );
    assert_eq!(world.index.answered(), before + 2);
    // `.` prunes nothing: a scan, not counted.
    let _ = world.grep(&world.indexed, ".", None, None);
    assert_eq!(world.index.answered(), before + 2);
}

/// A second link made in the workspace to an indexed file, written
/// through and removed: the watcher only hears of the new link's path, so
/// the first path is searched whole from then on and its new line is found.
#[test]
fn a_write_through_a_second_link_is_found_under_the_first() {
    let world = World::new(&[(0, "fn main() {}\n".to_owned())]);
    let first = world.root.join("src/linked.rs");
    write(&first, b"fn linked() {}\n");
    let r = world.grep(&world.indexed, "written_through_link", None, None);
    assert_eq!(r.output, "No files found");
    let second = world.root.join("src/second.rs");
    fs::hard_link(&first, &second).unwrap();
    let mut f = fs::OpenOptions::new().append(true).open(&second).unwrap();
    std::io::Write::write_all(&mut f, b"// written_through_link\n").unwrap();
    drop(f);
    // Both paths have two links now: the scan and the index skip them.
    let indexed = world.grep(&world.indexed, "written_through_link", None, None);
    let scanned = world.grep(&world.scanned, "written_through_link", None, None);
    assert_eq!(indexed.output, scanned.output);
    fs::remove_file(&second).unwrap();
    let indexed = world.grep(&world.indexed, "written_through_link", None, None);
    let scanned = world.grep(&world.scanned, "written_through_link", None, None);
    assert_eq!(
        scanned.output,
        format!(
            "Found 1 matches\n\n{}:\n  Line 2: // written_through_link",
            first.display()
        )
    );
    assert_eq!(indexed.output, scanned.output);
}

/// A stored index is reused after a restart when the files are unchanged,
/// and a file changed while no one watched is read again.
#[test]
fn a_stored_index_is_reused_and_checked() {
    let (_dir, state, root) = folders();
    write(&root.join("a.rs"), b"fn stored_one() {}\n");
    write(&root.join("b.rs"), b"fn stored_two() {}\n");
    let ws = Workspace::new(&root).unwrap();
    let config = small_config(&state);
    let first = ContentIndex::new(&ws, config.clone());
    assert!(matches!(
        first.build(),
        IndexStatus::Ready { reused: false, .. }
    ));
    assert_eq!(first.stored().unwrap().map(|(files, _)| files), Some(2));
    drop(first);
    write(&root.join("b.rs"), b"fn changed_while_away() {}\n");
    let second = ContentIndex::new(&ws, config);
    let status = second.build();
    assert!(
        matches!(
            status,
            IndexStatus::Ready {
                reused: true,
                changed_files: 1,
                ..
            }
        ),
        "{status}"
    );
    let ctx = ToolContext::new().with_state(ws).with_state(second.clone());
    let r = grep_content("changed_while_away".into(), None, None, None, &ctx).into_tool_result();
    assert!(r.output.starts_with("Found 1 matches"), "{}", r.output);
    let r = grep_content("stored_two".into(), None, None, None, &ctx).into_tool_result();
    assert_eq!(r.output, "No files found");
    assert_eq!(second.answered(), 2);
    assert!(second.drop_index().unwrap());
    assert_eq!(second.stored().unwrap(), None);
}

/// An index file of another version (`ATGRAM07`, grams keyed with their
/// length in the top byte) is rebuilt, never misread.
#[test]
fn an_index_of_an_older_version_is_rebuilt() {
    let (_dir, state, root) = folders();
    write(&root.join("a.rs"), b"fn kalomiren_handler() {}\n");
    let ws = Workspace::new(&root).unwrap();
    let config = small_config(&state);
    let first = ContentIndex::new(&ws, config.clone());
    assert!(matches!(
        first.build(),
        IndexStatus::Ready { reused: false, .. }
    ));
    let path = first.location().unwrap();
    drop(first);
    let mut bytes = fs::read(&path).unwrap();
    assert_eq!(&bytes[..8], b"ATGRAM08");
    // ATGRAM07: the same layout, other grams' bits (read as this version,
    // its rows would hide matches).
    bytes[..8].copy_from_slice(b"ATGRAM07");
    fs::write(&path, &bytes).unwrap();
    let second = ContentIndex::new(&ws, config);
    let status = second.build();
    assert!(
        matches!(status, IndexStatus::Ready { reused: false, .. }),
        "{status}"
    );
    assert_eq!(&fs::read(&path).unwrap()[..8], b"ATGRAM08");
    let ctx = ToolContext::new().with_state(ws).with_state(second.clone());
    let r = grep_content("miren_hand".into(), None, None, None, &ctx).into_tool_result();
    assert!(r.output.starts_with("Found 1 matches"), "{}", r.output);
    assert_eq!(second.answered(), 1);
}

/// Below the size threshold there is no index: searches scan.
#[test]
fn a_small_workspace_gets_no_index() {
    let dir = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    write(&dir.path().join("a.rs"), b"tiny\n");
    let ws = Workspace::new(dir.path()).unwrap();
    let index = ContentIndex::new(&ws, IndexConfig::default().with_state_dir(state.path()));
    assert_eq!(
        index.build(),
        IndexStatus::BelowThreshold {
            bytes: 5,
            threshold: tool_builtins::search::index::DEFAULT_MIN_BYTES
        }
    );
    let ctx = ToolContext::new().with_state(ws).with_state(index.clone());
    let r = grep_content("tiny".into(), None, None, None, &ctx).into_tool_result();
    assert!(r.output.starts_with("Found 1 matches"));
    assert_eq!(index.answered(), 0);
}

/// The index as a write hook: with no watcher (trusted writes), a file the
/// tools write is seen by the next search only through the hook.
#[test]
fn the_file_tools_tell_the_index_what_they_wrote() {
    let (_dir, state, root) = folders();
    write(&root.join("a.rs"), b"fn old_name() {}\n");
    let ws = Workspace::new(&root).unwrap();
    let index = ContentIndex::new(
        &ws,
        IndexConfig::default()
            .with_min_bytes(0)
            .with_state_dir(state.path())
            .with_watch(false)
            .with_trusted_writes(true),
    );
    assert!(matches!(index.build(), IndexStatus::Ready { .. }));
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let base = tool_builtins::context(&root)
        .unwrap()
        .with_state(index.clone());
    let hooked = tool_builtins::AfterWriteHooks::add(base.clone(), index.clone());
    let grep = |ctx: &ToolContext, pattern: &str| {
        grep_content(pattern.to_owned(), None, None, None, ctx)
            .into_tool_result()
            .output
    };
    let new_file = root.join("b.rs");
    // Without the hook the index does not hear of the write.
    runtime
        .block_on(tool_builtins::write_file(
            &base,
            new_file.display().to_string(),
            "fn hooked_name() {}\n".to_owned(),
        ))
        .unwrap();
    assert_eq!(grep(&base, "hooked_name"), "No files found");
    // With it, the next search reads the changed file again.
    let third = root.join("c.rs");
    runtime
        .block_on(tool_builtins::write_file(
            &hooked,
            third.display().to_string(),
            "fn hooked_name() {}\n".to_owned(),
        ))
        .unwrap();
    assert_eq!(
        grep(&hooked, "hooked_name"),
        format!(
            "Found 1 matches\n\n{}:\n  Line 1: fn hooked_name() {{}}",
            third.display()
        )
    );
}

/// Waits up to 60 s for `index` to be ready with no change held since its
/// build; the last status.
fn settled(index: &ContentIndex) -> IndexStatus {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let status = index.status();
        if matches!(
            status,
            IndexStatus::Ready {
                changed_files: 0,
                ..
            }
        ) || std::time::Instant::now() > until
        {
            return status;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `files` lines of text holding `marker`: about 40 bytes a line.
fn big_text(lines: usize, marker: &str) -> String {
    (0..lines)
        .map(|n| format!("line {n} holds {marker} text {n}\n"))
        .collect()
}

/// Review 29, F4: changes whose rows pass `max_delta_bytes` give a real
/// build that is stored (not a reuse that passes the cap again, forever);
/// a restart after such a change builds anew too; `update` (`tool index
/// build`) writes the stored index again when any file changed.
#[test]
fn changes_over_the_delta_cap_rebuild_and_store_the_index() {
    let (_dir, state, root) = folders();
    write(&root.join("a.rs"), b"fn small_one() {}\n");
    let ws = Workspace::new(&root).unwrap();
    let config = IndexConfig::default()
        .with_min_bytes(0)
        .with_max_delta_bytes(16 << 10)
        .with_state_dir(state.path());
    let first = ContentIndex::new(&ws, config.clone());
    assert!(matches!(
        first.build(),
        IndexStatus::Ready { reused: false, .. }
    ));
    let path = first.location().unwrap();
    assert_eq!(first.stored().unwrap().map(|(files, _)| files), Some(1));
    // A large file written behind the host's back: its rows pass the cap.
    write(
        &root.join("big.txt"),
        big_text(20_000, "first_marker").as_bytes(),
    );
    let ctx = ToolContext::new()
        .with_state(ws.clone())
        .with_state(first.clone());
    let grep = |ctx: &ToolContext, pattern: &str| {
        grep_content(pattern.to_owned(), None, None, None, ctx)
            .into_tool_result()
            .output
    };
    assert!(grep(&ctx, "first_marker text 12345").starts_with("Found 1 matches"));
    let status = settled(&first);
    assert!(
        matches!(
            status,
            IndexStatus::Ready {
                reused: false,
                changed_files: 0,
                ..
            }
        ),
        "{status}"
    );
    assert_eq!(first.stored().unwrap().map(|(files, _)| files), Some(2));
    let answered = first.answered();
    assert_eq!(
        grep(&ctx, "first_marker text 12345"),
        format!(
            "Found 1 matches\n\n{}:\n  Line 12346: line 12345 holds first_marker text 12345",
            root.join("big.txt").display()
        )
    );
    assert_eq!(first.answered(), answered + 1);
    drop(ctx);
    drop(first);
    // Changed while no host ran, over the cap: built anew and stored.
    let before = fs::read(&path).unwrap();
    write(
        &root.join("big.txt"),
        big_text(20_000, "second_marker").as_bytes(),
    );
    let second = ContentIndex::new(&ws, config.clone());
    let status = second.build();
    assert!(
        matches!(
            status,
            IndexStatus::Ready {
                reused: false,
                changed_files: 0,
                ..
            }
        ),
        "{status}"
    );
    assert_ne!(fs::read(&path).unwrap(), before);
    drop(second);
    // `update` with nothing changed reuses; with one small change, writes the index again.
    let third = ContentIndex::new(&ws, config.clone());
    assert!(matches!(
        third.update(),
        IndexStatus::Ready { reused: true, .. }
    ));
    drop(third);
    let before = fs::read(&path).unwrap();
    write(&root.join("a.rs"), b"fn small_two() {}\n");
    let fourth = ContentIndex::new(&ws, config);
    let status = fourth.update();
    assert!(
        matches!(
            status,
            IndexStatus::Ready {
                reused: false,
                changed_files: 0,
                ..
            }
        ),
        "{status}"
    );
    assert_ne!(fs::read(&path).unwrap(), before);
}

/// Review 29, F2: a file edited while no host ran, keeping its size and
/// with its modification time put back (`cp -p`, `rsync -t`, `touch -r`),
/// is read again at the restart: its status change time moved.
#[test]
fn an_edit_that_restores_size_and_mtime_while_away_is_read_again() {
    let (_dir, state, root) = folders();
    let file = root.join("a.go");
    write(&file, b"func xelqui_vex() {}\n");
    write(&root.join("b.go"), b"func other() {}\n");
    let ws = Workspace::new(&root).unwrap();
    let config = small_config(&state);
    let first = ContentIndex::new(&ws, config.clone());
    assert!(matches!(first.build(), IndexStatus::Ready { .. }));
    drop(first);
    let before = fs::metadata(&file).unwrap();
    // Past the file system's timestamp granularity (a clock tick).
    std::thread::sleep(std::time::Duration::from_millis(50));
    fs::write(&file, b"func QZsame_mt0() {}\n").unwrap();
    fs::File::options()
        .write(true)
        .open(&file)
        .unwrap()
        .set_times(fs::FileTimes::new().set_modified(before.modified().unwrap()))
        .unwrap();
    let after = fs::metadata(&file).unwrap();
    assert_eq!(after.len(), before.len());
    assert_eq!(after.modified().unwrap(), before.modified().unwrap());
    let second = ContentIndex::new(&ws, config);
    let status = second.build();
    assert!(
        matches!(
            status,
            IndexStatus::Ready {
                reused: true,
                changed_files: 1,
                ..
            }
        ),
        "{status}"
    );
    let ctx = ToolContext::new().with_state(ws).with_state(second.clone());
    let r = grep_content("QZsame_mt0".into(), None, None, None, &ctx).into_tool_result();
    assert_eq!(
        r.output,
        format!(
            "Found 1 matches\n\n{}:\n  Line 1: func QZsame_mt0() {{}}",
            file.display()
        )
    );
    assert_eq!(second.answered(), 1);
}

/// Review 29, F3: stored rows changed on disk (the table intact) are not
/// trusted: the search that reads them scans (the right answer), the
/// index is built anew, and later searches use it.
#[test]
fn corrupt_stored_rows_are_rebuilt_not_trusted() {
    let (_dir, state, root) = folders();
    write(&root.join("a.rs"), b"fn kalomiren_handler() {}\n");
    let ws = Workspace::new(&root).unwrap();
    let config = small_config(&state);
    let first = ContentIndex::new(&ws, config.clone());
    assert!(matches!(first.build(), IndexStatus::Ready { .. }));
    let path = first.location().unwrap();
    drop(first);
    // One piece id: 8192 rows of one word each after the magic. Every
    // row's bits inverted: the needed rows would say "not here".
    let mut bytes = fs::read(&path).unwrap();
    for b in &mut bytes[8..8 + 8192 * 8] {
        *b ^= 0xff;
    }
    fs::write(&path, &bytes).unwrap();
    let second = ContentIndex::new(&ws, config);
    assert!(matches!(
        second.build(),
        IndexStatus::Ready { reused: true, .. }
    ));
    let ctx = ToolContext::new().with_state(ws).with_state(second.clone());
    let want = format!(
        "Found 1 matches\n\n{}:\n  Line 1: fn kalomiren_handler() {{}}",
        root.join("a.rs").display()
    );
    let r = grep_content("kalomiren_handler".into(), None, None, None, &ctx).into_tool_result();
    assert_eq!(r.output, want);
    assert_eq!(second.answered(), 0);
    let status = settled(&second);
    assert!(
        matches!(status, IndexStatus::Ready { reused: false, .. }),
        "{status}"
    );
    assert_ne!(fs::read(&path).unwrap(), bytes);
    let r = grep_content("kalomiren_handler".into(), None, None, None, &ctx).into_tool_result();
    assert_eq!(r.output, want);
    assert_eq!(second.answered(), 1);
}

/// Review 29, F5 and F7: `drop_index` (`tool index drop`) deletes only
/// the index file, not a running host's sentinel folder; a host whose
/// sentinel folder is deleted all the same makes it again (no 2 s wait,
/// no scan); a host removes its own folder when dropped, and a starting
/// one those of processes no longer running; below the threshold no
/// folder is left.
#[test]
fn drop_keeps_running_hosts_sentinels_and_no_sentinel_folder_leaks() {
    let (_dir, state, root) = folders();
    write(&root.join("a.rs"), b"fn first_file() {}\n");
    let ws = Workspace::new(&root).unwrap();
    let config = small_config(&state);
    let host = ContentIndex::new(&ws, config.clone());
    assert!(matches!(host.build(), IndexStatus::Ready { .. }));
    let path = host.location().unwrap();
    let folder = path.parent().unwrap().to_path_buf();
    let sentinels = folder.join(format!("sentinels-{}", std::process::id()));
    assert!(sentinels.is_dir());
    let ctx = ToolContext::new()
        .with_state(ws.clone())
        .with_state(host.clone());
    let grep = |pattern: &str| {
        let started = std::time::Instant::now();
        let out = grep_content(pattern.to_owned(), None, None, None, &ctx)
            .into_tool_result()
            .output;
        (out, started.elapsed())
    };
    // Another process's `tool index drop`.
    assert!(ContentIndex::new(&ws, config.clone()).drop_index().unwrap());
    assert!(!path.exists());
    assert!(sentinels.is_dir());
    write(&root.join("b.rs"), b"fn second_file() {}\n");
    let (out, took) = grep("second_file");
    assert!(out.starts_with("Found 1 matches"), "{out}");
    assert!(took < std::time::Duration::from_millis(1500), "{took:?}");
    assert_eq!(host.answered(), 1);
    // Deleted anyway: made and watched again by the next search.
    fs::remove_dir_all(&sentinels).unwrap();
    write(&root.join("c.rs"), b"fn third_file() {}\n");
    let (out, took) = grep("third_file");
    assert!(out.starts_with("Found 1 matches"), "{out}");
    assert!(took < std::time::Duration::from_millis(1500), "{took:?}");
    assert_eq!(host.answered(), 2);
    assert!(sentinels.is_dir());
    // Gone with the host.
    drop(ctx);
    drop(host);
    assert!(!sentinels.exists());
    // A dead process's folder (no pid is that high) goes at the next start.
    let dead = folder.join("sentinels-999999999");
    fs::create_dir_all(&dead).unwrap();
    let next = ContentIndex::new(&ws, config);
    assert!(matches!(next.build(), IndexStatus::Ready { .. }));
    assert!(!dead.exists());
    drop(next);
    // Below the threshold: no folder at all.
    let small = ContentIndex::new(&ws, IndexConfig::default().with_state_dir(state.path()));
    assert!(small.drop_index().unwrap());
    assert!(matches!(small.build(), IndexStatus::BelowThreshold { .. }));
    assert!(
        !folder.exists(),
        "{:?}",
        fs::read_dir(&folder).unwrap().collect::<Vec<_>>()
    );
}

/// Review 29, F6: a state folder inside the workspace gets no index (nor
/// sentinels): searches scan, and the status says why.
#[test]
fn no_index_is_kept_in_a_state_folder_inside_the_workspace() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    write(&root.join("a.rs"), b"fn inside_state() {}\n");
    let ws = Workspace::new(&root).unwrap();
    // Named through a path that is not canonical, and not created yet.
    let state = dir.path().join("zz/../.state");
    let index = ContentIndex::new(
        &ws,
        IndexConfig::default()
            .with_min_bytes(0)
            .with_state_dir(&state),
    );
    let reason = index.refusal().unwrap();
    assert!(reason.contains("is inside the workspace"), "{reason}");
    let status = index.build();
    assert_eq!(
        status,
        IndexStatus::Off {
            reason: reason.clone()
        }
    );
    assert_eq!(status.to_string(), format!("off: {reason} (searches scan)"));
    assert!(!root.join(".state").exists());
    let ctx = ToolContext::new().with_state(ws).with_state(index.clone());
    let r = grep_content("inside_state".into(), None, None, None, &ctx).into_tool_result();
    assert!(r.output.starts_with("Found 1 matches"), "{}", r.output);
    assert_eq!(index.answered(), 0);
    // A state folder outside: no refusal.
    let outside = tempfile::tempdir().unwrap();
    let fine = ContentIndex::new(
        &Workspace::new(&root).unwrap(),
        IndexConfig::default().with_state_dir(outside.path()),
    );
    assert_eq!(fine.refusal(), None);
}

/// Review 29, F8: an unwritable state folder is said to be one (not a
/// watching failure, no doubled "searches scan"); a cut-short index file
/// is named and called corrupt.
#[test]
fn state_folder_and_index_file_problems_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(dir.path()).unwrap();
    write(&root.join("a.rs"), b"fn named() {}\n");
    let ws = Workspace::new(&root).unwrap();
    // A state folder below a plain file cannot be created (even by root).
    let blocker = tempfile::NamedTempFile::new().unwrap();
    let index = ContentIndex::new(
        &ws,
        IndexConfig::default()
            .with_min_bytes(0)
            .with_state_dir(blocker.path().join("state")),
    );
    let status = index.build().to_string();
    assert!(
        status.starts_with("off: the state folder is not writable (cannot create "),
        "{status}"
    );
    assert_eq!(status.matches("searches scan").count(), 1, "{status}");
    // A cut-short index file.
    let state = tempfile::tempdir().unwrap();
    let index = ContentIndex::new(
        &ws,
        IndexConfig::default()
            .with_min_bytes(0)
            .with_state_dir(state.path()),
    );
    let path = index.location().unwrap();
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(&path, b"ATGRAM07 and no more").unwrap();
    let e = index.stored().unwrap_err().to_string();
    assert!(
        e.starts_with("corrupt index file: the file is cut short"),
        "{e}"
    );
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(e.contains("writes it anew"), "{e}");
}

/// Lines are cut from each 256 KiB read of a file: a line across two reads,
/// a read ending just before or after a line end, empty lines, lines of
/// every length up to just below and just over the long-line limit (64 KiB,
/// past which a file is always searched). Every word, wherever it falls,
/// is found by the indexed search exactly as by the scan.
#[test]
fn lines_across_reads_are_indexed_whole() {
    const READ: usize = 256 << 10;
    let (_dir, state, root) = folders();
    // (file, words): the first file's longest line fits, the second's does not.
    let mut words: Vec<(String, String)> = Vec::new();
    let mut crossing = 0;
    for (name, longest) in [("fits.txt", 64 * 1024 - 3), ("long.txt", 64 * 1024 + 10)] {
        let mut text = String::new();
        let lengths = [
            0usize, 1, 2, 5, 40, 4095, 4096, 4097, 30_000, longest, 77, 0, 0, 3,
        ];
        let mut k = 0usize;
        while text.len() < 5 * READ / 2 {
            let len = lengths[k % lengths.len()];
            let word = format!("{}{k:05}q{}", &name[..1], k % 7);
            let line_start = text.len();
            // Put the word across the next read boundary when the line can
            // reach it, else in the middle of the line.
            let boundary = (line_start / READ + 1) * READ;
            let at = if len > word.len() && line_start + len > boundary + word.len() {
                crossing += 1;
                boundary - 4 - line_start
            } else {
                len.saturating_sub(word.len()) / 2
            };
            let mut line = "x".repeat(len.max(word.len()));
            if len >= word.len() {
                line.replace_range(at..at + word.len(), &word);
                words.push((name.to_owned(), word));
            }
            text.push_str(&line);
            text.push('\n');
            k += 1;
        }
        // The last line has no line end.
        text.push_str("tail_of_");
        text.push_str(name);
        words.push((name.to_owned(), format!("tail_of_{name}")));
        write(&root.join(name), text.as_bytes());
    }
    let ws = Workspace::new(&root).unwrap();
    let index = ContentIndex::new(
        &ws,
        small_config(&state)
            .with_watch(false)
            .with_trusted_writes(true),
    );
    let status = index.build();
    assert!(matches!(status, IndexStatus::Ready { .. }), "{status}");
    let scanned = tool_builtins::context(&root).unwrap();
    let indexed = scanned.clone().with_state(index.clone());
    let grep = |ctx: &ToolContext, p: &str| {
        grep_content(p.into(), None, None, None, ctx).into_tool_result()
    };
    assert!(words.len() > 80, "{} words", words.len());
    assert!(crossing >= 4, "{crossing} words across a read's end");
    for (name, word) in &words {
        let want = grep(&scanned, word);
        assert!(
            want.output.starts_with("Found 1 matches") && want.output.contains(name.as_str()),
            "{word}: {}",
            want.output
        );
        let got = grep(&indexed, word);
        assert_eq!(got.output, want.output, "{word} in {name}");
        // Upper case in the pattern: the same, through the case-insensitive flag.
        let upper = format!("(?i){}", word.to_uppercase());
        assert_eq!(grep(&indexed, &upper).output, grep(&scanned, &upper).output);
    }
    assert!(index.answered() >= words.len());
}
