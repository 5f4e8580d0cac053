//! Resource limits: `setrlimit(2)` values, and per-call cgroups whose
//! `pids.max` bounds the processes and threads and whose memory limit bounds
//! the memory of the whole call (see [`Cgroups`]).

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

/// What a per-call cgroup bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Controller {
    /// cgroup v2: `pids.max` and/or `memory.max` in one cgroup.
    Unified,
    /// cgroup v1 `pids` hierarchy: `pids.max`.
    Pids,
    /// cgroup v1 `memory` hierarchy: `memory.limit_in_bytes`.
    Memory,
}

/// The per-call cgroups (one v2 cgroup, or one per v1 hierarchy), removed
/// when dropped. `processes` goes to `pids.max`
/// (`Documentation/admin-guide/cgroup-v2.rst` "PID", `cgroup-v1/pids.rst`),
/// `memory` to `memory.max` (`cgroup-v2.rst` "Memory Interface Files") or
/// `memory.limit_in_bytes` and, where swap is accounted,
/// `memory.memsw.limit_in_bytes` (`cgroup-v1/memory.rst`): one limit for
/// every process of the call together. The kernel's OOM killer ends a
/// process of the cgroup when the memory limit cannot be kept.
#[derive(Debug, Default)]
pub(crate) struct Cgroups {
    dirs: Vec<(Controller, PathBuf)>,
    /// Whether `pids.max` is in force (else `RLIMIT_NPROC` alone).
    pub(crate) pids: bool,
    /// Whether a memory limit for the whole call is in force (else
    /// `RLIMIT_DATA`, per process, alone).
    pub(crate) memory: bool,
}

/// This process's cgroup paths: the v2 one (`0::/path`, when the unified
/// hierarchy is mounted at `/sys/fs/cgroup`) and the v1 `pids` and
/// `memory` ones, from `/proc/self/cgroup` (`cgroups(7)`).
fn own_cgroups() -> Vec<(Controller, PathBuf)> {
    let Ok(own) = std::fs::read_to_string("/proc/self/cgroup") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            if Path::new("/sys/fs/cgroup/cgroup.controllers").exists() {
                out.push((Controller::Unified, Path::new("/sys/fs/cgroup").join(path)));
            }
            continue;
        }
        for c in controllers.split(',') {
            match c {
                "pids" => out.push((
                    Controller::Pids,
                    Path::new("/sys/fs/cgroup/pids").join(path),
                )),
                "memory" => out.push((
                    Controller::Memory,
                    Path::new("/sys/fs/cgroup/memory").join(path),
                )),
                _ => {}
            }
        }
    }
    out
}

impl Cgroups {
    /// Creates the cgroups for the limits given (`None`: not asked for).
    /// A hierarchy that is missing or not writable is left out: the fields
    /// [`Cgroups::pids`] and [`Cgroups::memory`] say what holds.
    pub(crate) fn create(processes: Option<u64>, memory: Option<u64>) -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let mut me = Self::default();
        if processes.is_none() && memory.is_none() {
            return me;
        }
        let name = format!(
            "agent-tools-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let bases = own_cgroups();
        static SWEPT: std::sync::Once = std::sync::Once::new();
        SWEPT.call_once(|| {
            for (_, base) in &bases {
                sweep_stale(base);
            }
        });
        for (controller, base) in bases {
            let wants_pids = processes.is_some() && !me.pids;
            let wants_memory = memory.is_some() && !me.memory;
            let useful = match controller {
                Controller::Unified => wants_pids || wants_memory,
                Controller::Pids => wants_pids,
                Controller::Memory => wants_memory,
            };
            if !useful {
                continue;
            }
            let dir = base.join(&name);
            if std::fs::create_dir(&dir).is_err() {
                continue;
            }
            let mut any = false;
            if let Some(n) = processes.filter(|_| controller != Controller::Memory && wants_pids) {
                if std::fs::write(dir.join("pids.max"), n.to_string()).is_ok() {
                    me.pids = true;
                    any = true;
                }
            }
            if let Some(m) = memory.filter(|_| controller != Controller::Pids && wants_memory) {
                let ok = if controller == Controller::Unified {
                    let ok = std::fs::write(dir.join("memory.max"), m.to_string()).is_ok();
                    // No swapping around the limit (absent without swap).
                    let _ = std::fs::write(dir.join("memory.swap.max"), "0");
                    ok
                } else {
                    let ok =
                        std::fs::write(dir.join("memory.limit_in_bytes"), m.to_string()).is_ok();
                    let _ = std::fs::write(dir.join("memory.memsw.limit_in_bytes"), m.to_string());
                    ok
                };
                if ok {
                    me.memory = true;
                    any = true;
                }
            }
            if any {
                me.dirs.push((controller, dir));
            } else {
                let _ = std::fs::remove_dir(&dir);
            }
        }
        me
    }

    /// The `cgroup.procs` files a process writes `0` to, to join them all.
    pub(crate) fn procs_paths(&self) -> Result<Vec<CString>, SandboxError> {
        self.dirs
            .iter()
            .map(|(_, d)| c_path(&d.join("cgroup.procs")))
            .collect()
    }

    /// Whether a fork was refused by `pids.max` (`pids.events`: `max N`).
    pub(crate) fn pids_limit_hit(&self) -> bool {
        self.dirs
            .iter()
            .filter(|(c, _)| *c != Controller::Memory)
            .any(|(_, d)| counter(&d.join("pids.events"), "max") > 0)
    }

    /// Whether the memory limit made the kernel end a process (`oom_kill N`
    /// in `memory.events` for v2, in `memory.oom_control` for v1).
    pub(crate) fn memory_limit_hit(&self) -> bool {
        self.dirs.iter().any(|(c, d)| match c {
            Controller::Unified => counter(&d.join("memory.events"), "oom_kill") > 0,
            Controller::Memory => counter(&d.join("memory.oom_control"), "oom_kill") > 0,
            Controller::Pids => false,
        })
    }
}

/// Removes the per-call cgroups below `base` that a `tool` process left
/// when it was killed before its cleanup ran (breakout review E14):
/// `agent-tools-<pid>-<n>` whose process `<pid>` is gone. Only empty ones
/// go (`rmdir(2)` of a cgroup with processes fails with `EBUSY`), so a
/// background job that outlived the process that named its cgroup keeps
/// it until it ends. Runs once per process, at the first cgroup made; at
/// most 1000 entries looked at.
pub(crate) fn sweep_stale(base: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(base) else {
        return 0;
    };
    let mut removed = 0;
    for e in entries.flatten().take(1000) {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix("agent-tools-")) else {
            continue;
        };
        let Some(pid) = rest.split('-').next().and_then(|p| p.parse::<u32>().ok()) else {
            continue;
        };
        if pid == std::process::id() || Path::new("/proc").join(pid.to_string()).exists() {
            continue;
        }
        if std::fs::remove_dir(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The number after `name ` on its line of a flat-keyed cgroup file; 0
/// when absent.
fn counter(file: &Path, name: &str) -> u64 {
    std::fs::read_to_string(file).map_or(0, |t| {
        t.lines()
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix(' '))
            .filter_map(|n| n.trim().parse::<u64>().ok())
            .sum()
    })
}

impl Drop for Cgroups {
    fn drop(&mut self) {
        // Empty once every process of the call is reaped; a few tries cover
        // the kernel's lag in releasing exited tasks.
        for (_, dir) in &self.dirs {
            for _ in 0..50 {
                if std::fs::remove_dir(dir).is_ok() || !dir.exists() {
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(2));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A per-call cgroup named after a process that is gone is removed; one
    /// of a live process (this one) and one holding a process stay. Where
    /// no cgroup of this process is writable (non-root), nothing to check.
    #[test]
    fn stale_cgroups_of_dead_processes_are_removed() {
        let Some((_, base)) = own_cgroups()
            .into_iter()
            .find(|(_, b)| std::fs::create_dir(b.join("agent-tools-probe")).is_ok())
        else {
            return;
        };
        let _ = std::fs::remove_dir(base.join("agent-tools-probe"));
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let stale = base.join(format!("agent-tools-{dead}-0"));
        let live = base.join(format!("agent-tools-{}-999", std::process::id()));
        std::fs::create_dir(&stale).unwrap();
        std::fs::create_dir(&live).unwrap();
        assert!(sweep_stale(&base) >= 1);
        assert!(!stale.exists());
        assert!(live.exists());
        std::fs::remove_dir(&live).unwrap();
    }
}
