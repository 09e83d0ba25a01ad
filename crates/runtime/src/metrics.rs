//! The process's metrics: the one `prometheus_client` registry every crate registers into
//! ([`ProcessMetrics`]), which `/metrics` serves in the OpenMetrics text format, and each
//! controller's handle on controller-runtime's reconcile families ([`Metrics`]). The counterpart
//! of controller-runtime's `pkg/metrics` and `pkg/internal/controller/metrics`.
//!
//! Operators ask three questions of a controller: is it doing work, is the work failing, and how
//! long does it take. controller-runtime's families answer them, under the names and labels its
//! users' dashboards and alerts already query:
//!
//! | family | labels | meaning |
//! |---|---|---|
//! | `controller_runtime_reconcile_total` | `controller`, `result` | reconciles by result: `success`, `error`, `requeue_after` |
//! | `controller_runtime_reconcile_errors_total` | `controller` | reconciles that returned an error (or panicked) |
//! | `controller_runtime_terminal_reconcile_errors_total` | `controller` | errors the reconciler called terminal: not retried |
//! | `controller_runtime_reconcile_panics_total` | `controller` | reconciles that panicked |
//! | `controller_runtime_reconcile_time_seconds` | `controller` | histogram of reconcile durations |
//! | `controller_runtime_active_workers` | `controller` | reconciles running right now |
//! | `controller_runtime_max_concurrent_reconciles` | `controller` | the controller's worker count |
//! | `leader_election_master_status` | `name` | 1 while this replica holds the Lease `name` (client-go's) |
//! | `controller_sharding_shard_member` | `ring` | 1 while this replica holds its shard Lease of `ring` (a live member) |
//! | `controller_sharding_ring_members` | `ring` | live shards of `ring` as this replica computes the ring |
//! | `controller_sharding_shard_objects` | `ring` | objects labelled with this replica's shard in its cache |
//!
//! The sharding families use timebertt/kubernetes-controller-sharding's `controller_sharding_`
//! prefix (its sharder exports `controller_sharding_assignments_total` and friends); the shard is
//! the scraped pod, so it is not a label.
//!
//! The workqueue's (`workqueue_*{name}`), the informers' (`informer_*`) and the REST client's
//! (`rest_client_*`) series sit in the same registry, so one scrape shows the whole pipeline.
//!
//! # Cost
//! Counters and gauges are atomics behind a label lookup; the duration histogram takes
//! `prometheus_client`'s short mutex once per reconcile.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use kubegen_cache::InformerMetrics;
use kubegen_client::ClientMetrics;
use kubegen_workqueue::PrometheusMetrics;
use parking_lot::RwLock;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Upper bounds (seconds) of the reconcile duration buckets: controller-runtime's.
const BUCKETS: [f64; 25] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 60.0,
];

/// The `Content-Type` of a scrape: the OpenMetrics text format that `prometheus_client` writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How one reconcile ended, as `controller_runtime_reconcile_total`'s `result` label says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// `Ok(Action::Done)`, or the object was gone.
    Success,
    /// `Ok(Action::RequeueAfter(_))`.
    RequeueAfter,
    /// An error, retried with backoff or after a delay.
    Error,
    /// An error the reconciler called terminal: not retried.
    Terminal,
    /// The reconcile panicked; retried with backoff.
    Panic,
}

impl Outcome {
    fn result(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::RequeueAfter => "requeue_after",
            Outcome::Error | Outcome::Terminal | Outcome::Panic => "error",
        }
    }
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ControllerLabel {
    controller: String,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabels {
    controller: String,
    result: &'static str,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct LeaseLabel {
    name: String,
}

/// controller-runtime's reconcile families, shared by every controller of the process.
#[derive(Clone, Debug)]
struct Families {
    reconciles: Family<ResultLabels, Counter>,
    errors: Family<ControllerLabel, Counter>,
    terminal_errors: Family<ControllerLabel, Counter>,
    panics: Family<ControllerLabel, Counter>,
    time: Family<ControllerLabel, Histogram>,
    active_workers: Family<ControllerLabel, Gauge>,
    max_concurrent: Family<ControllerLabel, Gauge>,
}

impl Default for Families {
    fn default() -> Self {
        Families {
            reconciles: Family::default(),
            errors: Family::default(),
            terminal_errors: Family::default(),
            panics: Family::default(),
            time: Family::new_with_constructor(|| Histogram::new(BUCKETS)),
            active_workers: Family::default(),
            max_concurrent: Family::default(),
        }
    }
}

impl Families {
    fn register(&self, registry: &mut Registry) {
        let runtime = registry.sub_registry_with_prefix("controller_runtime");
        runtime.register(
            "reconcile",
            "Total number of reconciliations per controller",
            self.reconciles.clone(),
        );
        runtime.register(
            "reconcile_errors",
            "Total number of reconciliation errors per controller",
            self.errors.clone(),
        );
        runtime.register(
            "terminal_reconcile_errors",
            "Total number of terminal reconciliation errors per controller",
            self.terminal_errors.clone(),
        );
        runtime.register(
            "reconcile_panics",
            "Total number of reconciliation panics per controller",
            self.panics.clone(),
        );
        runtime.register(
            "reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            self.time.clone(),
        );
        runtime.register(
            "active_workers",
            "Number of currently used workers per controller",
            self.active_workers.clone(),
        );
        runtime.register(
            "max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            self.max_concurrent.clone(),
        );
    }
}

/// One controller's handle on the reconcile families: every series it touches carries
/// `controller="<its name>"`. Cheap to clone: clones share the series.
#[derive(Clone, Debug)]
pub struct Metrics {
    families: Families,
    label: ControllerLabel,
}

impl Default for Metrics {
    /// Series of their own, registered nowhere (a controller built without a manager).
    fn default() -> Self {
        Metrics {
            families: Families::default(),
            label: ControllerLabel {
                controller: String::new(),
            },
        }
    }
}

impl Metrics {
    /// The same families, labelled for the controller `name`.
    #[must_use]
    pub fn for_controller(&self, name: &str) -> Metrics {
        Metrics {
            families: self.families.clone(),
            label: ControllerLabel {
                controller: name.to_owned(),
            },
        }
    }

    /// Records how many workers the controller runs.
    pub fn set_max_concurrent_reconciles(&self, workers: usize) {
        let workers = i64::try_from(workers).unwrap_or(i64::MAX);
        self.families
            .max_concurrent
            .get_or_create(&self.label)
            .set(workers);
    }

    /// Marks the start of a reconcile; [`observe_reconcile`](Self::observe_reconcile) ends it.
    pub fn reconcile_started(&self) {
        self.families
            .active_workers
            .get_or_create(&self.label)
            .inc();
    }

    /// How many reconciles are running right now.
    pub fn in_flight(&self) -> u64 {
        let active = self
            .families
            .active_workers
            .get_or_create(&self.label)
            .get();
        u64::try_from(active).unwrap_or(0)
    }

    /// How many reconciles have finished, whatever their outcome.
    pub fn reconciles_finished(&self) -> u64 {
        ["success", "requeue_after", "error"]
            .into_iter()
            .map(|result| self.reconciles(result))
            .sum()
    }

    /// How many reconciles finished with `result` (`success`, `requeue_after`, `error`).
    pub fn reconciles(&self, result: &'static str) -> u64 {
        let labels = ResultLabels {
            controller: self.label.controller.clone(),
            result,
        };
        self.families.reconciles.get_or_create(&labels).get()
    }

    /// How many errors were terminal (not retried).
    pub fn terminal_errors(&self) -> u64 {
        self.families
            .terminal_errors
            .get_or_create(&self.label)
            .get()
    }

    /// Records one finished reconcile (started with [`reconcile_started`](Self::reconcile_started)).
    pub fn observe_reconcile(&self, outcome: Outcome, took: Duration) {
        // Saturating: a reconcile observed without a start must not take the gauge below zero.
        let active = self.families.active_workers.get_or_create(&self.label);
        let _ = active
            .inner()
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some((n - 1).max(0))
            });
        let labels = ResultLabels {
            controller: self.label.controller.clone(),
            result: outcome.result(),
        };
        self.families.reconciles.get_or_create(&labels).inc();
        if matches!(outcome, Outcome::Error | Outcome::Terminal | Outcome::Panic) {
            self.families.errors.get_or_create(&self.label).inc();
        }
        match outcome {
            Outcome::Terminal => {
                self.families
                    .terminal_errors
                    .get_or_create(&self.label)
                    .inc();
            }
            Outcome::Panic => {
                self.families.panics.get_or_create(&self.label).inc();
            }
            _ => {}
        }
        self.families
            .time
            .get_or_create(&self.label)
            .observe(took.as_secs_f64());
    }
}

/// Every metric of the process, registered in one registry: controller-runtime's reconcile
/// families ([`Metrics`], one label value per controller), the REST client's (`rest_client_*`),
/// the workqueue's (`workqueue_*`), the informers' (`informer_*`), leader election's, and
/// whatever the application registers with [`register`](Self::register). A
/// [`crate::Manager`] builds it and wires every piece; cheap to clone (clones share it).
#[derive(Clone, Debug)]
pub struct ProcessMetrics {
    controllers: Metrics,
    queues: PrometheusMetrics,
    informers: InformerMetrics,
    leader: Family<LeaseLabel, Gauge>,
    shard: ShardFamilies,
    registry: Arc<RwLock<Registry>>,
}

/// The `controller_sharding_*` gauges, each labelled `ring`.
#[derive(Clone, Debug, Default)]
struct ShardFamilies {
    member: Family<RingLabel, Gauge>,
    members: Family<RingLabel, Gauge>,
    objects: Family<RingLabel, Gauge>,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RingLabel {
    ring: String,
}

impl Default for ProcessMetrics {
    fn default() -> Self {
        ProcessMetrics::new(ClientMetrics::default())
    }
}

impl ProcessMetrics {
    /// A registry holding `client`'s series (a client's own: `Client::metrics()`) and fresh
    /// series of every other family.
    pub fn new(client: ClientMetrics) -> Self {
        let controllers = Metrics::default();
        let queues = PrometheusMetrics::new();
        let (informers, leader) = (InformerMetrics::default(), Family::default());
        let mut registry = Registry::default();
        controllers.families.register(&mut registry);
        client.register(&mut registry);
        queues.register(&mut registry);
        informers.register(&mut registry);
        registry.register(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease.",
            leader.clone(),
        );
        let shard = ShardFamilies::default();
        let families = [
            (
                "controller_sharding_shard_member",
                "Gauge of whether this replica holds its shard Lease of the ring (1) or not (0).",
                &shard.member,
            ),
            (
                "controller_sharding_ring_members",
                "Number of live shards of the ring, as this replica computes the ring from the shard Leases.",
                &shard.members,
            ),
            (
                "controller_sharding_shard_objects",
                "Number of objects labelled with this replica's shard in its cache.",
                &shard.objects,
            ),
        ];
        for (name, help, family) in families {
            registry.register(name, help, family.clone());
        }
        ProcessMetrics {
            shard,
            controllers,
            queues,
            informers,
            leader,
            registry: Arc::new(RwLock::new(registry)),
        }
    }

    /// The reconcile series of the controller `name`.
    pub fn controller(&self, name: &str) -> Metrics {
        self.controllers.for_controller(name)
    }

    /// What workqueues record into.
    pub fn queues(&self) -> &PrometheusMetrics {
        &self.queues
    }

    /// What the informer factory records into (`FactoryOptions::metrics`).
    pub fn informers(&self) -> &InformerMetrics {
        &self.informers
    }

    /// Sets whether this replica holds the Lease `name` (1) or not (0).
    pub fn set_leader(&self, name: &str, leader: bool) {
        let label = LeaseLabel {
            name: name.to_owned(),
        };
        self.leader.get_or_create(&label).set(i64::from(leader));
    }

    /// Records this replica's view of `ring`: whether it is a live member, how many live members
    /// the ring has, how many objects its shard holds.
    pub fn set_shard(&self, ring: &str, member: bool, members: usize, objects: usize) {
        let label = RingLabel {
            ring: ring.to_owned(),
        };
        let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        self.shard
            .member
            .get_or_create(&label)
            .set(i64::from(member));
        self.shard.members.get_or_create(&label).set(count(members));
        self.shard.objects.get_or_create(&label).set(count(objects));
    }

    /// Registers the application's own families next to the runtime's, e.g.
    /// `metrics.register(|registry| registry.register("shop_orders", "Orders seen", orders.clone()))`.
    pub fn register(&self, register: impl FnOnce(&mut Registry)) {
        register(&mut self.registry.write());
    }

    /// The scrape body: every registered family in the OpenMetrics text format, `# EOF` last.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; an error here would be a bug in an encoder.
        if let Err(error) =
            prometheus_client::encoding::text::encode(&mut out, &self.registry.read())
        {
            tracing::error!(%error, "encoding metrics failed");
        }
        out
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
