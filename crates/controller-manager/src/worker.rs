//! The worker loop of every controller here: take a key, sync it, and on failure put it back
//! rate limited, or after the delay the sync asked for.
//!
//! Mirrors `processNextWorkItem` / `handleErr` of the namespace controller
//! (`pkg/controller/namespace/namespace_controller.go`) and the garbage collector's
//! `attemptToDeleteWorker`: a failing key is retried with backoff until it succeeds (these
//! controllers never give up on a key; an event for it is not guaranteed to come again). The
//! deployment controller gives up after 15 retries until the key's next event
//! ([`Retries::AtMost`], its `maxRetries`).

use std::{future::Future, pin::Pin, sync::Arc, time::Duration};

use kubegen_workqueue::{Key, NoopMetrics, RateLimitingQueue, default_controller_rate_limiter};
use tokio::task::JoinSet;

use crate::Result;

/// How long stopping waits for in-flight syncs.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// What a successful sync asks of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Done with the key until its next event.
    Done,
    /// Look again after this long (content still being removed, dependents still present).
    After(Duration),
}

/// How often a failing key is retried before it is dropped until its next event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Retries {
    /// Until the sync succeeds.
    Forever,
    /// At most this many times.
    AtMost(u32),
}

/// The sync function of a controller.
type SyncFn<K> = Arc<dyn Fn(K) -> Pin<Box<dyn Future<Output = Result<Next>> + Send>> + Send + Sync>;

/// A controller's rate-limited queue, named for its metrics.
pub(crate) fn queue<K: Key>(name: &str) -> RateLimitingQueue<K> {
    RateLimitingQueue::new(
        name,
        default_controller_rate_limiter(),
        Arc::new(NoopMetrics),
    )
}

/// Running workers of one queue.
pub(crate) struct Workers<K> {
    queue: RateLimitingQueue<K>,
    tasks: JoinSet<()>,
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
    let sync: SyncFn<K> = Arc::new(move |key| Box::pin(sync(key)));
    let mut tasks = JoinSet::new();
    for _ in 0..count.max(1) {
        tasks.spawn(work(queue.clone(), retries, Arc::clone(&sync)));
    }
    Workers { queue, tasks }
}

impl<K: Key> Workers<K> {
    /// Stops handing out keys, waits for in-flight syncs (up to 30 s) and for the workers.
    pub(crate) async fn stop(mut self) {
        self.queue.shut_down_with_drain(DRAIN_TIMEOUT).await;
        while self.tasks.join_next().await.is_some() {}
    }
}

async fn work<K: Key + std::fmt::Debug>(
    queue: RateLimitingQueue<K>,
    retries: Retries,
    sync: SyncFn<K>,
) {
    while let Some(key) = queue.get().await {
        match sync(key.clone()).await {
            Ok(Next::Done) => queue.forget(&key),
            Ok(Next::After(delay)) => {
                queue.forget(&key);
                queue.add_after(key.clone(), delay);
            }
            Err(e)
                if retries == Retries::Forever
                    || matches!(retries, Retries::AtMost(max) if queue.num_requeues(&key) < max) =>
            {
                tracing::debug!(?key, error = %e, "sync failed; retrying");
                queue.add_rate_limited(key.clone());
            }
            Err(e) => {
                tracing::warn!(?key, error = %e, "sync failed; dropping the key until its next event");
                queue.forget(&key);
            }
        }
        queue.done(&key);
    }
}
