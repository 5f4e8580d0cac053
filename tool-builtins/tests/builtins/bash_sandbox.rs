//! `bash_command` in the kernel sandbox (issue 22): on by default, both
//! tiers, what the result says, and `off` named loudly. The sandbox's own
//! properties are tested in tool-sandbox; these check the integration,
//! judged by the world (files on the host) where it matters.

use crate::util::*;
use tool_builtins::*;

use std::path::Path;

use tool_core::{SandboxPolicy, SandboxTier, ToolContext, ToolResult};

fn run(dir: &Path, command: &str, sandbox: SandboxPolicy) -> ToolResult {
    let ctx = ToolContext::new()
        .with_state(Workspace::new(dir).unwrap())
        .with_state(BashConfig::default().with_sandbox(sandbox));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime
        .block_on(bash_command(
            command.to_owned(),
            None,
            None,
            None,
            None,
            &ctx,
        ))
        .into_tool_result()
}

#[test]
fn commands_run_sandboxed_by_default_in_both_tiers() {
    for tier in [SandboxTier::Full, SandboxTier::NoNamespaces] {
        let (ws, _) = workspace_with::<&[u8]>(&[]);
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim");
        std::fs::write(&victim, "kept").unwrap();
        let r = run(
            ws.path(),
            &format!(
                "echo made > made.txt; echo evil > {}; echo x > /etc/sbx-bash-probe; echo next",
                victim.display()
            ),
            SandboxPolicy::default().with_tier(tier),
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "kept", "{tier}");
        assert!(!Path::new("/etc/sbx-bash-probe").exists(), "{tier}");
        assert_eq!(
            std::fs::read_to_string(ws.path().join("made.txt")).unwrap(),
            "made\n"
        );
        let meta = &r.metadata["sandbox"];
        assert_eq!(meta["policy"], "workspace-write", "{tier}");
        assert_eq!(meta["tier"], tier.as_str(), "{tier}");
        assert_eq!(meta["limits"]["processes"], 4096);
        assert!(r.output.contains("next"), "{}", r.output);
        if tier == SandboxTier::Full {
            // A write to a read-only place is named, with how to allow it.
            let refused = meta["refused"].as_array().unwrap();
            assert!(
                refused
                    .iter()
                    .any(|n| n.as_str().unwrap().contains("--sandbox-write")),
                "{meta}"
            );
        } else {
            // The tier's note says what it does not cover.
            assert!(
                r.notes.iter().any(|n| n.contains("no-namespaces")),
                "{:?}",
                r.notes
            );
        }
    }
}

#[test]
fn off_runs_unsandboxed_and_says_so() {
    let (ws, _) = workspace_with::<&[u8]>(&[]);
    let r = run(ws.path(), "echo hi", SandboxPolicy::off());
    assert_eq!(r.metadata["sandbox"]["policy"], "off");
    assert!(
        r.notes.iter().any(|n| n.starts_with("SANDBOX OFF")),
        "{:?}",
        r.notes
    );
}

#[test]
fn git_config_writes_fail_with_a_note_saying_why() {
    let (ws, _) = workspace_with::<&[u8]>(&[]);
    let ok = std::process::Command::new("git")
        .args(["init", "-q"])
        .current_dir(ws.path())
        .status()
        .unwrap();
    assert!(ok.success());
    let before = std::fs::read(ws.path().join(".git/config")).unwrap();
    let r = run(
        ws.path(),
        "git remote add origin https://example.invalid/x.git",
        SandboxPolicy::default(),
    );
    assert_eq!(
        std::fs::read(ws.path().join(".git/config")).unwrap(),
        before
    );
    assert!(
        r.notes
            .iter()
            .any(|n| n.contains(".git/config") && n.contains("git remote add")),
        "{:?} {}",
        r.notes,
        r.output
    );
}

#[test]
fn a_limit_breach_is_named() {
    let (ws, _) = workspace_with::<&[u8]>(&[]);
    let mut policy = SandboxPolicy::default();
    policy.limits.set("file-size=1MiB").unwrap();
    let r = run(ws.path(), "head -c 3M /dev/zero > big", policy);
    assert!(std::fs::metadata(ws.path().join("big")).unwrap().len() <= 1 << 20);
    assert!(
        r.notes.iter().any(|n| n.contains("file-size limit (1MiB)")),
        "{:?} {}",
        r.notes,
        r.output
    );
}
