//! How a queue reports what it does: a small provider trait, a no-op default, and the event
//! vocabulary the Prometheus exporter ([`PrometheusMetrics`](crate::PrometheusMetrics)) consumes.
//!
//! # Why keep a provider trait next to one exporter
//! It keeps `queue.rs` free of any metrics library, and it makes "no metrics" free: a queue built
//! with [`NoopMetrics`] makes empty calls and skips reading the clock (see
//! [`QueueMetrics::needs_time`]), so tests, benchmarks and libraries need no registry at all.
//!
//! Mirrors client-go `util/workqueue/metrics.go`, with one simplification: client-go hands each queue
//! seven separate metric objects (depth gauge, adds counter, two histograms, ...) and runs a 500 ms
//! ticker per queue to push "unfinished work" gauges. Here a queue reports *events* (a key was added,
//! taken, finished, retried, discarded) to one [`QueueMetrics`] object, and an exporter derives every
//! series from them. Because [`QueueMetrics::started`] and [`QueueMetrics::finished`] carry the start
//! instant, an exporter can compute unfinished work exactly at scrape time, so no ticker task exists.
//!
//! # Guarantees
//! - Events for one queue are reported while the queue's lock is held, so an exporter sees them in
//!   the order they happened and `depth` never goes negative.
//! - Deduplicated adds are not reported: `adds_total` counts keys that entered the queue, as in
//!   client-go.

use std::sync::Arc;
use std::time::Duration;

use tokio::time::Instant;

/// Creates the metrics sink of each named queue (client-go's `MetricsProvider`).
///
/// Why a provider: the controller decides once where metrics go ([`NoopMetrics`] or
/// [`PrometheusMetrics`](crate::PrometheusMetrics)) and every queue it builds asks the provider for
/// its own sink, labelled by the queue's name.
pub trait MetricsProvider: Send + Sync {
    /// Returns the sink for the queue called `name`. Called once per queue, at construction.
    ///
    /// Queue names should be unique per provider; two queues with one name feed the same series.
    fn queue_metrics(&self, name: &str) -> Arc<dyn QueueMetrics>;
}

/// The events one queue reports. Every method is cheap and must not block: queues call them while
/// holding their lock.
pub trait QueueMetrics: Send + Sync {
    /// A key entered the queue (it was not already waiting): `adds_total` +1, `depth` +1.
    fn added(&self);
    /// A worker took a key that had waited `waited` since it was added; its work started at
    /// `started`: `depth` -1, observe `queue_duration_seconds`.
    fn started(&self, waited: Duration, started: Instant);
    /// A worker called `done` for the key it took at `started`, after working `worked`: observe
    /// `work_duration_seconds`; the key no longer counts as unfinished work.
    fn finished(&self, started: Instant, worked: Duration);
    /// Shutdown discarded `count` keys that were waiting: `depth` -`count`.
    fn discarded(&self, count: usize);
    /// A delayed or rate-limited add was scheduled: `retries_total` +1.
    fn retried(&self);
    /// Whether this sink uses the instants and durations it is given. When `false`, the queue skips
    /// reading the clock (about 50 ns per read, three reads per key) and passes a fixed instant and
    /// zero durations instead.
    fn needs_time(&self) -> bool {
        true
    }
}

/// The default provider: records nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoopMetrics;

impl NoopMetrics {
    /// A shared no-op provider, ready to pass to a queue constructor.
    pub fn shared() -> Arc<dyn MetricsProvider> {
        Arc::new(NoopMetrics)
    }
}

impl MetricsProvider for NoopMetrics {
    fn queue_metrics(&self, _name: &str) -> Arc<dyn QueueMetrics> {
        Arc::new(NoopMetrics)
    }
}

impl QueueMetrics for NoopMetrics {
    fn added(&self) {}
    fn started(&self, _waited: Duration, _started: Instant) {}
    fn finished(&self, _started: Instant, _worked: Duration) {}
    fn discarded(&self, _count: usize) {}
    fn retried(&self) {}
    fn needs_time(&self) -> bool {
        false
    }
}
