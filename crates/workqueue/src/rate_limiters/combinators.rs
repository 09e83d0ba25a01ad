//! Limiters built from other limiters: client-go's `MaxOfRateLimiter` and
//! `WithMaxWaitRateLimiter`.

use std::time::Duration;

use super::RateLimiter;

/// Asks every inner limiter and waits the longest of their delays.
///
/// Every inner limiter is consulted on each call (so each records the failure), and `forget`
/// reaches all of them. [`retries`](RateLimiter::retries) is the largest inner count.
pub struct MaxOf<K> {
    limiters: Vec<Box<dyn RateLimiter<K>>>,
}

impl<K> MaxOf<K> {
    /// Combines `limiters`; with none, every delay is zero.
    pub fn new(limiters: Vec<Box<dyn RateLimiter<K>>>) -> Self {
        MaxOf { limiters }
    }
}

impl<K: 'static> RateLimiter<K> for MaxOf<K> {
    fn when(&self, key: &K) -> Duration {
        self.limiters
            .iter()
            .map(|limiter| limiter.when(key))
            .max()
            .unwrap_or_default()
    }

    fn forget(&self, key: &K) {
        for limiter in &self.limiters {
            limiter.forget(key);
        }
    }

    fn retries(&self, key: &K) -> u32 {
        self.limiters
            .iter()
            .map(|limiter| limiter.retries(key))
            .max()
            .unwrap_or(0)
    }
}

/// Caps the delay of an inner limiter at `max_wait`.
///
/// Use case: exponential backoff with a high cap protects the API server, but some keys must be
/// retried at least every few minutes (a certificate about to expire).
#[derive(Debug)]
pub struct WithMaxWait<R> {
    inner: R,
    max_wait: Duration,
}

impl<R> WithMaxWait<R> {
    /// Waits as long as `inner` says, but never longer than `max_wait`.
    pub fn new(inner: R, max_wait: Duration) -> Self {
        WithMaxWait { inner, max_wait }
    }
}

impl<K, R: RateLimiter<K>> RateLimiter<K> for WithMaxWait<R> {
    fn when(&self, key: &K) -> Duration {
        self.inner.when(key).min(self.max_wait)
    }

    fn forget(&self, key: &K) {
        self.inner.forget(key);
    }

    fn retries(&self, key: &K) -> u32 {
        self.inner.retries(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rate_limiters::{
        ItemExponentialBackoff, ItemFastSlow, TokenBucket, default_controller_rate_limiter,
    };

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn max_of_takes_longest_delay_and_consults_all() {
        let limiter = MaxOf::new(vec![
            Box::new(ItemExponentialBackoff::new(MS, Duration::from_secs(1))),
            Box::new(ItemFastSlow::new(3 * MS, Duration::from_secs(2), 2)),
        ]);
        let delays: Vec<_> = (0..4).map(|_| limiter.when(&"a")).collect();
        assert_eq!(
            delays,
            [
                3 * MS,
                3 * MS,
                Duration::from_secs(2),
                Duration::from_secs(2)
            ]
        );
        assert_eq!(limiter.retries(&"a"), 4);
        limiter.forget(&"a");
        assert_eq!(limiter.retries(&"a"), 0);
        assert_eq!(
            limiter.when(&"a"),
            3 * MS,
            "forget reached every inner limiter"
        );
    }

    #[test]
    fn max_of_nothing_never_waits() {
        let limiter = MaxOf::<&str>::new(Vec::new());
        assert_eq!(limiter.when(&"a"), Duration::ZERO);
        assert_eq!(limiter.retries(&"a"), 0);
    }

    #[test]
    fn with_max_wait_caps_inner_delay() {
        let limiter = WithMaxWait::new(
            ItemExponentialBackoff::new(MS, Duration::from_secs(100)),
            5 * MS,
        );
        let delays: Vec<_> = (0..5).map(|_| limiter.when(&"a")).collect();
        assert_eq!(delays, [MS, 2 * MS, 4 * MS, 5 * MS, 5 * MS]);
        assert_eq!(limiter.retries(&"a"), 5);
        limiter.forget(&"a");
        assert_eq!(limiter.when(&"a"), MS);
    }

    #[tokio::test(start_paused = true)]
    async fn default_limiter_is_exponential_until_bucket_runs_dry() {
        let limiter = default_controller_rate_limiter::<u32>();
        assert_eq!(limiter.when(&1), 5 * MS);
        assert_eq!(limiter.when(&1), 10 * MS);
        assert_eq!(limiter.when(&1), 20 * MS);
        assert_eq!(limiter.retries(&1), 3);
        // 97 more distinct keys use up the burst of 100 ...
        for key in 2..99 {
            assert_eq!(limiter.when(&key), 5 * MS);
        }
        // ... after which the bucket's delay dominates the 5 ms first backoff.
        assert_eq!(limiter.when(&1000), 100 * MS);
        assert_eq!(limiter.when(&1001), 200 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn token_bucket_composes_through_box() {
        let boxed: Box<dyn RateLimiter<&str>> =
            Box::new(TokenBucket::new(1.0, 1).unwrap_or_else(|e| panic!("{e}")));
        assert_eq!(boxed.when(&"a"), Duration::ZERO);
        assert_eq!(boxed.when(&"a"), Duration::from_secs(1));
    }
}
