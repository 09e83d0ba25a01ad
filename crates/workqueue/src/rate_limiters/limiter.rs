//! The one trait every rate limiter implements, in a file of its own so that the limiters beside it
//! and the queue above them import it without importing the folder that gathers them.

use std::sync::Arc;
use std::time::Duration;

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
