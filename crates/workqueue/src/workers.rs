//! The worker loop a controller runs over its queue: take a key, sync it, and on failure put it
//! back rate limited, or after the delay the sync asked for (client-go controllers'
//! `processNextWorkItem` / `handleErr`, e.g. `pkg/controller/namespace/namespace_controller.go`).
//! Written once here for every controller that is not built on kubegen-runtime: the in-process
//! controller-manager's and the node simulator's scheduler and kubelet.
//!
//! A failing key is retried with backoff until it succeeds ([`Retries::Forever`]: most
//! controllers never give up on a key, as an event for it is not guaranteed to come again), or
//! at most some times and then dropped until its next event ([`Retries::AtMost`], the deployment
//! controller's `maxRetries`).

use std::{fmt::Display, future::Future, pin::Pin, sync::Arc, time::Duration};

use tokio::task::JoinSet;

use crate::queue::Key;
use crate::rate_limiting::RateLimitingQueue;

/// What a successful sync asks of the queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next {
    /// Done with the key until its next event.
    Done,
    /// Look again after this long (content still being removed, a Pod not ready yet).
    After(Duration),
}

/// How often a failing key is retried before it is dropped until its next event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retries {
    /// Until the sync succeeds.
    Forever,
    /// At most this many times.
    AtMost(u32),
}

/// The sync function of a controller.
type SyncFn<K, E> =
    Arc<dyn Fn(K) -> Pin<Box<dyn Future<Output = Result<Next, E>> + Send>> + Send + Sync>;

/// Running workers of one queue.
pub struct Workers<K> {
    queue: RateLimitingQueue<K>,
    tasks: JoinSet<()>,
    drain: Duration,
}

/// Spawns `count` (at least one) workers taking keys from `queue` and passing them to `sync`;
/// [`Workers::stop`] waits up to `drain` for the syncs in flight.
pub fn spawn<K, E, F, Fut>(
    queue: RateLimitingQueue<K>,
    count: usize,
    retries: Retries,
    drain: Duration,
    sync: F,
) -> Workers<K>
where
    K: Key + std::fmt::Debug,
    E: Display + 'static,
    F: Fn(K) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Next, E>> + Send + 'static,
{
    let sync: SyncFn<K, E> = Arc::new(move |key| Box::pin(sync(key)));
    let mut tasks = JoinSet::new();
    for _ in 0..count.max(1) {
        tasks.spawn(work(queue.clone(), retries, Arc::clone(&sync)));
    }
    Workers {
        queue,
        tasks,
        drain,
    }
}

impl<K: Key> Workers<K> {
    /// Stops handing out keys, waits for in-flight syncs (up to the drain time) and for the
    /// workers.
    pub async fn stop(mut self) {
        self.queue.shut_down_with_drain(self.drain).await;
        while self.tasks.join_next().await.is_some() {}
    }
}

async fn work<K: Key + std::fmt::Debug, E: Display>(
    queue: RateLimitingQueue<K>,
    retries: Retries,
    sync: SyncFn<K, E>,
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicU32, Ordering};

    use super::*;
    use crate::{ItemExponentialBackoff, NoopMetrics};

    fn fast_queue() -> RateLimitingQueue<String> {
        let backoff =
            ItemExponentialBackoff::new(Duration::from_millis(1), Duration::from_millis(5));
        RateLimitingQueue::new("test", backoff, Arc::new(NoopMetrics))
    }

    /// Runs workers until `calls` reaches `until` (or 5 s pass), then stops them; returns the
    /// number of syncs.
    async fn run(retries: Retries, fail_first: u32, until: u32) -> u32 {
        let queue = fast_queue();
        let calls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&calls);
        let workers = spawn(
            queue.clone(),
            2,
            retries,
            Duration::from_secs(1),
            move |_key: String| {
                let call = counted.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    if call <= fail_first {
                        Err("not yet")
                    } else {
                        Ok(Next::Done)
                    }
                }
            },
        );
        queue.add("ns/a".to_owned());
        for _ in 0..500 {
            if calls.load(Ordering::SeqCst) >= until {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        // Time for a retry that should not come.
        tokio::time::sleep(Duration::from_millis(50)).await;
        workers.stop().await;
        calls.load(Ordering::SeqCst)
    }

    #[tokio::test]
    async fn a_failing_key_is_retried_until_it_syncs() {
        assert_eq!(run(Retries::Forever, 3, 4).await, 4);
    }

    #[tokio::test]
    async fn a_key_is_dropped_after_its_retries() {
        // The first sync and two retries, all failing; then nothing until its next event.
        assert_eq!(run(Retries::AtMost(2), u32::MAX, 3).await, 3);
    }

    #[tokio::test]
    async fn a_sync_asking_to_look_again_gets_the_key_back() {
        let queue = fast_queue();
        let calls = Arc::new(AtomicU32::new(0));
        let counted = Arc::clone(&calls);
        let workers = spawn(
            queue.clone(),
            1,
            Retries::Forever,
            Duration::from_secs(1),
            move |_key: String| {
                let call = counted.fetch_add(1, Ordering::SeqCst) + 1;
                async move {
                    Ok::<_, &str>(if call == 1 {
                        Next::After(Duration::from_millis(5))
                    } else {
                        Next::Done
                    })
                }
            },
        );
        queue.add("ns/a".to_owned());
        for _ in 0..500 {
            if calls.load(Ordering::SeqCst) >= 2 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        workers.stop().await;
        assert_eq!(calls.load(Ordering::SeqCst), 2);
    }
}
