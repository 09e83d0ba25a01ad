//! [`TokenBucket`]: at most `qps` acquisitions per second on average, `burst` at once.
//!
//! Mirrors client-go `util/flowcontrol/throttle.go` (`NewTokenBucketRateLimiter`), which wraps
//! `golang.org/x/time/rate`. Used by the REST client's QPS limit and by the workqueue's overall
//! retry limiter.
//!
//! # How the bucket is counted
//! Instead of a token count refreshed by a timer, the bucket keeps one number: the instant at which
//! it will be full again if nobody takes a token (`full_at`). At `now` it holds
//! `burst - (full_at - now) / interval` tokens (never more than `burst`). Taking a token moves
//! `full_at` one interval later; when that leaves fewer than zero tokens, the caller must wait for
//! the deficit to refill. So tokens are *reserved*, as with Go's `rate.Limiter.Reserve`: the n-th
//! caller past the burst waits n intervals, callers are served in arrival order without a queue,
//! and the one number fits in an atomic (no lock, even under contention).
//!
//! Time is integer nanoseconds on Tokio's clock, so waits are exact and tests can pause time.
//!
//! # Differences from client-go
//! - Invalid parameters are an error ([`InvalidRate`]) instead of a silently unlimited or
//!   panicking bucket: client-go's `NewTokenBucketRateLimiter` accepts any float.
//! - A rate above 10⁹ per second rounds to a zero interval and never waits.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

/// Parameters no bucket can honour: `qps` must be a finite number above zero and `burst` at
/// least 1.
#[derive(Clone, Copy, Debug, PartialEq, thiserror::Error)]
#[error(
    "invalid token bucket (qps {qps}, burst {burst}): qps must be a finite number above 0 and burst at least 1"
)]
pub struct InvalidRate {
    /// The rejected rate.
    pub qps: f64,
    /// The rejected burst.
    pub burst: u32,
}

/// A token bucket that holds up to `burst` tokens and refills `qps` tokens per second.
///
/// # Guarantees
/// - A full bucket lets `burst` acquisitions through at once.
/// - Past the burst, acquisitions are spaced one interval (`1 / qps`) apart, in arrival order.
/// - An idle bucket refills to `burst`, never beyond.
#[derive(Debug)]
pub struct TokenBucket {
    /// Nanoseconds to refill one token: `1e9 / qps`, rounded.
    interval: u64,
    /// Nanoseconds to refill the whole bucket: `interval * burst`.
    capacity: u128,
    /// What the nanosecond offsets below count from (the bucket's creation).
    origin: Instant,
    /// Nanoseconds after `origin` at which the bucket will be full again if nobody takes a token.
    /// A value at or before "now" means the bucket is full. Saturates at `u64::MAX` (584 years
    /// after `origin`), so absurdly slow rates wait at most that long.
    full_at: AtomicU64,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens, refilled at `qps` tokens per second.
    ///
    /// # Errors
    /// [`InvalidRate`] when `qps` is not a finite number above zero (NaN, infinite, zero or
    /// negative) or `burst` is 0.
    pub fn new(qps: f64, burst: u32) -> Result<TokenBucket, InvalidRate> {
        if !(qps.is_finite() && qps > 0.0) || burst == 0 {
            return Err(InvalidRate { qps, burst });
        }
        // `as` saturates: a rate so slow that one interval exceeds u64 nanoseconds (584 years)
        // waits that long, and never panics.
        let interval = (1e9 / qps).round() as u64;
        Ok(TokenBucket {
            interval,
            capacity: u128::from(interval) * u128::from(burst),
            origin: Instant::now(),
            full_at: AtomicU64::new(0),
        })
    }

    /// Takes one token now and returns how long the caller must wait before using it (zero when
    /// one was available). The token is spent whether or not the caller then waits.
    pub fn reserve(&self) -> Duration {
        self.reserve_at(Instant::now())
    }

    /// Takes one token, sleeping until it is due. Returns how long the caller waited.
    pub async fn acquire(&self) -> Duration {
        let wait = self.reserve();
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
        wait
    }

    fn reserve_at(&self, now: Instant) -> Duration {
        let now = now.saturating_duration_since(self.origin).as_nanos();
        let mut next = 0;
        // The closure always returns `Some`, so `fetch_update` cannot fail.
        let _ = self
            .full_at
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |full_at| {
                next = u128::from(full_at).max(now) + u128::from(self.interval);
                Some(u64::try_from(next).unwrap_or(u64::MAX))
            });
        // Taking this token leaves `burst - (next - now) / interval` tokens; below zero, wait for
        // the deficit to refill.
        let wait = (next - now).saturating_sub(self.capacity);
        Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    fn bucket(qps: f64, burst: u32) -> TokenBucket {
        TokenBucket::new(qps, burst).unwrap_or_else(|e| panic!("{e}"))
    }

    #[tokio::test(start_paused = true)]
    async fn burst_is_free_then_each_reservation_waits_one_interval_more() {
        let bucket = bucket(10.0, 3);
        for i in 0..3 {
            assert_eq!(bucket.reserve(), Duration::ZERO, "reservation {i}");
        }
        assert_eq!(bucket.reserve(), 100 * MS);
        assert_eq!(bucket.reserve(), 200 * MS);
        assert_eq!(bucket.reserve(), 300 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn tokens_refill_at_qps_up_to_burst() {
        let bucket = bucket(10.0, 2);
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), 100 * MS);
        // 100 ms pays back the reservation; 100 ms more refills one token.
        tokio::time::advance(200 * MS).await;
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), 100 * MS);
        // A long idle period refills at most `burst` tokens.
        tokio::time::advance(Duration::from_secs(60)).await;
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), 100 * MS);
    }

    #[tokio::test(start_paused = true)]
    async fn acquire_sleeps_for_its_reservation() {
        let bucket = bucket(2.0, 1);
        assert_eq!(bucket.acquire().await, Duration::ZERO);
        let before = Instant::now();
        assert_eq!(bucket.acquire().await, 500 * MS);
        assert_eq!(before.elapsed(), 500 * MS);
        // The wait paid for the token: the next one is one interval away again.
        assert_eq!(bucket.reserve(), 500 * MS);
    }

    #[test]
    fn concurrent_reservations_queue_up_in_arrival_order() {
        let bucket = bucket(2.0, 1);
        let now = Instant::now();
        assert_eq!(bucket.reserve_at(now), Duration::ZERO);
        assert_eq!(bucket.reserve_at(now), 500 * MS);
        assert_eq!(bucket.reserve_at(now), 1000 * MS);
    }

    #[test]
    fn invalid_parameters_are_rejected() {
        for (qps, burst) in [
            (0.0, 1),
            (-1.0, 1),
            (f64::NAN, 1),
            (f64::INFINITY, 1),
            (f64::NEG_INFINITY, 1),
            (10.0, 0),
        ] {
            let err = TokenBucket::new(qps, burst).err();
            assert!(
                err.is_some_and(|e| e.burst == burst && (e.qps == qps || qps.is_nan())),
                "qps {qps} burst {burst} must be rejected"
            );
        }
    }

    #[test]
    fn extreme_rates_neither_panic_nor_wrap() {
        let fast = bucket(1e12, 1);
        let now = Instant::now();
        assert_eq!(fast.reserve_at(now), Duration::ZERO);
        assert_eq!(fast.reserve_at(now), Duration::ZERO, "rounds to no wait");
        let slow = bucket(1e-30, 1);
        assert_eq!(slow.reserve_at(now), Duration::ZERO, "the burst is free");
        assert_eq!(slow.reserve_at(now), Duration::from_nanos(u64::MAX));
    }
}
