//! The controller: a workqueue of keys fed by the handlers a [`crate::Builder`] registered, and
//! the workers that take keys, look their objects up in the primary's cache and call a
//! [`Reconciler`]. The counterpart of controller-runtime's `pkg/internal/controller`
//! (`Controller.Start`, `processNextWorkItem`, `reconcileHandler`).
//!
//! # What a worker does with a key
//! It looks the key up in the primary's cache. A key whose object is gone is not reconciled:
//! as in controller-runtime (whose reconcilers start with `if NotFound { return }`) and kube-rs
//! (which never calls `reconcile` for a missing object), cleanup on deletion is the job of a
//! finalizer ([`crate::finalizer`]), whose object stays in the cache until the finalizer is
//! removed. With [`crate::Builder::group_by_namespace`] the object handed to reconcile is the
//! first primary of the namespace by name, and [`Context::key`] is the namespace: the reconcile
//! judges the namespace as a whole (image-police's unit of policy). What the worker does with
//! the outcome is in `reconcile.rs`.
//!
//! # Sharding
//! A controller of a sharded manager's kind (see `sharding.rs`) asks the shard replica before
//! each reconcile: a key whose object the ring gives to another replica is dropped (not counted
//! as a reconcile), one whose handover runs is retried after 50 ms; every change of the
//! ring re-enqueues the cached primaries.
//!
//! # Shutdown
//! [`Controller::run`] returns when its `stop` future completes: the queue stops handing out
//! keys, in-flight reconciles get `drain_timeout` to finish, still-queued keys are dropped (the
//! next start's initial list enqueues every object again).

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_core::{Resource, Selector};
use kubegen_cache::{HandlerRegistration, Lister, ObjectKey, Synced, wait_for_cache_sync};
use kubegen_sharding::Refusal;
use kubegen_workqueue::RateLimitingQueue;

use crate::error::Error;
use crate::events::{EventType, Recorder};
use crate::metrics::{Metrics, Outcome};
use crate::reconcile::{Action, Context, Object, OnError, Reconciler};
use crate::sharding::Gate;

/// How a primary object becomes a queue key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grouping {
    /// `namespace/name`.
    Object,
    /// The namespace alone.
    Namespace,
}

impl Grouping {
    pub(crate) fn key_of<K: Resource>(self, object: &K) -> Option<ObjectKey> {
        match self {
            Grouping::Object => Some(ObjectKey::of(object)),
            Grouping::Namespace => object
                .meta()
                .namespace
                .as_deref()
                .map(|namespace| ObjectKey::new(None, namespace)),
        }
    }
}

/// Informer handlers, a workqueue of keys and the lookup of keys in the primary's cache.
/// Made by [`crate::Builder::build`] (start with [`Controller::builder`]), which fills the fields.
pub struct Controller<K> {
    pub(crate) name: String,
    pub(crate) queue: RateLimitingQueue<ObjectKey>,
    pub(crate) primary: Lister<K>,
    pub(crate) grouping: Grouping,
    pub(crate) registrations: Vec<Registered>,
    pub(crate) metrics: Metrics,
    pub(crate) recorder: Option<Recorder>,
    pub(crate) workers: Option<usize>,
    pub(crate) gate: Option<Arc<dyn Gate<K>>>,
}

/// One handler the controller registered, and how to take it off its informer again.
pub(crate) struct Registered {
    pub(crate) registration: HandlerRegistration,
    /// Removes `registration` from the informer it was added to.
    pub(crate) remove: Arc<dyn Fn(&HandlerRegistration) -> bool + Send + Sync>,
}

impl<K> fmt::Debug for Controller<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("queued", &self.queue.len())
            .finish_non_exhaustive()
    }
}

impl<K: Object> Controller<K> {
    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The worker count set with [`crate::Builder::workers`], if any.
    pub fn workers(&self) -> Option<usize> {
        self.workers
    }

    /// The reconcile series this controller records into.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The queue, for tests and for metrics.
    pub fn queue(&self) -> &RateLimitingQueue<ObjectKey> {
        &self.queue
    }

    /// Takes every handler of the controller off its informer, so that informers which outlive
    /// the controller (a hub's, shared by the controllers of every member cluster) stop feeding
    /// its queue. The multi-cluster fleet calls it when a cluster is disengaged.
    pub(crate) fn detach(&self) {
        for registered in &self.registrations {
            (registered.remove)(&registered.registration);
        }
    }

    /// Waits until every handler has seen its informer's initial list.
    ///
    /// # Errors
    /// [`Error::CacheSyncFailed`] on timeout.
    pub async fn wait_for_sync(&self, timeout: Duration) -> Result<(), Error> {
        let synced: Vec<&dyn Synced> = self
            .registrations
            .iter()
            .map(|r| &r.registration as &dyn Synced)
            .collect();
        wait_for_cache_sync(timeout, &synced)
            .await
            .map_err(|source| Error::CacheSyncFailed { source })
    }

    /// Runs `workers` workers calling `reconciler` until `stop` completes, then drains: no new
    /// keys are handed out and in-flight reconciles get `drain_timeout`. Returns whether they
    /// all finished in time.
    pub async fn run<R: Reconciler<K>>(
        &self,
        reconciler: Arc<R>,
        workers: usize,
        stop: impl Future<Output = ()>,
        drain_timeout: Duration,
    ) -> bool {
        self.metrics.set_max_concurrent_reconciles(workers);
        let mut handles = Workers(
            (0..workers)
                .map(|_| {
                    let worker = Worker {
                        queue: self.queue.clone(),
                        primary: self.primary.clone(),
                        grouping: self.grouping,
                        metrics: self.metrics.clone(),
                        recorder: self.recorder.clone(),
                        reconciler: Arc::clone(&reconciler),
                        gate: self.gate.clone(),
                    };
                    tokio::spawn(worker.run())
                })
                .collect(),
        );
        let _requeue = Workers(
            self.gate
                .iter()
                .map(|g| self.requeue_on_ring_changes(g.as_ref()))
                .collect(),
        );
        tracing::info!(controller = self.name, workers, "workers started");
        stop.await;
        tracing::info!(
            controller = self.name,
            "stopping: draining in-flight reconciles"
        );
        let drained = self.queue.shut_down_with_drain(drain_timeout).await;
        if drained {
            for handle in std::mem::take(&mut handles.0) {
                let _ = handle.await;
            }
        }
        tracing::info!(controller = self.name, drained, "workers stopped");
        drained
    }
}

impl<K: Object> Controller<K> {
    /// A task re-enqueueing every cached primary whenever the ring changes: an object can
    /// become this replica's again without changing itself.
    fn requeue_on_ring_changes(&self, gate: &dyn Gate<K>) -> tokio::task::JoinHandle<()> {
        let mut changes = gate.ring_changes();
        let (queue, primary, grouping) = (self.queue.clone(), self.primary.clone(), self.grouping);
        tokio::spawn(async move {
            while changes.changed().await.is_ok() {
                for object in primary.list(&Selector::default()) {
                    grouping
                        .key_of(object.as_ref())
                        .into_iter()
                        .for_each(|k| queue.add(k));
                }
            }
        })
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

/// One worker's share of the controller.
struct Worker<K, R> {
    queue: RateLimitingQueue<ObjectKey>,
    primary: Lister<K>,
    grouping: Grouping,
    metrics: Metrics,
    recorder: Option<Recorder>,
    reconciler: Arc<R>,
    gate: Option<Arc<dyn Gate<K>>>,
}

/// How long a key whose object is being handed over waits before it is tried again.
const BUSY_RETRY: Duration = Duration::from_millis(50);

/// How one reconcile attempt ended.
enum Attempt<K, E> {
    Finished(Result<Action, E>, Context, Arc<K>),
    Panicked,
    Gone,
}

impl<K: Object, R: Reconciler<K>> Worker<K, R> {
    /// Takes a key, reconciles it, tells the rate limiter, marks it done; until shutdown.
    async fn run(self) {
        while let Some(key) = self.queue.get().await {
            let object = self.lookup(&key);
            let guard = match (&self.gate, &object) {
                (Some(gate), Some(object)) => match gate.begin(object) {
                    Ok(guard) => Some(guard),
                    Err(refusal) => {
                        self.refused(&key, refusal);
                        self.queue.done(&key);
                        continue;
                    }
                },
                _ => None,
            };
            self.metrics.reconcile_started();
            let started = Instant::now();
            let attempt = self.attempt(&key, object).await;
            drop(guard);
            let outcome = self.settle(&key, attempt).await;
            self.metrics.observe_reconcile(outcome, started.elapsed());
            self.queue.done(&key);
        }
    }

    /// What happens to a key the shard replica refused: not counted as a reconcile.
    fn refused(&self, key: &ObjectKey, refusal: Refusal) {
        match refusal {
            Refusal::NotMine => {
                tracing::debug!(key = key.as_str(), "not this shard's any more; dropped");
                self.queue.forget(key);
            }
            Refusal::Busy => self.queue.add_after(key.clone(), BUSY_RETRY),
        }
    }

    async fn attempt(&self, key: &ObjectKey, object: Option<Arc<K>>) -> Attempt<K, R::Error> {
        let Some(object) = object else {
            return Attempt::Gone;
        };
        let context = Context::new(key.clone(), self.queue.num_requeues(key));
        // A panicking reconcile must not take the worker (and the key, never marked done) with
        // it: it counts as a failure and is retried with backoff.
        match AssertUnwindSafe(self.reconciler.reconcile(Arc::clone(&object), &context))
            .catch_unwind()
            .await
        {
            Ok(result) => Attempt::Finished(result, context, object),
            Err(_panic) => Attempt::Panicked,
        }
    }

    /// The object a key stands for: by `namespace/name`, or the first primary of a namespace.
    fn lookup(&self, key: &ObjectKey) -> Option<Arc<K>> {
        match self.grouping {
            Grouping::Object => self.primary.get_by_key(key.as_str()),
            Grouping::Namespace => self
                .primary
                .namespaced(key.as_str())
                .list(&Selector::default())
                .into_iter()
                .min_by(|a, b| a.meta().name.cmp(&b.meta().name)),
        }
    }

    /// Tells the queue what happens to `key` next; returns how the attempt counts.
    async fn settle(&self, key: &ObjectKey, attempt: Attempt<K, R::Error>) -> Outcome {
        let key_text = key.as_str();
        match attempt {
            Attempt::Gone => {
                tracing::debug!(key = key_text, "not in the cache any more; nothing to do");
                self.queue.forget(key);
                Outcome::Success
            }
            Attempt::Finished(Ok(Action::Done), ..) => {
                self.queue.forget(key);
                Outcome::Success
            }
            Attempt::Finished(Ok(Action::RequeueAfter(delay)), ..) => {
                self.queue.forget(key);
                self.queue.add_after(key.clone(), delay);
                Outcome::RequeueAfter
            }
            Attempt::Finished(Err(error), context, object) => {
                let policy = self.reconciler.on_error(&error, &context);
                let message = error_chain(&error);
                match policy {
                    OnError::Backoff => {
                        tracing::warn!(
                            key = key_text,
                            error = message,
                            "reconcile failed; requeued with backoff"
                        );
                        self.queue.add_rate_limited(key.clone());
                    }
                    OnError::RequeueAfter(delay) => {
                        tracing::warn!(
                            key = key_text,
                            error = message,
                            ?delay,
                            "reconcile failed; requeued after a delay"
                        );
                        self.queue.add_after(key.clone(), delay);
                    }
                    OnError::Terminal => {
                        tracing::error!(
                            key = key_text,
                            error = message,
                            "reconcile failed terminally; not retried"
                        );
                        self.queue.forget(key);
                        self.record_terminal(object.as_ref(), &message).await;
                        return Outcome::Terminal;
                    }
                }
                Outcome::Error
            }
            Attempt::Panicked => {
                tracing::error!(key = key_text, "reconcile panicked; requeued");
                self.queue.add_rate_limited(key.clone());
                Outcome::Panic
            }
        }
    }

    /// A Warning Event `ReconcileError` on `object` saying why it will not be retried. Events
    /// are best effort: a failure to write one is logged.
    async fn record_terminal(&self, object: &K, message: &str) {
        let Some(recorder) = &self.recorder else {
            return;
        };
        let now = Time(jiff::Timestamp::now());
        let message = format!("not retried: {message}");
        if let Err(error) = recorder
            .record(object, EventType::Warning, "ReconcileError", &message, &now)
            .await
        {
            tracing::warn!(error = %error, "recording the terminal error as an Event failed");
        }
    }
}

/// `error` and its causes, `: `-separated, as one line.
fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        text.push_str(": ");
        text.push_str(&cause.to_string());
        source = cause.source();
    }
    text
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
