//! The worker loop of every controller here is kubegen-workqueue's [`kubegen_workqueue::workers`]
//! (`processNextWorkItem` / `handleErr` of the namespace controller, the garbage collector's
//! `attemptToDeleteWorker`, the deployment controller's `maxRetries` as [`Retries::AtMost`]);
//! this module names the queues and the drain time of this crate's controllers.

use std::{future::Future, sync::Arc, time::Duration};

use kubegen_workqueue::workers::{self, Workers};
use kubegen_workqueue::{Key, NoopMetrics, RateLimitingQueue, default_controller_rate_limiter};

use crate::Result;

pub(crate) use kubegen_workqueue::workers::{Next, Retries};

/// How long stopping waits for in-flight syncs.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// A controller's rate-limited queue, named for its metrics.
pub(crate) fn queue<K: Key>(name: &str) -> RateLimitingQueue<K> {
    RateLimitingQueue::new(
        name,
        default_controller_rate_limiter(),
        Arc::new(NoopMetrics),
    )
}

/// Spawns `count` workers taking keys from `queue` and passing them to `sync`.
pub(crate) fn spawn<K, F, Fut>(
    queue: RateLimitingQueue<K>,
    count: usize,
    retries: Retries,
    sync: F,
) -> Workers<K>
where
    K: Key + std::fmt::Debug,
    F: Fn(K) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Next>> + Send + 'static,
{
    workers::spawn(queue, count, retries, DRAIN_TIMEOUT, sync)
}
