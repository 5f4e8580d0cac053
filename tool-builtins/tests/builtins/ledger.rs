//! Black-box tests of `fs::ledger` (moved from `fs/ledger.rs`).

use crate::util::*;
use std::sync::Arc;
use std::time::{Duration, UNIX_EPOCH};
use tool_builtins::fs::ledger::*;

fn touch(path: &Path, secs_ahead: u64) {
    let t = SystemTime::now() + Duration::from_secs(secs_ahead);
    let f = std::fs::File::options().write(true).open(path).unwrap();
    f.set_modified(t).unwrap();
}

#[test]
fn unread_files_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("f");
    std::fs::write(&p, "x").unwrap();
    let e = FileLedger::new().check(&p).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "You must read file {} before overwriting it. Use read_file first.",
            p.display()
        )
    );
}

#[test]
fn size_change_is_a_modification() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("f");
    std::fs::write(&p, "x").unwrap();
    let l = FileLedger::new();
    l.record_bytes(&p, b"x").unwrap();
    std::fs::write(&p, "xy").unwrap();
    touch(&p, 5);
    let e = l.check(&p).unwrap_err().to_string();
    assert!(
        e.contains("has been modified since it was last read"),
        "{e}"
    );
    assert!(e.contains("read (or wrote) at 20"), "{e}");
}

#[test]
fn same_size_and_mtime_with_other_content_is_modified() {
    // Two writes inside one timestamp tick keep mtime and size: only the hash tells.
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("f");
    std::fs::write(&p, "line 1\nline 2\n").unwrap();
    let l = FileLedger::new();
    l.record_bytes(&p, b"line 1\nline 2\n").unwrap();
    let mtime = std::fs::metadata(&p).unwrap().modified().unwrap();
    std::fs::write(&p, "line 1\nLINE 2\n").unwrap();
    let f = std::fs::File::options().write(true).open(&p).unwrap();
    f.set_modified(mtime).unwrap();
    assert!(matches!(l.check(&p), Err(LedgerError::Modified { .. })));
    assert!(
        l.check_content(&p, ContentHasher::hash(b"line 1\nline 2\n"))
            .is_ok()
    );
    for other in [&b""[..], b"line 1\n", b"line 1\nline 2\n\n"] {
        assert!(l.check_content(&p, ContentHasher::hash(other)).is_err());
    }
}

#[test]
fn mtime_only_change_with_same_content_passes() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("f");
    std::fs::write(&p, "abc").unwrap();
    let l = FileLedger::new();
    l.record_bytes(&p, b"abc").unwrap();
    touch(&p, 5);
    assert!(l.check(&p).is_ok());
    // Same size, different content, new mtime: modified.
    std::fs::write(&p, "abd").unwrap();
    touch(&p, 10);
    assert!(l.check(&p).is_err());
}

#[test]
fn hashing_is_chunking_independent() {
    let mut h = ContentHasher::new();
    h.update(b"hel");
    h.update(b"lo");
    assert_eq!(h.finish(), ContentHasher::hash(b"hello"));
}

#[tokio::test]
async fn locks_serialise_per_file() {
    let l = Arc::new(FileLedger::new());
    let p = PathBuf::from("/x/y");
    let g = l.lock(&p).await;
    let l2 = Arc::clone(&l);
    let p2 = p.clone();
    let waiter = tokio::spawn(async move {
        let _g = l2.lock(&p2).await;
    });
    tokio::time::sleep(Duration::from_millis(20)).await;
    assert!(!waiter.is_finished());
    // Another path is not blocked.
    let _other = l.lock(Path::new("/x/z")).await;
    drop(g);
    waiter.await.unwrap();
}

#[test]
fn persistent_ledgers_share_reads_across_instances() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("state/ledger/t1.json");
    let p = d.path().join("f.txt");
    std::fs::write(&p, "one").unwrap();
    // Two "processes" of one trace: the second sees the first's read.
    let first = FileLedger::persistent(&state);
    first.record_bytes(&p, b"one").unwrap();
    let second = FileLedger::persistent(&state);
    assert!(second.check(&p).is_ok());
    assert!(
        second
            .check_content(&p, ContentHasher::hash(b"other"))
            .is_err()
    );
    // A write by the second counts as a read for the first.
    std::fs::write(&p, "two").unwrap();
    second.record_bytes(&p, b"two").unwrap();
    assert!(first.check(&p).is_ok(), "the newer shared stamp wins");
    // Another trace's file shares nothing; a corrupt file is empty.
    assert!(
        FileLedger::persistent(d.path().join("state/ledger/t2.json"))
            .get(&p)
            .is_none()
    );
    std::fs::write(&state, "{not json").unwrap();
    assert!(FileLedger::persistent(&state).get(&p).is_none());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(
        std::fs::metadata(&state).unwrap().permissions().mode() & 0o777,
        0o600
    );
    let dir = state.parent().unwrap();
    assert_eq!(
        std::fs::metadata(dir).unwrap().permissions().mode() & 0o777,
        0o700
    );
}

#[test]
fn persisted_stamps_expire_and_other_hashers_are_ignored() {
    let d = tempfile::tempdir().unwrap();
    let state = d.path().join("l.json");
    let old = SystemTime::now() - PERSISTED_FOR - Duration::from_secs(60);
    let ms = old.duration_since(UNIX_EPOCH).unwrap().as_millis();
    std::fs::write(
        &state,
        format!(r#"{{"version":1,"hasher":"std-siphash13-v1","files":{{"/a":{{"hash":"00000000000000ff","len":1,"read_at_ms":{ms}}}}}}}"#),
    )
    .unwrap();
    assert!(
        FileLedger::persistent(&state)
            .get(Path::new("/a"))
            .is_none()
    );
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    for (hasher, kept) in [("std-siphash13-v1", true), ("xxh3", false)] {
        std::fs::write(
            &state,
            format!(r#"{{"version":1,"hasher":"{hasher}","files":{{"/a":{{"hash":"00000000000000ff","len":1,"read_at_ms":{now}}}}}}}"#),
        )
        .unwrap();
        assert_eq!(
            FileLedger::persistent(&state)
                .get(Path::new("/a"))
                .is_some(),
            kept,
            "{hasher}"
        );
    }
}

#[test]
fn state_files_are_named_per_trace_under_xdg_state_home() {
    let f = state_file_for("abc-1").unwrap();
    assert!(
        f.ends_with("agent-tools/ledger/abc-1.json"),
        "{}",
        f.display()
    );
    let odd = state_file_for("../../etc/x").unwrap();
    assert_eq!(
        odd.parent(),
        f.parent(),
        "one safe component: {}",
        odd.display()
    );
}
