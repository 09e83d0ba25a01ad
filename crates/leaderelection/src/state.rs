//! What one candidate knows, shared by the election loop (`elector.rs`) and the lock round trips
//! (`attempt.rs`). Mirrors the fields of client-go's `LeaderElector` (`observedRecord`,
//! `observedRawRecord`, `observedTime`) in `tools/leaderelection/leaderelection.go`.
//!
//! Its own module so that the loop and the round trips both depend on it and not on each other.

use k8s_openapi::api::coordination::v1::Lease;
use parking_lot::Mutex;
use tokio::time::Instant;

use crate::config::LeaderElectionConfig;
use crate::lease_lock::LeaseLock;
use crate::observer::Observer;
#[cfg(test)]
use crate::record::LeaderElectionRecord;

/// State shared by the `run` loop and the query methods.
pub(crate) struct Shared {
    /// Validated configuration.
    pub(crate) config: LeaderElectionConfig,
    /// The Lease we compete for.
    pub(crate) lock: LeaseLock,
    /// Mutable election state; never held across an `.await`.
    pub(crate) state: Mutex<State>,
}

/// What the elector knows and is doing.
pub(crate) struct State {
    /// Last record seen and when it changed.
    pub(crate) observer: Observer,
    /// The Lease as last read or written. Invariant: its spec is the observer's record (its
    /// resourceVersion is the precondition of our next write).
    pub(crate) lease: Option<Lease>,
    /// Local start time of the last successful acquire or renew.
    pub(crate) last_renewal: Option<Instant>,
    /// Whether a leadership term is active (between `started_leading` and `stopped_leading`).
    pub(crate) leading: bool,
    /// Whether a `run` is active. Invariant: `leading` implies `running`.
    pub(crate) running: bool,
    /// The holder last passed to `new_leader`, so each change is reported once.
    pub(crate) reported_leader: Option<String>,
}

impl State {
    /// A candidate named `identity` that has seen no Lease yet.
    pub(crate) fn new(identity: &str) -> State {
        State {
            observer: Observer::new(identity),
            lease: None,
            last_renewal: None,
            leading: false,
            running: false,
            reported_leader: None,
        }
    }

    #[cfg(test)]
    pub(crate) fn check_invariants(&self) {
        self.observer.check_invariants();
        assert!(!self.leading || self.running, "leading implies running");
        if let Some(lease) = &self.lease {
            let record = LeaderElectionRecord::from_spec(lease.spec.as_ref());
            assert_eq!(
                self.observer.holder(),
                Some(record.holder_identity.as_str()).filter(|h| !h.is_empty())
            );
        }
    }
}
