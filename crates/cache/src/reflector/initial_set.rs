//! The objects a streaming list delivers before its `k8s.io/initial-events-end` bookmark.
//!
//! client-go keeps them in a temporary store keyed like the real one (`watchList` in
//! `tools/cache/reflector.go`), so `Replace` gets each key once. We do the same with an
//! insertion-ordered map, which also keeps the order in which keys first appeared (the order the
//! queue will pop them in).

use indexmap::IndexMap;

use crate::{key::ObjectKey, stored::Stored};

/// The latest object per key seen during a streaming list's initial phase.
///
/// # Why not a `Vec` of events?
/// The initial phase is a watch: besides the `Added` events of the current state it may carry
/// `Modified` or `Deleted` events for objects that changed meanwhile. `Replace` must receive one
/// object per key (two would queue two `Replaced` deltas and count the key twice towards the
/// initial population), and a deleted object must not be replaced back in.
pub(crate) struct InitialSet<K> {
    /// The objects as the queue will hold them (bytes, in a byte-backed informer).
    objects: IndexMap<ObjectKey, Stored<K>>,
}

impl<K> Default for InitialSet<K> {
    fn default() -> Self {
        Self {
            objects: IndexMap::new(),
        }
    }
}

impl<K> InitialSet<K> {
    /// Adds the object `entry` under `key`, or replaces the one already held there (keeping
    /// its place).
    pub(crate) fn upsert(&mut self, (key, entry): (ObjectKey, Stored<K>)) {
        self.objects.insert(key, entry);
    }

    /// Forgets the object under `key`, if any; a later `upsert` of it goes to the end. (Deletes
    /// during the initial phase are rare, so the order-keeping removal's O(n) does not matter.)
    pub(crate) fn remove(&mut self, key: &ObjectKey) {
        self.objects.shift_remove(key);
    }

    /// How many keys are held.
    pub(crate) fn len(&self) -> usize {
        self.objects.len()
    }

    /// The objects, one per key, in first-seen order.
    pub(crate) fn into_items(self) -> Vec<(ObjectKey, Stored<K>)> {
        self.objects.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::test_util::{cm, rv};

    #[test]
    fn keeps_the_latest_object_per_key_in_first_seen_order() {
        let mut set = InitialSet::<ConfigMap>::default();
        let steps: [(&str, &str, bool); 6] = [
            ("a", "1", true),
            ("b", "2", true),
            ("a", "3", true), // Modified during the initial phase
            ("b", "4", false),
            ("c", "5", true),
            ("b", "6", true), // re-created after its delete: a new place at the end
        ];
        for (name, version, present) in steps {
            if present {
                let obj = cm("ns", name, version);
                set.upsert((ObjectKey::of(&obj), Stored::Decoded(Arc::new(obj))));
            } else {
                set.remove(&ObjectKey::from(format!("ns/{name}").as_str()));
            }
        }
        assert_eq!(set.len(), 3);
        let items: Vec<String> = set
            .into_items()
            .iter()
            .map(|(_, entry)| {
                let Stored::Decoded(o) = entry else {
                    unreachable!("only decoded entries were added")
                };
                format!(
                    "{}:{}",
                    o.metadata.name.as_deref().unwrap_or_default(),
                    rv(o)
                )
            })
            .collect();
        assert_eq!(items, ["a:3", "c:5", "b:6"]);
    }
}
