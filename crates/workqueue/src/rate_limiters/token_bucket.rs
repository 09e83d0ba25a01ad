//! An overall rate limit for retries, client-go's `BucketRateLimiter`, on the one token bucket
//! of kubegen ([`kubegen_flowcontrol::TokenBucket`], shared with the REST client's QPS limit).

use std::time::Duration;

use kubegen_flowcontrol::InvalidRate;

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
/// # Differences from client-go
/// Invalid parameters are an error from [`new`](Self::new), not a bucket that silently never
/// limits (Go's `rate.Limiter` treats an infinite rate that way).
#[derive(Debug)]
pub struct TokenBucket {
    bucket: kubegen_flowcontrol::TokenBucket,
}

impl TokenBucket {
    /// A bucket of `burst` tokens refilled at `qps` tokens per second.
    ///
    /// # Errors
    /// [`InvalidRate`] when `qps` is not a finite number above zero, or `burst` is 0.
    pub fn new(qps: f64, burst: u32) -> Result<Self, InvalidRate> {
        let bucket = kubegen_flowcontrol::TokenBucket::new(qps, burst)?;
        Ok(TokenBucket { bucket })
    }
}

impl Default for TokenBucket {
    /// client-go's controller default: 10 qps with a burst of 100.
    fn default() -> Self {
        // Constants, exercised by the tests below.
        TokenBucket::new(10.0, 100).expect("10 qps with a burst of 100 is a valid bucket")
    }
}

impl<K> RateLimiter<K> for TokenBucket {
    fn when(&self, _key: &K) -> Duration {
        self.bucket.reserve()
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
    async fn bucket_counts_no_retries() {
        let bucket = TokenBucket::default();
        when(&bucket);
        assert_eq!(RateLimiter::<&str>::retries(&bucket, &"any"), 0);
    }

    #[test]
    fn invalid_parameters_are_a_construction_error() {
        assert!(TokenBucket::new(0.0, 100).is_err());
        assert!(TokenBucket::new(f64::NAN, 100).is_err());
        assert!(TokenBucket::new(10.0, 0).is_err());
    }
}
