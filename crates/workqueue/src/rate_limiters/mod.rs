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
mod limiter;
mod token_bucket;

pub use combinators::{MaxOf, WithMaxWait};
pub use exponential::ItemExponentialBackoff;
pub use fast_slow::ItemFastSlow;
pub use limiter::RateLimiter;
pub use token_bucket::TokenBucket;

use crate::queue::Key;

/// The limiter controllers use unless they have a reason not to: the longer of per-key exponential
/// backoff (5 ms, 10 ms, 20 ms, ... capped at 1000 s) and an overall token bucket (10 qps, burst
/// 100). Same as client-go's `DefaultControllerRateLimiter`.
pub fn default_controller_rate_limiter<K: Key>() -> MaxOf<K> {
    MaxOf::new(vec![
        Box::new(ItemExponentialBackoff::default()),
        Box::new(TokenBucket::default()),
    ])
}
