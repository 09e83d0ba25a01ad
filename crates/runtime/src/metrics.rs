//! The process's metrics: each controller's own series ([`Metrics`]) and the one
//! `prometheus_client` registry every crate registers into ([`ProcessMetrics`]), which `/metrics`
//! serves in the OpenMetrics text format. The counterpart of controller-runtime's
//! `pkg/metrics` (one global registry, `controller_runtime_reconcile_*` families).
//!
//! Operators ask three questions of a controller: is it doing work, is the work failing, and how
//! long does it take. The reconcile counters and the duration histogram answer them; the
//! workqueue's metrics (depth, latency, retries), the informers' (lists, watches, handler
//! backlogs) and the client's request metrics sit in the same registry, so one scrape shows the
//! whole pipeline. The names follow controller-runtime (`controller_runtime_reconcile_*`) with
//! the controller's own prefix (`image_police_reconcile_total`).
//!
//! # Differences from controller-runtime
//! controller-runtime labels one family by `controller`; here each process names its series by
//! a prefix of its own, so the dashboards of an existing controller (image-police) keep working.
//!
//! # Cost
//! Counters and gauges are atomics; the duration histogram takes `prometheus_client`'s short
//! mutex once per reconcile.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use kubegen_cache::InformerMetrics;
use kubegen_client::ClientMetrics;
use kubegen_workqueue::PrometheusMetrics;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// Upper bounds (seconds) of the reconcile duration histogram buckets.
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// The `Content-Type` of a scrape: the OpenMetrics text format that `prometheus_client` writes.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// How one reconcile ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the key is forgotten by the rate limiter.
    Success,
    /// Failed; the key is requeued with backoff.
    Error,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ResultLabel {
    result: &'static str,
}

impl Outcome {
    fn label(self) -> ResultLabel {
        let result = match self {
            Outcome::Success => "success",
            Outcome::Error => "error",
        };
        ResultLabel { result }
    }
}

/// A controller's own series. Cheap to clone: clones share the series.
#[derive(Clone, Debug)]
pub struct Metrics {
    /// `<prefix>_reconcile_total{result}`.
    reconciles: Family<ResultLabel, Counter>,
    reconcile_errors: Counter,
    /// Reconciles running right now. Invariant: never negative.
    in_flight: Gauge,
    leader: Gauge,
    duration: Histogram,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            reconciles: Family::default(),
            reconcile_errors: Counter::default(),
            in_flight: Gauge::default(),
            leader: Gauge::default(),
            duration: Histogram::new(BUCKETS),
        }
    }
}

impl Metrics {
    /// Registers the `<prefix>_*` families in `registry`.
    pub fn register(&self, prefix: &str, registry: &mut Registry) {
        let prefixed = registry.sub_registry_with_prefix(prefix);
        prefixed.register("reconcile", "Reconciles by result", self.reconciles.clone());
        prefixed.register(
            "reconcile_errors",
            "Reconciles that failed and were requeued",
            self.reconcile_errors.clone(),
        );
        prefixed.register(
            "reconcile_duration_seconds",
            "Time spent in one reconcile",
            self.duration.clone(),
        );
        prefixed.register(
            "reconciles_in_flight",
            "Reconciles running right now",
            self.in_flight.clone(),
        );
        prefixed.register(
            "leader",
            "1 while this replica holds the leader Lease",
            self.leader.clone(),
        );
    }

    /// Marks the start of a reconcile; [`observe_reconcile`](Self::observe_reconcile) ends it.
    pub fn reconcile_started(&self) {
        self.in_flight.inc();
    }

    /// How many reconciles are running right now.
    pub fn in_flight(&self) -> u64 {
        u64::try_from(self.in_flight.get()).unwrap_or(0)
    }

    /// How many reconciles have finished, successfully or not.
    pub fn reconciles_finished(&self) -> u64 {
        [Outcome::Success, Outcome::Error]
            .into_iter()
            .map(|outcome| self.reconciles.get_or_create(&outcome.label()).get())
            .sum()
    }

    /// Records one finished reconcile (started with [`reconcile_started`](Self::reconcile_started)).
    pub fn observe_reconcile(&self, outcome: Outcome, took: Duration) {
        // Saturating: a reconcile observed without a start must not take the gauge below zero.
        let _ = self
            .in_flight
            .inner()
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some((n - 1).max(0))
            });
        self.reconciles.get_or_create(&outcome.label()).inc();
        if outcome == Outcome::Error {
            self.reconcile_errors.inc();
        }
        self.duration.observe(took.as_secs_f64());
    }

    /// Sets whether this replica currently holds the leader Lease (1) or not (0).
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }
}

/// An application's own series, registered next to the runtime's in the one registry.
pub trait AppMetrics: Clone + Default + Send + Sync + 'static {
    /// The prefix of the controller's series: `<PREFIX>_reconcile_total`, ...
    const PREFIX: &'static str;

    /// Registers the application's families (under any names it likes).
    fn register(&self, registry: &mut Registry);
}

/// No series of the application's own; the controller's series are `controller_*`.
impl AppMetrics for () {
    const PREFIX: &'static str = "controller";

    fn register(&self, _registry: &mut Registry) {}
}

/// Every metric of the process, registered in one registry: the controller's own, the REST
/// client's (`rest_client_*`), the workqueue's (`workqueue_*`), the informers'
/// (`informer_*`) and the application's `A`. Built once in `main`; each piece gets its part.
/// Cheap to clone: clones share the series and the registry.
#[derive(Clone, Debug)]
pub struct ProcessMetrics<A = ()> {
    /// The controller's own series.
    pub controller: Metrics,
    /// Given to the client through `Config::metrics`.
    pub client: ClientMetrics,
    /// Given to the workqueue.
    pub queues: PrometheusMetrics,
    /// Given to the informer factory.
    pub informers: InformerMetrics,
    /// The application's own series.
    pub app: A,
    /// All of the above, registered once.
    scrape: Scrape,
}

impl<A: AppMetrics> Default for ProcessMetrics<A> {
    fn default() -> Self {
        let (controller, client) = (Metrics::default(), ClientMetrics::default());
        let (queues, informers) = (PrometheusMetrics::new(), InformerMetrics::default());
        let app = A::default();
        let mut registry = Registry::default();
        controller.register(A::PREFIX, &mut registry);
        app.register(&mut registry);
        client.register(&mut registry);
        queues.register(&mut registry);
        informers.register(&mut registry);
        ProcessMetrics {
            controller,
            client,
            queues,
            informers,
            app,
            scrape: Scrape(Arc::new(registry)),
        }
    }
}

impl<A> ProcessMetrics<A> {
    /// The registry, for `/metrics`.
    pub fn scrape(&self) -> Scrape {
        self.scrape.clone()
    }

    /// The scrape body: every registered family in the OpenMetrics text format, `# EOF` last.
    pub fn encode(&self) -> String {
        self.scrape.encode()
    }
}

/// The one registry, read-only once built: what `/metrics` serves.
#[derive(Clone, Debug)]
pub struct Scrape(Arc<Registry>);

impl Scrape {
    /// Every registered family in the OpenMetrics text format, `# EOF` last.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; an error here would be a bug in an encoder.
        if let Err(error) = prometheus_client::encoding::text::encode(&mut out, &self.0) {
            tracing::error!(%error, "encoding metrics failed");
        }
        out
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
