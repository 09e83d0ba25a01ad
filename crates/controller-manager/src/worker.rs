//! The worker loop of every controller here is kubegen-workqueue's [`kubegen_workqueue::workers`]
//! (`processNextWorkItem` / `handleErr` of the namespace controller, the garbage collector's
//! `attemptToDeleteWorker`, the deployment controller's `maxRetries` as [`Retries::AtMost`]);
//! this module names the queues and the drain time of this crate's controllers, and [`run`] is
//! the runner every workload controller's `start` returns (`Run` of the Go controllers: workers
//! on each queue until the stop signal).

use std::{future::Future, sync::Arc, time::Duration};

use futures_util::future::BoxFuture;
use kubegen_workqueue::workers::{self, Workers};
use kubegen_workqueue::{Key, NoopMetrics, RateLimitingQueue, default_controller_rate_limiter};

use tokio::sync::watch;

use crate::Result;
use crate::context::{Runner, stopped};

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

/// A queue of keys and how a controller works it: the unit [`run`] starts and stops.
pub(crate) struct QueueLoop {
    queue: RateLimitingQueue<String>,
    workers: usize,
    retries: Retries,
    sync: SyncFn,
}

/// A controller's sync of one key, type-erased so that one runner can hold several.
type SyncFn = Arc<dyn Fn(String) -> BoxFuture<'static, Result<Next>> + Send + Sync>;

impl QueueLoop {
    /// `workers` workers taking keys from `queue` and passing them to `sync`; a failing key
    /// is retried as `retries` says.
    pub(crate) fn new<F, Fut>(
        queue: RateLimitingQueue<String>,
        workers: usize,
        retries: Retries,
        sync: F,
    ) -> QueueLoop
    where
        F: Fn(String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Next>> + Send + 'static,
    {
        let sync: SyncFn = Arc::new(move |key| Box::pin(sync(key)));
        QueueLoop {
            queue,
            workers,
            retries,
            sync,
        }
    }
}

/// The runner of a controller whose handlers are registered: its loops' workers until the
/// manager stops, then each loop stopped in turn (`Run`: `wait.Until(worker)` per worker, then
/// `queue.ShutDown()` once the stop channel closes). A controller that could not be built
/// (`loops` is an error) logs why, named `name`, and runs nothing.
pub(crate) fn run(
    name: &'static str,
    stop: watch::Receiver<bool>,
    loops: Result<Vec<QueueLoop>>,
) -> Runner {
    Box::pin(async move {
        let loops = match loops {
            Ok(loops) => loops,
            Err(e) => {
                tracing::warn!(error = %e, "the {name} controller cannot start");
                return;
            }
        };
        let running: Vec<_> = loops
            .into_iter()
            .map(|l| {
                let sync = l.sync;
                spawn(l.queue, l.workers, l.retries, move |key: String| sync(key))
            })
            .collect();
        stopped(stop).await;
        for workers in running {
            workers.stop().await;
        }
    })
}
