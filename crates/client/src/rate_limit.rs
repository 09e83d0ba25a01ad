//! Client-side QPS/burst limit: a token bucket every request takes one token from.
//!
//! Mirrors client-go `util/flowcontrol` `NewTokenBucketRateLimiter` as used by `rest.Config.QPS`
//! and `Burst`.
//!
//! # Why off by default
//! Modern API servers protect themselves with priority and fairness and answer 429 with
//! `Retry-After`, which the client honours. A client-side limit on top mostly slows informers'
//! initial lists, so it is opt-in ([`crate::Config::rate_limit`]).

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Requests per second and burst size for [`crate::Config::rate_limit`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RateLimit {
    /// Sustained requests per second. Must be > 0.
    pub qps: f64,
    /// Requests allowed at once after a quiet period.
    pub burst: u32,
}

/// A token bucket whose tokens may go negative: a caller that finds no token reserves the next one
/// and sleeps until it is due, so waiters are served in arrival order without a queue.
#[derive(Debug)]
pub(crate) struct TokenBucket {
    qps: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// Available tokens. Invariant: `<= burst`; negative means reserved by sleeping callers.
    tokens: f64,
    /// When `tokens` was last refilled.
    refilled: Instant,
    /// Sum of all waits so far (exported by [`crate::Client::rate_limit_wait_total`]).
    total_wait: Duration,
}

impl TokenBucket {
    /// A full bucket. `qps` below a tiny positive value is raised to it (never divide by zero).
    pub(crate) fn new(qps: f64, burst: u32) -> TokenBucket {
        let burst = f64::from(burst.max(1));
        TokenBucket {
            qps: qps.max(1e-3),
            burst,
            state: Mutex::new(BucketState {
                tokens: burst,
                refilled: Instant::now(),
                total_wait: Duration::ZERO,
            }),
        }
    }

    /// Takes one token, sleeping until it is available. Returns how long the caller waited.
    pub(crate) async fn acquire(&self) -> Duration {
        let wait = self.reserve(Instant::now());
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        wait
    }

    /// Reserves one token at `now` and returns the delay until it is due.
    fn reserve(&self, now: Instant) -> Duration {
        let mut state = self.state.lock();
        let elapsed = now.saturating_duration_since(state.refilled).as_secs_f64();
        state.tokens = (state.tokens + elapsed * self.qps).min(self.burst);
        state.refilled = now;
        state.tokens -= 1.0;
        let wait = if state.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-state.tokens / self.qps)
        };
        state.total_wait += wait;
        wait
    }

    /// Total time callers have waited for tokens.
    pub(crate) fn total_wait(&self) -> Duration {
        self.state.lock().total_wait
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        assert!(self.state.lock().tokens <= self.burst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn burst_passes_then_requests_are_spaced_by_qps() {
        let bucket = TokenBucket::new(10.0, 3);
        for _ in 0..3 {
            assert_eq!(bucket.acquire().await, Duration::ZERO);
            bucket.check_invariants();
        }
        let before = Instant::now();
        assert_eq!(bucket.acquire().await, Duration::from_millis(100));
        assert_eq!(before.elapsed(), Duration::from_millis(100));
        assert_eq!(bucket.total_wait(), Duration::from_millis(100));
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_refills_while_idle_up_to_burst() {
        let bucket = TokenBucket::new(1.0, 2);
        bucket.acquire().await;
        bucket.acquire().await;
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(bucket.acquire().await, Duration::ZERO);
        assert_eq!(bucket.acquire().await, Duration::ZERO);
        bucket.check_invariants();
        assert_eq!(bucket.acquire().await, Duration::from_secs(1));
    }

    #[test]
    fn concurrent_reservations_queue_up() {
        let bucket = TokenBucket::new(2.0, 1);
        let now = Instant::now();
        assert_eq!(bucket.reserve(now), Duration::ZERO);
        assert_eq!(bucket.reserve(now), Duration::from_millis(500));
        assert_eq!(bucket.reserve(now), Duration::from_millis(1000));
    }
}
