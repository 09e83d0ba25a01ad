//! Per-key exponential backoff, client-go's `ItemExponentialFailureRateLimiter`.

use std::time::Duration;

use super::RateLimiter;
use super::failures::Failures;
use crate::queue::Key;

/// Per-key exponential backoff: the n-th failure (counting from 0) waits `base * 2^n`, capped at
/// `max`.
///
/// Why per key: one object that keeps failing must not slow the retries of healthy ones. Combine
/// with [`TokenBucket`](super::TokenBucket) in [`MaxOf`](super::MaxOf) to also cap the overall
/// retry rate, as [`default_controller_rate_limiter`](super::default_controller_rate_limiter) does.
///
/// # Guarantees
/// - Delays never decrease until [`forget`](RateLimiter::forget): when `2^n` or the product
///   overflows, the delay saturates to `max`, never to a wrapped tiny value.
#[derive(Debug)]
pub struct ItemExponentialBackoff<K> {
    base: Duration,
    max: Duration,
    failures: Failures<K>,
}

impl<K> ItemExponentialBackoff<K> {
    /// Backoff starting at `base` and doubling up to `max`.
    pub fn new(base: Duration, max: Duration) -> Self {
        ItemExponentialBackoff {
            base,
            max,
            failures: Failures::default(),
        }
    }
}

impl<K> Default for ItemExponentialBackoff<K> {
    /// client-go's controller default: 5 ms doubling up to 1000 s.
    fn default() -> Self {
        Self::new(Duration::from_millis(5), Duration::from_secs(1000))
    }
}

impl<K: Key> RateLimiter<K> for ItemExponentialBackoff<K> {
    fn when(&self, key: &K) -> Duration {
        let exponent = self.failures.record(key);
        if self.base.is_zero() {
            return Duration::ZERO;
        }
        1u32.checked_shl(exponent)
            .and_then(|factor| self.base.checked_mul(factor))
            .map_or(self.max, |delay| delay.min(self.max))
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

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn delays_double_from_base_up_to_cap() {
        let limiter = ItemExponentialBackoff::default();
        let delays: Vec<_> = (0..20).map(|_| limiter.when(&"a")).collect();
        let expected_ms = [
            5, 10, 20, 40, 80, 160, 320, 640, 1280, 2560, 5120, 10240, 20480, 40960,
        ];
        for (i, ms) in expected_ms.iter().enumerate() {
            assert_eq!(delays[i], *ms * MS, "failure {i}");
        }
        // 5 ms * 2^18 = 1310.72 s > 1000 s.
        assert_eq!(delays[17], 655_360 * MS);
        assert_eq!(delays[18], Duration::from_secs(1000));
        assert_eq!(delays[19], Duration::from_secs(1000));
        assert_eq!(limiter.retries(&"a"), 20);
    }

    #[test]
    fn overflow_saturates_to_cap() {
        let limiter =
            ItemExponentialBackoff::new(Duration::from_nanos(1), Duration::from_secs(1000));
        let last = (0..200).map(|_| limiter.when(&"a")).last();
        assert_eq!(
            last,
            Some(Duration::from_secs(1000)),
            "2^199 ns is far above the cap"
        );
        let limiter =
            ItemExponentialBackoff::new(Duration::from_secs(u64::MAX / 2 + 1), Duration::MAX);
        limiter.when(&"b");
        assert_eq!(
            limiter.when(&"b"),
            Duration::MAX,
            "a product that overflows saturates"
        );
    }

    #[test]
    fn forget_resets_to_base() {
        let limiter = ItemExponentialBackoff::default();
        limiter.when(&"a");
        limiter.when(&"a");
        limiter.forget(&"a");
        assert_eq!(limiter.retries(&"a"), 0);
        assert_eq!(limiter.when(&"a"), 5 * MS);
    }

    #[test]
    fn keys_back_off_independently() {
        let limiter = ItemExponentialBackoff::default();
        limiter.when(&"a");
        limiter.when(&"a");
        assert_eq!(limiter.when(&"b"), 5 * MS);
        assert_eq!(limiter.when(&"a"), 20 * MS);
        assert_eq!((limiter.retries(&"a"), limiter.retries(&"b")), (3, 1));
    }
}
