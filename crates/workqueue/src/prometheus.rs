//! Queue metrics in the Prometheus text format, under the names controller-runtime exports, so
//! existing dashboards and alerts for Go controllers work unchanged.
//!
//! Mirrors controller-runtime `pkg/metrics/workqueue.go` (series names and histogram buckets) on
//! top of client-go's `util/workqueue/metrics.go` (what each series means). No Prometheus client
//! library: a controller appends [`PrometheusMetrics::write_to`] to its own exposition text.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

use crate::metrics::{MetricsProvider, QueueMetrics};

/// Histogram upper bounds in nanoseconds: 10 ns to 1000 s, ten times apart (controller-runtime's
/// `ExponentialBuckets(10e-9, 10, 12)`), with the labels Go's client prints for them.
const BUCKETS: [(u128, &str); 12] = [
    (10, "1e-08"),
    (100, "1e-07"),
    (1_000, "1e-06"),
    (10_000, "1e-05"),
    (100_000, "0.0001"),
    (1_000_000, "0.001"),
    (10_000_000, "0.01"),
    (100_000_000, "0.1"),
    (1_000_000_000, "1"),
    (10_000_000_000, "10"),
    (100_000_000_000, "100"),
    (1_000_000_000_000, "1000"),
];

/// One metric family: its name, Prometheus type, help text and how to read it from a snapshot.
struct Family {
    name: &'static str,
    kind: &'static str,
    help: &'static str,
    value: fn(&Snapshot) -> Value<'_>,
}

/// The series controller-runtime exports for a workqueue, in its order.
const FAMILIES: [Family; 7] = [
    Family {
        name: "workqueue_depth",
        kind: "gauge",
        help: "Current number of keys waiting in the workqueue.",
        value: |s| Value::Int(s.depth),
    },
    Family {
        name: "workqueue_adds_total",
        kind: "counter",
        help: "Total number of keys added to the workqueue.",
        value: |s| Value::Int(s.adds),
    },
    Family {
        name: "workqueue_queue_duration_seconds",
        kind: "histogram",
        help: "How long in seconds a key waits in the workqueue before a worker takes it.",
        value: |s| Value::Histogram(&s.queue_duration),
    },
    Family {
        name: "workqueue_work_duration_seconds",
        kind: "histogram",
        help: "How long in seconds processing a key takes, from get to done.",
        value: |s| Value::Histogram(&s.work_duration),
    },
    Family {
        name: "workqueue_unfinished_work_seconds",
        kind: "gauge",
        help: "Seconds of work in progress not yet observed by work_duration. \
                 Steady growth suggests stuck workers.",
        value: |s| Value::Seconds(s.unfinished),
    },
    Family {
        name: "workqueue_longest_running_processor_seconds",
        kind: "gauge",
        help: "How many seconds the longest running worker has held its key.",
        value: |s| Value::Seconds(s.longest),
    },
    Family {
        name: "workqueue_retries_total",
        kind: "counter",
        help: "Total number of retries scheduled by the workqueue.",
        value: |s| Value::Int(s.retries),
    },
];

/// A [`MetricsProvider`] that keeps every queue's series in memory and renders them as Prometheus
/// text (exposition format 0.0.4), each series labelled `name="<queue name>"`.
///
/// Series (as controller-runtime names them): `workqueue_depth`, `workqueue_adds_total`,
/// `workqueue_queue_duration_seconds` (histogram), `workqueue_work_duration_seconds` (histogram),
/// `workqueue_unfinished_work_seconds`, `workqueue_longest_running_processor_seconds`,
/// `workqueue_retries_total`.
///
/// ```
/// use std::sync::Arc;
/// use kubegen_workqueue::{PrometheusMetrics, Queue};
///
/// let metrics = Arc::new(PrometheusMetrics::new());
/// let queue = Queue::new("deployments", metrics.clone());
/// queue.add("default/web".to_string());
/// let text = metrics.render();
/// assert!(text.contains("workqueue_depth{name=\"deployments\"} 1\n"));
/// ```
///
/// # Guarantees
/// - Unfinished work and the longest running processor are computed at render time from the start
///   instants of the keys in flight, so they are exact (client-go samples them every 500 ms).
/// - Output is deterministic: queues appear sorted by name.
#[derive(Default)]
pub struct PrometheusMetrics {
    /// One entry per queue name, sorted so rendering is deterministic.
    queues: Mutex<BTreeMap<String, Arc<QueueSeries>>>,
}

/// The series of one named queue.
#[derive(Default)]
struct QueueSeries {
    state: Mutex<SeriesState>,
}

#[derive(Default)]
struct SeriesState {
    /// Keys added and not yet taken or discarded. Invariant: never negative.
    depth: i64,
    adds: u64,
    retries: u64,
    queue_duration: Histogram,
    work_duration: Histogram,
    /// Start instants of the keys in flight, with multiplicity. Invariant: no count is 0.
    in_flight: BTreeMap<Instant, u32>,
}

#[derive(Clone, Default)]
struct Histogram {
    /// Observations per bucket (not cumulative); the last slot counts those above every bound.
    counts: [u64; BUCKETS.len() + 1],
    count: u64,
    sum: Duration,
}

impl Histogram {
    fn observe(&mut self, value: Duration) {
        let nanos = value.as_nanos();
        let slot = BUCKETS
            .iter()
            .position(|(bound, _)| nanos <= *bound)
            .unwrap_or(BUCKETS.len());
        self.counts[slot] += 1;
        self.count += 1;
        self.sum = self.sum.saturating_add(value);
    }
}

impl PrometheusMetrics {
    /// An empty registry; queues register themselves when built with it.
    pub fn new() -> Self {
        Self::default()
    }

    /// Renders every queue's series as Prometheus text.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write_to(&mut out);
        out
    }

    /// Appends every queue's series to `out`, e.g. after the controller's own metrics.
    pub fn write_to(&self, out: &mut String) {
        let queues: Vec<(String, Arc<QueueSeries>)> = self
            .queues
            .lock()
            .iter()
            .map(|(name, series)| (escape(name), Arc::clone(series)))
            .collect();
        if queues.is_empty() {
            return;
        }
        let now = Instant::now();
        let snapshots: Vec<(String, Snapshot)> = queues
            .into_iter()
            .map(|(name, series)| (name, series.snapshot(now)))
            .collect();
        for family in &FAMILIES {
            let (metric, kind, help) = (family.name, family.kind, family.help);
            let _ = writeln!(out, "# HELP {metric} {help}\n# TYPE {metric} {kind}");
            for (name, snapshot) in &snapshots {
                write_value(out, metric, name, (family.value)(snapshot));
            }
        }
    }
}

impl std::fmt::Debug for PrometheusMetrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let queues = self.queues.lock();
        f.debug_struct("PrometheusMetrics")
            .field("queues", &queues.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl MetricsProvider for PrometheusMetrics {
    fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics> {
        let mut queues = self.queues.lock();
        let series = queues.entry(name.to_string()).or_default();
        Arc::clone(series) as Arc<dyn QueueMetrics>
    }
}

impl QueueMetrics for QueueSeries {
    fn added(&self) {
        let mut state = self.state.lock();
        state.adds += 1;
        state.depth += 1;
    }

    fn started(&self, waited: Duration, started: Instant) {
        let mut state = self.state.lock();
        state.depth -= 1;
        state.queue_duration.observe(waited);
        *state.in_flight.entry(started).or_insert(0) += 1;
    }

    fn finished(&self, started: Instant, worked: Duration) {
        let mut state = self.state.lock();
        state.work_duration.observe(worked);
        if let Some(count) = state.in_flight.get_mut(&started) {
            *count -= 1;
            if *count == 0 {
                state.in_flight.remove(&started);
            }
        }
    }

    fn discarded(&self, count: usize) {
        let mut state = self.state.lock();
        state.depth -= i64::try_from(count).unwrap_or(i64::MAX);
    }

    fn retried(&self) {
        self.state.lock().retries += 1;
    }
}

/// One queue's values at one instant, so rendering does not hold the queue's metrics lock.
struct Snapshot {
    depth: u64,
    adds: u64,
    retries: u64,
    queue_duration: Histogram,
    work_duration: Histogram,
    unfinished: Duration,
    longest: Duration,
}

impl QueueSeries {
    fn snapshot(&self, now: Instant) -> Snapshot {
        let state = self.state.lock();
        let unfinished = state
            .in_flight
            .iter()
            .map(|(start, count)| now.saturating_duration_since(*start).saturating_mul(*count))
            .fold(Duration::ZERO, Duration::saturating_add);
        let longest = state
            .in_flight
            .keys()
            .next()
            .map_or(Duration::ZERO, |start| {
                now.saturating_duration_since(*start)
            });
        Snapshot {
            depth: u64::try_from(state.depth).unwrap_or(0),
            adds: state.adds,
            retries: state.retries,
            queue_duration: state.queue_duration.clone(),
            work_duration: state.work_duration.clone(),
            unfinished,
            longest,
        }
    }
}

enum Value<'a> {
    Int(u64),
    Seconds(Duration),
    Histogram(&'a Histogram),
}

fn write_value(out: &mut String, metric: &str, name: &str, value: Value<'_>) {
    match value {
        Value::Int(v) => {
            let _ = writeln!(out, "{metric}{{name=\"{name}\"}} {v}");
        }
        Value::Seconds(d) => {
            let _ = writeln!(out, "{metric}{{name=\"{name}\"}} {}", d.as_secs_f64());
        }
        Value::Histogram(h) => {
            let mut cumulative = 0;
            for ((_, label), count) in BUCKETS.iter().zip(h.counts) {
                cumulative += count;
                let _ = writeln!(
                    out,
                    "{metric}_bucket{{name=\"{name}\",le=\"{label}\"}} {cumulative}"
                );
            }
            let _ = writeln!(
                out,
                "{metric}_bucket{{name=\"{name}\",le=\"+Inf\"}} {}",
                h.count
            );
            let _ = writeln!(
                out,
                "{metric}_sum{{name=\"{name}\"}} {}",
                h.sum.as_secs_f64()
            );
            let _ = writeln!(out, "{metric}_count{{name=\"{name}\"}} {}", h.count);
        }
    }
}

/// Escapes a label value as the text format requires.
fn escape(value: &str) -> String {
    value
        .replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

#[cfg(test)]
#[path = "prometheus_tests.rs"]
mod tests;
