//! Resource limits: `setrlimit(2)` values, and a per-call cgroup whose
//! `pids.max` bounds the processes and threads (`Documentation/admin-guide/cgroup-v2.rst`,
//! "PID"; `Documentation/admin-guide/cgroup-v1/pids.rst`).

use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use tool_core::SandboxLimits;

use crate::SandboxError;
use crate::plan::{RlimitSet, c_path};

/// The `setrlimit` values of `limits`.
pub(crate) fn rlimits(limits: &SandboxLimits) -> RlimitSet {
    let cpu = limits.cpu.as_secs() + u64::from(limits.cpu.subsec_nanos() > 0);
    RlimitSet(vec![
        (libc::RLIMIT_NPROC as libc::c_int, limits.processes),
        (libc::RLIMIT_DATA as libc::c_int, limits.memory),
        (libc::RLIMIT_FSIZE as libc::c_int, limits.file_size),
        (libc::RLIMIT_CPU as libc::c_int, cpu),
        (libc::RLIMIT_NOFILE as libc::c_int, limits.open_files),
    ])
}

/// A per-call cgroup with `pids.max` set, removed when dropped.
#[derive(Debug)]
pub(crate) struct Cgroup {
    dir: PathBuf,
}

impl Cgroup {
    /// Creates a child cgroup of this process's own (cgroup v2, where its
    /// `pids` controller is enabled) or in the v1 `pids` hierarchy, with
    /// `pids.max` = `processes`. `None` where neither is writable.
    pub(crate) fn create(processes: u64) -> Option<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let name = format!(
            "agent-tools-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let own = std::fs::read_to_string("/proc/self/cgroup").ok()?;
        let mut bases = Vec::new();
        for line in own.lines() {
            let mut parts = line.splitn(3, ':');
            let (Some(_), Some(controllers), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let path = path.trim_start_matches('/');
            if controllers.is_empty() && Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
                bases.push(Path::new("/sys/fs/cgroup").join(path));
            } else if controllers.split(',').any(|c| c == "pids") {
                bases.push(Path::new("/sys/fs/cgroup/pids").join(path));
            }
        }
        for base in bases {
            let dir = base.join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            if std::fs::write(dir.join("pids.max"), processes.to_string()).is_ok() {
                return Some(Self { dir });
            }
            let _ = std::fs::remove_dir(&dir);
        }
        None
    }

    pub(crate) fn procs_path(&self) -> Result<CString, SandboxError> {
        c_path(&self.dir.join("cgroup.procs"))
    }

    /// Whether a fork was refused by `pids.max` (`pids.events`: `max N`).
    pub(crate) fn limit_hit(&self) -> bool {
        std::fs::read_to_string(self.dir.join("pids.events")).is_ok_and(|t| {
            t.lines().any(|l| {
                l.strip_prefix("max ")
                    .and_then(|n| n.trim().parse::<u64>().ok())
                    .is_some_and(|n| n > 0)
            })
        })
    }
}

impl Drop for Cgroup {
    fn drop(&mut self) {
        // Empty once every process of the call is reaped; a few tries cover
        // the kernel's lag in releasing exited tasks.
        for _ in 0..50 {
            if std::fs::remove_dir(&self.dir).is_ok() || !self.dir.exists() {
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }
}
