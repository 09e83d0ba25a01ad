//! [`PrometheusMetrics`]: queue metrics in the process's one `prometheus_client` registry, under
//! the names controller-runtime exports, so existing dashboards and alerts for Go controllers work
//! unchanged.
//!
//! Mirrors controller-runtime `pkg/metrics/workqueue.go` (series names, the `name` label and the
//! histogram buckets) on top of client-go's `util/workqueue/metrics.go` (what each series means).
//!
//! # How each series is kept
//! - Depth, adds and retries are `prometheus_client` gauges and counters (atomics), changed where
//!   the queue changes; the two duration histograms are observed at `get` and `done`
//!   (`prometheus_client` histograms take a short mutex per observation).
//! - Unfinished work and the longest running processor grow with time while nothing happens, so
//!   they are computed at scrape time by a collector from the start instants of the keys in
//!   flight: exact, and no ticker task (client-go samples them every 500 ms). The start instants
//!   sit behind a mutex that queues take only at `get` and `done`, while already holding their own
//!   lock, so it is contended by nothing but a scrape.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::{ConstGauge, Gauge};
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;
use tokio::time::Instant;

use crate::metrics::{MetricsProvider, QueueMetrics};

/// The label every workqueue series carries: the queue's name.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct QueueLabel {
    name: String,
}

type Histograms = Family<QueueLabel, Histogram, fn() -> Histogram>;

/// controller-runtime's buckets, `ExponentialBuckets(10e-9, 10, 12)`: 10 ns to 1000 s, ten
/// times apart (written out, so the bounds carry no rounding error from repeated products).
const DURATION_BUCKETS: [f64; 12] = [
    1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1.0, 10.0, 100.0, 1000.0,
];

/// A [`MetricsProvider`] that records every queue built with it into `prometheus_client`
/// families, each series labelled `name="<queue name>"`. Cheap to clone: clones share the series.
///
/// Series (as controller-runtime names them): `workqueue_depth`, `workqueue_adds_total`,
/// `workqueue_queue_duration_seconds` (histogram), `workqueue_work_duration_seconds` (histogram),
/// `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`,
/// `workqueue_retries_total`.
///
/// ```
/// use std::sync::Arc;
/// use prometheus_client::registry::Registry;
/// use kubegen_workqueue::{PrometheusMetrics, Queue};
///
/// let mut registry = Registry::default();
/// let metrics = PrometheusMetrics::new();
/// metrics.register(&mut registry);
/// let queue = Queue::new("deployments", Arc::new(metrics));
/// queue.add("default/web".to_string());
/// ```
///
/// Queue names should be unique per provider: two queues with one name feed the same series.
#[derive(Clone, Debug)]
pub struct PrometheusMetrics {
    depth: Family<QueueLabel, Gauge>,
    adds: Family<QueueLabel, Counter>,
    queue_duration: Histograms,
    work_duration: Histograms,
    retries: Family<QueueLabel, Counter>,
    /// The in-flight keys of every queue, for the scrape-time gauges.
    in_flight: InFlightCollector,
}

impl Default for PrometheusMetrics {
    fn default() -> Self {
        let duration_histogram: fn() -> Histogram = || Histogram::new(DURATION_BUCKETS);
        PrometheusMetrics {
            depth: Family::default(),
            adds: Family::default(),
            queue_duration: Family::new_with_constructor(duration_histogram),
            work_duration: Family::new_with_constructor(duration_histogram),
            retries: Family::default(),
            in_flight: InFlightCollector::default(),
        }
    }
}

impl PrometheusMetrics {
    /// Series for queues not built yet; nothing is exported until [`register`](Self::register).
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers the seven `workqueue_*` families in `registry`. Call it once per process.
    pub fn register(&self, registry: &mut Registry) {
        registry.register(
            "workqueue_depth",
            "Current number of keys waiting in the workqueue",
            self.depth.clone(),
        );
        registry.register(
            "workqueue_adds",
            "Total number of keys added to the workqueue",
            self.adds.clone(),
        );
        registry.register(
            "workqueue_queue_duration_seconds",
            "How long in seconds a key waits in the workqueue before a worker takes it",
            self.queue_duration.clone(),
        );
        registry.register(
            "workqueue_work_duration_seconds",
            "How long in seconds processing a key takes, from get to done",
            self.work_duration.clone(),
        );
        registry.register(
            "workqueue_retries",
            "Total number of retries scheduled by the workqueue",
            self.retries.clone(),
        );
        registry.register_collector(Box::new(self.in_flight.clone()));
    }
}

impl MetricsProvider for PrometheusMetrics {
    fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics> {
        let label = QueueLabel {
            name: name.to_owned(),
        };
        let in_flight = Arc::clone(
            self.in_flight
                .queues
                .lock()
                .entry(name.to_owned())
                .or_default(),
        );
        Arc::new(QueueSeries {
            depth: self.depth.get_or_create_owned(&label),
            adds: self.adds.get_or_create_owned(&label),
            queue_duration: self.queue_duration.get_or_create_owned(&label),
            work_duration: self.work_duration.get_or_create_owned(&label),
            retries: self.retries.get_or_create_owned(&label),
            in_flight,
        })
    }
}

/// The series of one named queue, looked up once when the queue is built.
struct QueueSeries {
    depth: Gauge,
    adds: Counter,
    queue_duration: Histogram,
    work_duration: Histogram,
    retries: Counter,
    in_flight: Arc<InFlight>,
}

impl QueueMetrics for QueueSeries {
    fn added(&self) {
        self.adds.inc();
        self.depth.inc();
    }

    fn started(&self, waited: Duration, started: Instant) {
        self.depth.dec();
        self.queue_duration.observe(waited.as_secs_f64());
        *self.in_flight.starts.lock().entry(started).or_insert(0) += 1;
    }

    fn finished(&self, started: Instant, worked: Duration) {
        self.work_duration.observe(worked.as_secs_f64());
        let mut starts = self.in_flight.starts.lock();
        if let Some(count) = starts.get_mut(&started) {
            *count -= 1;
            if *count == 0 {
                starts.remove(&started);
            }
        }
    }

    fn discarded(&self, count: usize) {
        self.depth.dec_by(i64::try_from(count).unwrap_or(i64::MAX));
    }

    fn retried(&self) {
        self.retries.inc();
    }
}

/// The start instants of one queue's keys in flight.
#[derive(Debug, Default)]
struct InFlight {
    /// Start instant -> number of keys that started then. Invariant: no count is 0.
    starts: Mutex<BTreeMap<Instant, u32>>,
}

impl InFlight {
    /// Seconds of unfinished work and of the longest running key at `now`.
    fn seconds(&self, now: Instant) -> (f64, f64) {
        let starts = self.starts.lock();
        let unfinished = starts
            .iter()
            .map(|(start, count)| now.saturating_duration_since(*start).saturating_mul(*count))
            .fold(Duration::ZERO, Duration::saturating_add);
        let longest = starts.keys().next().map_or(Duration::ZERO, |start| {
            now.saturating_duration_since(*start)
        });
        (unfinished.as_secs_f64(), longest.as_secs_f64())
    }
}

/// Encodes `workqueue_unfinished_work_seconds` and `workqueue_longest_running_processor_seconds`
/// at scrape time.
#[derive(Clone, Debug, Default)]
struct InFlightCollector {
    /// Per queue name, sorted so scrapes list queues in a stable order.
    queues: Arc<Mutex<BTreeMap<String, Arc<InFlight>>>>,
}

impl Collector for InFlightCollector {
    fn encode(&self, mut encoder: DescriptorEncoder) -> fmt::Result {
        let now = Instant::now();
        let (unfinished, longest): (Vec<_>, Vec<_>) = self
            .queues
            .lock()
            .iter()
            .map(|(name, in_flight)| {
                let label = QueueLabel { name: name.clone() };
                let (unfinished, longest) = in_flight.seconds(now);
                ((label.clone(), unfinished), (label, longest))
            })
            .unzip();
        encode_gauge(
            &mut encoder,
            "workqueue_unfinished_work_seconds",
            "Seconds of work in progress not yet observed by work_duration. \
             Steady growth suggests stuck workers.",
            &unfinished,
        )?;
        encode_gauge(
            &mut encoder,
            "workqueue_longest_running_processor_seconds",
            "How many seconds the longest running worker has held its key.",
            &longest,
        )
    }
}

/// Encodes one gauge family with a series per queue.
fn encode_gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    values: &[(QueueLabel, f64)],
) -> fmt::Result {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Gauge)?;
    for (label, seconds) in values {
        ConstGauge::new(*seconds).encode(family.encode_family(label)?)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "prometheus_tests.rs"]
mod tests;
