//! The controller loop: informer events of a primary kind, the kinds it owns and the kinds it
//! watches, mapped to keys of one rate-limited workqueue; workers calling a [`Reconciler`].
//!
//! The counterpart of controller-runtime's `builder.ControllerManagedBy(mgr).For(..).Owns(..)
//! .Watches(..)` and kube-rs's `Controller::new(..).owns(..).watches(..)`, written on
//! kubegen-cache handlers and a kubegen-workqueue [`RateLimitingQueue`].
//!
//! # Which events enqueue what
//! - The primary `K`: its own key (`namespace/name`) on add, update and delete; or, with
//!   [`Builder::group_by_namespace`], its namespace.
//! - An owned kind: the key of its controller owner (the ownerReference with `controller: true`
//!   whose kind and apiVersion are `K`'s), as controller-runtime's `EnqueueRequestForOwner` with
//!   `OnlyControllerOwner()`. Objects without such an owner enqueue nothing.
//! - A watched kind: whatever keys the user's mapping function returns (controller-runtime's
//!   `EnqueueRequestsFromMapFunc`, kube-rs's `watches` mapper).
//! - [`Builder::generation_changes_only`] drops updates that keep `metadata.generation` (status
//!   writes, including the controller's own), for every kind of the controller:
//!   controller-runtime's `WithEventFilter(predicate.GenerationChangedPredicate{})`.
//!
//! # What a worker does with a key
//! It looks the key up in the primary's cache. A key whose object is gone is not reconciled:
//! as in controller-runtime (whose reconcilers start with `if NotFound { return }`) and kube-rs
//! (which never calls `reconcile` for a missing object), cleanup on deletion is the job of a
//! finalizer ([`crate::finalizer`]), whose object stays in the cache until the finalizer is
//! removed. With [`Builder::group_by_namespace`] the object handed to reconcile is the first
//! primary of the namespace by name, and [`Context::key`] is the namespace: the reconcile judges
//! the namespace as a whole (image-police's unit of policy).
//!
//! Outcomes: `Ok(Action::Done)` forgets the key's failures; `Ok(Action::RequeueAfter(d))`
//! forgets them and re-adds the key after `d`; `Err(e)` is logged, counted, and handled as
//! [`Reconciler::on_error`] says: [`OnError::Backoff`] (the default) re-adds the key through the
//! rate limiter (per-item exponential backoff plus the overall bucket),
//! [`OnError::RequeueAfter`] after a given delay, and [`OnError::Terminal`] not at all (the
//! error is recorded as a Warning Event on the object and counted as terminal: it will not
//! succeed until the object changes, which enqueues it again). A panic counts as an error and
//! is retried with backoff.
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

use std::fmt::{self, Display};
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::FutureExt as _;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube_core::{Resource, Selector};
use kubegen_cache::{
    DeletedObject, HandlerFns, HandlerRegistration, Lister, ObjectKey, SharedIndexInformer, Synced,
    UpdateFilter, generation_changed, wait_for_cache_sync,
};
use kubegen_sharding::{Refusal, RingKey};
use kubegen_workqueue::{
    MetricsProvider, NoopMetrics, RateLimitingQueue, default_controller_rate_limiter,
};

use crate::Error;
use crate::events::{EventType, Recorder};
use crate::metrics::{Metrics, Outcome, ProcessMetrics};
use crate::sharding::Gate;

/// What the controller does with a key after a successful reconcile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Nothing more until the next event about the key.
    Done,
    /// Reconcile the key again after this long, even if no event arrives (polling something
    /// outside the cluster, waiting for a deadline).
    RequeueAfter(Duration),
}

/// What a reconcile knows besides the object: the key it was queued under and how often it has
/// failed in a row.
#[derive(Clone, Debug)]
pub struct Context {
    key: ObjectKey,
    failures: u32,
}

impl Context {
    /// A context for `key` after `failures` failed attempts (for tests of reconcilers).
    pub fn new(key: ObjectKey, failures: u32) -> Context {
        Context { key, failures }
    }

    /// The queued key: the object's `namespace/name`, or its namespace for a controller built
    /// with [`Builder::group_by_namespace`].
    pub fn key(&self) -> &ObjectKey {
        &self.key
    }

    /// How many reconciles of this key failed in a row before this one.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

/// What the controller does with a key whose reconcile failed: the error policy of
/// kube-rs's `error_policy` and controller-runtime's `reconcile.TerminalError`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OnError {
    /// Retry through the rate limiter: per-item exponential backoff, capped by the overall bucket.
    Backoff,
    /// Retry after exactly this long (the key's failures still count in [`Context::failures`]).
    RequeueAfter(Duration),
    /// Never retry: the error will not go away by itself (an invalid spec, a missing permission
    /// that needs a person). Recorded as a Warning Event on the object and counted in
    /// `controller_runtime_terminal_reconcile_errors_total`; the next change of the object
    /// enqueues it again.
    Terminal,
}

/// The application's business logic for the primary kind `K`.
///
/// The reconciler holds whatever it needs (listers, clients, a [`crate::Recorder`]); the
/// controller shares it between its workers.
pub trait Reconciler<K>: Send + Sync + 'static {
    /// Why a reconcile failed; [`Reconciler::on_error`] says what happens next.
    type Error: std::error::Error + Send + Sync + 'static;

    /// Makes the world match `object`. Must be idempotent: it may run again for the same state.
    fn reconcile(
        &self,
        object: Arc<K>,
        context: &Context,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send;

    /// What to do after `error`. The default retries with backoff.
    fn on_error(&self, error: &Self::Error, context: &Context) -> OnError {
        let _ = (error, context);
        OnError::Backoff
    }
}

/// A shared reconciler: the application keeps an `Arc` to inspect its state while the
/// manager runs it.
impl<K, R: Reconciler<K>> Reconciler<K> for Arc<R> {
    type Error = R::Error;

    fn reconcile(
        &self,
        object: Arc<K>,
        context: &Context,
    ) -> impl Future<Output = Result<Action, Self::Error>> + Send {
        R::reconcile(self, object, context)
    }

    fn on_error(&self, error: &Self::Error, context: &Context) -> OnError {
        R::on_error(self, error, context)
    }
}

/// The kind of objects a controller can reconcile or watch.
pub trait Object: Resource<DynamicType = ()> + Clone + Send + Sync + 'static {}

impl<T> Object for T where T: Resource<DynamicType = ()> + Clone + Send + Sync + 'static {}

/// How a primary object becomes a queue key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Grouping {
    /// `namespace/name`.
    Object,
    /// The namespace alone.
    Namespace,
}

impl Grouping {
    fn key_of<K: Resource>(self, object: &K) -> Option<ObjectKey> {
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

/// A function from an event's object to the keys it enqueues.
type Mapper<T> = Arc<dyn Fn(&T) -> Vec<ObjectKey> + Send + Sync>;

/// Builds a [`Controller`] for the primary kind `K`. Start with [`Controller::builder`].
#[must_use = "a builder does nothing until `build`"]
pub struct Builder<K> {
    name: String,
    primary: SharedIndexInformer<K>,
    grouping: Grouping,
    generation_only: bool,
    queue_metrics: Arc<dyn MetricsProvider>,
    metrics: Metrics,
    recorder: Option<Recorder>,
    workers: Option<usize>,
    /// Registers one secondary kind's handler, once the queue exists.
    secondaries: Vec<Registrar>,
    gate: Option<Arc<dyn Gate<K>>>,
}

/// Registers a handler feeding `queue`, filtered by generation if asked.
type Registrar = Box<
    dyn FnOnce(&RateLimitingQueue<ObjectKey>, bool) -> Result<HandlerRegistration, Error> + Send,
>;

impl<K: Object> Builder<K> {
    /// Queue keys are namespaces: every event of a primary (and every mapped event) in a
    /// namespace enqueues the namespace, and one reconcile judges the namespace as a whole.
    pub fn group_by_namespace(mut self) -> Self {
        self.grouping = Grouping::Namespace;
        self
    }

    /// Drops update events that keep `metadata.generation`, for every kind of the controller
    /// (status churn, the controller's own status writes).
    pub fn generation_changes_only(mut self) -> Self {
        self.generation_only = true;
        self
    }

    /// Where the workqueue (`workqueue_*{name="<controller>"}`) and the reconciles
    /// (`controller_runtime_*{controller="<controller>"}`) are counted. A
    /// [`crate::Manager::controller`] builder comes with the manager's.
    pub fn metrics(mut self, metrics: &ProcessMetrics) -> Self {
        self.queue_metrics = Arc::new(metrics.queues().clone());
        self.metrics = metrics.controller(&self.name);
        self
    }

    /// Parallel reconciles of this controller (controller-runtime's
    /// `MaxConcurrentReconciles`); without it, the manager's default. At least 1.
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = Some(workers.max(1));
        self
    }

    /// Where terminal errors are recorded as Events (without one, they are only logged and
    /// counted). A [`crate::Manager::controller`] builder comes with the manager's.
    pub fn recorder(mut self, recorder: Recorder) -> Self {
        self.recorder = Some(recorder);
        self
    }

    /// Every reconcile asks the shard replica first (a sharded manager's controllers of the
    /// sharded kind come with it).
    pub(crate) fn gate(mut self, gate: Arc<dyn Gate<K>>) -> Self {
        self.gate = Some(gate);
        self
    }

    /// Objects of kind `C` whose controller owner is a `K` enqueue that owner.
    pub fn owns<C: Object>(self, owned: &SharedIndexInformer<C>) -> Self {
        let grouping = self.grouping;
        self.watches(owned, move |object: &C| {
            owner_key::<K, C>(object, grouping).into_iter().collect()
        })
    }

    /// Objects of kind `W` enqueue the keys `map` returns for them (on add, on update, and on
    /// delete with the last known state).
    pub fn watches<W: Object>(
        mut self,
        watched: &SharedIndexInformer<W>,
        map: impl Fn(&W) -> Vec<ObjectKey> + Send + Sync + 'static,
    ) -> Self {
        let watched = watched.clone();
        let map: Mapper<W> = Arc::new(map);
        self.secondaries
            .push(Box::new(move |queue, generation_only| {
                register(&watched, queue, map, generation_only)
            }));
        self
    }

    /// Creates the queue and registers every handler.
    ///
    /// # Errors
    /// [`Error::HandlerRegistrationFailed`] if an informer was already shut down;
    /// [`Error::ShardingByObject`] for a controller grouped by namespace on a ring that does not
    /// shard by namespace.
    pub fn build(self) -> Result<Controller<K>, Error> {
        let by_object = self
            .gate
            .as_ref()
            .is_some_and(|g| g.key() != RingKey::Namespace);
        if self.grouping == Grouping::Namespace && by_object {
            return Err(Error::ShardingByObject {
                controller: self.name,
            });
        }
        let queue = RateLimitingQueue::new(
            &self.name,
            default_controller_rate_limiter(),
            self.queue_metrics,
        );
        let grouping = self.grouping;
        let primary_map: Mapper<K> =
            Arc::new(move |object: &K| grouping.key_of(object).into_iter().collect());
        let mut registrations = vec![register(
            &self.primary,
            &queue,
            primary_map,
            self.generation_only,
        )?];
        for secondary in self.secondaries {
            registrations.push(secondary(&queue, self.generation_only)?);
        }
        Ok(Controller {
            name: self.name,
            queue,
            primary: self.primary.lister(),
            grouping,
            registrations,
            metrics: self.metrics,
            recorder: self.recorder,
            workers: self.workers,
            gate: self.gate,
        })
    }
}

/// Registers a handler on `informer` that enqueues `map(object)` for every event.
fn register<T: Object>(
    informer: &SharedIndexInformer<T>,
    queue: &RateLimitingQueue<ObjectKey>,
    map: Mapper<T>,
    generation_only: bool,
) -> Result<HandlerRegistration, Error> {
    let enqueue = {
        let queue = queue.clone();
        move |object: &T| map(object).into_iter().for_each(|key| queue.add(key))
    };
    let (on_add, on_update, on_delete) = (enqueue.clone(), enqueue.clone(), enqueue);
    let handler = HandlerFns::<T>::new()
        .on_add(move |object, _| on_add(object))
        .on_update(move |_, object| on_update(object))
        .on_delete(move |gone: &DeletedObject<T>| on_delete(gone.object()));
    let keep = move |old: &T, new: &T| !generation_only || generation_changed(old, new);
    informer
        .add_event_handler(UpdateFilter::new(keep, handler))
        .map_err(|source| Error::HandlerRegistrationFailed { source })
}

/// The key of `object`'s controller owner if that owner is a `K`.
fn owner_key<K: Object, C: Object>(object: &C, grouping: Grouping) -> Option<ObjectKey> {
    let (kind, api_version) = (K::kind(&()), K::api_version(&()));
    let owner = object
        .meta()
        .owner_references
        .iter()
        .flatten()
        .find(|owner| owner.controller == Some(true))?;
    if owner.kind != kind || owner.api_version != api_version {
        return None;
    }
    let namespace = object.meta().namespace.as_deref();
    Some(match grouping {
        Grouping::Object => ObjectKey::new(namespace, &owner.name),
        Grouping::Namespace => ObjectKey::new(None, namespace.unwrap_or_default()),
    })
}

/// Informer handlers, a workqueue of keys and the lookup of keys in the primary's cache.
pub struct Controller<K> {
    name: String,
    queue: RateLimitingQueue<ObjectKey>,
    primary: Lister<K>,
    grouping: Grouping,
    registrations: Vec<HandlerRegistration>,
    metrics: Metrics,
    recorder: Option<Recorder>,
    workers: Option<usize>,
    gate: Option<Arc<dyn Gate<K>>>,
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
    /// A builder for the controller `name` (its queue's name in the `workqueue_*` metrics) of the
    /// primary kind `K`, whose objects come from `primary`.
    pub fn builder(name: &str, primary: &SharedIndexInformer<K>) -> Builder<K> {
        Builder {
            name: name.to_owned(),
            primary: primary.clone(),
            grouping: Grouping::Object,
            generation_only: false,
            queue_metrics: Arc::new(NoopMetrics),
            metrics: Metrics::default(),
            recorder: None,
            workers: None,
            secondaries: Vec::new(),
            gate: None,
        }
    }

    /// The controller's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The worker count set with [`Builder::workers`], if any.
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

    /// Waits until every handler has seen its informer's initial list.
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

impl Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Action::Done => f.write_str("done"),
            Action::RequeueAfter(delay) => write!(f, "requeue after {delay:?}"),
        }
    }
}

#[cfg(test)]
#[path = "controller_tests.rs"]
mod tests;
