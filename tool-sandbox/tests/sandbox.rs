//! The sandbox's core properties on real processes, in both tiers, judged
//! by the world afterwards (files on the host, a listener, a victim process).

#![allow(clippy::unwrap_used, reason = "tests: a panic is the failure report")]

use std::io::{BufRead, BufReader};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tool_core::{SandboxPolicy, SandboxTier};
use tool_sandbox::{Sandbox, Tier};

const TIERS: [SandboxTier; 2] = [SandboxTier::Full, SandboxTier::NoNamespaces];

fn sandboxed(policy: &SandboxPolicy, ws: &Path, script: &str) -> (Arc<Sandbox>, Command) {
    let sb = Arc::new(Sandbox::prepare(policy, ws, Some(ws)).expect("prepare"));
    let mut c = Command::new("/bin/bash");
    c.arg("-c").arg(script).stdin(Stdio::null());
    sb.apply(&mut c);
    (sb, c)
}

/// Runs `script` in `ws`; returns the exit code and stdout + stderr.
fn run(policy: &SandboxPolicy, ws: &Path, script: &str) -> (Option<i32>, String) {
    let (_sb, mut c) = sandboxed(policy, ws, script);
    let out = c.output().expect("spawn");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code(), text)
}

fn policy(tier: SandboxTier) -> SandboxPolicy {
    SandboxPolicy::default().with_tier(tier)
}

#[test]
fn tiers_are_the_ones_asked_for() {
    let ws = tempfile::tempdir().unwrap();
    let full = Sandbox::prepare(&policy(SandboxTier::Full), ws.path(), None).unwrap();
    assert_eq!(full.tier(), Tier::Full);
    let none = Sandbox::prepare(&policy(SandboxTier::NoNamespaces), ws.path(), None).unwrap();
    assert_eq!(none.tier(), Tier::NoNamespaces);
    assert!(none.env().iter().any(|(k, _)| k == "TMPDIR"));
    let off = Sandbox::prepare(&SandboxPolicy::off(), ws.path(), None).unwrap_err();
    assert!(off.to_string().contains("off"));
}

#[test]
fn writes_land_in_the_workspace_only() {
    let home = std::env::home_dir().unwrap();
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let victim = outside.path().join("victim.txt");
        std::fs::write(&victim, "original").unwrap();
        let dotfile = home.join(format!(".sbx-probe-{}", std::process::id()));
        let script = format!(
            "echo inside > made.txt; echo evil > {v}; echo evil > {d}; rm -f {v}; \
             mv made.txt {o}/moved.txt; chmod 777 {v}; echo x > /etc/sbx-probe; \
             echo x > /dev/shm/sbx-probe-{pid}; true",
            v = victim.display(),
            d = dotfile.display(),
            o = outside.path().display(),
            pid = std::process::id(),
        );
        let (_, out) = run(&policy(tier), ws.path(), &script);
        assert_eq!(
            std::fs::read_to_string(ws.path().join("made.txt")).unwrap(),
            "inside\n",
            "{tier}: {out}"
        );
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "original",
            "{tier}"
        );
        assert!(!outside.path().join("moved.txt").exists(), "{tier}");
        assert!(!dotfile.exists(), "{tier}: {out}");
        assert!(!Path::new("/etc/sbx-probe").exists(), "{tier}");
        assert!(
            !Path::new(&format!("/dev/shm/sbx-probe-{}", std::process::id())).exists(),
            "{tier}"
        );
        // Landlock does not govern metadata (chmod, chown, utimes): in the
        // no-namespaces tier that stays open (SECURITY.md).
        if tier == SandboxTier::NoNamespaces {
            continue;
        }
        use std::os::unix::fs::PermissionsExt;
        assert_ne!(
            std::fs::metadata(&victim).unwrap().permissions().mode() & 0o777,
            0o777,
            "{tier}"
        );
    }
}

#[test]
fn hidden_paths_are_unreadable() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let secrets = tempfile::tempdir().unwrap();
        let secret = secrets.path().join("id_rsa");
        std::fs::write(&secret, "TOPSECRET-KEY").unwrap();
        let p = policy(tier).hidden(secrets.path());
        let script = format!(
            "cat {s}; cp {s} copy; cat {d}/*; true",
            s = secret.display(),
            d = secrets.path().display()
        );
        let (_, out) = run(&p, ws.path(), &script);
        assert!(!out.contains("TOPSECRET"), "{tier}: {out}");
        assert!(
            std::fs::read_to_string(ws.path().join("copy")).map_or(true, |c| !c.contains("TOP")),
            "{tier}"
        );
    }
}

#[test]
fn no_byte_reaches_a_host_listener() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let script = format!(
            "echo hi > /dev/tcp/127.0.0.1/{port}; \
             python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.sendto(b\"x\", (\"127.0.0.1\", {port}))'; true"
        );
        let (_, out) = run(&policy(tier), ws.path(), &script);
        std::thread::sleep(Duration::from_millis(100));
        assert!(
            listener.accept().is_err(),
            "{tier}: a connection reached the host: {out}"
        );
    }
}

fn victim(env: &[(&str, &str)]) -> Child {
    let mut c = Command::new("sleep");
    c.arg("30").envs(env.iter().copied()).stdin(Stdio::null());
    c.spawn().unwrap()
}

/// The nice value of process `pid` (`proc(5)`, field 19 of `stat`).
fn nice_of(pid: u32) -> i32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .nth(16)
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn other_processes_cannot_be_signalled_or_read() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let mut v = victim(&[("SBX_VICTIM_TOKEN", "victim-secret-771")]);
        let pid = v.id();
        // The nice value it inherited (a test run under `nice` starts above 0).
        let was = nice_of(pid);
        let script = format!(
            "kill -9 {pid}; cat /proc/{pid}/environ; cat /proc/*/environ | tr '\\0' '\\n' | grep victim-secret; \
             renice 19 -p {pid}; true"
        );
        let (_, out) = run(&policy(tier), ws.path(), &script);
        // The full tier has a /proc of its own; in the no-namespaces tier
        // Landlock's ptrace rule holds once CAP_SYS_ADMIN and CAP_PERFMON
        // are gone (issue 22, S20).
        assert!(!out.contains("victim-secret-771"), "{tier}: {out}");
        assert!(
            v.try_wait().unwrap().is_none(),
            "{tier}: the victim died: {out}"
        );
        assert_eq!(nice_of(pid), was, "{tier}: reniced");
        v.kill().unwrap();
        v.wait().unwrap();
    }
}

fn marked_processes(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .count()
}

#[test]
fn nothing_outlives_the_sandbox_in_the_full_tier() {
    let ws = tempfile::tempdir().unwrap();
    let marker = format!("sbxmark{}", std::process::id());
    let script = format!(
        "(setsid bash -c 'exec -a {marker} sleep 300' &); (nohup bash -c 'exec -a {marker} sleep 300' >/dev/null 2>&1 &); \
         sleep 0.2; echo started; sleep 300"
    );
    let (_sb, mut c) = sandboxed(&policy(SandboxTier::Full), ws.path(), &script);
    let mut child = c.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "started\n");
    // A `bash -c '…'` holds the marker in its own arguments until it execs
    // `sleep`: wait (up to 5 s) for the two sleeps alone.
    let mut seen = marked_processes(&marker);
    for _ in 0..50 {
        if seen == 2 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
        seen = marked_processes(&marker);
    }
    assert_eq!(seen, 2);
    child.kill().unwrap();
    child.wait().unwrap();
    let until = Instant::now() + Duration::from_secs(3);
    while marked_processes(&marker) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(marked_processes(&marker), 0);
}

#[test]
fn limits_stop_a_fork_tree_a_balloon_and_a_big_file() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let mut p = policy(tier);
        for l in ["processes=64", "memory=256MiB", "file-size=1MiB"] {
            p.limits.set(l).unwrap();
        }
        let script = "python3 -c 'import os, time
n = 0
for i in range(128):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(2)
        os._exit(0)
    n += 1
open(\"forked\", \"w\").write(str(n))'; \
             python3 -c 'b = bytearray(512 * 1024 * 1024); open(\"ballooned\", \"w\").write(\"x\")'; \
             head -c 4M /dev/zero > big; true";
        let (_, out) = run(&p, ws.path(), script);
        let forked: usize = std::fs::read_to_string(ws.path().join("forked"))
            .unwrap()
            .parse()
            .unwrap();
        assert!(
            forked > 0 && forked < 64,
            "{tier}: {forked} live processes: {out}"
        );
        assert!(!ws.path().join("ballooned").exists(), "{tier}: {out}");
        assert!(out.contains("MemoryError"), "{tier}: {out}");
        assert!(
            std::fs::metadata(ws.path().join("big")).unwrap().len() <= 1 << 20,
            "{tier}"
        );
    }
}

#[test]
fn everyday_commands_work() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let script = "set -e; git init -q; echo a > f; git add f; \
             git -c user.email=a@b.c -c user.name=n commit -qm first; git status --short; \
             git log --oneline | wc -l; python3 -c 'print(6 * 7)'; echo abc | tr a z; \
             t=$(mktemp); echo tmp-ok > \"$t\"; cat \"$t\"; (cd / && ls usr >/dev/null); \
             head -1 /etc/os-release | cut -c1-5; echo done > /dev/null";
        let (code, out) = run(&policy(tier), ws.path(), script);
        assert_eq!(code, Some(0), "{tier}: {out}");
        for want in ["1\n", "42\n", "zbc\n", "tmp-ok\n"] {
            assert!(out.contains(want), "{tier}: no {want:?} in {out}");
        }
    }
}

#[test]
fn git_hooks_and_config_stay_as_they_were() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let ok = Command::new("git")
            .args(["init", "-q"])
            .current_dir(ws.path())
            .status()
            .unwrap();
        assert!(ok.success());
        let config = std::fs::read(ws.path().join(".git/config")).unwrap();
        let (sb, mut c) = sandboxed(
            &policy(tier),
            ws.path(),
            "printf '#!/bin/sh\\necho pwned\\n' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; \
             git remote add origin https://example.invalid/x.git; true",
        );
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let notes = sb.finish(out.status.code(), None, &text);
        assert!(
            !ws.path().join(".git/hooks/pre-commit").exists(),
            "{tier}: {text}"
        );
        assert_eq!(
            std::fs::read(ws.path().join(".git/config")).unwrap(),
            config,
            "{tier}"
        );
        assert!(
            notes.iter().any(|n| n.contains(".git/config")),
            "{tier}: {notes:?} {text}"
        );
    }
}

#[test]
fn planted_hard_links_are_contained_or_refused() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("bashrc");
    std::fs::write(&target, "HOST-CONTENT").unwrap();
    let ws = tempfile::tempdir().unwrap();
    std::fs::hard_link(&target, ws.path().join("planted")).unwrap();
    // Links inside the workspace only are fine.
    std::fs::write(ws.path().join("a"), "a").unwrap();
    std::fs::hard_link(ws.path().join("a"), ws.path().join("b")).unwrap();
    let (code, out) = run(
        &policy(SandboxTier::Full),
        ws.path(),
        "cat planted; echo pwned >> planted; cat b",
    );
    assert!(!out.contains("HOST-CONTENT"), "{out}");
    assert!(out.contains('a'), "{code:?} {out}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "HOST-CONTENT");
    let err = Sandbox::prepare(&policy(SandboxTier::NoNamespaces), ws.path(), None).unwrap_err();
    assert!(err.to_string().contains("planted"), "{err}");
}

#[test]
fn kernel_surfaces_return_eperm() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let script = r#"python3 - <<'EOF'
import ctypes, errno, os
libc = ctypes.CDLL(None, use_errno=True)
out = []
for name, nr, args in [("io_uring_setup", 425, (1, 0)), ("bpf", 321, (0, 0, 0)),
                       ("userfaultfd", 323, (0,)), ("keyctl", 250, (0, 0)),
                       ("unshare", 272, (0x10000000,)), ("mount", 165, (0, 0, 0, 0, 0)),
                       ("ptrace", 101, (16, 1)), ("perf_event_open", 298, (0, 0, -1, -1, 0))]:
    r = libc.syscall(nr, *args)
    out.append(f"{name}={r}/{errno.errorcode.get(ctypes.get_errno())}")
print(" ".join(out))
EOF"#;
        let (code, out) = run(&policy(tier), ws.path(), script);
        assert_eq!(code, Some(0), "{tier}: {out}");
        for name in [
            "io_uring_setup",
            "bpf",
            "userfaultfd",
            "keyctl",
            "unshare",
            "mount",
            "ptrace",
            "perf_event_open",
        ] {
            assert!(
                out.contains(&format!("{name}=-1/EPERM")),
                "{tier}: {name}: {out}"
            );
        }
    }
}

/// S12/S13 (issue 22): the environment of the processes above the command
/// (its supervisor, the host) cannot be read, even as root: the kernel lets
/// a `perfmon_capable()` reader past Landlock's ptrace rule, so the
/// command's capabilities are dropped.
#[test]
fn ancestors_environment_is_unreadable_in_both_tiers() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let script = "p=$PPID; for i in 1 2 3; do cat /proc/$p/environ; \
             p=$(awk '{print $4}' /proc/$p/stat 2>/dev/null || echo 1); done > stolen 2>/dev/null; \
             grep -c CapBnd /proc/self/status; grep CapEff /proc/self/status";
        let (_, out) = run(&policy(tier), ws.path(), script);
        let stolen = std::fs::read(ws.path().join("stolen")).unwrap();
        assert!(
            stolen.is_empty(),
            "{tier}: read {} bytes of an ancestor's environment: {out}",
            stolen.len()
        );
        // CAP_SYS_ADMIN (bit 21) and CAP_PERFMON (bit 38) are gone.
        let eff = out
            .lines()
            .find_map(|l| l.strip_prefix("CapEff:"))
            .map(|v| u64::from_str_radix(v.trim(), 16).unwrap())
            .unwrap();
        assert_eq!(eff & ((1 << 21) | (1 << 38)), 0, "{tier}: {out}");
    }
}

/// S27 (issue 22): a descriptor the host inherited from its own parent (an
/// open hidden folder) does not reach the command.
#[test]
fn inherited_descriptors_do_not_reach_the_command() {
    use std::os::fd::AsRawFd;
    let secrets = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    std::fs::write(secrets.path().join("id_rsa"), "INHERITED-SECRET").unwrap();
    let dir = std::fs::File::open(secrets.path()).unwrap();
    // As an editor that leaks descriptors would: inheritable across exec.
    rustix::io::fcntl_setfd(&dir, rustix::io::FdFlags::empty()).unwrap();
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let p = policy(tier).hidden(secrets.path());
        let script = format!(
            "cat /proc/self/fd/{fd}/id_rsa; for f in /proc/self/fd/*; do cat \"$f/id_rsa\"; done; \
             ls /proc/self/fd | wc -l",
            fd = dir.as_raw_fd()
        );
        let (_, out) = run(&p, ws.path(), &script);
        assert!(!out.contains("INHERITED-SECRET"), "{tier}: {out}");
    }
    drop(dir);
}

/// N09/N13 (issue 22): a Unix socket by path outside the sandbox is not
/// reached unless the policy allows Unix sockets; `socketpair` works.
#[test]
fn unix_sockets_by_path_are_refused_unless_allowed() {
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let path = outside.path().join("agent.sock");
    let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "python3 -c \"import socket; a, b = socket.socketpair(); a.send(b'p'); print('pair', b.recv(1))
s = socket.socket(socket.AF_UNIX); s.connect('{}'); s.sendall(b'hi')\"",
        path.display()
    );
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let (_, out) = run(&policy(tier), ws.path(), &script);
        assert!(
            out.contains("pair b'p'"),
            "{tier}: socketpair broken: {out}"
        );
        assert!(out.contains("Operation not permitted"), "{tier}: {out}");
        assert!(
            listener.accept().is_err(),
            "{tier}: a connection reached the socket: {out}"
        );
        let allowed = policy(tier).with_unix_sockets(true);
        let (code, out) = run(&allowed, ws.path(), &script);
        assert_eq!(code, Some(0), "{tier}: {out}");
        assert!(
            listener.accept().is_ok(),
            "{tier}: allowed but not reached: {out}"
        );
    }
}

/// L05 (issue 22): the memory limit holds for the call's processes
/// together where a memory cgroup can be made (here: cgroup v1 as root, or
/// a delegated v2 subtree); elsewhere the sandbox says it is per process.
#[test]
fn the_memory_limit_holds_across_processes() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        let mut p = policy(tier);
        p.limits.set("memory=96MiB").unwrap();
        let script = "python3 - <<'EOF'
import os, time
for i in range(4):
    if os.fork() == 0:
        if os.path.exists('stop'):
            os._exit(0)
        b = bytearray(40 << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        with open('held', 'a') as f:
            f.write('x\\n')
        # Stay alive until all four hold their memory at once, or until the
        # limit ended one of them (the parent then makes 'stop'), at most
        # 30 s: a loaded machine may start them far apart, and one that
        # left early would free its memory for the next.
        end = time.time() + 30
        while time.time() < end and not os.path.exists('stop'):
            with open('held') as f:
                if len(f.readlines()) >= 4:
                    break
            time.sleep(0.05)
        os._exit(0)
try:
    while True:
        _, status = os.wait()
        if os.WIFSIGNALED(status):
            open('stop', 'w').close()
except ChildProcessError:
    pass
EOF";
        let (sb, mut c) = sandboxed(&p, ws.path(), script);
        if sb
            .notes()
            .iter()
            .any(|n| n.contains("No writable memory cgroup"))
        {
            println!("{tier}: no memory cgroup here; the limit is per process");
            continue;
        }
        let out = c.output().unwrap();
        let text = String::from_utf8_lossy(&out.stderr).into_owned();
        let held = std::fs::read_to_string(ws.path().join("held")).map_or(0, |t| t.lines().count());
        assert!(
            held < 4,
            "{tier}: {held} processes held 40 MiB each: {text}"
        );
        let notes = sb.finish(out.status.code(), None, &text);
        assert!(
            notes
                .iter()
                .any(|n| n.contains("memory limit (100663296 bytes for all")),
            "{tier}: {notes:?}"
        );
    }
}

/// The `NSpid` line of `/proc/<pid>/status`: the pid in each PID namespace
/// the process is in, outermost first.
fn ns_pids(pid: u32) -> Vec<u32> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("NSpid:")).unwrap();
    line.split_whitespace()
        .skip(1)
        .map(|n| n.parse().unwrap())
        .collect()
}

/// Cost (`benches/spawn_min.rs`): in the full tier the process `spawn`
/// returns clones the namespace's first process straight into the new
/// namespaces, with no owner process in between (one fork and one wake-up
/// fewer per call). Regression: its only child used to be an owner process
/// in the host's PID namespace.
#[test]
fn apply_clones_the_namespace_first_process_directly() {
    let ws = tempfile::tempdir().unwrap();
    let (_sb, mut c) = sandboxed(
        &policy(SandboxTier::Full),
        ws.path(),
        "echo started; sleep 30",
    );
    let mut child = c.stdout(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line, "started\n");
    let pid = child.id();
    let children = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap();
    let children: Vec<u32> = children
        .split_whitespace()
        .map(|n| n.parse().unwrap())
        .collect();
    assert_eq!(children.len(), 1, "children of {pid}: {children:?}");
    let nspids = ns_pids(children[0]);
    child.kill().unwrap();
    child.wait().unwrap();
    assert_eq!(nspids.len(), 2, "NSpid of {}: {nspids:?}", children[0]);
    assert_eq!(nspids[1], 1);
}

/// The read-only policy with a workspace under /tmp (as tests make it): the
/// workspace stays visible at its own path inside the private /tmp, and
/// nothing in it can be written (full tier: a read-only carry; no-ns tier:
/// no writable rule for it).
#[test]
fn a_read_only_workspace_under_tmp_is_visible_and_unwritable() {
    for tier in TIERS {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join("kept.txt"), "hello\n").unwrap();
        let policy = policy(tier).with_mode(tool_core::SandboxMode::ReadOnly);
        let (code, out) = run(
            &policy,
            ws.path(),
            "pwd; cat kept.txt; echo changed > kept.txt; echo new > new.txt; echo end",
        );
        assert_eq!(code, Some(0), "{tier:?}: {out}");
        let root = ws.path().canonicalize().unwrap();
        assert!(
            out.starts_with(&format!("{}\nhello\n", root.display())),
            "{tier:?}: {out}"
        );
        assert_eq!(
            std::fs::read_to_string(ws.path().join("kept.txt")).unwrap(),
            "hello\n",
            "{tier:?}"
        );
        assert!(!ws.path().join("new.txt").exists(), "{tier:?}");
    }
}
