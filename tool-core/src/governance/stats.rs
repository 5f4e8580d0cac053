//! Per-tool call statistics and lifecycle events.
//!
//! Counters are atomics and the recent-duration window has one small lock
//! per tool, so concurrent calls never serialise on a registry-wide lock.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Serialize;
use serde_json::{Map, Value};

use crate::result::ToolError;

/// Durations kept for the percentiles: the last 100 calls.
pub const RECENT_WINDOW: usize = 100;

/// Live counters of one tool in one registry.
#[derive(Debug, Default)]
pub(crate) struct ToolStats {
    calls: AtomicU64,
    successes: AtomicU64,
    failures: AtomicU64,
    total_micros: AtomicU64,
    last_called: AtomicU64,
    repairs: AtomicU64,
    denials: AtomicU64,
    timeouts: AtomicU64,
    recent: Mutex<VecDeque<u64>>,
}

/// How a finished call ended, for statistics and events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CallPhase {
    /// The call was received and its arguments prepared.
    Pending,
    /// The tool is running (after any confirmation).
    Running,
    /// The tool returned a success.
    Succeeded,
    /// The tool (or argument handling) returned an error.
    Failed,
    /// Confirmation or URL scoping refused the call.
    Denied,
    /// The call ran past its timeout.
    TimedOut,
}

impl ToolStats {
    pub(crate) fn record(&self, phase: CallPhase, duration: Duration, repairs: usize) {
        let micros = u64::try_from(duration.as_micros()).unwrap_or(u64::MAX);
        self.calls.fetch_add(1, Ordering::Relaxed);
        if phase == CallPhase::Succeeded {
            self.successes.fetch_add(1, Ordering::Relaxed);
        } else {
            self.failures.fetch_add(1, Ordering::Relaxed);
        }
        match phase {
            CallPhase::Denied => {
                self.denials.fetch_add(1, Ordering::Relaxed);
            }
            CallPhase::TimedOut => {
                self.timeouts.fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
        if repairs > 0 {
            self.repairs.fetch_add(repairs as u64, Ordering::Relaxed);
        }
        self.total_micros.fetch_add(micros, Ordering::Relaxed);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        self.last_called.store(now, Ordering::Relaxed);
        if let Ok(mut recent) = self.recent.lock() {
            if recent.len() == RECENT_WINDOW {
                recent.pop_front();
            }
            recent.push_back(micros);
        }
    }

    pub(crate) fn snapshot(&self, name: &str) -> ToolStatsSnapshot {
        let calls = self.calls.load(Ordering::Relaxed);
        let successes = self.successes.load(Ordering::Relaxed);
        let total = self.total_micros.load(Ordering::Relaxed);
        let mut recent: Vec<u64> = self
            .recent
            .lock()
            .map(|r| r.iter().copied().collect())
            .unwrap_or_default();
        recent.sort_unstable();
        let pct = |p: usize| -> Option<Duration> {
            if recent.is_empty() {
                return None;
            }
            // Nearest-rank percentile.
            let rank = (p * recent.len()).div_ceil(100).max(1);
            Some(Duration::from_micros(recent[rank - 1]))
        };
        let last = self.last_called.load(Ordering::Relaxed);
        #[allow(
            clippy::cast_precision_loss,
            reason = "rates and averages are approximate by nature"
        )]
        ToolStatsSnapshot {
            name: name.to_owned(),
            call_count: calls,
            success_count: successes,
            failure_count: self.failures.load(Ordering::Relaxed),
            success_rate: if calls == 0 {
                0.0
            } else {
                successes as f64 / calls as f64
            },
            average_duration: Duration::from_micros(total.checked_div(calls).unwrap_or(0)),
            total_duration: Duration::from_micros(total),
            last_called: (last > 0).then_some(last),
            p50: pct(50),
            p95: pct(95),
            argument_repairs: self.repairs.load(Ordering::Relaxed),
            denials: self.denials.load(Ordering::Relaxed),
            timeouts: self.timeouts.load(Ordering::Relaxed),
        }
    }
}

/// A copy of one tool's statistics. Durations serialise as `{secs, nanos}`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolStatsSnapshot {
    /// Tool name.
    pub name: String,
    /// Calls that reached the tool's pipeline (after lookup).
    pub call_count: u64,
    /// Calls that ended without error.
    pub success_count: u64,
    /// Calls that ended with any error (including denials and timeouts).
    pub failure_count: u64,
    /// `success_count / call_count`, 0.0 before the first call.
    pub success_rate: f64,
    /// Mean wall time per call.
    pub average_duration: Duration,
    /// Sum of wall times.
    pub total_duration: Duration,
    /// Unix seconds of the latest call.
    pub last_called: Option<u64>,
    /// Median wall time over the last 100 calls (nearest rank).
    pub p50: Option<Duration>,
    /// 95th percentile wall time over the last 100 calls (nearest rank).
    pub p95: Option<Duration>,
    /// Argument repairs applied, summed over calls.
    pub argument_repairs: u64,
    /// Calls refused by confirmation or URL scoping.
    pub denials: u64,
    /// Calls stopped by their timeout.
    pub timeouts: u64,
}

/// Orders for [`ToolRegistry::top_tools`](crate::ToolRegistry::top_tools).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StatsOrder {
    /// Most calls first.
    CallCount,
    /// Highest success rate first (ties: more calls first).
    SuccessRate,
    /// Fastest average wall time first (the seed's "fastest tools"; this
    /// order used to put the slowest first, which is now
    /// [`SlowestFirst`](Self::SlowestFirst)).
    AverageDuration,
    /// Slowest average wall time first (where the time goes).
    SlowestFirst,
}

/// One lifecycle event of a call, sent to every [`ToolObserver`].
#[derive(Debug, Clone, Copy)]
#[non_exhaustive]
pub struct ToolEvent<'a> {
    /// Tool name.
    pub tool: &'a str,
    /// Registry-unique, increasing call number.
    pub call_id: u64,
    /// The context's trace id.
    pub trace_id: Option<&'a str>,
    /// The phase reached.
    pub phase: CallPhase,
    /// The arguments as the model sent them (secrets only as placeholders).
    pub arguments: &'a Map<String, Value>,
    /// Wall time since `Pending` (final phases only).
    pub duration: Option<Duration>,
    /// The error of a failed, denied or timed-out call (secrets masked).
    pub error: Option<&'a ToolError>,
}

/// Receives lifecycle events: pending → running → succeeded / failed / denied / timed out.
/// Called inline on the calling task: keep it quick (send to a channel for slow work).
pub trait ToolObserver: Send + Sync + 'static {
    /// One event.
    fn on_event(&self, event: &ToolEvent<'_>);
}

impl<F: Fn(&ToolEvent<'_>) + Send + Sync + 'static> ToolObserver for F {
    fn on_event(&self, event: &ToolEvent<'_>) {
        self(event);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_counts_and_percentiles() {
        let s = ToolStats::default();
        for ms in 1..=10u64 {
            s.record(CallPhase::Succeeded, Duration::from_millis(ms), 0);
        }
        s.record(CallPhase::TimedOut, Duration::from_millis(100), 1);
        s.record(CallPhase::Denied, Duration::from_millis(0), 0);
        let snap = s.snapshot("t");
        assert_eq!(
            (snap.call_count, snap.success_count, snap.failure_count),
            (12, 10, 2)
        );
        assert_eq!(
            (snap.timeouts, snap.denials, snap.argument_repairs),
            (1, 1, 1)
        );
        // Sorted: 0, 1..=10, 100 (12 values); nearest rank 6 is 5 ms.
        assert_eq!(snap.p50, Some(Duration::from_millis(5)));
        assert_eq!(snap.p95, Some(Duration::from_millis(100)));
        assert!((snap.success_rate - 10.0 / 12.0).abs() < 1e-9);
        assert_eq!(snap.total_duration, Duration::from_millis(155));
        assert!(snap.last_called.is_some());
    }

    #[test]
    fn window_keeps_last_hundred() {
        let s = ToolStats::default();
        for _ in 0..150 {
            s.record(CallPhase::Succeeded, Duration::from_millis(1), 0);
        }
        assert_eq!(s.recent.lock().unwrap().len(), RECENT_WINDOW);
    }
}
