use prometheus_parse::{HistogramCount, Scrape, Value};

use super::*;

/// An application with one series of its own, as image-police has.
#[derive(Clone, Default)]
struct Police {
    deleted: Counter,
}

impl AppMetrics for Police {
    const PREFIX: &'static str = "image_police";

    fn register(&self, registry: &mut Registry) {
        registry.register(
            "image_police_deployments_deleted",
            "Deleted",
            self.deleted.clone(),
        );
    }
}

fn parse(text: &str) -> Scrape {
    Scrape::parse(text.lines().map(|line| Ok(line.to_owned())))
        .unwrap_or_else(|e| panic!("parsing: {e}\n{text}"))
}

/// The value of the one sample of `metric` with exactly `labels`.
fn sample(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<Value> {
    let mut found = scrape.samples.iter().filter(|s| {
        s.metric == metric
            && s.labels.len() == labels.len()
            && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
    });
    let value = found.next().map(|s| s.value.clone());
    assert!(found.next().is_none(), "{metric} {labels:?} twice");
    value
}

#[test]
fn reconciles_are_counted_by_result_and_bucketed_cumulatively() {
    let process = ProcessMetrics::<Police>::default();
    let metrics = &process.controller;
    metrics.reconcile_started();
    assert_eq!(metrics.in_flight(), 1);
    metrics.observe_reconcile(Outcome::Success, Duration::from_millis(3));
    assert_eq!(metrics.in_flight(), 0);
    metrics.observe_reconcile(Outcome::Success, Duration::from_millis(30));
    metrics.observe_reconcile(Outcome::Error, Duration::from_secs(20));
    assert_eq!(
        metrics.in_flight(),
        0,
        "an unstarted reconcile does not go below zero"
    );
    assert_eq!(metrics.reconciles_finished(), 3);
    let scrape = parse(&process.encode());
    let total = "image_police_reconcile_total";
    assert_eq!(
        sample(&scrape, total, &[("result", "success")]),
        Some(Value::Untyped(2.0))
    );
    assert_eq!(
        sample(&scrape, total, &[("result", "error")]),
        Some(Value::Untyped(1.0))
    );
    assert_eq!(
        sample(&scrape, "image_police_reconcile_errors_total", &[]),
        Some(Value::Untyped(1.0))
    );
    let cumulative = [1., 1., 1., 2., 2., 2., 2., 2., 2., 2., 2., 3.];
    let bounds = BUCKETS.iter().copied().chain([f64::INFINITY]);
    let expected = bounds
        .zip(cumulative)
        .map(|(less_than, count)| HistogramCount { less_than, count })
        .collect();
    assert_eq!(
        sample(&scrape, "image_police_reconcile_duration_seconds", &[]),
        Some(Value::Histogram(expected))
    );
    assert_eq!(
        sample(
            &scrape,
            "image_police_reconcile_duration_seconds_count",
            &[]
        ),
        Some(Value::Untyped(3.0))
    );
}

#[test]
fn gauges_and_counters_show_their_current_values() {
    let process = ProcessMetrics::<Police>::default();
    process.controller.set_leader(true);
    process.app.deleted.inc();
    let scrape = parse(&process.encode());
    assert_eq!(
        sample(&scrape, "image_police_leader", &[]),
        Some(Value::Gauge(1.0))
    );
    assert_eq!(
        sample(&scrape, "image_police_deployments_deleted_total", &[]),
        Some(Value::Untyped(1.0))
    );
    process.controller.set_leader(false);
    let scrape = parse(&process.encode());
    assert_eq!(
        sample(&scrape, "image_police_leader", &[]),
        Some(Value::Gauge(0.0))
    );
}

#[tokio::test]
async fn one_scrape_holds_every_crates_families_and_ends_with_eof() {
    let process = ProcessMetrics::<Police>::default();
    // A family appears once it has a series: give each crate's metrics one.
    let mut config = kubegen_client::Config::new(
        "http://127.0.0.1:1"
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    config.metrics = process.client.clone();
    let client = kubegen_client::Client::new(config).unwrap_or_else(|e| panic!("{e}"));
    let request = http::Request::get("/api").body(bytes::Bytes::new());
    let refused = client.send(request.unwrap_or_else(|e| panic!("{e}"))).await;
    assert!(refused.is_err(), "nothing listens on port 1");
    let mut options = kubegen_cache::FactoryOptions::default();
    options.metrics = process.informers.clone();
    let factory = kubegen_informers::SharedInformerFactory::new(client, options);
    let informer = factory.apps_v1().deployments().informer();
    let handler = kubegen_cache::HandlerFns::new();
    let _registration = informer.add_event_handler(handler);
    let queues = Arc::new(process.queues.clone());
    let _queue = kubegen_workqueue::Queue::<String>::new("image-police", queues);
    let text = process.encode();
    let scrape = parse(&text);
    for family in [
        "image_police_leader",
        "image_police_reconciles_in_flight",
        "rest_client_requests",
        "rest_client_request_duration_seconds",
        "workqueue_depth",
        "workqueue_longest_running_processor_seconds",
        "informer_lists",
        "informer_handler_backlog",
    ] {
        assert!(
            scrape.docs.contains_key(family),
            "{family} missing:\n{text}"
        );
    }
    let backlog = [("handler", "0"), ("informer", "deployments")];
    assert_eq!(
        sample(&scrape, "informer_handler_backlog", &backlog),
        Some(Value::Gauge(0.0))
    );
    assert_eq!(
        text.lines().last(),
        Some("# EOF"),
        "OpenMetrics ends with # EOF"
    );
}
