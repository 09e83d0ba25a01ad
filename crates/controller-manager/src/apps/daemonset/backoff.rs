//! How soon a failed daemon Pod on a Node may be replaced again: after 1 s, then 2 s, 4 s, ...
//! up to 15 minutes, per DaemonSet generation and Node, so a Pod that fails at once is not
//! recreated in a tight loop.
//!
//! Mirrors client-go's `flowcontrol.Backoff` (`util/flowcontrol/backoff.go`) as
//! kube-controller-manager builds it for the daemonset controller (`NewBackOff(1s, 15m)`, no
//! jitter), keyed as `failedPodsBackoffKey` does (`<uid>/<observedGeneration>/<node>`).
//!
//! # Differences from client-go
//! Expired entries (untouched for twice the maximum) are dropped whenever a delay is counted,
//! instead of by a garbage-collecting task once a minute: same answers, one task fewer.

use std::{collections::HashMap, time::Duration};

use tokio::time::Instant;

/// The first delay.
const INITIAL: Duration = Duration::from_secs(1);
/// The longest delay.
const MAX: Duration = Duration::from_secs(15 * 60);

#[derive(Clone, Copy, Debug)]
struct Entry {
    delay: Duration,
    last_update: Instant,
}

/// Per-key exponential delays.
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    entries: HashMap<String, Entry>,
}

fn expired(entry: &Entry, now: Instant) -> bool {
    now.saturating_duration_since(entry.last_update) > 2 * MAX
}

impl Backoff {
    /// The key of a Node's failed Pods of a DaemonSet generation (`failedPodsBackoffKey`).
    pub(crate) fn key(uid: &str, observed_generation: i64, node: &str) -> String {
        format!("{uid}/{observed_generation}/{node}")
    }

    /// Whether `key`'s last failure was counted less than its delay before `now`
    /// (`IsInBackOffSinceUpdate`).
    pub(crate) fn in_backoff(&self, key: &str, now: Instant) -> bool {
        self.entries.get(key).is_some_and(|e| {
            !expired(e, now) && now.saturating_duration_since(e.last_update) < e.delay
        })
    }

    /// The current delay of `key` (`Get`), zero when unknown.
    pub(crate) fn delay(&self, key: &str) -> Duration {
        self.entries.get(key).map_or(Duration::ZERO, |e| e.delay)
    }

    /// Counts one more failure of `key` at `now` (`Next`): the first delay for a new or expired
    /// key, otherwise twice the last, at most 15 minutes.
    pub(crate) fn next(&mut self, key: &str, now: Instant) {
        self.entries.retain(|_, e| !expired(e, now));
        let delay = match self.entries.get(key) {
            None => INITIAL,
            Some(e) => (e.delay * 2).min(MAX),
        };
        self.entries.insert(
            key.to_owned(),
            Entry {
                delay,
                last_update: now,
            },
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_up_to_fifteen_minutes() {
        let mut b = Backoff::default();
        let t0 = Instant::now();
        assert!(!b.in_backoff("k", t0));
        b.next("k", t0);
        assert_eq!(b.delay("k"), INITIAL);
        assert!(b.in_backoff("k", t0 + Duration::from_millis(999)));
        assert!(!b.in_backoff("k", t0 + INITIAL));
        for _ in 0..20 {
            b.next("k", t0);
        }
        assert_eq!(b.delay("k"), MAX);
    }

    #[test]
    fn an_entry_untouched_for_half_an_hour_starts_over() {
        let mut b = Backoff::default();
        let t0 = Instant::now();
        b.next("k", t0);
        b.next("k", t0);
        assert_eq!(b.delay("k"), 2 * INITIAL);
        let later = t0 + 2 * MAX + Duration::from_secs(1);
        assert!(!b.in_backoff("k", later));
        b.next("k", later);
        assert_eq!(b.delay("k"), INITIAL);
    }

    #[test]
    fn keys_name_the_generation_and_node() {
        assert_eq!(Backoff::key("u", 3, "n1"), "u/3/n1");
    }
}
