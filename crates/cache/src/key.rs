//! Object keys: how every piece of the cache names an object.
//!
//! Mirrors client-go `tools/cache/store.go` (`MetaNamespaceKeyFunc`): a namespaced object is keyed
//! `namespace/name`, a cluster-scoped one `name`. The key is what a controller puts in its work
//! queue and what a `Lister` looks up, so it must be the same string everywhere.

use std::collections::{HashMap, HashSet};
use std::{fmt, sync::Arc};

use kube_core::Resource;

/// The cache key of one object: `namespace/name`, or `name` for cluster-scoped objects.
///
/// # Why an `Arc<str>`?
/// The same key sits in the DeltaFIFO map, its pop order, the indexer and every index bucket.
/// Cloning it is a reference-count increment, not a string copy, which keeps the hot path
/// (pop → index → notify) free of allocations.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey(Arc<str>);

impl ObjectKey {
    /// Builds the key of the object `name` in `namespace` (`None` or `""` for cluster-scoped).
    pub fn new(namespace: Option<&str>, name: &str) -> Self {
        match namespace {
            Some(ns) if !ns.is_empty() => {
                // Not `format!`: every listed object gets a key, and formatting costs more than
                // the copy.
                let mut key = String::with_capacity(ns.len() + 1 + name.len());
                key.push_str(ns);
                key.push('/');
                key.push_str(name);
                Self(key.into())
            }
            _ => Self(name.into()),
        }
    }

    /// The key of `obj`, from its metadata. An object without a name gets the empty name:
    /// objects coming from an API server always have one.
    pub fn of<K: Resource>(obj: &K) -> Self {
        let meta = obj.meta();
        Self::new(
            meta.namespace.as_deref(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }

    /// The namespace part, `None` for a cluster-scoped key.
    pub fn namespace(&self) -> Option<&str> {
        self.0.split_once('/').map(|(ns, _)| ns)
    }

    /// The name part.
    pub fn name(&self) -> &str {
        self.0.split_once('/').map_or(&self.0, |(_, name)| name)
    }

    /// The key as a string, exactly as a work queue or `Lister` expects it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The hasher of the maps and sets keyed by [`ObjectKey`] or by index values.
///
/// # Why not std's `RandomState`?
/// Every object of a cold sync is hashed several times (DeltaFIFO, indexer, namespace index), and
/// SipHash showed up at ~5% of the client's CPU in the sync profile (`docs/performance.md`).
/// foldhash is several times faster on short strings and, like SipHash, seeded per process, so
/// names chosen by whoever creates objects cannot be aimed at collisions in advance.
pub(crate) type KeyHasher = foldhash::fast::RandomState;

/// A map keyed by [`ObjectKey`].
pub(crate) type KeyMap<V> = HashMap<ObjectKey, V, KeyHasher>;

/// A set of [`ObjectKey`]s.
pub(crate) type KeySet = HashSet<ObjectKey, KeyHasher>;

impl From<&str> for ObjectKey {
    /// Wraps an already formatted key (`namespace/name` or `name`).
    fn from(key: &str) -> Self {
        Self(key.into())
    }
}

impl fmt::Display for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for ObjectKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", &*self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaced_key_is_namespace_slash_name() {
        let key = ObjectKey::new(Some("default"), "web");
        assert_eq!(key.as_str(), "default/web");
        assert_eq!(key.namespace(), Some("default"));
        assert_eq!(key.name(), "web");
    }

    #[test]
    fn cluster_scoped_key_is_bare_name() {
        for ns in [None, Some("")] {
            let key = ObjectKey::new(ns, "node-1");
            assert_eq!(key.as_str(), "node-1");
            assert_eq!(key.namespace(), None);
            assert_eq!(key.name(), "node-1");
        }
    }
}
