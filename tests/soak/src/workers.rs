//! Workers that drain the workqueue like a controller's, and detect the one thing a workqueue must
//! never do: hand the same key to two workers at once.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use kubegen_workqueue::Queue;
use parking_lot::Mutex;

/// Shared bookkeeping of all workers.
#[derive(Default)]
pub struct WorkStats {
    /// Keys some worker holds right now. Invariant: a key is inserted by the worker that got it
    /// and removed by the same worker before it calls `done`.
    in_flight: Mutex<HashSet<String>>,
    /// Times a worker got a key another worker still held.
    pub overlaps: AtomicU64,
    /// Keys processed.
    pub processed: AtomicU64,
}

impl WorkStats {
    /// Keys being processed now.
    pub fn in_flight(&self) -> usize {
        self.in_flight.lock().len()
    }
}

/// Starts `count` workers on `queue`; each returns when the queue shuts down.
pub fn start(
    queue: &Queue<String>,
    count: usize,
    stats: &Arc<WorkStats>,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..count)
        .map(|worker| {
            let queue = queue.clone();
            let stats = Arc::clone(stats);
            tokio::spawn(async move { work(queue, stats, worker).await })
        })
        .collect()
}

async fn work(queue: Queue<String>, stats: Arc<WorkStats>, worker: usize) {
    let mut round = 0u64;
    while let Some(key) = queue.get().await {
        if !stats.in_flight.lock().insert(key.clone()) {
            stats.overlaps.fetch_add(1, Ordering::Relaxed);
        }
        // A reconcile takes a moment, and sometimes longer: long enough that the same key is
        // re-added while it is processed, which is the case the queue must get right.
        round += 1;
        if (round + worker as u64).is_multiple_of(7) {
            tokio::time::sleep(Duration::from_millis(2)).await;
        } else {
            tokio::task::yield_now().await;
        }
        stats.in_flight.lock().remove(&key);
        stats.processed.fetch_add(1, Ordering::Relaxed);
        queue.done(&key);
    }
}
