//! [`RetryPolicy`]: when a model request is sent again.

use std::time::Duration;

/// When a request is sent again: only while nothing of an answer was read
/// (a connection error before the status line, HTTP 429, HTTP 5xx/529), at
/// most [`max_retries`](Self::max_retries) times, waiting `base_delay × 2^n`
/// (capped at `max_delay`) or the server's `retry-after` when it asks for
/// longer. A `retry-after` beyond `max_delay` is not waited for: the
/// [`RateLimited`](crate::ModelErrorKind::RateLimited) error is returned
/// with it. A stream that breaks after its first byte is never retried
/// (the turn's text may already have been shown).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Extra attempts after the first. Default 3.
    pub max_retries: u32,
    /// First wait. Default 500 ms.
    pub base_delay: Duration,
    /// Longest wait. Default 30 s.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The wait before retry number `attempt` (0-based), without a server hint.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(16));
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }
}
