//! The election state as stored in a Lease, in the shape the elector reasons about. Mirrors
//! `LeaderElectionRecord` and `LeaseSpecToLeaderElectionRecord` in client-go
//! `tools/leaderelection/resourcelock/`.
//!
//! Why a separate type: a Lease carries fields the election does not own (`strategy`,
//! `preferredHolder`) and every field is optional on the wire. The record gives the elector exact,
//! comparable values; [`LeaderElectionRecord::apply_to`] writes them back without touching the rest.

use k8s_openapi::api::coordination::v1::LeaseSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use k8s_openapi::jiff::Timestamp;

/// Who holds the lock, since when, and for how long others must wait.
///
/// The timestamps are informational for humans (`kubectl get lease -o yaml`): expiry is never judged
/// from them, because the writer's clock may be skewed against ours. See [`crate::LeaderElector`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LeaderElectionRecord {
    /// Identity of the holder; empty when nobody holds the lock (e.g. after a release).
    pub holder_identity: String,
    /// How long others wait after seeing the record change before taking over.
    pub lease_duration_seconds: i32,
    /// When the current holder acquired the lock (its wall clock).
    pub acquire_time: Option<Timestamp>,
    /// When the current holder last renewed (its wall clock).
    pub renew_time: Option<Timestamp>,
    /// How many times the lock changed hands.
    pub leader_transitions: i32,
}

impl LeaderElectionRecord {
    /// Reads the record out of a Lease's spec; absent fields read as empty / zero.
    pub fn from_spec(spec: Option<&LeaseSpec>) -> Self {
        let Some(spec) = spec else {
            return LeaderElectionRecord::default();
        };
        LeaderElectionRecord {
            holder_identity: spec.holder_identity.clone().unwrap_or_default(),
            lease_duration_seconds: spec.lease_duration_seconds.unwrap_or_default(),
            acquire_time: spec.acquire_time.as_ref().map(|t| t.0),
            renew_time: spec.renew_time.as_ref().map(|t| t.0),
            leader_transitions: spec.lease_transitions.unwrap_or_default(),
        }
    }

    /// Writes the record into `spec`, keeping the fields the election does not own.
    pub fn apply_to(&self, spec: &mut LeaseSpec) {
        spec.holder_identity = Some(self.holder_identity.clone());
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.acquire_time = self.acquire_time.map(MicroTime);
        spec.renew_time = self.renew_time.map(MicroTime);
        spec.lease_transitions = Some(self.leader_transitions);
    }

    /// Whether somebody holds the lock.
    pub fn is_held(&self) -> bool {
        !self.holder_identity.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(seconds: i64) -> Timestamp {
        Timestamp::from_second(seconds).unwrap_or(Timestamp::UNIX_EPOCH)
    }

    #[test]
    fn missing_spec_reads_as_free_lock() {
        let record = LeaderElectionRecord::from_spec(None);
        assert_eq!(record, LeaderElectionRecord::default());
        assert!(!record.is_held());
    }

    #[test]
    fn record_round_trips_through_spec() {
        let record = LeaderElectionRecord {
            holder_identity: "pod-a".to_owned(),
            lease_duration_seconds: 15,
            acquire_time: Some(ts(1_000)),
            renew_time: Some(ts(1_010)),
            leader_transitions: 3,
        };
        let mut spec = LeaseSpec::default();
        record.apply_to(&mut spec);
        assert_eq!(LeaderElectionRecord::from_spec(Some(&spec)), record);
    }

    #[test]
    fn apply_keeps_fields_the_election_does_not_own() {
        let mut spec = LeaseSpec {
            strategy: Some("OldestEmulationVersion".to_owned()),
            preferred_holder: Some("pod-b".to_owned()),
            ..LeaseSpec::default()
        };
        LeaderElectionRecord::default().apply_to(&mut spec);
        assert_eq!(spec.strategy.as_deref(), Some("OldestEmulationVersion"));
        assert_eq!(spec.preferred_holder.as_deref(), Some("pod-b"));
        assert_eq!(spec.holder_identity.as_deref(), Some(""));
    }
}
