//! An overall rate limit for retries, client-go's `BucketRateLimiter`.

use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use super::RateLimiter;

/// A token bucket shared by all keys: holds up to `burst` tokens, refilled at `qps` per second.
/// Each [`when`](RateLimiter::when) takes one token; when the bucket is empty the caller is told to
/// wait until its token will have been refilled (tokens are reserved, like Go's
/// `rate.Limiter.Reserve`, so the n-th call past the burst waits n refill intervals).
///
/// Why: per-key backoff alone lets a mass failure (every object fails because the API server is
/// down) retry every key at once; the bucket caps the queue's overall retry rate.
///
/// # Deduplicated adds do not spend tokens
/// client-go's `AddRateLimited` asks the limiter before the queue deduplicates, so a key that is
/// already waiting still spends a token (and gets a backoff step) for nothing.
/// [`RateLimitingQueue::add_rate_limited`](crate::RateLimitingQueue::add_rate_limited) checks first
/// and does not ask the limiter at all for a key that is already waiting; see its docs.
///
/// Tokens are counted with integer nanoseconds on Tokio's clock, so delays are exact and tests can
/// use paused time.
#[derive(Debug)]
pub struct TokenBucket {
    /// Time to refill one token.
    interval: Duration,
    /// Time to refill the whole bucket: `interval * burst`.
    capacity: Duration,
    /// The instant at which the bucket will be full again if nobody takes a token; `None` or a past
    /// instant means it is full now. Tokens available at `now` = `burst - (full_at - now) / interval`,
    /// negative when tokens are reserved.
    full_at: Mutex<Option<Instant>>,
}

impl TokenBucket {
    /// A bucket of `burst` tokens refilled at `qps` tokens per second.
    ///
    /// # Panics
    /// If `qps` is not a positive, finite number, or `burst` is 0: both are programming errors.
    pub fn new(qps: f64, burst: u32) -> Self {
        assert!(
            qps.is_finite() && qps > 0.0,
            "TokenBucket: qps must be positive and finite"
        );
        assert!(burst > 0, "TokenBucket: burst must be at least 1");
        let interval = Duration::from_secs_f64(1.0 / qps);
        TokenBucket {
            interval,
            capacity: interval.saturating_mul(burst),
            full_at: Mutex::new(None),
        }
    }
}

impl Default for TokenBucket {
    /// client-go's controller default: 10 qps with a burst of 100.
    fn default() -> Self {
        TokenBucket::new(10.0, 100)
    }
}

impl<K> RateLimiter<K> for TokenBucket {
    fn when(&self, _key: &K) -> Duration {
        let now = Instant::now();
        let mut full_at = self.full_at.lock();
        let from = full_at.map_or(now, |at| at.max(now));
        let next = from + self.interval;
        *full_at = Some(next);
        // Taking this token leaves `burst - (next - now) / interval` tokens; below zero, wait for
        // the deficit to refill.
        (next - now).saturating_sub(self.capacity)
    }

    /// No-op: the bucket does not track keys.
    fn forget(&self, _key: &K) {}

    /// Always 0: the bucket does not track keys.
    fn retries(&self, _key: &K) -> u32 {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn when(bucket: &TokenBucket) -> Duration {
        RateLimiter::<&str>::when(bucket, &"any")
    }

    #[tokio::test(start_paused = true)]
    async fn burst_is_free_then_calls_wait_one_interval_more_each() {
        let bucket = TokenBucket::default();
        for i in 0..100 {
            assert_eq!(
                when(&bucket),
                Duration::ZERO,
                "call {i} is within the burst"
            );
        }
        assert_eq!(when(&bucket), 100 * MS);
        assert_eq!(when(&bucket), 200 * MS);
        assert_eq!(when(&bucket), 300 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_refill_at_qps() {
        let bucket = TokenBucket::new(10.0, 2);
        assert_eq!(when(&bucket), Duration::ZERO);
        assert_eq!(when(&bucket), Duration::ZERO);
        assert_eq!(when(&bucket), 100 * MS);
        // 100 ms pays back the reservation; 100 ms more refills one token.
        tokio::time::advance(200 * MS).await;
        assert_eq!(when(&bucket), Duration::ZERO);
        assert_eq!(when(&bucket), 100 * MS);
        // A long idle period refills at most `burst` tokens.
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(when(&bucket), Duration::ZERO);
        assert_eq!(when(&bucket), Duration::ZERO);
        assert_eq!(when(&bucket), 100 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn bucket_counts_no_retries() {
        let bucket = TokenBucket::default();
        when(&bucket);
        assert_eq!(RateLimiter::<&str>::retries(&bucket, &"any"), 0);
    }
}
