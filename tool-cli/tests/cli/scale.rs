//! Concurrent edits at scale (issue 17, item 3): 20 agents as tasks in this
//! process (each with its own context and ledger from
//! `tool_builtins::context`) and 20 agents as separate `tool batch`
//! processes, all on one workspace at once, editing one file, several files,
//! and patching two files in two folders in opposite orders.
//!
//! Every edit replaces one line that only it touches, so the file afterwards
//! tells each edit's fate: an edit reported as applied must be in the file
//! (else it is *lost*), an edit refused with the stale-read error must not be.
//! Any other outcome (another error, a hang past the deadline) fails the test.
//!
//! `TOOL_SCALE_EDITS` (default 5) sets the edits per agent; the counts are
//! printed (`cargo test -p tool-cli --test cli scale -- --nocapture`).

use std::io::Write;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{TempDir, tool};

/// Agents of each kind (tasks, processes).
const AGENTS: usize = 20;
/// The whole scenario must end within this; longer counts as a deadlock.
const DEADLINE: Duration = Duration::from_secs(120);
/// The stale-read refusal of the ledger.
const STALE: &str = "has been modified since it was last read";

/// One line replaced in one file.
#[derive(Debug, Clone)]
struct Change {
    file: String,
    old: String,
    new: String,
}

/// One write: an `edit_file` of one line, or an `apply_patch` of one line in
/// each of two files (in the order given).
#[derive(Debug, Clone)]
enum Op {
    Edit(Change),
    Patch(Change, Change),
}

impl Op {
    fn changes(&self) -> Vec<&Change> {
        match self {
            Op::Edit(c) => vec![c],
            Op::Patch(a, b) => vec![a, b],
        }
    }

    /// The calls of this op: a `read_file` of each file, then the write.
    fn calls(&self) -> Vec<Value> {
        let mut calls: Vec<Value> = self
            .changes()
            .iter()
            .map(|c| json!({"name": "read_file", "arguments": {"file_path": c.file}}))
            .collect();
        calls.push(match self {
            Op::Edit(c) => json!({"name": "edit_file", "arguments": {
                "file_path": c.file, "old_string": format!("{}\n", c.old),
                "new_string": format!("{}\n", c.new),
            }}),
            Op::Patch(a, b) => {
                let hunk =
                    |c: &Change| format!("*** Update File: {}\n-{}\n+{}\n", c.file, c.old, c.new);
                json!({"name": "apply_patch", "arguments": {
                    "patch": format!("*** Begin Patch\n{}{}*** End Patch\n", hunk(a), hunk(b)),
                }})
            }
        });
        calls
    }
}

/// What became of the writes.
#[derive(Debug, Default)]
struct Tally {
    attempted: usize,
    applied: usize,
    refused: usize,
    lost: usize,
    /// Refused, yet in the file (a partial or unreported write).
    unreported: usize,
    /// Outcomes that are neither success nor the stale-read refusal.
    other: Vec<String>,
}

/// The outcome of one call: `Ok(())` applied, `Err(message)` failed.
type Outcome = Result<(), String>;

fn outcome_of_json(v: &Value) -> Outcome {
    match v["error"]["message"].as_str() {
        None if v["error"].is_null() => Ok(()),
        Some(m) => Err(m.to_owned()),
        None => Err(v.to_string()),
    }
}

/// Runs `ops` as a `tool batch` process; returns the child (stdin written and closed).
fn spawn_process(dir: &TempDir, ops: &[Op]) -> std::process::Child {
    let mut child = tool()
        .args(["batch", "--workspace", dir.arg()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("tool batch starts");
    let input: String = ops
        .iter()
        .flat_map(Op::calls)
        .map(|c| format!("{c}\n"))
        .collect();
    let mut stdin = child.stdin.take().expect("stdin");
    std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    child
}

/// Waits for a batch process until `deadline` (then kills it and fails) and
/// returns the outcome of each op's write.
fn collect_process(mut child: std::process::Child, ops: &[Op], deadline: Instant) -> Vec<Outcome> {
    // Read stdout while the process runs: its results outgrow a pipe's buffer.
    let mut stdout = child.stdout.take().expect("stdout");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut text).expect("UTF-8 stdout");
        text
    });
    loop {
        match child.try_wait().expect("try_wait") {
            Some(_) => break,
            None if Instant::now() > deadline => {
                let _ = child.kill();
                panic!("a tool batch process did not end within {DEADLINE:?}: deadlock?");
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    }
    let text = reader.join().expect("stdout reader");
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON result line"))
        .collect();
    let mut at = 0;
    let mut outcomes = Vec::new();
    for op in ops {
        let reads = op.changes().len();
        for read in &lines[at..at + reads] {
            assert!(read["error"].is_null(), "a read failed: {read}");
        }
        outcomes.push(outcome_of_json(&lines[at + reads]));
        at += reads + 1;
    }
    assert_eq!(at, lines.len(), "one result line per call");
    outcomes
}

/// Runs `ops` as an agent task with its own context (and ledger).
async fn run_task(root: std::path::PathBuf, ops: Vec<Op>) -> Vec<Outcome> {
    let registry = tool_builtins::registry();
    let ctx = tool_builtins::context(&root).expect("context");
    let mut outcomes = Vec::new();
    for op in &ops {
        let calls = op.calls();
        let (write, reads) = calls.split_last().expect("a write");
        for read in reads {
            let r = registry
                .execute("read_file", read["arguments"].clone(), &ctx)
                .await;
            assert!(r.error.is_none(), "a read failed: {:?}", r.error);
        }
        let name = write["name"].as_str().expect("name");
        let r = registry
            .execute(name, write["arguments"].clone(), &ctx)
            .await;
        outcomes.push(match r.error {
            None => Ok(()),
            Some(e) => Err(e.message),
        });
    }
    outcomes
}

/// Runs `agents[..AGENTS]` as tasks and `agents[AGENTS..]` as processes, all
/// at once, then checks every op against the files.
fn race(dir: &TempDir, agents: &[Vec<Op>]) -> Tally {
    let deadline = Instant::now() + DEADLINE;
    let (tasks, processes) = agents.split_at(AGENTS.min(agents.len()));
    let children: Vec<_> = processes
        .iter()
        .map(|ops| spawn_process(dir, ops))
        .collect();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(4)
        .enable_all()
        .build()
        .expect("runtime");
    let task_outcomes: Vec<Vec<Outcome>> = runtime.block_on(async {
        let handles: Vec<_> = tasks
            .iter()
            .map(|ops| tokio::spawn(run_task(dir.path().to_path_buf(), ops.clone())))
            .collect();
        let all = async {
            let mut outs = Vec::new();
            for h in handles {
                outs.push(h.await.expect("agent task"));
            }
            outs
        };
        tokio::time::timeout(DEADLINE, all)
            .await
            .expect("the agent tasks ended within the deadline (no deadlock)")
    });
    let process_outcomes: Vec<Vec<Outcome>> = children
        .into_iter()
        .zip(processes)
        .map(|(child, ops)| collect_process(child, ops, deadline))
        .collect();
    let mut tally = Tally::default();
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).expect("read back");
    for (ops, outcomes) in agents
        .iter()
        .zip(task_outcomes.iter().chain(&process_outcomes))
    {
        for (op, outcome) in ops.iter().zip(outcomes) {
            tally.attempted += 1;
            let has = |c: &Change| {
                let text = read(&c.file);
                let new = text.lines().any(|l| l == c.new);
                let old = text.lines().any(|l| l == c.old);
                assert!(
                    new != old,
                    "{c:?}: exactly one of old and new is in the file"
                );
                new
            };
            let landed: Vec<bool> = op.changes().into_iter().map(has).collect();
            match outcome {
                Ok(()) => {
                    tally.applied += 1;
                    if landed.iter().any(|l| !l) {
                        tally.lost += 1;
                    }
                }
                Err(m) if m.contains(STALE) => {
                    tally.refused += 1;
                    if landed.iter().any(|l| *l) {
                        tally.unreported += 1;
                    }
                }
                Err(m) => tally.other.push(m.clone()),
            }
        }
    }
    tally
}

fn edits_per_agent() -> usize {
    std::env::var("TOOL_SCALE_EDITS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
}

/// Writes `files` with the old line of every change of `agents`, in order.
fn seed(root: &Path, files: &[&str], agents: &[Vec<Op>]) -> usize {
    let mut lines = 0;
    for f in files {
        let text: String = agents
            .iter()
            .flatten()
            .flat_map(Op::changes)
            .filter(|c| c.file == *f)
            .map(|c| format!("{}\n", c.old))
            .collect();
        lines += text.lines().count();
        let path = root.join(f);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, text).expect("seed");
    }
    lines
}

fn change(file: &str, agent: usize, k: usize) -> Change {
    Change {
        file: file.to_owned(),
        old: format!("{file} agent {agent} edit {k}: old"),
        new: format!("{file} agent {agent} edit {k}: NEW by agent {agent}"),
    }
}

fn check(name: &str, dir: &TempDir, files: &[&str], agents: &[Vec<Op>], lines: usize) {
    let started = Instant::now();
    let tally = race(dir, agents);
    println!(
        "{name}: attempted {}, applied {}, refused (stale read) {}, lost {}, unreported {}, other {} in {:.1} s",
        tally.attempted,
        tally.applied,
        tally.refused,
        tally.lost,
        tally.unreported,
        tally.other.len(),
        started.elapsed().as_secs_f64()
    );
    assert!(
        tally.other.is_empty(),
        "unexpected outcomes: {:?}",
        tally.other
    );
    assert_eq!(tally.lost, 0, "{tally:?}");
    assert_eq!(tally.unreported, 0, "{tally:?}");
    assert_eq!(tally.applied + tally.refused, tally.attempted);
    assert!(tally.applied >= 1, "some writer wins: {tally:?}");
    let total: usize = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(dir.path().join(f))
                .expect("read")
                .lines()
                .count()
        })
        .sum();
    assert_eq!(total, lines, "no line lost or doubled");
    for entry in walk(dir.path()) {
        assert!(
            files.iter().any(|f| dir.path().join(f) == entry),
            "a stray file is left: {}",
            entry.display()
        );
    }
}

/// Every regular file under `root`.
fn walk(root: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(root).expect("read_dir").flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn forty_agents_editing_one_file_lose_no_update() {
    let dir = TempDir::new();
    let files = ["shared.txt"];
    let agents: Vec<Vec<Op>> = (0..2 * AGENTS)
        .map(|a| {
            (0..edits_per_agent())
                .map(|k| Op::Edit(change(files[0], a, k)))
                .collect()
        })
        .collect();
    let lines = seed(dir.path(), &files, &agents);
    check("one file", &dir, &files, &agents, lines);
}

#[test]
fn forty_agents_editing_several_files_lose_no_update() {
    let dir = TempDir::new();
    let files = ["f0.txt", "f1.txt", "sub/f2.txt", "sub/deeper/f3.txt"];
    let agents: Vec<Vec<Op>> = (0..2 * AGENTS)
        .map(|a| {
            (0..edits_per_agent())
                .map(|k| Op::Edit(change(files[(a + k) % files.len()], a, k)))
                .collect()
        })
        .collect();
    let lines = seed(dir.path(), &files, &agents);
    check("several files", &dir, &files, &agents, lines);
}

#[test]
fn patches_of_two_folders_in_opposite_orders_neither_deadlock_nor_lose() {
    let dir = TempDir::new();
    let files = ["a/x.txt", "b/y.txt"];
    let agents: Vec<Vec<Op>> = (0..2 * AGENTS)
        .map(|a| {
            (0..edits_per_agent())
                .map(|k| {
                    let (x, y) = (change(files[0], a, k), change(files[1], a, k));
                    if a % 2 == 0 {
                        Op::Patch(x, y)
                    } else {
                        Op::Patch(y, x)
                    }
                })
                .collect()
        })
        .collect();
    let lines = seed(dir.path(), &files, &agents);
    check("apply_patch a/x + b/y", &dir, &files, &agents, lines);
}

#[test]
fn edits_and_patches_mixed_on_the_same_two_files_lose_no_update() {
    // Half the agents patch both files, the other half edit one of them:
    // the folder locks of a patch and of an edit must exclude each other.
    let dir = TempDir::new();
    let files = ["a/x.txt", "b/y.txt"];
    let agents: Vec<Vec<Op>> = (0..2 * AGENTS)
        .map(|a| {
            (0..edits_per_agent())
                .map(|k| match a % 3 {
                    0 => Op::Patch(change(files[0], a, k), change(files[1], a, k)),
                    1 => Op::Edit(change(files[0], a, k)),
                    _ => Op::Edit(change(files[1], a, k)),
                })
                .collect()
        })
        .collect();
    let lines = seed(dir.path(), &files, &agents);
    check(
        "apply_patch + edit_file mixed",
        &dir,
        &files,
        &agents,
        lines,
    );
}
