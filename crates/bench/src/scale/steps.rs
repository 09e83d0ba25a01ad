//! The search for the highest rate of changes a group of replicas sustains at a p99 wait under
//! 1 s, and the judging of each step of it.
//!
//! # The search
//! 1. Warm-up: a fifth of the ideal capacity (replicas × workers / cost; one replica's when
//!    unsharded) for a few seconds; every change must be reconciled, or the run stops.
//! 2. Saturation probe: 1.25× the ideal capacity. The reconciles that start per second during
//!    it are what the group can do flat out.
//! 3. Steps down from the probe's throughput (1.0×, 0.9×, ... 0.3×), each for `step` seconds,
//!    until one passes: every change made, and the p99 of change → reconcile start under 1 s.
//!
//! Between stretches the load stops until every change so far has been reconciled (or a timeout
//! passes), so no stretch starts with another's backlog.
//!
//! Why not a ramp alone: a rate above capacity for a short step leaves a backlog that is only a
//! fraction of a second of work, and passes. Probing the saturated throughput first and stepping
//! down from it measures capacity directly and keeps a run to a few stretches per group.

use std::collections::HashMap;
use std::time::Duration;

use anyhow::{Result, bail};
use parking_lot::Mutex;

use super::driver::{Change, Drive, Driver};
use crate::measure::nearest_rank_ms;

/// The wait a step must keep its p99 under.
pub const P99_BOUND: Duration = Duration::from_secs(1);

/// A step passes only if the driver made at least this share of the changes it offered.
const MIN_OFFERED_SHARE: f64 = 0.95;

/// Fractions of the saturated throughput the steps offer, in order.
const STEP_FRACTIONS: [f64; 8] = [1.0, 0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3];

/// Every reconcile start the replicas reported, by object.
#[derive(Debug, Default)]
pub struct Reconciles {
    /// `(stamp seen, start)` per object name, in arrival order.
    by_name: HashMap<String, Vec<(u64, u64)>>,
}

impl Reconciles {
    /// Notes that a reconcile of `name` that saw the stamp `sent_us` started at `start_us`.
    pub fn record(&mut self, name: String, sent_us: u64, start_us: u64) {
        self.by_name
            .entry(name)
            .or_default()
            .push((sent_us, start_us));
    }

    /// When the first reconcile that covered `change` started: one that saw its stamp or a
    /// later one (a later change of the same object carries the earlier one along).
    pub fn started(&self, change: &Change) -> Option<u64> {
        self.by_name
            .get(&change.name)?
            .iter()
            .filter(|(seen, _)| *seen >= change.sent_us)
            .map(|(_, start)| *start)
            .min()
    }
}

/// How the search paces itself.
#[derive(Clone, Copy, Debug)]
pub struct Plan {
    /// Changes per second one replica can reconcile (workers / cost).
    pub replica_capacity: f64,
    /// Replicas that reconcile (all of them sharded; one unsharded).
    pub active: usize,
    /// Length of the warm-up.
    pub warmup: Duration,
    /// Length of the saturation probe.
    pub probe: Duration,
    /// Length of each step.
    pub step: Duration,
    /// How long to wait for a stretch's backlog to be reconciled.
    pub drain: Duration,
}

/// What one stretch of load showed.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// Changes per second offered.
    pub offered: f64,
    /// Changes per second the server accepted.
    pub made: f64,
    /// Reconciles of this stretch's changes that started within it, per second.
    pub throughput: f64,
    /// Change → reconcile start, median, ms.
    pub p50_ms: f64,
    /// Change → reconcile start, p99, ms (infinite when more than 1% were never reconciled).
    pub p99_ms: f64,
    /// Changes never reconciled before the drain timeout.
    pub unreconciled: usize,
    /// Whether the stretch kept its p99 under [`P99_BOUND`] at the offered rate.
    pub passed: bool,
}

/// Judges a stretch offered at `offered` per second from its changes and the reconciles seen.
pub fn judge(offered: f64, drive: &Drive, reconciles: &Reconciles) -> Outcome {
    let (start, end) = drive.window_us;
    let mut waits = Vec::with_capacity(drive.changes.len());
    let mut within = 0usize;
    for change in &drive.changes {
        match reconciles.started(change) {
            Some(started) => {
                within += usize::from((start..=end).contains(&started));
                waits.push(Duration::from_micros(
                    started.saturating_sub(change.sent_us),
                ));
            }
            None => waits.push(Duration::MAX),
        }
    }
    waits.sort();
    let seconds = end.saturating_sub(start) as f64 / 1e6;
    let throughput = if seconds > 0.0 {
        within as f64 / seconds
    } else {
        0.0
    };
    let unreconciled = waits.iter().filter(|w| **w == Duration::MAX).count();
    let p99_ms = match nearest_rank_ms(&waits, 0.99) {
        ms if ms >= Duration::MAX.as_secs_f64() * 1e3 => f64::INFINITY,
        ms => ms,
    };
    let made = drive.rate();
    Outcome {
        offered,
        made,
        throughput,
        p50_ms: nearest_rank_ms(&waits, 0.50),
        p99_ms,
        unreconciled,
        passed: !waits.is_empty()
            && made >= MIN_OFFERED_SHARE * offered
            && p99_ms < P99_BOUND.as_secs_f64() * 1e3,
    }
}

/// What the search found.
#[derive(Clone, Debug, Default)]
pub struct Search {
    /// The saturation probe.
    pub saturated: Outcome,
    /// The highest step that passed, if any did.
    pub sustained: Option<Outcome>,
    /// Every stretch after the warm-up, in order.
    pub stretches: Vec<Outcome>,
    /// Changes made during the whole search (warm-up included).
    pub changes: usize,
}

/// Runs the search (see the module docs) against the replicas whose reconciles land in
/// `reconciles`.
///
/// # Errors
/// The warm-up's changes were not all reconciled: the replicas do not work at all.
pub async fn search(
    driver: &mut Driver,
    reconciles: &Mutex<Reconciles>,
    plan: &Plan,
) -> Result<Search> {
    let ideal = plan.replica_capacity * plan.active as f64;
    let mut search = Search::default();
    let warmup = stretch(driver, reconciles, plan, 0.2 * ideal, plan.warmup).await;
    search.changes += warmup.1;
    if warmup.0.unreconciled > 0 {
        bail!(
            "{} of {} warm-up changes were never reconciled",
            warmup.0.unreconciled,
            warmup.1
        );
    }
    let (probe, made) = stretch(driver, reconciles, plan, 1.25 * ideal, plan.probe).await;
    search.changes += made;
    let saturated = probe.throughput;
    search.saturated = probe.clone();
    search.stretches.push(probe);
    for fraction in STEP_FRACTIONS {
        let (outcome, made) =
            stretch(driver, reconciles, plan, fraction * saturated, plan.step).await;
        search.changes += made;
        search.stretches.push(outcome.clone());
        if outcome.passed {
            search.sustained = Some(outcome);
            break;
        }
    }
    Ok(search)
}

/// One stretch at `rate` for `duration`, its backlog drained, judged; with the changes made.
async fn stretch(
    driver: &mut Driver,
    reconciles: &Mutex<Reconciles>,
    plan: &Plan,
    rate: f64,
    duration: Duration,
) -> (Outcome, usize) {
    let drive = driver.drive(rate, duration).await;
    drain(reconciles, &drive.changes, plan.drain).await;
    let outcome = judge(rate, &drive, &reconciles.lock());
    (outcome, drive.changes.len())
}

/// Waits until every change in `changes` has been reconciled, or `timeout`.
async fn drain(reconciles: &Mutex<Reconciles>, changes: &[Change], timeout: Duration) {
    let deadline = tokio::time::Instant::now() + timeout;
    while tokio::time::Instant::now() < deadline {
        let pending = {
            let reconciles = reconciles.lock();
            changes.iter().any(|c| reconciles.started(c).is_none())
        };
        if !pending {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(name: &str, sent_us: u64) -> Change {
        Change {
            name: name.to_owned(),
            sent_us,
        }
    }

    #[test]
    fn a_later_reconcile_covers_an_earlier_change_of_the_same_object() {
        let mut reconciles = Reconciles::default();
        reconciles.record("a".to_owned(), 200, 250);
        reconciles.record("a".to_owned(), 100, 300);
        assert_eq!(reconciles.started(&change("a", 100)), Some(250));
        assert_eq!(reconciles.started(&change("a", 200)), Some(250));
        assert_eq!(reconciles.started(&change("a", 201)), None);
        assert_eq!(reconciles.started(&change("b", 100)), None);
    }

    /// 100 changes over one second, one every 10 ms, each reconciled `wait_ms` later.
    fn steady(wait_ms: u64, lost: usize) -> (Drive, Reconciles) {
        let start = 1_000_000;
        let changes: Vec<Change> = (0..100u64)
            .map(|i| change(&format!("cm-{i}"), start + i * 10_000))
            .collect();
        let mut reconciles = Reconciles::default();
        for c in changes.iter().skip(lost) {
            reconciles.record(c.name.clone(), c.sent_us, c.sent_us + wait_ms * 1000);
        }
        let drive = Drive {
            changes,
            failed: 0,
            window_us: (start, start + 1_000_000),
        };
        (drive, reconciles)
    }

    #[test]
    fn judge_passes_a_step_that_kept_up_and_reports_its_rates() {
        let (drive, reconciles) = steady(20, 0);
        let outcome = judge(100.0, &drive, &reconciles);
        assert!(outcome.passed);
        assert!((outcome.made - 100.0).abs() < 1e-9);
        // The last change's reconcile starts after the window closed.
        assert!((outcome.throughput - 99.0).abs() < 1e-9);
        assert!((outcome.p50_ms - 20.0).abs() < 1e-9);
        assert!((outcome.p99_ms - 20.0).abs() < 1e-9);
        assert_eq!(outcome.unreconciled, 0);
    }

    #[test]
    fn judge_fails_a_slow_step_a_lossy_step_and_an_under_offered_step() {
        let (drive, reconciles) = steady(1_200, 0);
        assert!(!judge(100.0, &drive, &reconciles).passed);
        let (drive, reconciles) = steady(20, 2);
        let outcome = judge(100.0, &drive, &reconciles);
        assert!(!outcome.passed);
        assert!(outcome.p99_ms.is_infinite());
        assert_eq!(outcome.unreconciled, 2);
        let (drive, reconciles) = steady(20, 0);
        assert!(!judge(120.0, &drive, &reconciles).passed);
    }
}
