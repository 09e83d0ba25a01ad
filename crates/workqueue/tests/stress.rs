//! Stress test: many producers and workers on one queue, random keys, checking the queue's
//! promises under real concurrency (multi-threaded runtime, real time, bounded to a few seconds).
//!
//! Invariants checked:
//! - never two workers on one key (a per-key "in progress" flag must be clear when a worker takes it);
//! - no key lost and every add processed after it: each producer bumps a per-key add counter
//!   *before* adding; a worker reads the counter *after* taking the key. Once producers stop, every
//!   key's last processed reading must reach its final count.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use kubegen_workqueue::{ItemExponentialBackoff, NoopMetrics, RateLimitingQueue};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::sync::Notify;

const KEYS: usize = 64;
const PRODUCERS: u64 = 4;
const OPS_PER_PRODUCER: usize = 20_000;
const WORKERS: u64 = 8;

struct Book {
    /// Adds requested per key (bumped before the add).
    requested: Vec<AtomicU64>,
    /// The highest `requested` value a worker saw after taking the key.
    processed: Vec<AtomicU64>,
    /// Whether a worker holds the key.
    in_progress: Vec<AtomicBool>,
    /// Times a worker took a key another worker still held. Must stay 0.
    double_holds: AtomicU64,
    /// Signalled after every `done`.
    progress: Notify,
}

impl Book {
    fn new() -> Self {
        Book {
            requested: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            processed: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            in_progress: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            double_holds: AtomicU64::new(0),
            progress: Notify::new(),
        }
    }

    fn lagging_keys(&self) -> Vec<usize> {
        (0..KEYS)
            .filter(|&k| {
                self.processed[k].load(Ordering::SeqCst) < self.requested[k].load(Ordering::SeqCst)
            })
            .collect()
    }
}

async fn produce(queue: RateLimitingQueue<usize>, book: Arc<Book>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    for op in 0..OPS_PER_PRODUCER {
        let key = rng.random_range(0..KEYS);
        book.requested[key].fetch_add(1, Ordering::SeqCst);
        match rng.random_range(0..10) {
            0 => queue.add_after(key, Duration::from_micros(rng.random_range(0..2_000))),
            1 => queue.add_rate_limited(key),
            _ => queue.add(key),
        }
        if op % 64 == 0 {
            tokio::task::yield_now().await;
        }
    }
}

async fn work(queue: RateLimitingQueue<usize>, book: Arc<Book>, seed: u64) {
    let mut rng = StdRng::seed_from_u64(seed);
    loop {
        // Some gets time out, exercising cancellation: a cancelled get must lose no key.
        let key = if rng.random_bool(0.2) {
            match tokio::time::timeout(Duration::from_micros(50), queue.get()).await {
                Ok(Some(key)) => key,
                Ok(None) => return,
                Err(_) => continue,
            }
        } else {
            match queue.get().await {
                Some(key) => key,
                None => return,
            }
        };
        if book.in_progress[key].swap(true, Ordering::SeqCst) {
            book.double_holds.fetch_add(1, Ordering::SeqCst);
        }
        let seen = book.requested[key].load(Ordering::SeqCst);
        if rng.random_bool(0.3) {
            tokio::task::yield_now().await;
        }
        book.processed[key].fetch_max(seen, Ordering::SeqCst);
        if rng.random_bool(0.1) {
            queue.add_rate_limited(key);
        } else {
            queue.forget(&key);
        }
        book.in_progress[key].store(false, Ordering::SeqCst);
        queue.done(&key);
        book.progress.notify_waiters();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_producers_and_workers_keep_queue_invariants() {
    let limiter = ItemExponentialBackoff::new(Duration::from_micros(1), Duration::from_millis(1));
    let queue = RateLimitingQueue::new("stress", limiter, NoopMetrics::shared());
    let book = Arc::new(Book::new());

    let workers: Vec<_> = (0..WORKERS)
        .map(|i| tokio::spawn(work(queue.clone(), Arc::clone(&book), 1000 + i)))
        .collect();
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|i| tokio::spawn(produce(queue.clone(), Arc::clone(&book), i)))
        .collect();
    for producer in producers {
        producer.await.expect("producer panicked");
    }

    let caught_up = async {
        loop {
            let mut progressed = std::pin::pin!(book.progress.notified());
            progressed.as_mut().enable();
            if book.lagging_keys().is_empty() {
                return;
            }
            // Re-check periodically too: the last delayed adds may fire after the last `done`.
            let _ = tokio::time::timeout(Duration::from_millis(5), progressed).await;
        }
    };
    let in_time = tokio::time::timeout(Duration::from_secs(20), caught_up).await;
    assert!(
        in_time.is_ok(),
        "keys never processed after their last add: {:?}",
        book.lagging_keys()
    );

    assert!(
        queue.shut_down_with_drain(Duration::from_secs(5)).await,
        "workers did not drain"
    );
    for worker in workers {
        worker.await.expect("worker panicked");
    }
    assert_eq!(
        book.double_holds.load(Ordering::SeqCst),
        0,
        "a key was handed to two workers"
    );
    let total: u64 = book
        .requested
        .iter()
        .map(|c| c.load(Ordering::SeqCst))
        .sum();
    assert_eq!(total, PRODUCERS * OPS_PER_PRODUCER as u64);
}
