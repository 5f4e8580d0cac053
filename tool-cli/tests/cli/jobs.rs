//! Background jobs (`bash_command` with `run_in_background`, `job_output`,
//! `job_kill`, `job_list`) across `tool` processes of one trace: the job's
//! supervisor outlives the process that started it, and its status and
//! output live in the trace's private state.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::support::{TempDir, feed, json_lines, tool};

struct Session {
    ws: TempDir,
    state: TempDir,
    trace: String,
}

impl Session {
    fn new(trace: &str) -> Self {
        Self {
            ws: TempDir::new(),
            state: TempDir::new(),
            trace: trace.to_owned(),
        }
    }

    fn command(&self) -> std::process::Command {
        let mut cmd = tool();
        cmd.env("XDG_STATE_HOME", self.state.path()).args([
            "--workspace",
            self.ws.arg(),
            "--trace-id",
            &self.trace,
        ]);
        cmd
    }

    /// One `tool call` process.
    fn call(&self, name: &str, args: &Value) -> Value {
        self.call_with(&[], name, args)
    }

    /// One `tool call` process with `options` before `call`.
    fn call_with(&self, options: &[&str], name: &str, args: &Value) -> Value {
        let out = self
            .command()
            .args(options)
            .args(["call", name, &args.to_string()])
            .output()
            .expect("tool runs");
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "one JSON result ({e}): {} / {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    }

    /// One `tool batch` process running `calls`.
    fn batch(&self, calls: &[Value]) -> Vec<Value> {
        let input = calls
            .iter()
            .map(Value::to_string)
            .collect::<Vec<_>>()
            .join("\n");
        let mut cmd = self.command();
        cmd.arg("batch");
        json_lines(&feed(&mut cmd, &input))
    }

    fn start(&self, command: &str, extra: &Value) -> String {
        let mut args = json!({"command": command, "run_in_background": true});
        if let (Some(a), Some(e)) = (args.as_object_mut(), extra.as_object()) {
            a.extend(e.clone());
        }
        let started = self.call("bash_command", &args);
        assert!(started["error"].is_null(), "{started}");
        let id = started["metadata"]["job_id"]
            .as_str()
            .expect("metadata.job_id")
            .to_owned();
        assert!(
            started["output"].as_str().unwrap_or("").contains(&id),
            "{started}"
        );
        id
    }

    /// Polls `job_output` (a new process each time) until the job is no
    /// longer running or `limit` passes; returns every text read and the last result.
    fn until_ended(&self, id: &str, limit: Duration) -> (String, Value) {
        let until = Instant::now() + limit;
        let mut text = String::new();
        loop {
            let out = self.call("job_output", &json!({"job_id": id, "wait": 1}));
            assert!(out["error"].is_null(), "{out}");
            let body = out["output"].as_str().unwrap_or("");
            text.push_str(body.split_once('\n').map_or("", |(_, rest)| rest));
            // Ended and read to the end (a job may end before its first
            // page is read: the rest is still pending).
            let drained = out["metadata"]["pending_bytes"].as_u64().unwrap_or(0) == 0;
            if (out["metadata"]["status"] != "running" && drained) || Instant::now() > until {
                return (text, out);
            }
        }
    }
}

/// Processes whose command line holds `marker`.
fn processes_with(marker: &str) -> usize {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter(|e| {
            std::fs::read(e.path().join("cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
        })
        .count()
}

#[test]
fn a_job_started_by_one_process_is_read_by_later_ones() {
    let s = Session::new("t-jobs-read");
    let id = s.start(
        "for i in 1 2 3; do echo line $i; sleep 0.2; done; echo done >&2; exit 3",
        &json!({"description": "count to three"}),
    );
    assert!(id.starts_with("job-") && id.len() == 36, "{id}");
    let (text, last) = s.until_ended(&id, Duration::from_secs(30));
    assert_eq!(
        text.replace("(no new output)", ""),
        "line 1\nline 2\nline 3\ndone\n"
    );
    assert_eq!(last["metadata"]["status"], "exited", "{last}");
    assert_eq!(last["metadata"]["exit_code"], 3, "{last}");
    // Nothing is returned twice.
    let again = s.call("job_output", &json!({"job_id": id}));
    assert!(
        again["output"]
            .as_str()
            .unwrap()
            .ends_with("(no new output)"),
        "{again}"
    );
    // Another trace does not see the job.
    let out = tool()
        .env("XDG_STATE_HOME", s.state.path())
        .args([
            "--workspace",
            s.ws.arg(),
            "--trace-id",
            "t-jobs-someone-else",
        ])
        .args(["call", "job_output", &json!({"job_id": id}).to_string()])
        .output()
        .expect("tool runs");
    let v: Value = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!(v["error"]["kind"], "invalid_arguments", "{v}");
}

#[test]
fn a_job_is_killed_from_another_process_with_everything_it_started() {
    let s = Session::new("t-jobs-kill");
    let marker = "31337.25";
    let id = s.start(
        &format!("(sleep {marker} &) ; setsid sleep {marker} & echo started; sleep {marker}"),
        &json!({}),
    );
    let first = s.call("job_output", &json!({"job_id": id, "wait": 5}));
    assert!(
        first["output"].as_str().unwrap().contains("started"),
        "{first}"
    );
    assert!(processes_with(marker) >= 3, "the job's sleeps run");
    let killed = s.call("job_kill", &json!({"job_id": id}));
    assert!(killed["error"].is_null(), "{killed}");
    assert_eq!(killed["metadata"]["status"], "killed", "{killed}");
    let until = Instant::now() + Duration::from_secs(5);
    while processes_with(marker) > 0 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(processes_with(marker), 0, "every process of the job ended");
    // Killing again is harmless and says it already ended.
    let again = s.call("job_kill", &json!({"job_id": id}));
    assert_eq!(again["metadata"]["status"], "killed", "{again}");
}

#[test]
fn a_job_past_its_lifetime_is_stopped_and_says_so() {
    let s = Session::new("t-jobs-lifetime");
    let id = s.start("echo begun; sleep 31338", &json!({"timeout": 1}));
    let (text, last) = s.until_ended(&id, Duration::from_secs(30));
    assert!(text.contains("begun"), "{text}");
    assert_eq!(last["metadata"]["status"], "expired", "{last}");
    assert!(
        last["output"]
            .as_str()
            .unwrap()
            .contains("lifetime cap (1 s)"),
        "{last}"
    );
    assert_eq!(processes_with("31338"), 0);
}

#[test]
fn the_seventeenth_running_job_of_a_trace_is_refused_and_a_thousand_asked_for_start_sixteen() {
    let s = Session::new("t-jobs-cap");
    let calls: Vec<Value> = (0..1000)
        .map(|_| {
            json!({"name": "bash_command",
                   "arguments": {"command": "sleep 31339", "run_in_background": true}})
        })
        .collect();
    let started_at = Instant::now();
    let results = s.batch(&calls);
    assert_eq!(results.len(), 1000);
    // The 984 refusals are cheap: the whole batch stays well inside the
    // test budget.
    assert!(
        started_at.elapsed() < Duration::from_secs(60),
        "{:?}",
        started_at.elapsed()
    );
    let started: Vec<&str> = results
        .iter()
        .filter_map(|r| r["metadata"]["job_id"].as_str())
        .collect();
    assert_eq!(started.len(), 16, "{:?}", results.last());
    assert!(
        results[16..]
            .iter()
            .all(|r| r["error"]["kind"] == "denied" && r["metadata"]["job_id"].is_null()),
        "every call past the sixteenth is refused"
    );
    let refused = &results[999];
    assert_eq!(refused["error"]["kind"], "denied", "{refused}");
    let msg = refused["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("16 background jobs of this trace are running"),
        "{msg}"
    );
    assert!(msg.contains("job_kill"), "{msg}");
    let list = s.call("job_list", &json!({}));
    assert_eq!(list["metadata"]["jobs"].as_array().map(Vec::len), Some(16));
    let kills: Vec<Value> = started
        .iter()
        .map(|id| json!({"name": "job_kill", "arguments": {"job_id": id}}))
        .collect();
    let killed = s.batch(&kills);
    assert!(
        killed.iter().all(|k| k["metadata"]["status"] == "killed"),
        "{killed:?}"
    );
    assert_eq!(processes_with("31339"), 0);
    // A slot is free again.
    let again = s.start("true", &json!({}));
    assert!(again.starts_with("job-"));
}

#[test]
fn a_job_that_prints_without_end_keeps_one_mebibyte_and_says_what_was_dropped() {
    let s = Session::new("t-jobs-yes");
    let id = s.start("yes 'the same line'", &json!({}));
    std::thread::sleep(Duration::from_millis(1500));
    let out = s.call("job_output", &json!({"job_id": id}));
    assert!(out["error"].is_null(), "{out}");
    let dropped = out["metadata"]["dropped_bytes"].as_u64().unwrap();
    assert!(dropped > 0, "{out}");
    let body = out["output"].as_str().unwrap();
    assert!(body.len() <= 48 * 1024 + 200, "{}", body.len());
    assert!(
        out["notes"]
            .to_string()
            .contains("bytes of output were dropped"),
        "{out}"
    );
    let file = s
        .state
        .path()
        .join("agent-tools/job-output")
        .join(&id)
        .join("output");
    assert_eq!(
        std::fs::metadata(&file).expect("output file").len(),
        32 + (1 << 20)
    );
    let killed = s.call("job_kill", &json!({"job_id": id}));
    assert_eq!(killed["metadata"]["status"], "killed", "{killed}");
}

/// Every file below `dir` whose bytes contain `needle`.
fn files_holding(dir: &std::path::Path, needle: &str) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = e.path();
            let kind = e.file_type().expect("file type");
            if kind.is_dir() {
                todo.push(path);
            } else if kind.is_file()
                && std::fs::read(&path)
                    .is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle.as_bytes()))
            {
                found.push(path);
            }
        }
    }
    found
}

/// Review 27 F22 and F21: job output was stored in clear and masked only
/// with the reader's secrets, so a reader without `--secrets` saw the value,
/// and a value straddling the 48 KiB page cut reached the model in two
/// halves. The starting call's secrets now mask it before it is stored.
#[test]
fn a_jobs_secret_values_are_masked_before_they_are_stored() {
    let s = Session::new("t-jobs-secret");
    let secrets = s.ws.path().join("sec.json");
    std::fs::write(&secrets, r#"{"api": "Zq9SuperSecretValue42"}"#).unwrap();
    let with = ["--secrets", secrets.to_str().unwrap()];
    // 49 145 bytes, then the value across the first page cut (49 152).
    let started = s.call_with(
        &with,
        "bash_command",
        &json!({
            "command": "head -c 49145 /dev/zero | tr '\\0' x; echo '<secret>api</secret>'; echo end",
            "run_in_background": true
        }),
    );
    let id = started["metadata"]["job_id"]
        .as_str()
        .expect("job id")
        .to_owned();
    // Read by processes without the secrets.
    let (text, last) = s.until_ended(&id, Duration::from_secs(30));
    assert_eq!(last["metadata"]["status"], "exited", "{last}");
    assert!(!text.contains("Zq9") && !text.contains("Value42"), "{text}");
    assert!(
        text.contains("<secret>api</secret>\nend\n"),
        "{}",
        &text[text.len().saturating_sub(200)..]
    );
    assert_eq!(text.matches('x').count(), 49_145);
    assert_eq!(
        files_holding(s.state.path(), "Zq9SuperSecretValue42"),
        Vec::<std::path::PathBuf>::new()
    );
}

/// Review 27 F24: a running job's unfinished last line (a prompt) was held
/// back and the read said "(no new output)".
#[test]
fn a_running_jobs_unfinished_last_line_is_shown_and_marked() {
    let s = Session::new("t-jobs-prompt");
    let id = s.start("printf 'Continue? [y/N] '; sleep 60", &json!({}));
    let out = s.call("job_output", &json!({"job_id": id, "wait": 2}));
    assert_eq!(out["metadata"]["status"], "running", "{out}");
    assert!(
        out["output"]
            .as_str()
            .unwrap()
            .ends_with("\nContinue? [y/N] "),
        "{out}"
    );
    assert!(
        out["notes"].to_string().contains("unfinished line"),
        "{out}"
    );
    assert_eq!(out["metadata"]["pending_bytes"], 0, "{out}");
    let killed = s.call("job_kill", &json!({"job_id": id}));
    assert_eq!(killed["metadata"]["status"], "killed", "{killed}");
}

/// Review 27 F5: a 48 KiB page of short lines was cut again by the
/// registry's line budget and spilled; a page now fits the budget.
#[test]
fn a_page_of_short_lines_fits_the_output_budget() {
    let s = Session::new("t-jobs-seq");
    let id = s.start("seq 1 40000", &json!({}));
    let mut seen = 0;
    for _ in 0..60 {
        let out = s.call("job_output", &json!({"job_id": id, "wait": 1}));
        assert!(
            out["metadata"]["truncated"].is_null(),
            "{}",
            out["metadata"]
        );
        let body = out["output"].as_str().unwrap();
        let lines: Vec<&str> = body
            .lines()
            .skip(1)
            .filter(|l| *l != "(no new output)")
            .collect();
        assert!(lines.len() <= 1980, "{}", lines.len());
        for l in lines {
            seen += 1;
            assert_eq!(l, seen.to_string());
        }
        if seen == 40_000 {
            break;
        }
    }
    assert_eq!(seen, 40_000);
}

/// Review 27 F20 and F17: the start says the job has no network; a huge
/// `wait` is refused without printing 309 digits.
#[test]
fn a_started_job_says_it_has_no_network_and_bad_waits_are_short() {
    let s = Session::new("t-jobs-net");
    let started = s.call(
        "bash_command",
        &json!({"command": "true", "run_in_background": true}),
    );
    assert!(
        started["notes"]
            .to_string()
            .contains("This job has no network"),
        "{started}"
    );
    let out = s.call(
        "job_output",
        &json!({"job_id": started["metadata"]["job_id"], "wait": 1e308}),
    );
    assert_eq!(
        out["error"]["message"], "Invalid wait value: 1e308. Give seconds from 0 to 300.",
        "{out}"
    );
}

/// The first job id (`job-` and 32 hex digits) in `text`.
fn job_id_in(text: &str) -> String {
    text.match_indices("job-")
        .map(|(at, _)| &text[at..])
        .find_map(|rest| {
            let hex: String = rest[4..]
                .chars()
                .take_while(char::is_ascii_hexdigit)
                .collect();
            (hex.len() == 32).then(|| format!("job-{hex}"))
        })
        .unwrap_or_else(|| panic!("no job id in {text}"))
}

/// The text of an MCP `tools/call` result.
fn mcp_text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Review 27 F9: after `kill -9` of `tool serve --http`, the supervisors of
/// the jobs it started kept running with their commands, out of everyone's
/// reach. A job's supervisor now notices its host is gone, stops every
/// process of the job (SIGTERM, SIGKILL 2 s later) and records why. In both
/// the full sandbox tier (a PID namespace) and with the sandbox off.
#[test]
fn a_killed_servers_jobs_stop_within_seconds_and_say_why() {
    for (n, sandbox) in [["--sandbox", "off"], ["--sandbox-tier", "full"]]
        .iter()
        .enumerate()
    {
        let trace_hex = format!("5cf92f3577b34da6a3ce929d0e0e473{n}");
        let s = Session::new(&format!("mcp-trace-{trace_hex}"));
        let mut server = crate::mcp_sessions::serve(&s.ws, &s.state, sandbox);
        let marker = format!("3134{n}.75");
        // A loop writing a file that notes the SIGTERM it gets, a detached
        // (`setsid`) sleep, and a shell that ignores SIGTERM (only a
        // SIGKILL ends it).
        let command = format!(
            "setsid sleep {marker} & sh -c 'trap \"\" TERM; sleep {marker}; :' & \
             trap 'echo TERM >> terms; exit 0' TERM; \
             while :; do echo tick >> ticks; sleep 0.1; done"
        );
        let started = crate::mcp_sessions::stateless_call(
            &server.url,
            1,
            "bash_command",
            &json!({"command": command, "run_in_background": true}),
            Some(&format!("00-{trace_hex}-00f067aa0ba902b7-01")),
        );
        assert_eq!(started["isError"], false, "{sandbox:?}: {started}");
        let text = mcp_text(&started);
        assert!(text.contains("until this host process exits"), "{text}");
        let id = job_id_in(&text);
        let ticks = s.ws.path().join("ticks");
        let until = Instant::now() + Duration::from_secs(20);
        while processes_with(&marker) < 2 || !ticks.exists() {
            assert!(Instant::now() < until, "{sandbox:?}: the job never started");
            std::thread::sleep(Duration::from_millis(20));
        }
        // kill -9 of the host.
        server.child.kill().expect("SIGKILL");
        server.child.wait().expect("reaped");
        let killed = Instant::now();
        while processes_with(&marker) > 0 {
            assert!(
                killed.elapsed() < Duration::from_secs(5),
                "{sandbox:?}: the job's processes still run {:?} after the host was killed",
                killed.elapsed()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        let gone_after = killed.elapsed();
        // SIGTERM came first: the loop's trap ran.
        assert_eq!(
            std::fs::read_to_string(s.ws.path().join("terms")).unwrap_or_default(),
            "TERM\n",
            "{sandbox:?}"
        );
        let size = std::fs::metadata(&ticks).expect("ticks").len();
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(
            std::fs::metadata(&ticks).expect("ticks").len(),
            size,
            "{sandbox:?}: the loop still writes"
        );
        // A later process of the client's trace reads why it ended.
        let out = s.call("job_output", &json!({"job_id": id}));
        assert_eq!(out["metadata"]["status"], "host_exited", "{out}");
        assert!(
            out["output"]
                .as_str()
                .unwrap_or_default()
                .contains("stopped: the host process that started it exited"),
            "{out}"
        );
        eprintln!(
            "{sandbox:?}: every process of the job gone {gone_after:?} after kill -9 of the host"
        );
    }
}

/// The documented promise the host binding keeps: a job of a one-shot
/// `tool call` outlives that process, for later calls of the same trace.
#[test]
fn a_tool_call_job_outlives_the_process_that_started_it() {
    let s = Session::new("t-jobs-outlive");
    let marker = "31345.25";
    let id = s.start(&format!("sleep {marker}"), &json!({}));
    // Well past the host check (100 ms) and the grace (2 s).
    std::thread::sleep(Duration::from_secs(3));
    // The sleep, its supervisor and (in the full tier) the namespace's
    // first process: forks of the `tool call` whose command line holds it.
    assert!(processes_with(marker) >= 2, "the job still runs");
    let out = s.call("job_output", &json!({"job_id": id}));
    assert_eq!(out["metadata"]["status"], "running", "{out}");
    let killed = s.call("job_kill", &json!({"job_id": id}));
    assert_eq!(killed["metadata"]["status"], "killed", "{killed}");
}

/// Review 27 F13: stateless HTTP clients without a `traceparent` shared one
/// job owner, so any of them could list, read and kill the others' jobs.
/// Now such a client's job is reached only through its id (128 random
/// bits, returned only to the call that started it) and `job_list` lists
/// nothing for them; clients with a `traceparent` see only their trace's.
#[test]
fn http_clients_never_see_or_stop_each_others_jobs() {
    let s = Session::new("unused");
    let server = crate::mcp_sessions::serve(&s.ws, &s.state, &["--sandbox", "off"]);
    let mut n = 0;
    let mut call = |name: &str, args: Value, trace: Option<&str>| {
        n += 1;
        crate::mcp_sessions::stateless_call(&server.url, n, name, &args, trace)
    };
    let start = json!({"command": "sleep 31346.5", "run_in_background": true});
    // Two anonymous clients, A and B.
    let a_started = call("bash_command", start.clone(), None);
    assert_eq!(a_started["isError"], false, "{a_started}");
    let a_text = mcp_text(&a_started);
    let a_job = job_id_in(&a_text);
    assert_eq!(a_job.len(), 36, "128 random bits: {a_job}");
    assert!(a_text.contains("the job id is the only handle"), "{a_text}");
    let b_list = call("job_list", json!({}), None);
    assert_eq!(b_list["isError"], false, "{b_list}");
    assert!(
        !b_list.to_string().contains(&a_job),
        "B sees A's job: {b_list}"
    );
    assert!(
        mcp_text(&b_list).contains("No jobs are listed for a request without a client identity"),
        "{b_list}"
    );
    // B cannot guess A's id: a neighbour of it is unknown.
    let last = a_job.chars().last().expect("a digit");
    let neighbour = format!(
        "{}{}",
        &a_job[..a_job.len() - 1],
        if last == '0' { '1' } else { '0' }
    );
    for tool in ["job_output", "job_kill"] {
        let refused = call(tool, json!({"job_id": neighbour}), None);
        assert_eq!(refused["isError"], true, "{refused}");
        assert!(mcp_text(&refused).contains("No job"), "{refused}");
    }
    // A, holding its id, reads it: still running.
    let a_out = call("job_output", json!({"job_id": a_job}), None);
    assert!(mcp_text(&a_out).contains("running"), "{a_out}");
    // Clients with a traceparent: C lists its own job, D neither lists nor
    // reaches it, even by its id, and neither reaches A's.
    let c = "00-6af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
    let d = "00-7af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01";
    let c_job = job_id_in(&mcp_text(&call("bash_command", start.clone(), Some(c))));
    assert!(
        call("job_list", json!({}), Some(c))
            .to_string()
            .contains(&c_job)
    );
    let d_list = call("job_list", json!({}), Some(d));
    assert!(!d_list.to_string().contains(&c_job), "{d_list}");
    assert!(!d_list.to_string().contains(&a_job), "{d_list}");
    for (job, trace) in [(&c_job, Some(d)), (&c_job, None), (&a_job, Some(d))] {
        for tool in ["job_output", "job_kill"] {
            let refused = call(tool, json!({"job_id": job}), trace);
            assert_eq!(
                refused["isError"], true,
                "{tool} {job} {trace:?}: {refused}"
            );
            assert!(mcp_text(&refused).contains("No job"), "{refused}");
        }
    }
    // Both jobs still run (C's shell may still be starting its sleep).
    let until = Instant::now() + Duration::from_secs(10);
    while processes_with("31346.5") != 2 {
        assert!(
            Instant::now() < until,
            "{} sleeps",
            processes_with("31346.5")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Each owner stops its own.
    let a_kill = call("job_kill", json!({"job_id": a_job}), None);
    assert!(mcp_text(&a_kill).contains("killed"), "{a_kill}");
    let c_kill = call("job_kill", json!({"job_id": c_job}), Some(c));
    assert!(mcp_text(&c_kill).contains("killed"), "{c_kill}");
    let until = Instant::now() + Duration::from_secs(5);
    while processes_with("31346.5") > 0 {
        assert!(Instant::now() < until, "a killed job still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
}
