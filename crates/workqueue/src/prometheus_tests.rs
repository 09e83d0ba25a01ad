use super::*;
use crate::{DelayingQueue, Queue};

const MS: Duration = Duration::from_millis(1);

fn line<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find(|l| l.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line {prefix} in\n{text}"))
}

fn value(text: &str, series: &str) -> String {
    let found = line(text, &format!("{series} "));
    found[series.len() + 1..].to_string()
}

#[tokio::test(start_paused = true)]
async fn series_follow_adds_gets_and_dones() {
    let metrics = Arc::new(PrometheusMetrics::new());
    let q = Queue::new("q", metrics.clone());
    q.add("a");
    q.add("b");
    q.add("a");
    let text = metrics.render();
    assert_eq!(
        value(&text, "workqueue_adds_total{name=\"q\"}"),
        "2",
        "the duplicate is not an add"
    );
    assert_eq!(value(&text, "workqueue_depth{name=\"q\"}"), "2");

    tokio::time::advance(10 * MS).await;
    let a = q.get().await.expect("a");
    tokio::time::advance(Duration::from_secs(3)).await;
    let b = q.get().await.expect("b");
    tokio::time::advance(Duration::from_secs(1)).await;
    let text = metrics.render();
    assert_eq!(value(&text, "workqueue_depth{name=\"q\"}"), "0");
    assert_eq!(
        value(&text, "workqueue_unfinished_work_seconds{name=\"q\"}"),
        "5",
        "4 s + 1 s"
    );
    assert_eq!(
        value(
            &text,
            "workqueue_longest_running_processor_seconds{name=\"q\"}"
        ),
        "4"
    );
    let queued = "workqueue_queue_duration_seconds";
    assert_eq!(
        value(
            &text,
            &format!("{queued}_bucket{{name=\"q\",le=\"0.001\"}}")
        ),
        "0"
    );
    assert_eq!(
        value(&text, &format!("{queued}_bucket{{name=\"q\",le=\"0.01\"}}")),
        "1",
        "10 ms is <= 0.01"
    );
    assert_eq!(
        value(&text, &format!("{queued}_bucket{{name=\"q\",le=\"1\"}}")),
        "1"
    );
    assert_eq!(
        value(&text, &format!("{queued}_bucket{{name=\"q\",le=\"10\"}}")),
        "2",
        "3.01 s"
    );
    assert_eq!(
        value(&text, &format!("{queued}_bucket{{name=\"q\",le=\"+Inf\"}}")),
        "2"
    );
    assert_eq!(value(&text, &format!("{queued}_sum{{name=\"q\"}}")), "3.02");
    assert_eq!(value(&text, &format!("{queued}_count{{name=\"q\"}}")), "2");

    q.done(&a);
    let text = metrics.render();
    assert_eq!(
        value(&text, "workqueue_unfinished_work_seconds{name=\"q\"}"),
        "1"
    );
    assert_eq!(
        value(
            &text,
            "workqueue_longest_running_processor_seconds{name=\"q\"}"
        ),
        "1"
    );
    assert_eq!(
        value(&text, "workqueue_work_duration_seconds_sum{name=\"q\"}"),
        "4"
    );
    assert_eq!(
        value(
            &text,
            "workqueue_work_duration_seconds_bucket{name=\"q\",le=\"1\"}"
        ),
        "0"
    );
    assert_eq!(
        value(
            &text,
            "workqueue_work_duration_seconds_bucket{name=\"q\",le=\"10\"}"
        ),
        "1"
    );
    q.done(&b);
    let text = metrics.render();
    assert_eq!(
        value(&text, "workqueue_unfinished_work_seconds{name=\"q\"}"),
        "0"
    );
    assert_eq!(
        value(
            &text,
            "workqueue_longest_running_processor_seconds{name=\"q\"}"
        ),
        "0"
    );
    assert_eq!(
        value(&text, "workqueue_work_duration_seconds_count{name=\"q\"}"),
        "2"
    );
}

#[tokio::test(start_paused = true)]
async fn delayed_adds_count_retries_and_shutdown_clears_depth() {
    let metrics = Arc::new(PrometheusMetrics::new());
    let q = DelayingQueue::new("d", metrics.clone());
    q.add_after("a", 5 * MS);
    q.add_after("b", Duration::ZERO);
    q.add("c");
    q.add("a");
    let text = metrics.render();
    assert_eq!(value(&text, "workqueue_retries_total{name=\"d\"}"), "2");
    assert_eq!(value(&text, "workqueue_depth{name=\"d\"}"), "3");
    q.shut_down();
    let text = metrics.render();
    assert_eq!(
        value(&text, "workqueue_depth{name=\"d\"}"),
        "0",
        "discarded keys leave the depth"
    );
}

#[tokio::test(start_paused = true)]
async fn every_family_has_help_and_type_once_and_queues_sorted() {
    let metrics = Arc::new(PrometheusMetrics::new());
    let _z = Queue::<u32>::new("zeta", metrics.clone());
    let _a = Queue::<u32>::new("alpha", metrics.clone());
    let text = metrics.render();
    let families = [
        ("workqueue_depth", "gauge"),
        ("workqueue_adds_total", "counter"),
        ("workqueue_queue_duration_seconds", "histogram"),
        ("workqueue_work_duration_seconds", "histogram"),
        ("workqueue_unfinished_work_seconds", "gauge"),
        ("workqueue_longest_running_processor_seconds", "gauge"),
        ("workqueue_retries_total", "counter"),
    ];
    for (family, kind) in families {
        let type_line = format!("# TYPE {family} {kind}");
        assert_eq!(
            text.lines().filter(|l| *l == type_line).count(),
            1,
            "{type_line}"
        );
        assert_eq!(
            text.lines()
                .filter(|l| l.starts_with(&format!("# HELP {family} ")))
                .count(),
            1
        );
    }
    let alpha = text.find("workqueue_depth{name=\"alpha\"}").expect("alpha");
    let zeta = text.find("workqueue_depth{name=\"zeta\"}").expect("zeta");
    assert!(alpha < zeta);
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("workqueue_queue_duration_seconds_bucket{name=\"alpha\""))
            .count(),
        13
    );
}

#[test]
fn label_values_are_escaped() {
    let metrics = PrometheusMetrics::new();
    let _ = metrics.queue_metrics("we\"ird\\name\n");
    let text = metrics.render();
    assert!(
        text.contains("workqueue_depth{name=\"we\\\"ird\\\\name\\n\"} 0\n"),
        "{text}"
    );
}

#[test]
fn no_queues_renders_nothing() {
    assert_eq!(PrometheusMetrics::new().render(), "");
}

#[test]
fn write_to_appends() {
    let metrics = PrometheusMetrics::new();
    let _ = metrics.queue_metrics("q");
    let mut out = String::from("my_metric 1\n");
    metrics.write_to(&mut out);
    assert!(out.starts_with("my_metric 1\n# HELP workqueue_depth "));
}
