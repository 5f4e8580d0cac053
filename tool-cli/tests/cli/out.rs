//! `--out`: a folder or an image file, the file's format from its extension,
//! write failures (exit 1, path on stderr), no symlink followed, no partial
//! file, batch numbering.

use std::path::Path;
use std::process::{Command, Stdio};

use image::ImageFormat;
use serde_json::Value;

use crate::support::{BIN, TempDir, code, json_lines, one_json_line, run, run_with_stdin, stderr};

/// The format of the file at `path`, by its bytes, and its pixel size.
#[allow(
    clippy::unwrap_used,
    reason = "a test helper: a failure is a failed test"
)]
fn format_and_size(path: &Path) -> (ImageFormat, (u32, u32)) {
    let bytes = std::fs::read(path).unwrap();
    let format = image::guess_format(&bytes).unwrap();
    let decoded = image::load_from_memory(&bytes).unwrap();
    (format, (decoded.width(), decoded.height()))
}

/// A noisy `w` × `h` RGB image (so it does not compress to nothing) in `format`.
#[allow(
    clippy::unwrap_used,
    reason = "a test helper: a failure is a failed test"
)]
fn noisy(w: u32, h: u32, format: ImageFormat) -> Vec<u8> {
    let mut seed = 0x2545_f491_u32;
    let img = image::RgbImage::from_fn(w, h, |_, _| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let [a, b, c, _] = seed.to_le_bytes();
        image::Rgb([a, b, c])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, format).unwrap();
    out.into_inner()
}

/// `tool call --workspace WS --out OUT read_file --file-path=FILE`.
fn read_file_to(ws: &TempDir, out: &str, file: &str) -> std::process::Output {
    let file_path = format!("--file-path={file}");
    run([
        "call",
        "--workspace",
        ws.arg(),
        "--out",
        out,
        "read_file",
        &file_path,
    ])
}

#[test]
fn the_file_extension_picks_the_format_written() {
    let dir = TempDir::new();
    for (name, format) in [
        ("g.png", ImageFormat::Png),
        ("g.jpg", ImageFormat::Jpeg),
        ("g.JPEG", ImageFormat::Jpeg),
        ("g.gif", ImageFormat::Gif),
        ("g.webp", ImageFormat::WebP),
        ("g.bmp", ImageFormat::Bmp),
    ] {
        let file = dir.path().join(name);
        let out = run([
            "call",
            "--out",
            file.to_str().unwrap(),
            "cli_fixture_binary",
        ]);
        assert_eq!(code(&out), 0, "{name}: {}", stderr(&out));
        let v = one_json_line(&out);
        assert_eq!(v["images"][0]["path"], file.to_str().unwrap(), "{name}");
        assert!(file.is_file(), "{name} is a file, not a folder");
        assert_eq!(format_and_size(&file), (format, (1, 1)), "{name}");
        assert_eq!(
            v["images"][0]["bytes"],
            std::fs::metadata(&file).unwrap().len(),
            "{name}: the size written"
        );
    }
}

#[test]
fn a_jpeg_from_the_tool_becomes_a_png_for_a_png_file() {
    let ws = TempDir::new();
    std::fs::write(
        ws.path().join("photo.jpg"),
        noisy(40, 30, ImageFormat::Jpeg),
    )
    .unwrap();
    let file = ws.path().join("photo-out.png");
    let out = read_file_to(&ws, file.to_str().unwrap(), "photo.jpg");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(format_and_size(&file), (ImageFormat::Png, (40, 30)));
}

#[test]
fn a_trailing_slash_or_no_extension_is_a_folder_and_other_names_are_refused() {
    let dir = TempDir::new();
    let folder = format!("{}/shots.png/", dir.arg());
    let out = run(["call", "--out", &folder, "cli_fixture_binary"]);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let path = one_json_line(&out)["images"][0]["path"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        path,
        dir.path()
            .join("shots.png/cli_fixture_binary-image-1.png")
            .to_str()
            .unwrap()
    );

    for (bad, expected) in [
        (
            dir.path().join("g.tiff"),
            "`.tiff` is not an image format this program writes (png, jpg, jpeg, gif, webp, bmp); end the path with / for a folder",
        ),
        (
            "/dev/full".into(),
            "--out /dev/full exists and is not a folder",
        ),
    ] {
        let out = run(["call", "--out", bad.to_str().unwrap(), "cli_fixture_binary"]);
        assert_eq!(code(&out), 2, "{}", bad.display());
        assert!(out.stdout.is_empty(), "the tool did not run");
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
    }
    assert!(!dir.path().join("g.tiff").exists());
}

#[test]
fn a_symlink_at_the_out_file_is_refused_and_its_target_untouched() {
    let dir = TempDir::new();
    let victim = dir.path().join("victim.txt");
    std::fs::write(&victim, "keep me").unwrap();
    let link = dir.path().join("link.png");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let out = run([
        "call",
        "--out",
        link.to_str().unwrap(),
        "cli_fixture_binary",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let message = format!(
        "refused to write {}: it is a symbolic link; --out never writes through one",
        link.display()
    );
    assert!(
        stderr(&out).contains(&format!("error: {message}")),
        "{}",
        stderr(&out)
    );
    let v = one_json_line(&out);
    assert_eq!(v["images"][0]["path"], Value::Null);
    assert_eq!(v["images"][0]["error"], message.as_str());
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep me");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
}

#[test]
fn a_write_failure_exits_1_naming_the_path() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("plain"), "x").unwrap();
    let file = dir.path().join("plain/g.png");
    let out = run([
        "call",
        "--out",
        file.to_str().unwrap(),
        "cli_fixture_binary",
    ]);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let expected = format!(
        "error: cannot write {}: {} exists and is not a folder",
        file.display(),
        dir.path().join("plain").display()
    );
    assert!(stderr(&out).contains(&expected), "{}", stderr(&out));
    let v = one_json_line(&out);
    assert_eq!(v["images"][0]["path"], Value::Null);
    assert!(
        v["images"][0]["error"]
            .as_str()
            .unwrap()
            .contains("plain/g.png")
    );
}

/// Runs `tool ARGS` with a file size limit of 50 KiB (`ulimit -f 100`, in
/// 512-byte blocks) and SIGXFSZ ignored, so a bigger write fails with EFBIG.
#[allow(
    clippy::unwrap_used,
    reason = "a test helper: a failure is a failed test"
)]
fn run_with_file_size_limit(args: &[&str]) -> std::process::Output {
    Command::new("sh")
        .arg("-c")
        .arg("trap '' XFSZ; ulimit -f 100; exec \"$@\"")
        .arg("sh")
        .arg(BIN)
        .args(args)
        .env_remove("TRACE_ID")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_failed_write_leaves_no_file() {
    let ws = TempDir::new();
    // About 270 KB as PNG: over the 50 KiB limit.
    std::fs::write(ws.path().join("big.png"), noisy(300, 300, ImageFormat::Png)).unwrap();
    let out_dir = TempDir::new();
    for out_arg in [
        out_dir.path().join("big.bmp").to_str().unwrap().to_owned(),
        format!("{}/", out_dir.arg()),
    ] {
        let out = run_with_file_size_limit(&[
            "call",
            "--workspace",
            ws.arg(),
            "--out",
            &out_arg,
            "read_file",
            "--file-path=big.png",
        ]);
        assert_eq!(code(&out), 1, "{out_arg}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("File too large (os error 27)"),
            "{}",
            stderr(&out)
        );
        let left: Vec<_> = std::fs::read_dir(out_dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.file_name())
            .collect();
        assert!(left.is_empty(), "{out_arg}: left behind {left:?}");
    }
}

#[test]
fn batch_numbers_the_out_file_per_result() {
    let dir = TempDir::new();
    let file = dir.path().join("g.png");
    let line = r#"{"name": "cli_fixture_binary", "arguments": {}}"#;
    let input = format!("{line}\n{line}\n{line}\n");
    let out = run_with_stdin(&["batch", "--out", file.to_str().unwrap()], &input);
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let paths: Vec<String> = json_lines(&out)
        .iter()
        .map(|v| v["images"][0]["path"].as_str().unwrap().to_owned())
        .collect();
    let expected: Vec<String> = ["g.png", "g-2.png", "g-3.png"]
        .iter()
        .map(|n| dir.path().join(n).to_str().unwrap().to_owned())
        .collect();
    assert_eq!(paths, expected);
    for p in &paths {
        assert_eq!(format_and_size(Path::new(p)), (ImageFormat::Png, (1, 1)));
    }
}

#[test]
fn batch_exits_1_when_a_file_could_not_be_written() {
    let dir = TempDir::new();
    std::fs::write(dir.path().join("plain"), "x").unwrap();
    let file = dir.path().join("plain/g.png");
    let line = r#"{"name": "cli_fixture_binary", "arguments": {}}"#;
    let out = run_with_stdin(
        &["batch", "--out", file.to_str().unwrap()],
        &format!("{line}\n{line}\n"),
    );
    assert_eq!(code(&out), 1);
    assert_eq!(json_lines(&out).len(), 2, "every line still answered");
    assert_eq!(
        stderr(&out).matches("error: cannot write").count(),
        4,
        "per line: the image and the attachment beside it: {}",
        stderr(&out)
    );
}

#[test]
fn a_pdf_is_not_taken_for_an_image_out_file() {
    let ws = TempDir::new();
    let pdf = ws.path().join("doc.pdf");
    std::fs::write(
        &pdf,
        b"%PDF-1.4\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n",
    )
    .unwrap();
    let file = ws.path().join("page.png");
    let out = read_file_to(&ws, file.to_str().unwrap(), "doc.pdf");
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let message = format!(
        "not written: --out {} names an image file and this result has no image; give a folder \
         (--out DIR/) to save its files (this application/pdf is at {})",
        file.display(),
        pdf.display()
    );
    assert!(
        stderr(&out).contains(&format!("error: {message}")),
        "{}",
        stderr(&out)
    );
    let v = one_json_line(&out);
    assert_eq!(v["attachments"][0]["error"], message.as_str());
    assert_eq!(v["attachments"][0]["path"], pdf.to_str().unwrap());
    assert!(!file.exists());
}

/// Issue 23 item 13: `batch --out g.png` replaced an unrelated `g-2.png`.
/// Only the named file is replaced; a numbered one that exists is refused.
#[test]
fn batch_never_replaces_a_numbered_file_it_did_not_name() {
    let dir = TempDir::new();
    let file = dir.path().join("g.png");
    let unrelated = dir.path().join("g-2.png");
    std::fs::write(&unrelated, "my own g-2").unwrap();
    let line = r#"{"name": "cli_fixture_binary", "arguments": {}}"#;
    let input = format!("{line}\n{line}\n{line}\n");
    let out = run_with_stdin(&["batch", "--out", file.to_str().unwrap()], &input);
    assert_eq!(code(&out), 1, "{}", stderr(&out));
    let lines = json_lines(&out);
    assert_eq!(lines[0]["images"][0]["path"], file.to_str().unwrap());
    assert_eq!(lines[1]["images"][0]["path"], Value::Null);
    let error = lines[1]["images"][0]["error"].as_str().unwrap();
    assert!(
        error.contains("g-2.png: it exists; --out replaces only the file it names"),
        "{error}"
    );
    assert_eq!(
        lines[2]["images"][0]["path"],
        dir.path().join("g-3.png").to_str().unwrap()
    );
    assert_eq!(std::fs::read_to_string(&unrelated).unwrap(), "my own g-2");
}

/// Issue 23 item 13: `--out ws/lnk/` wrote through a link to a folder.
#[test]
fn an_out_folder_that_is_a_symlink_is_refused() {
    let dir = TempDir::new();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = dir.path().join("lnk");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    for out_arg in [
        format!("{}/", link.display()),
        link.join("g.png").display().to_string(),
    ] {
        let out = run(["call", "--out", out_arg.as_str(), "cli_fixture_binary"]);
        if out_arg.ends_with(".png") {
            // A link among the parents is refused before the call (review 23, F8).
            assert_eq!(code(&out), 2, "{out_arg}: {}", stderr(&out));
            assert!(
                stderr(&out).contains("is a symbolic link"),
                "{}",
                stderr(&out)
            );
        } else {
            assert_eq!(code(&out), 1, "{out_arg}: {}", stderr(&out));
            let v = one_json_line(&out);
            let error = v["images"][0]["error"].as_str().unwrap_or_default();
            assert!(error.contains("--out never follows one"), "{out_arg}: {v}");
        }
        assert_eq!(
            std::fs::read_dir(&elsewhere).unwrap().count(),
            0,
            "{out_arg}: nothing written through the link"
        );
    }
}

/// Review 23 F10: the private trees of the same user's other
/// configurations are refused too: the temp-dir tree that processes started
/// without `XDG_RUNTIME_DIR` use, while this one has `XDG_RUNTIME_DIR`; and
/// the state folder (ledgers, caches). Before, both were written into.
#[test]
fn out_folders_in_other_private_trees_are_refused() {
    use std::os::unix::fs::MetadataExt;
    let run_dir = TempDir::new();
    let tmp = TempDir::new();
    let state = TempDir::new();
    let uid = std::fs::metadata(tmp.path()).unwrap().uid();
    let temp_tree = tmp.path().join(format!("agent-tools-{uid}/spill/victim"));
    let ledger = state.path().join("agent-tools/ledger");
    for dir in [&temp_tree, &ledger] {
        std::fs::create_dir_all(dir).unwrap();
        let out_arg = format!("{}/", dir.display());
        let out = crate::support::tool()
            .env("XDG_RUNTIME_DIR", run_dir.path())
            .env("TMPDIR", tmp.path())
            .env("XDG_STATE_HOME", state.path())
            .args(["call", "--out", out_arg.as_str(), "cli_fixture_binary"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 1, "{out_arg}: {}", stderr(&out));
        let v = one_json_line(&out);
        let error = v["images"][0]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("inside the private folder"),
            "{out_arg}: {v}"
        );
        assert_eq!(std::fs::read_dir(dir).unwrap().count(), 0, "{out_arg}");
    }
}

/// Issue 23 item 13: `--out <private>/spill/<other trace>/` wrote into
/// another trace's spill folder.
#[test]
fn an_out_folder_in_the_private_tree_is_refused() {
    let run_dir = TempDir::new();
    let other = run_dir
        .path()
        .join("agent-tools")
        .join("spill")
        .join("other-trace");
    std::fs::create_dir_all(&other).unwrap();
    // The private folder as `tool` makes it: its owner's alone.
    std::fs::set_permissions(
        run_dir.path().join("agent-tools"),
        std::os::unix::fs::PermissionsExt::from_mode(0o700),
    )
    .unwrap();
    for out_arg in [
        format!("{}/", other.display()),
        other.join("g.png").display().to_string(),
    ] {
        let out = crate::support::tool()
            .env("XDG_RUNTIME_DIR", run_dir.path())
            .args(["call", "--out", out_arg.as_str(), "cli_fixture_binary"])
            .output()
            .unwrap();
        assert_eq!(code(&out), 1, "{out_arg}: {}", stderr(&out));
        let v = one_json_line(&out);
        let error = v["images"][0]["error"].as_str().unwrap_or_default();
        assert!(
            error.contains("inside the private folder"),
            "{out_arg}: {v}"
        );
        assert_eq!(
            std::fs::read_dir(&other).unwrap().count(),
            0,
            "{out_arg}: nothing written into another trace's folder"
        );
    }
    // Without --out, the trace's own folder there is still used.
    let out = crate::support::tool()
        .env("XDG_RUNTIME_DIR", run_dir.path())
        .args(["call", "cli_fixture_binary"])
        .output()
        .unwrap();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let v = one_json_line(&out);
    let path = v["images"][0]["path"].as_str().unwrap();
    assert!(
        path.starts_with(
            run_dir
                .path()
                .join("agent-tools")
                .join("out")
                .to_str()
                .unwrap()
        ),
        "{path}"
    );
}

/// Review 23 F8: `--out lnk/imgs/` followed a link one level up and wrote
/// (and made folders) outside.
#[test]
fn a_link_among_the_out_folders_parents_is_refused() {
    let dir = TempDir::new();
    let elsewhere = dir.path().join("elsewhere");
    std::fs::create_dir(&elsewhere).unwrap();
    let link = dir.path().join("lnk");
    std::os::unix::fs::symlink(&elsewhere, &link).unwrap();
    let out_arg = format!("{}/imgs/", link.display());
    let out = run(["call", "--out", out_arg.as_str(), "cli_fixture_binary"]);
    assert_eq!(code(&out), 2, "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is a symbolic link"),
        "{}",
        stderr(&out)
    );
    assert_eq!(std::fs::read_dir(&elsewhere).unwrap().count(), 0);
}
