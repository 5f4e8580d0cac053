//! Black-box tests of `write` (moved from `write.rs`).

use crate::util::*;
use std::fs;
use tool_builtins::write::*;

fn setup() -> (tempfile::TempDir, ToolContext) {
    let d = tempfile::tempdir().unwrap();
    let ctx = tool_builtins::context(d.path()).unwrap();
    (d, ctx)
}

#[tokio::test]
async fn creates_parents_and_writes_verbatim() {
    let (d, ctx) = setup();
    let r = write_file(&ctx, "a/b/new.txt".into(), "hello\n".into())
        .await
        .into_tool_result();
    assert_eq!(r.output, "Wrote file successfully.");
    assert_eq!(r.metadata["exists"], false);
    assert_eq!(
        fs::read_to_string(d.path().join("a/b/new.txt")).unwrap(),
        "hello\n"
    );
    let r = write_file(
        &ctx,
        "q.txt".into(),
        "l\u{2019}\u{e9}t\u{e9}\r\nno newline".into(),
    )
    .await
    .into_tool_result();
    assert!(r.is_ok());
    assert_eq!(
        fs::read_to_string(d.path().join("q.txt")).unwrap(),
        "l\u{2019}\u{e9}t\u{e9}\r\nno newline"
    );
}

#[tokio::test]
async fn overwriting_needs_a_read_and_then_works() {
    let (d, ctx) = setup();
    let p = d.path().join("exists.txt");
    fs::write(&p, "\u{feff}old\n").unwrap();
    let r = write_file(&ctx, "exists.txt".into(), "new\n".into())
        .await
        .into_tool_result();
    assert!(r.error.unwrap().message.starts_with("You must read file"));
    assert_eq!(fs::read_to_string(&p).unwrap(), "\u{feff}old\n");
    prime(&ctx, &[fs::canonicalize(&p).unwrap()]);
    let r = write_file(&ctx, "exists.txt".into(), "new\n".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert!(
        r.metadata["diff"]
            .as_str()
            .unwrap()
            .contains("-old\n+new\n")
    );
    // The byte order mark stays.
    assert_eq!(fs::read_to_string(&p).unwrap(), "\u{feff}new\n");
}

#[tokio::test]
async fn read_only_files_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let (d, ctx) = setup();
    let p = d.path().join("locked.txt");
    fs::write(&p, "keep\n").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
    prime(&ctx, &[fs::canonicalize(&p).unwrap()]);
    let r = write_file(&ctx, "locked.txt".into(), "new\n".into())
        .await
        .into_tool_result();
    let msg = r.error.unwrap().message;
    assert!(
        msg.starts_with("File ") && msg.contains("is read-only"),
        "{msg}"
    );
    assert_eq!(fs::read_to_string(&p).unwrap(), "keep\n");
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o444
    );
}

#[tokio::test]
async fn pipes_are_refused_without_blocking() {
    let (d, ctx) = setup();
    let fifo = d.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.is_ok_and(|s| s.success()) {
        return; // no mkfifo on this machine
    }
    let r = tokio::time::timeout(
        std::time::Duration::from_secs(10),
        write_file(&ctx, "pipe".into(), "x".into()),
    )
    .await
    .expect("write_file blocked on a pipe")
    .into_tool_result();
    assert!(r.error.unwrap().message.contains("not a regular file"));
}

#[tokio::test]
async fn large_diffs_are_capped_in_metadata() {
    let (d, ctx) = setup();
    let content: String = (0..50_000).map(|i| format!("line {i}\n")).collect();
    let r = write_file(&ctx, "big.txt".into(), content.clone())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    let diff = r.metadata["diff"].as_str().unwrap();
    assert!(diff.len() <= 64 * 1024 + 100, "{}", diff.len());
    assert!(
        diff.ends_with("more lines not shown)\n"),
        "{}",
        &diff[diff.len() - 100..]
    );
    assert_eq!(r.metadata["diff_truncated"], true);
    assert_eq!(r.metadata["additions"], 50_000);
    assert_eq!(
        fs::read_to_string(d.path().join("big.txt")).unwrap(),
        content
    );
    let r = write_file(&ctx, "small.txt".into(), "x\n".into())
        .await
        .into_tool_result();
    assert!(r.metadata.get("diff_truncated").is_none());
}

#[tokio::test]
async fn escaping_symlinks_are_refused() {
    let (d, ctx) = setup();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), d.path().join("out")).unwrap();
    let r = write_file(&ctx, "out/escape.txt".into(), "x".into())
        .await
        .into_tool_result();
    assert!(r.error.unwrap().message.contains("outside the workspace"));
    assert!(!outside.path().join("escape.txt").exists());
}

#[tokio::test]
async fn writes_through_inside_symlinks_keep_the_link() {
    let (d, ctx) = setup();
    fs::write(d.path().join("real.txt"), "a").unwrap();
    std::os::unix::fs::symlink("real.txt", d.path().join("link.txt")).unwrap();
    prime(
        &ctx,
        &[fs::canonicalize(d.path().join("real.txt")).unwrap()],
    );
    let r = write_file(&ctx, "link.txt".into(), "b".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert!(
        fs::symlink_metadata(d.path().join("link.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(fs::read_to_string(d.path().join("real.txt")).unwrap(), "b");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_folder_swapped_for_a_symlink_mid_write_never_leads_outside() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};
    let (d, ctx) = setup();
    let outside = tempfile::tempdir().unwrap();
    let ws = d.path().to_path_buf();
    fs::create_dir(ws.join("d")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let flipper = {
        let (stop, ws, out) = (stop.clone(), ws.clone(), outside.path().to_path_buf());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // A real folder, then a symlink to outside under the same name.
                let _ = fs::remove_dir_all(ws.join("d"));
                let _ = fs::create_dir(ws.join("d"));
                let _ = fs::rename(ws.join("d"), ws.join("d.real"));
                let _ = std::os::unix::fs::symlink(&out, ws.join("d"));
                let _ = fs::remove_file(ws.join("d"));
                let _ = fs::rename(ws.join("d.real"), ws.join("d"));
            }
        })
    };
    for i in 0..300 {
        let _ = write_file(&ctx, format!("d/f{i}.txt"), "x".into())
            .await
            .into_tool_result();
    }
    stop.store(true, Ordering::Relaxed);
    flipper.join().unwrap();
    let escaped: Vec<_> = fs::read_dir(outside.path()).unwrap().flatten().collect();
    assert!(
        escaped.is_empty(),
        "{} writes landed outside: {escaped:?}",
        escaped.len()
    );
    // The flipper stops with the real folder in place: writes work again.
    let r = write_file(&ctx, "d/after.txt".into(), "x".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    assert!(ws.join("d/after.txt").is_file());
}

/// A writer killed between creating and renaming its temporary file
/// leaves it behind; the next write in that folder removes it once it is
/// a minute old and its process is gone, and keeps everything else.
#[tokio::test]
async fn the_next_write_sweeps_temp_files_of_dead_writers() {
    let (d, ctx) = setup();
    fs::create_dir(d.path().join("sub")).unwrap();
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(120);
    let backdate = |p: &std::path::Path| {
        fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(old)
            .unwrap();
    };
    // pid 999999999 is above any pid_max: that writer is gone.
    let stale = [
        d.path().join("sub/.big.bin.agent-tools-999999999-0.tmp"),
        d.path().join("sub/.notes.md.agent-tools-999999999-17.tmp"),
    ];
    let keep = [
        // Its writer (this process) is alive.
        d.path().join(format!(
            "sub/.live.txt.agent-tools-{}-3.tmp",
            std::process::id()
        )),
        // Not our naming pattern (another program's, or a file of the repository).
        d.path().join("sub/.cache.tmp"),
        d.path().join("sub/.x.999999999.tmp"),
        d.path().join("sub/.notes.txt.999999.0.tmp"),
    ];
    for p in stale.iter().chain(&keep) {
        fs::write(p, vec![b'x'; 4096]).unwrap();
        backdate(p);
    }
    // Young and dead: kept until it is a minute old.
    let young = d.path().join("sub/.young.txt.agent-tools-999999999-1.tmp");
    fs::write(&young, "partial").unwrap();
    let r = write_file(&ctx, "sub/new.txt".into(), "fresh".into())
        .await
        .into_tool_result();
    assert!(r.is_ok(), "{r:?}");
    for p in &stale {
        assert!(!p.exists(), "{} was left", p.display());
    }
    for p in keep.iter().chain([&young]) {
        assert!(p.exists(), "{} was removed", p.display());
    }
    // Another folder is not touched.
    let elsewhere = d.path().join(".other.agent-tools-999999999-0.tmp");
    fs::write(&elsewhere, "x").unwrap();
    backdate(&elsewhere);
    let r = write_file(&ctx, "sub/again.txt".into(), "x".into())
        .await
        .into_tool_result();
    assert!(r.is_ok());
    assert!(elsewhere.exists());
}
