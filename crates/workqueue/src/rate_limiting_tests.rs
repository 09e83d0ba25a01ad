use std::sync::atomic::{AtomicU32, Ordering};

use tokio::time::Instant;

use super::*;
use crate::metrics::NoopMetrics;
use crate::rate_limiters::{ItemExponentialBackoff, TokenBucket, default_controller_rate_limiter};

const MS: Duration = Duration::from_millis(1);

/// Counts how often the queue consults it, and delays by a fixed 10 ms.
#[derive(Clone, Default)]
struct CountingLimiter(Arc<AtomicU32>);

impl RateLimiter<&'static str> for CountingLimiter {
    fn when(&self, _key: &&'static str) -> Duration {
        self.0.fetch_add(1, Ordering::SeqCst);
        10 * MS
    }
    fn forget(&self, _key: &&'static str) {}
    fn retries(&self, _key: &&'static str) -> u32 {
        self.0.load(Ordering::SeqCst)
    }
}

fn counting_queue() -> (RateLimitingQueue<&'static str>, CountingLimiter) {
    let limiter = CountingLimiter::default();
    (
        RateLimitingQueue::new("test", limiter.clone(), NoopMetrics::shared()),
        limiter,
    )
}

#[tokio::test(start_paused = true)]
async fn failing_key_is_retried_with_exponential_backoff() {
    let q = RateLimitingQueue::new(
        "test",
        default_controller_rate_limiter(),
        NoopMetrics::shared(),
    );
    q.add("a");
    let mut last = Instant::now();
    let mut gaps = Vec::new();
    for _ in 0..6 {
        let key = q.get().await.expect("key");
        gaps.push(last.elapsed());
        last = Instant::now();
        q.add_rate_limited(key);
        q.done(&key);
        q.check_invariants();
    }
    let expected_ms = [0, 5, 10, 20, 40, 80];
    assert_eq!(gaps, expected_ms.map(|ms| ms * MS));
    assert_eq!(q.num_requeues(&"a"), 6);
}

#[tokio::test(start_paused = true)]
async fn forget_resets_backoff_and_requeue_count() {
    let q = RateLimitingQueue::new(
        "test",
        ItemExponentialBackoff::default(),
        NoopMetrics::shared(),
    );
    q.add("a");
    for _ in 0..3 {
        let key = q.get().await.expect("key");
        q.add_rate_limited(key);
        q.done(&key);
    }
    let key = q.get().await.expect("key");
    assert_eq!(q.num_requeues(&key), 3);
    q.forget(&key);
    assert_eq!(q.num_requeues(&key), 0);
    q.add_rate_limited(key);
    q.done(&key);
    let start = Instant::now();
    assert_eq!(q.get().await, Some("a"));
    assert_eq!(start.elapsed(), 5 * MS, "backoff restarts from the base");
}

#[tokio::test(start_paused = true)]
async fn rate_limited_add_of_ready_key_does_not_consult_limiter() {
    let (q, limiter) = counting_queue();
    q.add("a");
    q.add_rate_limited("a");
    q.add_rate_limited("a");
    assert_eq!(limiter.0.load(Ordering::SeqCst), 0);
    assert!(!q.queue.is_scheduled(&"a"));
    assert_eq!(q.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn rate_limited_add_of_key_readded_while_processing_does_not_consult_limiter() {
    let (q, limiter) = counting_queue();
    q.add("a");
    let key = q.get().await.expect("key");
    q.add("a");
    q.add_rate_limited(key);
    assert_eq!(
        limiter.0.load(Ordering::SeqCst),
        0,
        "the key reruns after done anyway"
    );
    q.done(&key);
    assert_eq!(q.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn rate_limited_add_of_scheduled_key_does_not_consult_limiter() {
    let (q, limiter) = counting_queue();
    q.add_rate_limited("a");
    q.add_rate_limited("a");
    q.add_rate_limited("a");
    assert_eq!(limiter.0.load(Ordering::SeqCst), 1);
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn deduplicated_adds_do_not_spend_bucket_tokens() {
    // A bucket with a single token: if the deduplicated calls spent it, "b" would have to wait.
    let q = RateLimitingQueue::new(
        "test",
        TokenBucket::new(1.0, 1).unwrap_or_else(|e| panic!("{e}")),
        NoopMetrics::shared(),
    );
    q.add("a");
    for _ in 0..5 {
        q.add_rate_limited("a");
    }
    q.add_rate_limited("b");
    assert_eq!(q.len(), 2, "\"b\" got the token and was added at once");
}

#[tokio::test(start_paused = true)]
async fn rate_limited_add_after_shutdown_is_ignored() {
    let (q, limiter) = counting_queue();
    q.shut_down();
    q.add_rate_limited("a");
    assert_eq!(limiter.0.load(Ordering::SeqCst), 0);
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn add_after_on_rate_limiting_queue_delays() {
    let (q, _) = counting_queue();
    let start = Instant::now();
    q.add_after("a", 30 * MS);
    assert_eq!(q.get().await, Some("a"));
    assert_eq!(start.elapsed(), 30 * MS);
    q.done(&"a");
    assert!(q.shut_down_with_drain(MS).await);
    assert!(q.is_shutting_down());
    assert!(q.is_empty());
}

#[tokio::test(start_paused = true)]
async fn shut_down_ends_a_waiting_drain() {
    let (q, _) = counting_queue();
    q.add("a");
    let _a = q.get().await.expect("key");
    let drain = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain(Duration::from_secs(60)).await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    let start = Instant::now();
    q.shut_down();
    assert!(!drain.await.expect("join"));
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn deduplicated_rate_limited_add_counts_no_retry() {
    let mut registry = prometheus_client::registry::Registry::default();
    let metrics = crate::PrometheusMetrics::new();
    metrics.register(&mut registry);
    let q = RateLimitingQueue::new("rl", ItemExponentialBackoff::default(), Arc::new(metrics));
    q.add("a");
    q.add_rate_limited("a");
    let retries = || {
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &registry)
            .unwrap_or_else(|e| panic!("{e}"));
        let scrape = prometheus_parse::Scrape::parse(text.lines().map(|l| Ok(l.to_owned())))
            .unwrap_or_else(|e| panic!("{e}"));
        scrape
            .samples
            .into_iter()
            .find(|s| s.metric == "workqueue_retries_total" && s.labels.get("name") == Some("rl"))
            .map(|s| s.value)
    };
    assert_eq!(retries(), Some(prometheus_parse::Value::Untyped(0.0)));
    q.add_rate_limited("b");
    assert_eq!(retries(), Some(prometheus_parse::Value::Untyped(1.0)));
    assert_eq!(q.num_requeues(&"a"), 0);
    assert_eq!(q.num_requeues(&"b"), 1);
}

#[tokio::test(start_paused = true)]
async fn debug_shows_name_and_sizes() {
    let (q, _) = counting_queue();
    q.add("a");
    q.add_after("b", MS);
    let text = format!("{q:?}");
    assert_eq!(
        text,
        "RateLimitingQueue { queue: DelayingQueue { queue: Queue { name: \"test\", ready: 1, \
         processing: 0, shutting_down: false }, scheduled: 1 }, .. }"
    );
}
