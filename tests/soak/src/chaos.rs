//! The fault schedule: what a bad day in a real cluster looks like, compressed.
//!
//! | fault                         | how often                 | what the client must do          |
//! |-------------------------------|---------------------------|----------------------------------|
//! | all watches end cleanly       | every 0.5-1.5 s           | re-watch from the last RV        |
//! | watches hang, history is      | every 4-6 s               | re-watch gets 410: relist,       |
//! | compacted, watches end (410)  |                           | tombstone the missing            |
//! | 429 (Retry-After 1) or 500    | ~5% of churn requests     | back off, retry                  |
//! | 20-150 ms latency on all reqs | a 300 ms spike every ~3 s | nothing breaks, just slower      |
//!
//! Compacting history alone does not force a 410 on a client that keeps up: a relist at a saved
//! resourceVersion is served "not older than" it, and a watch that restarts from the newest event
//! it saw is not behind the compaction point. So the expiry fault first hangs every watch for
//! `STALL` while the churn goes on writing, then compacts and ends the watches: each reflector
//! re-watches from a version the server no longer has, as after a long network partition.
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use kubegen_testserver::{Failure, Faults, RequestMatch};
use rand::Rng;
use tokio::time::Instant;

use crate::churn::ChurnStats;

/// How long watches hang before history is compacted under them.
const STALL: Duration = Duration::from_millis(200);

/// How many faults of each kind were injected.
#[derive(Default)]
pub struct ChaosStats {
    /// `drop_watches` calls.
    pub watch_drops: AtomicU64,
    /// `expire_history` calls.
    pub expiries: AtomicU64,
    /// Requests set up to fail with 429 or 500.
    pub failures: AtomicU64,
    /// Latency spikes.
    pub spikes: AtomicU64,
}

/// Injects faults into `faults` until `stop` is set, then clears them all.
pub async fn run(
    faults: Faults,
    churn: Arc<ChurnStats>,
    stop: Arc<AtomicBool>,
    stats: Arc<ChaosStats>,
) {
    let tick = Duration::from_millis(100);
    let mut next_drop = Instant::now() + jitter(500, 1500);
    let mut next_expiry = Instant::now() + jitter(4000, 6000);
    let mut next_spike = Instant::now() + jitter(2000, 4000);
    let mut spike_ends: Option<Instant> = None;
    let mut last_requests = requests(&churn);
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(tick).await;
        let now = Instant::now();
        if now >= next_drop {
            faults.drop_watches();
            stats.watch_drops.fetch_add(1, Ordering::Relaxed);
            next_drop = now + jitter(500, 1500);
        }
        if now >= next_expiry {
            faults.stall_watches(true);
            tokio::time::sleep(STALL).await;
            faults.expire_history();
            faults.drop_watches();
            faults.stall_watches(false);
            stats.expiries.fetch_add(1, Ordering::Relaxed);
            next_expiry = Instant::now() + jitter(4000, 6000);
        }
        if spike_ends.is_some_and(|end| now >= end) {
            faults.set_latency(Duration::ZERO);
            spike_ends = None;
        }
        if now >= next_spike {
            faults.set_latency(jitter(20, 150));
            stats.spikes.fetch_add(1, Ordering::Relaxed);
            spike_ends = Some(now + Duration::from_millis(300));
            next_spike = now + jitter(2000, 4000);
        }
        // 5% of the requests of the last tick, rounded up half of the time, as 429 or 500.
        let total = requests(&churn);
        let recent = total.saturating_sub(last_requests);
        last_requests = total;
        let failing = (recent * 5 + rand::rng().random_range(0..100)) / 100;
        for _ in 0..failing {
            let failure = if rand::rng().random_bool(0.5) {
                Failure::TooManyRequests {
                    retry_after_seconds: 1,
                }
            } else {
                Failure::InternalError
            };
            faults.fail_next(1, RequestMatch::any(), failure);
        }
        stats.failures.fetch_add(failing, Ordering::Relaxed);
    }
    faults.clear();
}

fn requests(churn: &ChurnStats) -> u64 {
    churn.writes.load(Ordering::Relaxed) + churn.failures.load(Ordering::Relaxed)
}

fn jitter(min_ms: u64, max_ms: u64) -> Duration {
    Duration::from_millis(rand::rng().random_range(min_ms..=max_ms))
}
