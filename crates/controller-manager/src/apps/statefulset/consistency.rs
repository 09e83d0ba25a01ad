//! Waiting for the informers to show the controller's own writes before it acts again.
//!
//! Mirrors what `pkg/controller/util/consistency` does for the StatefulSet controller in v1.36
//! (feature `StaleControllerConsistencyStatefulSet`, beta and on by default): after creating or
//! updating a Pod or a claim, a set is not synced until the informer has delivered that write.
//!
//! # Why
//! The StatefulSet's own status write can wake the controller before the Pod informer has seen
//! the Pod it just created; a sync then would find `db-0` missing and try to create it again.
//!
//! # Differences from v1.36
//! v1.36 compares the written resourceVersion with each informer's last synced resourceVersion.
//! kubegen's informers do not expose that, so each written object is tracked until an event for
//! it at or after the written resourceVersion (or its deletion) arrives: the same wait for the
//! controller's own writes, per object instead of per informer.

use std::{collections::HashMap, sync::Arc};

use k8s_openapi::api::apps::v1::StatefulSet;
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube_core::Resource;
use parking_lot::Mutex;

use crate::workload::meta::key_of;

/// What kind of object a write was to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Pod,
    Claim,
}

/// The resourceVersion of each write not yet seen, by object kind and key.
type Writes = HashMap<(Kind, String), u64>;

/// Writes not yet seen, per set key.
#[derive(Default)]
pub(crate) struct Consistency {
    /// Invariant: no set key maps to an empty map.
    pending: Mutex<HashMap<String, Writes>>,
}

fn version<K: Resource>(obj: &K) -> Option<u64> {
    obj.meta().resource_version.as_deref()?.parse().ok()
}

impl Consistency {
    /// Records a write unless the informer's copy (`cached`, read under the lock the event
    /// handlers take) already shows it: its event may have been handled before the write's
    /// response arrived, and would then never come again.
    fn wrote<K: Resource>(
        &self,
        set: &StatefulSet,
        kind: Kind,
        obj: &K,
        cached: impl FnOnce() -> Option<Arc<K>>,
    ) {
        let Some(rv) = version(obj) else {
            return;
        };
        let mut pending = self.pending.lock();
        if cached()
            .as_deref()
            .and_then(version)
            .is_some_and(|seen| seen >= rv)
        {
            return;
        }
        pending
            .entry(key_of(set))
            .or_default()
            .insert((kind, key_of(obj)), rv);
    }

    /// The controller created or updated `pod` for `set`; `cached` reads the Pod informer.
    pub(crate) fn wrote_pod(
        &self,
        set: &StatefulSet,
        pod: &Pod,
        cached: impl FnOnce() -> Option<Arc<Pod>>,
    ) {
        self.wrote(set, Kind::Pod, pod, cached);
    }

    /// The controller created `claim` for `set`; `cached` reads the claim informer.
    pub(crate) fn wrote_claim(
        &self,
        set: &StatefulSet,
        claim: &PersistentVolumeClaim,
        cached: impl FnOnce() -> Option<Arc<PersistentVolumeClaim>>,
    ) {
        self.wrote(set, Kind::Claim, claim, cached);
    }

    fn observed<K: Resource>(&self, kind: Kind, obj: &K, deleted: bool) {
        let key = (kind, key_of(obj));
        let rv = version(obj);
        self.pending.lock().retain(|_, writes| {
            if writes
                .get(&key)
                .is_some_and(|written| deleted || rv.is_none_or(|rv| rv >= *written))
            {
                writes.remove(&key);
            }
            !writes.is_empty()
        });
    }

    /// The Pod informer delivered `pod` (`deleted` for a delete event).
    pub(crate) fn observed_pod(&self, pod: &Pod, deleted: bool) {
        self.observed(Kind::Pod, pod, deleted);
    }

    /// The claim informer delivered `claim`.
    pub(crate) fn observed_claim(&self, claim: &PersistentVolumeClaim, deleted: bool) {
        self.observed(Kind::Claim, claim, deleted);
    }

    /// Whether every write for the set `key` has been seen (`EnsureReady`).
    pub(crate) fn ready(&self, key: &str) -> bool {
        !self.pending.lock().contains_key(key)
    }

    /// Forgets the set `key` (it was deleted).
    pub(crate) fn clear(&self, key: &str) {
        self.pending.lock().remove(key);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

    use super::*;

    fn meta(name: &str, rv: &str) -> ObjectMeta {
        ObjectMeta {
            name: Some(name.into()),
            namespace: Some("ns".into()),
            resource_version: Some(rv.into()),
            ..ObjectMeta::default()
        }
    }

    fn set() -> StatefulSet {
        StatefulSet {
            metadata: meta("db", "1"),
            ..StatefulSet::default()
        }
    }

    fn pod(rv: &str) -> Pod {
        Pod {
            metadata: meta("db-0", rv),
            ..Pod::default()
        }
    }

    #[test]
    fn a_write_blocks_until_an_event_at_or_after_its_version() {
        let c = Consistency::default();
        c.wrote_pod(&set(), &pod("10"), || Some(Arc::new(pod("9"))));
        assert!(!c.ready("ns/db"));
        c.observed_pod(&pod("9"), false);
        assert!(!c.ready("ns/db"));
        c.observed_pod(&pod("10"), false);
        assert!(c.ready("ns/db"));
    }

    #[test]
    fn a_write_the_informer_already_shows_is_not_waited_for() {
        let c = Consistency::default();
        c.wrote_pod(&set(), &pod("10"), || Some(Arc::new(pod("10"))));
        assert!(c.ready("ns/db"));
    }

    #[test]
    fn a_deletion_counts_as_seen() {
        let c = Consistency::default();
        c.wrote_pod(&set(), &pod("10"), || None);
        c.observed_pod(&pod("5"), true);
        assert!(c.ready("ns/db"));
    }

    #[test]
    fn claims_and_pods_of_the_same_name_are_apart() {
        let c = Consistency::default();
        let claim = PersistentVolumeClaim {
            metadata: meta("db-0", "11"),
            ..PersistentVolumeClaim::default()
        };
        c.wrote_claim(&set(), &claim, || None);
        c.observed_pod(&pod("12"), false);
        assert!(!c.ready("ns/db"));
        c.observed_claim(&claim, false);
        assert!(c.ready("ns/db"));
        c.wrote_claim(&set(), &claim, || None);
        c.clear("ns/db");
        assert!(c.ready("ns/db"));
    }
}
