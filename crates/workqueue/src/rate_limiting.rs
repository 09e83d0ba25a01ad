//! The queue a controller uses: a [`DelayingQueue`] whose retries are paced by a [`RateLimiter`].
//!
//! Mirrors client-go `util/workqueue/rate_limiting_queue.go`.

use std::sync::Arc;
use std::time::Duration;

use crate::delaying::DelayingQueue;
use crate::metrics::MetricsProvider;
use crate::queue::Key;
use crate::rate_limiters::RateLimiter;

/// A deduplicating work queue with delayed adds and rate-limited retries. Cheap to clone: clones
/// share one queue.
///
/// Use it with the canonical worker loop shown in the [crate docs](crate): `get`, reconcile, then
/// `forget` on success or `add_rate_limited` on failure, then always `done`.
///
/// # Guarantees
/// Everything [`Queue`](crate::Queue) and [`DelayingQueue`] guarantee, plus:
/// - [`add_rate_limited`](RateLimitingQueue::add_rate_limited) on a key that is already waiting
///   (ready, added while processing, or scheduled for later) does nothing: the limiter is not
///   consulted, so no token is spent, no failure is counted and no retry is recorded.
///
/// # Panics
/// [`new`](RateLimitingQueue::new) must be called within a Tokio runtime (see [`DelayingQueue`]).
///
/// # Differences from client-go
/// client-go's `AddRateLimited` always asks the limiter, then lets the queue deduplicate: a key
/// that is already waiting spends a bucket token, counts a failure (so its next real backoff is
/// doubled) and may be processed a second time when the delayed add fires. Here a waiting key is
/// going to be processed after the call anyway, so the call is a no-op. If that run fails too, the
/// worker calls `add_rate_limited` again and backoff continues from the right count.
pub struct RateLimitingQueue<K> {
    queue: DelayingQueue<K>,
    limiter: Arc<dyn RateLimiter<K>>,
}

impl<K> std::fmt::Debug for RateLimitingQueue<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RateLimitingQueue")
            .field("queue", &self.queue)
            .finish_non_exhaustive()
    }
}

impl<K> Clone for RateLimitingQueue<K> {
    fn clone(&self) -> Self {
        RateLimitingQueue {
            queue: self.queue.clone(),
            limiter: Arc::clone(&self.limiter),
        }
    }
}

impl<K: Key> RateLimitingQueue<K> {
    /// Creates an empty queue whose metrics are labelled `name` and whose retries are paced by
    /// `limiter` (usually [`default_controller_rate_limiter`](crate::default_controller_rate_limiter)).
    pub fn new(
        name: &str,
        limiter: impl RateLimiter<K>,
        metrics: Arc<dyn MetricsProvider>,
    ) -> Self {
        RateLimitingQueue {
            queue: DelayingQueue::new(name, metrics),
            limiter: Arc::new(limiter),
        }
    }

    /// Adds `key` once the limiter allows: call it when processing `key` failed.
    ///
    /// No-op (the limiter is not consulted) if the key is already waiting or the queue is shutting
    /// down. Two concurrent calls for the same key that is not waiting may both consult the limiter;
    /// in the worker loop only the worker holding the key calls this, so that does not arise.
    pub fn add_rate_limited(&self, key: K) {
        // Scheduled first, then waiting: the timer moves a key from its schedule into the queue
        // while holding the schedule lock, so a key in transit is seen in one place or the other.
        if self.queue.is_shutting_down()
            || self.queue.is_scheduled(&key)
            || self.queue.queue().is_waiting(&key)
        {
            return;
        }
        let delay = self.limiter.when(&key);
        self.queue.add_after(key, delay);
    }

    /// Clears the limiter's memory of `key`'s failures: call it when processing `key` succeeded.
    /// Does not remove the key from the queue.
    pub fn forget(&self, key: &K) {
        self.limiter.forget(key);
    }

    /// How many failures of `key` the limiter remembers (since its last [`forget`](Self::forget)).
    pub fn num_requeues(&self, key: &K) -> u32 {
        self.limiter.retries(key)
    }

    /// See [`DelayingQueue::add_after`].
    pub fn add_after(&self, key: K, delay: Duration) {
        self.queue.add_after(key, delay);
    }

    /// See [`Queue::add`](crate::Queue::add).
    pub fn add(&self, key: K) {
        self.queue.add(key);
    }

    /// See [`Queue::get`](crate::Queue::get).
    pub async fn get(&self) -> Option<K> {
        self.queue.get().await
    }

    /// See [`Queue::done`](crate::Queue::done).
    pub fn done(&self, key: &K) {
        self.queue.done(key);
    }

    /// See [`Queue::len`](crate::Queue::len). Keys waiting for a retry deadline are not counted.
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// See [`Queue::is_empty`](crate::Queue::is_empty).
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// See [`DelayingQueue::shut_down`].
    pub fn shut_down(&self) {
        self.queue.shut_down();
    }

    /// See [`Queue::shut_down_with_drain`](crate::Queue::shut_down_with_drain): waits up to
    /// `timeout` for keys being processed; waiting and scheduled keys are discarded, not processed.
    /// A [`shut_down`](RateLimitingQueue::shut_down) while this waits ends the wait at once.
    pub async fn shut_down_with_drain(&self, timeout: Duration) -> bool {
        self.queue.shut_down_with_drain(timeout).await
    }

    /// See [`Queue::is_shutting_down`](crate::Queue::is_shutting_down).
    pub fn is_shutting_down(&self) -> bool {
        self.queue.is_shutting_down()
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.queue.check_invariants();
    }
}

#[cfg(test)]
#[path = "rate_limiting_tests.rs"]
mod tests;
