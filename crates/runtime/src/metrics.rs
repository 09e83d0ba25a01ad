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
    events_failed: Counter,
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
            events_failed: Counter::default(),
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
        let counters = [
            (
                "reconcile_errors",
                "Reconciles that failed and were requeued",
                &self.reconcile_errors,
            ),
            (
                "events_failed",
                "Events that could not be recorded",
                &self.events_failed,
            ),
        ];
        prefixed.register("reconcile", "Reconciles by result", self.reconciles.clone());
        for (name, help, counter) in counters {
            prefixed.register(name, help, counter.clone());
        }
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

    /// Counts one Event that could not be written (Events are best effort).
    pub fn event_failed(&self) {
        self.events_failed.inc();
    }

    /// Sets whether this replica currently holds the leader Lease (1) or not (0).
    pub fn set_leader(&self, leader: bool) {
        self.leader.set(i64::from(leader));
    }
}

#[cfg(test)]
impl Metrics {
    /// The value of the unlabelled sample `metric` in a parsed scrape of these series alone.
    pub(crate) fn scraped(&self, metric: &str) -> Option<f64> {
        let mut registry = Registry::default();
        self.register("test", &mut registry);
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry).ok()?;
        let scrape =
            prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned()))).ok()?;
        scrape
            .samples
            .into_iter()
            .find(|s| s.metric == metric && s.labels.is_empty())
            .and_then(|s| match s.value {
                prometheus_parse::Value::Untyped(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Counter(v) => Some(v),
                _ => None,
            })
    }
}

/// Every metric of the process, registered in one registry: the controller's own, the REST
/// client's (`rest_client_*`), the workqueue's (`workqueue_*`), the informers'
/// (`informer_*`) and whatever the application adds. Built once in `main` and handed to the
/// [`Manager`](crate::Manager), which gives each piece its part. Cheap to clone: clones share the
/// series and the registry.
#[derive(Clone, Debug)]
pub struct ProcessMetrics {
    /// The controller's own series.
    pub controller: Metrics,
    /// Given to the client through `Config::metrics`.
    pub client: ClientMetrics,
    /// Given to the workqueue.
    pub queues: PrometheusMetrics,
    /// Given to the informer factory.
    pub informers: InformerMetrics,
    /// All of the above, registered once.
    registry: Arc<Registry>,
}

impl ProcessMetrics {
    /// The registry of a process whose controller series are named `<prefix>_*`; `extra`
    /// registers the application's own families (under any prefix it likes) in the same registry.
    pub fn new(prefix: &str, extra: impl FnOnce(&mut Registry)) -> Self {
        let (controller, client) = (Metrics::default(), ClientMetrics::default());
        let (queues, informers) = (PrometheusMetrics::new(), InformerMetrics::default());
        let mut registry = Registry::default();
        controller.register(prefix, &mut registry);
        extra(&mut registry);
        client.register(&mut registry);
        queues.register(&mut registry);
        informers.register(&mut registry);
        ProcessMetrics {
            controller,
            client,
            queues,
            informers,
            registry: Arc::new(registry),
        }
    }

    /// The scrape body: every registered family in the OpenMetrics text format, `# EOF` last.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail; an error here would be a bug in an encoder.
        if let Err(error) = prometheus_client::encoding::text::encode(&mut out, &self.registry) {
            tracing::error!(%error, "encoding metrics failed");
        }
        out
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
