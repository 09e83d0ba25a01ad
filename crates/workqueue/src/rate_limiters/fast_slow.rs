//! Fast then slow retries, client-go's `ItemFastSlowRateLimiter`.

use std::time::Duration;

use super::RateLimiter;
use super::failures::Failures;
use crate::queue::Key;

/// Per-key two-speed retry: the first `max_fast_attempts` failures of a key wait `fast`, later ones
/// wait `slow`.
///
/// Use case: a condition that usually clears quickly (a dependent object not created yet) deserves
/// a few quick retries, but polling it forever at that pace would waste API calls.
#[derive(Debug)]
pub struct ItemFastSlow<K> {
    fast: Duration,
    slow: Duration,
    max_fast_attempts: u32,
    failures: Failures<K>,
}

impl<K> ItemFastSlow<K> {
    /// Waits `fast` for the first `max_fast_attempts` failures of a key, `slow` afterwards.
    pub fn new(fast: Duration, slow: Duration, max_fast_attempts: u32) -> Self {
        ItemFastSlow {
            fast,
            slow,
            max_fast_attempts,
            failures: Failures::default(),
        }
    }
}

impl<K: Key> RateLimiter<K> for ItemFastSlow<K> {
    fn when(&self, key: &K) -> Duration {
        let failures = self.failures.record(key).saturating_add(1);
        if failures <= self.max_fast_attempts {
            self.fast
        } else {
            self.slow
        }
    }

    fn forget(&self, key: &K) {
        self.failures.forget(key);
    }

    fn retries(&self, key: &K) -> u32 {
        self.failures.get(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_attempts_then_slow_until_forget() {
        let (fast, slow) = (Duration::from_millis(5), Duration::from_secs(10));
        let limiter = ItemFastSlow::new(fast, slow, 3);
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays, [fast, fast, fast, slow, slow]);
        assert_eq!(limiter.retries(&"a"), 5);
        assert_eq!(limiter.when(&"b"), fast, "keys count separately");
        limiter.forget(&"a");
        assert_eq!(limiter.retries(&"a"), 0);
        assert_eq!(limiter.when(&"a"), fast);
    }
}
