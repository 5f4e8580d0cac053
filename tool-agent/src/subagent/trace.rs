//! Sub-traces: their ids and the store that keeps them for `continue_from`.

use std::collections::HashMap;
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use serde::{Deserialize, Serialize};

use crate::message::Message;

/// The id of the `seq`-th sub-trace of `parent`, started at `unix_secs`:
/// `{parent}@{mode}-{seq}-{YYYYMMDDHHMMSS}-001` (UTC), the seed's form.
///
/// ```
/// assert_eq!(
///     tool_agent::subagent::sub_trace_id("run-1", "explore", 2, 1_767_225_600),
///     "run-1@explore-2-20260101000000-001"
/// );
/// ```
pub fn sub_trace_id(parent: &str, mode: &str, seq: u64, unix_secs: i64) -> String {
    let stamp = chrono::DateTime::from_timestamp(unix_secs, 0)
        .map(|t| t.format("%Y%m%d%H%M%S").to_string())
        .unwrap_or_else(|| "00000000000000".to_owned());
    format!("{parent}@{mode}-{seq}-{stamp}-001")
}

/// One sub-agent's conversation and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredTrace {
    /// The sub-trace id.
    pub trace_id: String,
    /// The parent run's trace id.
    pub parent: String,
    /// `delegate`, `explore` or `evaluate`.
    pub mode: String,
    /// The first task it was given.
    pub task: String,
    /// Every message, the task first.
    #[serde(skip)]
    pub messages: Vec<Message>,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Line {
    Trace(StoredTrace),
    Message(Message),
}

/// Keeps sub-traces in memory and, optionally, as JSON Lines files in a
/// folder (`<id>.jsonl`: a `{"trace": {…}}` line, then one `{"message": …}`
/// line per message; rewritten whole, through a temporary file and a rename,
/// at each save), so a later process can `continue_from` one.
#[derive(Debug, Default)]
pub struct TraceStore {
    traces: Mutex<HashMap<String, StoredTrace>>,
    seq: Mutex<HashMap<String, u64>>,
    dir: Option<PathBuf>,
}

impl TraceStore {
    /// A store in memory only.
    pub fn in_memory() -> Self {
        Self::default()
    }

    /// A store that also writes each trace to `dir` (created if missing).
    ///
    /// # Errors
    /// The folder cannot be created.
    pub fn with_dir(dir: impl Into<PathBuf>) -> io::Result<Self> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir)?;
        Ok(Self {
            dir: Some(dir),
            ..Self::default()
        })
    }

    /// The next sub-trace id of `parent` in `mode` (sequence numbers count
    /// per parent, from 1), stamped with the current time, and ending in
    /// `-` and 32 lowercase hex digits from the operating system's random
    /// source (128 bits): [`sub_trace_id`]`-<random>`, so that one trace
    /// cannot name another's sub-trace by guessing its parent, sequence
    /// number and time.
    pub fn next_id(&self, parent: &str, mode: &str) -> String {
        let seq = {
            let mut seq = self.seq.lock().unwrap_or_else(PoisonError::into_inner);
            let n = seq.entry(parent.to_owned()).or_insert(0);
            *n += 1;
            *n
        };
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        format!("{}-{}", sub_trace_id(parent, mode, seq, now), random_hex())
    }

    /// Stores `trace` (replacing an earlier version) and writes its file.
    ///
    /// # Errors
    /// The file cannot be written (the trace is kept in memory anyway).
    pub fn save(&self, trace: StoredTrace) -> io::Result<()> {
        let written = match &self.dir {
            Some(dir) => write_file(&file_of(dir, &trace.trace_id), &trace),
            None => Ok(()),
        };
        self.traces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(trace.trace_id.clone(), trace);
        written
    }

    /// The trace `id`, from memory or the folder.
    pub fn get(&self, id: &str) -> Option<StoredTrace> {
        if let Some(t) = self
            .traces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
        {
            return Some(t.clone());
        }
        let dir = self.dir.as_ref()?;
        read_file(&file_of(dir, id))
            .ok()
            .filter(|t| t.trace_id == id)
    }

    /// The ids in memory, sorted.
    pub fn ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self
            .traces
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .keys()
            .cloned()
            .collect();
        ids.sort();
        ids
    }
}

/// 32 lowercase hex digits from the operating system's random source
/// (`getrandom`). Should it fail (no `getrandom(2)`, no `/dev/urandom`),
/// from the standard library's randomly keyed hasher over the time and a
/// counter: still unpredictable to a model, if not to a local attacker.
fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut bytes = [0_u8; 16];
    if getrandom::fill(&mut bytes).is_err() {
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        for half in bytes.chunks_mut(8) {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u64(COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
            if let Ok(now) = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH) {
                hasher.write_u128(now.as_nanos());
            }
            half.copy_from_slice(&hasher.finish().to_le_bytes());
        }
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `<dir>/<id>.jsonl`, with every character outside `[A-Za-z0-9@._-]` as `_`
/// (ids come from the host and the model: no path separators reach the file system).
fn file_of(dir: &Path, id: &str) -> PathBuf {
    let safe: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "@._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    let safe = if safe.starts_with('.') {
        format!("_{safe}")
    } else {
        safe
    };
    dir.join(format!("{safe}.jsonl"))
}

fn write_file(path: &Path, trace: &StoredTrace) -> io::Result<()> {
    let tmp = path.with_extension("jsonl.tmp");
    {
        let mut f = io::BufWriter::new(std::fs::File::create(&tmp)?);
        serde_json::to_writer(&mut f, &Line::Trace(trace.clone()))?;
        f.write_all(b"\n")?;
        for m in &trace.messages {
            serde_json::to_writer(&mut f, &Line::Message(m.clone()))?;
            f.write_all(b"\n")?;
        }
        f.into_inner()
            .map_err(io::IntoInnerError::into_error)?
            .sync_all()?;
    }
    std::fs::rename(&tmp, path)
}

fn read_file(path: &Path) -> io::Result<StoredTrace> {
    let f = io::BufReader::new(std::fs::File::open(path)?);
    let mut trace: Option<StoredTrace> = None;
    let mut messages = Vec::new();
    for line in f.lines() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Line>(&line)? {
            Line::Trace(t) => trace = Some(t),
            Line::Message(m) => messages.push(m),
        }
    }
    let mut trace =
        trace.ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no trace line"))?;
    trace.messages = messages;
    Ok(trace)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn traces_survive_a_new_store_on_the_same_folder() {
        let dir = tempfile::tempdir().unwrap();
        let store = TraceStore::with_dir(dir.path()).unwrap();
        let id = store.next_id("run/../1", "delegate");
        assert!(id.starts_with("run/../1@delegate-1-"), "{id}");
        let random = id.rsplit('-').next().unwrap();
        assert_eq!(random.len(), 32, "{id}");
        assert!(random.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        assert!(id.contains("-001-"), "{id}");
        let second = store.next_id("run/../1", "delegate");
        assert!(second.starts_with("run/../1@delegate-2-"));
        assert_ne!(
            second.rsplit('-').next(),
            Some(random),
            "fresh random parts"
        );
        let trace = StoredTrace {
            trace_id: id.clone(),
            parent: "run/../1".into(),
            mode: "delegate".into(),
            task: "t".into(),
            messages: vec![Message::user("t"), Message::assistant("done")],
        };
        store.save(trace.clone()).unwrap();
        let files: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(files.len(), 1, "one file, inside the folder: {files:?}");
        let again = TraceStore::with_dir(dir.path()).unwrap();
        assert_eq!(again.get(&id), Some(trace));
        assert_eq!(again.get("other"), None);
    }
}
