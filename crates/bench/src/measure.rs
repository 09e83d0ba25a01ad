//! What one measured client process costs: wall time, CPU, peak RSS and allocations.
//!
//! # Why each number comes from where it does
//! - CPU: `CLOCK_PROCESS_CPUTIME_ID` (user + system, nanosecond resolution, all threads, including
//!   threads that already exited); `/proc/self/stat` splits it into user and system, in clock ticks.
//! - Memory: `VmHWM` (peak resident set) and `VmRSS` from `/proc/self/status`. A client runs in its
//!   own process, so its peak is its own; the delta from the RSS at the start removes the runtime
//!   and binary footprint.
//! - Allocations: a counting global allocator ([`stats_alloc`]) that the bench binaries install
//!   with `#[global_allocator] static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;`. Without
//!   it, the allocation columns read zero.
//! - Another process (a long-running child, whose exit the parent does not wait for): its
//!   `/proc/<pid>` `status` and `stat`, read from the outside ([`Usage::of`]).

use std::time::{Duration, Instant};

use rustix::time::{ClockId, clock_gettime};
use serde::{Deserialize, Serialize};
use stats_alloc::INSTRUMENTED_SYSTEM;

/// Linux clock ticks per second for `/proc/self/stat` (`USER_HZ`, fixed at 100 on every Linux ABI).
const TICKS_PER_SECOND: u64 = 100;

/// A point-in-time reading of this process's counters.
#[derive(Clone, Copy, Debug)]
pub struct Snapshot {
    /// Monotonic time of the reading.
    pub at: Instant,
    /// Process CPU time (user + system).
    pub cpu: Duration,
    /// User CPU time, tick resolution.
    pub user: Duration,
    /// System CPU time, tick resolution.
    pub sys: Duration,
    /// Resident set now, KiB.
    pub rss_kib: u64,
    /// Peak resident set so far, KiB.
    pub hwm_kib: u64,
    /// Bytes ever allocated (including reallocation growth).
    pub allocated: u64,
    /// Bytes allocated and not yet freed.
    pub live: i64,
}

impl Snapshot {
    /// Reads all counters now.
    pub fn take() -> Snapshot {
        let (rss_kib, hwm_kib) = memory_kib();
        let (user, sys) = user_sys();
        let (allocated, live) = heap_bytes(&INSTRUMENTED_SYSTEM.stats());
        Snapshot {
            at: Instant::now(),
            cpu: process_cpu(),
            user,
            sys,
            rss_kib,
            hwm_kib,
            allocated,
            live,
        }
    }
}

/// `(bytes ever allocated, bytes live)` from the counting allocator's statistics.
///
/// `stats_alloc` already counts a reallocation's growth in `bytes_allocated` and its shrinkage
/// in `bytes_deallocated`; `bytes_reallocated` is the same change again, netted, and must not
/// be added on top (until 2026-11-27 it was, which overstated both figures by every `Vec` and
/// `String` that grew in place: the more a process reallocated, the more).
fn heap_bytes(stats: &stats_alloc::Stats) -> (u64, i64) {
    let allocated = stats.bytes_allocated as u64;
    let live = stats.bytes_allocated as i64 - stats.bytes_deallocated as i64;
    (allocated, live)
}

/// The cost of one measured phase, as the child process reports it to the runner.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Cost {
    /// Objects the phase delivered.
    pub objects: u64,
    /// Wall time, milliseconds.
    pub wall_ms: f64,
    /// Process CPU (user + system), milliseconds.
    pub cpu_ms: f64,
    /// User CPU, milliseconds (10 ms resolution).
    pub user_ms: f64,
    /// System CPU, milliseconds (10 ms resolution).
    pub sys_ms: f64,
    /// Peak RSS minus RSS at the start, MiB.
    pub peak_rss_delta_mib: f64,
    /// Peak RSS of the whole process during the phase (`VmHWM`), MiB: what `/usr/bin/time`
    /// reports as max RSS, comparable with client-go's process.
    #[serde(default)]
    pub peak_rss_mib: f64,
    /// CPU (user + system) of the whole child process from its start to its exit, read by the
    /// parent ([`children_cpu`]), milliseconds: what `/usr/bin/time` reports, comparable with
    /// client-go's process. Zero until the runner fills it in.
    #[serde(default)]
    pub process_cpu_ms: f64,
    /// Bytes allocated during the phase, MiB.
    pub allocated_mib: f64,
    /// Bytes still live at the end of the phase, MiB (what the cache holds, plus leftovers).
    pub live_mib: f64,
}

impl Cost {
    /// The cost between `start` and `end`, for `objects` delivered objects.
    pub fn between(start: &Snapshot, end: &Snapshot, objects: u64) -> Cost {
        const MIB: f64 = 1024.0 * 1024.0;
        Cost {
            objects,
            wall_ms: millis(end.at.duration_since(start.at)),
            cpu_ms: millis(end.cpu.saturating_sub(start.cpu)),
            user_ms: millis(end.user.saturating_sub(start.user)),
            sys_ms: millis(end.sys.saturating_sub(start.sys)),
            peak_rss_delta_mib: end.hwm_kib.saturating_sub(start.rss_kib) as f64 / 1024.0,
            peak_rss_mib: end.hwm_kib as f64 / 1024.0,
            process_cpu_ms: 0.0,
            allocated_mib: end.allocated.saturating_sub(start.allocated) as f64 / MIB,
            live_mib: (end.live - start.live) as f64 / MIB,
        }
    }

    /// Objects per second of wall time.
    pub fn objects_per_second(&self) -> f64 {
        if self.wall_ms <= 0.0 {
            return 0.0;
        }
        self.objects as f64 * 1000.0 / self.wall_ms
    }
}

fn millis(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Process CPU time (user + system) of all threads, nanosecond resolution.
pub fn process_cpu() -> Duration {
    let spec = clock_gettime(ClockId::ProcessCPUTime);
    Duration::new(
        u64::try_from(spec.tv_sec).unwrap_or(0),
        u32::try_from(spec.tv_nsec).unwrap_or(0),
    )
}

/// `(VmRSS, VmHWM)` in KiB; zeros where `/proc` is unavailable.
pub fn memory_kib() -> (u64, u64) {
    memory_kib_of(Proc::Myself)
}

/// A process whose counters `/proc` shows: this one, or a child by its pid.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Proc {
    /// `/proc/self`.
    Myself,
    /// `/proc/<pid>`.
    Pid(u32),
}

impl Proc {
    /// `/proc/<self or pid>/<file>`.
    fn path(self, file: &str) -> String {
        match self {
            Proc::Myself => format!("/proc/self/{file}"),
            Proc::Pid(pid) => format!("/proc/{pid}/{file}"),
        }
    }
}

/// What a running process has used so far, read from the outside (the scale-out benchmark's
/// parent reads its long-running replicas this way).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Usage {
    /// Resident set now, KiB.
    pub rss_kib: u64,
    /// Peak resident set so far (`VmHWM`), KiB.
    pub hwm_kib: u64,
    /// CPU (user + system) so far, tick resolution.
    pub cpu: Duration,
}

impl Usage {
    /// Reads `process`'s counters now; zeros for a process that is gone.
    pub fn of(process: Proc) -> Usage {
        let (rss_kib, hwm_kib) = memory_kib_of(process);
        // utime and stime are fields 14 and 15 of the full line.
        let (user, sys) = stat_ticks(process, 14, 15);
        Usage {
            rss_kib,
            hwm_kib,
            cpu: user + sys,
        }
    }
}

/// `(VmRSS, VmHWM)` of `process` in KiB; zeros where `/proc` is unavailable.
fn memory_kib_of(process: Proc) -> (u64, u64) {
    let status = std::fs::read_to_string(process.path("status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|line| line.strip_prefix(name))
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|value| value.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Resets `VmHWM` to the current RSS (Linux: write "5" to `/proc/self/clear_refs`), so that a
/// phase's peak is measured from its own start. Returns whether the kernel accepted it.
pub fn reset_peak_rss() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

/// `(user, system)` CPU of this process from `/proc/self/stat`, tick resolution.
fn user_sys() -> (Duration, Duration) {
    // utime and stime are fields 14 and 15 of the full line.
    stat_ticks(Proc::Myself, 14, 15)
}

/// CPU (user + system) of every child this process has waited for, from `/proc/self/stat`
/// (`cutime`, `cstime`), tick resolution. The runner reads it before and after each child, one
/// child at a time, so the difference is that child's whole-process CPU, for kubegen's children
/// and client-go's alike.
pub fn children_cpu() -> Duration {
    // cutime and cstime are fields 16 and 17 of the full line.
    let (user, sys) = stat_ticks(Proc::Myself, 16, 17);
    user + sys
}

/// Two tick counters of `process`'s `stat`, by their 1-based field numbers, as durations.
fn stat_ticks(process: Proc, first: usize, second: usize) -> (Duration, Duration) {
    let stat = std::fs::read_to_string(process.path("stat")).unwrap_or_default();
    // The command name (field 2) may contain spaces; the fields after its closing ')' are fixed:
    // field n of the line is index n - 3 after the name.
    let after_name = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks = |field: usize| {
        fields
            .get(field - 3)
            .and_then(|value| value.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let to_duration = |ticks: u64| Duration::from_millis(ticks * 1000 / TICKS_PER_SECOND);
    (to_duration(ticks(first)), to_duration(ticks(second)))
}

/// The nearest-rank `q` quantile (0 < q <= 1) of `sorted`, in ms; NaN when empty.
pub fn nearest_rank_ms(sorted: &[Duration], q: f64) -> f64 {
    let last = sorted.len().saturating_sub(1);
    // The float-to-index conversion is exact for any realistic count.
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss
    )]
    let rank = ((q * sorted.len() as f64).ceil() as usize)
        .saturating_sub(1)
        .min(last);
    sorted.get(rank).map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
}

/// Prefix of the one line a child prints with its result.
pub const RESULT_PREFIX: &str = "BENCH-RESULT ";

/// Child side, at the end of the measured phase: prints the result line and exits at once, as
/// client-go's `cgbench` does (`os.Exit`). Freeing a cache of 60,000 objects costs a tenth of a
/// second of CPU that no informer pays while it runs: the process numbers must not include it.
pub fn exit_with(cost: &Cost) -> ! {
    use std::io::Write as _;
    let line = serde_json::to_string(cost).unwrap_or_default();
    let mut stdout = std::io::stdout().lock();
    let _ = writeln!(stdout, "{RESULT_PREFIX}{line}");
    let _ = stdout.flush();
    std::process::exit(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_reads_nonzero_memory_and_monotonic_cpu_on_linux() {
        let first = Snapshot::take();
        let mut spin = 0u64;
        for value in 0..2_000_000u64 {
            spin = spin.wrapping_add(value.rotate_left(3));
        }
        std::hint::black_box(spin);
        let second = Snapshot::take();
        assert!(first.rss_kib > 0);
        assert!(second.hwm_kib >= second.rss_kib);
        assert!(second.cpu > first.cpu);
    }

    #[test]
    fn heap_bytes_count_a_reallocation_once() {
        // alloc 100, realloc 100 -> 150, realloc 150 -> 120, alloc 30 then free it: 120 live.
        let stats = stats_alloc::Stats {
            allocations: 2,
            deallocations: 1,
            reallocations: 2,
            bytes_allocated: 100 + 50 + 30,
            bytes_deallocated: 30 + 30,
            bytes_reallocated: 50 - 30,
        };
        assert_eq!(heap_bytes(&stats), (180, 120));
    }

    #[test]
    fn usage_of_this_process_by_pid_matches_self() {
        let by_pid = Usage::of(Proc::Pid(std::process::id()));
        let myself = Usage::of(Proc::Myself);
        assert!(by_pid.rss_kib > 0);
        assert!(by_pid.hwm_kib >= by_pid.rss_kib);
        assert!(myself.hwm_kib >= by_pid.hwm_kib);
    }

    #[test]
    fn usage_of_a_missing_process_is_zero() {
        assert_eq!(Usage::of(Proc::Pid(u32::MAX)), Usage::default());
    }

    fn millis(values: &[u64]) -> Vec<Duration> {
        values.iter().copied().map(Duration::from_millis).collect()
    }

    #[test]
    fn nearest_rank_picks_the_smallest_value_covering_the_quantile() {
        let sorted = millis(&(1..=100).collect::<Vec<_>>());
        assert!((nearest_rank_ms(&sorted, 0.50) - 50.0).abs() < 1e-9);
        assert!((nearest_rank_ms(&sorted, 0.99) - 99.0).abs() < 1e-9);
        assert!((nearest_rank_ms(&sorted, 1.0) - 100.0).abs() < 1e-9);
    }

    #[test]
    fn nearest_rank_of_one_value_is_that_value_and_of_none_is_nan() {
        assert!((nearest_rank_ms(&millis(&[7]), 0.5) - 7.0).abs() < 1e-9);
        assert!(nearest_rank_ms(&[], 0.5).is_nan());
    }

    #[test]
    fn cost_between_computes_rates_and_deltas() {
        let start = Snapshot::take();
        let mut end = start;
        end.at = start.at + Duration::from_millis(500);
        end.cpu = start.cpu + Duration::from_millis(250);
        end.allocated = start.allocated + 3 * 1024 * 1024;
        let cost = Cost::between(&start, &end, 1_000);
        assert!((cost.wall_ms - 500.0).abs() < 1e-6);
        assert!((cost.cpu_ms - 250.0).abs() < 1e-6);
        assert!((cost.allocated_mib - 3.0).abs() < 1e-9);
        assert!((cost.objects_per_second() - 2_000.0).abs() < 1e-6);
    }
}
