//! Rate limiters decide how long a failed key waits before its next attempt.
//!
//! A controller's worker calls [`RateLimitingQueue::add_rate_limited`](crate::RateLimitingQueue::add_rate_limited)
//! when a reconcile fails; the queue asks its [`RateLimiter`] for a delay and schedules the key.
//! Mirrors client-go `util/workqueue/default_rate_limiters.go`.
//!
//! Two kinds of limit combine well:
//! - per key ([`ItemExponentialBackoff`], [`ItemFastSlow`]): one object that keeps failing (a bad
//!   spec, missing RBAC) backs off without slowing the retries of healthy objects;
//! - overall ([`TokenBucket`]): caps the retry rate of the whole queue, so a mass failure (the API
//!   server is down) does not turn into a retry storm.
//!
//! [`MaxOf`] takes the longest delay of several limiters; [`WithMaxWait`] caps any limiter's
//! delay. [`default_controller_rate_limiter`] is client-go's default: exponential per key (5 ms
//! doubling to 1000 s) and a 10 qps bucket with a burst of 100, whichever is longer.

mod combinators;
mod exponential;
mod failures;
mod fast_slow;
mod token_bucket;

use std::sync::Arc;
use std::time::Duration;

pub use combinators::{MaxOf, WithMaxWait};
pub use exponential::ItemExponentialBackoff;
pub use fast_slow::ItemFastSlow;
pub use token_bucket::TokenBucket;

use crate::queue::Key;

/// Decides how long a key waits before it is retried, and remembers its failures.
pub trait RateLimiter<K>: Send + Sync + 'static {
    /// Records one more failure of `key` and returns how long it should wait before the next
    /// attempt.
    fn when(&self, key: &K) -> Duration;
    /// Forgets the failures of `key`: call it when the key was processed successfully, so its next
    /// failure starts from the shortest delay again.
    fn forget(&self, key: &K);
    /// How many failures of `key` are remembered (0 for limiters that do not count per key).
    fn retries(&self, key: &K) -> u32;
}

impl<K, R: RateLimiter<K> + ?Sized> RateLimiter<K> for Box<R> {
    fn when(&self, key: &K) -> Duration {
        (**self).when(key)
    }
    fn forget(&self, key: &K) {
        (**self).forget(key);
    }
    fn retries(&self, key: &K) -> u32 {
        (**self).retries(key)
    }
}

impl<K, R: RateLimiter<K> + ?Sized> RateLimiter<K> for Arc<R> {
    fn when(&self, key: &K) -> Duration {
        (**self).when(key)
    }
    fn forget(&self, key: &K) {
        (**self).forget(key);
    }
    fn retries(&self, key: &K) -> u32 {
        (**self).retries(key)
    }
}

/// The limiter controllers use unless they have a reason not to: the longer of per-key exponential
/// backoff (5 ms, 10 ms, 20 ms, ... capped at 1000 s) and an overall token bucket (10 qps, burst
/// 100). Same as client-go's `DefaultControllerRateLimiter`.
pub fn default_controller_rate_limiter<K: Key>() -> MaxOf<K> {
    MaxOf::new(vec![
        Box::new(ItemExponentialBackoff::default()),
        Box::new(TokenBucket::default()),
    ])
}
