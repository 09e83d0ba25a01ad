use prometheus_parse::{HistogramCount, Scrape, Value};

use super::*;

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
fn reconciles_are_counted_by_controller_and_result_and_bucketed_cumulatively() {
    let process = ProcessMetrics::default();
    let metrics = process.controller("police");
    let other = process.controller("other");
    metrics.reconcile_started();
    assert_eq!(metrics.in_flight(), 1);
    metrics.observe_reconcile(Outcome::Success, Duration::from_millis(3));
    assert_eq!(metrics.in_flight(), 0);
    metrics.observe_reconcile(Outcome::RequeueAfter, Duration::from_millis(30));
    metrics.observe_reconcile(Outcome::Error, Duration::from_millis(700));
    metrics.observe_reconcile(Outcome::Terminal, Duration::from_secs(2));
    metrics.observe_reconcile(Outcome::Panic, Duration::from_secs(20));
    other.observe_reconcile(Outcome::Success, Duration::from_millis(1));
    assert_eq!(
        metrics.in_flight(),
        0,
        "an unstarted reconcile does not go below zero"
    );
    assert_eq!(metrics.reconciles_finished(), 5);
    assert_eq!(other.reconciles_finished(), 1);
    let scrape = parse(&process.encode());
    let total = "controller_runtime_reconcile_total";
    let police = ("controller", "police");
    for (result, count) in [("success", 1.0), ("requeue_after", 1.0), ("error", 3.0)] {
        assert_eq!(
            sample(&scrape, total, &[police, ("result", result)]),
            Some(Value::Untyped(count)),
            "{result}"
        );
    }
    for (family, count) in [
        ("controller_runtime_reconcile_errors_total", 3.0),
        ("controller_runtime_terminal_reconcile_errors_total", 1.0),
        ("controller_runtime_reconcile_panics_total", 1.0),
    ] {
        assert_eq!(
            sample(&scrape, family, &[police]),
            Some(Value::Untyped(count)),
            "{family}"
        );
    }
    let cumulative = BUCKETS
        .iter()
        .map(|bound| {
            [0.003, 0.03, 0.7, 2.0, 20.0]
                .iter()
                .filter(|t| *t <= bound)
                .count()
        })
        .chain([5])
        .map(|count| count as f64);
    let bounds = BUCKETS.iter().copied().chain([f64::INFINITY]);
    let expected = bounds
        .zip(cumulative)
        .map(|(less_than, count)| HistogramCount { less_than, count })
        .collect();
    assert_eq!(
        sample(
            &scrape,
            "controller_runtime_reconcile_time_seconds",
            &[police]
        ),
        Some(Value::Histogram(expected))
    );
    assert_eq!(
        sample(
            &scrape,
            "controller_runtime_reconcile_time_seconds_count",
            &[("controller", "other")]
        ),
        Some(Value::Untyped(1.0))
    );
}

#[test]
fn gauges_and_application_counters_show_their_current_values() {
    let process = ProcessMetrics::default();
    let deleted: Counter = Counter::default();
    process.register(|registry| {
        registry.register(
            "image_police_deployments_deleted",
            "Deleted",
            deleted.clone(),
        );
    });
    process.set_leader("image-police", true);
    process
        .controller("police")
        .set_max_concurrent_reconciles(4);
    deleted.inc();
    let scrape = parse(&process.encode());
    let lease = [("name", "image-police")];
    assert_eq!(
        sample(&scrape, "leader_election_master_status", &lease),
        Some(Value::Gauge(1.0))
    );
    assert_eq!(
        sample(
            &scrape,
            "controller_runtime_max_concurrent_reconciles",
            &[("controller", "police")]
        ),
        Some(Value::Gauge(4.0))
    );
    assert_eq!(
        sample(&scrape, "image_police_deployments_deleted_total", &[]),
        Some(Value::Untyped(1.0))
    );
    process.set_leader("image-police", false);
    let scrape = parse(&process.encode());
    assert_eq!(
        sample(&scrape, "leader_election_master_status", &lease),
        Some(Value::Gauge(0.0))
    );
}
#[tokio::test]
async fn one_scrape_holds_every_crates_families_and_ends_with_eof() {
    // A family appears once it has a series: give each crate's metrics one.
    let config = kubegen_client::Config::new(
        "http://127.0.0.1:1"
            .parse()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let client = kubegen_client::Client::new(config).unwrap_or_else(|e| panic!("{e}"));
    let process = ProcessMetrics::new(client.metrics());
    let request = http::Request::get("/api").body(bytes::Bytes::new());
    let refused = client.send(request.unwrap_or_else(|e| panic!("{e}"))).await;
    assert!(refused.is_err(), "nothing listens on port 1");
    let options = kubegen_cache::FactoryOptions::default().metrics(process.informers().clone());
    let factory = kubegen_informers::SharedInformerFactory::new(client, options);
    let informer = factory.apps_v1().deployments().informer();
    let handler = kubegen_cache::HandlerFns::new();
    let _registration = informer.add_event_handler(handler);
    let queues = Arc::new(process.queues().clone());
    let _queue = kubegen_workqueue::Queue::<String>::new("image-police", queues);
    process
        .controller("image-police")
        .observe_reconcile(Outcome::Success, Duration::ZERO);
    process.set_leader("image-police", false);
    let text = process.encode();
    let scrape = parse(&text);
    for family in [
        "controller_runtime_reconcile",
        "controller_runtime_active_workers",
        "leader_election_master_status",
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
