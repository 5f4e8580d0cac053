//! `tool index status|build|drop` (issue 29) on a real folder and a real
//! state folder.

use std::fs;

use crate::support::{TempDir, code, stderr, stdout, tool};

/// `tool --workspace WS index ACTION` with `XDG_STATE_HOME` set to `state`.
fn run_index(
    ws: &TempDir,
    state: impl AsRef<std::path::Path>,
    action: &str,
) -> std::process::Output {
    tool()
        .env("XDG_STATE_HOME", state.as_ref())
        .args(["--workspace", ws.arg(), "index", action])
        .output()
        .expect("the tool binary runs")
}

#[test]
fn index_commands_report_build_and_drop() {
    let ws = TempDir::new();
    let state = TempDir::new();
    fs::write(ws.path().join("a.rs"), "fn main() {}\n").expect("file");
    let index = |action: &str| run_index(&ws, state.path(), action);
    let out = index("status");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.starts_with("no index stored (it would live at "),
        "{text}"
    );
    assert!(
        text.contains(&format!("{}/agent-tools/index/", state.arg())),
        "{text}"
    );
    // 13 bytes of files: under the 16 MiB threshold, so no index.
    let out = index("build");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "no index: the files total 0 MiB, under the 16 MiB threshold (a scan is as fast)\n"
    );
    let out = index("drop");
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("no index stored at "),
        "{}",
        stdout(&out)
    );
    // An unknown action is a usage error pointing at the close one.
    let out = index("rebuild");
    assert_eq!(code(&out), 2);
    assert!(
        stderr(&out).contains("a similar subcommand exists: 'build'"),
        "{}",
        stderr(&out)
    );
    // No action: a usage error too (review 29, F8).
    let out = tool()
        .env("XDG_STATE_HOME", state.path())
        .args(["--workspace", ws.arg(), "index"])
        .output()
        .expect("the tool binary runs");
    assert_eq!(code(&out), 2);
    // Below the threshold no folder is left in the state folder (review 29, F7).
    assert!(
        !state.path().join("agent-tools/index").exists()
            || fs::read_dir(state.path().join("agent-tools/index"))
                .expect("readable")
                .next()
                .is_none()
    );
}

/// Review 29, F6: a state folder inside the workspace gets no index, and
/// `status` and `build` say why.
#[test]
fn index_commands_refuse_a_state_folder_inside_the_workspace() {
    let ws = TempDir::new();
    fs::write(ws.path().join("a.rs"), "fn main() {}\n").expect("file");
    let state = ws.path().join(".state");
    let index = |action: &str| run_index(&ws, &state, action);
    // `status` reports; a refused `build` fails (review 29b, F2).
    for (action, want) in [("status", 0), ("build", 1)] {
        let out = index(action);
        assert_eq!(code(&out), want, "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("is inside the workspace"), "{action}: {text}");
        assert!(text.contains("searches scan"), "{action}: {text}");
    }
    assert!(!state.join("agent-tools/index").exists());
}

/// Review 29b, F1: after `drop`, `status` and `drop` name the running hosts
/// (their `sentinels-<pid>` folders) that still search with the deleted
/// index; a folder of a process no longer running is left out.
#[test]
fn index_status_names_running_hosts_after_a_drop() {
    let ws = TempDir::new();
    let state = TempDir::new();
    fs::write(ws.path().join("a.rs"), "fn main() {}\n").expect("file");
    let index = |action: &str| run_index(&ws, state.path(), action);
    let text = stdout(&index("status"));
    let location = text
        .strip_prefix("no index stored (it would live at ")
        .and_then(|t| t.split(')').next())
        .expect("a location")
        .to_owned();
    let folder = std::path::Path::new(&location).parent().expect("a folder");
    // A live "host" (a child that sleeps) and a dead one (pid far past pid_max).
    let mut host = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .expect("sleep runs");
    fs::create_dir_all(folder.join(format!("sentinels-{}", host.id()))).expect("sentinels");
    fs::create_dir_all(folder.join("sentinels-4999999")).expect("sentinels");
    fs::write(&location, b"stale").expect("an index file");
    let out = index("drop");
    let status = stdout(&index("status"));
    let _ = host.kill();
    let _ = host.wait();
    assert_eq!(code(&out), 0, "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!(
            "deleted the index at {location}; running hosts keep searching with it until they \
             exit (pid {}), and its disk space is freed then\n",
            host.id()
        )
    );
    assert!(
        status.ends_with(&format!(
            "running hosts still search with the index they had until they exit (pid {}); new \
             hosts build one\n",
            host.id()
        )),
        "{status}"
    );
    // The host is gone now: plain "searches scan" again.
    let text = stdout(&index("status"));
    assert!(text.ends_with("); searches scan\n"), "{text}");
}
