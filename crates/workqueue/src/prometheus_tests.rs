use prometheus_parse::{Scrape, Value};

use super::*;
use crate::{DelayingQueue, Queue};

const MS: Duration = Duration::from_millis(1);

/// A provider registered in its own registry, and a way to scrape that registry.
struct Scraper {
    metrics: Arc<PrometheusMetrics>,
    registry: Registry,
}

impl Scraper {
    fn new() -> Scraper {
        let mut registry = Registry::default();
        let metrics = PrometheusMetrics::new();
        metrics.register(&mut registry);
        Scraper {
            metrics: Arc::new(metrics),
            registry,
        }
    }

    fn scrape(&self) -> Scrape {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.registry)
            .unwrap_or_else(|e| panic!("encoding: {e}"));
        Scrape::parse(text.lines().map(|line| Ok(line.to_owned())))
            .unwrap_or_else(|e| panic!("parsing: {e}\n{text}"))
    }

    /// The value of `metric` for the queue `queue`, as a number (histograms: their bucket of
    /// upper bound `le`).
    fn value(&self, metric: &str, queue: &str, le: Option<f64>) -> f64 {
        let scrape = self.scrape();
        let sample = scrape
            .samples
            .iter()
            .find(|s| s.metric == metric && s.labels.get("name") == Some(queue));
        match (sample.map(|s| &s.value), le) {
            (Some(Value::Untyped(v) | Value::Gauge(v) | Value::Counter(v)), None) => *v,
            (Some(Value::Histogram(buckets)), Some(le)) => buckets
                .iter()
                .find(|b| b.less_than == le)
                .map_or_else(|| panic!("{metric}: no bucket {le}"), |b| b.count),
            (other, _) => panic!("{metric}{{name={queue}}}: {other:?}"),
        }
    }
}

#[tokio::test(start_paused = true)]
async fn series_follow_adds_gets_and_dones() {
    let scraper = Scraper::new();
    let q = Queue::new("q", scraper.metrics.clone());
    q.add("a");
    q.add("b");
    q.add("a");
    let value = |metric: &str| scraper.value(metric, "q", None);
    assert_eq!(
        value("workqueue_adds_total"),
        2.0,
        "the duplicate is not an add"
    );
    assert_eq!(value("workqueue_depth"), 2.0);

    tokio::time::advance(10 * MS).await;
    let a = q.get().await.expect("a");
    tokio::time::advance(Duration::from_secs(3)).await;
    let b = q.get().await.expect("b");
    tokio::time::advance(Duration::from_secs(1)).await;
    assert_eq!(value("workqueue_depth"), 0.0);
    assert_eq!(value("workqueue_unfinished_work_seconds"), 5.0, "4 s + 1 s");
    assert_eq!(value("workqueue_longest_running_processor_seconds"), 4.0);
    let queued = |le| scraper.value("workqueue_queue_duration_seconds", "q", Some(le));
    assert_eq!(queued(0.001), 0.0);
    assert_eq!(queued(0.01), 1.0, "10 ms is <= 0.01");
    assert_eq!(queued(1.0), 1.0);
    assert_eq!(queued(10.0), 2.0, "3.01 s");
    assert_eq!(queued(f64::INFINITY), 2.0);
    // The histogram sums f64 seconds: 0.01 + 3.01 is 3.02 up to rounding.
    let sum = value("workqueue_queue_duration_seconds_sum");
    assert!((sum - 3.02).abs() < 1e-9, "{sum}");
    assert_eq!(value("workqueue_queue_duration_seconds_count"), 2.0);

    q.done(&a);
    assert_eq!(value("workqueue_unfinished_work_seconds"), 1.0);
    assert_eq!(value("workqueue_longest_running_processor_seconds"), 1.0);
    assert_eq!(value("workqueue_work_duration_seconds_sum"), 4.0);
    let worked = |le| scraper.value("workqueue_work_duration_seconds", "q", Some(le));
    assert_eq!(worked(1.0), 0.0);
    assert_eq!(worked(10.0), 1.0);
    q.done(&b);
    assert_eq!(value("workqueue_unfinished_work_seconds"), 0.0);
    assert_eq!(value("workqueue_longest_running_processor_seconds"), 0.0);
    assert_eq!(value("workqueue_work_duration_seconds_count"), 2.0);
}

#[tokio::test(start_paused = true)]
async fn delayed_adds_count_retries_and_shutdown_clears_depth() {
    let scraper = Scraper::new();
    let q = DelayingQueue::new("d", scraper.metrics.clone());
    q.add_after("a", 5 * MS);
    q.add_after("b", Duration::ZERO);
    q.add("c");
    q.add("a");
    assert_eq!(scraper.value("workqueue_retries_total", "d", None), 2.0);
    assert_eq!(scraper.value("workqueue_depth", "d", None), 3.0);
    q.shut_down();
    assert_eq!(
        scraper.value("workqueue_depth", "d", None),
        0.0,
        "discarded keys leave the depth"
    );
}

#[tokio::test(start_paused = true)]
async fn every_family_is_declared_once_with_its_type_and_each_queue_has_its_series() {
    let scraper = Scraper::new();
    let _z = Queue::<u32>::new("zeta", scraper.metrics.clone());
    let _a = Queue::<u32>::new("alpha", scraper.metrics.clone());
    let scrape = scraper.scrape();
    let families = [
        "workqueue_depth",
        "workqueue_adds",
        "workqueue_queue_duration_seconds",
        "workqueue_work_duration_seconds",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "workqueue_retries",
    ];
    let mut declared: Vec<&str> = scrape.docs.keys().map(String::as_str).collect();
    declared.sort_unstable();
    let mut expected = families.to_vec();
    expected.sort_unstable();
    assert_eq!(declared, expected);
    // Typed samples show the declared type: gauges and histograms by name, counters by their
    // OpenMetrics `_total` sample (which the parser leaves untyped).
    let kind = |metric: &str, queue: &str| {
        let sample = scrape
            .samples
            .iter()
            .find(|s| s.metric == metric && s.labels.get("name") == Some(queue));
        match sample.map(|s| &s.value) {
            Some(Value::Gauge(_)) => "gauge",
            Some(Value::Histogram(_)) => "histogram",
            Some(Value::Untyped(_)) => "untyped",
            other => panic!("{metric}{{name={queue}}}: {other:?}"),
        }
    };
    for queue in ["alpha", "zeta"] {
        for (metric, expected) in [
            ("workqueue_depth", "gauge"),
            ("workqueue_adds_total", "untyped"),
            ("workqueue_queue_duration_seconds", "histogram"),
            ("workqueue_work_duration_seconds", "histogram"),
            ("workqueue_unfinished_work_seconds", "gauge"),
            ("workqueue_longest_running_processor_seconds", "gauge"),
            ("workqueue_retries_total", "untyped"),
        ] {
            assert_eq!(kind(metric, queue), expected, "{metric} of {queue}");
        }
    }
}
