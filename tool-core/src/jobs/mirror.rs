//! Jobs in a state store shared by several hosts (replicas of `tool serve`
//! behind a load balancer, one Redis store): see
//! [`JobRegistry::shared_by_hosts`].
//!
//! A job's processes and output ring are local to the host process that
//! started it. That host names itself in the job's record
//! ([`JobRecord::host`], a random id per process) and *mirrors* the job
//! into the store: every [`MIRROR_INTERVAL`], and once more when it ends,
//! it writes the field `out:<id>` of the trace's map with the job's status,
//! exit code, bytes written and the last [`MIRROR_TAIL_BYTES`] of its
//! output (with the absolute offset of their first byte), stamped with the
//! store's clock ([`StateStore::now_ms`](crate::state::StateStore::now_ms)).
//! That stamp is the host's heartbeat: a running job whose mirror is older
//! than [`HOST_SILENT`] reads as [`JobStatus::Lost`] (its host is gone).
//!
//! Every other host answers `job_list`, `job_output` and `job_kill` from the
//! store: output comes from the mirrored tail (what scrolled out of it
//! before it was read is counted as dropped), and a kill is a stop request
//! in the record ([`JobRecord::stop_requested`]) that the owning host's
//! mirror loop carries out within one interval.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use base64::Engine as _;
use serde::{Deserialize, Serialize};

use super::{
    JobRecord, JobRegistry, JobStatus, JobView, KILL_WAIT, failed, ring, ring::RingHeader,
    ring::RingRead, store_error,
};
use crate::result::ToolError;
use crate::state::StateKey;

/// How often a host writes the mirror of each of its running jobs: 500 ms.
pub const MIRROR_INTERVAL: Duration = Duration::from_millis(500);
/// How long a running job's mirror may go unwritten before other hosts
/// read the job as lost (its host is gone): 10 s, by the store's clock.
pub const HOST_SILENT: Duration = Duration::from_secs(10);
/// Output bytes a mirror holds: the last 32 KiB (base64 in the store, 43
/// KiB, under a `RedisStore` value's 64 KiB bound).
pub const MIRROR_TAIL_BYTES: usize = 32 * 1024;
/// How long a [`JobRegistry::kill`] of another host's job waits for that
/// host to report the end: [`KILL_WAIT`] and two mirror intervals (6 s).
pub const REMOTE_KILL_WAIT: Duration = KILL_WAIT.saturating_add(MIRROR_INTERVAL.saturating_mul(2));

/// What the owning host writes to `out:<id>`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(super) struct Mirror {
    status: JobStatus,
    exit_code: Option<i32>,
    signal: Option<i32>,
    /// Bytes the job has written in all.
    total: u64,
    /// Absolute offset of the first byte of `tail`.
    tail_start: u64,
    /// The last output bytes, base64.
    tail: String,
    /// When the host wrote this, by the store's clock (ms).
    at_ms: u64,
    /// When the output last changed, by the host's clock (ms).
    updated_ms: u64,
}

/// The store field of job `id`'s mirror.
pub(super) fn field(id: &str) -> String {
    format!("out:{id}")
}

/// This process's host id: `host-` and 16 hex digits, random, fixed for
/// the life of the process.
pub(super) fn host_id() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let mut bytes = [0_u8; 8];
        // Without a random source, the process id and start time: unique
        // enough among the replicas of one deployment.
        if getrandom::fill(&mut bytes).is_err() {
            bytes = u64::from(std::process::id())
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .wrapping_add(super::now_ms())
                .to_le_bytes();
        }
        format!("host-{:016x}", u64::from_le_bytes(bytes))
    })
}

/// One job this process mirrors.
struct Mirrored {
    jobs: JobRegistry,
    key: StateKey,
    id: String,
    /// A stop request is being carried out.
    stopping: bool,
}

fn mirrored() -> &'static Mutex<Vec<Mirrored>> {
    static LIST: OnceLock<Mutex<Vec<Mirrored>>> = OnceLock::new();
    LIST.get_or_init(Mutex::default)
}

/// Mirrors job `id` of `key` from now on, starting the mirror thread on
/// first use.
pub(super) fn follow(jobs: &JobRegistry, key: &StateKey, id: &str) {
    static THREAD: OnceLock<()> = OnceLock::new();
    if let Ok(mut list) = mirrored().lock() {
        list.push(Mirrored {
            jobs: jobs.clone(),
            key: key.clone(),
            id: id.to_owned(),
            stopping: false,
        });
    }
    THREAD.get_or_init(|| {
        let _ = std::thread::Builder::new()
            .name("job-mirror".into())
            .spawn(mirror_loop);
    });
}

/// Every [`MIRROR_INTERVAL`]: each followed job's mirror written, its stop
/// request carried out; ended jobs (mirrored once more) and forgotten ones
/// are dropped from the list. A store that fails is tried again next time.
fn mirror_loop() {
    loop {
        let round = Instant::now();
        let jobs: Vec<(JobRegistry, StateKey, String, bool)> = match mirrored().lock() {
            Ok(list) => list
                .iter()
                .map(|m| (m.jobs.clone(), m.key.clone(), m.id.clone(), m.stopping))
                .collect(),
            Err(_) => return,
        };
        for (jobs, key, id, stopping) in jobs {
            let outcome = jobs.publish(&key, &id);
            let mut drop_it = false;
            let mut stop = false;
            match outcome {
                Ok(Published::Ended) | Err(Gone) => drop_it = true,
                Ok(Published::Running { stop_requested }) => stop = stop_requested && !stopping,
                Ok(Published::Unwritten) => {}
            }
            if let Ok(mut list) = mirrored().lock() {
                if drop_it {
                    list.retain(|m| !(m.id == id && m.key == key));
                } else if stop {
                    for m in list.iter_mut().filter(|m| m.id == id && m.key == key) {
                        m.stopping = true;
                    }
                }
            }
            if stop {
                let _ = std::thread::Builder::new()
                    .name("job-stop".into())
                    .spawn(move || {
                        let _ = jobs.kill_here(&key, &id);
                    });
            }
        }
        std::thread::sleep(MIRROR_INTERVAL.saturating_sub(round.elapsed()));
    }
}

/// What one [`JobRegistry::publish`] did.
enum Published {
    /// Written; the job runs (and whether its record asks it to stop).
    Running { stop_requested: bool },
    /// Written; the job has ended: this was its last mirror.
    Ended,
    /// The store did not take it (tried again next round).
    Unwritten,
}

/// The job's record or output is gone: nothing more to mirror.
struct Gone;

impl JobRegistry {
    /// Writes job `id`'s mirror from its local output file.
    fn publish(&self, key: &StateKey, id: &str) -> Result<Published, Gone> {
        let record = match self.store.get(key, id) {
            Ok(Some(text)) => serde_json::from_str::<JobRecord>(&text).map_err(|_| Gone)?,
            Ok(None) => return Err(Gone),
            Err(_) => return Ok(Published::Unwritten),
        };
        let file = self.open_output(id).map_err(|_| Gone)?;
        let updated_ms = file
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(record.started_ms, |d| {
                u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
            });
        let total = ring::header(&file).map_err(|_| Gone)?.total;
        let from = total.saturating_sub(MIRROR_TAIL_BYTES as u64);
        let got = ring::read_since(&file, from, MIRROR_TAIL_BYTES).map_err(|_| Gone)?;
        let stop_requested = record.stop_requested;
        let view = self.view_of(record, got.header);
        let Ok(at_ms) = self.store.now_ms() else {
            return Ok(Published::Unwritten);
        };
        let mirror = Mirror {
            status: view.status,
            exit_code: view.exit_code,
            signal: view.signal,
            total: view.total_bytes,
            tail_start: got.start,
            tail: base64::engine::general_purpose::STANDARD.encode(&got.bytes),
            at_ms,
            updated_ms,
        };
        let Ok(text) = serde_json::to_string(&mirror) else {
            return Err(Gone);
        };
        if self.store.put(key, &field(id), &text).is_err() {
            return Ok(Published::Unwritten);
        }
        Ok(if view.status == JobStatus::Running {
            Published::Running { stop_requested }
        } else {
            Published::Ended
        })
    }

    /// The first mirror of a job this host just registered: running,
    /// nothing written yet. Another host reads the job from it at once.
    ///
    /// # Errors
    /// `failed` with the store's error: the start is refused then.
    pub(super) fn first_mirror(&self, key: &StateKey, record: &JobRecord) -> Result<(), ToolError> {
        let at_ms = self.store.now_ms().map_err(|e| store_error(&e))?;
        let mirror = Mirror {
            status: JobStatus::Running,
            exit_code: None,
            signal: None,
            total: 0,
            tail_start: 0,
            tail: String::new(),
            at_ms,
            updated_ms: record.started_ms,
        };
        let text = serde_json::to_string(&mirror).map_err(|e| failed(e.to_string()))?;
        self.store
            .put(key, &field(&record.id), &text)
            .map_err(|e| store_error(&e))
    }

    /// Whether `record`'s job runs on another host (of a registry shared by
    /// hosts): it is then read from its mirror.
    pub(super) fn is_remote(&self, record: &JobRecord) -> bool {
        self.shared && record.host.as_deref().is_some_and(|h| h != host_id())
    }

    /// The mirror of another host's job, with the view it gives: a running
    /// job whose mirror is older than [`HOST_SILENT`] (or missing) is lost.
    ///
    /// # Errors
    /// `failed` when the store cannot be read.
    pub(super) fn remote_view(
        &self,
        key: &StateKey,
        record: JobRecord,
    ) -> Result<(JobView, Option<Mirror>), ToolError> {
        let mirror: Option<Mirror> = self
            .store
            .get(key, &field(&record.id))
            .map_err(|e| store_error(&e))?
            .and_then(|t| serde_json::from_str(&t).ok());
        let now = self.store.now_ms().map_err(|e| store_error(&e))?;
        let silent = u64::try_from(HOST_SILENT.as_millis()).unwrap_or(u64::MAX);
        let view = match &mirror {
            Some(m) => JobView {
                status: if m.status == JobStatus::Running && now.saturating_sub(m.at_ms) > silent {
                    JobStatus::Lost
                } else {
                    m.status
                },
                exit_code: m.exit_code,
                signal: m.signal,
                total_bytes: m.total,
                record,
            },
            None => JobView {
                status: JobStatus::Lost,
                exit_code: None,
                signal: None,
                total_bytes: 0,
                record,
            },
        };
        Ok((view, mirror))
    }

    /// A remote job's output from `from`, at most `max` bytes, as a ring
    /// read: what the mirror's tail no longer holds is dropped.
    pub(super) fn remote_read(mirror: Option<&Mirror>, from: u64, max: usize) -> RingRead {
        let (tail, tail_start, total) = match mirror {
            Some(m) => (
                base64::engine::general_purpose::STANDARD
                    .decode(&m.tail)
                    .unwrap_or_default(),
                m.tail_start,
                m.total,
            ),
            None => (Vec::new(), 0, 0),
        };
        let start = from.max(tail_start).min(tail_start + tail.len() as u64);
        let skip = usize::try_from(start - tail_start).unwrap_or(usize::MAX);
        let bytes = tail
            .get(skip..)
            .map(|b| b[..b.len().min(max)].to_vec())
            .unwrap_or_default();
        RingRead {
            dropped: start.saturating_sub(from),
            bytes,
            start,
            header: RingHeader {
                total,
                end: None,
                capacity: MIRROR_TAIL_BYTES as u64,
            },
        }
    }

    /// When a remote job's output last changed (ms), from its mirror.
    pub(super) fn remote_updated_ms(mirror: Option<&Mirror>, record: &JobRecord) -> u64 {
        mirror.map_or(record.started_ms, |m| m.updated_ms)
    }

    /// Stops another host's job: a stop request in its record, then up to
    /// [`REMOTE_KILL_WAIT`] for that host to report the end.
    ///
    /// # Errors
    /// As [`view`](Self::view); `failed` when the host has not reported
    /// the end in time (the request stays; `job_output` shows the end).
    pub(super) fn kill_remote(&self, key: &StateKey, id: &str) -> Result<JobView, ToolError> {
        self.update(key, id, |r| r.stop_requested = true)?;
        let until = Instant::now() + REMOTE_KILL_WAIT;
        loop {
            let view = self.view(key, id)?;
            if view.status != JobStatus::Running {
                return Ok(view);
            }
            if Instant::now() >= until {
                return Err(failed(format!(
                    "Job {id} runs on another replica, which was asked to stop it and has not \
                     reported its end within {} s; the request stays. Check with job_output.",
                    REMOTE_KILL_WAIT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mirror(tail_start: u64, tail: &[u8]) -> Mirror {
        Mirror {
            status: JobStatus::Running,
            exit_code: None,
            signal: None,
            total: tail_start + tail.len() as u64,
            tail_start,
            tail: base64::engine::general_purpose::STANDARD.encode(tail),
            at_ms: 0,
            updated_ms: 0,
        }
    }

    #[test]
    fn a_remote_read_takes_what_the_tail_holds_and_counts_the_rest_as_dropped() {
        let m = mirror(100, b"abcdef");
        let read = |from, max| {
            let r = JobRegistry::remote_read(Some(&m), from, max);
            (String::from_utf8(r.bytes).unwrap(), r.start, r.dropped)
        };
        // Behind the tail: what scrolled out is dropped.
        assert_eq!(read(40, 100), ("abcdef".to_owned(), 100, 60));
        assert_eq!(read(103, 100), ("def".to_owned(), 103, 0));
        assert_eq!(read(100, 2), ("ab".to_owned(), 100, 0));
        assert_eq!(read(106, 100), (String::new(), 106, 0));
        // Nothing mirrored yet: nothing to read, nothing dropped.
        let r = JobRegistry::remote_read(None, 0, 10);
        assert_eq!((r.bytes.len(), r.dropped), (0, 0));
        assert!(field("job-1").starts_with("out:"));
        assert!(host_id().starts_with("host-") && host_id().len() == 21);
    }
}
