//! Finding and signalling every process a command started.
//!
//! A command's process group is not enough: with job control (`set -m`) bash
//! puts every job in a group of its own, and once the shell dies its children
//! are re-parented, so the link to them is lost. [`ProcessTree`] therefore
//! remembers every process and group it has seen descend from the shell,
//! freezing them (`SIGSTOP`) while it looks so that nothing forks unseen, and
//! signals all of them, groups and single processes alike. It never signals
//! this process or its own group.
//!
//! Linux only: the tree is read from `/proc/<pid>/stat`.

use std::collections::BTreeSet;

use rustix::process::{Pid, Signal};

/// How many freeze-and-scan rounds one [`ProcessTree::collect`] makes at most.
const COLLECT_ROUNDS: usize = 16;

/// One live process as `/proc/<pid>/stat` shows it.
#[derive(Debug, Clone, Copy)]
struct ProcInfo {
    pid: i32,
    ppid: i32,
    pgid: i32,
}

/// Every process and process group seen descending from a root process
/// (those seen dead are forgotten, so a reused pid is never taken for one).
#[derive(Debug)]
pub(crate) struct ProcessTree {
    pids: BTreeSet<i32>,
    groups: BTreeSet<i32>,
    /// Processes and groups that already got the terminating signal.
    signalled: BTreeSet<(bool, i32)>,
    me: i32,
    my_group: i32,
}

impl ProcessTree {
    /// A tree rooted at `root`, whose own group is `group`.
    pub(crate) fn new(root: Pid, group: Pid) -> Self {
        let me = rustix::process::getpid().as_raw_nonzero().get();
        let my_group = rustix::process::getpgrp().as_raw_nonzero().get();
        let mut tree = Self {
            pids: BTreeSet::new(),
            groups: BTreeSet::new(),
            signalled: BTreeSet::new(),
            me,
            my_group,
        };
        tree.pids.insert(root.as_raw_nonzero().get());
        let group = group.as_raw_nonzero().get();
        if group != my_group {
            tree.groups.insert(group);
        }
        tree
    }

    /// Freezes (`SIGSTOP`) the known processes and groups and records every
    /// live process whose parent or group is known, freezing it too, until a
    /// scan finds nothing new (at most [`COLLECT_ROUNDS`] times); then sends
    /// `signal` to every group and process not sent it before (`SIGKILL` is
    /// sent to all every time) and lets them all run again (`SIGCONT`), so a
    /// frozen process still receives it. Returns how many processes are alive.
    pub(crate) fn sweep(&mut self, signal: Signal) -> usize {
        for _ in 0..COLLECT_ROUNDS {
            self.send_all(Signal::STOP);
            let before = (self.pids.clone(), self.groups.clone());
            self.scan();
            self.send_all(Signal::STOP);
            if (&self.pids, &self.groups) == (&before.0, &before.1) {
                break;
            }
        }
        let again = signal == Signal::KILL;
        for (is_group, id) in self.members() {
            if again || self.signalled.insert((is_group, id)) {
                send(is_group, id, signal);
            }
        }
        self.send_all(Signal::CONT);
        self.pids.len()
    }

    fn members(&self) -> Vec<(bool, i32)> {
        let groups = self.groups.iter().map(|&g| (true, g));
        groups
            .chain(self.pids.iter().map(|&p| (false, p)))
            .collect()
    }

    fn send_all(&self, signal: Signal) {
        for (is_group, id) in self.members() {
            send(is_group, id, signal);
        }
    }

    /// One pass over `/proc`: adds the live processes whose parent or group is
    /// known (repeating until nothing is added) and their groups, and forgets
    /// the processes and groups that are gone.
    fn scan(&mut self) {
        let procs = all_processes();
        loop {
            let mut grew = false;
            for p in &procs {
                if p.pid == self.me {
                    continue;
                }
                let known = self.pids.contains(&p.pid);
                let related = self.pids.contains(&p.ppid) || self.groups.contains(&p.pgid);
                if !known && related {
                    self.pids.insert(p.pid);
                    grew = true;
                }
                if (known || related) && p.pgid != self.my_group && self.groups.insert(p.pgid) {
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        self.pids.retain(|pid| procs.iter().any(|p| p.pid == *pid));
        self.groups
            .retain(|g| procs.iter().any(|p| p.pgid == *g && p.pid != self.me));
    }
}

fn send(is_group: bool, id: i32, signal: Signal) {
    if let Some(id) = Pid::from_raw(id) {
        let _ = if is_group {
            rustix::process::kill_process_group(id, signal)
        } else {
            rustix::process::kill_process(id, signal)
        };
    }
}

/// Every live (not zombie) process in `/proc`.
fn all_processes() -> Vec<ProcInfo> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|entry| {
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            parse_stat(pid, &stat)
        })
        .collect()
}

/// Parses `pid (comm) state ppid pgrp ...`; `None` for zombies and dead processes.
fn parse_stat(pid: i32, stat: &str) -> Option<ProcInfo> {
    // The command name may hold spaces and parentheses: the fields start after the last ')'.
    let mut fields = stat.rsplit_once(')')?.1.split_whitespace();
    let state = fields.next()?;
    if state.starts_with(['Z', 'X', 'x']) {
        return None;
    }
    let ppid = fields.next()?.parse().ok()?;
    let pgid = fields.next()?.parse().ok()?;
    Some(ProcInfo { pid, ppid, pgid })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_are_parsed_after_the_last_parenthesis() {
        let p = parse_stat(42, "42 (a) b (c)) S 7 42 42 0 -1").unwrap();
        assert_eq!((p.pid, p.ppid, p.pgid), (42, 7, 42));
        assert!(parse_stat(43, "43 (dead) Z 7 43 43").is_none());
    }

    #[test]
    fn our_own_group_is_never_recorded() {
        let me = rustix::process::getpid();
        let tree = ProcessTree::new(me, rustix::process::getpgrp());
        assert!(tree.groups.is_empty(), "our own group is never recorded");
    }
}
