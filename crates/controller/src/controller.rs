//! The controller loop: informer events in, namespaces through a rate-limited workqueue, workers
//! calling [`Reconciler::reconcile`]. The counterpart of sample-controller's `controller.go`;
//! every piece of machinery comes from kubegen-cache and kubegen-workqueue.
//!
//! # Which events enqueue what
//! The key is a namespace, because the policy unit is the namespace (see [`crate::reconcile`]):
//! many events of one namespace collapse into one reconcile of it.
//! - WhiteList added or deleted: its namespace. Updated: its namespace only if
//!   `metadata.generation` changed ([`generation_changed`]), so the controller's own status writes
//!   do not loop.
//! - Deployment added, or updated with a new generation (its pod template changed): its namespace,
//!   if the WhiteList cache holds a list there (namespace index, no scan); a namespace without
//!   lists has nothing to enforce, and a list added later enqueues the namespace itself.
//!   Deployment status churn (replica counts) enqueues nothing. Deletions enqueue nothing: a
//!   deleted Deployment cannot violate anything.
//!
//! # Differences from sample-controller
//! sample-controller keys its queue by `namespace/name` of the primary object. Here several
//! primaries (WhiteLists) jointly decide about the same secondaries (Deployments), so the key is
//! what they share.
//!
//! # Shutdown
//! [`Controller::run_workers`] returns when its `stop` future completes: the queue stops handing
//! out keys, in-flight reconciles get `drain_timeout` to finish, still-queued keys are dropped
//! (the next leader's initial list re-enqueues every namespace with a WhiteList anyway).

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use k8s_openapi::api::apps::v1::Deployment;
use kube_core::Selector;
use kubegen_api::police::v1beta1::WhiteList;
use kubegen_cache::{
    DeletedObject, HandlerFns, HandlerRegistration, SharedIndexInformer, Synced, UpdateFilter,
    generation_changed, wait_for_cache_sync,
};
use kubegen_listers::police::v1beta1::WhiteListLister;
use kubegen_workqueue::{MetricsProvider, RateLimitingQueue, default_controller_rate_limiter};

use crate::error::Error;
use crate::metrics::{Metrics, Outcome};
use crate::reconcile::Reconciler;

/// Name of the workqueue, as it appears in the `workqueue_*` metrics.
pub const QUEUE_NAME: &str = "image-police";

/// Informer handlers, a workqueue and the reconciler, wired together.
pub struct Controller {
    /// Namespaces to reconcile.
    queue: RateLimitingQueue<String>,
    /// What a worker runs per key.
    reconciler: Reconciler,
    /// Handler registrations; synced once each handler has seen its informer's initial list.
    registrations: Vec<HandlerRegistration>,
    /// Counts reconcile outcomes and durations.
    metrics: Metrics,
}

impl Controller {
    /// Registers the event handlers on both informers (which must share the caches `reconciler`
    /// reads) and creates the queue.
    ///
    /// # Errors
    /// [`Error::HandlerRegistrationFailed`] if an informer was already shut down.
    pub fn new(
        whitelists: &SharedIndexInformer<WhiteList>,
        deployments: &SharedIndexInformer<Deployment>,
        reconciler: Reconciler,
        queue_metrics: Arc<dyn MetricsProvider>,
    ) -> Result<Controller, Error> {
        let queue =
            RateLimitingQueue::new(QUEUE_NAME, default_controller_rate_limiter(), queue_metrics);
        let whitelist_handler = {
            let (on_add, on_update, on_delete) = (queue.clone(), queue.clone(), queue.clone());
            HandlerFns::<WhiteList>::new()
                .on_add(move |list, _| enqueue_namespace(&on_add, list.as_ref()))
                .on_update(move |_, list| enqueue_namespace(&on_update, list.as_ref()))
                .on_delete(move |gone: &DeletedObject<WhiteList>| {
                    enqueue_namespace(&on_delete, gone.object().as_ref());
                })
        };
        let deployment_handler = {
            let (on_add, on_update) = (
                namespace_enqueuer(&queue, whitelists),
                namespace_enqueuer(&queue, whitelists),
            );
            HandlerFns::<Deployment>::new()
                .on_add(move |deployment, _| on_add(deployment))
                .on_update(move |_, deployment| on_update(deployment))
        };
        let register_failed = |source| Error::HandlerRegistrationFailed { source };
        let registrations = vec![
            whitelists
                .add_event_handler(UpdateFilter::new(generation_changed, whitelist_handler))
                .map_err(register_failed)?,
            deployments
                .add_event_handler(UpdateFilter::new(generation_changed, deployment_handler))
                .map_err(register_failed)?,
        ];
        let metrics = reconciler.metrics.clone();
        Ok(Controller {
            queue,
            reconciler,
            registrations,
            metrics,
        })
    }

    /// The queue, for tests and for metrics.
    pub fn queue(&self) -> &RateLimitingQueue<String> {
        &self.queue
    }

    /// Waits until both handlers have seen their informer's initial list.
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] on timeout.
    pub async fn wait_for_sync(&self, timeout: Duration) -> Result<(), Error> {
        let synced: Vec<&dyn Synced> = self
            .registrations
            .iter()
            .map(|r| r as &dyn Synced)
            .collect();
        wait_for_cache_sync(timeout, &synced)
            .await
            .map_err(|source| Error::CacheSyncFailed { source })
    }

    /// Runs `workers` workers until `stop` completes, then drains: no new keys are handed out
    /// and in-flight reconciles get `drain_timeout`. Returns whether they all finished in time.
    pub async fn run_workers(
        &self,
        workers: usize,
        stop: impl Future<Output = ()>,
        drain_timeout: Duration,
    ) -> bool {
        let mut handles = Workers(
            (0..workers)
                .map(|_| {
                    let (queue, reconciler, metrics) = (
                        self.queue.clone(),
                        self.reconciler.clone(),
                        self.metrics.clone(),
                    );
                    tokio::spawn(worker(queue, reconciler, metrics))
                })
                .collect(),
        );
        tracing::info!(workers, "workers started");
        stop.await;
        tracing::info!("stopping: draining in-flight reconciles");
        let drained = self.queue.shut_down_with_drain(drain_timeout).await;
        if drained {
            for handle in std::mem::take(&mut handles.0) {
                let _ = handle.await;
            }
        }
        tracing::info!(drained, "workers stopped");
        drained
    }
}

/// Worker tasks, aborted when dropped: if the future running them is dropped (leadership ended,
/// the caller gave up), no reconcile may keep running unsupervised.
struct Workers(Vec<tokio::task::JoinHandle<()>>);

impl Drop for Workers {
    fn drop(&mut self) {
        self.0.iter().for_each(tokio::task::JoinHandle::abort);
    }
}

/// Enqueues the namespace of `list` (a WhiteList always has one; the API server sets it).
fn enqueue_namespace(queue: &RateLimitingQueue<String>, list: &WhiteList) {
    if let Some(namespace) = list.metadata.namespace.as_deref() {
        queue.add(namespace.to_owned());
    }
}

/// A closure enqueuing a Deployment's namespace if it has a WhiteList, looked up in the lister's
/// namespace index.
fn namespace_enqueuer(
    queue: &RateLimitingQueue<String>,
    whitelists: &SharedIndexInformer<WhiteList>,
) -> impl Fn(&Arc<Deployment>) + Send + Sync + 'static {
    let (queue, lister) = (queue.clone(), WhiteListLister::new(whitelists.lister()));
    move |deployment| {
        let Some(namespace) = deployment.metadata.namespace.as_deref() else {
            return;
        };
        // The namespace lister reads the cache's namespace index: no scan of all WhiteLists.
        if !lister
            .white_lists(namespace)
            .list(&Selector::default())
            .is_empty()
        {
            queue.add(namespace.to_owned());
        }
    }
}

/// One worker: take a namespace, reconcile it, tell the rate limiter, mark done; until shutdown.
async fn worker(queue: RateLimitingQueue<String>, reconciler: Reconciler, metrics: Metrics) {
    while let Some(namespace) = queue.get().await {
        metrics.reconcile_started();
        let started = Instant::now();
        // A panicking reconcile must not take the worker (and the key, never marked done) with it:
        // it counts as a failure and is retried with backoff.
        let result = AssertUnwindSafe(reconciler.reconcile(&namespace))
            .catch_unwind()
            .await;
        match result {
            Ok(Ok(())) => {
                metrics.observe_reconcile(Outcome::Success, started.elapsed());
                queue.forget(&namespace);
            }
            Ok(Err(error)) => {
                metrics.observe_reconcile(Outcome::Error, started.elapsed());
                let cause = std::error::Error::source(&error).map(ToString::to_string);
                tracing::warn!(namespace, error = %error, cause = ?cause, "reconcile failed; requeued");
                queue.add_rate_limited(namespace.clone());
            }
            Err(_panic) => {
                metrics.observe_reconcile(Outcome::Error, started.elapsed());
                tracing::error!(namespace, "reconcile panicked; requeued");
                queue.add_rate_limited(namespace.clone());
            }
        }
        queue.done(&namespace);
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
