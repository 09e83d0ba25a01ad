//! The scale-out tables: throughput against the issue's ≥0.8×N target, and memory and traffic
//! per replica against 1/N of one replica's.
//!
//! Every ratio is to the same mode's single-replica run of the same invocation (same server,
//! same machine, same minute): absolute figures on a shared two-core machine move between runs,
//! ratios much less.

use std::time::Duration;

use super::Mode;
use super::group::Reading;
use super::steps::{Outcome, Search};
use crate::plot::{Chart, Line};
use crate::table::markdown;

/// One group measured: `replicas` replicas in `mode`.
#[derive(Clone, Debug)]
pub struct Run {
    /// How they split the work.
    pub mode: Mode,
    /// How many.
    pub replicas: usize,
    /// Cold start (fresh replicas, no live shard Lease): how long the group took to settle.
    pub cold_settle: Duration,
    /// Each replica of the cold start once settled (then killed).
    pub cold: Vec<Reading>,
    /// Warm restart (the killed replicas' successors, their Leases still live): how long the
    /// group took to settle (caches filled, objects in place, ring agreed).
    pub settle: Duration,
    /// Each replica of the warm restart once settled, before any load.
    pub settled: Vec<Reading>,
    /// Each replica after the search.
    pub end: Vec<Reading>,
    /// What the search found.
    pub search: Search,
    /// Live heap of one replica of this mode over no objects: the process without a cache.
    pub idle_heap: u64,
}

impl Run {
    /// The highest sustained rate (0 when no step passed).
    fn sustained(&self) -> f64 {
        self.search.sustained.as_ref().map_or(0.0, |o| o.made)
    }

    /// Mean over the replicas of `value` at the end.
    fn mean_end(&self, value: impl Fn(&Reading) -> f64) -> f64 {
        mean(self.end.iter().map(value))
    }

    /// Mean over the replicas of the bytes each received under load, per 1,000 changes, KiB.
    fn kib_per_1k_changes(&self) -> f64 {
        let changes = self.search.changes.max(1) as f64;
        mean(self.end.iter().zip(&self.settled).map(|(end, settled)| {
            end.received.saturating_sub(settled.received) as f64 / changes * 1000.0 / 1024.0
        }))
    }

    /// CPU of all replicas under load per 1,000 changes, ms.
    fn cpu_ms_per_1k_changes(&self) -> f64 {
        let cpu: Duration = self
            .end
            .iter()
            .zip(&self.settled)
            .map(|(end, settled)| end.usage.cpu.saturating_sub(settled.usage.cpu))
            .sum();
        cpu.as_secs_f64() * 1e3 / self.search.changes.max(1) as f64 * 1000.0
    }
}

fn mean(values: impl Iterator<Item = f64>) -> f64 {
    let (sum, count) = values.fold((0.0, 0usize), |(sum, n), v| (sum + v, n + 1));
    if count == 0 { 0.0 } else { sum / count as f64 }
}

const MIB: f64 = 1024.0 * 1024.0;

/// `value / base` as `0.00x`, `n/a` without a base.
fn ratio(value: f64, base: Option<f64>) -> String {
    match base {
        Some(base) if base > 0.0 => format!("{:.2}x", value / base),
        _ => "n/a".to_owned(),
    }
}

/// The single-replica run of `mode`, the base of its ratios.
fn single(runs: &[Run], mode: Mode) -> Option<&Run> {
    runs.iter()
        .find(|run| run.mode == mode && run.replicas == 1)
}

/// `min–max` of the objects the replicas held at the end.
fn objects_held(run: &Run) -> String {
    let held = run.end.iter().map(|r| r.stat.objects);
    match (held.clone().min(), held.max()) {
        (Some(low), Some(high)) if low == high => low.to_string(),
        (Some(low), Some(high)) => format!("{low}–{high}"),
        _ => "-".to_owned(),
    }
}

fn waits(outcome: Option<&Outcome>) -> String {
    outcome.map_or_else(
        || "-".to_owned(),
        |o| format!("{:.0} / {:.0}", o.p50_ms, o.p99_ms),
    )
}

/// The throughput table: per run, what the group did flat out and at a p99 wait under 1 s,
/// against N× one replica's sustained rate.
pub fn throughput(title: &str, runs: &[Run]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            let base = single(runs, run.mode).map(Run::sustained);
            let target = 0.8 * run.replicas as f64;
            let scaled = base.filter(|b| *b > 0.0).map(|b| run.sustained() / b);
            let verdict = match scaled {
                Some(x) if x >= target => "yes",
                Some(_) => "no",
                None => "n/a",
            };
            vec![
                run.mode.to_string(),
                run.replicas.to_string(),
                objects_held(run),
                format!("{:.0}", run.search.saturated.throughput),
                format!("{:.0}", run.sustained()),
                waits(run.search.sustained.as_ref()),
                ratio(run.sustained(), base),
                format!("≥{target:.1}x: {verdict}"),
            ]
        })
        .collect();
    markdown(
        title,
        &[
            "mode",
            "replicas",
            "objects per replica",
            "flat out, reconciles/s",
            "sustained, changes/s (p99 < 1 s)",
            "wait p50 / p99 ms",
            "sustained / 1 replica's",
            "target",
        ],
        &rows,
    )
}

/// The memory and traffic table: per replica, against one replica's and 1/N. "Above an idle
/// replica's" subtracts the live heap of a replica of the same mode over no objects (runtime,
/// client, metrics, the Lease informers): what is left is the cache and what scales with it.
/// Every column but the last is the warm restart's (the steady state of a running ring); the
/// last is the cold start's, whose transients (a replica that sees the ring alone takes every
/// object whose shard has no live Lease yet) the warm group does not repeat.
pub fn footprint(title: &str, runs: &[Run]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|run| {
            let base = single(runs, run.mode);
            let rss = run.mean_end(|r| r.usage.hwm_kib as f64 / 1024.0);
            let max_rss = run
                .end
                .iter()
                .map(|r| r.usage.hwm_kib as f64 / 1024.0)
                .fold(0.0, f64::max);
            let heap = run.mean_end(|r| r.stat.live_bytes as f64 / MIB);
            let idle = run.idle_heap as f64 / MIB;
            let base_rss = base.map(|b| b.mean_end(|r| r.usage.hwm_kib as f64 / 1024.0));
            let base_heap = base.map(|b| b.mean_end(|r| r.stat.live_bytes as f64 / MIB));
            let base_cache = base
                .map(|b| b.mean_end(|r| r.stat.live_bytes as f64 / MIB) - b.idle_heap as f64 / MIB);
            let received =
                |readings: &[Reading]| mean(readings.iter().map(|r| r.received as f64 / MIB));
            let cold_rss = run
                .cold
                .iter()
                .map(|r| r.usage.hwm_kib as f64 / 1024.0)
                .fold(0.0, f64::max);
            vec![
                run.mode.to_string(),
                run.replicas.to_string(),
                format!("{rss:.1} ({max_rss:.1})"),
                ratio(rss, base_rss),
                format!("{heap:.1}"),
                ratio(heap, base_heap),
                format!("{:.1}", heap - idle),
                format!(
                    "{} (1/N = {:.2})",
                    ratio(heap - idle, base_cache),
                    1.0 / run.replicas as f64
                ),
                format!("{:.1}", received(&run.settled)),
                format!("{:.0}", run.kib_per_1k_changes()),
                format!("{:.0}", run.cpu_ms_per_1k_changes()),
                format!("{:.1}", run.settle.as_secs_f64()),
                format!(
                    "{:.1} / {cold_rss:.1} / {:.1}",
                    run.cold_settle.as_secs_f64(),
                    received(&run.cold)
                ),
            ]
        })
        .collect();
    markdown(
        title,
        &[
            "mode",
            "replicas",
            "max RSS MiB, mean (max)",
            "RSS / 1 replica's",
            "live heap MiB",
            "heap / 1 replica's",
            "heap above an idle replica's, MiB",
            "that / 1 replica's",
            "received to settle, MiB",
            "received per 1k changes, KiB",
            "CPU ms per 1k changes (all replicas)",
            "settle s",
            "cold start: settle s / max RSS MiB (max) / received MiB",
        ],
        &rows,
    )
}

/// The plots of `runs` against their replica counts: sustained changes/s per mode; that over
/// one replica's, beside the ideal N and the ≥0.8×N target; and each replica's cache (live heap
/// above an idle replica's) beside 1/N of one replica's.
pub fn charts(runs: &[Run]) -> Vec<Chart> {
    let modes: Vec<Mode> = Mode::ALL
        .into_iter()
        .filter(|mode| runs.iter().any(|run| run.mode == *mode))
        .collect();
    let counts: Vec<f64> = {
        let mut counts: Vec<usize> = runs.iter().map(|run| run.replicas).collect();
        counts.sort_unstable();
        counts.dedup();
        counts.into_iter().map(|n| n as f64).collect()
    };
    let per_mode = |value: &dyn Fn(&Run) -> Option<f64>| -> Vec<Line> {
        modes
            .iter()
            .map(|mode| Line {
                name: mode.to_string(),
                points: runs
                    .iter()
                    .filter(|run| run.mode == *mode)
                    .filter_map(|run| Some((run.replicas as f64, value(run)?)))
                    .collect(),
                reference: false,
            })
            .collect()
    };
    let reference = |name: &str, y: &dyn Fn(f64) -> f64| Line {
        name: name.to_owned(),
        points: counts.iter().map(|n| (*n, y(*n))).collect(),
        reference: true,
    };
    let cache =
        |run: &Run| run.mean_end(|r| r.stat.live_bytes as f64 / MIB) - run.idle_heap as f64 / MIB;
    let speedup = |run: &Run| {
        let base = single(runs, run.mode)?.sustained();
        (base > 0.0).then(|| run.sustained() / base)
    };
    let mut speedups = per_mode(&speedup);
    speedups.push(reference("N (ideal)", &|n| n));
    speedups.push(reference("0.8 × N (target)", &|n| 0.8 * n));
    let mut caches = per_mode(&|run| Some(cache(run)));
    if let Some(base) = runs
        .iter()
        .find(|run| run.replicas == 1 && run.mode != Mode::Unsharded)
    {
        let one = cache(base);
        caches.push(reference("1/N of one replica's", &|n| one / n));
    }
    vec![
        Chart {
            title: "sustained changes/s (p99 wait < 1 s)".to_owned(),
            x: "replicas".to_owned(),
            y: "changes/s".to_owned(),
            lines: per_mode(&|run| Some(run.sustained())),
        },
        Chart {
            title: "speed-up over one replica".to_owned(),
            x: "replicas".to_owned(),
            y: "sustained / one replica's".to_owned(),
            lines: speedups,
        },
        Chart {
            title: "cache per replica, MiB".to_owned(),
            x: "replicas".to_owned(),
            y: "live heap above an idle replica's, MiB".to_owned(),
            lines: caches,
        },
    ]
}

/// Every stretch of every search, for the record.
pub fn stretches(title: &str, runs: &[Run]) -> String {
    let rows: Vec<Vec<String>> = runs
        .iter()
        .flat_map(|run| {
            run.search.stretches.iter().map(move |o| {
                vec![
                    run.mode.to_string(),
                    run.replicas.to_string(),
                    format!("{:.0}", o.offered),
                    format!("{:.0}", o.made),
                    format!("{:.0}", o.throughput),
                    format!("{:.0}", o.p50_ms),
                    format!("{:.0}", o.p99_ms),
                    o.unreconciled.to_string(),
                    if o.passed { "yes" } else { "no" }.to_owned(),
                ]
            })
        })
        .collect();
    markdown(
        title,
        &[
            "mode",
            "replicas",
            "offered/s",
            "made/s",
            "reconciles/s",
            "p50 ms",
            "p99 ms",
            "never reconciled",
            "p99 < 1 s",
        ],
        &rows,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::measure::Usage;
    use crate::scale::Stat;

    fn reading(objects: usize, hwm_mib: u64, live_mib: u64, received: u64) -> Reading {
        Reading {
            identity: "r".to_owned(),
            stat: Stat {
                objects,
                live_bytes: live_mib << 20,
                ..Stat::default()
            },
            usage: Usage {
                hwm_kib: hwm_mib * 1024,
                ..Usage::default()
            },
            received,
        }
    }

    fn run(replicas: usize, sustained: f64, objects: &[usize], live_mib: u64) -> Run {
        let end: Vec<Reading> = objects
            .iter()
            .map(|o| reading(*o, 2 * live_mib, live_mib, (1 << 20) + 1_024_000))
            .collect();
        Run {
            mode: Mode::Labels,
            replicas,
            cold_settle: Duration::from_secs(5),
            cold: objects
                .iter()
                .map(|_| reading(0, 300, 0, 3 << 20))
                .collect(),
            settle: Duration::from_secs(2),
            settled: objects.iter().map(|_| reading(0, 0, 0, 1 << 20)).collect(),
            end,
            idle_heap: 4 << 20,
            search: Search {
                sustained: Some(Outcome {
                    made: sustained,
                    p50_ms: 21.0,
                    p99_ms: 180.0,
                    passed: true,
                    ..Outcome::default()
                }),
                changes: 1000,
                ..Search::default()
            },
        }
    }

    #[test]
    fn throughput_rows_compare_with_n_times_the_single_replica() {
        let runs = [
            run(1, 100.0, &[10], 40),
            run(2, 170.0, &[6, 4], 20),
            run(3, 230.0, &[3, 3, 4], 14),
        ];
        let text = throughput("t", &runs);
        assert!(
            text.contains("| labels | 2 | 4–6 | 0 | 170 | 21 / 180 | 1.70x | ≥1.6x: yes |"),
            "{text}"
        );
        assert!(
            text.contains("| labels | 3 | 3–4 | 0 | 230 | 21 / 180 | 2.30x | ≥2.4x: no |"),
            "{text}"
        );
    }

    #[test]
    fn charts_put_each_mode_against_its_replica_counts_beside_the_ideal() {
        let runs = [run(1, 100.0, &[10], 40), run(2, 170.0, &[6, 4], 20)];
        let charts = charts(&runs);
        let names = |chart: &Chart| {
            chart
                .lines
                .iter()
                .map(|l| l.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&charts[0]), ["labels"]);
        assert_eq!(charts[0].lines[0].points, [(1.0, 100.0), (2.0, 170.0)]);
        assert_eq!(
            names(&charts[1]),
            ["labels", "N (ideal)", "0.8 × N (target)"]
        );
        assert_eq!(charts[1].lines[0].points, [(1.0, 1.0), (2.0, 1.7)]);
        assert_eq!(charts[1].lines[2].points, [(1.0, 0.8), (2.0, 1.6)]);
        // 40 MiB live, 4 MiB idle: 36 MiB of cache on one replica, 16 on each of two.
        assert_eq!(charts[2].lines[0].points, [(1.0, 36.0), (2.0, 16.0)]);
        assert_eq!(charts[2].lines[1].points, [(1.0, 36.0), (2.0, 18.0)]);
    }

    #[test]
    fn footprint_rows_compare_with_one_over_n_of_the_single_replica() {
        let runs = [run(1, 100.0, &[10], 40), run(2, 170.0, &[6, 4], 20)];
        let text = footprint("t", &runs);
        // 1 MiB received to settle, then 1,000 KiB over 1,000 changes.
        assert!(
            text.contains(
                "| labels | 2 | 40.0 (40.0) | 0.50x | 20.0 | 0.50x | 16.0 | 0.44x (1/N = 0.50) | 1.0 | 1000 | 0 | 2.0 | 5.0 / 300.0 / 3.0 |"
            ),
            "{text}"
        );
    }
}
