//! The worker loop both controllers run: take a key, sync it, retry failures with backoff.
//!
//! Mirrors `processNextWorkItem` / `handleErr` of the deployment controller
//! (`pkg/controller/deployment/deployment_controller.go`): a failed key is re-added rate
//! limited up to 15 times, then dropped until its next event.

use std::{future::Future, pin::Pin, sync::Arc, time::Duration};

use kubegen_workqueue::RateLimitingQueue;
use tokio::task::JoinSet;

use crate::Result;

/// Retries of one key before it is dropped (the deployment controller's `maxRetries`).
const MAX_RETRIES: u32 = 15;

/// How long stopping waits for in-flight syncs.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// The sync function of a controller.
pub(crate) type SyncFn =
    Arc<dyn Fn(String) -> Pin<Box<dyn Future<Output = Result<()>> + Send>> + Send + Sync>;

/// Running workers of one queue.
pub(crate) struct Workers {
    queue: RateLimitingQueue<String>,
    tasks: JoinSet<()>,
}

/// Spawns `count` workers taking keys from `queue` and passing them to `sync`.
pub(crate) fn spawn<F, Fut>(queue: RateLimitingQueue<String>, count: usize, sync: Arc<F>) -> Workers
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<()>> + Send + 'static,
{
    let sync: SyncFn = Arc::new(move |key| Box::pin(sync(key)));
    let mut tasks = JoinSet::new();
    for _ in 0..count {
        tasks.spawn(work(queue.clone(), Arc::clone(&sync)));
    }
    Workers { queue, tasks }
}

impl Workers {
    /// Stops handing out keys, waits for in-flight syncs (up to 30 s) and for the workers.
    pub(crate) async fn stop(mut self) {
        self.queue.shut_down_with_drain(DRAIN_TIMEOUT).await;
        while self.tasks.join_next().await.is_some() {}
    }
}

async fn work(queue: RateLimitingQueue<String>, sync: SyncFn) {
    while let Some(key) = queue.get().await {
        match sync(key.clone()).await {
            Ok(()) => queue.forget(&key),
            Err(e) if queue.num_requeues(&key) < MAX_RETRIES => {
                tracing::debug!(key, error = %e, "sync failed; retrying");
                queue.add_rate_limited(key.clone());
            }
            Err(e) => {
                tracing::warn!(key, error = %e, "sync failed; dropping the key out of the queue");
                queue.forget(&key);
            }
        }
        queue.done(&key);
    }
}
