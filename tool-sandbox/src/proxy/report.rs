//! The hosts one call contacted and was refused, for its metadata.

use std::sync::Mutex;

use serde::Serialize;

/// Most distinct hosts each list of a [`NetworkReport`] records: 256.
/// Further hosts are counted in [`NetworkReport::omitted`], never stored, so a
/// command that tries a million names cannot grow the report.
pub const MAX_REPORTED_HOSTS: usize = 256;

/// The network activity of one sandboxed call, as the call's metadata
/// carries it (`network.contacted`, `network.refused`).
///
/// Each entry is `host:port` (IPv6 literals in brackets), deduplicated, in
/// the order first seen; each list holds at most [`MAX_REPORTED_HOSTS`].
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct NetworkReport {
    /// Hosts a connection was opened to (after every check passed).
    pub contacted: Vec<String>,
    /// Hosts refused by the policy (pattern, port or address), with the first
    /// refusal's one-line reason in [`NetworkReport::refusals`].
    pub refused: Vec<String>,
    /// The one-line reason of each entry of `refused`, same order: what the
    /// model is told.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub refusals: Vec<String>,
    /// How many records did not fit (a host beyond [`MAX_REPORTED_HOSTS`]
    /// distinct ones in its list); 0 normally.
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl NetworkReport {
    /// Whether nothing was contacted or refused.
    pub fn is_empty(&self) -> bool {
        self.contacted.is_empty() && self.refused.is_empty() && self.omitted == 0
    }
}

/// The report being filled by the proxy's connections.
#[derive(Debug, Default)]
pub(crate) struct Recorder {
    report: Mutex<NetworkReport>,
}

impl Recorder {
    pub(crate) fn contacted(&self, host: String) {
        let mut r = self.lock();
        if r.contacted.contains(&host) {
            return;
        }
        if r.contacted.len() >= MAX_REPORTED_HOSTS {
            r.omitted += 1;
        } else {
            r.contacted.push(host);
        }
    }

    pub(crate) fn refused(&self, host: String, why: String) {
        let mut r = self.lock();
        if r.refused.contains(&host) {
            return;
        }
        if r.refused.len() >= MAX_REPORTED_HOSTS {
            r.omitted += 1;
        } else {
            r.refused.push(host);
            r.refusals.push(why);
        }
    }

    pub(crate) fn snapshot(&self) -> NetworkReport {
        self.lock().clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, NetworkReport> {
        // A panic while holding the lock cannot leave the lists inconsistent
        // (each update is one push), so a poisoned lock is still usable.
        self.report
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_are_deduplicated_and_bounded() {
        let r = Recorder::default();
        r.contacted("a:443".into());
        r.contacted("a:443".into());
        r.refused("b:22".into(), "why".into());
        r.refused("b:22".into(), "why again".into());
        let snap = r.snapshot();
        assert_eq!(snap.contacted, ["a:443"]);
        assert_eq!(snap.refused, ["b:22"]);
        assert_eq!(snap.refusals, ["why"]);
        for i in 0..MAX_REPORTED_HOSTS + 10 {
            r.refused(format!("h{i}:443"), String::new());
        }
        let snap = r.snapshot();
        assert_eq!(snap.refused.len(), MAX_REPORTED_HOSTS);
        assert_eq!(snap.omitted, 11);
        assert_eq!(
            serde_json::to_value(NetworkReport::default()).unwrap(),
            serde_json::json!({"contacted": [], "refused": []})
        );
    }
}
