//! The reflector's retry delay: exponential with jitter, forgiven after a healthy stretch.
//!
//! Mirrors the `wait.NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0, clock)` that
//! client-go `tools/cache/reflector.go` builds for every reflector.

use std::time::Duration;

use tokio::time::Instant;

/// Exponential backoff: `initial * 2^n` plus up to 100 % random jitter, capped at `max`; the
/// exponent resets when no backoff was needed for `reset_after`.
///
/// # Why jitter?
/// When an API server restarts, every informer of every controller loses its watch at the same
/// moment. Without jitter they would all come back at the same moments too, in waves.
#[derive(Debug)]
pub(crate) struct Backoff {
    initial: Duration,
    max: Duration,
    reset_after: Duration,
    /// The un-jittered delay the next `next_delay` starts from. Invariant: `initial..=max`.
    current: Duration,
    /// When the last delay was handed out.
    last: Option<Instant>,
}

impl Default for Backoff {
    fn default() -> Self {
        Self::new(
            Duration::from_millis(800),
            Duration::from_secs(30),
            Duration::from_secs(120),
        )
    }
}

impl Backoff {
    pub(crate) fn new(initial: Duration, max: Duration, reset_after: Duration) -> Self {
        Self {
            initial,
            max,
            reset_after,
            current: initial,
            last: None,
        }
    }

    /// The delay before the next retry, at time `now`.
    pub(crate) fn next_delay(&mut self, now: Instant) -> Duration {
        if self
            .last
            .is_some_and(|last| now.duration_since(last) > self.reset_after)
        {
            self.current = self.initial; // healthy for a while: forgive earlier failures
        }
        self.last = Some(now);
        let base = self.current;
        self.current = base.saturating_mul(2).min(self.max);
        let jitter = base.mul_f64(rand::random::<f64>());
        (base + jitter).min(self.max)
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        assert!(self.initial <= self.current && self.current <= self.max);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_with_jitter_up_to_the_cap() {
        let mut b = Backoff::default();
        let now = Instant::now();
        let mut floors = vec![];
        for _ in 0..8 {
            let d = b.next_delay(now);
            b.check_invariants();
            floors.push(d);
        }
        let expected_base = [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000];
        for (d, base) in floors.iter().zip(expected_base) {
            let base = Duration::from_millis(base);
            assert!(
                *d >= base.min(Duration::from_secs(30)),
                "{d:?} below {base:?}"
            );
            assert!(
                *d <= (base * 2).min(Duration::from_secs(30)),
                "{d:?} above 2x{base:?}"
            );
        }
    }

    #[test]
    fn backoff_resets_after_two_healthy_minutes() {
        let mut b = Backoff::default();
        let t0 = Instant::now();
        for _ in 0..5 {
            b.next_delay(t0);
        }
        assert!(b.next_delay(t0 + Duration::from_secs(119)) >= Duration::from_secs(12));
        let after_rest = b.next_delay(t0 + Duration::from_secs(119 + 121));
        assert!(
            after_rest <= Duration::from_millis(1600),
            "not reset: {after_rest:?}"
        );
    }
}
