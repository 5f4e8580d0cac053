//! The sandbox escape suite (issue 22): an attacker's commands run through
//! the real `tool` binary (`tool call bash_command '{"command": ...}'`), each
//! judged only by the world afterwards — outside files unchanged, no secret
//! in the workspace or in what `tool` printed, no byte at the test's
//! listeners, the victim process unharmed, no process or mount or key left
//! behind — never by what the command says about itself.
//!
//! The vectors are a table ([`vectors::VECTORS`], [`vectors::SANITY`]); the
//! fixtures and world checks are in [`world`]. Runs:
//! - `cargo test -p tool-cli --test escape`: the table's shape; a few
//!   vectors run without the sandbox to show each judge sees a real escape;
//!   and the whole table in both tiers, allowing only the escapes listed in
//!   `FINDINGS.md` ([`KNOWN_ESCAPES`]) and requiring every sanity check;
//! - `cargo test -p tool-cli --test escape -- --ignored --nocapture
//!   scoreboard`: every vector with `--sandbox off` (or, on a binary from
//!   before the sandbox, no flags), a scoreboard and a total line; asserts
//!   only that the sanity set works;
//! - `cargo test -p tool-cli --test escape -- --ignored --nocapture tier`:
//!   every vector in both sandbox tiers (`--sandbox-tier full` and
//!   `no-namespaces`), asserting 0 escapes in the full tier, none but
//!   `NO_NAMESPACES_CANNOT_CLOSE` in the no-namespaces tier, and every
//!   sanity check working.
//!
//! Environment: `ESCAPE_ONLY=W01,S13` runs only those ids;
//! `ESCAPE_JOBS=N` vectors at once (default 12: most of a vector is waiting).

mod vectors;
mod world;

use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use vectors::{Check, Class, SANITY, VECTORS, Vector};
use world::World;

/// The `tool` binary under test.
const BIN: &str = env!("CARGO_BIN_EXE_tool");

/// A call that has not ended after this long is killed and reported.
const CALL_DEADLINE: Duration = Duration::from_secs(40);

/// How long after the call a surviving job gets to show itself (the
/// persistence vectors' jobs write after 2 s).
const SURVIVOR_WAIT: Duration = Duration::from_millis(2600);

/// Flags for one run of the suite.
struct Mode {
    name: &'static str,
    /// Global flags before `call`.
    flags: Vec<String>,
    /// Extra global flags for the limit vectors.
    limit_flags: Vec<String>,
    /// Whether the binary has the sandbox flags (then vectors' own flags,
    /// such as `--allow-net`, are given too).
    sandbox_flags: bool,
}

/// Whether this `tool` knows the sandbox flags (`--sandbox`).
fn knows_sandbox_flags() -> bool {
    Command::new(BIN)
        .arg("--help")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("--sandbox "))
}

impl Mode {
    /// Today's behaviour: `--sandbox off` when the binary has the flag,
    /// else no flags at all.
    fn unsandboxed() -> Self {
        let sandbox_flags = knows_sandbox_flags();
        let flags = if sandbox_flags {
            vec!["--sandbox".into(), "off".into()]
        } else {
            Vec::new()
        };
        Self {
            name: "no sandbox",
            flags,
            limit_flags: Vec::new(),
            sandbox_flags,
        }
    }

    fn tier(tier: &'static str) -> Self {
        let flags = ["--sandbox", "workspace-write", "--sandbox-tier", tier];
        let limits = [
            "--sandbox-limit",
            "processes=64",
            "--sandbox-limit",
            "memory=256MiB",
            "--sandbox-limit",
            "file-size=512MiB",
        ];
        Self {
            name: tier,
            flags: flags.map(str::to_owned).to_vec(),
            limit_flags: limits.map(str::to_owned).to_vec(),
            sandbox_flags: true,
        }
    }
}

/// What one vector did.
struct Outcome {
    id: &'static str,
    class: Class,
    what: &'static str,
    /// `None`: skipped (the reason is in `evidence`).
    escaped: Option<bool>,
    /// What the judges found (escapes), or what failed (sanity).
    evidence: Vec<String>,
    /// How the call ended, for the scoreboard.
    ended: String,
    /// Wall time of the vector (world, call, judges).
    took: Duration,
}

/// What `tool` printed and how it ended.
struct Call {
    printed: Vec<u8>,
    ended: String,
    usage_error: bool,
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|dir| dir.join(program).is_file()))
}

/// `RUSTUP_HOME` of the real user, so `cargo --version` works under the fake
/// home.
fn rustup_home() -> String {
    std::env::var("RUSTUP_HOME").unwrap_or_else(|_| {
        format!(
            "{}/.rustup",
            std::env::var("HOME").unwrap_or_else(|_| "/root".into())
        )
    })
}

/// `PATH` for the tool: the system's folders first, so `python3` is the
/// system's (a pyenv shim costs half a second per start), then the test's.
fn tool_path() -> String {
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("/usr/local/bin:/usr/bin:/bin:{rest}")
}

/// Runs the vector's command through `tool`, started by an intermediate
/// `sh` that holds `AWS_SECRET_ACCESS_KEY` (removed from the tool's own
/// environment by `env -u`); the tool itself has `GITHUB_TOKEN`. With
/// [`Needs::inherited_fd`](world::Needs), that `sh` opens `~/.ssh` as
/// descriptor 7 for `tool` to inherit, as a careless parent (an editor, an
/// agent host) might.
fn call(world: &World, mode: &Mode, vector: &Vector, command: &str) -> Call {
    let args = serde_json::json!({ "command": command, "timeout": 30 }).to_string();
    let mut cmd = Command::new("/bin/sh");
    cmd.arg("-c")
        .arg("if [ -n \"$ESCAPE_FD_DIR\" ]; then exec 7<\"$ESCAPE_FD_DIR\"; fi; \"$@\"; exit $?")
        .arg("sh")
        .args([
            "env",
            "-u",
            "AWS_SECRET_ACCESS_KEY",
            "-u",
            "ESCAPE_FD_DIR",
            BIN,
        ])
        .args(&mode.flags);
    if vector.needs.inherited_fd {
        cmd.env("ESCAPE_FD_DIR", world.home.join(".ssh"));
    }
    if vector.class == Class::Limit {
        cmd.args(&mode.limit_flags);
    }
    if mode.sandbox_flags {
        cmd.args(vector.flags.iter().map(|f| world.fill(f)));
    }
    cmd.arg("--workspace")
        .arg(&world.ws)
        .args(["--timeout", "35", "call", "bash_command"])
        .arg(&args)
        .current_dir(&world.ws)
        .env("HOME", &world.home)
        .env("CARGO_HOME", world.home.join(".cargo"))
        .env("RUSTUP_HOME", rustup_home())
        .env("XDG_STATE_HOME", &world.state)
        .env("XDG_RUNTIME_DIR", &world.run)
        .env("SSH_AUTH_SOCK", world.run.join("ssh-agent.sock"))
        .env("GITHUB_TOKEN", &world.tool_env_secret)
        .env("AWS_SECRET_ACCESS_KEY", &world.parent_env_secret)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("PATH", tool_path());
    for var in [
        "TRACE_ID",
        "RUST_BACKTRACE",
        "TOOL_CLI_ENV_SCRUBBED",
        "XDG_CONFIG_HOME",
        "XDG_CACHE_HOME",
        "XDG_DATA_HOME",
        "TMPDIR",
    ] {
        cmd.env_remove(var);
    }
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("sh and the tool binary start");
    let printed = Arc::new(Mutex::new(Vec::new()));
    let readers: Vec<_> = [
        child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    ]
    .into_iter()
    .flatten()
    .map(|mut pipe| {
        let printed = Arc::clone(&printed);
        std::thread::spawn(move || {
            let mut buf = [0u8; 8192];
            while let Ok(n) = pipe.read(&mut buf) {
                if n == 0 {
                    break;
                }
                printed
                    .lock()
                    .map(|mut p| p.extend_from_slice(&buf[..n]))
                    .ok();
            }
        })
    })
    .collect();
    let start = Instant::now();
    let ended = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status.to_string(),
            Ok(None) if start.elapsed() > CALL_DEADLINE => {
                let _ = child.kill();
                let _ = child.wait();
                break format!("killed after {CALL_DEADLINE:?}");
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(10)),
            Err(e) => break format!("wait failed: {e}"),
        }
    };
    // A process that kept the pipes open gets half a second; the rest of
    // what it prints is not waited for.
    let until = Instant::now() + Duration::from_millis(500);
    for r in readers {
        while !r.is_finished() && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    let printed = printed.lock().map(|p| p.clone()).unwrap_or_default();
    let text = String::from_utf8_lossy(&printed);
    let usage_error = ended.contains("exit status: 2") && text.contains("Usage:");
    Call {
        printed,
        ended,
        usage_error,
    }
}

/// Runs one vector in a fresh world and judges it.
fn run_vector(vector: &'static Vector, mode: &Mode) -> Outcome {
    let mut outcome = Outcome {
        id: vector.id,
        class: vector.class,
        what: vector.what,
        escaped: None,
        evidence: Vec::new(),
        ended: String::new(),
        took: Duration::ZERO,
    };
    let start = Instant::now();
    if let Some(missing) = vector.requires.iter().find(|p| !on_path(p)) {
        outcome
            .evidence
            .push(format!("skipped: `{missing}` is not installed"));
        return outcome;
    }
    let mut world = World::new(vector.id, vector.needs);
    let command = world.fill(vector.command);
    let before = world.snapshot();
    // Host files a vector may change (kernel settings): their text before.
    let host_before: Vec<(&str, String)> = vector
        .checks
        .iter()
        .filter_map(|c| match *c {
            Check::HostFileSame(path) => {
                Some((path, std::fs::read_to_string(path).unwrap_or_default()))
            }
            _ => None,
        })
        .collect();

    let stop = Arc::new(AtomicBool::new(false));
    let probe = world.inbound_port.map(|port| {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || world::probe_inbound(port, Duration::from_secs(5), &stop))
    });
    let call = call(&world, mode, vector, &command);
    let ended_at = Instant::now();
    let call_ended = std::time::SystemTime::now();
    stop.store(true, Ordering::SeqCst);
    outcome.ended = call.ended.clone();
    assert!(
        !call.usage_error,
        "{}: `tool` refused the flags {:?}: {}",
        vector.id,
        mode.flags,
        String::from_utf8_lossy(&call.printed)
    );
    let mut evidence = Vec::new();
    if let Some(probe) = probe {
        if let Ok(Some(found)) = probe.join() {
            evidence.push(found);
        }
    }

    if vector.class == Class::Sanity {
        evidence.extend(sanity_failures(&world, vector, &call));
        outcome.escaped = Some(!evidence.is_empty());
        outcome.evidence = evidence;
        outcome.took = start.elapsed();
        return outcome;
    }

    if vector.checks.iter().any(|c| matches!(c, Check::Survivor)) {
        if let Some(rest) = SURVIVOR_WAIT.checked_sub(ended_at.elapsed()) {
            std::thread::sleep(rest);
        }
    }
    for check in vector.checks {
        if let Check::HostGit(line) = *check {
            // The user's own git, outside the sandbox, after the call.
            let _ = Command::new("/bin/sh")
                .args(["-c", line])
                .current_dir(&world.ws)
                .env("HOME", &world.home)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("PATH", tool_path())
                .stdin(Stdio::null())
                .output();
        }
    }
    let after = world.snapshot();
    for (path, was) in &before {
        match after.get(path) {
            None => evidence.push(format!("{} removed", path.display())),
            Some(now) if now != was => {
                evidence.push(format!("{} changed: {was} -> {now}", path.display()));
            }
            Some(_) => {}
        }
    }
    for (path, now) in &after {
        if !before.contains_key(path) {
            evidence.push(format!("{} created: {now}", path.display()));
        }
    }
    evidence.extend(world.leaks(&call.printed));
    evidence.extend(world.listener_contacts());
    evidence.extend(world.host_mounts());
    evidence.extend(world.host_keys());
    evidence.extend(world.survivors());
    evidence.extend(world.devices());
    if let Some(victim) = world.victim.as_mut() {
        evidence.extend(victim.harm());
    }
    if let Some(pty) = world.pty.as_mut() {
        evidence.extend(pty.injected());
    }
    for check in vector.checks {
        let found = match *check {
            Check::Marker => std::fs::metadata(world.ws.join("escaped"))
                .is_ok_and(|m| m.len() > 0)
                .then(|| "marker written: the refused operation succeeded".to_owned()),
            // Written after the call ended: a job that wrote while the
            // supervisor was still stopping it (a grace period) did not
            // outlive the call.
            Check::Survivor => std::fs::metadata(world.ws.join("alive"))
                .and_then(|m| m.modified())
                .is_ok_and(|t| t > call_ended)
                .then(|| "a job started in the call wrote after the call ended".to_owned()),
            Check::LinesAtLeast(file, n) => {
                let lines =
                    std::fs::read_to_string(world.ws.join(file)).map_or(0, |t| t.lines().count());
                (lines >= n).then(|| {
                    format!(
                        "{file} has {lines} lines, one per live process ({n} means no limit held)"
                    )
                })
            }
            Check::SizeAtLeast(file, n) => {
                let len = std::fs::metadata(world.ws.join(file)).map_or(0, |m| m.len());
                (len >= n).then(|| format!("{file} is {len} bytes (limit: under {n})"))
            }
            Check::Exists(path) => {
                let path = world.fill(path);
                std::path::Path::new(&path)
                    .exists()
                    .then(|| format!("{path} created"))
            }
            Check::HostFileSame(path) => {
                host_before
                    .iter()
                    .find(|(p, _)| *p == path)
                    .and_then(|(_, was)| {
                        let now = std::fs::read_to_string(path).unwrap_or_default();
                        (now != *was).then(|| {
                            // Put the host's setting back.
                            let _ = std::fs::write(path, was);
                            format!("{path} changed on the host: {was:?} -> {now:?} (restored)")
                        })
                    })
            }
            _ => None,
        };
        evidence.extend(found);
    }
    outcome.escaped = Some(!evidence.is_empty());
    outcome.evidence = evidence;
    outcome.took = start.elapsed();
    outcome
}

/// What the sanity vector left wrong (empty: it worked).
fn sanity_failures(world: &World, vector: &Vector, call: &Call) -> Vec<String> {
    let mut failed = Vec::new();
    let read = |file: &str| std::fs::read(world.ws.join(file)).unwrap_or_default();
    for check in vector.checks {
        let ok = match *check {
            Check::FileIs(file, text) => read(file) == text.as_bytes(),
            Check::FileStarts(file, text) => read(file).starts_with(text.as_bytes()),
            Check::SameAsHost(file, host) => {
                std::fs::read(host).is_ok_and(|h| !h.is_empty() && h == read(file))
            }
            Check::SizeOfHost(file, host) => std::fs::metadata(host)
                .is_ok_and(|m| String::from_utf8_lossy(&read(file)).trim() == m.len().to_string()),
            Check::Commits(n) => Command::new("git")
                .args(["rev-list", "--count", "HEAD"])
                .current_dir(&world.ws)
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == n.to_string()),
            _ => true,
        };
        if !ok {
            failed.push(format!("{check:?} not met"));
        }
    }
    if !failed.is_empty() {
        failed.push(format!(
            "the call ended with {}; printed {}",
            call.ended,
            String::from_utf8_lossy(&call.printed)
                .chars()
                .take(600)
                .collect::<String>()
        ));
    }
    failed
}

/// The vectors selected by `ESCAPE_ONLY` (all when unset).
fn selected(table: &'static [Vector]) -> Vec<&'static Vector> {
    let only = std::env::var("ESCAPE_ONLY").ok();
    let ids: Option<Vec<String>> = only.map(|s| {
        s.split(',')
            .map(|id| id.trim().to_ascii_uppercase())
            .collect()
    });
    table
        .iter()
        .filter(|v| {
            ids.as_ref()
                .is_none_or(|ids| ids.iter().any(|id| id == v.id))
        })
        .collect()
}

/// Runs the vectors on `ESCAPE_JOBS` threads (default 12); the outcomes in
/// table order.
fn run_all(list: &[&'static Vector], mode: &Mode) -> Vec<Outcome> {
    let jobs = std::env::var("ESCAPE_JOBS")
        .ok()
        .and_then(|j| j.parse::<usize>().ok())
        .unwrap_or(12)
        .clamp(1, 32);
    // The long ones first (jobs that wait out survivors, limits, victims),
    // so that the run does not end on a tail of them.
    let weight = |v: &Vector| match v.class {
        Class::Persistence | Class::Limit => 0,
        _ if v.needs.victim || v.needs.inbound => 1,
        _ => 2,
    };
    let mut order: Vec<usize> = (0..list.len()).collect();
    order.sort_by_key(|&i| weight(list[i]));
    let next = AtomicUsize::new(0);
    let results = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| {
                while let Some(&i) = order.get(next.fetch_add(1, Ordering::SeqCst)) {
                    let outcome = run_vector(list[i], mode);
                    results.lock().map(|mut r| r.push((i, outcome))).ok();
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_default();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, o)| o).collect()
}

/// The scoreboard: one line per vector, then the totals. Returns the ids
/// that escaped and the sanity ids that failed.
fn scoreboard(
    mode: &Mode,
    outcomes: &[Outcome],
    took: Duration,
) -> (Vec<&'static str>, Vec<&'static str>) {
    println!("\n== escape suite, {} (flags {:?})", mode.name, mode.flags);
    let (mut escaped, mut contained, mut skipped, mut broken, mut working) =
        (Vec::new(), 0, 0, Vec::new(), 0);
    for o in outcomes {
        let verdict = match (o.class, o.escaped) {
            (_, None) => {
                skipped += 1;
                "skipped"
            }
            (Class::Sanity, Some(false)) => {
                working += 1;
                "works"
            }
            (Class::Sanity, Some(true)) => {
                broken.push(o.id);
                "BROKEN"
            }
            (_, Some(true)) => {
                escaped.push(o.id);
                "ESCAPED"
            }
            (_, Some(false)) => {
                contained += 1;
                "contained"
            }
        };
        println!(
            "{:<4} {:<11} {:<9} {:>5.1} s  {}",
            o.id,
            format!("{:?}", o.class),
            verdict,
            o.took.as_secs_f64(),
            o.what
        );
        if o.escaped != Some(false) {
            for e in o.evidence.iter().take(4) {
                println!("       - {}", e.chars().take(300).collect::<String>());
            }
            if o.escaped.is_some() {
                println!("       - call ended: {}", o.ended);
            }
        }
    }
    let run = escaped.len() + contained;
    println!(
        "TOTAL ({}): {} of {} vectors escaped, {} contained, {} skipped; sanity {} of {} working; {:.1} s",
        mode.name,
        escaped.len(),
        run,
        contained,
        skipped,
        working,
        working + broken.len(),
        took.as_secs_f64()
    );
    (escaped, broken)
}

/// One whole-table run at a time: the three ignored tests would otherwise
/// run their vectors at once on a 2-core machine.
static SUITE: Mutex<()> = Mutex::new(());

fn run_suite(mode: &Mode) -> (Vec<&'static str>, Vec<&'static str>) {
    let _one_at_a_time = SUITE
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let mut list = selected(VECTORS);
    list.extend(selected(SANITY));
    let start = Instant::now();
    let outcomes = run_all(&list, mode);
    scoreboard(mode, &outcomes, start.elapsed())
}

#[test]
fn the_table_has_every_class_and_unique_ids() {
    assert!(VECTORS.len() >= 66, "{} escape vectors", VECTORS.len());
    let mut ids: Vec<&str> = VECTORS.iter().chain(SANITY).map(|v| v.id).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before, "duplicate ids");
    for class in [
        Class::Write,
        Class::Secret,
        Class::Network,
        Class::Process,
        Class::Persistence,
        Class::Kernel,
        Class::Limit,
    ] {
        assert!(
            VECTORS.iter().filter(|v| v.class == class).count() >= 3,
            "{class:?} has fewer than 3 vectors"
        );
    }
    assert!(
        SANITY
            .iter()
            .all(|v| v.class == Class::Sanity && !v.checks.is_empty())
    );
    for v in VECTORS.iter().chain(SANITY) {
        // A command holding the secrets' marker would leak it into the
        // call's result by itself (the result repeats the command).
        assert!(
            !v.command.contains(world::SECRET_PREFIX),
            "{} names the secret marker",
            v.id
        );
    }
    assert_eq!(vectors::by_id("W01").map(|v| v.class), Some(Class::Write));
}

/// Without the sandbox, one vector per judge escapes and every sanity check
/// works: the judges see real escapes, and the sanity checks real work.
#[test]
fn judges_see_escapes_without_the_sandbox() {
    let ids = [
        "W01", "W05", "W07", "W20", "W22", "W25", "S01", "S13", "S20", "S24", "N01", "N06", "N09",
        "N10", "N11", "P02", "P03", "P10", "X05", "K07",
    ];
    let mode = Mode::unsandboxed();
    let list: Vec<&'static Vector> = ids.iter().filter_map(|id| vectors::by_id(id)).collect();
    assert_eq!(list.len(), ids.len());
    let mut all = list.clone();
    all.extend(SANITY.iter());
    let start = Instant::now();
    let outcomes = run_all(&all, &mode);
    let (escaped, broken) = scoreboard(&mode, &outcomes, start.elapsed());
    let missed: Vec<&str> = ids
        .iter()
        .copied()
        .filter(|id| !escaped.contains(id))
        .collect();
    assert!(missed.is_empty(), "judges missed the escapes of {missed:?}");
    assert!(
        broken.is_empty(),
        "sanity checks failed without a sandbox: {broken:?}"
    );
}

/// The whole table without the sandbox: today's behaviour, as a scoreboard.
#[test]
#[ignore = "a scoreboard of the whole table without the sandbox, run on demand"]
fn scoreboard_without_the_sandbox() {
    let (_, broken) = run_suite(&Mode::unsandboxed());
    assert!(broken.is_empty(), "sanity checks failed: {broken:?}");
}

#[test]
#[ignore = "the whole table in the full tier: 0 escapes"]
fn tier_full_contains_every_vector() {
    let (escaped, broken) = run_suite(&Mode::tier("full"));
    assert!(
        escaped.is_empty() && broken.is_empty(),
        "escaped {escaped:?}; sanity broken {broken:?}"
    );
}

#[test]
#[ignore = "the whole table in the no-namespaces tier: nothing escapes but what that tier cannot close"]
fn tier_no_namespaces_contains_every_vector() {
    let (escaped, broken) = run_suite(&Mode::tier("no-namespaces"));
    let open: Vec<&str> = escaped
        .into_iter()
        .filter(|id| !NO_NAMESPACES_CANNOT_CLOSE.contains(id))
        .collect();
    assert!(
        open.is_empty() && broken.is_empty(),
        "escaped {open:?}; sanity broken {broken:?}"
    );
}

/// Vectors that still escape a tier, as listed with their commands in
/// `tests/escape/FINDINGS.md`; the regression test below allows these and
/// nothing else. Remove an id when its fix lands.
///
const KNOWN_ESCAPES: &[(&str, &[&str])] =
    &[("full", &[]), ("no-namespaces", NO_NAMESPACES_CANNOT_CLOSE)];

/// What the no-namespaces tier cannot close (SECURITY.md, "Not covered"):
/// W15 (`chmod`) and W16 (`touch -d`) of outside files. Landlock governs no
/// metadata change, seccomp cannot see the path a call names (and refusing
/// the calls outright breaks `chmod +x` in the workspace; `fchmod` on a
/// descriptor opened read-only, which Landlock allows everywhere, would
/// remain), and a seccomp user-notification supervisor would check a path
/// the caller can change after the check (`seccomp_unotify(2)`, "NOTES").
/// The full tier's read-only mounts close both.
const NO_NAMESPACES_CANNOT_CLOSE: &[&str] = &["W15", "W16"];

/// Whether `tool` runs a command in this tier here (user namespaces may be
/// blocked, Landlock missing).
///
/// The probe runs in a fresh folder below the temporary folder: with the
/// temporary folder itself as the workspace the full tier fails
/// (`ESTALE`: the workspace is where its private `/tmp` is mounted), and
/// the tier looked unavailable, so the tests that check for it skipped.
fn tier_runs(tier: &str) -> bool {
    static PROBES: AtomicUsize = AtomicUsize::new(0);
    let n = PROBES.fetch_add(1, Ordering::SeqCst);
    let dir = std::env::temp_dir().join(format!("escape-tier-probe-{}-{n}", std::process::id()));
    if std::fs::create_dir_all(&dir).is_err() {
        return false;
    }
    let runs = Command::new(BIN)
        .args(["--sandbox-tier", tier, "--workspace"])
        .arg(&dir)
        .args(["call", "bash_command", r#"{"command": "true"}"#])
        .current_dir(&dir)
        .stdin(Stdio::null())
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && serde_json::from_slice::<serde_json::Value>(&o.stdout)
                    .is_ok_and(|v| v["metadata"]["exit_code"] == 0)
        });
    let _ = std::fs::remove_dir(&dir);
    runs
}

/// Both tiers, whole table: nothing escapes but the known findings, and
/// every sanity check works. A tier this machine cannot run is reported
/// and left out (the CLI refuses to run commands there).
#[test]
fn tiers_contain_every_vector_but_the_known_findings() {
    if !knows_sandbox_flags() {
        println!("escape suite: this `tool` has no sandbox flags; nothing to check");
        return;
    }
    let mut failures = Vec::new();
    for (tier, known) in KNOWN_ESCAPES {
        if !tier_runs(tier) {
            println!("escape suite: the {tier} tier does not run on this machine; left out");
            continue;
        }
        let (escaped, broken) = run_suite(&Mode::tier(tier));
        let new: Vec<&str> = escaped
            .into_iter()
            .filter(|id| !known.contains(id))
            .collect();
        if !new.is_empty() || !broken.is_empty() {
            failures.push(format!("{tier}: escaped {new:?}; sanity broken {broken:?}"));
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

/// E5 (`tests/escape/FINDINGS.md`): a user other than root gets the full
/// tier, both by `auto` and when `--sandbox-tier full` asks for it. `tool`
/// marks itself not dumpable, and a not-dumpable process's `/proc/self`
/// files belong to root, so the supervisor could not write its own
/// `uid_map` and every non-root user silently got the weaker tier. Runs the
/// real binary as `nobody` through `setpriv` (skipped unless the test runs
/// as root with `setpriv` on the path, or where this machine blocks user
/// namespaces for root too). Judged by the tier the call reports, the
/// uid the command saw, and a file it wrote in the workspace.
#[test]
fn a_user_other_than_root_gets_the_full_tier() {
    if !rustix::process::geteuid().is_root() || !on_path("setpriv") || !tier_runs("full") {
        println!("escape suite: needs root, setpriv and a working full tier; skipped");
        return;
    }
    let dir = std::env::temp_dir().join(format!("escape-e5-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).expect("create the workspace");
    std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).expect("give it to nobody");
    for tier in ["auto", "full"] {
        let out = Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups", BIN])
            .args(["--sandbox-tier", tier, "--workspace"])
            .arg(&dir)
            .args([
                "call",
                "bash_command",
                &format!(r#"{{"command": "id -u; echo {tier} > wrote-{tier}"}}"#),
            ])
            .current_dir(&dir)
            .env("HOME", &dir)
            .env("XDG_STATE_HOME", dir.join(".state"))
            .env_remove("XDG_RUNTIME_DIR")
            .stdin(Stdio::null())
            .output()
            .expect("setpriv runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "{tier}: not JSON ({e}): {text} / {}",
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(v["metadata"]["sandbox"]["tier"], "full", "{tier}: {text}");
        assert_eq!(v["metadata"]["exit_code"], 0, "{tier}: {text}");
        assert_eq!(v["output"], "65534\n", "{tier}: {text}");
        let wrote = std::fs::read_to_string(dir.join(format!("wrote-{tier}")));
        assert_eq!(wrote.ok().as_deref(), Some(format!("{tier}\n").as_str()));
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs `tool --trace-id <trace> call <name> <args>` in `ws` with the
/// world's home and state, and returns the JSON result.
fn call_in(world: &World, trace: &str, name: &str, args: &serde_json::Value) -> serde_json::Value {
    let out = Command::new(BIN)
        .args(["--sandbox-tier", "full", "--trace-id", trace, "--workspace"])
        .arg(&world.ws)
        .args(["call", name, &args.to_string()])
        .current_dir(&world.ws)
        .env("HOME", &world.home)
        .env("XDG_STATE_HOME", &world.state)
        .env("XDG_RUNTIME_DIR", &world.run)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("PATH", tool_path())
        .stdin(Stdio::null())
        .output()
        .expect("tool runs");
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "{name}: not JSON ({e}): {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// E3 (`tests/escape/FINDINGS.md`): a background job gets the after-call
/// `.git` check when it ends, whether it exits or is killed. The job
/// points `.git/commondir` at a copy with a planted hook (vector W40's
/// plant; git would then run `evil/hooks/pre-commit` on the host) and, in
/// the killed case, sleeps until `job_kill`. Judged by `.git/commondir`
/// after the job's end (it must be gone), and by the note in the job's
/// output.
#[test]
fn a_background_job_gets_the_git_check_at_its_end() {
    if !knows_sandbox_flags() || !tier_runs("full") {
        println!("escape suite: the full tier does not run here (jobs need it); skipped");
        return;
    }
    let plant = "cp -r .git evil && printf '#!/bin/sh\\necho pwned\\n' > evil/hooks/pre-commit && \
                 chmod +x evil/hooks/pre-commit && echo ../evil > .git/commondir";
    for (how, tail) in [("exits", ""), ("killed", " && sleep 30")] {
        let world = World::new(&format!("E3{how}"), world::Needs::default());
        let trace = format!("e3-{how}-{}", world.tag);
        // The job registry refuses a private folder other users could enter.
        std::fs::set_permissions(
            world.state.join("agent-tools"),
            std::os::unix::fs::PermissionsExt::from_mode(0o700),
        )
        .expect("state folder mode");
        let started = call_in(
            &world,
            &trace,
            "bash_command",
            &serde_json::json!({"command": format!("{plant}{tail}"), "run_in_background": true}),
        );
        let id = started["metadata"]["job_id"]
            .as_str()
            .unwrap_or_else(|| panic!("{how}: no job id: {started}"))
            .to_owned();
        if how == "killed" {
            // Let the plant land before the kill.
            let until = Instant::now() + Duration::from_secs(10);
            while !world.ws.join(".git/commondir").exists() && Instant::now() < until {
                std::thread::sleep(Duration::from_millis(50));
            }
            assert!(
                world.ws.join(".git/commondir").exists(),
                "{how}: the plant never landed"
            );
            let killed = call_in(
                &world,
                &trace,
                "job_kill",
                &serde_json::json!({"job_id": id}),
            );
            assert!(killed["error"].is_null(), "{how}: {killed}");
        }
        let out = call_in(
            &world,
            &trace,
            "job_output",
            &serde_json::json!({"job_id": id, "wait": 20}),
        );
        let text = out["output"].as_str().unwrap_or_default();
        assert!(
            !world.ws.join(".git/commondir").exists(),
            "{how}: .git/commondir left after the job's end; job_output: {out}"
        );
        assert!(
            text.contains("[sandbox, at the job's end]") && text.contains("commondir"),
            "{how}: no note in the job's output: {out}"
        );
    }
}
