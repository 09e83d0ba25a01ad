//! Handover without labels, for replicas that select their objects with `shardSelector`
//! ([`crate::Selection::ShardSelector`]): nothing is written on the objects, so the shard Leases
//! carry the acknowledgements.
//!
//! # The protocol
//! Every `assign_period`, while holding its Lease, a replica:
//! 1. recomputes the ring `R` from the Leases and points its informer at its arcs of `R`
//!    (`list_watch.rs` relists);
//! 2. once no reconcile of an object `R` gives elsewhere runs here any more (none starts: the
//!    gate checks `R`), writes `R`'s members on its own Lease ([`ACK_ANNOTATION`]): "I work on
//!    nothing outside my arcs of `R`";
//! 3. once its Lease cache shows that write, takes a snapshot of the other live shards'
//!    acknowledged rings from the same cache.
//!
//! A reconcile of an object whose field hashes to `h` starts only when `R` and the replica's
//! own (written and seen) acknowledgement both give `h` to it, and in the snapshot no other live
//! shard's acknowledged ring gives `h` to that shard. A shard without an acknowledgement works on
//! nothing; a shard whose Lease expired or was released has stopped.
//!
//! # Why no object is reconciled by two replicas at once
//! A replica only works on `h` while its written acknowledgement gives `h` to it, and it only
//! writes one that does not after its work on `h` ended. Say `r` and `s` both work on `h`, and
//! their acknowledgements giving `h` to them were written at `t_r` and `t_s`, `t_r < t_s`. `s`
//! read `r`'s acknowledgement from a cache that had seen `s`'s own write, so at a version after
//! `t_s`, when `r`'s still gave `h` to `r`: `s` would have waited. The Lease watch delivers the
//! writes in order, so "my cache shows my write" means "everything older is in it".
//!
//! The ring hashes `metadata.uid` (or the namespace), the field KEP-5866 hashes, not
//! `namespace/name`: an owner and its dependents land on shards of their own.

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_client::{ApiObject, Patch, PatchOptions, ResourceClient};
use serde_json::json;

use crate::config::Selection;
use crate::labels::{ACK_ANNOTATION, SELECTION_LABEL};
use crate::membership::is_live;
use crate::object::resource_version;
use crate::replica::{Inner, Refusal};
use crate::ring::HashRing;

/// A ring's members as the annotation writes them.
fn ack_value(ring: &HashRing) -> String {
    ring.members().join(",")
}

/// The ring an annotation names.
fn ring_from(value: &str) -> HashRing {
    HashRing::new(value.split(',').filter(|m| !m.is_empty()))
}

/// The acknowledgement on `lease`, if any.
fn acknowledged(lease: &Lease) -> Option<&str> {
    let annotations = lease.metadata.annotations.as_ref()?;
    annotations.get(ACK_ANNOTATION).map(String::as_str)
}

/// The protocol a Lease's shard runs (no label: the label protocol).
pub(crate) fn selection_of(lease: &Lease) -> &str {
    let labels = lease.metadata.labels.as_ref();
    let label = labels.and_then(|l| l.get(SELECTION_LABEL));
    label.map_or(Selection::Labels.label_value(), String::as_str)
}

/// The other live shards' acknowledged rings among `leases`.
fn others(leases: &[Arc<Lease>], me: &str, now: Timestamp) -> Vec<(String, HashRing)> {
    leases
        .iter()
        .filter(|l| is_live(l, now))
        .filter_map(|l| {
            let name = l.metadata.name.as_deref()?;
            (name != me).then(|| (name.to_owned(), ring_from(acknowledged(l).unwrap_or(""))))
        })
        .collect()
}

impl<K: ApiObject> Inner<K> {
    /// One server-side pass (the ring was just recomputed); see the module docs.
    pub(crate) async fn server_side_pass(&self) {
        let me = self.config.identity.as_str();
        let ring = self.ring.borrow().clone();
        self.filter
            .set_shard(ring.shard_selector(me, self.filter.field()));
        let behind = self.acks.lock().latest() != Some(&ring);
        if behind && self.none_leaving(&ring) {
            self.acknowledge(&ring).await;
        }
        self.see_acknowledgements();
    }

    /// Whether no reconcile of an object `ring` gives to another shard runs here.
    fn none_leaving(&self, ring: &HashRing) -> bool {
        let me = Some(self.config.identity.as_str());
        self.busy_hashes()
            .into_iter()
            .all(|h| ring.owner_of_hash(h) == me)
    }

    /// Writes `ring` as this shard's acknowledgement on its Lease.
    async fn acknowledge(&self, ring: &HashRing) {
        let leases = ResourceClient::<Lease>::namespaced(
            self.client.clone(),
            &self.config.ring.lease_namespace,
        );
        let patch = json!({"metadata": {"annotations": {ACK_ANNOTATION: ack_value(ring)}}});
        match leases
            .patch(
                &self.config.identity,
                &Patch::Merge(patch),
                &PatchOptions::default(),
            )
            .await
        {
            Ok(written) => {
                tracing::info!(shard = %self.config.identity, members = ?ring.members(), "acknowledged the ring");
                self.acks.lock().pending =
                    Some((ring.clone(), resource_version(&written.metadata)));
            }
            Err(error) => {
                tracing::warn!(shard = %self.config.identity, %error, "writing the ring acknowledgement failed");
            }
        }
    }

    /// Takes the pending acknowledgement as seen once the Lease cache shows it, then (re)reads
    /// the others' from the same cache.
    fn see_acknowledgements(&self) {
        let leases = self.leases.lister().list(&Selector::default());
        let me = self.config.identity.as_str();
        let mut acks = self.acks.lock();
        if let Some((ring, rv)) = &acks.pending {
            let own = leases
                .iter()
                .find(|l| l.metadata.name.as_deref() == Some(me));
            let seen = own.is_some_and(|l| {
                resource_version(&l.metadata) >= *rv && acknowledged(l) == Some(&ack_value(ring))
            });
            if seen {
                acks.mine = acks.pending.take().map(|(ring, _)| ring);
            }
        }
        if acks.mine.is_some() {
            acks.others = others(&leases, me, Timestamp::now());
        }
    }

    /// The server-side part of [`crate::Replica::begin`] for an object whose field hashes to
    /// `h`: not mine when the ring gives it elsewhere, busy until the acknowledgements allow.
    pub(crate) fn server_side_gate(&self, h: u64) -> Result<(), Refusal> {
        let me = self.config.identity.as_str();
        if self.ring.borrow().owner_of_hash(h) != Some(me) {
            return Err(Refusal::NotMine);
        }
        if self.acks.lock().allows(me, h) {
            Ok(())
        } else {
            Err(Refusal::Busy)
        }
    }
}

#[cfg(test)]
#[path = "server_side_tests.rs"]
mod tests;
