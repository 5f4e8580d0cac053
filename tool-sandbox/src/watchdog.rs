//! The memory watchdog: where no memory cgroup can be made (no delegated
//! cgroup v2 subtree, not root on cgroup v1), the explicit memory limit of
//! a call is kept by summing the resident memory of the call's processes
//! every [`WATCHDOG_PERIOD`] and ending them all when the sum passes it.
//!
//! The call's processes are the descendants of the process the caller
//! spawned (its supervisor is a child subreaper, `PR_SET_CHILD_SUBREAPER`,
//! so a process that double-forks or calls `setsid` stays below it), read
//! from `/proc/<pid>/stat` (`proc_pid_stat(5)`: `ppid` is field 4, `rss` in
//! pages field 24). Processes still running the host's own program (the
//! supervisor, the namespace's first process, the proxy forwarder: forks
//! that never `exec`, whose resident pages are mostly the host's, shared)
//! are not counted and not killed. What it does not see: memory held
//! between two samples for less than a period, and a command that
//! re-executes the host's own program. A cgroup (see `limits`) has neither
//! gap and is preferred.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// How often the watchdog samples: every 25 ms.
pub const WATCHDOG_PERIOD: Duration = Duration::from_millis(25);

/// Most `/proc` entries read per sample: 65 536 (a sample of a larger
/// process table counts what it read).
const MAX_PROC_ENTRIES: usize = 65_536;

/// A running memory watchdog (see the module docs); stops when dropped.
#[derive(Debug)]
pub struct MemoryWatchdog {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// One process of the table: parent and resident bytes.
#[derive(Debug, Clone, Copy)]
struct Proc {
    pid: u32,
    ppid: u32,
    rss: u64,
}

/// `pid`, `ppid` and resident bytes from a `/proc/<pid>/stat` line (the
/// command name, field 2, may hold spaces and parentheses: the fields
/// after it are read from the last `)`).
fn parse_stat(pid: u32, line: &str, page: u64) -> Option<Proc> {
    let rest = &line[line.rfind(')')? + 1..];
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ppid = fields.get(1)?.parse().ok()?;
    let pages: u64 = fields.get(21)?.parse().ok()?;
    Some(Proc {
        pid,
        ppid,
        rss: pages.saturating_mul(page),
    })
}

fn table(page: u64) -> Vec<Proc> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .take(MAX_PROC_ENTRIES)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| {
            let line = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            parse_stat(pid, &line, page)
        })
        .collect()
}

/// The descendants of `root` in `procs` (not `root` itself).
fn descendants(root: u32, procs: &[Proc]) -> Vec<Proc> {
    let mut out: Vec<Proc> = Vec::new();
    let mut frontier = vec![root];
    while let Some(parent) = frontier.pop() {
        for p in procs.iter().filter(|p| p.ppid == parent) {
            if p.pid != root && !out.iter().any(|o| o.pid == p.pid) {
                out.push(*p);
                frontier.push(p.pid);
            }
        }
    }
    out
}

fn exe_of(pid: u32) -> Option<PathBuf> {
    std::fs::read_link(format!("/proc/{pid}/exe")).ok()
}

impl MemoryWatchdog {
    /// Starts watching the descendants of `root`; when their resident
    /// memory together passes `limit` bytes, every one of them is killed
    /// (`SIGKILL`) and `hit` is set.
    ///
    /// # Errors
    /// The thread could not be started.
    pub fn start(root: u32, limit: u64, hit: Arc<AtomicBool>) -> std::io::Result<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let page = rustix::param::page_size() as u64;
        let own = std::fs::read_link("/proc/self/exe").ok();
        let thread = std::thread::Builder::new()
            .name("sandbox-memory-watchdog".to_owned())
            .spawn(move || {
                while !stopped.load(Ordering::Relaxed) {
                    let counted: Vec<Proc> = descendants(root, &table(page))
                        .into_iter()
                        .filter(|p| own.is_none() || exe_of(p.pid) != own)
                        .collect();
                    let total: u64 = counted.iter().map(|p| p.rss).sum();
                    if total > limit {
                        hit.store(true, Ordering::SeqCst);
                        for p in &counted {
                            let pid = i32::try_from(p.pid)
                                .ok()
                                .and_then(rustix::process::Pid::from_raw);
                            if let Some(pid) = pid {
                                let _ = rustix::process::kill_process(
                                    pid,
                                    rustix::process::Signal::KILL,
                                );
                            }
                        }
                    }
                    std::thread::sleep(WATCHDOG_PERIOD);
                }
            })?;
        Ok(Self {
            stop,
            thread: Some(thread),
        })
    }
}

impl Drop for MemoryWatchdog {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::{Command, Stdio};

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let line = "4242 (a (b) c) S 17 4242 4242 0 -1 4194304 100 0 0 0 1 2 0 0 20 0 1 0 \
                    500 12345678 300 18446744073709551615";
        let p = parse_stat(4242, line, 4096).unwrap();
        assert_eq!((p.ppid, p.rss), (17, 300 * 4096));
        assert!(parse_stat(1, "garbage", 4096).is_none());
    }

    /// Four processes of 40 MiB each under one parent, a 96 MiB limit: the
    /// watchdog ends them before all four hold their share.
    #[test]
    fn a_balloon_spread_over_processes_is_ended() {
        let dir = tempfile::tempdir().unwrap();
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(
                "import os, sys, time
for i in range(4):
    if os.fork() == 0:
        b = bytearray(40 << 20)
        for j in range(0, len(b), 4096):
            b[j] = 1
        open(os.path.join(sys.argv[1], 'held'), 'a').write('x\\n')
        time.sleep(3)
        os._exit(0)
try:
    while True:
        os.wait()
except ChildProcessError:
    pass",
            )
            .arg(dir.path())
            .stdin(Stdio::null())
            .spawn()
            .unwrap();
        let hit = Arc::new(AtomicBool::new(false));
        let dog = MemoryWatchdog::start(child.id(), 96 << 20, Arc::clone(&hit)).unwrap();
        child.wait().unwrap();
        drop(dog);
        let held =
            std::fs::read_to_string(dir.path().join("held")).map_or(0, |t| t.lines().count());
        assert!(held < 4, "{held} processes held 40 MiB each");
        assert!(hit.load(Ordering::SeqCst));
    }

    #[test]
    fn a_call_under_the_limit_is_left_alone() {
        let mut child = Command::new("sh")
            .args(["-c", "sleep 0.3 & sleep 0.3; wait; exit 7"])
            .spawn()
            .unwrap();
        let hit = Arc::new(AtomicBool::new(false));
        let dog = MemoryWatchdog::start(child.id(), 256 << 20, Arc::clone(&hit)).unwrap();
        assert_eq!(child.wait().unwrap().code(), Some(7));
        drop(dog);
        assert!(!hit.load(Ordering::SeqCst));
    }
}
