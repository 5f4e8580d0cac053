//! Black-box tests of `fs::atomic` (moved from `fs/atomic.rs`).

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use tool_builtins::fs::atomic::*;

#[test]
fn atomic_write_keeps_permissions_and_leaves_no_temp() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("script.sh");
    fs::write(&p, "old").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o751)).unwrap();
    write_atomic(&p, b"new").unwrap();
    assert_eq!(fs::read(&p).unwrap(), b"new");
    assert_eq!(
        fs::metadata(&p).unwrap().permissions().mode() & 0o777,
        0o751
    );
    let names: Vec<_> = fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, vec![std::ffi::OsString::from("script.sh")]);
    write_atomic(&d.path().join("a/b/c.txt"), b"deep").unwrap();
    assert_eq!(fs::read(d.path().join("a/b/c.txt")).unwrap(), b"deep");
}

#[test]
fn atomic_write_refuses_read_only_files() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("locked.txt");
    fs::write(&p, "keep").unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o444)).unwrap();
    let e = write_atomic(&p, b"new").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
    assert!(e.to_string().contains("is read-only (mode 0444)"), "{e}");
    assert_eq!(fs::read(&p).unwrap(), b"keep");
    assert!(read_only(&d.path().join("missing")).is_none());
    fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
    assert!(read_only(&p).is_none());
}

#[test]
fn files_with_names_near_the_length_limit_can_be_written() {
    let d = tempfile::tempdir().unwrap();
    for name in ["n".repeat(255), format!("{}.txt", "é".repeat(125))] {
        let p = d.path().join(&name);
        write_atomic(&p, b"first").unwrap();
        write_atomic(&p, b"second").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"second");
    }
    assert_eq!(
        fs::read_dir(d.path()).unwrap().count(),
        2,
        "no temp file left"
    );
}
