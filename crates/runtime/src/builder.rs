//! How a controller is put together: the primary kind, the kinds it owns and the kinds it
//! watches, each informer's events mapped to keys of one rate-limited workqueue. The counterpart
//! of controller-runtime's `pkg/builder` (`builder.ControllerManagedBy(mgr).For(..).Owns(..)
//! .Watches(..).Complete(r)`) and kube-rs's `Controller::new(..).owns(..).watches(..)`, written
//! on kubegen-cache handlers and a kubegen-workqueue [`RateLimitingQueue`]. [`Builder::build`]
//! hands the queue and the registrations to a [`Controller`] (`controller.rs`), which runs the
//! workers.
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

use std::sync::Arc;

use kubegen_cache::{
    DeletedObject, HandlerFns, HandlerRegistration, ObjectKey, SharedIndexInformer, UpdateFilter,
    generation_changed,
};
use kubegen_sharding::RingKey;
use kubegen_workqueue::{
    MetricsProvider, NoopMetrics, RateLimitingQueue, default_controller_rate_limiter,
};

use crate::controller::{Controller, Grouping, Registered};
use crate::error::Error;
use crate::events::Recorder;
use crate::metrics::{Metrics, ProcessMetrics};
use crate::reconcile::Object;
use crate::sharding::Gate;

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
type Registrar =
    Box<dyn FnOnce(&RateLimitingQueue<ObjectKey>, bool) -> Result<Registered, Error> + Send>;

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
) -> Result<Registered, Error> {
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
    let registration = informer
        .add_event_handler(UpdateFilter::new(keep, handler))
        .map_err(|source| Error::HandlerRegistrationFailed { source })?;
    let informer = informer.clone();
    Ok(Registered {
        registration,
        remove: Arc::new(move |registration: &HandlerRegistration| {
            informer.remove_event_handler(registration)
        }),
    })
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

#[cfg(test)]
#[path = "builder_tests.rs"]
mod tests;
