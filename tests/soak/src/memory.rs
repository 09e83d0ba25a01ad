//! Resident memory of this process over time, and panics anywhere in it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use tokio::time::Instant;

/// Current resident set size in MiB (`VmRSS`), 0 where `/proc` is unavailable.
pub fn rss_mib() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|value| value.parse::<u64>().ok())
        .unwrap_or(0);
    kib as f64 / 1024.0
}

/// Samples RSS every second until `stop`; returns `(seconds since start, MiB)` pairs.
pub async fn sample(stop: Arc<AtomicBool>) -> Vec<(f64, f64)> {
    let start = Instant::now();
    let mut samples = vec![(0.0, rss_mib())];
    while !stop.load(Ordering::Relaxed) {
        tokio::time::sleep(Duration::from_secs(1)).await;
        samples.push((start.elapsed().as_secs_f64(), rss_mib()));
    }
    samples
}

/// Whether the peak of the last third of `samples` stays within twice the peak of the first third
/// plus 64 MiB: growth that keeps going across relists fails this, a warm-up plateau does not.
pub fn bounded(samples: &[(f64, f64)]) -> bool {
    if samples.len() < 3 {
        return true;
    }
    let third = samples.len() / 3;
    let peak = |part: &[(f64, f64)]| part.iter().map(|(_, mib)| *mib).fold(0.0, f64::max);
    let early = peak(&samples[..third]);
    let late = peak(&samples[samples.len() - third..]);
    late <= early * 2.0 + 64.0
}

static PANICS: AtomicU64 = AtomicU64::new(0);
static HOOK: Mutex<bool> = Mutex::new(false);

/// Installs (once) a panic hook that counts every panic in the process, then chains to the
/// previous hook, and returns the count so far.
pub fn count_panics() -> u64 {
    let mut installed = HOOK.lock();
    if !*installed {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            PANICS.fetch_add(1, Ordering::SeqCst);
            previous(info);
        }));
        *installed = true;
    }
    PANICS.load(Ordering::SeqCst)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounded_accepts_a_plateau_and_rejects_steady_growth() {
        let plateau: Vec<(f64, f64)> = (0..30).map(|s| (f64::from(s), 50.0)).collect();
        assert!(bounded(&plateau));
        let growth: Vec<(f64, f64)> = (0..30)
            .map(|s| (f64::from(s), 20.0 + 20.0 * f64::from(s)))
            .collect();
        assert!(!bounded(&growth));
    }

    #[test]
    fn count_panics_counts_caught_panics() {
        let before = count_panics();
        let caught = std::panic::catch_unwind(|| panic!("counted"));
        assert!(caught.is_err());
        assert_eq!(count_panics(), before + 1);
    }
}
