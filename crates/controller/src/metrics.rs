//! The controller's Prometheus metrics, rendered in the text exposition format (version 0.0.4).
//!
//! Operators ask three questions of a controller: is it doing work, is the work failing, and how
//! long does it take. The reconcile counters and the duration histogram answer them; the
//! workqueue's own metrics (depth, latency, retries) and the client's request metrics are appended
//! by [`Metrics::add_source`], so one scrape shows the whole pipeline. The names follow
//! controller-runtime (`controller_runtime_reconcile_*`) with an `image_police_` prefix.
//!
//! Hand-written rather than a metrics crate: five series do not justify a dependency, and the
//! format is a few lines of text.

use std::fmt::Write as _;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;

/// Upper bounds (seconds) of the reconcile duration histogram buckets.
const BUCKETS: [f64; 11] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0,
];

/// Renders extra metric families (already in exposition format) at scrape time.
pub type Source = Box<dyn Fn(&mut String) + Send + Sync>;

/// How one reconcile ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Done; the key is forgotten by the rate limiter.
    Success,
    /// Failed; the key is requeued with backoff.
    Error,
}

/// Cheap to clone handle to the controller's metrics.
#[derive(Clone, Default)]
pub struct Metrics {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    reconcile_success: AtomicU64,
    reconcile_error: AtomicU64,
    deployments_deleted: AtomicU64,
    events_failed: AtomicU64,
    /// Reconciles running right now.
    in_flight: AtomicU64,
    leader: AtomicBool,
    /// Cumulative bucket counts. Invariant: `histogram.counts[i] <= histogram.counts[i + 1]`
    /// and the last count equals `reconcile_success + reconcile_error` once a reconcile is recorded.
    histogram: Mutex<Histogram>,
    sources: Mutex<Vec<Source>>,
}

#[derive(Default)]
struct Histogram {
    /// Observations `<= BUCKETS[i]`, plus a final `+Inf` bucket.
    counts: [u64; BUCKETS.len() + 1],
    sum_seconds: f64,
}

impl Metrics {
    /// Marks the start of a reconcile; [`observe_reconcile`](Self::observe_reconcile) ends it.
    pub fn reconcile_started(&self) {
        self.inner.in_flight.fetch_add(1, Ordering::Relaxed);
    }

    /// How many reconciles are running right now.
    pub fn in_flight(&self) -> u64 {
        self.inner.in_flight.load(Ordering::Relaxed)
    }

    /// How many reconciles have finished, successfully or not.
    pub fn reconciles_finished(&self) -> u64 {
        self.inner.reconcile_success.load(Ordering::Relaxed)
            + self.inner.reconcile_error.load(Ordering::Relaxed)
    }

    /// Records one finished reconcile (started with [`reconcile_started`](Self::reconcile_started)).
    pub fn observe_reconcile(&self, outcome: Outcome, took: Duration) {
        // Saturating: a reconcile observed without a start must not wrap the gauge.
        let _ = self
            .inner
            .in_flight
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                Some(n.saturating_sub(1))
            });
        let counter = match outcome {
            Outcome::Success => &self.inner.reconcile_success,
            Outcome::Error => &self.inner.reconcile_error,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        let seconds = took.as_secs_f64();
        let mut histogram = self.inner.histogram.lock();
        for (count, bound) in histogram
            .counts
            .iter_mut()
            .zip(BUCKETS.iter().chain([&f64::INFINITY]))
        {
            if seconds <= *bound {
                *count += 1;
            }
        }
        histogram.sum_seconds += seconds;
    }

    /// Counts one Deployment deleted for running a denied image.
    pub fn deployment_deleted(&self) {
        self.inner
            .deployments_deleted
            .fetch_add(1, Ordering::Relaxed);
    }

    /// Counts one Event that could not be written (Events are best effort).
    pub fn event_failed(&self) {
        self.inner.events_failed.fetch_add(1, Ordering::Relaxed);
    }

    /// Sets whether this replica currently holds the leader Lease (1) or not (0).
    pub fn set_leader(&self, leader: bool) {
        self.inner.leader.store(leader, Ordering::Relaxed);
    }

    /// Appends `source`'s families to every scrape (workqueue and client metrics).
    pub fn add_source(&self, source: Source) {
        self.inner.sources.lock().push(source);
    }

    /// The full scrape body.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.render_counters(&mut out);
        self.render_histogram(&mut out);
        self.render_gauges(&mut out);
        for source in self.inner.sources.lock().iter() {
            source(&mut out);
        }
        out
    }

    fn render_counters(&self, out: &mut String) {
        let load = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        let inner = &self.inner;
        let (success, error) = (load(&inner.reconcile_success), load(&inner.reconcile_error));
        family(
            out,
            "image_police_reconcile_total",
            "counter",
            "Reconciles by result.",
        );
        sample(
            out,
            "image_police_reconcile_total{result=\"success\"}",
            success,
        );
        sample(out, "image_police_reconcile_total{result=\"error\"}", error);
        let counters = [
            (
                "image_police_reconcile_errors_total",
                "Reconciles that failed and were requeued.",
                error,
            ),
            (
                "image_police_deployments_deleted_total",
                "Deployments deleted for running a denied image.",
                load(&inner.deployments_deleted),
            ),
            (
                "image_police_events_failed_total",
                "Events that could not be recorded.",
                load(&inner.events_failed),
            ),
        ];
        for (name, help, value) in counters {
            family(out, name, "counter", help);
            sample(out, name, value);
        }
    }

    fn render_gauges(&self, out: &mut String) {
        let inner = &self.inner;
        let gauges = [
            (
                "image_police_reconciles_in_flight",
                "Reconciles running right now.",
                inner.in_flight.load(Ordering::Relaxed),
            ),
            (
                "image_police_leader",
                "1 while this replica holds the leader Lease.",
                u64::from(inner.leader.load(Ordering::Relaxed)),
            ),
        ];
        for (name, help, value) in gauges {
            family(out, name, "gauge", help);
            sample(out, name, value);
        }
    }

    fn render_histogram(&self, out: &mut String) {
        const NAME: &str = "image_police_reconcile_duration_seconds";
        family(out, NAME, "histogram", "Time spent in one reconcile.");
        let histogram = self.inner.histogram.lock();
        for (bound, count) in BUCKETS.iter().zip(histogram.counts.iter()) {
            let _ = writeln!(out, "{NAME}_bucket{{le=\"{bound}\"}} {count}");
        }
        let total = histogram.counts[BUCKETS.len()];
        let _ = writeln!(out, "{NAME}_bucket{{le=\"+Inf\"}} {total}");
        let _ = writeln!(out, "{NAME}_sum {}", histogram.sum_seconds);
        let _ = writeln!(out, "{NAME}_count {total}");
    }

    #[cfg(test)]
    fn check_invariants(&self) {
        let histogram = self.inner.histogram.lock();
        assert!(histogram.counts.windows(2).all(|w| w[0] <= w[1]));
        let total = self.inner.reconcile_success.load(Ordering::Relaxed)
            + self.inner.reconcile_error.load(Ordering::Relaxed);
        assert_eq!(histogram.counts[BUCKETS.len()], total);
    }
}

fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

fn sample(out: &mut String, series: &str, value: u64) {
    let _ = writeln!(out, "{series} {value}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
        text.lines().find(|l| l.starts_with(prefix)).unwrap_or("")
    }

    #[test]
    fn reconciles_are_counted_by_result_and_bucketed_cumulatively() {
        let metrics = Metrics::default();
        metrics.reconcile_started();
        assert_eq!(metrics.in_flight(), 1);
        metrics.observe_reconcile(Outcome::Success, Duration::from_millis(3));
        assert_eq!(metrics.in_flight(), 0);
        metrics.check_invariants();
        metrics.observe_reconcile(Outcome::Success, Duration::from_millis(30));
        metrics.observe_reconcile(Outcome::Error, Duration::from_secs(20));
        metrics.check_invariants();
        let text = metrics.render();
        assert_eq!(
            line(&text, "image_police_reconcile_total{result=\"success\"}"),
            "image_police_reconcile_total{result=\"success\"} 2"
        );
        assert_eq!(
            line(&text, "image_police_reconcile_errors_total "),
            "image_police_reconcile_errors_total 1"
        );
        let bucket = "image_police_reconcile_duration_seconds_bucket";
        assert_eq!(
            line(&text, &format!("{bucket}{{le=\"0.005\"}}")),
            format!("{bucket}{{le=\"0.005\"}} 1")
        );
        assert_eq!(
            line(&text, &format!("{bucket}{{le=\"0.05\"}}")),
            format!("{bucket}{{le=\"0.05\"}} 2")
        );
        assert_eq!(
            line(&text, &format!("{bucket}{{le=\"10\"}}")),
            format!("{bucket}{{le=\"10\"}} 2")
        );
        assert_eq!(
            line(&text, &format!("{bucket}{{le=\"+Inf\"}}")),
            format!("{bucket}{{le=\"+Inf\"}} 3")
        );
        assert_eq!(
            line(&text, "image_police_reconcile_duration_seconds_count"),
            "image_police_reconcile_duration_seconds_count 3"
        );
    }

    #[test]
    fn every_family_has_help_and_type_lines() {
        let metrics = Metrics::default();
        metrics.set_leader(true);
        metrics.deployment_deleted();
        let text = metrics.render();
        for name in [
            "image_police_reconcile_total",
            "image_police_reconcile_duration_seconds",
            "image_police_deployments_deleted_total",
            "image_police_leader",
        ] {
            assert!(text.contains(&format!("# HELP {name} ")), "{name}");
            assert!(text.contains(&format!("# TYPE {name} ")), "{name}");
        }
        assert_eq!(line(&text, "image_police_leader "), "image_police_leader 1");
        assert_eq!(
            line(&text, "image_police_deployments_deleted_total "),
            "image_police_deployments_deleted_total 1"
        );
    }

    #[test]
    fn added_sources_are_appended_to_the_scrape() {
        let metrics = Metrics::default();
        metrics.add_source(Box::new(|out| {
            out.push_str("workqueue_depth{name=\"image-police\"} 4\n")
        }));
        assert!(
            metrics
                .render()
                .ends_with("workqueue_depth{name=\"image-police\"} 4\n")
        );
    }
}
