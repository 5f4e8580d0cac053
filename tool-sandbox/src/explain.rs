//! What the model is told after a command the sandbox stopped: one line per
//! refusal, naming what was refused and how a person allows it.

use tool_core::SandboxPolicy;

fn bytes(n: u64) -> String {
    if n % (1 << 30) == 0 {
        format!("{}GiB", n >> 30)
    } else if n % (1 << 20) == 0 {
        format!("{}MiB", n >> 20)
    } else {
        format!("{n}B")
    }
}

/// The path a "Read-only file system" / "Permission denied" line names: the
/// last quoted text, else the word before the error.
fn named_path(line: &str, error: &str) -> Option<String> {
    let before = &line[..line.find(error)?];
    for quote in ['\'', '"', '`'] {
        let mut parts = before.rsplit(quote);
        if let (Some(_), Some(inner)) = (parts.next(), parts.next())
            && !inner.is_empty()
        {
            return Some(inner.to_owned());
        }
    }
    before
        .trim_end_matches([':', ' '])
        .rsplit([' ', ':'])
        .find(|w| w.contains('/') || w.contains('.'))
        .map(str::to_owned)
}

/// The one-line notes for a command that ended with `exit_code` or
/// `signal` and printed `output`: a file-size (`SIGXFSZ`) or CPU (`SIGXCPU`)
/// limit, processes (`pids_limit_hit`, or a shell's "fork: Resource
/// temporarily unavailable"), memory (allocation failures), a write to a
/// read-only place (`.git/config` named apart), no network.
pub fn refusal_notes(
    policy: &SandboxPolicy,
    exit_code: Option<i32>,
    signal: Option<i32>,
    output: &str,
    pids_limit_hit: bool,
) -> Vec<String> {
    let l = &policy.limits;
    let mut notes = Vec::new();
    let sig = signal.or_else(|| exit_code.filter(|c| *c > 128).map(|c| c - 128));
    if sig == Some(libc::SIGXFSZ) || output.contains("File size limit exceeded") {
        notes.push(format!(
            "Refused by the sandbox: the file-size limit ({}) was hit; a person can raise it with \
             --sandbox-limit file-size=SIZE.",
            bytes(l.file_size)
        ));
    }
    if sig == Some(libc::SIGXCPU) || output.contains("CPU time limit exceeded") {
        notes.push(format!(
            "Refused by the sandbox: the cpu limit ({} s per process) was hit; a person can raise \
             it with --sandbox-limit cpu=SECONDS.",
            l.cpu.as_secs()
        ));
    }
    let fork_failed = output.lines().any(|line| {
        (line.contains("fork") || line.contains("clone") || line.contains("spawn"))
            && line.contains("Resource temporarily unavailable")
    });
    if pids_limit_hit || fork_failed {
        notes.push(format!(
            "Refused by the sandbox: the processes limit ({}) was hit; a person can raise it with \
             --sandbox-limit processes=N.",
            l.processes
        ));
    }
    if [
        "MemoryError",
        "Cannot allocate memory",
        "std::bad_alloc",
        "memory allocation of",
        "out of memory",
    ]
    .iter()
    .any(|m| output.contains(m))
    {
        notes.push(format!(
            "Refused by the sandbox: the memory limit ({} per process) was likely hit; a person \
             can raise it with --sandbox-limit memory=SIZE.",
            bytes(l.memory)
        ));
    }
    let mut paths_named = 0;
    let mut git_config = false;
    for line in output.lines().take(10_000) {
        let error = [
            "Read-only file system",
            "Device or resource busy",
            "Permission denied",
        ]
        .into_iter()
        .find(|e| line.contains(e));
        let Some(error) = error else {
            continue;
        };
        if line.contains(".git/config") || line.contains("config file") {
            git_config = true;
            continue;
        }
        if error == "Read-only file system" && paths_named < 3 {
            paths_named += 1;
            let what = named_path(line, error).unwrap_or_else(|| "a path".to_owned());
            notes.push(format!(
                "Refused by the sandbox: writing {what} (read-only in the sandbox: only the \
                 workspace, /tmp and configured paths are writable); a person can allow a folder \
                 with --sandbox-write PATH."
            ));
        } else if error == "Permission denied"
            && paths_named < 3
            && let Some(what) = named_path(line, error).filter(|p| p.starts_with('/'))
        {
            // As root, a refusal is the sandbox's (Landlock), not the file's mode.
            paths_named += 1;
            notes.push(format!(
                "Refused by the sandbox (or the file's permissions): {what} (the sandbox lets \
                 commands write only the workspace, the temp folder and configured paths, and \
                 hides secrets); a person can allow a folder with --sandbox-write PATH."
            ));
        }
    }
    if git_config {
        notes.push(
            "Refused by the sandbox: .git/config is read-only in the sandbox (so that no remote, \
             hook path or credential helper can be planted); `git remote add`, `branch -u` and \
             `git config` writes need a person to run them outside the sandbox."
                .to_owned(),
        );
    }
    let offline = [
        "Could not resolve host",
        "Temporary failure in name resolution",
        "Network is unreachable",
        "Name or service not known",
        "getaddrinfo",
    ];
    // ssh(1)'s own lines ("ssh: Could not resolve hostname github.com: ...",
    // "ssh: connect to host github.com port 22: Network is unreachable").
    let ssh = output.lines().take(10_000).any(|line| {
        line.contains("ssh: Could not resolve hostname") || line.contains("ssh: connect to host")
    });
    if ssh {
        notes.push(
            "Refused by the sandbox: git over SSH (and ssh itself) has no route out of the \
             sandbox, which reaches allowed hosts only through its HTTP(S) proxy; use an https:// \
             remote (`git remote set-url origin https://HOST/OWNER/REPO.git`) and have a person \
             allow the host with --allow-net HOST."
                .to_owned(),
        );
    } else if offline.iter().any(|m| output.contains(m)) {
        if policy.network.is_deny_all() {
            notes.push(
                "Refused by the sandbox: the network is off for commands; a person can allow \
                 hosts with --allow-net PATTERN."
                    .to_owned(),
            );
        } else {
            notes.push(
                "Refused by the sandbox: allowed hosts are reached only through the sandbox's \
                 HTTP(S) proxy (HTTP_PROXY, HTTPS_PROXY and ALL_PROXY are set); a client that \
                 ignores them, DNS lookups from inside and UDP have no route out."
                    .to_owned(),
            );
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_name_the_limit_and_the_path() {
        let mut policy = SandboxPolicy::default();
        policy.limits.set("file-size=512MiB").unwrap();
        let n = refusal_notes(&policy, None, Some(libc::SIGXFSZ), "", false);
        assert_eq!(n.len(), 1);
        assert!(n[0].contains("file-size limit (512MiB)"), "{n:?}");
        let n = refusal_notes(
            &policy,
            Some(1),
            None,
            "touch: cannot touch '/etc/passwd2': Read-only file system\n",
            false,
        );
        assert!(n[0].contains("writing /etc/passwd2"), "{n:?}");
        assert!(n[0].contains("--sandbox-write"), "{n:?}");
        let n = refusal_notes(
            &policy,
            Some(255),
            None,
            "error: could not write config file .git/config: Device or resource busy\n",
            false,
        );
        assert_eq!(n.len(), 1);
        assert!(n[0].contains("git remote add"), "{n:?}");
        assert!(refusal_notes(&policy, Some(0), None, "fine\n", false).is_empty());
        let n = refusal_notes(&policy, Some(1), None, "", true);
        assert!(n[0].contains("processes limit (4096)"), "{n:?}");
    }

    #[test]
    fn git_over_ssh_gets_one_note_saying_to_use_https() {
        let policy = SandboxPolicy::default();
        let out = "Cloning into 'x'...\nssh: Could not resolve hostname github.com: Temporary \
                   failure in name resolution\nfatal: Could not read from remote repository.\n";
        let n = refusal_notes(&policy, Some(128), None, out, false);
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].contains("git over SSH"), "{n:?}");
        assert!(n[0].contains("https://"), "{n:?}");
        assert!(n[0].contains("--allow-net HOST"), "{n:?}");
        // With hosts allowed, a client that bypassed the proxy is told so.
        let allowed = SandboxPolicy::default()
            .with_network(tool_core::NetworkPolicy::from_patterns(["crates.io"]).unwrap());
        let n = refusal_notes(
            &allowed,
            Some(6),
            None,
            "curl: (6) Could not resolve host: crates.io\n",
            false,
        );
        assert_eq!(n.len(), 1, "{n:?}");
        assert!(n[0].contains("HTTP_PROXY"), "{n:?}");
    }
}
