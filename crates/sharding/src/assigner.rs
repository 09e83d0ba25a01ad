//! The assignment passes every replica runs while it holds its Lease, in place of timebertt's
//! central sharder: each replica moves only objects that are, or are becoming, its own.
//!
//! Every `assign_period`:
//! 1. recompute the ring from the Leases ([`crate::ring_of`]);
//! 2. hand over: for each object labelled with this shard that the ring now gives to another
//!    shard, or that carries the drain label, wait for its reconcile to end, then remove the
//!    shard and drain labels (the acknowledgement);
//! 3. assign: label each unlabelled object the ring gives to this shard;
//! 4. adopt: label with this shard each object the ring gives it whose labelled shard is out of
//!    the ring *and* whose Lease is expired or gone (read from the API when not cached), so a
//!    shard that is merely late in this replica's view is never robbed. Finding them is a list
//!    of every object in scope (the server filters by label), so it runs only when it can find
//!    something: after the ring changed (a shard left), after a pass that left some of this
//!    shard's orphans behind (a conflict, a Lease not yet expired), and once per lease duration
//!    (a departed shard's last write that landed late).
//!
//! Every write carries the object's `resourceVersion` (a merge patch with it is a conditional
//! update): a write based on a stale cache fails with 409 and is retried on the next pass.

use std::sync::Arc;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_client::{ApiObject, GetOptions, ListOptions, Patch, PatchOptions, ResourceClient};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::membership::{is_live, ring_of};
use crate::replica::{Inner, object_key, resource_version};
use crate::ring::HashRing;

impl<K: ApiObject> Inner<K> {
    /// The passes, forever (the caller stops it when the Lease is lost).
    pub(crate) async fn assign_loop(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.config.assign_period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        // The ring of the last adoption pass that left nothing of this shard's behind, and when.
        let mut adopted: Option<(HashRing, Instant)> = None;
        loop {
            tick.tick().await;
            self.refresh_ring();
            self.hand_over().await;
            self.assign().await;
            let ring = self.ring.borrow().clone();
            let due = adopted.as_ref().is_none_or(|(done, at)| {
                *done != ring || at.elapsed() >= self.config.lease_duration
            });
            if due {
                adopted = self.adopt().await.then(|| (ring, Instant::now()));
            }
        }
    }

    fn refresh_ring(&self) {
        let leases = self.leases.lister().list(&Selector::default());
        let ring = ring_of(leases.iter().map(AsRef::as_ref), Timestamp::now());
        self.ring.send_if_modified(|current| {
            let changed = *current != ring;
            if changed {
                tracing::info!(shard = %self.config.identity, members = ?ring.members(), "ring changed");
                *current = ring;
            }
            changed
        });
    }

    fn owner_is_me(&self, meta: &ObjectMeta) -> bool {
        self.ring.borrow().owner(&self.config.key.of(meta)) == Some(self.config.identity.as_str())
    }

    async fn hand_over(&self) {
        let cached = self.mine.lister().list(&Selector::default());
        let lister = self.mine.lister();
        self.forget_released(|key| lister.get_by_key(key).is_some());
        for object in cached {
            let meta = object.meta();
            let draining = meta
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(&self.config.ring.drain_label()));
            if !draining && self.owner_is_me(meta) {
                continue;
            }
            let key = object_key(meta);
            if !self.claim_for_handover(&key, resource_version(meta)) {
                continue;
            }
            let released = self.relabel(meta, None).await;
            self.finish_handover(&key, released);
        }
    }

    async fn assign(&self) {
        for object in self.unassigned.lister().list(&Selector::default()) {
            if self.owner_is_me(object.meta()) {
                let me = self.config.identity.clone();
                self.relabel(object.meta(), Some(&me)).await;
            }
        }
    }

    /// Whether it left nothing behind: every orphan the ring gives this shard was taken (or
    /// this shard is not in the ring, so the ring changes before it owns anything).
    async fn adopt(&self) -> bool {
        let members: Vec<String> = {
            let ring = self.ring.borrow();
            if !ring.members().contains(&self.config.identity.as_str()) {
                return true;
            }
            ring.members().into_iter().map(str::to_owned).collect()
        };
        let members: Vec<&str> = members.iter().map(String::as_str).collect();
        let selector = self
            .config
            .scoped(self.config.ring.orphaned_selector(&members));
        let objects = self.config.objects::<K>(self.client.clone());
        let orphans = match objects.list(&ListOptions::default().labels(selector)).await {
            Ok(list) => list.items,
            Err(error) => {
                tracing::warn!(shard = %self.config.identity, %error, "listing orphaned objects failed");
                return false;
            }
        };
        let mut complete = true;
        for object in orphans {
            let meta = object.meta();
            let holder = meta
                .labels
                .as_ref()
                .and_then(|l| l.get(&self.config.ring.shard_label()))
                .cloned()
                .unwrap_or_default();
            if !self.owner_is_me(meta) {
                continue;
            }
            let me = self.config.identity.clone();
            let taken =
                self.shard_is_gone(&holder).await && self.relabel(meta, Some(&me)).await.is_some();
            complete &= taken;
        }
        complete
    }

    /// Whether `shard`'s Lease is expired or absent, asking the API when it is not cached.
    async fn shard_is_gone(&self, shard: &str) -> bool {
        let namespace = self.config.ring.lease_namespace.as_str();
        let now = Timestamp::now();
        if let Some(lease) = self.leases.lister().get(Some(namespace), shard) {
            return !is_live(&lease, now);
        }
        let leases = ResourceClient::<Lease>::namespaced(self.client.clone(), namespace);
        match leases.get(shard, &GetOptions::default()).await {
            Ok(lease) => !is_live(&lease, now),
            Err(error) => error.is_not_found(),
        }
    }

    /// Sets the shard label to `shard` (None: removes it) and removes the drain label, if the
    /// object is still at the version in `meta`. The new resourceVersion, None when not written.
    async fn relabel(&self, meta: &ObjectMeta, shard: Option<&str>) -> Option<u64> {
        let name = meta.name.as_deref()?;
        let objects = match meta.namespace.as_deref() {
            Some(namespace) => ResourceClient::<K>::namespaced(self.client.clone(), namespace),
            None => ResourceClient::<K>::cluster(self.client.clone()),
        };
        let patch = json!({"metadata": {
            "resourceVersion": meta.resource_version,
            "labels": {
                self.config.ring.shard_label(): shard.map_or(Value::Null, Value::from),
                self.config.ring.drain_label(): Value::Null,
            },
        }});
        match objects
            .patch(name, &Patch::Merge(patch), &PatchOptions::default())
            .await
        {
            Ok(written) => Some(resource_version(written.meta())),
            Err(error) => {
                tracing::debug!(shard = %self.config.identity, object = %object_key(meta), %error, "relabel skipped");
                None
            }
        }
    }
}
