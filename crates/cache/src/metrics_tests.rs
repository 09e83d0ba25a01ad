use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use prometheus_parse::{Scrape, Value};

use super::*;
use crate::{
    handler::HandlerFns,
    informer::{InformerOptions, SharedIndexInformer},
    processor::{Notification, Processor},
    scripted::{Script, Step, modified, page, status_410},
    test_util::cm,
};

/// `metrics` registered in a fresh registry, scraped and parsed.
fn scrape(metrics: &InformerMetrics) -> Scrape {
    let mut registry = Registry::default();
    metrics.register(&mut registry);
    let mut text = String::new();
    prometheus_client::encoding::text::encode(&mut text, &registry)
        .unwrap_or_else(|e| panic!("encoding: {e}"));
    Scrape::parse(text.lines().map(|line| Ok(line.to_owned())))
        .unwrap_or_else(|e| panic!("parsing: {e}\n{text}"))
}

/// The numeric value of the one sample of `metric` with exactly `labels`, if any.
fn value(scrape: &Scrape, metric: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let found: Vec<&Value> = scrape
        .samples
        .iter()
        .filter(|s| {
            s.metric == metric
                && s.labels.len() == labels.len()
                && labels.iter().all(|(k, v)| s.labels.get(k) == Some(*v))
        })
        .map(|s| &s.value)
        .collect();
    match found.as_slice() {
        [] => None,
        [Value::Untyped(v) | Value::Gauge(v) | Value::Counter(v)] => Some(*v),
        other => panic!("{metric} {labels:?}: {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn reflector_counts_lists_relists_watches_and_stamps_the_last_sync() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a"], "10", None))
        .watch(Ok(vec![modified("a", "11"), status_410()]))
        .list(page(&["a"], "12", None))
        .watch(Ok(vec![Step::Pause(Duration::from_secs(3600))]));
    let metrics = InformerMetrics::default();
    let options = InformerOptions {
        name: "configmaps".into(),
        metrics: metrics.clone(),
        streaming_list: false,
        ..InformerOptions::default()
    };
    let informer = SharedIndexInformer::new(Arc::clone(&script), options);
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    informer.start();
    tokio::time::sleep(Duration::from_secs(5)).await;
    let scrape = scrape(&metrics);
    let of = [("informer", "configmaps")];
    assert_eq!(value(&scrape, "informer_lists_total", &of), Some(2.0));
    assert_eq!(value(&scrape, "informer_relists_total", &of), Some(1.0));
    assert_eq!(value(&scrape, "informer_watches_total", &of), Some(2.0));
    let last_sync = value(&scrape, "informer_last_sync_timestamp_seconds", &of);
    assert!(
        last_sync.is_some_and(|t| t >= before),
        "{last_sync:?} < {before}"
    );
    informer.shutdown();
}

fn add(name: &str) -> Notification<ConfigMap> {
    Notification::Add {
        obj: Arc::new(cm("ns", name, "1")).into(),
        is_in_initial_list: false,
    }
}

#[tokio::test(start_paused = true)]
async fn handler_backlog_counts_buffered_notifications_until_handled() {
    let metrics = InformerMetrics::default();
    let processor: Processor<ConfigMap> =
        Processor::new(Duration::ZERO, Arc::default(), Arc::default())
            .with_metrics(metrics.clone(), "configmaps".into());
    let initial = vec![Arc::new(cm("ns", "cached", "1"))];
    let handler = Arc::new(HandlerFns::<ConfigMap>::new());
    let (first, _) = processor.add(handler.clone(), Duration::ZERO, initial);
    let (second, _) = processor.add(handler, Duration::ZERO, Vec::new());
    processor.distribute(add("a"), false);
    processor.distribute(add("b"), false);
    processor.check_invariants();
    // Not started: every notification waits in its handler's buffer.
    let backlog = |scrape: &Scrape, handler: u64| {
        let labels = [
            ("handler", handler.to_string()),
            ("informer", "configmaps".into()),
        ];
        let labels: Vec<(&str, &str)> = labels.iter().map(|(k, v)| (*k, v.as_str())).collect();
        value(scrape, "informer_handler_backlog", &labels)
    };
    let scrape_now = scrape(&metrics);
    assert_eq!(
        backlog(&scrape_now, first),
        Some(3.0),
        "the cached object and two adds"
    );
    assert_eq!(backlog(&scrape_now, second), Some(2.0));
    processor.start();
    tokio::time::sleep(Duration::from_millis(1)).await;
    let scrape_now = scrape(&metrics);
    assert_eq!(backlog(&scrape_now, first), Some(0.0));
    assert_eq!(backlog(&scrape_now, second), Some(0.0));
    assert!(processor.remove(first));
    assert_eq!(
        backlog(&scrape(&metrics), first),
        None,
        "a removed handler has no series"
    );
    processor.stop();
    assert_eq!(
        backlog(&scrape(&metrics), second),
        None,
        "nor has a stopped one"
    );
}

#[tokio::test(start_paused = true)]
async fn a_caught_transform_panic_is_a_user_code_panics_sample() {
    let script = Arc::new(Script::default());
    script
        .list(page(&["a", "bad"], "10", None))
        .watch(Ok(vec![Step::Pause(Duration::from_secs(3600))]));
    let metrics = InformerMetrics::default();
    let options = InformerOptions {
        name: "configmaps".into(),
        metrics: metrics.clone(),
        transform: Some(Arc::new(|o: ConfigMap| {
            assert_ne!(o.metadata.name.as_deref(), Some("bad"), "transform bug");
            o
        })),
        streaming_list: false,
        ..InformerOptions::default()
    };
    let informer = SharedIndexInformer::new(Arc::clone(&script), options);
    informer.start();
    tokio::time::sleep(Duration::from_millis(10)).await;
    let scraped = scrape(&metrics);
    let panics = |code| {
        value(
            &scraped,
            "informer_user_code_panics_total",
            &[("informer", "configmaps"), ("code", code)],
        )
    };
    assert_eq!(
        (panics("transform"), panics("index"), panics("handler")),
        (Some(1.0), Some(0.0), Some(0.0))
    );
    assert_eq!(informer.stats().transform_panics, 1, "the same counter");
}
