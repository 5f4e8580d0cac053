//! Black-box tests of `read` (moved from `read.rs`).

use crate::util::*;
use std::fmt::Write as _;
use tool_builtins::read::*;
use tool_builtins::*;

fn setup(files: &[(&str, &[u8])]) -> (tempfile::TempDir, ToolContext) {
    workspace_with(files)
}

async fn read(ctx: &ToolContext, p: &str, offset: Option<i64>, limit: Option<i64>) -> ToolResult {
    read_file(ctx, p.into(), offset.unwrap_or(1), limit)
        .await
        .into_tool_result()
}

fn err(r: &ToolResult) -> &str {
    &r.error.as_ref().expect("an error").message
}

#[tokio::test]
async fn envelope_and_footer() {
    let (d, ctx) = setup(&[("test.txt", b"hello world")]);
    let r = read(&ctx, "test.txt", None, None).await;
    let root = std::fs::canonicalize(d.path()).unwrap();
    assert_eq!(
        r.output,
        format!(
            "<path>{}</path>\n<type>file</type>\n<content>\n1: hello world\n\n(End of file - total 1 lines)\n</content>",
            root.join("test.txt").display()
        )
    );
    assert_eq!(r.metadata["truncated"], false);
    // The read is in the ledger now.
    let ledger = ctx.state::<FileLedger>().unwrap();
    assert!(ledger.check(&root.join("test.txt")).is_ok());
}

#[tokio::test]
async fn windows_and_errors() {
    let body: String = (0..100).fold(String::new(), |mut s, i| {
        let _ = writeln!(s, "line{i}");
        s
    });
    let (_d, ctx) = setup(&[
        ("many.txt", body.trim_end().as_bytes()),
        ("three.txt", b"a\nb\nc\n"),
    ]);
    let r = read(&ctx, "many.txt", None, Some(10)).await;
    assert!(r.output.contains("1: line0\n"));
    assert!(r.output.contains("10: line9\n"));
    assert!(!r.output.contains("line10"));
    assert!(
        r.output
            .contains("(Showing lines 1-10 of 100. Use offset=11 to continue.)")
    );
    assert_eq!(r.metadata["truncated"], true);
    let r = read(&ctx, "many.txt", Some(95), Some(10)).await;
    assert!(r.output.contains("95: line94\n"));
    assert!(r.output.contains("(End of file - total 100 lines)"));
    let r = read(&ctx, "three.txt", Some(10), None).await;
    assert_eq!(err(&r), "Offset 10 is out of range for this file (3 lines)");
    let r = read(&ctx, "three.txt", Some(0), None).await;
    assert_eq!(
        err(&r),
        "offset must be greater than or equal to 1 (lines are numbered from 1: offset 1 is the first line)"
    );
    let r = read(&ctx, "three.txt", Some(3), None).await;
    assert!(r.output.contains("3: c\n"));
}

#[tokio::test]
async fn empty_file_reads_as_zero_lines() {
    let (_d, ctx) = setup(&[("e.txt", b"")]);
    let r = read(&ctx, "e.txt", None, None).await;
    assert!(r.output.contains("(End of file - total 0 lines)"), "{r:?}");
}

#[tokio::test]
async fn long_lines_are_cut_and_crlf_is_one_break() {
    let long = "é".repeat(5000);
    let (_d, ctx) = setup(&[("l.txt", long.as_bytes()), ("crlf.txt", b"one\r\ntwo\r\n")]);
    let r = read(&ctx, "l.txt", None, None).await;
    assert!(r.output.contains(&format!(
        "1: {}... (line truncated to 2000 chars)",
        "é".repeat(2000)
    )));
    let r = read(&ctx, "crlf.txt", None, None).await;
    assert!(r.output.contains("1: one\n2: two\n"));
    assert!(r.output.contains("total 2 lines"));
}

#[tokio::test]
async fn output_budget_caps() {
    let body = format!("{}\n", "x".repeat(1000)).repeat(200);
    let (_d, ctx) = setup(&[("big.txt", body.as_bytes())]);
    let r = read(&ctx, "big.txt", None, None).await;
    assert!(
        r.output
            .contains("(Output capped at 50 KB. Showing lines 1-50. Use offset=51 to continue.)"),
        "{}",
        &r.output[r.output.len() - 200..]
    );
    assert!(r.output.len() < 52 * 1024);
}

#[tokio::test]
async fn binary_files_are_refused() {
    let (_d, ctx) = setup(&[
        ("bin.dat2", b"abc\0def"),
        ("notes.zip", b"plain"),
        ("ctl.txt", &[1, 2, 3, 4, 5, 6, b'a']),
    ]);
    for f in ["bin.dat2", "notes.zip", "ctl.txt"] {
        let r = read(&ctx, f, None, None).await;
        assert!(
            err(&r).starts_with("Cannot read binary file: "),
            "{f}: {r:?}"
        );
    }
}

#[tokio::test]
async fn not_found_suggests_siblings() {
    let (_d, ctx) = setup(&[("config.json", b"{}"), ("other.txt", b"")]);
    let r = read(&ctx, "config", None, None).await;
    let m = err(&r);
    assert!(m.starts_with("File not found: "));
    assert!(m.contains("Did you mean one of these?"));
    assert!(m.contains("config.json"));
    assert!(!m.contains("other.txt"));
}

#[tokio::test]
async fn directories_list_entries() {
    let (_d, ctx) = setup(&[("dir/a.txt", b"a"), ("dir/sub/b.txt", b"b")]);
    let r = read(&ctx, "dir", None, None).await;
    assert!(
        r.output
            .contains("<type>directory</type>\n<entries>\na.txt\nsub/\n\n(2 entries)\n</entries>"),
        "{}",
        r.output
    );
}

#[tokio::test]
async fn images_come_back_as_images() {
    // A real 1 × 1 PNG (images are decoded now: a corrupt one is an error).
    let mut png = Vec::new();
    image::DynamicImage::ImageRgba8(image::RgbaImage::new(1, 1))
        .write_to(&mut std::io::Cursor::new(&mut png), image::ImageFormat::Png)
        .unwrap();
    let (_d, ctx) = setup(&[("image.png", &png)]);
    let r = read(&ctx, "image.png", None, None).await;
    assert_eq!(r.output, "Image read successfully");
    assert_eq!(r.images.len(), 1);
    assert_eq!(r.images[0].media_type, "image/png");
}

#[tokio::test]
async fn legacy_encodings_are_decoded_and_named() {
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode("caf\u{e9} na\u{ef}ve\n");
    let (_d, ctx) = setup(&[("latin1.txt", &bytes)]);
    let r = read(&ctx, "latin1.txt", None, None).await;
    assert!(
        r.output.contains("1: caf\u{e9} na\u{ef}ve\n"),
        "{}",
        r.output
    );
    assert!(!r.output.contains('\u{FFFD}'));
    assert!(r.output.contains("<encoding>windows-1252</encoding>"));
}

/// A file with a UTF-8 line and a Latin-1 line is not UTF-8: `read_file`
/// decodes every line in the one encoding `edit_file` uses, so text copied
/// from what it shows matches, and the edit leaves other bytes alone.
#[tokio::test]
async fn mixed_utf8_and_latin1_read_as_edit_file_sees_them() {
    let mut bytes = "utf8 caf\u{e9} line\n".as_bytes().to_vec();
    bytes.extend_from_slice(b"latin1 caf\xE9 line\n");
    // Far past the 4 KiB sample too, so the scan finds it late.
    let mut late = "caf\u{e9}\n".as_bytes().repeat(2000);
    late.extend_from_slice(b"na\xEFve\n");
    let (d, ctx) = setup(&[("mixed.txt", &bytes), ("late.txt", &late)]);
    let file = tool_builtins::fs::text::TextFile::decode(&bytes).unwrap();
    assert!(!file.is_utf8());
    let r = read(&ctx, "mixed.txt", None, None).await;
    let expected: Vec<String> = file
        .text
        .lines()
        .enumerate()
        .map(|(i, l)| format!("{}: {l}", i + 1))
        .collect();
    assert!(r.output.contains(&expected.join("\n")), "{}", r.output);
    let named = format!("<encoding>{}</encoding>", file.encoding.name());
    assert!(r.output.contains(&named), "{}", r.output);
    // What read_file showed for line 1 is what edit_file matches.
    let line1 = expected[0].trim_start_matches("1: ").to_owned();
    let e = tool_builtins::edit::edit_file(&ctx, "mixed.txt".into(), line1, "first".into(), false)
        .await
        .into_tool_result();
    assert!(e.is_ok(), "{e:?}");
    let mut want = b"first\n".to_vec();
    want.extend_from_slice(b"latin1 caf\xE9 line\n");
    assert_eq!(std::fs::read(d.path().join("mixed.txt")).unwrap(), want);

    let late_file = tool_builtins::fs::text::TextFile::decode(&late).unwrap();
    let r = read(&ctx, "late.txt", Some(1), Some(1)).await;
    let shown = format!("1: {}\n", late_file.text.lines().next().unwrap());
    assert!(r.output.contains(&shown), "{}", r.output);
    let named = format!("<encoding>{}</encoding>", late_file.encoding.name());
    assert!(r.output.contains(&named), "{}", r.output);
    let r = read(&ctx, "late.txt", Some(2001), Some(1)).await;
    assert!(r.output.contains("2001: na\u{ef}ve\n"), "{}", r.output);
}

#[tokio::test]
async fn utf8_bom_is_not_shown_and_utf16_decodes() {
    let mut utf16 = vec![0xFF, 0xFE];
    for u in "h\u{e9}\r\nbye\r\n".encode_utf16() {
        utf16.extend_from_slice(&u.to_le_bytes());
    }
    let (_d, ctx) = setup(&[("bom.txt", b"\xEF\xBB\xBFx = 1\n"), ("w.txt", &utf16)]);
    let r = read(&ctx, "bom.txt", None, None).await;
    assert!(r.output.contains("<content>\n1: x = 1\n"), "{}", r.output);
    let r = read(&ctx, "w.txt", None, None).await;
    assert!(r.output.contains("1: h\u{e9}\n2: bye\n"), "{}", r.output);
}

#[tokio::test]
async fn pipes_are_refused_without_blocking() {
    let (d, ctx) = setup(&[]);
    let fifo = d.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo on this machine
    }
    let r = read(&ctx, "pipe", None, None).await;
    assert!(err(&r).contains("not a regular file"), "{r:?}");
}

#[tokio::test]
async fn escapes_are_refused() {
    let (d, ctx) = setup(&[]);
    std::os::unix::fs::symlink("/etc", d.path().join("link")).unwrap();
    for p in ["link/hostname", "../../../../etc/hostname", "/etc/hostname"] {
        let r = read(&ctx, p, None, None).await;
        assert!(err(&r).contains("outside the workspace"), "{p}");
    }
}

#[tokio::test]
async fn windows_across_chunk_boundaries_match_a_naive_split() {
    let lines: Vec<String> = (0..30_000)
        .map(|i| "y".repeat(i % 17) + &i.to_string())
        .collect();
    let body = lines.join("\n");
    let (_d, ctx) = setup(&[("v.txt", body.as_bytes())]);
    for offset in [1usize, 2, 4000, 6553, 6554, 15_000, 29_990, 30_000] {
        let r = read(&ctx, "v.txt", Some(i64::try_from(offset).unwrap()), Some(7)).await;
        let end = (offset + 6).min(lines.len());
        for n in offset..=end {
            let want = format!("\n{n}: {}\n", lines[n - 1]);
            assert!(
                r.output.contains(&want),
                "offset {offset}: missing {want:?}"
            );
        }
        assert_eq!(r.metadata["total_lines"], 30_000);
        assert_eq!(r.metadata["lines_shown"], end - offset + 1);
    }
}

#[tokio::test]
async fn window_near_the_end_of_a_large_file() {
    let mut body = String::new();
    for i in 0..200_000 {
        let _ = writeln!(body, "{i:07} some words here");
    }
    let (_d, ctx) = setup(&[("huge.txt", body.as_bytes())]);
    let r = read(&ctx, "huge.txt", Some(190_001), Some(100)).await;
    assert!(r.output.contains("190001: 0190000 some words here\n"));
    assert!(r.output.contains("190100: 0190099 some words here\n"));
    assert!(
        r.output
            .contains("(Showing lines 190001-190100 of 200000. Use offset=190101 to continue.)")
    );
}

#[tokio::test]
async fn an_empty_path_lists_the_root_and_writes_refuse_it() {
    let (_d, ctx) = setup(&[("a.txt", b"x\n"), ("sub/b.txt", b"y\n")]);
    for path in ["", "  "] {
        let r = read(&ctx, path, None, None).await;
        assert!(
            r.output.contains("a.txt") && r.output.contains("sub/"),
            "{r:?}"
        );
    }
    let w = tool_builtins::write::write_file(&ctx, String::new(), "x".into())
        .await
        .into_tool_result();
    assert!(err(&w).contains("is a directory"), "{w:?}");
    let e = tool_builtins::edit::edit_file(&ctx, " ".into(), "a".into(), "b".into(), false)
        .await
        .into_tool_result();
    assert!(err(&e).contains("is a directory"), "{e:?}");
}

#[tokio::test]
async fn hard_linked_files_are_refused_with_the_reason() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("bashrc");
    std::fs::write(&target, "HOST-SECRET").unwrap();
    let (d, ctx) = setup(&[]);
    std::fs::hard_link(&target, d.path().join("planted")).unwrap();
    let r = read(&ctx, "planted", None, None).await;
    let e = err(&r);
    assert!(e.contains("planted") && e.contains("2 hard links"), "{e}");
    assert!(!r.output.contains("HOST-SECRET"));
}
