//! `tool index status|build|drop` (issue 29) on a real folder and a real
//! state folder.

use std::fs;

use crate::support::{TempDir, code, stderr, stdout, tool};

#[test]
fn index_commands_report_build_and_drop() {
    let ws = TempDir::new();
    let state = TempDir::new();
    fs::write(ws.path().join("a.rs"), "fn main() {}\n").expect("file");
    let index = |action: &str| {
        tool()
            .env("XDG_STATE_HOME", state.path())
            .args(["--workspace", ws.arg(), "index", action])
            .output()
            .expect("the tool binary runs")
    };
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
    let index = |action: &str| {
        tool()
            .env("XDG_STATE_HOME", &state)
            .args(["--workspace", ws.arg(), "index", action])
            .output()
            .expect("the tool binary runs")
    };
    for action in ["status", "build"] {
        let out = index(action);
        assert_eq!(code(&out), 0, "{}", stderr(&out));
        let text = stdout(&out);
        assert!(text.contains("is inside the workspace"), "{action}: {text}");
        assert!(text.contains("searches scan"), "{action}: {text}");
    }
    assert!(!state.join("agent-tools/index").exists());
}
