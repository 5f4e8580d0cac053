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
    assert!(id.starts_with("job-") && id.len() == 20, "{id}");
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
