//! Black-box tests of `fs::workspace` (moved from `fs/workspace.rs`).

use crate::util::*;
use std::fs;
use std::os::unix::fs::symlink;
use tool_builtins::fs::workspace::*;

fn setup() -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("sub")).unwrap();
    fs::write(dir.path().join("sub/a.txt"), "a").unwrap();
    let ws = Workspace::new(dir.path()).unwrap();
    (dir, ws)
}

#[test]
fn relative_and_absolute_paths_inside_resolve() {
    let (_d, ws) = setup();
    let root = ws.root().to_path_buf();
    assert_eq!(ws.resolve("sub/a.txt").unwrap(), root.join("sub/a.txt"));
    let abs = root.join("sub/a.txt");
    assert_eq!(ws.resolve(abs.to_str().unwrap()).unwrap(), abs);
    assert_eq!(ws.resolve("sub/../sub/./a.txt").unwrap(), abs);
}

#[test]
fn new_files_resolve_through_their_deepest_existing_ancestor() {
    let (_d, ws) = setup();
    let root = ws.root().to_path_buf();
    assert_eq!(ws.resolve("x/y/z.txt").unwrap(), root.join("x/y/z.txt"));
    // `..` after a missing folder cannot be resolved (the kernel would say ENOENT).
    for p in ["x/../q.txt", "x/../../escape.txt", "x/y/../../sub/a.txt"] {
        let err = ws.resolve(p).unwrap_err();
        assert!(matches!(err, PathError::NotFound { .. }), "{p}: {err}");
    }
    assert_eq!(ws.resolve("sub/../q.txt").unwrap(), root.join("q.txt"));
    let err = ws.resolve("sub/../../escape.txt").unwrap_err();
    assert!(err.to_string().contains("outside the workspace"), "{err}");
}

#[test]
fn lexical_traversal_is_refused() {
    let (_d, ws) = setup();
    for p in ["../../../../etc/hostname", "/etc/hostname", "sub/../../x"] {
        let err = ws.resolve(p).unwrap_err();
        assert!(matches!(err, PathError::Outside { .. }), "{p}: {err}");
        assert!(err.to_string().contains("outside the workspace"));
        assert_eq!(ToolError::from(err).kind, ErrorKind::Denied);
    }
}

#[test]
fn the_refusal_names_where_a_traversal_lands_without_dot_dots() {
    let (_d, ws) = setup();
    let root = ws.root().to_path_buf();
    let parent = root.parent().unwrap();
    let grand = parent.parent().unwrap();
    let cases = [
        ("../../etc/passwd", grand.join("etc/passwd")),
        ("sub/../../x", parent.join("x")),
        ("../a/../b", parent.join("b")),
    ];
    for (p, lands) in cases {
        let err = ws.resolve(p).unwrap_err();
        let PathError::Outside { resolved, .. } = &err else {
            panic!("{p}: {err}");
        };
        assert_eq!(resolved, &lands, "{p}");
        let text = err.to_string();
        assert!(
            text.contains(&format!("resolves to {} which", lands.display())),
            "{text}"
        );
    }
}

#[test]
fn symlinks_escaping_are_refused_and_inside_ones_work() {
    let (d, ws) = setup();
    symlink("/etc", d.path().join("out")).unwrap();
    symlink("sub", d.path().join("inside")).unwrap();
    symlink("/nonexistent-target-dir/file", d.path().join("dangling")).unwrap();
    symlink("sub/new.txt", d.path().join("dangling-in")).unwrap();
    assert!(ws.resolve("out/hostname").is_err());
    assert!(ws.resolve("out/new-file.txt").is_err());
    assert!(ws.resolve("dangling").is_err());
    assert_eq!(
        ws.resolve("inside/a.txt").unwrap(),
        ws.root().join("sub/a.txt")
    );
    assert_eq!(
        ws.resolve("dangling-in").unwrap(),
        ws.root().join("sub/new.txt")
    );
}

#[test]
fn symlink_loops_are_errors_not_hangs() {
    let (d, ws) = setup();
    symlink("loop2", d.path().join("loop1")).unwrap();
    symlink("loop1", d.path().join("loop2")).unwrap();
    assert!(ws.resolve("loop1").is_err());
}

#[test]
fn extra_roots_are_inside() {
    let (_d, ws) = setup();
    let other = tempfile::tempdir().unwrap();
    let ws = ws.with_extra_root(other.path()).unwrap();
    let p = other.path().join("f.txt");
    assert!(ws.resolve(p.to_str().unwrap()).is_ok());
}

#[test]
fn read_only_roots_are_readable_but_not_writable() {
    let (_d, ws) = setup();
    let spill = tempfile::tempdir().unwrap();
    let file = spill.path().join("out.txt");
    std::fs::write(&file, "x").unwrap();
    let name = file.to_str().unwrap();
    assert!(ws.resolve_for_read(name).is_err());
    let ws = ws.with_read_only_root(spill.path());
    assert_eq!(
        ws.resolve_for_read(name).unwrap(),
        std::fs::canonicalize(&file).unwrap()
    );
    assert!(
        ws.resolve(name)
            .unwrap_err()
            .to_string()
            .contains("outside the workspace")
    );
    assert!(ws.resolve_for_read("/etc/hostname").is_err());
    // `..` out of a read-only root is still outside.
    let up = format!("{}/../../etc/hostname", spill.path().display());
    assert!(ws.resolve_for_read(&up).is_err());
}

#[test]
fn refusals_outside_do_not_tell_whether_the_path_exists() {
    let (_d, ws) = setup();
    for (there, missing) in [
        ("/etc/passwd", "/etc/passwdx"),
        ("/root", "/rootx"),
        ("/proc/1/environ", "/proc/999999999/environ"),
    ] {
        let a = ws.resolve(there).unwrap_err().to_string();
        let b = ws.resolve(missing).unwrap_err().to_string();
        assert_eq!(a.replace(there, "P"), b.replace(missing, "P"), "{a} / {b}");
    }
}

#[test]
fn an_empty_path_names_the_root() {
    let (_d, ws) = setup();
    // An empty path names the root, for every tool.
    assert_eq!(ws.resolve("  ").unwrap(), ws.root());
    assert_eq!(ws.resolve("").unwrap(), ws.root());
}
