//! One round trip to the lock: acquire, renew, or release. Mirrors `tryAcquireOrRenew` and
//! `release` in client-go `tools/leaderelection/leaderelection.go`; the decisions themselves live in
//! [`crate::observer`], this file only sequences the API calls around them.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{Timestamp, TimestampRound, Unit};
use tokio::time::Instant;

use crate::observer::Decision;
use crate::record::LeaderElectionRecord;
use crate::state::Shared;

/// Result of one acquire-or-renew attempt.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Attempt {
    /// We hold the lock now (freshly acquired or renewed).
    Holding,
    /// Another candidate holds a lease that has not expired by our observation.
    HeldBy(String),
    /// An API call failed (already logged); try again later.
    Failed,
}

/// Wall-clock time as the Lease stores it (`MicroTime`: microsecond precision), so a record we
/// write compares equal to the same record read back.
fn wall_now() -> Timestamp {
    let now = Timestamp::now();
    now.round(TimestampRound::new().smallest(Unit::Microsecond))
        .unwrap_or(now)
}

impl Shared {
    /// Acquires the lock if it is free or expired, or renews it if we hold it.
    ///
    /// A leader first tries to update from the Lease it last wrote, without reading (one request
    /// per renewal in the common case); on any failure it falls back to read-decide-write.
    pub(crate) async fn try_acquire_or_renew(&self) -> Attempt {
        let started = Instant::now();
        let wall = wall_now();
        let seconds = self.config.lease_duration_seconds();
        let fast_path = {
            let state = self.state.lock();
            state
                .observer
                .renewal(started, wall, seconds)
                .zip(state.lease.clone())
        };
        if let Some((record, lease)) = fast_path {
            match self.lock.update(lease, &record).await {
                Ok(written) => return self.wrote(written, started),
                Err(error) => {
                    tracing::debug!(lock = %self.lock.describe(), %error, "optimistic renewal failed, re-reading the lease")
                }
            }
        }
        let current = match self.lock.get().await {
            Ok(lease) => lease,
            Err(error) if error.is_not_found() => return self.create(wall, seconds, started).await,
            Err(error) => {
                tracing::warn!(lock = %self.lock.describe(), %error, "reading the lease failed");
                return Attempt::Failed;
            }
        };
        let decision = {
            let mut state = self.state.lock();
            let now = Instant::now();
            state
                .observer
                .observe_read(LeaderElectionRecord::from_spec(current.spec.as_ref()), now);
            state.lease = Some(current.clone());
            state.observer.decide(now, wall, seconds)
        };
        let record = match decision {
            Decision::Wait { holder } => return Attempt::HeldBy(holder),
            Decision::Write(record) => record,
        };
        match self.lock.update(current, &record).await {
            Ok(written) => self.wrote(written, started),
            Err(error) => {
                // A conflict is the normal outcome of a race with another candidate: not worth a warning.
                if error.is_conflict() {
                    tracing::debug!(lock = %self.lock.describe(), %error, "lost the race to write the lease");
                } else {
                    tracing::warn!(lock = %self.lock.describe(), %error, "writing the lease failed");
                }
                Attempt::Failed
            }
        }
    }

    /// Creates the missing Lease with us as holder.
    async fn create(&self, wall: Timestamp, seconds: i32, started: Instant) -> Attempt {
        let record = self.state.lock().observer.fresh_record(wall, seconds);
        match self.lock.create(&record).await {
            Ok(created) => self.wrote(created, started),
            Err(error) => {
                tracing::debug!(lock = %self.lock.describe(), %error, "creating the lease failed");
                Attempt::Failed
            }
        }
    }

    /// Remembers a Lease we wrote. Its observation time is when the attempt *started*: the earliest
    /// moment a rival could have seen it, which keeps our own deadline on the safe side.
    fn wrote(&self, written: Lease, started: Instant) -> Attempt {
        let mut state = self.state.lock();
        state.observer.observe_write(
            LeaderElectionRecord::from_spec(written.spec.as_ref()),
            started,
        );
        state.lease = Some(written);
        if state.observer.is_leader() {
            state.last_renewal = Some(started);
            Attempt::Holding
        } else {
            // The server echoed a different holder than we wrote: impossible unless something
            // rewrote the object in flight. Treat it as not holding.
            Attempt::Failed
        }
    }

    /// Gives the lock up if we hold it: empty holder, 1 s lease, so a successor need not wait for
    /// expiry. Returns whether the release was written.
    ///
    /// The update starts from the Lease we last wrote; on a 409 Conflict it reads the Lease fresh
    /// and, if we still hold it, releases that (client-go's `release` always reads first). The
    /// conflict is what a shutdown during a renewal leaves behind: the server applied the renewal
    /// but its answer was dropped with the cancelled request, so our copy is one version behind.
    pub(crate) async fn release(&self) -> bool {
        let Some((record, lease)) = self.release_from_last_write() else {
            return false;
        };
        let written = match self.lock.update(lease, &record).await {
            Err(error) if error.is_conflict() => {
                tracing::debug!(lock = %self.lock.describe(), %error, "release conflicted, re-reading the lease");
                match self.lock.get().await {
                    Ok(current) => {
                        self.state.lock().observer.observe_read(
                            LeaderElectionRecord::from_spec(current.spec.as_ref()),
                            Instant::now(),
                        );
                        self.state.lock().lease = Some(current);
                        let Some((record, lease)) = self.release_from_last_write() else {
                            return false; // someone else holds it now: nothing of ours to give up
                        };
                        self.lock.update(lease, &record).await
                    }
                    Err(error) => Err(error),
                }
            }
            other => other,
        };
        match written {
            Ok(written) => {
                let mut state = self.state.lock();
                state.observer.observe_write(
                    LeaderElectionRecord::from_spec(written.spec.as_ref()),
                    Instant::now(),
                );
                state.lease = Some(written);
                tracing::info!(lock = %self.lock.describe(), "released the lease");
                true
            }
            Err(error) => {
                tracing::warn!(lock = %self.lock.describe(), %error, "releasing the lease failed");
                false
            }
        }
    }

    /// The releasing record and the Lease to write it over, if we lead by the last observation.
    fn release_from_last_write(&self) -> Option<(LeaderElectionRecord, Lease)> {
        let state = self.state.lock();
        state.observer.release(wall_now()).zip(state.lease.clone())
    }
}
