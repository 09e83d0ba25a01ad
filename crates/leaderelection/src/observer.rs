//! The elector's memory of the lock and the pure rules deciding what to do next, kept apart from
//! I/O so they can be tested with virtual time. Mirrors `observedRecord`, `observedTime`,
//! `isLeaseValid` and the decision half of `tryAcquireOrRenew` in client-go
//! `tools/leaderelection/leaderelection.go`.
//!
//! # Observed-time semantics
//! A lease expires `leaseDurationSeconds` after *we* last saw its record change, measured on our own
//! monotonic clock. The record's `renewTime` was written with the holder's wall clock, which may be
//! minutes off ours; trusting it would let a skewed candidate take over a live lease. The price: a
//! candidate that starts late waits a full lease duration even for a long-dead holder.

use k8s_openapi::jiff::Timestamp;
use std::time::Duration;
use tokio::time::Instant;

use crate::record::LeaderElectionRecord;

/// What the candidate should do after reading the current record.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    /// Another candidate holds a lease that has not expired by our observation.
    Wait {
        /// The current holder.
        holder: String,
    },
    /// Write this record to acquire (or keep) the lock.
    Write(LeaderElectionRecord),
}

/// The last record this candidate saw and when it saw it change.
#[derive(Debug)]
pub(crate) struct Observer {
    /// Our identity; we lead exactly when the observed holder equals it.
    identity: String,
    /// The record as last read or written. Invariant: `Some` exactly when `observed_at` is `Some`.
    record: Option<LeaderElectionRecord>,
    /// Local time at which `record` last changed (or we last wrote it). Never derived from the
    /// record's own timestamps.
    observed_at: Option<Instant>,
}

impl Observer {
    /// A candidate that has seen nothing yet.
    pub(crate) fn new(identity: &str) -> Self {
        Observer {
            identity: identity.to_owned(),
            record: None,
            observed_at: None,
        }
    }

    /// Records a record read from the server. The observation time moves only if the record
    /// differs from the one we already know: an unchanged record means nobody renewed it.
    pub(crate) fn observe_read(&mut self, record: LeaderElectionRecord, now: Instant) {
        if self.record.as_ref() != Some(&record) {
            self.record = Some(record);
            self.observed_at = Some(now);
        }
    }

    /// Records a record we wrote successfully: it is fresh by definition.
    pub(crate) fn observe_write(&mut self, record: LeaderElectionRecord, now: Instant) {
        self.record = Some(record);
        self.observed_at = Some(now);
    }

    /// Whether the observed record names us as holder.
    pub(crate) fn is_leader(&self) -> bool {
        self.record
            .as_ref()
            .is_some_and(|r| r.holder_identity == self.identity)
    }

    /// The observed holder, if any.
    pub(crate) fn holder(&self) -> Option<&str> {
        self.record
            .as_ref()
            .map(|r| r.holder_identity.as_str())
            .filter(|h| !h.is_empty())
    }

    /// Whether the observed lease is still valid at `now`, judged by observation time.
    pub(crate) fn lease_valid(&self, now: Instant) -> bool {
        match (&self.record, self.observed_at) {
            (Some(record), Some(at)) => {
                let seconds = u64::try_from(record.lease_duration_seconds).unwrap_or(0);
                at + Duration::from_secs(seconds) > now
            }
            _ => false,
        }
    }

    /// Decides, after `observe_read`, whether to wait or which record to write.
    ///
    /// A takeover (we were not the holder) increments `leader_transitions` and starts a new
    /// `acquire_time`; a renewal keeps both.
    pub(crate) fn decide(&self, now: Instant, wall: Timestamp, lease_seconds: i32) -> Decision {
        let old = self.record.clone().unwrap_or_default();
        if old.is_held() && self.lease_valid(now) && !self.is_leader() {
            return Decision::Wait {
                holder: old.holder_identity,
            };
        }
        let mut next = self.fresh_record(wall, lease_seconds);
        if self.is_leader() {
            next.acquire_time = old.acquire_time;
            next.leader_transitions = old.leader_transitions;
        } else {
            next.leader_transitions = old.leader_transitions.saturating_add(1);
        }
        Decision::Write(next)
    }

    /// The record a leader writes to renew without reading first (client-go's fast path).
    /// `None` unless we lead and our lease is valid.
    pub(crate) fn renewal(
        &self,
        now: Instant,
        wall: Timestamp,
        lease_seconds: i32,
    ) -> Option<LeaderElectionRecord> {
        let old = self
            .record
            .as_ref()
            .filter(|_| self.is_leader() && self.lease_valid(now))?;
        Some(LeaderElectionRecord {
            acquire_time: old.acquire_time,
            leader_transitions: old.leader_transitions,
            ..self.fresh_record(wall, lease_seconds)
        })
    }

    /// The record that gives the lock up: no holder and a 1 s lease, so others take over at once.
    /// `None` unless we lead.
    pub(crate) fn release(&self, wall: Timestamp) -> Option<LeaderElectionRecord> {
        let old = self.record.as_ref().filter(|_| self.is_leader())?;
        Some(LeaderElectionRecord {
            holder_identity: String::new(),
            lease_duration_seconds: 1,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            leader_transitions: old.leader_transitions,
        })
    }

    /// The record a brand-new lock starts with.
    pub(crate) fn fresh_record(&self, wall: Timestamp, lease_seconds: i32) -> LeaderElectionRecord {
        LeaderElectionRecord {
            holder_identity: self.identity.clone(),
            lease_duration_seconds: lease_seconds,
            acquire_time: Some(wall),
            renew_time: Some(wall),
            leader_transitions: 0,
        }
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        assert_eq!(
            self.record.is_some(),
            self.observed_at.is_some(),
            "record and observed_at go together"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEASE: i32 = 15;

    fn wall(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    fn held_by(holder: &str, renewed: i64, transitions: i32) -> LeaderElectionRecord {
        LeaderElectionRecord {
            holder_identity: holder.to_owned(),
            lease_duration_seconds: LEASE,
            acquire_time: Some(wall(0)),
            renew_time: Some(wall(renewed)),
            leader_transitions: transitions,
        }
    }

    #[tokio::test(start_paused = true)]
    async fn valid_lease_of_another_holder_means_wait() {
        let mut observer = Observer::new("b");
        observer.observe_read(held_by("a", 100, 2), Instant::now());
        observer.check_invariants();
        tokio::time::advance(Duration::from_secs(14)).await;
        let decision = observer.decide(Instant::now(), wall(0), LEASE);
        assert_eq!(
            decision,
            Decision::Wait {
                holder: "a".to_owned()
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn unchanged_record_expires_after_lease_duration_of_observation() {
        let mut observer = Observer::new("b");
        observer.observe_read(held_by("a", 100, 2), Instant::now());
        tokio::time::advance(Duration::from_secs(10)).await;
        // Same record read again: nobody renewed, so the clock keeps running from the first sight.
        observer.observe_read(held_by("a", 100, 2), Instant::now());
        tokio::time::advance(Duration::from_secs(5)).await;
        observer.check_invariants();
        assert!(!observer.lease_valid(Instant::now()));
        let Decision::Write(next) = observer.decide(Instant::now(), wall(500), LEASE) else {
            panic!("expired lease must be taken over");
        };
        assert_eq!(next.holder_identity, "b");
        assert_eq!(next.leader_transitions, 3, "takeover counts a transition");
        assert_eq!(next.acquire_time, Some(wall(500)));
    }

    #[tokio::test(start_paused = true)]
    async fn changed_record_restarts_the_lease_clock() {
        let mut observer = Observer::new("b");
        observer.observe_read(held_by("a", 100, 2), Instant::now());
        tokio::time::advance(Duration::from_secs(10)).await;
        observer.observe_read(held_by("a", 110, 2), Instant::now());
        tokio::time::advance(Duration::from_secs(10)).await;
        assert!(observer.lease_valid(Instant::now()));
        assert!(matches!(
            observer.decide(Instant::now(), wall(0), LEASE),
            Decision::Wait { .. }
        ));
    }

    #[tokio::test(start_paused = true)]
    async fn record_timestamps_are_ignored_for_expiry() {
        // The holder's clock is far in the past: its renewTime looks ancient, but we just saw it change.
        let mut observer = Observer::new("b");
        observer.observe_read(held_by("a", -1_000_000, 0), Instant::now());
        assert!(observer.lease_valid(Instant::now()));
    }

    #[tokio::test(start_paused = true)]
    async fn released_lock_is_taken_at_once() {
        let mut observer = Observer::new("b");
        observer.observe_read(held_by("", 100, 4), Instant::now());
        let Decision::Write(next) = observer.decide(Instant::now(), wall(200), LEASE) else {
            panic!("a free lock must be taken");
        };
        assert_eq!(next.holder_identity, "b");
        assert_eq!(next.leader_transitions, 5);
    }

    #[tokio::test(start_paused = true)]
    async fn leader_renewal_keeps_acquire_time_and_transitions() {
        let mut observer = Observer::new("a");
        observer.observe_read(held_by("a", 100, 7), Instant::now());
        assert!(observer.is_leader());
        let Decision::Write(next) = observer.decide(Instant::now(), wall(300), LEASE) else {
            panic!("the holder renews");
        };
        assert_eq!(next.acquire_time, Some(wall(0)));
        assert_eq!(next.renew_time, Some(wall(300)));
        assert_eq!(next.leader_transitions, 7);
        assert_eq!(
            observer.renewal(Instant::now(), wall(300), LEASE),
            Some(next)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn fast_path_renewal_needs_a_valid_own_lease() {
        let mut observer = Observer::new("a");
        assert_eq!(observer.renewal(Instant::now(), wall(0), LEASE), None);
        observer.observe_write(held_by("a", 0, 0), Instant::now());
        tokio::time::advance(Duration::from_secs(16)).await;
        assert_eq!(observer.renewal(Instant::now(), wall(0), LEASE), None);
    }

    #[tokio::test(start_paused = true)]
    async fn release_empties_holder_and_shortens_lease() {
        let mut observer = Observer::new("a");
        assert_eq!(observer.release(wall(9)), None, "only a leader releases");
        observer.observe_write(held_by("a", 0, 2), Instant::now());
        let released = observer.release(wall(9)).unwrap_or_default();
        assert_eq!(released.holder_identity, "");
        assert_eq!(released.lease_duration_seconds, 1);
        assert_eq!(released.leader_transitions, 2);
        assert_eq!(observer.holder(), Some("a"));
    }
}
