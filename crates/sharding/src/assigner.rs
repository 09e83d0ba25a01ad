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
//!    shard that is merely late in this replica's view is never robbed. Finding them is a list
//!    of every object in scope (the server filters by label), so it runs only when it can find
//!    something: after the ring changed (a shard left), after a pass that left some of this
//!    shard's orphans behind (a conflict, a Lease not yet expired), and once per lease duration
//!    (a departed shard's last write that landed late).
//!
//! Dependents (`dependents.rs`) move with their owners: handed over before them, taken (from a
//! consistent list) before them.
//!
//! Every write carries the object's `resourceVersion` (a merge patch with it is a conditional
//! update): a write based on a stale cache fails with 409 and is retried on the next pass.

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube_core::Selector;
use kubegen_client::{ApiObject, ListOptions};
use tokio::time::Instant;

use crate::config::Selection;
use crate::membership::{is_live, ring_of, shard_is_gone};
use crate::object::{holder, object_key, relabel};
use crate::replica::Inner;
use crate::ring::HashRing;
use crate::server_side::selection_of;

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
            if self.filter.server_side() {
                self.server_side_pass().await;
                continue;
            }
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

    /// Whether it left nothing behind: every orphan the ring gives this shard was taken (or
    /// this shard is not in the ring, so the ring changes before it owns anything).
    async fn adopt(&self) -> bool {
        let ring = self.ring.borrow().clone();
        let members = ring.members();
        if !members.contains(&self.config.identity.as_str()) {
            return true;
        }
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
        let mut gained = Vec::new();
        let mut complete = true;
        for object in orphans {
            if !self.owner_is_me(object.meta()) {
                continue;
            }
            if self
                .shard_is_gone(&holder(&self.config, object.meta()))
                .await
            {
                gained.push(object);
            } else {
                complete = false;
            }
        }
        self.take(&ring, gained.iter()).await && complete
    }

    /// Labels `gained` objects with this shard, each after its dependents; whether every one
    /// was labelled.
    async fn take<'a>(&self, ring: &HashRing, gained: impl Iterator<Item = &'a K>) -> bool {
        let gained: Vec<&K> = gained.collect();
        if gained.is_empty() {
            return true;
        }
        let keys: HashSet<String> = gained
            .iter()
            .map(|o| self.config.key.of(o.meta()))
            .collect();
        let Some(failed) = self.dependents.claim_listed(&keys, &ring.members()).await else {
            return false;
        };
        let me = self.config.identity.clone();
        let mut all = failed.is_empty();
        for object in gained {
            if !failed.contains(&self.config.key.of(object.meta())) {
                all &= self.relabel(object.meta(), Some(&me)).await.is_some();
            }
        }
        all
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
