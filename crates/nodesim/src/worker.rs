//! The worker loop of the scheduler and the kubelet: take a Pod's key, sync it, and on failure
//! put it back rate limited, or after the delay the sync asked for. The same loop as
//! `kubegen-controller-manager`'s (`processNextWorkItem` / `handleErr` of client-go
//! controllers), which keeps its own private.

use std::{future::Future, sync::Arc, time::Duration};

use kubegen_workqueue::{NoopMetrics, RateLimitingQueue, default_controller_rate_limiter};
use tokio::task::JoinSet;

use crate::Result;

/// How long stopping waits for in-flight syncs.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

/// What a successful sync asks of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Next {
    /// Done with the key until its next event.
    Done,
    /// Look again after this long.
    After(Duration),
}

/// A queue of `namespace/name` keys, named for its metrics.
pub(crate) fn queue(name: &str) -> RateLimitingQueue<String> {
    RateLimitingQueue::new(
        name,
        default_controller_rate_limiter(),
        Arc::new(NoopMetrics),
    )
}

/// Running workers of one queue.
pub(crate) struct Workers {
    queue: RateLimitingQueue<String>,
    tasks: JoinSet<()>,
}

/// Spawns `count` workers taking keys from `queue` and passing them to `sync`; a failing key is
/// retried with backoff until it syncs.
pub(crate) fn spawn<F, Fut>(queue: RateLimitingQueue<String>, count: usize, sync: F) -> Workers
where
    F: Fn(String) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Next>> + Send + 'static,
{
    let sync = Arc::new(sync);
    let mut tasks = JoinSet::new();
    for _ in 0..count.max(1) {
        let (queue, sync) = (queue.clone(), Arc::clone(&sync));
        tasks.spawn(async move {
            while let Some(key) = queue.get().await {
                match sync(key.clone()).await {
                    Ok(Next::Done) => queue.forget(&key),
                    Ok(Next::After(delay)) => {
                        queue.forget(&key);
                        queue.add_after(key.clone(), delay);
                    }
                    Err(e) => {
                        tracing::debug!(key, error = %e, "sync failed; retrying");
                        queue.add_rate_limited(key.clone());
                    }
                }
                queue.done(&key);
            }
        });
    }
    Workers { queue, tasks }
}

impl Workers {
    /// Stops handing out keys, waits for in-flight syncs and for the workers.
    pub(crate) async fn stop(mut self) {
        self.queue.shut_down_with_drain(DRAIN_TIMEOUT).await;
        while self.tasks.join_next().await.is_some() {}
    }
}

/// `namespace/name` of a Pod.
pub(crate) fn key_of(pod: &k8s_openapi::api::core::v1::Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}
