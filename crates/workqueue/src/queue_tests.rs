use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::metrics::NoopMetrics;

fn queue() -> Queue<&'static str> {
    Queue::new("test", NoopMetrics::shared())
}

/// Polls `get` once without waiting: `Some(Some(key))`, `Some(None)` (shut down) or `None` (would block).
fn try_get(q: &Queue<&'static str>) -> Option<Option<&'static str>> {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut fut = pin!(q.get());
    match fut.as_mut().poll(&mut cx) {
        std::task::Poll::Ready(out) => Some(out),
        std::task::Poll::Pending => None,
    }
}

use std::future::Future;

#[tokio::test(start_paused = true)]
async fn add_of_waiting_key_is_deduplicated() {
    let q = queue();
    q.add("a");
    q.add("b");
    q.add("a");
    q.check_invariants();
    assert_eq!(q.len(), 2);
    assert_eq!(q.get().await, Some("a"));
    assert_eq!(q.get().await, Some("b"));
    assert_eq!(try_get(&q), None);
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn keys_are_handed_out_in_first_added_order() {
    let q = queue();
    for key in ["c", "a", "b", "a", "c"] {
        q.add(key);
    }
    let mut out = Vec::new();
    for _ in 0..3 {
        out.push(q.get().await.expect("key"));
    }
    assert_eq!(out, ["c", "a", "b"]);
}

#[tokio::test(start_paused = true)]
async fn key_added_while_processing_is_not_handed_to_second_worker() {
    let q = queue();
    q.add("a");
    assert_eq!(q.get().await, Some("a"));
    q.add("a");
    q.check_invariants();
    assert_eq!(q.len(), 0, "a processing key is not ready");
    assert_eq!(try_get(&q), None, "a second worker must not get the key");
}

#[tokio::test(start_paused = true)]
async fn key_added_while_processing_is_requeued_on_done() {
    let q = queue();
    q.add("a");
    let key = q.get().await.expect("key");
    q.add("a");
    q.add("a");
    q.done(&key);
    q.check_invariants();
    assert_eq!(q.len(), 1);
    assert_eq!(q.get().await, Some("a"));
    q.done(&"a");
    assert_eq!(
        try_get(&q),
        None,
        "two adds during processing are one rerun"
    );
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn done_without_readd_finishes_key() {
    let q = queue();
    q.add("a");
    let key = q.get().await.expect("key");
    q.done(&key);
    q.check_invariants();
    assert_eq!(try_get(&q), None);
    q.add("a");
    assert_eq!(
        q.get().await,
        Some("a"),
        "a finished key can be added again"
    );
}

#[tokio::test(start_paused = true)]
async fn done_for_unknown_key_is_noop() {
    let q = queue();
    q.add("a");
    q.done(&"a");
    q.check_invariants();
    assert_eq!(q.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn get_waits_until_a_key_is_added() {
    let q = queue();
    let waiter = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::task::yield_now().await;
    assert!(!waiter.is_finished());
    q.add("a");
    assert_eq!(waiter.await.expect("join"), Some("a"));
}

#[tokio::test(start_paused = true)]
async fn shut_down_wakes_every_waiting_getter() {
    let q = queue();
    let waiters: Vec<_> = (0..4)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.get().await })
        })
        .collect();
    tokio::task::yield_now().await;
    q.shut_down();
    for waiter in waiters {
        assert_eq!(waiter.await.expect("join"), None);
    }
    assert!(q.is_shutting_down());
}

#[tokio::test(start_paused = true)]
async fn shut_down_discards_waiting_keys_and_ignores_new_adds() {
    let q = queue();
    q.add("a");
    q.add("b");
    q.shut_down();
    q.check_invariants();
    assert_eq!(q.len(), 0);
    assert_eq!(
        q.get().await,
        None,
        "queued keys are not handed out after shutdown"
    );
    q.add("c");
    assert_eq!(q.get().await, None);
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn key_added_while_processing_is_dropped_if_shutdown_before_done() {
    let q = queue();
    q.add("a");
    let key = q.get().await.expect("key");
    q.add("a");
    q.shut_down();
    q.done(&key);
    q.check_invariants();
    assert_eq!(q.get().await, None);
}

#[tokio::test(start_paused = true)]
async fn drain_waits_for_in_flight_keys() {
    let q = queue();
    q.add("a");
    q.add("b");
    q.add("queued");
    let a = q.get().await.expect("a");
    let b = q.get().await.expect("b");
    let worker = tokio::spawn({
        let q = q.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(3)).await;
            q.done(&a);
            tokio::time::sleep(Duration::from_secs(2)).await;
            q.done(&b);
        }
    });
    let start = Instant::now();
    assert!(q.shut_down_with_drain(Duration::from_secs(60)).await);
    assert_eq!(
        start.elapsed(),
        Duration::from_secs(5),
        "returns when the last key is done"
    );
    assert_eq!(
        q.get().await,
        None,
        "the queued key was discarded, not processed"
    );
    worker.await.expect("join");
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn drain_returns_false_after_timeout_with_keys_in_flight() {
    let q = queue();
    q.add("stuck");
    let _stuck = q.get().await.expect("key");
    let start = Instant::now();
    assert!(!q.shut_down_with_drain(Duration::from_secs(10)).await);
    assert_eq!(start.elapsed(), Duration::from_secs(10));
    assert!(q.is_shutting_down());
}

/// The "second SIGTERM": client-go `TestForceQueueShutdownUsingShutDown`.
#[tokio::test(start_paused = true)]
async fn shut_down_during_drain_ends_the_drain_at_once() {
    let q = queue();
    q.add("a");
    q.add("b");
    let _a = q.get().await.expect("a");
    let _b = q.get().await.expect("b");
    let drain = tokio::spawn({
        let q = q.clone();
        async move {
            let start = Instant::now();
            (
                q.shut_down_with_drain(Duration::from_secs(60)).await,
                start.elapsed(),
            )
        }
    });
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(
        !drain.is_finished(),
        "the drain waits for the in-flight keys"
    );
    q.shut_down();
    let (drained, waited) = drain.await.expect("join");
    assert!(!drained, "keys were still in flight");
    assert_eq!(
        waited,
        Duration::from_secs(2),
        "ended at the shut_down, not the timeout"
    );
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn shut_down_ends_every_waiting_drain() {
    let q = queue();
    q.add("a");
    let _a = q.get().await.expect("a");
    let drains: Vec<_> = (0..2)
        .map(|_| {
            let q = q.clone();
            tokio::spawn(async move { q.shut_down_with_drain(Duration::from_secs(60)).await })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(1)).await;
    q.shut_down();
    let start = Instant::now();
    for drain in drains {
        assert!(!drain.await.expect("join"));
    }
    assert_eq!(start.elapsed(), Duration::ZERO);
}

#[tokio::test(start_paused = true)]
async fn drain_started_after_shut_down_still_waits_for_in_flight_keys() {
    let q = queue();
    q.add("a");
    let a = q.get().await.expect("a");
    q.shut_down();
    let worker = tokio::spawn({
        let q = q.clone();
        async move {
            tokio::time::sleep(Duration::from_secs(3)).await;
            q.done(&a);
        }
    });
    let start = Instant::now();
    assert!(q.shut_down_with_drain(Duration::from_secs(60)).await);
    assert_eq!(start.elapsed(), Duration::from_secs(3));
    worker.await.expect("join");
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn drain_with_nothing_in_flight_returns_at_once() {
    let q = queue();
    q.add("queued");
    let start = Instant::now();
    assert!(q.shut_down_with_drain(Duration::from_secs(10)).await);
    assert_eq!(start.elapsed(), Duration::ZERO);
    assert_eq!(q.len(), 0);
}

#[tokio::test(start_paused = true)]
async fn cancelled_get_loses_no_key() {
    let q = queue();
    let first = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    let second = tokio::spawn({
        let q = q.clone();
        async move { q.get().await }
    });
    tokio::task::yield_now().await;
    first.abort();
    q.add("a");
    // Without the hand-over, the second getter would wait forever: bound it in virtual time.
    let got = tokio::time::timeout(Duration::from_secs(1), second).await;
    assert_eq!(
        got.expect("the wake-up reached the second getter")
            .expect("join"),
        Some("a")
    );
}
