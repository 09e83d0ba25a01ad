//! Throughput of the work queue, printed as a table (not a test; run with
//! `cargo bench -p kubegen-workqueue`).
//!
//! Measures add -> get -> done cycles per second on a 2-thread Tokio runtime with 1, 2 and 8
//! workers, with distinct keys and with heavy deduplication (16 hot keys), against a naive
//! `Mutex<VecDeque>` + `HashSet` queue that deduplicates waiting keys but does *not* keep a key from
//! two workers at once (the cost of that guarantee is the gap between the columns). Then the cost of
//! single operations: `add`, `add_after`, `add_rate_limited` with the default controller limiter.
//! Workers do no work, so the numbers are the queue's overhead.

use std::collections::{HashSet, VecDeque};
use std::hint::black_box;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use kubegen_workqueue::{
    MetricsProvider, NoopMetrics, PrometheusMetrics, Queue, RateLimitingQueue,
    default_controller_rate_limiter,
};
use tokio::sync::Notify;

/// Adds per cycle-throughput scenario.
const ADDS: u64 = 400_000;
/// Operations per single-operation scenario.
const OPS: u64 = 200_000;
/// Each measurement is repeated this often and the best run is reported: the machine is shared,
/// and interference only ever makes a run slower.
const RUNS: usize = 5;

/// The two queue implementations under comparison, reduced to what the benchmark calls.
trait BenchQueue: Clone + Send + Sync + 'static {
    fn add(&self, key: u64);
    fn get(&self) -> impl Future<Output = Option<u64>> + Send;
    fn done(&self, key: u64);
    fn shut_down(&self);
}

impl BenchQueue for Queue<u64> {
    fn add(&self, key: u64) {
        Queue::add(self, key);
    }
    async fn get(&self) -> Option<u64> {
        Queue::get(self).await
    }
    fn done(&self, key: u64) {
        Queue::done(self, &key);
    }
    fn shut_down(&self) {
        Queue::shut_down(self);
    }
}

/// The baseline: one lock, FIFO plus a set of waiting keys; no processing set.
#[derive(Clone, Default)]
struct Naive {
    inner: Arc<NaiveInner>,
}

#[derive(Default)]
struct NaiveInner {
    state: std::sync::Mutex<(VecDeque<u64>, HashSet<u64>)>,
    ready: Notify,
    closed: AtomicBool,
}

impl BenchQueue for Naive {
    fn add(&self, key: u64) {
        let mut state = self.inner.state.lock().expect("lock");
        if state.1.insert(key) {
            state.0.push_back(key);
            drop(state);
            self.inner.ready.notify_one();
        }
    }
    async fn get(&self) -> Option<u64> {
        loop {
            let mut notified = pin!(self.inner.ready.notified());
            notified.as_mut().enable();
            {
                let mut state = self.inner.state.lock().expect("lock");
                if let Some(key) = state.0.pop_front() {
                    state.1.remove(&key);
                    return Some(key);
                }
            }
            if self.inner.closed.load(Ordering::SeqCst) {
                return None;
            }
            notified.await;
        }
    }
    fn done(&self, _key: u64) {}
    fn shut_down(&self) {
        self.inner.closed.store(true, Ordering::SeqCst);
        self.inner.ready.notify_waiters();
    }
}

/// Per-key bookkeeping that tells when every add has been processed.
struct Book {
    requested: Vec<AtomicU64>,
    processed: Vec<AtomicU64>,
}

impl Book {
    fn new(keys: u64) -> Self {
        Book {
            requested: (0..keys).map(|_| AtomicU64::new(0)).collect(),
            processed: (0..keys).map(|_| AtomicU64::new(0)).collect(),
        }
    }
    fn caught_up(&self) -> bool {
        self.requested
            .iter()
            .zip(&self.processed)
            .all(|(r, p)| p.load(Ordering::Acquire) >= r.load(Ordering::Acquire))
    }
}

/// Runs `ADDS` adds over `keys` distinct keys with `workers` workers; returns adds per second.
async fn cycles<Q: BenchQueue>(queue: Q, workers: usize, keys: u64) -> f64 {
    let book = Arc::new(Book::new(keys));
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let (queue, book) = (queue.clone(), Arc::clone(&book));
            tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    let seen = book.requested[key as usize].load(Ordering::Acquire);
                    book.processed[key as usize].fetch_max(seen, Ordering::AcqRel);
                    queue.done(key);
                }
            })
        })
        .collect();
    let start = Instant::now();
    let producer = {
        let (queue, book) = (queue.clone(), Arc::clone(&book));
        tokio::spawn(async move {
            for i in 0..ADDS {
                let key = i % keys;
                book.requested[key as usize].fetch_add(1, Ordering::AcqRel);
                queue.add(key);
                if i % 256 == 0 {
                    tokio::task::yield_now().await;
                }
            }
        })
    };
    producer.await.expect("producer");
    // Poll rather than spin: this task must not take a core from the workers.
    while !book.caught_up() {
        tokio::time::sleep(Duration::from_micros(500)).await;
    }
    let elapsed = start.elapsed();
    queue.shut_down();
    for handle in handles {
        handle.await.expect("worker");
    }
    ADDS as f64 / elapsed.as_secs_f64()
}

/// Nanoseconds per call of `op`, called `OPS` times with distinct keys.
fn per_op(mut op: impl FnMut(u64)) -> f64 {
    let start = Instant::now();
    for i in 0..OPS {
        op(black_box(i));
    }
    start.elapsed().as_nanos() as f64 / OPS as f64
}

fn noop() -> Arc<dyn MetricsProvider> {
    NoopMetrics::shared()
}

async fn throughput_table() {
    println!(
        "add -> get -> done cycles per second ({ADDS} adds, 2 runtime threads, best of {RUNS})"
    );
    println!(
        "{:<34} {:>14} {:>14} {:>7}",
        "scenario", "Queue", "naive", "ratio"
    );
    let scenarios: [(&str, usize, u64); 5] = [
        ("distinct keys, 1 worker", 1, ADDS),
        ("distinct keys, 2 workers", 2, ADDS),
        ("distinct keys, 8 workers", 8, ADDS),
        ("heavy dedup (16 keys), 1 worker", 1, 16),
        ("heavy dedup (16 keys), 8 workers", 8, 16),
    ];
    for (name, workers, keys) in scenarios {
        let (mut ours, mut naive) = (0.0_f64, 0.0_f64);
        for _ in 0..RUNS {
            ours = ours.max(cycles(Queue::new("bench", noop()), workers, keys).await);
            naive = naive.max(cycles(Naive::default(), workers, keys).await);
        }
        println!(
            "{name:<34} {ours:>14.0} {naive:>14.0} {:>7.2}",
            ours / naive
        );
    }
    let mut ours = 0.0_f64;
    for _ in 0..RUNS {
        let mut registry = prometheus_client::registry::Registry::default();
        let metrics = PrometheusMetrics::new();
        metrics.register(&mut registry);
        let prometheus: Arc<dyn MetricsProvider> = Arc::new(metrics);
        ours = ours.max(cycles(Queue::new("bench", prometheus), 2, ADDS).await);
    }
    println!(
        "{:<34} {ours:>14.0}",
        "distinct keys, 2 workers, Prometheus"
    );
}

async fn per_op_table() {
    println!();
    println!("cost per operation ({OPS} distinct keys, one thread, best of {RUNS})");
    let mut best = [f64::INFINITY; 5];
    for _ in 0..RUNS {
        let queue = Queue::<u64>::new("bench", noop());
        let rl = RateLimitingQueue::new("bench", default_controller_rate_limiter(), noop());
        let delayed =
            RateLimitingQueue::<u64>::new("bench", default_controller_rate_limiter(), noop());
        let run = [
            per_op(|k| queue.add(k)),
            per_op(|k| delayed.add_after(k, Duration::from_secs(60))),
            per_op(|k| rl.add_rate_limited(k)),
            per_op(|k| rl.add_rate_limited(k)),
            per_op(|k| rl.forget(&k)),
        ];
        for (best, ns) in best.iter_mut().zip(run) {
            *best = best.min(ns);
        }
        rl.shut_down();
        delayed.shut_down();
    }
    let names = [
        "Queue::add (new key)",
        "RateLimitingQueue::add_after (60 s, new key)",
        "add_rate_limited, new key (limiter + heap)",
        "add_rate_limited, key already scheduled",
        "forget",
    ];
    for (name, ns) in names.iter().zip(best) {
        println!("{name:<48} {ns:>8.0} ns");
    }
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        throughput_table().await;
        per_op_table().await;
    });
}
