//! Who is in the ring: the shards whose Lease is held and fresh.
//!
//! A shard is live while its Lease (labelled with the ring, named after the shard) is held by the
//! shard itself and `renewTime + leaseDurationSeconds` lies ahead. Every replica judges the same
//! Leases by the same rule, so all of them compute the same ring up to clock skew and the delay
//! of their Lease watches; the handover protocol (see [`crate::Replica`]) is what keeps those
//! short disagreements from letting two replicas work on one object.
//!
//! # Differences from leader election
//! `kubegen-leaderelection` never judges expiry by the Lease's timestamps (only by how long it
//! has watched a record not change), because one lock needs one decider. A ring has to be
//! computed identically by every replica from the Leases alone, so membership reads the
//! timestamps, as timebertt's sharder does; keep the replicas' clocks synchronised (NTP), and keep
//! skew well below the renew deadline's margin to the lease duration.

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use kubegen_cache::Lister;
use kubegen_client::{Client, GetOptions, ResourceClient};

use crate::config::ReplicaConfig;
use crate::ring::HashRing;

/// Whether `lease` makes its shard a live member at wall-clock time `now`.
pub fn is_live(lease: &Lease, now: Timestamp) -> bool {
    let Some(name) = lease.metadata.name.as_deref() else {
        return false;
    };
    let Some(spec) = &lease.spec else {
        return false;
    };
    let held_by_itself = spec.holder_identity.as_deref() == Some(name);
    let (Some(renewed), Some(seconds)) = (&spec.renew_time, spec.lease_duration_seconds) else {
        return false;
    };
    let expires = renewed
        .0
        .checked_add(SignedDuration::from_secs(i64::from(seconds)))
        .unwrap_or(renewed.0);
    held_by_itself && expires > now
}

/// The ring over the live shards among `leases`.
pub fn ring_of<'a>(leases: impl IntoIterator<Item = &'a Lease>, now: Timestamp) -> HashRing {
    HashRing::new(
        leases
            .into_iter()
            .filter(|l| is_live(l, now))
            .filter_map(|l| l.metadata.name.as_deref()),
    )
}

/// Whether `shard`'s Lease is expired or absent, asking the API when `leases` lacks it.
pub(crate) async fn shard_is_gone(
    client: &Client,
    config: &ReplicaConfig,
    leases: &Lister<Lease>,
    shard: &str,
) -> bool {
    let namespace = config.ring.lease_namespace.as_str();
    let now = Timestamp::now();
    if let Some(lease) = leases.get(Some(namespace), shard) {
        return !is_live(&lease, now);
    }
    let leases = ResourceClient::<Lease>::namespaced(client.clone(), namespace);
    match leases.get(shard, &GetOptions::default()).await {
        Ok(lease) => !is_live(&lease, now),
        Err(error) => error.is_not_found(),
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::coordination::v1::LeaseSpec;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta};

    use super::*;

    fn lease(name: &str, holder: &str, renewed: i64) -> Lease {
        Lease {
            metadata: ObjectMeta {
                name: Some(name.into()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(holder.into()),
                lease_duration_seconds: Some(10),
                renew_time: Some(MicroTime(Timestamp::from_second(renewed).unwrap())),
                ..LeaseSpec::default()
            }),
        }
    }

    #[test]
    fn live_means_held_by_its_shard_and_not_expired() {
        let now = Timestamp::from_second(1_000).unwrap();
        assert!(is_live(&lease("a", "a", 995), now));
        assert!(!is_live(&lease("a", "a", 990), now), "expired exactly now");
        assert!(!is_live(&lease("a", "", 999), now), "released");
        assert!(!is_live(&lease("a", "b", 999), now), "held by another");
        let leases = [
            lease("a", "a", 999),
            lease("b", "b", 900),
            lease("c", "c", 998),
        ];
        assert_eq!(ring_of(&leases, now), HashRing::new(["a", "c"]));
    }
}
