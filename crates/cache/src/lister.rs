//! Read access to an informer's cache, the way a controller's workers use it.
//!
//! Mirrors client-go `tools/cache/listers.go` (`GenericLister`, `GenericNamespaceLister`); the
//! generated typed listers (`WhiteListLister`, ...) wrap this type.
//!
//! # Why read from a lister, not the API server?
//! The informer already holds the latest state it has seen of every object. Reading it costs a
//! hash lookup and no API server load, which matters when a controller reconciles thousands of
//! objects. The price: the cache may lag the server slightly. Controllers tolerate this because
//! any newer change will trigger another reconcile.

use std::sync::Arc;

use kube_core::{Resource, Selector, SelectorExt};

use crate::{
    error::Error,
    indexer::{Indexer, NAMESPACE_INDEX},
    stored::Stored,
};

/// Lists and gets cached objects of one type. Cheap to clone.
///
/// Objects are `Arc<K>`: shared with the cache and immutable. To modify one, `clone()` the `K`.
///
/// # Byte-backed caches
/// Over a [`StoreMode::Bytes`](crate::StoreMode) informer, reads decode: `list` filters by label
/// before decoding, so a selective `list` decodes only what it returns. An object whose cached
/// bytes do not decode is logged and left out (`get` returns `None`);
/// [`try_get`](Self::try_get) returns the [`Error::Undecodable`] naming it instead.
pub struct Lister<K> {
    indexer: Indexer<K>,
}

impl<K> Clone for Lister<K> {
    fn clone(&self) -> Self {
        Self {
            indexer: self.indexer.clone(),
        }
    }
}

fn labels_match<K: Resource>(selector: &Selector, stored: &Stored<K>) -> bool {
    selector.selects_all() || selector.matches(&stored.labels())
}

impl<K: Resource> Lister<K> {
    /// A lister over `indexer`.
    pub fn new(indexer: Indexer<K>) -> Self {
        Self { indexer }
    }

    /// All cached objects whose labels match `selector` (`&Selector::default()` matches all).
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.indexer
            .objects_where(|_, stored| labels_match(selector, stored))
    }

    /// The object `name` in `namespace` (`None` for cluster-scoped objects).
    pub fn get(&self, namespace: Option<&str>, name: &str) -> Option<Arc<K>> {
        self.indexer
            .get_by_key(crate::key::ObjectKey::new(namespace, name).as_str())
    }

    /// The object with cache key `key` (`namespace/name` or `name`), as found in a work queue.
    pub fn get_by_key(&self, key: &str) -> Option<Arc<K>> {
        self.indexer.get_by_key(key)
    }

    /// [`get`](Self::get), reporting a cached object that does not decode.
    ///
    /// # Errors
    /// [`Error::Undecodable`] naming the object, from a byte-backed cache.
    pub fn try_get(&self, namespace: Option<&str>, name: &str) -> Result<Option<Arc<K>>, Error> {
        self.indexer
            .try_get_by_key(crate::key::ObjectKey::new(namespace, name).as_str())
    }

    /// A lister restricted to `namespace`.
    pub fn namespaced(&self, namespace: &str) -> NamespaceLister<K> {
        NamespaceLister {
            indexer: self.indexer.clone(),
            namespace: namespace.to_owned(),
        }
    }

    /// The objects filed under `value` in the index `index`; empty if there is no such index
    /// (see [`Indexer::by_index`] for the checked variant).
    pub fn by_index(&self, index: &str, value: &str) -> Vec<Arc<K>> {
        self.indexer.by_index(index, value).unwrap_or_default()
    }
}

/// A [`Lister`] restricted to one namespace; uses the namespace index, so listing a namespace
/// costs in proportion to that namespace, not to the whole cache.
pub struct NamespaceLister<K> {
    indexer: Indexer<K>,
    namespace: String,
}

impl<K: Resource> NamespaceLister<K> {
    /// Objects in this namespace whose labels match `selector`.
    pub fn list(&self, selector: &Selector) -> Vec<Arc<K>> {
        self.indexer
            .objects_by_index_where(NAMESPACE_INDEX, &self.namespace, |stored| {
                labels_match(selector, stored)
            })
            .unwrap_or_default()
    }

    /// The object `name` in this namespace.
    pub fn get(&self, name: &str) -> Option<Arc<K>> {
        self.indexer
            .get_by_key(crate::key::ObjectKey::new(Some(&self.namespace), name).as_str())
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;

    use super::*;
    use crate::{
        key::ObjectKey,
        test_util::{cm, labeled},
    };

    fn listers() -> [Lister<ConfigMap>; 2] {
        let mode = crate::StoreMode::Bytes { decoded_cache: 0 };
        let bytes = Indexer::with_store(
            Arc::default(),
            crate::stored::ByteStore::for_mode(mode, crate::WireCodec::json()),
        );
        [lister(Indexer::new()), lister(bytes)]
    }

    fn lister(idx: Indexer<ConfigMap>) -> Lister<ConfigMap> {
        for o in [
            labeled(cm("a", "web", "1"), "app", "web"),
            labeled(cm("b", "web", "1"), "app", "web"),
            cm("a", "db", "1"),
        ] {
            let o = Arc::new(o);
            idx.insert(ObjectKey::of(o.as_ref()), o);
        }
        Lister::new(idx)
    }

    fn names(mut objs: Vec<Arc<ConfigMap>>) -> Vec<String> {
        objs.sort_by_key(|o| ObjectKey::of(o.as_ref()));
        objs.iter()
            .map(|o| ObjectKey::of(o.as_ref()).to_string())
            .collect()
    }

    #[test]
    fn list_filters_by_label_selector() {
        for l in listers() {
            let web: Selector = [("app", "web")].into_iter().collect();
            assert_eq!(names(l.list(&web)), ["a/web", "b/web"]);
            assert_eq!(l.list(&Selector::default()).len(), 3);
        }
    }

    #[test]
    fn namespaced_lister_sees_one_namespace() {
        for l in listers() {
            let web: Selector = [("app", "web")].into_iter().collect();
            assert_eq!(names(l.namespaced("a").list(&web)), ["a/web"]);
            let a = l.namespaced("a");
            assert_eq!(names(a.list(&Selector::default())), ["a/db", "a/web"]);
            assert!(a.get("web").is_some());
            assert!(l.namespaced("b").get("db").is_none());
        }
    }

    #[test]
    fn get_and_by_index() {
        for l in listers() {
            assert!(l.get(Some("b"), "web").is_some());
            assert_eq!(
                l.try_get(Some("b"), "web").unwrap(),
                l.get(Some("b"), "web")
            );
            assert!(l.get_by_key("a/db").is_some());
            assert_eq!(names(l.by_index(NAMESPACE_INDEX, "b")), ["b/web"]);
            assert!(l.by_index("no-such-index", "x").is_empty());
        }
    }
}
