//! The assignment passes every replica runs while it holds its Lease, in place of timebertt's
//! central sharder: each replica moves only objects that are, or are becoming, its own. (With
//! `shardSelector` nothing is labelled: `server_side.rs` runs after step 1 instead.)
//!
//! Every `assign_period`:
//! 1. recompute the ring from the Leases ([`crate::ring_of`]);
//! 2. hand over: for each object labelled with this shard that the ring now gives to another
//!    shard, or that carries the drain label, wait for its reconcile to end, then remove the
//!    shard and drain labels (the acknowledgement). Only once the ring has this shard in it: a
//!    ring without it is the Lease informer not having shown its own Lease yet;
//! 3. assign: label each unlabelled object the ring gives to this shard;
//! 4. adopt: label with this shard each object the ring gives it whose labelled shard is out of
//!    the ring *and* whose Lease is expired or gone (read from the API when not cached), so a
//!    shard that is merely late in this replica's view is never robbed.
//!
//! Dependents (`dependents.rs`) move with their owners: handed over before them, taken (from a
//! consistent list) before them.
//!
//! Every write carries the object's `resourceVersion` (a merge patch with it is a conditional
//! update): a write based on a stale cache fails with 409 and is retried on the next pass.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_cache::Lister;
use kubegen_client::{
    ApiObject, Client, GetOptions, ListOptions, Patch, PatchOptions, ResourceClient,
};
use serde_json::{Value, json};

use crate::config::{ReplicaConfig, Selection};
use crate::membership::{is_live, ring_of};
use crate::replica::{Inner, object_key, resource_version};
use crate::ring::HashRing;
use crate::server_side::selection_of;

impl<K: ApiObject> Inner<K> {
    /// The passes, forever (the caller stops it when the Lease is lost).
    pub(crate) async fn assign_loop(self: Arc<Self>) {
        let mut tick = tokio::time::interval(self.config.assign_period);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tick.tick().await;
            self.refresh_ring();
            if self.filter.server_side() {
                self.server_side_pass().await;
            } else {
                self.hand_over().await;
                self.assign().await;
                self.adopt().await;
            }
        }
    }

    /// Recomputes the ring, and whether a live shard of it runs the other protocol.
    fn refresh_ring(&self) {
        let leases = self.leases.lister().list(&Selector::default());
        let now = Timestamp::now();
        let mine = self.filter.decided().unwrap_or(Selection::Labels);
        let strangers: Vec<&str> = leases
            .iter()
            .filter(|l| is_live(l, now) && selection_of(l) != mine.label_value())
            .filter_map(|l| l.metadata.name.as_deref())
            .collect();
        let mixed = !strangers.is_empty();
        if self.mixed.swap(mixed, Ordering::AcqRel) != mixed {
            if mixed {
                tracing::warn!(shard = %self.config.identity, selection = ?mine, ?strangers, "shards of the ring select their objects the other way: no reconcile starts until they are gone");
            } else {
                tracing::info!(shard = %self.config.identity, "every shard of the ring selects its objects the same way again");
            }
        }
        let ring = ring_of(leases.iter().map(AsRef::as_ref), now);
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
        // A ring without this shard is a view from before the Lease informer showed this
        // replica's own Lease (its first passes after it starts), not the ring moving every
        // object away: a replica holding its Lease is in the ring. Hand nothing over until it
        // sees itself there, or a restart would release all its objects and take them back.
        if !self
            .ring
            .borrow()
            .members()
            .contains(&self.config.identity.as_str())
        {
            return;
        }
        let cached = self.mine.lister().list(&Selector::default());
        let lister = self.mine.lister();
        self.forget_released(|key| lister.get_by_key(key).is_some());
        for object in &cached {
            let meta = object.meta();
            let draining = meta
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key(&self.config.ring.drain_label()));
            if !draining && self.owner_is_me(meta) {
                continue;
            }
            if !self.claim_for_handover(meta) {
                continue;
            }
            // Its dependents first: whoever sees the object released sees them released too.
            let released = if self.dependents.release(&self.config.key.of(meta)).await {
                self.relabel(meta, None).await
            } else {
                None
            };
            self.finish_handover(&object_key(meta), released);
        }
        let held: HashSet<String> = cached
            .iter()
            .map(|o| self.config.key.of(o.meta()))
            .collect();
        let ring = self.ring.borrow().clone();
        self.dependents.sweep(&ring, &held).await;
    }

    async fn assign(&self) {
        let ring = self.ring.borrow().clone();
        let held: HashSet<String> = self
            .mine
            .lister()
            .list(&Selector::default())
            .iter()
            .filter(|object| self.owner_is_me(object.meta()))
            .map(|object| self.config.key.of(object.meta()))
            .collect();
        self.dependents.claim_cached(&held).await;
        let gained: Vec<_> = self
            .unassigned
            .lister()
            .list(&Selector::default())
            .into_iter()
            .filter(|object| self.owner_is_me(object.meta()))
            .collect();
        self.take(&ring, gained.iter().map(AsRef::as_ref)).await;
    }

    async fn adopt(&self) {
        let ring = self.ring.borrow().clone();
        let members = ring.members();
        if !members.contains(&self.config.identity.as_str()) {
            return;
        }
        let selector = self
            .config
            .scoped(self.config.ring.orphaned_selector(&members));
        let objects = self.config.objects::<K>(self.client.clone());
        let orphans = match objects.list(&ListOptions::default().labels(selector)).await {
            Ok(list) => list.items,
            Err(error) => {
                tracing::warn!(shard = %self.config.identity, %error, "listing orphaned objects failed");
                return;
            }
        };
        let mut gained = Vec::new();
        for object in orphans {
            let holder = holder(&self.config, object.meta());
            if self.owner_is_me(object.meta()) && self.shard_is_gone(&holder).await {
                gained.push(object);
            }
        }
        self.take(&ring, gained.iter()).await;
    }

    /// Labels `gained` objects with this shard, each after its dependents.
    async fn take<'a>(&self, ring: &HashRing, gained: impl Iterator<Item = &'a K>) {
        let gained: Vec<&K> = gained.collect();
        if gained.is_empty() {
            return;
        }
        let keys: HashSet<String> = gained
            .iter()
            .map(|o| self.config.key.of(o.meta()))
            .collect();
        let Some(failed) = self.dependents.claim_listed(&keys, &ring.members()).await else {
            return;
        };
        let me = self.config.identity.clone();
        for object in gained {
            if !failed.contains(&self.config.key.of(object.meta())) {
                self.relabel(object.meta(), Some(&me)).await;
            }
        }
    }

    /// Whether `shard`'s Lease is expired or absent (see [`shard_is_gone`]).
    async fn shard_is_gone(&self, shard: &str) -> bool {
        shard_is_gone(&self.client, &self.config, &self.leases.lister(), shard).await
    }

    /// [`relabel`] for an object of the sharded kind.
    async fn relabel(&self, meta: &ObjectMeta, shard: Option<&str>) -> Option<u64> {
        relabel::<K>(&self.client, &self.config, meta, shard).await
    }
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

/// The shard an object is labelled with ("" when none).
pub(crate) fn holder(config: &ReplicaConfig, meta: &ObjectMeta) -> String {
    let labels = meta.labels.as_ref();
    let shard = labels.and_then(|l| l.get(&config.ring.shard_label()));
    shard.cloned().unwrap_or_default()
}

/// Sets the shard label of the `T` with `meta` to `shard` (None: removes it) and removes the
/// drain label, if the object is still at the version in `meta`. The new resourceVersion, None
/// when not written.
pub(crate) async fn relabel<T: ApiObject>(
    client: &Client,
    config: &ReplicaConfig,
    meta: &ObjectMeta,
    shard: Option<&str>,
) -> Option<u64> {
    let name = meta.name.as_deref()?;
    let objects = match meta.namespace.as_deref() {
        Some(namespace) => ResourceClient::<T>::namespaced(client.clone(), namespace),
        None => ResourceClient::<T>::cluster(client.clone()),
    };
    let patch = json!({"metadata": {
        "resourceVersion": meta.resource_version,
        "labels": {
            config.ring.shard_label(): shard.map_or(Value::Null, Value::from),
            config.ring.drain_label(): Value::Null,
        },
    }});
    match objects
        .patch(name, &Patch::Merge(patch), &PatchOptions::default())
        .await
    {
        Ok(written) => Some(resource_version(written.meta())),
        Err(error) => {
            tracing::debug!(shard = %config.identity, object = %object_key(meta), %error, "relabel skipped");
            None
        }
    }
}
