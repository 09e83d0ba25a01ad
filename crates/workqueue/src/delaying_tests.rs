use std::time::Duration;

use tokio::time::Instant;

use super::*;
use crate::metrics::NoopMetrics;

fn queue() -> DelayingQueue<&'static str> {
    DelayingQueue::new("test", NoopMetrics::shared())
}

const MS: Duration = Duration::from_millis(1);

/// Lets the timer task run after the clock moved.
async fn settle() {
    for _ in 0..4 {
        tokio::task::yield_now().await;
    }
}

#[tokio::test(start_paused = true)]
async fn add_after_adds_once_the_delay_has_passed() {
    let q = queue();
    q.add_after("a", 10 * MS);
    q.check_invariants();
    tokio::time::advance(9 * MS).await;
    settle().await;
    assert_eq!(q.len(), 0);
    tokio::time::advance(MS).await;
    settle().await;
    assert_eq!(q.len(), 1);
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn delayed_keys_come_out_in_deadline_order() {
    let q = queue();
    let start = Instant::now();
    q.add_after("late", 30 * MS);
    q.add_after("early", 10 * MS);
    q.add_after("middle", 20 * MS);
    for (key, at) in [("early", 10), ("middle", 20), ("late", 30)] {
        assert_eq!(q.get().await, Some(key));
        assert_eq!(start.elapsed(), at * MS);
    }
}

#[tokio::test(start_paused = true)]
async fn key_scheduled_twice_keeps_earlier_deadline() {
    let q = queue();
    let start = Instant::now();
    q.add_after("a", 50 * MS);
    q.add_after("a", 20 * MS);
    q.add_after("a", 40 * MS);
    q.check_invariants();
    assert_eq!(q.get().await, Some("a"));
    assert_eq!(start.elapsed(), 20 * MS);
    q.done(&"a");
    tokio::time::advance(100 * MS).await;
    settle().await;
    assert_eq!(
        q.len(),
        0,
        "the superseded deadlines do not add the key again"
    );
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn zero_delay_adds_immediately() {
    let q = queue();
    q.add_after("a", Duration::ZERO);
    assert_eq!(q.len(), 1, "no timer round trip");
}

#[tokio::test(start_paused = true)]
async fn delayed_key_already_waiting_is_deduplicated() {
    let q = queue();
    q.add("a");
    q.add_after("a", 5 * MS);
    tokio::time::advance(10 * MS).await;
    settle().await;
    assert_eq!(q.len(), 1);
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn equal_deadlines_fire_in_scheduling_order() {
    let q = queue();
    for key in ["x", "y", "z"] {
        q.add_after(key, 5 * MS);
    }
    let mut out = Vec::new();
    for _ in 0..3 {
        out.push(q.get().await.expect("key"));
    }
    assert_eq!(out, ["x", "y", "z"]);
}

#[tokio::test(start_paused = true)]
async fn shutdown_discards_scheduled_keys_and_stops_timer() {
    let q = queue();
    q.add_after("a", 10 * MS);
    q.shut_down();
    assert!(!q.is_scheduled(&"a"));
    tokio::time::advance(20 * MS).await;
    settle().await;
    assert_eq!(q.get().await, None);
    q.add_after("b", MS);
    assert!(!q.is_scheduled(&"b"), "adds after shutdown are ignored");
    q.check_invariants();
    assert_eq!(
        Arc::strong_count(&q.timer.wake),
        1,
        "the timer task has ended"
    );
}

#[tokio::test(start_paused = true)]
async fn dropping_last_handle_stops_timer() {
    let q = queue();
    q.add_after("a", 10 * MS);
    let wake = Arc::clone(&q.timer.wake);
    assert_eq!(
        Arc::strong_count(&wake),
        3,
        "the handle, the task and this test"
    );
    drop(q);
    settle().await;
    assert_eq!(Arc::strong_count(&wake), 1, "the timer task has ended");
}

#[tokio::test(start_paused = true)]
async fn drain_discards_scheduled_keys() {
    let q = queue();
    q.add("a");
    let a = q.get().await.expect("key");
    q.add_after("later", 10 * MS);
    let worker = tokio::spawn({
        let q = q.clone();
        async move {
            tokio::time::sleep(20 * MS).await;
            q.done(&a);
        }
    });
    assert!(q.shut_down_with_drain(Duration::from_secs(1)).await);
    assert_eq!(q.get().await, None, "the scheduled key was discarded");
    worker.await.expect("join");
}

#[tokio::test(start_paused = true)]
async fn a_second_drain_does_not_end_the_first_but_shut_down_does() {
    let q = queue();
    q.add("a");
    let _a = q.get().await.expect("key");
    let first = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain(Duration::from_secs(60)).await }
    });
    tokio::time::sleep(MS).await;
    let second = tokio::spawn({
        let q = q.clone();
        async move { q.shut_down_with_drain(Duration::from_secs(60)).await }
    });
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(
        !first.is_finished(),
        "the second drain left the first waiting"
    );
    q.shut_down();
    assert!(!first.await.expect("join"));
    assert!(!second.await.expect("join"));
    q.check_invariants();
}

#[tokio::test(start_paused = true)]
async fn huge_delay_does_not_overflow() {
    let q = queue();
    q.add_after("a", Duration::MAX);
    q.add_after("b", MS);
    assert_eq!(q.get().await, Some("b"));
    assert!(q.is_scheduled(&"a"));
}
